"""Feature families: the seam through which outputs become feature columns.

A :class:`FeatureFamily` decides, from the exploration sample, whether it applies and which
features it contributes (:meth:`FeatureFamily.fit`); the fitted family
(:class:`FittedFamily`) computes their columns on any batch of outputs and can label the rows of
a chosen atom event. :meth:`FeatureFamily.describe` says in words what a feature of the family
is, for the reports. The families the auditor uses are listed, in the order their features
appear, in :data:`dpcheck.features.featurizer.FAMILIES`: a new family is one module with a
class that satisfies the protocol, and one line in that list.

Families are fitted on the exploration sample only (learned scores on its generation half), so
every column is a fixed function of the output by the time confirmation samples are drawn and
every event on it is a fixed set: a feature can cost power, never validity.

This module also holds the simple families: the value of a scalar output
(:class:`ValueFamily`), a user's feature map (:class:`UserMapFamily`), the coordinates of a
vector (:class:`ProjectionsFamily`), their sum (:class:`RowSumFamily`) and a hash of the whole
row (:class:`RowHashFamily`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.coding import MAX_FIT_ROWS, CodeCache, Column, column_coding
from dpcheck.features.feature import Feature, FeatureMap, apply_user_map, row_hash

__all__ = [
    "Batch",
    "Exploration",
    "FeatureFamily",
    "FittedFamily",
    "Fitted",
    "UserMapFamily",
    "ValueFamily",
    "ProjectionsFamily",
    "RowSumFamily",
    "RowHashFamily",
    "MAX_PROJECTIONS",
    "score_column",
]

#: Vector outputs: the number of coordinates turned into their own ordered feature.
MAX_PROJECTIONS = 16


@dataclass(frozen=True, eq=False)
class Exploration:
    """What a family is fitted on: the exploration outputs of D (and of D′ when the learned
    families may fit), the user's feature map and whether float features are on."""

    outputs: NDArray[Any]
    outputs_prime: NDArray[Any] | None
    user_map: FeatureMap | None
    float_bits: bool

    @property
    def numeric(self) -> bool:
        """Whether outputs are numbers (integers or floats)."""
        return self.outputs.dtype.kind in "iuf"

    @property
    def scalar(self) -> bool:
        """One number per output: shape ``(n,)`` or ``(n, 1)``."""
        return self.outputs.ndim == 1 or self.outputs.shape[1] == 1

    @property
    def numeric_vector(self) -> bool:
        """Numeric rows of several coordinates and no user map (the vector families)."""
        return self.user_map is None and not self.scalar and self.numeric

    @property
    def learnable(self) -> bool:
        """Whether scores may be learned: a numeric vector with outputs of D′ and ≥ 4 rows."""
        return (self.numeric_vector and self.outputs_prime is not None
                and self.outputs.shape[0] >= 4)

    @cached_property
    def generation(self) -> tuple[NDArray[Any], NDArray[Any]]:
        """The generation halves of the exploration outputs of D and D′ (scores fit on these,
        so the validation half stays untouched)."""
        assert self.outputs_prime is not None
        half = self.outputs.shape[0] // 2
        return self.outputs[:half], self.outputs_prime[:half]

    @cached_property
    def mapped(self) -> NDArray[np.float64]:
        """The user map applied to the exploration outputs of D."""
        assert self.user_map is not None
        return apply_user_map(self.user_map, self.outputs)

    @cached_property
    def _codings(self) -> dict[tuple[int, int], Column]:
        return {}

    def coding(self, j: int, bins: int) -> Column:
        """:func:`~dpcheck.features.coding.column_coding` of column ``j`` of the first
        :data:`~dpcheck.features.coding.MAX_FIT_ROWS` generation outputs of each side, pooled,
        with ``bins`` bins: computed once, for every learned score that codes the column so
        (the naive-Bayes and logistic scores: ``LLR_BINS`` = ``VALUE_BINS`` = 8)."""
        code = self._codings.get((j, bins))
        if code is None:
            gen_d, gen_dp = self.generation
            pooled = np.concatenate([gen_d[:MAX_FIT_ROWS, j], gen_dp[:MAX_FIT_ROWS, j]])
            code = self._codings[(j, bins)] = column_coding(j, pooled.astype(np.float64), bins)
        return code


class Batch:
    """One batch of outputs being featurized: the rows, their column codes shared by the
    learned scores (:class:`~dpcheck.features.coding.CodeCache`) and, on first use, the
    user map's columns."""

    __slots__ = ("outputs", "cache", "_user_map", "_mapped")

    def __init__(self, outputs: NDArray[Any], user_map: FeatureMap | None) -> None:
        self.outputs = outputs
        self.cache = CodeCache(outputs)
        self._user_map = user_map
        self._mapped: NDArray[np.float64] | None = None

    @property
    def mapped(self) -> NDArray[np.float64]:
        """The user map applied to this batch (computed once)."""
        if self._mapped is None:
            assert self._user_map is not None
            self._mapped = apply_user_map(self._user_map, self.outputs)
        return self._mapped


class FittedFamily(Protocol):
    """A family fitted on the exploration sample: its features and how to compute them."""

    @property
    def features(self) -> tuple[Feature, ...]: ...

    def column(self, index: int, batch: Batch) -> NDArray[Any]:
        """The column of feature ``features[index]`` on ``batch``: each row's value computed
        from that row alone (outside a user map), since the featurizer splits large batches
        of numeric vectors into blocks (:data:`dpcheck.features.featurizer.ROW_BLOCK`)."""
        ...

    def row_labels(self, index: int, rows: Callable[[], NDArray[Any]]
                   ) -> tuple[Any, ...] | None:
        """Labels of the output rows in an atom event of ``features[index]`` (for categorical
        row features: the rows themselves, or their cells in words), or ``None`` when the
        event's own values describe it. ``rows()`` gives the rows (computed on demand)."""
        ...


