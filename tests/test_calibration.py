"""Calibration: the auditor's bounds are honest (design §4 rule 3).

For mechanisms whose true ε is known, audited on their worst-case pair and claimed at exactly
that ε, a valid procedure has ``P[epsilon_lower > true ε] ≤ α``. Each test runs the audit over
``R = 200`` seeds and requires the observed fraction itself to be ≤ α (the issue's criterion);
the Clopper–Pearson interval of the rate is attached to the test report (``record_property``)
and printed. Coverage must hold at every sample size, so the default suite runs small sizes and
the ``slow`` marker runs 10⁵ samples per side.

``test_calibration_detects_selection_on_confirmation_data`` shows this harness can fail: the
largest per-event bound over the same candidate events, computed on the sample that generated
them (no split, no correction), exceeds the truth far more often than α.
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, RandomizedResponse
from dpcheck import PureDP, audit
from dpcheck.events.pools import feature_pool
from dpcheck.features.featurizer import Featurizer
from dpcheck.stats import clopper_pearson, cp_lower, cp_upper

R = 200
MECHANISMS = {
    "laplace": (LaplaceSum(1.0), [1.0], [0.0]),
    "randomized_response_k4": (RandomizedResponse(1.0, 4), [0], [1]),
    "geometric": (GeometricSum(1.0), [1], [0]),
}


def miscoverage(name: str, samples: int, alpha: float) -> int:
    """Runs in which ``epsilon_lower`` exceeds the true ε. ``LaplaceSum`` adds its noise in
    float64, which is not private at all (tests/test_float_features.py); its true ε = 1 is that
    of the real-valued mechanism, so it is audited on values only. Calibration with the float
    features on, on float-output mechanisms that are private: tests/test_float_features.py."""
    mech, d, d_prime = MECHANISMS[name]
    true_eps = mech.true_epsilon
    return sum(
        audit(mech, d, d_prime, PureDP(true_eps), samples=samples, alpha=alpha,
              seed=seed, float_features=name != "laplace").epsilon_lower > true_eps
        for seed in range(R)
    )


def check_rate(over: int, alpha: float, record_property) -> None:
    low, high = clopper_pearson(over, R, 0.05)
    record_property("miscoverage", {"count": over, "runs": R, "rate": over / R,
                                    "ci95": [float(low), float(high)], "alpha": alpha})
    print(f"miscoverage {over}/{R} = {over / R:.3f} (95% CI {low:.3f}-{high:.3f}), alpha={alpha}")
    assert over / R <= alpha


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("samples, alpha", [(200, 0.05), (2000, 0.05), (2000, 0.5)])
def test_coverage_at_true_epsilon(name, samples, alpha, record_property):
    check_rate(miscoverage(name, samples, alpha), alpha, record_property)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_coverage_at_true_epsilon_large(name, alpha, record_property):
    check_rate(miscoverage(name, 100_000, alpha), alpha, record_property)


def naive_epsilon_lower(mech, d, d_prime, n, alpha, seed) -> float:
    """An INVALID auditor: the largest per-event Clopper–Pearson bound over every candidate
    event, all computed on the sample that generated the events (no split, no correction)."""
    rng = np.random.default_rng(seed)
    out_d, out_dp = mech.sample(d, n, rng), mech.sample(d_prime, n, rng)
    feats = Featurizer.build(out_d)
    cols_d, cols_dp = feats(out_d), feats(out_dp)
    best = 0.0
    for j, feat in enumerate(feats.features):
        pool = feature_pool(j, feat, cols_d[j], cols_dp[j], 2048)
        for kp, kq in ((pool.count_d, pool.count_dp), (pool.count_dp, pool.count_d)):
            p_lo = cp_lower(kp, n, alpha / 2)
            q_hi = cp_upper(kq, n, alpha / 2)
            ok = p_lo > 0
            best = max(best, float(np.max(np.log(p_lo[ok] / q_hi[ok]), initial=0.0)))
    return best


def test_calibration_detects_selection_on_confirmation_data():
    mech, d, d_prime = MECHANISMS["laplace"]
    over = sum(naive_epsilon_lower(mech, d, d_prime, 1000, 0.05, seed) > 1.0
               for seed in range(R))
    assert over / R > 0.05, over
