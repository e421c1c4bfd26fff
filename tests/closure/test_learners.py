"""Unit tests of :mod:`algorithms.closure.learners` (seed 004: Algorithm 1, Lemma 3.12,
A_Relabel's pattern choice, Claim 5.4 sizes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from algorithms.closure.learners import (ExponentialLearner, SubsampledLearner, em_tail_bound,
                                         label_counts, labelled_sample, mistakes)
from algorithms.closure.relabel_pmf import (LabelRandomizedResponse, claim_5_4_size,
                                            claim_5_4_size_half, relabel_and_learn_pmf,
                                            relabel_pattern_pmf, relabel_patterns)
from algorithms.concepts import from_masks, intervals, thresholds
from algorithms.mechanisms.subsampling import Subsample
from dpcheck.errors import InvalidArgument

S = [(0, 1), (1, 0), (2, 1), (2, 1), (3, 0)]


def test_mistakes_brute_force() -> None:
    h = intervals(4)
    want = [sum((m >> x & 1) != y for x, y in S) for m in h.masks]
    assert mistakes(h, S).tolist() == want
    assert label_counts(S, 4).tolist() == [[0, 1], [1, 0], [0, 2], [1, 0]]
    assert labelled_sample([], 3).shape == (0, 2)


def test_pmf_is_the_closed_form() -> None:
    h, eps = thresholds(4), 0.7
    q = mistakes(h, S)
    w = np.exp(-eps * q / 2)
    pmf = ExponentialLearner(h, eps).pmf(S)
    assert list(pmf) == list(h.masks)
    assert np.allclose(list(pmf.values()), w / w.sum())
    buggy = ExponentialLearner(h, eps, bug="no-half").pmf(S)
    assert np.allclose(list(buggy.values()), np.exp(-eps * q) / np.exp(-eps * q).sum())
    sign = ExponentialLearner(h, eps, bug="sign").pmf(S)
    assert np.allclose(list(sign.values()), np.exp(eps * q / 2) / np.exp(eps * q / 2).sum())
    assert ExponentialLearner(h, eps, bug="no-half").true_epsilon == 2 * eps


def test_large_scores_stay_finite() -> None:
    s = [(0, 1)] * 20_000 + [(1, 0)] * 5
    pmf = ExponentialLearner(thresholds(2), 1.0).pmf(s)
    assert math.isclose(sum(pmf.values()), 1.0) and all(np.isfinite(list(pmf.values())))


def test_sampler_matches_pmf() -> None:
    h = intervals(3)
    learner = ExponentialLearner(h, 1.0)
    pmf = learner.pmf(S[:3])
    out = learner.sample(S[:3], 40_000, np.random.default_rng(5))
    counts = np.array([(out == m).sum() for m in pmf])
    assert counts.sum() == out.size
    assert chisquare(counts, 40_000 * np.array(list(pmf.values()))).pvalue > 1e-4


def test_tail_and_bound() -> None:
    learner = ExponentialLearner(thresholds(4), 1.0)
    q = learner.scores(S)
    p = np.array(list(learner.pmf(S).values()))
    assert learner.tail(S, 0) == pytest.approx(1.0)
    assert learner.tail(S, 1) == pytest.approx(p[q >= q.min() + 1].sum())
    assert em_tail_bound(5, 1.0, 2.0) == pytest.approx(5 * math.exp(-1))


def test_subsampled_pmf_matches_index_enumeration() -> None:
    """The multinomial pmf equals :class:`Subsample`'s enumeration of all n^m index tuples."""
    inner = ExponentialLearner(thresholds(3), 1.5)
    for m in (1, 2):
        data = [(0, 1), (1, 0), (2, 1), (1, 1), (0, 0), (2, 1), (2, 0), (1, 0), (0, 1)] * m
        ours = SubsampledLearner(inner, m).pmf(data)
        ref = Subsample(inner, m, replace=True).pmf(data)
        assert set(ours) == set(ref)
        assert all(ours[k] == pytest.approx(ref[k], abs=1e-12) for k in ref)


def test_subsampled_sampler_matches_pmf() -> None:
    a = SubsampledLearner(ExponentialLearner(thresholds(2), 2.0), 2)
    data = [(0, 0), (1, 1)] * 9
    pmf = a.pmf(data)
    out = a.sample(data, 30_000, np.random.default_rng(11))
    counts = np.array([(out == m).sum() for m in pmf])
    assert counts.sum() == out.size
    assert chisquare(counts, 30_000 * np.array(list(pmf.values()))).pvalue > 1e-4


def test_relabel_patterns_and_pmf() -> None:
    h = thresholds(6)
    d, t = [(1, 1), (4, 0)], [(2, 1)]
    pats = relabel_patterns(h, d, t)  # restrictions to P = {1, 2, 4}
    assert set(pats.masks) == {0b10110, 0b10100, 0b10000, 0}
    pmf = relabel_pattern_pmf(h, d, t)
    assert set(pmf) == set(pats.masks) and sum(pmf.values()) == pytest.approx(1.0)
    out = relabel_and_learn_pmf(h, d, [(2, 0)], [], LabelRandomizedResponse(1.0).pmf)
    assert sum(out.values()) == pytest.approx(1.0)
    assert {vt for _, vt in out} <= {((2, 0),), ((2, 1),)}


def test_rr_pmf() -> None:
    pmf = LabelRandomizedResponse(math.log(3)).pmf([(0, 1), (1, 0)])
    assert pmf[(1, 0)] == pytest.approx(9 / 16) and pmf[(0, 1)] == pytest.approx(1 / 16)


def test_claim_sizes() -> None:
    assert claim_5_4_size(0.5, 0.1, 0, 10) == pytest.approx(4 * math.log(10))
    want = 4 * math.log(10) + 4 * math.log(10 * math.e)
    assert claim_5_4_size(0.5, 0.1, 1, 10) == pytest.approx(want)
    want = 8 * math.log(10) + 20 * math.log(40 * math.e)
    assert claim_5_4_size_half(0.5, 0.1, 1) == pytest.approx(want)


@pytest.mark.parametrize("call", [
    lambda: ExponentialLearner(thresholds(2), 0.0),
    lambda: ExponentialLearner(thresholds(2), 1.0, bug="other"),
    lambda: ExponentialLearner(from_masks(2, []), 1.0),
    lambda: ExponentialLearner("H", 1.0),  # type: ignore[arg-type]
    lambda: mistakes(thresholds(2), [(2, 0)]),
    lambda: mistakes(thresholds(2), [(0, 2)]),
    lambda: mistakes(thresholds(2), [(0.5, 1)]),
    lambda: mistakes(thresholds(2), "ab"),
    lambda: ExponentialLearner(thresholds(2), 1.0).tail([(0, 1)], "x"),
    lambda: em_tail_bound(0, 1.0, 1.0),
    lambda: SubsampledLearner(object(), 1),
    lambda: SubsampledLearner(ExponentialLearner(thresholds(2), 1.0), 0),
    lambda: SubsampledLearner(ExponentialLearner(thresholds(2), 1.0), 1).pmf([(0, 1)] * 8),
    lambda: SubsampledLearner(ExponentialLearner(thresholds(9), 1.0), 30).pmf(
        [(x, y) for x in range(9) for y in (0, 1)] * 15),
    lambda: relabel_and_learn_pmf(thresholds(2), [(0, 1)], [], [], None),  # type: ignore[arg-type]
    lambda: LabelRandomizedResponse(-1.0),
    lambda: claim_5_4_size(1.5, 0.1, 1, 10),
    lambda: claim_5_4_size_half(0.5, 0.0, 1),
])
def test_bad_input(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgument):
        call()
