"""Tests of algorithms.mechanisms.selection: exact pmfs, samplers against closed forms, amplification bounds.

Goodness-of-fit tests use fixed seeds and reject at ``LEVEL = 1e-6``; every one is paired with a
deliberately wrong sampler that the same test rejects. Amplification bounds are checked against
exact ε from :func:`dpcheck.exact.privacy_loss` on tiny discrete inner mechanisms.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, RandomizedResponse
from algorithms.mechanisms.selection import ExponentialMechanism, ReportNoisyMax, ScoreNeighbours
from algorithms.mechanisms.subsampling import (
    Subsample,
    amplified_epsilon_poisson,
    amplified_epsilon_with_replacement,
    amplified_epsilon_without_replacement,
)
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

LEVEL = 1e-6


def chi2_pvalue(samples: np.ndarray, probs: dict[Any, float]) -> float:
    """χ² goodness of fit after pooling outputs expected < 5 times into one cell."""
    keys = list(probs)
    index = {k: i for i, k in enumerate(keys)}
    observed = np.zeros(len(keys))
    for value, count in zip(*np.unique(samples, return_counts=True)):
        observed[index[value.item()]] += count  # KeyError: sampler left the support
    expected = samples.size * np.array([probs[k] for k in keys])
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    keep = exp > 0
    obs, exp = obs[keep], exp[keep]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


class CountRR:
    """Randomized response over {0..m} on the count of a 0/1 dataset: exactly ε-DP (replace)."""

    def __init__(self, epsilon: float, m: int) -> None:
        self.rr, self.true_epsilon = RandomizedResponse(epsilon, m + 1), epsilon

    def pmf(self, data: Any) -> dict[int, float]:
        return self.rr.pmf([int(sum(data))])

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        return self.rr.sample([int(sum(data))], size, rng)


class ClampedGeometric:
    """clip(count + two-sided geometric, 0, hi): post-processing of GeometricSum, exactly ε-DP."""

    def __init__(self, epsilon: float, hi: int) -> None:
        self.epsilon, self.hi, self.true_epsilon = epsilon, hi, epsilon

    def pmf(self, data: Any) -> dict[int, float]:
        a, c = math.exp(-self.epsilon), int(sum(data))
        inner = (1 - a) / (1 + a)
        out = {o: inner * a ** abs(o - c) for o in range(1, self.hi)}
        out[0], out[self.hi] = a**c / (1 + a), a ** (self.hi - c) / (1 + a)
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.clip(GeometricSum(self.epsilon).sample(list(data), size, rng), 0, self.hi)


# ----------------------------------------------------------------------------- exponential mech.

SCORE_SETS = [[0.0, 1.0, 2.0, 3.0, 4.0], [1e6, 1e6 + 3.5, 1e6 - 7.0], [-1e6, -1e6 + 2.0, -1e6],
              [5.0], [0.0, 0.0, 0.0, 0.0], [-30.0, 12.5, 0.25, 40.0, 39.0, -1.0]]


@pytest.mark.parametrize("scores", SCORE_SETS)
@pytest.mark.parametrize(("epsilon", "sensitivity", "monotone"),
                         [(0.1, 1.0, False), (1.0, 2.0, False), (3.0, 1.0, True)])
def test_em_pmf_matches_independent_computation(
    scores: list[float], epsilon: float, sensitivity: float, monotone: bool
) -> None:
    mech = ExponentialMechanism(epsilon, sensitivity, monotone=monotone)
    c = epsilon / sensitivity / (1 if monotone else 2)
    top = max(scores)
    weights = [math.exp(c * (s - top)) for s in scores]
    z = math.fsum(weights)
    pmf = mech.pmf(scores)
    assert list(pmf) == list(range(len(scores)))
    for i, w in enumerate(weights):
        assert pmf[i] == pytest.approx(w / z, rel=1e-13, abs=1e-300)
    assert math.fsum(pmf.values()) == pytest.approx(1.0, abs=1e-14)
    assert np.isfinite(mech.log_probabilities(scores)).all()


@pytest.mark.parametrize("shift", [1e6, -1e6, 1e9])
def test_em_is_shift_invariant_at_huge_scores(shift: float) -> None:
    mech, base = ExponentialMechanism(0.5), [0.0, 3.0, -2.0, 7.0]
    moved = mech.log_probabilities([shift + s for s in base])
    assert np.isfinite(moved).all()
    np.testing.assert_allclose(moved, mech.log_probabilities(base), rtol=0, atol=1e-12)
    with pytest.raises(OverflowError):  # what log-space normalisation avoids
        math.exp(0.25 * 1e6)


def test_em_sampler_matches_pmf_and_wrong_epsilon_is_rejected() -> None:
    scores = [0.0, 1.0, 2.0, 4.0, -3.0]
    mech = ExponentialMechanism(1.0)
    out = mech.sample(scores, 200_000, np.random.default_rng(3))
    assert out.dtype == np.int64 and out.shape == (200_000,)
    assert chi2_pvalue(out, mech.pmf(scores)) > LEVEL
    wrong = ExponentialMechanism(1.1).sample(scores, 200_000, np.random.default_rng(3))
    assert chi2_pvalue(wrong, mech.pmf(scores)) < LEVEL


def test_em_zero_probability_candidates_are_never_sampled() -> None:
    mech = ExponentialMechanism(1.0)
    scores = [-1e6, 0.0, -1e6, 0.0, -1e6]
    out = mech.sample(scores, 100_000, np.random.default_rng(0))
    assert set(np.unique(out).tolist()) == {1, 3}


def test_em_score_callable_equals_score_vector() -> None:
    def votes(data: list[int]) -> np.ndarray:
        return np.bincount(data, minlength=4)

    data = [0, 1, 1, 3, 3, 3]
    mech = ExponentialMechanism(0.7, score=votes)
    assert mech.pmf(data) == ExponentialMechanism(0.7).pmf([1, 2, 0, 3])
    a = mech.sample(data, 50, np.random.default_rng(9))
    b = ExponentialMechanism(0.7).sample([1, 2, 0, 3], 50, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)


def test_em_monotone_flag_needs_monotone_neighbours() -> None:
    mech, s = ExponentialMechanism(1.0, monotone=True), [0.0, 30.0, 30.0]
    mono = privacy_loss(mech.pmf(s), mech.pmf([1.0, 30.0, 30.0])).epsilon
    both = privacy_loss(mech.pmf(s), mech.pmf([1.0, 29.0, 29.0])).epsilon
    assert mono <= 1.0 + 1e-12 and 1.9 < both <= 2.0 + 1e-12


# ----------------------------------------------------------------------------- report-noisy-max


def test_rnm_gumbel_index_is_the_exponential_mechanism() -> None:
    scores = [0.0, 10.0, 20.0, 25.0, 5.0]
    out = ReportNoisyMax(0.1, noise="gumbel").sample(scores, 200_000, np.random.default_rng(1))
    assert chi2_pvalue(out, ExponentialMechanism(0.1).pmf(scores)) > LEVEL
    lap = ReportNoisyMax(0.1, noise="laplace").sample(scores, 200_000, np.random.default_rng(1))
    assert chi2_pvalue(lap, ExponentialMechanism(0.1).pmf(scores)) < LEVEL


def two_candidate_first_wins(noise: str, d: float, b: float) -> float:
    """P[argmax = 0] for scores (d, 0), d ≥ 0, noise scale b.

    Exponential: E1 − E0 ~ Laplace(b), so 1 − ½e^{−d/b}. Laplace: L1 − L0 has density
    (1 + |x|/b)e^{−|x|/b}/(4b), tail ½e^{−d/b}(1 + d/(2b)).
    """
    tail = 0.5 * math.exp(-d / b)
    return 1.0 - (tail if noise == "exponential" else tail * (1.0 + d / (2.0 * b)))


@pytest.mark.parametrize("noise", ["exponential", "laplace"])
@pytest.mark.parametrize("d", [0.0, 7.0, 20.0, 60.0])
def test_rnm_two_candidates_closed_form(noise: str, d: float) -> None:
    mech = ReportNoisyMax(0.1, noise=noise)
    out = mech.sample([d, 0.0], 400_000, np.random.default_rng(int(d) + 5))
    p0 = two_candidate_first_wins(noise, d, mech.scale)
    assert chi2_pvalue(out, {0: p0, 1: 1.0 - p0}) > LEVEL
    if d > 0:  # the other noise's closed form rejects this sampler
        other = two_candidate_first_wins("laplace" if noise == "exponential" else "exponential",
                                         d, mech.scale)
        assert chi2_pvalue(out, {0: other, 1: 1.0 - other}) < LEVEL


def value_cdf(noise: str, scores: list[float], b: float, t: np.ndarray) -> np.ndarray:
    """Exact CDF of max_i(q_i + noise_i): the product of the noise CDFs."""
    z = t[:, None] - np.asarray(scores)[None, :]
    if noise == "laplace":
        cdf = stats.laplace.cdf(z, scale=b)
    elif noise == "exponential":
        cdf = stats.expon.cdf(z, scale=b)
    else:
        cdf = stats.gumbel_r.cdf(z, scale=b)
    return cdf.prod(axis=1)


def slow_noisy_max_value(noise: str, scores: list[float], b: float, size: int,
                         rng: np.random.Generator) -> np.ndarray:
    """Reference: one Python iteration per output (tests only)."""
    draw = {"laplace": lambda: rng.laplace(0.0, b), "exponential": lambda: rng.exponential(b),
            "gumbel": lambda: rng.gumbel(0.0, b)}[noise]
    out = []
    for _ in range(size):
        out.append(max(q + draw() for q in scores))
    return np.array(out)


@pytest.mark.parametrize("noise", ["laplace", "exponential", "gumbel"])
def test_rnm_value_matches_exact_cdf_and_slow_reference(noise: str) -> None:
    scores = [0.0, 1.0, 1.0, 5.0, -2.0]
    mech = ReportNoisyMax(0.1, noise=noise, output="value")
    out = mech.sample(scores, 200_000, np.random.default_rng(2))
    assert out.dtype == np.float64
    cdf = lambda t: value_cdf(noise, scores, mech.scale, np.atleast_1d(t))  # noqa: E731
    assert stats.kstest(out, cdf).pvalue > LEVEL
    ref = slow_noisy_max_value(noise, scores, mech.scale, 20_000, np.random.default_rng(4))
    assert stats.ks_2samp(out[:20_000], ref).pvalue > LEVEL
    wrong = slow_noisy_max_value(noise, scores, mech.scale / 2, 20_000, np.random.default_rng(4))
    assert stats.ks_2samp(out[:20_000], wrong).pvalue < LEVEL
    assert stats.kstest(out + 1.0, cdf).pvalue < LEVEL


def test_rnm_true_epsilon() -> None:
    assert ReportNoisyMax(0.3).true_epsilon == 0.3
    assert ReportNoisyMax(0.1, output="value", k=5).true_epsilon == pytest.approx(0.25)
    assert ReportNoisyMax(0.1, output="value").true_epsilon == math.inf
    assert ReportNoisyMax(0.1, noise="exponential", output="value", k=5).true_epsilon == math.inf
    assert ReportNoisyMax(0.1, noise="gumbel", output="value", k=5).true_epsilon == math.inf
    assert ReportNoisyMax(0.5, sensitivity=2.0).scale == 8.0


def test_rnm_large_scores_and_chunking() -> None:
    mech = ReportNoisyMax(1.0)
    out = mech.sample([1e6, 1e6 + 30.0, 1e6 - 30.0], 1000, np.random.default_rng(0))
    assert (out == 1).all()
    wide = np.arange(2000.0)  # several chunks of rows for a long score vector
    big = ReportNoisyMax(1.0).sample(wide, 3000, np.random.default_rng(0))
    assert big.shape == (3000,) and big.min() > 1900
    assert ReportNoisyMax(1.0).sample([1.0, 2.0], 0, np.random.default_rng(0)).shape == (0,)


# ----------------------------------------------------------------------------- subsampling


def subset_sum_law(data: list[float], m: int, replace: bool) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the subsample sum (dyadic records): subsets, or an m-fold convolution."""
    if not replace:
        sums = [math.fsum(s) for s in itertools.combinations(data, m)]
        values, counts = np.unique(sums, return_counts=True)
        return values, counts / counts.sum()
    law = {0.0: 1.0}
    for _ in range(m):
        nxt: dict[float, float] = {}
        for total, p in law.items():
            for x in data:
                key = total + x  # dyadic records: exact
                nxt[key] = nxt.get(key, 0.0) + p / len(data)
        law = nxt
    return np.array(list(law)), np.array(list(law.values()))


