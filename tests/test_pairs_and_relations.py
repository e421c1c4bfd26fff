"""audit_pairs (α split over pairs), the QueryAnswers relation, and the global-RNG warning."""

from __future__ import annotations

import numpy as np
import pytest

import dpcheck
from algorithms.mechanisms.primitives import RandomizedResponse
from algorithms.zoo import get
from dpcheck import GlobalRandomStateWarning, InvalidArgument, PureDP, QueryAnswers, audit_pairs
from dpcheck.core.audit import exploration_size
from dpcheck.core.results import untimed
from dpcheck.core.audit_pairs import REFINE
from dpcheck.internal.rng import child


def test_query_answers_relation():
    r = QueryAnswers()
    assert r.are_neighbours([1] * 10, [2] * 9 + [0])
    assert not r.are_neighbours([1, 1], [2.5, 1])
    with pytest.raises(InvalidArgument, match="answer 1 moves by 2 > sensitivity 1"):
        r.check([1, 1], [1, 3])
    assert not QueryAnswers(1, monotone=True).are_neighbours([1, 1], [2, 0])
    assert QueryAnswers(1, monotone=True).are_neighbours([1, 1], [2, 1.5])
    assert not r.are_neighbours([1, 1], [1, 1, 1])
    with pytest.raises(InvalidArgument, match="sensitivity=0"):
        QueryAnswers(0)
    with pytest.raises(InvalidArgument, match="continuum"):
        list(r.neighbours([1, 2]))
    assert r.to_dict() == {"kind": "query_answers", "sensitivity": 1.0, "monotone": False}


def test_audit_pairs_splits_alpha_and_reports_the_largest_bound():
    """SVT4 (c = 1) is 0.175-DP on its worst pair and claimed 0.1: audit_pairs over the entry's
    pairs refutes it; each pair ran at alpha/len(pairs) on its own stream."""
    entry = get("svt4_c1")
    r = audit_pairs(entry.mechanism, entry.pairs, entry.claim, samples=300_000, seed=0,
                    relation=QueryAnswers())
    assert len(r.results) == len(entry.pairs)
    assert all(x.alpha == pytest.approx(0.05 / len(entry.pairs)) for x in r.results)
    assert r.violation and r.epsilon_lower == max(x.epsilon_lower for x in r.results)
    assert r.epsilon_lower <= entry.true_epsilon
    first = dpcheck.audit(entry.mechanism, *entry.pairs[0], entry.claim, samples=300_000,
                          alpha=0.05 / len(entry.pairs), seed=child(np.random.SeedSequence(0),
                                                                    "pair", 0))
    assert first.epsilon_lower == r.results[0].epsilon_lower
    with pytest.raises(dpcheck.PrivacyViolation):
        r.raise_if_violation()
    assert r.to_dict()["best"] == r.best


@pytest.mark.parametrize("pairs", [[], [([1], [0], [2])], 5])
def test_audit_pairs_rejects_bad_pairs(pairs):
    with pytest.raises(InvalidArgument, match="pair"):
        audit_pairs(lambda d, n, rng: rng.random(n), pairs, PureDP(1.0), samples=1000)


def test_mechanism_using_the_global_numpy_state_is_warned_about():
    def global_state_count(data, size, rng):
        return float(np.sum(data)) + np.random.laplace(0.0, 1.0, size)

    with pytest.warns(GlobalRandomStateWarning, match="global np.random state"):
        dpcheck.audit(global_state_count, [1], [0], PureDP(1.0), samples=5_000, seed=0)


# --- confirm="best": explore every pair, confirm the chosen one on the pooled budget ---------

_RR = RandomizedResponse(1.0, 4)
#: Four pairs of 4-ary randomized response, each exactly 1-DP (the true ε of every pair).
_RR_PAIRS = [([0], [1]), ([1], [2]), ([2], [3]), ([0], [3])]


