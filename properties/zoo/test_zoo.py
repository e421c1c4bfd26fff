"""The mechanism zoo as property tests (issue 3).

* Every correct entry (tier A) passes its advertised claim on every listed worst-case pair.
* Every buggy entry (tiers B, C) is reported as a violation on at least one of its pairs (audited
  in order, its ``LEAD_PAIR`` first, until one refutes the claim).
* Every bound is honest: ``epsilon_lower <= true ε`` (for ``true_epsilon_is_bound`` entries the
  bound is an upper bound on the truth, so this still must hold).

Budget: ``SAMPLES`` outputs per side per pair (``LARGER_BUDGET`` for three rare or small
violations; all times ``--dpcheck-scale``). Each audit runs at
its share of the family α (the plugin splits ``--dpcheck-alpha`` over the claim tests and spends
it over the calls within a test). Some violations are smaller than what that budget can resolve:
``BELOW_RESOLUTION`` lists them with the reason; for those the test records the bound it
reached and checks only its honesty — it does not pretend to detect them. The benchmark
(``python benchmarks/zoo.py --budgets 1e5 1e6 1e7``) measures them at larger budgets.
"""

from __future__ import annotations

import math

import pytest

from algorithms.zoo import ZooEntry, entries

SAMPLES = 1_000_000

#: Power specification: buggy entries that need more than SAMPLES per side at the suite's
#: per-test level. That level is family α / (number of claim tests), ~1e-4 to 5e-5 for a
#: family of 100-200 claim tests; entries whose bound at SAMPLES came within ~20% of the claim
#: get 4x the samples (measured with benchmarks/zoo.py and the properties report).
LARGER_BUDGET = {
    "classic_gaussian_eps8": 4_000_000,  # δ(8) = 0.236 vs claimed 0.1: tail events near e^8
    "delta_leak_1e-04": 4_000_000,       # the leaked atom has probability 1e-4
    "svt4_c1": 4_000_000,                # 0.175 vs 0.1, worst events have probability ~1e-2
    "svt4_c4": 4_000_000,                # bound 0.104 at 1e6 with 117 claim tests
    "laplace_insufficient_r0.9": 4_000_000,    # true 0.111 vs 0.1; bound 0.0997 at 1e6
    "truncated_geometric_nominal": 4_000_000,  # true 0.118 vs 0.1; bound 0.109 at 1e6
    "svt3": 4_000_000,  # learned scores (issue #14): bound 0.09-0.11 at 1e6, caught at 4e6
}

#: Buggy entries whose violation cannot be resolved at SAMPLES per side at the suite's per-test
#: level (~1e-4); the reason gives the gap and the scale needed.
BELOW_RESOLUTION = {
    "laplace_insufficient_r0.99": "true ε 0.1010 vs claim 0.1: a 1% gap; the bound's resolution "
                                  "at 1e6 is ~0.004 (needs ~1e8 samples per side)",
    "laplace_insufficient_r0.95": "true ε 0.1053 vs 0.1: resolution at 1e6 and α≈1e-4 is ~0.005",
    "subsampled_laplace_linear_calibration": "true ε 0.1050 vs 0.1: a 5% gap, as r=0.95",
    "delta_leak_1e-05": "the leaked output has probability 1e-5: ~10 hits in 1e6 samples, needs "
                        "~1e7 per side",
    "delta_leak_1e-06": "the leaked output has probability 1e-6: needs ~1e8 per side",
}

ENTRIES = entries()


def _param(entry: ZooEntry):
    expect = "holds" if entry.correct or entry.name in BELOW_RESOLUTION else "violation"
    return pytest.param(entry, id=entry.name,
                        marks=pytest.mark.claim(kind="privacy", expect=expect))


#: Buggy entries whose largest loss reachable at the suite's budget is not on their first pair:
#: the index of the pair audited first. svt3: ``half_half`` (exact loss 0.30; audited 0.18 at
#: 4e6 per side, seed 0) — ``all_above`` attains the true 0.5 only through an event of
#: probability ~4e-6 and audits at ~0.10 there.
LEAD_PAIR = {"svt3": 3}