@pytest.mark.parametrize(("data", "m", "replace"), [
    ([1, 0, 1, 1, 0], 3, False),  # subsets by rejection sampling
    ([1, 0, 1, 1, 0], 3, True),
    ([1, 0, 0, 1, 1, 0, 1, 0, 0, 1], 8, False),  # subsets by permutations
])
def test_subsample_general_path_matches_enumerated_pmf(
    data: list[int], m: int, replace: bool
) -> None:
    inner = CountRR(1.5, m)
    mech = Subsample(inner, m, replace=replace)
    pmf = mech.pmf(data)
    assert math.fsum(pmf.values()) == pytest.approx(1.0, abs=1e-14)
    out = mech.sample(data, 200_000, np.random.default_rng(6))
    assert chi2_pvalue(out, pmf) > LEVEL
    wrong = Subsample(inner, m - 1, replace=replace).sample(data, 200_000,
                                                           np.random.default_rng(6))
    assert chi2_pvalue(wrong, pmf) < LEVEL


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize(("data", "m"), [
    ([0.0, 1.0, 0.5, 0.5, 1.0, 0.25], 3),  # few distinct values: counts per value
    ([i / 16 for i in range(12)], 3),  # many: record indices (rejection sampling of subsets)
    ([i / 16 for i in range(10)], 8),  # many, large m: record indices (permutations)
])
def test_subsample_laplace_fast_path_matches_exact_mixture(
    data: list[float], m: int, replace: bool
) -> None:
    inner = LaplaceSum(2.0)
    sums, weights = subset_sum_law(data, m, replace)

    def cdf(t: np.ndarray) -> np.ndarray:
        z = (np.atleast_1d(t)[:, None] - sums) / 0.5  # Laplace(0.5) CDF, vectorised by hand
        half = 0.5 * np.exp(-np.abs(z))
        return np.where(z < 0, half, 1.0 - half) @ weights

    fast = Subsample(inner, m, replace=replace).sample(data, 200_000, np.random.default_rng(8))
    assert stats.kstest(fast, cdf).pvalue > LEVEL
    general = Subsample(inner.sample, m, replace=replace)  # a plain callable: no fast path
    distinct = len(data) ** m if replace else math.comb(len(data), m)
    slow = general.sample(data, 50_000 if distinct <= 1000 else 5_000, np.random.default_rng(8))
    assert stats.kstest(slow, cdf).pvalue > LEVEL
    assert stats.ks_2samp(fast, slow).pvalue > LEVEL
    other = Subsample(inner, m - 1, replace=replace).sample(data, 200_000,
                                                            np.random.default_rng(8))
    assert stats.kstest(other, cdf).pvalue < LEVEL


