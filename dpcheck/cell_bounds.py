"""Lower confidence bounds on Rényi divergences (and so on ρ and ε(α)) from the counts of a
partition of the output space into k cells.

A binary event coarsens the output to one bit and loses information about Rényi divergences at
small orders (issue 29: on 4-ary randomized response the best single event certifies 0.81 of ρ
even with exact probabilities). Counting a partition ``C_1, …, C_k`` (chosen on exploration
samples, counted on fresh ones) keeps more of it: by data processing, ``D_α(P̃‖Q̃) ≤ D_α(P‖Q)``
for the coarsened distributions ``P̃ = (P(C_i))_i`` and ``Q̃ = (Q(C_i))_i``.

Confidence region: two-sided Clopper–Pearson intervals for the 2k cell probabilities at
``alpha / (2k)`` each (Bonferroni: all hold together with probability ≥ 1 − alpha), intersected
with the simplex; call it R. Then ``min_{(p, q) ∈ R} D_α(p‖q)`` is a lower confidence bound on
``D_α(P‖Q)``, simultaneously for every order α (one region for all orders), so ``max_α`` of the
bounds divided by α is a lower confidence bound on ρ at no extra multiplicity.

Computation: ``F(p, q) = Σ p_i^α q_i^(1−α)`` (α > 1) and ``Σ p_i ln(p_i/q_i)`` (α = 1) are jointly
convex. A point ``x*`` is found by SLSQP; the bound reported is the linearisation bound
``F(x*) + min_{x ∈ R} ∇F(x*)·(x − x*)`` (the linear minimum over a box ∩ simplex is a greedy
fill), which is ≤ the minimum of F over R by convexity whatever the solver returned — the
bound is valid regardless of the optimiser's accuracy, which only affects how tight it is.

:func:`renyi_lower_from_events` needs no new counts and no further α: the boxes an audit has
already confirmed for several events (``P(S_j) ≥ p_low``, ``Q(S_j) ≤ q_high``, simultaneously
valid) constrain the distribution on the atoms of the events' algebra; the minimum of D_α over
that polytope (certified the same way, the linear minimum bounded by LP duality) combines the
boxes. On 4-ary randomized response (ε = 1, 10⁶ per side) the best box alone certifies 0.81 of
ρ, the three confirmed boxes together 0.99.

References
----------
I. Mironov, "Rényi Differential Privacy", CSF 2017 (post-processing, Proposition 2). T. van
Erven, P. Harremoës, IEEE Trans. Inf. Theory 60 (2014), Theorem 9 (data processing); the joint
convexity of ``Σ p^α q^(1−α)`` for α > 1 is that of the perspective of ``t ↦ t^α``. C. J.
Clopper, E. S. Pearson, Biometrika 26 (1934).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linprog, minimize

from dpcheck.errors import InvalidArgument
from dpcheck.exact_curves import check_orders
from dpcheck.stats import cp_lower, cp_upper
from dpcheck.validation import check_alpha, fmt

__all__ = ["cell_region", "renyi_lower_from_cells", "rho_lower_from_cells",
           "renyi_lower_from_events", "rho_lower_from_events", "CELL_ORDERS"]

#: Orders at which :func:`rho_lower_from_cells` evaluates the bound: 1 (KL) and 48 orders with
#: α − 1 log-spaced over [1e-2, 1e2].
CELL_ORDERS = np.concatenate([[1.0], 1.0 + np.logspace(-2.0, 2.0, 48)])


def _check_counts(counts: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(counts)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={fmt(counts)} must be an array of counts") from None
    if arr.ndim != 1 or arr.size < 2 or arr.dtype.kind not in "iu" or np.any(arr < 0) \
            or arr.sum() < 1:
        raise InvalidArgument(f"{name}={fmt(counts)} must be a 1-d array of >= 2 non-negative "
                              "integer counts with a positive total")
    return arr.astype(np.int64)


def cell_region(counts_p: ArrayLike, counts_q: ArrayLike,
                alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous Clopper–Pearson boxes ``(lo_p, hi_p, lo_q, hi_q)`` for the cell
    probabilities: every one of the 2k two-sided intervals at level ``alpha / (2k)``."""
    kp, kq = _check_counts(counts_p, "counts_p"), _check_counts(counts_q, "counts_q")
    if kp.size != kq.size:
        raise InvalidArgument(f"counts_p and counts_q must have the same length "
                              f"({kp.size} != {kq.size})")
    level = check_alpha(alpha) / (4 * kp.size)  # each side of each of the 2k intervals
    return (np.asarray(cp_lower(kp, kp.sum(), level)), np.asarray(cp_upper(kp, kp.sum(), level)),
            np.asarray(cp_lower(kq, kq.sum(), level)), np.asarray(cp_upper(kq, kq.sum(), level)))


