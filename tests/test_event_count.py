""":func:`dpcheck.events.event.count_events` (one sort per feature column) counts exactly what
:meth:`Event.count` (one pass per event) counts, for every event kind, on columns with ties,
infinities and NaN, and on integer (hashed-row) columns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.events.event import Event, count_events

_VALUES = st.sampled_from([-np.inf, -2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan])


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[Event], list[np.ndarray]]:
    n = draw(st.integers(0, 40))
    floats = np.array(draw(st.lists(_VALUES, min_size=n, max_size=n)), dtype=np.float64)
    ints = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.int64)
    columns = [floats, ints]
    events = []
    for _ in range(draw(st.integers(1, 12))):
        f = draw(st.integers(0, 1))
        bound = st.sampled_from([-np.inf, -1.5, -1.0, 0.0, 0.5, 1.0, 2.0, np.inf])
        kind = draw(st.sampled_from(["le", "gt", "interval", "outside", "atoms"]))
        name = ["x", "row"][f]
        if kind == "atoms":
            pool = _VALUES if f == 0 else st.integers(-4, 4)
            vals = np.sort(np.array(draw(st.lists(pool, max_size=6)),
                                    dtype=columns[f].dtype))
            events.append(Event(f, name, "atoms", values=vals))
        else:
            lo, hi = draw(bound), draw(bound)
            events.append(Event(f, name, kind, low=lo, high=hi))
    return events, columns


@settings(max_examples=300, deadline=None)
@given(_case())
def test_count_events_equals_event_count(case: tuple[list[Event], list[np.ndarray]]) -> None:
    events, columns = case
    expected = [int(np.count_nonzero(ev.mask(columns))) if ev.kind != "atoms" else
                int(np.count_nonzero(np.isin(columns[ev.feature], ev.values)))
                for ev in events]
    assert count_events(events, columns).tolist() == expected
    assert [ev.count(columns) for ev in events if ev.kind != "atoms"] == [
        c for c, ev in zip(expected, events) if ev.kind != "atoms"]


def test_count_events_of_a_large_support_set() -> None:
    """Thousands of atoms on a continuous column (a support candidate's shape)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=5000)
    atoms = np.sort(np.concatenate([x[::3], rng.normal(size=500)]))
    ev = Event(0, "output", "atoms", values=atoms, support=True)
    assert count_events([ev], [x])[0] == ev.count([x]) == 1667
