"""Seed 000 (Li–Wang–Ye): privacy of Algorithms 1–3 on the threshold stand-in, exact pmfs.

Constants: Lemma 3.1 states only (O(ε), O(εδ)); the bound asserted is the one *derived* from its
proof, ``ln(e^ε + 4e²k/(n−k))`` (bounds.lemma31_epsilon), with base learners that are (1, 0)-DP.
Claim 3.5's (2 + 2 ln 2, 4eδ) is the paper's own. Neighbours: substitution (dpcheck.Replace).
A mutant case is caught by the audit (statistical) or, failing that, by the exact-loss assertion.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.9, Algorithms 1–3, Lemma 3.1, Claim 3.5;
notes shared/research/seed-000.md §4.1 (P1–P6), §4.3, §7 (B1–B16).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from algorithms.beside import load_beside
from algorithms.mechanisms.selection import ExponentialMechanism
from algorithms.realizable_to_agnostic.agnostic import Agnostic
from algorithms.realizable_to_agnostic.auxiliary import Auxiliary
from algorithms.realizable_to_agnostic.bounds import (
    CLAIM35_EPSILON,
    claim35_delta,
    lemma31_epsilon,
)
from algorithms.realizable_to_agnostic.buggy import ErmBaseAgnostic, FirstKAgnostic
from algorithms.realizable_to_agnostic.testbeds import unique_record_pair
from dpcheck import PureDP, Replace
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

TOL = 1e-9




def _rand(rng: np.random.Generator, n: int, dom: int) -> np.ndarray:
    return np.stack([rng.integers(0, dom, n), rng.integers(0, 2, n)], 1)


# ----------------------------------------------------------------------------- Lemma 2.9

def _em(variant: str, eps: float) -> ExponentialMechanism:
    # min-form EM: P[h] ∝ exp(−ε q/(2Δ)); "no_half" drops the /2 (B6: really 2ε-DP)
    # "scale_1_25" (issue 27): the mechanism at 1.25ε, a 25 % overspend
    factor = {"no_half": 2.0, "scale_1_25": 1.25}.get(variant, 1.0)
    return ExponentialMechanism(factor * eps, 1.0, score=lambda q: -np.asarray(q, float))


@pytest.mark.claim(paper="000", ref="Lemma 2.9", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", *(pytest.param(v, marks=pytest.mark.mutant(v))
                                                   for v in ("no_half", "scale_1_25"))])
def test_exponential_mechanism_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                          dp_sensitivity: Any) -> None:
    """Lemma 2.9 (min form, Δ = 1): ε-DP on the worst pair q = (0, 1, 1, 1) vs (1, 0, 0, 0)
    shape (one candidate down by Δ, the others up): exact ε and an audit at PureDP(ε)."""
    eps = 1.0
    mech = _em(variant, eps)
    d, dp = [0.0, 1.0, 1.0, 1.0, 8.0], [1.0, 0.0, 0.0, 0.0, 9.0]
    exact = privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon
    r = dp_audit(mech, d, dp, PureDP(eps), samples=200_000)
    # issue 27: the same shape with 200 candidates (one down, 199 up) reaches 0.995ε exactly,
    # so a 25 % overspend is visible (the 5-candidate pair reaches 0.743ε only)
    wide = ([0.0] + [1.0] * 199, [1.0] + [0.0] * 199)
    exact_wide = privacy_loss(mech.pmf(wide[0]), mech.pmf(wide[1])).epsilon
    dp_record("em_privacy", {"exact_epsilon": exact, "epsilon_lower": r.epsilon_lower,
                             "exact_epsilon_200": exact_wide})
    if variant == "reference":
        lo, hi = 1.0, 4.0                  # budget factor at which the wide pair exceeds ε
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            m2 = _em("reference", eps * mid)
            lo, hi = ((mid, hi) if privacy_loss(m2.pmf(wide[0]), m2.pmf(wide[1])).epsilon
                      <= eps + TOL else (lo, mid))
        dp_sensitivity(loss=exact_wide, bound=eps, detectable_overspend=hi,
                       basis="exact pmf on the 200-candidate worst-shape pair / ε; overspend "
                             "by bisection on the budget at that pair")
    assert r.violation or exact <= eps + TOL
    assert r.violation or exact_wide <= eps + TOL, f"exact loss {exact_wide} (200 candidates)"


# ----------------------------------------------------------------------------- Lemma 3.1

def _end_to_end_pairs() -> list[tuple[str, float, int, np.ndarray, np.ndarray]]:
    """Notes §4.3 P5: x* = 0 unique at index 0 of S, replaced by the common value in S′."""
    return [("rr", eps, n, *unique_record_pair(n)) for n, eps in ((40, 1 / 40), (100, 0.01))]


END_TO_END_MUTANTS = ["first_k", "relabel_all", "base_eps5"]


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in END_TO_END_MUTANTS])
def test_agnostic_end_to_end_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                        dp_sensitivity: Any) -> None:
    """Lemma 3.1 end to end with the adversarial (1,0)-DP base learner (RR on 1[x* ∈ T^h]):
    exact loss ≤ ln(e^ε + 4e²k/(n−k)) (derived from the proof) at (n, ε) = (40, 1/40) and
    (100, 0.01); the sampler audited at that bound. B3 first-k, B8 relabel all of
    S, B9 ε_A = 5 exceed it. Its tight counterpart: :func:`test_agnostic_end_to_end_tight`."""
    caught, worst = False, []
    for learner, eps, n, s, sp in _end_to_end_pairs():
        mech = (FirstKAgnostic(6, eps, learner=learner, x_star=0) if variant == "first_k" else
                Agnostic(6, eps, learner=learner, x_star=0, bug=variant))
        k = math.ceil(eps * n - 1e-9)
        bound = lemma31_epsilon(n, eps, k)
        exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
        r = dp_audit(mech, s, sp, PureDP(bound), samples=200_000, relation=Replace())
        dp_record("agnostic_end_to_end", {"n": n, "epsilon": eps, "bound": bound,
                                          "exact_epsilon": exact,
                                          "epsilon_lower": r.epsilon_lower})
        caught = caught or r.violation
        worst.append((exact, bound))
    if variant == "reference":
        e, b = max(worst, key=lambda eb: eb[0] / eb[1])
        dp_sensitivity(loss=e, bound=b, detectable_overspend=None,
                       basis="exact pmf / the proof's derived ln(e^ε + 4e²k/(n−k)), best of the "
                             "two configurations (the tight bound: test_agnostic_end_to_end_tight)")
        # the lemma's hypotheses are enforced, naming the value and the lemma: Algorithm 2's
        # internal ε ≤ 1/3 (Lemmas 3.1 and 3.4) and a (1, δ)-DP base learner, ε_A ≤ 1
        with pytest.raises(InvalidArgument, match=r"^epsilon=0\.5 must be <= 1/3 \(Lemmas 3\.1 "
                           r"and 3\.4\)"):
            Agnostic(6, 0.5)
        with pytest.raises(InvalidArgument, match=r"^learner_epsilon=1\.5 must be <= 1"):
            Agnostic(6, 1 / 40, learner="rr", learner_epsilon=1.5)
        # the derived bound is claimed only under the proof's hypotheses ε ≤ 1/3 and
        # |T| = k ≥ εn (for |W|/|T| ≤ (1 − ε)/ε)
        with pytest.raises(InvalidArgument, match=r"^epsilon=0\.5 must be <= 1/3 \(Lemma 3\.1\)"):
            lemma31_epsilon(40, 0.5, 20)
        with pytest.raises(InvalidArgument, match=r"^k=1 must be >= epsilon\*n=2\.0 "
                                                  r"\(Lemma 3\.1: \|T\| >= εn\)"):
            lemma31_epsilon(40, 1 / 20, 1)
    assert caught or all(e <= b + TOL for e, b in worst)


# Issue 27: the tightest end-to-end bound at the tested pairs, over ALL (ε_A, 0)-DP base
# learners, computed in properties/realizable_to_agnostic/independent.py (no code shared with
# algorithms/; derivation there): at the tested (n, ε) k = ⌈εn⌉ = 1, so A sees one labelled
# point, T^h = (x, relabel label), and the supremum is an exact linear-fractional programme.
_IND = load_beside(__file__, "independent.py")
TIGHT_END_TO_END_MUTANTS = ["base_eps_1_25", "k_plus_1", "base_eps5"]


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in TIGHT_END_TO_END_MUTANTS])
def test_agnostic_end_to_end_tight(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """Lemma 3.1 end to end, issue 27 "tight": at the pairs of
    :func:`test_agnostic_end_to_end_is_private` (RR learner, (n, ε) = (40, 1/40), (100, 0.01),
    k = 1) the exact loss ≤ the supremum over ALL (1, 0)-DP base learners at the pair
    (``independent.sup_learner_epsilon`` on ``drawn_point_law``: 0.042060, 0.017037); RR attains
    it (slack 1.000; the derived bound is 13.7x / 15.8x looser). Exact only (the sampler is
    audited by the other test). Mutants the derived bound lets pass: base_eps_1_25 (RR at
    1.25ε_A: 0.0604 / 0.0246), k_plus_1 (|I| = ⌈εn⌉ + 1: 0.0824 / 0.0338); base_eps5 too."""
    tight = []
    nodes = [(x, y) for x in range(6) for y in range(2)]
    for learner, eps, n, s, sp in _end_to_end_pairs():
        assert math.ceil(eps * n - 1e-9) == 1          # A's input is the one point T^h
        mech = Agnostic(6, eps, learner=learner, x_star=0, bug=variant)
        exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
        laws = _IND.drawn_point_law(s, eps, 6), _IND.drawn_point_law(sp, eps, 6)
        sup = _IND.sup_learner_epsilon(*laws, nodes, 1.0)
        assert sup <= lemma31_epsilon(n, eps, 1)        # the derived bound holds for every A
        dp_record("agnostic_end_to_end_tight", {"n": n, "epsilon": eps, "exact_epsilon": exact,
                                                "tight_bound": sup})
        tight.append((exact, sup, eps, s, sp))
    if variant == "reference":
        e, b, eps, s, sp = max(tight, key=lambda t: t[0] / t[1])
        # budget factor f on ε_A at that pair: RR at fε_A reads only x* ∈ T, whose probability
        # comes from the independent law (the code refuses learner_epsilon > 1)
        px = [sum(v for (x, _), v in _IND.drawn_point_law(d, eps, 6).items() if x == 0)
              for d in (s, sp)]
        lo, hi = 1.0, 2.0
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            hit = math.exp(mid) / (1 + math.exp(mid))
            out1 = [p * hit + (1 - p) * (1 - hit) for p in px]
            e_mid = max(abs(math.log(out1[0] / out1[1])),
                        abs(math.log((1 - out1[0]) / (1 - out1[1]))))
            lo, hi = (lo, mid) if e_mid > b * (1 + _IND.LP_RTOL) else (mid, hi)
        dp_sensitivity(loss=e, bound=b, detectable_overspend=hi,
                       basis="exact pmf / the supremum over all (1,0)-DP base learners at the "
                             "pair (independent LP; the derived ln(e^ε+4e²k/(n−k)) is 13.7x "
                             "looser); overspend by bisection on ε_A of the RR learner")
    # tight: the supremum over all (1, 0)-DP base learners at the tested pairs
    assert all(e <= b * (1 + _IND.LP_RTOL) for e, b, *_ in tight), \
        f"tight: {[(e, b) for e, b, *_ in tight]}"


LEAK_MUTANTS = ["release_h", "erm_base"]


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in LEAK_MUTANTS])
def test_agnostic_with_em_learner_is_private(variant: str, dp_audit: Any,
                                             dp_record: Any, dp_sensitivity: Any) -> None:
    """Lemma 3.1 with the exponential-mechanism learner (ε_A = 1) on {0..5}, n = 12, ε = 1/6
    (k = 2): a unique x* moved; exact loss ≤ derived 1.959 and audited. B1 (h released) and B2
    (non-private base learner) have outputs only one side can produce."""
    s = np.array([[4, 1]] + [[1, 0]] * 5 + [[5, 1]] * 6)
    sp = s.copy()
    sp[0] = [1, 0]
    mech = ErmBaseAgnostic(6, 1 / 6) if variant == "erm_base" else Agnostic(6, 1 / 6, bug=variant)
    bound = lemma31_epsilon(12, 1 / 6, 2)
    exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
    r = dp_audit(mech, s, sp, PureDP(bound), samples=200_000, relation=Replace())
    dp_record("agnostic_em", {"bound": bound, "exact_epsilon": exact,
                              "epsilon_lower": r.epsilon_lower})
    if variant == "reference":
        dp_sensitivity(loss=exact, bound=bound, detectable_overspend=None,
                       basis="exact pmf / the derived Lemma 3.1 bound")
    assert r.violation or exact <= bound + TOL


FIXED_T_MUTANTS = ["em_eps_one", "h_from_s"]


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in FIXED_T_MUTANTS])
def test_relabel_with_fixed_t_and_label_only_are_exactly_private(variant: str,
                                                                 dp_record: Any) -> None:
    """Proof of Lemma 3.1, case 1 ∉ I: with I fixed, P[output | I] is ε-DP in W (exact, 40
    random W-neighbours, N = 6, n = 6, ε = 1/3, I = {0, 1}); and (derived, notes P3) label-only
    neighbours give exactly (ε, 0) end to end (40 random y-flips, n = 12, ε = 1/6)."""
    rng = np.random.default_rng(5)
    worst_w = 0.0
    mech = Agnostic(6, 1 / 3, bug=variant)
    for _ in range(150):
        s = _rand(rng, 6, 6)
        sp = s.copy()
        sp[5] = [rng.integers(0, 6), rng.integers(0, 2)]
        worst_w = max(worst_w, privacy_loss(mech.conditional(s, [0, 1]),
                                            mech.conditional(sp, [0, 1])).epsilon)
    rng = np.random.default_rng(31)
    worst_y = 0.0
    mech = Agnostic(6, 1 / 6, bug=variant)
    for _ in range(40):
        s = _rand(rng, 12, 6)
        sp = s.copy()
        sp[0, 1] = 1 - sp[0, 1]
        worst_y = max(worst_y, privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon)
    dp_record("fixed_t_and_label_only", {"worst_fixed_t": worst_w, "claim_fixed_t": 1 / 3,
                                         "worst_label_only": worst_y, "claim_label_only": 1 / 6})
    assert worst_w <= 1 / 3 + TOL
    assert worst_y <= 1 / 6 + TOL


# ----------------------------------------------------------------------------- Claim 3.5
#
# Issue 27: an instance-exact bound from the proof's own structure, computed here with no code
# shared with algorithms/ (Algorithm 1 over thresholds and the interval learner re-derived from
# the paper). Proof of Claim 3.5: T_t = U_t∘V (t = 1, 2) differ in one record; T̂ = T_1 minus it.
# For a labeling c of T̂_X let P_t(c) be the labelings of (T_t)_X (≤ 2) restricting to c and
# m_t(c) their total relabel mass; h̄ depends on V^h = c|V only, and for L1 ∈ P1(c), L2 ∈ P2(c)
# the relabelled sets T_1^{L1}, T_2^{L2} are neighbours, so with
# γ_c = max over L1, L2 and outputs g of ln(A(T_1^{L1})(g)/A(T_2^{L2})(g)):
#   P1(o) = Σ_c Σ_{L1} R1(L1) A(T_1^{L1})(o ⊕ h̄_c) ≤ max_c (m1(c)/m2(c)) e^{γ_c} · P2(o).
# The paper bounds m1/m2 ≤ 4e^{ε|W|/|T|} (|P| ≤ 2 twice, score sensitivity 1/|T|) and γ_c ≤ ε_A;
# here both are computed exactly, giving B(U1, U2) = max over directions and c of
# ln(m1(c)/m2(c)) + γ_c ≤ 2 + 2 ln 2 (≤ ε_A + ln 4 + ε|W|/|T| = 3.286 at the tested sizes).

CLAIM35_N, CLAIM35_EPS, CLAIM35_EPS_A = 5, 0.1, 1.0
_CELLS = [(x, y) for x in range(CLAIM35_N) for y in range(2)]


def interval_masks(n: int) -> list[tuple[int, ...]]:
    """The interval class {1[lo ≤ x < hi]} on {0..n−1} as distinct masks (empty included):
    n(n+1)/2 + 1 of them."""
    return sorted({tuple(int(lo <= x < hi) for x in range(n))
                   for lo in range(n + 1) for hi in range(lo, n + 1)})


def claim35_parts(u: np.ndarray, v: np.ndarray, w: np.ndarray, eps: float,
                  eps_a: float) -> dict[tuple[int, ...], tuple[int, float, np.ndarray, int]]:
    """Independent A_Auxiliary pieces (seed 000, Algorithms 1 and 3): for every labeling L of
    T_X = (U∘V)_X by thresholds, (representative t, relabel mass ∝ exp(−ε|W|q/2) with
    q(h_t) = min_b dis_T(h_t, h_b) + err_W(h_b) over all b ∈ {0..N}, the interval learner's law
    ∝ exp(−ε_A·#errors/2) over :func:`interval_masks`, h̄ = smallest threshold consistent with
    V^L)."""
    n = CLAIM35_N
    tx = np.concatenate([u, v])[:, 0]
    k, wn = len(tx), len(w)
    errw = [sum(int(int(x >= b) != y) for x, y in w) for b in range(n + 1)]
    q = {a: min(sum(int((x >= a) != (x >= b)) for x in tx) / k + errw[b] / wn
                for b in range(n + 1)) for a in range(n + 1)}
    reps: dict[tuple[int, ...], int] = {}
    for a in range(n + 1):
        reps.setdefault(tuple(int(x >= a) for x in tx), a)
    logw = {lab: -eps * wn * q[a] / 2 for lab, a in reps.items()}
    top = max(logw.values())
    z = sum(math.exp(x - top) for x in logw.values())
    ints = np.array(interval_masks(n))
    out = {}
    for lab, a in reps.items():
        errs = (ints[:, tx] != np.array(lab)[None, :]).sum(1)
        lg = -eps_a * errs / 2
        pg = np.exp(lg - lg.max())
        vl = [int(x >= a) for x in v[:, 0]]
        hbar = min(b for b in range(n + 1) if [int(x >= b) for x in v[:, 0]] == vl)
        out[lab] = (a, math.exp(logw[lab] - top) / z, pg / pg.sum(), hbar)
    return out


def claim35_pmf(parts: dict[tuple[int, ...], tuple[int, float, np.ndarray, int]]) -> dict[
        int, float]:
    """Output law Σ_L mass(L)·A(T^L) ⊕ h̄(V^L) as N-bit masks, from :func:`claim35_parts`."""
    out: dict[int, float] = {}
    for _, mass, pg, hbar in parts.values():
        for g, p in zip(interval_masks(CLAIM35_N), pg):
            code = sum((g[x] ^ int(x >= hbar)) << x for x in range(CLAIM35_N))
            out[code] = out.get(code, 0.0) + mass * p
    return out


def claim35_bound(parts1: dict[tuple[int, ...], tuple[int, float, np.ndarray, int]],
                  parts2: dict[tuple[int, ...], tuple[int, float, np.ndarray, int]],
                  t_hat_x: np.ndarray) -> float:
    """B(U1, U2) = max over both directions and labelings c of T̂_X of
    ln(m1(c)/m2(c)) + γ_c (derivation above)."""
    best = 0.0
    for pa, pb in ((parts1, parts2), (parts2, parts1)):
        groups: dict[tuple[int, ...], tuple[list[Any], list[Any]]] = {}
        for i, parts in enumerate((pa, pb)):
            for lab, (a, *_rest) in parts.items():
                groups.setdefault(tuple(int(x >= a) for x in t_hat_x), ([], []))[i].append(lab)
        for la, lb in groups.values():
            ratio = math.log(sum(pa[x][1] for x in la) / sum(pb[x][1] for x in lb))
            gamma = max(float(np.max(np.log(pa[x][2] / pb[y][2]))) for x in la for y in lb)
            best = max(best, ratio + gamma)
    return best


def _u_pairs() -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Every U-neighbour pair of |U| = 2 over the 10 labelled points (U a multiset: 55 sets,
    one record replaced by any other point: 990 ordered pairs)."""
    us = [np.array(c) for c in itertools.combinations_with_replacement(_CELLS, 2)]
    out = []
    for u in us:
        for j in range(2):
            for c in _CELLS:
                if tuple(c) != tuple(u[j]):
                    up = u.copy()
                    up[j] = c
                    out.append((u, up, j))
    return out


def _key(u: np.ndarray) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(map(tuple, u.tolist())))


