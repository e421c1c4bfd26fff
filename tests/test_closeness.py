"""``audit_closeness`` (Definition 6 of Cummings et al.): bounds, exact values, calibration.

Calibration follows ``tests/test_calibration.py``: pairs whose closeness is known exactly are
audited *at* their true (ε, δ) over many seeds; a valid procedure raises a false alarm with
probability ≤ α, and the observed rate must be ≤ α. The same harness rejects a deliberately
invalid checker (the largest per-atom Clopper–Pearson bound over many atoms, on one sample, no
split, no correction).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpcheck
from dpcheck import Closeness, InvalidArgument, audit_closeness
from dpcheck.generalization.closeness import exact_closeness
from dpcheck.stats import clopper_pearson, cp_lower, cp_upper

EPS = 1.0
E = math.exp(EPS)
PAIRS = {
    # exactly (1, 0)-close: max log-ratio = 1
    "binary_pure": ({0: E / (1 + E), 1: 1 / (1 + E)}, {0: 1 / (1 + E), 1: E / (1 + E)},
                    Closeness(EPS, 0.0)),
    # total variation exactly 0.2: (0, 0.2)-close and not better
    "tv": ({0: 0.5, 1: 0.5}, {0: 0.3, 1: 0.7}, Closeness(0.0, 0.2)),
    # Laplace(0, 1) vs Laplace(1, 1): exactly (1, 0)-close
    "laplace": (lambda n, rng: rng.laplace(0.0, 1.0, n),
                lambda n, rng: 1.0 + rng.laplace(0.0, 1.0, n), Closeness(EPS, 0.0)),
}


def false_alarms(checker, name: str, runs: int, samples: int, alpha: float) -> int:
    a, b, claim = PAIRS[name]
    return sum(checker(a, b, claim, samples, alpha, seed) for seed in range(runs))


def valid(a, b, claim, samples, alpha, seed) -> bool:
    # The known closeness of these pairs is that of the real-valued distributions; in float64
    # ``1 + laplace`` and ``laplace`` differ (their spacings), which the float features would
    # rightly see, so the calibration audits the values only.
    return audit_closeness(a, b, claim, samples=samples, alpha=alpha, seed=seed,
                           float_features=False).violation


def invalid_max_atoms(a, b, claim, samples, alpha, seed) -> bool:
    """INVALID: per-atom Clopper–Pearson bounds at level alpha on one sample, max over all atoms
    and both directions, no split and no multiplicity correction."""
    rng = np.random.default_rng(seed)
    xa, xb = a(samples, rng), b(samples, rng)
    ka, kb = np.bincount(xa, minlength=64), np.bincount(xb, minlength=64)
    e = math.exp(claim.epsilon)
    lo_a, hi_b = cp_lower(ka, samples, alpha / 2), cp_upper(kb, samples, alpha / 2)
    lo_b, hi_a = cp_lower(kb, samples, alpha / 2), cp_upper(ka, samples, alpha / 2)
    return bool(max(np.max(lo_a - e * hi_b), np.max(lo_b - e * hi_a)) > claim.delta)


def check_rate(over: int, runs: int, alpha: float, record_property) -> None:
    low, high = clopper_pearson(over, runs, 0.05)
    record_property("false_alarms", {"count": over, "runs": runs, "rate": over / runs,
                                     "ci95": [float(low), float(high)], "alpha": alpha})
    print(f"false alarms {over}/{runs} = {over / runs:.3f} (95% CI {low:.3f}-{high:.3f})")
    assert over / runs <= alpha


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_false_alarm_rate_at_true_closeness(name, record_property):
    runs, alpha = 60, 0.1
    check_rate(false_alarms(valid, name, runs, 2000, alpha), runs, alpha, record_property)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("samples, alpha", [(2000, 0.05), (50_000, 0.05), (2000, 0.5)])
def test_false_alarm_rate_at_true_closeness_large(name, samples, alpha, record_property):
    runs = 200
    check_rate(false_alarms(valid, name, runs, samples, alpha), runs, alpha, record_property)


def _uniform64(n, rng):
    return rng.integers(0, 64, n)


def test_harness_rejects_max_over_atoms_without_correction():
    """Identical distributions on 64 atoms claimed (0, 0)-close: the invalid checker alarms far
    more often than alpha; the valid one does not."""
    PAIRS["uniform64"] = (_uniform64, _uniform64, Closeness(0.0, 0.0))
    try:
        runs, alpha = 60, 0.1
        bad = false_alarms(invalid_max_atoms, "uniform64", runs, 2000, alpha)
        good = false_alarms(valid, "uniform64", runs, 2000, alpha)
    finally:
        del PAIRS["uniform64"]
    assert bad / runs > alpha, bad
    assert good / runs <= alpha, good


def test_bounds_and_exact_values():
    a, b, _ = PAIRS["binary_pure"]
    r = audit_closeness(a, b, Closeness(0.5, 0.0), samples=50_000, seed=3)
    assert r.violation and r.exact_epsilon == pytest.approx(1.0)
    assert 0.5 < r.epsilon_lower <= 1.0
    _, exact_delta = exact_closeness(a, b, Closeness(0.5, 0.0))
    assert r.exact_delta == pytest.approx(exact_delta)
    assert 0 < r.delta_lower <= exact_delta
    json.dumps(r.to_dict())
    assert "NOT CLOSE" in r.summary()


def test_both_directions_are_audited():
    """Only b has an output outside a's support: the witness is on the b side, either way round."""
    a, b = {0: 1.0}, {0: 0.5, 1: 0.5}
    ab = audit_closeness(a, b, Closeness(0.5), samples=5000, seed=1)
    ba = audit_closeness(b, a, Closeness(0.5), samples=5000, seed=1)
    assert ab.violation and ba.violation
    assert (ab.direction, ba.direction) == ("b>a", "a>b")
    assert ab.epsilon_lower > 5 and ba.epsilon_lower > 5