@pytest.mark.parametrize("replace", [False, True])
def test_subsample_geometric_fast_path_matches_exact_pmf(replace: bool) -> None:
    data, m = [1, 0, 1, 1, 0, 0, 1], 4
    inner = GeometricSum(0.7)
    weights: dict[int, float] = {}
    draws = list(itertools.product(data, repeat=m) if replace
                 else itertools.combinations(data, m))
    for s in draws:
        weights[sum(s)] = weights.get(sum(s), 0.0) + 1.0 / len(draws)
    support = np.arange(-60, 60 + m)
    pmf = sum(w * np.exp(inner.log_pmf([1] * c, support)) for c, w in weights.items())
    probs = dict(zip(support.tolist(), pmf.tolist()))
    out = Subsample(inner, m, replace=replace).sample(data, 200_000, np.random.default_rng(2))
    assert out.dtype == np.int64
    assert chi2_pvalue(out, probs) > LEVEL
    assert chi2_pvalue(out + 1, probs) < LEVEL


def test_subsample_calls_inner_once_per_distinct_subsample() -> None:
    seen: list[tuple[Any, int]] = []

    def inner(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        seen.append((data, size))
        return np.full(size, sum(data), dtype=np.int64)

    data = (3, 1, 4, 1, 5)
    out = Subsample(inner, 2).sample(data, 10_000, np.random.default_rng(0))
    assert len(seen) <= math.comb(5, 2) and sum(n for _, n in seen) == 10_000
    for sub, _ in seen:  # tuples in, original order kept
        assert isinstance(sub, tuple) and len(sub) == 2
        assert any(sub == (data[i], data[j]) for i, j in itertools.combinations(range(5), 2))
    counts = {v: int((out == v).sum()) for v in np.unique(out).tolist()}
    assert set(counts) == {sum(c) for c in itertools.combinations(data, 2)}
    arr = np.array([[0, 1], [2, 3], [4, 5]])
    rows = Subsample(lambda d, s, r: np.repeat(d[None], s, 0), 2).sample(
        arr, 5, np.random.default_rng(0))
    assert rows.shape == (5, 2, 2)


# ----------------------------------------------------------------------------- amplification


def exact_epsilon(mech: Any, d: Any, d_prime: Any) -> float:
    return privacy_loss(mech.pmf(d), mech.pmf(d_prime)).epsilon


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("n", [2, 4, 6])
def test_without_replacement_bound_holds_and_is_tight(epsilon: float, n: int) -> None:
    for m in range(1, n + 1):
        bound = amplified_epsilon_without_replacement(epsilon, m, n)
        for inner in (CountRR(epsilon, m), ClampedGeometric(epsilon, m + 1)):
            mech = Subsample(inner, m, replace=False, n=n)
            exact = [exact_epsilon(mech, [1] * j + [0] * (n - j), [1] * (j + 1) + [0] * (n - j - 1))
                     for j in range(n)]
            assert max(exact) <= bound + 1e-12
            assert exact[0] == pytest.approx(bound, rel=1e-9)  # tight at [0]*n vs [1]+[0]*(n-1)
            assert mech.true_epsilon == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize(("m", "n"), [(1, 2), (2, 3), (3, 4), (2, 6), (3, 6)])
def test_with_replacement_bound_holds_and_quoted_formula_fails(
    epsilon: float, m: int, n: int
) -> None:
    bound = amplified_epsilon_with_replacement(epsilon, m, n)
    mgf = m * math.log1p(math.expm1(epsilon) / n)  # ln E[e^{εK}], K ~ Bin(m, 1/n)
    quoted = math.log1p((1 - (1 - 1 / n) ** m) * math.expm1(epsilon))
    for inner in (CountRR(epsilon, m), ClampedGeometric(epsilon, m + 1)):
        mech = Subsample(inner, m, replace=True, n=n)
        exact = [exact_epsilon(mech, [1] * j + [0] * (n - j), [1] * (j + 1) + [0] * (n - j - 1))
                 for j in range(n)]
        assert max(exact) <= bound + 1e-12
    # the clamped geometric attains ln E[e^{εK}] on the first pair (output = hi)
    assert exact[0] == pytest.approx(mgf, rel=1e-9)
    if mgf <= epsilon:
        assert bound == pytest.approx(mgf, rel=1e-12)
    if m >= 2:
        assert exact[0] > quoted + 1e-6  # not a pure-DP bound once a record can repeat
    else:
        assert bound == pytest.approx(quoted, rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 3.0])
