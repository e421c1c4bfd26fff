"""Count-level machinery of seed 000 on the threshold stand-in (notes §3.9).

Domain ``{0..N−1}``; the class is ``C_thr = {h_t(x) = 1[x ≥ t] : t ∈ {0..N}}`` (VC = 1). A labelled
dataset is an ``(n, 2)`` int array of ``(x, y)``. Everything Algorithm 1 needs depends on ``T``
only through the counts ``cT[x]`` and on ``W`` through ``c0W[x], c1W[x]`` (label-0 / label-1
counts), so the functions here take count arrays with any leading batch shape and are shared by
the exact pmfs (all index sets ``I`` enumerated) and the vectorised samplers.

* ``P[t] = Σ_{x<t} cT[x]`` (prefix); ``h_a, h_b`` label ``T_X`` alike iff ``P[a] = P[b]``, so
  ``Π_C(T_X)`` ↔ the distinct values of ``P`` and ``dis_T(h_a, h_b) = |P[a] − P[b]|/|T|``.
* ``|W|·err_W(h_b) = Σ_{x<b} c1W[x] + Σ_{x≥b} c0W[x]``.
* score (Algorithm 1 step 3) ``q(a) = min_b |P[a] − P[b]|/|T| + err_W(h_b)``, computed in O(N)
  by forward/backward running minima (``P`` is non-decreasing). Decision (Algorithm 1 step 3,
  notes §6.3): ``b`` ranges over all of ``C = {h_0..h_N}``, not over ``H``; a min over ``H`` is
  the naive-score mutant (B7).
* the exponential mechanism over ``H`` (one representative per labeling) is sampled over
  thresholds with logit ``−ε|W|q(t)/2 − ln m(t)``, ``m(t) = #{t′ : P[t′] = P[t]}``: the mass of a
  labeling is then exactly ``exp(−ε|W|q/2)/Z``. Representative (decision, notes §6.2): the
  smallest ``t`` of each class; it never enters the score nor the output of Algorithm 2.

References
----------
B. Li, W. Wang, P. Ye, "Private Realizable-to-Agnostic Transformation with Near-Optimal Sample
Complexity" (seed 000): Definition 2.3, Lemma 2.9, Algorithm 1; notes
``shared/research/seed-000.md`` §6.2, §6.3, §6.16, §6.17.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from dpcheck.validation import fmt, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

__all__ = [
    "ALGORITHM2_MAX_EPSILON",
    "as_count_tables",
    "as_dataset",
    "as_index_set",
    "check_internal_epsilon",
    "counts",
    "log_softmax",
    "multiplicity",
    "prefix",
    "representative",
    "sample_pmf",
    "sample_rows",
    "scores",
    "w_errors",
    "x_counts",
]


#: Upper end of Algorithm 2's internal ε (notes §6.5: the theorems' "ε ≤ O(1)" taken as the
#: proofs' ε ≤ 1/3, Lemma 3.1: ⌈εn⌉/(n − ⌈εn⌉) ≤ 6ε; Lemma 3.4: |W|/|T| ≥ 1/(6ε)).
ALGORITHM2_MAX_EPSILON = 1 / 3


def check_internal_epsilon(value: Any, reason: str) -> float:
    """Algorithm 2's internal ``ε``: a finite real in ``(0, 1/3]`` (1e-12 slack for ``1/3``).

    Raises
    ------
    InvalidArgument
        Naming ``epsilon`` and ``reason`` (the lemma whose hypothesis fails).
    """
    eps = check_epsilon(value)
    if eps > ALGORITHM2_MAX_EPSILON + 1e-12:
        raise InvalidArgument(f"epsilon={eps!r} must be <= 1/3 ({reason})")
    return eps


def sample_pmf(pmf: dict[int, float], size: Any, rng: np.random.Generator) -> np.ndarray:
    """``size`` i.i.d. draws from an exact output law ``{code: probability}`` (renormalised)."""
    keys = np.array(list(pmf), dtype=np.int64)
    pr = np.array(list(pmf.values()))
    return keys[rng.choice(len(keys), size=check_int(size, "size", minimum=0),
                           p=pr / pr.sum())]


def as_dataset(data: Any, domain: int, *, name: str = "data") -> np.ndarray:
    """``data`` as an ``(n, 2)`` int64 array of ``(x, y)`` with ``0 ≤ x < domain``, ``y ∈ {0,1}``.

    Values must be integers: integer or bool arrays, or floats with integral values (``1.0``).
    Fractional values, NaN and strings are refused rather than truncated or parsed.

    Parameters
    ----------
    data
        A sequence of ``(x, y)`` pairs or an ``(n, 2)`` array.
    domain
        ``N``: points are ``{0..N−1}``.
    name
        The parameter named in error messages (``"v"``, ``"w"`` for Algorithm 3's public sets).

    Raises
    ------
    InvalidArgument
        If ``data`` is not such an array.
    """
    try:
        raw = np.asarray(data)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={fmt(data)} must be a sequence of (x, y) pairs") from None
    if raw.ndim != 2 or raw.shape[1] != 2 or raw.shape[0] == 0:
        raise InvalidArgument(f"{name}={fmt(data)} must have shape (n, 2) with n >= 1")
    if raw.dtype.kind == "O" and all(isinstance(v, numbers.Real) for v in raw.flat):
        raw = raw.astype(float)
    integral = raw.dtype.kind in "iub" or (
        raw.dtype.kind == "f" and bool(np.isfinite(raw).all()) and bool((raw == np.round(raw)).all()))
    if not integral:
        raise InvalidArgument(f"{name}={fmt(data)}: x and y must be integers")
    arr = raw.astype(np.int64)
    if ((arr[:, 0] < 0) | (arr[:, 0] >= domain)).any() or (~np.isin(arr[:, 1], (0, 1))).any():
        raise InvalidArgument(f"{name}={fmt(data)}: need 0 <= x < {domain} and y in {{0, 1}}")
    return arr


def as_count_tables(sc: Any, domain: int, *, name: str = "sc") -> np.ndarray:
    """A batch of datasets given as count tables: ``sc`` as an int64 array of shape
    ``(B, domain, 2)``, ``B ≥ 1``, with integer counts ``≥ 0`` (not copied when it already is
    one; broadcast views stay views).

    Raises
    ------
    InvalidArgument
        If ``sc`` has another shape, is empty, or holds non-integer or negative counts.
    """
    raw = np.asarray(sc)
    if raw.ndim != 3 or raw.shape[0] == 0 or raw.shape[1:] != (domain, 2):
        raise InvalidArgument(f"{name} shape {raw.shape} must be (B, domain={domain}, 2) "
                              "with B >= 1")
    if raw.dtype.kind not in "iu" or (raw.dtype.kind == "i" and raw.min() < 0):
        raise InvalidArgument(f"{name} (dtype {raw.dtype}) must hold integer counts >= 0")
    return np.asarray(raw, dtype=np.int64)


def as_index_set(index_set: Any, n: int, *, name: str = "index_set") -> np.ndarray:
    """``index_set`` (a list, tuple, range or integer array) as an int64 array of distinct
    indices ``0 ≤ i < n``.

    Raises
    ------
    InvalidArgument
        If it is not a flat collection of integers, has an index outside ``[0, n)`` or a
        duplicate.
    """
    try:
        raw = np.asarray(index_set if isinstance(index_set, np.ndarray) else list(index_set))
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={fmt(index_set)} must be a collection of indices") \
            from None
    if raw.ndim != 1 or (raw.size > 0 and raw.dtype.kind not in "iu"):
        raise InvalidArgument(f"{name}={fmt(index_set)} must be a flat collection of integer "
                              "indices")
    idx = raw.astype(np.int64)
    if ((idx < 0) | (idx >= n)).any():
        raise InvalidArgument(f"{name}={fmt(index_set)}: indices must satisfy 0 <= i < n={n}")
    if np.unique(idx).size != idx.size:
        raise InvalidArgument(f"{name}={fmt(index_set)} has duplicate indices")
    return idx


def counts(data: np.ndarray, domain: int) -> np.ndarray:
    """Count table ``c[x, y]`` of shape ``(domain, 2)``."""
    return np.bincount(data[:, 0] * 2 + data[:, 1], minlength=2 * domain).reshape(domain, 2)


def x_counts(c: np.ndarray) -> np.ndarray:
    """``c[..., x, 0] + c[..., x, 1]`` (the x-marginal of a count table; two strided views added,
    much faster than ``.sum(-1)`` over a length-2 axis)."""
    return c[..., 0] + c[..., 1]


def prefix(ct: np.ndarray) -> np.ndarray:
    """``P[..., t] = Σ_{x<t} ct[..., x]``, shape ``(..., N+1)``."""
    dtype = np.cumsum(np.zeros(1, ct.dtype)).dtype          # numpy's accumulation dtype
    out = np.zeros(ct.shape[:-1] + (ct.shape[-1] + 1,), dtype=dtype)
    np.cumsum(ct, axis=-1, out=out[..., 1:])
    return out


def w_errors(c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """``#{(x, y) ∈ W : h_b(x) ≠ y}`` for every ``b ∈ {0..N}``, shape ``(..., N+1)``:
    ``Σ_{x<b} c1[x] + Σ_{x≥b} c0[x] = Σ_x c0[x] + Σ_{x<b} (c1[x] − c0[x])`` (one prefix)."""
    if c0.dtype.kind in "ub" or c1.dtype.kind in "ub":     # the difference must not wrap
        c0, c1 = c0.astype(np.int64), c1.astype(np.int64)
    return prefix(c1 - c0) + c0.sum(-1, keepdims=True)


def scores(p: np.ndarray, e: np.ndarray, k: Any, w: Any) -> np.ndarray:
    """Algorithm 1's ``q(a) = min_b |P[a] − P[b]|/k + e[b]/w`` for every ``a``.

    ``k = |T|`` and ``w = |W|`` broadcast against the batch shape (arrays of shape ``(..., 1)``
    or scalars); ``k = 0`` (empty ``T``, only reachable by mutants) gives ``min_b e[b]/w``.
    """
    k = np.maximum(np.asarray(k, dtype=float), 1.0)
    w = np.asarray(w, dtype=float)
    pk = p / k
    ew = e / w
    fwd = np.minimum.accumulate(ew - pk, axis=-1)          # min over b ≤ a of e_b/w − P_b/k
    bwd = np.flip(np.minimum.accumulate(np.flip(ew + pk, -1), axis=-1), -1)   # b ≥ a
    return np.minimum(pk + fwd, bwd - pk)


def _run_bounds(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last index of the run of equal values containing each ``t`` (``P`` is
    non-decreasing along the last axis), in O(N) per row."""
    idx = np.broadcast_to(np.arange(p.shape[-1]), p.shape)
    start = np.ones(p.shape, dtype=bool)
    start[..., 1:] = p[..., 1:] != p[..., :-1]
    first = np.maximum.accumulate(np.where(start, idx, 0), axis=-1)
    end = np.ones(p.shape, dtype=bool)
    end[..., :-1] = start[..., 1:]
    last_rev = np.maximum.accumulate(np.flip(np.where(end, p.shape[-1] - 1 - idx, 0), -1), -1)
    last = p.shape[-1] - 1 - np.flip(last_rev, -1)
    return first, last


def multiplicity(p: np.ndarray) -> np.ndarray:
    """``m(t) = #{t′ : P[t′] = P[t]}`` (``P`` non-decreasing along the last axis)."""
    first, last = _run_bounds(p)
    return last - first + 1


def representative(p: np.ndarray) -> np.ndarray:
    """Smallest ``t′`` with ``P[t′] = P[t]`` (the deterministic representative, notes §6.2)."""
    return _run_bounds(p)[0]


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-normalisation in log space (no overflow for exponents in the thousands)."""
    m = logits.max(axis=-1, keepdims=True)
    a = logits - m
    return a - np.log(np.exp(a).sum(axis=-1, keepdims=True))


def sample_rows(prob: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One categorical draw per row of ``prob`` (rows sum to 1), by inverting the row CDF."""
    cdf = np.cumsum(prob, axis=-1)
    u = rng.random(prob.shape[:-1] + (1,)) * cdf[..., -1:]
    idx = (cdf <= u).sum(axis=-1)
    return np.minimum(idx, prob.shape[-1] - 1)
