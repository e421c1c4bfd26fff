"""Exact laws of count tables (types): the one enumeration shared by every exact pmf of seed 000.

Everything Algorithm 1 and the symmetric base learners read from a sample is its count table
``c[x, y]`` (notes §4.4), so an exact output law needs the law of that table, not of the index
sets or draw sequences:

* a uniform size-``k`` subset ``T`` of ``S`` (Algorithm 2 step 1): multivariate hypergeometric,
  ``Pr[cT = t] = Π_j C(c_j, t_j) / C(n, k)`` over the occupied cells ``j`` of ``S``
  (:func:`subset_tables`; used by :mod:`.agnostic`, :mod:`.composite`,
  :mod:`.agnostic_prediction`); its sampler counterpart is :func:`draw_subset_counts`;
* Poisson sampling (bug B12): independent ``Binomial(c_j, ε)`` cells (``poisson_tables`` of
  :mod:`.buggy`, built from this module's helpers);
* ``m`` draws with replacement (Procedure E, Lemmas 2.12/2.13): multinomial over the cells
  (:func:`compositions`, :func:`multinomial_log_pmf`; used by :mod:`.empirical`,
  :mod:`.composite`).

All three enumerate (capped) compositions with :func:`bounded_compositions`, in lexicographic
order. The number of tables is at most ``Π_j (c_j + 1)``, small for datasets with few distinct
``(x, y)`` values even when ``C(n, k)`` is astronomically large (``n = 100, k = 50`` for B4).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 2 step 1, Lemma 2.12, Lemma 2.13; notes
``shared/research/seed-000.md`` §4.4, §7 (B4, B12).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpcheck.validation import check_int
from dpcheck.errors import InvalidArgument

__all__ = ["MAX_TABLES", "bounded_compositions", "compositions", "draw_subset_counts",
           "multinomial_log_pmf", "subset_tables"]

#: Largest number of count tables an exact pmf enumerates (default ``limit``).
MAX_TABLES = 2_000_000


def bounded_compositions(caps: np.ndarray, total: int | None = None, *,
                         limit: int = MAX_TABLES) -> np.ndarray:
    """All ``t`` with ``0 ≤ t_j ≤ caps_j`` (and ``Σ t = total`` if given), shape ``(C, J)``, in
    lexicographic order; partial rows that cannot reach ``total`` are pruned as they are built.

    Raises
    ------
    InvalidArgument
        If more than ``limit`` (partial) tables would be enumerated.
    """
    caps = np.asarray(caps, dtype=np.int64).reshape(-1)
    rest = np.concatenate([np.cumsum(caps[::-1])[::-1][1:], [0]])   # capacity after cell j
    rows = np.zeros((1, 0), np.int64)
    part = np.zeros(1, np.int64)
    for j, cap in enumerate(caps.tolist()):
        t = np.arange(cap + 1)
        rows = np.concatenate([np.repeat(rows, cap + 1, 0), np.tile(t, len(rows))[:, None]], 1)
        part = np.repeat(part, cap + 1) + np.tile(t, len(part))
        if total is not None:
            keep = (part <= total) & (part + rest[j] >= total)
            rows, part = rows[keep], part[keep]
        if len(rows) > limit:
            raise InvalidArgument(f"more than {limit} count tables ({len(caps)} cells): too many "
                                  "for the exact pmf; use sample()")
    return rows


@lru_cache(maxsize=64)
def _compositions(m: int, parts: int) -> np.ndarray:
    out = bounded_compositions(np.full(parts, m), m)
    out.setflags(write=False)
    return out


def compositions(m: int, parts: int) -> np.ndarray:
    """All ``d ∈ ℕ^parts`` with ``Σ d = m`` (rows, shape ``(C(m+parts−1, parts−1), parts)``,
    lexicographic order; cached, read-only)."""
    return _compositions(check_int(m, "m", minimum=0), check_int(parts, "parts", minimum=1))


def multinomial_log_pmf(d: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``ln Mult(d; Σd, prob)`` along the last axis (``prob`` broadcasts; zero-probability cells
    must have ``d = 0``, else ``−inf``)."""
    d = np.asarray(d, dtype=np.int64)
    lg = np.vectorize(math.lgamma, otypes=[float])
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(d > 0, d * np.log(np.where(prob > 0, prob, 1.0)), 0.0)
        term = np.where((d > 0) & (prob <= 0), -np.inf, term)
    return lg(d.sum(-1) + 1.0) - lg(d + 1.0).sum(-1) + term.sum(-1)


def _comb_columns(caps: list[int], rows: np.ndarray, *, log: bool) -> np.ndarray:
    """``C(caps_j, rows[:, j])`` per cell (or its natural log), shape ``rows.shape``: one table
    of exact binomials per cell, gathered (each entry rounded once to a float)."""
    out = np.empty(rows.shape, float)
    for j, c in enumerate(caps):
        col = [math.comb(c, t) for t in range(c + 1)]
        table = np.array([math.log(v) for v in col] if log else [float(v) for v in col])
        out[:, j] = table[rows[:, j]]
    return out


def _scatter(cells: np.ndarray, rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros((len(rows), int(np.prod(shape))), np.int64)
    out[:, cells] = rows
    return out.reshape((len(rows),) + shape)


def subset_tables(cs: np.ndarray, k: int, *, limit: int = MAX_TABLES) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """Count tables of a uniform size-``k`` subset of the multiset with table ``cs`` and their
    (multivariate hypergeometric) probabilities ``Π_j C(c_j, t_j) / C(n, k)``.

    The binomials are exact integers. While ``C(n, k)`` fits a float the product is taken in
    floating point (each partial product is at most ``C(n, k)`` by Vandermonde's identity, so
    nothing overflows; relative error ≤ (J + 1)·2⁻⁵³ for ``J`` cells), otherwise in log space
    (relative error about ``|ln C(n, k)|·2⁻⁵³``, ≈ 1e-13 at ``n = 1100``).
    """
    flat = np.asarray(cs).reshape(-1)
    cells = np.flatnonzero(flat)
    caps = flat[cells].tolist()
    rows = bounded_compositions(flat[cells], k, limit=limit)
    den = math.comb(int(sum(caps)), k)
    if den < 2.0 ** 1000:
        prob = _comb_columns(caps, rows, log=False).prod(1) / float(den)
    else:
        prob = np.exp(_comb_columns(caps, rows, log=True).sum(1) - math.log(den))
    return _scatter(cells, rows, np.shape(cs)), prob


def draw_subset_counts(cells: np.ndarray, k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Cell counts of a uniform size-``k`` subset drawn without replacement from a multiset with
    cell counts ``cells`` (shape ``(B, K)``), by sequential hypergeometric draws (vectorised)."""
    out = np.zeros_like(cells)
    left = cells.sum(-1)
    need = np.asarray(k, dtype=np.int64).copy()
    for j in range(cells.shape[-1] - 1):
        good = cells[:, j]
        take = rng.hypergeometric(good, left - good, need)
        out[:, j] = take
        need -= take
        left -= good
    out[:, -1] = need
    return out
