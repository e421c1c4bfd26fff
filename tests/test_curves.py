"""Curve claims (issue 29): μ-GDP, f-DP, ρ-zCDP, (α, ε)-RDP and δ(ε) curves, certified against
the whole curve, with their conversions, calibration at the exact curve, power against an
overspent budget, parameter lower bounds and accountants' curves as claims."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, norm

import dpcheck
from dpcheck.curves import bernoulli_renyi, gdp_delta, zcdp_delta


def gaussian(sigma: float):
    def mech(d, size, rng):
        return rng.normal(float(np.sum(d)), sigma, size)
    mech.__name__ = f"gaussian_{sigma:g}"
    return mech


def test_conversions_match_their_closed_forms() -> None:
    # μ-GDP at ε = 0 is the total variation of N(μ, 1) and N(0, 1): Φ(μ/2) − Φ(−μ/2)
    assert gdp_delta(1.0, 0.0) == pytest.approx(norm.cdf(0.5) - norm.cdf(-0.5), abs=1e-12)
    # the zCDP → (ε, δ) conversion is an upper bound on the Gaussian's exact δ(ε)
    for eps in (0.0, 0.5, 1.0, 2.0, 4.0):
        assert gdp_delta(1.0, eps) <= zcdp_delta(0.5, eps) + 1e-12
    assert zcdp_delta(0.5, 3.0) < zcdp_delta(0.5, 1.0) <= 1.0
    p, q, a = 0.5, 0.2, 2.0
    direct = np.log(p**a * q**(1 - a) + (1 - p)**a * (1 - q)**(1 - a)) / (a - 1)
    assert bernoulli_renyi(p, q, a) == pytest.approx(direct, rel=1e-12)
    assert np.isfinite(bernoulli_renyi(0.9, 1e-9, 500.0))  # log space: no overflow


@pytest.mark.parametrize("claim", [dpcheck.GaussianDP(1.0), dpcheck.ZCDP(0.5),
                                   dpcheck.RenyiDP(2.0, 1.0)])
def test_no_false_alarm_above_alpha_at_the_exact_curve(claim) -> None:
    """The Gaussian with σ = Δ = 1 is exactly 1-GDP, 0.5-zCDP and (2, 1)-RDP: over 60 seeds
    the false-alarm count at α = 0.05 is not significantly above 5 % (one-sided binomial test
    at 1e-3; the calibration benchmark runs 1,000 seeds)."""
    mech, seeds, alpha = gaussian(1.0), 60, 0.05
    alarms = sum(dpcheck.audit(mech, [1.0], [0.0], claim, samples=20_000, seed=s, alpha=alpha,
                               float_features=False).violation for s in range(seeds))
    assert binom.sf(alarms - 1, seeds, alpha) > 1e-3, alarms


def test_an_overspent_gaussian_is_refuted_and_mu_is_bounded_tightly() -> None:
    """σ at 0.8 of what 0.5-zCDP needs (true ρ = 0.78) is refuted at 10⁶ samples on 4 or more
    of 5 seeds; at the exact μ = 1 the μ lower bound reaches ≥ 0.9 μ (and never exceeds μ)."""
    over = gaussian(0.8)
    refuted = sum(dpcheck.audit(over, [1.0], [0.0], dpcheck.ZCDP(0.5), samples=1_000_000,
                                seed=s, float_features=False).violation for s in range(5))
    assert refuted >= 4
    r = dpcheck.audit(gaussian(1.0), [1.0], [0.0], dpcheck.GaussianDP(1.0), samples=1_000_000,
                      seed=0, float_features=False)
    assert not r.violation and 0.9 <= r.parameter_lower["mu"] <= 1.0
    assert "mu >= " in r.summary() and "curve" in r.to_dict()


def test_accountants_state_the_claim() -> None:
    """dp-accounting's PLD of a Gaussian (noise multiplier 1) is the exact 1-GDP profile; the
    mechanism passes against it, a 0.6σ one is refuted. OpenDP's zCDP measurement gives ρ."""
    import dp_accounting

    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1.0))
    curve = dpcheck.from_accountant(acc)
    assert isinstance(curve, dpcheck.PrivacyCurve)
    assert curve.delta_of_epsilon(np.array([1.0]))[0] == pytest.approx(gdp_delta(1.0, 1.0),
                                                                       abs=1e-4)
    ok = dpcheck.audit(gaussian(1.0), [1.0], [0.0], curve, samples=200_000, seed=0,
                       float_features=False)
    bad = dpcheck.audit(gaussian(0.6), [1.0], [0.0], curve, samples=200_000, seed=0,
                        float_features=False)
    assert not ok.violation and bad.violation and bad.curve["margin"] > 0

    import opendp.prelude as dp

    dp.enable_features("contrib")
    meas = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                              scale=1.0)
    assert dpcheck.from_accountant(meas) == dpcheck.ZCDP(0.5)