@pytest.mark.parametrize("rate", [0.1, 0.5, 0.9])
def test_poisson_bound_holds_and_is_tight(epsilon: float, rate: float) -> None:
    n, bound = 4, amplified_epsilon_poisson(epsilon, rate)
    rr = RandomizedResponse(epsilon, n + 2)

    def law(ones: int, zeros: int) -> dict[int, float]:
        out: dict[int, float] = {}
        for c in range(ones + 1):  # only sampled ones count
            w = stats.binom.pmf(c, ones, rate)
            for o, p in rr.pmf([c]).items():
                out[o] = out.get(o, 0.0) + w * p
        return out

    exact = [max(privacy_loss(law(j, n - j), law(j + 1, n - j)).epsilon,  # add a 1
                 privacy_loss(law(j, n - j), law(j, n - j + 1)).epsilon)  # add a 0
             for j in range(n + 1)]
    assert max(exact) <= bound + 1e-12
    assert exact[0] == pytest.approx(bound, rel=1e-9)


def test_amplification_edge_values() -> None:
    assert amplified_epsilon_without_replacement(1.0, 5, 5) == pytest.approx(1.0)
    assert amplified_epsilon_poisson(1.0, 1.0) == pytest.approx(1.0)
    assert amplified_epsilon_with_replacement(0.5, 3, 1) == pytest.approx(1.5)
    assert amplified_epsilon_with_replacement(3.0, 2, 2) <= 6.0
    assert Subsample(LaplaceSum(1.0), 2, replace=True).true_epsilon == pytest.approx(2.0)
    assert Subsample(LaplaceSum(1.0), 2).true_epsilon == pytest.approx(1.0)
    assert Subsample(LaplaceSum(1.0), 2, n=4).claim.epsilon == pytest.approx(
        math.log1p(0.5 * math.expm1(1.0)))
    assert Subsample(LaplaceSum(1.0), 2, n=40).pmf is None  # no inner pmf
    assert Subsample(CountRR(1.0, 9), 9, n=40).pmf is None  # too many subsets to enumerate


