"""Randomised tie-breaking (``audit(..., ties=True)``, :mod:`dpcheck.events.ties`) keeps the bounds honest.

* Calibration: the geometric mechanism (integer outputs, so every half-line has a populated
  boundary atom) claimed at its exact ε over ``R = 200`` seeds, with randomised events confirmed
  in most runs: the fraction with ``epsilon_lower > true ε`` stays ≤ α.
* The coin of a tied output is a Bernoulli draw: on a fixed sample the count of a randomised
  event is the strict count plus ``Binomial(ties, γ)`` (mean and variance over many draws).
* The coins come from a seeded stream per confirmation chunk: results are bit-identical with
  an executor.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from algorithms.mechanisms.primitives import GeometricSum
from dpcheck import PureDP, audit
from dpcheck.events.event import Event
from dpcheck.stats import clopper_pearson

R = 200
GEOMETRIC = GeometricSum(1.0)


@pytest.mark.parametrize("samples, alpha", [(2000, 0.05), (2000, 0.5)])
def test_randomised_events_are_calibrated_at_the_true_epsilon(samples, alpha,
                                                              record_property):
    over = randomised = 0
    for seed in range(R):
        r = audit(GEOMETRIC, [1], [0], PureDP(GEOMETRIC.true_epsilon), samples=samples,
                  alpha=alpha, seed=seed, ties=True)
        over += r.epsilon_lower > GEOMETRIC.true_epsilon
        randomised += any(ev is not None and ev.tie_value is not None
                          for w in r.confirmed for ev in (w.event, w.partner))
    low, high = clopper_pearson(over, R, 0.05)
    record_property("miscoverage", {"count": over, "runs": R, "rate": over / R,
                                    "ci95": [float(low), float(high)], "alpha": alpha,
                                    "randomised_confirmed": randomised})
    print(f"miscoverage {over}/{R} (95% CI {low:.3f}-{high:.3f}), alpha={alpha}; randomised "
          f"events confirmed in {randomised} runs")
    assert randomised >= R // 20  # the test exercises randomised events
    assert over / R <= alpha


def test_randomised_count_is_binomial_in_the_tie_probability():
    x = np.array([0.0] * 300 + [1.0] * 500 + [2.0] * 200)  # fixed outputs
    ev = Event(0, "output", "gt", low=1.0, tie_value=1.0, tie=0.25)
    coins = np.random.default_rng(5)
    counts = np.array([ev.count_random([x], coins) for _ in range(4000)])
    assert counts.min() >= 200 and counts.max() <= 700  # strict part always in, ties partly
    # 200 strict + Binomial(500, 0.25): mean 325, variance 93.75
    assert abs(counts.mean() - 325.0) < 4 * np.sqrt(93.75 / 4000)
    assert 0.85 < counts.var() / 93.75 < 1.15
    assert "with probability 0.25" in ev.describe()
    assert ev.to_dict()["tie_probability"] == 0.25
    plain = Event(0, "output", "gt", low=1.0)
    assert plain.count_random([x], coins) == plain.count([x]) == 200


def test_randomised_audit_is_executor_independent():
    for seed in range(20):  # the first seed that confirms a randomised event
        local = audit(GEOMETRIC, [1], [0], PureDP(1.0), samples=2000, seed=seed, ties=True)
        if any(w.event.tie_value is not None for w in local.confirmed):
            break
    assert any(w.event.tie_value is not None for w in local.confirmed)
    with ThreadPoolExecutor(2) as pool:
        remote = audit(GEOMETRIC, [1], [0], PureDP(1.0), samples=2000, seed=seed, ties=True,
                       executor=pool)
    assert [w.bound for w in local.confirmed] == [w.bound for w in remote.confirmed]
    assert local.epsilon_lower == remote.epsilon_lower
