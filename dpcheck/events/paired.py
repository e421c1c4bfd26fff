"""Paired (symmetrised) events: one event tested in each direction, counted together.

If a mechanism is ε-DP on a neighbouring pair, then for any event S and any event S′,
``P(S) ≤ e^ε Q(S)`` and ``Q(S′) ≤ e^ε P(S′)`` (``P``, ``Q``: the output laws under D and D′;
pure DP holds in both directions of a symmetric neighbour relation), so

    P(S) + Q(S′) ≤ e^ε (Q(S) + P(S′)).

With Poissonized confirmation sizes (:mod:`dpcheck.core.audit`) and **disjoint** S and S′, the four
counts ``N_D(S)``, ``N_D(S′)``, ``N_D′(S)``, ``N_D′(S′)`` are independent Poisson variables
(Poisson thinning of disjoint sets, independent sides), so ``A = N_D(S) + N_D′(S′)`` and
``B = N_D′(S) + N_D(S′)`` are independent Poisson with means ``λ(P(S) + Q(S′))`` and
``λ(Q(S) + P(S′))``, and the conditional binomial test of :func:`dpcheck.stats.ratio_lower` on
``(A, B)`` bounds their ratio, hence ε, exactly. For a mechanism whose privacy loss is
symmetric (the loss of S under (D, D′) is that of a mirror event S′ under (D′, D): Laplace noise
on a sum, composed Laplace releases) the ratio equals that of each event and the counts double —
the bound is that of one event on twice the confirmation samples. For an asymmetric one the
ratio is a weighted mean of the two events' ratios, so selection (on exploration) decides
between the pair and its better half.

Pairs are built on ordered features only, as an upper half-line ``{x > a}`` and a lower one
``{x ≤ b}`` with ``b < a`` (disjoint by construction), and only when the confirmation sizes are
Poissonized (pure claims): with fixed sizes the counts ``A``, ``B`` are sums of two binomials and
the conditional test is not exact.

References
----------
J. Przyborowski, H. Wileński, Biometrika 31 (1940) (conditional test of two Poisson means);
J. F. C. Kingman, "Poisson Processes" (1993), §2.3 (thinning: counts of disjoint sets are
independent); B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (both directions of a pair).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.events.event import Event
from dpcheck.events.pools import Pool
from dpcheck.events.projection import SHRINK, projected_pair
from dpcheck.features.feature import Feature

__all__ = ["PairedHalfLines", "pair_scores", "pair_shortlist"]

#: Pairs kept per (feature, orientation) for validation.
PAIRS_PER_FEATURE = 2
#: Candidate slots of their own (distinct features) on long shortlists for the best balanced
#: paired events of the *aggregate* features (scores of the whole output row:
#: :attr:`dpcheck.features.feature.Feature.aggregate`).
AGGREGATE_PAIRS = 2
#: Balanced pairs per (aggregate feature, orientation) handed to validation.
BALANCED_PAIRS = 6
#: Shrinkage level of the reserved ranking of balanced pairs (0.5: the point estimate).
RESERVED_SHRINK = 0.5


@dataclass(frozen=True)
class PairedHalfLines:
    """Generation-half scores of every pair ``({x > t[i]}, {x ≤ t[j]})``, ``j < i``, of one
    ordered feature in both orientations (``forward``: the upper half-line counted with D on
    the numerator side)."""

    thresholds: NDArray[Any]
    upper: NDArray[np.int64]  # index i of the upper half-line {x > t[i]}
    lower: NDArray[np.int64]  # index j of the lower half-line {x <= t[j]}
    forward: NDArray[np.bool_]
    k_p: NDArray[np.int64]
    k_q: NDArray[np.int64]
    score: NDArray[np.float64]

    def best(self, k: int = PAIRS_PER_FEATURE) -> list[int]:
        """Indices of the ``k`` best finite-scoring pairs of each orientation."""
        picks: list[int] = []
        for orient in (True, False):
            idx = np.flatnonzero((self.forward == orient) & np.isfinite(self.score))
            if idx.size:
                picks += [int(i) for i in idx[np.argsort(-self.score[idx], kind="stable")[:k]]]
        return picks


def pair_scores(
    thresholds: NDArray[Any], le_d: NDArray[np.int64], le_dp: NDArray[np.int64], n: int, *,
    n_confirm: int, level: float, shrink: float, balanced: bool = False,
) -> PairedHalfLines:
    """Score every disjoint half-line pair of one ordered feature on the generation half.

    ``le_d[i]``, ``le_dp[i]``: generation counts of ``{x ≤ thresholds[i]}`` out of ``n`` per
    side (thresholds increasing). ``balanced``: only the pairs whose two half-lines have the
    closest pooled masses (one lower half-line per upper one) — a one-parameter family, the
    optimal one for a symmetric privacy loss, with a much smaller winner's curse than the
    two-parameter family when the signal is weak."""
    m = thresholds.size
    upper, lower = np.tril_indices(m, -1)  # upper > lower
    if balanced and upper.size:
        pooled_le = (le_d + le_dp).astype(np.float64)
        gap = np.abs(pooled_le[lower] - (2.0 * n - pooled_le[upper]))
        order = np.lexsort((gap, upper))  # by upper, then by gap: first of each upper wins
        first = np.ones(order.size, bool)
        first[1:] = upper[order][1:] != upper[order][:-1]
        upper, lower = upper[order][first], lower[order][first]
    gt_d, gt_dp = n - le_d[upper], n - le_dp[upper]
    a = gt_d + le_dp[lower]  # forward: D-numerator counts of the upper, D' of the lower
    b = gt_dp + le_d[lower]
    k_p, k_q = np.concatenate([a, b]), np.concatenate([b, a])
    score = projected_pair(k_p, k_q, n, n_confirm, level, shrink)
    forward = np.concatenate([np.ones(a.size, bool), np.zeros(b.size, bool)])
    return PairedHalfLines(thresholds, np.concatenate([upper, upper]),
                           np.concatenate([lower, lower]), forward, k_p, k_q, score)


def pair_shortlist(
    pools: list[Pool], features: tuple[Feature, ...], half: int, n_confirm: int,
    alpha_each: float,
) -> list[tuple[Event, Event, bool, float, bool]]:
    """The best disjoint half-line pairs (:mod:`dpcheck.events.paired`) of every ordered feature, as
    ``(upper event, lower partner, forward, generation score, balanced)``; on aggregate
    features also the best balanced pairs (generation-half counts of the pools)."""
    out = []
    for pool in pools:
        if not features[pool.feature].ordered:
            continue
        start = 0
        for seg in pool.segments:
            if seg.kind == "le":
                break
            start += seg.size
        else:
            continue
        t = seg.a
        le_d = pool.count_d[start:start + seg.size]
        le_dp = pool.count_dp[start:start + seg.size]
        f, name = pool.feature, pool.name
        for balanced in (False, True) if features[f].aggregate else (False,):
            scored = pair_scores(t, le_d, le_dp, half, n_confirm=n_confirm,
                                 level=2 * alpha_each, shrink=SHRINK, balanced=balanced)
            for i in scored.best(BALANCED_PAIRS if balanced else PAIRS_PER_FEATURE):
                upper = Event(f, name, "gt", low=float(t[scored.upper[i]]))
                lower = Event(f, name, "le", high=float(t[scored.lower[i]]))
                out.append((upper, lower, bool(scored.forward[i]), float(scored.score[i]),
                            balanced))
    return out
