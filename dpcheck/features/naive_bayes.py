"""The naive-Bayes log-likelihood-ratio score of a vector output, and its joint cells.

``llr(output)`` estimates ``ln P_D(x)/P_D′(x)``: for each coordinate, a histogram on the cells of
:func:`dpcheck.features.coding.column_coding` (a cell per categorical value or sentinel,
:data:`LLR_BINS` pooled-quantile bins of the regular values) gives a smoothed per-cell log
ratio, and the score is their sum over coordinates. Half-lines on it approximate the
Neyman–Pearson-optimal events when coordinates are (nearly) independent — e.g. composed noisy
releases — without the user writing a feature map. When a coordinate is continuous but the rows
fall into at most :data:`MAX_CELLS` joint cells (a value released at one of a few positions,
the rest sentinels: sparse vector with numeric answers), the cell of the row,
``cells(output)``, is a categorical feature too, so likelihood-ratio-ordered unions of
(position, value range) cells are events. Fitted on the generation half of the exploration
sample only.

References
----------
J. Neyman, E. S. Pearson, Phil. Trans. R. Soc. A 231 (1933); M. Lyu, D. Su, N. Li,
"Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 10(6), 2017.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.coding import MAX_FIT_ROWS, CodeCache, Column, column_coding
from dpcheck.features.family import Batch, Exploration
from dpcheck.features.feature import Feature, row_hash, sorted_unique

__all__ = ["NaiveBayesLLR", "NaiveBayesFamily", "MAX_LLR_COORDINATES", "LLR_BINS", "MAX_CELLS"]

#: Vector outputs: coordinates used by the learned log-likelihood-ratio score.
MAX_LLR_COORDINATES = 256
#: Histogram bins per coordinate of the learned log-likelihood-ratio score.
LLR_BINS = 8
#: Vector outputs with a continuous (binned) coordinate get the categorical feature
#: ``cells(output)`` — the joint cell of the naive-Bayes coding — when the generation half of
#: the exploration sample shows at most this many distinct cells (both sides pooled).
MAX_CELLS = 1024


@dataclass(frozen=True, eq=False)
class NaiveBayesLLR:
    """Sum over coordinates of per-cell smoothed log ratios, fitted on exploration outputs.

    A coordinate's cells are those of :func:`dpcheck.features.learned.column_coding`: one per value of
    a categorical coordinate, and for a continuous one a cell per sentinel (a repeated value
    such as ``+inf`` for "not released") plus :data:`LLR_BINS` quantile bins of the *regular*
    values, so a coordinate released in 3 % of the rows still gets bins on its released values.
    """

    columns: tuple[Column, ...]
    tables: tuple[NDArray[np.float64], ...]
    counts: tuple[NDArray[np.int64], ...]  # pooled cell counts of the fitting sample

    @classmethod
    def fit(cls, out_d: NDArray[Any], out_dp: NDArray[Any], *,
            coding: Callable[[int, int], Column] | None = None) -> NaiveBayesLLR:
        """Fit on exploration outputs of D and D′ (2-d numeric arrays). The caller passes the
        generation half of the exploration sample, so the validation half stays untouched.
        ``coding(j, bins)``: the coding of column ``j`` of the first :data:`MAX_FIT_ROWS` rows
        of each, pooled, when already computed
        (:meth:`dpcheck.features.family.Exploration.coding`)."""
        columns, tables, counts = [], [], []
        for j in range(min(out_d.shape[1], MAX_LLR_COORDINATES)):
            a = out_d[:, j].astype(np.float64)
            b = out_dp[:, j].astype(np.float64)
            col = (coding(j, LLR_BINS) if coding is not None else
                   column_coding(j, np.concatenate([a[:MAX_FIT_ROWS], b[:MAX_FIT_ROWS]]),
                                 LLR_BINS))
            ca = np.bincount(col.codes(a), minlength=col.n_codes)
            cb = np.bincount(col.codes(b), minlength=col.n_codes)
            columns.append(col)
            tables.append(np.log((ca + 0.5) / (cb + 0.5)))
            counts.append(ca + cb)
        return cls(tuple(columns), tuple(tables), tuple(counts))

    def __call__(self, outputs: NDArray[Any],
                 cache: CodeCache | None = None) -> NDArray[np.float64]:
        """The score of each output row (``cache``: codes shared with other scores)."""
        if cache is None:
            cache = CodeCache(outputs)
        score = np.zeros(outputs.shape[0])
        for col, t in zip(self.columns, self.tables):  # loop over coordinates
            score += t[cache.codes(col)]
        return score

    @property
    def binned(self) -> bool:
        """Whether some coordinate is continuous (binned): only then are :meth:`cells` coarser
        than the exact rows."""
        return any(not c.categorical for c in self.columns)

    def codes(self, outputs: NDArray[Any],
              cache: CodeCache | None = None) -> NDArray[np.intp]:
        """The cell code of every coordinate of every row, shape ``(n, coordinates)``."""
        if cache is None:
            cache = CodeCache(outputs)
        return np.column_stack([cache.codes(c) for c in self.columns])

    def cells(self, outputs: NDArray[Any], cache: CodeCache | None = None) -> NDArray[np.uint64]:
        """A 64-bit hash of each row's cell codes: the joint histogram cell of the row."""
        return row_hash(self.codes(outputs, cache))

    def describe_cell(self, codes: NDArray[np.intp]) -> str:
        """One row of :meth:`codes` in words (coordinates at their most frequent code left
        out)."""
        common = self.common
        parts = [c.describe_code(int(k), f"output[{c.index}]")
                 for c, k in zip(self.columns, codes) if k != common[c.index]]
        return " and ".join(parts) if parts else "every coordinate at its most frequent cell"

    @property
    def common(self) -> dict[int, int]:
        """The most frequent code of each coordinate on the fitting sample."""
        return {c.index: int(np.argmax(k)) for c, k in zip(self.columns, self.counts)}


