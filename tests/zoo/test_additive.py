"""Tests of the additive-noise zoo (algorithms.zoo.additive) and its building blocks.

Goodness-of-fit tests use fixed seeds and reject at ``LEVEL = 1e-6``; each is also shown to reject
a deliberately mis-parameterised sampler, so it can fail. Every true ε / δ is recomputed by a
second route (exact pmf, numeric integration, or an independent closed form).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

import dpcheck
from algorithms.mechanisms.float_laplace import LatticeReachability, NaiveFloatLaplace
from algorithms.mechanisms.gaussian import (
    GaussianSum,
    analytic_sigma,
    classic_sigma,
    gaussian_delta,
    gaussian_epsilon,
)
from algorithms.mechanisms.noisy_sums import (
    ClippedLaplaceSum,
    DataScaledLaplace,
    DataSeededLaplace,
    DeltaLeakLaplace,
    RepeatedLaplace,
    TruncatedGeometric,
)
from algorithms.mechanisms.primitives import LaplaceSum
from algorithms.mechanisms.rappor import OneTimeRappor, murmur3_32
from algorithms.zoo import ZooEntry
from algorithms.zoo.additive import ENTRIES, EPS0
from dpcheck.claims import ApproxDP, PureDP
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

LEVEL = 1e-6
BY_NAME = {e.name: e for e in ENTRIES}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ks_p(samples: np.ndarray, cdf) -> float:  # type: ignore[no-untyped-def]
    return float(stats.kstest(np.ravel(samples), cdf).pvalue)


def chi2_p(observed: np.ndarray, probs: np.ndarray) -> float:
    keep = probs > 0
    expected = probs[keep] * observed.sum() / probs[keep].sum()
    return float(stats.chisquare(observed[keep], expected).pvalue)


# --- registry ---------------------------------------------------------------------------------

EXPECTED = {
    "laplace": "A", "geometric": "A", "randomized_response": "A", "analytic_gaussian": "A",
    "truncated_geometric": "A", "laplace_parallel": "A", "classic_gaussian_eps4": "A",
    **{f"laplace_insufficient_r{r}": "B" for r in ("0.5", "0.75", "0.9", "0.95", "0.99")},
    "laplace_scale_eps": "B", "bad_partial_sum": "B", "forgotten_composition": "B",
    "sensitivity_underestimate": "B", "classic_gaussian_eps8": "B", "rappor_one_time": "B",
    "truncated_geometric_nominal": "B",
    **{f"delta_leak_1e-0{k}": "C" for k in range(2, 7)},
    "noise_scale_from_data": "C", "noise_seeded_from_data": "C", "naive_float_laplace": "C",
}


def test_registry_names_tiers_and_consistency() -> None:
    assert {e.name: e.tier for e in ENTRIES} == EXPECTED
    for e in ENTRIES:
        assert isinstance(e, ZooEntry) and e.description and e.anchor
        assert e.infinite == (e.tier == "C"), e.name
        for d, dp in e.pairs:
            e.relation.check(d, dp)
        assert (e.true_delta is not None) == isinstance(e.claim, ApproxDP), e.name
        assert set(e.published) <= {"dp_sniper_lr", "dp_sniper_mlp", "statdp_run1", "statdp_run2"}
        if e.tier == "A":
            assert e.true_epsilon <= e.claim.epsilon + 1e-12, e.name
        else:
            assert e.true_epsilon > e.claim.epsilon, e.name


def test_approx_entries_true_delta_at_claim() -> None:
    for e in ENTRIES:
        if e.true_delta is None:
            continue
        at_claim = e.true_delta(e.claim.epsilon)
        assert (at_claim <= e.claim.delta) == (e.tier == "A"), e.name
        if math.isfinite(e.true_epsilon):
            assert e.true_delta(e.true_epsilon) <= e.claim.delta
            assert e.true_delta(e.true_epsilon * (1 - 1e-9)) > e.claim.delta


# --- shapes, dtypes, determinism --------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_shapes_dtypes_determinism(entry: ZooEntry) -> None:
    mech, (d, _) = entry.mechanism, entry.pairs[0]
    a, b = mech.sample(d, 9, rng(3)), mech.sample(d, 9, rng(3))
    assert a.shape[0] == 9 and a.ndim in (1, 2)
    assert a.dtype.kind in "if"
    np.testing.assert_array_equal(a, b)
    assert mech.sample(d, 0, rng()).shape == (0,) + a.shape[1:]


def test_vector_shapes() -> None:
    assert BY_NAME["laplace_parallel"].mechanism.sample([1.0], 4, rng()).shape == (4, 20)
    assert BY_NAME["forgotten_composition"].mechanism.sample([1.0], 4, rng()).shape == (4, 5)
    out = BY_NAME["rappor_one_time"].mechanism.sample([10], 4, rng())
    assert out.shape == (4, 20) and out.dtype == np.int8 and set(np.unique(out)) <= {0, 1}


def test_seeded_noise_ignores_rng_and_is_constant() -> None:
    mech = DataSeededLaplace(EPS0)
    a, b = mech.sample([1.0], 50, rng(1)), mech.sample([1.0], 50, rng(2))
    np.testing.assert_array_equal(a, b)
    assert np.all(a == a[0]) and a[0] == mech.release([1.0]) != mech.release([])
    assert mech.release([0.5, 0.25]) != mech.release([0.25, 0.5])  # hash of the sequence


# --- bad parameters ---------------------------------------------------------------------------

BAD = [
    (lambda: GaussianSum(-1.0), "sigma=-1.0 must be > 0"),
    (lambda: analytic_sigma(0.0, 1e-5), "epsilon=0.0 must be > 0"),
    (lambda: analytic_sigma(1.0, 0.0), "delta=0.0 must be > 0"),
    (lambda: classic_sigma(1.0, 1.5), "delta=1.5 must be in [0, 1)"),
    (lambda: gaussian_delta(-1.0, 1.0), "epsilon=-1.0 must be finite and >= 0"),
    (lambda: gaussian_epsilon(1.0, 1e-5, sensitivity=0), "sensitivity=0 must be > 0"),
    (lambda: RepeatedLaplace(0.1, 0), "k=0 must be >= 1"),
    (lambda: ClippedLaplaceSum(0.1, noise_sensitivity=-2.0), "noise_sensitivity=-2.0 must be > 0"),
    (lambda: DeltaLeakLaplace(0.1, 1.5), "leak=1.5 must be in [0, 1]"),
    (lambda: DataScaledLaplace(math.inf), "epsilon=inf must be finite"),
    (lambda: TruncatedGeometric(2.0), "epsilon=2.0 must be < 2"),
    (lambda: TruncatedGeometric(1e-6, 40), "too large"),
    (lambda: TruncatedGeometric(0.1, 5).pmf([1] * 6), "count 6 > n=5"),
    (lambda: TruncatedGeometric(0.1).sample([2], 3, rng()), "records in {0, 1}"),
    (lambda: OneTimeRappor(f=1.0), "f=1.0 must be in (0, 1)"),
    (lambda: OneTimeRappor().sample([1, 2], 3, rng()), "exactly one integer record"),
    (lambda: OneTimeRappor().sample([1.5], 3, rng()), "integer records"),
    (lambda: murmur3_32("foo"), "must be bytes"),  # type: ignore[arg-type]
    (lambda: LatticeReachability(NaiveFloatLaplace(0.1), ()), "at least one location"),
    (lambda: LatticeReachability(LaplaceLike(), (0.0,)), "must be NaiveFloatLaplace"),
    (lambda: NaiveFloatLaplace(0.1).reachable([np.nan], 0.0), "must be finite"),
    (lambda: GaussianSum(1.0).sample([2.0], 3, rng()), "records in [0, 1.0]"),
    (lambda: RepeatedLaplace(0.1, 2).sample(["a"], 3, rng()), "flat sequence of real"),
    (lambda: DeltaLeakLaplace(0.1, 0.1).sample([1.0], -1, rng()), "size=-1 must be >= 0"),
    (lambda: DataSeededLaplace(0.1).sample([1.0], 3, 0), "numpy.random.Generator"),
]


class LaplaceLike:
    pass


@pytest.mark.parametrize("make,message", BAD)
def test_bad_parameters_raise(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgument) as info:
        make()
    assert message in str(info.value)


# --- samplers agree with their distributions --------------------------------------------------


def test_gaussian_sampler_ks() -> None:
    mech = GaussianSum.analytic(1.0, 1e-5)
    x = mech.sample([1.0, 0.5], 200_000, rng(1))
    assert ks_p(x, stats.norm(1.5, mech.sigma).cdf) > LEVEL
    assert ks_p(x, stats.norm(1.5, 1.03 * mech.sigma).cdf) < LEVEL
    assert ks_p(GaussianSum(1.03 * mech.sigma).sample([1.0, 0.5], 200_000, rng(1)),
                stats.norm(1.5, mech.sigma).cdf) < LEVEL


@pytest.mark.parametrize("mech,loc,scale", [
    (RepeatedLaplace(0.005, 20), 1.0, 200.0),
    (RepeatedLaplace(0.1, 5), 1.0, 10.0),
    (ClippedLaplaceSum(0.1, 1.0, 0.5), 1.0, 5.0),
    (DataScaledLaplace(0.1), 1.0, 20.0),
    (NaiveFloatLaplace(0.1), 1.0, 10.0),
], ids=lambda v: type(v).__name__ if not isinstance(v, float) else str(v))
def test_laplace_family_ks(mech, loc: float, scale: float) -> None:  # type: ignore[no-untyped-def]
    data = [3.0] if isinstance(mech, ClippedLaplaceSum) else [1.0]  # 3.0 clips to 1.0
    x = np.ravel(mech.sample(data, 200_000 // getattr(mech, "k", 1), rng(2)))  # 200 000 values
    assert ks_p(x, stats.laplace(loc, scale).cdf) > LEVEL
    assert ks_p(x, stats.laplace(loc, 1.05 * scale).cdf) < LEVEL  # the test can fail


def test_repeated_laplace_columns_independent() -> None:
    x = RepeatedLaplace(0.1, 5).sample([1.0], 100_000, rng(4))
    corr = np.corrcoef(x, rowvar=False)[np.triu_indices(5, 1)]
    assert np.abs(corr).max() < 5.3 / math.sqrt(100_000)  # |z| < 5.3 ⇔ two-sided p > ~1e-7
    shared = np.repeat(x[:, :1], 5, axis=1)  # a sampler reusing one noise draw fails
    assert np.abs(np.corrcoef(shared, rowvar=False)[0, 1:]).min() > 0.99


def test_delta_leak_atom_and_continuous_part() -> None:
    mech = DeltaLeakLaplace(EPS0, 1e-2)
    x = mech.sample([1.0], 1_000_000, rng(5))
    atom = x == 1.0
    assert stats.binomtest(int(atom.sum()), x.size, 1e-2).pvalue > LEVEL
    assert stats.binomtest(int(atom.sum()), x.size, 1.2e-2).pvalue < LEVEL
    assert ks_p(x[~atom], stats.laplace(1.0, 10.0).cdf) > LEVEL


def test_seeded_noise_is_laplace_across_datasets() -> None:
    mech = DataSeededLaplace(EPS0)
    xs = np.linspace(0.0, 1.0, 20_000)
    noise = np.array([mech.release([x]) - x for x in xs])
    assert ks_p(noise, stats.laplace(0.0, 10.0).cdf) > LEVEL
    assert ks_p(noise, stats.laplace(0.0, 13.0).cdf) < LEVEL


def test_truncated_geometric_sampler_chi2() -> None:
    mech = TruncatedGeometric(EPS0, 5)
    x = mech.sample([1, 1], 1_000_000, rng(6))
    obs = np.bincount(x, minlength=6)
    assert chi2_p(obs, np.array(list(mech.pmf([1, 1]).values()))) > LEVEL
    assert chi2_p(obs, np.array(list(mech.pmf([1, 1, 1]).values()))) < LEVEL
    assert chi2_p(obs, np.array(list(TruncatedGeometric(0.05, 5).pmf([1, 1]).values()))) < LEVEL


def test_rappor_sampler_joint_chi2() -> None:
    mech = OneTimeRappor()
    x = mech.sample([10], 400_000, rng(7)).astype(np.int64)
    bits = sorted(mech.positions(10) | mech.positions(6))
    codes = x[:, bits] @ (1 << np.arange(len(bits)))
    obs = np.bincount(codes, minlength=1 << len(bits))

    def joint(m: OneTimeRappor) -> np.ndarray:
        p1 = m.bit_probabilities([10])[bits]
        pattern = (np.arange(1 << len(bits))[:, None] >> np.arange(len(bits))) & 1
        return np.prod(np.where(pattern == 1, p1, 1 - p1), axis=1)

    assert chi2_p(obs, joint(mech)) > LEVEL
    assert chi2_p(obs, joint(OneTimeRappor(f=0.9))) < LEVEL
    rest = np.delete(x, bits, axis=1)  # the other bits are Bernoulli(f/2)
    assert stats.binomtest(int(rest.sum()), rest.size, 0.475).pvalue > LEVEL


def test_naive_float_laplace_lattice_holes() -> None:
    mech = NaiveFloatLaplace(EPS0)
    feats = LatticeReachability(mech, (1.0, 0.0))
    from_d = feats(mech.sample([1.0], 300_000, rng(8)))
    from_dp = feats(mech.sample([], 300_000, rng(9)))
    assert from_d[:, 0].all() and from_dp[:, 1].all()  # own outputs are always reachable
    assert from_dp[:, 0].mean() < 0.3 and from_d[:, 1].mean() < 0.3  # most others are not
    assert mech.reachable([1.0], 1.0).all()


# --- exact truths, recomputed independently ---------------------------------------------------


def test_truncated_geometric_pmf_matches_grs_closed_form() -> None:
    mech = TruncatedGeometric(EPS0, 5)
    alpha = Fraction(2**mech.k, 2**mech.k + 1)  # GRS truncated geometric, α = 1/(1 + 2^-k)
    for c in range(6):
        pmf = mech.pmf([1] * c)
        for z in range(6):
            if z in (0, 5):
                want = alpha ** abs(z - c) / (1 + alpha)
            else:
                want = (1 - alpha) / (1 + alpha) * alpha ** abs(z - c)
            assert pmf[z] == pytest.approx(float(want), rel=1e-14)
    worst = max(privacy_loss(mech.pmf([1] * c), mech.pmf([1] * (c + 1))).epsilon for c in range(5))
    assert worst == pytest.approx(math.log(1.125), rel=1e-14)
    assert mech.true_epsilon == pytest.approx(math.log1p(2.0 ** -math.ceil(math.log(20))), rel=0)


def test_rappor_exact_epsilon_from_pmf() -> None:
    mech = OneTimeRappor()
    assert murmur3_32(b"foo") == -156908512 and murmur3_32(b"hello") == 613153351
    # DP-Sniper's learned weights single out bits {0, 11, 18} and {3, 10, 13} for values 0, 1.
    assert mech.positions(0) == {0, 11, 18} and mech.positions(1) == {3, 10, 13}

    def exact(v: int, w: int) -> float:
        bits = sorted(mech.positions(v) | mech.positions(w))
        pv, pw = mech.bit_probabilities([v])[bits], mech.bit_probabilities([w])[bits]
        pats = [tuple((i >> j) & 1 for j in range(len(bits))) for i in range(1 << len(bits))]
        law = lambda p: {s: float(np.prod([q if b else 1 - q for b, q in zip(s, p)])) for s in pats}
        return privacy_loss(law(pv), law(pw)).epsilon

    assert exact(10, 6) == pytest.approx(8 * math.log(0.525 / 0.475), rel=1e-12)
    assert exact(10, 6) == pytest.approx(mech.true_epsilon, rel=1e-12)
    assert exact(1, 0) == pytest.approx(mech.pair_epsilon([1], [0]), rel=1e-12)
    assert mech.pair_epsilon([1], [0]) == pytest.approx(0.6005, abs=1e-4)
    domain = range(-10, 11)
    assert max(mech.pair_epsilon([a], [b]) for a in domain for b in domain) == mech.true_epsilon


def _laplace_sup_log_ratio(loc0: float, loc1: float, s0: float, s1: float) -> float:
    reach = 50 * max(s0, s1)
    x = np.linspace(min(loc0, loc1) - reach, max(loc0, loc1) + reach, 400_001)
    diff = stats.laplace.logpdf(x, loc0, s0) - stats.laplace.logpdf(x, loc1, s1)
    return float(np.abs(diff).max())


LAPLACE_ENTRIES = [e.name for e in ENTRIES
                   if type(e.mechanism).__name__ in ("LaplaceSum", "ClippedLaplaceSum")]


@pytest.mark.parametrize("name", LAPLACE_ENTRIES)
def test_laplace_entries_true_epsilon_by_density_ratio(name: str) -> None:
    e = BY_NAME[name]
    mech = e.mechanism
    scale = mech.scale if isinstance(mech, LaplaceSum) else mech.noise_sensitivity / mech.epsilon
    assert _laplace_sup_log_ratio(1.0, 0.0, scale, scale) == pytest.approx(e.true_epsilon, rel=1e-9)


def test_repeated_laplace_true_epsilon_composes() -> None:
    for name, k, per in (("laplace_parallel", 20, 0.005), ("forgotten_composition", 5, 0.1)):
        point = np.full(k, -50.0)  # every coordinate below both sums: each ratio is e^per
        lr = stats.laplace.logpdf(point, 1.0, 1 / per) - stats.laplace.logpdf(point, 0.0, 1 / per)
        assert abs(lr.sum()) == pytest.approx(BY_NAME[name].true_epsilon, rel=1e-9)
        assert BY_NAME[name].true_epsilon == pytest.approx(k * per, rel=1e-12)


def test_data_scaled_log_ratio_unbounded() -> None:
    ratios = [abs(stats.laplace.logpdf(x, 0.0, 10.0) - stats.laplace.logpdf(x, 1.0, 20.0))
              for x in (-1e2, -1e3, -1e4)]
    assert ratios[0] < ratios[1] < ratios[2] and ratios[2] > 400  # grows like |x|/20


def _normal_hockey(eps: float, sigma: float, sens: float = 1.0) -> float:
    """∫ max(0, φ_Δ − e^ε φ_0) by quad over {x > Δ/2 + εσ²/Δ} (where the integrand is > 0)."""
    start = sens / 2 + eps * sigma**2 / sens

    def f(x: float) -> float:
        lp, lq = stats.norm.logpdf(x, sens, sigma), stats.norm.logpdf(x, 0.0, sigma)
        return math.exp(lp) * -math.expm1(eps + lq - lp)

    val, _ = integrate.quad(f, start, start + 40 * sigma, epsabs=0, epsrel=1e-12, limit=200)
    return val


@pytest.mark.parametrize("eps,sigma", [(1.0, 3.7306), (0.0, 1.0), (4.0, 1.2112), (8.0, 0.28094),
                                       (0.5, 0.3), (2.0, 5.0)])
def test_gaussian_delta_matches_quadrature(eps: float, sigma: float) -> None:
    assert gaussian_delta(eps, sigma) == pytest.approx(_normal_hockey(eps, sigma), rel=1e-8)


def test_analytic_sigma_is_the_smallest_feasible() -> None:
    cases = ((1.0, 1e-5, 1.0), (0.1, 1e-6, 1.0), (4.0, 1e-10, 2.0), (0.5, 0.1, 1.0))
    for eps, delta, sens in cases:
        sigma = analytic_sigma(eps, delta, sens)
        assert gaussian_delta(eps, sigma, sens) == pytest.approx(delta, rel=1e-9)
        assert gaussian_delta(eps, sigma, sens) <= delta
        assert gaussian_delta(eps, math.nextafter(sigma, 0), sens) > delta
        assert sigma < classic_sigma(eps, delta, sens) or eps >= 1
    assert analytic_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)  # Balle & Wang's value


def test_gaussian_epsilon_inverts_delta_and_stays_stable() -> None:
    sigma = analytic_sigma(1.0, 1e-5)
    assert gaussian_epsilon(sigma, 1e-5) == pytest.approx(1.0, rel=1e-12)
    assert gaussian_epsilon(1.0, 0.9) == 0.0 and gaussian_epsilon(1.0, 0.0) == math.inf
    tiny = gaussian_delta(13.5, 1.0)  # ~1e-40: computed without cancellation in log space
    assert 1e-42 < tiny < 1e-38
    assert tiny == pytest.approx(_normal_hockey(13.5, 1.0), rel=1e-8)
    assert gaussian_epsilon(1.0, tiny) == pytest.approx(13.5, rel=1e-9)


def test_classic_gaussian_entries_truth() -> None:
    e4, e8 = BY_NAME["classic_gaussian_eps4"], BY_NAME["classic_gaussian_eps8"]
    assert e4.mechanism.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 4)
    assert _normal_hockey(4.0, e4.mechanism.sigma) < 1e-5  # anchors' B8 example holds
    assert _normal_hockey(8.0, e8.mechanism.sigma) == pytest.approx(0.23585, abs=1e-5)
    assert e8.true_epsilon == pytest.approx(10.0527, abs=1e-4)
    assert BY_NAME["analytic_gaussian"].true_epsilon == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("leak", [1e-2, 1e-4, 1e-6])
def test_delta_leak_true_delta_by_integration(leak: float) -> None:
    mech = DeltaLeakLaplace(EPS0, leak)
    for eps in (0.0, 0.03, 0.1, 0.5):
        def f(x: float) -> float:
            p, q = stats.laplace.pdf(x, 1.0, 10.0), stats.laplace.pdf(x, 0.0, 10.0)
            return max(0.0, p - math.exp(eps) * q)
        cont = sum(integrate.quad(f, a, b, epsabs=1e-14, limit=200)[0]
                   for a, b in ((-np.inf, 0.0), (0.0, 1.0), (1.0, np.inf)))
        assert mech.true_delta(eps) == pytest.approx(leak + (1 - leak) * cont, rel=1e-7, abs=1e-15)
    assert mech.true_delta(EPS0) == leak and mech.true_delta(3.0) == leak


# --- smoke audits -----------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_smoke_audit_never_exceeds_truth(entry: ZooEntry) -> None:
    r = dpcheck.audit(entry.mechanism, *entry.pairs[0], entry.claim, samples=200_000, seed=0,
                      relation=entry.relation, features=entry.features,
                float_features=entry.float_features)
    print(f"{entry.name}: claim {entry.claim.describe()}, true eps {entry.true_epsilon:.6g}, "
          f"epsilon_lower {r.epsilon_lower:.4f}, violation {r.violation}")
    if math.isfinite(entry.true_epsilon):
        assert r.epsilon_lower <= entry.true_epsilon + 1e-9
    assert isinstance(entry.claim, (PureDP, ApproxDP))
