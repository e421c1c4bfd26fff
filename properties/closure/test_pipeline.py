"""Seed 004, private learning via relabeling (Algorithms 2–5): privacy of A_PrivateAgnostic
(Theorem 2.4 = 6.1) and A_ClosureLearn (Lemma 7.2), buggy variants, and utility via the
notes' derived explicit chains for proper learners (Theorem 2.4, Lemma 7.3, Theorem 7.1).

Privacy constants (decision). The private learner stand-in is L-EM at ε = 1 (pure), so the
subsampled learner A′ is (1, 0)-DP (Lemma 3.12 at ε = 1) and 4eδ = 0. Lemma 5.3 as printed
gives ε_A′ + 3 = 4: this paper constant is what ``dp_audit`` checks (PureDP(4)). The proof
gives ε_A′ + ln(4e) = 1 + 1 + 2 ln 2 ≈ 3.386; it is asserted on the *exact* loss of every
audited pair (stronger than the printed constant). Lemma 7.2: each round is a
Lemma 5.3 pipeline on its own chunk, the later rounds use earlier outputs only as
post-processing, so the transcript is (4, 0)-DP (proof constant 3.386) by parallel composition.
Issue 27, tight: beside both, the supremum of the loss over ALL (1, 0)-DP inner learners at
the tested pair (an LP in ``independent.py``), attained by the extremal cell-count learner.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, COLT 2020: Algorithms 2–5, Lemma 3.12, Lemma 5.3,
Claim 5.4, Theorem 2.4 / 6.1, Lemmas 7.2, 7.3, Theorem 7.1; notes ``shared/research/seed-004.md``
§3 (stand-ins), §5 (T-6.1, T-7.2, T-7.3 derived chains), §6 (BUG-1, 5, 6, 7).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from algorithms.beside import load_beside
from algorithms.closure import ClosureLearn, EMLearner, PrivateAgnostic, class_labels
from algorithms.closure.buggy import (ErmClosureLearn, ErrorRateAgnostic,
                                      InnerEps125ClosureLearn, OneMoreDrawClosureLearn,
                                      PrefixIgnoredClosureLearn, RelabelEps125ClosureLearn,
                                      SwappedArgumentsClosureLearn,
                                      UnrelabeledClosureLearn, WrongCompletionClosureLearn)
from algorithms.closure.relabel import (OVERSPEND, CellCountLearner, _draw, _subsample_counts,
                                       relabelled_cells)
from algorithms.detectability import detectable_inflation, exact_overspend
from dpcheck.core.sampler_check import check_sampler
from algorithms.closure.testbeds import (agnostic_size, closure_round_size, closure_trial,
                                        erm_pair, random_pairs, support_pair, worst_pair)
from algorithms.concepts import from_masks, intervals, negation, rule, thresholds
from dpcheck import InvalidArgument, PureDP
from dpcheck.exact import privacy_loss
from dpcheck.validation import fmt

PAPER_EPS = 1.0 + 3.0                       # Lemma 5.3 printed: ε_A′ + 3
PROOF_EPS = 1.0 + math.log(4 * math.e)      # Lemma 5.3 proof: ε_A′ + ln(4e) ≈ 3.386
H4 = thresholds(4)











def _record_power(dp_sensitivity: Any, r: Any, bound: float, what: str) -> None:
    """Issue 27: the utility test's slack (measured failure rate / its β) and the smallest
    failure-rate inflation its exact binomial test catches with power 0.9 at its α."""
    inflation = detectable_inflation(r.trials, bound, r.confidence)
    dp_sensitivity(loss=r.failure_rate, bound=bound,
                   detectable_overspend=inflation if math.isfinite(inflation) else None,
                   basis=f"loss: measured failure rate ({r.trials} runs, {what}) / beta; "
                         "overspend: smallest failure-rate inflation of beta the exact "
                         "binomial test catches with power 0.9 at this test's alpha")

# ----------------------------------------------------------------------------- Theorem 2.4



#: Issue 27: a tighter derived bound for one relabel-and-learn round (independent.py:
#: ln (1 + √e)² for the relabel EM with an integer score in {r, r + 1} over a pattern's
#: extensions, plus the with-replacement subsampling bound of the ε = 1 L-EM on ⌊|D|/9⌋ draws)
_IND = load_beside(__file__, "independent.py")

def _m(name: str, *args: Any) -> Any:
    return pytest.param(name, *args, marks=pytest.mark.mutant(name))


def _exact_claim(dp_counterexample: Any, holds: bool, name: str, witness: dict[str, Any]) -> None:
    """An exact (pmf-level) check of the claim: if it fails, the witness is recorded as a
    deterministic counterexample (fails a reference case; catches a mutant case, whose audits
    then still run and are reported)."""
    if not holds:
        dp_counterexample(name, witness)


@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("erm"), _m("relabel_epsilon"),
                                     _m("release_pattern"), _m("release_t")])
def test_private_agnostic_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                     dp_counterexample: Any, dp_sensitivity: Any) -> None:
    """A_PrivateAgnostic with L-EM (ε = 1) on thresholds over {0..3} is (4, 0)-DP under
    substitution anywhere in S: exact loss ≤ 1 + ln(4e) (the proof's constant) on the BUG-1
    pair, the P-changing pair (|D| = 99 and, issue 27, |D| = 999: A′ then draws 111 rows) and
    the worst of 20 random pairs (|D| = 27); each sampler audited at PureDP(4) (100k per side).
    Mutants: BUG-1 ERM relabeling (exact 5.51; 55.5 at |D| = 999), BUG-5 relabel EM at ε = 10
    (4.53; 5.0 at 999), BUG-6 pattern released (∞), BUG-7 T̃ released (∞)."""
    mech = PrivateAgnostic(H4, bug=None if variant == "reference" else variant)
    _, wp = worst_pair(mech, random_pairs(4, 54, 20, seed=4))
    worst_exact, worst_bound = 0.0, 0.0
    for name, (d, dp) in {"erm_pair": erm_pair(49), "support_pair": support_pair(49),
                          "random_worst": wp, "erm_pair_999": erm_pair(499),
                          "support_pair_999": support_pair(499)}.items():
        exact = privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon
        _exact_claim(dp_counterexample, exact <= PROOF_EPS, f"private_agnostic_{variant}_{name}",
                     {"exact_epsilon": exact, "proof_epsilon": PROOF_EPS})
        # issue 27, "derived": the tighter round bound of independent.py (|D| = |S|/2)
        derived = _IND.relabel_round_bound(len(d) // 2)
        _exact_claim(dp_counterexample, exact <= derived,
                     f"private_agnostic_{variant}_{name}_derived",
                     {"exact_epsilon": exact, "derived_epsilon": derived})
        r = dp_audit(mech, d, dp, PureDP(PAPER_EPS), samples=100_000)
        dp_record("private_agnostic_privacy", {"variant": variant, "pair": name,
                                               "exact_epsilon": exact, "derived": derived,
                                               "epsilon_lower": r.epsilon_lower})
        worst_exact, worst_bound = max((worst_exact, worst_bound), (exact, derived))
    if variant == "reference":
        dp_sensitivity(loss=worst_exact, bound=worst_bound,
                       detectable_overspend=exact_overspend(worst_exact, worst_bound),
                       basis="exact worst loss over the five pairs vs the derived round bound "
                             "ln(1+sqrt e)^2 + subsampled-L-EM eps (independent.py, 2.21; the "
                             "proof's 1 + ln(4e) = 3.386 gives 0.148); overspend = bound/loss, "
                             "assuming the loss scales linearly with a common factor on both EM "
                             "epsilons (not measured)")


#: Issue 27, tight: the pairs of the exact check above where the LP over all 1-DP inner
#: learners is cheap (|D| ≤ 99: multisets of ≤ 11 draws over ≤ 4 cells); the |D| = 999 pairs
#: (111 draws) keep the printed and derived checks only.
_TIGHT: dict[str, Any] = {}
TIGHT_TOL = (1 + 1e-6, 1e-9)       # LP optimum: HiGHS' relative tolerance; absolute: pmf sums


def _agnostic_tight() -> dict[str, Any]:
    """LP suprema per pair and the extremal learner (fitted at the random worst pair)."""
    if not _TIGHT:
        _, wp = worst_pair(PrivateAgnostic(H4), random_pairs(4, 54, 20, seed=4))
        masks = list(H4.masks)
        for name, (s, sp) in {"erm_pair": erm_pair(49), "support_pair": support_pair(49),
                              "random_worst": wp}.items():
            n = len(s) // 2
            laws = [_IND.round_draw_law(masks, u[:n], u[n:], _IND.errors_score, n // 9)
                    for u in (s, sp)]
            _TIGHT[name] = ((s, sp), _IND.sup_inner_loss(*laws, 1.0)[0], laws)
        fit, cells, g0 = _IND.fit_count_learner(*_TIGHT["random_worst"][2])
        _TIGHT["extremal"] = (CellCountLearner(H4, cells, g0), fit)
    return _TIGHT


def _three_bounds(dp_counterexample: Any, tag: str, exact: float, derived: float, sup: float,
                  **extra: Any) -> None:
    """The printed (1 + ln 4e), the derived round bound and the tight supremum over all (1, 0)-DP
    inner learners at this pair, each asserted as its own labelled exact claim."""
    _exact_claim(dp_counterexample, exact <= PROOF_EPS, tag + "_printed",
                 {"exact_epsilon": exact, "proof_epsilon": PROOF_EPS})
    _exact_claim(dp_counterexample, exact <= derived, tag + "_derived",
                 {"exact_epsilon": exact, "derived_epsilon": derived})
    _exact_claim(dp_counterexample, _tight_ok(exact, sup), tag + "_tight",
                 {"exact_epsilon": exact, "sup_over_learners": sup, **extra})


def _tight_ok(exact: float, sup: float) -> bool:
    return exact <= sup * TIGHT_TOL[0] + TIGHT_TOL[1]


@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("relabel_eps_1_25"), _m("inner_eps_1_25"),
                                     _m("one_more_draw")])
def test_private_agnostic_tight(variant: str, dp_record: Any, dp_counterexample: Any,
                                dp_sensitivity: Any) -> None:
    """Issue 27, tight (exact only): at the ERM pair and the P-changing pair (|D| = 99) and the
    worst random pair (|D| = 27), the exact loss of A_PrivateAgnostic ≤ the supremum of its
    loss over ALL (1, 0)-DP inner learners A at that pair (an LP over A's law per multiset of
    ⌊|D|/9⌋ draws, ``independent.sup_inner_loss``; no code shared with algorithms/), beside the
    printed 1 + ln(4e) and the derived round bound (2.2), for two inner learners: L-EM and
    the extremal cell-count learner (the LP optimiser's form, fitted at the random pair; it
    attains the supremum there: slack 1.000). Mutants the printed and derived bounds let pass
    (25 % overspends and an off-by-one): relabel EM at 1.25 (L-EM, ERM pair: 0.620 > 0.500),
    inner learner at 1.25 ε (extremal, random pair: 0.441 > 0.370), one more draw (0.452)."""
    tb = _agnostic_tight()
    ext, fit = tb["extremal"]
    losses: dict[str, float] = {}
    for base, learner in (("l_em", None), ("extremal", ext)):
        mech = PrivateAgnostic(H4, learner=learner, bug=None if variant == "reference" else variant)
        for name in ("erm_pair", "support_pair", "random_worst"):
            (d, dp), sup, _ = tb[name]
            exact = privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon
            derived = _IND.relabel_round_bound(len(d) // 2)
            losses[f"{base}_{name}"] = exact
            tag = f"private_agnostic_tight_{variant}_{base}_{name}"
            _three_bounds(dp_counterexample, tag, exact, derived, sup)
    sups = {name: tb[name][1] for name in ("erm_pair", "support_pair", "random_worst")}
    dp_record("private_agnostic_tight", {"variant": variant, "sup_over_learners": sups,
                                         "extremal": [ext.cells, ext.g0, fit], **losses})
    if variant == "reference":
        (d, dp), sup, _ = tb["random_worst"]
        lo, hi = 1.0, OVERSPEND
        while hi - lo > 1e-3:      # smallest ε factor on the extremal learner that is caught
            mid = (lo + hi) / 2
            mech = PrivateAgnostic(H4, learner=replace(ext, epsilon=mid))
            lo, hi = ((mid, hi) if _tight_ok(privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon,
                                            sup) else (lo, mid))
        dp_sensitivity(loss=losses["extremal_random_worst"], bound=sup, detectable_overspend=hi,
                       basis="exact loss of the extremal inner learner at the random |D| = 27 "
                             "pair / the supremum over all (1,0)-DP inner learners there (LP, "
                             "independent.py); L-EM reaches 0.992 of the supremum at the ERM "
                             "pair; overspend: bisection on the extremal learner's epsilon")


class _SamplerUnrelabelled(PrivateAgnostic):
    """Mutant (sampler only): A′ is run on D with its own labels (the relabeled D̃ is computed
    but not used), while ``pmf`` still describes Algorithm 2 — the kind of bug a second copy of
    the relabeling step in the sampler would hide from an exact-law test."""

    def learn_counts(self, d_counts, support, size, rng):
        pats, w = self.relabel(d_counts, support)
        k = _draw(w, size, rng)
        q = _subsample_counts(d_counts, int(d_counts.sum()) // 9, size, rng)
        return self.learner.sample(q, rng), k, pats


class _SamplerOneMoreDraw(PrivateAgnostic):
    """Mutant (sampler only): A′ draws ⌊|D|/9⌋ + 1 rows (off by one)."""

    def learn_counts(self, d_counts, support, size, rng):
        pats, w = self.relabel(d_counts, support)
        k = _draw(w, size, rng)
        f = np.empty(size, np.int64)
        for j in np.unique(k):
            rows = np.flatnonzero(k == j)
            q = _subsample_counts(relabelled_cells(d_counts, pats[j]),
                                  int(d_counts.sum()) // 9 + 1, len(rows), rng)
            f[rows] = self.learner.sample(q, rng)
        return f, k, pats


SAMPLER_VARIANTS = {"reference": PrivateAgnostic, "sampler_unrelabelled": _SamplerUnrelabelled,
                    "sampler_one_more_draw": _SamplerOneMoreDraw}


@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("sampler_unrelabelled"),
                                     _m("sampler_one_more_draw")])
def test_private_agnostic_sampler_matches_its_exact_law(variant: str, dp_rng: Any) -> None:
    """The exact-law privacy checks above speak for the sampler only if the sampler draws from
    that law (issue 27): Pearson χ² of 50k sampler outputs against ``pmf`` on each side of the
    ERM pair at |D| = 99 and |D| = 999 and of the worst random pair (|D| = 27), flagged at
    10⁻³ per pair (fixed seed). The relabeling step itself is one function
    (``relabel.relabelled_cells``) shared by sampler and law. Mutants (sampler only): A′ on
    the un-relabeled D; one extra draw in A′."""
    mech = SAMPLER_VARIANTS[variant](H4)
    _, wp = worst_pair(PrivateAgnostic(H4), random_pairs(4, 54, 20, seed=4))
    for d, dp in (erm_pair(49), erm_pair(499), wp):
        check = check_sampler(mech.sample(d, 50_000, dp_rng), mech.pmf(d),
                              mech.sample(dp, 50_000, dp_rng), mech.pmf(dp))
        assert not check.mismatch, (len(d) // 2, check.describe())


def _refused(call: Any, message: str) -> None:
    """``call()`` raises InvalidArgument with exactly ``message`` (the validation contract:
    the message names the value and the requirement)."""
    with pytest.raises(InvalidArgument, match="^" + re.escape(message) + "$"):
        call()


@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="privacy")
def test_private_agnostic_refuses_inputs_outside_algorithm_4() -> None:
    """Algorithm 4's input and auxiliary class, as Theorem 2.4 = 6.1 states them, are enforced
    (issue 27: mutation survivors): S ∈ (X × {0,1})^m (a point outside X = {0..3}, a label
    outside {0, 1}: refused); step 1 splits S into |D| = |T| = |S|/2 (|S| odd: refused);
    step 3 draws |D|/9 rows, at least one, so |S| ≥ 18 (|S| = 16 and the empty sample:
    refused; |S| = 18: the smallest accepted, its exact law sums to 1); the relabel step's
    exponential mechanism chooses from Π_H(P) (Algorithm 2 step 3), so H must be a non-empty
    class (an empty one is refused even when an inner learner is given). The refusals name
    the offending value (exact messages)."""
    mech = PrivateAgnostic(H4)
    s18 = [(0, 1)] * 5 + [(3, 0)] * 4 + [(1, 1)] * 9
    assert math.fsum(mech.pmf(s18).values()) == pytest.approx(1.0, abs=1e-12)
    for size in (0, 16, 19):
        _refused(lambda: mech.pmf((s18 * 2)[:size]), f"|S|={size} must be even and >= 18")
    _refused(lambda: mech.sample([], 1, np.random.default_rng(0)),
             "|S|=0 must be even and >= 18")
    for bad in ((4, 0), (4, 1), (-1, 0), (0, 2)):           # x ∉ X = {0..3}, y ∉ {0, 1}
        s = s18[:-1] + [bad]
        _refused(lambda: mech.pmf(s), f"data={fmt(s)}: need 0 <= x < 4 and y in {{0, 1}}")
    empty = from_masks(4, [])
    _refused(lambda: PrivateAgnostic(empty, learner=EMLearner(H4, 1.0)),
             f"cls={fmt(empty)} must be a non-empty ConceptClass")
    # the auxiliary learner's stand-in, L-EM (Proposition 3.13's mechanism), chooses from H
    _refused(lambda: EMLearner(empty, 1.0), f"cls={fmt(empty)} must be a non-empty ConceptClass")


#: Runs of the Theorem 2.4 utility test (issue 27): ≈ 1.2 ms per run; 1400 runs detect a 1.48x
#: inflation of β = 0.1 at the main job's per-test α (600 runs: 1.76x). The mutant (failure
#: ≈ 0.36) needs far fewer.
AGNOSTIC_RUNS = {"reference": 1400, "error_rate_score": 300}


@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _m("error_rate_score")])
def test_private_agnostic_utility_derived_chain(variant: str, dp_accuracy: Any,
                                                dp_record: Any, dp_sensitivity: Any) -> None:
    """Proper L-EM, thresholds on {0..15}, target 1[x ≥ 8] with flip noise η = 0.1 (Δ = 0.1),
    α = α_A = 0.05, four β-terms of 0.025: error_μ(f) ≤ Δ + 3α + 2α_A w.p. ≥ 0.9 (derived
    chain (13)–(16) of the notes; one-sided agnostic error). Mutant BUG-4a: relabel score =
    error rate (the relabel EM is ≈ uniform over the 17 patterns)."""
    n, eta, alpha, alpha_a, b = 16, 0.1, 0.05, 0.05, 0.025
    h = thresholds(n)
    mech = PrivateAgnostic(h) if variant == "reference" else ErrorRateAgnostic(h)
    lab = class_labels(h)
    d_size = agnostic_size(len(h), alpha, alpha_a, b)
    target = (np.arange(n) >= 8).astype(int)
    err_mu = (eta + (1 - 2 * eta) * (lab != target).mean(1))      # exact error_μ(c), c ∈ H
    delta = float(err_mu.min())
    cell_p = np.zeros((n, 2))
    cell_p[np.arange(n), target] = (1 - eta) / n
    cell_p[np.arange(n), 1 - target] = eta / n

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(size)
        for t in range(size):
            dc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
            tc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
            sup = int(sum(1 << x for x in np.flatnonzero((dc + tc).sum(1))))
            f = mech.learn_counts(dc, sup, 1, rng)[0][0]
            out[t] = err_mu[f] - delta
        return out

    r = dp_accuracy(trial, alpha=3 * alpha + 2 * alpha_a, beta=4 * b,
                    trials=AGNOSTIC_RUNS[variant])
    dp_record("private_agnostic_utility", {"variant": variant, "d_size": d_size,
                                           "n": 2 * d_size, "Delta": delta,
                                           "bound_excess": 3 * alpha + 2 * alpha_a,
                                           "failure_rate": r.failure_rate})
    if variant == "reference":
        _record_power(dp_sensitivity, r, 4 * b, "utility part")


# ----------------------------------------------------------------------------- Lemma 7.2

#: |D_i| = 99: A′ draws 11 points per round, enough for a relabeling bug to show (at |D_i| ≤ 27
#: the 1–3 draws cap the transcript loss below 4 for any relabeling: BUG-1 gives 0.67 and 1.27
#: there). The four pairs are those of largest exact loss, for the reference or for BUG-1, among
#: ``random_pairs(4, 396, 40, seed=8)`` (a search of 40 random pairs; reference worst 0.995).
CLOSURE_PAIRS = [random_pairs(4, 396, 40, seed=8)[i] for i in (0, 4, 34, 36)]


class _ClosureSamplerIgnoresPrefix(ClosureLearn):
    """Mutant (sampler only): round 2's relabel law in ``learn_chunks`` is computed with an
    empty prefix (h_1 dropped) while ``pmf`` is right — a divergence between the sampler's and
    the exact law's use of the relabeling step."""

    def learn_chunks(self, ch, size, rng):
        hs = np.zeros((size, len(ch)), np.int64)
        for i, (dc, sup) in enumerate(ch):
            pats, w = self.round_law(i, [0] * i, dc, sup)
            k = _draw(w, size, rng)
            for j in np.unique(k):
                sub = np.flatnonzero(k == j)
                q = _subsample_counts(relabelled_cells(dc, pats[j]), int(dc.sum()) // 9,
                                      len(sub), rng)
                hs[sub, i] = self.learners[i].sample(q, rng)
        return hs


@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("closure_sampler_ignores_prefix")])
def test_closure_learn_sampler_matches_its_exact_law(variant: str, dp_rng: Any) -> None:
    """A_ClosureLearn's sampler against its exact transcript law (issue 27): Pearson χ² of
    50k transcripts per side at 10⁻³, on the asymmetric coupled setup (G = a AND NOT b over
    thresholds × intervals on {0..3}) and on AND(thresholds, negated thresholds), |D_i| = 27.
    Mutant (sampler only): round 2's relabel law ignores h_1 in the sampler."""
    cls = ClosureLearn if variant == "reference" else _ClosureSamplerIgnoresPrefix
    for g, classes in (((0, 1, 0, 0), (thresholds(4), intervals(4))),
                       ("and", (thresholds(4), negation(thresholds(4))))):
        cl = cls(g, classes)
        for d, dp in random_pairs(4, 108, 2, seed=27):
            check = check_sampler(cl.sample(d, 50_000, dp_rng), cl.pmf(d),
                                  cl.sample(dp, 50_000, dp_rng), cl.pmf(dp))
            assert not check.mismatch, (g, check.describe())