class _Counting:
    """Wraps a mechanism and counts the outputs it is asked for (mechanism calls)."""

    def __init__(self, mech):
        self.mech, self.outputs = mech, 0

    def sample(self, data, size, rng):
        self.outputs += size
        return self.mech.sample(data, size, rng)


def test_confirm_best_costs_the_same_calls_and_confirms_one_pair_at_full_alpha():
    counted = _Counting(_RR)
    r = audit_pairs(counted, _RR_PAIRS, PureDP(1.0), samples=20_000, seed=3, confirm="best")
    budget = 2 * 20_000 * len(_RR_PAIRS)  # what confirm="each" draws (Poisson sizes aside)
    assert 0.97 * budget < counted.outputs <= budget
    assert r.confirm == "best" and len(r.results) == len(_RR_PAIRS) and len(r.scores) == 4
    assert [x is None for x in r.results].count(False) == 1 and r.results[r.best] is r.audit
    n_explore = exploration_size(20_000)
    assert r.audit.alpha == 0.05  # no Bonferroni factor over the pairs
    pooled = 4 * (20_000 - 2 * n_explore)  # the pooled budget, minus exploration and pilot
    # the two pairs leading on their pilot scores are re-explored on 10 % of the budget left to
    # one pair (its own exploration outputs plus fresh ones); the chosen one is confirmed on
    # the rest of the pooled budget
    more = r.audit.explore_samples - n_explore
    assert r.audit.explore_samples == round(0.1 * (n_explore + pooled)) > n_explore
    assert r.audit.confirm_samples == pooled - REFINE * more
    refined = [i for i, x in enumerate(r.refined) if x is not None]
    assert refined == sorted(np.argsort(-np.asarray(r.scores), kind="stable")[:REFINE])
    assert r.best == max(refined, key=lambda i: r.refined[i]) and r.p_value == r.audit.p_value
    assert 0.5 < r.epsilon_lower <= 1.0
    d = r.to_dict()
    assert d["confirm"] == "best" and sum(x is None for x in d["results"]) == 3
    assert d["refined"] == list(r.refined) and sum(x is None for x in d["refined"]) == 2
    again = audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), samples=20_000, seed=3, confirm="best")
    assert again.epsilon_lower == r.epsilon_lower  # same seed, same result
    one = [_RR_PAIRS[1]]  # a single pair: "best" is "each" (no pilot, same streams)
    a = audit_pairs(_RR, one, PureDP(1.0), samples=20_000, seed=3, confirm="best").audit
    b = audit_pairs(_RR, one, PureDP(1.0), samples=20_000, seed=3).audit
    assert [w.describe() for w in a.confirmed] == [w.describe() for w in b.confirmed]
    assert a.epsilon_lower == b.epsilon_lower


def test_confirm_best_confirms_the_pair_that_leads_after_re_exploration(monkeypatch):
    """The pilot counts rank the events each pair chose on its own small exploration; the
    :data:`~dpcheck.core.audit_pairs.REFINE` leaders are re-explored and the one whose re-chosen events
    project the larger bound on their validation half is confirmed. At seed 4 the pilot leader
    (pair 3) is not the refined leader (pair 2); the mutant that confirms the pilot leader
    (``REFINE = 1``) confirms pair 3 on the same pooled budget. Why: on SVT3 at 10⁶ per side
    per pair, seeds 0–19, the pilot choice confirmed the pair "one below, rest above" — whose
    learned events stay weak after re-exploration (0.063–0.082 at 9 of 10 seeds) — at seeds
    5 and 14 (0.063, 0.081 < the claimed 0.1); the refined choice refutes the claim at all 20
    (worst 0.101, mean 0.163 against 0.162; ``benchmarks/README.md``)."""
    import dpcheck.core.audit_pairs

    r = audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), samples=20_000, seed=4, confirm="best")
    assert int(np.argmax(r.scores)) == 3 and r.best == 2 == int(np.nanargmax(
        [-np.inf if x is None else x for x in r.refined]))
    monkeypatch.setattr(dpcheck.core.audit_pairs, "REFINE", 1)
    pilot = audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), samples=20_000, seed=4, confirm="best")
    assert pilot.best == 3 and pilot.scores == r.scores
    assert pilot.refined == (None, None, None, pilot.refined[3])


