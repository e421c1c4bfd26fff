"""Candidate neighbouring pairs and shrink moves for :mod:`dpcheck.search.counterexample`.

Explicit pair lists (validated against the relation), exhaustive enumeration of small datasets
over a finite record domain (smallest first), random sampling beyond that, and the greedy shrink
moves (fewer records, values towards 0) applied to a winning pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument
from dpcheck.internal.datasets import _key
from dpcheck.neighbours import Relation
from dpcheck.validation import fmt


def _safe_key(d: Any) -> Any:
    try:
        return _key(d)
    except InvalidArgument:
        return ("id", id(d))


def _is_strategy(x: Any) -> bool:
    from hypothesis.strategies import SearchStrategy
    return isinstance(x, SearchStrategy)


def _explicit_pairs(pairs: Any, relation: Any) -> list[tuple[Any, Any]]:
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise InvalidArgument(
            f"pairs={fmt(pairs)} must be a hypothesis strategy or an iterable of (d, d_prime)")
    out = []
    for i, p in enumerate(pairs):
        if not isinstance(p, (tuple, list)) or len(p) != 2:
            raise InvalidArgument(f"pairs[{i}]={fmt(p)} must be a pair (d, d_prime)")
        if relation is not None and not relation.are_neighbours(p[0], p[1]):
            raise InvalidArgument(f"pairs[{i}]={fmt(p)} is not a neighbouring pair under "
                                  f"{fmt(relation)}")
        out.append((p[0], p[1]))
    if not out:
        raise InvalidArgument(f"pairs={fmt(pairs)} must not be empty")
    return out


def _enumeration_size(k: int, m: int, relation: Relation) -> int:
    """Upper bound on the pairs enumerated: datasets of size ≤ m, each with its neighbours."""
    per = 0
    for size in range(m + 1):
        n_d = k ** size
        per += n_d * (size if relation._edit() == "add_remove" else size * max(k - 1, 0))
    return per


def _enumerate(domain: list[Any], m: int, relation: Relation) -> Iterator[tuple[Any, Any]]:
    """Every unordered neighbouring pair with both datasets of ≤ m records, smallest first.

    Add/remove: each dataset with each of its deletions (every add/remove pair exactly once).
    Replace: each dataset with each replacement, keeping one orientation.
    """
    import itertools

    add_remove = relation._edit() == "add_remove"
    for size in range(m + 1):
        for combo in itertools.product(domain, repeat=size):
            d = list(combo)
            if add_remove:
                for dp in relation.neighbours(d):  # domain=None: removals only
                    yield (dp, d)
            else:
                kd = _key(d)
                for dp in relation.neighbours(d, domain=domain):
                    if _key(dp) > kd if _comparable(kd) else True:
                        yield (d, dp)


def _comparable(k: Any) -> bool:
    try:
        _ = k < k
        return True
    except TypeError:
        return False


def _sampled(domain: list[Any], lo: int, hi: int, relation: Relation, count: int,
             rng: np.random.Generator) -> Iterator[tuple[Any, Any]]:
    """Random datasets with ``lo..hi`` records over ``domain`` and a random neighbour each."""
    for _ in range(count):
        size = int(rng.integers(lo, hi + 1))
        d = [domain[int(j)] for j in rng.integers(len(domain), size=size)]
        try:
            dp = relation.random_neighbour(d, rng=rng, domain=domain)
        except InvalidArgument:
            continue
        yield (d, dp)


def _shrink_moves(pair: tuple[Any, Any], *, fixed_length: bool = False
                  ) -> Iterator[tuple[Any, Any]]:
    """Simpler versions of ``pair``: a common record removed (unless ``fixed_length``: query
    vectors keep the mechanism's number of queries), then values moved towards 0."""
    d, dp = list(pair[0]), list(pair[1])
    # fewer records: drop position i of both (same length), or drop a record equal in both
    if fixed_length:
        pass
    elif len(d) == len(dp):
        for i in range(len(d)):
            yield d[:i] + d[i + 1:], dp[:i] + dp[i + 1:]
    else:
        for i in range(len(d)):
            k = _safe_key(d[i])
            for j in range(len(dp)):
                if _safe_key(dp[j]) == k:
                    yield d[:i] + d[i + 1:], dp[:j] + dp[j + 1:]
                    break
    # simpler values, towards 0
    for i in range(len(d)):
        for t in _simpler(d[i]):
            if not _simpler_than(t, d[i]):
                continue
            if len(d) == len(dp):  # translate both (keeps the difference at i)
                if _safe_key(d[i]) == _safe_key(dp[i]):  # a common record (user): both
                    yield d[:i] + [t] + d[i + 1:], dp[:i] + [t] + dp[i + 1:]
                try:
                    yield (d[:i] + [t] + d[i + 1:], dp[:i] + [t + (dp[i] - d[i])] + dp[i + 1:])
                except TypeError:
                    pass
            else:  # the same record in both, replaced by t
                k = _safe_key(d[i])
                for j in range(len(dp)):
                    if _safe_key(dp[j]) == k:
                        yield d[:i] + [t] + d[i + 1:], dp[:j] + [t] + dp[j + 1:]
                        break
            yield d[:i] + [t] + d[i + 1:], dp
    for j in range(len(dp)):
        for t in _simpler(dp[j]):
            if _simpler_than(t, dp[j]):
                yield d, dp[:j] + [t] + dp[j + 1:]


def _simpler(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):  # a record or a user: simplify one component at a time
        out_seq: list[Any] = []
        for i, v in enumerate(x):
            for t in _simpler(v):
                if _simpler_than(t, v):
                    out_seq.append(type(x)([*x[:i], t, *x[i + 1:]]))
        return out_seq
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return []
    out: list[Any] = [0]
    if isinstance(x, (float, np.floating)) and math.isfinite(x):
        out += [float(round(x)), round(float(x), 1), float(x) / 2]
    elif isinstance(x, (int, np.integer)):
        out += [int(x) // 2]
    return out


def _simpler_than(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return a != b  # produced by _simpler: one component moved towards 0
    try:
        return abs(a) < abs(b) or (abs(a) == abs(b) and a != b and a >= 0)
    except TypeError:
        return False
