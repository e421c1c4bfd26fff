"""The fast float-vector paths (issue 30 item 4) compute exactly what the plain forms computed.

Each rewritten function is checked against a direct transcription of its former form, on
hypothesis-generated rows that include the cases the fast paths branch on (non-finite values,
sentinels, ``-0.0``, values on a bin edge, all-regular columns):

* :meth:`dpcheck.features.coding.Column.codes` — bins counted by comparisons, against
  ``searchsorted(edges, x, "right")`` on the regular values;
* :meth:`dpcheck.features.coding.Column.score` — the no-gather path when every value is
  regular, against the masked sum (bit for bit: same operations in the same order);
* :func:`dpcheck.features.feature.row_hash` — the blocked, in-place mixing, against the
  column-at-a-time form (same 64-bit values, ``-0.0`` hashed as ``0.0``);
* :class:`dpcheck.features.row_summary.RowSummary` and
  :class:`dpcheck.features.learned.SignCount` — column loops, against the row reductions;
* :func:`dpcheck.core.confirm.count_outputs` — support events sharing one sorted column,
  against :meth:`dpcheck.events.event.Event.mask` counts.

Round 2 (each against the former code, transcribed here):

* :meth:`dpcheck.features.featurizer.Featurizer.__call__` in row blocks, against the whole
  batch at once (every vector family, C and Fortran order, ``only``);
* :class:`~dpcheck.features.row_summary.RowSummary` byte counts (and the int64 path past 255);
* hashed atom sets counted through a flag table, against the sort-and-search count, with
  tables small enough that most outputs collide;
* :func:`dpcheck.features.feature.sorted_unique` against ``np.unique``;
* :func:`dpcheck.features.learned.fit_basis` and the Newton steps that reuse the line
  search's logits, against the former ``fit_weights``/``_newton``; the logistic, naive-Bayes,
  sign-count and row-summary fits with shared codings, against the former construction.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcheck.core.confirm import count_outputs
from dpcheck.events.event import Event
from dpcheck.features.coding import (_COMPARE_EDGES, CATEGORICAL_LEVELS, CLIP, MAX_SENTINELS,
                                     Column, column_coding)
from dpcheck.features.feature import _HASH_BLOCK, row_hash
from dpcheck.features.featurizer import Featurizer
from dpcheck.features.learned import SignCount
from dpcheck.features.row_summary import RowSummary

_SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.5, math.inf, -math.inf, 1e300, -1e-300]
_VALUES = st.one_of(st.sampled_from(_SPECIAL),
                    st.floats(-10, 10, allow_nan=False, allow_subnormal=True))
#: rows of 5 values, and the summary levels, for the row-summary comparisons
_ROWS5 = st.lists(st.lists(_VALUES, min_size=5, max_size=5), min_size=1, max_size=40)
_LEVELS = st.lists(st.sampled_from([-math.inf, 0.0, 1.0, -1.0, math.inf]), max_size=5,
                   unique=True)


def _old_codes(col: Column, x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.shape[0], dtype=np.intp)
    regular = np.ones(x.shape[0], dtype=bool) if not col.categorical else None
    for i, v in enumerate(col.levels):
        hit = x == v
        out[hit] = 1 + i
        if regular is not None:
            regular &= ~hit
    if regular is not None:
        regular &= np.isfinite(x)
        out[regular] = 1 + col.levels.size + np.searchsorted(col.edges, x[regular], "right")
    return out


def _old_coding(index: int, pooled: np.ndarray, bins: int) -> Column:
    values, counts = np.unique(pooled, return_counts=True)
    if values.size <= CATEGORICAL_LEVELS:
        top = int(np.argmax(counts))
        return Column(index, np.delete(values, top).astype(np.float64), True,
                      base=float(values[top]))
    repeated = (counts >= 3) | ~np.isfinite(values)
    order = np.argsort(-counts[repeated], kind="stable")[:MAX_SENTINELS]
    sentinels = np.sort(values[repeated][order]).astype(np.float64)
    regular = pooled[np.isfinite(pooled) & ~np.isin(pooled, sentinels)]
    if regular.size == 0:
        return Column(index, sentinels, False)
    q1, med, q3 = np.quantile(regular, [0.25, 0.5, 0.75])
    scale = float(q3 - q1) / 1.349
    if not np.isfinite(scale) or scale <= 0:
        scale = float(np.std(regular)) or 1.0
    edges = np.unique(np.quantile(regular, np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    return Column(index, sentinels, False, float(med), scale, edges.astype(np.float64))


def _old_score(col: Column, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    code = _old_codes(col, x)
    k = col.levels.size
    table = np.zeros(col.n_codes)
    table[1:1 + k] = w[:k]
    if col.categorical:
        return table[code]
    table[k + 2:] = w[k + 3:]
    out = table[code]
    regular = code > k
    z = np.clip((x[regular] - col.centre) / col.scale, -CLIP, CLIP)
    out[regular] += z * w[k] + np.sign(z) * w[k + 1] + np.abs(z) * w[k + 2]
    return out


@settings(max_examples=200, deadline=None)
@given(fit=st.lists(_VALUES, min_size=1, max_size=60),
       spread=st.integers(0, 200), repeats=st.integers(0, 5),
       x=st.lists(_VALUES, min_size=0, max_size=60),
       bins=st.sampled_from([2, 8, 32, 2 * _COMPARE_EDGES + 6]),
       seed=st.integers(0, 2**32 - 1))
def test_codes_and_score_match_the_plain_forms(fit, spread, repeats, x, bins, seed):
    """Every coding of a column (categorical, sentinels, many or few edges) codes and scores
    any values — its own edges and sentinels included — as the plain forms did. ``spread``
    continuous values (and ``repeats`` copies of the given ones) make the column continuous
    with sentinels, or categorical."""
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([np.tile(np.asarray(fit, dtype=np.float64), repeats + 1),
                             rng.laplace(0, 2, spread)])
    col = column_coding(0, pooled, bins)
    old = _old_coding(0, pooled, bins)  # one quantile call instead of two: the same coding
    assert col.key == old.key and col.categorical == old.categorical
    assert (col.centre, col.scale) == (old.centre, old.scale)
    assert col.base == old.base or (math.isnan(col.base) and math.isnan(old.base))
    values = np.concatenate([np.asarray(x, dtype=np.float64), pooled, col.edges, col.levels])
    assert np.array_equal(col.codes(values), _old_codes(col, values))
    w = np.random.default_rng(seed).normal(size=col.width)
    assert np.array_equal(col.score(values, w), _old_score(col, values, w))
    finite = values[np.isfinite(values) & ~np.isin(values, col.levels)]  # the no-gather path
    assert np.array_equal(col.score(finite, w), _old_score(col, finite, w))


def test_codes_continuous_laplace_column():
    """A plain continuous column (no sentinel: the comparison path on every value)."""
    rng = np.random.default_rng(3)
    col = column_coding(0, rng.laplace(size=2000))
    assert not col.categorical and col.levels.size == 0 and col.edges.size == 7
    x = np.concatenate([rng.laplace(size=50_000), col.edges])  # values on an edge too
    assert np.array_equal(col.codes(x), _old_codes(col, x))
    w = rng.normal(size=col.width)
    assert np.array_equal(col.score(x, w), _old_score(col, x, w))


def _old_row_hash(rows: np.ndarray) -> np.ndarray:
    arr = np.asarray(rows)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.dtype.kind == "f":
        arr = arr + 0.0
    arr = np.ascontiguousarray(arr)
    raw = arr.view(np.uint8).reshape(arr.shape[0], -1)
    pad = (-raw.shape[1]) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros((raw.shape[0], pad), np.uint8)], axis=1)
    words = np.ascontiguousarray(raw).view(np.uint64)
    h = np.full(arr.shape[0], 0x9E3779B97F4A7C15, dtype=np.uint64)
    for j in range(words.shape[1]):
        h ^= words[:, j]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(29)
    return h


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 3 * _HASH_BLOCK + 5), width=st.integers(1, 7),
       dtype=st.sampled_from(["float64", "float32", "int8", "int64", "uint16", "bool"]),
       zeros=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_row_hash_matches_the_plain_form(rows, width, dtype, zeros, seed):
    """Same hash for every dtype, width (padded or not) and number of rows (one or several
    blocks); with ``zeros``, -0.0 and 0.0 rows appear and hash alike."""
    rng = np.random.default_rng(seed)
    x = rng.laplace(0, 3, (rows, width))
    if zeros:
        x[rng.random((rows, width)) < 0.3] = 0.0
        x[rng.random((rows, width)) < 0.3] = -0.0
    x = x.astype(dtype)
    assert np.array_equal(row_hash(x), _old_row_hash(x))
    if x.shape[1] == 1:
        assert np.array_equal(row_hash(x[:, 0]), _old_row_hash(x[:, 0]))
    if zeros and dtype.startswith("float"):
        assert row_hash(np.array([[-0.0] * width], dtype))[0] == row_hash(
            np.zeros((1, width), dtype))[0]


def _old_summary(s: RowSummary, outputs: np.ndarray) -> np.ndarray:
    x = np.asarray(outputs, dtype=np.float64)[:, :s.width]
    out = np.empty((x.shape[0], s.levels.size + 2))
    regular = np.isfinite(x)
    for i, v in enumerate(s.levels):
        hit = x == v
        out[:, i] = hit.sum(axis=1, dtype=np.int64)
        if math.isfinite(v):
            regular &= ~hit
    filled = np.where(regular, x, np.inf)
    out[:, -2] = filled.min(axis=1)
    np.copyto(filled, -np.inf, where=~regular)
    hi = filled.max(axis=1)
    hi[np.isneginf(hi)] = np.inf
    out[:, -1] = hi
    return out


@settings(max_examples=100, deadline=None)
@given(rows=_ROWS5, levels=_LEVELS, width=st.integers(1, 5))
def test_row_summary_matches_the_row_reductions(rows, levels, width):
    x = np.asarray(rows, dtype=np.float64)
    s = RowSummary(np.sort(np.asarray(levels, dtype=np.float64)), width)
    assert np.array_equal(s(x), _old_summary(s, x))


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.lists(_VALUES, min_size=4, max_size=4), min_size=1, max_size=40),
       seed=st.integers(0, 2**32 - 1))
def test_sign_count_matches_the_row_count(rows, seed):
    x = np.asarray(rows, dtype=np.float64)
    rng = np.random.default_rng(seed)
    sc = SignCount(np.asarray([0, 2, 3], dtype=np.intp), rng.normal(size=3))
    old = np.count_nonzero(x[:, sc.indices] > sc.medians, axis=1).astype(np.float64)
    assert np.array_equal(sc(x), old)


def test_support_counts_share_one_sort():
    """Two support events of the row feature (both directions) and a half-line, counted on one
    chunk through the shared sorted column: the counts of their masks."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 4, (4000, 5)).astype(float), rng.integers(0, 5, (4000, 5)) * 1.0
    fz = Featurizer.build(a, None, b)
    j = [f.name for f in fz.features].index("row")
    ha, hb = np.unique(row_hash(a)), np.unique(row_hash(b))
    events = (Event(j, "row", "atoms", values=np.setdiff1d(hb, ha), support=True),
              Event(j, "row", "atoms", values=np.union1d(ha, hb), support=True),
              Event(0, "output[0]", "le", high=1.0))
    assert events[1].values.size > 256  # the sorted-count path
    out = rng.integers(0, 5, (20_000, 5)).astype(float)
    cols = fz(out)
    want = [int(np.count_nonzero(ev.mask(cols))) for ev in events]
    got = count_outputs(out, fz, events, np.random.SeedSequence(0), 0, 0)
    assert got.tolist() == want and min(want) > 0


