"""Tests for dpcheck.neighbours: the neighbour relations of DP claims."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.errors import InvalidArgument
from dpcheck.neighbours import AddRemove, Relation, Replace, UserLevel

RELATIONS = [AddRemove(), AddRemove(ordered=False), Replace(), Replace(ordered=False)]
USER_RELATIONS = [UserLevel(2), UserLevel(2, mode="add_remove")]
ALL = RELATIONS + USER_RELATIONS
small_lists = st.lists(st.integers(0, 3), max_size=6)
users = st.lists(st.lists(st.integers(0, 2), max_size=2), max_size=4)


def test_invalid_argument_is_value_error() -> None:
    assert issubclass(InvalidArgument, ValueError)


@pytest.mark.parametrize("rel", ALL)
def test_relations_are_frozen_slotted_and_share_the_base(rel: Relation) -> None:
    assert isinstance(rel, Relation)
    assert not hasattr(rel, "__dict__")
    field = "group_size" if isinstance(rel, UserLevel) else "ordered"
    with pytest.raises(AttributeError):
        setattr(rel, field, 5)
    assert json.loads(json.dumps(rel.to_dict())) == rel.to_dict()
    assert "\n" not in rel.describe() and rel.describe()


def test_names_and_dicts() -> None:
    assert AddRemove().name == "add_remove"
    assert AddRemove(ordered=False).name == "add_remove(unordered)"
    assert Replace().name == "replace"
    assert Replace(ordered=False).name == "replace(unordered)"
    assert UserLevel(3).name == "user_level(replace, 3)"
    assert UserLevel(2, mode="add_remove").name == "user_level(add_remove, 2)"
    assert UserLevel(3).to_dict() == {"kind": "user_level", "group_size": 3, "mode": "replace"}
    assert Replace(ordered=False).to_dict() == {"kind": "replace", "ordered": False}
    assert AddRemove() == AddRemove(True) and hash(AddRemove()) == hash(AddRemove(True))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: UserLevel(0), r"group_size=0 must be >= 1"),
        (lambda: UserLevel(True), r"group_size=True must be an integer"),
        (lambda: UserLevel(2.0), r"group_size=2.0 must be an integer"),
        (lambda: UserLevel(2, mode="bogus"), r"mode='bogus' must be one of 'replace', 'add_remove'"),
        (lambda: AddRemove(ordered=1), r"ordered=1 must be True or False"),
        (lambda: Replace(ordered="yes"), r"ordered='yes' must be True or False"),
    ],
)
def test_bad_constructor_arguments(make, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        make()


def test_group_size_accepts_numpy_int() -> None:
    assert UserLevel(np.int64(3)).group_size == 3
    assert type(UserLevel(np.int64(3)).group_size) is int


# --- AddRemove -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("d", "d_prime"),
    [
        ([], [7]),
        ([1, 2, 3], [1, 3]),
        ([1, 2, 3], [1, 2, 3, 9]),
        ([1, 2, 3], [9, 1, 2, 3]),
        ((1, 1), (1,)),
        ([1, 2], (1, 5, 2)),
        (np.array([[1, 2], [3, 4], [5, 6]]), np.array([[1, 2], [5, 6]])),
        (np.array([[1.0, np.nan]]), np.array([[1.0, np.nan], [0.0, 0.0]])),
        ([(1, 2), [3, 4]], np.array([[1, 2], [3, 4], [5, 6]])),
        (["a", "b"], ["a", "x", "b"]),
    ],
)
def test_add_remove_ordered_positive(d, d_prime) -> None:
    rel = AddRemove()
    assert rel.are_neighbours(d, d_prime) and rel.are_neighbours(d_prime, d)
    rel.check(d, d_prime)
    assert AddRemove(ordered=False).are_neighbours(d, d_prime)  # ordered implies unordered


@pytest.mark.parametrize(
    ("d", "d_prime", "match"),
    [
        ([], [], r"lengths 0 and 0 differ by 0, add/remove allows 1"),
        ([1, 2, 3, 4, 5], [1] * 8, r"lengths 5 and 8 differ by 3, add/remove allows 1"),
        ([1, 2, 3], [1, 2, 3, 4, 5], r"lengths 3 and 5 differ by 2"),
        ([1, 2, 3], [2, 1], r"deleting one record of d cannot give d_prime: they first differ at position 0"),
        ([1, 2], [2, 1, 3], r"deleting one record of d_prime cannot give d"),
        (np.array([[1, 2], [3, 4]]), np.array([[1, 2]]) * 2, r"deleting one record of d cannot give d_prime: they first differ at position 0"),
    ],
)
def test_add_remove_ordered_negative(d, d_prime, match: str) -> None:
    rel = AddRemove()
    assert not rel.are_neighbours(d, d_prime)
    with pytest.raises(InvalidArgument, match=r"d and d_prime are not neighbours under AddRemove: " + match):
        rel.check(d, d_prime)


def test_add_remove_unordered() -> None:
    rel = AddRemove(ordered=False)
    assert rel.are_neighbours([1, 2, 3], [3, 9, 2, 1])
    assert rel.are_neighbours([2, 1], [1, 2, 2])
    assert rel.are_neighbours(np.array([[1, 2], [3, 4]]), [(3, 4)])
    assert not AddRemove().are_neighbours([1, 2, 3], [3, 9, 2, 1])
    assert not rel.are_neighbours([1, 2, 3], [3, 4])
    with pytest.raises(InvalidArgument, match=r"under AddRemove\(ordered=False\): as multisets, d_prime has 2 records"
                       r" not in d and d has 1 not in d_prime"):
        rel.check([1, 2, 3], [1, 2, 5, 6])


# --- Replace -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("d", "d_prime"),
    [
        ([1], [2]),
        ([1, 2, 3], [1, 9, 3]),
        ((1, 2, 3), (1, 2, 4)),
        (np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 5]])),
        (np.array([[1.0, np.nan], [3, 4]]), np.array([[1.0, np.nan], [3, 5]])),
        (np.array([1, 2, 3]), [1.0, 2.0, 7]),
        ([[1, 2], (3, 4)], np.array([[0, 2], [3, 4]])),
        ([float("nan"), 1], [float("nan"), 2]),
    ],
)
def test_replace_positive(d, d_prime) -> None:
    assert Replace().are_neighbours(d, d_prime) and Replace().are_neighbours(d_prime, d)
    Replace().check(d, d_prime)
    assert Replace(ordered=False).are_neighbours(d, d_prime)


@pytest.mark.parametrize(
    ("d", "d_prime", "match"),
    [
        ([1, 2, 3, 4], [9, 2, 3, 9], r"they differ in 2 positions \(0, 3\)"),
        (np.array([[1, 2], [3, 4], [5, 6], [7, 8]]), np.array([[0, 2], [3, 4], [5, 6], [7, 0]]),
         r"they differ in 2 positions \(0, 3\)"),
        ([1, 2, 3], [1, 2], r"lengths 3 and 2 differ, replace needs equal lengths"),
        ([1, 2], [1, 2], r"they are identical"),
        ([], [], r"they are identical"),
        (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), r"they are identical"),
        (list(range(20)), list(range(1, 21)), r"they differ in 20 positions \(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \.\.\.\)"),
        # (it said "they differ in 2 positions")
        (np.zeros((2, 2)), np.zeros((2, 3)), r"their records have different shapes \(\(2,\) and "
                                            r"\(3,\)\)$"),
    ],
)
def test_replace_ordered_negative(d, d_prime, match: str) -> None:
    assert not Replace().are_neighbours(d, d_prime)
    with pytest.raises(InvalidArgument, match=r"d and d_prime are not neighbours under Replace: " + match):
        Replace().check(d, d_prime)


def test_replace_unordered() -> None:
    rel = Replace(ordered=False)
    assert rel.are_neighbours([1, 2, 3], [3, 9, 1])
    assert not Replace().are_neighbours([1, 2, 3], [3, 9, 1])
    assert rel.are_neighbours([1, 1, 2], [1, 2, 2])
    assert not rel.are_neighbours([1, 2], [2, 1])
    with pytest.raises(InvalidArgument, match=r"equal as multisets"):
        rel.check([1, 2], [2, 1])
    with pytest.raises(InvalidArgument, match=r"as multisets, 2 records of d have no counterpart in d_prime"):
        rel.check([1, 2, 3], [3, 8, 9])


# --- UserLevel ---------------------------------------------------------------------------------

def test_user_level_replace() -> None:
    rel = UserLevel(2)
    assert rel.are_neighbours([[1], [2, 3]], [[1], [4]])
    assert rel.are_neighbours([[1], [2, 3]], [[1], []])
    assert rel.are_neighbours(np.zeros((3, 2, 2)), np.concatenate([np.zeros((2, 2, 2)), np.ones((1, 2, 2))]))
    assert rel.are_neighbours([[1], [2, 3]], [[1], [3, 2]])  # order within a user matters
    assert not rel.are_neighbours([[1], [2]], [[1], [2]])
    with pytest.raises(InvalidArgument, match=r"under UserLevel\(group_size=2, mode='replace'\): "
                       r"they differ in 2 users \(0, 1\)"):
        rel.check([[1], [2, 3]], [[4], [2]])
    with pytest.raises(InvalidArgument, match=r"user counts 2 and 1 differ, replace needs equal lengths"):
        rel.check([[1], [2]], [[1]])


def test_user_level_add_remove() -> None:
    rel = UserLevel(2, mode="add_remove")
    assert rel.are_neighbours([[1], [2, 3]], [[1]])
    assert rel.are_neighbours([], [[5, 6]])
    assert rel.are_neighbours(([1], (2, 3)), [[1], [7], [2, 3]])
    assert not rel.are_neighbours([[1], [2, 3]], [[1], [2]])
    with pytest.raises(InvalidArgument, match=r"user counts 1 and 3 differ by 2, add/remove allows 1"):
        rel.check([[1]], [[1], [2], [3]])


@pytest.mark.parametrize("rel", USER_RELATIONS)
def test_user_level_group_size_is_enforced(rel: UserLevel) -> None:
    d, d_prime = [[1], [2, 3]], [[1], [2, 3, 4]] if rel.mode == "replace" else [[1], [2, 3], [4, 5, 6]]
    assert not rel.are_neighbours(d, d_prime)
    with pytest.raises(InvalidArgument, match=r"user [12] of d_prime has 3 records, more than group_size=2"):
        rel.check(d, d_prime)
    with pytest.raises(InvalidArgument, match=r"user 0 of d has 3 records, more than group_size=2"):
        next(rel.neighbours([[1, 2, 3]], domain=[[1]]))
    with pytest.raises(InvalidArgument, match=r"domain\[1\] has 3 records, more than group_size=2"):
        rel.neighbours([[1]], domain=[[1], [1, 2, 3]])


def test_user_level_rejects_non_sequence_users() -> None:
    with pytest.raises(InvalidArgument, match=r"d_prime\[1\]=5 must be a sequence of records"):
        UserLevel(2).check([[1], [2]], [[1], 5])
    with pytest.raises(InvalidArgument, match=r"d\[0\]='ab' must be a sequence"):
        UserLevel(2).are_neighbours(["ab"], [[1]])


# --- input validation --------------------------------------------------------------------------

BAD = ["abc", b"abc", {1: 2}, {1, 2}, 3, 2.5, None, np.array(3), np.float64(1.0)]


@pytest.mark.parametrize("rel", ALL)
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_non_sequences_are_rejected_naming_the_argument(rel: Relation, bad) -> None:
    good = [[1]] if isinstance(rel, UserLevel) else [1]
    with pytest.raises(InvalidArgument, match=r"^d="):
        rel.check(bad, good)
    with pytest.raises(InvalidArgument, match=r"^d_prime="):
        rel.are_neighbours(good, bad)
    with pytest.raises(InvalidArgument, match=r"^d="):
        rel.neighbours(bad, domain=[good[0]])


def test_zero_dim_array_message() -> None:
    with pytest.raises(InvalidArgument, match=r"d_prime=array\(3\) must have at least 1 dimension"):
        Replace().check([1], np.array(3))


def test_unhashable_record_is_an_invalid_argument() -> None:
    class Thing:
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(InvalidArgument, match=r"not hashable"):
        Replace().check([Thing()], [1])


def test_records_of_different_kinds_compare_by_value() -> None:
    assert Replace().are_neighbours([[1, 2], {"a": 1}, {1, 2}], [(1, 2), {"a": 2}, frozenset({1, 2})])
    assert Replace().are_neighbours([np.float64("nan"), np.int64(3)], [float("nan"), 4])
    assert Replace().are_neighbours([complex(1, math.nan)], [complex(2, math.nan)])
    assert not Replace().are_neighbours([complex(1, math.nan), 0], [complex(1, math.nan), 0])


# --- neighbours / random_neighbour ------------------------------------------------------------

def test_neighbours_order_and_container_types() -> None:
    assert list(AddRemove().neighbours([1, 2])) == [[2], [1]]
    assert list(AddRemove().neighbours((1, 2), domain=[0])) == [(2,), (1,), (0, 1, 2), (1, 0, 2), (1, 2, 0)]
    assert list(AddRemove(ordered=False).neighbours([1, 2], domain=[0])) == [[2], [1], [1, 2, 0]]
    assert list(Replace().neighbours([1, 2], domain=[0, 1])) == [[0, 2], [1, 0], [1, 1]]
    assert list(AddRemove().neighbours([])) == []
    assert list(AddRemove().neighbours([], domain=[4, 5])) == [[4], [5]]
    assert list(UserLevel(2, mode="add_remove").neighbours([[1]], domain=[[2, 3]])) == [
        [], [[2, 3], [1]], [[1], [2, 3]]]
    assert list(AddRemove().neighbours(range(2))) == [[1], [0]]  # other sequences give lists


def test_neighbours_are_distinct() -> None:
    out = list(AddRemove().neighbours([1, 1, 2], domain=[1, 3, 3]))
    assert out == [[1, 2], [1, 1], [1, 1, 1, 2], [3, 1, 1, 2], [1, 3, 1, 2], [1, 1, 3, 2], [1, 1, 2, 1], [1, 1, 2, 3]]
    assert list(Replace(ordered=False).neighbours([5, 5], domain=[5, 6])) == [[6, 5]]


def test_neighbours_of_numpy_data() -> None:
    d = np.array([[1, 2], [3, 4]])
    out = list(Replace().neighbours(d, domain=[[1, 2], [0.5, 1]]))
    assert all(isinstance(n, np.ndarray) and n.shape == (2, 2) for n in out)
    np.testing.assert_array_equal(out[0], [[0.5, 1.0], [3, 4]])
    np.testing.assert_array_equal(out[1], [[1, 2], [1, 2]])
    assert out[1].dtype == d.dtype
    removals = list(AddRemove().neighbours(d))
    np.testing.assert_array_equal(removals[0], [[3, 4]])
    big = np.array([2**60 + 1])  # int64 -> float64 would lose this value: object dtype instead
    (_, ins, _) = AddRemove().neighbours(big, domain=[0.5])
    assert ins.dtype == object and ins[1] == 2**60 + 1
    mixed = list(AddRemove().neighbours(np.array(["a"]), domain=[1, 2]))[1]
    assert mixed.dtype == object and mixed[0] == 1
    with pytest.raises(InvalidArgument, match=r"domain\[0\]=1 has shape \(\), but d's records have shape \(2,\)"):
        AddRemove().neighbours(d, domain=[1])


def test_neighbours_domain_validation() -> None:
    with pytest.raises(InvalidArgument, match=r"domain=None: Replace needs a domain"):
        Replace().neighbours([1, 2])
    with pytest.raises(InvalidArgument, match=r"domain=None: UserLevel"):
        UserLevel(2).neighbours([[1]])
    with pytest.raises(InvalidArgument, match=r"domain='ab' must be an iterable"):
        AddRemove().neighbours([1], domain="ab")
    with pytest.raises(InvalidArgument, match=r"domain=3 must be an iterable"):
        AddRemove().neighbours([1], domain=3)


def test_random_neighbour() -> None:
    rel, d = AddRemove(), [1, 2, 3]
    a = rel.random_neighbour(d, rng=np.random.default_rng(7), domain=range(5))
    b = rel.random_neighbour(d, rng=np.random.default_rng(7), domain=range(5))
    assert a == b and rel.are_neighbours(d, a)
    seen = {tuple(rel.random_neighbour(d, rng=np.random.default_rng(s), domain=[0])) for s in range(200)}
    assert seen == {tuple(n) for n in rel.neighbours(d, domain=[0])}
    with pytest.raises(InvalidArgument, match=r"rng=0 must be a numpy.random.Generator"):
        rel.random_neighbour(d, rng=0)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"has no neighbours under AddRemove without a domain"):
        rel.random_neighbour([], rng=np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match=r"has no neighbours under Replace with the given domain"):
        Replace().random_neighbour([1], rng=np.random.default_rng(0), domain=[1])
    with pytest.raises(TypeError):
        rel.random_neighbour(d, np.random.default_rng(0))  # type: ignore[misc]


def test_random_neighbour_is_uniform() -> None:
    rel, d = Replace(), [0, 1, 2]
    rng = np.random.default_rng(1)
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(3000):
        n = tuple(rel.random_neighbour(d, rng=rng, domain=[0, 1, 2]))
        counts[n] = counts.get(n, 0) + 1
    assert len(counts) == 6 and min(counts.values()) > 400  # expectation 500 each


def test_large_datasets_are_checked() -> None:
    """5 000-record datasets (the vectorised numpy path and the key path). Speed is a benchmark
    concern, not asserted here."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5000, 8))
    y = x.copy()
    y[17] += 1.0
    xs = x.tolist()
    cases = [(Replace(), x, y), (Replace(ordered=False), x, y), (AddRemove(), x, x[1:]),
             (AddRemove(ordered=False), xs, xs[:-1]), (Replace(), list(range(5000)), [9] + list(range(1, 5000)))]
    for rel, a, b in cases:
        rel.check(a, b)
    z = y.copy()
    z[4000] -= 1.0
    with pytest.raises(InvalidArgument, match=r"differ in 2 positions \(17, 4000\)"):
        Replace().check(x, z)