# ----------------------------------------------------------------------------- relation


def test_score_neighbours() -> None:
    rel = ScoreNeighbours()
    assert rel.are_neighbours([1.0, 1.0], [0.0, 2.0])
    assert not rel.are_neighbours([1.0, 1.0], [1.0, 1.0])
    assert not rel.are_neighbours([1.0, 1.0], [1.0, 2.5])
    assert not rel.are_neighbours([1.0], [1.0, 2.0])
    assert not ScoreNeighbours(monotone=True).are_neighbours([1.0, 1.0], [0.0, 2.0])
    assert ScoreNeighbours(monotone=True).are_neighbours([1.0, 1.0], [2.0, 2.0])
    bounded = ScoreNeighbours(low=0.0, high=2.0)
    assert not bounded.are_neighbours([0.0, 2.0], [-1.0, 2.0])
    with pytest.raises(InvalidArgument, match="not neighbours"):
        rel.check([0.0, 0.0], [0.0, 3.0])
    assert len(list(rel.neighbours([0.0, 0.0, 0.0]))) == 26
    assert len(list(ScoreNeighbours(monotone=True).neighbours([0.0, 0.0]))) == 6
    assert len(list(bounded.neighbours([0.0, 2.0]))) == 3
    for nb in rel.neighbours([5.0, 1.0]):
        assert rel.are_neighbours([5.0, 1.0], nb)
    pick = rel.random_neighbour([0.0, 1.0], rng=np.random.default_rng(0))
    assert rel.are_neighbours([0.0, 1.0], pick)
    assert rel.to_dict()["kind"] == "scores" and "1" in rel.describe() and rel.name


