"""Data distributions ``C`` for the generalization checkers: draw ``T ~ C^n``, exact means.

A *population* is anything with ``draw(rng) -> dataset`` (one sample ``T ~ C^n``) and
``mean(f) -> float`` (the exact expectation ``E_{x~C}[f(x)]`` of a test function ``f`` that maps
an array of records to an array of 0/1 values). :class:`IIDPopulation` is the finite-support
case: records are the rows of ``support`` drawn i.i.d. with ``weights``; it can also enumerate
every ordered sample (or every count vector) with its exact probability.

References
----------
Cummings et al., COLT 2016, Definitions 5 and 8 (``S ~iid D^n``, ``T ~iid C^n``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import multinomial

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_int, fmt

__all__ = ["IIDPopulation", "as_population"]


@dataclass(frozen=True, eq=False)
class IIDPopulation:
    """``T ~iid C^n`` with ``C`` a finite distribution over the rows of ``support``.

    Parameters
    ----------
    support
        Array of records (shape ``(k,)`` for scalar records, ``(k, m)`` for vector records).
    weights
        ``k`` non-negative weights (normalised); at least one must be positive.
    n
        Sample size ``n ≥ 1``.
    """

    support: np.ndarray
    weights: np.ndarray
    n: int
    _cdf: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sup = np.asarray(self.support)
        if sup.ndim == 0 or sup.shape[0] == 0:
            raise InvalidArgument(f"support={fmt(self.support)} must be a non-empty array of "
                                  "records: the population has no support")
        try:
            w = np.asarray(self.weights, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InvalidArgument(f"weights={fmt(self.weights)} must be numbers") from None
        if w.shape[0] != sup.shape[0]:
            raise InvalidArgument(f"weights has {w.shape[0]} entries, support has "
                                  f"{sup.shape[0]} records")
        if not np.all(np.isfinite(w)) or (w < 0).any():
            raise InvalidArgument(f"weights={fmt(self.weights)} must be finite and >= 0")
        if not w.sum() > 0:
            raise InvalidArgument(f"weights={fmt(self.weights)} sum to 0: the population has "
                                  "no support")
        object.__setattr__(self, "support", sup)
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "n", check_int(self.n, "n", minimum=1))
        object.__setattr__(self, "_cdf", np.cumsum(self.weights))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One ordered sample ``T ∈ support^n``."""
        idx = np.minimum(np.searchsorted(self._cdf, rng.random(self.n), side="right"),
                         len(self.weights) - 1)
        return self.support[idx]

    def draw_counts(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` count vectors (multinomial), shape ``(size, k)``."""
        return rng.multinomial(self.n, self.weights, size=size)

    def mean(self, f: Callable[[np.ndarray], Any]) -> float:
        """``E_{x~C}[f(x)]`` exactly (``f`` maps an array of records to values)."""
        vals = np.asarray(f(self.support), dtype=float)
        return float(vals @ self.weights)

    def enumerate(self, *, exchangeable: bool = False,
                  limit: int = 1 << 17) -> Iterator[tuple[np.ndarray, float]]:
        """Every sample with its probability: ordered tuples (``exchangeable=False``, at most
        ``limit`` of them), or one sorted representative per count vector with its multinomial
        probability (``exchangeable=True``: only for mechanisms that ignore the order)."""
        k = len(self.weights)
        pos = np.flatnonzero(self.weights > 0)
        if not exchangeable:
            if len(pos) ** self.n > limit:
                raise InvalidArgument(f"{len(pos)}^{self.n} ordered samples exceed "
                                      f"limit={limit}")
            logw = np.log(self.weights[pos])
            for tup in itertools.product(range(len(pos)), repeat=self.n):
                idx = pos[list(tup)]
                yield self.support[idx], float(np.exp(logw[list(tup)].sum()))
            return
        if math.comb(self.n + len(pos) - 1, len(pos) - 1) > limit:
            raise InvalidArgument(f"count vectors exceed limit={limit}")
        dist = multinomial(self.n, self.weights[pos])
        for combo in itertools.combinations_with_replacement(range(len(pos)), self.n):
            counts = np.bincount(combo, minlength=len(pos))
            full = np.zeros(k, dtype=np.int64)
            full[pos] = counts
            yield self.support[pos[list(combo)]], float(dist.pmf(counts))


def as_population(population: Any) -> Any:
    """Validate a population: an :class:`IIDPopulation`, an object with ``draw(rng)`` (and
    ``mean(f)`` for the RG checker), or a callable ``population(rng) -> dataset``."""
    if isinstance(population, IIDPopulation):
        return population
    draw = getattr(population, "draw", None)
    if callable(draw):
        return population
    if callable(population):
        return _CallablePopulation(population)
    raise InvalidArgument(f"population={fmt(population)} must be a dpcheck.IIDPopulation, an "
                          "object with .draw(rng), or a callable population(rng) -> dataset")


@dataclass(frozen=True)
class _CallablePopulation:
    fn: Callable[[np.random.Generator], Any]

    def draw(self, rng: np.random.Generator) -> Any:
        return self.fn(rng)
