"""Exact binomial statistics used by the auditor.

Thin, validated wrappers over :mod:`scipy.special` / :mod:`statsmodels`: Clopper–Pearson bounds,
the privacy-loss lower bound ``ln((p_lo − δ) / q_hi)`` of an event, the hockey-stick lower bound
``p_lo − e^ε q_hi``, the p-value of "the claim holds for this event", and Holm's adjustment.

Counts are validated here because scipy turns invalid counts into NaN instead of raising.

References
----------
C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in the case of
the binomial", Biometrika 26 (1934).
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting violations of differential privacy",
CCS 2018 (event-based hypothesis testing of DP claims).
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper", IEEE S&P 2021, §5 (ε lower bound
from two Clopper–Pearson bounds under a union bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betainccinv, betaincinv, betaln

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_alpha, check_delta, check_epsilon, check_real

__all__ = [
    "power_floor",
    "FLOOR_MASSES",
    "clopper_pearson",
    "cp_lower",
    "cp_upper",
    "EventBound",
    "event_bound",
    "epsilon_lower_bound",
    "delta_lower_bound",
    "violation_p_value",
    "holm",
    "ratio_lower",
    "ratio_p_value",
    "poisson_size",
]

#: p-values below this are reported as this value (the root finder's floor).
P_VALUE_FLOOR = 1e-300


def _counts(
    k: ArrayLike, n: ArrayLike, names: tuple[str, str] = ("k", "n")
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    arrays = []
    for name, value in zip(names, (k, n)):
        if isinstance(value, (bool, np.bool_)):
            raise InvalidArgument(f"{name}={value!r} must be a non-negative integer count")
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument(f"{name}={value!r} must be a count or an array of counts") from exc
        if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)) or np.any(
            arr != np.floor(arr)) or np.any(arr < 0):
            raise InvalidArgument(f"{name}={value!r} must be a non-negative integer count")
        arrays.append(arr)
    k_arr, n_arr = arrays
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError as exc:
        raise InvalidArgument(
            f"{names[0]} and {names[1]} have shapes {np.shape(k_arr)} and {np.shape(n_arr)} "
            "that do not broadcast") from exc
    if np.any(n_arr < 1):
        raise InvalidArgument(f"{names[1]}={n!r} must be >= 1")
    if np.any(k_arr > n_arr):
        raise InvalidArgument(f"{names[0]}={k!r} must be <= {names[1]}={n!r}")
    return k_arr.astype(np.float64), n_arr.astype(np.float64)


def _pair_counts(k_p: int, n_p: int, k_q: int, n_q: int) -> None:
    for name, value in (("k_p", k_p), ("n_p", n_p), ("k_q", k_q), ("n_q", n_q)):
        if np.ndim(value) != 0:
            raise InvalidArgument(f"{name}={value!r} must be a single count, not an array")
    _counts(k_p, n_p, ("k_p", "n_p"))
    _counts(k_q, n_q, ("k_q", "n_q"))


def _tiny_lower(k: NDArray[np.float64], n: NDArray[np.float64], level: float) -> NDArray[np.float64]:
    """Lower bound where scipy's ``betaincinv`` underflows to NaN (bounds below ~1e-40): there
    ``I_x(k, n−k+1) = x^k / (k·B(k, n−k+1)) · (1 + O(x))``, so the bound is
    ``(level · k · B(k, n−k+1))^(1/k)`` to full precision."""
    return np.exp((math.log(level) + np.log(k) + betaln(k, n - k + 1.0)) / k)


def _lower_array(k: NDArray[np.float64], n: NDArray[np.float64], level: float) -> NDArray[np.float64]:
    with np.errstate(invalid="ignore", divide="ignore"):
        kk = np.maximum(k, 1.0)
        lo = np.where(k > 0, betaincinv(kk, n - k + 1.0, level), 0.0)
        bad = np.isnan(lo)
        if bad.any():
            lo = np.where(bad, _tiny_lower(kk, n, level), lo)
    return lo


def _lower(k: float, n: float, level: float) -> float:
    return float(_lower_array(np.float64(k), np.float64(n), level))


def _upper(k: float, n: float, level: float) -> float:
    return float(betainccinv(k + 1.0, n - k, level)) if k < n else 1.0


def cp_lower(k: ArrayLike, n: ArrayLike, alpha: float) -> NDArray[np.float64] | float:
    """One-sided Clopper–Pearson lower bound: ``P[p ≥ lower] ≥ 1 − alpha``.

    Parameters
    ----------
    k, n
        Successes and trials (integer-valued, ``0 ≤ k ≤ n``, ``n ≥ 1``); broadcast together.
    alpha
        One-sided error level in (0, 1).
    """
    alpha = check_alpha(alpha)
    kf, nf = _counts(k, n)
    lo = _lower_array(kf, nf, alpha)
    return lo if lo.ndim else float(lo)


def cp_upper(k: ArrayLike, n: ArrayLike, alpha: float) -> NDArray[np.float64] | float:
    """One-sided Clopper–Pearson upper bound: ``P[p ≤ upper] ≥ 1 − alpha``."""
    alpha = check_alpha(alpha)
    kf, nf = _counts(k, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = np.where(kf < nf, betainccinv(kf + 1.0, np.maximum(nf - kf, 1.0), alpha), 1.0)
    return hi if hi.ndim else float(hi)


def clopper_pearson(
    k: ArrayLike,
    n: ArrayLike,
    alpha: float = 0.05,
    *,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
) -> tuple[NDArray[np.float64] | float, NDArray[np.float64] | float]:
    """Exact (Clopper–Pearson) confidence interval for a binomial proportion.

    Parameters
    ----------
    k, n
        Successes and trials.
    alpha
        Total error level: two-sided intervals put ``alpha / 2`` in each tail.
    alternative
        ``"two-sided"``, ``"greater"`` (lower bound only; upper is 1) or ``"less"`` (upper bound
        only; lower is 0), in scipy's vocabulary.

    Returns
    -------
    (low, high)
        Agrees with ``statsmodels.stats.proportion.proportion_confint(k, n, alpha,
        method="beta")`` for the two-sided case.
    """
    alpha = check_alpha(alpha)
    if alternative == "two-sided":
        return cp_lower(k, n, alpha / 2), cp_upper(k, n, alpha / 2)
    if alternative == "greater":
        return cp_lower(k, n, alpha), 1.0
    if alternative == "less":
        return 0.0, cp_upper(k, n, alpha)
    raise InvalidArgument(
        f"alternative={alternative!r} must be one of 'two-sided', 'greater', 'less'"
    )


@dataclass(frozen=True, slots=True)
class EventBound:
    """Bounds certified by one event S with counts ``k_p`` of ``n_p`` and ``k_q`` of ``n_q``.

    ``p_low``/``p_high`` and ``q_low``/``q_high`` are one-sided Clopper–Pearson bounds at
    ``alpha / 2`` each (a union bound over the two binomials), so with probability ≥ 1 − alpha
    both ``p ≥ p_low`` and ``q ≤ q_high`` hold, and then the bounds below are valid.
    """

    k_p: int
    n_p: int
    k_q: int
    n_q: int
    alpha: float
    p_low: float
    p_high: float
    q_low: float
    q_high: float
    ratio_low: float | None = None

    @property
    def p_hat(self) -> float:
        """Point estimate of ``p``."""
        return self.k_p / self.n_p

    @property
    def q_hat(self) -> float:
        """Point estimate of ``q``."""
        return self.k_q / self.n_q

    def epsilon_lower(self, delta: float = 0.0) -> float:
        """``max(0, ln((p_low − δ) / q_high))``: lower bound on the ε of any (ε, δ) claim.

        With ``ratio_low`` (the conditional test of :func:`ratio_lower`, for Poissonized
        sample sizes) and ``δ = 0``: ``max(0, ln ratio_low)`` instead."""
        if self.ratio_low is not None and delta == 0:
            return max(0.0, math.log(self.ratio_low)) if self.ratio_low > 0 else 0.0
        if self.p_low <= delta:
            return 0.0
        return max(0.0, math.log(self.p_low - delta) - math.log(self.q_high))

    def delta_lower(self, epsilon: float) -> float:
        """``max(0, p_low − e^ε q_high)``: lower bound on the δ at ``epsilon``."""
        return max(0.0, self.p_low - math.exp(epsilon) * self.q_high)


def event_bound(k_p: int, n_p: int, k_q: int, n_q: int, *, alpha: float) -> EventBound:
    """Certify one event: Clopper–Pearson at ``alpha / 2`` on each side (see :class:`EventBound`)."""
    alpha = check_alpha(alpha)
    _pair_counts(k_p, n_p, k_q, n_q)
    half = alpha / 2
    return EventBound(
        k_p=int(k_p), n_p=int(n_p), k_q=int(k_q), n_q=int(n_q), alpha=alpha,
        p_low=float(cp_lower(k_p, n_p, half)), p_high=float(cp_upper(k_p, n_p, half)),
        q_low=float(cp_lower(k_q, n_q, half)), q_high=float(cp_upper(k_q, n_q, half)),
    )


def poisson_size(n: int) -> float:
    """Mean of the Poissonized confirmation size for a budget of ``n`` outputs per side:
    ``n − 3√n``, so the Poisson draw stays within the budget with probability ≈ 0.9987 (an
    overshoot of a few outputs costs budget, never validity)."""
    return float(n - 3.0 * math.sqrt(n))


def ratio_lower(k_p: int, k_q: int, *, alpha: float) -> float:
    """Lower confidence bound (level 1 − alpha) on ``p / q`` from **Poisson** counts.

    If ``k_p ~ Poisson(λp)`` and ``k_q ~ Poisson(λq)`` are independent (an event counted on
    ``Poisson(λ)`` outputs of each side: Poisson thinning), then given ``T = k_p + k_q``,
    ``k_p ~ Binomial(T, π)`` with ``π = p / (p + q)``. The one-sided Clopper–Pearson lower bound
    ``π_lo`` on π is valid conditionally on T, hence unconditionally, and ``p/q = π/(1 − π)`` is
    increasing in π, so ``π_lo / (1 − π_lo)`` is a lower bound on ``p/q`` — one exact test, no
    union bound over two binomials. ``T = 0`` gives 0. Not valid for fixed sample sizes (then
    the conditional law is Fisher's noncentral hypergeometric in the odds ratio, not in p/q).

    References
    ----------
    J. Przyborowski, H. Wileński, "Homogeneity of results in testing samples from Poisson
    series", Biometrika 31 (1940) (the conditional binomial test of two Poisson means).
    """
    alpha = check_alpha(alpha)
    _pair_counts(k_p, max(k_p, 1), k_q, max(k_q, 1))
    total = int(k_p) + int(k_q)
    if k_p == 0:
        return 0.0
    pi_lo = _lower(float(k_p), float(total), alpha)
    return pi_lo / (1.0 - pi_lo) if pi_lo < 1.0 else math.inf


def ratio_p_value(k_p: int, k_q: int, *, epsilon: float) -> float:
    """Exact conditional p-value of H0 ``p ≤ e^ε q`` from Poisson counts (see
    :func:`ratio_lower`): ``P[Binomial(T, e^ε/(1 + e^ε)) ≥ k_p]``, ``T = k_p + k_q``."""
    from scipy.stats import binom

    epsilon = check_epsilon(epsilon)
    _pair_counts(k_p, max(k_p, 1), k_q, max(k_q, 1))
    total = int(k_p) + int(k_q)
    if k_p == 0:
        return 1.0
    pi0 = 1.0 / (1.0 + math.exp(-epsilon))
    return max(P_VALUE_FLOOR, min(1.0, float(binom.sf(int(k_p) - 1, total, pi0))))


def epsilon_lower_bound(
    k_p: int, n_p: int, k_q: int, n_q: int, *, alpha: float, delta: float = 0.0
) -> float:
    """Lower confidence bound (level 1 − alpha) on ε from one pre-selected event.

    If the mechanism is (ε, δ)-DP then ``p ≤ e^ε q + δ``, so ``ε ≥ ln((p − δ)/q) ≥
    ln((p_low − δ)/q_high)`` whenever both one-sided bounds hold (probability ≥ 1 − alpha).
    The event must have been chosen without looking at these counts.
    """
    delta = check_delta(delta)
    return event_bound(k_p, n_p, k_q, n_q, alpha=alpha).epsilon_lower(delta)


def delta_lower_bound(
    k_p: int, n_p: int, k_q: int, n_q: int, *, alpha: float, epsilon: float
) -> float:
    """Lower confidence bound on the hockey-stick divergence at ``epsilon`` from one event."""
    epsilon = check_real("epsilon", epsilon)
    if epsilon < 0:
        raise InvalidArgument(f"epsilon={epsilon!r} must be >= 0")
    return event_bound(k_p, n_p, k_q, n_q, alpha=alpha).delta_lower(epsilon)


def violation_p_value(
    k_p: int, n_p: int, k_q: int, n_q: int, *, epsilon: float, delta: float = 0.0
) -> float:
    """p-value of H0: ``p ≤ e^ε q + δ`` for one pre-selected event.

    The smallest level λ at which the test "reject iff ``cp_lower(k_p, λ/2) − e^ε
    cp_upper(k_q, λ/2) > δ``" rejects. Under H0 that test rejects with probability ≤ λ (union
    bound over the two one-sided Clopper–Pearson bounds), so the p-value is valid. Values below
    ``1e-300`` are reported as ``1e-300``.
    """
    epsilon = check_real("epsilon", epsilon)  # 0 allowed: ApproxDP(0, δ) (total variation)
    if not 0 <= epsilon < math.inf:
        raise InvalidArgument(f"epsilon={epsilon!r} must be finite and >= 0")
    delta = check_delta(delta)
    _pair_counts(k_p, n_p, k_q, n_q)
    e_eps = math.exp(epsilon)

    kp, np_, kq, nq = float(k_p), float(n_p), float(k_q), float(n_q)

    def margin(log_level: float) -> float:
        half = math.exp(log_level) / 2
        return _lower(kp, np_, half) - e_eps * _upper(kq, nq, half) - delta

    if margin(0.0) <= 0:
        return 1.0
    lo = math.log(P_VALUE_FLOOR)
    if margin(lo) > 0:
        return P_VALUE_FLOOR
    from scipy.optimize import brentq  # lazy: scipy.optimize costs ~1 s at import

    return math.exp(brentq(margin, lo, 0.0, xtol=1e-10, rtol=1e-10))


def holm(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm-adjusted p-values (statsmodels ``multipletests(method="holm")``)."""
    from statsmodels.stats.multitest import multipletests

    try:
        p = np.asarray(p_values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"p_values={p_values!r} must be a 1-d array of probabilities") from exc
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InvalidArgument(f"p_values={p!r} must be a 1-d array of probabilities")
    if p.size == 0:
        return p
    return np.asarray(multipletests(p, alpha=0.05, method="holm")[1], dtype=np.float64)


