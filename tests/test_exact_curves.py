"""Exact curves of two finite distributions (issue 29): Rényi divergences, ρ (zCDP), μ (GDP) and
the trade-off function of :mod:`dpcheck.exact_curves` / :class:`dpcheck.exact.ExactPrivacy`.

Tested against closed forms (k-ary randomized response, Bernoulli pairs, finely discretised
Gaussians, the geometric mechanism), brute force over all events, and the (ε, δ) duality with
the independent :meth:`ExactPrivacy.delta_curve`; hypothesis checks the structural properties
(D_α non-decreasing in α, D_α ≤ D_∞, ρ ≥ D_α/α, pure ε-DP ⇒ ε²/2-zCDP). The same checks are
run against deliberately wrong implementations (mutants) and must fail on each of them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from scipy.special import logsumexp, ndtri

import dpcheck
from dpcheck import exact_curves as xc
from dpcheck.curves import bernoulli_renyi, gdp_delta
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss
from tests.test_exact import pairs


def rr(eps: float, k: int, x: int) -> np.ndarray:
    """k-ary randomized response's pmf on input x."""
    d = math.exp(eps) + k - 1
    return np.array([(math.exp(eps) if j == x else 1.0) / d for j in range(k)])


def rr_renyi(eps: float, k: int, a: np.ndarray) -> np.ndarray:
    """Closed form of D_α(RR(0) ‖ RR(1)): ln((e^{εα} + e^{ε(1−α)} + k − 2)/(e^ε + k − 1))/(α−1),
    KL (e^ε − 1)ε/(e^ε + k − 1) at α = 1 and ε at α = ∞."""
    d = math.exp(eps) + k - 1
    out = []
    for alpha in np.asarray(a, dtype=float):
        t = alpha - 1
        if t == 0:
            out.append((math.exp(eps) - 1) * eps / d)
        elif math.isinf(t):
            out.append(eps)
        elif t < 1:  # the sum minus 1, in expm1's: accurate as α → 1
            out.append(math.log1p((math.exp(eps) * math.expm1(eps * t)
                                   + math.expm1(-eps * t)) / d) / t)
        else:
            terms = [eps * alpha, eps * (1 - alpha)] + ([math.log(k - 2)] if k > 2 else [])
            out.append((float(logsumexp(terms)) - math.log(d)) / t)
    return np.array(out)


def discrete_gaussian(sigma: float, shift: float, h: float, width: float = 20.0) -> tuple:
    """N(0, σ²) and N(shift, σ²) on the lattice hℤ ∩ [−width·σ, width·σ + shift]."""
    xs = np.arange(-width * sigma, width * sigma + shift + h / 2, h)
    lp, lq = -xs**2 / (2 * sigma**2), -(xs - shift) ** 2 / (2 * sigma**2)
    p, q = np.exp(lp - logsumexp(lp)), np.exp(lq - logsumexp(lq))
    return p, q


def geometric(eps: float, center: int) -> np.ndarray:
    """Two-sided geometric P[z] ∝ e^{−ε|z − center|} on [−k, k + 1] (symmetric about 1/2; the
    window holds all but e^{−600} of the mass, and no probability underflows)."""
    k = int(600 / eps)
    z = np.arange(-k, k + 2)
    w = np.exp(-eps * np.abs(z - center))
    return w / w.sum()


def brute_mu(p: np.ndarray, q: np.ndarray) -> float:
    """max over *all* events S of Φ⁻¹(P(S)) − Φ⁻¹(Q(S)) (non-likelihood-ratio events lie above
    the trade-off curve, so the maximum is the exact μ)."""
    best = 0.0
    n = len(p)
    for r in range(1, n):
        for s in itertools.combinations(range(n), r):
            ps, qs = math.fsum(p[list(s)]), math.fsum(q[list(s)])
            if ps in (0.0, 1.0) and ps == qs:
                continue
            with np.errstate(divide="ignore"):
                best = max(best, float(ndtri(ps) - ndtri(qs)))
    return best