def _rare_atom(data, size, rng):
    """``data = [code]``: pair ``([0], [1])`` leaks ε = 0.05 through a coin, pair
    ``([2], [3])`` ε = 0.3; under every dataset the value 9 replaces the coin with probability
    2·10⁻⁴ (the same on both sides: it leaks nothing)."""
    eps = 0.05 if data[0] < 2 else 0.3
    heads = np.exp(eps) / (1 + np.exp(eps))
    out = (rng.random(size) < (1 - heads if data[0] % 2 else heads)).astype(np.int64)
    out[rng.random(size) < 2e-4] = 9
    return out


def test_confirm_best_settles_a_leader_resting_on_a_handful_of_counts(monkeypatch):
    """When the refined leader leads only by events seen fewer than
    :data:`~dpcheck.core.audit_pairs.HANDFUL` times in its validation half, a second pilot
    (``explore`` fresh outputs per side per re-explored pair, out of the confirmation) chooses
    the pair. At seed 0 the atom {9} of the ε = 0.05 pair is seen a handful of times under one
    dataset only and projects 1.09 against the ε = 0.3 pair's 0.30; the mutant without the
    second pilot (``HANDFUL = 0``) confirms the atom's pair and certifies 0.037, the settled
    audit confirms the other pair (pilot scores 0.008 and 0.27) and certifies 0.29 (of 0.3).
    At seed 5 the leader's best event is such an atom too (1.43), but the ε = 0.3 pair leads
    without it: no second pilot (the rule before, "the leader's best event rests on a
    handful", ran it at seeds 1, 5 and 7 for nothing). Over seeds 0–19 it runs at seed 0 only
    (``benchmarks/README.md``). At seed 2 nothing rests on a handful: the mutant's audit."""
    import dpcheck.core.audit_pairs

    pairs = [([0], [1]), ([2], [3])]
    kw = dict(samples=100_000, confirm="best")
    r = audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=0, **kw)
    assert r.refined[0] > 1.0 > r.refined[1] and r.settled is not None
    assert r.best == 1 and r.settled[1] > 0.2 > r.settled[0] and 0.25 < r.epsilon_lower <= 0.3
    n_explore = exploration_size(100_000)
    more = r.audit.explore_samples - n_explore
    pooled = 2 * (100_000 - 2 * n_explore)
    assert r.audit.confirm_samples == pooled - REFINE * more - REFINE * n_explore
    assert r.to_dict()["settled"] == list(r.settled)
    quiet = audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=2, **kw)
    assert quiet.settled is None and quiet.audit.confirm_samples == pooled - REFINE * more
    firm = audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=5, **kw)
    assert firm.refined[1] > 1.0 and firm.best == 1 and firm.settled is None
    monkeypatch.setattr(dpcheck.core.audit_pairs, "HANDFUL", 0)
    mutant = audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=0, **kw)
    assert mutant.settled is None and mutant.refined == r.refined
    assert mutant.best == 0 and mutant.epsilon_lower < 0.1
    same = audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=2, **kw)
    assert untimed(same.audit.to_dict()) == untimed(quiet.audit.to_dict())
    # a second pilot that would take more than a quarter of the confirmation is skipped (here
    # explore_fraction=0.3: 2·30,000 outputs per side against a confirmation of about 74,000)
    monkeypatch.setattr(dpcheck.core.audit_pairs, "_contested", lambda again, best: True)
    assert audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=0, explore_fraction=0.3,
                       **kw).settled is None
    assert audit_pairs(_rare_atom, pairs, PureDP(1.0), seed=2, **kw).settled is not None