@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
def test_closure_learn_refuses_inputs_outside_algorithm_5() -> None:
    """Algorithm 5's partition, as Lemma 7.2's proof uses it, is enforced (issue 27: mutation
    survivors): S = S_1∘…∘S_k in k parts of one size (the implementation's positional
    chunking), each S_i = D_i∘T_i with |D_i| = |T_i| = |S_i|/2, so |S| is a multiple of 2k
    (|S| = 38 at k = 2, 56 at k = 3: refused); step 2(c)i draws |D_i|/9 rows, at least one,
    so |D_i| ≥ 9 (|S| = 32 at k = 2, 48 at k = 3: refused; 36 and 54, the smallest accepted,
    give |D_i| = 9 in every round, and at k = 2 an exact transcript law summing to 1). Theorem 7.1's H_1..H_k ⊆ {0,1}^X share one domain X and
    the relabel EM of each round chooses from Π_{H_i}(P_i) (non-empty): classes on two
    domains or an empty class are refused. Exact messages."""
    t4 = thresholds(4)
    for classes, rows in (((t4, negation(t4)), (36, 38, 32)),
                          ((t4, negation(t4), t4), (54, 56, 48))):
        cl = ClosureLearn("and", classes)
        k, ok = len(classes), rows[0]
        s = [(x % 4, (x // 4) % 2) for x in range(max(rows))]
        assert [int(dc.sum()) for dc, _ in cl.chunks(s[:ok])] == [9] * k   # |D_i| = |S_i|/2
        if k == 2:                                  # (the k = 3 law costs 0.13 s: not needed)
            assert math.fsum(cl.pmf(s[:ok]).values()) == pytest.approx(1.0, abs=1e-12)
        for size in rows[1:]:
            _refused(lambda: cl.pmf(s[:size]),
                     f"|S|={size} must be a multiple of 2k={2 * k} with |D_i| >= 9")
    for classes in ((t4, thresholds(5)), (t4, from_masks(4, []))):
        _refused(lambda: ClosureLearn("and", classes),
                 "classes must be non-empty ConceptClasses on one domain")


@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("erm_relabel")])
def test_closure_learn_is_private(variant: str, dp_audit: Any, dp_record: Any,
                                  dp_counterexample: Any, dp_sensitivity: Any) -> None:
    """A_ClosureLearn, G = AND, H1 = thresholds, H2 = negated thresholds on {0..3}, L-EM
    learners, |D_i| = 99: exact transcript loss ≤ 1 + ln(4e) on each of the four pairs; the
    worst pair audited at PureDP(4) (derived (4, 4eδ), δ = 0). The printed "(ε, O(δ)), ε < 1"
    is measured here, where a loss above 1 is reachable (BUG-1 reaches 6.36): the reference's
    worst loss is recorded against 1. Mutant BUG-1 (deterministic ERM relabeling per round)."""
    cl = (ClosureLearn if variant == "reference" else ErmClosureLearn)(
        "and", (thresholds(4), negation(thresholds(4))))
    losses = [privacy_loss(cl.pmf(a), cl.pmf(b)).epsilon for a, b in CLOSURE_PAIRS]
    worst = max(losses)
    d, dp = CLOSURE_PAIRS[losses.index(worst)]
    _exact_claim(dp_counterexample, worst <= PROOF_EPS, f"closure_learn_{variant}",
                 {"exact_epsilon": worst, "proof_epsilon": PROOF_EPS, "d_i": 99})
    # issue 27, "derived": rounds run on disjoint chunks, so the transcript loss is one round's
    # (later rounds post-process it): ln(1 + √e)² + subsampled L-EM ε at |D_i| = 99 (2.208)
    derived = _IND.relabel_round_bound(99)
    _exact_claim(dp_counterexample, worst <= derived, f"closure_learn_{variant}_derived",
                 {"exact_epsilon": worst, "derived_epsilon": derived, "d_i": 99})
    r = dp_audit(cl, d, dp, PureDP(PAPER_EPS), samples=100_000)
    dp_record("closure_privacy", {"variant": variant, "d_i": 99, "exact_losses": losses,
                                  "exact_worst": worst, "printed_epsilon_below_1": worst < 1,
                                  "epsilon_lower": r.epsilon_lower})
    if variant == "reference":
        dp_sensitivity(loss=worst, bound=derived,
                       detectable_overspend=exact_overspend(worst, derived),
                       basis="exact worst transcript loss over the four pairs (|D_i| = 99) vs "
                             "the derived round bound ln(1+sqrt e)^2 + subsampled-L-EM eps "
                             "(independent.py, 2.208; vs 1 + ln(4e): 0.294); overspend = "
                             "bound/loss assuming a loss linear in a common factor on the EM "
                             "epsilons (not measured)")


#: Issue 27, tight: two pairs of ``random_pairs(4, 108, 40, seed=8)`` (|D_i| = 27, A′ draws
#: 3 rows): #18 changes chunk 2 (LP supremum 0.508, the largest among the 40 pairs that a
#: cell-count learner attains), #19 changes chunk 1 (0.213).
CLOSURE_TIGHT_PAIRS = [random_pairs(4, 108, 40, seed=8)[i] for i in (18, 19)]
CLOSURE_TIGHT_VARIANTS: dict[str, type[ClosureLearn]] = {
    "reference": ClosureLearn, "closure_relabel_eps_1_25": RelabelEps125ClosureLearn,
    "closure_inner_eps_1_25": InnerEps125ClosureLearn,
    "closure_one_more_draw": OneMoreDrawClosureLearn}
_CLOSURE_TIGHT: list[Any] = []


@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _m("closure_relabel_eps_1_25"),
                                     _m("closure_inner_eps_1_25"), _m("closure_one_more_draw")])
