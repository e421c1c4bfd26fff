"""Seed 004: test-side bounds for the issue-27 tight assertions, derived from the paper's
definitions and sharing no code with ``algorithms/``.

Lemma 5.3's EM stage (the ``w_{1,κ} ≤ 4e·w_{2,κ}`` step of its proof) with the score of
Example 5.2 (q = #errors on D, matched sensitivity 1) and Algorithm 2's exponential mechanism
at ε = 1, weights ``exp(−ε q/2)``.

Derivation of the tight constant (:func:`em_stage_sup_errors`). Neighbours ``D1 = D∘(p1, y1)``,
``D2 = D∘(p2, y2)`` (T fixed; a change in T moves P but not the scores and is covered by the
same argument with ``r`` below unchanged). ``K = P1 ∩ P2`` holds every point of D and T, so a
pattern κ on K has a fixed ``r_κ = q(D, κ)``; every extension ``h`` of κ in ``H_t = Π(P_t)``
has ``q(D_t, h) = r_κ + [h(p_t) ≠ y_t] ∈ {r_κ, r_κ + 1}`` and κ has one or two extensions
(the proof's ``h_t^{(0)}, h_t^{(1)}``). Write ``N_t(κ) = Σ_ext exp(−ε q(D_t, h)/2)``; then
``e^{−ε(r_κ+1)/2} ≤ N_t(κ) ≤ e^{−ε r_κ/2}(1 + e^{−ε/2})`` (at least one extension, at most one
without an error at ``p_t``), so ``N_1(κ)/N_2(κ) ≤ 1 + e^{ε/2}`` for every κ, and

    w_{1,κ}/w_{2,κ} = [N_1(κ)/N_2(κ)] · [Σ_κ' N_2(κ') / Σ_κ' N_1(κ')] ≤ (1 + e^{ε/2})².

(If ``p_t ∈ K`` the extension is unique and both factors shrink.) The bound is a supremum,
approached by :func:`extremal_instance` as ``r → ∞`` (κ0 with two extensions in H1, one
erring extension in H2, heavily penalised on D; κ' with the mirror structure and no error on
D): at ε = 1, ``(1 + √e)² = 7.0157`` against the lemma's ``4e = 10.873`` (ln: 1.948 vs
2.386, ratio 0.8165). The lemma's ``4e`` is the supremum over ALL matched-sensitivity-1
scores (two extensions both one below / one above, factor ``2e^{1/2}`` twice); for the score
Algorithm 2 uses (#errors) an extension differs from its sibling by exactly the error at
``p_t``, which caps each factor at ``1 + e^{1/2}``.

Issue 27, tight (:func:`sup_inner_loss`, :func:`closure_pair_sup`): the supremum of one
round's loss over ALL ε_A-DP inner learners at a given pair, an LP over the learner's law per
multiset of draws (derivation at the section below), and the cell-count learner of
:func:`count_learner_in`, the closed form of its optimisers at the tested pairs.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, COLT 2020: Definition 3.3, Definition 5.1, Example
5.2, Algorithms 2, 4 and 5, Lemma 3.12, Lemma 5.3 (proof: ``w_{1,h} ≤ 4e w_{2,h}``), Theorem
6.1, Lemma 7.2; notes ``shared/research/seed-004.md`` T-5.3.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

Sample = list[tuple[int, int]]


def em_stage_sup_errors(eps: float = 1.0) -> float:
    """Supremum of ``w_{1,κ}/w_{2,κ}`` over all classes, samples and neighbours for Algorithm
    2's EM at ``eps`` with q = #errors (module docstring): ``(1 + e^{eps/2})²``.

    Parameters
    ----------
    eps
        Privacy parameter of the exponential mechanism in Step 3 (the paper: 1).

    Returns
    -------
    float
        The tight constant (7.0157 at ``eps = 1``), below the lemma's ``4e``.
    """
    return (1.0 + math.exp(eps / 2.0)) ** 2


def extremal_instance(r: int, pos: int | None = None) -> tuple[int, list[int], Sample, Sample,
                                                                int, int]:
    """The family approaching :func:`em_stage_sup_errors`: X = {0 (= K), 1 (= p1), 2 (= p2)},
    H = {(h(0), h(1), h(2))} = {(1,0,1), (1,1,1), (0,1,0), (0,1,1)} (masks 5, 7, 2, 6), so
    Π_H({0,1}) = {10, 11, 01} and Π_H({0,2}) = {11, 00, 01}; D = r × (0, 0); D1 = D∘(1, 0),
    D2 = D∘(2, 0) with the changed record at index ``pos`` (default last); κ0 = "h(0) = 1".

    Returns
    -------
    tuple
        ``(n, masks, d1, d2, kmask, kappa)``.
    """
    pos = r if pos is None else pos
    base: Sample = [(0, 0)] * r
    d1 = base[:pos] + [(1, 0)] + base[pos:]
    d2 = base[:pos] + [(2, 0)] + base[pos:]
    return 3, [5, 7, 2, 6], d1, d2, 1, 1


def em_stage_ratio(n: int, masks: list[int], d1: Sample, d2: Sample, kmask: int, kappa: int,
                   eps: float = 1.0) -> float:
    """``w_{1,κ}/w_{2,κ}`` computed from Algorithm 2's definition, independently of
    ``algorithms/``: patterns = distinct restrictions of H to the points of D_t, EM weights
    ``exp(−eps·#errors(D_t, h)/2)``, w = mass of the patterns restricting to κ on K.

    Parameters
    ----------
    n
        Domain size (points 0..n−1); ``masks`` are the hypotheses as bitmasks.
    d1, d2
        Neighbouring samples (T empty).
    kmask, kappa
        K as a bitmask and the pattern κ on it.
    eps
        EM parameter.
    """
    del n

    def w(d: Sample) -> float:
        pm = sum({1 << x for x, _ in d})
        pats = {m & pm for m in masks}
        q = {p: sum((p >> x & 1) != y for x, y in d) for p in pats}
        q0 = min(q.values())
        wt = {p: math.exp(-eps * (q[p] - q0) / 2.0) for p in pats}
        return sum(v for p, v in wt.items() if p & kmask == kappa) / sum(wt.values())

    return w(d1) / w(d2)


def subsample_eps(eps: float, m: int, n: int) -> float:
    """Pure-DP bound for "draw m of the n records uniformly with replacement, run an eps-DP A"
    under substitution of one record (Step 2c of Algorithm 5 / A′ of Theorem 6.1), derived
    here: with J ~ Bin(m, 1/n) copies of the changed record drawn and ``f_0`` the law of A on m
    draws from the n − 1 common records, coupling the J copies with fresh common draws and
    group privacy give ``e^{−εj} f_0 ≤ f_j^{(t)} ≤ e^{εj} f_0`` for both neighbours, hence

        ε′ ≤ ln E[e^{εJ}] − ln E[e^{−εJ}] = m [ln(1 + (e^ε − 1)/n) − ln(1 + (e^{−ε} − 1)/n)].

    Parameters
    ----------
    eps
        Privacy parameter of the inner algorithm.
    m, n
        Draws and records.
    """
    return m * (math.log1p(math.expm1(eps) / n) - math.log1p(math.expm1(-eps) / n))


def relabel_round_bound(n_d: int, eps: float = 1.0) -> float:
    """Pure-DP bound of one A_RelabelAndLearn round as Algorithms 4/5 run it (relabel EM at
    ε = 1 with an integer score within {r_κ, r_κ + 1} over κ's extensions — #errors and score
    (17), see the module docstring — then ⌊n_d/9⌋ draws with replacement from D̃ and an
    ``eps``-DP learner): the proof of Lemma 5.3 with ``w1/w2 ≤ (1 + √e)²`` in place of 4e and
    the subsampling bound :func:`subsample_eps` in place of ε_A:
    ``ln (1 + √e)² + subsample_eps(eps, ⌊n_d/9⌋, n_d)`` (2.208 at n_d = 99; vs 1 + ln 4e =
    3.386). A change in T leaves D̃ unchanged and the EM scores equal: ``ln 4`` only.

    Parameters
    ----------
    n_d
        |D| of the round.
    eps
        The inner learner's ε (the paper's L-EM: 1).
    """
    return math.log(em_stage_sup_errors(1.0)) + subsample_eps(eps, n_d // 9, n_d)


# ----------------------------------------------------------------------------- issue 27, tight
#
# The supremum of a relabel-and-learn round's privacy loss over ALL ε_A-DP inner learners A
# (pure DP, the premise of Theorem 6.1 / Lemma 7.2 with δ = 0), at one neighbouring pair.
# A sees Q, ⌊|D|/9⌋ draws with replacement from D̃; the draws are exchangeable, so A may be
# taken symmetric (averaging A over permutations of its input keeps it ε_A-DP and keeps its
# output law), i.e. a function of the multiset Q; an event of A's output is a map
# a: Q ↦ Pr[A(Q) ∈ E] ∈ [0, 1] with a(Q) ≤ e^{ε_A} a(Q') and 1 − a(Q) ≤ e^{ε_A}(1 − a(Q')) for
# multisets at substitution distance 1. Cells of D̃ that neither side can produce are mapped
# to a produced one by any A on the full domain and back (a per-record pre-processing), so
# the multisets over the produced cells suffice. The loss ratio Σ μ_1(Q) a(Q) / Σ μ_2(Q) a(Q)
# is linear-fractional: Charnes–Cooper (y = t·a, Σ μ_2 y = 1) gives an LP (HiGHS).

#: relative tolerance of the LP optimum (HiGHS' default feasibility/optimality tolerances)
LP_RTOL = 1e-6


def _patterns_on(masks: list[int], pm: int) -> list[int]:
    """Π_H(P): the distinct restrictions (bit x = h(x), zero off P), each once."""
    return sorted({h & pm for h in masks})


def _draw_law(cells: dict[tuple[int, int], int], m: int) -> dict[tuple[tuple[int, int], ...],
                                                                   float]:
    """Law of the sorted multiset of ``m`` uniform draws with replacement from the records
    whose cell multiplicities are ``cells`` (multinomial)."""
    keys = sorted(c for c, v in cells.items() if v)
    tot = sum(cells[c] for c in keys)
    out: dict[tuple[tuple[int, int], ...], float] = {}

    def rec(i: int, left: int, acc: list[int], lp: float) -> None:
        if i == len(keys) - 1:
            acc = acc + [left]
            lp += left * math.log(cells[keys[i]] / tot) - math.lgamma(left + 1)
            q = tuple(c for c, k in zip(keys, acc) for _ in range(k))
            out[q] = out.get(q, 0.0) + math.exp(lp + math.lgamma(m + 1))
            return
        for k in range(left + 1):
            rec(i + 1, left - k, acc + [k],
                lp + k * math.log(cells[keys[i]] / tot) - math.lgamma(k + 1))

    rec(0, m, [], 0.0)
    return out


def round_draw_law(masks: list[int], d: Sample, t: Sample, score: Any, m: int,
                   eps_r: float = 1.0) -> dict[tuple[tuple[int, int], ...], float]:
    """Law of the multiset Q that the inner learner of one relabel round sees, from the
    paper's definitions: P = points of D∘T, patterns Π_H(P) each once, Algorithm 1 with
    ``eps_r`` (the paper: 1) and weights exp(−eps_r q(D, π)/2), D̃ = D with π's labels,
    ``m`` draws from D̃ with replacement. ``score(pattern_mask, d)`` is q."""
    pm = 0
    for x, _ in list(d) + list(t):
        pm |= 1 << x
    pats = _patterns_on(masks, pm)
    q = [score(p, d) for p in pats]
    q0 = min(q)
    w = [math.exp(-eps_r * (v - q0) / 2.0) for v in q]
    z = sum(w)
    out: dict[tuple[tuple[int, int], ...], float] = {}
    for p, wp in zip(pats, w):
        cells: dict[tuple[int, int], int] = {}
        for x, _ in d:
            c = (x, p >> x & 1)
            cells[c] = cells.get(c, 0) + 1
        for qq, pr in _draw_law(cells, m).items():
            out[qq] = out.get(qq, 0.0) + wp / z * pr
    return out


def errors_score(p: int, d: Sample) -> int:
    """q(D, π) = #errors of π on D (Algorithm 4's score)."""
    return sum((p >> x & 1) != y for x, y in d)


