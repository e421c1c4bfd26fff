"""Exact privacy curves of two finite output distributions: Rényi divergences, ρ, μ, trade-off.

The functions take two aligned probability vectors ``p = M(D)`` and ``q = M(D′)`` (one entry per
output, zeros allowed; :class:`dpcheck.exact.ExactPrivacy` calls them with its own vectors and is
the public face) and compute, with ``L(o) = ln P(o) − ln Q(o)``:

* :func:`renyi_divergence` — ``D_α(P‖Q) = ln Σ_o P(o)^α Q(o)^(1−α) / (α − 1)`` for orders α > 1,
  its limit the Kullback–Leibler divergence ``Σ P L`` at α = 1 and ``max L`` at α = ∞; ``inf``
  for every α ≥ 1 when P has mass where Q has none. As ``ln E_P[e^((α−1)L)] / (α − 1)`` it is
  evaluated with ``logsumexp`` (no overflow at large α) or, when ``(α − 1)·max|L| ≤ 1/2``, as
  ``log1p(Σ P·expm1((α−1)L)) / (α − 1)``, which keeps full relative accuracy as α → 1.
* :func:`zcdp_rho` — ``ρ = sup_{α>1} max(D_α(P‖Q), D_α(Q‖P)) / α``, the smallest ρ for which the
  pair is ρ-zCDP.
* :func:`tradeoff_vertices` and :func:`tradeoff` — the trade-off function
  ``T(P, Q)(x) = inf {β_φ : α_φ ≤ x}`` over all (randomised) tests φ of H0: P against H1: Q, with
  type-I error ``α_φ = E_P[φ]`` and type-II error ``β_φ = 1 − E_Q[φ]``. By the Neyman–Pearson
  lemma the optimal tests reject the outputs in decreasing order of ``Q(o)/P(o)`` (randomising on
  the boundary output), so T is the piecewise-linear curve through the vertices
  ``(P(R_k), 1 − Q(R_k))`` of the likelihood-ratio-ordered rejection sets ``R_k``.
* :func:`gdp_mu` — the smallest μ with ``T(P, Q) ≥ G_μ`` (the pair is μ-GDP).

References
----------
I. Mironov, "Rényi Differential Privacy", CSF 2017 (Definitions 3–4; D_∞ and the α → 1 limit).
T. van Erven, P. Harremoës, "Rényi divergence and Kullback–Leibler divergence", IEEE Trans. Inf.
Theory 60 (2014): D_α is non-decreasing and continuous in α (Theorems 3 and 7).
M. Bun, T. Steinke, "Concentrated Differential Privacy", TCC 2016, Definition 1.1 (ρ-zCDP).
J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Definitions
2.1–2.6 (trade-off functions, f-DP, G_μ) and Proposition 2.12 (the (ε, δ) duality).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp, ndtri

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_choice, check_real, fmt

__all__ = ["renyi_divergence", "zcdp_rho", "gdp_mu", "tradeoff_vertices", "tradeoff",
           "check_orders", "DIRECTIONS", "RHO_GRID"]

#: ``direction=`` values: the symmetric maximum (what a claim on a neighbour relation bounds,
#: every relation holding both (D, D′) and (D′, D)), or one direction ``D(P‖Q)`` / ``D(Q‖P)``.
DIRECTIONS = ("both", "pq", "qp")
#: The orders ρ is first searched on: α = 1 + 10^t for 241 equally spaced t in [−6, 6].
RHO_GRID = 1.0 + np.logspace(-6.0, 6.0, 241)
_CHUNK = 1 << 20  # max matrix entries per block


def check_orders(orders: ArrayLike, name: str = "order") -> np.ndarray:
    """Rényi orders as a float array: each must be ≥ 1 (1 is the Kullback–Leibler divergence,
    ``inf`` the max-divergence); :class:`~dpcheck.errors.InvalidArgument` otherwise."""
    if np.ndim(orders) == 0:
        a = check_real(name, orders)
        if not a >= 1.0:
            raise InvalidArgument(f"{name}={fmt(orders)} must be >= 1")
        return np.array(a)
    try:
        arr = np.asarray(orders, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}s={fmt(orders)} must be an array of reals") from None
    bad = np.flatnonzero(~(arr.ravel() >= 1.0))
    if bad.size:
        i = int(bad[0])
        raise InvalidArgument(f"{name}s[{i}]={float(arr.ravel()[i])!r} must be >= 1")
    return arr


def _pair(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated, normalised copies of two aligned probability vectors."""
    out = []
    for name, v in (("p", p), ("q", q)):
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise InvalidArgument(f"{name}={fmt(v)} must be a 1-d array of probabilities") from None
        if arr.ndim != 1 or not np.all(np.isfinite(arr) & (arr >= 0)) or not arr.sum() > 0:
            raise InvalidArgument(f"{name}={fmt(v)} must be a 1-d array of finite "
                                  "probabilities >= 0 with a positive sum")
        out.append(arr / math.fsum(arr))
    if out[0].shape != out[1].shape:
        raise InvalidArgument(f"p and q must have the same length ({out[0].size} != "
                              f"{out[1].size})")
    return out[0], out[1]


