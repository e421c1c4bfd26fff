"""Row summaries of vector outputs: statistics pooled over coordinates, and a logistic score on them.

The logistic score of :mod:`dpcheck.features.learned` gives every coordinate weights of its own. Where the
evidence is spread thinly over many coordinates, each of those weights is fitted on the few rows
that carry it, and the score is mostly estimation noise. Sparse vector with numeric answers
(Lyu et al. 2017, Alg. 3) is the example: its output is "⊥ on queries 0..j−1, then value v at
query j". The log-likelihood ratio depends on ``(j, v)``. A first-⊤ index j ≥ 5 is seen in a few
per mille of the rows, so ten per-coordinate value codings split an already rare signal ten ways.

A :class:`RowSummary` maps each row to statistics that are the same function of every
coordinate:

* for each **level** — a value repeated across the outputs (a flag such as ``0``/``1``/``-1``,
  a sentinel such as ``+inf`` for "not released": the categorical levels and sentinels of
  :func:`dpcheck.features.learned.column_coding`, pooled over columns) — the number of coordinates
  equal to it (for Alg. 3: the number of ⊥ answers, i.e. j);
* the smallest and the largest **regular** value of the row (finite and not a level; ``+inf``
  when the row has none), so a released value is one column whatever its position.

:class:`SummaryScore` is a logistic regression on those columns: the basis of
:class:`dpcheck.features.learned.LogisticScore` with :data:`SUMMARY_BINS` quantile bins per value column
(the summary has a handful of columns, so it can afford finer bins than the per-coordinate
basis), plus **interactions**: each count that takes at least three values, centred, times the
basis of each distinct value column with :data:`INTERACTION_BINS` bins. They let the value
effect change linearly with the count, i.e. with the position of the release. Fitted on up to
:data:`SUMMARY_FIT_ROWS` rows per side.

Why interactions: on Alg. 3 the log-likelihood ratio of "first ⊤ at query j, value v" is
``0.05·(j + 1)`` for ``v`` below the answers and decays in ``v`` above them at a rate that grows
with ``j`` (zoo ``svt3``, pair ``all_above``), so the best events are unions over ``j`` of
``{v ≤ c_j}`` with ``c_j`` rising from 0.9 to 9.3. An additive model in (counts, values) has one
value effect for every ``j``; the interactions let it vary with ``j`` (their bins and form were
chosen by exact best-half-line bounds, ``benchmarks/README.md``).

Rows without levels (dense continuous vectors, e.g. 20 Laplace releases of one sum) get no
summary score: there the row's extremes are a poor statistic that only adds candidates to the
selection.

Like every learned score, it is fitted on the generation half of the exploration sample only;
validity never rests on it, a poor fit only costs power.

References
----------
M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017, Alg. 3. B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §4 (thresholded
classifier scores as events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.coding import CodeCache, Column, column_coding, column_levels
from dpcheck.features.family import Exploration, Fitted, score_column
from dpcheck.features.feature import Feature
from dpcheck.features.learned import MAX_COLUMNS, LogisticScore, fit_basis, learns

__all__ = ["RowSummary", "SummaryScore", "RowSummaryFamily", "MAX_LEVELS", "SUMMARY_BINS",
           "SUMMARY_FIT_ROWS", "INTERACTION_BINS", "MAX_INTERACTIONS"]

#: Levels (repeated values) counted across coordinates, the most frequent first.
MAX_LEVELS = 8
#: Quantile bins of each value column of the summary in its logistic basis.
SUMMARY_BINS = 32
#: Rows per side the summary score is fitted on (its basis is narrow, so more rows than
#: :data:`dpcheck.features.learned.MAX_FIT_ROWS` are affordable).
SUMMARY_FIT_ROWS = 200_000
#: Quantile bins of a value column in its interactions with the counts.
INTERACTION_BINS = 4
#: Interactions (count × value column) at most, the counts of the most frequent levels first.
MAX_INTERACTIONS = 8


@dataclass(frozen=True, eq=False)
class RowSummary:
    """Per-row counts of each level over the coordinates, and the row's extreme regular values."""

    levels: NDArray[np.float64]
    width: int

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic]) -> RowSummary:
        """Find the levels on (generation-half) outputs of D and D′, 2-d numeric arrays."""
        pooled = np.concatenate([out_d[:SUMMARY_FIT_ROWS], out_dp[:SUMMARY_FIT_ROWS]])
        pooled = pooled[:, :MAX_COLUMNS].astype(np.float64)
        found: dict[float, int] = {}
        for j in range(pooled.shape[1]):
            categorical, levels, base = column_levels(pooled[:, j])  # column_coding's levels
            values = levels if not categorical else np.append(levels, base)
            for v in values.tolist():
                found[v] = found.get(v, 0) + int(np.count_nonzero(pooled[:, j] == v))
        top = sorted(found, key=lambda v: (-found[v], v))[:MAX_LEVELS]
        return cls(np.sort(np.asarray(top, dtype=np.float64)), pooled.shape[1])

    def __call__(self, outputs: NDArray[np.generic],
                 cache: CodeCache | None = None) -> NDArray[np.float64]:
        """The summary of each row, shape ``(n, len(levels) + 2)``. ``cache``: the batch's
        float64 columns (:meth:`CodeCache.column`, shared with the other scores); the summary
        is then column-major (Fortran order: the same values, its columns need no copy)."""
        if cache is None:
            x = np.asarray(outputs, dtype=np.float64)[:, :self.width]
            width = x.shape[1]
        else:
            width = min(self.width, np.shape(outputs)[1])
        n, k = np.shape(outputs)[0], self.levels.size
        out = np.empty((n, k + 2), order="C" if cache is None else "F")
        small = width < 256  # a count fits a byte (MAX_COLUMNS = 128 columns at most)
        counts = np.zeros((k, n), dtype=np.uint8 if small else np.int64)
        low = np.full(n, np.inf)
        high = np.full(n, -np.inf)
        finite = [math.isfinite(v) for v in self.levels.tolist()]
        hit = np.empty(n, dtype=bool)
        for j in range(width):  # column by column: reductions over short rows are slow
            col = np.ascontiguousarray(x[:, j]) if cache is None else cache.column(j)
            regular = np.isfinite(col)
            for i, v in enumerate(self.levels.tolist()):
                np.equal(col, v, out=hit)
                counts[i] += hit.view(np.uint8) if small else hit
                if finite[i]:  # non-finite values are not regular anyway
                    np.greater(regular, hit, out=regular)  # regular and not hit
            # regular values only (finite: no NaN), the others leave the running extremes
            np.minimum(low, col, out=low, where=regular)
            np.maximum(high, col, out=high, where=regular)
        out[:, :k] = counts.T
        high[np.isneginf(high)] = np.inf  # "no regular value": +inf for both
        out[:, -2] = low
        out[:, -1] = high
        return out


