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

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, COLT 2020: Definition 5.1, Example 5.2, Algorithm 2,
Lemma 5.3 (proof: ``w_{1,h} ≤ 4e w_{2,h}``); notes ``shared/research/seed-004.md`` T-5.3.
"""
from __future__ import annotations

import math

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
