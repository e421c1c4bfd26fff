"""Unit tests of ``algorithms/closure_buggy.py`` (seed 004 buggy variants): validation, that the
samplers agree with the exact ``pmf``, and that each wrapper really implements its bug."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.closure import ClosureLearn, EMLearner, PrivateAgnostic, counts_of
from algorithms.closure.buggy import (ErrorRateAgnostic, FullClassAgnostic, ReusingClosureLearn,
                                      SortedSplitAgnostic, UnrelabeledClosureLearn,
                                      UnsubsampledAgnostic, WrongCompletionClosureLearn,
                                      full_size_subsample, overleaking_rr, with_learner_epsilon)
from algorithms.closure.learners import ExponentialLearner
from algorithms.concepts import negation, thresholds
from dpcheck.errors import InvalidArgument

H4 = thresholds(4)
S54 = [(0, 1)] * 14 + [(3, 0)] * 13 + [(1, 1)] * 14 + [(2, 0)] * 13


def _freq(codes: np.ndarray) -> dict[int, float]:
    vals, cnt = np.unique(codes, return_counts=True)
    return {int(v): c / len(codes) for v, c in zip(vals, cnt)}


@pytest.mark.parametrize("mech", [UnsubsampledAgnostic(H4, mode="all"),
                                  UnsubsampledAgnostic(H4, mode="prefix"),
                                  UnsubsampledAgnostic(H4, mode="without_replacement"),
                                  SortedSplitAgnostic(H4), FullClassAgnostic(H4),
                                  FullClassAgnostic(H4, mode="d_points"), ErrorRateAgnostic(H4)])
def test_agnostic_variants_sampler_matches_pmf(mech: PrivateAgnostic) -> None:
    pmf = mech.pmf(S54)
    assert math.fsum(pmf.values()) == pytest.approx(1.0)
    freq = _freq(mech.sample(S54, 40_000, np.random.default_rng(1)))
    for k in set(pmf) | set(freq):
        assert abs(freq.get(k, 0.0) - pmf.get(k, 0.0)) < 0.015


@pytest.mark.parametrize("cl", [ReusingClosureLearn("and", (H4, negation(H4))),
                                WrongCompletionClosureLearn("and", (H4, negation(H4))),
                                UnrelabeledClosureLearn("and", (H4, negation(H4)))])
def test_closure_variants_sampler_matches_pmf(cl: ClosureLearn) -> None:
    s = S54[:36]
    pmf = cl.pmf(s)
    assert math.fsum(pmf.values()) == pytest.approx(1.0)
    freq = _freq(cl.sample(s, 40_000, np.random.default_rng(2)))
    for k in set(pmf) | set(freq):
        assert abs(freq.get(k, 0.0) - pmf.get(k, 0.0)) < 0.015


def test_bad_modes_rejected() -> None:
    for cls, mode in ((UnsubsampledAgnostic, "x"), (SortedSplitAgnostic, "x"),
                      (FullClassAgnostic, "x")):
        with pytest.raises(InvalidArgument):
            cls(H4, mode=mode)
    with pytest.raises(InvalidArgument):
        overleaking_rr(1.0, 0.2, 10.0)
    with pytest.raises(InvalidArgument):
        ReusingClosureLearn("and", (H4, negation(H4))).chunks(S54[:16])


def test_bug_mechanics() -> None:
    # BUG-10: all rounds see the same D and the support of all of S.
    ch = ReusingClosureLearn("and", (H4, negation(H4))).chunks(S54[:36])
    assert np.array_equal(ch[0][0], ch[1][0]) and ch[0][0].sum() == 18
    # BUG-13: the sorted split puts the smallest (x, y) rows into D.
    d, t = SortedSplitAgnostic(H4)._split(S54)
    assert d[:, 0].max() <= t[:, 0].min()
    # BUG-14: the full class has |H| = 5 candidates, patterns on D's points fewer.
    dc = counts_of(np.asarray(S54[:27]), 4)
    assert len(FullClassAgnostic(H4).relabel(dc, 0b1111)[0]) == 5
    assert len(FullClassAgnostic(H4, mode="d_points").relabel(dc, 0b1111)[0]) == 3
    # BUG-9: m = n draws of n.
    a = full_size_subsample(ExponentialLearner(thresholds(1), 1.0), 9)
    assert (a.m, a.ratio, a.n) == (9, 1, 9)
    # BUG-15: leak probability factor·δ.
    out = overleaking_rr(1.0, 0.01, 20.0)(((0, 1), (2, 0)))
    assert out[("leak", ((0, 1), (2, 0)))] == pytest.approx(0.2)
    assert math.fsum(out.values()) == pytest.approx(1.0)
    # learner ε override.
    cl = with_learner_epsilon(ClosureLearn("and", (H4, negation(H4))), 8.0)
    assert all(lr.epsilon == 8.0 for lr in cl.learners)


class _SpyLearner(EMLearner):
    """L-EM that records every subsample count table it is given."""

    seen: list[np.ndarray] = []

    def sample(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        _SpyLearner.seen.append(np.array(counts))
        return super().sample(counts, rng)


def _spy_q(mech_cls: type, **kw: str) -> np.ndarray:
    _SpyLearner.seen = []
    d = [(0, 1)] + [(3, 0)] * 26                     # x = 0 occurs once in D
    mech_cls(H4, learner=_SpyLearner(H4), **kw).sample(d + d, 20_000,
                                                       np.random.default_rng(3))
    return np.concatenate(_SpyLearner.seen)


def test_bug8_spec_conformance() -> None:
    """BUG-8 is invisible to privacy audits, so check the spec (notes §6): Q has ⌊|D|/9⌋ = 3
    rows drawn from D̃ *with* replacement — the single x = 0 row of D appears ≥ 2 times in Q
    in some runs (P ≈ 0.004) — and the without-replacement variant never does that."""
    q = _spy_q(PrivateAgnostic)
    assert (q.sum(axis=(1, 2)) == 3).all()
    assert (q[:, 0].sum(1) >= 2).sum() > 20
    assert (q[:, 1:3].sum() == 0)                    # Q ⊂ points of D (x ∈ {0, 3})
    q_bug = _spy_q(UnsubsampledAgnostic, mode="without_replacement")
    assert (q_bug.sum(axis=(1, 2)) == 3).all() and (q_bug[:, 0].sum(1) <= 1).all()
    q_all = _spy_q(UnsubsampledAgnostic, mode="all")
    assert (q_all.sum(axis=(1, 2)) == 27).all()
