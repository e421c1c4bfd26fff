"""Hypothesis strategies for datasets, neighbouring pairs and mechanism inputs.

These generate the inputs :func:`dpcheck.find_counterexample` searches over (and that property
tests of mechanisms can use directly with ``@given``). Every strategy shrinks towards small, simple
inputs: fewer records, values towards 0, which is what makes a found counterexample readable.

Strategies built here remember what they generate (:func:`describe`): the search uses that to
recognise query-vector pairs (and try StatDP's structured patterns first) and to know the
neighbour relation when it shrinks a witness.

References
----------
Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer, "Detecting Violations of Differential Privacy",
CCS 2018, §5 (the input patterns of :func:`statdp_patterns`). D. R. MacIver, Z. Hatfield-Dodds,
"Hypothesis: A new approach to property-based testing", JOSS 4(43), 2019.
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from dpcheck.errors import InvalidArgument
from dpcheck.neighbours import AddRemove, Relation, Replace, UserLevel
from dpcheck.validation import check_int, check_real, fmt

__all__ = [
    "QuerySpace",
    "budgets",
    "datasets",
    "describe",
    "labelled_examples",
    "neighbouring_pairs",
    "query_vector_pairs",
    "query_vectors",
    "statdp_patterns",
    "users",
]

_META: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _remember(strategy: SearchStrategy[Any], **meta: Any) -> SearchStrategy[Any]:
    try:
        _META[strategy] = meta
    except TypeError:  # pragma: no cover - strategies are weak-referenceable today
        pass
    return strategy


def describe(strategy: Any) -> dict[str, Any]:
    """What a strategy of this module generates (``{}`` for foreign strategies).

    Keys: ``kind`` (``"datasets"``, ``"pairs"``, ``"query_pairs"``, …) and, for pairs, the
    ``relation`` (or ``n``/``delta`` for query-vector pairs).
    """
    try:
        return dict(_META.get(strategy, {}))
    except TypeError:
        return {}


@dataclass(frozen=True, slots=True)
class QuerySpace:
    """The input space "``n`` query answers, neighbours at ℓ∞ distance ≤ ``delta``".

    Pass ``domain=QuerySpace(n)`` to :func:`dpcheck.find_counterexample` to try StatDP's
    structured patterns (:func:`statdp_patterns`) without giving a strategy.
    """

    n: int
    delta: float = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_int(self.n, "n", minimum=1))
        delta = check_real("delta", self.delta)
        if not 0 < delta < float("inf"):
            raise InvalidArgument(f"delta={fmt(self.delta)} must be finite and > 0")

    def are_neighbours(self, d: Sequence[Any], d_prime: Sequence[Any]) -> bool:
        """Same length and every answer changes by at most ``delta``."""
        try:
            return len(d) == len(d_prime) and all(
                abs(float(a) - float(b)) <= self.delta for a, b in zip(d, d_prime))
        except (TypeError, ValueError):
            return False


def _records_strategy(records: Any, name: str = "records") -> SearchStrategy[Any]:
    """A strategy for one record: a strategy as is, or a non-empty finite collection sampled."""
    if isinstance(records, SearchStrategy):
        return records
    if isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise InvalidArgument(
            f"{name}={fmt(records)} must be a hypothesis strategy or a finite collection of records")
    values = list(records)
    if not values:
        raise InvalidArgument(f"{name}={fmt(records)} must not be empty")
    return st.sampled_from(values)


def datasets(records: Any, min_size: int = 0, max_size: int = 10) -> SearchStrategy[list[Any]]:
    """Lists of ``min_size`` to ``max_size`` records.

    Parameters
    ----------
    records
        A strategy for one record, or a finite collection of records (sampled uniformly; shrinks
        towards its first element).
    min_size, max_size
        Bounds on the number of records, ``0 <= min_size <= max_size``.

    Examples
    --------
    >>> from hypothesis import strategies as st
    >>> s = datasets(st.floats(0, 1), max_size=5)
    >>> describe(s)["kind"]
    'datasets'
    """
    rec = _records_strategy(records)
    min_size = check_int(min_size, "min_size", minimum=0)
    max_size = check_int(max_size, "max_size", minimum=0)
    if max_size < min_size:
        raise InvalidArgument(f"max_size={max_size!r} must be >= min_size={min_size!r}")
    strat = st.lists(rec, min_size=min_size, max_size=max_size)
    return _remember(strat, kind="datasets", records=rec, min_size=min_size, max_size=max_size)


def _neighbour(draw: Any, d: list[Any], relation: Relation, fresh: SearchStrategy[Any]) -> Any:
    """Draw one neighbour of ``d`` under ``relation``; ``fresh`` draws a new record/user."""
    mode = relation._edit()  # "add_remove" or "replace"
    if mode == "add_remove":
        remove = bool(d) and draw(st.booleans())
        if remove:
            i = draw(st.integers(0, len(d) - 1))
            return d[:i] + d[i + 1:]
        i = draw(st.integers(0, len(d))) if relation._ordered() else len(d)
        return d[:i] + [draw(fresh)] + d[i:]
    if not d:
        raise _Reject()
    i = draw(st.integers(0, len(d) - 1))
    new = draw(fresh)
    return d[:i] + [new] + d[i + 1:]


class _Reject(Exception):
    pass


def neighbouring_pairs(
    datasets_strategy: SearchStrategy[Any], relation: Relation, domain: Any = None
) -> SearchStrategy[tuple[Any, Any]]:
    """Pairs ``(d, d′)``: a dataset and one of its neighbours under ``relation``.

    ``d`` is drawn from ``datasets_strategy``; ``d′`` deletes, inserts or replaces one record (one
    user for :class:`~dpcheck.UserLevel`). Which of the two comes first is drawn too, so shrinking
    can reach both orientations. Every generated pair satisfies ``relation.are_neighbours``.

    Parameters
    ----------
    datasets_strategy
        Strategy for ``d`` (e.g. :func:`datasets` or :func:`users`).
    relation
        :class:`~dpcheck.AddRemove`, :class:`~dpcheck.Replace` or :class:`~dpcheck.UserLevel`.
    domain
        Records (users) to insert or substitute: a strategy or a finite collection. ``None``:
        the record (user) strategy of ``datasets_strategy`` when it was built by this module,
        else an element of another draw of ``datasets_strategy``.
    """
    if not isinstance(datasets_strategy, SearchStrategy):
        raise InvalidArgument(
            f"datasets_strategy={fmt(datasets_strategy)} must be a hypothesis strategy")
    if not isinstance(relation, Relation):
        raise InvalidArgument(f"relation={fmt(relation)} must be a dpcheck neighbour relation")
    meta = describe(datasets_strategy)
    if domain is not None:
        fresh = _records_strategy(domain, "domain")
    elif "records" in meta:
        fresh = meta["records"]
    else:
        fresh = datasets_strategy.filter(lambda d: len(d) > 0).map(lambda d: d[0])

    @st.composite
    def _pairs(draw: Any) -> tuple[Any, Any]:
        d = list(draw(datasets_strategy))
        try:
            other = _neighbour(draw, d, relation, fresh)
        except _Reject:
            from hypothesis import reject
            reject()
        if not relation.are_neighbours(d, other):  # e.g. a replacement by an equal record
            from hypothesis import reject
            reject()
        return (other, d) if draw(st.booleans()) else (d, other)

    return _remember(_pairs(), kind="pairs", relation=relation)


def query_vectors(n: int, low: float, high: float) -> SearchStrategy[list[Any]]:
    """Vectors of ``n`` query answers in ``[low, high]`` (integers if both bounds are ints)."""
    n = check_int(n, "n", minimum=1)
    lo, hi = check_real("low", low), check_real("high", high)
    if not lo <= hi:
        raise InvalidArgument(f"high={high!r} must be >= low={low!r}")
    if isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral):
        elem: SearchStrategy[Any] = st.integers(int(low), int(high))
    else:
        elem = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    return _remember(st.lists(elem, min_size=n, max_size=n), kind="queries", n=n)


def statdp_patterns(n: int, delta: float = 1) -> list[tuple[str, list[Any], list[Any]]]:
    """StatDP's input patterns for ``n`` queries of sensitivity ``delta``, as ``(name, d, d′)``.

    ``d = [delta]*n`` against: one answer down / up; all down / up; the staircase "first k up,
    rest down" and "first k down, rest up" for k = 1..n−1 (k = 1 is StatDP's one-above-rest-below,
    k = n/2 its half-half); and the X-shape ``[delta]*h + [0]*(n−h)`` vs ``[0]*h + [delta]*(n−h)``.
    Duplicates are dropped; the order is fixed.

    References
    ----------
    Ding et al., CCS 2018, §5.1 ("one above / one below / one above rest below / half-half /
    all above / all below / X-shape").
    """
    n = check_int(n, "n", minimum=1)
    delta = QuerySpace(n, delta).delta
    base, up, down = delta, 2 * delta, 0 * delta
    one = [base] * n
    out: list[tuple[str, list[Any], list[Any]]] = [
        ("one_down", one, [down] + [base] * (n - 1)),
        ("one_up", one, [up] + [base] * (n - 1)),
        ("all_down", one, [down] * n),
        ("all_up", one, [up] * n),
    ]
    for k in range(1, n):
        out.append((f"{k}_up_rest_down", one, [up] * k + [down] * (n - k)))
        out.append((f"{k}_down_rest_up", one, [down] * k + [up] * (n - k)))
    h = n // 2
    if 0 < h < n:
        out.append(("x_shape", [base] * h + [down] * (n - h), [down] * h + [base] * (n - h)))
    seen, unique = set(), []
    for name, d, dp in out:
        key = (tuple(d), tuple(dp))
        if key not in seen:
            seen.add(key)
            unique.append((name, list(d), list(dp)))
    return unique


def query_vector_pairs(n: int, delta: float = 1) -> SearchStrategy[tuple[list[Any], list[Any]]]:
    """Pairs of ``n`` query answers at ℓ∞ distance ≤ ``delta``, biased towards StatDP's patterns.

    Half of the draws are one of :func:`statdp_patterns`; the rest are a random integer answer
    vector in ``[0, 10]`` with every answer moved by −delta, 0 or +delta. Shrinks towards the
    first pattern. :func:`dpcheck.find_counterexample` recognises this strategy and scores every
    pattern before searching.
    """
    space = QuerySpace(n, delta)
    patterns = [(d, dp) for _, d, dp in statdp_patterns(space.n, space.delta)]
    d_delta = space.delta
    moves = [0, -d_delta, d_delta]

    @st.composite
    def _random(draw: Any) -> tuple[list[Any], list[Any]]:
        d = draw(st.lists(st.integers(0, 10), min_size=space.n, max_size=space.n))
        shift = draw(st.lists(st.sampled_from(moves), min_size=space.n, max_size=space.n))
        return d, [a + s for a, s in zip(d, shift)]

    strat = st.one_of(st.sampled_from(patterns), _random())
    return _remember(strat, kind="query_pairs", n=space.n, delta=space.delta, space=space)


def labelled_examples(domain_size: int, max_size: int) -> SearchStrategy[list[tuple[int, int]]]:
    """Datasets of ``(x, y)`` examples: ``x`` in ``range(domain_size)``, binary label ``y``."""
    domain_size = check_int(domain_size, "domain_size", minimum=1)
    max_size = check_int(max_size, "max_size", minimum=0)
    rec = st.tuples(st.integers(0, domain_size - 1), st.integers(0, 1))
    return _remember(st.lists(rec, max_size=max_size), kind="datasets", records=rec,
                     min_size=0, max_size=max_size)


def users(records: Any, group_size: int, max_users: int,
          min_records: int = 0) -> SearchStrategy[list[list[Any]]]:
    """Datasets of up to ``max_users`` users, each a list of ``min_records``..``group_size``
    records.

    ``min_records=group_size`` gives users of exactly ``group_size`` records (the user-level
    setting where every user holds ``m`` examples, e.g. paper 002). Pair with
    ``neighbouring_pairs(users(...), UserLevel(group_size, mode))``: added or substituted users
    are drawn from the same user strategy, so they have the same size bounds.
    """
    rec = _records_strategy(records)
    group_size = check_int(group_size, "group_size", minimum=1)
    max_users = check_int(max_users, "max_users", minimum=0)
    min_records = check_int(min_records, "min_records", minimum=0)
    if min_records > group_size:
        raise InvalidArgument(f"min_records={min_records!r} must be <= group_size={group_size!r}")
    user = st.lists(rec, min_size=min_records, max_size=group_size)
    return _remember(st.lists(user, max_size=max_users), kind="users", records=user,
                     group_size=group_size, max_size=max_users)


def budgets(min_value: float = 0.01, max_value: float = 10.0) -> SearchStrategy[float]:
    """Privacy budgets ε in ``[min_value, max_value]``, ``0 < min_value <= max_value < inf``."""
    lo, hi = check_real("min_value", min_value), check_real("max_value", max_value)
    if not 0 < lo:
        raise InvalidArgument(f"min_value={min_value!r} must be > 0")
    if not lo <= hi < float("inf"):
        raise InvalidArgument(f"max_value={max_value!r} must be finite and >= min_value={min_value!r}")
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


# Re-exported for convenience in type hints of callers.
_RELATIONS = (AddRemove, Replace, UserLevel)