def test_trade_off_claims_and_bad_input() -> None:
    f = dpcheck.TradeOff(lambda x: max(0.0, 1.0 - 2.0 * x), name="linear")
    r = dpcheck.audit(gaussian(0.3), [1.0], [0.0], f, samples=100_000, seed=0,
                      float_features=False)
    assert r.violation and r.claim.describe() == "linear-DP"
    with pytest.raises(dpcheck.InvalidArgument, match=r"^mu=-1.0 must be finite and > 0"):
        dpcheck.GaussianDP(-1.0)
    with pytest.raises(dpcheck.InvalidArgument, match=r"^alpha=1.0 must be an order in \(1, "):
        dpcheck.RenyiDP(1.0, 1.0)
    with pytest.raises(dpcheck.InvalidArgument, match="must be a trade-off function"):
        dpcheck.TradeOff(lambda x: 1.0)
    with pytest.raises(dpcheck.InvalidArgument, match="one delta in"):
        dpcheck.PrivacyCurve(lambda e: np.full(np.shape(e), 2.0))
    # a function that raises or returns a string (it escaped as ZeroDivisionError, ValueError)
    with pytest.raises(dpcheck.InvalidArgument, match=r"f raised ZeroDivisionError"):
        dpcheck.TradeOff(lambda x: 1.0 / x)
    with pytest.raises(dpcheck.InvalidArgument, match=r"it raised ValueError"):
        dpcheck.PrivacyCurve(lambda e: "small")


@pytest.mark.parametrize("make, message", [
    # e^ε overflowed inside the audit (a raw OverflowError) beyond ε ≈ 709
    (lambda: dpcheck.GaussianDP(800), r"^mu=800 must be <= 700"),
    (lambda: dpcheck.RenyiDP(2, 800), r"^epsilon=800 must be <= 700"),
    (lambda: dpcheck.ZCDP(1e6), r"^rho=1000000.0 must be <= 245000"),
    (lambda: dpcheck.PureDP(800), r"^epsilon=800 must be <= 700"),
    # an order of 1e308 gave "no violation" with p = 1e-300
    (lambda: dpcheck.RenyiDP(1e308, 1.0), r"^alpha=1e\+308 must be an order in \(1, 10000\]"),
    # the ε at which events are selected was never checked: NaN passed a false claim
    (lambda: dpcheck.TradeOff(lambda x: max(0.0, 1 - x - 0.2), epsilon=float("nan")),
     r"^epsilon=nan must not be NaN"),
    (lambda: dpcheck.PrivacyCurve(lambda e: np.zeros_like(e), epsilon=-1.0),
     r"^epsilon=-1.0 must be finite and > 0")])
def test_claims_outside_what_can_be_computed_are_refused(make, message) -> None:
    with pytest.raises(dpcheck.InvalidArgument, match=message):
        make()


def test_a_curve_with_a_nan_is_refused_not_silently_passed() -> None:
    """A δ(ε) curve returning NaN beyond ε = 6 made every margin NaN and the audit pass a
    curve that the same data refutes with δ ≡ 0 (the construction only probes ε ∈ {0, 1, 5})."""
    curve = dpcheck.PrivacyCurve(lambda e: np.where(e > 6, np.nan, 0.0), name="holey")
    with pytest.raises(dpcheck.InvalidArgument, match=r"must return one finite delta per "
                                                      r"epsilon \(at epsilon=6\.02\)"):
        dpcheck.audit(gaussian(0.25), [1.0], [0.0], curve, samples=20_000, seed=0,
                      float_features=False)


def test_a_passing_curve_claim_reports_its_curve_not_a_pure_bound() -> None:
    """1-GDP of the exactly 1-GDP Gaussian holds: the summary marks ε_lower as the pure-DP
    bound it is (it exceeds μ), the witness is a box with evidence (not an empty support box
    at the corner (0, 0)), and μ's lower bound stays below the truth."""
    r = dpcheck.audit(gaussian(1.0), [1.0], [0.0], dpcheck.GaussianDP(1.0), samples=100_000,
                      seed=0, float_features=False)
    assert not r.violation and r.epsilon_lower > 1.0
    assert "(pure DP, delta = 0" in r.summary()
    assert r.witness.bound.p_low > 0 and r.curve["margin"] < 0
    assert 0.9 < r.curve["parameter_lower"]["mu"] <= 1.0
    assert "inside the claimed curve; mu >= " in r.summary()


pytest_plugins = ["pytester"]


