"""Compression learners for thresholds on ``[0, 1]`` and their RG test bed (Section 3).

Records are rows ``(x, y)`` with ``x ~ U[0,1]`` and ``y = 1[x ≤ t*]`` (realizable PAC case,
Theorem 24). Learners release *sample points* (the compression set), as arrays of floats, with
``-1.0`` standing for "no example" (the all-negative hypothesis ``h_⊥``: the paper is silent on
samples without positives; decision recorded in notes §7.2 item 8).

Test functions for the RG checker carry their exact mean under ``D`` (``mean(t_star)``), so
``f(D)`` is never estimated.

References
----------
Cummings et al., COLT 2016: Definition 14, Lemmas 16–17, Theorems 18, 19, 24, Remark 27; the
sample-encoding learner of the introduction (notes A14).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument

__all__ = [
    "AdaptiveCuts",
    "IntervalTest",
    "LargestPositive",
    "LossTest",
    "PointTest",
    "SampleEncoding",
    "SmallestPositive",
    "SubsampleLearner",
    "ThresholdPopulation",
    "lemma16_bound",
    "lemma17_epsilon",
    "threshold_adversaries",
]


def lemma17_epsilon(n: int, k: int, delta: float, *, form: str = "stated") -> float:
    """Lemma 17's ε (natural log). ``form="stated"``: ``√(4k ln(n/δ)/n) + 8k ln(2n/δ)/n + k/n``
    as printed; ``"proof"``: ``ln(2n/δ)`` in both terms (what the proof derives)."""
    inner = math.log((n if form == "stated" else 2 * n) / delta)
    return math.sqrt(4 * k * inner / n) + 8 * k * math.log(2 * n / delta) / n + k / n


def lemma16_bound(h_v: np.ndarray, n: int, k: int, delta: float) -> np.ndarray:
    """Lemma 16's ``√(h(V)·4k ln(2n/δ)/n) + 8k ln(2n/δ)/n``."""
    lg = math.log(2 * n / delta)
    return np.sqrt(np.asarray(h_v) * 4 * k * lg / n) + 8 * k * lg / n


@dataclass(frozen=True)
class ThresholdPopulation:
    """``x ~ U[0,1]``, ``y = 1[x ≤ t*]``, samples of size ``n`` (rows ``(x, y)``)."""

    n: int
    t_star: float = 0.3

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One sample, shape ``(n, 2)``."""
        x = rng.random(self.n)
        return np.column_stack([x, (x <= self.t_star).astype(float)])

    def mean(self, f: Any) -> float:
        """Exact ``E_D[f]`` of a test function of this module."""
        return float(f.mean(self.t_star))


def _measure(lo: float, hi: float) -> float:
    return max(0.0, min(hi, 1.0) - max(lo, 0.0))


@dataclass(frozen=True)
class IntervalTest:
    """``f(x, y) = 1[lo < x ≤ hi]`` (and ``y == label`` if given)."""

    lo: float
    hi: float
    label: int | None = None

    def __call__(self, records: np.ndarray) -> np.ndarray:
        x = records[:, 0]
        hit = (self.lo < x) & (x <= self.hi)
        return hit if self.label is None else hit & (records[:, 1] == self.label)

    def mean(self, t_star: float) -> float:
        """Lebesgue measure (with the label restriction)."""
        if self.label is None:
            return _measure(self.lo, self.hi)
        if self.label == 1:
            return _measure(self.lo, min(self.hi, t_star))
        return _measure(max(self.lo, t_star), self.hi)


@dataclass(frozen=True)
class PointTest:
    """``f(x, y) = 1[x ∈ points]``: mean 0 under a continuous ``D``."""

    points: tuple[float, ...]

    def __call__(self, records: np.ndarray) -> np.ndarray:
        return np.isin(records[:, 0], np.asarray(self.points))

    def mean(self, t_star: float) -> float:
        """0 (finitely many points)."""
        return 0.0


@dataclass(frozen=True)
class LossTest:
    """Loss of the threshold ``h_r``: ``f(x, y) = 1[1[x ≤ r] ≠ y]``; mean ``|t* − r|``."""

    r: float

    def __call__(self, records: np.ndarray) -> np.ndarray:
        return (records[:, 0] <= self.r).astype(float) != records[:, 1]

    def mean(self, t_star: float) -> float:
        """``D`` mass between ``r`` and ``t*``."""
        return _measure(min(self.r, t_star), max(self.r, t_star))


def _largest_positive(records: np.ndarray) -> float:
    pos = records[records[:, 1] == 1, 0]
    return float(pos.max()) if pos.size else -1.0


@dataclass(frozen=True)
class LargestPositive:
    """Theorem 24's size-1 compression: release the largest positive example (or -1)."""

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Deterministic: ``size`` copies."""
        return np.full(size, _largest_positive(np.asarray(data)))


@dataclass(frozen=True)
class SmallestPositive:
    """Broken variant (not consistent): release the smallest positive example."""

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Deterministic: ``size`` copies."""
        r = np.asarray(data)
        pos = r[r[:, 1] == 1, 0]
        return np.full(size, float(pos.min()) if pos.size else -1.0)