def test_closure_learn_tight(variant: str, dp_record: Any, dp_counterexample: Any,
                             dp_sensitivity: Any) -> None:
    """Issue 27, tight (exact only): A_ClosureLearn (AND of thresholds / negated thresholds on
    {0..3}, |D_i| = 27) at two pairs, one changing chunk 2 and one chunk 1: the exact
    transcript loss ≤ the supremum over ALL (1, 0)-DP inner learners A_1, A_2
    (``independent.closure_pair_sup``: the changed round's LP over A_i's law per multiset of 3
    draws, maximised over the prefix h_<i; no code shared with algorithms/), beside the
    printed 1 + ln(4e) and the derived round bound, for L-EM in every round and for the
    extremal cell-count learner in the changed round (fitted from the LP's laws; attains the
    supremum: slack 1.000). Mutants the printed and derived bounds let pass: relabel EM at 1.25
    (0.545 > 0.508 at #18), inner learners at 1.25 ε (0.600), one more draw (0.621)."""
    table, masks = rule("and", 2), [list(thresholds(4).masks), list(negation(thresholds(4)).masks)]
    if not _CLOSURE_TIGHT:
        for s, sp in CLOSURE_TIGHT_PAIRS:
            sup, i, prefix, laws = _IND.closure_pair_sup(table, masks, s, sp)
            fit, cells, g0 = _IND.fit_count_learner(*laws)
            _CLOSURE_TIGHT.append((sup, i, prefix, fit, cells, g0))
    classes = (thresholds(4), negation(thresholds(4)))
    cl = CLOSURE_TIGHT_VARIANTS[variant]("and", classes)
    derived = _IND.relabel_round_bound(27)
    losses, slack = {}, []
    for k, ((s, sp), (sup, i, prefix, fit, cells, g0)) in enumerate(
            zip(CLOSURE_TIGHT_PAIRS, _CLOSURE_TIGHT)):
        ext = [EMLearner(c, 1.0) for c in classes]
        ext[i] = CellCountLearner(classes[i], cells, g0)
        for base, mech in (("l_em", cl.with_learners([EMLearner(c, 1.0) for c in classes])),
                           ("extremal", cl.with_learners(ext))):
            exact = privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon
            losses[f"{base}_pair{k}"] = exact
            tag = f"closure_learn_tight_{variant}_{base}_pair{k}"
            _three_bounds(dp_counterexample, tag, exact, derived, sup, round=i + 1,
                          prefix=prefix)
            if base == "extremal":
                slack.append((exact / sup, exact, sup, k, ext))
    dp_record("closure_tight", {"variant": variant, "d_i": 27, "derived": derived,
                                "sups": [c[0] for c in _CLOSURE_TIGHT],
                                "extremal": [[c[4], c[5], c[3]] for c in _CLOSURE_TIGHT],
                                **losses})
    if variant == "reference":
        _, exact, sup, k, ext = min(slack)
        s, sp = CLOSURE_TIGHT_PAIRS[0]
        sup0, i0 = _CLOSURE_TIGHT[0][0], _CLOSURE_TIGHT[0][1]
        lo, hi = 1.0, OVERSPEND
        while hi - lo > 1e-3:      # smallest ε factor on the extremal learner that is caught
            mid = (lo + hi) / 2
            ls = list(slack[0][4])
            ls[i0] = replace(ls[i0], epsilon=mid)
            mech = ClosureLearn("and", classes).with_learners(ls)
            lo, hi = ((mid, hi) if _tight_ok(privacy_loss(mech.pmf(s), mech.pmf(sp)).epsilon,
                                            sup0) else (lo, mid))
        dp_sensitivity(loss=exact, bound=sup, detectable_overspend=hi,
                       basis="exact transcript loss of the extremal inner learner / the "
                             "supremum over all (1,0)-DP inner learners (LP, independent.py), "
                             "worse of the two |D_i| = 27 pairs; overspend: bisection on the "
                             "extremal learner's epsilon at pair #18")


