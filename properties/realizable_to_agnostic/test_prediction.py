"""Seed 000 (Li–Wang–Ye) §4: private prediction — Procedure P (Lemma 4.1, reconstructed
aggregator) and the agnostic predictor ``A_AgnPred`` of Theorem 4.2 (Theorem 1.2 restated), on
the threshold stand-in with exact pmfs.

Constants: Theorem 4.2 says "ε-DP" up to the constant factors of Lemma 3.1; the per-query bound
asserted is the one *derived* from Lemma 3.1's proof with ``ε_A = 1``, ``δ_A = 0`` (Procedure P
at privacy 1 is 1-DP in ``T^h``): ``ln(e^ε + 4e²k/(n − k))`` (notes §4.1 P9). Label-only
neighbours give exactly ``(ε, 0)`` (notes P3). Utility sizes: derived explicit constants, see
:func:`derived_sizes`. Neighbours: substitution (dpcheck.Replace).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 3.1, Claim 3.2, Lemma 4.1, Theorem 4.2, Definition 2.8;
notes shared/research/seed-000.md §3.6, §3.7, §4.1 P3/P9, §4.2 U6/U7, §7 B2/B13.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic_prediction import (
    AgnosticPrediction,
    ProcedureP,
)
from algorithms.realizable_to_agnostic.bounds import lemma31_epsilon, prediction_rounds
from algorithms.realizable_to_agnostic.buggy import ReleaseVotesP, ReleaseVotesPrediction
from algorithms.realizable_to_agnostic.testbeds import (
    UTILITY_TRIALS,
    detectable_inflation,
    utility_law,
)
from dpcheck import PureDP, Replace
from dpcheck.core.sampler_check import check_sampler
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

TOL = 1e-9


def _data(cells: list[tuple[int, int, int]], last: tuple[int, int]) -> np.ndarray:
    """``count`` copies of each ``(x, y)``, then the changed record ``last`` (index ``n−1``)."""
    rows = [np.tile([x, y], (c, 1)) for x, y, c in cells]
    return np.concatenate(rows + [np.array([last])])


def _procedure_p(variant: str, *args: Any, **kwargs: Any) -> ProcedureP:
    """Procedure P or its mutant ``variant`` (``release_votes``: the :mod:`buggy` subclass)."""
    if variant == "release_votes":
        return ReleaseVotesP(*args, **kwargs)
    return ProcedureP(*args, bug=variant, **kwargs)


def _prediction(variant: str, *args: Any, **kwargs: Any) -> AgnosticPrediction:
    """``A_AgnPred`` or its mutant ``variant`` (``release_votes``: the :mod:`buggy` subclass)."""
    if variant == "release_votes":
        return ReleaseVotesPrediction(*args, **kwargs)
    return AgnosticPrediction(*args, bug=variant, **kwargs)


# ----------------------------------------------------------------------------- Lemma 4.1

#: Procedure P at privacy 1 with r = 9 portions of n' = 1 point (k = 9), domain {0..4},
#: query 0. Pair A: the marked count m (label-0 points at >= query) goes 0 -> 1, so the vote
#: count goes 9 -> 8 (the extreme of the aggregator's loss). Pair B: 5 vs 4 label-0 points,
#: the vote count crosses r/2 (a tie region for a deterministic majority).
P_PAIRS = [(_data([(4, 1, 8)], (4, 1)), _data([(4, 1, 8)], (0, 0))),
           (_data([(0, 0, 4), (4, 1, 4)], (0, 0)), _data([(0, 0, 4), (4, 1, 4)], (4, 1)))]
P_MUTANTS = ["no_half", "scale_1_25", "release_votes", "bagging", "majority", "repeat_query"]


@pytest.mark.claim(paper="000", ref="Lemma 4.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in P_MUTANTS])
def test_procedure_p_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                dp_sensitivity: Any) -> None:
    """Lemma 4.1's privacy: the aggregator answering one query is ε-DP when one record of its
    input (hence one portion, one vote) changes — here ε = 1, the value Theorem 4.2 uses.
    Exact ε on two realizable pairs; the larger-loss pair (chosen exactly) is audited at
    PureDP(1). Mutants (B2, B13): exp(u) without /2, releasing the vote count, bootstrap
    (overlapping) portions, deterministic majority, ten answers from one run."""
    eps = 1.0
    losses = []
    for s, sp in P_PAIRS:
        mech = _procedure_p(variant, 5, 9, 0, epsilon=eps)
        losses.append(privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon)
    worst = int(np.argmax(losses))
    mech = _procedure_p(variant, 5, 9, 0, epsilon=eps)
    r = dp_audit(mech, *P_PAIRS[worst], PureDP(eps), samples=200_000, relation=Replace())
    dp_record("procedure_p_privacy", {"variant": variant, "exact_epsilon": losses,
                                      "claim": eps, "epsilon_lower": r.epsilon_lower})
    if variant == "reference":
        lo, hi = 1.0, 4.0           # aggregator budget factor at which the worst pair exceeds ε
        s, sp = P_PAIRS[worst]
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            scaled = ProcedureP(5, 9, 0, epsilon=eps * mid)
            lo, hi = ((mid, hi) if privacy_loss(scaled.pmf(s), scaled.pmf(sp)).epsilon
                      <= eps + TOL else (lo, mid))
        dp_sensitivity(loss=max(losses), bound=eps, detectable_overspend=hi,
                       basis="exact pmf, worst of the two realizable pairs / ε; overspend by "
                             "bisection on the aggregator's budget at that pair")
    assert r.violation or max(losses) <= eps + TOL


#: Two inputs T^h with no label-0 point (all labels 1: the smallest consistent threshold of every
#: portion is 0, so every portion votes 1 at query 0 and u = r = 9). Lemma 4.1's Procedure P
#: takes any realizable T^h, this one included; points at x = 0 are where a relabel threshold
#: other than 0 would mark label-1 points as label 0.
P_ALL_ONE = [_data([(0, 1, 4), (2, 1, 4)], (4, 1)), _data([(0, 1, 8)], (0, 1))]


@pytest.mark.claim(paper="000", ref="Lemma 4.1", kind="privacy")
def test_procedure_p_sampler_without_label_zero(dp_rng: Any) -> None:
    """Lemma 4.1's Procedure P on a T^h with no label-0 point: the exact law is the bit with
    P[1] = σ(εr/2) (every one of the r = 9 portions is consistent with threshold 0, so u = r),
    and the sampler must draw from it. Exact pmf checked against its closed form; 2 000
    outputs per input against the pmf (Pearson χ², Bonferroni over the two inputs, flagged at
    SAMPLER_ALPHA = 1e-3)."""
    eps, r = 1.0, 9
    mech = ProcedureP(5, r, 0, epsilon=eps)
    p1 = 1.0 / (1.0 + math.exp(-eps * r / 2))
    for s in P_ALL_ONE:
        law = mech.pmf(s)
        assert law[1] == pytest.approx(p1, abs=TOL) and law[0] == pytest.approx(1 - p1, abs=TOL)
    s, sp = P_ALL_ONE
    check = check_sampler(mech.sample(s, 2_000, dp_rng), mech.pmf(s),
                          mech.sample(sp, 2_000, dp_rng), mech.pmf(sp))
    assert not check.mismatch, check.describe()


# ----------------------------------------------------------------------------- Theorem 4.2

#: n = 40, ε = 1/3 (k = 14, |W| = 26), α = 1/2 (r = ⌈6 ln 8⌉ = 13 portions of one point, one
#: dropped), domain {0..4}. Derived bound ln(e^{1/3} + 4e²·14/26) = 2.851. Pairs found by an
#: exact search over 1-3-type datasets, changed record last (the largest mutant losses):
#: (a) 39 × (2,0), x* = (4,0) vs (2,0), query 4; (b) 11 × (0,1), 6 × (4,0), 22 × (0,0),
#: (4,0) vs (0,1), query 3; (c) 39 × (2,1), (4,0) vs (1,1), query 1.
E_PAIRS = [(_data([(2, 0, 39)], (4, 0)), _data([(2, 0, 39)], (2, 0)), 4),
           (_data([(0, 1, 11), (4, 0, 6), (0, 0, 22)], (4, 0)),
            _data([(0, 1, 11), (4, 0, 6), (0, 0, 22)], (0, 1)), 3),
           (_data([(2, 1, 39)], (4, 0)), _data([(2, 1, 39)], (1, 1)), 1)]
#: Label-only neighbours (notes P3): the last record's label flipped 0 -> 1; every query. Found by
#: an exact search (600 random 1-3-type datasets): the largest losses of the reference (0.204)
#: and of the relabeling mutants uses_t_labels (0.386) and em_eps_one (0.587).
LABEL_PAIRS = [(_data([(1, 1, 39)], (1, 0)), _data([(1, 1, 39)], (1, 1))),
               (_data([(4, 0, 15), (4, 1, 3), (2, 0, 21)], (4, 0)),
                _data([(4, 0, 15), (4, 1, 3), (2, 0, 21)], (4, 1))),
               (_data([(3, 1, 2), (1, 1, 10), (4, 0, 27)], (1, 0)),
                _data([(3, 1, 2), (1, 1, 10), (4, 0, 27)], (1, 1)))]
E_MUTANTS = ["release_votes", "bagging", "majority", "repeat_query", "uses_t_labels", "em_eps_one"]


@pytest.mark.claim(paper="000", ref="Theorem 4.2", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in E_MUTANTS])
def test_agnostic_prediction_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                        dp_sensitivity: Any) -> None:
    """Theorem 4.2's privacy per query (Definition 2.8): A_AgnPred(S, x) is
    ln(e^ε + 4e²k/(n−k))-DP (derived from Lemma 3.1 with ε_A = 1, δ_A = 0) — exact ε on three
    substitution pairs, the largest (chosen exactly) audited, and on 30 random pairs; and exactly (ε, 0)-DP for
    label-only neighbours at every query (exact). Mutants (B2, B13) as for Lemma 4.1, caught by
    the substitution pairs; relabeling bugs B11 (uses_t_labels) and B5 (em_eps_one), caught by
    the label-only pairs. exp(u) without /2 is not caught here (its loss stays below the loose
    derived bound; see test_procedure_p_is_private)."""
    n, eps, alpha, dom = 40, 1 / 3, 0.5, 5
    k = math.ceil(eps * n)
    bound = lemma31_epsilon(n, eps, k)
    losses, sweep = [], 0.0
    for s, sp, q in E_PAIRS:
        mech = _prediction(variant, dom, eps, alpha, query=q)
        losses.append(privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon)
    rng = np.random.default_rng(20)                  # exact sweep: 30 random 1-3-type pairs
    for _ in range(30):
        types = np.stack([rng.integers(0, dom, 3), rng.integers(0, 2, 3)], 1)
        cnt = rng.multinomial(n - 1, rng.dirichlet(np.ones(3)))
        s = np.concatenate([np.repeat(types, cnt, 0), [[rng.integers(dom), rng.integers(2)]]])
        sp = s.copy()
        sp[-1] = [rng.integers(dom), rng.integers(2)]
        mech = _prediction(variant, dom, eps, alpha, query=int(rng.integers(dom)))
        sweep = max(sweep, privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon)
    label_only = []
    for s, sp in LABEL_PAIRS:
        per_query = []
        for q in range(dom):
            mech = _prediction(variant, dom, eps, alpha, query=q)
            per_query.append(privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon)
        label_only.append(max(per_query))
    worst = int(np.argmax(losses))
    s, sp, q = E_PAIRS[worst]
    mech = _prediction(variant, dom, eps, alpha, query=q)
    r = dp_audit(mech, s, sp, PureDP(bound), samples=200_000, relation=Replace())
    dp_record("agnostic_prediction_privacy", {
        "variant": variant, "n": n, "k": k, "r": prediction_rounds(alpha), "bound": bound,
        "exact_epsilon": losses, "random_sweep_max": sweep, "label_only_exact": label_only,
        "epsilon_lower": r.epsilon_lower})
    if variant == "reference":
        dp_sensitivity(loss=max(max(losses), sweep), bound=bound, detectable_overspend=None,
                       basis="exact pmf, worst substitution pair / the per-query bound derived "
                             "from Lemma 3.1's proof (ln(e^ε+4e²k/(n−k))); label-only pairs: "
                             f"{max(label_only):.3f} of ε = {eps:.3f}")
        # Procedure P needs |T| = k ≥ r (at least one point in each of the r portions):
        # n = 30 gives k = 10 < r = 13, refused with the sizes in the message
        with pytest.raises(InvalidArgument, match=r"^\|T\|=k=10 must be >= r=13 portions"):
            AgnosticPrediction(dom, eps, alpha).sizes(30)
    # a mutant case whose audit already refuted the claim ends here (caught statistically)
    assert r.violation or max(losses) <= bound + TOL
    assert r.violation or sweep <= bound + TOL
    assert r.violation or max(label_only) <= eps + TOL


# ----------------------------------------------------------------------------- Theorem 4.2 utility

def derived_sizes(alpha: float, beta: float, epsilon: float, domain: int) -> dict[str, int]:
    """Explicit sizes for Theorem 4.2's proof on thresholds over ``{0..N−1}`` with uniform
    ``D_X`` (ours: the paper's constants ``C, C1, C2`` are unspecified; derived from its proof).

    * ``r = ⌈6 ln(4/α)⌉`` (Lemma 4.1 at privacy 1).
    * Portion size ``n′`` (replaces Lemma 2.5's ``C(VC ln(1/α) + ln(r/β))/α``): two thresholds
      consistent on a portion differ on a window free of portion points, so ``dis_D > α/4`` for
      some consistent pair iff a window of ``L = ⌊αN/4⌋ + 1`` points misses the portion; union
      bound ``(N − L + 1)(1 − L/N)^{n′} ≤ β/r``. With all ``r`` portions good, Lemma 4.1 gives
      ``err_{D^h} ≤ α`` (probability ``≥ 1 − β``).
    * Claim 3.2 (``err_D(h) ≤ inf + α`` w.p. ``≥ 1 − β``) through the proof's three events at
      ``β/3`` each (notes §4.2 U2): E1 ``sup_c |err_W − err_D| ≤ α/9`` by Hoeffding and a union
      bound over the ``N + 1`` thresholds: ``|W| ≥ 81 ln(6(N+1)/β)/(2α²)``; E2 (Lemma 2.9 with
      ``Δ = 1/|W|``, ``|H| ≤ N + 1``): ``|W| ≥ 18 ln(3(N+1)/β)/(εα)``; E3 (``dis_T ≤ α/3 ⇒
      dis_D ≤ 2α/3``) by the Chernoff bound ``exp(−|T| dis_D/8)`` over the ``N(N+1)/2`` pairs:
      ``|T| ≥ 12 ln(3N(N+1)/(2β))/α``. The paper's ``|W| ≥ C2(…)/α² + |T|/(6ε)`` is kept as a
      sum.
    * ``n`` = the least size with ``k = ⌈εn⌉ ≥ max(r n′, E3)`` and ``n − k ≥ max(E1, E2) +
      k/(6ε)``. Conclusion (proof, union bound): ``err_D ≤ inf_c err_D(c) + 2α`` w.p. ``≥ 1 − 2β``.
    """
    r = prediction_rounds(alpha)
    big_l = math.floor(alpha * domain / 4) + 1
    n_port = math.ceil(math.log(r * (domain - big_l + 1) / beta) / -math.log1p(-big_l / domain))
    t_req = max(r * n_port, math.ceil(12 * math.log(3 * domain * (domain + 1) / (2 * beta)) / alpha))
    w_c2 = max(81 * math.log(6 * (domain + 1) / beta) / (2 * alpha ** 2),
               18 * math.log(3 * (domain + 1) / beta) / (epsilon * alpha))
    n = math.ceil(t_req / epsilon)
    while True:
        k = math.ceil(epsilon * n - 1e-9)
        if k >= t_req and n - k >= w_c2 + k / (6 * epsilon):
            break
        n += max(1, math.ceil((w_c2 + k / (6 * epsilon) - (n - k)) / 2))
    return {"r": r, "n_portion": n_port, "T_required": t_req, "W_C2_term": math.ceil(w_c2),
            "n": n, "k": k}


def _noisy_threshold(domain: int, t_star: int, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Cell probabilities ``(N, 2)`` of ``D`` (uniform ``D_X``, ``P[y = 1 | x] = 1 − η`` iff
    ``x ≥ t*``) and ``p(x) = P[y = 1 | x]``."""
    p = np.where(np.arange(domain) >= t_star, 1 - eta, eta)
    return np.stack([(1 - p) / domain, p / domain], 1), p


def _excess_trial(mech: AgnosticPrediction, n: int, cells: np.ndarray, p: np.ndarray) -> Any:
    """``trial(size, rng)``: excess error ``err_D(A(S, ·) | run) − inf_c err_D(c)`` of one run
    (``I``, ``h``, partition) per fresh ``S ~ Dⁿ``, the aggregator coin integrated exactly."""
    dom = p.size
    x = np.arange(dom)
    opt = min(float(np.mean(np.where(x >= t, 1 - p, p))) for t in range(dom + 1))

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        sc = rng.multinomial(n, cells.reshape(-1), size=size).reshape(size, dom, 2)
        p1 = mech.answer_probabilities(sc, rng)                      # (size, N)
        err = np.mean(p1 * (1 - p) + (1 - p1) * p, axis=1)
        return err - opt

    return trial


@pytest.mark.claim(paper="000", ref="Theorem 4.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference",
                                     pytest.param("sign_error",
                                                  marks=pytest.mark.mutant("sign_error"))])
def test_agnostic_prediction_utility(variant: str, dp_accuracy: Any, dp_record: Any,
                                     dp_sensitivity: Any) -> None:
    """Theorem 4.2's accuracy (its proof's form): with probability ≥ 1 − 2β over S and the
    run's coins, err_D(A_AgnPred(S, ·)) ≤ inf_c err_D(c) + 2α, at the explicit sizes of
    :func:`derived_sizes` (α = β = 0.1, ε = 0.1, N = 8: r = 23, n′ = 57, n = 34 748, k = 3475). D: noisy
    threshold t* = 4, η = 0.2. err_D is exact per run. Decision (notes §6.9): the proof
    conditions on I and h, so the run (I, h, partition) is fixed and only the aggregator coin is
    integrated; Definition 2.8's error also averages the run's coins, which then gives
    ≤ inf + 2α + 2β. The sizes are loose (measured excess ~6e-6), so only gross bugs can fail:
    mutant sign_error (Algorithm 1 maximises its score) is caught; r/3 portions is not (adds
    ~0.01 < 2α). The trend in n is recorded (reference only)."""
    alpha, beta, eps, dom = 0.1, 0.1, 0.1, 8
    sizes = derived_sizes(alpha, beta, eps, dom)
    cells, p = _noisy_threshold(dom, 4, 0.2)
    mech = AgnosticPrediction(dom, eps, alpha, bug=variant)
    trial = _excess_trial(mech, sizes["n"], cells, p)
    r = dp_accuracy(trial, alpha=2 * alpha, beta=2 * beta, trials=400)
    rec: dict[str, Any] = {"variant": variant, **sizes, "failure_rate": r.failure_rate,
                           "failure_upper": r.failure_upper}
    if variant == "reference":
        rng = np.random.default_rng(7)
        trend = {}
        for frac in (1 / 64, 1 / 16, 1 / 4, 1):
            n = int(sizes["n"] * frac)
            ex = _excess_trial(mech, n, cells, p)(200, rng)
            trend[n] = {"mean_excess": float(ex.mean()), "q90_excess": float(np.quantile(ex, 0.9))}
        rec["trend"] = trend
    dp_record("agnostic_prediction_utility", rec)
    if variant == "reference":
        dp_sensitivity(loss=max(r.failure_rate, 1e-9), bound=2 * beta, detectable_overspend=None,
                       basis="measured failure rate over 400 trials / 2β at the derived sizes "
                             "(the proof's constants are ~4x loose: slack ~0); the calibrated "
                             "test_agnostic_prediction_calibrated carries the power")


#: (distribution, ε, n) at α = 0.05 (2α = 0.1), β = 0.1 (2β = 0.2): sizes chosen by measurement
#: (600 exploratory runs, seed 1, not the test's streams) so that the reference fails 3–11 %
#: against 2β = 0.2: an ε sweep at fixed |T| = 100, the heavy point and the realizable case
#: (distributions of testbeds.utility_law).
PRED_CONFIGS = [
    ("uniform", 0.1, 1000),
    ("uniform", 0.05, 2000),
    ("uniform", 0.02, 5000),
    ("heavy", 0.1, 2000),
    ("realizable", 0.1, 2000),
]
PRED_MUTANTS = {"sign_error": (0,), "em_delta_t": (0, 1, 2), "threshold_off_by_one": (3, 4)}
PRED_CASES = [pytest.param(c, "reference", id=f"{c[0]}-eps{c[1]}-n{c[2]}-reference")
              for c in PRED_CONFIGS] + [
    pytest.param(PRED_CONFIGS[i], v, marks=pytest.mark.mutant(v),
                 id=f"{PRED_CONFIGS[i][0]}-eps{PRED_CONFIGS[i][1]}-n{PRED_CONFIGS[i][2]}-{v}")
    for v, idx in PRED_MUTANTS.items() for i in idx]


@pytest.mark.claim(paper="000", ref="Theorem 4.2", kind="utility")
@pytest.mark.parametrize("config, variant", PRED_CASES)
def test_agnostic_prediction_calibrated(config: tuple[str, float, int], variant: str,
                                        dp_accuracy: Any, dp_record: Any,
                                        dp_sensitivity: Any) -> None:
    """Theorem 4.2's accuracy in the proof's form (err ≤ inf + 2α w.p. ≥ 1 − 2β, aggregator
    coin integrated exactly) at sizes chosen by measurement (issue 27: the derived sizes are
    ~4x loose, so subtle bugs pass there), on the distributions and ε of
    :data:`PRED_CONFIGS`, α = 0.05, β = 0.1, 1400 trials (power ≥ 0.9 at 1.5·2β). Mutants:
    sign_error; subtle: em_delta_t (Δ = 1/|T| in Algorithm 1: the old 1/(αε²) cost, the ε
    sweep), threshold_off_by_one (Algorithm 1 scores h_t as 1[x > t]: heavy point and
    realizable case)."""
    name, eps, n = config
    alpha, beta = 0.05, 0.1
    cell, err = utility_law(name)
    px, p = cell.sum(1), cell[:, 1] / cell.sum(1)
    opt = float(err.min())
    mech = AgnosticPrediction(8, eps, alpha, bug=variant)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        sc = rng.multinomial(n, cell.reshape(-1), size=size).reshape(size, 8, 2)
        p1 = mech.answer_probabilities(sc, rng)
        return np.sum(px * (p1 * (1 - p) + (1 - p1) * p), axis=1) - opt

    r = dp_accuracy(trial, alpha=2 * alpha, beta=2 * beta, trials=UTILITY_TRIALS)
    dp_record("agnostic_prediction_calibrated", {"distribution": name, "epsilon": eps, "n": n,
                                                 "failure_rate": r.failure_rate})
    if variant == "reference":
        dp_sensitivity(loss=max(r.failure_rate, 1e-9), bound=2 * beta,
                       detectable_overspend=detectable_inflation(UTILITY_TRIALS, 2 * beta,
                                                                 r.confidence),
                       basis=f"measured failure rate over {UTILITY_TRIALS} trials / 2β; "
                             "detectable inflation from the exact binomial power at this "
                             "call's α")
