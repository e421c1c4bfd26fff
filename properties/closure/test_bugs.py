"""Seed 004, buggy variants BUG-4 and BUG-8..BUG-15 of the relabeling learners (notes §6).

Each variant (``algorithms/closure_buggy.py``) is a wrapper of the correct mechanism. A privacy
bug that really breaks the claim gets ``expect="violation"`` with an exact loss (from ``pmf``)
and, where a sampler exists, a ``dp_audit``; a variant that turns out *not* to break privacy at
testable sizes gets an ``expect="holds"`` test recording the exact loss and why; utility bugs
get ``dp_accuracy`` with ``expect="violation"`` against the derived chains of
``properties/closure/test_pipeline.py``.

Findings (exact, this file): BUG-9 (A′ draws |D| rows) loss 1.4173 at |D| = 9 and 1.6361 at
|D| = 18 > ε = 1; BUG-15 with leak probability 20δ gives δ(ε_A + 3) = 20δ > 4eδ, but the
notes' 10δ gives 10δ < 4eδ ≈ 10.87δ (not caught by the hockey-stick test); BUG-8, BUG-13,
BUG-14 and BUG-10 (at |D| = 9, L-EM up to ε_A = 8, k ≤ 3) stay within the claims.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, COLT 2020: Algorithms 2–5, Lemma 3.12, Lemma 5.3,
Theorem 2.4 / 6.1, Lemma 7.2, Lemma 7.3; notes ``shared/research/seed-004.md`` §6.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from algorithms.closure import PrivateAgnostic, class_labels
from algorithms.closure.testbeds import (Pair, agnostic_size, closure_round_size, closure_trial,
                                        erm_pair, random_pairs, support_pair, worst_pair)
from algorithms.closure.buggy import (ErrorRateAgnostic, FullClassAgnostic, ReusingClosureLearn,
                                      SortedSplitAgnostic, UnrelabeledClosureLearn,
                                      UnsubsampledAgnostic, WrongCompletionClosureLearn,
                                      full_size_subsample, overleaking_rr, with_learner_epsilon)
from algorithms.closure.learners import ExponentialLearner
from algorithms.closure.relabel_pmf import relabel_and_learn_pmf
from algorithms.concepts import intervals, negation, thresholds
from algorithms.mechanisms.subsampling import amplified_epsilon_with_replacement
from dpcheck import PureDP
from dpcheck.exact import privacy_loss

PAPER_EPS = 1.0 + 3.0                       # Lemma 5.3 printed, ε_A′ = 1
LN4E = math.log(4 * math.e)
PROOF_EPS = 1.0 + LN4E                      # Lemma 5.3 proof, ε_A′ = 1
H4 = thresholds(4)
TOL = 1e-9










def _pipeline_pairs() -> list[Pair]:
    return [erm_pair(13), support_pair(13), *random_pairs(4, 54, 40, seed=4)]


# ----------------------------------------------------------------------------- BUG-9

@pytest.mark.claim(paper="004", ref="Lemma 3.12", kind="privacy", expect="violation")
def test_bug9_full_size_subsample(dp_audit: Any, dp_counterexample: Any) -> None:
    """BUG-9: A′ drawing |D| rows (not |D|/9) with replacement. A = Algorithm 1 on X = {0},
    H = {∅, X}, ε = 1; neighbours |D|×(0,0) vs (|D|−1)×(0,0) + (0,1): exact loss 1.4173
    (|D| = 9) and 1.6361 (|D| = 18) > 1 = ε claimed by Lemma 3.12; the correct A′ (m = 1 of
    9) gives ≤ amplified ε ≈ 0.175. The sampler audit at PureDP(1) finds it."""
    learner = ExponentialLearner(thresholds(1), 1.0)
    exact = {}
    for n in (9, 18):
        d1, d2 = [(0, 0)] * n, [(0, 0)] * (n - 1) + [(0, 1)]
        exact[n] = privacy_loss(full_size_subsample(learner, n).pmf(d1),
                                full_size_subsample(learner, n).pmf(d2)).epsilon
        assert exact[n] > 1.0
    assert exact[9] == pytest.approx(1.41728, abs=1e-4)
    assert exact[18] == pytest.approx(1.63610, abs=1e-4)
    dp_counterexample("bug9_exact", {"learner": "Algorithm 1, X={0}, eps=1",
                                     "exact_epsilon": {str(k): v for k, v in exact.items()},
                                     "claimed_epsilon": 1.0,
                                     "correct_amplified": amplified_epsilon_with_replacement(
                                         1.0, 1, 9)})
    d1, d2 = [(0, 0)] * 9, [(0, 0)] * 8 + [(0, 1)]
    dp_audit(full_size_subsample(learner, 9), d1, d2, PureDP(1.0), samples=400_000)


# ----------------------------------------------------------------------------- BUG-8, 13, 14

@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="privacy")
@pytest.mark.parametrize("mech", [UnsubsampledAgnostic(H4, mode="all"),
                                  UnsubsampledAgnostic(H4, mode="prefix"),
                                  UnsubsampledAgnostic(H4, mode="without_replacement"),
                                  SortedSplitAgnostic(H4, mode="sorted"),
                                  SortedSplitAgnostic(H4, mode="positives_first"),
                                  FullClassAgnostic(H4, mode="full_class"),
                                  FullClassAgnostic(H4, mode="d_points")],
                         ids=["bug8_all", "bug8_prefix", "bug8_no_replacement", "bug13_sorted",
                              "bug13_positives", "bug14_full_class", "bug14_d_points"])
def test_non_privacy_bugs_stay_private(mech: Any, dp_audit: Any, dp_record: Any) -> None:
    """Variants that are NOT privacy violations (exact loss ≤ 1 + ln 4e on the BUG-1 pair,
    the P-changing pair and 40 random pairs, |D| = 27; the worst pair audited at PureDP(4)).

    * BUG-8 (no subsampling / first |D|/9 rows / |D|/9 rows without replacement): A is still a
      1-DP learner on the relabeled D̃, so Lemma 5.3 applies unchanged (worst 1.47 for "all",
      0.56 for "prefix", 0.38 without replacement); only the adversarial-learner utility of
      footnote 8 is lost (caught by the spec-conformance unit test in
      tests/closure/test_buggy.py, not by privacy).
    * BUG-13 (sort-by-(x, y) or positives-first split, |D| = |S|/2): the lower halves of two
      neighbouring sorted multisets differ in at most one element, and the output depends on S
      only through D's multiset and S's support, so no extra leakage (worst 0.51).
    * BUG-14 (EM over all of H, or patterns on D's points): EM over a set that does not depend
      on the substituted T point — standard ε = 1 EM (worst 0.38)."""
    worst, (d, dp) = worst_pair(mech, _pipeline_pairs())
    assert worst <= PROOF_EPS
    r = dp_audit(mech, d, dp, PureDP(PAPER_EPS), samples=60_000)
    dp_record("closure_non_privacy_bug", {"variant": type(mech).__name__,
                                          "mode": getattr(mech, "mode"), "exact_worst": worst,
                                          "epsilon_lower": r.epsilon_lower})


# ----------------------------------------------------------------------------- BUG-10

@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
def test_bug10_reuse_not_visible_at_small_sizes(dp_record: Any) -> None:
    """BUG-10 (all rounds reuse D = first half of S): k-fold instead of parallel composition,
    but NOT detectable at exact-computation sizes: AND(thresholds, negated thresholds) on
    {0..3}, |D| = 9 (|Q| = 1), L-EM at ε_A ∈ {1, 8}: exact transcript loss over all 224
    neighbour pairs of the form (u)+17×(a) vs (v)+17×(a) stays ≤ ε_A′ + ln 4e (ε_A′ =
    amplified ε for 1 draw of 9): worst 0.44 vs 2.56 (ε_A = 1), 1.78 vs 8.19 (ε_A = 8); k = 3
    (MAJ) gave 1.94 vs 8.19. The relabel EM (ε = 1) is the bottleneck: a round leaks ≲ 1
    while the per-round bound is ≥ ln 4e ≈ 2.39, so a violation needs many rounds *and* a
    learner that releases the relabeled labels (notes: RR leaker, no subsampling)."""
    rows = {}
    for eps in (1.0, 8.0):
        bug = with_learner_epsilon(ReusingClosureLearn("and", (H4, negation(H4))), eps)
        bound = amplified_epsilon_with_replacement(eps, 1, 9) + LN4E
        worst = 0.0
        for u in [(x, y) for x in range(4) for y in (0, 1)]:
            for a in [(x, y) for x in range(4) for y in (0, 1)]:
                for v in [(x, y) for x in range(4) for y in (0, 1)]:
                    if u < v:
                        s1, s2 = [u] + [a] * 17, [v] + [a] * 17
                        worst = max(worst, privacy_loss(bug.pmf(s1), bug.pmf(s2)).epsilon)
        assert worst <= bound
        rows[str(eps)] = {"exact_worst": worst, "bound": bound}
    dp_record("bug10_reuse", rows)


# ----------------------------------------------------------------------------- BUG-15

@pytest.mark.claim(paper="004", ref="Lemma 5.3", kind="privacy", expect="violation")
def test_bug15_overleaking_learner(dp_counterexample: Any) -> None:
    """BUG-15: A claims (1, δ) but publishes S̃ w.p. 20δ (δ = 0.01): the exact pipeline law on
    D1 = [(0,1),(2,0)] vs D2 = [(3,1),(2,0)] (thresholds on 4 points, V = W = ∅) has
    δ(ε_A + 3) = 20δ = 0.2 > 4eδ = 0.1087. Finding: the notes' example leak 10δ is NOT
    caught by this test (δ(ε_A + 3) = 10δ < 4eδ ≈ 10.87δ): a leak factor above 4e is needed;
    the correct A (factor 1) gives exactly δ."""
    delta, eps_a = 0.01, 1.0
    d1, d2 = [(0, 1), (2, 0)], [(3, 1), (2, 0)]
    found = {}
    for factor in (1.0, 10.0, 20.0):
        inner = overleaking_rr(eps_a, delta, factor)
        exact = privacy_loss(relabel_and_learn_pmf(H4, d1, [], [], inner),
                             relabel_and_learn_pmf(H4, d2, [], [], inner))
        found[factor] = exact.delta(eps_a + 3)
        assert found[factor] == pytest.approx(factor * delta, abs=1e-12)
    assert found[1.0] <= 4 * math.e * delta and found[10.0] <= 4 * math.e * delta
    assert found[20.0] > 4 * math.e * delta
    dp_counterexample("bug15_overleak", {"delta_claimed": delta, "leak_factor": 20,
                                         "delta_at_eps_a_plus_3": found[20.0],
                                         "bound_4e_delta": 4 * math.e * delta,
                                         "factor10_delta": found[10.0]})


# ----------------------------------------------------------------------------- utility bugs



@pytest.mark.claim(paper="004", ref="Theorem 2.4", kind="utility", expect="violation")
def test_bug4_error_rate_score(dp_accuracy: Any, dp_record: Any) -> None:
    """BUG-4a: relabel score = error rate. Thresholds on {0..31}, target 1[x ≥ 16], flip noise
    η = 0.1, α = α_A = 0.05, β-terms 0.025, |D| from the derived chain: the relabel EM is ≈
    uniform over the 33 patterns, so error_μ(f) − Δ > 3α + 2α_A = 0.25 w.p. ≈ 0.32
    (12/33 if exactly uniform) > 0.1."""
    n, eta, alpha, alpha_a, b = 32, 0.1, 0.05, 0.05, 0.025
    h = thresholds(n)
    mech, lab = ErrorRateAgnostic(h), class_labels(h)
    d_size = agnostic_size(len(h), alpha, alpha_a, b)
    target = (np.arange(n) >= 16).astype(int)
    err_mu = eta + (1 - 2 * eta) * (lab != target).mean(1)
    delta = float(err_mu.min())
    cell_p = np.zeros((n, 2))
    cell_p[np.arange(n), target] = (1 - eta) / n
    cell_p[np.arange(n), 1 - target] = eta / n

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(size)
        for t in range(size):
            dc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
            tc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
            sup = int(sum(1 << int(x) for x in np.flatnonzero((dc + tc).sum(1))))
            out[t] = err_mu[mech.learn_counts(dc, sup, 1, rng)[0][0]] - delta
        return out

    r = dp_accuracy(trial, alpha=3 * alpha + 2 * alpha_a, beta=4 * b, trials=400)
    dp_record("bug4_error_rate", {"d_size": d_size, "failure_rate": r.failure_rate})






@pytest.mark.claim(paper="004", ref="Lemma 7.3", kind="utility", expect="violation")
def test_bug11_wrong_completion(dp_accuracy: Any, dp_record: Any) -> None:
    """BUG-11: score (17) completes with H_1 (thresholds) instead of H_2 (negated thresholds).
    AND on {0..15}, target [5, 11], α = 0.05, k = 2 (setup of the Lemma 7.3 test): AND of two
    thresholds is a threshold, so round 1 is indifferent among x ≥ a, a ≤ 5 (6 tied patterns)
    and the final error (5 − a)/16 exceeds 5α = 0.25 when a = 0, w.p. ≈ 1/6 > β = 0.1."""
    cl = WrongCompletionClosureLearn("and", (thresholds(16), negation(thresholds(16))))
    alpha, b = 0.05, 0.0125
    d_size = max(closure_round_size(cl, i, alpha, b) for i in range(2))
    target = ((np.arange(16) >= 5) & (np.arange(16) <= 11)).astype(int)
    r = dp_accuracy(closure_trial(cl, d_size, target), alpha=5 * alpha, beta=8 * b,
                    trials=1500)
    dp_record("bug11_wrong_completion", {"d_i": d_size, "failure_rate": r.failure_rate})


@pytest.mark.claim(paper="004", ref="Lemma 7.3", kind="utility", expect="violation")
def test_bug12_no_relabeling(dp_accuracy: Any, dp_record: Any) -> None:
    """BUG-12: A_i on the original labels. OR of two intervals on {0..11}, target
    [0,3] ∪ [8,11], α = 0.05, k = 2: [0,3], [8,11] and [0,11] each err on 4 points (tie), each
    round picks one independently, and G errs on 4/12 > 5α = 0.25 unless the two rounds pick
    the two halves (w.p. ≈ 2/9): failure ≈ 7/9 > β = 0.1."""
    cl = UnrelabeledClosureLearn("or", (intervals(12), intervals(12)))
    alpha, b = 0.05, 0.0125
    d_size = max(closure_round_size(cl, i, alpha, b) for i in range(2))
    target = ((np.arange(12) <= 3) | (np.arange(12) >= 8)).astype(int)
    r = dp_accuracy(closure_trial(cl, d_size, target), alpha=5 * alpha, beta=8 * b,
                    trials=300)
    dp_record("bug12_no_relabeling", {"d_i": d_size, "failure_rate": r.failure_rate})


@pytest.mark.claim(paper="004", ref="Lemma 7.2", kind="privacy")
def test_bug12_is_still_private(dp_record: Any) -> None:
    """BUG-12 is a utility bug only: without relabeling each round is A′ (1 draw of 9, L-EM at
    ε = 1) on its own chunk, so the transcript is amplified-ε-DP (≤ 0.175; worst found
    0.117): exact worst loss over 40 random pairs (|D_i| = 9, AND of thresholds / negated
    thresholds on {0..3})."""
    cl = UnrelabeledClosureLearn("and", (H4, negation(H4)))
    worst, _ = worst_pair(cl, random_pairs(4, 36, 40, seed=7))
    assert worst <= amplified_epsilon_with_replacement(1.0, 1, 9) + TOL
    dp_record("bug12_privacy", {"exact_worst": worst})


def test_correct_pipeline_reference_values() -> None:
    """Contrast for the BUG-8/13/14 findings: the correct pipeline's worst exact loss on the
    same pairs is also ≤ 1 + ln 4e."""
    worst, _ = worst_pair(PrivateAgnostic(H4), _pipeline_pairs()[:6])
    assert worst <= PROOF_EPS