def test_chunks_counted_block_by_block_as_on_whole_columns():
    """Confirmation counts a chunk of more than one featurizer block block by block: the same
    counts as the masks of the whole columns, for support sets of rows (through the flag
    table, built once per event for all blocks), a few atoms, a learned score's half-line and an
    interval; a randomised event keeps the whole-column path (its coins are drawn per chunk)."""
    import dpcheck.events.event as event
    from dpcheck.features.featurizer import ROW_BLOCK

    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 6, (6000, 4)).astype(float), rng.integers(0, 7, (6000, 4)) * 1.0
    fz = Featurizer.build(a, None, b)
    names = [f.name for f in fz.features]
    j, s = names.index("row"), names.index("llr(output)")
    ha, hb = np.unique(row_hash(a)), np.unique(row_hash(b))
    events = (Event(j, "row", "atoms", values=np.setdiff1d(hb, ha), support=True),
              Event(j, "row", "atoms", values=np.union1d(ha, hb), support=True),
              Event(0, "output[0]", "atoms", values=np.array([1.0, 4.0])),
              Event(s, "llr(output)", "gt", low=0.1),
              Event(1, "output[1]", "interval", low=0.5, high=3.0))
    assert min(ev.values.size for ev in events[:2]) > 256  # both through the flag table
    out = rng.integers(0, 7, (3 * ROW_BLOCK + 123, 4)).astype(float)
    want = [int(np.count_nonzero(ev.mask(fz(out)))) for ev in events]
    slots: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(event, "_slots", lambda x, f=event._slots: slots.append(x.size) or f(x))
        got = count_outputs(out, fz, events, np.random.SeedSequence(0), 0, 0)
    assert got.tolist() == want and min(want) > 0
    # the rows' slots once per block (4 blocks), each atom set's slots once per chunk
    assert sorted(slots) == sorted([ROW_BLOCK] * 3 + [123] + [ev.values.size for ev in events[:2]])
    tied = events[:3] + (Event(s, "llr(output)", "gt", low=0.1, tie_value=0.1, tie=0.5),)
    got = count_outputs(out, fz, tied, np.random.SeedSequence(0), 0, 0)
    assert got[:3].tolist() == want[:3]