# -- hypothesis: structural properties on random pairs ------------------------------------

# random pairs of distributions on up to 7 outputs, zeros (support mismatches) allowed:
# the strategy of tests/test_exact.py


PROPERTY_ORDERS = np.concatenate([[1.0], 1 + np.logspace(-4, 3, 60), [math.inf]])


@settings(deadline=None, max_examples=100)
@given(pairs())
def test_renyi_is_non_decreasing_and_at_most_the_max_divergence(pq: tuple) -> None:
    """D_α is non-decreasing in α (van Erven & Harremoës 2014, Thm 3), D_∞ is the pure ε of the
    direction, every D_α ≤ D_∞, and all are ∞ together on a support mismatch."""
    res = privacy_loss(*pq)
    for way, eps in (("pq", res.epsilon_pq), ("qp", res.epsilon_qp), ("both", res.epsilon)):
        d = res.renyi(PROPERTY_ORDERS, way)
        if math.isinf(eps):
            assert np.all(np.isinf(d))
            continue
        assert np.all(np.diff(d) >= -1e-12 * (1 + d[1:]))
        assert d[-1] == pytest.approx(eps, abs=1e-12)
        assert np.all(d <= eps + 1e-12)


@settings(deadline=None, max_examples=60)
@given(pairs())
def test_rho_bounds_every_order_and_pure_dp_bounds_rho(pq: tuple) -> None:
    """ρ ≥ D_α/α at every order (it is their supremum); pure ε-DP ⇒ ρ ≤ ε²/2 (Bun & Steinke
    2016, Prop. 1.4); holds(ZCDP) agrees with ρ."""
    res = privacy_loss(*pq)
    rho = res.rho()
    ratios = res.renyi(PROPERTY_ORDERS[:-1]) / PROPERTY_ORDERS[:-1]
    assert np.all(ratios <= rho * (1 + 1e-12))
    if math.isfinite(res.epsilon):
        assert rho <= res.epsilon**2 / 2 * (1 + 1e-9) + 1e-15
    if 0 < rho < math.inf:
        assert res.holds(dpcheck.ZCDP(rho)) and not res.holds(dpcheck.ZCDP(rho * 0.999))


@settings(deadline=None, max_examples=100)
@given(pairs())
def test_tradeoff_is_a_trade_off_function_above_g_mu(pq: tuple) -> None:
    """Each direction of T is convex, non-increasing, 0 ≤ T(x) ≤ 1 − x; the two directions are
    inverse functions; T ≥ G_μ at μ = mu() everywhere, and G_μ' for μ' = 0.99 μ is above T
    somewhere (at a vertex)."""
    res = privacy_loss(*pq)
    x = np.linspace(0.0, 1.0, 401)
    for way in ("pq", "qp"):
        t = res.tradeoff(x, way)
        assert np.all((t >= 0) & (t <= 1 - x + 1e-12)) and np.all(np.diff(t) <= 1e-12)
        assert np.all(t[1:-1] <= (t[:-2] + t[2:]) / 2 + 1e-12)  # convex
    vx, vy = xc.tradeoff_vertices(res.p_values, res.q_values)
    inside = (vy > 0) & (vy < 1)
    np.testing.assert_allclose(res.tradeoff(vy[inside], "qp"), vx[inside], atol=1e-9)
    mu = res.mu()
    if math.isinf(mu):
        assert res.tradeoff(0.0) < 1 or np.any(res.tradeoff(x[:-1]) == 0)
        return
    t = res.tradeoff(x)
    if mu > 0:
        assert np.all(t >= dpcheck.GaussianDP(mu).tradeoff(x) - 1e-12)
        assert np.any(vy < dpcheck.GaussianDP(0.99 * mu).tradeoff(vx) - 1e-15)
        assert res.holds(dpcheck.GaussianDP(mu)) and not res.holds(dpcheck.GaussianDP(0.99 * mu))


# -- ExactPrivacy: every claim class, and bad input ------------------------------------------