# ----------------------------------------------------------------------------- bad input


BAD = [
    lambda: ExponentialMechanism(-1.0),
    lambda: ExponentialMechanism(1.0, sensitivity=0.0),
    lambda: ExponentialMechanism(1.0, score=3),
    lambda: ExponentialMechanism(1.0, monotone=1),
    lambda: ExponentialMechanism(1.0).pmf([]),
    lambda: ExponentialMechanism(1.0).pmf([1.0, math.nan]),
    lambda: ExponentialMechanism(1.0).pmf([[1.0, 2.0]]),
    lambda: ExponentialMechanism(1.0).pmf("abc"),
    lambda: ExponentialMechanism(1.0, score=lambda d: [math.inf]).pmf([1]),
    lambda: ExponentialMechanism(1.0).sample([1.0], -1, np.random.default_rng(0)),
    lambda: ExponentialMechanism(1.0).sample([1.0], 3, 0),
    lambda: ReportNoisyMax(math.inf),
    lambda: ReportNoisyMax(1.0, noise="cauchy"),
    lambda: ReportNoisyMax(1.0, output="both"),
    lambda: ReportNoisyMax(1.0, k=0),
    lambda: ReportNoisyMax(1.0, k=3).sample([1.0, 2.0], 5, np.random.default_rng(0)),
    lambda: ReportNoisyMax(1.0).sample([True, False], 5, np.random.default_rng(0)),
    lambda: Subsample(5, 2),
    lambda: Subsample(LaplaceSum(1.0), 0),
    lambda: Subsample(LaplaceSum(1.0), 2, replace="yes"),
    lambda: Subsample(LaplaceSum(1.0), 5, n=3),
    lambda: Subsample(LaplaceSum(1.0), 3).sample([0.0, 1.0], 5, np.random.default_rng(0)),
    lambda: Subsample(LaplaceSum(1.0), 1, n=3).sample([0.0, 1.0], 5, np.random.default_rng(0)),
    lambda: Subsample(LaplaceSum(1.0), 1).sample([0.0, 2.0], 5, np.random.default_rng(0)),
    lambda: Subsample(LaplaceSum(1.0), 1).sample("ab", 5, np.random.default_rng(0)),
    lambda: Subsample(LaplaceSum(1.0), 1).sample([], 5, np.random.default_rng(0)),
    lambda: Subsample(lambda d, s, r: np.zeros(s + 1), 1).sample([1], 2, np.random.default_rng(0)),
    lambda: amplified_epsilon_without_replacement(1.0, 3, 2),
    lambda: amplified_epsilon_without_replacement(0.0, 1, 2),
    lambda: amplified_epsilon_with_replacement(1.0, 0, 2),
    lambda: amplified_epsilon_poisson(1.0, 0.0),
    lambda: amplified_epsilon_poisson(1.0, 1.5),
    lambda: ScoreNeighbours(sensitivity=-1.0),
    lambda: ScoreNeighbours(low=1.0, high=0.0),
    lambda: ScoreNeighbours(monotone="no"),
    lambda: ScoreNeighbours().check([1.0, "a"], [1.0, 2.0]),
    lambda: list(ScoreNeighbours().neighbours([0.0] * 13)),
    lambda: list(ScoreNeighbours().neighbours([0.0], domain=[1.0])),
]


