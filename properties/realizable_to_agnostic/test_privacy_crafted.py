"""Seed 000 (Li–Wang–Ye): Lemma 3.1 on crafted neighbours that make the subtle bugs of notes §7
(B4, B6, B11, B16) visible in exact figures.

The random-pair searches of ``test_privacy.py`` stay far below ε for these variants (B6 fixed-I
max 0.262 < 1/3, B11 label-only max 0.126 < 1/6), because the EM base learner on a two-point
``T^h`` barely reveals ``h``. Here every point of ``T`` sits at one x, so ``Π_C(T_X)`` has two
labelings and the base learner's output reveals ``h`` with odds ``e^{|T|/2}``; the changed record
then moves the two labelings' scores in opposite directions (the worst case of Lemma 2.9).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithms 1–2, Lemma 2.9, Lemma 3.1 and its proof;
notes shared/research/seed-000.md §4.1 (P2, P3, P5), §6.5, §7 (B4, B6, B11, B16).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic import Agnostic
from dpcheck import PureDP, Replace
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

TOL = 1e-9


def _one_point(n: int, k: int, ones: int) -> np.ndarray:
    """``k`` records ``(1, 0)`` (they form ``T`` when ``I`` = the first ``k`` indices), then
    ``W`` at the same x with ``ones`` labels 1 (the last record is the one that changes)."""
    return np.array([[1, 0]] * k + [[1, 1]] * ones + [[1, 0]] * (n - k - ones))


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in ("em_no_half", "em_delta_n",
                                                           "em_scale_1_25")])
def test_fixed_t_crafted_w_neighbours(variant: str, dp_record: Any,
                                      dp_sensitivity: Any) -> None:
    """Proof of Lemma 3.1, case 1 ∉ I (notes P2): with ``I`` fixed, ``P[output | I]`` is ε-DP in
    ``W``. Crafted pair on {0, 1, 2}: n = 60, ε = 1/3, ``T`` = 20 records at x = 1, ``W`` = 40
    records at x = 1 with 9 labels 1; the neighbour flips one label-0 ``W`` record to 1, which
    lowers one labeling's best-f error by 1/|W| and raises the other's. Exact loss 0.3230 ≤ 1/3
    (the EM's ε nearly attained). B6 em_no_half (exp(−ε|W|q), i.e. Δ = 1/(2|W|)): 0.6339;
    em_delta_n (Δ = 1/n, i.e. ε·n/|W| = 1.5ε): 0.4930."""
    eps, n, k = 1 / 3, 60, 20
    s = _one_point(n, k, 9)
    sp = s.copy()
    sp[-1] = [1, 1]
    mech = Agnostic(3, eps, bug=variant)
    exact = privacy_loss(mech.conditional(s, range(k)), mech.conditional(sp, range(k))).epsilon
    dp_record("fixed_t_crafted", {"exact_epsilon": exact, "claim": eps})
    if variant == "reference":
        dp_sensitivity(loss=exact, bound=eps, detectable_overspend=None,
                       basis="exact conditional pmf (I fixed) on the crafted W-neighbours / ε")
    assert exact <= eps + TOL


def _label_pair() -> tuple[np.ndarray, np.ndarray]:
    """n = 36 records at x = 2: index 0 is (2, 0), then 9 × (2, 0) and 26 × (2, 1); the neighbour
    flips y_0 (found by exhaustive search over the label-0 count, notes B11)."""
    s = np.array([[2, 0]] * 10 + [[2, 1]] * 26)
    sp = s.copy()
    sp[0, 1] = 1
    return s, sp


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "uses_t_labels", marks=pytest.mark.mutant("uses_t_labels"))])
def test_label_only_crafted(variant: str, dp_audit: Any, dp_record: Any) -> None:
    """Derived (notes P3): label-only neighbours give exactly (ε, 0)-DP end to end, because
    Algorithm 1 reads only ``T_X``: (a) given ``I ∋ 0`` the output law is *identical* after the
    flip of ``y_0``; (b) the exact end-to-end loss on the crafted pair (n = 36, ε = 1/3, k = 12,
    domain {0, 1, 2}) is 0.1899 ≤ 1/3, and the sampler is audited at PureDP(1/3). B11
    uses_t_labels (score + err_T(h) with T's own labels): (a) fails, and (b) gives 0.4223."""
    eps, k = 1 / 3, 12
    s, sp = _label_pair()
    mech = Agnostic(3, eps, bug=variant)
    i_set = [0] + list(range(20, 20 + k - 1))
    a, b = mech.conditional(s, i_set), mech.conditional(sp, i_set)
    gap = max(abs(a.get(o, 0.0) - b.get(o, 0.0)) for o in set(a) | set(b))
    exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
    r = dp_audit(mech, s, sp, PureDP(eps), samples=200_000, relation=Replace())
    dp_record("label_only_crafted", {"conditional_gap": gap, "exact_epsilon": exact,
                                     "claim": eps, "epsilon_lower": r.epsilon_lower})
    assert r.violation or gap <= 1e-12      # a caught audit ends the mutant case here
    assert r.violation or exact <= eps + TOL


GRID = [(n, e) for e in (0.01, 1 / 30, 0.05, 0.1, 1 / 6, 0.2, 0.25, 1 / 3)
        for n in (7, 12, 25, 50, 99, 100, 101, 1000, 1001)]


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "floor_k", marks=pytest.mark.mutant("floor_k"))])
def test_subset_size_condition(variant: str, dp_record: Any) -> None:
    """Proof of Lemma 3.1 (and Claim 3.5): ``|T| = ⌈εn⌉ ≥ εn`` gives ``|W|/|T| ≤ (1 − ε)/ε``,
    so a 1/|T| score move changes an EM weight by at most ``e^{ε|W|/(2|T|)} ≤ e^{1/2}``; the
    lemma assumes ``εn ≥ 1``, and outside that range the implementation must refuse
    (InvalidArgument) rather than run. Checked on the 61 grid points (n, ε) with εn ≥ 1 and on
    (n, ε) = (50, 0.01). B16 floor_k (⌊εn⌋): k = 1 at (n, ε) = (50, 1/30) (ε|W|/(2|T|) = 0.817)
    and k = 0 (empty T) at εn < 1."""
    worst, refused = 0.0, True
    for n, eps in GRID:
        if eps * n < 1:
            continue
        k, w = Agnostic(4, eps, bug=variant).sizes(n)
        worst = max(worst, eps * w / (2 * k))
        assert k + w == n and k >= eps * n - 1e-9
    try:
        Agnostic(4, 0.01, bug=variant).sizes(50)
        refused = False
    except InvalidArgument:
        pass
    dp_record("subset_size", {"max_weight_exponent": worst, "refuses_eps_n_below_1": refused})
    assert worst <= 0.5 + 1e-12
    assert refused


