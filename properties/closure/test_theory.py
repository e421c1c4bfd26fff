"""Seed 004: Example 5.2 (matched sensitivity of the #errors score, and of score (17)) and
Theorem 3.8 (realizable uniform convergence with the explicit constant 80).

Example 5.2 is a deterministic property (Hypothesis, exact integer scores). Theorem 3.8 is
checked by Monte Carlo through ``dp_accuracy``: one trial draws S ~ Pᵐ (uniform P on a small
domain) at the theorem's smallest m and reports 1 iff the bad event
``∃ c, h ∈ H: error_P(h, c) > α and error_S(h, c) < α/2`` occurs (computed exactly over all
pairs of the class); the claim is "bad event w.p. ≤ β".

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Definition 5.1, Example 5.2, Algorithm 5 score
(17), Theorem 3.8 (Blumer, Ehrenfeucht, Haussler, Warmuth 1989).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from algorithms.closure import class_labels, completion_scores, counts_of
from algorithms.closure.learners import mistakes
from algorithms.concepts import ConceptClass, from_masks, intervals, thresholds, vc_dimension

SETTINGS = settings(derandomize=True, deadline=None, max_examples=200)
#: claim tests with mutant cases: a failure is reported unshrunk (shrinking a mutant's
#: counterexample costs 10-30 s and decides nothing)
NO_SHRINK = settings(SETTINGS, phases=(Phase.explicit, Phase.reuse, Phase.generate))


@st.composite
def classes(draw: st.DrawFn, max_n: int = 5, max_size: int = 12) -> ConceptClass:
    n = draw(st.integers(1, max_n))
    return from_masks(n, draw(st.lists(st.integers(0, (1 << n) - 1), min_size=1,
                                       max_size=max_size)))


def _example(n: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.tuples(st.integers(0, n - 1), st.integers(0, 1))


def _agree_on(h: int, g: int, s: list[tuple[int, int]]) -> bool:
    return all((h >> x & 1) == (g >> x & 1) for x, _ in s)


# ----------------------------------------------------------------------------- Example 5.2

@pytest.mark.claim(paper="004", ref="Example 5.2", kind="privacy")
@pytest.mark.parametrize("variant", [
    "reference", pytest.param("score_times_size", marks=pytest.mark.mutant("score_times_size"))])
@NO_SHRINK
@given(data=st.data())
def test_errors_score_matched_sensitivity(variant: str, data: st.DataObject) -> None:
    """Definition 5.1 with k = 1 for q(S, h) = #errors: for random H, S, (x, y), (x′, y′) and
    every pair h, h′ ∈ H agreeing on S's points, |q(S ∪ {(x,y)}, h) − q(S ∪ {(x′,y′)}, h′)|
    ≤ 1 (exact integers, all pairs of H). Also the standard sensitivity (h = h′). Mutant
    BUG-4b: the score scaled up to |S|·#errors (near-ERM; sensitivity |S|)."""
    h = data.draw(classes())
    s = data.draw(st.lists(_example(h.n), max_size=8))
    e1, e2 = data.draw(_example(h.n)), data.draw(_example(h.n))
    scale = 1 if variant == "reference" else len(s) + 1
    q1, q2 = scale * mistakes(h, [*s, e1]), scale * mistakes(h, [*s, e2])
    for i, hi in enumerate(h.masks):
        for j, hj in enumerate(h.masks):
            if _agree_on(hi, hj, s):
                assert abs(int(q1[i]) - int(q2[j])) <= 1


#: issue-27 mutants of the #errors score: the score scaled by 1.25 (a constant factor) and the
#: added example counted twice (a reused record / off-by-one)
ERRORS_SCORE_MUTANTS = ("score_times_1_25", "score_added_twice")


def _score(variant: str, h: ConceptClass, s: list[tuple[int, int]],
           e: tuple[int, int]) -> np.ndarray:
    """q(S ∪ {e}, ·) over H from the code under test (``mistakes``), or a mutant of it."""
    if variant == "score_added_twice":
        return np.asarray(mistakes(h, [*s, e, e]), float)
    scale = 1.25 if variant == "score_times_1_25" else 1.0
    return scale * np.asarray(mistakes(h, [*s, e]), float)


@pytest.mark.claim(paper="004", ref="Example 5.2", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", *(pytest.param(v, marks=pytest.mark.mutant(v))
                                                   for v in ERRORS_SCORE_MUTANTS)])
def test_errors_score_matched_sensitivity_exhaustive(variant: str, dp_record: Any,
                                                     dp_sensitivity: Any) -> None:
    """Example 5.2 (Definition 5.1, k = 1) exhaustively, issue 27: every class on X = {0, 1}
    (15), every S over X × {0,1} with |S| ≤ 4 (as multisets: order does not enter #errors, 70),
    every pair of added examples (16) and every pair h, h′ agreeing on S's points. The worst
    |q(S ∪ {(x,y)}, h) − q(S ∪ {(x′,y′)}, h′)| is exactly 1 = k (attained, e.g. S = ∅, h = h′
    erring on (x, y) only), so slack 1 and any inflation of the score is caught: detectable
    overspend 1 + 1e-9 (exact). Mutants: the score ×1.25 (worst 1.25) and the added example
    counted twice (worst 2)."""
    import itertools
    cells = [(x, y) for x in range(2) for y in range(2)]
    samples = [list(c) for k in range(5) for c in itertools.combinations_with_replacement(cells, k)]
    worst, witness = 0.0, None
    for masks in (m for k in range(1, 5) for m in itertools.combinations(range(4), k)):
        h = from_masks(2, masks)
        for s in samples:
            agree = np.array([[_agree_on(hi, hj, s) for hj in h.masks] for hi in h.masks])
            q = {e: _score(variant, h, s, e) for e in cells}
            for e1, e2 in itertools.product(cells, repeat=2):
                diff = np.where(agree, np.abs(q[e1][:, None] - q[e2][None, :]), 0.0)
                if diff.max() > worst:
                    i, j = np.unravel_index(int(diff.argmax()), diff.shape)
                    worst = float(diff.max())
                    witness = (masks, s, e1, e2, h.masks[i], h.masks[j])
    dp_record("example_5_2_exhaustive", {"variant": variant, "worst": worst,
                                         "witness": repr(witness)})
    if variant == "reference":
        assert worst == 1.0                      # k = 1 is attained: the bound is tight
        dp_sensitivity(loss=worst, bound=1.0, detectable_overspend=1.0 + 1e-9,
                       basis="exact worst matched-sensitivity difference of #errors over all "
                             "classes on 2 points, |S| <= 4, all added pairs and agreeing "
                             "h, h' = 1 = k; any score inflation c > 1 gives c")
    assert worst <= 1.0, f"matched sensitivity {worst} > 1 at {witness}"