def test_holds_decides_every_curve_claim_at_the_exact_value() -> None:
    """A finely discretised Gaussian pair (σ = 2, Δ = 1, lattice 0.01) and 4-ary randomized
    response: each claim holds at the exact parameter and fails just below it."""
    rrp = privacy_loss(dict(enumerate(rr(1.0, 4, 0))), dict(enumerate(rr(1.0, 4, 1))))
    p, q = discrete_gaussian(2.0, 1.0, 0.01)
    gauss = privacy_loss(dict(enumerate(p)), dict(enumerate(q)))
    for res in (rrp, gauss):
        mu, rho, d2 = res.mu(), res.rho(), res.renyi(2.0)
        for exact, below in [(dpcheck.GaussianDP(mu), dpcheck.GaussianDP(mu * 0.999)),
                             (dpcheck.ZCDP(rho), dpcheck.ZCDP(rho * 0.999)),
                             (dpcheck.RenyiDP(2.0, d2), dpcheck.RenyiDP(2.0, d2 * 0.999))]:
            assert res.holds(exact) and not res.holds(below), exact
        g = dpcheck.GaussianDP(mu)
        assert res.holds(dpcheck.TradeOff(lambda x, g=g: float(g.tradeoff(x)), name="G"))
        g_over = dpcheck.GaussianDP(mu * 0.99)  # more privacy than the truth
        assert not res.holds(dpcheck.TradeOff(lambda x, g=g_over: float(g.tradeoff(x))))
        assert res.holds(dpcheck.PrivacyCurve(lambda e: res.delta_curve(e)))
        assert not res.holds(dpcheck.PrivacyCurve(lambda e: 0.9 * res.delta_curve(e)))
    # the Gaussian's closed forms: ρ = Δ²/2σ² = 1/8, μ = Δ/σ = 1/2 (Sheppard: μ(1 + h²/24σ²))
    assert gauss.rho() == pytest.approx(0.125, rel=1e-9)
    assert gauss.mu() == pytest.approx(0.5 * (1 + 1e-4 / 96), rel=1e-7)
    assert gauss.holds(dpcheck.PrivacyCurve(lambda e: gdp_delta(0.5 * (1 + 1e-5), e)))
    assert not gauss.holds(dpcheck.PrivacyCurve(lambda e: gdp_delta(0.49, e)))
    # 4-ary RR is ε-DP: ε²/2-zCDP, and (α, min(ε, αε²/2))-RDP
    assert rrp.holds(dpcheck.ZCDP(0.5)) and rrp.holds(dpcheck.RenyiDP(3.0, 1.0))


def test_geometric_pure_epsilon_is_the_max_divergence() -> None:
    for eps in (0.1, 0.7, 2.0):
        res = privacy_loss(dict(enumerate(geometric(eps, 0))), dict(enumerate(geometric(eps, 1))))
        assert res.renyi(math.inf) == pytest.approx(eps, rel=1e-12) == res.epsilon
        assert res.renyi(1.0) == pytest.approx(res.renyi(1 + 1e-10), rel=1e-8)


def test_identical_and_degenerate_pairs() -> None:
    same = privacy_loss({0: 0.25, 1: 0.75}, {0: 0.25, 1: 0.75})
    assert np.all(same.renyi(PROPERTY_ORDERS) == 0.0)
    assert same.rho() == 0.0 and same.mu() == 0.0
    np.testing.assert_allclose(same.tradeoff([0.0, 0.3, 1.0]), [1.0, 0.7, 0.0], atol=1e-15)
    point = privacy_loss({"a": 1.0}, {"a": 1.0})
    assert point.mu() == 0.0 and point.rho() == 0.0 and point.tradeoff(0.5) == 0.5
    apart = privacy_loss({"a": 1.0}, {"b": 1.0})
    assert apart.mu() == apart.rho() == apart.renyi(1.0) == math.inf
    assert apart.tradeoff(0.0) == 0.0