def _audit_all_pairs(entry: ZooEntry, dp_audit, *, until_violation: bool = False):
    """Audit the entry's pairs (its lead pair first); with ``until_violation``, stop after the
    first pair whose audit refutes the claim (a buggy entry needs one witness; the calls'
    α shares fall as 6/(π² i²), so the most revealing pair goes first)."""
    results = []
    pairs = list(entry.pairs)
    lead = LEAD_PAIR.get(entry.name, 0)
    for d, d_prime in [pairs[lead], *pairs[:lead], *pairs[lead + 1:]]:
        samples = LARGER_BUDGET.get(entry.name, SAMPLES)
        results.append(dp_audit(entry.mechanism, d, d_prime, entry.claim, samples=samples,
                                relation=entry.relation, features=entry.features,
                                float_features=entry.float_features))
        if until_violation and results[-1].violation:
            break
    for r in results:
        assert r.epsilon_lower <= entry.true_epsilon + 1e-12, (
            f"{entry.name}: epsilon_lower={r.epsilon_lower} exceeds the true epsilon "
            f"{entry.true_epsilon}: the auditor's bound is invalid")
    return results


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES if e.correct])
def test_correct_mechanism_passes_its_claim(entry, dp_audit):
    """Tier A: no violation on any worst-case pair (dp_audit raises PrivacyViolation if one is
    found), and the bound stays below the true ε."""
    _audit_all_pairs(entry, dp_audit)


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES
                                   if not e.correct and e.name not in BELOW_RESOLUTION])
def test_buggy_mechanism_is_caught(entry, dp_audit):
    """Tiers B and C: a violation on at least one pair (the plugin fails the test otherwise),
    with an honest bound. Pairs are audited until the first one refutes the claim."""
    results = _audit_all_pairs(entry, dp_audit, until_violation=True)
    best = max(r.epsilon_lower for r in results)
    if math.isfinite(entry.true_epsilon) and not entry.true_epsilon_is_bound:
        assert best <= entry.true_epsilon


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES if e.name in BELOW_RESOLUTION])
def test_buggy_mechanism_below_resolution_is_measured_honestly(entry, dp_audit, dp_record):
    """Violations too small for the suite's budget: record the bound reached; it must be honest
    (≤ true ε). A violation found anyway would fail this test as 'unexpected' — then the entry
    should move out of BELOW_RESOLUTION."""
    results = _audit_all_pairs(entry, dp_audit)
    dp_record("below_resolution", {
        "mechanism": entry.name, "true_epsilon": entry.true_epsilon,
        "claimed_epsilon": entry.claim.epsilon,
        "epsilon_lower": max(r.epsilon_lower for r in results),
        "samples_per_side": results[0].samples, "reason": BELOW_RESOLUTION[entry.name]})


def test_zoo_is_complete():
    """The issue's minimum zoo: tiers A, B and C of anchors-auditing.md §7 are represented."""
    names = {e.name for e in ENTRIES}
    for required in ("laplace", "geometric", "randomized_response", "report_noisy_max_laplace",
                     "report_noisy_max_exponential", "exponential_mechanism", "svt1", "svt2",
                     "analytic_gaussian", "truncated_geometric", "laplace_parallel",
                     "laplace_scale_eps", "noisy_max_value_laplace", "svt4_c1", "svt4_c2",
                     "svt4_c4", "forgotten_composition", "sensitivity_underestimate",
                     "classic_gaussian_eps8", "truncated_geometric_nominal", "rappor_one_time",
                     "svt3", "svt5", "svt6", "noisy_max_value_exponential",
                     "noise_scale_from_data", "noise_seeded_from_data", "naive_float_laplace"):
        assert required in names, required
    assert {e.tier for e in ENTRIES} == {"A", "B", "C"}
    assert sum(1 for e in ENTRIES if e.name.startswith("delta_leak_")) == 5
    assert sum(1 for e in ENTRIES if e.name.startswith("laplace_insufficient_r")) == 5
