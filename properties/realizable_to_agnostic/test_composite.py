"""Seed 000 (Li–Wang–Ye): Theorem 3.6, the composite Algorithm 2 ∘ Procedure E(A_PAC).

Privacy: the paper states (O(ε), O(δ)); the bound asserted is the one *derived* from its proof
(bounds.theorem36_bounds: Lemma 2.13 → A_emp is (6ε_p m/k ≤ 1, e^{ε_A}(4m/k)δ_p)-DP → Lemma
3.1's constants), ``(ln(e^ε + 4e²k/(n−k)), 16e·e^{ε_A}(m/n)δ_p)``. The bound is loose (notes
§6 item 14): only the adversarial count base (exactly ε_p-DP per drawn copy of x*) brings mutants
above it. Utility: the paper's constants are O(·) only; recorded as a measured trend plus a
calibrated (not derived) (α, β) check that the sign_error mutant fails.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.12, Lemma 2.13, Lemma 3.1, Lemma 3.4, Theorem 3.6;
notes shared/research/seed-000.md §3.5, §4.1 P8, §4.2 U5, §4.3, §7 B9.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from algorithms.beside import load_beside
from algorithms.realizable_to_agnostic.bounds import lemma31_delta, theorem36_bounds
from algorithms.realizable_to_agnostic.composite import Composite
from algorithms.realizable_to_agnostic.tables import compositions
from algorithms.realizable_to_agnostic.testbeds import (
    UTILITY_TRIALS,
    detectable_inflation,
    unique_record_pair,
    utility_law,
)
from dpcheck import ApproxDP, PureDP, Replace
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

TOL = 1e-9


def _em_pair() -> tuple[np.ndarray, np.ndarray]:
    s = np.array([[4, 1]] + [[1, 0]] * 5 + [[5, 1]] * 6)
    sp = s.copy()
    sp[0] = [1, 0]
    return s, sp


#: (name, base, ε, n, m, ε_p, δ_p, pair): A is Theorem 3.6 verbatim (ε_p = ε, k = 6 = 6ε_p m);
#: B is Lemma 2.12's extreme ε_p = 1 (k = 6 = 6ε_p m), pure; C the proper EM learner. The
#: count base and the δ_p-leak count draws of the changed point x* = S[0, 0].
CONFIGS = [
    ("A_count_eps_p=eps", "count", 1 / 3, 18, 3, 1 / 3, 1e-3, unique_record_pair(18)),
    ("B_count_eps_p=1", "count", 1 / 3, 18, 1, 1.0, 0.0, unique_record_pair(18)),
    ("C_em_proper", "em", 1 / 6, 12, 2, 1 / 6, 1e-3, _em_pair()),
]
PRIVACY_MUTANTS = ["draw_n", "pac_eps5"]


@pytest.mark.claim(paper="000", ref="Theorem 3.6", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in PRIVACY_MUTANTS])
def test_composite_is_private(variant: str, dp_audit: Any, dp_record: Any,
                              dp_sensitivity: Any) -> None:
    """Theorem 3.6 with the derived constants: for each configuration the exact δ at the derived
    ε (exact ε when δ_p = 0) is ≤ the derived δ, and the sampler is audited at that bound.
    Mutants (B9): draw_n (Procedure E draws n = |S| points, 6ε_p n/k = 18 > 1; exact ε 3.46 >
    2.78 on B) and pac_eps5 (A_PAC at ε_p = 5; exact ε 8.63 > 2.78 on A)."""
    caught, worst = False, []
    for name, base, eps, n, m, eps_p, delta_p, (s, sp) in CONFIGS:
        mech = Composite(6, eps, m, pac_epsilon=eps_p, pac_delta=delta_p, base=base,
                         x_star=int(s[0, 0]), bug=variant)
        e_b, d_b = theorem36_bounds(n, eps, m, eps_p, delta_p)
        loss = privacy_loss(mech.pmf(s), mech.pmf(sp))
        d_exact = loss.delta(e_b)
        claim = ApproxDP(e_b, d_b) if d_b > 0 else PureDP(e_b)
        r = dp_audit(mech, s, sp, claim, samples=200_000, relation=Replace())
        dp_record("theorem_3_6_privacy", {
            "config": name, "n": n, "epsilon": eps, "m": m, "pac_epsilon": eps_p,
            "pac_delta": delta_p, "epsilon_bound": e_b, "delta_bound": d_b,
            "exact_epsilon": loss.epsilon, "exact_delta_at_bound": d_exact,
            "epsilon_lower": r.epsilon_lower, "delta_lower": r.delta_lower})
        caught = caught or r.violation
        worst.append((d_exact, d_b))
        if variant == "reference" and d_b == 0:            # pure config B: ε against ε
            dp_sensitivity(loss=loss.epsilon, bound=e_b, detectable_overspend=None,
                           basis=f"exact ε on config {name} / the derived ε (A, C: exact δ at "
                                 "the derived ε is < 1% of the derived δ; the tight bounds: "
                                 "test_composite_tight)")
    assert caught or all(d <= b + TOL for d, b in worst)
    # Theorem 3.6's hypotheses are enforced, the message naming the parameter and its value:
    # m ≥ 1 draws (Lemma 2.13) and a valid ε_p of A_PAC
    with pytest.raises(InvalidArgument, match=r"^m=0 must be >= 1"):
        theorem36_bounds(18, 1 / 3, 0, 1 / 3, 1e-3)
    with pytest.raises(InvalidArgument, match=r"^pac_epsilon=-1\.0 must be"):
        Composite(6, 1 / 3, 3, pac_epsilon=-1.0)
    with pytest.raises(InvalidArgument, match=r"^pac_delta=1\.5 must be in \[0, 1\)"):
        Composite(6, 1 / 3, 3, pac_epsilon=1 / 3, pac_delta=1.5)
    with pytest.raises(InvalidArgument, match=r"^epsilon\*n=0\.5 must be >= 1 \(Lemma 3\.1\)"):
        theorem36_bounds(5, 0.1, 1, 1 / 3, 1e-3)                 # Algorithm 2's |T| ≥ 1
    # Lemma 2.12/2.13's 6ε_p m/k ≤ 1 (k = ⌈εn⌉ = 6 at n = 18, ε = 1/3): m = 3 at ε_p = 1/3 is the
    # equality case (accepted), ε_p = 1/2 gives 1.5 and is refused; δ_p ∈ [0, 1) enforced by
    # the bound itself, not only by Composite
    theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1e-3)
    with pytest.raises(InvalidArgument, match=r"^6\*pac_epsilon\*m/k=1\.5 must be <= 1 "
                                              r"\(k=ceil\(epsilon\*n\)=6; Lemmas 2\.12 and 2\.13\)"):
        theorem36_bounds(18, 1 / 3, 3, 1 / 2, 1e-3)
    with pytest.raises(InvalidArgument, match=r"^pac_delta=1\.5 must be in \[0, 1\)"):
        theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1.5)
    with pytest.raises(InvalidArgument, match=r"^delta=inf must be >= 0 and finite"):
        lemma31_delta(40, 1, math.inf)                           # δ_A a finite δ
    # Lemma 3.1's derived δ = 4e(k/n)δ_A covers its whole range 1 ≤ k < n, down to n = 2
    assert lemma31_delta(2, 1, 1e-3) == pytest.approx(4 * math.e * 1e-3 / 2, rel=1e-12)





# Issue 27: with m = 1, A_PAC sees one point drawn from T^h; the supremum of the composite's
# ε over ALL ε_p-DP A_PAC at the pair is the exact linear-fractional programme of
# independent.py (law of the drawn point re-derived from Algorithms 1, 2 and Procedure E; no
# code shared with algorithms/).
_IND = load_beside(__file__, "independent.py")
_NODES = [(x, y) for x in range(6) for y in range(2)]
#: config B of CONFIGS (count base, x* = 0) and B2: the "cell_rr" base (RR on "the drawn point
#: is (3, 0)", x* = 3 the common value), which attains the supremum at this pair
TIGHT_CONFIGS = [("B_count_eps_p=1", "count", 0), ("B2_cell_rr_eps_p=1", "cell_rr", 3)]
TIGHT_MUTANTS = ["pac_eps_1_25", "draw_m_plus_1", "draw_n", "pac_eps5"]
_SUP_A: dict[str, float] = {}


def _sup_config_a() -> float:
    """Config A's supremum of δ(derived ε) over all (ε_p, δ_p)-DP A_PAC on 3-point datasets
    (``independent.sup_learner_delta``, 364 datasets; ~1 s, computed once per process)."""
    if "sup" not in _SUP_A:
        s, sp = unique_record_pair(18)
        e_b, _ = theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1e-3)
        laws = (_IND.drawn_multiset_law(d, 1 / 3, 6, 3) for d in (s, sp))
        _SUP_A["sup"] = _IND.sup_learner_delta(*laws, 3, 6, 1 / 3, 1e-3, e_b)
    return _SUP_A["sup"]


@pytest.mark.claim(paper="000", ref="Theorem 3.6", kind="privacy")
@pytest.mark.parametrize("variant", ["reference"] + [
    pytest.param(b, marks=pytest.mark.mutant(b)) for b in TIGHT_MUTANTS])
def test_composite_tight(variant: str, dp_audit: Any, dp_record: Any,
                         dp_sensitivity: Any) -> None:
    """Theorem 3.6, issue 27 "tight". (1) At config B's sizes (ε = 1/3, n = 18, k = 6, m = 1,
    ε_p = 1, δ_p = 0, unique-record pair) the exact ε of the composite ≤ the supremum over ALL
    ε_p-DP A_PAC at the pair (0.12203, ``independent.sup_learner_epsilon``): the count base
    reaches 0.747 of it, the cell_rr base attains it (slack 1.000); the derived 2.783 is 22.8x
    looser. The cell_rr sampler audited (20k samples: a pmf/sampler check; the exact assertion
    decides). (2) At config A (Theorem 3.6 verbatim: ε = ε_p = 1/3, m = 3, δ_p = 1e-3) the exact
    δ at the derived ε = 2.783 ≤ the supremum over ALL (ε_p, δ_p)-DP A_PAC (1.7790e-4,
    ``independent.sup_learner_delta``; the derived δ 0.0197 is 111x looser): count base 0.789,
    the "chain" base attains it. Mutants the derived bounds let pass: pac_eps_1_25 (A_PAC at
    1.25ε_p), draw_m_plus_1 (m + 1 draws); draw_n and pac_eps5 also far over."""
    eps, n, m, eps_p = 1 / 3, 18, 1, 1.0
    s, sp = unique_record_pair(n)
    e_b, _ = theorem36_bounds(n, eps, m, eps_p, 0.0)
    sup = _IND.sup_learner_epsilon(_IND.drawn_point_law(s, eps, 6),
                                   _IND.drawn_point_law(sp, eps, 6), _NODES, eps_p)
    assert sup <= e_b                  # Theorem 3.6's derived ε holds here for every A_PAC
    losses = {}
    for name, base, x_star in TIGHT_CONFIGS:
        mech = Composite(6, eps, m, pac_epsilon=eps_p, base=base, x_star=x_star, bug=variant)
        losses[name] = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
    mech = Composite(6, eps, m, pac_epsilon=eps_p, base="cell_rr", x_star=3, bug=variant)
    r = dp_audit(mech, s, sp, PureDP(sup), samples=20_000, relation=Replace())
    # config A: approximate DP, m = 3
    e_a, d_a = theorem36_bounds(n, 1 / 3, 3, 1 / 3, 1e-3)
    sup_a = _sup_config_a()
    assert sup_a <= d_a                # the derived δ holds here for every A_PAC
    deltas = {}
    for base in ("count", "chain"):
        mech_a = Composite(6, 1 / 3, 3, pac_epsilon=1 / 3, pac_delta=1e-3, base=base, x_star=0,
                           bug=variant)
        deltas[f"A_{base}"] = privacy_loss(mech_a.pmf(s), mech_a.pmf(sp)).delta(e_a)
    dp_record("theorem_3_6_tight", {"tight_bound": sup, "derived_epsilon": e_b, **losses,
                                    "epsilon_lower": r.epsilon_lower, "tight_delta_A": sup_a,
                                    "derived_delta_A": d_a, **deltas})
    if variant == "reference":
        # Theorem 3.6's hypothesis "A_PAC is (ε_p, δ_p)-DP" for the chain base: accepted up to
        # its boundary δ* = 1/((e^ε_p + 1) f₁(m − 1) + 1), f₁(c) = (e^{ε_p c} − 1)/(e^ε_p − 1)
        # (the complement event's condition, test_lemmas.chain_boundary_delta), refused beyond
        d_star = 1 / ((math.exp(1 / 3) + 1) * math.expm1(2 / 3) / math.expm1(1 / 3) + 1)
        Composite(6, 1 / 3, 3, pac_epsilon=1 / 3, pac_delta=d_star * (1 - 1e-9), base="chain")
        with pytest.raises(InvalidArgument, match=r"^base='chain' is not \(pac_epsilon, "
                                                  r"pac_delta\)-DP at m=3"):
            Composite(6, 1 / 3, 3, pac_epsilon=1 / 3, pac_delta=d_star * (1 + 1e-6),
                      base="chain")
        # budget factor f on ε_p of the cell_rr base, from the independent law of the drawn
        # point (the code refuses ε_p > 1): RR at fε_p on 1[point = (3, 0)]
        pg = [_IND.drawn_point_law(d, eps, 6).get((3, 0), 0.0) for d in (s, sp)]
        lo, hi = 1.0, 2.0
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            hit = 1 / (1 + math.exp(-mid * eps_p))
            out1 = [g * hit + (1 - g) * (1 - hit) for g in pg]
            e_mid = max(abs(math.log(out1[0] / out1[1])),
                        abs(math.log((1 - out1[0]) / (1 - out1[1]))))
            lo, hi = (lo, mid) if e_mid > sup * (1 + _IND.LP_RTOL) else (mid, hi)
        dp_sensitivity(loss=losses["B2_cell_rr_eps_p=1"], bound=sup, detectable_overspend=hi,
                       basis="exact ε of the cell_rr base at config B's sizes / the supremum "
                             "over all ε_p-DP A_PAC at the pair (independent LP; the derived ε "
                             "is 22.8x looser; config A's δ: chain base 1.000 of its supremum, "
                             "count 0.789); overspend by bisection on ε_p of cell_rr")
    # tight: the suprema over all ε_p-DP (config B) and (ε_p, δ_p)-DP (config A) A_PAC
    assert r.violation or all(v <= sup * (1 + _IND.LP_RTOL) for v in losses.values()), \
        f"tight: {losses} > {sup}"
    assert r.violation or all(v <= sup_a * (1 + _IND.LP_RTOL) for v in deltas.values()), \
        f"tight: config A {deltas} > {sup_a}"


# ----------------------------------------------------------------------------- utility

N, T_STAR, ETA = 8, 4, 0.3
X = np.arange(N)
P1 = np.where(X >= T_STAR, 1 - ETA, ETA)                   # Pr[y = 1 | x], D_X uniform
CELL = np.stack([(1 - P1) / N, P1 / N], 1).reshape(-1)     # cell law of (x, y)
ERR = np.array([np.mean(np.where(X >= t, 1 - P1, P1)) for t in range(N + 1)])  # err_D(h_t)


def _composite_for(n: int, eps: float, bug: str) -> Composite:
    """Theorem 3.6 verbatim: A_PAC = EM learner at ε_p = ε, largest m with k ≥ 6εm."""
    k = math.ceil(eps * n - 1e-9)
    return Composite(N, eps, int(k / (6 * eps) + 1e-9), bug=bug)


#: (distribution, ε, n, α) at β = 0.1 (distributions of test_utility._law). Sizes chosen by
#: measurement (1000 exploratory runs, seed 1, not the test's streams) so that the reference
#: fails 3.5–7 % (was 0/400 at n = 4000 on the uniform law alone): an ε sweep at fixed |T| = 100
#: (A_PAC's error depends on |T| only: m = ⌊k/(6ε)⌋ draws at ε_p = ε), the heavy point and the
#: realizable case.
COMPOSITE_CONFIGS = [
    ("uniform", 0.1, 1000, 0.1),
    ("uniform", 0.05, 2000, 0.1),
    ("uniform", 0.02, 5000, 0.1),
    ("heavy", 0.1, 3000, 0.1),
    ("realizable", 0.1, 4000, 0.1),
]
COMPOSITE_MUTANTS = {"sign_error": (0,), "threshold_off_by_one": (3, 4),
                     "em_delta_t": (0, 1, 2)}
COMPOSITE_CASES = [pytest.param(c, "reference", id=f"{c[0]}-eps{c[1]}-n{c[2]}-reference")
                   for c in COMPOSITE_CONFIGS] + [
    pytest.param(COMPOSITE_CONFIGS[i], v, marks=pytest.mark.mutant(v),
                 id=f"{COMPOSITE_CONFIGS[i][0]}-eps{COMPOSITE_CONFIGS[i][1]}-"
                    f"n{COMPOSITE_CONFIGS[i][2]}-{v}")
    for v, idx in COMPOSITE_MUTANTS.items() for i in idx]


#: The EM base's premise check (below): domain and draws where its exact loss is closest to ε_p
#: at a cost of 0.06 s (0.79 ε_p at N = 6, 0.85 at 8, 0.915 at 16, 0.94 at 24 with 2–4 draws).
EM_PREMISE = (16, 2)


@pytest.mark.claim(paper="000", ref="Theorem 3.6", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "pac_eps_1_25", marks=pytest.mark.mutant("pac_eps_1_25"))])
def test_composite_em_base_meets_its_premise(variant: str, dp_record: Any) -> None:
    """Theorem 3.6's premise, for the proper EM base: A_PAC is ε_p-DP on its drawn input
    (Lemmas 2.12/2.13 amplify exactly that). The base's law on every x-table of ``draws``
    points over a domain of N (labelled by every threshold h_t; its code's own log-law,
    ``Composite._pac_logits``) against the table with one point moved to any other cell: the
    largest log-ratio must be ≤ ε_p. The end-to-end audits check this base only against the
    loose derived bound of Theorem 3.6, so an EM at several times its budget passed every claim
    test (issue 27 mutation run: the exponent's ``/ 2`` → ``* 2``, 4ε_p). At (N, draws) =
    :data:`EM_PREMISE` the reference's exact loss is 0.915 ε_p (slack 0.915), so an overspend
    of ×1.093 is caught; mutant ``pac_eps_1_25`` (the EM at 1.25 ε_p) reaches 1.14 ε_p."""
    n_cells, draws = EM_PREMISE
    mech = Composite(n_cells, 1 / 6, draws, pac_epsilon=1 / 6, pac_delta=1e-3, base="em",
                     bug=variant)
    tables = compositions(draws, n_cells)                       # (C, N) x-tables
    thresholds = np.broadcast_to(np.arange(n_cells + 1), (len(tables), n_cells + 1))
    logits = mech._pac_logits(tables, thresholds, draws)        # (C, N+1, N+1)
    index = {tuple(row): i for i, row in enumerate(tables)}
    worst = 0.0
    for i, row in enumerate(tables):
        for a in np.flatnonzero(row):
            for b in range(n_cells):
                if b != a:
                    moved = row.copy()
                    moved[a] -= 1
                    moved[b] += 1
                    j = index[tuple(moved)]
                    worst = max(worst, float(np.max(np.abs(logits[i] - logits[j]))))
    dp_record("em_base_premise", {"loss": worst, "epsilon_p": mech.eps_p,
                                  "slack": worst / mech.eps_p})
    assert worst <= mech.eps_p * (1 + TOL), (worst, mech.eps_p)
    assert worst >= 0.9 * mech.eps_p          # the configuration is near-tight (0.915)


@pytest.mark.claim(paper="000", ref="Theorem 3.6", kind="utility")
@pytest.mark.parametrize("config, variant", COMPOSITE_CASES)
def test_composite_learns_agnostically(config: tuple[str, float, int, float], variant: str,
                                       dp_accuracy: Any, dp_record: Any,
                                       dp_sensitivity: Any) -> None:
    """Theorem 3.6 utility ((O(α), O(β + δn)), constants unspecified — Lemma 2.10's failure
    constant is not given, so nothing is derived): ε = ε_p, m = ⌊k/(6ε)⌋, proper EM A_PAC,
    δ_p = 0; excess err_D(g) − η ≤ α w.p. ≥ 1 − β (β = 0.1) at sizes chosen by measurement,
    on the distributions and ε of :data:`COMPOSITE_CONFIGS`, 1400 trials each (power ≥ 0.9 at
    1.5β; testbeds.UTILITY_TRIALS). Properness asserted (every output a threshold).
    Mutants: sign_error (Algorithm 1's EM maximises q); subtle: threshold_off_by_one (heavy
    point, realizable), em_delta_t (Δ = 1/|T|: the ε sweep)."""
    name, eps, n, alpha = config
    cell, err = utility_law(name, N, T_STAR)
    eta = float(err.min())
    mech = _composite_for(n, eps, variant)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        _, out = mech.run_counts(rng.multinomial(n, cell.reshape(-1), size=size)
                                 .reshape(size, N, 2), rng)
        assert (out <= N).all()                              # proper: a threshold of C
        return err[out] - eta

    r = dp_accuracy(trial, alpha=alpha, beta=0.1, trials=UTILITY_TRIALS)
    dp_record("theorem_3_6_utility", {"distribution": name, "epsilon": eps, "n": n,
                                      "m": mech.m, "failure_rate": r.failure_rate,
                                      "failure_upper": r.failure_upper})
    if variant == "reference":
        dp_sensitivity(loss=max(r.failure_rate, 1e-9), bound=0.1,
                       detectable_overspend=detectable_inflation(UTILITY_TRIALS, 0.1,
                                                                 r.confidence),
                       basis=f"measured failure rate over {UTILITY_TRIALS} trials / β; "
                             "detectable failure-rate inflation from the exact binomial power "
                             "at this call's α")


@pytest.mark.claim(paper="000", ref="Theorem 3.6", kind="utility")
def test_composite_utility_trend(dp_record: Any) -> None:
    """Recorded trend (not asserted beyond monotonicity): mean excess err_D(g) − η on the
    uniform noisy threshold, ε = 0.1, n = 250..16000 (400 runs each)."""
    rng = np.random.default_rng(3600)
    rows = []
    for n in (250, 1000, 4000, 16000):
        mech = _composite_for(n, 0.1, "reference")
        sc = rng.multinomial(n, CELL, size=400).reshape(400, N, 2)
        _, out = mech.run_counts(sc, rng)
        ex = ERR[out] - ETA
        rows.append({"n": n, "m": mech.m, "mean_excess": float(ex.mean()),
                     "q90_excess": float(np.quantile(ex, 0.9))})
    dp_record("theorem_3_6_utility_trend", {"epsilon": 0.1, "eta": ETA, "rows": rows})
    assert rows[-1]["mean_excess"] <= rows[0]["mean_excess"]