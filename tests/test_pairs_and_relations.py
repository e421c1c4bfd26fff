"""audit_pairs (α split over pairs), the QueryAnswers relation, and the global-RNG warning."""

from __future__ import annotations

import numpy as np
import pytest

import dpcheck
from algorithms.zoo import get
from dpcheck import GlobalRandomStateWarning, InvalidArgument, PureDP, QueryAnswers, audit_pairs
from dpcheck.rng import child


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
