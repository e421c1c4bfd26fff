"""Float holes in vector outputs: the lowest set bit of the coordinates that show one.

A float64 output computed as ``value + noise`` has the resolution of the noise at magnitude
≈ |value| (:mod:`dpcheck.features.float_bits`): an output near 0 computed as ``1 + noise`` lies
on the grid of ``ulp(1)`` (lowest set bit ≥ −53), while the same output computed as
``0 + noise`` has the full resolution of its own magnitude (Mironov 2012). For scalar outputs
``lsb(output)`` shows it; a vector output has that hole per coordinate, and hash-, sum- or
value-based vector features cannot see it.

Feature (float vectors, float features on, no user map), per coordinate ``j`` among the first
:data:`~dpcheck.features.family.MAX_PROJECTIONS`:

``lsb(output[j])``
    the lowest set bit of coordinate ``j`` (:func:`~dpcheck.features.float_bits.lsb`), ordered,
    kept only when the generation half of the exploration sample shows a hole there: at least
    :data:`MIN_BELOW` outputs (and a :data:`MIN_SHARE` share) of one dataset have a lowest
    set bit *below the smallest one the other dataset produced*. Without a hole the other
    side's outputs beyond one side's extreme order statistic number a few (a continuous
    magnitude has no floor); with one, a whole range of resolutions is missing on one side.
    Correct float-vector mechanisms therefore keep their features (and their audits) as
    before. The half-lines ``{lsb(output[j]) ≤ k}`` are then the support-mismatch events.

References
----------
I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012;
issue 30 item 4 (float features per coordinate of vector outputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.family import MAX_PROJECTIONS, Batch, Exploration, Fitted
from dpcheck.features.feature import Feature
from dpcheck.features.float_bits import lsb

__all__ = ["VectorBitsFamily", "hole_coordinates", "MIN_BELOW", "MIN_SHARE"]

#: Outputs of one side below the other side's smallest lowest set bit that make a hole.
MIN_BELOW = 30
#: ... and their least share of that side's generation outputs.
MIN_SHARE = 0.002
_SENTINEL = 2047.0  # lsb of 0 and ±inf are 2048 / 2047


def _below(a: NDArray[np.float64], b: NDArray[np.float64]) -> int:
    """Outputs of ``a`` whose lowest set bit is below every one of ``b`` (finite, non-zero)."""
    fb = b[b < _SENTINEL]
    if fb.size == 0:
        return 0
    return int(np.count_nonzero(a < fb.min()))


def hole_coordinates(gen_d: NDArray[Any], gen_dp: NDArray[Any]) -> list[int]:
    """The coordinates (among the first :data:`MAX_PROJECTIONS`) whose lowest set bits show a
    hole on these exploration outputs (see the module docstring)."""
    k = min(gen_d.shape[1], MAX_PROJECTIONS)
    a, b = lsb(gen_d[:, :k]), lsb(gen_dp[:, :k])
    need = max(MIN_BELOW, MIN_SHARE * min(a.shape[0], b.shape[0]))
    return [j for j in range(k)
            if max(_below(a[:, j], b[:, j]), _below(b[:, j], a[:, j])) >= need]


@dataclass(frozen=True)
class _Columns:
    """``compute(index, batch)`` of the fitted family (picklable for executors)."""

    coords: tuple[int, ...]

    def __call__(self, index: int, batch: Batch) -> NDArray[Any]:
        return lsb(batch.outputs[:, self.coords[index]])


class VectorBitsFamily:
    """``lsb(output[j])`` for the coordinates of a float vector that show a hole (see the
    module docstring)."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if (not exploration.float_bits or not exploration.learnable
                or exploration.outputs.dtype.kind != "f"):
            return None
        coords = hole_coordinates(*exploration.generation)
        if not coords:
            return None
        return Fitted(tuple(Feature(f"lsb(output[{j}])", True) for j in coords),
                      _Columns(tuple(coords)))

    def describe(self, name: str) -> str | None:
        if name.startswith("lsb(output[") and name.endswith("])"):
            j = name[len("lsb(output["):-2]
            if j.isdigit():
                return (f"the lowest set bit of coordinate {j} (0-based) of the output's float64 "
                        "representation: the coordinate is rounded onto a different grid under "
                        "one dataset (floating-point attack, Mironov 2012)")
        return None
