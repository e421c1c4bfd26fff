"""How sharp a claim test is (issue 27): the figures behind ``dp_sensitivity``.

* :func:`detectable_inflation` — for a one-sided exact binomial test of "failure rate ≤ β" with
  ``trials`` trials at level ``level`` (what :func:`dpcheck.check_accuracy` and the
  generalization checkers' joint form do), the smallest factor ``f`` such that a true rate
  ``f·β`` is declared a violation with probability ≥ ``power``.
* :func:`exact_overspend` — for an assertion ``loss ≤ bound`` on an *exact* loss (no sampling),
  the smallest multiplicative overspend of a loss that scales linearly with the budget error
  (Laplace/geometric/exponential-mechanism losses scale as 1/noise-scale) that fails it:
  ``bound / loss`` (any f > that is caught with probability 1).

Test helpers, not part of the auditor; ``properties/`` imports them.
"""

from __future__ import annotations

import math

from scipy.stats import binom

__all__ = ["detectable_inflation", "exact_overspend"]


def _critical(trials: int, beta: float, level: float) -> int:
    """Smallest failure count k with P[Bin(trials, β) ≥ k] ≤ level."""
    k = int(binom.isf(level, trials, beta))
    while binom.sf(k - 1, trials, beta) > level:
        k += 1
    while k > 0 and binom.sf(k - 2, trials, beta) <= level:
        k -= 1
    return k


def detectable_inflation(trials: int, beta: float, level: float, power: float = 0.9) -> float:
    """Smallest ``f > 1`` with ``P[Bin(trials, f·β) ≥ k*] ≥ power`` (``inf`` if even rate 1
    is not caught)."""
    k = _critical(trials, beta, level)
    if k > trials:
        return math.inf
    lo, hi = 1.0, 1.0 / beta
    if binom.sf(k - 1, trials, min(1.0, hi * beta)) < power:
        return math.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        if binom.sf(k - 1, trials, mid * beta) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def exact_overspend(loss: float, bound: float) -> float:
    """``bound / loss`` for an exact assertion ``loss ≤ bound`` (``inf`` when ``loss = 0``);
    at least a hair above 1 (an exact test at slack 1 catches every overspend)."""
    if loss <= 0:
        return math.inf
    return max(bound / loss, 1.0 + 1e-9)
