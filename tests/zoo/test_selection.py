"""Tests of the selection / subsampling zoo entries: registration, ground truth, smoke audits.

Every stated true ε is re-derived here independently of the entry (exact pmfs through
:func:`dpcheck.exact.privacy_loss`, closed-form CDFs, numerical quadrature), and a smoke audit of
every entry checks that the auditor's lower bound never exceeds the truth.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpcheck
from algorithms.mechanisms.selection import ExponentialMechanism
from algorithms.zoo import ZooEntry, get
from algorithms.zoo.selection import EPS0, K, M_SUBSAMPLE, N_RECORDS, em_bounded_epsilon
from dpcheck.exact import privacy_loss

NAMES = [
    "report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_max_value_laplace",
    "noisy_max_value_exponential", "exponential_mechanism", "exponential_mechanism_large_scores",
    "subsampled_laplace_without_replacement", "subsampled_laplace_no_amplification_claimed_wrong",
    "subsampled_laplace_linear_calibration",
]
TIERS = {"report_noisy_max_laplace": "A", "report_noisy_max_exponential": "A",
         "noisy_max_value_laplace": "B", "noisy_max_value_exponential": "C",
         "exponential_mechanism": "A", "exponential_mechanism_large_scores": "A",
         "subsampled_laplace_without_replacement": "A",
         "subsampled_laplace_no_amplification_claimed_wrong": "B",
         "subsampled_laplace_linear_calibration": "B"}


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_registered_and_consistent(name: str) -> None:
    entry = get(name)
    assert isinstance(entry, ZooEntry) and entry.tier == TIERS[name]
    assert entry.description and entry.claim.delta == 0.0
    assert entry.claim.epsilon == pytest.approx(EPS0, rel=1e-12)
    for d, d_prime in entry.pairs:
        entry.relation.check(d, d_prime)
    if entry.tier == "A":
        assert entry.true_epsilon <= entry.claim.epsilon * (1 + 1e-12)
    elif entry.tier == "B":
        assert entry.claim.epsilon < entry.true_epsilon < math.inf
    else:
        assert entry.infinite
    if name.startswith(("report_noisy_max", "noisy_max")):
        assert set(entry.published) == {"dp_sniper_lr", "dp_sniper_mlp", "statdp_run1",
                                        "statdp_run2"}


@pytest.mark.parametrize("name", NAMES)
def test_smoke_audit_never_exceeds_the_truth(name: str) -> None:
    entry = get(name)
    result = dpcheck.audit(entry.mechanism, *entry.pairs[0], entry.claim, samples=200_000,
                           seed=0, relation=entry.relation,
                           float_features=entry.float_features)
    print(f"{name}: epsilon_lower={result.epsilon_lower:.4f} true={entry.true_epsilon:.4f}")
    if not entry.infinite:
        assert result.epsilon_lower <= entry.true_epsilon + 1e-9
    if result.exact_epsilon is not None:
        assert result.exact_epsilon <= entry.true_epsilon + 1e-12


# ----------------------------------------------------------------------------- exponential mech.


@pytest.mark.parametrize("name", ["exponential_mechanism", "exponential_mechanism_large_scores"])
def test_em_entry_truth_is_the_exact_pair_epsilon(name: str) -> None:
    entry = get(name)
    d, d_prime = entry.pairs[0]
    p, q = entry.mechanism.pmf(d), entry.mechanism.pmf(d_prime)
    assert all(math.isfinite(v) and v > 0 for v in [*p.values(), *q.values()])
    assert privacy_loss(p, q).epsilon == pytest.approx(entry.true_epsilon, rel=1e-12)
    small = get("exponential_mechanism").pairs[0][0]
    for i, v in entry.mechanism.pmf(small).items():
        assert p[i] == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize(("epsilon", "k", "width"), [(0.5, 3, 3), (1.0, 3, 2), (2.0, 2, 4)])
def test_em_bounded_worst_case_by_enumeration(epsilon: float, k: int, width: int) -> None:
    """Over every pair of integer score vectors in [0, width]^k at ℓ∞ distance ≤ 1 (corners)."""
    mech, worst = ExponentialMechanism(epsilon), 0.0
    pmfs = {s: mech.pmf(list(s)) for s in itertools.product(range(width + 1), repeat=k)}
    for s, p in pmfs.items():
        for v in itertools.product((-1, 0, 1), repeat=k):
            t = tuple(a + b for a, b in zip(s, v))
            if any(v) and t in pmfs:
                worst = max(worst, privacy_loss(p, pmfs[t]).epsilon)
    assert worst == pytest.approx(em_bounded_epsilon(epsilon, k, width), rel=1e-12)
    assert worst < epsilon


def test_em_entry_random_pairs_stay_below_truth() -> None:
    entry, rng = get("exponential_mechanism"), np.random.default_rng(0)
    for _ in range(300):
        d = rng.uniform(0, 40, K)
        d_prime = np.clip(d + rng.uniform(-1, 1, K), 0, 40)
        eps = privacy_loss(entry.mechanism.pmf(d), entry.mechanism.pmf(d_prime)).epsilon
        assert eps <= entry.true_epsilon + 1e-12


# ----------------------------------------------------------------------------- report-noisy-max


def argmax_probability(noise: str, scores: list[float], i: int, b: float) -> float:
    """P[argmax = i] by quadrature of density_i × Π_{j≠i} CDF_j."""
    dist = stats.laplace(scale=b) if noise == "laplace" else stats.expon(scale=b)
    others = [q for j, q in enumerate(scores) if j != i]

    def integrand(x: float) -> float:
        return float(dist.pdf(x - scores[i]) * np.prod(dist.cdf(x - np.array(others))))

    lo = scores[i] - (80 * b if noise == "laplace" else 0.0)
    pts = sorted({q for q in scores if lo < q})
    val, _ = integrate.quad(integrand, lo, max(scores) + 80 * b, points=pts, limit=500,
                            epsabs=0.0, epsrel=1e-12)
    return val


def test_rnm_exponential_is_exact_on_its_pair() -> None:
    entry = get("report_noisy_max_exponential")
    d, d_prime = entry.pairs[0]
    b = entry.mechanism.scale
    p = [argmax_probability("exponential", d, i, b) for i in range(K)]
    q = [argmax_probability("exponential", d_prime, i, b) for i in range(K)]
    assert p[0] == pytest.approx(1 / K, rel=1e-9)
    assert q[0] == pytest.approx(math.exp(-EPS0) / K, rel=1e-9)
    assert privacy_loss(dict(enumerate(p)), dict(enumerate(q))).epsilon == pytest.approx(
        EPS0, rel=1e-8)


def test_rnm_laplace_pair_is_below_the_supremum() -> None:
    entry = get("report_noisy_max_laplace")
    d, d_prime = entry.pairs[0]
    b = entry.mechanism.scale
    p = {i: argmax_probability("laplace", d, i, b) for i in range(K)}
    q = {i: argmax_probability("laplace", d_prime, i, b) for i in range(K)}
    pair = privacy_loss(p, q).epsilon
    assert pair == pytest.approx(0.0946, abs=5e-4) and pair < entry.true_epsilon
    far = {i: argmax_probability("laplace", [0.0] + [200.0] * 4, i, b) for i in range(K)}
    near = {i: argmax_probability("laplace", [1.0] + [199.0] * 4, i, b) for i in range(K)}
    assert 0.098 < math.log(near[0] / far[0]) <= EPS0  # → ε0 as the gap grows


def test_noisy_max_value_laplace_attains_k_epsilon_over_two() -> None:
    entry = get("noisy_max_value_laplace")
    b = entry.mechanism.scale
    d, d_prime = (np.array(x) for x in entry.pairs[0])
    t = np.linspace(-200.0, 200.0, 4001)
    cdf_d = stats.laplace.cdf(t[:, None] - d, scale=b).prod(axis=1)
    cdf_dp = stats.laplace.cdf(t[:, None] - d_prime, scale=b).prod(axis=1)
    ratio = np.log(cdf_d) - np.log(cdf_dp)
    assert np.allclose(ratio[t <= 0], K * EPS0 / 2, rtol=0, atol=1e-12)
    assert ratio.max() <= entry.true_epsilon + 1e-12
    pdf_d = np.gradient(cdf_d, t)
    pdf_dp = np.gradient(cdf_dp, t)
    assert np.abs(np.log(pdf_d / pdf_dp)).max() <= entry.true_epsilon + 1e-3


def test_noisy_max_value_exponential_support_mismatch() -> None:
    entry = get("noisy_max_value_exponential")
    mech, rate = entry.mechanism, 1.0 / entry.mechanism.scale
    (d1, d1p), (d2, d2p) = entry.pairs
    rare = stats.expon.cdf(2.0 - np.array(d1), scale=mech.scale).prod()
    assert rare == pytest.approx((1 - math.exp(-rate)) ** K, rel=1e-12)
    assert rare == pytest.approx(2.759e-7, rel=1e-3)
    easy = stats.expon.cdf(1.0 - np.array(d2), scale=mech.scale).prod()
    assert easy == pytest.approx(0.0488, abs=1e-4)
    rng = np.random.default_rng(0)
    assert mech.sample(d1p, 100_000, rng).min() >= 2.0
    assert mech.sample(d2p, 100_000, rng).min() >= 1.0
    hits = int((mech.sample(d2, 100_000, rng) < 1.0).sum())
    assert stats.binomtest(hits, 100_000, easy).pvalue > 1e-6


# ----------------------------------------------------------------------------- subsampling


def subsampled_laplace_log_ratio(inner_eps: float, x: np.ndarray) -> np.ndarray:
    """ln f_{d′}(x) − ln f_d(x) on [0]*n vs [1]+[0]*(n−1) after a uniform m-subset."""
    eta, scale = M_SUBSAMPLE / N_RECORDS, 1.0 / inner_eps
    base = stats.laplace.pdf(x, scale=scale)
    moved = (1 - eta) * base + eta * stats.laplace.pdf(x - 1.0, scale=scale)
    return np.log(moved) - np.log(base)


@pytest.mark.parametrize("name", ["subsampled_laplace_without_replacement",
                                  "subsampled_laplace_linear_calibration"])
def test_subsampled_entries_attain_their_truth(name: str) -> None:
    entry = get(name)
    inner = entry.mechanism.mechanism.epsilon
    x = np.linspace(-60.0, 60.0, 2401)
    ratio = subsampled_laplace_log_ratio(inner, x)
    assert np.allclose(ratio[x >= 1.0], entry.true_epsilon, rtol=0, atol=1e-12)
    assert np.abs(ratio).max() <= entry.true_epsilon + 1e-12
    eta = M_SUBSAMPLE / N_RECORDS
    assert entry.true_epsilon == pytest.approx(math.log1p(eta * math.expm1(inner)), rel=1e-12)


def test_linear_calibration_and_no_amplification_values() -> None:
    linear = get("subsampled_laplace_linear_calibration")
    assert linear.mechanism.mechanism.epsilon == pytest.approx(0.2)
    assert linear.true_epsilon == pytest.approx(0.104992, abs=1e-6)
    fixed = get("subsampled_laplace_no_amplification_claimed_wrong")
    correct = get("subsampled_laplace_without_replacement")
    assert fixed.true_epsilon == pytest.approx(correct.mechanism.mechanism.epsilon, rel=1e-12)
    assert fixed.true_epsilon == pytest.approx(0.190903, abs=1e-6)
    d, d_prime = fixed.pairs[0]
    late = [0.0] * (N_RECORDS - 1) + [1.0]  # a change after the first m records is invisible
    a = fixed.mechanism(d, 1000, np.random.default_rng(5))
    np.testing.assert_array_equal(a, fixed.mechanism(late, 1000, np.random.default_rng(5)))
    out = fixed.mechanism(d_prime, 200_000, np.random.default_rng(6))
    cdf = stats.laplace(loc=1.0, scale=1.0 / fixed.true_epsilon).cdf
    assert stats.kstest(out, cdf).pvalue > 1e-6
