"""Sequential audits (``audit(sequential=True)``, :mod:`dpcheck.core.sequential`): pilots stop
an audit that is already refuted, the α ledger over the stages sums to α, a pass uses the whole
budget, and the stopped procedure stays calibrated at the exact ε."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpcheck
from algorithms.mechanisms.primitives import RandomizedResponse
from dpcheck.core import sequential as seq
from dpcheck.core.explore import exploration_size
from dpcheck.core.results import untimed
from dpcheck.events.support import SUPPORT_SHARE
from dpcheck.errors import InvalidArgument
from dpcheck.stats import clopper_pearson


def laplace(scale: float):
    def mechanism(data, size, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size)

    mechanism.__name__ = f"laplace_{scale}"
    return mechanism


def test_a_gross_violation_stops_at_the_first_pilot():
    r = dpcheck.audit(laplace(0.5), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=1_000_000,
                      seed=3, sequential=True, float_features=False)
    assert r.violation and r.budget == 1_000_000
    assert [s.name for s in r.stages] == ["pilot 1"]
    assert r.samples <= 10_000  # 1 % of the budget (Poisson confirmation sizes: a bit below)
    assert r.stages[0].alpha == pytest.approx(0.05 * seq.PILOT_ALPHA)
    assert r.alpha == 0.05  # the audit's level, not the stage's
    # weighted Bonferroni: the stage's p-value times alpha / alpha_stage
    assert r.p_value == pytest.approx(min(1.0, r.stages[0].p_value / seq.PILOT_ALPHA))
    assert "stopped at pilot 1 after" in r.summary()
    doc = json.loads(json.dumps(r.to_dict()))
    assert doc["sequential"]["budget"] == 1_000_000
    assert doc["sequential"]["stages"][0]["violation"] is True


def test_a_pass_uses_the_whole_budget_and_spends_exactly_alpha():
    r = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=400_000,
                      seed=1, sequential=True, float_features=False)
    assert not r.violation
    assert [s.name for s in r.stages][0] == "pilot 1" and r.stages[-1].name == "final"
    assert r.samples == 400_000 == r.explore_samples + r.confirm_samples
    assert r.confirm_samples == 400_000 - exploration_size(400_000, 0.1)  # full power
    # the final stage spends what the pilots leave, whether or not pilot 2 ran
    assert r.stages[-1].alpha == pytest.approx(0.05 * (1 - 2 * seq.PILOT_ALPHA), rel=1e-12)
    assert sum(s.alpha for s in r.stages) <= 0.05 * (1 + 1e-12)
    assert [s.samples for s in r.stages] in ([4_000, 20_000, 400_000], [4_000, 400_000])
    assert 0.8 < r.epsilon_lower <= 1.0
    # final level / k, the support candidates holding SUPPORT_SHARE of it
    assert r.witness.bound.alpha == pytest.approx(r.stages[-1].alpha * (1 - SUPPORT_SHARE) / 3)


def test_the_second_pilot_runs_only_on_evidence_of_a_violation():
    """A mildly broken count (true ε = 1.11 for a 1-DP claim) shows an excess in pilot 1 and is
    refuted by pilot 2 (seed 0; on 5 of seeds 0–7 pilot 1 alone already refutes it, seed 3
    included, which this test used before the max-noise slot of ``select_events``); a count with twice the noise it needs shows none and goes straight to
    the final audit (pilot 2 would cost an exploration and could not refute it)."""
    mild = dpcheck.audit(laplace(0.9), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                         samples=1_000_000, seed=0, sequential=True, float_features=False)
    assert [s.name for s in mild.stages] == ["pilot 1", "pilot 2"] and mild.violation
    assert mild.samples < 60_000
    safe = dpcheck.audit(laplace(2.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                         samples=1_000_000, seed=3, sequential=True, float_features=False)
    assert [s.name for s in safe.stages] == ["pilot 1", "final"] and not safe.violation
    assert safe.samples == 1_000_000


def test_same_seed_same_result_and_fixed_budget_unchanged():
    mech, d, dp, claim = laplace(0.9), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0)
    kw = dict(samples=300_000, seed=5, float_features=False)
    a = dpcheck.audit(mech, d, dp, claim, sequential=True, **kw)
    b = dpcheck.audit(mech, d, dp, claim, sequential=True, **kw)
    assert untimed(a.to_dict()) == untimed(b.to_dict())
    fixed = dpcheck.audit(mech, d, dp, claim, **kw)
    assert fixed.stages is None and "sequential" not in fixed.to_dict()
    assert untimed(fixed.to_dict()) == untimed(
        dpcheck.audit(mech, d, dp, claim, sequential=False, **kw).to_dict())


def test_budgets_too_small_for_a_pilot_run_the_fixed_audit():
    assert seq.pilot_budgets(39_000, 0.1) == ()
    assert seq.pilot_budgets(150_000, 0.1) == (7_500,)  # the 5 % pilot only
    assert seq.pilot_budgets(200_000, 0.1) == (2_000, 10_000)
    mech, d, dp, claim = laplace(0.5), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0)
    small = dpcheck.audit(mech, d, dp, claim, samples=30_000, seed=2, sequential=True,
                          float_features=False)
    fixed = dpcheck.audit(mech, d, dp, claim, samples=30_000, seed=2, float_features=False)
    assert small.stages is None
    assert untimed(small.to_dict()) == untimed(fixed.to_dict())


def test_approximate_and_curve_claims_stop_too():
    gauss = lambda data, size, rng: np.sum(data) + rng.normal(0.0, 0.3, size)  # noqa: E731
    r = dpcheck.audit(gauss, [1.0], [0.0], dpcheck.ApproxDP(1.0, 1e-5), samples=1_000_000,
                      seed=0, sequential=True, float_features=False)
    assert r.violation and r.stages[-1].name.startswith("pilot") and r.delta_lower > 1e-5
    g = dpcheck.audit(gauss, [1.0], [0.0], dpcheck.GaussianDP(1.0), samples=1_000_000, seed=0,
                      sequential=True, float_features=False)
    assert g.violation and g.samples < 100_000 and g.parameter_lower["mu"] > 1.0


def test_bad_sequential_argument():
    with pytest.raises(InvalidArgument, match=r"sequential='yes' must be True or False"):
        dpcheck.audit(laplace(1.0), [1], [0], dpcheck.PureDP(1.0), sequential="yes")


@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_calibrated_under_stopping_at_the_exact_epsilon(alpha, record_property):
    """Randomized response (k = 4) at exactly its ε: every event sits at or below the claimed
    ratio, so P[violation] ≤ α must hold for the whole stopped procedure. 120 seeds at the
    smallest budget with both pilots; at α = 0.5 a procedure that gave each stage the full α
    would be allowed up to 1.5."""
    mech = RandomizedResponse(1.0, 4)
    runs = 120
    alarms = sum(dpcheck.audit(mech, [0], [1], dpcheck.PureDP(mech.true_epsilon),
                               samples=200_000, alpha=alpha, seed=s, sequential=True).violation
                 for s in range(runs))
    low, high = clopper_pearson(alarms, runs, 0.05)
    record_property("false_alarms", {"count": alarms, "runs": runs, "ci95": [low, high]})
    assert alarms / runs <= alpha


def test_audit_pairs_sequential_each_pair_or_a_clear_error_for_best():
    pairs = [([1, 0, 1], [1, 0]), ([1, 1], [1])]
    each = dpcheck.audit_pairs(laplace(0.5), pairs, dpcheck.PureDP(1.0), samples=400_000,
                               seed=0, float_features=False, sequential=True)
    assert each.violation and all(r.stages is not None for r in each.results)
    assert all(r.samples < 40_000 for r in each.results)
    with pytest.raises(InvalidArgument, match=r"sequential=True is not supported with "
                                              r"confirm='best'"):
        dpcheck.audit_pairs(laplace(0.5), pairs, dpcheck.PureDP(1.0), samples=400_000,
                            seed=0, confirm="best", sequential=True)
