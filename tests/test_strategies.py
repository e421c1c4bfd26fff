"""dpcheck.strategies: generated pairs are neighbours; patterns are StatDP's; bad input named."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcheck
from dpcheck.strategies import (
    QuerySpace, budgets, datasets, describe, labelled_examples, neighbouring_pairs,
    query_vector_pairs, query_vectors, statdp_patterns, users,
)

FAST = settings(max_examples=60, deadline=None, database=None)


@FAST
@given(neighbouring_pairs(datasets(st.integers(0, 3), max_size=6), dpcheck.AddRemove()))
def test_add_remove_pairs_are_neighbours(pair):
    assert dpcheck.AddRemove().are_neighbours(*pair)


@FAST
@given(neighbouring_pairs(datasets([0, 1, 2], min_size=1, max_size=5), dpcheck.Replace()))
def test_replace_pairs_are_neighbours(pair):
    assert dpcheck.Replace().are_neighbours(*pair)


@FAST
@given(neighbouring_pairs(users([0, 1], group_size=2, max_users=3), dpcheck.UserLevel(2)))
def test_user_level_pairs_are_neighbours(pair):
    assert dpcheck.UserLevel(2).are_neighbours(*pair)


@FAST
@given(query_vector_pairs(6, delta=1))
def test_query_vector_pairs_within_delta(pair):
    assert QuerySpace(6, 1).are_neighbours(*pair)


@FAST
@given(query_vectors(4, 0, 10), labelled_examples(3, 5), budgets(0.1, 2.0))
def test_simple_strategies(q, ex, eps):
    assert len(q) == 4 and all(0 <= x <= 10 for x in q)
    assert all(0 <= x < 3 and y in (0, 1) for x, y in ex) and len(ex) <= 5
    assert 0.1 <= eps <= 2.0


def test_statdp_patterns_cover_the_classics():
    pats = {name: (d, dp) for name, d, dp in statdp_patterns(10)}
    assert pats["one_down"] == ([1] * 10, [0] + [1] * 9)
    assert pats["5_up_rest_down"] == ([1] * 10, [2] * 5 + [0] * 5)  # half-half
    assert pats["x_shape"] == ([1] * 5 + [0] * 5, [0] * 5 + [1] * 5)
    assert all(QuerySpace(10).are_neighbours(d, dp) for d, dp in pats.values())
    assert len(pats) == len(statdp_patterns(10))


def test_describe_marks_query_pairs():
    assert describe(query_vector_pairs(3))["kind"] == "query_pairs"
    assert describe(st.integers()) == {}


@pytest.mark.parametrize("call,name", [
    (lambda: datasets([], max_size=3), "records"),
    (lambda: datasets([1], min_size=3, max_size=2), "max_size"),
    (lambda: neighbouring_pairs([1], dpcheck.AddRemove()), "datasets_strategy"),
    (lambda: neighbouring_pairs(datasets([1]), "replace"), "relation"),
    (lambda: query_vectors(0, 0, 1), "n"),
    (lambda: query_vectors(2, 1, 0), "high"),
    (lambda: query_vector_pairs(3, delta=0), "delta"),
    (lambda: budgets(0, 1), "min_value"),
    (lambda: users([0], group_size=0, max_users=2), "group_size"),
])
def test_bad_input(call, name):
    with pytest.raises(dpcheck.InvalidArgument, match=name):
        call()


@FAST
@given(neighbouring_pairs(users([(1, 0), (2, 1), (3, 0)], group_size=3, max_users=3,
                                min_records=3), dpcheck.UserLevel(3, mode="add_remove")))
def test_user_level_pairs_of_exactly_m_records(pair):
    """Paper 002's setting: every user holds exactly m examples, neighbours add/remove one user."""
    d, dp = pair
    assert dpcheck.UserLevel(3, mode="add_remove").are_neighbours(d, dp)
    assert abs(len(d) - len(dp)) == 1
    assert all(len(u) == 3 for u in [*d, *dp])


@FAST
@given(neighbouring_pairs(users([(1, 0), (2, 1)], group_size=2, max_users=3, min_records=2),
                          dpcheck.UserLevel(2, mode="replace")))
def test_user_level_replace_pairs_of_exactly_m_records(pair):
    d, dp = pair
    assert len(d) == len(dp) and all(len(u) == 2 for u in [*d, *dp])
    assert dpcheck.UserLevel(2).are_neighbours(d, dp)


def test_users_min_records_bad_input():
    with pytest.raises(dpcheck.InvalidArgument, match="min_records"):
        users([0], group_size=2, max_users=2, min_records=3)
