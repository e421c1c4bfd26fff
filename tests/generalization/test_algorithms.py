"""Unit tests of ``algorithms.generalization``: samplers agree with their exact pmfs, closed
forms from the notes, compression-scheme properties (Definition 14), bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.generalization import (
    AdaptiveCuts,
    BootstrapCompiler,
    GenericPGLearner,
    LaplaceMajority,
    LargestPositive,
    Majority,
    SampleEncoding,
    StrangeNormal,
    SubsampleLearner,
    ThresholdPopulation,
    interval_predictions,
    labelled_loss,
    noisy_threshold_distribution,
    threshold_predictions,
)
from algorithms.generalization.theory import (
    hard_distribution,
    lemma36_alpha,
    theorem30_size,
    theorem40_lower,
)
from algorithms.generalization.thresholds import lemma17_epsilon
from dpcheck import IIDPopulation, InvalidArgument
from dpcheck.core.sampler_check import check_sampler


def _agrees(mech, data, size=40_000, seed=0) -> None:
    rng = np.random.default_rng(seed)
    out = np.asarray(mech.sample(data, size, rng))
    pmf = mech.pmf(data)
    for k, p in pmf.items():
        f = float(np.mean(out == k))
        assert abs(f - p) <= 5 * math.sqrt(max(p * (1 - p), 1e-12) / size) + 1e-9, (k, f, p)


def test_learner_sampler_matches_pmf():
    loss = labelled_loss(threshold_predictions(4))
    learner = GenericPGLearner(0.1, 2.0, loss)
    data = np.random.default_rng(1).integers(0, 8, 30)
    _agrees(learner, data)
    counts = np.tile(learner.counts(data), (40_000, 1))
    h = learner.sample_counts(counts, np.random.default_rng(2))
    p = learner.pmf(data)
    assert abs(np.mean(h == 0) - p[0]) < 0.02


def test_laplace_majority_sampler_and_log_space():
    mech = LaplaceMajority(0.5)
    _agrees(mech, np.array([1] * 6 + [0] * 5))
    big = mech.pmf_count(0, 2000)          # P[1] = ½e^{-500}: no underflow to a bad ratio
    assert big[1] > 0 and big[0] == pytest.approx(1.0)
    assert mech.pmf_count(5, 10)[1] == pytest.approx(0.5)


def test_compiler_pmfs():
    n = 6
    s = np.array([1, 1, 1, 0, 0, 0])
    pmf = BootstrapCompiler(StrangeNormal()).pmf(s)
    c = s.sum()
    assert pmf[1] == pytest.approx((c / n) ** (n // 2) * (1 - c / n) ** (n - n // 2))
    _agrees(BootstrapCompiler(StrangeNormal()), s, size=20_000)
    loss = labelled_loss(threshold_predictions(2))
    comp = BootstrapCompiler(GenericPGLearner(0.1, 0.5, loss))
    data = np.array([0, 1, 3, 3, 2])
    assert sum(comp.pmf(data).values()) == pytest.approx(1.0)
    _agrees(comp, data, size=20_000)


def test_deterministic_mechanisms():
    assert Majority().output([1, 1, 0]) == 1 and Majority().output([1, 0, 0, 1]) == 0
    assert StrangeNormal().output([1, 1, 0, 0]) == 1
    assert StrangeNormal().output([1, 0, 1, 0]) == 0
    assert StrangeNormal().output([0]) == 1          # n = 1: first block empty (notes §7)


def test_threshold_compression_is_a_compression_scheme():
    """Definition 14 on realizable samples: the released point is a sample point and h_{s+} is
    an ERM (zero empirical error)."""
    rng = np.random.default_rng(3)
    pop = ThresholdPopulation(50)
    for _ in range(200):
        s = pop.draw(rng)
        r = float(LargestPositive().sample(s, 1, rng)[0])
        assert r == -1.0 or r in s[:, 0]
        assert np.all((s[:, 0] <= r) == (s[:, 1] == 1))
        sub = float(SubsampleLearner(10).sample(s, 1, rng)[0])
        assert sub == -1.0 or sub in s[:, 0]
    out = AdaptiveCuts(3).sample(s, 2, rng)
    assert out.shape == (2, 3) and set(out[0][out[0] >= 0]) <= set(s[:, 0])
    assert SampleEncoding().sample(s, 1, rng).shape == (1, 51)


def test_closed_forms_from_the_notes():
    assert theorem30_size(11, 0.5, 0.1, 0.1) == 376_578
    ref = {100: 1.2495, 200: 0.7885, 1000: 0.2917, 10_000: 0.0823}
    for n, v in ref.items():
        assert lemma17_epsilon(n, 1, 0.05, form="proof") == pytest.approx(v, abs=5e-4)
    assert lemma17_epsilon(1000, 1, 0.05) == pytest.approx(0.2848, abs=5e-4)
    assert lemma36_alpha(1000, 0.5, 0.1, 0.0) == pytest.approx(0.0859, abs=5e-4)
    assert theorem40_lower(100, 0.5, 1e-4) == pytest.approx(0.539, abs=1e-3)
    assert theorem40_lower(100, 0.5, 0.01) is None      # β ≥ 1/900: the proof does not apply
    assert len(interval_predictions(4)) == 11
    w = noisy_threshold_distribution(5, 2, 0.1)
    assert w.sum() == pytest.approx(1.0)


def test_population_enumeration():
    pop = IIDPopulation(np.array([0, 1, 2]), [0.2, 0.3, 0.5], 3)
    assert sum(w for _, w in pop.enumerate()) == pytest.approx(1.0)
    assert sum(w for _, w in pop.enumerate(exchangeable=True)) == pytest.approx(1.0)
    with pytest.raises(InvalidArgument, match="limit"):
        list(pop.enumerate(limit=5))


def test_sampler_check_on_learner():
    loss = labelled_loss(threshold_predictions(3))
    learner = GenericPGLearner(0.1, 1.0, loss)
    d = np.array([0, 2, 4, 5, 1])
    rng = np.random.default_rng(0)
    rep = check_sampler(learner.sample(d, 50_000, rng), learner.pmf(d),
                        learner.sample(d, 50_000, rng), learner.pmf(d))
    assert not rep.mismatch


@pytest.mark.parametrize("make, name", [
    (lambda: GenericPGLearner(1.5, 0.5, np.zeros((2, 4))), "beta"),
    (lambda: GenericPGLearner(0.1, -1.0, np.zeros((2, 4))), "epsilon"),
    (lambda: LaplaceMajority(0.0), "epsilon"),
    (lambda: hard_distribution([]), "outputs"),
    (lambda: threshold_predictions(0), "m"),
])
def test_bad_input(make, name):
    with pytest.raises(InvalidArgument, match=name):
        make()


def test_generic_compression_learner_matches_largest_positive():
    from algorithms.generalization.thresholds import (
        CompressionLearner,
        largest_positive_index,
        release_max_point,
    )

    learner = CompressionLearner(largest_positive_index, release_max_point, k=1)
    rng = np.random.default_rng(7)
    pop = ThresholdPopulation(40)
    for _ in range(50):
        s = pop.draw(rng)
        assert learner.sample(s, 1, rng)[0, 0] == LargestPositive().sample(s, 1, rng)[0]
        assert len(learner.compress(s, rng)) <= 1
    too_many = CompressionLearner(lambda r, g: np.arange(3), release_max_point, k=1)
    with pytest.raises(InvalidArgument, match="k=1"):
        too_many.compress(pop.draw(rng), rng)