def test_confirm_best_prefers_a_support_mismatch():
    """A pair whose outputs under D′ never hit an event seen under D (infinite ε) wins over
    pairs with a finite ratio, and is refuted."""
    def mech(data, size, rng):  # data = [shift]; shift 2 moves the support
        return np.floor(rng.random(size) * 4) + data[0]

    pairs = [([0], [0]), ([0], [2]), ([1], [1])]
    r = audit_pairs(mech, pairs, PureDP(1.0), samples=5_000, seed=0, confirm="best")
    assert r.best == 1 and r.violation and r.epsilon_lower > 1.0


def test_confirm_best_pools_the_budget_into_a_sharper_bound():
    """One pair leaks (ε = 2), three do not (ε = 0.5): "best" finds the leaky one on the
    exploration and pilot samples and certifies more of its ε than "each", because its counts
    are 4× larger and no Bonferroni factor 4 is paid (same seeds, same calls)."""
    mechs = {0: RandomizedResponse(0.5, 4), 1: RandomizedResponse(2.0, 4)}

    def mech(data, size, rng):  # data = [which, x]
        return mechs[data[0]].sample([data[1]], size, rng)

    pairs = [([0, 0], [0, 1]), ([0, 2], [0, 3]), ([1, 0], [1, 3]), ([0, 1], [0, 2])]
    claim = PureDP(1.0)
    each = np.array([audit_pairs(mech, pairs, claim, samples=1_000, seed=s).epsilon_lower
                     for s in range(10)])
    best = [audit_pairs(mech, pairs, claim, samples=1_000, seed=s, confirm="best")
            for s in range(10)]
    sharp = np.array([b.epsilon_lower for b in best])
    assert all(b.best == 2 for b in best)
    assert np.mean(sharp) > np.mean(each) + 0.1 and np.sum(sharp > each) >= 8, (each, sharp)


@pytest.mark.parametrize(("alpha", "runs"), [(0.05, 1000), (0.5, 200)])
def test_confirm_best_coverage_at_true_epsilon(alpha, runs, record_property):
    """Calibration (design §4 rule 3): four pairs, each exactly 1-DP, claimed at ε = 1; the
    chosen pair's bound exceeds 1 in at most an α share of the seeds.

    At α = 0.05, measured over seeds 0–999: 35 misses with half of the ranked α on the best
    validated candidate (:func:`dpcheck.events.slots.lead_weighted`), 30 with equal shares.
    Seeds 0–199 alone gave 12 (0.06) with the lead share: at 200 runs the miss rate's standard
    error (0.013) is as large as its margin below α, so the check runs 1,000 seeds (standard
    error 0.006, the margin 2.6 of them)."""
    over = sum(audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), samples=2_000, alpha=alpha, seed=s,
                           confirm="best").epsilon_lower > 1.0 for s in range(runs))
    record_property("miscoverage", {"count": over, "runs": runs, "alpha": alpha})
    assert over / runs <= alpha


def test_confirm_best_never_draws_one_stream_twice():
    """Selection and confirmation use different samples (design §4 rule 1): every mechanism
    call of a settled ``confirm="best"`` audit — exploration, pilot, re-exploration, second
    pilot, confirmation — starts from a generator state no other call started from. The
    calibration test above cannot see a second pilot that re-reads the confirmation's stream
    (forced on, choosing the pair on the confirmation's own counts moved its 1,000-seed count
    only from 32 to 46); this test fails on it."""
    starts = []

    def recorded(data, size, rng):
        starts.append(repr(rng.bit_generator.state["state"]))
        return _rare_atom(data, size, rng)

    r = audit_pairs(recorded, [([0], [1]), ([2], [3])], PureDP(1.0), samples=100_000, seed=0,
                    confirm="best")
    assert r.settled is not None and len(starts) > 10
    assert len(set(starts)) == len(starts)