def test_bad_input() -> None:
    res = privacy_loss(dict(enumerate(rr(1.0, 2, 0))), dict(enumerate(rr(1.0, 2, 1))))
    with pytest.raises(InvalidArgument, match=r"^order=0\.5 must be >= 1$"):
        res.renyi(0.5)
    with pytest.raises(InvalidArgument, match=r"^orders\[1\]=nan must be >= 1$"):
        res.renyi([2.0, float("nan")])
    with pytest.raises(InvalidArgument, match=r"^order='x' must be a real number$"):
        res.renyi("x")
    with pytest.raises(InvalidArgument, match=r"^direction='up' must be one of 'both', 'pq', "):
        res.renyi(2.0, "up")
    with pytest.raises(InvalidArgument, match=r"x\[1\]=1\.5\)$"):
        res.tradeoff([0.5, 1.5])
    with pytest.raises(InvalidArgument, match="must be an array of type-I errors"):
        res.tradeoff(["a"])
    with pytest.raises(InvalidArgument, match="claim="):
        res.holds(object())
    with pytest.raises(InvalidArgument, match=r"^p=\[0.5, -0.5\] must be a 1-d array of finite"):
        xc.gdp_mu([0.5, -0.5], [0.5, 0.5])
    with pytest.raises(InvalidArgument, match="same length"):
        xc.zcdp_rho([0.5, 0.5], [1.0])
    with pytest.raises(InvalidArgument, match="positive sum"):
        xc.renyi_divergence([0.0, 0.0], [0.5, 0.5], 2.0)


# -- the implementation under test, and mutants of it ----------------------------------------


@dataclass(frozen=True)
class Impl:
    """The four functions the checks below exercise (the real ones by default)."""

    renyi: Callable[..., Any] = xc.renyi_divergence
    rho: Callable[..., float] = xc.zcdp_rho
    mu: Callable[..., float] = xc.gdp_mu
    tradeoff: Callable[..., Any] = xc.tradeoff


REAL = Impl()
RR_CASES = [(0.5, 2), (1.0, 2), (1.0, 4), (3.0, 3)]
ORDERS = np.array([1.0, 1 + 1e-9, 1 + 1e-4, 1.1, 1.5, 2.0, 3.0, 10.0, 100.0, 1e4, math.inf])
RNG_PAIRS = [(lambda w: (w[0] / w[0].sum(), w[1] / w[1].sum()))(
    np.random.default_rng(seed).uniform(0.01, 1.0, (2, 5)) ** 3) for seed in range(6)]


def check_rr_renyi(impl: Impl) -> None:
    """k-ary randomized response: D_α at 11 orders from 1 (KL) to ∞ equal the closed form."""
    for eps, k in RR_CASES:
        got = impl.renyi(rr(eps, k, 0), rr(eps, k, 1), ORDERS)
        np.testing.assert_allclose(got, rr_renyi(eps, k, ORDERS), rtol=1e-9)


def check_bernoulli_directions(impl: Impl) -> None:
    """An asymmetric Bernoulli pair: each direction is curves.bernoulli_renyi, "both" the max."""
    p, q = np.array([0.3, 0.7]), np.array([0.02, 0.98])
    a = np.array([1.5, 2.0, 5.0, 30.0])
    pq, qp = bernoulli_renyi(0.3, 0.02, a), bernoulli_renyi(0.02, 0.3, a)
    np.testing.assert_allclose(impl.renyi(p, q, a, "pq"), pq, rtol=1e-10)
    np.testing.assert_allclose(impl.renyi(p, q, a, "qp"), qp, rtol=1e-10)
    np.testing.assert_allclose(impl.renyi(p, q, a), np.maximum(pq, qp), rtol=1e-10)
    np.testing.assert_allclose(impl.renyi(q, p, a), np.maximum(pq, qp), rtol=1e-10)
    kl = 0.3 * math.log(0.3 / 0.02) + 0.7 * math.log(0.7 / 0.98)
    assert impl.renyi(p, q, 1.0, "pq") == pytest.approx(kl, rel=1e-12)
    # T(P, Q) through (0, 1), (0.7, 0.02), (1, 0); T(Q, P) its mirror image; "both" the minimum
    x = np.linspace(0.0, 1.0, 201)
    t_pq = np.interp(x, [0.0, 0.7, 1.0], [1.0, 0.02, 0.0])
    t_qp = np.interp(x, [0.0, 0.02, 1.0], [1.0, 0.7, 0.0])
    np.testing.assert_allclose(impl.tradeoff(p, q, x, "pq"), t_pq, atol=1e-12)
    np.testing.assert_allclose(impl.tradeoff(p, q, x, "qp"), t_qp, atol=1e-12)
    np.testing.assert_allclose(impl.tradeoff(p, q, x), np.minimum(t_pq, t_qp), atol=1e-12)


