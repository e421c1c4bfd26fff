"""Exact laws of the sparse-vector zoo entries (:mod:`algorithms.zoo.svt`), for tests and benchmarks.

* :func:`log_pmf` — exact ``ln P[pattern]`` of the ⊤/⊥ variants (Alg. 1, 2, 4, 6) on a
  10-query instance, by composite Gauss–Legendre quadrature over the threshold noise, split at
  every kink of the integrand (``r = 0`` and ``r = q_i − T``): the integrand is smooth between
  kinks, so the result is accurate to ~1e-12;
* :func:`svt3_law` / :func:`svt3_log_density` — the law of Alg. 3 (numeric answers, cutoff 1):
  the density of "first ⊤ at query j with value v";
* :func:`svt3_grid` — every Alg. 3 output on a value grid with its exact probability under two
  answer vectors, so the probability of any fixed event (a set of output rows, e.g. a half-line
  of a learned score) is a weighted sum.

They were the private helpers of ``tests/zoo/test_svt.py``; ``benchmarks/oracle_ceiling.py`` and
``tests/test_summary.py`` use them too.

References
----------
M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017, Figure 1 (Alg. 1–6).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from algorithms.mechanisms.sparse_vector import HALTED, TOP, SparseVector

__all__ = ["log_pmf", "patterns", "svt3_law", "svt3_log_density", "svt3_release", "svt3_grid",
           "svt3_masses", "pair_epsilon"]

GL_X, GL_W = np.polynomial.legendre.leggauss(16)


def _log_cdf(x: np.ndarray, b: float) -> np.ndarray:
    """ln P[Lap(b) < x]."""
    return np.where(x < 0, math.log(0.5) + np.minimum(x, 0) / b,
                    np.log1p(-0.5 * np.exp(-np.abs(x) / b)))


def _nodes(kinks: np.ndarray, b_min: float, b_max: float) -> tuple[np.ndarray, np.ndarray]:
    kinks = np.unique(kinks)
    edges = np.concatenate([[kinks[0] - 80 * b_max], kinks, [kinks[-1] + 80 * b_max]])
    xs, ws = [], []
    for a, b in zip(edges[:-1], edges[1:]):
        e = np.linspace(a, b, max(1, math.ceil((b - a) / (b_min / 2))) + 1)
        mid, half = (e[:-1] + e[1:]) / 2, (e[1:] - e[:-1]) / 2
        xs.append((mid[:, None] + half[:, None] * GL_X).ravel())
        ws.append((half[:, None] * GL_W).ravel())
    return np.concatenate(xs), np.concatenate(ws)


def patterns(n: int, c: int | None) -> np.ndarray:
    out = set()
    for bits in itertools.product((0, 1), repeat=n):
        flags = np.array(bits)
        if c is not None:
            flags[(np.cumsum(flags) - flags) >= c] = HALTED
        out.add(tuple(flags))
    return np.array(sorted(out))


def log_pmf(m: SparseVector, q) -> tuple[np.ndarray, np.ndarray]:
    """Exact ln P[pattern] of the ⊤/⊥ variants 1, 2, 4, 6 (Alg. 2: product over segments)."""
    q = np.asarray(q, float)
    b_rho, b_nu, t = m.threshold_scale, m.query_scale, m.threshold
    r, w = _nodes(np.concatenate([[0.0], q - t]), min(b_rho, b_nu), max(b_rho, b_nu))
    lf = math.log(0.5 / b_rho) - np.abs(r) / b_rho
    x = t + r[None, :] - q[:, None]
    log_f = {0: _log_cdf(x, b_nu), TOP: _log_cdf(-x, b_nu)}

    def integral(acc: np.ndarray) -> float:
        top = acc.max()
        return float(top + np.log((np.exp(acc - top) * w).sum()))

    pats, out = patterns(q.size, m.cutoff), []
    for pat in pats:
        total, acc = 0.0, lf.copy()
        for i, flag in enumerate(pat):
            if flag == HALTED:
                break
            acc = acc + log_f[int(flag)][i]
            if flag == TOP and m.variant == 2:  # fresh threshold after every ⊤
                total, acc = total + integral(acc), lf.copy()
        if not (m.variant == 2 and pat[i] == HALTED):
            total += integral(acc)
        out.append(total)
    logp = np.array(out)
    assert abs(np.exp(logp).sum() - 1.0) < 1e-9
    return pats, logp


def svt3_law(m: SparseVector, q, grid: int = 200_001) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact law of Alg. 3 with cutoff 1 on answers ``q``: ``(r, G, p_none)`` such that the
    output "⊥ on queries 0..j−1, ⊤ at query j with value v" has density
    ``f_ν(v − q_j)·G[j](v − T)`` (``G[j]`` tabulated on the threshold-noise grid ``r``: the
    integral of ``f_ρ(x)·Π_{i<j} P[ν < T + x − q_i]`` over ``x ≤ v − T``, by the trapezoid rule)
    and "⊥ everywhere" has probability ``p_none``."""
    assert m.variant == 3 and m.cutoff == 1
    q = np.asarray(q, float)
    b_rho, b_nu, t = m.threshold_scale, m.query_scale, m.threshold
    r = np.linspace(-60 * b_rho, 60 * b_rho, grid)
    acc = math.log(0.5 / b_rho) - np.abs(r) / b_rho
    tables = []
    for qi in q:
        g = np.exp(acc)
        tables.append(np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(r))]))
        acc = acc + _log_cdf(t + r - qi, b_nu)
    return r, np.array(tables), float(np.trapezoid(np.exp(acc), r))