def test_curve_claims_in_the_pytest_plugin_and_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_curve='''
import numpy as np
import dpcheck

def gauss(d, size, rng):
    return rng.normal(float(np.sum(d)), 0.5, size)

def test_gdp(dp_audit):
    dp_audit(gauss, [1.0], [0.0], dpcheck.GaussianDP(1.0), samples=100_000,
             float_features=False)

def test_gdp_holds(dp_audit):
    dp_audit(gauss, [1.0], [0.0], dpcheck.GaussianDP(2.5), samples=100_000,
             float_features=False)
''')
    result = pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out")
    result.assert_outcomes(failed=1, passed=1)  # σ = 0.5 is 2-GDP: 1-GDP is refuted
    from dpcheck.report import load_run

    doc = load_run(pytester.path / "out" / "latest")
    refuted, holds = sorted(doc["records"], key=lambda r: r["nodeid"])
    assert refuted["verdict"] == "violation" and refuted["result"]["claim"]["kind"] == "gdp"
    assert refuted["result"]["curve"]["parameter_lower"]["mu"] > 1.0
    md = (pytester.path / "out" / "latest" / "audit.md").read_text()
    assert "1-GDP" in md
    # judged by the curve, not by a pure-DP ε_lower against the curve's knee (a passing 2.5-GDP
    # record read "ε lower bound 2.9 (claimed ε = 2.5; ε_lower/ε = 1.2)")
    assert "inside the claimed curve; mu ≥ " in md and "outside the claimed curve" in md
    assert "claimed ε = 2.5" not in md and "(δ = 0; not the curve claim's parameter)" in md
    result.stdout.fnmatch_lines(["*gauss: 1-GDP: margin * outside the claimed curve (refutes "
                                 "it); mu ≥ *"])
    # no ε_lower / ε bars for curve records, and no (ε, δ) privacy-region figure
    figures = {p.name for p in (pytester.path / "out" / "latest" / "figures").iterdir()}
    assert not any(name.startswith(("epsilon", "region")) for name in figures), figures


def test_dp_sgd_steps_against_their_accountant() -> None:
    """A DP-SGD-style release (Poisson-sampled clipped gradient sums with Gaussian noise,
    T = 3 steps) audited against dp-accounting's PLD curve for the configuration: the correct
    mechanism passes; a wrong noise multiplier (0.6 for the accounted 1.0) and the replace-one
    neighbour convention (one example moves the sum by 2·clip; the accountant assumes
    add/remove) are refuted."""
    import dp_accounting

    from algorithms.mechanisms.dpsgd import NoisyGradientSteps

    q, steps, sigma = 0.2, 3, 1.0
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps))
    claim = dpcheck.from_accountant(acc, name="PLD")
    cases = [(NoisyGradientSteps(sigma, q, steps), [1.0], [], False),
             (NoisyGradientSteps(0.6, q, steps), [1.0], [], True),
             (NoisyGradientSteps(sigma, q, steps), [1.0], [-1.0], True)]
    for mech, d, d_prime, refuted in cases:
        r = dpcheck.audit(mech, d, d_prime, claim, samples=300_000, seed=0)
        assert r.violation == refuted, (mech, d_prime, r.curve)


def test_curve_figures_from_the_result_and_in_the_report(tmp_path) -> None:
    from dpcheck.report import write_run
    from dpcheck.report.figures import build_figures

    r = dpcheck.audit(gaussian(0.8), [1.0], [0.0], dpcheck.ZCDP(0.5), samples=100_000, seed=0,
                      float_features=False)
    fig = r.plot()
    assert fig.axes and fig.axes[0].get_xlabel() == "order α"
    with pytest.raises(dpcheck.InvalidArgument, match="plot\\(\\) draws curve claims"):
        dpcheck.audit(gaussian(1.0), [1.0], [0.0], dpcheck.PureDP(1.0), samples=10_000,
                      seed=0).plot()
    rec = {"nodeid": "t.py::test_z", "call": 1, "type": "audit", "paper": None, "ref": None,
           "kind": "privacy", "expect": "holds", "alpha": 0.05, "verdict": "violation",
           "replay": "pytest t.py", "result": r.to_dict()}
    doc = {"schema_version": 2, "run_id": "curves", "created": "2026-01-01T00:00:00Z",
           "root_seed": 0, "alpha_family": 0.05, "n_claim_tests": 1, "alpha_per_test": 0.05,
           "scale": 1.0, "command": "pytest", "environment": {},
           "tests": [{"nodeid": "t.py::test_z", "outcome": "failed"}], "records": [rec],
           "holm": [], "catalog": None, "summary": {"tests": 1}}
    names = [f.name for f in build_figures(doc)]
    assert "curve-01.png" in names
    run = write_run(doc, directory=tmp_path)
    assert (run / "figures" / "curve-01.png").is_file()
    assert "0.5-zCDP" in (run / "audit.html").read_text()


def test_zcdp_bound_includes_the_kl_limit_at_order_one():
    """Binary randomized response: D_α/α peaks as α ↓ 1 (at the KL divergence), so the
    certified ρ of the exact box equals the exact ρ only if order 1 is among the orders
    (from 1.01 on it was 0.998 of it)."""
    import math

    import numpy as np

    from dpcheck.curves import ORDERS, ZCDP, bernoulli_renyi
    from dpcheck.exact_curves import zcdp_rho

    p = math.exp(1.0) / (1 + math.exp(1.0))
    exact = zcdp_rho(np.array([p, 1 - p]), np.array([1 - p, p]))
    assert ZCDP(1.0).parameter_lower(p, 1 - p)["rho"] == pytest.approx(exact, rel=1e-9)
    without = float(np.max(np.asarray(bernoulli_renyi(p, 1 - p, ORDERS)) / ORDERS))
    assert without < 0.999 * exact  # the mutant that leaves order 1 out
    assert ZCDP(0.999 * exact).margin(p, 1 - p)[0] > 0  # refuted at order 1
    assert ZCDP(0.999 * exact).margin(p, 1 - p)[1] == 1.0
