"""Independent computations for the issue 27 "tight" assertions of seed 000 (Li–Wang–Ye):
re-derived from the paper's definitions, sharing no code with ``algorithms/``. Not a test
module; the claim tests load it by path, as modules under ``properties/`` are not importable
under ``--import-mode=importlib``.

Derivation (Lemma 3.1 end to end with k = 1, Theorem 3.6 with m = 1): the base learner's
input is ONE labelled point — T^h itself when k = ⌈εn⌉ = 1, or Procedure E's single draw from
T^h when m = 1 — whose law under S is :func:`drawn_point_law`. Any two one-point datasets
are neighbours, so an (ε_A, 0)-DP learner's laws on the 2N labelled points are pairwise within
e^{ε_A} (both an event and its complement, after the binary post-processing 1[A ∈ E]), and
sup_A max_E ln(P_S(E)/P_S′(E)) is the linear-fractional programme
max π_S·f / π_S′·f over such f ∈ [0, 1]^{2N}, solved exactly after the Charnes–Cooper
substitution y = t·f (:func:`sup_learner_epsilon`). It is attained (f is a valid learner).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithms 1 and 2, Lemma 3.1, Procedure E (Lemma 2.13),
Theorem 3.6. A. Charnes, W. W. Cooper, "Programming with linear fractional functionals", 1962.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

#: relative tolerance of assertions against :func:`sup_learner_epsilon` (HiGHS's feasibility
#: tolerance; the references attain the supremum, so exact equality is the expected case)
LP_RTOL = 1e-6


def _labelled_t(s: np.ndarray, eps: float, n_dom: int
                ) -> Iterator[tuple[float, dict[int, int], tuple[int, ...], int]]:
    """The law of T^h in Algorithm 2 (seed 000) on thresholds over {0..n_dom−1}: yields
    ``(mass, tx, labels, k)`` — T's point counts ``tx`` (x → copies), the labeling ``labels``
    of T_X (in ``tx``'s order) Algorithm 1 picks, its probability and k = |T|. T = a uniform
    k-subset of S (k = ⌈εn⌉; multivariate hypergeometric over S's distinct records), W = S
    minus T, Algorithm 1 picks a labeling L of T_X with mass ∝ exp(−ε|W| q/2),
    q(h_a) = min_b dis_T(h_a, h_b) + err_W(h_b) (b over all thresholds)."""
    n = len(s)
    k = math.ceil(eps * n - 1e-9)
    values, mult = np.unique(s, axis=0, return_counts=True)
    for tc in itertools.product(*[range(min(int(c), k) + 1) for c in mult]):
        if sum(tc) != k:
            continue
        weight = math.prod(math.comb(int(c), t) for c, t in zip(mult, tc)) / math.comb(n, k)
        wc = [int(c) - t for c, t in zip(mult, tc)]
        tx: dict[int, int] = {}
        for (x, _), t in zip(values.tolist(), tc):
            tx[x] = tx.get(x, 0) + t
        tx = {x: t for x, t in tx.items() if t > 0}
        errw = [sum(c * int(int(x >= b) != y) for (x, y), c in zip(values.tolist(), wc))
                for b in range(n_dom + 1)]
        reps: dict[tuple[int, ...], int] = {}
        for a in range(n_dom + 1):
            reps.setdefault(tuple(int(x >= a) for x in tx), a)
        q = {lab: min(sum(t * int((x >= a) != (x >= b)) for x, t in tx.items()) / k
                      + errw[b] / (n - k) for b in range(n_dom + 1))
             for lab, a in reps.items()}
        logw = {lab: -eps * (n - k) * v / 2 for lab, v in q.items()}
        top = max(logw.values())
        z = sum(math.exp(v - top) for v in logw.values())
        for lab in reps:
            yield weight * math.exp(logw[lab] - top) / z, tx, lab, k


def drawn_point_law(s: np.ndarray, eps: float, n_dom: int) -> dict[tuple[int, int], float]:
    """Law of one point drawn uniformly from T^h (:func:`_labelled_t`): a labelled point
    (x, L(x)) with probability (copies of x in T)/k. For k = 1 this is the law of T^h."""
    out: dict[tuple[int, int], float] = {}
    for mass, tx, lab, k in _labelled_t(s, eps, n_dom):
        for (x, t), y in zip(tx.items(), lab):
            out[(x, y)] = out.get((x, y), 0.0) + mass * t / k
    return out


def drawn_multiset_law(s: np.ndarray, eps: float, n_dom: int,
                       m: int) -> dict[tuple[tuple[int, int], ...], float]:
    """Law of Procedure E's m draws (with replacement, as a sorted multiset of labelled points)
    from T^h (:func:`_labelled_t`; Theorem 3.6's composite): a multinomial over T^h's labelled
    points with probabilities (copies of x in T)/k."""
    out: dict[tuple[tuple[int, int], ...], float] = {}
    for mass, tx, lab, k in _labelled_t(s, eps, n_dom):
        points = list(zip(tx, lab))
        for comp in itertools.product(range(m + 1), repeat=len(points)):
            if sum(comp) != m:
                continue
            pr = math.factorial(m) / math.prod(math.factorial(c) for c in comp) * math.prod(
                (tx[x] / k) ** c for (x, _), c in zip(points, comp))
            key = tuple(sorted(pt for pt, c in zip(points, comp) for _ in range(c)))
            out[key] = out.get(key, 0.0) + mass * pr
    return out


def sup_learner_delta(p: dict[Any, float], q: dict[Any, float], m: int, n_dom: int,
                      eps_a: float, delta_a: float, target: float) -> float:
    """max over (ε_A, δ_A)-DP learners on m-point labelled datasets (multisets over {0..n_dom−1}
    × {0, 1}, neighbours = one element replaced) and events E of
    Σ p(D) P[A(D) ∈ E] − e^{target} Σ q(D) P[A(D) ∈ E], both directions: the linear programme
    over f = P[A ∈ E] with f(u) ≤ e^{ε_A} f(v) + δ_A and the same for 1 − f on every
    neighbouring pair (binary post-processing; variables scaled by 1/δ_A; HiGHS, sparse)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix
    points = [(x, y) for x in range(n_dom) for y in range(2)]
    nodes = list(itertools.combinations_with_replacement(points, m))
    idx = {v: i for i, v in enumerate(nodes)}
    e = math.exp(eps_a)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    rhs: list[float] = []
    for u in nodes:
        for j in range(m):
            for new in points:
                v = tuple(sorted(u[:j] + (new,) + u[j + 1:]))
                if v == u:
                    continue
                r = len(rhs)                 # g = f/δ: g_u − e g_v ≤ 1, e g_v − g_u ≤ (e−1)/δ + 1
                rows += [r, r, r + 1, r + 1]
                cols += [idx[u], idx[v], idx[u], idx[v]]
                vals += [1.0, -e, -1.0, e]
                rhs += [1.0, (e - 1) / delta_a + 1.0]
    a_ub = coo_matrix((vals, (rows, cols)), shape=(len(rhs), len(nodes))).tocsr()
    best = 0.0
    for a, b in ((p, q), (q, p)):
        c = np.zeros(len(nodes))
        for v, pr in a.items():
            c[idx[v]] -= pr
        for v, pr in b.items():
            c[idx[v]] += pr * math.exp(target)
        res = linprog(c, A_ub=a_ub, b_ub=np.array(rhs), bounds=[(0, 1 / delta_a)] * len(nodes),
                      method="highs")
        assert res.status == 0, res.message
        best = max(best, -res.fun * delta_a)
    return best


def sup_learner_epsilon(p: dict[Any, float], q: dict[Any, float], nodes: list[Any],
                        eps_a: float) -> float:
    """max over (ε_A, 0)-DP learners on pairwise-neighbouring one-point inputs ``nodes`` and
    events E of |ln(Σ p(D) P[A(D) ∈ E] / Σ q(D) P[A(D) ∈ E])| (both directions; HiGHS)."""
    from scipy.optimize import linprog
    idx = {v: i for i, v in enumerate(nodes)}
    k, e = len(nodes), math.exp(eps_a)
    rows = []
    for u in nodes:
        r = np.zeros(k + 1)
        r[idx[u]], r[k] = 1.0, -1.0                                   # y_u ≤ t
        rows.append(r)
        for v in nodes:
            if u != v:
                r = np.zeros(k + 1)
                r[idx[u]], r[idx[v]] = 1.0, -e                         # y_u ≤ e y_v
                rows.append(r)
                r = np.zeros(k + 1)
                r[idx[u]], r[idx[v]], r[k] = -1.0, e, 1.0 - e          # t − y_u ≤ e (t − y_v)
                rows.append(r)
    best = 0.0
    for a, b in ((p, q), (q, p)):
        c, eq = np.zeros(k + 1), np.zeros((1, k + 1))
        for v, pr in a.items():
            c[idx[v]] -= pr
        for v, pr in b.items():
            eq[0, idx[v]] += pr
        res = linprog(c, A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=eq, b_eq=[1.0],
                      bounds=[(0, None)] * (k + 1), method="highs")
        assert res.status == 0, res.message
        best = max(best, math.log(-res.fun))
    return best