_CLAIM35_CACHE: dict[Any, Any] = {}      # variant-independent parts and bounds per (V, W)


def _claim35_scan(mech: Auxiliary, v: np.ndarray, w: np.ndarray) -> tuple[Any, Any, list[Any],
                                                                       bool, dict[Any, Any]]:
    """Every U-pair at public (V, W): the worst exact loss (value, pair), the largest
    loss / B(U1, U2) (value, pair), the pairs over B, whether every U's output support is
    {interval ⊕ h̄} (independent), and the independent parts per U. Losses vectorised over
    the 55 output laws (the worst pair re-checked with dpcheck.exact.privacy_loss); the
    independent parts and bounds are cached per (V, W) (they do not depend on the variant)."""
    cache = _CLAIM35_CACHE.setdefault((v.tobytes(), w.tobytes()), {"parts": {}, "bound": {}})
    parts, bounds = cache["parts"], cache["bound"]
    pmfs: dict[Any, dict[int, float]] = {}
    support_ok = True
    for u, _, _ in _u_pairs():
        if _key(u) in pmfs:
            continue
        pmfs[_key(u)] = mech.pmf(u)
        if _key(u) not in parts:
            parts[_key(u)] = claim35_parts(u, v, w, CLAIM35_EPS, CLAIM35_EPS_A)
        expected = {sum((g[x] ^ int(x >= hb)) << x for x in range(CLAIM35_N))
                    for g in interval_masks(CLAIM35_N) for *_r, hb in parts[_key(u)].values()}
        support_ok = support_ok and set(pmfs[_key(u)]) == expected
    keys = list(pmfs)
    codes = sorted({c for p in pmfs.values() for c in p})
    with np.errstate(divide="ignore"):
        logp = np.log(np.array([[pmfs[k].get(c, 0.0) for c in codes] for k in keys]))
    row = {k: i for i, k in enumerate(keys)}
    worst: tuple[float, Any] = (-1.0, None)
    tightest: tuple[float, Any] = (-1.0, None)
    over = []
    for u, up, j in _u_pairs():
        a, b_ = logp[row[_key(u)]], logp[row[_key(up)]]
        both = np.isfinite(a) & np.isfinite(b_)
        loss = (math.inf if (np.isfinite(a) != np.isfinite(b_)).any()
                else float(np.abs(a[both] - b_[both]).max()))
        pk = tuple(sorted((_key(u), _key(up))))
        if pk not in bounds:
            bounds[pk] = claim35_bound(parts[_key(u)], parts[_key(up)],
                                       np.delete(np.r_[u, v], j, 0)[:, 0])
        b = bounds[pk]
        worst = max(worst, (loss, (u, up, j)), key=lambda r: r[0])
        if b > 0:
            tightest = max(tightest, (loss / b, (u, up, j)), key=lambda r: r[0])
        if not loss <= b * (1 + TOL) + TOL:
            over.append((loss, b))
    u, up, _ = worst[1]
    assert privacy_loss(pmfs[_key(u)], pmfs[_key(up)]).epsilon == pytest.approx(
        worst[0], rel=1e-12)
    return worst, tightest, over, support_ok, parts