def test_support_mismatch_reaches_cp_ceiling():
    r = audit_closeness({0: 1.0}, {1: 1.0}, Closeness(1.0, 0.5), samples=100_000, seed=0)
    assert r.violation and r.epsilon_lower > 9 and r.delta_lower > 0.99
    assert r.exact_epsilon == math.inf


def test_audit_is_the_same_core():
    """audit() on M(D), M(D′) and audit_closeness on the two bound samplers agree bit for bit
    (one core: the closeness audit *is* an audit of the wrapped pair)."""
    from algorithms.mechanisms.primitives import LaplaceSum

    mech = LaplaceSum(1.0)
    r1 = dpcheck.audit(mech, [1.0], [0.0], dpcheck.ApproxDP(0.5, 0.01), samples=20_000, seed=7)
    r2 = audit_closeness(lambda n, rng: mech.sample([1.0], n, rng),
                         lambda n, rng: mech.sample([0.0], n, rng), Closeness(0.5, 0.01),
                         samples=20_000, seed=7)
    assert r1.epsilon_lower == r2.epsilon_lower and r1.delta_lower == r2.delta_lower


@pytest.mark.parametrize("args, name", [
    ((None, {0: 1.0}, Closeness(1.0)), "sampler_a"),
    (({0: 1.0}, 3, Closeness(1.0)), "sampler_b"),
    (({0: 1.0}, {0: 1.0}, 1.0), "claim"),
    (({0: 0.5}, {0: 1.0}, Closeness(1.0)), "sums to"),
])
def test_bad_input_names_the_argument(args, name):
    with pytest.raises(InvalidArgument, match=name):
        audit_closeness(*args, samples=100)


@pytest.mark.parametrize("eps, delta, name", [(-1.0, 0.0, "epsilon"), (math.inf, 0.0, "epsilon"),
                                              (1.0, 1.0, "delta"), (1.0, -0.1, "delta")])
def test_bad_claim(eps, delta, name):
    with pytest.raises(InvalidArgument, match=name):
        Closeness(eps, delta)


def test_relation_is_rejected():
    with pytest.raises(InvalidArgument, match="relation"):
        audit_closeness({0: 1.0}, {0: 1.0}, Closeness(1.0), samples=100,
                        relation=dpcheck.Replace())