def check_gaussian(impl: Impl) -> None:
    """N(0, 1) vs N(1, 1) on the lattice 0.02ℤ: D_α = α/2 (α ≤ 10), ρ = 1/2 and μ = 1 (up to
    Sheppard's correction of the lattice variance: μ(1 + h²/24))."""
    p, q = discrete_gaussian(1.0, 1.0, 0.02)
    a = np.array([1.0, 1.5, 2.0, 5.0, 10.0])
    np.testing.assert_allclose(impl.renyi(p, q, a), a / 2, rtol=1e-9)
    assert impl.rho(p, q) == pytest.approx(0.5, rel=1e-9)
    assert impl.mu(p, q) == pytest.approx(1.0 + 0.02**2 / 24, rel=1e-6)


def check_mismatch(impl: Impl) -> None:
    """P has mass (0.05) where Q has none: D_α(P‖Q) = ∞ for every α ≥ 1, D_α(Q‖P) finite;
    ρ = μ = ∞."""
    p, q = np.array([0.5, 0.45, 0.05]), np.array([0.5, 0.5, 0.0])
    assert np.all(np.isinf(impl.renyi(p, q, [1.0, 2.0, math.inf], "pq")))
    assert np.all(np.isinf(impl.renyi(p, q, [1.0, 2.0, math.inf])))
    assert np.all(np.isinf(impl.renyi(q, p, [1.0, 2.0, math.inf])))
    assert impl.renyi(p, q, math.inf, "qp") == pytest.approx(math.log(0.5 / 0.45))
    assert impl.rho(p, q) == math.inf and impl.mu(p, q) == math.inf


def check_rr_tradeoff(impl: Impl) -> None:
    """Binary randomized response is the extremal ε-DP pair: T = f_{ε,0} =
    max(0, 1 − e^ε x, e^{−ε}(1 − x)) in both directions, and μ = 2Φ⁻¹(e^ε/(1 + e^ε))."""
    x = np.linspace(0.0, 1.0, 1001)
    for eps in (0.5, 1.0, 3.0):
        f = np.maximum.reduce([np.zeros_like(x), 1 - math.exp(eps) * x, math.exp(-eps) * (1 - x)])
        p, q = rr(eps, 2, 0), rr(eps, 2, 1)
        for way in ("pq", "qp", "both"):
            np.testing.assert_allclose(impl.tradeoff(p, q, x, way), f, atol=1e-12)
        assert impl.mu(p, q) == pytest.approx(2 * ndtri(math.exp(eps) / (1 + math.exp(eps))),
                                              rel=1e-12)


def check_mu_brute_force(impl: Impl) -> None:
    """μ equals the maximum over all 2⁵ events on seeded random pairs and on 4-ary RR."""
    for p, q in [*RNG_PAIRS, (rr(1.0, 4, 0), rr(1.0, 4, 1))]:
        assert impl.mu(p, q) == pytest.approx(brute_mu(p, q), rel=1e-10, abs=1e-12)