@pytest.mark.claim(paper="004", ref="Example 5.2", kind="privacy")
@SETTINGS
@given(data=st.data())
def test_completion_score_matched_sensitivity(data: st.DataObject) -> None:
    """The same property for score (17) of A_ClosureLearn (k = 2, random G, classes, prefix):
    round i ∈ {0, 1}, q(S, π) = min over completions of #errors of G(h_{<i}, π, c_{>i}), for
    π, π′ ∈ H_i agreeing on S's points."""
    n = data.draw(st.integers(1, 4))
    h1 = data.draw(classes(max_n=n, max_size=6).filter(lambda c: c.n == n))
    h2 = data.draw(classes(max_n=n, max_size=6).filter(lambda c: c.n == n))
    table = tuple(data.draw(st.lists(st.integers(0, 1), min_size=4, max_size=4)))
    i = data.draw(st.integers(0, 1))
    s = data.draw(st.lists(_example(n), max_size=8))
    e1, e2 = data.draw(_example(n)), data.draw(_example(n))
    lab1, lab2 = class_labels(h1), class_labels(h2)
    if i == 0:
        pre, pats, rest, masks = np.zeros((0, n), np.int64), lab1, [lab2], h1.masks
    else:
        pre = lab1[data.draw(st.integers(0, len(h1) - 1))][None, :]
        pats, rest, masks = lab2, [], h2.masks
    arr = lambda rows: np.asarray(rows, np.int64).reshape(-1, 2)  # noqa: E731
    q1 = completion_scores(table, pre, pats, rest, counts_of(arr([*s, e1]), n))
    q2 = completion_scores(table, pre, pats, rest, counts_of(arr([*s, e2]), n))
    for a, ha in enumerate(masks):
        for b, hb in enumerate(masks):
            if _agree_on(ha, hb, s):
                assert abs(int(q1[a]) - int(q2[b])) <= 1


# ----------------------------------------------------------------------------- Theorem 3.8

def theorem_3_8_size(alpha: float, beta: float, vc: int) -> int:
    """``⌈(80/α)(VC ln(16/α) + ln(2/β))⌉`` (Theorem 3.8).

    References
    ----------
    Seed 004, Theorem 3.8.
    """
    return math.ceil(80 / alpha * (vc * math.log(16 / alpha) + math.log(2 / beta)))


def _bad_event_trial(cls: ConceptClass, alpha: float, m: int) -> Any:
    """Trial: S ~ Uniform(X)^m; 1.0 iff some disagreement region h Δ c (h, c ∈ H) has
    P-mass > α and empirical mass < α/2."""
    lab = class_labels(cls)
    dis = np.unique((lab[:, None, :] != lab[None, :, :]).reshape(-1, cls.n), axis=0)
    dis = dis[dis.mean(1) > alpha].astype(np.int64)        # error_P(h, c) > α (uniform P)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        counts = rng.multinomial(m, np.full(cls.n, 1 / cls.n), size=size)
        emp = counts @ dis.T / m                           # error_S(h, c) for every region
        return (emp < alpha / 2).any(axis=1).astype(float)

    return trial


@pytest.mark.claim(paper="004", ref="Theorem 3.8", kind="generalization")
@pytest.mark.parametrize("cls, alpha, beta", [(thresholds(20), 0.2, 0.05),
                                              (thresholds(20), 0.5, 0.2),
                                              (intervals(16), 0.25, 0.1)],
                         ids=["thresholds20-a0.2", "thresholds20-a0.5", "intervals16-a0.25"])
def test_uniform_convergence_explicit_constant(cls: ConceptClass, alpha: float, beta: float,
                                               dp_accuracy: Any, dp_record: Any) -> None:
    """At m = ⌈(80/α)(VC ln(16/α) + ln(2/β))⌉ (VC computed by brute force), uniform P on the
    domain: P[∃ c, h: error_P(h, c) > α, error_S(h, c) < α/2] ≤ β (failure = bad event).
    Also recorded: the empirical bad-event rate at m/20, m/40 (how loose the constant is)."""
    vc = vc_dimension(cls)
    m = theorem_3_8_size(alpha, beta, vc)
    r = dp_accuracy(_bad_event_trial(cls, alpha, m), alpha=0.5, beta=beta, trials=4000)
    rng = np.random.default_rng(38)
    loose = {str(m // f): float(_bad_event_trial(cls, alpha, max(m // f, 1))(2000, rng).mean())
             for f in (20, 40)}
    dp_record("theorem_3_8", {"vc": vc, "m": m, "failure_rate": r.failure_rate,
                              "rate_at_smaller_m": loose})
