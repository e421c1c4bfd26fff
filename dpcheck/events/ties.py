"""Randomised tie-breaking at a chosen threshold (DP-Sniper's randomised optimal attack).

On a discrete score (a sign count, the logit of a discrete output, a count), the outputs sit on
atoms, and the half-line events ``{x > t}`` jump by a whole atom from one threshold to the next.
The Neyman–Pearson-optimal test is randomised on the boundary atom: the event "``x > t``, or
``x = t`` with probability γ" (Bichsel et al. 2021, §4, Theorem 1). Once ``t`` and γ are fixed on
the exploration sample, membership is a Bernoulli variable per output (the coin is independent
of everything else), so the confirmation counts are binomial (Poisson with Poissonized sizes)
exactly as for a plain event, and every exact test of :mod:`dpcheck.stats` applies unchanged;
the coins come from a seeded stream per confirmation chunk (:func:`dpcheck.core.confirm.count_chunk`),
so results stay bit-identical across executors.

:func:`randomise_ties` refines the chosen half-line candidates (and both halves of paired ones,
:mod:`dpcheck.events.paired`): for the atom just outside the event it picks γ on a grid by the
projected bound on the whole exploration sample (the choice only ranks; the reported bound
comes from fresh samples). γ = 0 keeps the plain event; γ = 1 would be the next plain
threshold, already a candidate of its own.

References
----------
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper", IEEE S&P 2021, §4 (randomised
threshold attack, ``_find_threshold``); J. Neyman, E. S. Pearson, Phil. Trans. R. Soc. A 231
(1933) (randomised most powerful tests).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.events.event import Candidate, Event
from dpcheck.events.projection import VALIDATION_SHRINK, projected_pair, projected_score

__all__ = ["GRID", "MIN_TIES", "randomise_ties"]

#: Tie probabilities tried (0: the plain event).
GRID = np.linspace(0.0, 1.0, 9)[:-1]
#: Boundary atoms seen fewer times than this on the exploration sample (both sides together)
#: are left alone: a continuous score has no ties worth randomising.
MIN_TIES = 20


def _boundary(event: Event, cols_d: list[NDArray[Any]], cols_dp: list[NDArray[Any]]
              ) -> tuple[float, int, int] | None:
    """The atom just outside a half-line event and its exploration counts (D, D′)."""
    x_d, x_dp = cols_d[event.feature], cols_dp[event.feature]
    if event.kind == "gt" and event.low is not None:
        value = event.low
    elif event.kind == "le" and event.high is not None:
        above = np.concatenate([x_d[x_d > event.high], x_dp[x_dp > event.high]])
        if above.size == 0:
            return None
        value = float(above.min())
    else:
        return None
    c_d, c_dp = int(np.count_nonzero(x_d == value)), int(np.count_nonzero(x_dp == value))
    if c_d + c_dp < MIN_TIES:
        return None
    return float(value), c_d, c_dp


def randomise_ties(
    chosen: list[Candidate], cols_d: list[NDArray[Any]], cols_dp: list[NDArray[Any]], *,
    n_confirm: int, alpha_each: float, delta: float,
) -> list[Candidate]:
    """Refine each half-line candidate with the boundary tie probability γ ∈ :data:`GRID`
    that maximises its projected bound on the exploration columns ``cols_d``, ``cols_dp``
    (whole exploration sample, feature columns as from :class:`~dpcheck.features.featurizer.Featurizer`).
    Candidates without a populated boundary atom are returned unchanged."""
    n = cols_d[0].shape[0]
    out = []
    for cand in chosen:
        fwd = cand.direction == "d>d_prime"
        if cand.partner is None:
            out.append(_single(cand, fwd, cols_d, cols_dp, n, n_confirm, alpha_each, delta))
        else:
            out.append(_pair(cand, fwd, cols_d, cols_dp, n, n_confirm, alpha_each))
    return out


def _best(p: NDArray[np.float64], q: NDArray[np.float64], score: Any) -> int:
    s = score(p, q)
    return int(np.argmax(s)) if np.isfinite(s).any() else 0


def _single(cand: Candidate, fwd: bool, cols_d: list[NDArray[Any]],
            cols_dp: list[NDArray[Any]], n: int, n_confirm: int, alpha_each: float,
            delta: float) -> Candidate:
    b = _boundary(cand.event, cols_d, cols_dp)
    if b is None:
        return cand
    value, t_d, t_dp = b
    k_d, k_dp = cand.event.count(cols_d), cand.event.count(cols_dp)
    (k_p, k_q), (t_p, t_q) = ((k_d, k_dp), (t_d, t_dp)) if fwd else ((k_dp, k_d), (t_dp, t_d))
    ratio = cand.method == "ratio"

    def score(p: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
        return projected_score(p, q, n_explore=n, n_confirm=n_confirm, alpha_each=alpha_each,
                               delta=delta, shrink=VALIDATION_SHRINK, ratio=ratio)

    g = GRID[_best(k_p + GRID * t_p, k_q + GRID * t_q, score)]
    if g == 0.0:
        return cand
    return dataclasses.replace(cand, event=dataclasses.replace(
        cand.event, tie_value=value, tie=float(g)))


def _pair(cand: Candidate, fwd: bool, cols_d: list[NDArray[Any]],
          cols_dp: list[NDArray[Any]], n: int, n_confirm: int, alpha_each: float) -> Candidate:
    """Both halves of a pair, the upper one first; the lower one's boundary atom must stay
    below the upper threshold (the two randomised events must remain disjoint)."""
    assert cand.partner is not None
    upper, lower = cand.event, cand.partner

    def score(p: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
        return projected_pair(p, q, n, n_confirm, 2 * alpha_each, VALIDATION_SHRINK)

    # combined counts: forward = upper with D numerator, lower with D' numerator
    a = [upper.count(cols_d) + lower.count(cols_dp), upper.count(cols_dp) + lower.count(cols_d)]
    k_p, k_q = (a[0], a[1]) if fwd else (a[1], a[0])
    b_up = _boundary(upper, cols_d, cols_dp)
    if b_up is not None:
        value, t_d, t_dp = b_up
        t_p, t_q = (t_d, t_dp) if fwd else (t_dp, t_d)
        g = GRID[_best(k_p + GRID * t_p, k_q + GRID * t_q, score)]
        if g > 0.0:
            upper = dataclasses.replace(upper, tie_value=value, tie=float(g))
            k_p, k_q = k_p + g * t_p, k_q + g * t_q
    b_lo = _boundary(lower, cols_d, cols_dp)
    if b_lo is not None and upper.low is not None and b_lo[0] < upper.low:
        value, t_d, t_dp = b_lo
        t_p, t_q = (t_dp, t_d) if fwd else (t_d, t_dp)  # the lower half counts the other way
        g = GRID[_best(k_p + GRID * t_p, k_q + GRID * t_q, score)]
        if g > 0.0:
            lower = dataclasses.replace(lower, tie_value=value, tie=float(g))
    if upper is cand.event and lower is cand.partner:
        return cand
    return dataclasses.replace(cand, event=upper, partner=lower)