@dataclass(frozen=True, eq=False)
class _FittedNaiveBayes:
    llr: NaiveBayesLLR
    features: tuple[Feature, ...]

    def column(self, index: int, batch: Batch) -> NDArray[Any]:
        if index == 0:
            return self.llr(batch.outputs, batch.cache)
        return self.llr.cells(batch.outputs, batch.cache)

    def row_labels(self, index: int, rows: Callable[[], NDArray[Any]]
                   ) -> tuple[Any, ...] | None:
        if index == 0:
            return None
        rows = rows()
        cells = self.llr.codes(rows) if rows.size else rows
        uniq = np.unique(cells, axis=0) if rows.size else cells
        return tuple(self.llr.describe_cell(c) for c in uniq[:1000])


class NaiveBayesFamily:
    """``llr(output)`` (aggregate) and, for binned rows with few joint cells,
    ``cells(output)`` (categorical; atom events are labelled with the cells in words)."""

    def fit(self, exploration: Exploration) -> _FittedNaiveBayes | None:
        if not exploration.learnable:
            return None
        gen_d, gen_dp = exploration.generation
        llr = NaiveBayesLLR.fit(gen_d, gen_dp, coding=exploration.coding)
        feats = [Feature("llr(output)", True, aggregate=True)]
        if llr.binned and sorted_unique(np.concatenate(
                [llr.cells(gen_d), llr.cells(gen_dp)])).size <= MAX_CELLS:
            feats.append(Feature("cells(output)", False))
        return _FittedNaiveBayes(llr, tuple(feats))

    def describe(self, name: str) -> str | None:
        return {"llr(output)": "naive-Bayes log-likelihood-ratio score of the output vector "
                               "(learned on the exploration sample)",
                "cells(output)": "the joint cell of the output row in the naive-Bayes coding "
                                 "(which coordinates released which value range)"}.get(name)