HALF_N = 100


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "half_sample", marks=pytest.mark.mutant("half_sample"))])
def test_subsample_fraction(variant: str, dp_audit: Any, dp_record: Any) -> None:
    """Lemma 3.1 end to end (derived bound ln(e^ε + 4e²k/(n−k)) = 0.2690 at n = 100, ε = 0.01,
    k = 1) with the adversarial 1-DP RR learner on 1[x* ∈ T^h]; exact pmf over the count tables
    of ``T`` (the C(100, 50) index sets of B4 are not enumerable). Reference 0.01704 =
    ln(1 + (k/n)(e − 1)); B4 half_sample (|T| = n/2): ln((e + 1)/2) = 0.6201."""
    eps = 0.01
    s = np.tile([3, 1], (HALF_N, 1))
    s[0] = [0, 1]
    s[1: HALF_N // 2, 1] = 0
    sp = s.copy()
    sp[0] = [3, 0]
    bound = math.log(math.exp(eps) + 4 * math.e ** 2 * 1 / (HALF_N - 1))
    mech = Agnostic(6, eps, learner="rr", x_star=0, bug=variant)
    exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
    if variant == "reference":
        # the closed form above (T = one uniform record; RR reads only whether it is x*) ...
        assert exact == pytest.approx(math.log1p((math.e - 1) / HALF_N), abs=1e-12)
        # ... so the law depends on x*'s presence in T, not on its label: flipping the label
        # of the x* record leaves the output law unchanged
        s0 = s.copy()
        s0[0] = [0, 0]
        p, p0 = mech.pmf(s), mech.pmf(s0)
        assert p.keys() == p0.keys() and all(abs(p[c] - p0[c]) <= 1e-12 for c in p)
    r = dp_audit(mech, s, sp, PureDP(bound), samples=200_000, relation=Replace())
    dp_record("subsample_fraction", {"exact_epsilon": exact, "bound": bound,
                                     "epsilon_lower": r.epsilon_lower})
    assert r.violation or exact <= bound + TOL
