"""Float holes that show only jointly with the binade (issue 30 item 4, scalar outputs):
:func:`dpcheck.features.float_bits.joint_hole` and the ``exponent_lsb(output)`` feature.

Two mechanisms whose lsb marginal (the default ``lsb(output)`` feature) does not show the hole:

* ``swapped_grids`` (constructed): ``u = 2**U``, ``U ~ Uniform(0, 2)`` (P[[1, 2)] = P[[2, 4)]
  = 1/2), rounded onto grid 2⁻³⁰ in [1, 2) and 2⁻⁴⁰ in [2, 4) under D, the other way round
  under D′. The value law is the same (real-valued: 0-DP) and so is the lsb law (a mixture
  ½·geom(−30) + ½·geom(−40) on both sides, up to the top-bit tails of mass ~2⁻³⁰); the pair
  (binade, lsb) = ([1, 2), −40) has mass 1/4 under D′ and 0 under D: true ε = ∞.
* textbook ``v + rng.laplace(0, 10)`` at v = 3 vs 2 (realistic): outputs in [0.5, 1) come from
  noise in [−2.5, −2) (grid 2⁻⁵¹) under v = 3, from noise in [−1.5, −1) (grid 2⁻⁵²) under
  v = 2, while lsb −52 is common under both (binade [1, 2)); the marginal only sees the
  finite ratio of P[lsb = −52] (about 2, ε ≈ 0.67), the joint cell a ratio of ∞.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpcheck
import dpcheck.features.float_bits as float_bits
from algorithms.mechanisms.float_noise import NaiveGaussian, SnappedLaplace, TextbookLaplace
from algorithms.mechanisms.primitives import GeometricSum
from dpcheck import PureDP, audit
from dpcheck.features.featurizer import Featurizer, describe_feature
from dpcheck.features.float_bits import JOINT, exponent_lsb, joint_hole, lsb

N = 100_000
JOINT_NAME = JOINT[0]


def swapped_grids(data, size, rng):
    """See the module docstring: D = [1] rounds [1, 2) coarse and [2, 4) fine, D′ = [0] the
    other way round."""
    u = 2.0 ** rng.uniform(0.0, 2.0, size)
    fine, coarse = 2.0**-40, 2.0**-30
    g_lo, g_hi = (coarse, fine) if data[0] == 1 else (fine, coarse)
    g = np.where(u < 2.0, g_lo, g_hi)
    return np.round(u / g) * g


def _names(r):
    return [f["name"] for f in r.features["features"]]


@pytest.fixture
def marginal_only(monkeypatch):
    """The audit as before the joint feature: the rule never fires."""
    monkeypatch.setattr(float_bits, "joint_hole", lambda *a: False)


CASES = [
    pytest.param(swapped_grids, [1], [0], PureDP(1.0), id="swapped-grids"),
    # Laplace(10) is 0.1-DP on reals; a claim of 1 is one the lsb marginal does not refute
    pytest.param(TextbookLaplace(10.0), [3.0], [2.0], PureDP(1.0), id="laplace-s10-3v2"),
]


@pytest.mark.parametrize("mech, d, d_prime, claim", CASES)
def test_joint_hole_refuted_by_default(mech, d, d_prime, claim):
    """Measured at 10⁵ per side, seed 0: swapped grids 7.30, Laplace 3 vs 2 5.80 (10⁶: 11.5
    and 6.99); the witness is on the joint code."""
    r = audit(mech, d, d_prime, claim, samples=N, seed=0)
    print(f"{mech}: epsilon_lower={r.epsilon_lower:.3f} witness={r.witness.describe()[:80]}")
    assert JOINT_NAME in _names(r)
    assert r.violation and r.epsilon_lower > 5
    assert r.witness.event.feature_name == JOINT_NAME and r.float_hole
    assert "(binade 2^" in r.witness.describe()  # cells in words, not codes


@pytest.mark.parametrize("mech, d, d_prime, claim", CASES)
def test_the_lsb_marginal_alone_misses_it(mech, d, d_prime, claim, marginal_only):
    """Measured at 10⁵ per side, seed 0: swapped grids 0.0 (10⁶: 0.68), Laplace 3 vs 2 0.64
    (10⁶: 0.67), both below the claim of 1."""
    r = audit(mech, d, d_prime, claim, samples=N, seed=0)
    print(f"{mech}: epsilon_lower={r.epsilon_lower:.3f}")
    assert JOINT_NAME not in _names(r) and "lsb(output)" in _names(r)
    assert not r.violation


def test_values_only_audit_is_unchanged(marginal_only):
    """``float_features=False`` never builds float-bit features: same result with and without
    the joint rule (checked against the rule forced on)."""
    off = audit(swapped_grids, [1], [0], PureDP(1.0), samples=20_000, seed=3,
                float_features=False)
    float_bits.joint_hole = lambda *a: True  # restored by the fixture's monkeypatch
    forced = audit(swapped_grids, [1], [0], PureDP(1.0), samples=20_000, seed=3,
                   float_features=False)
    assert _names(off) == _names(forced) == ["output"]
    assert off.epsilon_lower == forced.epsilon_lower and off.p_value == forced.p_value


def geometric_as_float(data, size, rng):
    """The two-sided geometric mechanism (ε = 1) released as float64 values."""
    return GeometricSum(1.0).sample(data, size, rng).astype(np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mech, d, d_prime", [
    pytest.param(TextbookLaplace(1.0), [1.0], [0.0], id="laplace-s1-1v0"),
    pytest.param(TextbookLaplace(10.0), [1.0], [0.0], id="laplace-s10-1v0"),
    pytest.param(TextbookLaplace(10.0), [1.5], [0.5], id="laplace-s10-1.5v0.5"),
    pytest.param(NaiveGaussian(5.0), [1.0], [0.0], id="gauss-s5-1v0"),
    pytest.param(SnappedLaplace(1.0), [1], [0], id="snapped"),
    pytest.param(geometric_as_float, [1], [0], id="geometric-float"),
])
def test_rule_does_not_fire_on_textbook_mechanisms(mech, d, d_prime, seed):
    """The textbook ``v + noise`` at v = 1 vs 0 has its hole in the lsb marginal (rule 1), the
    private ones have none: at 2·10⁵ per side the joint feature is not added, so their audits
    (tests/test_float_features.py, the golden run) are unchanged."""
    f = getattr(mech, "sample", mech)
    a = f(d, 200_000, rng=np.random.default_rng(seed))
    b = f(d_prime, 200_000, rng=np.random.default_rng(seed + 100))
    assert not joint_hole(a, b)
    assert joint_hole(*(swapped_grids(x, 2_000, np.random.default_rng(seed)) for x in ([1], [0])))


def test_rule_one_the_marginal_hole_comes_first():
    """A hole in the lsb marginal (one side has lsb values the other never has) blocks the
    joint feature even when a joint cell is one-sided too; without it, the cell fires."""
    rng = np.random.default_rng(4)
    a = swapped_grids([1], 20_000, rng)
    b = swapped_grids([0], 20_000, rng)
    assert joint_hole(a, b) and joint_hole(b, a)
    extra = np.round(2.0 ** rng.uniform(0.0, 2.0, 200) / 2.0**-45) * 2.0**-45  # lsb ≤ −45
    assert not joint_hole(np.concatenate([a, extra[:100]]), b)
    assert not joint_hole(a[:20], b[:20])  # fewer than MIN_COUNT outputs: never


def test_exponent_lsb_code():
    x = np.array([1.0, 1.5, 3.0, -3.0, 0.75, 2.0**-1074])
    code = exponent_lsb(x)
    assert code[2] == code[3]  # the sign is left out
    assert np.array_equal(code % 8192 - 4096, lsb(x))
    assert np.array_equal(code // 8192, [1023, 1023, 1024, 1024, 1022, 0])


def test_featurizer_adds_the_joint_feature_and_pickles():
    rng = np.random.default_rng(5)
    out_d, out_dp = swapped_grids([1], 20_000, rng), swapped_grids([0], 20_000, rng)
    f = Featurizer.build(out_d, None, out_dp, float_bits=True)
    assert [x.name for x in f.features] == ["output", "lsb(output)", JOINT_NAME]
    assert not f.features[2].ordered
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(out_d)[2], exponent_lsb(out_d))
    assert "binary exponent" in describe_feature(JOINT_NAME)
    assert JOINT_NAME in float_bits.COLUMNS
    assert [x.name for x in Featurizer.build(out_d, None, None).features] == [
        "output", "lsb(output)"]  # no outputs of D′: no joint rule


R = 200


@pytest.mark.parametrize("name, mech", [
    ("snapped_laplace", SnappedLaplace(1.0)),
    ("geometric_as_float", geometric_as_float),
])
def test_calibration_with_the_joint_feature_forced_on(name, mech, monkeypatch, record_property):
    """P[epsilon_lower > true ε] ≤ α with the joint feature in the featurizer (forced: the
    rule would not add it on these private mechanisms), claimed at the true ε = 1, 1000
    samples, 200 seeds (the Clopper–Pearson bounds of the confirmed candidates)."""
    monkeypatch.setattr(float_bits, "joint_hole", lambda *a: True)
    alpha = 0.05
    over = 0
    for seed in range(R):
        r = audit(mech, [1], [0], PureDP(1.0), samples=1000, alpha=alpha, seed=seed)
        assert JOINT_NAME in _names(r)
        over += r.epsilon_lower > 1.0
    record_property("miscoverage", {"count": over, "runs": R, "alpha": alpha})
    print(f"{name}: miscoverage {over}/{R}")
    assert over / R <= alpha


def test_joint_feature_needs_float_features():
    r = dpcheck.audit(swapped_grids, [1], [0], PureDP(1.0), samples=20_000, seed=0,
                      float_features=False)
    assert not r.violation and JOINT_NAME not in _names(r)