# --- properties ---------------------------------------------------------------------------------

@settings(deadline=None, max_examples=200)
@given(d=small_lists, domain=st.lists(st.integers(0, 3), max_size=3))
@pytest.mark.parametrize("rel", RELATIONS)
def test_every_generated_neighbour_is_a_neighbour(rel: Relation, d: list[int], domain: list[int]) -> None:
    out = list(rel.neighbours(d, domain=domain))
    for n in out:
        assert rel.are_neighbours(d, n), (d, n)
    if rel.ordered:  # type: ignore[attr-defined]
        assert len({tuple(n) for n in out}) == len(out)  # pairwise distinct
    else:
        assert len({tuple(sorted(n)) for n in out}) == len(out)


@settings(deadline=None, max_examples=200)
@given(d=small_lists, domain=st.lists(st.integers(0, 3), max_size=3))
@pytest.mark.parametrize("rel", RELATIONS)
def test_generation_is_complete_on_the_domain(rel: Relation, d: list[int], domain: list[int]) -> None:
    """Every neighbour built from d's records and the domain is produced (up to multiset order)."""
    pool = sorted(set(d) | set(domain))
    expected = set()
    if isinstance(rel, AddRemove):
        expected |= {tuple(d[:i] + d[i + 1:]) for i in range(len(d))}
        expected |= {tuple(d[:i] + [c] + d[i:]) for i in range(len(d) + 1) for c in set(domain)}
    else:
        expected |= {tuple(d[:i] + [c] + d[i + 1:]) for i in range(len(d)) for c in set(domain) if c != d[i]}
    canon = (lambda t: tuple(t)) if rel.ordered else (lambda t: tuple(sorted(t)))  # type: ignore[attr-defined]
    got = {canon(n) for n in rel.neighbours(d, domain=domain)}
    assert got == {canon(e) for e in expected}
    assert all(x in pool for n in got for x in n)