def svt3_log_density(m: SparseVector, law, j: np.ndarray, v: np.ndarray, q) -> np.ndarray:
    """ln density of first-⊤ index ``j`` with value ``v`` (``j = len(q)``: nothing released,
    then the log probability) under the law :func:`svt3_law` of answers ``q``."""
    r, tables, p_none = law
    q = np.asarray(q, float)
    out = np.full(j.shape, math.log(p_none))
    for k in np.unique(j[j < q.size]):
        s = j == k
        g = np.interp(v[s] - m.threshold, r, tables[k])
        out[s] = (math.log(0.5 / m.query_scale) - np.abs(v[s] - q[k]) / m.query_scale
                  + np.log(np.maximum(g, 1e-300)))
    return out


def svt3_release(out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First-⊤ index (``n`` for none) and released value (0 for none) of Alg. 3 outputs."""
    n = out.shape[1] // 2
    top = out[:, n:] == TOP
    has = top.any(axis=1)
    j = np.where(has, top.argmax(axis=1), n)
    v = np.where(has, out[np.arange(out.shape[0]), np.minimum(j, n - 1)], 0.0)
    return j, v


def pair_epsilon(m: SparseVector, d, d_prime) -> float:
    return float(np.abs(log_pmf(m, d)[1] - log_pmf(m, d_prime)[1]).max())


def svt3_grid(m: SparseVector, answers: tuple[list[float], list[float]], *,
              values: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every output of Alg. 3 (cutoff 1) on a grid of released values, with its probability
    under each of two answer vectors: ``(rows, p, p_prime)``.

    ``rows`` are encoded as the sampler encodes them (``n`` values, ``+inf`` where nothing is
    released, then ``n`` flags: ⊥ = 0, ⊤ = 1, halted = −1); row ``j·len(values) + i`` is "⊤ at
    query j with value ``values[i]``" (its probability: density × grid step), the last row is
    "⊥ everywhere". ``values`` defaults to a 0.05 grid on [−400, 400] (±20 noise scales)."""
    v = np.linspace(-400.0, 400.0, 16_001) if values is None else np.asarray(values, float)
    n = len(answers[0])
    j, vv = np.repeat(np.arange(n), v.size), np.tile(v, n)
    rows = np.full((j.size + 1, 2 * n), np.inf)
    rows[:, n:] = 0.0
    rows[np.arange(j.size), j] = vv
    rows[np.arange(j.size), n + j] = TOP
    after = np.arange(n)[None, :] > j[:, None]
    rows[:-1, n:][after] = HALTED
    p, p_prime = (svt3_masses(m, q, v) for q in answers)
    return rows, p, p_prime


def svt3_masses(m: SparseVector, answers: list[float], values: np.ndarray) -> np.ndarray:
    """Probabilities of the Alg. 3 outputs "⊤ at query j with value ``values[i]``" (index
    ``j·len(values) + i``: density × grid step) and, last, "⊥ everywhere", on answers
    ``answers`` — the law of the rows of :func:`svt3_grid` without the rows."""
    v = np.asarray(values, float)
    j, vv = np.repeat(np.arange(len(answers)), v.size), np.tile(v, len(answers))
    law = svt3_law(m, answers)
    dens = np.exp(svt3_log_density(m, law, j, vv, answers)) * float(v[1] - v[0])
    return np.append(dens, law[2])
