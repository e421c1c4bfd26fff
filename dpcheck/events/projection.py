"""Projected bounds: how candidates are *ranked* (never how bounds are certified).

Exploration counts are shrunk towards the unfavourable side (Wilson score bounds at a shrinkage
level: events seen a handful of times are punished) and turned into the bound the confirmation
sample size would give. These are approximations for ranking only; the reported bounds come from
exact Clopper–Pearson tests on fresh confirmation samples (:mod:`dpcheck.stats`,
:mod:`dpcheck.core.certify`). Keeping the two apart in different modules keeps the rule
"rank with approximations, certify with exact tests" visible.

References
----------
E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22
(1927) (the score interval used for shrinking).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr, ndtri

__all__ = ["SHRINK", "VALIDATION_SHRINK", "MILD_SHORTLIST", "wilson_lower", "wilson_upper",
           "projected_score", "projected_ratio", "projected_delta", "projected_pair",
           "validation_shrink", "max_noise_shrink"]

#: One-sided level of the shrinkage applied to generation counts before projecting (strong:
#: thousands of candidates compete on the same counts).
SHRINK = 0.1
#: Shrinkage at the validation stage (mild: the counts are fresh for the shortlist, so only a
#: small winner's curse remains, and rare-but-real events must not be shrunk away).
VALIDATION_SHRINK = 0.3
#: Shortlists longer than this get proportionally stronger validation shrinkage.
MILD_SHORTLIST = 100


def _wilson(k: NDArray[np.float64], n: float, alpha: float, sign: float) -> NDArray[np.float64]:
    z = -float(ndtri(alpha))  # not ndtri(1 - alpha): that is inf once 1 - alpha rounds to 1
    z2 = z * z
    centre = k + z2 / 2
    spread = z * np.sqrt(np.maximum(k * (n - k) / n, 0.0) + z2 / 4)
    return np.clip((centre + sign * spread) / (n + z2), 0.0, 1.0)


def wilson_lower(k: NDArray[np.float64], n: float, alpha: float) -> NDArray[np.float64]:
    """Wilson score lower bound (closed form, fast). For *ranking* candidates only, never for a
    reported bound: its coverage is approximate."""
    return _wilson(k, n, alpha, -1.0)


def wilson_upper(k: NDArray[np.float64], n: float, alpha: float) -> NDArray[np.float64]:
    """Wilson score upper bound (closed form, fast). For ranking candidates only."""
    return _wilson(k, n, alpha, 1.0)


def projected_score(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], *, n_explore: float | NDArray[np.float64],
    n_confirm: int, alpha_each: float, delta: float, shrink: float = SHRINK,
    ratio: bool = False,
) -> NDArray[np.float64]:
    """Projected ε lower bound of events with exploration counts ``k_p``, ``k_q`` out of
    ``n_explore`` (scalar or per event) per side (ranking only). With ``ratio``, the larger of
    the union projection and the conditional-ratio projection (see :func:`projected_ratio`)."""
    p_t, q_t, p_lo, q_hi = _projected_bounds(k_p, k_q, n_explore, n_confirm, alpha_each, shrink)
    with np.errstate(divide="ignore", invalid="ignore"):
        union = np.where(p_lo > delta,
                         np.log(np.maximum(p_lo - delta, 1e-300)) - np.log(q_hi), -np.inf)
    if not ratio:
        return union
    return np.maximum(union, projected_ratio(p_t, q_t, n_confirm, 2 * alpha_each))


def projected_ratio(
    p_t: NDArray[np.float64], q_t: NDArray[np.float64], n_confirm: float, level: float
) -> NDArray[np.float64]:
    """Projected ``ln`` of the conditional ratio bound (:func:`dpcheck.stats.ratio_lower`, one
    test at ``level``) for shrunk probabilities ``p_t``, ``q_t`` (ranking only)."""
    x, y = p_t * n_confirm, q_t * n_confirm
    total = x + y
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.maximum(total, 1e-12)
        pi_lo = wilson_lower(x, safe, level)
        pi_lo = np.minimum(pi_lo, 1.0 - 1e-15)
        return np.where((x > 0) & (pi_lo > 0), np.log(pi_lo) - np.log1p(-pi_lo), -np.inf)


def projected_delta(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], *, n_explore: float, n_confirm: int,
    alpha_each: float, epsilon: float, shrink: float = SHRINK,
) -> NDArray[np.float64]:
    """Projected δ lower bound ``p_lo − e^ε q_hi`` at ``epsilon`` of events with exploration
    counts ``k_p``, ``k_q`` out of ``n_explore`` per side (ranking only; the reported bound is
    :meth:`dpcheck.stats.EventBound.delta_lower` on fresh counts)."""
    _, _, p_lo, q_hi = _projected_bounds(k_p, k_q, n_explore, n_confirm, alpha_each, shrink)
    return np.asarray(p_lo - math.exp(epsilon) * q_hi, dtype=np.float64)


def _projected_bounds(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], n_explore: float | NDArray[np.float64],
    n_confirm: int, alpha_each: float, shrink: float,
) -> tuple[NDArray[np.float64], ...]:
    """Shrunk exploration estimates ``p_t``, ``q_t`` and the Wilson bounds ``p_lo``, ``q_hi``
    they project at ``n_confirm`` outputs per side and level ``alpha_each``."""
    p_t = wilson_lower(k_p.astype(np.float64), n_explore, shrink)
    q_t = wilson_upper(k_q.astype(np.float64), n_explore, shrink)
    p_lo = wilson_lower(p_t * n_confirm, n_confirm, alpha_each)
    q_hi = wilson_upper(q_t * n_confirm, n_confirm, alpha_each)
    return p_t, q_t, p_lo, q_hi


def validation_shrink(shortlisted: int) -> float:
    """Shrinkage level at the validation stage: :data:`VALIDATION_SHRINK` for up to
    :data:`MILD_SHORTLIST` shortlisted candidates, then proportionally stronger (the best of
    many fresh scores still has a winner's curse: with hundreds of candidates from many
    vector coordinates a noise tail event otherwise beats a weak real signal)."""
    return VALIDATION_SHRINK * min(1.0, MILD_SHORTLIST / max(shortlisted, 1))


def max_noise_shrink(shortlisted: int) -> float:
    """Shrinkage level whose Wilson ``z`` is ``sqrt(2 ln m)`` for ``m`` shortlisted candidates:
    about the largest of ``m`` standard normal noises, so that the candidate ranked first under
    it is not the luckiest of many noisy equals (ranking only)."""
    return float(ndtr(-math.sqrt(2.0 * math.log(max(shortlisted, 2)))))


def projected_pair(
    k_p: NDArray[np.float64], k_q: NDArray[np.float64], n_explore: float, n_confirm: float,
    level: float, shrink: float,
) -> NDArray[np.float64]:
    """Projected ``ln`` of the conditional ratio bound of a pair with combined counts ``k_p``,
    ``k_q`` out of ``2·n_explore`` outputs (both sides) each, projected onto ``n_confirm``
    outputs per side (ranking only)."""
    p_t = wilson_lower(np.asarray(k_p, dtype=np.float64), 2.0 * n_explore, shrink)
    q_t = wilson_upper(np.asarray(k_q, dtype=np.float64), 2.0 * n_explore, shrink)
    return projected_ratio(p_t, q_t, 2.0 * n_confirm, level)