#: public V, W of the Claim 3.5 test: the (V, W) with the largest exhaustive worst loss (1.2142)
#: of the slow search test_auxiliary_worst_public_sets (all 55 V × 8 W): W realizable by h_2
#: (7 points at each x, one more at x = 0), V at x = 1, 3
CLAIM35_V = np.array([[1, 0], [3, 0]])
CLAIM35_W = np.repeat(np.array(_CELLS), [8, 0, 7, 0, 0, 7, 0, 7, 0, 7], axis=0)
CLAIM35_MUTANTS = ["hbar_from_t", "proper_learner", "learner_scale_1_25", "em_scale_1_25",
                   "em_eps_one"]


@pytest.mark.claim(paper="000", ref="Claim 3.5", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", *(pytest.param(b, marks=pytest.mark.mutant(b))
                                                   for b in CLAIM35_MUTANTS)])
def test_auxiliary_is_private_in_u(variant: str, dp_audit: Any, dp_record: Any,
                                   dp_sensitivity: Any) -> None:
    """Claim 3.5: A_Auxiliary(U, V, W) with an improper (interval) 1-DP learner is
    (2 + 2 ln 2, 0)-DP in U for public V, W (N = 5, |U| = |V| = 2, |W| = 36, ε = 0.1, so
    |W|/|T| = (1−ε)/ε): exact loss on EVERY U-neighbour pair (990), the worst audited.

    Issue 27: "tight", each pair's exact loss ≤ the instance-exact bound B(U1, U2) of the
    proof's structure (:func:`claim35_bound`, computed independently of algorithms/);
    "class", the output support is {g ⊕ h̄ : g an interval, h̄ reachable} (the learner's
    16-interval class, computed independently). Mutants: hbar_from_t (h̄ consistent with all
    of T^h: reads U, infinite loss), proper_learner (class collapses to thresholds: support),
    learner_scale_1_25 (learner at 1.25ε_A: tight), em_scale_1_25 (Algorithm 1's EM at 1.25ε:
    tight), em_eps_one (B5, Algorithm 1's EM at ε = 1: tight; its exact 3.157 passes the
    printed 3.386)."""
    v, w = CLAIM35_V, CLAIM35_W
    mech = Auxiliary(CLAIM35_N, CLAIM35_EPS, v, w, bug=variant)
    worst, tightest, over, support_ok, parts = _claim35_scan(mech, v, w)
    pair = worst[1]
    r = dp_audit(mech, pair[0], pair[1], PureDP(CLAIM35_EPSILON), samples=200_000,
                 relation=Replace())
    dp_record("auxiliary", {"exact_epsilon": worst[0], "bound": CLAIM35_EPSILON,
                            "epsilon_lower": r.epsilon_lower, "max_loss_over_tight": tightest[0],
                            "pairs_over_tight": len(over), "support_ok": support_ok})
    if variant == "reference":
        # Claim 3.5's printed δ: 4eδ (the (2 + 2 ln 2, 4eδ) statement; δ = 0 here)
        assert claim35_delta(0.01) == pytest.approx(4 * math.e * 0.01, rel=1e-12)
        # the proof's hypothesis |W|/|T| ≤ (1 − ε)/ε (met with equality here) is enforced
        with pytest.raises(InvalidArgument, match=r"^\|W\|/\|T\|=37/4 must be <= "
                                                  r"\(1-epsilon\)/epsilon \(proof of Claim 3\.5\)"):
            Auxiliary(CLAIM35_N, CLAIM35_EPS, v, np.r_[w, w[:1]]).pmf(pair[0])
        # the learner is ε_A-DP with ε_A ∈ (0, 1] (Claim 3.5 takes a 1-DP learner; Lemma 3.4's
        # A_Auxiliary runs it): ε_A = 0 is no DP parameter and is refused
        with pytest.raises(InvalidArgument, match=r"^learner_epsilon=0\.0 must be > 0"):
            Auxiliary(CLAIM35_N, CLAIM35_EPS, v, w, learner_epsilon=0.0)
        u, up, j = tightest[1]
        b = claim35_bound(parts[_key(u)], parts[_key(up)], np.delete(np.r_[u, v], j, 0)[:, 0])
        lo, hi = 1.0, 2.0                  # budget factor on (ε, ε_A) at the tightest pair
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            e = privacy_loss(*(claim35_pmf(claim35_parts(x, v, w, CLAIM35_EPS * mid,
                                                         CLAIM35_EPS_A * mid))
                               for x in (u, up))).epsilon
            lo, hi = (lo, mid) if e > b * (1 + TOL) + TOL else (mid, hi)
        dp_sensitivity(loss=tightest[0] * b, bound=b, detectable_overspend=hi,
                       basis="exact pmf / the instance-exact bound of Claim 3.5's proof "
                             "structure (claim35_bound), at the tightest of the 990 U-pairs; "
                             "overspend by bisection on the factor of (ε, ε_A) there "
                             "(independent pmf)")
    assert r.violation or worst[0] <= CLAIM35_EPSILON + TOL
    # class: the learner's interval class (a collapse changes the output support)
    assert r.violation or support_ok, "class: output support is not {interval ⊕ h̄}"
    # tight: every pair within the instance-exact bound of the proof's structure
    assert r.violation or not over, f"tight: {len(over)} pairs over B(U1, U2), e.g. {over[:3]}"