def _one_dp_with_atom(data, size, rng):
    """``data = [code]``, pairs ``([2k], [2k + 1])``: an exactly 1-DP coin per pair (values
    ``2k``, ``2k + 1``), replaced by the value 9 with probability 10⁻³ under every dataset."""
    heads = np.e / (1 + np.e)
    out = (rng.random(size) < (1 - heads if data[0] % 2 else heads)).astype(np.int64)
    out += 2 * (data[0] // 2)
    out[rng.random(size) < 1e-3] = 9
    return out


def test_confirm_best_coverage_when_a_second_pilot_settles_the_pair(monkeypatch,
                                                                     record_property):
    """Calibration of the second pilot (:data:`~dpcheck.core.audit_pairs.HANDFUL`): four
    exactly 1-DP pairs whose shared atom is often the refined leader on a handful of counts,
    claimed at ε = 1, α = 0.05, 2·10⁴ per side per pair, seeds 0–999, with the second pilot
    forced on every audit: 32 bounds above 1 (as it runs by itself: 22, the second pilot at 49
    seeds; without it: 23)."""
    import dpcheck.core.audit_pairs

    monkeypatch.setattr(dpcheck.core.audit_pairs, "_contested", lambda again, best: True)
    pairs = [([0], [1]), ([2], [3]), ([4], [5]), ([6], [7])]
    over = settled = 0
    for s in range(1000):
        r = audit_pairs(_one_dp_with_atom, pairs, PureDP(1.0), samples=20_000, seed=s,
                        confirm="best")
        over += r.epsilon_lower > 1.0
        settled += r.settled is not None
    record_property("miscoverage", {"count": over, "runs": 1000, "alpha": 0.05})
    assert settled == 1000 and over / 1000 <= 0.05


def test_confirm_best_coverage_harness_catches_a_missing_bonferroni_factor():
    """The harness above can fail: the largest of four per-pair bounds, each at the full α
    (what confirm="each" would do without its Bonferroni factor), exceeds the truth in more
    than an α = 0.5 share of the 200 runs."""
    over = sum(max(dpcheck.audit(_RR, d, dp, PureDP(1.0), samples=2_000, alpha=0.5,
                                 seed=child(np.random.SeedSequence(s), "pair", i)).epsilon_lower
                   for i, (d, dp) in enumerate(_RR_PAIRS)) > 1.0 for s in range(200))
    assert over / 200 > 0.5


def test_confirm_best_rejects_bad_options():
    with pytest.raises(InvalidArgument, match="confirm='all' must be 'each' or 'best'"):
        audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), samples=1000, confirm="all")
    for confirm in ("best", "each"):  # the same error whichever way the pairs are confirmed
        with pytest.raises(InvalidArgument, match="sample=1000 is not an option of audit"):
            audit_pairs(_RR, _RR_PAIRS, PureDP(1.0), sample=1000, confirm=confirm)
    with pytest.raises(InvalidArgument, match=r"pairs\[1\]=\(\[0\], None\) must be a pair of "
                                              "datasets"):
        audit_pairs(_RR, [([0], [1]), ([0], None)], PureDP(1.0), samples=1000)
    with pytest.raises(InvalidArgument, match="must be > 0"):
        audit_pairs(_RR, _RR_PAIRS, PureDP(-1.0), samples=1000, confirm="best")
    with pytest.raises(InvalidArgument):
        audit_pairs(_RR, [([0], [1, 2])], PureDP(1.0), samples=1000, confirm="best",
                    relation=dpcheck.Replace())


