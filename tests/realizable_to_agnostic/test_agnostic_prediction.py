"""Unit tests of algorithms.realizable_to_agnostic.agnostic_prediction (seed 000 §4): the
partition law vs brute force, pmf normalisation, sampler vs exact pmf (independent code paths:
the sampler draws the portions, the pmf uses :func:`hits_law`), determinism, validation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic_prediction import (
    PRED_BUGS,
    AgnosticPrediction,
    ProcedureP,
    hits_law,
)
from algorithms.realizable_to_agnostic.buggy import (
    ReleaseVotesP,
    ReleaseVotesPrediction,
    SortedPartitionP,
    SortedPartitionPrediction,
)
from dpcheck.errors import InvalidArgument


def _data(rng: np.random.Generator, n: int, dom: int) -> np.ndarray:
    return np.stack([rng.integers(0, dom, n), rng.integers(0, 2, n)], 1)


@pytest.mark.parametrize("k, r", [(7, 3), (6, 6), (9, 2), (5, 1)])
def test_hits_law_matches_brute_force(k: int, r: int) -> None:
    """Uniform random partition (portions of ⌊k/r⌋, leftover dropped): every arrangement of
    the m marked points over the k slots enumerated."""
    law = hits_law(k, r)
    npr = k // r
    for m in range(k + 1):
        counts = np.zeros(r + 1)
        for pos in itertools.combinations(range(k), m):
            hit = {p // npr for p in pos if p < r * npr}
            counts[len(hit)] += 1
        assert np.allclose(law[m], counts / math.comb(k, m), atol=1e-12)


def test_hits_law_bagging_rows_sum_to_one() -> None:
    law = hits_law(10, 4, bug="bagging")
    assert np.allclose(law.sum(1), 1.0)
    assert law[0, 0] == 1.0


@pytest.mark.parametrize("bug", PRED_BUGS + ("sorted_partition", "release_votes"))
def test_sampler_matches_pmf(bug: str) -> None:
    rng = np.random.default_rng(3)
    s = _data(rng, 40, 5)                       # k = 14, r = 11 portions of 1, 3 dropped
    s[:, 0] = np.minimum(s[:, 0], 3)            # 8 distinct cells keep the pmf fast
    mech = (SortedPartitionPrediction(5, 1 / 3, 0.7, query=2) if bug == "sorted_partition" else
            ReleaseVotesPrediction(5, 1 / 3, 0.7, query=2) if bug == "release_votes" else
            AgnosticPrediction(5, 1 / 3, 0.7, query=2, bug=bug))
    _assert_sampler_matches_pmf(mech, s, seed=4)


@pytest.mark.parametrize("bug", ["reference", "no_half", "release_votes", "majority", "bagging",
                                 "sorted_partition", "repeat_query"])
def test_procedure_p_sampler_matches_pmf(bug: str) -> None:
    s = np.array([[0, 0]] * 3 + [[1, 0]] * 2 + [[2, 1]] * 4 + [[4, 1]] * 3)
    mech = (SortedPartitionP(5, 5, 1) if bug == "sorted_partition" else
            ReleaseVotesP(5, 5, 1) if bug == "release_votes" else ProcedureP(5, 5, 1, bug=bug))
    _assert_sampler_matches_pmf(mech, s, seed=5)


def test_sorted_partition_variants_refuse_other_bugs() -> None:
    """The B13 subclasses are the ``sorted_partition`` mutant themselves."""
    with pytest.raises(InvalidArgument, match="bug='bagging' must be 'reference'"):
        SortedPartitionP(5, 5, 1, bug="bagging")
    with pytest.raises(InvalidArgument, match="bug='majority' must be 'reference'"):
        SortedPartitionPrediction(5, 1 / 3, 0.7, bug="majority")


def _assert_sampler_matches_pmf(mech: object, s: np.ndarray, *, seed: int) -> None:
    """The pmf sums to 1 and 60,000 draws match it within 0.012 per output (fixed seed)."""
    pmf = mech.pmf(s)
    assert abs(sum(pmf.values()) - 1) < 1e-9
    x = mech.sample(s, 60_000, np.random.default_rng(seed))
    size = max(max(pmf) + 1, int(x.max()) + 1)
    emp = np.bincount(x, minlength=size) / x.size
    exact = np.array([pmf.get(i, 0.0) for i in range(size)])
    assert np.abs(emp - exact).max() < 0.012


def test_procedure_p_matches_vote_formula() -> None:
    """r = k = 9 (one point per portion): u = r − m exactly, P[1] = σ((2u − r)/2)."""
    s = np.array([[0, 0]] * 4 + [[3, 1]] * 5)
    p1 = ProcedureP(5, 9, 0).pmf(s)[1]
    assert math.isclose(p1, 1 / (1 + math.exp(-(2 * 5 - 9) / 2)), rel_tol=1e-12)


def test_procedure_p_is_epsilon_private_for_other_epsilon() -> None:
    """ε = 0.5, r = 9: exact loss 0.440 ≤ 0.5 on the extreme pair (votes 9 → 8); exp(εu) 0.981."""
    from dpcheck.exact import privacy_loss
    s, sp = np.array([[4, 1]] * 9), np.array([[4, 1]] * 8 + [[0, 0]])
    ref = ProcedureP(5, 9, 0, epsilon=0.5)
    bad = ProcedureP(5, 9, 0, epsilon=0.5, bug="no_half")
    assert 0.43 < privacy_loss(ref.pmf(s), ref.pmf(sp)).epsilon <= 0.5     # 0.440
    assert privacy_loss(bad.pmf(s), bad.pmf(sp)).epsilon > 0.9


def test_sample_queries_marginals_match_pmf() -> None:
    """Each column of the multi-query sampler has the single-query law (fresh or shared run)."""
    s = np.array([[1, 0]] * 15 + [[3, 1]] * 20 + [[2, 1]] * 5)
    qs = [0, 2, 3]
    for shared in (False, True):
        mech = AgnosticPrediction(5, 1 / 3, 0.7)
        x = mech.sample_queries(s, qs, 40_000, np.random.default_rng(8), shared_run=shared)
        assert x.shape == (40_000, 3)
        for j, q in enumerate(qs):
            p1 = AgnosticPrediction(5, 1 / 3, 0.7, query=q).pmf(s).get(1, 0.0)
            assert abs(x[:, j].mean() - p1) < 0.012
    with pytest.raises(InvalidArgument, match="queries"):
        mech.sample_queries(s, [5], 10, np.random.default_rng(0))


def test_sampler_is_deterministic_given_seed() -> None:
    s = _data(np.random.default_rng(6), 40, 6)
    mech = AgnosticPrediction(6, 0.3, 0.7, query=3)
    a = mech.sample(s, 1000, np.random.default_rng(9))
    b = mech.sample(s, 1000, np.random.default_rng(9))
    assert np.array_equal(a, b)


def test_answer_probabilities_are_probabilities() -> None:
    mech = AgnosticPrediction(6, 0.2, 0.3)
    sc = np.random.default_rng(1).multinomial(200, np.full(12, 1 / 12), size=5).reshape(5, 6, 2)
    p1 = mech.answer_probabilities(sc, np.random.default_rng(2))
    assert p1.shape == (5, 6) and np.all((p1 > 0) & (p1 < 1))
    # thresholds are monotone: the vote count is non-decreasing in x, so is P[1]
    assert np.all(np.diff(p1, axis=1) >= -1e-15)


def test_label_only_neighbours_are_eps_private() -> None:
    """Notes P3: flipping one label changes the output law by at most e^ε (T's labels are never
    read; with the record in W, Algorithm 1 is ε-DP in W)."""
    from dpcheck.exact import privacy_loss
    s = np.array([[1, 0]] * 20 + [[3, 1]] * 19 + [[2, 1]])
    sp = s.copy()
    sp[-1, 1] = 0
    for q in range(5):
        mech = AgnosticPrediction(5, 1 / 3, 0.5, query=q)
        assert privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon <= 1 / 3 + 1e-9


@pytest.mark.parametrize("kwargs, word", [
    ({"domain": 5, "epsilon": 0.5, "alpha": 0.5}, "epsilon"),
    ({"domain": 5, "epsilon": -1.0, "alpha": 0.5}, "epsilon"),
    ({"domain": 5, "epsilon": 0.2, "alpha": 1.5}, "alpha"),
    ({"domain": 5, "epsilon": 0.2, "alpha": 0.0}, "alpha"),
    ({"domain": 5, "epsilon": 0.2, "alpha": 0.5, "query": 5}, "query"),
    ({"domain": 1, "epsilon": 0.2, "alpha": 0.5}, "domain"),
    ({"domain": 5, "epsilon": 0.2, "alpha": 0.5, "bug": "nope"}, "bug"),
])
def test_invalid_parameters(kwargs: dict, word: str) -> None:
    with pytest.raises(InvalidArgument, match=word):
        AgnosticPrediction(**kwargs)


def test_too_few_points_for_the_portions() -> None:
    mech = AgnosticPrediction(5, 1 / 3, 0.1)             # r = 23
    with pytest.raises(InvalidArgument, match="r=23"):
        mech.pmf(_data(np.random.default_rng(0), 30, 5))  # k = 10
    with pytest.raises(InvalidArgument, match="epsilon"):
        AgnosticPrediction(5, 0.01, 0.5).sizes(50)         # εn < 1


def test_procedure_p_validation() -> None:
    with pytest.raises(InvalidArgument, match="realizable"):
        ProcedureP(5, 3, 0).pmf(np.array([[3, 0], [1, 1], [0, 0]]))
    with pytest.raises(InvalidArgument, match="rounds"):
        ProcedureP(5, 0, 0)
    with pytest.raises(InvalidArgument, match="query"):
        ProcedureP(5, 3, 7)
    with pytest.raises(InvalidArgument, match="bug"):
        ProcedureP(5, 3, 0, bug="sign_error")            # an Algorithm 1 mutant
    with pytest.raises(InvalidArgument, match="epsilon"):
        ProcedureP(5, 3, 0, epsilon=0.0)
    with pytest.raises(InvalidArgument, match="rounds=4"):
        ProcedureP(5, 4, 0).pmf(np.array([[0, 0], [1, 1]]))