@dataclass(frozen=True)
class SampleEncoding:
    """The introduction's non-RG learner: the ERM threshold plus the whole sample's points
    (an output of ``n + 1`` floats)."""

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Deterministic: ``size`` copies of ``(s_+, x_1..x_n)``."""
        r = np.asarray(data)
        row = np.concatenate([[_largest_positive(r)], np.sort(r[:, 0])])
        return np.tile(row, (size, 1))


@dataclass(frozen=True)
class SubsampleLearner:
    """Remark 27: ERM (largest positive) on ``k_sub`` indices drawn without replacement; the
    released point is one of the subsample (approximate compression of size ``k_sub``)."""

    k_sub: int

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Vectorised over ``size`` subsamples."""
        r = np.asarray(data)
        idx = np.argsort(rng.random((size, len(r))), axis=1)[:, : self.k_sub]
        x, y = r[idx, 0], r[idx, 1]
        return np.where(y == 1, x, -1.0).max(axis=1)


@dataclass(frozen=True)
class AdaptiveCuts:
    """Theorem 19 stand-in: ``rounds`` adaptively composed size-1 compression learners. Round
    ``i`` labels ``x`` positive iff ``x ≤ c_i`` with ``c_1 = t*`` and ``c_{i+1} = r_i/2 + 0.25``
    (a function of the previous outputs only) and releases the largest positive; total
    compression size ``k = rounds``. ``leak=True`` (broken variant) also releases the sample."""

    rounds: int
    t_star: float = 0.3
    leak: bool = False

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Deterministic: ``size`` copies of the released points."""
        x = np.asarray(data)[:, 0]
        cut, out = self.t_star, []
        for _ in range(self.rounds):
            below = x[x <= cut]
            r = float(below.max()) if below.size else -1.0
            out.append(r)
            cut = max(r, 0.0) / 2 + 0.25
        if self.leak:
            out.extend(np.sort(x).tolist())
        return np.tile(np.array(out), (size, 1))


def threshold_adversaries(t_star: float = 0.3) -> list[Callable[[Any], Any]]:
    """The adversary library of notes A12 for outputs that are released points: the point
    indicator, ``1[x ≤ r]``, windows above ``r``, the loss of ``h_r`` (``r`` = the largest
    released point)."""

    def pts(out: Any) -> Any:
        v = np.atleast_1d(np.asarray(out, dtype=float))
        return PointTest(tuple(float(u) for u in v if u >= 0))

    def top(out: Any) -> float:
        return float(np.max(np.atleast_1d(out)))

    def below(out: Any) -> Any:
        return IntervalTest(-1.0, top(out))

    def window(out: Any) -> Any:
        return IntervalTest(top(out), top(out) + 0.05)

    def loss(out: Any) -> Any:
        return LossTest(top(out))

    def positive_window(out: Any) -> Any:
        return IntervalTest(top(out) - 0.02, top(out), label=1)

    for f, name in ((pts, "points"), (below, "below"), (window, "window"), (loss, "loss"),
                    (positive_window, "positive_window")):
        f.name = name  # type: ignore[attr-defined]
    return [pts, below, window, loss, positive_window]


@dataclass(frozen=True)
class CompressionLearner:
    """The generic compression learner ``ℒ = B ∘ A`` of Definition 14: ``select(sample, rng)``
    returns the *indices* of the compression sequence (at most ``k``), ``decode(examples)`` maps
    the selected examples to the released hypothesis (a float vector here). For RG only the
    selected examples matter (Lemma 17), so ``sample`` releases ``decode`` of them."""

    select: Callable[[np.ndarray, np.random.Generator], np.ndarray]
    decode: Callable[[np.ndarray], Any]
    k: int

    def compress(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        """The selected examples (rows of the sample); at most ``k`` of them."""
        r = np.asarray(data)
        idx = np.asarray(self.select(r, rng), dtype=np.int64).ravel()
        if idx.size > self.k:
            raise InvalidArgument(f"select returned {idx.size} indices, must be <= k={self.k}")
        return r[idx]

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` releases (one compression per release: ``select`` may be randomised)."""
        return np.array([np.atleast_1d(self.decode(self.compress(data, rng)))
                         for _ in range(size)], dtype=float)


def largest_positive_index(records: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Theorem 24's selection: the index of the largest positive example (none if no positive)."""
    pos = np.flatnonzero(records[:, 1] == 1)
    return pos[np.argmax(records[pos, 0])][None] if pos.size else np.array([], dtype=np.int64)


def release_max_point(examples: np.ndarray) -> float:
    """Decode: the threshold at the (single) selected point, ``-1`` (= ``h_⊥``) if none."""
    return float(examples[:, 0].max()) if examples.size else -1.0
