"""The pattern log-likelihood-ratio score: markers jointly, released values by their bins.

Sparse vector with numeric answers (Wang et al. 2019's NumericalSVT, Lyu et al. 2017's Alg. 3)
releases a noisy value at the queries found above the threshold and a marker elsewhere (``0``
for "below", ``-1000`` for "aborted"). Given which coordinates hold which marker — the row's
**pattern** — the released values carry independent noise, so

    ln P_D(x)/P_D′(x) = ln P_D(pattern)/P_D′(pattern) + Σ_released ln f_D(x_j)/f_D′(x_j).

The first term is *not* a sum over coordinates: one threshold noise is shared by every
comparison and the run halts after c answers above it, so the naive-Bayes score of
:mod:`dpcheck.features.naive_bayes` (a product over coordinates) misranks patterns. Its joint
cells (:data:`~dpcheck.features.naive_bayes.MAX_CELLS`) split every pattern again by the value
bins of each released coordinate, too many cells for their counts. :class:`PatternLLR` keeps the
decomposition: a smoothed log ratio per pattern (the cells of
:func:`dpcheck.features.coding.column_coding` with every regular value of a coordinate merged
into one cell "released"), plus, for each released coordinate, the log ratio of its value bin
among the released values of that coordinate.

Measured on DP-Sniper's NumericalSVT (c = 2; pair all-ones against 2,2,2,2,2,0,0,0,0,0), the
best half-line projected to 4·10⁷ outputs per side and scored against the exact likelihood ratio,
both scores fitted on 10⁶ rows per side, seeds 0–3: naive Bayes 0.0499, this score 0.0587, the
exact ratio 0.0682 (``tests/test_pattern_score.py``). End to end, DP-Sniper's class on its 16
pairs at one tenth of its calls (``benchmarks/dpsniper_suite.py``, seeds 0–2): 0.0226, 0.0492,
0.0461 without it, 0.0226, 0.0637, 0.0521 with it (DP-Sniper: 0.034).

Fitted on the generation half of the exploration sample only; a poor fit costs power, never
validity.

References
----------
Y. Wang, Z. Ding, G. Wang, D. Kifer, D. Zhang, "Proving differential privacy with shadow
execution", PLDI 2019 (NumericalSVT); M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector
Technique for Differential Privacy", PVLDB 10(6), 2017, Alg. 3; J. Neyman, E. S. Pearson, Phil.
Trans. R. Soc. A 231 (1933).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.coding import CodeCache, Column
from dpcheck.features.family import Exploration, Fitted, score_column
from dpcheck.features.feature import Feature, row_hash
from dpcheck.features.naive_bayes import MAX_LLR_COORDINATES

__all__ = ["PatternLLR", "PatternFamily", "MAX_PATTERNS", "PATTERN_BINS"]

#: The score is fitted when the generation half shows at most this many distinct patterns (both
#: sides pooled): more, and most patterns are seen too rarely for their log ratio to mean much.
MAX_PATTERNS = 4096
#: Value bins of a released coordinate (pooled quantiles of its regular values): two, split at
#: the median. Under a location shift of heavy-tailed noise a value's log ratio is a clipped
#: step at the midpoint of the two locations, near the pooled median; each bin's log ratio is
#: estimated from the released rows only, so more bins mostly add noise (NumericalSVT, best
#: half-line at 4·10⁷ per side, one fit on 2·10⁵ rows per side: 2 bins 0.072, 4 bins 0.064,
#: 8 bins 0.047, exact ratio 0.072).
PATTERN_BINS = 2


@dataclass(frozen=True, eq=False)
class PatternLLR:
    """``ln`` ratio of the row's marker pattern plus the log ratios of its released values' bins.

    ``keys``/``pattern_lr``: the sorted pattern hashes seen on the fitting sample and their
    smoothed log ratios (an unseen pattern scores 0); ``value_lr[i]``: per code of
    ``columns[i]``, the log ratio of that value bin among the column's regular values (0 for
    its levels and sentinels)."""

    columns: tuple[Column, ...]
    keys: NDArray[np.uint64]
    pattern_lr: NDArray[np.float64]
    value_lr: tuple[NDArray[np.float64], ...]

    @classmethod
    def fit(cls, columns: tuple[Column, ...], codes_d: NDArray[np.intp],
            codes_dp: NDArray[np.intp]) -> PatternLLR:
        """Fit on the cell codes (:meth:`Column.codes`, one column per coordinate) of the
        generation outputs of D and D′."""
        pat_d, pat_dp = _patterns(columns, codes_d), _patterns(columns, codes_dp)
        keys = np.unique(np.concatenate([pat_d, pat_dp]))
        c_d = np.bincount(np.searchsorted(keys, pat_d), minlength=keys.size)
        c_dp = np.bincount(np.searchsorted(keys, pat_dp), minlength=keys.size)
        value_lr = []
        for j, col in enumerate(columns):
            table = np.zeros(col.n_codes)
            if not col.categorical:
                first = 1 + col.levels.size  # the first value-bin code
                a = np.bincount(codes_d[:, j], minlength=col.n_codes)[first:]
                b = np.bincount(codes_dp[:, j], minlength=col.n_codes)[first:]
                table[first:] = (np.log((a + 0.5) / (a.sum() + 0.5))
                                 - np.log((b + 0.5) / (b.sum() + 0.5)))
            value_lr.append(table)
        return cls(columns, keys, np.log((c_d + 0.5) / (c_dp + 0.5)), tuple(value_lr))

    def __call__(self, outputs: NDArray[np.generic],
                 cache: CodeCache | None = None) -> NDArray[np.float64]:
        """The score of each output row (``cache``: codes shared with the other scores)."""
        if cache is None:
            cache = CodeCache(outputs)
        codes = np.column_stack([cache.codes(c) for c in self.columns])
        pat = _patterns(self.columns, codes)
        pos = np.minimum(np.searchsorted(self.keys, pat), self.keys.size - 1)
        score = np.where(self.keys[pos] == pat, self.pattern_lr[pos], 0.0)
        for j, table in enumerate(self.value_lr):
            if not self.columns[j].categorical:
                score += table[codes[:, j]]
        return score


def _patterns(columns: tuple[Column, ...], codes: NDArray[np.intp]) -> NDArray[np.uint64]:
    """A hash of each row's marker pattern: cell codes with every value bin of a continuous
    coordinate merged into one code ("released")."""
    pat = codes.copy()
    for j, col in enumerate(columns):
        if not col.categorical:
            np.minimum(pat[:, j], 1 + col.levels.size, out=pat[:, j])
    return row_hash(pat)


class PatternFamily:
    """``pllr(output)`` (aggregate): :class:`PatternLLR`, for numeric vectors whose continuous
    coordinates carry markers (sentinels) and whose rows show at most :data:`MAX_PATTERNS`
    patterns."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not exploration.learnable:
            return None
        gen_d, gen_dp = exploration.generation
        width = min(gen_d.shape[1], MAX_LLR_COORDINATES)
        columns = tuple(exploration.coding(j, PATTERN_BINS) for j in range(width))
        if not any(not c.categorical and c.levels.size for c in columns):
            return None  # no released-or-marker coordinate: the naive-Bayes score is this one
        cache_d, cache_dp = CodeCache(gen_d), CodeCache(gen_dp)
        codes_d = np.column_stack([cache_d.codes(c) for c in columns])
        codes_dp = np.column_stack([cache_dp.codes(c) for c in columns])
        score = PatternLLR.fit(columns, codes_d, codes_dp)
        if score.keys.size < 2 or score.keys.size > MAX_PATTERNS:
            return None
        return Fitted((Feature("pllr(output)", True, aggregate=True),),
                      partial(score_column, score, True))

    def describe(self, name: str) -> str | None:
        return ("log-likelihood-ratio score of the output's pattern of markers (jointly) plus "
                "its released values' bins (learned on the exploration sample)"
                if name == "pllr(output)" else None)
