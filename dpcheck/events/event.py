"""Events: fixed sets of outputs described by one feature, and the candidates chosen to confirm.

An :class:`Event` is a half-line, an interval, a two-tailed complement or a set of atoms of one
feature column (:mod:`dpcheck.features`); a :class:`Candidate` is an event with the direction
it is tested in and the statistic that will certify it. Both are fixed before any confirmation
output is drawn, so every certified bound is about a fixed measurable set.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.feature import sorted_unique

__all__ = ["Event", "Candidate", "Direction", "Kind", "count_events", "across_blocks"]

Direction = Literal["d>d_prime", "d_prime>d"]
Kind = Literal["le", "gt", "interval", "outside", "atoms"]
#: Atom sets larger than this are counted by sorting the outputs (see :meth:`Event.count`).
_SORTED_COUNT = 256
#: Atom sets up to this size are matched by equality passes (:meth:`Event.mask`).
_EQUAL_ATOMS = 32


@dataclass(frozen=True, eq=False)
class Event:
    """A fixed set of outputs, described by one feature.

    ``kind`` is ``"le"`` (feature ≤ high), ``"gt"`` (feature > low), ``"interval"``
    (low < feature ≤ high), ``"outside"`` (feature ≤ low or feature > high) or ``"atoms"``
    (feature ∈ values). ``labels`` are human-readable forms of the values (for hashed rows:
    the output rows themselves, as seen during exploration). ``tie_value``/``tie``: a
    randomised event (:mod:`dpcheck.events.ties`) that also holds each output equal to ``tie_value``
    with probability ``tie``; :meth:`mask` and :meth:`count` are its deterministic part,
    :meth:`count_random` draws the coins. ``support``: an ``"atoms"`` event made of the values
    one side produced during exploration and the other did not (:mod:`dpcheck.events.support`).
    """

    feature: int
    feature_name: str
    kind: Kind
    low: float | None = None
    high: float | None = None
    values: NDArray[Any] = field(default_factory=lambda: np.empty(0))
    labels: tuple[Any, ...] = ()
    tie_value: float | None = None
    tie: float = 0.0
    support: bool = False

    def ties(self, columns: list[NDArray[Any]]) -> int:
        """Outputs at the randomised boundary value ``tie_value`` (0 for a plain event)."""
        if self.tie_value is None or self.tie == 0.0:
            return 0
        return int(np.count_nonzero(columns[self.feature] == self.tie_value))

    def count_random(self, columns: list[NDArray[Any]], coins: np.random.Generator) -> int:
        """Outputs in the event, each output at ``tie_value`` counted with probability ``tie``
        (Bichsel et al. 2021 §4: the randomised threshold of the optimal attack). The coins of
        the ``m`` tied outputs are independent, so their count is drawn as ``Binomial(m,
        tie)`` from ``coins`` — a Bernoulli indicator per output, so the counts stay binomial
        (Poisson with Poissonized sizes) and the exact tests apply unchanged."""
        base = self.count(columns)
        m = self.ties(columns)
        return base + int(coins.binomial(m, self.tie)) if m else base

    def mask(self, columns: list[NDArray[Any]]) -> NDArray[np.bool_]:
        """Boolean membership of each output (given its feature columns)."""
        x = columns[self.feature]
        if self.kind == "le":
            return x <= self.high
        if self.kind == "gt":
            return x > self.low
        if self.kind == "interval":
            return (x > self.low) & (x <= self.high)
        if self.kind == "outside":
            return (x <= self.low) | (x > self.high)
        vals = self.values
        if vals.size == 0:
            return np.zeros(x.shape[0], dtype=bool)
        if vals.size <= _EQUAL_ATOMS and x.dtype == vals.dtype and x.dtype.kind in "biuf":
            # a few atoms: one equality pass each, the same members (NaN meets nothing, -0.0
            # meets 0.0); on 2²⁰ outputs 0.1 ms for one atom and 4 ms for 32, against 10 and
            # 30 ms of binary searches
            out = x == vals[0]
            for v in vals[1:]:
                out |= x == v
            return out
        idx = np.minimum(np.searchsorted(vals, x), vals.size - 1)
        return vals[idx] == x

    def count(self, columns: list[NDArray[Any]],
              sorted_columns: dict[Any, NDArray[Any]] | None = None) -> int:
        """Number of outputs in the event (``sorted_columns``: sorted feature columns, and the
        table slots of hashed ones, shared by the events counted on the same outputs, filled
        on demand)."""
        vals = self.values
        if (self.kind == "atoms" and vals.size > _SORTED_COUNT
                and bool(np.all(vals[1:] > vals[:-1]))):
            # many (distinct, sorted) atoms, e.g. a support set: sort the outputs once and look
            # the atoms up in them; binary searches of unsorted outputs in a large atom array
            # miss the cache
            if sorted_columns is None:
                sorted_columns = {}
            if columns[self.feature].dtype == vals.dtype and vals.dtype in _HASHED:
                return _count_hashed(columns[self.feature], vals, sorted_columns,
                                     self.feature)
            x = sorted_columns.get(self.feature)
            if x is None:
                x = sorted_columns[self.feature] = np.sort(columns[self.feature])
            return int(np.sum(np.searchsorted(x, vals, "right")
                              - np.searchsorted(x, vals, "left")))
        return int(np.count_nonzero(self.mask(columns)))

    def describe(self) -> str:
        """Human-readable form, e.g. ``output ≤ -0.25`` or ``row ∈ {…3 values…}``."""
        f = self.feature_name
        if self.tie_value is not None and self.tie > 0.0:
            plain = dataclasses.replace(self, tie_value=None, tie=0.0).describe()
            return f"{plain}, or {f} = {self.tie_value:.6g} with probability {self.tie:.4g}"
        if self.kind == "le":
            return f"{f} <= {self.high:.6g}"
        if self.kind == "gt":
            return f"{f} > {self.low:.6g}"
        if self.kind == "interval":
            return f"{self.low:.6g} < {f} <= {self.high:.6g}"
        if self.kind == "outside":
            return f"{f} <= {self.low:.6g} or {f} > {self.high:.6g}"
        if self.support:
            return (f"{f} in the {self.values.size} values seen under one dataset only during "
                    "exploration")
        items = self.labels if self.labels else self.values
        shown = ", ".join(_show(v) for v in items[:5])
        more = f", … ({self.values.size} values)" if self.values.size > 5 else ""
        return f"{f} in {{{shown}{more}}}"

    def to_dict(self, max_values: int = 1000) -> dict[str, object]:
        """JSON-safe machine form (atom lists longer than ``max_values`` are truncated)."""
        out: dict[str, object] = {"feature": self.feature_name, "kind": self.kind}
        if self.low is not None:
            out["low"] = float(self.low)
        if self.high is not None:
            out["high"] = float(self.high)
        if self.tie_value is not None and self.tie > 0.0:
            out["tie_value"] = float(self.tie_value)
            out["tie_probability"] = float(self.tie)
        if self.support:  # the one-sided exploration values (dpcheck.events.support)
            out["support"] = True
            max_values = min(max_values, 20)
        if self.kind == "atoms":
            out["n_values"] = int(self.values.size)
            out["values"] = [_json_value(v) for v in self.values[:max_values]]
            out["values_truncated"] = bool(self.values.size > max_values)
            if self.labels:
                out["rows"] = [_json_value(v) for v in self.labels[:max_values]]
        return out


#: Hashed atom sets (:func:`_count_hashed`): a table of 2**_TABLE_BITS flags (4 MB), so a
#: support set of ~10⁵ row hashes lets ~2.5 % of the other rows through to the exact search.
_TABLE_BITS = 22


#: Column types whose large atom sets are counted through the flag table.
_HASHED = (np.dtype(np.uint64), np.dtype(np.float64))


#: Fibonacci hashing's multiplier (2⁶⁴ / golden ratio, odd): the top bits of ``key · _MIX``
#: spread keys that differ only in their high bits (integer-valued floats have zero low bits).
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _slots(x: NDArray[Any]) -> NDArray[np.uint64]:
    """Table slots of ``x``: the top :data:`_TABLE_BITS` bits of ``key · _MIX`` (mod 2⁶⁴), where
    the key is a uint64 column's value or a float64's bit pattern with −0.0 taken as 0.0
    (``+ 0.0``), so that equal values share a slot."""
    key = x if x.dtype == np.uint64 else (x + 0.0).view(np.uint64)
    return (key * _MIX) >> np.uint64(64 - _TABLE_BITS)


def _count_hashed(x: NDArray[Any], vals: NDArray[Any],
                  shared: dict[Any, NDArray[Any]], feature: int) -> int:
    """Outputs whose 64-bit value (a row hash, :func:`dpcheck.features.feature.row_hash`, or a
    float64 value) is one of the sorted distinct ``vals``: the same count as sorting ``x`` and
    searching every value in it, without the sort. A flag table indexed by a hash of a value's
    bits (:func:`_slots`) marks the slots of ``vals``; only outputs on a marked slot (every
    output in the set, and the few others that share a slot) are searched for in ``vals``, by
    value (so −0.0 meets 0.0 and NaN meets nothing, as in the sorted search). ``shared``: the
    slots of ``x``, computed once for the events counted on the same outputs, and the table of
    ``vals`` (keyed by the array's identity), built once for all the blocks of a chunk
    (:func:`across_blocks`)."""
    slots = shared.get(("slots", feature))
    if slots is None:
        slots = shared[("slots", feature)] = _slots(x)
    table = shared.get(("table", id(vals)))
    if table is None:
        table = np.zeros(1 << _TABLE_BITS, dtype=bool)
        table[_slots(vals)] = True
        shared[("table", id(vals))] = table
    maybe = x[table.take(slots)]
    at = np.minimum(np.searchsorted(vals, maybe), vals.size - 1)
    return int(np.count_nonzero(vals[at] == maybe))


def across_blocks(shared: dict[Any, NDArray[Any]]) -> dict[Any, NDArray[Any]]:
    """The entries of a block's ``shared`` cache (:meth:`Event.count`) that hold for the next
    block of the same chunk: the atom sets' flag tables, not the block's sorted columns or
    slots."""
    return {k: v for k, v in shared.items() if isinstance(k, tuple) and k[0] == "table"}


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    return f"{v:.6g}" if isinstance(v, (float, np.floating)) else str(_json_value(v))


def _json_value(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, tuple):
        return [_json_value(x) for x in v]
    return v


def count_events(events: Sequence[Event], columns: list[NDArray[Any]],
                 presorted: Sequence[NDArray[Any] | None] | None = None) -> NDArray[np.int64]:
    """:meth:`Event.count` of each event, sorting each feature column once (``presorted[f]``:
    column ``f`` already sorted, ``np.sort(columns[f])``, when known).

    With the column sorted (NaN last), every half-line, interval and complement is counted by
    two binary searches of its bounds and a set of atoms by two searches per atom, so a
    shortlist of hundreds of events costs about one sort per feature instead of one pass over
    the outputs per event. The counts equal :meth:`Event.count`'s (tested), NaN outputs included
    (they belong to no event)."""
    out = np.empty(len(events), dtype=np.int64)
    by_feature: dict[int, list[int]] = {}
    for i, ev in enumerate(events):
        by_feature.setdefault(ev.feature, []).append(i)
    for f, idx in by_feature.items():
        known = None if presorted is None else presorted[f]
        x = np.sort(columns[f]) if known is None else known
        valid = x.size - (int(np.count_nonzero(np.isnan(x))) if x.dtype.kind in "fc" else 0)

        def at_most(t: Any, x: NDArray[Any] = x) -> int:  # outputs ≤ t (NaN sorts last)
            return int(np.searchsorted(x, t, "right"))

        for i in idx:
            ev = events[i]
            if ev.kind == "le":
                out[i] = at_most(ev.high)
            elif ev.kind == "gt":
                out[i] = valid - at_most(ev.low)
            elif ev.kind == "interval":
                out[i] = max(0, at_most(ev.high) - at_most(ev.low))
            elif ev.kind == "outside":
                lo, hi = at_most(ev.low), at_most(ev.high)
                out[i] = lo + (valid - hi) - max(0, lo - hi)
            else:
                vals = sorted_unique(ev.values)
                if vals.dtype.kind in "fc":
                    vals = vals[~np.isnan(vals)]
                out[i] = int(np.sum(np.searchsorted(x, vals, "right")
                                    - np.searchsorted(x, vals, "left")))
    return out


@dataclass(frozen=True)
class Candidate:
    """An event chosen on the exploration sample, with the direction it is tested in.

    ``direction == "d>d_prime"`` means the event is claimed more likely under D (``p`` is
    ``P[M(D) ∈ S]``); ``explore_p`` / ``explore_q`` are its counts on the validation half of
    the exploration sample, in that order, and ``score`` its projected bound there. ``method``
    is the confirmation statistic projected to be sharper: ``"union"`` (two Clopper–Pearson
    bounds) or ``"ratio"`` (the conditional test of :func:`dpcheck.stats.ratio_lower`, only
    offered when confirmation sizes are Poissonized). ``partner``: for a paired event
    (:mod:`dpcheck.events.paired`), the disjoint event counted in the *other* direction; the counts are
    then combined and certified by the conditional test. ``weight``: the candidate's relative
    share of the audit's α (weighted Bonferroni; :mod:`dpcheck.events.support` gives its
    candidates less than the ranked ones' 1). ``strong``: put in by
    :func:`dpcheck.events.slots.strong_last_slot` (the best under the max-noise shrinkage, left
    out by the mild ranking); :func:`dpcheck.events.slots.lead_weighted` gives it the lead share.
    """

    event: Event
    direction: Direction
    score: float
    explore_p: int
    explore_q: int
    method: Literal["union", "ratio"] = "union"
    partner: Event | None = None
    weight: float = 1.0
    strong: bool = False
