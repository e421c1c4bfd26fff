"""Test beds of paper 002: canonical users, exhaustive pair enumeration, data distributions.

Canonical adversarial users for thresholds on ``X = {1..4}`` (notes §4.1):

* ``extreme(x, y, m)``: ``m`` copies of ``(x, y)`` — moves scores of different hypotheses by very
  different amounts, and the median scores.
* ``confusing(m)``: ``m/2`` copies of ``(2, 0)`` and of ``(2, 1)`` — every threshold makes ``m/2``
  mistakes, so ``E_t`` rises by 1 for every concept when ``t < m/2`` (moves ``min_c E_t``, the
  statistic of every ``PrivateCompare``, without changing the exponential mechanism).
* ``clean(m)``: examples of ``f_2`` cycling through ``(1,0), (2,0), (3,1), (4,1)``.

:func:`max_loss` enumerates every neighbouring pair of small user datasets (add/remove and
replace one user) and returns the exact worst privacy loss with its pair.

References
----------
Li–Wang–Ye (seed 002); the notes ``seed-002.md`` §4.1 (worst-case neighbours), §5 (bugs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.exact import privacy_loss
from dpcheck.neighbours import UserLevel

__all__ = [
    "Distribution",
    "WorstPair",
    "clean",
    "confusing",
    "extreme",
    "max_loss",
    "positioned",
    "sample_users",
    "user_pairs",
    "users_over",
]

User = tuple[tuple[int, int], ...]


def extreme(x: int, y: int, m: int) -> User:
    """``m`` copies of ``(x, y)``."""
    return ((x, y),) * m


def confusing(m: int, x: int = 2) -> User:
    """``m/2`` copies of ``(x, 0)`` then ``m/2`` of ``(x, 1)`` (``m`` even)."""
    return ((x, 0),) * (m // 2) + ((x, 1),) * (m - m // 2)


def clean(m: int) -> User:
    """``m`` examples of ``f_2`` on ``X = {1..4}``."""
    cyc = ((1, 0), (2, 0), (3, 1), (4, 1))
    return tuple(cyc[j % 4] for j in range(m))


def users_over(domain: int, m: int, *, sorted_only: bool = True) -> list[User]:
    """Every user of ``m`` examples over ``{1..domain} × {0,1}`` (as multisets if ``sorted_only``)."""
    recs = [(x, y) for x in range(1, domain + 1) for y in (0, 1)]
    combos = (itertools.combinations_with_replacement(recs, m) if sorted_only
              else itertools.product(recs, repeat=m))
    return [tuple(c) for c in combos]


def user_pairs(pool: list[User], max_users: int, mode: str) -> Iterator[tuple[list[User], list[User]]]:
    """Every neighbouring pair (as multisets of users) with at most ``max_users`` users.

    ``mode="add_remove"``: ``(d, d + [u])``; ``mode="replace"``: ``(d + [u], d + [v])``, ``u < v``.
    """
    if mode == "add_remove":
        for size in range(max_users):
            for base in itertools.combinations_with_replacement(range(len(pool)), size):
                d = [pool[i] for i in base]
                for u in pool:
                    yield d, d + [u]
        return
    for size in range(max_users):
        for base in itertools.combinations_with_replacement(range(len(pool)), size):
            rest = [pool[i] for i in base]
            for i, j in itertools.combinations(range(len(pool)), 2):
                yield rest + [pool[i]], rest + [pool[j]]


@dataclass(frozen=True)
class WorstPair:
    """The largest exact loss over an enumeration, its pair and how many pairs were checked."""

    epsilon: float
    pair: tuple[Any, Any]
    pairs: int


def max_loss(pmf: Callable[[Any], dict[Any, float]],
             pairs: Iterable[tuple[Any, Any]]) -> WorstPair:
    """Exact worst privacy loss ``max |ln P(o)/Q(o)|`` over ``pairs`` (pmfs cached per dataset).

    The cache key is the dataset *as given* (order of users and of each user's examples kept):
    keying on the sorted multiset (as before issue 27) silently assumed the mechanism is
    symmetric in its users, which is exactly what an order-dependent bug breaks.
    """
    cache: dict[Any, dict[Any, float]] = {}

    def law(d: Any) -> dict[Any, float]:
        key = tuple(tuple(map(tuple, u)) if isinstance(u, (list, tuple)) else u for u in d)
        if key not in cache:
            cache[key] = pmf(list(d))
        return cache[key]

    best, arg, count = -1.0, None, 0
    for d, dp in pairs:
        count += 1
        eps = privacy_loss(law(d), law(dp)).epsilon
        if eps > best:
            best, arg = eps, (list(d), list(dp))
    return WorstPair(best, arg, count)


def _orderings(user: User, limit: int) -> list[User]:
    """Distinct orderings of a user's examples (at most ``limit``, the given one first)."""
    out, seen = [tuple(user)], {tuple(user)}
    for perm in itertools.permutations(user):
        if len(out) >= limit:
            break
        if perm not in seen:
            seen.add(perm)
            out.append(perm)
    return out


def positioned(mode: str, d: list[User], dp: list[User], *,
               orderings: int = 24) -> Iterator[tuple[list[User], list[User]]]:
    """Every placement of the changed user of a neighbouring pair (issue 27).

    ``mode="add_remove"``: ``dp = d + [v]``; yields ``v`` inserted at every position ``0..n``
    of ``d``, in every distinct ordering of its examples (at most ``orderings``).
    ``mode="replace"``: ``d = rest + [u]``, ``dp = rest + [v]``; yields ``u → v`` at every
    position ``0..n−1`` of ``rest``, in every pair of distinct orderings of ``u`` and ``v``.
    A mechanism that treats users (or records) unequally — a per-user step applied to the
    flattened example list, a loop that skips the last user — is exposed at some position
    even where the canonical pair (changed user last) shows nothing.
    """
    if mode == "add_remove":
        assert list(dp[:-1]) == list(d), "add_remove pairs are (d, d + [v])"
        for v in _orderings(dp[-1], orderings):
            for i in range(len(d) + 1):
                yield list(d), list(d[:i]) + [v] + list(d[i:])
        return
    assert list(d[:-1]) == list(dp[:-1]), "replace pairs are (rest + [u], rest + [v])"
    rest = list(d[:-1])
    for u in _orderings(d[-1], orderings):
        for v in _orderings(dp[-1], orderings):
            for i in range(len(rest) + 1):
                yield (rest[:i] + [u] + rest[i:], rest[:i] + [v] + rest[i:])


def relation(m: int, mode: str) -> UserLevel:
    """The paper's relation (``add_remove``) or replace-one-user, for users of ``m`` examples."""
    return UserLevel(m, mode=mode)


@dataclass(frozen=True)
class Distribution:
    """A distribution ``D`` on ``{1..N} × {0,1}``: point masses ``px`` and ``P[y=1 | x]``."""

    px: np.ndarray
    p1: np.ndarray

    @property
    def domain(self) -> int:
        return int(self.px.size)

    def errors(self, table: np.ndarray) -> np.ndarray:
        """``err_D(h)`` for every row of a truth table (exact)."""
        t = table.astype(float)
        return (self.px[None, :] * (t * (1 - self.p1) + (1 - t) * self.p1)).sum(axis=1)

    def threshold_errors(self) -> np.ndarray:
        """``err_D(f_u)``, ``u = 0..N``."""
        from .data import threshold_table
        return self.errors(threshold_table(self.domain))

    @classmethod
    def noisy_threshold(cls, domain: int, cut: int, noise: float) -> Distribution:
        """``x`` uniform, ``y = 1[x > cut]`` flipped with probability ``noise``."""
        px = np.full(domain, 1.0 / domain)
        clean_ = (np.arange(1, domain + 1) > cut).astype(float)
        return cls(px, np.abs(clean_ - noise))

    @classmethod
    def heavy_point(cls, domain: int, x0: int, heavy: float = 0.9) -> Distribution:
        """``D_X(x0) = heavy``, ``D_X(x0+1) = 1 − heavy``, ``y = 1[x > x0]`` (notes U8a, B9)."""
        px = np.zeros(domain)
        px[x0 - 1], px[x0] = heavy, 1 - heavy
        return cls(px, (np.arange(1, domain + 1) > x0).astype(float))

    @classmethod
    def narrow(cls, domain: int, support: tuple[int, ...], cut: int) -> Distribution:
        """``x`` uniform on ``support``, ``y = 1[x > cut]`` (notes U8b, B10)."""
        px = np.zeros(domain)
        px[np.asarray(support) - 1] = 1.0 / len(support)
        return cls(px, (np.arange(1, domain + 1) > cut).astype(float))


def sample_users(dist: Distribution, n: int, m: int, rng: np.random.Generator,
                 trials: int = 1) -> np.ndarray:
    """``trials`` datasets of ``n`` users × ``m`` i.i.d. examples: int array (trials, n, m, 2)."""
    x = rng.choice(dist.domain, size=(trials, n, m), p=dist.px) + 1
    y = (rng.random((trials, n, m)) < dist.p1[x - 1]).astype(np.int64)
    return np.stack([x, y], axis=-1)


@dataclass(frozen=True)
class NoisyMinCount:
    """Lemma 2.5's Laplace mechanism on a user-level count: ``min_c E_t(c) + Lap(scale/ε)``.

    The statistic ``PrivateCompare`` thresholds (count sensitivity 1 under adding, removing or
    replacing a user). ``scale=1`` is the paper's ``Lap(Δ/ε)``; bug B2 uses ``scale = 1/m``. This
    releases the noisy *count*; ``normalised=True`` is bug B14 (``err^t_z + Lap(1/(εn))``
    released: under add/remove the two scales differ, the density ratio is unbounded in the
    tails, notes §6.2).
    """

    epsilon: float
    t: int
    m: int
    domain: int
    scale: float = 1.0
    normalised: bool = False

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        from .data import as_users
        from .scores import threshold_user_errors
        users = as_users(data, self.m, self.domain)
        e = threshold_user_errors(users, self.t)
        if self.normalised:  # B14: err^t_z + Lap(1/(εn)) released as a value
            n = max(users.n, 1)
            return float(e.min()) / n + rng.laplace(0.0, self.scale / (self.epsilon * n), size)
        return float(e.min()) + rng.laplace(0.0, self.scale / self.epsilon, size)


@dataclass(frozen=True)
class ScoreEM:
    """Lemma 2.6's exponential mechanism on a score vector (data = the scores ``q``)."""

    epsilon: float
    sensitivity: float = 2.0
    sign: int = 1

    def pmf(self, data: Any) -> dict[int, float]:
        from .learners import em_probabilities
        p = em_probabilities(np.asarray(data, dtype=float), self.epsilon, self.sensitivity,
                             self.sign)
        return {i: float(v) for i, v in enumerate(p)}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        p = np.array(list(self.pmf(data).values()))
        cdf = np.cumsum(p)
        idx = np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right")
        return np.minimum(idx, p.size - 1).astype(np.int64)
