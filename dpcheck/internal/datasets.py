"""Datasets as sequences of records: canonical record keys and dataset edits.

Used by :mod:`dpcheck.neighbours`: records compare through a canonical hashable key (arrays,
lists and tuples elementwise, numpy scalars like Python numbers, NaN equal to NaN), and a
neighbour is produced by one edit (delete / insert / replace at a position) applied in the
dataset's own container type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument
from dpcheck.validation import fmt

_Move = tuple[str, int, Any]  # ("del" | "ins" | "rep", position, record)
_Cands = list[tuple[Any, Any]]  # deduplicated domain as (key, candidate) pairs


_NAN, _CNAN, _DICT = object(), object(), object()  # key sentinels (NaN == NaN for our purpose)


def _key(x: Any) -> Any:
    """Canonical hashable key of one record; equal records (NaN == NaN) get equal keys."""
    kind = type(x)  # fast paths for the commonest exact types, then the general cases
    if kind is int or kind is str or kind is bool:
        return x
    if kind is float:
        return _NAN if x != x else x
    if kind is tuple or kind is list:
        return tuple(map(_key, x))
    if isinstance(x, np.ndarray):
        return _key(x.item()) if x.ndim == 0 else tuple(map(_key, x.tolist()))
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float):
        return _NAN if x != x else x
    if isinstance(x, complex):
        return (_CNAN, _key(x.real), _key(x.imag)) if x != x else x
    if isinstance(x, (list, tuple)):
        return tuple(map(_key, x))
    if isinstance(x, (set, frozenset)):
        return frozenset(_key(v) for v in x)
    if isinstance(x, dict):
        return (_DICT, frozenset((_key(k), _key(v)) for k, v in x.items()))
    try:
        hash(x)
    except TypeError:
        msg = f"record {fmt(x)} cannot be compared: {type(x).__name__} is not hashable"
        raise InvalidArgument(msg) from None
    return x


def _keys(data: Any) -> list[Any]:
    """Keys of every record of a dataset; vectorised for NaN-free 1-D/2-D numeric/string arrays."""
    if isinstance(data, np.ndarray) and data.ndim <= 2 and data.dtype.kind in "biufcUS":
        if data.dtype.kind not in "fc" or not np.isnan(data).any():
            rows = data.tolist()
            return rows if data.ndim == 1 else [tuple(r) for r in rows]
    return list(map(_key, data))


def _as_dataset(d: Any, name: str) -> Any:
    """Return ``d`` if it is a sequence of records, else raise naming ``name``."""
    if isinstance(d, np.ndarray):
        if d.ndim == 0:
            msg = f"{name}={fmt(d)} must have at least 1 dimension (records on axis 0)"
            raise InvalidArgument(msg)
        return d
    if isinstance(d, Sequence) and not isinstance(d, (str, bytes, bytearray, memoryview)):
        return d
    kind = type(d).__name__
    msg = f"{name}={fmt(d)} must be a sequence of records (list, tuple or numpy array), not {kind}"
    raise InvalidArgument(msg)


def _exact(a: np.ndarray, dtype: np.dtype) -> bool:
    """Whether casting ``a`` to ``dtype`` keeps every value (round trip, NaN == NaN)."""
    b = a.astype(dtype)
    if dtype.kind == "c" and a.dtype.kind != "c":
        b = b.real
    return np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind in "fc")


def _merged_dtype(base: np.ndarray, rec: Any) -> np.dtype:
    """Dtype holding ``base``'s values and ``rec`` exactly; ``object`` when numpy would coerce."""
    if base.dtype.kind == "O":
        return base.dtype
    r = np.asarray(rec)
    if (base.dtype.kind in "US") != (r.dtype.kind in "US"):
        return np.dtype(object)
    try:
        out = np.result_type(base.dtype, r.dtype)
        ok = _exact(r, out) and (out == base.dtype or _exact(base, out))
    except (TypeError, ValueError):
        return np.dtype(object)
    return out if ok else np.dtype(object)


def _apply(d: Any, move: _Move) -> Any:
    """The dataset ``move`` makes from ``d``, in ``d``'s container type (other sequences: list)."""
    op, i, rec = move
    if isinstance(d, np.ndarray):
        if op == "del":
            return np.delete(d, i, axis=0)
        dtype = _merged_dtype(d, rec)
        out = np.empty((len(d) + (op == "ins"),) + d.shape[1:], dtype=dtype)
        if op == "ins":
            out[:i], out[i + 1 :] = d[:i], d[i:]
        else:
            out[:] = d
        out[i] = rec
        return out
    items = list(d)
    if op == "del":
        del items[i]
    elif op == "ins":
        items.insert(i, rec)
    else:
        items[i] = rec
    return tuple(items) if isinstance(d, tuple) else items


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(f"{name}={fmt(value)} must be True or False")
    return bool(value)