def completion_score(table: tuple[int, ...], prefix: list[int], rest: list[list[int]]) -> Any:
    """Score (17) of Algorithm 5 for round ``len(prefix) + 1``: the fewest errors on D of
    G(h_<i, π, c_>i) over completions c_j ∈ H_j (``rest``: their masks); ``table`` is G's truth
    table indexed by Σ_j a_j 2^j."""
    i = len(prefix)

    def score(p: int, d: Sample) -> int:
        best = None
        combos: list[list[int]] = [[]]
        for hs in rest:
            combos = [c + [h] for c in combos for h in hs]
        for comp in combos:
            fs = list(prefix) + [p] + comp
            e = sum(table[sum((f >> x & 1) << j for j, f in enumerate(fs))] != y for x, y in d)
            best = e if best is None else min(best, e)
        return best

    del i
    return score


def _multisets(cells: list[tuple[int, int]], m: int) -> list[tuple[tuple[int, int], ...]]:
    import itertools
    return list(itertools.combinations_with_replacement(sorted(cells), m))


def sup_inner_loss(law1: dict[Any, float], law2: dict[Any, float], eps_a: float,
                   ) -> tuple[float, dict[Any, float]]:
    """max over ε_A-DP inner learners and events E of |ln Pr_1[E] / Pr_2[E]| where Pr_t is
    the law of A(Q) with Q ~ ``law_t`` (multisets of one size; both directions; LP above).

    Returns
    -------
    tuple
        ``(supremum, a)`` with ``a[Q] = Pr[A*(Q) ∈ E*]`` of an optimiser (over all multisets
        of the produced cells), the extremal inner learner as an explicit law.
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    m = len(next(iter(law1)))
    cells = sorted({c for law in (law1, law2) for q in law for c in q})
    nodes = _multisets(cells, m)
    idx = {v: i for i, v in enumerate(nodes)}
    k, e = len(nodes), math.exp(eps_a)
    ri, ci, vals, r = [], [], [], 0
    for u in nodes:
        for j in range(m):
            if j and u[j] == u[j - 1]:
                continue
            rest = u[:j] + u[j + 1:]
            for c in cells:
                if c == u[j]:
                    continue
                v = idx[tuple(sorted(rest + (c,)))]
                ui = idx[u]
                ri += [r, r, r + 1, r + 1, r + 1]                  # y_u ≤ e y_v
                ci += [ui, v, ui, v, k]                            # t − y_u ≤ e (t − y_v)
                vals += [1.0, -e, -1.0, e, 1.0 - e]
                r += 2
    for u in range(k):                                             # y_u ≤ t
        ri += [r, r]
        ci += [u, k]
        vals += [1.0, -1.0]
        r += 1
    a_ub = coo_matrix((vals, (ri, ci)), shape=(r, k + 1)).tocsr()
    best, arg = -1.0, {}
    for a, b in ((law1, law2), (law2, law1)):
        c, eq = np.zeros(k + 1), np.zeros((1, k + 1))
        for v, pr in a.items():
            c[idx[v]] -= pr
        for v, pr in b.items():
            eq[0, idx[v]] += pr
        res = linprog(c, A_ub=a_ub, b_ub=np.zeros(r), A_eq=eq, b_eq=[1.0],
                      bounds=[(0, None)] * (k + 1), method="highs")
        assert res.status == 0, res.message
        val = math.log(-res.fun)
        if val > best:
            best, arg = val, {v: float(res.x[idx[v]] / res.x[k]) for v in nodes}
    return best, arg


def closure_pair_sup(table: tuple[int, ...], classes: list[list[int]], s: Sample, sp: Sample,
                     eps_a: float = 1.0) -> tuple[float, int, list[int], list[dict[Any, float]]]:
    """Supremum over ALL ε_A-DP inner learners A_1..A_k of the transcript loss of Algorithm 5
    at the pair (s, sp) (equal positional chunks S_i = D_i∘T_i, score (17) on D_i, ⌊|D_i|/9⌋
    draws). The chunks are disjoint and the pair differs in one chunk i; rounds before i see
    equal data, rounds after i post-process (h_1..h_i) and equal data, so the transcript ratio
    of (h_<i, h_i, h_>i) is round i's ratio of h_i given h_<i; its supremum over A_i is the LP
    of :func:`sup_inner_loss` for that prefix, and over all A_<i every prefix in H_<i is
    reachable (e.g. L-EM has full support): the maximum over prefixes.

    Returns
    -------
    tuple
        ``(supremum, round i, maximising prefix, [law of Q under s, under sp])``.
    """
    import itertools
    k = len(classes)
    size = len(s) // k
    diff = [j for j in range(k) if s[j * size:(j + 1) * size] != sp[j * size:(j + 1) * size]]
    if not diff:
        return 0.0, 0, [], []
    i = diff[0]
    half = size // 2
    best: tuple[float, int, list[int], list[dict[Any, float]]] = (-1.0, i, [], [])
    for prefix in itertools.product(*classes[:i]):
        score = completion_score(table, list(prefix), classes[i + 1:])
        laws = [round_draw_law(classes[i], u[i * size: i * size + half],
                               u[i * size + half:(i + 1) * size], score, half // 9)
                for u in (s, sp)]
        val, _ = sup_inner_loss(*laws, eps_a)
        if val > best[0]:
            best = (val, i, list(prefix), laws)
    return best


def fit_count_learner(law1: dict[Any, float], law2: dict[Any, float], eps_a: float = 1.0
                      ) -> tuple[float, tuple[tuple[int, int], ...], int]:
    """The cell-count learner (:func:`count_learner_in`) of largest loss at the pair: a search
    over every non-empty set of the produced cells and every g0 in 0..m (small here: ≤ 8
    cells). Returns ``(loss, cells, g0)``; the tests check it attains :func:`sup_inner_loss`.
    """
    import itertools
    m = len(next(iter(law1)))
    cells = sorted({c for law in (law1, law2) for q in law for c in q})
    best: tuple[float, tuple[tuple[int, int], ...], int] = (-1.0, (), 0)
    for r in range(1, len(cells) + 1):
        for g in itertools.combinations(cells, r):
            for g0 in range(m + 1):
                v = count_learner_loss(law1, law2, set(g), g0, eps_a)
                if v > best[0]:
                    best = (v, tuple(g), g0)
    return best


def count_learner_in(q: tuple[tuple[int, int], ...], cells: set[tuple[int, int]], g0: int,
                     eps_a: float) -> float:
    """Pr[h_in] of the cell-count learner (the form of the LP optimisers found here): with
    g = #records of Q in ``cells``, e^{ε(g−g0+1)}/(1+e^ε) for g < g0 and
    1 − e^{−ε(g−g0)}/(1+e^ε) for g ≥ g0 (ε_A-DP: g moves by ≤ 1 under substitution, and the
    odds of both outputs move by ≤ e^ε)."""
    g = sum(c in cells for c in q)
    if g < g0:
        return math.exp(eps_a * (g - g0 + 1)) / (1 + math.exp(eps_a))
    return 1 - math.exp(-eps_a * (g - g0)) / (1 + math.exp(eps_a))


def count_learner_loss(law1: dict[Any, float], law2: dict[Any, float],
                       cells: set[tuple[int, int]], g0: int, eps_a: float) -> float:
    """Exact loss of the cell-count learner's output (two values) under Q ~ law1 vs law2."""
    out = 0.0
    for side in (0, 1):
        p = [sum(pr * abs(side - count_learner_in(q, cells, g0, eps_a)) for q, pr in law.items())
             for law in (law1, law2)]
        out = max(out, abs(math.log(p[0] / p[1])))
    return out
