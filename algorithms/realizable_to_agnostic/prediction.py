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

from dpcheck.validation import check_epsilon, check_int
from dpcheck.errors import InvalidArgument

__all__ = ["aggregate_error", "vote_probabilities"]


def vote_probabilities(votes1: np.ndarray, r: int, epsilon: float) -> np.ndarray:
    """``P[answer = 1]`` given ``u(1) = votes1`` of ``r`` votes: ``σ(ε(2u(1) − r)/2)``.

    Raises
    ------
    InvalidArgument
        If ``ε ≤ 0``, ``r`` is not an integer ``≥ 1`` or a vote count is not an integer in
        ``[0, r]``.
    """
    eps = check_epsilon(epsilon)
    r = check_int(r, "r", minimum=1)
    v = np.asarray(votes1)
    if v.dtype.kind not in "iu" or ((v < 0) | (v > r)).any():
        raise InvalidArgument(f"votes1 must hold integer vote counts in [0, r={r}]")
    return 1.0 / (1.0 + np.exp(-eps * (2 * v.astype(float) - r) / 2.0))


def aggregate_error(g: np.ndarray, target: int, px: np.ndarray, epsilon: float) -> float:
    """Exact ``err_D`` of the aggregate of threshold hypotheses ``g`` (thresholds) on the
    realizable distribution ``D_X = px`` labelled by ``h_target`` (Lemma 4.1's setting).

    Raises
    ------
    InvalidArgument
        If ``px`` is not a probability vector (entries ``≥ 0`` summing to 1 within 1e-9) of
        length ``N ≥ 1``, ``g`` is not a non-empty collection of integer thresholds in
        ``[0, N]``, ``target`` is not an integer in ``[0, N]``, or ``ε ≤ 0``.
    """
    px = np.asarray(px, dtype=float)
    if px.ndim != 1 or px.size == 0 or not np.isfinite(px).all() or (px < 0).any() \
            or abs(px.sum() - 1.0) > 1e-9:
        raise InvalidArgument(f"px (shape {px.shape}, sum {float(px.sum())!r}) must be a "
                              "probability vector over the domain {0..N-1}")
    n_dom = px.size
    g = np.asarray(g)
    if g.ndim != 1 or g.size == 0 or g.dtype.kind not in "iu" or (g < 0).any() \
            or (g > n_dom).any():
        raise InvalidArgument(f"g must be a non-empty collection of integer thresholds in "
                              f"[0, N={n_dom}]")
    target = check_int(target, "target", minimum=0)
    if target > n_dom:
        raise InvalidArgument(f"target={target!r} must be <= N={n_dom}")
    x = np.arange(n_dom)
    votes1 = (x[None, :] >= g[:, None]).sum(0)
    p1 = vote_probabilities(votes1, len(g), epsilon)
    y = x >= target
    return float(np.sum(px * np.where(y, 1 - p1, p1)))
