"""Unit tests of algorithms.pure_agnostic (paper 002): exact laws vs samplers, the deterministic
properties of notes §4.4 (sensitivities, monotonicity, proper-h and m = 1 reductions,
data-independent selection, budget ledgers, discard rule, permutation invariance), golden values
of §6.3, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpcheck
from algorithms.pure_agnostic import (
    ItemLearner,
    PrivateCompare,
    PrivateMedian,
    PrivateMinError,
    PrivateThreshold,
    ThresholdLearner,
    UserLearner,
    as_users,
    everything,
    threshold_table,
)
from algorithms.pure_agnostic.binomial import compare_rule, learner_t, median_s, upper
from algorithms.pure_agnostic.data import all_functions
from algorithms.pure_agnostic.laplace_race import branch_probabilities
from algorithms.pure_agnostic.scores import (
    median_scores,
    surrogate_scores,
    threshold_user_errors,
    user_errors,
)
from algorithms.pure_agnostic.testbeds import clean, confusing, extreme

N = 4
C = threshold_table(N)
FAST = settings(max_examples=60, deadline=None, derandomize=True)

user = st.lists(st.tuples(st.integers(1, N), st.integers(0, 1)), min_size=3, max_size=3)
dataset = st.lists(user, min_size=0, max_size=4)


def _chi2_ok(pmf: dict, samples: np.ndarray) -> bool:
    keys = list(pmf)
    obs = np.array([np.sum(samples == k) for k in keys], dtype=float)
    exp = np.array([pmf[k] for k in keys]) * samples.size
    keep = exp > 5
    if keep.sum() < 2:
        return True
    o, e = obs[keep], exp[keep]
    e = e * o.sum() / e.sum()
    return stats.chisquare(o, e).pvalue > 1e-4


@pytest.mark.parametrize("mech", [
    PrivateCompare(1.0, 0.25, 0.2, 3, N),
    PrivateMinError(1.0, 0.25, 3, N),
    PrivateMinError(1.0, 0.25, 3, N, branches="printed"),
    PrivateMedian(1.0, 0, N, 1.0, 3, N),
    PrivateThreshold(2.0, 2, 0, 3, N),
    PrivateThreshold(2.0, 2, 1, 3, N, check_mid=False),
    UserLearner(1.0, 0.25, 3, C, everything(N), transcript=True),
    ThresholdLearner(2.0, 0.5, 3, N, transcript=True),
])
def test_sampler_matches_exact_law(mech) -> None:
    z = [clean(3), extreme(1, 1, 3), confusing(3), extreme(4, 0, 3)]
    pmf = mech.pmf(z)
    assert math.isclose(sum(pmf.values()), 1.0, abs_tol=1e-9)
    s = mech.sample(z, 60_000, np.random.Generator(np.random.PCG64(1)))
    assert set(np.unique(s).tolist()) <= set(pmf)
    assert _chi2_ok(pmf, s)


def test_branch_probabilities_sum_to_one_and_match_simulation() -> None:
    rng = np.random.Generator(np.random.PCG64(0))
    for mus in ((3, 1, 5), (0, None, 2), (4, 2, None), (10, 0, 20)):
        p = branch_probabilities(*mus, 1.3)
        assert math.isclose(sum(p), 1.0, abs_tol=1e-12)
        n = 400_000
        vm = mus[0] + rng.laplace(0, 1.3, n)
        vl = np.inf if mus[1] is None else mus[1] + rng.laplace(0, 1.3, n)
        vr = np.inf if mus[2] is None else mus[2] + rng.laplace(0, 1.3, n)
        ret = vm < np.minimum(vl, vr)
        assert abs(ret.mean() - p[0]) < 0.005
        assert abs((~ret & (vl < vr)).mean() - p[1]) < 0.005


@FAST
@given(dataset, user, user)
def test_count_sensitivities(d, u, v) -> None:
    """§4.4 items 1–2: every count moves by ≤ 1 (surrogate ≤ 2) when a user is added or replaced,
    and never decreases when one is added."""
    hyps = all_functions(N)
    for t in (0, 1):
        z = as_users(d + [u], 3, N)
        for zp, add in ((as_users(d, 3, N), True), (as_users(d + [v], 3, N), False)):
            e, ep = user_errors(z, C, t), user_errors(zp, C, t)
            assert np.abs(e - ep).max() <= 1 and abs(int(e.min()) - int(ep.min())) <= 1
            q, qp = surrogate_scores(z, C, hyps, t, 0), surrogate_scores(zp, C, hyps, t, 0)
            assert np.abs(q - qp).max() <= 2
            mq = median_scores(z.prefix_points(), 0, N, 0)
            mqp = median_scores(zp.prefix_points(), 0, N, 0)
            assert np.abs(mq - mqp).max() <= 1
            if add:
                assert (e >= ep).all() and (q >= qp).all() and (mq >= mqp).all()
    assert (threshold_user_errors(z, 1) == user_errors(z, C, 1)).all()


@FAST
@given(dataset.filter(len))
def test_proper_h_and_m1_reductions(d) -> None:
    """§4.4 items 3–4: Q(h) = E_t(h) for h ∈ C (s = 0); with m = 1 the user-level learner's
    exponential mechanism is the item learner's at ε/2."""
    z = as_users(d, 3, N)
    for t in (0, 1, 2):
        assert (surrogate_scores(z, C, C, t, 0) == user_errors(z, C, t)).all()
    items = [rec for u in d for rec in u]
    ul = UserLearner(2.0, 0.3, 1, C, everything(N))
    il = ItemLearner(1.0, C, everything(N))
    users1 = [[r] for r in items]
    p_user, p_item = ul.pmf(users1), il.pmf(items)
    assert all(math.isclose(p_user[k], p_item[k], rel_tol=1e-9) for k in p_item)


