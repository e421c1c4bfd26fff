"""Support candidates (:mod:`dpcheck.events.support`, issue 30 item 2): a value produced under one
dataset only, seen a few times during exploration, is confirmed as an event of its own; what it
costs (α share, no false alarms) and what it rules out (``support_floor``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

import dpcheck
from algorithms.zoo import get
from dpcheck.core.certify import family_levels
from dpcheck.errors import InvalidArgument
from dpcheck.events.event import Event
from dpcheck.events.support import SUPPORT_SHARE, support_floor


class RareValue:
    """4-ary randomized response at ``eps`` on the first record; under first record 1 the
    output is the extra value 4 with probability ``leak`` (under 0 never), and under both the
    value 5 with probability ``common_rare`` (a rare value both sides share)."""

    def __init__(self, eps: float, leak: float, common_rare: float = 0.0) -> None:
        self.eps, self.leak, self.common_rare = eps, leak, common_rare

    def __call__(self, data, size, rng):
        value = int(np.asarray(data)[0])
        keep = math.exp(self.eps) / (math.exp(self.eps) + 3)
        other = rng.integers(0, 3, size)
        other += other >= value
        out = np.where(rng.random(size) < keep, value, other)
        u = rng.random(size)
        if value == 1:
            out = np.where(u < self.leak, 4, out)
        out = np.where((u >= self.leak) & (u < self.leak + self.common_rare), 5, out)
        return out.astype(np.int64)


def _leak_audit(seed: int, support: bool) -> dpcheck.AuditResult:
    e = get("delta_leak_1e-04")  # w.p. 1e-4 the exact sum, else sum + Lap(1/0.1); claim δ = 1e-5
    d, dp = e.pairs[0]
    return dpcheck.audit(e.mechanism, d, dp, e.claim, samples=300_000, seed=seed,
                         float_features=False, support=support)


def test_a_value_leaked_with_probability_1e_4_is_refuted_at_3e5():
    """Seed 2: exploration (3·10⁴ per side) sees the leaked sum too few times for the ranked
    selection, which picks Laplace intervals and passes; the support candidate confirms it
    (k_q = 0) and refutes the claim. ``benchmarks/rare_events.py``: 20 of 20 seeds with it,
    10 of 20 without."""
    without, with_ = _leak_audit(2, False), _leak_audit(2, True)
    assert not without.violation
    assert with_.violation and with_.delta_lower > 1e-5
    w = with_.witness
    assert w.event.support and w.direction == "d>d_prime" and w.bound.k_q == 0
    assert 1.0 in w.event.values  # the leaked exact sum of d = [1, 0, ...] is in the set
    assert "seen under one dataset only" in w.event.describe()


def test_support_candidates_hold_a_tenth_of_alpha_and_confirm_nothing_on_a_continuous_law():
    def laplace(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    r = dpcheck.audit(laplace, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=100_000, seed=3,
                      float_features=False)
    support = [w for w in r.confirmed if w.event.support]
    ranked = [w for w in r.confirmed if not w.event.support]
    assert [w.direction for w in support] == ["d>d_prime", "d_prime>d"]
    assert all(w.bound.k_p == 0 and w.bound.k_q == 0 for w in support)  # single draws: mass 0
    assert sum(w.bound.alpha for w in support) == pytest.approx(0.05 * SUPPORT_SHARE)
    assert sum(w.bound.alpha for w in r.confirmed) == pytest.approx(0.05)
    share = 0.05 * (1 - SUPPORT_SHARE)  # half to the lead (here the strong slot's, the last)
    assert [w.bound.alpha for w in ranked] == pytest.approx([share / 4, share / 4, share / 2])
    assert not r.violation and 0.5 < r.epsilon_lower <= 1.0
    off = dpcheck.audit(laplace, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=100_000,
                        seed=3, float_features=False, support=False)
    assert not any(w.event.support for w in off.confirmed) and off.support_floor is None
    doc = r.to_dict()
    ev = [c for c in doc["confirmed"] if c["event"].get("support")][0]["event"]
    assert ev["n_values"] > 1000 and len(ev["values"]) == 20 and ev["values_truncated"]


def test_weighted_levels_sum_to_alpha():
    e = Event(0, "output", "le", high=0.0)
    from dpcheck.events.event import Candidate
    chosen = [Candidate(e, "d>d_prime", 0.0, 0, 0) for _ in range(3)]
    chosen += [Candidate(e, "d>d_prime", 0.0, 0, 0, weight=0.25)]
    levels = family_levels(chosen, 0.05)
    assert sum(levels) == pytest.approx(0.05) and levels[3] == pytest.approx(levels[0] / 4)


def test_support_floor_is_a_valid_power_statement():
    """At 1.1× the stated floor a one-sided value is refuted on ≥ 90 % of seeds (exact
    binomial test of the refutation rate against 0.9, one-sided, level 0.001); at a tenth
    of it on few."""
    claim = dpcheck.PureDP(0.5)
    n = 20_000
    probe = dpcheck.audit(RareValue(0.5, 0.01), [1], [0], claim, samples=n, seed=0)
    floor = probe.support_floor
    assert floor is not None and 1e-4 < floor < 0.01
    hits = sum(dpcheck.audit(RareValue(0.5, 1.1 * floor), [1], [0], claim, samples=n,
                             seed=100 + s).violation for s in range(60))
    assert binomtest(hits, 60, 0.9, alternative="less").pvalue > 1e-3, hits
    low = sum(dpcheck.audit(RareValue(0.5, floor / 10), [1], [0], claim, samples=n,
                            seed=200 + s).violation for s in range(20))
    assert low <= 10


def test_no_false_alarms_from_a_rare_value_both_sides_share():
    """A value of mass 10⁻³ under both datasets (its ratio is 1) puts itself in a support set
    whenever one side happens to see it during exploration and the other not; confirmation
    counts it on fresh outputs, so the audit at the exact ε = 0.5 stays calibrated: false
    alarms over 100 seeds ≤ 12 (exact binomial 0.999 upper quantile at α = 0.05 is 12)."""
    claim = dpcheck.PureDP(0.5)  # randomized response on the pair is exactly 0.5-DP
    alarms = sum(dpcheck.audit(RareValue(0.5, 0.0, 1e-3), [1], [0], claim, samples=20_000,
                               seed=s).violation for s in range(100))
    assert alarms <= 12


def test_sorted_count_equals_the_mask_count():
    rng = np.random.default_rng(5)
    vals = np.unique(np.round(rng.normal(size=2000), 2))
    x = np.round(rng.normal(size=50_000), 2)
    e = Event(0, "output", "atoms", values=vals)
    assert e.count([x]) == int(np.count_nonzero(e.mask([x])))
    dup = Event(0, "output", "atoms", values=np.repeat(vals[:300], 2))  # not strictly increasing
    assert dup.count([x]) == int(np.count_nonzero(dup.mask([x])))


def test_bad_support_argument():
    with pytest.raises(InvalidArgument, match="support='yes' must be True or False"):
        dpcheck.audit(RareValue(0.5, 0.0), [1], [0], dpcheck.PureDP(1.0), samples=1000,
                      support="yes")


def test_support_floor_edges():
    assert support_floor(0, 1000, alpha=0.01, epsilon=1.0, delta=0.0) == math.inf
    assert support_floor(100, 100, alpha=1e-6, epsilon=5.0, delta=0.5) == math.inf
    f1 = support_floor(10_000, 90_000, alpha=0.0025, epsilon=1.0, delta=0.0)
    f2 = support_floor(100_000, 900_000, alpha=0.0025, epsilon=1.0, delta=0.0)
    assert f2 < f1 / 5  # ~1/n
    # exploration-bound: with 10 exploration outputs and a huge confirmation the value must be
    # seen with probability 0.9, i.e. 1 − (1 − p)^10 ≥ 0.9
    seen_only = 1 - 0.1 ** (1 / 10)
    assert seen_only <= support_floor(10, 10**6, alpha=0.0025, epsilon=1.0,
                                      delta=0.0) <= seen_only * (1 + 1e-5)
