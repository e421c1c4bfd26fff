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

import math
from typing import Any

import numpy as np
import pytest

from algorithms.mechanisms.selection import ExponentialMechanism
from algorithms.realizable_to_agnostic.agnostic import Agnostic
from algorithms.realizable_to_agnostic.auxiliary import Auxiliary
from algorithms.realizable_to_agnostic.bounds import CLAIM35_EPSILON, lemma31_epsilon
from algorithms.realizable_to_agnostic.testbeds import unique_record_pair
from dpcheck import PureDP, Replace
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
    S, B9 ε_A = 5 exceed it."""
    caught, worst = False, []
    for learner, eps, n, s, sp in _end_to_end_pairs():
        mech = Agnostic(6, eps, learner=learner, x_star=0, bug=variant)
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
                             "two configurations; no tighter bound derived (issue 27: open)")
    assert caught or all(e <= b + TOL for e, b in worst)


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
    mech = Agnostic(6, 1 / 6, bug=variant)
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

@pytest.mark.claim(paper="000", ref="Claim 3.5", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "hbar_from_t", marks=pytest.mark.mutant("hbar_from_t"))])
def test_auxiliary_is_private_in_u(variant: str, dp_audit: Any, dp_record: Any,
                                   dp_sensitivity: Any) -> None:
    """Claim 3.5: A_Auxiliary(U, V, W) with an improper (interval) 1-DP learner is
    (2 + 2 ln 2, 0)-DP in U for public V, W (N = 5, |U| = |V| = 2, |W| = 36, ε = 0.1, so
    |W|/|T| = (1−ε)/ε): exact loss on 30 random U-neighbours, the worst audited. Mutant: h̄
    chosen consistent with all of T^h (reads U)."""
    rng = np.random.default_rng(35)
    worst, pair, mech = -1.0, None, None
    for _ in range(30):
        v, w, u = _rand(rng, 2, 5), _rand(rng, 36, 5), _rand(rng, 2, 5)
        up = u.copy()
        up[0] = [rng.integers(0, 5), rng.integers(0, 2)]
        m = Auxiliary(5, 0.1, v, w, bug=variant)
        e = privacy_loss(m.pmf(u), m.pmf(up)).epsilon
        if e > worst:
            worst, pair, mech = e, (u, up), m
    r = dp_audit(mech, pair[0], pair[1], PureDP(CLAIM35_EPSILON), samples=200_000,
                 relation=Replace())
    dp_record("auxiliary", {"exact_epsilon": worst, "bound": CLAIM35_EPSILON,
                            "epsilon_lower": r.epsilon_lower})
    if variant == "reference":
        dp_sensitivity(loss=worst, bound=CLAIM35_EPSILON, detectable_overspend=None,
                       basis="exact pmf, worst of 30 random U-neighbours / 2 + 2 ln 2")
    assert r.violation or worst <= CLAIM35_EPSILON + TOL


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "naive_score", marks=pytest.mark.mutant("naive_score"))])
def test_swap_case_score_sensitivity(variant: str) -> None:
    """Proof of Lemma 3.1, case 1 ∈ I: T1 = T̂ + x1, W1 = Ŵ + (x_i, y_i) against
    T2′ = T̂ + x_i, W2′ = Ŵ + (x1′, y1′); for h1, h2′ agreeing on T̂_X,
    |q(T1∘W1, h1) − q(T2′∘W2′, h2′)| ≤ 1/|T| + 1/|W| (300 random instances, N = 8,
    |T| = 3, |W| = 9). Mutant B7 naive_score (err_S of the representative) breaks it."""
    from algorithms.realizable_to_agnostic.agnostic import relabel_scores
    from algorithms.realizable_to_agnostic.core import counts, prefix
    rng = np.random.default_rng(71)
    for _ in range(300):
        t_hat, w_hat = _rand(rng, 2, 8), _rand(rng, 8, 8)
        r1, ri, r1p = _rand(rng, 1, 8), _rand(rng, 1, 8), _rand(rng, 1, 8)
        t1, w1 = np.r_[t_hat, r1], np.r_[w_hat, ri]
        t2, w2 = np.r_[t_hat, ri], np.r_[w_hat, r1p]
        q = []
        for t, w in ((t1, w1), (t2, w2)):
            ct, cw = counts(t, 8)[None], counts(w, 8)[None]
            q.append(relabel_scores(ct, cw, np.array([3]), np.array([9]), ct + cw,
                                    bug=variant)[0])
        ph = prefix(np.bincount(t_hat[:, 0], minlength=8))
        agree = ph[:, None] == ph[None, :]            # h_a, h_b agree on T̂_X
        gap = np.abs(q[0][:, None] - q[1][None, :])[agree].max()
        assert gap <= 1 / 3 + 1 / 9 + 1e-12