# ---- round 2 (issue 30 item 4): blocked featurizing, hashed support counts, the fits ----


def _vector_rows(n: int, rng: np.random.Generator, shift: float = 0.0) -> np.ndarray:
    """Rows with every kind of column the vector families branch on: a categorical index, a
    continuous Laplace value, one with sentinels (-1000 "no answer", +inf "not released")
    and an integer-valued one."""
    out = np.empty((n, 4))
    out[:, 0] = rng.integers(0, 4, n)
    out[:, 1] = shift + rng.laplace(0, 1, n)
    v = rng.laplace(shift, 2, n)
    u = rng.random(n)
    v[u < 0.1] = -1000.0
    v[u > 0.95] = math.inf
    out[:, 2] = v
    out[:, 3] = np.round(rng.laplace(3 + shift, 4, n))
    return out


_RNG = np.random.default_rng(11)
_FZ = Featurizer.build(_vector_rows(12_000, _RNG), None, _vector_rows(12_000, _RNG, 0.3))


def test_the_vector_featurizer_fits_every_family():
    """The featurizer below has the learned scores, the row summary and the row hash (so the
    blocked featurizing is tested on all of them)."""
    names = [f.name for f in _FZ.features]
    for name in ("llr(output)", "logit(output)", "signs(output)", "logit(summary)", "row",
                 "sum(output)"):
        assert name in names


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 700), block=st.sampled_from([1, 7, 64, 256]),
       fortran=st.booleans(), only=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_blocked_featurizing_matches_one_piece(rows, block, fortran, only, seed):
    """:meth:`Featurizer.__call__` in blocks of ``ROW_BLOCK`` rows gives the columns (values,
    dtypes) of the whole batch featurized at once (the former form, ``_columns``), for
    C- and Fortran-ordered outputs, with and without ``only``."""
    import dpcheck.features.featurizer as featurizer

    x = _vector_rows(rows, np.random.default_rng(seed), 0.1)
    if fortran:
        x = np.asfortranarray(x)
    chosen = {1, 6, len(_FZ.features) - 1} if only else None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(featurizer, "ROW_BLOCK", block)
        got = _FZ(x, chosen)
    want = _FZ._columns(x, chosen)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            assert g.dtype == w.dtype and np.array_equal(g, w)


