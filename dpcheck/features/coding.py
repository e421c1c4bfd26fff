"""How one output column is coded: categorical levels, sentinels and quantile bins.

Every learned score codes a column the same way (:func:`column_coding`, fitted on the pooled
generation half of the exploration sample): a column with at most :data:`CATEGORICAL_LEVELS`
distinct values gets one code per value; any other column one code per **sentinel** (a value
repeated although the column is continuous, such as ``-1000`` for "no answer" or ``+inf`` for
"not released"; at most :data:`MAX_SENTINELS`) and one per pooled-quantile bin of its regular
values. A :class:`CodeCache` holds the float64 columns of one batch of rows and their codes,
so the scores that share a coding (naive Bayes, its joint cells, the logistic score) compute
it once per batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

__all__ = ["Column", "CodeCache", "column_coding", "column_levels", "CATEGORICAL_LEVELS", "MAX_FIT_ROWS", "CLIP",
           "MAX_SENTINELS", "VALUE_BINS"]

#: Columns with at most this many distinct values are treated as categorical (one-hot).
CATEGORICAL_LEVELS = 16
#: Rows per side used to fit the logistic regression (the first ones of the generation half).
MAX_FIT_ROWS = 50_000
#: Standardised values are clipped to ±CLIP (heavy tails must not dominate a linear score).
CLIP = 4.0
#: Sentinels per continuous column (values repeated although the column is continuous).
MAX_SENTINELS = 4
#: Pooled-quantile bins of the regular values of a continuous column (basis indicators).
VALUE_BINS = 8


@dataclass(frozen=True, eq=False)
class Column:
    """How one output column enters the basis (and the codes of the naive-Bayes score)."""

    index: int
    levels: NDArray[np.float64]  # categorical: indicator values; continuous: sentinels
    categorical: bool
    centre: float = 0.0
    scale: float = 1.0
    edges: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    base: float = math.nan  # categorical: the most frequent value (code 0)

    @property
    def width(self) -> int:
        return self.levels.size + (0 if self.categorical else 3 + self.edges.size)

    @property
    def n_codes(self) -> int:
        """Number of distinct :meth:`codes`."""
        return 1 + self.levels.size + (0 if self.categorical else self.edges.size + 1)

    @cached_property
    def key(self) -> tuple[object, ...]:
        """Equal for two codings that give every value the same code (:class:`CodeCache`)."""
        return (self.index, self.categorical, self.levels.tobytes(), self.edges.tobytes())

    def codes(self, x: NDArray[np.float64]) -> NDArray[np.intp]:
        """A cell per value: ``0`` for the most frequent categorical level (or an unseen
        non-finite value), ``1 + i`` for ``levels[i]``, then one per value bin (continuous).

        A continuous value's bin is the number of edges ``≤`` it (``searchsorted(edges, x,
        "right")``), counted by one comparison pass per edge when the edges are few
        (:data:`VALUE_BINS` − 1 = 7 edges: 3 ms on 9·10⁵ values against 17 ms of binary
        searches)."""
        if self.categorical and self._distinct:
            return _level_codes(self.levels, x).astype(np.intp)
        if self.categorical:
            out = np.zeros(x.shape[0], dtype=np.intp)
        else:
            out = _bins(self.edges, x, 1 + self.levels.size)
            finite = np.isfinite(x)
            if not finite.all():
                np.multiply(out, finite, out=out)  # non-finite: 0
        if self._distinct and self.levels.size:  # at most one level per value: add its code
            hit = _level_codes(self.levels, x)
            np.multiply(out, hit == 0, out=out)
            out += hit
            return out
        for i, v in enumerate(self.levels):
            out[x == v] = 1 + i
        return out

    @cached_property
    def _distinct(self) -> bool:
        """Whether the levels are strictly increasing (distinct, no NaN) and fewer than 255:
        every value then equals at most one level, whose code :func:`_level_codes` adds up in
        a byte (a categorical column of 2¹⁶ values with 5 levels: 0.19 ms against 1.3 ms of
        masked assignments)."""
        lv = self.levels
        return bool(lv.size < 255 and np.all(lv[1:] > lv[:-1]))

    def describe_code(self, code: int, name: str) -> str:
        """The cell ``code`` of :meth:`codes` in words, e.g. ``0.8 <= output[5] < 4.9``."""
        if code == 0:
            return f"{name} = {self.base:g}" if self.categorical else f"{name} not seen"
        if code <= self.levels.size:
            return f"{name} = {self.levels[code - 1]:g}"
        b = code - 1 - self.levels.size
        lo = f"{self.edges[b - 1]:.6g} <= " if b > 0 else ""
        hi = f" < {self.edges[b]:.6g}" if b < self.edges.size else ""
        return f"{lo}{name}{hi}" if lo or hi else f"{name} regular"

    def basis(self, x: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        """Write this column's basis functions for values ``x`` into ``out`` (n, width): the
        indicators of the levels, then (continuous) the clipped standardised value, its sign
        and absolute value, and the indicators of value bins 1.. (bin 0 is the baseline)."""
        code = self.codes(x)
        k = self.levels.size
        for i in range(k):
            out[:, i] = code == 1 + i
        if self.categorical:
            return
        regular = code > k
        z = np.zeros(x.shape[0])
        z[regular] = self._clipped(x[regular])
        out[:, k] = z
        out[:, k + 1] = np.sign(z)
        out[:, k + 2] = np.abs(z)
        for b in range(self.edges.size):
            out[:, k + 3 + b] = code == k + 2 + b

    def score(self, x: NDArray[np.float64], w: NDArray[np.float64],
              code: NDArray[np.intp] | None = None) -> NDArray[np.float64]:
        """``basis(x) @ w`` without building the basis: the indicator weights are looked up by
        :meth:`codes` (the same cells; ``code``: already computed), the clipped value terms are
        added for regular values. Equal to the product up to the order of floating-point
        additions."""
        if code is None:
            code = self.codes(x)
        k = self.levels.size
        table = np.zeros(self.n_codes)
        table[1:1 + k] = w[:k]
        if self.categorical:
            return table[code]
        table[k + 2:] = w[k + 3:]  # value bins 1.. (bin 0, code k + 1, is the baseline)
        out = table[code]
        regular = code > k
        if regular.all():  # no sentinel, nothing non-finite: the same sums without gathers
            z = self._clipped(x)
            terms = z * w[k]  # (z·w_k + sign(z)·w_k+1) + |z|·w_k+2, in that order
            part = np.sign(z)
            part *= w[k + 1]
            terms += part
            np.abs(z, out=part)
            part *= w[k + 2]
            terms += part
            out += terms
            return out
        z = self._clipped(x[regular])
        out[regular] += z * w[k] + np.sign(z) * w[k + 1] + np.abs(z) * w[k + 2]
        return out

    def _clipped(self, regular: NDArray[np.float64]) -> NDArray[np.float64]:
        """Regular values standardised (pooled median and IQR scale) and clipped to ±CLIP."""
        z = regular - self.centre
        z /= self.scale
        return np.clip(z, -CLIP, CLIP, out=z)


#: Up to this many edges, bins are counted by comparisons into byte counts (measured on 9·10⁵
#: values against binary searches: 7 edges 3 ms vs 17, 15 edges 4 vs 23, 31 edges 8 vs 30,
#: 63 edges 17 vs 36, 127 edges 32 vs 43); must stay below 256.
_COMPARE_EDGES = 64


def _level_codes(levels: NDArray[np.float64], x: NDArray[np.float64]) -> NDArray[np.uint8]:
    """``1 + i`` where ``x == levels[i]``, else 0, in bytes; for distinct ``levels`` (fewer
    than 255), so that at most one term of the sum is non-zero."""
    code = np.zeros(x.shape[0], dtype=np.uint8)
    hit = np.empty(x.shape[0], dtype=bool)
    term = np.empty(x.shape[0], dtype=np.uint8)
    for i, v in enumerate(levels.tolist()):
        np.equal(x, v, out=hit)
        if i == 0:
            code += hit.view(np.uint8)
        else:
            np.multiply(hit.view(np.uint8), np.uint8(1 + i), out=term)
            code += term
    return code


def _bins(edges: NDArray[np.float64], x: NDArray[np.float64], first: int) -> NDArray[np.intp]:
    """``first + searchsorted(edges, x, "right")`` for finite ``x`` and sorted ``edges``: the
    number of edges ``≤ x`` counted by comparisons into one byte per value (junk where ``x``
    is not finite)."""
    if edges.size > _COMPARE_EDGES:  # many edges: the binary searches win
        return first + np.searchsorted(edges, x, "right")
    count = np.zeros(x.shape[0], dtype=np.uint8)  # at most _COMPARE_EDGES < 256
    above = np.empty(x.shape[0], dtype=bool)
    for e in edges.tolist():
        np.greater_equal(x, e, out=above)
        count += above.view(np.uint8)
    out = count.astype(np.intp)
    out += first
    return out


class CodeCache:
    """The float64 columns of one batch of output rows and their :meth:`Column.codes`, each
    computed once: the naive-Bayes score, its joint cells and the logistic score code the same
    columns alike (same rows, same bins), and confirmation computes all three per chunk."""

    __slots__ = ("outputs", "_columns", "_codes")

    def __init__(self, outputs: NDArray[np.generic]) -> None:
        self.outputs = np.asarray(outputs)
        self._columns: dict[int, NDArray[np.float64]] = {}
        self._codes: dict[tuple[object, ...], NDArray[np.intp]] = {}

    def column(self, index: int) -> NDArray[np.float64]:
        """Column ``index`` of the outputs as contiguous float64."""
        x = self._columns.get(index)
        if x is None:
            x = self._columns[index] = np.ascontiguousarray(self.outputs[:, index],
                                                            dtype=np.float64)
        return x

    def codes(self, col: Column) -> NDArray[np.intp]:
        """``col.codes`` of its column (shared by every coding with the same :attr:`key`)."""
        code = self._codes.get(col.key)
        if code is None:
            code = self._codes[col.key] = col.codes(self.column(col.index))
        return code


def column_levels(pooled: NDArray[np.float64]) -> tuple[bool, NDArray[np.float64], float]:
    """The values :func:`column_coding` gives codes of their own, without its quantiles:
    ``(categorical, levels, base)`` — a categorical column's values but the most frequent
    (``base``), or a continuous column's sentinels (``base`` NaN)."""
    values, counts = np.unique(pooled, return_counts=True)
    if values.size <= CATEGORICAL_LEVELS:
        top = int(np.argmax(counts))
        return True, np.delete(values, top).astype(np.float64), float(values[top])
    repeated = (counts >= 3) | ~np.isfinite(values)
    order = np.argsort(-counts[repeated], kind="stable")[:MAX_SENTINELS]
    return False, np.sort(values[repeated][order]).astype(np.float64), math.nan


def column_coding(index: int, pooled: NDArray[np.float64], bins: int = VALUE_BINS) -> Column:
    """How column ``index`` with pooled exploration values ``pooled`` is coded: categorical
    (at most :data:`CATEGORICAL_LEVELS` distinct values) or continuous with up to
    :data:`MAX_SENTINELS` sentinels and ``bins`` quantile bins of the regular values."""
    categorical, sentinels, base = column_levels(pooled)
    if categorical:
        return Column(index, sentinels, True, base=base)
    regular = pooled[np.isfinite(pooled) & ~np.isin(pooled, sentinels)]
    if regular.size == 0:
        return Column(index, sentinels, False)
    probs = np.linspace(0.0, 1.0, bins + 1)[1:-1]
    q = np.quantile(regular, np.concatenate([[0.25, 0.5, 0.75], probs]))  # one partition
    q1, med, q3 = q[:3]
    scale = float(q3 - q1) / 1.349
    if not np.isfinite(scale) or scale <= 0:
        scale = float(np.std(regular)) or 1.0
    edges = np.unique(q[3:])
    return Column(index, sentinels, False, float(med), scale, edges.astype(np.float64))