# ----------------------------------------------------------------------------- Lemma 7.3, Thm 7.1





#: The utility setups of Lemma 7.3: G, classes, domain size, target, trials. Issue 27:
#: and_thresholds is the powered one (≈ 4 ms per run; 1400 runs detect a 1.48x inflation of
#: β = 0.1 at the main job's per-test α ≈ 1.2e-5, 1000 runs only 1.57x); the other two are
#: kept small for the main job (or_intervals ≈ 13 ms per run) - they exist for their mutants.
SETUPS: dict[str, tuple[str, Any, int, Any, int]] = {
    "and_thresholds": ("and", (thresholds(16), negation(thresholds(16))), 16,
                       lambda x: (x >= 5) & (x <= 11), 1400),
    "or_intervals": ("or", (intervals(12), intervals(12)), 12, lambda x: (x <= 3) | (x >= 8), 300),
    # issue 27: asymmetric G (a AND NOT b, truth table indexed by a + 2b), heterogeneous
    # classes, and round 2 coupled to h_1 (G(0, ·) ≡ 0: h_2 only matters where h_1 = 1)
    "andnot_coupled": ((0, 1, 0, 0), (thresholds(16), intervals(16)), 16,
                       lambda x: (x >= 3) & ~((x >= 8) & (x <= 11)), 500),
}
CLOSURE_VARIANTS: dict[str, type[ClosureLearn]] = {
    "reference": ClosureLearn, "wrong_completion": WrongCompletionClosureLearn,
    "no_relabeling": UnrelabeledClosureLearn, "swapped_arguments": SwappedArgumentsClosureLearn,
    "prefix_ignored": PrefixIgnoredClosureLearn}