@dataclass(frozen=True, eq=False)
class _Interaction:
    """A count column of the summary (centred) times the basis of one of its value columns."""

    count: int
    centre: float
    value: Column  # coding of the value column; ``value.index`` is its summary column

    @property
    def width(self) -> int:
        return self.value.width

    def basis(self, s: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        """Write the products for summary rows ``s`` into ``out`` (n, width)."""
        self.value.basis(s[:, self.value.index], out)
        out *= (s[:, self.count] - self.centre)[:, None]

    def score(self, s: NDArray[np.float64], w: NDArray[np.float64],
              cache: CodeCache | None = None) -> NDArray[np.float64]:
        """``basis(s) @ w`` by table lookup (:meth:`dpcheck.features.learned.Column.score`); ``cache``:
        the codes of ``s`` shared with the other interactions of the same value column."""
        if cache is None:
            cache = CodeCache(s)
        value = self.value.score(cache.column(self.value.index), w, cache.codes(self.value))
        return (s[:, self.count] - self.centre) * value


def _interactions(summary: RowSummary, pooled: NDArray[np.float64]) -> tuple[_Interaction, ...]:
    """The count × value interactions of summary rows ``pooled``: every count with at least
    three distinct values (a 0/1 count adds nothing the value's own sentinels do not) times
    every value column not identical to an earlier one (one released value: min = max)."""
    k = summary.levels.size
    frequency = pooled[:, :k].sum(axis=0)
    counts = [i for i in np.argsort(-frequency, kind="stable").tolist()
              if np.unique(pooled[:, i]).size >= 3]
    values: list[int] = []
    for j in (k, k + 1):
        if not any(np.array_equal(pooled[:, j], pooled[:, i], equal_nan=True) for i in values):
            values.append(j)
    codings = [c for c in (column_coding(j, pooled[:, j], INTERACTION_BINS) for j in values)
               if c.width and not c.categorical]
    return tuple(_Interaction(i, float(pooled[:, i].mean()), c)
                 for i in counts for c in codings)[:MAX_INTERACTIONS]


@dataclass(frozen=True, eq=False)
class SummaryScore:
    """``x ↦`` the logit of a logistic regression of "drawn from D" on the :class:`RowSummary`
    and its count × value interactions."""

    summary: RowSummary
    score: LogisticScore
    interactions: tuple[_Interaction, ...] = ()
    interaction_weights: tuple[NDArray[np.float64], ...] = ()  # one array per interaction

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic]) -> SummaryScore | None:
        """Fit on (generation-half) outputs; ``None`` when the rows have no levels (dense
        continuous vectors: their extremes are a poor statistic, and the sum, sign count and
        per-coordinate scores already cover them) or the summary does not vary."""
        summary = RowSummary.fit(out_d, out_dp)
        if summary.levels.size == 0:
            return None
        a = summary(out_d[:SUMMARY_FIT_ROWS])
        pooled = np.concatenate([a, summary(out_dp[:SUMMARY_FIT_ROWS])])
        columns = tuple(c for c in (column_coding(j, pooled[:, j], SUMMARY_BINS)
                                    for j in range(pooled.shape[1])) if c.width)
        if not columns:
            return None
        inters = _interactions(summary, pooled)
        main = LogisticScore(columns, np.empty(0))
        widths = [main.width] + [t.width for t in inters]
        fill = partial(_fill_rows, main, inters, pooled)
        w = np.split(fit_basis(pooled.shape[0], sum(widths), a.shape[0], fill),
                     np.cumsum(widths)[:-1])
        return cls(summary, LogisticScore(columns, w[0]), inters, tuple(w[1:]))

    def __call__(self, outputs: NDArray[np.generic],
                 cache: CodeCache | None = None) -> NDArray[np.float64]:
        """The score of each output row (larger: more typical of D); ``cache``: the batch's
        columns shared with the other scores."""
        s = self.summary(outputs, cache)
        cache = CodeCache(s)  # a value column's codes serve every count it interacts with
        score = self.score(s, cache)
        for t, w in zip(self.interactions, self.interaction_weights):
            score += t.score(s, w, cache)
        return score


def _fill_rows(main: LogisticScore, inters: tuple[_Interaction, ...],
               pooled: NDArray[np.float64], start: int, stop: int,
               out: NDArray[np.float64]) -> None:
    """Write the basis of summary rows ``pooled[start:stop]`` into ``out``: the main
    columns', then each interaction's (:data:`dpcheck.features.learned.Fill`)."""
    rows = pooled[start:stop]
    out.fill(0.0)
    main.basis(rows, out[:, :main.width])
    at = main.width
    for t in inters:
        t.basis(rows, out[:, at:at + t.width])
        at += t.width


class RowSummaryFamily:
    """``logit(summary)``: the logistic score on statistics pooled over the coordinates, for
    rows with flags or sentinels."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not learns(exploration):
            return None
        summary = SummaryScore.fit(*exploration.generation)
        if summary is None:
            return None
        return Fitted((Feature("logit(summary)", True),), partial(score_column, summary, True))

    def describe(self, name: str) -> str | None:
        return ("logistic score on per-row counts of each flag or sentinel and the row's extreme "
                "released values (learned on the exploration sample)"
                if name == "logit(summary)" else None)
