"""``PrivateMedian`` (proof of Lemma 5.1): an ε-DP approximate median of the points in ``[l, r]``.

Keep the first ``m' = min(m, ⌊1/a⌋)`` points of each user, choose ``s`` by Corollary D.1 (argmax
gap, notes §6.3), and run the exponential mechanism over ``u ∈ {l..r}`` with the count score
``max(QL(u), QR(u))`` (users with more than ``s`` points in ``[l, u−1]`` / ``[u+1, r]``), count
sensitivity 1 (the paper's Δ = 1/n): ``P[u] ∝ exp(−ε·max(QL, QR)(u)/2)``.

References
----------
Li–Wang–Ye (seed 002): Lemma 5.1 and its proof (Appendix D.1), Corollary D.1, Lemma 2.6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.mechanisms.primitives import _check_rng, _check_size
from algorithms.mechanisms.selection import ExponentialMechanism
from dpcheck.validation import check_choice, check_epsilon, check_int, check_real
from dpcheck.errors import InvalidArgument

from .binomial import median_s
from .data import Users, as_users
from .scores import median_scores_sorted

__all__ = ["PrivateMedian", "median_counts"]


def median_counts(users: Users, lo: int, hi: int, a: float, *, strict_s: bool = True,
                  cache: dict[int, np.ndarray] | None = None,
                  discard: str = "user") -> np.ndarray:
    """``max(QL, QR)(u)`` for ``u = lo..hi`` on the first ``m'`` points, ``s`` from ``a``.

    ``strict_s=False`` is bug B11's literal reading "more than m·s points" (here: ``> m'·s``).
    ``cache`` memoises the users' sorted points by ``m'`` across calls on the same data.
    ``discard="record"`` is a mutant: the first ``n·m'`` points of the flattened list
    (:meth:`Users.first`).
    """
    mp, s = median_s(users.m, a)
    if cache is not None and mp in cache:
        points = cache[mp]
    else:
        points = np.sort(users.first(mp, discard).x, axis=1)
        if cache is not None:
            cache[mp] = points
    return median_scores_sorted(points, users.domain, lo, hi, s if strict_s else mp * s)


@dataclass(frozen=True)
class PrivateMedian:
    """ε-DP split point ``u ∈ {lo..hi}`` with both sides light (Lemma 5.1).

    Parameters
    ----------
    epsilon
        Privacy parameter.
    lo, hi
        The interval of thresholds, ``0 ≤ lo ≤ hi ≤ domain``.
    a
        The mass bound (the lemma's α, ``0 < a ≤ 1``): sets ``m'`` and ``s``.
    m, domain
        Examples per user and ``N``.
    kind
        ``"private"`` (reference); ``"exact"`` (bug B4: the non-private argmin of the score);
        ``"midpoint"`` (bug B10: ``⌊(lo+hi)/2⌋``, private but data-blind).
    sensitivity, discard
        Mutant knobs (issue 27): the exponential mechanism's count sensitivity (1 in the
        paper; ``0.8`` is a 25 % overspend) and the discard step applied per record.
    """

    epsilon: float
    lo: int
    hi: int
    a: float
    m: int
    domain: int
    kind: str = "private"
    sensitivity: float = 1.0
    discard: str = "user"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1))
        object.__setattr__(self, "lo", check_int(self.lo, "lo", minimum=0))
        hi = check_int(self.hi, "hi", minimum=self.lo)
        if hi > self.domain:
            raise InvalidArgument(f"hi={hi} must be <= domain={self.domain}")
        object.__setattr__(self, "hi", hi)
        a = check_real("a", self.a)
        if not 0 < a <= 1:
            raise InvalidArgument(f"a={self.a!r} must be in (0, 1]")
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "kind",
                           check_choice(self.kind, "kind", ("private", "exact", "midpoint")))

    def probabilities(self, users: Users) -> np.ndarray:
        """``P[u]`` for ``u = lo..hi`` (exact)."""
        return median_probabilities(users, self.lo, self.hi, self.a, self.epsilon, self.kind,
                                    sensitivity=self.sensitivity, discard=self.discard)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact ``{u: P[u]}``."""
        p = self.probabilities(as_users(data, self.m, self.domain))
        return {self.lo + i: float(v) for i, v in enumerate(p) if v > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent split points (int64)."""
        p = self.probabilities(as_users(data, self.m, self.domain))
        cdf = np.cumsum(p)
        u = _check_rng(rng).random(_check_size(size)) * cdf[-1]
        return self.lo + np.minimum(np.searchsorted(cdf, u, side="right"), p.size - 1)


def median_probabilities(users: Users, lo: int, hi: int, a: float, epsilon: float,
                         kind: str = "private",
                         cache: dict[int, np.ndarray] | None = None, *,
                         sensitivity: float = 1.0, discard: str = "user") -> np.ndarray:
    """The law of the split point over ``lo..hi`` for each ``kind`` (see :class:`PrivateMedian`)."""
    k = hi - lo + 1
    if kind == "midpoint":
        out = np.zeros(k)
        out[(hi - lo) // 2] = 1.0
        return out
    q = median_counts(users, lo, hi, a, cache=cache, discard=discard)
    if kind == "exact":
        out = np.zeros(k)
        out[int(np.argmin(q))] = 1.0
        return out
    em = ExponentialMechanism(epsilon, sensitivity=sensitivity)
    return np.exp(em.log_probabilities(-q.astype(float)))
