"""Sequential audits (``audit(sequential=True)``, :mod:`dpcheck.core.sequential`): pilots stop
an audit that is already refuted, the α ledger over the stages sums to α, a pass uses the whole
budget, and the stopped procedure stays calibrated at the exact ε."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dpcheck
from algorithms.mechanisms.primitives import RandomizedResponse
from algorithms.zoo import get
from dpcheck.core import confirm as confirm_module
from dpcheck.core import explore as explore_module
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


class Counted:
    """A Laplace count that records how many outputs it drew per dataset and its largest call."""

    def __init__(self, scale: float) -> None:
        self.scale, self.drawn, self.largest = scale, {}, 0

    def __call__(self, data, size, rng):
        key = tuple(data)
        self.drawn[key] = self.drawn.get(key, 0) + size
        self.largest = max(self.largest, size)
        return np.sum(data) + rng.laplace(0.0, self.scale, size)


def test_a_gross_violation_stops_at_the_first_pilot():
    r = dpcheck.audit(laplace(0.5), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=1_000_000,
                      seed=3, sequential=True, float_features=False)
    assert r.violation and r.budget == 1_000_000
    assert [s.name for s in r.stages] == ["pilot 1"]
    # the budget per side of the stage run: 1 % of the whole (nominal: its Poisson
    # confirmation draws a bit fewer)
    assert r.samples == r.stages[0].samples == 10_000
    assert r.stages[0].alpha == pytest.approx(0.05 * seq.PILOT_ALPHAS[0])
    assert r.alpha == 0.05  # the audit's level, not the stage's
    # weighted Bonferroni: the stage's p-value times alpha / alpha_stage
    assert r.p_value == pytest.approx(min(1.0, r.stages[0].p_value / seq.PILOT_ALPHAS[0]))
    assert "stopped at pilot 1 after" in r.summary()
    doc = json.loads(json.dumps(r.to_dict()))
    assert doc["sequential"]["budget"] == 1_000_000
    assert doc["sequential"]["stages"][0]["violation"] is True


def test_a_pass_uses_the_whole_budget_and_spends_exactly_alpha():
    r = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=400_000,
                      seed=1, sequential=True, float_features=False)
    assert not r.violation
    assert [s.name for s in r.stages] == ["pilot 1", "pilot 2", "final"]
    assert r.samples == 400_000 == r.explore_samples + r.confirm_samples
    assert r.confirm_samples == 400_000 - exploration_size(400_000, 0.1)  # full confirmation
    # the final stage spends what the pilots leave: the stages' levels sum to alpha exactly
    assert [s.alpha for s in r.stages] == pytest.approx([0.05 * 0.025, 0.05 * 0.1, 0.05 * 0.875],
                                                        rel=1e-12)
    assert sum(s.alpha for s in r.stages) == pytest.approx(0.05, rel=1e-12)
    assert [s.samples for s in r.stages] == [4_000, 36_000, 400_000]
    assert 0.8 < r.epsilon_lower <= 1.0
    # the final level: SUPPORT_SHARE of it to the support candidates, half of the rest to the
    # lead of the 3 ranked candidates (here the strong slot's, the last) and a quarter to each
    # of the others
    share = r.stages[-1].alpha * (1 - SUPPORT_SHARE)
    assert [w.bound.alpha for w in r.confirmed if not w.event.support] == pytest.approx(
        [share / 4, share / 4, share / 2])
    assert r.witness.bound.alpha in {w.bound.alpha for w in r.confirmed}


def test_the_second_pilot_runs_unconditionally_and_explores_on_30_percent():
    """Pilot 2 runs whatever pilot 1 saw (a gate on pilot 1 showing an excess skipped it on the
    mildly broken entries of the zoo) and explores on 30 % of its budget: a mildly broken count
    (true ε = 1.11 for a 1-DP claim) is refuted at pilot 2 (seed 1, where pilot 1 does not
    refute); a count with twice the noise it needs passes every stage and draws the budget."""
    mild = dpcheck.audit(laplace(0.9), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                         samples=1_000_000, seed=1, sequential=True, float_features=False)
    assert [s.name for s in mild.stages] == ["pilot 1", "pilot 2"] and mild.violation
    assert mild.samples <= 100_000
    # pilot 1's outputs (≈ 10⁴; Poissonized confirmation) + 30 % of pilot 2's 90 000
    assert 10_000 + 27_000 - 500 <= mild.explore_samples <= 10_000 + 27_000
    safe = dpcheck.audit(laplace(2.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                         samples=1_000_000, seed=3, sequential=True, float_features=False)
    assert [s.name for s in safe.stages] == ["pilot 1", "pilot 2", "final"]
    assert not safe.violation and safe.samples == 1_000_000


def test_a_max_of_laplace_values_is_refuted_by_one_tenth_of_the_budget():
    """Report-noisy-max returning the noisy maximum *value* of 5 counts with Lap(20) noise
    (zoo entry ``noisy_max_value_laplace``: claim ε = 0.1, true ε = 0.25 at counts 0 vs 1;
    DP-Sniper's NoisyMaxValue). Its best event is the lower tail {max ≤ 0.8} (mass 0.038,
    ratio e^0.24), which explorations of 10 % of pilots at 1 % and 5 % of the budget miss
    (they confirm upper-tail intervals of ratio e^0.05); with pilot 2 at 9 % exploring on 30 %
    it is refuted within 1/10 of the budget on at least 4 of seeds 0–5 (the code before: 0 of 6,
    every run drew the whole 10⁶)."""
    entry = get("noisy_max_value_laplace")
    (d, d_prime), = entry.pairs
    stopped = 0
    for seed in range(6):
        r = dpcheck.audit(entry.mechanism, d, d_prime, entry.claim, samples=1_000_000,
                          seed=seed, sequential=True, features=entry.features,
                          float_features=entry.float_features)
        stopped += r.violation and r.samples <= 100_000
    assert stopped >= 4


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
    assert seq.pilot_plan(22_225, 0.1) == ()
    assert seq.pilot_plan(22_226, 0.1) == ((2_000, 0.1, 0.3),)  # the 9 % pilot only
    assert seq.pilot_plan(150_000, 0.1) == ((13_500, 0.1, 0.3),)
    assert seq.pilot_plan(200_000, 0.1) == ((2_000, 0.025, 0.1), (18_000, 0.1, 0.3))
    # a larger explore_fraction: the pilots explore on at least that share
    assert seq.pilot_plan(10**6, 0.5) == ((50_000, 0.025, 0.5), (450_000, 0.1, 0.5))
    mech, d, dp, claim = laplace(0.5), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0)
    small = dpcheck.audit(mech, d, dp, claim, samples=20_000, seed=2, sequential=True,
                          float_features=False)
    fixed = dpcheck.audit(mech, d, dp, claim, samples=20_000, seed=2, float_features=False)
    assert small.stages is None
    assert untimed(small.to_dict()) == untimed(fixed.to_dict())
    # a lone pilot is the 9 % one, and is named so (it was called "pilot 1")
    lone = dpcheck.audit(mech, d, dp, claim, samples=100_000, seed=2, sequential=True,
                         float_features=False)
    assert lone.stages[0].name == "pilot 2" and lone.stages[0].samples == 9_000


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


# ---- stop_within: stopping at a pilot as precise as the budget promises ----


def test_stop_within_ends_a_loose_claim_at_the_last_pilot():
    """Laplace(1) claimed 2-DP: pilot 2's bound (0.973) is within 0.1 of what it projects for
    the full budget (1.021), which stays 0.1 below the claimed 2, so the audit ends there;
    pilot 1 is never judged; without ``stop_within`` the whole budget runs."""
    kw = dict(samples=1_000_000, seed=0, float_features=False, sequential=True)
    r = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), stop_within=0.1,
                      **kw)
    assert not r.violation and [s.name for s in r.stages] == ["pilot 1", "pilot 2"]
    assert r.samples <= 100_000 and r.budget == 1_000_000
    first, last = r.stages
    assert first.reachable is None  # only the last pilot may stop for precision
    assert r.epsilon_lower == last.epsilon_lower
    assert last.reachable - 0.1 <= last.epsilon_lower < last.reachable
    assert last.reachable + 0.1 <= 2.0
    assert "stopped at pilot 2 after" in r.summary()
    assert "within stop_within of the" in r.summary()
    doc = json.loads(json.dumps(r.to_dict()))
    assert doc["sequential"]["stages"][1]["reachable"] == pytest.approx(last.reachable)
    assert "reachable" not in doc["sequential"]["stages"][0]
    assert doc["sequential"]["stop_within"] == 0.1 == r.stop_within  # the rule it ran under
    full = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), **kw)
    assert full.stages[-1].name == "final" and full.samples == 1_000_000
    assert all(s.reachable is None for s in full.stages)
    assert r.epsilon_lower < full.epsilon_lower <= last.reachable  # what the budget bought


def test_a_handful_of_counts_does_not_hold_the_audit_back():
    """Laplace(1) on a 2⁻¹⁰ grid claimed 2-DP, seed 1: the selection sized for the final stage
    ranks the grid value 2.33789, seen 12 times against 1, at 1.56 — a guess (fewer than
    FEW_COUNTS counts), left out of the projection (1.007), so pilot 2 (0.971) ends the audit."""
    def gridded(data, size, rng):
        return np.sum(data) + np.round(rng.laplace(0.0, 1.0, size) * 1024.0) / 1024.0

    r = dpcheck.audit(gridded, [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), samples=1_000_000,
                      seed=1, float_features=False, sequential=True, stop_within=0.1)
    assert [s.name for s in r.stages] == ["pilot 1", "pilot 2"]
    assert r.stages[1].reachable < 1.05


def test_stop_within_continues_while_the_bound_can_still_grow():
    """With τ = 0.02 pilot 2 is not within τ of its projection (0.973 vs 1.021): the final
    stage runs (an audit that ignored the distance would stop at pilot 2)."""
    r = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(4.0), samples=1_000_000,
                      seed=0, float_features=False, sequential=True, stop_within=0.02)
    assert [s.name for s in r.stages] == ["pilot 1", "pilot 2", "final"]
    assert r.stages[1].epsilon_lower < r.stages[1].reachable - 0.02
    assert r.samples == 1_000_000


def test_stop_within_never_stops_where_the_budget_could_refute():
    """Laplace with 0.985 of the noise (true ε 1.015) claimed 1-DP, τ = 0.2: pilot 2 does not
    refute (0.985) and is within 0.2 of its projection (1.034), but 1.034 + 0.2 exceeds the
    claimed 1, so the final stage runs and refutes the claim."""
    r = dpcheck.audit(laplace(0.985), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                      samples=1_000_000, seed=0, float_features=False, sequential=True,
                      stop_within=0.2)
    pilot = r.stages[1]
    assert not pilot.violation and pilot.epsilon_lower >= pilot.reachable - 0.2
    assert pilot.reachable + 0.2 > 1.0
    assert r.violation and r.stages[-1].name == "final"


def test_a_tight_claim_is_not_stopped_for_precision():
    """At the exact ε the projection lies within τ of the claim: the whole budget runs."""
    r = dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=400_000,
                      seed=2, float_features=False, sequential=True, stop_within=0.05)
    assert [s.name for s in r.stages] == ["pilot 1", "pilot 2", "final"]
    assert not r.violation


def test_reachable_projects_the_favourable_ends_of_the_pilots_intervals():
    """``reachable`` grows each count to ``scale`` times its sample at the favourable end of
    its one-sided 95 % Clopper–Pearson interval (p up, q down); an event seen on neither side
    stays at zero; the rule needs both the distance and the margin to the claim."""
    from dpcheck.core.certify import DPCertifier
    from dpcheck.events.event import Candidate, Event
    from dpcheck.stats import cp_lower, cp_upper

    cand = [Candidate(Event(0, "output", "gt", low=1.0), "d>d_prime", 1.0, 0, 0, "ratio"),
            Candidate(Event(0, "output", "atoms", values=np.array([0.5]), support=True),
                      "d>d_prime", 1.0, 0, 0, "union")]
    counts = [(300, 1000, 120, 1000), (0, 1000, 0, 1000)]
    cert = DPCertifier(pure=True)
    claim = dpcheck.PureDP(2.0)
    assert seq.PROJECTION_LEVEL == 0.05
    p_hi, q_lo = cp_upper(300, 1000, 0.05), cp_lower(120, 1000, 0.05)
    want = [(round(9000 * p_hi), 9000, round(9000 * q_lo), 9000), (0, 9000, 0, 9000)]
    grown = seq.reachable(cert, claim, cand, counts, scale=9.0, alpha=0.01)
    assert grown == cert.certify(claim, cand, want, 0.01)
    point = cert.certify(claim, cand, [(2700, 9000, 1080, 9000), (0, 9000, 0, 9000)], 0.01)
    assert grown.epsilon_lower > point.epsilon_lower  # optimistic
    # a handful of counts (fewer than FEW_COUNTS on the favoured side) grows at its point
    # estimates: the interval ends of 4 against 1 would project a ratio of ~180
    few = [(4, 1000, 1, 1000), (0, 1000, 0, 1000)]
    assert seq.reachable(cert, claim, cand, few, scale=9.0, alpha=0.01) == cert.certify(
        claim, cand, [(36, 9000, 9, 9000), (0, 9000, 0, 9000)], 0.01)
    assert grown.epsilon_lower > np.log(300 / 120) - 0.05
    g = grown.epsilon_lower
    assert seq.precise_enough(g - 0.05, g, 2.0, 0.1)
    assert not seq.precise_enough(g - 0.15, g, 2.0, 0.1)  # the bound may still grow
    assert not seq.precise_enough(g, g, g + 0.05, 0.1)  # the budget might refute the claim
    assert not seq.precise_enough(0.09, 0.1, 2.0, 0.1)  # the pilot found too little


def test_budget_projection_sees_the_events_that_pay_at_the_final_size():
    """The projection is at least the pilot's own events' (``reachable``) and at least the
    best score of a selection on the pilot's exploration sized for the final confirmation;
    where the pilot certifies nothing (the zoo's exponential mechanism, true ε 0.097, claimed
    0.1; pilot 2 certifies 0 on seed 1 while the whole budget certifies 0.07) the evidence
    rule keeps the audit going."""
    entry = get("exponential_mechanism")
    d, d_prime = entry.pairs[0]
    seen = {}
    real = seq.budget_projection

    def spy(setup, explored, counts, *, n_final, alpha):
        seen["mine"] = seq.reachable(setup.certifier, setup.claim, explored.chosen, counts,
                                     scale=n_final / explored.n_confirm,
                                     alpha=alpha).epsilon_lower
        seen["all"] = real(setup, explored, counts, n_final=n_final, alpha=alpha)
        return seen["all"]

    import dpcheck.core.audit as audit_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(audit_module, "budget_projection", spy)
        r = dpcheck.audit(entry.mechanism, d, d_prime, entry.claim, samples=1_000_000, seed=1,
                          features=entry.features, float_features=entry.float_features,
                          sequential=True, stop_within=0.05)
    assert seen["all"] >= seen["mine"]
    assert r.stages[1].epsilon_lower < 0.05  # pilot 2 found too little to judge the budget
    assert r.stages[-1].name == "final" and r.epsilon_lower > 0.05
    # svt1 (seed 0): a one-query event too rare for pilot 2's own size (its events project
    # 0.15 at the full budget) is ranked 0.20 by the selection sized for the final stage
    entry = get("svt1")
    d, d_prime = entry.pairs[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(audit_module, "budget_projection", spy)
        dpcheck.audit(entry.mechanism, d, d_prime, entry.claim, samples=1_000_000, seed=0,
                      features=entry.features, float_features=entry.float_features,
                      sequential=True, stop_within=0.05)
    assert seen["all"] > seen["mine"] + 0.03


@pytest.mark.parametrize("value, message", [
    (0.0, r"stop_within=0\.0 must be > 0"), (-0.1, r"stop_within=-0\.1 must be > 0"),
    (float("inf"), r"stop_within=inf must be finite")])
def test_bad_stop_within(value, message):
    with pytest.raises(InvalidArgument, match=message):
        dpcheck.audit(laplace(1.0), [1], [0], dpcheck.PureDP(1.0), sequential=True,
                      stop_within=value)


def test_stop_within_needs_pilots():
    with pytest.raises(InvalidArgument, match=r"stop_within=0\.1 needs sequential=True"):
        dpcheck.audit(laplace(1.0), [1], [0], dpcheck.PureDP(1.0), stop_within=0.1)
    with pytest.raises(InvalidArgument, match=r"stop_within=0\.1 is not supported with "
                                              r"confirm='best'"):
        dpcheck.audit_pairs(laplace(1.0), [([1], [0]), ([1, 1], [1])], dpcheck.PureDP(1.0),
                            confirm="best", stop_within=0.1)


@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_bounds_cover_the_truth_when_stopped_for_precision(alpha, record_property):
    """Randomized response (k = 4, ε = 1) claimed 2-DP with ``stop_within=0.2``: most audits
    end at pilot 2, and the reported ``epsilon_lower`` exceeds the true ε in at most an α
    share of 120 seeds (the stopped procedure's bounds are those of the stage it stopped at,
    valid at that stage's level)."""
    mech = RandomizedResponse(1.0, 4)
    runs = 120
    results = [dpcheck.audit(mech, [0], [1], dpcheck.PureDP(2.0), samples=200_000, alpha=alpha,
                             seed=s, sequential=True, stop_within=0.2) for s in range(runs)]
    above = sum(r.epsilon_lower > mech.true_epsilon for r in results)
    stopped = sum(r.stages[-1].name != "final" for r in results)
    record_property("coverage", {"above_truth": above, "runs": runs, "stopped": stopped})
    assert stopped >= runs // 2
    assert above / runs <= alpha


@pytest.mark.parametrize("claim", [dpcheck.PureDP(2.0), dpcheck.ApproxDP(2.0, 1e-6),
                                   dpcheck.GaussianDP(3.0)], ids=["pure", "approx", "gdp"])
def test_a_sequential_audit_never_draws_more_than_its_budget(claim):
    """``samples`` is an upper limit per side: every pilot output is reused as exploration, so
    the final stage draws only what the pilots left (claims without Poissonized confirmation
    draw their pilots' budgets exactly; the final stage once drew one output too many)."""
    mech = Counted(1.0)
    r = dpcheck.audit(mech, [1, 0, 1], [1, 0], claim, samples=200_000, seed=0,
                      sequential=True, float_features=False)
    assert [s.name for s in r.stages] == ["pilot 1", "pilot 2", "final"]
    assert max(mech.drawn.values()) <= 200_000
    assert r.samples == r.budget == 200_000


def test_large_audits_run_their_pilots_chunked_on_the_executor(monkeypatch):
    """Above one exploration chunk (:data:`seq.REUSE_MAX`; scaled down here) the pilots' outputs
    are not kept: each pilot runs as a fixed audit does — no mechanism call larger than a chunk,
    confirmation on the executor — and the final stage explores afresh on the budget the pilots
    left, so the stages' budgets sum to ``samples`` and the result does not depend on the
    executor."""
    monkeypatch.setattr(seq, "REUSE_MAX", 4096)
    monkeypatch.setattr(explore_module, "EXPLORE_CHUNK", 4096)
    monkeypatch.setattr(confirm_module, "CHUNK", 4096)
    runs = {}
    for name, executor in (("serial", None), ("threads", ThreadPoolExecutor(2))):
        mech = Counted(1.0)
        r = dpcheck.audit(mech, [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), samples=200_000, seed=0,
                          sequential=True, float_features=False, executor=executor)
        assert mech.largest <= 4096
        assert max(mech.drawn.values()) <= 200_000
        runs[name] = r
    r = runs["serial"]
    assert [(s.name, s.samples) for s in r.stages] == [
        ("pilot 1", 2_000), ("pilot 2", 18_000), ("final", 180_000)]
    assert r.samples == 200_000 and 0.85 < r.epsilon_lower <= 1.0
    assert untimed(r.to_dict()) == untimed(runs["threads"].to_dict())
    mech = Counted(1.0)
    stopped = dpcheck.audit(mech, [1, 0, 1], [1, 0], dpcheck.PureDP(0.5), samples=200_000,
                            seed=0, sequential=True, float_features=False)
    assert stopped.violation and stopped.samples == 2_000 and mech.largest <= 4096
    assert max(mech.drawn.values()) <= 2_000


@pytest.mark.parametrize("claim, message", [
    (dpcheck.GaussianDP(2.75), r"stop_within=0\.2 needs a PureDP or ApproxDP claim: .* "
                               r"GaussianDP is a curve claim"),
    (dpcheck.PureDP(0.3), r"stop_within=0\.2 must be <= epsilon/2=0\.15"),
    (dpcheck.ApproxDP(0.0, 1e-3), r"stop_within=0\.2 must be <= epsilon/2=0\.0")])
def test_stop_within_that_cannot_mean_what_it_says_is_refused(claim, message):
    """A curve claim's parameter is not an ε (μ = 2.75 of a Gaussian-DP claim stopped a
    refutable audit at pilot 2 as "precise enough"), and above half the claimed ε the rule
    could never stop the audit."""
    with pytest.raises(InvalidArgument, match=message):
        dpcheck.audit(laplace(1.0), [1], [0], claim, sequential=True, stop_within=0.2)


def test_a_sequential_checkpoint_refused_by_a_fixed_audit_says_why(tmp_path):
    """The final stage checkpoints at its share of α (87.5 %): the fixed audit's refusal said
    "differs in alpha" to a user who had passed the same alpha; it now shows both values."""
    path = tmp_path / "audit.ckpt.json"
    kw = dict(samples=200_000, seed=0, float_features=False, checkpoint=path)
    dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), sequential=True, **kw)
    with pytest.raises(InvalidArgument, match=r"\(differs in alpha \(file 0\.04375, "
                                              r"now 0\.05\)\)"):
        dpcheck.audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), **kw)