def check_rho_is_the_sup(impl: Impl) -> None:
    """On seeded random pairs and binary RR, ρ ≥ D_α/α at 2,000 orders in (1, 10⁴] and at α = 1
    (KL), and ρ equals, to 1e-9 relative, the maximum of D_α/α over 20,001 orders around the
    best of them (a grid fine enough to find the supremum by itself)."""
    a = np.concatenate([[1.0], 1 + np.logspace(-5, 4, 2000)])
    for p, q in RNG_PAIRS + [(rr(1.0, 2, 0), rr(1.0, 2, 1))]:
        ratios = xc.renyi_divergence(p, q, a) / a
        rho = impl.rho(p, q)
        assert rho >= ratios.max() * (1 - 1e-12)
        i = int(np.argmax(ratios))
        fine = np.linspace(a[max(i - 1, 0)], a[min(i + 1, a.size - 1)], 20_001)
        assert rho == pytest.approx(np.max(xc.renyi_divergence(p, q, fine) / fine), rel=1e-9)


def check_duality(impl: Impl) -> None:
    """δ(ε) = max over tests of (1 − e^ε·x − T(x)) (Dong, Roth & Su 2022, Prop. 2.12): for
    ``T(P, Q)`` it is ``H_ε(Q‖P) = Σ max(0, Q − e^ε P)``, for ``T(Q, P)`` ``H_ε(P‖Q)``, and for
    their minimum the symmetric δ(ε) of the independent ``delta_curve``; on seeded random pairs
    (the maximum is over the masses of all events of both sides, which hold all vertices)."""
    for p, q in RNG_PAIRS:
        res = privacy_loss(dict(enumerate(p)), dict(enumerate(q)))
        events = [list(s) for r in range(6) for s in itertools.combinations(range(5), r)]
        xs = np.clip(np.array(sorted({math.fsum(v[e]) for e in events for v in (p, q)})), 0, 1)
        for eps in (0.0, 0.3, 1.0, 2.5):
            for way, want in (("pq", np.maximum(0, q - math.exp(eps) * p).sum()),
                              ("qp", np.maximum(0, p - math.exp(eps) * q).sum()),
                              ("both", res.delta(eps))):
                got = float(np.max(1 - math.exp(eps) * xs - impl.tradeoff(p, q, xs, way)))
                assert got == pytest.approx(want, abs=1e-12), (way, eps)


def check_pure_dp_bounds(impl: Impl) -> None:
    """Pure ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4) and D_α ≤ min(ε, αε²/2): on
    the two-sided geometric mechanism with ε ∈ {0.1, 1} (D_∞ = ε exactly)."""
    a = np.array([1.0, 1.5, 2.0, 10.0, math.inf])
    for eps in (0.1, 1.0):
        p, q = geometric(eps, 0), geometric(eps, 1)
        d = impl.renyi(p, q, a)
        assert d[-1] == pytest.approx(eps, rel=1e-12)
        assert np.all(d[:-1] <= np.minimum(eps, a[:-1] * eps**2 / 2) * (1 + 1e-12))
        assert impl.rho(p, q) <= eps**2 / 2


CHECKS = [check_rr_renyi, check_bernoulli_directions, check_gaussian, check_mismatch,
          check_rr_tradeoff, check_mu_brute_force, check_rho_is_the_sup, check_duality,
          check_pure_dp_bounds]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_exact_curves_meet_their_closed_forms(check: Callable[[Impl], None]) -> None:
    check(REAL)


def _normaliser_alpha(p: Any, q: Any, orders: Any, direction: str = "both") -> Any:
    a = np.asarray(orders, dtype=float)
    d = xc.renyi_divergence(p, q, orders, direction)
    with np.errstate(invalid="ignore"):
        return np.where((a > 1) & np.isfinite(a), d * (a - 1) / a, d)  # ln Σ … / α


def _one_direction(p: Any, q: Any, orders: Any, direction: str = "both") -> Any:
    return xc.renyi_divergence(p, q, orders, "pq" if direction == "both" else direction)


def _common_support(p: Any, q: Any, orders: Any, direction: str = "both") -> Any:
    p, q = np.asarray(p, float), np.asarray(q, float)
    both = (p > 0) & (q > 0)
    return xc.renyi_divergence(p[both], q[both], orders, direction)


