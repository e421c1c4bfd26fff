"""Reference values for the exact statistics, computed independently of dpcheck.

Clopper–Pearson bounds are checked against statsmodels (``method="beta"``), scipy's
``binomtest(...).proportion_ci(method="exact")`` and a third, independent construction: root
finding on the binomial tail (``binom.sf(k-1, n, p) = a`` defines the lower bound), which does not
use the beta-quantile identity at all.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom, binomtest
from statsmodels.stats.proportion import proportion_confint

from dpcheck import stats
from dpcheck.events.projection import wilson_lower, wilson_upper
from dpcheck.errors import InvalidArgument

CASES = [(0, 10), (1, 10), (5, 10), (10, 10), (7, 20), (0, 1), (1, 1), (3, 1000),
         (999, 1000), (12345, 100000), (0, 1_000_000), (1_000_000, 1_000_000)]


def tail_root_lower(k: int, n: int, a: float) -> float:
    """Lower bound by root finding on P[X ≥ k; p] = a (independent of the beta identity)."""
    if k == 0:
        return 0.0
    return brentq(lambda p: binom.sf(k - 1, n, p) - a, 0.0, 1.0, xtol=1e-15, rtol=1e-13)


def tail_root_upper(k: int, n: int, a: float) -> float:
    """Upper bound by root finding on P[X ≤ k; p] = a."""
    if k == n:
        return 1.0
    return brentq(lambda p: binom.cdf(k, n, p) - a, 0.0, 1.0, xtol=1e-15, rtol=1e-13)


@pytest.mark.parametrize("k, n", CASES)
@pytest.mark.parametrize("alpha", [0.05, 0.01, 1e-6])
def test_clopper_pearson_matches_statsmodels_scipy_and_tail_roots(k, n, alpha):
    lo, hi = stats.clopper_pearson(k, n, alpha)
    sm_lo, sm_hi = proportion_confint(k, n, alpha, method="beta")
    ci = binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    assert lo == pytest.approx(sm_lo, rel=1e-9, abs=1e-15)
    assert hi == pytest.approx(sm_hi, rel=1e-9, abs=1e-15)
    # scipy's proportion_ci finds the bounds by root finding with a loose tolerance: at
    # (k, n, α) = (1, 10, 1e-6) it is off by 2e-6 relative from the closed form
    # 1 - (1 - a)^(1/n), which dpcheck and statsmodels both reproduce to 1e-15.
    assert lo == pytest.approx(ci.low, rel=1e-5, abs=1e-15)
    assert hi == pytest.approx(ci.high, rel=1e-5, abs=1e-15)
    assert lo == pytest.approx(tail_root_lower(k, n, alpha / 2), rel=1e-7, abs=1e-13)
    assert hi == pytest.approx(tail_root_upper(k, n, alpha / 2), rel=1e-7, abs=1e-13)


def test_closed_forms_at_the_boundary():
    # k = 1: lower = 1 - (1 - a)^(1/n), exactly
    assert stats.cp_lower(1, 10, 5e-7) == pytest.approx(-math.expm1(math.log1p(-5e-7) / 10),
                                                        rel=1e-13)
    # k = 0: upper = 1 - a^(1/n); k = n: lower = a^(1/n)  (a = one-sided level)
    n, a = 1_000_000, 0.05 / 6
    assert stats.cp_upper(0, n, a) == pytest.approx(-math.expm1(math.log(a) / n), rel=1e-12)
    assert stats.cp_lower(n, n, a) == pytest.approx(math.exp(math.log(a) / n), rel=1e-12)
    # tiny levels keep full precision (1 - alpha would round to 1.0)
    assert stats.cp_upper(0, n, 1e-200) == pytest.approx(-math.expm1(math.log(1e-200) / n))


def test_vectorised_bounds_match_scalar_ones():
    k = np.array([0, 3, 50, 100])
    lo = stats.cp_lower(k, 100, 0.01)
    assert lo.shape == (4,)
    for ki, li in zip(k, lo):
        assert li == stats.cp_lower(int(ki), 100, 0.01)


def test_one_sided_alternatives():
    lo, hi = stats.clopper_pearson(5, 10, 0.05, alternative="greater")
    assert hi == 1.0 and lo == pytest.approx(stats.clopper_pearson(5, 10, 0.10)[0])
    lo, hi = stats.clopper_pearson(5, 10, 0.05, alternative="less")
    assert lo == 0.0 and hi == pytest.approx(stats.clopper_pearson(5, 10, 0.10)[1])


@pytest.mark.parametrize("k_p, k_q, n, alpha, delta", [
    (500_000, 184_000, 900_000, 0.05, 0.0),
    (900, 0, 900_000, 0.05 / 3, 1e-4),
    (900_000, 0, 900_000, 0.05 / 3, 0.0),
    (40, 30, 1000, 0.05, 0.0),
])
def test_epsilon_and_delta_bounds_against_independent_computation(k_p, k_q, n, alpha, delta):
    p_lo = tail_root_lower(k_p, n, alpha / 2)
    q_hi = tail_root_upper(k_q, n, alpha / 2)
    expected = max(0.0, math.log(p_lo - delta) - math.log(q_hi)) if p_lo > delta else 0.0
    got = stats.epsilon_lower_bound(k_p, n, k_q, n, alpha=alpha, delta=delta)
    assert got == pytest.approx(expected, rel=1e-7, abs=1e-9)
    got_delta = stats.delta_lower_bound(k_p, n, k_q, n, alpha=alpha, epsilon=1.0)
    assert got_delta == pytest.approx(max(0.0, p_lo - math.e * q_hi), rel=1e-7, abs=1e-12)


def test_support_mismatch_ceiling():
    """Perfect separation with 9e5 samples per side and α/3 reaches ln(n / ln(6/α))."""
    n, alpha = 900_000, 0.05 / 3
    got = stats.epsilon_lower_bound(n, n, 0, n, alpha=alpha)
    assert got == pytest.approx(math.log(n / math.log(2 / alpha)), abs=1e-4)
    assert got > 12.1


def test_p_value_is_the_level_at_which_the_bound_crosses_the_claim():
    k_p, k_q, n, eps = 520_000, 180_000, 900_000, 1.0
    p = stats.violation_p_value(k_p, n, k_q, n, epsilon=eps)
    assert 0 < p < 1
    # at level p (slightly above) the bound exceeds eps, slightly below it does not
    assert stats.epsilon_lower_bound(k_p, n, k_q, n, alpha=p * 1.001) > eps
    assert stats.epsilon_lower_bound(k_p, n, k_q, n, alpha=p * 0.999) <= eps
    assert stats.violation_p_value(10, 100, 50, 100, epsilon=eps) == 1.0


def test_p_value_is_valid_at_the_null_boundary():
    """Under H0 with p = e^ε q exactly, P[p-value ≤ λ] ≤ λ (2000 draws, λ ∈ {0.05, 0.2})."""
    rng = np.random.default_rng(7)
    eps, q, n = 1.0, 0.1, 500
    kp = rng.binomial(n, math.e * q, 2000)
    kq = rng.binomial(n, q, 2000)
    pv = np.array([stats.violation_p_value(int(a), n, int(b), n, epsilon=eps)
                   for a, b in zip(kp, kq)])
    for lam in (0.05, 0.2):
        rate = float(np.mean(pv <= lam))
        # the test is conservative (union bound), so even the point estimate stays below λ
        assert rate <= lam, (lam, rate)


def test_event_bound_coverage_by_simulation():
    """P[p ≥ p_low and q ≤ q_high] ≥ 1 − α over 20 000 simulated count pairs."""
    rng = np.random.default_rng(11)
    n, p, q, alpha, reps = 2000, 0.03, 0.011, 0.1, 20_000
    kp, kq = rng.binomial(n, p, reps), rng.binomial(n, q, reps)
    miss = (stats.cp_lower(kp, n, alpha / 2) > p) | (stats.cp_upper(kq, n, alpha / 2) < q)
    upper = stats.cp_upper(int(miss.sum()), reps, 1e-6)
    assert miss.mean() <= alpha and upper <= alpha + 0.01


def test_holm_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.2])
    assert np.allclose(stats.holm(p), multipletests(p, method="holm")[1])
    assert stats.holm([]).size == 0
    with pytest.raises(InvalidArgument, match="p_values"):
        stats.holm([0.5, 1.5])


def test_wilson_bounds_bracket_the_estimate():
    k = np.array([0.0, 5.0, 100.0])
    lo, hi = wilson_lower(k, 100, 0.05), wilson_upper(k, 100, 0.05)
    assert np.all(lo <= k / 100) and np.all(hi >= k / 100)


@pytest.mark.parametrize("k, n, level", [(5, 100, 1e-200), (5, 100, 1e-300), (30, 10**6, 1e-250),
                                         (1, 10, 1e-290)])
def test_lower_bound_below_scipys_range_uses_the_exact_asymptote(k, n, level):
    """scipy's betaincinv returns NaN when the bound is below ~1e-40; the fallback must still
    invert the regularised incomplete beta function to full precision."""
    from scipy.special import betainc

    lo = stats.cp_lower(k, n, level)
    assert 0 < lo < 1e-6
    assert betainc(k, n - k + 1, lo) == pytest.approx(level, rel=1e-8)


def test_a_pass_states_what_it_rules_out() -> None:
    """Issue 27 item 6: a passing audit's power floor: at 10⁶ per side an event of mass 0.5
    with ratio 1.05·e^ε is caught, at 10⁴ it takes far more; a refuted audit carries none; the
    floor's power claim holds when simulated."""
    import dpcheck
    from dpcheck.stats import power_floor

    big = power_floor(900_000, alpha=0.05 / 3, epsilon=1.0, delta=0.0)
    small = power_floor(9_000, alpha=0.05 / 3, epsilon=1.0, delta=0.0)
    assert [f["mass"] for f in big] == [0.5, 0.05, 0.005]
    assert big[0]["x"] < 0.05 and small[0]["x"] > 0.1
    assert all(b["x"] < s["x"] for b, s in zip(big, small))
    # simulate the event at the floor: refuted in >= 90 % of draws
    rng = np.random.default_rng(0)
    f = small[1]
    n, p, q = 9_000, f["mass"], f["mass"] / f["ratio"]
    k_p, k_q = rng.binomial(n, p, 2_000), rng.binomial(n, q, 2_000)
    lo = stats.cp_lower(k_p, n, 0.05 / 6)
    hi = stats.cp_upper(k_q, n, 0.05 / 6)
    assert np.mean(lo > np.e * hi) >= 0.9

    def lap(d, size, rng):
        return rng.laplace(float(np.sum(d)), 1.0, size)

    ok = dpcheck.audit(lap, [1.0], [0.0], dpcheck.PureDP(1.0), samples=50_000, seed=0,
                       float_features=False)
    bad = dpcheck.audit(lap, [1.0], [0.0], dpcheck.PureDP(0.5), samples=50_000, seed=0,
                        float_features=False)
    assert "power_floor" in ok.to_dict() and "rules out" in ok.summary()
    assert "power_floor" not in bad.to_dict()