#: Event masses at which a passing audit states what it rules out (:func:`power_floor`).
FLOOR_MASSES = (0.5, 0.05, 0.005)


def power_floor(n: int, *, alpha: float, epsilon: float, delta: float,
                masses: tuple[float, ...] = FLOOR_MASSES, power: float = 0.9
                ) -> list[dict[str, float]]:
    """What a confirmation of ``n`` outputs per side at level ``alpha`` (per candidate, both
    sides: :func:`event_bound`) rules out: for each event mass ``p`` (on the likelier side),
    the smallest ratio ``p/q`` that is refuted with probability ≥ ``power``, as ``x`` in
    ``p/q = e^(ε(1+x))`` (``inf`` where no ratio suffices, e.g. ``p ≤ δ``).

    Conservative and deterministic: the refutation is guaranteed when ``K_p`` is at least its
    ``(1 − power)/2`` quantile and ``K_q`` at most its ``(1 + power)/2`` quantile, which happen
    together with probability ≥ ``power`` (union bound); so the true power is at least
    ``power``. It speaks of an event that is *confirmed*: whether exploration selects it is
    another matter.
    """
    from scipy.stats import binom

    tail = (1.0 - power) / 2.0
    out = []
    for mass in masses:
        k_p = binom.ppf(tail, n, mass)
        p_low = float(cp_lower(k_p, n, alpha / 2))

        limit = (p_low - delta) / math.exp(epsilon)  # q_high must fall below this
        if limit <= 0:
            out.append({"mass": mass, "x": math.inf, "ratio": math.inf})
            continue
        lo = 0.0
        grid = np.geomspace(mass * 1e-12, mass, 160)
        for _ in range(3):  # two vectorised refinements of the boundary
            q_high = cp_upper(binom.ppf(1.0 - tail, n, grid), n, alpha / 2)
            ok = np.asarray(q_high) < limit
            if not ok[0]:
                break
            i = int(np.flatnonzero(ok)[-1])
            lo = float(grid[i])
            if i + 1 >= grid.size:
                break
            grid = np.linspace(grid[i], grid[i + 1], 80)
        ratio = mass / lo if lo > 0 else math.inf
        x = (math.log(ratio) / epsilon - 1.0) if epsilon > 0 and math.isfinite(ratio) else (
            math.inf if not math.isfinite(ratio) else math.log(ratio))
        out.append({"mass": mass, "x": x, "ratio": ratio})
    return out