"""Learned events and the conditional ratio test keep the auditor honest (design §4 rule 3).

* :func:`dpcheck.stats.ratio_lower` covers ``p/q`` on Poisson counts at its level, and the same
  harness fails a bound that overstates the ratio.
* Audits of vector mechanisms whose learned scores (logistic regression, sign count) are fitted,
  claimed at their exact ε, over many seeds: the fraction with ``epsilon_lower > true ε`` stays
  ≤ α (the calibration criterion of ``tests/test_calibration.py``).
* The learned scores themselves: sentinels become flags, the sign count is the composed-Laplace
  statistic, the fit sees only the generation half.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.mechanisms.noisy_sums import RepeatedLaplace
from algorithms.mechanisms.rappor import OneTimeRappor
from dpcheck import PureDP, audit
from dpcheck.learned import LogisticScore, SignCount
from dpcheck.stats import clopper_pearson, event_bound, ratio_lower, ratio_p_value

REPS = 2000


def _ratio_miscoverage(counts_p, counts_q, ratio, alpha):
    return sum(ratio_lower(int(a), int(b), alpha=alpha) > ratio
               for a, b in zip(counts_p, counts_q))


@pytest.mark.parametrize("lam_q, ratio", [(3.0, math.e), (200.0, 1.2), (5000.0, 1.05)])
def test_ratio_bound_covers_on_poisson_counts(lam_q, ratio):
    rng = np.random.default_rng(7)
    alpha = 0.1
    kp = rng.poisson(lam_q * ratio, REPS)
    kq = rng.poisson(lam_q, REPS)
    over = _ratio_miscoverage(kp, kq, ratio, alpha)
    high = clopper_pearson(over, REPS, 0.01)[1]
    assert over / REPS <= alpha, (over, high)


def test_ratio_harness_catches_an_understated_ratio():
    """The same harness fails a bound when the truth is below it: counts whose real ratio is
    1.3 checked against a claimed 1.2 exceed it in most repetitions."""
    rng = np.random.default_rng(7)
    kp = rng.poisson(200.0 * 1.3 * 4, REPS)
    kq = rng.poisson(200.0 * 4, REPS)
    assert _ratio_miscoverage(kp, kq, 1.2, 0.1) / REPS > 0.5


def test_ratio_bound_is_sharper_than_the_union_bound_for_rare_events():
    kp, kq, n = 5230, 2330, 900_000
    union = event_bound(kp, n, kq, n, alpha=0.05 / 3).epsilon_lower()
    ratio = math.log(ratio_lower(kp, kq, alpha=0.05 / 3))
    assert ratio > union + 0.02
    assert ratio_p_value(kp, kq, epsilon=ratio + 1e-6) > 0.05 / 3 > ratio_p_value(
        kp, kq, epsilon=ratio - 1e-3)


MECHANISMS = {
    # five composed Laplace(1/0.1) releases of one sum: exactly 0.5-DP on (1, 0)
    "composed_laplace": (RepeatedLaplace(0.1, 5), [1.0], [0.0]),
    # one-time RAPPOR, values with disjoint 4-bit filters: exactly 8·0.10008-DP
    "rappor": (OneTimeRappor(4, 20, 0.95), [10], [6]),
}
R = 50


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_learned_events_are_calibrated_at_the_true_epsilon(name, record_property):
    mech, d, d_prime = MECHANISMS[name]
    true_eps = mech.true_epsilon
    alpha = 0.2
    over = 0
    for seed in range(R):
        r = audit(mech, d, d_prime, PureDP(true_eps), samples=20_000, alpha=alpha, seed=seed,
                  explore_fraction=0.5)
        assert "logit(output)" in {f["name"] for f in r.features["features"]}
        over += r.epsilon_lower > true_eps
    low, high = clopper_pearson(over, R, 0.05)
    record_property("miscoverage", {"count": over, "runs": R, "rate": over / R,
                                    "ci95": [float(low), float(high)], "alpha": alpha})
    print(f"{name}: miscoverage {over}/{R} (95% CI {low:.3f}-{high:.3f}), alpha={alpha}")
    assert over / R <= alpha


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_learned_events_are_calibrated_at_1e5(name):
    mech, d, d_prime = MECHANISMS[name]
    over = sum(audit(mech, d, d_prime, PureDP(mech.true_epsilon), samples=100_000, alpha=0.2,
                     seed=seed).epsilon_lower > mech.true_epsilon for seed in range(200))
    assert over / 200 <= 0.2


def test_sentinels_are_flags_and_rare_columns_are_categorical():
    rng = np.random.default_rng(0)
    n = 6000
    a = rng.laplace(0.0, 1.0, (n, 3))
    b = rng.laplace(0.0, 1.0, (n, 3))
    a[rng.random(n) < 0.3, 0] = -1000.0  # "no answer" far more often under D
    b[rng.random(n) < 0.1, 0] = -1000.0
    a[:, 2] = rng.integers(0, 3, n)
    b[:, 2] = rng.integers(0, 3, n)
    score = LogisticScore.fit(a, b)
    first = score.columns[0]
    assert not first.categorical and list(first.levels) == [-1000.0]
    assert score.columns[2].categorical
    # the flag, not the number -1000, carries the signal: "no answer" scores higher under D
    flagged = np.array([[-1000.0, 0.0, 0.0]])
    plain = np.array([[0.0, 0.0, 0.0]])
    assert score(flagged)[0] > score(plain)[0] + 0.5


def test_sign_count_counts_continuous_coordinates_above_the_median():
    rng = np.random.default_rng(1)
    a = np.column_stack([rng.normal(1, 1, 5000), rng.normal(1, 1, 5000),
                         rng.integers(0, 2, 5000)])
    b = np.column_stack([rng.normal(-1, 1, 5000), rng.normal(-1, 1, 5000),
                         rng.integers(0, 2, 5000)])
    signs = SignCount.fit(a, b)
    assert signs is not None and list(signs.indices) == [0, 1]
    assert list(signs(np.array([[5.0, 5.0, 1.0], [5.0, -5.0, 0.0], [-5, -5, 1]]))) == [2, 1, 0]
    assert SignCount.fit(a[:, 2:], b[:, 2:]) is None
