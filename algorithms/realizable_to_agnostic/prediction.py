"""Procedure P: the Dwork–Feldman realizable private-prediction aggregator of Lemma 4.1,
**reconstructed** (the paper leaves the aggregator unspecified; notes §3.6, §6.8).

``r = ⌈6 ln(4/α)/ε⌉`` hypotheses ``g_1..g_r`` (trained on disjoint portions); a query ``x`` is
answered by the two-outcome exponential mechanism on the vote counts ``u(b) = #{i : g_i(x) = b}``
(sensitivity 1): ``P[b] ∝ exp(ε u(b)/2)`` — ε-DP when one portion (one ``g_i``) changes. This
reconstruction reproduces the paper's constants 6 and α/4 (Markov at w ≤ r/3).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 4.1, Theorem 4.2; C. Dwork, V. Feldman, "Privacy-preserving
prediction", COLT 2018.
"""

from __future__ import annotations

import numpy as np

from dpcheck._validation import check_epsilon

__all__ = ["aggregate_error", "vote_probabilities"]


def vote_probabilities(votes1: np.ndarray, r: int, epsilon: float) -> np.ndarray:
    """``P[answer = 1]`` given ``u(1) = votes1`` of ``r`` votes: ``σ(ε(2u(1) − r)/2)``."""
    eps = check_epsilon(epsilon)
    return 1.0 / (1.0 + np.exp(-eps * (2 * np.asarray(votes1, float) - r) / 2.0))


def aggregate_error(g: np.ndarray, target: int, px: np.ndarray, epsilon: float) -> float:
    """Exact ``err_D`` of the aggregate of threshold hypotheses ``g`` (thresholds) on the
    realizable distribution ``D_X = px`` labelled by ``h_target`` (Lemma 4.1's setting)."""
    x = np.arange(px.size)
    votes1 = (x[None, :] >= np.asarray(g)[:, None]).sum(0)
    p1 = vote_probabilities(votes1, len(g), epsilon)
    y = x >= target
    return float(np.sum(px * np.where(y, 1 - p1, p1)))
