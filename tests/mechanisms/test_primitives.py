"""Tests of algorithms.mechanisms.primitives: the samplers match their stated distributions.

Every goodness-of-fit test uses a fixed seed and rejects at the false-alarm level ``LEVEL = 1e-6``:
a correct sampler fails with probability ≤ 1e-6 per seed, and each deliberately mis-specified
sampler is shown to be rejected by the very same test at the same level.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, RandomizedResponse
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

LEVEL = 1e-6  # false-alarm probability of each goodness-of-fit test


def pooled_chisquare(observed: np.ndarray, expected: np.ndarray) -> float:
    """Chi-square p-value after merging adjacent cells until each expects ≥ 5 counts."""
    obs_cells, exp_cells, o_acc, e_acc = [], [], 0.0, 0.0
    for o, e in zip(observed, expected, strict=True):
        o_acc, e_acc = o_acc + o, e_acc + e
        if e_acc >= 5:
            obs_cells.append(o_acc)
            exp_cells.append(e_acc)
            o_acc = e_acc = 0.0
    obs_cells[-1] += o_acc
    exp_cells[-1] += e_acc
    exp = np.array(exp_cells)
    exp *= sum(obs_cells) / exp.sum()  # remove the ≤1e-15 truncated tail mass
    return float(stats.chisquare(obs_cells, exp).pvalue)


def laplace_pvalue(samples: np.ndarray, loc: float, scale: float) -> float:
    return float(stats.kstest(samples, stats.laplace(loc=loc, scale=scale).cdf).pvalue)


def geometric_pvalue(samples: np.ndarray, mech: GeometricSum, data: list[int]) -> float:
    total = sum(data)
    width = int(40 / mech.epsilon) + int(np.abs(samples - total).max()) + 1  # tail < e^-40
    values = np.arange(total - width, total + width + 1)
    expected = samples.size * np.exp(mech.log_pmf(data, values))
    observed = np.bincount(samples - values[0], minlength=values.size)
    return pooled_chisquare(observed, expected)


def rr_pvalue(samples: np.ndarray, mech: RandomizedResponse, data: list[int]) -> float:
    pmf = mech.pmf(data)
    expected = samples.size * np.array([pmf[j] for j in range(mech.k)])
    observed = np.bincount(samples, minlength=mech.k)
    return pooled_chisquare(observed, expected)


# ----------------------------------------------------------------------------- LaplaceSum


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1.0), (0.3, 2.5), (4.0, 0.1)])
def test_laplace_matches_distribution(epsilon: float, sensitivity: float) -> None:
    mech = LaplaceSum(epsilon, sensitivity)
    data = [0.0, sensitivity, sensitivity / 3]
    out = mech.sample(data, 200_000, np.random.default_rng(11))
    assert out.shape == (200_000,) and out.dtype == np.float64
    assert laplace_pvalue(out, sum(data), sensitivity / epsilon) > LEVEL


def test_laplace_misscaled_is_rejected() -> None:
    mech, data = LaplaceSum(1.0), [1.0, 0.5]
    wrong = 1.5 + np.random.default_rng(11).laplace(0.0, 1.1 * mech.scale, 200_000)
    assert laplace_pvalue(wrong, 1.5, mech.scale) < LEVEL
    shifted = mech.sample(data, 200_000, np.random.default_rng(11)) + 0.05
    assert laplace_pvalue(shifted, 1.5, mech.scale) < LEVEL


def test_laplace_properties_and_validation() -> None:
    mech = LaplaceSum(0.5, 2.0)
    assert mech.scale == 4.0 and mech.true_epsilon == 0.5 and mech.claim == PureDP(0.5)
    assert mech.sample([], 3, np.random.default_rng(0)).shape == (3,)
    assert mech.sample(np.array([1.0, 2.0]), 0, np.random.default_rng(0)).shape == (0,)
    for kwargs, match in [
        ({"epsilon": 0.0}, "epsilon=0.0 must be > 0"),
        ({"epsilon": -1.0}, r"epsilon=-1\.0 must be > 0"),
        ({"epsilon": math.inf}, "must be finite"),
        ({"epsilon": float("nan")}, "must not be NaN"),
        ({"epsilon": 1.0, "sensitivity": 0}, "sensitivity=0 must be > 0"),
        ({"epsilon": "1"}, "must be a real number"),
    ]:
        with pytest.raises(InvalidArgument, match=match):
            LaplaceSum(**kwargs)
    rng = np.random.default_rng(0)
    for data in [[2.5], [-0.1], [float("nan")], [[1.0]], "ab", [True], 3.0, {0: 1.0}]:
        with pytest.raises(InvalidArgument, match="data="):
            mech.sample(data, 5, rng)
    with pytest.raises(InvalidArgument, match="size=-1 must be >= 0"):
        mech.sample([1.0], -1, rng)
    with pytest.raises(InvalidArgument, match="size=2.0 must be an integer"):
        mech.sample([1.0], 2.0, rng)
    with pytest.raises(InvalidArgument, match="rng=0 must be a numpy.random.Generator"):
        mech.sample([1.0], 2, 0)


# --------------------------------------------------------------------------- GeometricSum


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 3.0])
def test_geometric_matches_distribution(epsilon: float) -> None:
    mech, data = GeometricSum(epsilon), [1, 0, 1, 1]
    out = mech.sample(data, 200_000, np.random.default_rng(22))
    assert out.shape == (200_000,) and out.dtype == np.int64
    assert geometric_pvalue(out, mech, data) > LEVEL


def test_geometric_misscaled_is_rejected() -> None:
    mech, data = GeometricSum(0.5), [1, 1]
    wrong = GeometricSum(0.45).sample(data, 200_000, np.random.default_rng(22))
    assert geometric_pvalue(wrong, mech, data) < LEVEL


def test_geometric_log_pmf() -> None:
    mech, d, d2 = GeometricSum(0.7), [1, 0, 1], [1, 0, 1, 1]
    values = np.arange(-200, 203)
    lp = mech.log_pmf(d, values)
    assert lp.shape == values.shape and lp.dtype == np.float64
    assert math.fsum(np.exp(lp)) == pytest.approx(1.0, abs=1e-12)
    a = math.exp(-0.7)
    assert lp[values == 5][0] == pytest.approx(math.log((1 - a) / (1 + a)) - 0.7 * 3, abs=1e-14)
    assert np.max(np.abs(lp - mech.log_pmf(d2, values))) == pytest.approx(0.7, abs=1e-12)
    assert mech.log_pmf(d, [2.5, 2.0])[0] == -np.inf
    assert mech.log_pmf(d, 2.0) == pytest.approx(math.log((1 - a) / (1 + a)))
    assert mech.log_pmf(d, [[1, 2]]).shape == (1, 2)
    with pytest.raises(InvalidArgument, match="values="):
        mech.log_pmf(d, [float("nan")])
    with pytest.raises(InvalidArgument, match="values="):
        mech.log_pmf(d, ["x"])


def test_geometric_properties_and_validation() -> None:
    mech = GeometricSum(1.5)
    assert mech.true_epsilon == 1.5 and mech.claim == PureDP(1.5)
    assert mech.sample([], 4, np.random.default_rng(0)).dtype == np.int64
    with pytest.raises(InvalidArgument, match="epsilon="):
        GeometricSum(0)
    rng = np.random.default_rng(0)
    for data in [[2], [-1], [0.5], [1.0], [True, False], ["1"], None]:
        with pytest.raises(InvalidArgument, match="data="):
            mech.sample(data, 5, rng)


# --------------------------------------------------------------------- RandomizedResponse


@pytest.mark.parametrize(("epsilon", "k", "x"), [(1.0, 2, 1), (0.5, 4, 2), (2.0, 10, 0)])
def test_rr_matches_distribution(epsilon: float, k: int, x: int) -> None:
    mech = RandomizedResponse(epsilon, k)
    out = mech.sample([x], 100_000, np.random.default_rng(33))
    assert out.shape == (100_000,) and out.dtype == np.int64
    assert out.min() >= 0 and out.max() < k
    assert rr_pvalue(out, mech, [x]) > LEVEL


def test_rr_wrong_keep_probability_is_rejected() -> None:
    mech = RandomizedResponse(1.0, 4)
    # keep probability e^1.1/(e^1.1 + 3) ≈ 0.500 instead of e/(e + 3) ≈ 0.475
    wrong = RandomizedResponse(1.1, 4).sample([2], 100_000, np.random.default_rng(33))
    assert rr_pvalue(wrong, mech, [2]) < LEVEL


def test_rr_pmf_and_exact_epsilon() -> None:
    for eps, k in [(0.1, 2), (1.0, 3), (5.0, 7), (30.0, 4)]:
        mech = RandomizedResponse(eps, k)
        pmf = mech.pmf([1])
        assert set(pmf) == set(range(k))
        assert math.fsum(pmf.values()) == pytest.approx(1.0, abs=1e-15)
        assert pmf[1] == pytest.approx(math.exp(eps) / (math.exp(eps) + k - 1), rel=1e-14)
        for x in range(k):
            for y in range(k):
                if x != y:
                    res = privacy_loss(mech.pmf([x]), mech.pmf([y]))
                    assert res.epsilon == pytest.approx(mech.true_epsilon, abs=1e-12)
                    assert res.holds(mech.claim)


def test_rr_properties_and_validation() -> None:
    mech = RandomizedResponse(1.0, 3)
    assert mech.true_epsilon == 1.0 and mech.claim == PureDP(1.0)
    for kwargs, match in [
        ({"epsilon": 1.0, "k": 1}, "k=1 must be >= 2"),
        ({"epsilon": 1.0, "k": 2.5}, "k=2.5 must be an integer"),
        ({"epsilon": 1.0, "k": True}, "k=True must be an integer"),
        ({"epsilon": -2.0, "k": 3}, r"epsilon=-2\.0 must be > 0"),
    ]:
        with pytest.raises(InvalidArgument, match=match):
            RandomizedResponse(**kwargs)
    rng = np.random.default_rng(0)
    for data in [[], [0, 1], [3], [-1], [1.0], [True], 1]:
        with pytest.raises(InvalidArgument, match="data="):
            mech.sample(data, 5, rng)
        with pytest.raises(InvalidArgument, match="data="):
            mech.pmf(data)


# -------------------------------------------------------------------------------- shared


SAMPLERS: list[tuple[object, list]] = [
    (LaplaceSum(1.0), [0.2, 0.9]),
    (GeometricSum(0.8), [0, 1, 1]),
    (RandomizedResponse(1.2, 5), [3]),
]


@pytest.mark.parametrize(("mech", "data"), SAMPLERS)
def test_determinism_for_fixed_seed(mech: object, data: list) -> None:
    sample: Callable[..., np.ndarray] = mech.sample  # type: ignore[attr-defined]
    a = sample(data, 1000, np.random.default_rng(7))
    b = sample(data, 1000, np.random.default_rng(7))
    c = sample(data, 1000, np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize(("mech", "data"), SAMPLERS)
def test_frozen(mech: object, data: list) -> None:
    with pytest.raises(AttributeError):
        mech.epsilon = 2.0  # type: ignore[attr-defined]