@settings(deadline=None, max_examples=300)
@given(a=small_lists, b=small_lists)
@pytest.mark.parametrize("rel", RELATIONS)
def test_symmetry(rel: Relation, a: list[int], b: list[int]) -> None:
    assert rel.are_neighbours(a, b) == rel.are_neighbours(b, a)


@settings(deadline=None, max_examples=300)
@given(a=small_lists, b=small_lists)
def test_agrees_with_brute_force(a: list[int], b: list[int]) -> None:
    from collections import Counter

    deletions = {tuple(a[:i] + a[i + 1:]) for i in range(len(a))} | {tuple(b[:i] + b[i + 1:]) for i in range(len(b))}
    assert AddRemove().are_neighbours(a, b) == (tuple(b) in deletions or tuple(a) in deletions)
    diff = len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1
    assert Replace().are_neighbours(a, b) == diff
    ca, cb = Counter(a), Counter(b)
    assert AddRemove(ordered=False).are_neighbours(a, b) == ((ca - cb).total() + (cb - ca).total() == 1)
    assert Replace(ordered=False).are_neighbours(a, b) == (len(a) == len(b) and (ca - cb).total() == 1)
    arr_a, arr_b = np.array(a, dtype=float), np.array(b, dtype=float)
    assert Replace().are_neighbours(arr_a, arr_b) == diff  # vectorised path agrees


@settings(deadline=None, max_examples=200)
@given(a=users, b=users, domain=st.lists(st.lists(st.integers(0, 2), max_size=2), max_size=2))
@pytest.mark.parametrize("rel", USER_RELATIONS)
def test_user_level_properties(rel: UserLevel, a, b, domain) -> None:
    assert rel.are_neighbours(a, b) == rel.are_neighbours(b, a)
    for n in rel.neighbours(a, domain=domain):
        assert rel.are_neighbours(a, n)


@settings(deadline=None, max_examples=100)
@given(d=small_lists, seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("rel", RELATIONS)
def test_random_neighbour_property(rel: Relation, d: list[int], seed: int) -> None:
    domain = [0, 1, 4]
    if not d and isinstance(rel, Replace):
        with pytest.raises(InvalidArgument, match=r"has no neighbours"):
            rel.random_neighbour(d, rng=np.random.default_rng(seed), domain=domain)
        return
    n = rel.random_neighbour(d, rng=np.random.default_rng(seed), domain=domain)
    assert rel.are_neighbours(d, n)
    assert n == rel.random_neighbour(d, rng=np.random.default_rng(seed), domain=domain)