def _linear_min(g: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """``min g·x`` over ``{lo ≤ x ≤ hi, Σ x = 1}`` (fill the cheapest coordinates first)."""
    x = lo.copy()
    budget = 1.0 - float(lo.sum())
    for i in np.argsort(g, kind="stable"):
        add = min(hi[i] - lo[i], max(budget, 0.0))
        x[i] += add
        budget -= add
    return float(g @ x)


def _objective(a: float, k: int) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """F and its gradient at x = (p, q) for order a (a = 1: the KL divergence). Every coordinate
    of x must be > 0: there F is differentiable, so its gradient is a subgradient and the
    linearisation ``F(x*) + ∇F(x*)·(x − x*)`` is below F on the whole closed simplex."""
    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        p, q = x[:k], x[k:]
        with np.errstate(over="ignore", invalid="ignore"):
            if a == 1.0:
                lr = np.log(p) - np.log(q)
                return float(np.sum(p * lr)), np.concatenate([lr + 1.0, -p / q])
            ratio = p / q
            return float(np.sum(q * ratio**a)), np.concatenate([a * ratio ** (a - 1),
                                                                (1 - a) * ratio**a])
    return f


#: Floor of every coordinate of the linearisation point (keeps F differentiable there).
_FLOOR = 1e-300


def _certified(a: float, k: int, x_star: np.ndarray,
               lin_p: Callable[[np.ndarray], float],
               lin_q: Callable[[np.ndarray], float]) -> float:
    """The lower bound on ``min_R D_α`` from the linearisation at ``x_star`` (any point): ``F(x*)
    − ∇F·x* + lin_p(∇_p F) + lin_q(∇_q F)``, where ``lin_*(g)`` is a lower bound on ``min g·x``
    over the side's part of R. As a divergence (≥ 0)."""
    x = np.maximum(x_star, _FLOOR)
    value, grad = _objective(a, k)(x)
    if not (np.isfinite(value) and np.all(np.isfinite(grad))):
        return 0.0
    bound = value - float(grad @ x) + lin_p(grad[:k]) + lin_q(grad[k:])
    if a == 1.0:
        return max(0.0, bound)
    return math.log(max(bound, 1.0)) / (a - 1.0)  # F ≥ 1 on the simplex for α > 1


def _solve(a: float, k: int, x0: np.ndarray, bounds: list[tuple[float, float]],
           extra: list[dict]) -> np.ndarray:
    """An (approximate) minimiser of F from x0 by SLSQP; x0 itself if that fails."""
    f = _objective(a, k)
    base = 1.0 if a > 1.0 else 0.0
    x0 = np.maximum(x0, _FLOOR)
    f0 = f(x0)[0]
    scale = max(f0 - base, 1e-300) if math.isfinite(f0) else 1.0
    cons = [{"type": "eq", "fun": lambda x: x[:k].sum() - 1.0,
             "jac": lambda x: np.r_[np.ones(k), np.zeros(k)]},
            {"type": "eq", "fun": lambda x: x[k:].sum() - 1.0,
             "jac": lambda x: np.r_[np.zeros(k), np.ones(k)]}, *extra]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(lambda x: ((f(np.maximum(x, _FLOOR))[0] - base) / scale,
                                  f(np.maximum(x, _FLOOR))[1] / scale), x0, jac=True,
                       method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": 1e-14, "maxiter": 500})
    x = np.maximum(res.x, _FLOOR)
    return x if np.isfinite(f(x)[0]) and f(x)[0] <= f0 else x0


def _start(lo: np.ndarray, hi: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The Euclidean projection of y onto ``{lo ≤ x ≤ hi, Σ x = 1}`` (bisection on the shift)."""
    a, b = float(np.min(y - hi)) - 1.0, float(np.max(y - lo)) + 1.0
    for _ in range(200):
        mid = (a + b) / 2
        if np.clip(y - mid, lo, hi).sum() > 1.0:
            a = mid
        else:
            b = mid
    return np.clip(y - b, lo, hi)


def _lower_at(a: float, region: tuple[np.ndarray, ...], x0: np.ndarray) -> float:
    lo_p, hi_p, lo_q, hi_q = region
    k = lo_p.size
    bounds = list(zip(lo_p, hi_p)) + list(zip(lo_q, hi_q))
    x = _solve(a, k, x0, bounds, [])
    return _certified(a, k, x, lambda g: _linear_min(g, lo_p, hi_p),
                      lambda g: _linear_min(g, lo_q, hi_q))


def renyi_lower_from_cells(counts_p: ArrayLike, counts_q: ArrayLike, orders: ArrayLike, *,
                           alpha: float) -> np.ndarray:
    """Lower confidence bounds on ``D_α(P‖Q)`` at finite orders α ≥ 1 from cell counts.

    Parameters
    ----------
    counts_p, counts_q
        Counts of the k cells among n_p outputs of ``M(D)`` and n_q outputs of ``M(D′)`` (the
        cells fixed before these outputs were drawn).
    orders
        Finite orders α ≥ 1 (1: the KL divergence).
    alpha
        Error level: all returned bounds hold together with probability ≥ 1 − alpha.

    Returns
    -------
    numpy.ndarray
        One bound per order (in nats, ≥ 0), of the shape of ``orders``.
    """
    a = np.atleast_1d(check_orders(orders))
    if np.any(np.isinf(a)):
        raise InvalidArgument(f"orders={fmt(orders)} must be finite")
    region = cell_region(counts_p, counts_q, alpha)
    kp, kq = np.asarray(counts_p, float), np.asarray(counts_q, float)
    mid = (kp / kp.sum() + kq / kq.sum()) / 2
    x0 = np.concatenate([_start(region[0], region[1], mid), _start(region[2], region[3], mid)])
    out = np.array([_lower_at(float(o), region, x0) for o in a.ravel()])
    return out.reshape(np.shape(orders)) if np.ndim(orders) else out


def rho_lower_from_cells(counts_p: ArrayLike, counts_q: ArrayLike, *, alpha: float,
                         orders: ArrayLike = CELL_ORDERS) -> float:
    """Lower confidence bound on ρ (zCDP) from cell counts: ``max_α bound(D_α)/α`` over
    ``orders`` (default :data:`CELL_ORDERS`, including α = 1, whose bound is the KL
    divergence's: ρ ≥ lim_{α→1} D_α/α). Both directions are the caller's choice: pass the
    counts the other way round for ``D_α(Q‖P)`` (and split ``alpha`` between the two)."""
    a = np.atleast_1d(check_orders(orders))
    return float(np.max(renyi_lower_from_cells(counts_p, counts_q, a, alpha=alpha) / a))


# -- the region of confirmed event boxes: no α beyond the boxes' own -------------------------


def _dual_linear_min(g: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray) -> float:
    """A rigorous lower bound on ``min g·x`` over ``{x ≥ 0, Σ x = 1, a_ub·x ≤ b_ub}``.

    Weak duality: for every ``w ≥ 0`` and feasible x, ``g·x ≥ (g + a_ubᵀw)·x − w·b_ub ≥
    min_i (g + a_ubᵀw)_i − w·b_ub``. ``w`` is taken from the LP's duals (HiGHS); whatever their
    accuracy, the bound stays valid (an infeasible region only makes it conservative)."""
    best = float(np.min(g))  # w = 0
    if not a_ub.size:
        return best
    res = linprog(g - g.min(), A_ub=a_ub, b_ub=b_ub, A_eq=np.ones((1, g.size)), b_eq=[1.0],
                  bounds=(0, 1), method="highs")
    marginals = getattr(getattr(res, "ineqlin", None), "marginals", None)
    if marginals is None:
        return best
    for w in (np.maximum(-marginals, 0.0), np.maximum(marginals, 0.0)):
        best = max(best, float(np.min(g + a_ub.T @ w) - w @ b_ub))
    return best


def _event_constraints(membership: ArrayLike, low: ArrayLike,
                       high: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = np.asarray(membership, dtype=float)
    lo, hi = np.asarray(low, dtype=float).ravel(), np.asarray(high, dtype=float).ravel()
    if m.ndim != 2 or m.shape[0] != lo.size or lo.size != hi.size or np.any((m != 0) & (m != 1)) \
            or np.any(~np.isfinite(lo) | ~np.isfinite(hi)):
        raise InvalidArgument(f"membership={fmt(membership)} must be a 0/1 matrix (events x "
                              "cells) with one finite low and high per event")
    return m, lo, hi


def renyi_lower_from_events(membership: ArrayLike, p_low: ArrayLike, p_high: ArrayLike,
                            q_low: ArrayLike, q_high: ArrayLike, orders: ArrayLike) -> np.ndarray:
    """Lower bounds on ``D_α(P‖Q)`` from simultaneous bounds on the probabilities of events.

    An audit's confirmed events S_j hold, simultaneously with probability ≥ 1 − alpha,
    ``p_low_j ≤ P(S_j) ≤ p_high_j`` and ``q_low_j ≤ Q(S_j) ≤ q_high_j`` (one side each is
    trivial, 0 or 1, for a one-sided box). With cells the atoms of the events' algebra (row j of
    ``membership`` marks the cells of S_j), ``min D_α(p‖q)`` over the cell distributions that
    meet every bound is ≤ D_α of the coarsened pair ≤ ``D_α(P‖Q)`` (data processing) whenever
    the bounds hold: no α is spent beyond the boxes' own. Certified as in
    :func:`renyi_lower_from_cells`, with the linear minimum bounded by LP duality
    (:func:`_dual_linear_min`). Several boxes together certify more than the best one alone.

    Parameters
    ----------
    membership
        0/1 matrix, events × cells.
    p_low, p_high, q_low, q_high
        Per event, bounds on ``P(S_j)`` and ``Q(S_j)`` (use 0 and 1 where there is none).
    orders
        Finite orders α ≥ 1.

    Returns
    -------
    numpy.ndarray
        One bound per order, ≥ 0, of the shape of ``orders``.
    """
    a = np.atleast_1d(check_orders(orders))
    if np.any(np.isinf(a)):
        raise InvalidArgument(f"orders={fmt(orders)} must be finite")
    m, plo, phi = _event_constraints(membership, p_low, p_high)
    _, qlo, qhi = _event_constraints(membership, q_low, q_high)
    k = m.shape[1]
    a_p, b_p = np.vstack([-m, m]), np.concatenate([-plo, phi])
    a_q, b_q = np.vstack([-m, m]), np.concatenate([-qlo, qhi])
    extra = [{"type": "ineq", "fun": lambda x: b_p - a_p @ x[:k],
              "jac": lambda x: np.hstack([-a_p, np.zeros_like(a_p)])},
             {"type": "ineq", "fun": lambda x: b_q - a_q @ x[k:],
              "jac": lambda x: np.hstack([np.zeros_like(a_q), -a_q])}]
    starts = [np.full(2 * k, 1.0 / k)] + [np.random.default_rng(s).dirichlet(np.ones(k), 2).ravel()
                                          for s in range(3)]
    out = []
    for order in a.ravel():
        best = 0.0
        for x0 in starts:  # each certified value is a valid bound: keep the largest
            x = _solve(float(order), k, x0, [(0.0, 1.0)] * (2 * k), extra)
            best = max(best, _certified(float(order), k, x,
                                        lambda g: _dual_linear_min(g, a_p, b_p),
                                        lambda g: _dual_linear_min(g, a_q, b_q)))
        out.append(best)
    res = np.array(out)
    return res.reshape(np.shape(orders)) if np.ndim(orders) else res


def rho_lower_from_events(membership: ArrayLike, p_low: ArrayLike, p_high: ArrayLike,
                          q_low: ArrayLike, q_high: ArrayLike,
                          orders: ArrayLike = CELL_ORDERS) -> float:
    """Lower bound on ρ from event bounds: ``max_α`` over ``orders`` and both directions of
    :func:`renyi_lower_from_events` ÷ α (D(Q‖P) from the same bounds with the sides swapped)."""
    a = np.atleast_1d(check_orders(orders))
    pq = renyi_lower_from_events(membership, p_low, p_high, q_low, q_high, a)
    qp = renyi_lower_from_events(membership, q_low, q_high, p_low, p_high, a)
    return float(np.max(np.maximum(pq, qp) / a))
