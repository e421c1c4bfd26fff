"""Exact laws of the sub-sample ``T`` of Algorithm 2 at the level of count tables (types).

Everything Algorithm 1 and the symmetric base learners of :mod:`.agnostic` read from ``T`` is its
count table ``cT[x, y]`` (notes §4.4), so the exact output law needs the law of that table, not
of the ``C(n, k)`` index sets: for a uniform size-``k`` subset it is multivariate hypergeometric,
``Pr[cT = t] = Π_j C(c_j, t_j) / C(n, k)`` over the occupied cells ``j`` of ``S``; for Poisson
sampling (bug B12) the cells are independent ``Binomial(c_j, ε)``. The number of tables is at
most ``Π_j (c_j + 1)``, small for datasets with few distinct ``(x, y)`` values even when
``C(n, k)`` is astronomically large (``n = 100, k = 50`` for bug B4).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 2 step 1; notes ``shared/research/seed-000.md`` §4.4,
§7 (B4, B12).
"""

from __future__ import annotations

import math

import numpy as np

from dpcheck.errors import InvalidArgument

__all__ = ["MAX_TABLES", "poisson_tables", "subset_tables"]

#: Largest number of count tables an exact pmf enumerates.
MAX_TABLES = 2_000_000


def _compositions(caps: np.ndarray, total: int | None) -> np.ndarray:
    """All ``t`` with ``0 ≤ t_j ≤ caps_j`` (and ``Σ t = total`` if given), shape ``(C, J)``."""
    rest = np.concatenate([np.cumsum(caps[::-1])[::-1][1:], [0]])   # capacity after cell j
    rows = np.zeros((1, 0), np.int64)
    part = np.zeros(1, np.int64)
    for j, cap in enumerate(caps):
        t = np.arange(cap + 1)
        rows = np.concatenate([np.repeat(rows, cap + 1, 0), np.tile(t, len(rows))[:, None]], 1)
        part = np.repeat(part, cap + 1) + np.tile(t, len(part))
        if total is not None:
            keep = (part <= total) & (part + rest[j] >= total)
            rows, part = rows[keep], part[keep]
        if len(rows) > MAX_TABLES:
            raise InvalidArgument(f"more than {MAX_TABLES} count tables: too many for the exact "
                                  "pmf; use sample()")
    return rows


def _scatter(cells: np.ndarray, rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros((len(rows), int(np.prod(shape))), np.int64)
    out[:, cells] = rows
    return out.reshape((len(rows),) + shape)


def subset_tables(cs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Count tables of a uniform size-``k`` subset of the multiset with table ``cs`` and their
    (multivariate hypergeometric) probabilities, computed with exact integers."""
    flat = cs.reshape(-1)
    cells = np.flatnonzero(flat)
    rows = _compositions(flat[cells], k)
    caps = flat[cells].tolist()
    den = math.comb(int(flat.sum()), k)
    prob = np.array([math.prod(math.comb(c, t) for c, t in zip(caps, r)) / den
                     for r in rows.tolist()])
    return _scatter(cells, rows, cs.shape), prob


def poisson_tables(cs: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Count tables of a Poisson sub-sample (each record kept independently w.p. ``rate``),
    conditioned on ``W`` being non-empty (``|T| < n``), with their probabilities."""
    flat = cs.reshape(-1)
    cells = np.flatnonzero(flat)
    caps = flat[cells]
    rows = _compositions(caps, None)
    n, kk = int(caps.sum()), rows.sum(1)
    logc = np.array([sum(math.log(math.comb(int(c), t)) for c, t in zip(caps.tolist(), r))
                     for r in rows.tolist()])
    logp = logc + kk * math.log(rate) + (n - kk) * math.log1p(-rate)
    keep = kk < n
    p = np.exp(logp[keep] - logp[keep].max())
    return _scatter(cells, rows[keep], cs.shape), p / p.sum()