@pytest.mark.claim(paper="004", ref="Lemma 7.3", kind="utility")
@pytest.mark.parametrize("setup, variant", [
    ("and_thresholds", "reference"), ("or_intervals", "reference"),
    pytest.param("and_thresholds", "wrong_completion",
                 marks=pytest.mark.mutant("wrong_completion")),
    pytest.param("or_intervals", "no_relabeling", marks=pytest.mark.mutant("no_relabeling")),
    ("andnot_coupled", "reference"),
    pytest.param("andnot_coupled", "swapped_arguments",
                 marks=pytest.mark.mutant("swapped_arguments")),
    pytest.param("andnot_coupled", "prefix_ignored", marks=pytest.mark.mutant("prefix_ignored"))])
def test_closure_learn_utility_derived_chain(setup: str, variant: str, dp_accuracy: Any,
                                             dp_record: Any, dp_sensitivity: Any) -> None:
    """Uniform P, proper L-EM, α = 0.05, k = 2: error_P(c) ≤ 5α w.p. ≥ 1 − 8·0.0125 (derived
    per-round chain e_i ≤ e_{i−1} + 3α/k + 2α/k, with uniform convergence for
    G(h_{<i}, H_i, H_{>i}) with h_{<i} fixed — the fix of the proof gap noted in §8.8), on
    AND(thresholds, negated thresholds) over {0..15}, target [5, 11] (1400 runs) and OR of two
    intervals over {0..11}, target [0,3] ∪ [8,11] (300 runs). Mutants: BUG-11 (score (17)
    completes with H_1: AND of two thresholds is a threshold, round 1 is indifferent among
    6 tied patterns, failure ≈ 1/6 > β) and BUG-12 (no relabeling: the two rounds pick
    inconsistent intervals, failure ≈ 7/9). Issue 27: both setups above are symmetric in G and
    decoupled, so a bug in the argument order or in how h_1 enters round 2 is invisible there;
    the third setup is G = a AND NOT b over thresholds (x ≥ t) × intervals on {0..15}, target
    {x ≥ 3} minus [8, 11] (500 runs, to keep the main job cheap: detects a 1.7× inflation of β): mutants swapped_arguments (score (17) with G(a_2, a_1))
    and prefix_ignored (h_1 does not enter round 2's score)."""
    g, classes, n, target_fn, trials = SETUPS[setup]
    cl = CLOSURE_VARIANTS[variant](g, classes)
    alpha, b = 0.05, 0.0125
    d_size = max(closure_round_size(cl, i, alpha, b) for i in range(2))
    target = target_fn(np.arange(n)).astype(int)
    r = dp_accuracy(closure_trial(cl, d_size, target), alpha=5 * alpha, beta=8 * b,
                    trials=trials)
    dp_record("closure_utility", {"setup": setup, "variant": variant, "d_i": d_size,
                                  "total_n": 4 * d_size, "bound": 5 * alpha,
                                  "failure_rate": r.failure_rate})
    if variant == "reference":
        _record_power(dp_sensitivity, r, 8 * b, setup)