def test_confirm_best_is_executor_independent_and_relearns_the_chosen_pair(monkeypatch):
    """A vector mechanism (five composed Laplace releases: learned scores are fitted) over two
    pairs: the chosen pair's re-exploration and its confirmation chunks on a thread pool give
    the result of the local run, bit for bit."""
    from concurrent.futures import ThreadPoolExecutor

    import dpcheck.core.confirm
    from algorithms.mechanisms.noisy_sums import RepeatedLaplace

    monkeypatch.setattr(dpcheck.core.confirm, "CHUNK", 20_000)  # several chunks per side
    mech = RepeatedLaplace(0.1, 5)
    pairs = [([1.0], [0.0]), ([0.0], [1.0])]
    kw = dict(samples=60_000, seed=4, confirm="best", float_features=False)  # real-valued ε
    local = audit_pairs(mech, pairs, PureDP(0.1), **kw)
    with ThreadPoolExecutor(2) as pool:
        remote = audit_pairs(mech, pairs, PureDP(0.1), executor=pool, **kw)
    n_explore = exploration_size(60_000)
    assert local.audit.explore_samples == round(0.1 * (n_explore + 2 * (60_000 - 2 * n_explore)))
    assert local.violation and 0.2 < local.epsilon_lower <= 0.5
    assert untimed(local.audit.to_dict()) == untimed(remote.audit.to_dict())
    assert local.scores == remote.scores


def test_confirm_best_caps_the_re_exploration_memory(monkeypatch):
    """The chosen pair's re-exploration holds at most ``MAX_EXPLORE_BYTES`` of outputs per side
    (SVT3 at 10⁸ per side per pair was killed for lack of memory without the cap). With the
    cap at 8,000 rows of five float64 coordinates the re-exploration stops there; the mutant,
    the uncapped re-exploration, takes 10,200 rows. The calls are unchanged: the
    rows not explored are confirmed (both pairs are re-explored: :data:`REFINE` is 2)."""
    import dpcheck.core.audit_pairs
    from algorithms.mechanisms.noisy_sums import RepeatedLaplace

    mech = RepeatedLaplace(0.1, 5)
    pairs = [([1.0], [0.0]), ([0.0], [1.0])]
    kw = dict(samples=60_000, seed=4, confirm="best", float_features=False)  # real-valued ε
    n_explore = exploration_size(60_000)
    uncapped = round(0.1 * (n_explore + 2 * (60_000 - 2 * n_explore)))
    assert uncapped == 10_200  # the cap below binds
    assert audit_pairs(mech, pairs, PureDP(0.1), **kw).audit.explore_samples == uncapped
    monkeypatch.setattr(dpcheck.core.audit_pairs, "MAX_EXPLORE_BYTES", 8_000 * 5 * 8)
    r = audit_pairs(mech, pairs, PureDP(0.1), **kw)
    assert r.audit.explore_samples == 8_000
    more = r.audit.explore_samples - n_explore
    # (here the refined leader leads by an event seen a handful of times: a second pilot of
    # n_explore per side per re-explored pair settles the choice, out of the confirmation)
    assert r.settled is not None
    assert r.audit.confirm_samples + 2 * more + 2 * n_explore == 2 * (60_000 - 2 * n_explore)
    monkeypatch.setattr(dpcheck.core.audit_pairs, "MAX_EXPLORE_BYTES", 10)  # below one exploration
    assert audit_pairs(mech, pairs, PureDP(0.1), **kw).audit.explore_samples == n_explore


@pytest.mark.parametrize("fraction, pairs, samples", [(0.9, 2, 3_000), (0.9, 2, 20_000),
                                                      (0.6, 10, 3_000), (0.5, 2, 20_000)])
def test_confirm_best_stays_within_its_budget_at_any_explore_fraction(fraction, pairs, samples):
    """The re-explorations of the leading pairs take at most half the pooled budget (at
    ``explore_fraction`` ≥ 0.5 two re-explorations of that share once left a negative
    confirmation size: 2·10⁶ outputs drawn against a budget of 12 000, then an internal
    error)."""
    drawn = [0]

    def mechanism(data, size, rng):
        drawn[0] += size
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    listed = ([([1, 0, 1], [1, 0]), ([0, 0], [0])] * 5)[:pairs]
    r = audit_pairs(mechanism, listed, PureDP(1.0), samples=samples, explore_fraction=fraction,
                    confirm="best", float_features=False, seed=0)
    assert drawn[0] <= 2 * samples * pairs
    assert r.audit.confirm_samples >= 1 and 0.0 < r.epsilon_lower <= 1.0
