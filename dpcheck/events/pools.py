"""Candidate pools: every event one feature generates on the generation half, as count arrays.

For each feature the pooled, sorted exploration outputs give the atoms (every value when there
are at most ``max_atoms``, otherwise the values seen at least twice), the likelihood-ratio
ordered prefixes of the atoms (both orders), and for ordered features the half-lines, intervals
and two-tailed complements on a threshold grid: every value when there are at most
:data:`FULL_GRID`, otherwise a geometric grid of pooled order statistics from both ends
(:data:`TAIL_GRID` points, so tail events down to probability ~1/n are reachable) plus a
uniform middle (:data:`UNIFORM_GRID`). A :class:`Pool` keeps the counts of all of them as
parallel arrays and builds an :class:`~dpcheck.events.event.Event` only when one is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.events.event import Event, Kind
from dpcheck.features.feature import Feature

__all__ = ["Pool", "Segment", "feature_pool", "best_per_family", "PER_FAMILY", "MAX_ATOMS"]

#: Default cap on the number of point events per feature.
MAX_ATOMS = 2048
#: Candidates per event family (segment) and direction of every feature handed to validation.
PER_FAMILY = 2
#: Features with at most this many distinct values use every value as a threshold.
FULL_GRID = 128
UNIFORM_GRID = 64
TAIL_GRID = 40


@dataclass
class Segment:
    """A run of same-kind candidates: ``kind`` with parameter arrays ``a`` (and ``b``)."""

    kind: str
    size: int
    a: NDArray[Any]
    b: NDArray[Any] | None = None


@dataclass
class Pool:
    """Candidate events of one feature: counts as parallel arrays, parameters by segment."""

    feature: int
    name: str
    atoms: NDArray[Any]
    segments: list[Segment]
    count_d: NDArray[np.int64]
    count_dp: NDArray[np.int64]
    #: The feature's generation columns of D and D′, sorted (shared with the counts of the
    #: shortlist on the generation half, :func:`dpcheck.events.event.count_events`).
    sorted_d: NDArray[Any] | None = None
    sorted_dp: NDArray[Any] | None = None

    def materialise(self, i: int) -> Event:
        """The ``i``-th candidate event of this pool."""
        for seg in self.segments:
            if i < seg.size:
                break
            i -= seg.size
        f, name = self.feature, self.name
        if seg.kind == "atom":
            return Event(f, name, "atoms", values=self.atoms[i : i + 1].copy())
        if seg.kind == "prefix":
            return Event(f, name, "atoms", values=np.sort(self.atoms[seg.a[: i + 1]]))
        if seg.kind == "le":
            return Event(f, name, "le", high=float(seg.a[i]))
        if seg.kind == "gt":
            return Event(f, name, "gt", low=float(seg.a[i]))
        assert seg.b is not None
        kind: Kind = "outside" if seg.kind == "outside" else "interval"
        return Event(f, name, kind, low=float(seg.a[i]), high=float(seg.b[i]))


def _grid_indices(n: int) -> NDArray[np.int64]:
    tail = np.unique(np.round(np.geomspace(1, max(n / 2, 1), TAIL_GRID)).astype(np.int64))
    mid = np.round(np.linspace(0, n - 1, UNIFORM_GRID)).astype(np.int64)
    idx = np.concatenate([tail - 1, n - tail, mid])
    return np.unique(np.clip(idx, 0, n - 1))


def _side_counts(sorted_x: NDArray[Any], values: NDArray[Any]) -> NDArray[np.int64]:
    return (np.searchsorted(sorted_x, values, "right")
            - np.searchsorted(sorted_x, values, "left")).astype(np.int64)


def feature_pool(
    j: int, feat: Feature, a: NDArray[Any], b: NDArray[Any], max_atoms: int,
    intervals: bool = True,
) -> Pool:
    sa, sb = np.sort(a), np.sort(b)
    pooled = np.sort(np.concatenate([sa, sb]), kind="stable")  # merge of two sorted runs
    n = pooled.size
    new = np.ones(n, dtype=bool)
    np.not_equal(pooled[1:], pooled[:-1], out=new[1:])
    uniq = pooled[new]
    if uniq.size <= max_atoms:
        atoms = uniq
    else:  # values seen at least twice in the pooled sample
        atoms = np.unique(pooled[1:][~new[1:]])
        if atoms.size > max_atoms:
            mult = _side_counts(pooled, atoms)
            atoms = np.sort(atoms[np.argsort(-mult, kind="stable")[:max_atoms]])
    ca, cb = _side_counts(sa, atoms), _side_counts(sb, atoms)
    segments = [Segment("atom", atoms.size, atoms)]
    counts_d: list[NDArray[np.int64]] = [ca]
    counts_dp: list[NDArray[np.int64]] = [cb]
    if atoms.size > 1:
        ratio = np.log((ca + 0.5) / (cb + 0.5))
        for order in (np.argsort(-ratio, kind="stable"), np.argsort(ratio, kind="stable")):
            segments.append(Segment("prefix", atoms.size - 1, order))
            counts_d.append(np.cumsum(ca[order])[:-1])
            counts_dp.append(np.cumsum(cb[order])[:-1])
    if feat.ordered:
        t = uniq if uniq.size <= FULL_GRID else np.unique(pooled[_grid_indices(n)])
        le_a = np.searchsorted(sa, t, "right").astype(np.int64)
        le_b = np.searchsorted(sb, t, "right").astype(np.int64)
        segments += [Segment("le", t.size, t), Segment("gt", t.size, t)]
        counts_d += [le_a, sa.size - le_a]
        counts_dp += [le_b, sb.size - le_b]
        if intervals:
            lo, hi = np.triu_indices(t.size, 1)
            inside_a, inside_b = le_a[hi] - le_a[lo], le_b[hi] - le_b[lo]
            segments += [Segment("interval", lo.size, t[lo], t[hi]),
                         Segment("outside", lo.size, t[lo], t[hi])]
            counts_d += [inside_a, sa.size - inside_a]
            counts_dp += [inside_b, sb.size - inside_b]
    return Pool(j, feat.name, atoms, segments, np.concatenate(counts_d),
                np.concatenate(counts_dp), sa, sb)


def best_per_family(
    scores: NDArray[np.float64], pools: list[Pool], offsets: NDArray[np.int64], total: int
) -> list[int]:
    """Flat indices of the :data:`PER_FAMILY` best (event, direction) pairs of every event
    family (segment) of every feature, so validation sees every kind of event, not only the
    family with the luckiest generation counts."""
    picks: list[int] = []
    for p, pool in enumerate(pools):
        start = int(offsets[p])
        for seg in pool.segments:
            for base in (start, start + total):  # both directions
                block = scores[base : base + seg.size]
                if block.size:
                    top = np.argsort(-block, kind="stable")[:PER_FAMILY]
                    picks.extend(int(base + t) for t in top)
            start += seg.size
    return picks