def _one_way(p: np.ndarray, q: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``D_α(P‖Q)`` for a flat array of orders ``a ≥ 1``."""
    sp = p > 0
    if np.any(q[sp] == 0):
        return np.full(a.shape, math.inf)
    lp = np.log(p[sp])
    lr = lp - np.log(q[sp])
    out = np.empty(a.shape)
    if np.any(a == 1.0):
        out[a == 1.0] = math.fsum(p[sp] * lr)
    out[np.isinf(a)] = float(lr.max()) if lr.size else 0.0
    mid = np.flatnonzero((a > 1.0) & np.isfinite(a))
    span = float(np.abs(lr).max()) if lr.size else 0.0
    step = max(1, _CHUNK // max(lr.size, 1))
    for start in range(0, mid.size, step):
        idx = mid[start:start + step]
        t = a[idx] - 1.0
        small = t * span <= 0.5
        near, far = idx[small], idx[~small]
        if near.size:  # |(α−1)L| ≤ 1/2: no overflow, full relative accuracy as α → 1
            tn = t[small][:, None]
            out[near] = np.log1p(np.expm1(tn * lr[None, :]) @ p[sp]) / tn[:, 0]
        if far.size:
            tf = t[~small][:, None]
            out[far] = logsumexp(lp[None, :] + tf * lr[None, :], axis=1) / tf[:, 0]
    return np.maximum(out, 0.0)  # D_α ≥ 0; only rounding goes below


def renyi_divergence(p: ArrayLike, q: ArrayLike, orders: ArrayLike,
                     direction: str = "both") -> Any:
    """Exact Rényi divergence of order α ≥ 1 between two finite distributions.

    Parameters
    ----------
    p, q
        Aligned probability vectors (same outputs, same order; zeros allowed). They are
        normalised by their sums.
    orders
        One order or an array of orders α ≥ 1 (1: Kullback–Leibler; ``inf``: ``max ln P/Q``).
    direction
        ``"both"`` (default): ``max(D_α(P‖Q), D_α(Q‖P))``, the quantity an RDP or zCDP claim on a
        symmetric neighbour relation bounds; ``"pq"`` or ``"qp"``: one direction.

    Returns
    -------
    float or numpy.ndarray
        In nats, a float for a scalar order, else an array of the shape of ``orders``; ``inf``
        where the numerator distribution has mass outside the other's support.

    Raises
    ------
    InvalidArgument
        For an order below 1 (``order=0.5 must be >= 1``), NaN, or an unknown direction.

    References
    ----------
    I. Mironov, "Rényi Differential Privacy", CSF 2017, Definition 3.
    """
    a = check_orders(orders)
    way = check_choice(direction, "direction", DIRECTIONS)
    pv, qv = _pair(p, q)
    flat = a.ravel()
    parts = []
    if way in ("both", "pq"):
        parts.append(_one_way(pv, qv, flat))
    if way in ("both", "qp"):
        parts.append(_one_way(qv, pv, flat))
    out = np.maximum.reduce(parts).reshape(a.shape)
    return float(out) if out.ndim == 0 else out


def zcdp_rho(p: ArrayLike, q: ArrayLike) -> float:
    """The smallest ρ for which the pair is ρ-zCDP: ``sup_{α>1} D_α / α`` (both directions).

    Method: ``g(α) = max(D_α(P‖Q), D_α(Q‖P)) / α`` is evaluated at α = 1 (its limit from above,
    the KL divergence; D_α is continuous in α) and on :data:`RHO_GRID` (241 orders with α − 1
    log-spaced over [1e-6, 1e6]); the best grid point is then refined by bounded Brent search on
    ``ln(α − 1)`` between its two neighbours (``scipy.optimize.minimize_scalar``, ``xatol`` 1e-10).
    The result is the largest value of g actually evaluated, so it never exceeds the true ρ
    (up to rounding); for a maximum inside the grid it is within about 1e-12 relative of it
    (the grid step is 12 % in α − 1 and g is smooth). Beyond α = 1e6, ``g ≤ D_∞ / 1e6``.
    ``inf`` on a support mismatch.

    References
    ----------
    M. Bun, T. Steinke, "Concentrated Differential Privacy", TCC 2016, Definition 1.1.
    """
    pv, qv = _pair(p, q)

    def g(order: np.ndarray) -> np.ndarray:
        return np.maximum(_one_way(pv, qv, order), _one_way(qv, pv, order)) / order

    values = g(np.concatenate([[1.0], RHO_GRID]))
    best = float(values.max())
    if math.isinf(best) or best == 0.0:
        return best
    i = int(np.argmax(values[1:]))
    lo = math.log(RHO_GRID[max(i - 1, 0)] - 1.0)
    hi = math.log(RHO_GRID[min(i + 1, RHO_GRID.size - 1)] - 1.0)
    from scipy.optimize import minimize_scalar  # lazy: import dpcheck stays light

    res = minimize_scalar(lambda s: -float(g(np.array([1.0 + math.exp(s)]))[0]),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return max(best, -float(res.fun))


def tradeoff_vertices(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Vertices ``(x_k, y_k)`` of the exact trade-off curve ``T(P, Q)`` (increasing x).

    The outputs are ordered by decreasing likelihood ratio ``Q(o)/P(o)`` (outputs with
    ``P(o) = 0`` first, with ``Q(o) = 0`` last); ``R_k`` is the set of the first k, ``x_k =
    P(R_k)`` (type-I error) and ``y_k = Q(outside R_k)`` (type-II error). T is the linear
    interpolation of the vertices (the randomised Neyman–Pearson tests); of vertices with the same
    x only the lowest is kept. ``x_k`` sums P from the front and ``y_k`` sums Q from the back, so
    both are accurate to a few ulps near 0.

    References
    ----------
    J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Definition
    2.1; J. Neyman, E. S. Pearson, Phil. Trans. R. Soc. A 231 (1933).
    """
    x, y, _, _ = _ordered(*_pair(p, q))
    keep = np.append(x[1:] != x[:-1], True)
    return x[keep], y[keep]


def _ordered(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(x, y, x̄, ȳ)`` for k = 0 … n: x = P(R_k), y = Q(R_kᶜ) and their complements
    ``x̄ = P(R_kᶜ)``, ``ȳ = Q(R_k)``, each summed from the side where it is small."""
    live = (p > 0) | (q > 0)
    p, q = p[live], q[live]
    with np.errstate(divide="ignore"):
        lr = np.log(q) - np.log(p)  # +inf where p = 0, -inf where q = 0
    order = np.argsort(-lr, kind="stable")
    p, q = p[order], q[order]
    zero = np.zeros(1)
    x = np.concatenate([zero, np.cumsum(p)])
    ybar = np.concatenate([zero, np.cumsum(q)])
    xbar = np.concatenate([np.cumsum(p[::-1])[::-1], zero])
    y = np.concatenate([np.cumsum(q[::-1])[::-1], zero])
    x[-1], xbar[0], y[0], ybar[-1] = 1.0, 1.0, 1.0, 1.0
    return np.minimum(x, 1.0), np.minimum(y, 1.0), np.minimum(xbar, 1.0), np.minimum(ybar, 1.0)


def tradeoff(p: ArrayLike, q: ArrayLike, x: ArrayLike, direction: str = "both") -> Any:
    """The exact trade-off function of the pair at type-I errors ``x`` in [0, 1].

    ``direction="pq"``: ``T(P, Q)`` (tests of H0: P against H1: Q); ``"qp"``: ``T(Q, P)``, which
    is the inverse function of ``T(P, Q)``; ``"both"`` (default): their pointwise minimum. A
    mechanism is f-DP when ``T(M(D), M(D′)) ≥ f`` for all neighbouring D, D′ (Dong, Roth & Su
    2022, Definition 2.3); a neighbour relation holds both (D, D′) and (D′, D), so the pair
    satisfies f-DP iff the minimum is ≥ f. (A symmetric f, such as G_μ, is ≤ one direction iff
    it is ≤ the other.)

    Returns
    -------
    float or numpy.ndarray
        β(x), a float for a scalar x.

    References
    ----------
    J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Definitions
    2.1 and 2.3, Lemma 2.5 (``T(Q, P) = T(P, Q)⁻¹``).
    """
    way = check_choice(direction, "direction", DIRECTIONS)
    try:
        xs = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument(f"x={fmt(x)} must be an array of type-I errors in [0, 1]") from None
    bad = np.flatnonzero(~((xs.ravel() >= 0) & (xs.ravel() <= 1)))
    if bad.size:
        i = int(bad[0])
        raise InvalidArgument(f"x={fmt(x)} must be in [0, 1] (x[{i}]={float(xs.ravel()[i])!r})")
    vx, vy = tradeoff_vertices(p, q)
    parts = []
    if way in ("both", "pq"):
        parts.append(np.interp(xs, vx, vy))
    if way in ("both", "qp"):
        ux, uy = vy[::-1], vx[::-1]  # the inverse curve: swap the axes
        keep = np.append(ux[1:] != ux[:-1], True)
        parts.append(np.interp(xs, ux[keep], uy[keep]))
    out = np.clip(np.minimum.reduce(parts), 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def _ndtri_of(small: np.ndarray, large: np.ndarray) -> np.ndarray:
    """``Φ⁻¹(s)`` for ``s = small = 1 − large``, from whichever representation is accurate."""
    with np.errstate(divide="ignore"):
        return np.where(small <= 0.5, ndtri(small), -ndtri(large))


def gdp_mu(p: ArrayLike, q: ArrayLike) -> float:
    """The smallest μ ≥ 0 for which the pair is μ-GDP: ``T(P, Q) ≥ G_μ`` on [0, 1].

    Method (closed form, no bisection needed): T is piecewise linear and ``G_μ(x) = Φ(Φ⁻¹(1 − x)
    − μ)`` is convex, so ``T ≥ G_μ`` on a segment iff it holds at the segment's ends (a convex
    function lies below its chords). At a vertex, ``G_μ(x_k) ≤ y_k`` iff ``μ ≥ Φ⁻¹(1 − x_k) −
    Φ⁻¹(y_k)``, i.e. ``Φ⁻¹(P(S)) − Φ⁻¹(Q(S))`` for the likelihood-ratio-ordered event
    ``S = R_kᶜ``. Hence ``μ = max_k Φ⁻¹(P(S_k)) − Φ⁻¹(Q(S_k))`` over the vertices other than
    (0, 1) and (1, 0) — the same quantity :meth:`dpcheck.GaussianDP.parameter_lower` bounds from
    one event's confidence box. G_μ is symmetric (``G_μ⁻¹ = G_μ``), so the direction does not
    matter. ``inf`` on any support mismatch (``T(0) < 1`` or ``T(x) = 0`` for some x < 1). The
    tail probabilities are summed from the side where they are small (accurate to a few ulps),
    so μ is accurate to about 1e-12 absolute unless a vertex probability is below ~1e-300.

    References
    ----------
    J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", JRSS B 84 (2022), Definition
    2.6 and Theorem 2.7.
    """
    x, y, xbar, ybar = _ordered(*_pair(p, q))
    inner = slice(1, -1)  # R_k neither empty nor everything
    with np.errstate(invalid="ignore"):
        mus = _ndtri_of(xbar[inner], x[inner]) - _ndtri_of(y[inner], ybar[inner])
    mus = mus[~np.isnan(mus)]  # P(S) = Q(S) ∈ {0, 1}: no constraint
    return max(0.0, float(mus.max())) if mus.size else 0.0
