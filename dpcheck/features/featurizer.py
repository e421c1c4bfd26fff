"""The featurizer: the fixed map from raw outputs to the feature columns events are defined on.

An event family needs a scalar to threshold or a value to match. :meth:`Featurizer.build` fits
every family of :data:`FAMILIES` on the exploration sample (:mod:`dpcheck.features.family`)
and keeps the ones that apply, in this order:

* a user ``features=`` map → its columns ``features[j]`` (it replaces the projections);
* scalar outputs → the value, ``output`` (ordered when numeric, categorical otherwise);
* numeric vectors → one ordered feature per coordinate (the first
  :data:`~dpcheck.features.family.MAX_PROJECTIONS`), their sum, a naive-Bayes
  log-likelihood-ratio score and, for binned rows with few joint cells, the row's cell
  (:mod:`dpcheck.features.naive_bayes`); with enough exploration outputs a logistic-regression
  score and a sign count (:mod:`dpcheck.features.learned`) and a logistic score on statistics
  pooled over the coordinates (:mod:`dpcheck.features.row_summary`);
* vectors → a 64-bit hash of the whole row, so repeated rows become atoms;
* scalar floats → the float64 bits (:mod:`dpcheck.features.float_bits`);
* float vectors whose coordinates' spare precision differs between the datasets → a
  naive-Bayes score of it (:mod:`dpcheck.features.vector_bits`).

The same :class:`Featurizer`, fixed after the exploration sample, is applied to the
confirmation samples, so every event is a fixed measurable set of outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import InvalidArgument
from dpcheck.features.family import (
    Batch,
    Exploration,
    FeatureFamily,
    FittedFamily,
    ProjectionsFamily,
    RowHashFamily,
    RowSumFamily,
    UserMapFamily,
    ValueFamily,
)
from dpcheck.features.feature import Feature, FeatureMap
from dpcheck.features.float_bits import FloatBitsFamily
from dpcheck.features.vector_bits import VectorBitsFamily
from dpcheck.features.learned import LogisticFamily, SignCountFamily
from dpcheck.features.naive_bayes import NaiveBayesFamily
from dpcheck.features.pattern import PatternFamily
from dpcheck.features.row_summary import RowSummaryFamily

__all__ = ["Featurizer", "FAMILIES", "describe_feature", "ROW_BLOCK"]

#: Rows featurized together (numeric vectors, :meth:`Featurizer.__call__`): 2¹⁶ rows keep a
#: float64 column at 512 kB, in L2 cache (measured on 2²⁰-row chunks: 2¹³ rows 0.19 s, 2¹⁴
#: 0.16, 2¹⁵ 0.15, 2¹⁶ 0.14, 2¹⁷ 0.15 for the 6-bin histogram's four scores).
ROW_BLOCK = 1 << 16

#: Every feature family, in the order its features appear. A new family: one module with a
#: class satisfying :class:`~dpcheck.features.family.FeatureFamily`, and one line here.
FAMILIES: tuple[FeatureFamily, ...] = (
    UserMapFamily(),
    ValueFamily(),
    ProjectionsFamily(),
    RowSumFamily(),
    NaiveBayesFamily(),
    PatternFamily(),
    LogisticFamily(),
    SignCountFamily(),
    RowSummaryFamily(),
    RowHashFamily(),
    FloatBitsFamily(),
    VectorBitsFamily(),
)


def describe_feature(name: str) -> str | None:
    """What the feature called ``name`` is, in words (``None`` for an unknown name)."""
    for family in FAMILIES:
        text = family.describe(name)
        if text is not None:
            return text
    return None


@dataclass(frozen=True, eq=False)
class Featurizer:
    """A fixed map from raw outputs to a list of 1-d feature arrays: the fitted families and,
    for each feature, which family computes it."""

    features: tuple[Feature, ...]
    trailing: tuple[int, ...]
    user_map: FeatureMap | None
    fitted: tuple[FittedFamily, ...]
    owners: tuple[tuple[int, int], ...]  # feature j -> (index into fitted, index in family)

    @classmethod
    def build(
        cls,
        outputs: NDArray[Any],
        user_map: FeatureMap | None = None,
        outputs_prime: NDArray[Any] | None = None,
        float_bits: bool = True,
    ) -> Featurizer:
        """Fit :data:`FAMILIES` on the exploration outputs (the learned scores only when the
        exploration outputs of D′ are given too)."""
        if user_map is not None and not callable(user_map):
            raise InvalidArgument(f"features={user_map!r} must be callable or None")
        exploration = Exploration(outputs, outputs_prime, user_map, float_bits)
        fitted: list[FittedFamily] = []
        features: list[Feature] = []
        owners: list[tuple[int, int]] = []
        for family in FAMILIES:
            part = family.fit(exploration)
            if part is None:
                continue
            owners += [(len(fitted), i) for i in range(len(part.features))]
            features += part.features
            fitted.append(part)
        return cls(tuple(features), tuple(outputs.shape[1:]), user_map, tuple(fitted),
                   tuple(owners))

    def __call__(
        self, outputs: NDArray[Any], only: set[int] | None = None
    ) -> list[NDArray[Any] | None]:
        """Feature arrays (one per :attr:`features`) for ``outputs``; with ``only``, the other
        entries are ``None`` (not computed).

        Numeric vectors without a user map are featurized in blocks of :data:`ROW_BLOCK` rows
        and the blocks' columns concatenated: every vector family computes each row's value
        from that row alone, so the columns are the same bit for bit, and a block's
        intermediate arrays (codes, clipped values, level counts) stay in cache (a 6-bin
        histogram at 2²⁰ rows: 0.14 s against 0.19–0.50 s in one piece)."""
        parts = list(self.blocks(outputs, only))
        if len(parts) == 1:
            return parts[0]
        return [None if parts[0][j] is None else np.concatenate([p[j] for p in parts])
                for j in range(len(self.owners))]

    def blocks(
        self, outputs: NDArray[Any], only: set[int] | None = None
    ) -> Iterator[list[NDArray[Any] | None]]:
        """:meth:`__call__`'s feature arrays block by block: consecutive row blocks of
        :data:`ROW_BLOCK` rows for numeric vectors without a user map, else the whole batch as
        one block. Counting an event block by block gives its count on the whole batch
        without building the whole columns (:func:`dpcheck.core.confirm.count_outputs`)."""
        n = outputs.shape[0]
        if (self.user_map is not None or outputs.ndim != 2 or outputs.shape[1] < 2
                or outputs.dtype.kind not in "iuf" or n <= ROW_BLOCK):
            yield self._columns(outputs, only)
            return
        for s in range(0, n, ROW_BLOCK):
            yield self._columns(outputs[s:s + ROW_BLOCK], only)

    def _columns(self, outputs: NDArray[Any], only: set[int] | None
                 ) -> list[NDArray[Any] | None]:
        """:meth:`__call__` on one batch, in one piece."""
        batch = Batch(outputs, self.user_map)  # the learned scores code the same columns alike
        cols: list[NDArray[Any] | None] = []
        for j, (part, i) in enumerate(self.owners):
            if only is not None and j not in only:
                cols.append(None)
            else:
                cols.append(self.fitted[part].column(i, batch))
        return cols

    def row_labels(self, feature: int, rows: Callable[[], NDArray[Any]]
                   ) -> tuple[Any, ...] | None:
        """Labels of the output rows (``rows()``, computed only when needed) in an atom event
        of ``feature`` (``None``: the event's own values describe it)."""
        part, i = self.owners[feature]
        return self.fitted[part].row_labels(i, rows)

    def to_dict(self) -> dict[str, object]:
        """JSON-safe description."""
        return {
            "features": [{"name": f.name, "ordered": f.ordered} for f in self.features],
            "output_shape": list(self.trailing),
            "user_map": None if self.user_map is None else getattr(
                self.user_map, "__qualname__", repr(self.user_map)),
        }