def _add_remove_why(kd: list[Any], kp: list[Any], ordered: bool, unit: str) -> str | None:
    """Why key lists ``kd``, ``kp`` are not add/remove neighbours, or None if they are."""
    n, m = len(kd), len(kp)
    if abs(n - m) != 1:
        counts = "lengths" if unit == "record" else "user counts"
        return f"{counts} {n} and {m} differ by {abs(n - m)}, add/remove allows 1"
    (ln, big), (sn, small) = (("d", kd), ("d_prime", kp)) if n > m else (("d_prime", kp), ("d", kd))
    if ordered:
        p = next((i for i, (a, b) in enumerate(zip(big, small)) if a != b), len(small))
        if big[p + 1 :] == small[p:]:
            return None
        j = next(j for j in range(p, len(small)) if big[j + 1] != small[j])
        return (f"deleting one {unit} of {ln} cannot give {sn}: they first differ at position {p}, "
                f"and deleting it still leaves {ln}[{j + 1}] != {sn}[{j}]")
    extra, missing = Counter(big) - Counter(small), Counter(small) - Counter(big)
    if missing.total() == 0:
        return None
    return (f"as multisets, {ln} has {extra.total()} {unit}s not in {sn} and {sn} has "
            f"{missing.total()} not in {ln}; add/remove allows exactly 1 extra {unit} in {ln}")


def _replace_why(
    kd: list[Any], kp: list[Any], ordered: bool, unit: str, pos: list[int] | None = None
) -> str | None:
    """Why ``kd``, ``kp`` are not replace neighbours, or None; ``pos``: precomputed differences."""
    if len(kd) != len(kp):
        counts = "lengths" if unit == "record" else "user counts"
        return f"{counts} {len(kd)} and {len(kp)} differ, replace needs equal lengths"
    if ordered:
        if pos is None:
            pos = [i for i, (a, b) in enumerate(zip(kd, kp)) if a != b]
        if len(pos) == 1:
            return None
        if not pos:
            return f"they are identical, replace needs exactly 1 differing {unit}"
        where = ("positions" if unit == "record" else "users", ", ".join(map(str, pos[:10])))
        more = ", ..." if len(pos) > 10 else ""
        return f"they differ in {len(pos)} {where[0]} ({where[1]}{more}), replace allows 1"
    k = (Counter(kd) - Counter(kp)).total()
    if k == 1:
        return None
    if k == 0:
        return f"they are equal as multisets, replace needs exactly 1 differing {unit}"
    return f"as multisets, {k} {unit}s of d have no counterpart in d_prime, replace allows 1"


def _array_diff_positions(a: Any, b: Any) -> list[int] | None:
    """Rows where same-shape numeric arrays differ (NaN == NaN), or None if not applicable."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
        return None
    if a.size == 0 or a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        return None
    neq = a != b
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        neq &= ~(np.isnan(a) & np.isnan(b))
    return np.flatnonzero(neq.reshape(len(a), -1).any(axis=1)).tolist()


def _add_remove_moves(keys: list[Any], cands: _Cands, ordered: bool) -> Iterator[_Move]:
    """Removals, then insertions; skips moves that would repeat an earlier output."""
    n = len(keys)
    if ordered:  # deleting i or i-1 (inserting c at i or i-1) agree when keys[i-1] equals it
        yield from (("del", i, None) for i in range(n) if i == 0 or keys[i] != keys[i - 1])
        for i in range(n + 1):
            yield from (("ins", i, r) for c, r in cands if not i or keys[i - 1] != c)
    else:
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        yield from (("del", i, None) for i in sorted(first.values()))
        yield from (("ins", n, r) for _, r in cands)


def _replace_moves(keys: list[Any], cands: _Cands, ordered: bool) -> Iterator[_Move]:
    """Each position (if unordered, first occurrence of each record) × each other candidate."""
    seen: set[Any] = set()
    for i, k in enumerate(keys):
        if not ordered:
            if k in seen:
                continue
            seen.add(k)
        yield from (("rep", i, r) for c, r in cands if c != k)