def test_item_relation_is_user_level_with_m_1() -> None:
    """Item level is m = 1: add/remove-one-example and add/remove-one-user-of-one agree."""
    d, dp = [(1, 1), (3, 0)], [(1, 1), (3, 0), (4, 0)]
    assert dpcheck.AddRemove().are_neighbours(d, dp)
    assert dpcheck.UserLevel(1, mode="add_remove").are_neighbours([[r] for r in d],
                                                                  [[r] for r in dp])
    il = ItemLearner(1.0, C)
    assert il.pmf(d) == il.pmf([[r] for r in d])


def test_permutation_invariance_and_discard_rule() -> None:
    z = [clean(4), extreme(1, 1, 4), confusing(4)]
    tl = ThresholdLearner(2.0, 0.5, 4, N)
    assert tl.pmf(z) == pytest.approx(tl.pmf(z[::-1]), abs=1e-12)
    # α = 0.5: m_eff = ⌊1/α²⌋ = 4, so a fifth example per user is discarded
    z5 = [list(u) + [(2, 1)] for u in z]
    assert ThresholdLearner(2.0, 0.5, 5, N).pmf(z5) == pytest.approx(tl.pmf(z), abs=1e-12)


def test_budget_ledgers() -> None:
    """§4.4 item 6: the releases sum to the ε passed in."""
    assert math.isclose(sum(PrivateMinError(1.0, 0.1, 2, N).ledger), 1.0)
    assert math.isclose(sum(PrivateThreshold(1.0, 5, 0, 2, N).ledger()), 1.0)
    assert math.isclose(sum(UserLearner(1.0, 0.1, 2, C).ledger), 1.0)
    assert math.isclose(sum(ThresholdLearner(1.0, 0.1, 2, N).ledger), 1.0)
    assert sum(PrivateMinError(1.0, 0.1, 2, N, call_epsilon=1.0).ledger) > 1.0  # B3


