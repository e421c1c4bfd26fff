"""Row summaries of vector outputs: statistics pooled over coordinates, and a logistic score on them.

The logistic score of :mod:`dpcheck.learned` gives every coordinate weights of its own. Where the
evidence is spread thinly over many coordinates, each of those weights is fitted on the few rows
that carry it, and the score is mostly estimation noise. Sparse vector with numeric answers
(Lyu et al. 2017, Alg. 3) is the example: its output is "⊥ on queries 0..j−1, then value v at
query j". The log-likelihood ratio depends on ``(j, v)``. A first-⊤ index j ≥ 5 is seen in a few
per mille of the rows, so ten per-coordinate value codings split an already rare signal ten ways.

A :class:`RowSummary` maps each row to statistics that are the same function of every
coordinate:

* for each **level** — a value repeated across the outputs (a flag such as ``0``/``1``/``-1``,
  a sentinel such as ``+inf`` for "not released": the categorical levels and sentinels of
  :func:`dpcheck.learned.column_coding`, pooled over columns) — the number of coordinates
  equal to it (for Alg. 3: the number of ⊥ answers, i.e. j);
* the smallest and the largest **regular** value of the row (finite and not a level; ``+inf``
  when the row has none), so a released value is one column whatever its position.

:class:`SummaryScore` fits :class:`dpcheck.learned.LogisticScore` on those columns, with
:data:`SUMMARY_BINS` quantile bins per value column (the summary has a handful of columns, so it
can afford finer bins than the per-coordinate basis) and on up to :data:`SUMMARY_FIT_ROWS` rows
per side. The model is additive in (counts, values): it cannot express a value effect that
differs by position, and pays that bias for a variance the per-coordinate score cannot reach.

Rows without levels (dense continuous vectors, e.g. 20 Laplace releases of one sum) get no
summary score: there the row's extremes are a poor statistic that only adds candidates to the
selection (``laplace_parallel`` at 10⁶ per side, seed 9: bound 0.029 without it, 0.0 with it).

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

import numpy as np
from numpy.typing import NDArray

from .learned import MAX_COLUMNS, LogisticScore, column_coding

__all__ = ["RowSummary", "SummaryScore", "MAX_LEVELS", "SUMMARY_BINS", "SUMMARY_FIT_ROWS"]

#: Levels (repeated values) counted across coordinates, the most frequent first.
MAX_LEVELS = 8
#: Quantile bins of each value column of the summary in its logistic basis.
SUMMARY_BINS = 32
#: Rows per side the summary score is fitted on (its basis is narrow, so more rows than
#: :data:`dpcheck.learned.MAX_FIT_ROWS` are affordable).
SUMMARY_FIT_ROWS = 200_000


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
            col = column_coding(j, pooled[:, j])
            values = col.levels if not col.categorical else np.append(col.levels, col.base)
            for v in values.tolist():
                found[v] = found.get(v, 0) + int(np.count_nonzero(pooled[:, j] == v))
        top = sorted(found, key=lambda v: (-found[v], v))[:MAX_LEVELS]
        return cls(np.sort(np.asarray(top, dtype=np.float64)), pooled.shape[1])

    def __call__(self, outputs: NDArray[np.generic]) -> NDArray[np.float64]:
        """The summary of each row, shape ``(n, len(levels) + 2)``."""
        x = np.asarray(outputs, dtype=np.float64)[:, :self.width]
        out = np.empty((x.shape[0], self.levels.size + 2))
        regular = np.isfinite(x)
        for i, v in enumerate(self.levels):
            hit = x == v
            out[:, i] = hit.sum(axis=1, dtype=np.int64)
            if math.isfinite(v):  # non-finite values are not regular anyway
                regular &= ~hit
        filled = np.where(regular, x, np.inf)
        out[:, -2] = filled.min(axis=1)
        np.copyto(filled, -np.inf, where=~regular)
        hi = filled.max(axis=1)
        hi[np.isneginf(hi)] = np.inf  # "no regular value": +inf for both
        out[:, -1] = hi
        return out


@dataclass(frozen=True, eq=False)
class SummaryScore:
    """``x ↦`` the logit of a logistic regression of "drawn from D" on the :class:`RowSummary`."""

    summary: RowSummary
    score: LogisticScore

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic]) -> SummaryScore | None:
        """Fit on (generation-half) outputs; ``None`` when the rows have no levels (dense
        continuous vectors: their extremes are a poor statistic, and the sum, sign count and
        per-coordinate scores already cover them) or the summary does not vary."""
        summary = RowSummary.fit(out_d, out_dp)
        if summary.levels.size == 0:
            return None
        a = summary(out_d[:SUMMARY_FIT_ROWS])
        b = summary(out_dp[:SUMMARY_FIT_ROWS])
        score = LogisticScore.fit(a, b, bins=SUMMARY_BINS, max_rows=SUMMARY_FIT_ROWS)
        if not score.columns:
            return None
        return cls(summary, score)

    def __call__(self, outputs: NDArray[np.generic]) -> NDArray[np.float64]:
        """The score of each output row (larger: more typical of D)."""
        return self.score(self.summary(outputs))