def _kl_wrong_way(p: Any, q: Any, orders: Any, direction: str = "both") -> Any:
    a = np.asarray(orders, dtype=float)
    d = xc.renyi_divergence(p, q, orders, direction)
    rev = {"pq": "qp", "qp": "pq", "both": "both"}[direction]
    return np.where(a == 1, xc.renyi_divergence(p, q, 1.0, rev), d)


def _rho_integer_orders(p: Any, q: Any) -> float:
    a = np.arange(2.0, 257.0)
    return float(np.max(xc.renyi_divergence(p, q, a) / a))


def _tradeoff_steps(p: Any, q: Any, x: Any, direction: str = "both") -> Any:
    """Deterministic tests only: no randomisation between the vertices (a step function)."""
    vx, vy = xc.tradeoff_vertices(p, q)
    xs = np.asarray(x, dtype=float)

    def steps(px: np.ndarray, py: np.ndarray) -> np.ndarray:
        return py[np.searchsorted(px, xs, side="right") - 1]

    ux, uy = vy[::-1], vx[::-1]
    keep = np.append(ux[1:] != ux[:-1], True)
    parts = {"pq": steps(vx, vy), "qp": steps(ux[keep], uy[keep])}
    return parts[direction] if direction != "both" else np.minimum(parts["pq"], parts["qp"])


def _mu_by_order(p: Any, q: Any, order: np.ndarray) -> float:
    p, q = np.asarray(p, float)[order], np.asarray(q, float)[order]
    ps, qs = np.cumsum(p)[:-1], np.cumsum(q)[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mus = ndtri(ps) - ndtri(qs)
    return max(0.0, float(np.nanmax(mus))) if mus.size else 0.0


def _mu_first_event(p: Any, q: Any) -> float:
    """Only the single output of largest P/Q (and of largest Q/P) as events."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        i, j = np.nanargmax(np.log(p) - np.log(q)), np.nanargmax(np.log(q) - np.log(p))
        return max(0.0, float(ndtri(p[i]) - ndtri(q[i])), float(ndtri(q[j]) - ndtri(p[j])))


MUTANTS: dict[str, Impl] = {
    "rho_times_2": replace(REAL, rho=lambda p, q: 2 * xc.zcdp_rho(p, q)),
    "rho_halved": replace(REAL, rho=lambda p, q: xc.zcdp_rho(p, q) / 2),
    "rho_on_integer_orders_only": replace(REAL, rho=_rho_integer_orders),
    "renyi_normaliser_alpha_not_alpha_minus_1": replace(REAL, renyi=_normaliser_alpha),
    "renyi_one_direction_only": replace(REAL, renyi=_one_direction),
    "renyi_ignores_support_mismatch": replace(REAL, renyi=_common_support),
    "kl_in_the_wrong_direction": replace(REAL, renyi=_kl_wrong_way),
    "tradeoff_without_randomised_tests": replace(REAL, tradeoff=_tradeoff_steps),
    "tradeoff_one_direction_only": replace(
        REAL, tradeoff=lambda p, q, x, direction="both": xc.tradeoff(
            p, q, x, "pq" if direction == "both" else direction)),
    "mu_events_ordered_by_p_not_the_ratio": replace(
        REAL, mu=lambda p, q: _mu_by_order(p, q, np.argsort(-np.asarray(p), kind="stable"))),
    "mu_from_the_single_most_likely_output": replace(REAL, mu=_mu_first_event),
}


def failing_checks(impl: Impl) -> list[str]:
    failed = []
    for check in CHECKS:
        try:
            check(impl)
        except AssertionError:
            failed.append(check.__name__)
    return failed


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mutants_fail_the_checks(name: str) -> None:
    """Each deliberately wrong implementation fails at least one of the checks above."""
    assert failing_checks(MUTANTS[name]), f"mutant {name} passes every check"


def test_which_checks_catch_which_mutant() -> None:
    """The catch table (documented in the report of issue 29)."""
    table = {name: failing_checks(impl) for name, impl in MUTANTS.items()}
    print(table)
    assert all(table.values())
