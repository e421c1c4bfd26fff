"""Unit tests of issue 27's extremal inner learner (:class:`CellCountLearner`), of
``ClosureLearn.with_learners`` and of the subtle mutants (relabel EM / inner learner at 1.25 ε,
one more draw) of seed 004's relabeling pipelines."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.closure import ClosureLearn, EMLearner, PrivateAgnostic
from algorithms.closure.buggy import (InnerEps125ClosureLearn, OneMoreDrawClosureLearn,
                                      RelabelEps125ClosureLearn)
from algorithms.closure.relabel import CellCountLearner
from algorithms.concepts import negation, thresholds
from dpcheck.errors import InvalidArgument

H4 = thresholds(4)


@pytest.mark.parametrize("kw", [dict(cells=(), g0=1), dict(cells=((4, 0),), g0=1),
                                dict(cells=((0, 2),), g0=1), dict(cells=((0, 0),), g0=-1),
                                dict(cells=((0, 0),), g0=1, h_in=1, h_out=1),
                                dict(cells=((0, 0),), g0=1, h_in=5),
                                dict(cells=((0, 0),), g0=1, epsilon=0.0)])
def test_cell_count_learner_rejects_bad_input(kw: dict) -> None:
    with pytest.raises(InvalidArgument):
        CellCountLearner(H4, **kw)


@pytest.mark.parametrize("eps, g0", [(1.0, 0), (1.0, 2), (0.3, 3)])
def test_cell_count_learner_is_pure_dp_on_all_small_inputs(eps: float, g0: int) -> None:
    """Every pair of 3-record inputs over 3 cells at substitution distance 1: both outputs'
    probabilities within e^ε (pure ε-DP), and the law sums to 1 on two hypotheses."""
    lr = CellCountLearner(H4, ((0, 1), (3, 0)), g0, epsilon=eps)
    cells = [(0, 1), (3, 0), (1, 1)]

    def counts(ms: tuple[int, ...]) -> np.ndarray:
        c = np.zeros((4, 2), np.int64)
        for j in ms:
            c[cells[j]] += 1
        return c

    ms = list(itertools.combinations_with_replacement(range(3), 3))
    for a in ms:
        pa = np.exp(lr.log_pmf(counts(a)))
        assert pa.sum() == pytest.approx(1.0) and np.count_nonzero(pa) == 2
        for b in ms:
            if len(set(itertools.combinations(a, 2)) & set(itertools.combinations(b, 2))):
                pb = np.exp(lr.log_pmf(counts(b)))
                nz = pa > 0
                assert np.all(np.abs(np.log(pa[nz] / pb[nz])) <= eps + 1e-12)


def test_cell_count_learner_sampler_matches_law() -> None:
    lr = CellCountLearner(H4, ((0, 1),), 2, h_in=3, h_out=0)
    c = np.zeros((4, 2), np.int64)
    c[0, 1], c[3, 0] = 1, 2                           # g = 1 < g0 = 2: Pr[h_in] = 1/(1+e)
    out = lr.sample(np.broadcast_to(c, (40_000, 4, 2)), np.random.default_rng(5))
    assert set(np.unique(out)) == {0, 3}
    assert abs((out == 3).mean() - 1 / (1 + math.e)) < 0.01


def test_with_learners_and_mutant_knobs() -> None:
    classes = (thresholds(4), negation(thresholds(4)))
    cl = ClosureLearn("and", classes)
    ext = CellCountLearner(classes[1], ((0, 0),), 1)
    two = cl.with_learners([EMLearner(classes[0]), ext])
    assert two.learners[1] is not ext and two.learners[1].epsilon == 1.0
    assert InnerEps125ClosureLearn("and", classes).with_learners(
        [EMLearner(classes[0]), ext]).learners[1].epsilon == 1.25
    assert InnerEps125ClosureLearn("and", classes).learners[0].epsilon == 1.25
    assert RelabelEps125ClosureLearn("and", classes).relabel_epsilon == 1.25
    assert OneMoreDrawClosureLearn("and", classes).draws(27) == 4 and cl.draws(27) == 3
    with pytest.raises(InvalidArgument):
        cl.with_learners([EMLearner(classes[0])])
    with pytest.raises(InvalidArgument):
        cl.with_learners([EMLearner(classes[1]), ext])


@pytest.mark.parametrize("bug", ["relabel_eps_1_25", "inner_eps_1_25", "one_more_draw"])
def test_private_agnostic_subtle_mutants_sampler_matches_pmf(bug: str) -> None:
    """The new bugs act in both the sampler and the exact law (same law, 40k draws)."""
    d = [(0, 1)] * 14 + [(3, 0)] * 13
    mech = PrivateAgnostic(H4, learner=CellCountLearner(H4, ((0, 1),), 1), bug=bug)
    pmf = mech.pmf(d + d)
    out = mech.sample(d + d, 40_000, np.random.default_rng(1))
    for k, p in pmf.items():
        assert abs((out == k).mean() - p) < 0.012
    assert PrivateAgnostic(H4, bug="inner_eps_1_25").learner.epsilon == 1.25
    assert PrivateAgnostic(H4, bug="one_more_draw").draws(27) == 4