@pytest.mark.claim(paper="000", ref="Claim 3.5", kind="privacy")
@pytest.mark.slow
def test_auxiliary_worst_public_sets(dp_record: Any) -> None:
    """Claim 3.5 over public sets: every V (55 multisets of 2 labelled points on {0..4}) × 8 W
    (|W| = 36: 6 random, seed 1; W realizable by h_2, 7 points per x plus one at x = 0; 4 of
    each labelled point, truncated), every U-pair (990): exact loss ≤ 2 + 2 ln 2 and ≤ the
    instance-exact bound B(U1, U2), support = {interval ⊕ h̄}. The largest worst loss (1.2142,
    W realizable, V at x = 1, 3) fixes the default test's (V, W)."""
    rng = np.random.default_rng(1)
    ws = [np.stack([rng.integers(0, 5, 36), rng.integers(0, 2, 36)], 1) for _ in range(6)]
    ws += [CLAIM35_W, np.array([c for c in _CELLS for _ in range(4)][:36])]
    best = (-1.0, None)
    for wi, w in enumerate(ws):
        for v in map(np.array, itertools.combinations_with_replacement(_CELLS, 2)):
            worst, _, over, support_ok, _ = _claim35_scan(Auxiliary(5, 0.1, v, w), v, w)
            assert worst[0] <= CLAIM35_EPSILON + TOL and not over and support_ok, (wi, v)
            best = max(best, (worst[0], (wi, v.tolist())), key=lambda r: r[0])
    dp_record("auxiliary_sweep", {"worst_epsilon": best[0], "at": best[1]})
    assert best[0] == pytest.approx(1.2142017144977837, abs=1e-9), best


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "naive_score", marks=pytest.mark.mutant("naive_score"))])
def test_swap_case_score_sensitivity(variant: str) -> None:
    """Proof of Lemma 3.1, case 1 ∈ I: T1 = T̂ + x1, W1 = Ŵ + (x_i, y_i) against
    T2′ = T̂ + x_i, W2′ = Ŵ + (x1′, y1′); for h1, h2′ agreeing on T̂_X,
    |q(T1∘W1, h1) − q(T2′∘W2′, h2′)| ≤ 1/|T| + 1/|W| (300 random instances, N = 8,
    |T| = 3, |W| = 9). Mutant B7 naive_score (err_S of the representative) breaks it."""
    from algorithms.realizable_to_agnostic.agnostic import _relabel_logits, relabel_scores
    from algorithms.realizable_to_agnostic.core import counts, prefix, x_counts
    rng = np.random.default_rng(71)
    for i in range(300):
        t_hat, w_hat = _rand(rng, 2, 8), _rand(rng, 8, 8)
        r1, ri, r1p = _rand(rng, 1, 8), _rand(rng, 1, 8), _rand(rng, 1, 8)
        t1, w1 = np.r_[t_hat, r1], np.r_[w_hat, ri]
        t2, w2 = np.r_[t_hat, ri], np.r_[w_hat, r1p]
        q = []
        for t, w in ((t1, w1), (t2, w2)):
            ct, cw = counts(t, 8)[None], counts(w, 8)[None]
            q.append(relabel_scores(ct, cw, np.array([3]), np.array([9]), ct + cw,
                                    bug=variant)[0])
            if i < 20:   # ... and it is the score Algorithm 1 samples with: −ε|W|q/2, ε = 1/4
                logit = _relabel_logits(ct, cw, np.array([3]), np.array([9]), ct + cw,
                                        prefix(x_counts(ct)), 0.25, variant)[0]
                assert np.allclose(logit, -0.25 * 9 * q[-1] / 2, rtol=1e-12, atol=0)
        ph = prefix(np.bincount(t_hat[:, 0], minlength=8))
        agree = ph[:, None] == ph[None, :]            # h_a, h_b agree on T̂_X
        gap = np.abs(q[0][:, None] - q[1][None, :])[agree].max()
        assert gap <= 1 / 3 + 1 / 9 + 1e-12