@pytest.mark.parametrize("m, eta, alpha, want", [
    (1, 0.1, 0.1, 0), (4, 0.1, 0.1, 0), (16, 0.1, 0.1, 1), (25, 0.3, 0.2, 8), (100, 0.1, 0.1, 12)])
def test_learner_t_golden(m, eta, alpha, want) -> None:
    """Golden values of notes §6.3 (argmax of the gap, ties to the smallest)."""
    assert learner_t(m, eta, alpha) == want


def test_compare_and_median_selection_golden() -> None:
    assert compare_rule(4, 0.5, 0.1)[1] == 2
    assert compare_rule(16, 0.0625, 0.1)[1] == 1
    for k in range(1, 9):
        assert median_s(16, (2 / 3) ** (k - 1))[1] == 0
    mp, _, tau = compare_rule(4, 0.99, 0.5)
    assert tau <= 1.0 and mp == 4  # τ clamped (§3.2)
    assert upper(4, 1.2, 1) == 1.0  # probabilities clamped to [0, 1]


def test_selection_is_data_independent() -> None:
    a = PrivateCompare(1.0, 0.3, 0.1, 4, N)
    assert a.rule == PrivateCompare(1.0, 0.3, 0.1, 4, N).rule == compare_rule(4, 0.3, 0.1)


@pytest.mark.parametrize("call, name", [
    (lambda: PrivateCompare(-1.0, 0.2, 0.1, 2, N), "epsilon"),
    (lambda: PrivateCompare(1.0, 1.5, 0.1, 2, N), "eta"),
    (lambda: PrivateMinError(1.0, 1.0, 2, N), "alpha"),
    (lambda: PrivateMedian(1.0, 3, 2, 0.5, 2, N), "hi"),
    (lambda: PrivateMedian(1.0, 0, 9, 0.5, 2, N), "hi"),
    (lambda: PrivateThreshold(1.0, 0, 0, 2, N), "rounds"),
    (lambda: PrivateThreshold(1.0, 2, 0, 2, N, theta=1.0), "theta"),
    (lambda: PrivateMinError(1.0, 0.1, 2, N, branches="other"), "branches"),
    (lambda: PrivateCompare(1.0, 0.2, 0.1, 2, N).pmf([[(1, 0)]]), "m=2"),
    (lambda: PrivateCompare(1.0, 0.2, 0.1, 2, N).pmf([[(5, 0), (1, 0)]]), "outside"),
    (lambda: PrivateCompare(1.0, 0.2, 0.1, 2, N).pmf([[(1, 2), (1, 0)]]), "label"),
    (lambda: ItemLearner(1.0, np.zeros((2, 3, 1))), "truth table"),
])
def test_bad_input_names_the_argument(call, name) -> None:
    with pytest.raises(dpcheck.InvalidArgument, match=name):
        call()


@FAST
@given(dataset, st.integers(0, N), st.integers(0, N), st.integers(0, 2))
def test_fast_median_scores_match_prefix_form(d, lo, hi, s) -> None:
    from algorithms.pure_agnostic.scores import median_scores_sorted

    lo, hi = min(lo, hi), max(lo, hi)
    z = as_users(d, 3, N)
    want = median_scores(z.prefix_points(), lo, hi, s)
    got = median_scores_sorted(np.sort(z.x, axis=1), N, lo, hi, s)
    assert (want == got).all()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(1, 9), st.integers(0, 5),
       st.booleans(), st.data())
def test_sparse_threshold_user_errors_match_the_mistake_table(n, m, N, t, strict, data):
    """threshold_user_errors (difference array over each user's own points, issue 27 speed-up)
    equals the count over the dense mistake table of threshold_mistakes, ties and repeated
    points included."""
    from algorithms.pure_agnostic.data import Users
    from algorithms.pure_agnostic.scores import (errors_from_steps, threshold_mistakes,
                                                 threshold_steps)
    x = np.array(data.draw(st.lists(st.integers(1, N), min_size=n * m, max_size=n * m)))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n * m, max_size=n * m)))
    users = Users(x.reshape(n, m), y.reshape(n, m), N)
    mist = threshold_mistakes(users)
    want = ((mist > t) if strict else (mist >= t)).sum(axis=0)
    got = threshold_user_errors(users, t, strict=strict)      # dense or sparse by size
    steps = errors_from_steps(threshold_steps(users), N, t, strict=strict)   # always sparse
    assert got.dtype == steps.dtype == np.int64
    assert (got == want).all() and (steps == want).all()