class FeatureFamily(Protocol):
    """A kind of feature: decides on the exploration sample whether it applies, and says in
    words what its features are."""

    def fit(self, exploration: Exploration) -> FittedFamily | None:
        """The fitted family, or ``None`` when it does not apply to these outputs."""
        ...

    def describe(self, name: str) -> str | None:
        """What the feature called ``name`` is, in words, or ``None`` if it is not one of this
        family's."""
        ...


@dataclass(frozen=True, eq=False)
class Fitted:
    """A fitted family given by its features and a function ``compute(index, batch)``."""

    features: tuple[Feature, ...]
    compute: Callable[[int, Batch], NDArray[Any]]
    labels: Callable[[int, NDArray[Any]], tuple[Any, ...]] | None = None

    def column(self, index: int, batch: Batch) -> NDArray[Any]:
        return self.compute(index, batch)

    def row_labels(self, index: int, rows: Callable[[], NDArray[Any]]
                   ) -> tuple[Any, ...] | None:
        return None if self.labels is None else self.labels(index, rows())


def _coordinate(name: str, prefix: str) -> str | None:
    """``"3"`` for ``prefix[3]``, else ``None``."""
    if name.startswith(prefix + "[") and name.endswith("]") and name[len(prefix) + 1:-1].isdigit():
        return name[len(prefix) + 1:-1]
    return None


class UserMapFamily:
    """The columns of the user's ``features=`` map: ``features[j]``, all ordered."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if exploration.user_map is None:
            return None
        feats = tuple(Feature(f"features[{j}]", True) for j in range(exploration.mapped.shape[1]))
        return Fitted(feats, _mapped_column)

    def describe(self, name: str) -> str | None:
        j = _coordinate(name, "features")
        return None if j is None else (f"value {j} (0-based) of the test's own feature map "
                                       "(features= of the audit call)")


class ValueFamily:
    """A scalar output's value: ``output`` (``output[0]`` for ``(n, 1)`` outputs without a
    user map); ordered when numeric, categorical otherwise."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not exploration.scalar:
            return None
        outputs = exploration.outputs
        name = "output" if outputs.ndim == 1 or exploration.user_map is not None else "output[0]"
        return Fitted((Feature(name, exploration.numeric),), _value_column)

    def describe(self, name: str) -> str | None:
        # "output[0]" of an (n, 1) output is described as a coordinate (ProjectionsFamily)
        return "the mechanism's output itself" if name == "output" else None


class ProjectionsFamily:
    """The first :data:`MAX_PROJECTIONS` coordinates of a numeric vector: ``output[j]``."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not exploration.numeric_vector:
            return None
        k = min(exploration.outputs.shape[1], MAX_PROJECTIONS)
        return Fitted(tuple(Feature(f"output[{j}]", True) for j in range(k)), _coordinate_column)

    def describe(self, name: str) -> str | None:
        j = _coordinate(name, "output")
        return None if j is None else f"coordinate {j} (0-based) of the output vector"


class RowSumFamily:
    """The sum of a numeric vector's coordinates, ``sum(output)``: a sufficient statistic for
    composed noisy releases of one query."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not exploration.numeric_vector:
            return None
        return Fitted((Feature("sum(output)", True, aggregate=True),), _row_sum_column)

    def describe(self, name: str) -> str | None:
        return "sum of the output vector's coordinates" if name == "sum(output)" else None


class RowHashFamily:
    """A 64-bit hash of the whole output row, ``row`` (categorical): repeated rows, such as
    sparse-vector answer patterns, become atoms. Atom events are labelled with the rows."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        outputs = exploration.outputs
        if exploration.user_map is not None:
            applies = outputs.ndim == 2 and outputs.shape[1] > 1
        else:
            applies = not exploration.scalar
        if not applies:
            return None
        return Fitted((Feature("row", False),), _row_hash_column, _unique_rows)

    def describe(self, name: str) -> str | None:
        return ("the whole output row (hashed: an exact repeated output)" if name == "row"
                else None)


# Column functions are module-level (not lambdas): a fitted featurizer travels to executor
# processes by pickle.
def _mapped_column(j: int, batch: Batch) -> NDArray[Any]:
    return batch.mapped[:, j]


def _value_column(_: int, batch: Batch) -> NDArray[Any]:
    return batch.outputs if batch.outputs.ndim == 1 else batch.outputs[:, 0]


def _coordinate_column(j: int, batch: Batch) -> NDArray[Any]:
    return batch.outputs[:, j]


def _row_sum_column(_: int, batch: Batch) -> NDArray[Any]:
    return batch.outputs.sum(axis=1, dtype=np.float64)


def _row_hash_column(_: int, batch: Batch) -> NDArray[Any]:
    return row_hash(batch.outputs)


def score_column(score: Callable[..., NDArray[Any]], cached: bool, _: int,
                 batch: Batch) -> NDArray[Any]:
    """``score(outputs)`` (``cached``: ``score(outputs, cache)``), for fitted learned scores
    (bind ``score`` and ``cached`` with :func:`functools.partial`)."""
    return score(batch.outputs, batch.cache) if cached else score(batch.outputs)


def _unique_rows(_: int, rows: NDArray[Any]) -> tuple[Any, ...]:
    uniq = np.unique(rows, axis=0) if rows.size else rows
    return tuple(tuple(r.tolist()) for r in uniq[:1000])