@pytest.mark.parametrize("call", BAD)
def test_bad_parameters_raise_invalid_argument(call: Any) -> None:
    with pytest.raises(InvalidArgument):
        call()


def test_bad_parameter_messages_name_the_argument() -> None:
    with pytest.raises(InvalidArgument, match=r"epsilon=-1.0 must be > 0"):
        ExponentialMechanism(-1.0)
    with pytest.raises(InvalidArgument, match=r"noise='cauchy' must be one of"):
        ReportNoisyMax(1.0, noise="cauchy")
    with pytest.raises(InvalidArgument, match=r"m=5 must be <= n=3"):
        Subsample(LaplaceSum(1.0), 5, n=3)


@pytest.mark.parametrize("make", [
    lambda: (ExponentialMechanism(0.5), [0.0, 1.0, 3.0]),
    lambda: (ReportNoisyMax(0.5, noise="laplace"), [0.0, 1.0, 3.0]),
    lambda: (ReportNoisyMax(0.5, noise="exponential", output="value"), [0.0, 1.0, 3.0]),
    lambda: (Subsample(LaplaceSum(0.5), 2, replace=True), [0.0, 1.0, 0.5]),
    lambda: (Subsample(CountRR(0.5, 2), 2), [0, 1, 1]),
])
def test_determinism_for_fixed_seeds(make: Any) -> None:
    mech, data = make()
    a = mech.sample(data, 1000, np.random.default_rng(42))
    b = mech.sample(data, 1000, np.random.default_rng(42))
    c = mech.sample(data, 1000, np.random.default_rng(43))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