def test_row_summary_counts_past_a_byte():
    """Rows of 300 columns (counts up to 300 do not fit the byte counts): the int64 path."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (50, 300)).astype(float)
    x[:5] = 1.0  # 300 equal values in a row
    s = RowSummary(np.asarray([0.0, 1.0]), 300)
    assert np.array_equal(s(x), _old_summary(s, x))
    assert s(x)[:5, 1].tolist() == [300.0] * 5


def _sorted_count(x: np.ndarray, vals: np.ndarray) -> int:
    s = np.sort(x)
    return int(np.sum(np.searchsorted(s, vals, "right") - np.searchsorted(s, vals, "left")))


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 3000), atoms=st.integers(257, 2000), inside=st.integers(0, 300),
       bits=st.sampled_from([2, 8, 22]), seed=st.integers(0, 2**32 - 1))
def test_hashed_atom_counts_match_the_sorted_count(n, atoms, inside, bits, seed):
    """Large sorted uint64 atom sets (support sets of row hashes) are counted through the flag
    table: the count of the former sort-and-search, with a table so small (``bits`` = 2, 8)
    that most outputs share a slot with an atom, duplicated outputs, and atoms absent."""
    import dpcheck.events.event as event

    rng = np.random.default_rng(seed)
    vals = np.unique(rng.integers(0, 2**64, atoms, dtype=np.uint64))
    x = rng.integers(0, 2**64, n, dtype=np.uint64)
    if n:
        x[:min(inside, n)] = rng.choice(vals, min(inside, n))  # repeats included
    ev = Event(0, "row", "atoms", values=vals, support=True)
    other = Event(0, "row", "atoms", values=np.unique(np.concatenate([vals[:1], x[:300]])))
    shared: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(event, "_TABLE_BITS", bits)
        got = ev.count([x], shared)
        got_other = other.count([x], shared)  # reuses the slots of the first
    assert got == _sorted_count(x, vals) == int(np.count_nonzero(ev.mask([x])))
    assert got_other == int(np.count_nonzero(other.mask([x])))
    if other.values.size > 256:
        assert got_other == _sorted_count(x, other.values)


def test_float_atom_sets_through_the_table_count_as_the_sort():
    """Float support sets (scalar outputs) go through the flag table too: -0.0 and 0.0 are one
    atom there as in the sorted search (keys of ``x + 0.0``), NaN is in no atom set, and
    integer-valued floats (zero low bits) still spread over the table."""
    import dpcheck.events.event as event

    vals = np.concatenate([[0.0], np.arange(1.0, 400.0)])
    x = np.array([-0.0, 0.0, 5.0, 5.0, 1e9, np.nan])
    ev = Event(0, "output", "atoms", values=vals, support=True)
    neg = Event(0, "output", "atoms", values=np.concatenate([[-0.0], vals[1:]]), support=True)
    hashed = []
    with pytest.MonkeyPatch.context() as mp:  # the table is used, not the sort
        mp.setattr(event, "_count_hashed",
                   lambda *a, f=event._count_hashed: hashed.append(1) or f(*a))
        assert ev.count([x]) == _sorted_count(x, vals) == 4
        assert neg.count([x]) == _sorted_count(x, neg.values) == 4
    assert len(hashed) == 2
    assert np.unique(event._slots(np.arange(1.0, 4097.0))).size > 4000


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 3000), atoms=st.integers(257, 1500), inside=st.integers(0, 300),
       bits=st.sampled_from([2, 8, 22]), integral=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_hashed_float_atom_counts_match_the_sorted_count(n, atoms, inside, bits, integral, seed):
    """Float64 atom sets through the flag table: the count of the sort-and-search, with ±0,
    NaN, ±inf and subnormals among the outputs, integer-valued or continuous values, tables so
    small that most outputs share a slot with an atom, and repeated outputs."""
    import dpcheck.events.event as event

    rng = np.random.default_rng(seed)
    draw = (lambda k: rng.integers(-500, 500, k).astype(float)) if integral else (
        lambda k: rng.laplace(0.0, 3.0, k))
    vals = np.unique(draw(atoms))
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, -5e-324])
    x = np.concatenate([draw(n), special[: n % 8]])
    if n:
        x[:min(inside, n)] = rng.choice(vals, min(inside, n))
    rng.shuffle(x)
    ev = Event(0, "output", "atoms", values=vals, support=True)
    shared: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(event, "_TABLE_BITS", bits)
        got = ev.count([x], shared)
    assert got == _sorted_count(x, vals) == int(np.count_nonzero(ev.mask([x])))


def _counted(f, calls: list[int]):
    """``f``, recording each call in ``calls`` (a spy for monkeypatching)."""
    return lambda *a, **k: calls.append(1) or f(*a, **k)


def _searched_mask(x: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """The former :meth:`Event.mask` of an atom set: a binary search per output."""
    idx = np.minimum(np.searchsorted(vals, x), vals.size - 1)
    return vals[idx] == x


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 400), atoms=st.integers(1, 40), inside=st.integers(0, 50),
       dtype=st.sampled_from(["float64", "int64", "uint64", "int8"]),
       seed=st.integers(0, 2**32 - 1))
def test_few_atoms_matched_by_equality_as_by_the_search(n, atoms, inside, dtype, seed):
    """Atom sets of at most ``_EQUAL_ATOMS`` values are matched by equality passes: the same
    members as the binary search (±0, NaN, ±inf, subnormals among float outputs and atoms);
    larger sets keep the search."""
    import dpcheck.events.event as event

    rng = np.random.default_rng(seed)
    if dtype == "float64":
        pool = np.concatenate([rng.laplace(0.0, 3.0, 60),
                               [0.0, -0.0, np.nan, np.inf, -np.inf, 5e-324, -5e-324]])
    else:
        info = np.iinfo(dtype)
        low = max(int(info.min), -50)
        pool = np.concatenate([rng.integers(low, 50, 60, dtype=dtype),
                               np.array([0, 1, info.min, info.max], dtype=dtype)])
    vals = np.unique(rng.choice(pool, atoms))  # sorted, distinct; NaN last
    x = rng.choice(pool, n).astype(dtype)
    if n:
        x[:min(inside, n)] = rng.choice(vals, min(inside, n))
    ev = Event(0, "output", "atoms", values=vals.astype(dtype))
    searched = _searched_mask(x, vals.astype(dtype))
    calls: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(np, "searchsorted", _counted(np.searchsorted, calls))
        got = ev.mask([x])
    np.testing.assert_array_equal(got, searched)
    assert got.dtype == np.bool_
    assert bool(calls) == (vals.size > event._EQUAL_ATOMS)


def test_the_equality_path_stops_at_its_size():
    """``_EQUAL_ATOMS`` atoms take the equality passes, one more atom the binary search."""
    import dpcheck.events.event as event

    x = np.arange(100.0)
    for size, searched in ((event._EQUAL_ATOMS, False), (event._EQUAL_ATOMS + 1, True)):
        ev = Event(0, "output", "atoms", values=np.arange(size, dtype=float) * 2.0)
        calls: list[int] = []
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(np, "searchsorted", _counted(np.searchsorted, calls))
            assert int(np.count_nonzero(ev.mask([x]))) == min(size, 50)
        assert bool(calls) == searched


@settings(max_examples=200, deadline=None)
@given(x=st.lists(st.integers(-2**63, 2**63 - 1), max_size=300),
       dtype=st.sampled_from(["int64", "uint64", "int8", "float64"]), ordered=st.booleans())
def test_sorted_unique_is_np_unique(x, dtype, ordered):
    from dpcheck.features.feature import sorted_unique

    a = np.asarray(x).astype(dtype) if dtype != "uint64" else np.asarray(
        [v % 2**64 for v in x], dtype=np.uint64)
    if ordered:  # strictly increasing input, returned as it is
        a = np.unique(a)
    got = sorted_unique(a)
    assert got.dtype == np.unique(a).dtype and np.array_equal(got, np.unique(a))


@settings(max_examples=200, deadline=None)
@given(x=st.lists(st.sampled_from([0.0, -0.0, 1.0, -2.5, math.nan, math.inf, -math.inf]),
                  max_size=8), ordered=st.booleans())
def test_sorted_unique_of_floats_is_np_unique(x, ordered):
    """Floats with NaN, ±0 and infinities: ``np.unique``'s values, zero signs included."""
    from dpcheck.features.feature import sorted_unique

    a = np.asarray(x, dtype=np.float64)
    if ordered:
        a = np.sort(a)
    got, want = sorted_unique(a), np.unique(a)
    assert got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def _old_newton(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """The former ``_newton``: every product recomputed, ``x @ 0`` included."""
    from scipy.special import expit, log_expit

    from dpcheck.features.learned import HESSIAN_ROWS, NEWTON_STEPS

    n, k = x.shape
    sign = 2.0 * y - 1.0
    pen = np.full(k, lam)
    pen[0] = 0.0
    sub = x[:: max(1, n // HESSIAN_ROWS)]
    scale = n / sub.shape[0]

    def loss(theta):
        return -float(np.sum(log_expit(sign * (x @ theta)))) + 0.5 * float(pen @ theta**2)

    theta = np.zeros(k)
    current = loss(theta)
    for _ in range(NEWTON_STEPS):
        grad = x.T @ (expit(x @ theta) - y) + pen * theta
        ps = expit(sub @ theta)
        hess = (sub.T * (ps * (1.0 - ps))) @ sub * scale + np.diag(pen + 1e-9 * n)
        step = np.linalg.solve(hess, grad)
        decrease = float(grad @ step)
        if decrease < 1e-10 * n:
            break
        t = 1.0
        while t > 1e-4:
            trial = loss(theta - t * step)
            if trial <= current - 1e-4 * t * decrease:
                break
            t /= 2
        else:
            break
        theta, current = theta - t * step, trial
    return theta


def _old_fit_weights(phi: np.ndarray, n_d: int) -> np.ndarray:
    """The former ``fit_weights``: standardise a copy, ``hstack`` the intercept, Newton."""
    from threadpoolctl import threadpool_limits

    from dpcheck.features.learned import RIDGE

    phi = phi.copy()
    y = np.zeros(phi.shape[0])
    y[:n_d] = 1.0
    mu = phi.mean(axis=0)
    sd = phi.std(axis=0)
    sd[sd == 0] = 1.0
    phi -= mu
    phi /= sd
    with threadpool_limits(1, user_api="blas"):
        theta = _old_newton(np.hstack([np.ones((phi.shape[0], 1)), phi]), y,
                            RIDGE * phi.shape[0])
    return theta[1:] / sd


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 3000), width=st.integers(1, 40), block=st.sampled_from([1, 5, 2048]),
       constant=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_fit_basis_matches_the_former_fit(n, width, block, constant, seed):
    """:func:`fit_basis` (rows written block by block into the design matrix, sums continued
    block to block, the line search's logits reused) gives the former fit's weights bit for
    bit: blocks of 1 and 5 rows, one block, a single column (numpy's pairwise sum: the former
    path), constant columns (sd = 0), indicator and clipped-value columns."""
    import dpcheck.features.learned as learned

    rng = np.random.default_rng(seed)
    phi = np.clip(rng.laplace(0.2, 1.5, (n, width)), -CLIP, CLIP)
    phi[:, ::3] = rng.random((n, phi[:, ::3].shape[1])) < 0.3  # indicators
    if constant:
        phi[:, -1] = 0.0
    n_d = int(rng.integers(1, n))
    fill_calls = []

    def fill(start: int, stop: int, out: np.ndarray) -> None:
        fill_calls.append((start, stop))
        out[:] = phi[start:stop]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(learned, "DESIGN_BLOCK", block)
        got = learned.fit_basis(n, width, n_d, fill)
    assert np.array_equal(got, _old_fit_weights(phi, n_d))
    assert sorted(fill_calls)[0][0] == 0 and sum(b - a for a, b in fill_calls) == n


def test_fits_on_exploration_outputs_match_the_former_fits():
    """The three fitted scores of :data:`_FZ`'s outputs, by their new paths (shared codings,
    :func:`fit_basis`), against the former construction: codings computed per score, the
    basis built whole and fitted by the former ``fit_weights``."""
    from dpcheck.features.coding import VALUE_BINS
    from dpcheck.features.family import Exploration
    from dpcheck.features.learned import LogisticScore
    from dpcheck.features.naive_bayes import LLR_BINS, NaiveBayesLLR
    from dpcheck.features.row_summary import SummaryScore, _interactions

    rng = np.random.default_rng(4)
    a, b = _vector_rows(6000, rng), _vector_rows(6000, rng, 0.3)
    a[:, 3] = rng.integers(0, 3, 6000)  # a count-like column: summary interactions
    b[:, 3] = rng.integers(0, 4, 6000)
    ex = Exploration(np.concatenate([a, a]), np.concatenate([b, b]), None, True)
    ga, gb = ex.generation
    pooled = np.concatenate([ga, gb]).astype(np.float64)
    cols = tuple(c for c in (column_coding(j, pooled[:, j], VALUE_BINS) for j in range(4))
                 if c.width)
    shell = LogisticScore(cols, np.zeros(0))
    old = _old_fit_weights(shell.basis(pooled), ga.shape[0])
    new = LogisticScore.fit(ga, gb, coding=ex.coding)
    assert all(c.key == o.key for c, o in zip(new.columns, cols))
    assert np.array_equal(new.weights, old)
    assert np.array_equal(new.weights, LogisticScore.fit(ga, gb).weights)
    nb, nb_shared = NaiveBayesLLR.fit(ga, gb), NaiveBayesLLR.fit(ga, gb, coding=ex.coding)
    assert LLR_BINS == VALUE_BINS and all(
        np.array_equal(s, t) for s, t in zip(nb.tables, nb_shared.tables))
    assert [c.key for c in nb.columns] == [c.key for c in nb_shared.columns]
    signs, signs_shared = SignCount.fit(ga, gb), SignCount.fit(ga, gb, coding=ex.coding)
    assert np.array_equal(signs.indices, signs_shared.indices)
    assert np.array_equal(signs.medians, signs_shared.medians)
    summary = SummaryScore.fit(ga, gb)
    s = np.concatenate([summary.summary(ga), summary.summary(gb)])
    main = LogisticScore(summary.score.columns, np.empty(0))
    inters = _interactions(summary.summary, s)
    assert inters  # the interaction columns are fitted too
    phi = np.empty((s.shape[0], main.width + sum(t.width for t in inters)))
    phi[:, :main.width] = main.basis(s)
    at = main.width
    for t in inters:
        t.basis(s, phi[:, at:at + t.width])
        at += t.width
    w = _old_fit_weights(phi, ga.shape[0])
    assert np.array_equal(np.concatenate([summary.score.weights, *summary.interaction_weights]),
                          w)


def test_generation_counts_reuse_the_pools_sorted_columns():
    """Selection counts its shortlist on the generation half with the columns its pools
    sorted already (:attr:`dpcheck.events.pools.Pool.sorted_d`): the counts of sorting them
    again, for every kind of event of every feature of :data:`_FZ`."""
    from dpcheck.events.event import count_events
    from dpcheck.events.pools import feature_pool

    rng = np.random.default_rng(8)
    cols_d, cols_dp = _FZ(_vector_rows(3000, rng)), _FZ(_vector_rows(3000, rng, 0.3))
    pools = [feature_pool(j, f, cols_d[j], cols_dp[j], 64) for j, f in enumerate(_FZ.features)]
    events = [p.materialise(i) for p in pools for i in range(0, p.count_d.size, 7)]
    assert {ev.kind for ev in events} >= {"atoms", "le", "gt", "interval", "outside"}
    for cols, known in ((cols_d, [p.sorted_d for p in pools]),
                        (cols_dp, [p.sorted_dp for p in pools])):
        assert np.array_equal(count_events(events, cols, known), count_events(events, cols))
        assert count_events(events, cols).tolist() == [ev.count(cols) for ev in events]


@settings(max_examples=50, deadline=None)
@given(rows=_ROWS5, levels=_LEVELS, width=st.integers(1, 6))
def test_row_summary_on_shared_columns_matches(rows, levels, width):
    """The summary computed on a batch's shared float64 columns (column-major result) has
    the values of the one computed on the rows (the former form)."""
    from dpcheck.features.coding import CodeCache

    x = np.asarray(rows, dtype=np.float64)
    s = RowSummary(np.sort(np.asarray(levels, dtype=np.float64)), width)
    shared = s(x, CodeCache(x))
    assert shared.flags.f_contiguous and np.array_equal(shared, _old_summary(s, x))


def test_summary_score_on_shared_columns_matches():
    """The row-summary score of :data:`_FZ` on a batch whose columns the other scores copied
    already: the score computed on its own."""
    from dpcheck.features.coding import CodeCache
    from dpcheck.features.row_summary import SummaryScore

    part, i = _FZ.owners[[f.name for f in _FZ.features].index("logit(summary)")]
    score = _FZ.fitted[part].compute.args[0]
    assert isinstance(score, SummaryScore)
    x = _vector_rows(5000, np.random.default_rng(9), 0.2).astype(np.float32)  # cast per column
    cache = CodeCache(x)
    cache.column(2)
    assert np.array_equal(score(x, cache), score(x))


@settings(max_examples=100, deadline=None)
@given(levels=st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, math.inf, -math.inf,
                                        math.nan]), max_size=6),
       categorical=st.booleans(), x=st.lists(_VALUES, max_size=50))
def test_level_codes_match_the_masked_assignments(levels, categorical, x):
    """Codes of columns with any levels — distinct and sorted (codes added up in bytes),
    repeated, unsorted or NaN (the former masked assignments, last level wins) — and of
    non-finite values: the former codes."""
    lv = np.asarray(levels, dtype=np.float64)
    col = (Column(0, lv, True) if categorical else
           Column(0, lv, False, 0.0, 1.0, np.asarray([-1.0, 0.5, 2.0])))
    values = np.concatenate([np.asarray(x, dtype=np.float64), lv, [math.nan, 0.5, -1.0]])
    assert np.array_equal(col.codes(values), _old_codes(col, values))


def test_many_levels_keep_the_masked_assignments():
    """300 distinct levels (codes past a byte): the former path, the former codes."""
    lv = np.arange(300.0)
    col = Column(0, lv, True)
    values = np.concatenate([lv, [-1.0, 299.5, math.inf]])
    assert np.array_equal(col.codes(values), _old_codes(col, values))
    assert col.codes(values)[299] == 300