def _label_counts(z: np.ndarray, domain: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = z[:, 0], z[:, 1]
    return (np.bincount(x[y == 1] - 1, minlength=domain),
            np.bincount(x[y == 0] - 1, minlength=domain))


@FAST
@given(st.lists(st.tuples(st.integers(1, N), st.integers(0, 1)), min_size=0, max_size=12),
       st.integers(0, 2**N - 1), st.booleans())
def test_item_scores_from_counts_match_the_examples(z, seed, flip) -> None:
    """surrogate_scores_items (issue 27: the item-level score is linear in the label counts)
    equals surrogate_scores on the examples (t = s = 0); the batched law of ItemLearner equals
    its pmf, improper H and the sign mutant included."""
    from algorithms.pure_agnostic import Representation
    from algorithms.pure_agnostic.data import as_items
    from algorithms.pure_agnostic.scores import surrogate_scores_items

    hyps = all_functions(N)[np.random.default_rng(seed).permutation(2**N)[:7]]
    arr = np.array(z, dtype=np.int64).reshape(-1, 2)
    ones, zeros = _label_counts(arr, N)
    want = surrogate_scores(as_items(arr, N), C, hyps, 0, 0)
    got = surrogate_scores_items(ones[None], zeros[None], C, hyps)
    assert got.dtype == np.int64 and (got[0] == want).all()
    mech = ItemLearner(1.0, C, Representation((C, hyps), "subset"), sign=-1 if flip else 1)
    law: dict[int, float] = {}
    parts = mech.probabilities_counts(ones[None], zeros[None])
    for cs, ps in parts:
        for c, p in zip(cs.tolist(), ps[0].tolist()):
            law[c] = law.get(c, 0.0) + p / len(parts)
    pmf = mech.pmf(arr)
    assert set(law) == set(pmf)
    assert max(abs(law[k] - pmf[k]) for k in pmf) < 1e-12


def test_item_sample_counts_matches_the_per_dataset_trial() -> None:
    """Issue 27's vectorised Theorem 3.4 trial (Multinomial label counts + sample_counts) has the
    law of the old one (n examples from sample_users, then ItemLearner.sample): two-sample
    chi-square on the released codes, 1500 trials each, N = 16 noisy threshold, n = 300; and
    sample_counts on one repeated dataset vs that dataset's pmf (20 000 runs)."""
    from algorithms.pure_agnostic.testbeds import Distribution, sample_users

    dist = Distribution.noisy_threshold(16, cut=8, noise=0.1)
    c16 = threshold_table(16)
    mech = ItemLearner(1.0, c16)
    rng = np.random.Generator(np.random.PCG64(3))
    old = np.array([mech.sample(sample_users(dist, 300, 1, rng)[0][:, 0, :], 1, rng)[0]
                    for _ in range(1500)])
    counts = rng.multinomial(300, np.r_[dist.px * (1 - dist.p1), dist.px * dist.p1], size=1500)
    new = mech.sample_counts(counts[:, 16:], counts[:, :16], rng)
    keys = np.union1d(old, new)
    table = np.array([[np.sum(old == k) for k in keys], [np.sum(new == k) for k in keys]])
    big = table.sum(axis=0) >= 20
    merged = np.c_[table[:, big], table[:, ~big].sum(axis=1, keepdims=True)]
    merged = merged[:, merged.sum(axis=0) > 0]
    assert stats.chi2_contingency(merged).pvalue > 1e-4
    z = sample_users(dist, 300, 1, rng)[0][:, 0, :]
    ones, zeros = _label_counts(z, 16)
    s = mech.sample_counts(np.repeat(ones[None], 20_000, 0), np.repeat(zeros[None], 20_000, 0),
                           rng)
    pmf = mech.pmf(z)
    assert set(np.unique(s).tolist()) <= set(pmf) and _chi2_ok(pmf, s)


@pytest.mark.parametrize("m, n, rep, sign, branches", [
    (1, 40, None, 1, "proof"), (16, 30, None, 1, "proof"), (4, 40, "decoys", 1, "proof"),
    (4, 25, "missing", 1, "proof"), (4, 25, None, -1, "proof"), (3, 20, None, 1, "big_t")])
def test_user_learner_sample_datasets_matches_pmf(m, n, rep, sign, branches) -> None:
    """Issue 27's vectorised Theorem 4.6 trial: UserLearner.sample_datasets (one run per dataset,
    batched.py) on 10 000 copies of one dataset follows UserLearner.pmf of that dataset
    (chi-square), for m = 1, 4, 16, improper H (decoys), the B16 representation, the sign
    mutant, and a t above m' (α = 0.9: the E_t table's zero columns); batched D_0 takes the
    count-table path or the block path (DISTINCT = 0) with the same outputs."""
    from algorithms.pure_agnostic import Representation, decoys
    from algorithms.pure_agnostic import batched
    from algorithms.pure_agnostic.testbeds import Distribution, sample_users

    c16 = threshold_table(16)
    dist = (Distribution.heavy_point(16, 8, heavy=0.85) if rep == "decoys"
            else Distribution.noisy_threshold(16, cut=8, noise=0.1))
    r = {None: None, "decoys": decoys(c16, 20, 4, seed=7),
         "missing": Representation((np.delete(c16, 8, axis=0),), "subset")}[rep]
    mech = UserLearner(1.0, 0.9 if branches == "big_t" else 0.1, m, c16, r, sign=sign)
    rng = np.random.Generator(np.random.PCG64(5))
    z = sample_users(dist, n, m, rng)[0]
    pmf = mech.pmf(z)
    s = mech.sample_datasets(np.repeat(z[None], 10_000, 0), rng)
    assert set(np.unique(s).tolist()) <= set(pmf) and _chi2_ok(pmf, s)
    few = np.repeat(z[None], 50, 0)
    want = mech.sample_datasets(few, np.random.Generator(np.random.PCG64(9)))
    old, batched.DISTINCT = batched.DISTINCT, 0
    try:
        got = mech.sample_datasets(few, np.random.Generator(np.random.PCG64(9)))
    finally:
        batched.DISTINCT = old
    assert (want == got).all()
    with pytest.raises(dpcheck.InvalidArgument, match="accounting"):
        UserLearner(1.0, 0.1, m, c16, accounting="item").sample_datasets(few, rng)


@FAST
@given(dataset, st.integers(0, 2**N - 1))
def test_disagreements_by_point_sets_match_the_count_form(d, seed) -> None:
    """scores.disagreements at s = 0 (issue 27: users' point-set bit masks against the region
    masks code(c) XOR code(h)) equals D_0 from the dcnt product of the count form."""
    from algorithms.pure_agnostic.scores import disagreements

    z = as_users(d, 3, N)
    hyps = all_functions(N)[np.random.default_rng(seed).permutation(2**N)[:6]]
    ones, zeros = z.label_counts()
    diff = (C[:, None, :] != hyps[None, :, :]).astype(np.int64)
    dcnt = (ones + zeros) @ diff.reshape(-1, N).T
    want = (dcnt > 0).sum(axis=0).reshape(C.shape[0], hyps.shape[0])
    got = disagreements(z, C, hyps, 0)
    assert got.dtype == np.int64 and (got == want).all()
    assert (disagreements(z, C, hyps, 1) == (dcnt > 1).sum(axis=0).reshape(want.shape)).all()