@pytest.mark.claim(paper="004", ref="Theorem 7.1", kind="utility")
def test_closure_sample_size_scaling(dp_record: Any) -> None:
    """Theorem 7.1 is asymptotic: record mean error of A_ClosureLearn (AND setup above) against
    the total sample size, next to the formula (k³VC + k² ln(k/β))/α² + Σ m_i at constants 1."""
    cl = ClosureLearn("and", (thresholds(16), negation(thresholds(16))))
    target = ((np.arange(16) >= 5) & (np.arange(16) <= 11)).astype(int)
    rng = np.random.default_rng(2024)
    rows = []
    for d_size in (18, 90, 450, 2250):
        errs = closure_trial(cl, d_size, target)(60, rng)
        rows.append({"total_n": 4 * d_size, "mean_error": float(errs.mean()),
                     "q90_error": float(np.quantile(errs, 0.9))})
    assert rows[-1]["mean_error"] <= rows[0]["mean_error"]
    alpha, beta, k, vc = 0.1, 0.1, 2, 2
    formula = ((k ** 3 * vc + k ** 2 * math.log(k / beta)) / alpha ** 2
               + 2 * EMLearner(thresholds(16)).sample_size(alpha / k, beta / k))
    dp_record("closure_scaling", {"rows": rows, "formula_at_alpha_0.1": formula})
