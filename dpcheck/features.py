"""Turning mechanism outputs into scalar features on which events are defined.

An event family needs a scalar to threshold or a value to match. Outputs are mapped to features:

* scalar numeric outputs → one *ordered* feature (the value itself);
* vector numeric outputs → one ordered feature per coordinate (the first
  :data:`MAX_PROJECTIONS`), their sum (a sufficient statistic for composed noisy releases of one
  query), a *learned* log-likelihood-ratio score (below), with enough exploration outputs a
  logistic-regression score and a count of coordinates above their median
  (:mod:`dpcheck.learned`), a logistic score on statistics pooled over the coordinates
  (``logit(summary)``, :mod:`dpcheck.summary`: per-row counts of each flag or sentinel and the
  row's extreme released values, with count × value interactions, when the rows have flags or
  sentinels), and one *categorical*
  feature, a 64-bit hash of the whole row, so repeated rows (e.g. sparse-vector answer
  patterns) become atoms;
  when a coordinate is continuous but the rows fall into at most :data:`MAX_CELLS` joint cells
  of the naive-Bayes coding (a value released at one of a few positions, the rest sentinels:
  sparse vector with numeric answers), the cell of the row, ``cells(output)``, is a categorical
  feature too, so likelihood-ratio-ordered unions of (position, value range) cells are events;
* string outputs → a categorical feature;
* a user ``features=`` map ``outputs -> (n,) or (n, m) array`` replaces the projections.

The learned score ``llr(output)`` is a naive-Bayes estimate of ``ln P_D(x)/P_D′(x)``: for each
coordinate, a histogram on the cells of :func:`dpcheck.learned.column_coding` (a cell per
categorical value or sentinel, :data:`LLR_BINS` pooled-quantile bins of the regular values)
gives a smoothed per-cell log ratio, and the score is their sum over coordinates. Half-lines on it
approximate the Neyman–Pearson-optimal events when coordinates are (nearly) independent — e.g.
composed noisy releases — without the user writing a feature map. It is fitted on the
exploration sample only, so it is a fixed function by the time confirmation samples are drawn.

The same :class:`Featurizer`, fixed after the exploration sample, is applied to the confirmation
samples, so every event is a fixed measurable set of outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import float_features
from .errors import InvalidArgument
from .learned import MAX_FIT_ROWS, CodeCache, LogisticScore, SignCount, _Column, column_coding
from .summary import SummaryScore

__all__ = ["Feature", "Featurizer", "row_hash", "MAX_PROJECTIONS", "LLR_BINS", "NaiveBayesLLR"]

#: Vector outputs: the number of coordinates turned into their own ordered feature.
MAX_PROJECTIONS = 16
#: Vector outputs: coordinates used by the learned log-likelihood-ratio score.
MAX_LLR_COORDINATES = 256
#: Histogram bins per coordinate of the learned log-likelihood-ratio score.
LLR_BINS = 8
#: Vector outputs: the logistic-regression score and the sign count
#: (:mod:`dpcheck.learned`) are fitted when the generation half of the exploration sample has
#: at least this many outputs per side (audits of ≥ ~10⁵ samples per side).
LEARN_MIN_ROWS = 5000
#: Vector outputs with a continuous (binned) coordinate get the categorical feature
#: ``cells(output)`` — the joint cell of the naive-Bayes coding — when the generation half of
#: the exploration sample shows at most this many distinct cells (both sides pooled).
MAX_CELLS = 1024

FeatureMap = Callable[[NDArray[Any]], Any]


def row_hash(rows: NDArray[Any]) -> NDArray[np.uint64]:
    """A 64-bit hash of each row of ``rows`` (any dtype), vectorised over rows.

    Collisions only merge outputs into one event, which keeps every event a fixed set: they cost
    power (with probability ~2⁻⁶⁴ per pair), never validity.
    """
    arr = np.asarray(rows)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.dtype.kind == "f":
        arr = arr + 0.0  # -0.0 and 0.0 compare equal, so they must hash equal
    arr = np.ascontiguousarray(arr)
    raw = arr.view(np.uint8).reshape(arr.shape[0], -1)
    pad = (-raw.shape[1]) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((raw.shape[0], pad), np.uint8)], axis=1)
    words = np.ascontiguousarray(raw).view(np.uint64)
    h = np.full(arr.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    for j in range(words.shape[1]):  # loop over 8-byte columns, never over samples
        h ^= words[:, j]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
    return h


@dataclass(frozen=True, slots=True)
class Feature:
    """One scalar view of the outputs: ``ordered`` (thresholds and atoms) or ``categorical``."""

    name: str
    ordered: bool


@dataclass(frozen=True, eq=False)
class NaiveBayesLLR:
    """Sum over coordinates of per-cell smoothed log ratios, fitted on exploration outputs.

    A coordinate's cells are those of :func:`dpcheck.learned.column_coding`: one per value of
    a categorical coordinate, and for a continuous one a cell per sentinel (a repeated value
    such as ``+inf`` for "not released") plus :data:`LLR_BINS` quantile bins of the *regular*
    values, so a coordinate released in 3 % of the rows still gets bins on its released values.
    """

    columns: tuple[_Column, ...]
    tables: tuple[NDArray[np.float64], ...]
    counts: tuple[NDArray[np.int64], ...]  # pooled cell counts of the fitting sample

    @classmethod
    def fit(cls, out_d: NDArray[Any], out_dp: NDArray[Any]) -> NaiveBayesLLR:
        """Fit on exploration outputs of D and D′ (2-d numeric arrays). The caller passes the
        generation half of the exploration sample, so the validation half stays untouched."""
        columns, tables, counts = [], [], []
        for j in range(min(out_d.shape[1], MAX_LLR_COORDINATES)):
            a = out_d[:, j].astype(np.float64)
            b = out_dp[:, j].astype(np.float64)
            col = column_coding(j, np.concatenate([a[:MAX_FIT_ROWS], b[:MAX_FIT_ROWS]]),
                                LLR_BINS)
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


@dataclass(frozen=True, slots=True)
class Featurizer:
    """A fixed map from raw outputs to a list of 1-d feature arrays."""

    features: tuple[Feature, ...]
    trailing: tuple[int, ...]
    user_map: FeatureMap | None = None
    llr: NaiveBayesLLR | None = None
    logit: LogisticScore | None = None
    signs: SignCount | None = None
    summary: SummaryScore | None = None

    @classmethod
    def build(
        cls,
        outputs: NDArray[Any],
        user_map: FeatureMap | None = None,
        outputs_prime: NDArray[Any] | None = None,
        float_bits: bool = True,
    ) -> Featurizer:
        """Decide the features from the shape and dtype of the exploration outputs (and fit the
        learned score when the exploration outputs of D′ are given too)."""
        if user_map is not None and not callable(user_map):
            raise InvalidArgument(f"features={user_map!r} must be callable or None")
        trailing = tuple(outputs.shape[1:])
        numeric = outputs.dtype.kind in "iuf"
        feats: list[Feature] = []
        if user_map is not None:
            mapped = _apply_user_map(user_map, outputs)
            feats += [Feature(f"features[{j}]", True) for j in range(mapped.shape[1])]
            if outputs.ndim == 2 and outputs.shape[1] > 1:
                feats.append(Feature("row", False))
            elif outputs.ndim == 1 or outputs.shape[1] == 1:
                feats.append(Feature("output", numeric))
        elif outputs.ndim == 1:
            feats.append(Feature("output", numeric))
        elif outputs.shape[1] == 1:
            feats.append(Feature("output[0]", numeric))
        elif numeric:
            k = outputs.shape[1]
            feats += [Feature(f"output[{j}]", True) for j in range(min(k, MAX_PROJECTIONS))]
            feats.append(Feature("sum(output)", True))
            if outputs_prime is not None and outputs.shape[0] >= 4:
                feats.append(Feature("llr(output)", True))
                half = outputs.shape[0] // 2
                gen_d, gen_dp = outputs[:half], outputs_prime[:half]
                llr = NaiveBayesLLR.fit(gen_d, gen_dp)
                cells = llr.binned and np.unique(np.concatenate(
                    [llr.cells(gen_d), llr.cells(gen_dp)])).size <= MAX_CELLS
                if cells:
                    feats.append(Feature("cells(output)", False))
                logit = signs = summary = None
                if half >= LEARN_MIN_ROWS:  # below that the learned weights are mostly noise
                    logit = LogisticScore.fit(gen_d, gen_dp)
                    feats.append(Feature("logit(output)", True))
                    signs = SignCount.fit(gen_d, gen_dp)
                    if signs is not None:
                        feats.append(Feature("signs(output)", True))
                    summary = SummaryScore.fit(gen_d, gen_dp)
                    if summary is not None:
                        feats.append(Feature("logit(summary)", True))
                return cls(tuple(feats + [Feature("row", False)]), trailing, user_map, llr,
                           logit, signs, summary)
            feats.append(Feature("row", False))
        else:
            feats.append(Feature("row", False))
        if user_map is None and outputs.dtype.kind == "f" and (
                outputs.ndim == 1 or outputs.shape[1] == 1) and float_bits:
            feats += [Feature(n, o) for n, o in float_features.NAMES]  # dpcheck.float_features
        return cls(tuple(feats), trailing, user_map)

    def __call__(
        self, outputs: NDArray[Any], only: set[int] | None = None
    ) -> list[NDArray[Any] | None]:
        """Feature arrays (one per :attr:`features`) for ``outputs``; with ``only``, the other
        entries are ``None`` (not computed)."""
        cols: list[NDArray[Any] | None] = []
        needs_map = self.user_map is not None and (
            only is None or any(self.features[j].name.startswith("features[") for j in only))
        mapped = _apply_user_map(self.user_map, outputs) if needs_map else None
        cache = CodeCache(outputs)  # the learned scores code the same columns alike
        for j, feat in enumerate(self.features):
            name = feat.name
            if only is not None and j not in only:
                cols.append(None)
            elif name.startswith("features["):
                assert mapped is not None
                cols.append(mapped[:, j])
            elif name == "output":
                cols.append(outputs if outputs.ndim == 1 else outputs[:, 0])
            elif name == "row":
                cols.append(row_hash(outputs))
            elif name in float_features.COLUMNS:
                cols.append(float_features.column(name, outputs))
            elif name == "sum(output)":
                cols.append(outputs.sum(axis=1, dtype=np.float64))
            elif name == "llr(output)":
                assert self.llr is not None
                cols.append(self.llr(outputs, cache))
            elif name == "cells(output)":
                assert self.llr is not None
                cols.append(self.llr.cells(outputs, cache))
            elif name == "logit(output)":
                assert self.logit is not None
                cols.append(self.logit(outputs, cache))
            elif name == "logit(summary)":
                assert self.summary is not None
                cols.append(self.summary(outputs))
            elif name == "signs(output)":
                assert self.signs is not None
                cols.append(self.signs(outputs))
            else:  # output[j]
                cols.append(outputs[:, int(name[7:-1])])
        return cols

    def to_dict(self) -> dict[str, object]:
        """JSON-safe description."""
        return {
            "features": [{"name": f.name, "ordered": f.ordered} for f in self.features],
            "output_shape": list(self.trailing),
            "user_map": None if self.user_map is None else getattr(
                self.user_map, "__qualname__", repr(self.user_map)),
        }


def _apply_user_map(user_map: FeatureMap, outputs: NDArray[Any]) -> NDArray[np.float64]:
    try:
        mapped = np.asarray(user_map(outputs))
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise InvalidArgument(f"features raised {type(exc).__name__}: {exc}") from exc
    if mapped.ndim == 1:
        mapped = mapped[:, None]
    if mapped.ndim != 2 or mapped.shape[0] != outputs.shape[0] or mapped.shape[1] == 0:
        raise InvalidArgument(
            f"features returned shape {mapped.shape} for {outputs.shape[0]} outputs; it must "
            f"return shape ({outputs.shape[0]},) or ({outputs.shape[0]}, m) with m >= 1"
        )
    if mapped.dtype.kind not in "iufb":
        raise InvalidArgument(f"features returned dtype {mapped.dtype}; it must be numeric")
    mapped = mapped.astype(np.float64)
    if np.isnan(mapped).any():
        raise InvalidArgument("features returned NaN")
    return mapped
