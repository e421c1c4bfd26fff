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
"""

from __future__ import annotations

import math

import numpy as np
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
@given(rows=st.lists(st.lists(_VALUES, min_size=5, max_size=5), min_size=1, max_size=40),
       levels=st.lists(st.sampled_from([-math.inf, 0.0, 1.0, -1.0, math.inf]), max_size=5,
                       unique=True),
       width=st.integers(1, 5))
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
