"""Features: scalar views of mechanism outputs on which events are defined.

A :class:`Feature` names one column of the feature matrix (``output``, ``output[3]``,
``lsb(output)``, ``llr(output)``, ``row``, …) and says whether it is *ordered* (thresholds and
atoms) or *categorical* (atoms only), and whether it is an *aggregate* score of the whole row
(whose balanced paired events get slots of their own, :mod:`dpcheck.events.paired`). The
families that make features are in :mod:`dpcheck.features.family`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import InvalidArgument

__all__ = ["Feature", "FeatureMap", "row_hash", "apply_user_map", "sorted_unique"]

#: A user feature map: ``outputs -> (n,) or (n, m)`` numeric array.
FeatureMap = Callable[[NDArray[Any]], Any]


@dataclass(frozen=True, slots=True)
class Feature:
    """One scalar view of the outputs: ``ordered`` (thresholds and atoms) or categorical;
    ``aggregate``: a score of the whole output row (sum, learned scores)."""

    name: str
    ordered: bool
    aggregate: bool = False


#: Rows hashed together through every column (16384 rows: 128 kB per array, in L2 cache;
#: measured per 2²⁰ rows of 6 float64: 2¹² rows 51 ms, 2¹⁴ 42 ms; 10⁵ rows of 20: 22 vs 17).
_HASH_BLOCK = 1 << 14
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SHIFT1, _SHIFT2 = np.uint64(31), np.uint64(29)


def row_hash(rows: NDArray[Any]) -> NDArray[np.uint64]:
    """A 64-bit hash of each row of ``rows`` (any dtype), vectorised over rows.

    Collisions only merge outputs into one event, which keeps every event a fixed set: they cost
    power (with probability ~2⁻⁶⁴ per pair), never validity.
    """
    arr = np.asarray(rows)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.dtype.kind == "f" and (arr == 0).any():
        arr = arr + 0.0  # -0.0 and 0.0 compare equal, so they must hash equal
    arr = np.ascontiguousarray(arr)
    raw = arr.view(np.uint8).reshape(arr.shape[0], -1)
    pad = (-raw.shape[1]) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((raw.shape[0], pad), np.uint8)], axis=1)
    words = np.ascontiguousarray(raw).view(np.uint64)
    n = arr.shape[0]
    h = np.full(n, 0x9E3779B97F4A7C15, dtype=np.uint64)
    tmp = np.empty(min(n, _HASH_BLOCK), dtype=np.uint64)
    for start in range(0, n, _HASH_BLOCK):  # blocks of rows stay in cache through all columns
        hb, wb = h[start:start + _HASH_BLOCK], words[start:start + _HASH_BLOCK]
        tb = tmp[:hb.shape[0]]
        for j in range(words.shape[1]):  # loop over 8-byte columns, never over samples
            hb ^= wb[:, j]
            hb *= _MIX1
            np.right_shift(hb, _SHIFT1, out=tb)
            hb ^= tb
            hb *= _MIX2
            np.right_shift(hb, _SHIFT2, out=tb)
            hb ^= tb
    return h


def sorted_unique(x: NDArray[Any]) -> NDArray[Any]:
    """``np.unique(x)`` of a 1-d array: a strictly increasing array as it is (the atoms of
    a chosen event), integers (row hashes, cells) by one sort and a comparison of neighbours —
    the same array, while numpy 2's hash-based ``np.unique`` of 10⁵ distinct 64-bit integers
    takes 18–32 ms against 1.5 ms; other floats keep ``np.unique``, whose NaN and ±0 rules a
    plain sort does not follow."""
    x = np.asarray(x)
    if x.ndim == 1 and x.dtype.kind in "iuf" and 1 < x.size and bool(np.all(x[1:] > x[:-1])):
        return x.copy()  # strictly increasing (so no NaN, no ±0 pair): already np.unique(x)
    if x.ndim != 1 or x.dtype.kind not in "iu" or x.size < 2:
        return np.unique(x)
    s = np.sort(x)
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def apply_user_map(user_map: FeatureMap, outputs: NDArray[Any]) -> NDArray[np.float64]:
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
