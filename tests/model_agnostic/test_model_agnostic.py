"""Unit tests of algorithms.model_agnostic (paper 003) and its buggy variants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from algorithms.model_agnostic import (BOT, HALT, ABinClas, AStab, BinClasCounts, BinClasParams,
                                       chunk_of, dist_paper, dist_sensitivity1, majority,
                                       svt_answer_probability)
from algorithms.model_agnostic.utility import (APriv, MajorityLearner, ThresholdERM,
                                               apriv_errors, h_priv_labels, sorted_uniforms,
                                               theorem_3_2_cutoff, threshold_erm_batch,
                                               threshold_erm_counts)
from algorithms.model_agnostic.buggy import (BUGS, BuggyBinClasCounts, DataDependentKBinClas,
                                             PositionalSplitBinClas)
from algorithms.mechanisms.sparse_vector import SparseVector
from dpcheck.errors import InvalidArgument


def test_golden_constants():
    """Notes §2.6 golden values (ε = 1, δ = 1e-5, β = 0.05)."""
    for T, lam in [(1, 19.763459), (3, 34.231316), (10, 62.497546)]:
        assert BinClasParams(1.0, 1e-5, T, 100).lam == pytest.approx(lam, abs=1e-6)
    p = BinClasParams(1.0, 1e-5, 1, 10)
    assert (p.k, round(p.w, 1)) == (14447, 573.5)
    assert BinClasParams(1.0, 1e-5, 10, 1000).k == 66442
    assert p.max_bots == 2 and BinClasParams(1.0, 1e-5, 1, 10, cutoff="strict").max_bots == 1
    assert BinClasParams(1.0, 1e-5, 8.85, 10).max_bots == 9
    assert BinClasParams(1.0, 1e-5, 1, 10, odd_k=True, k_override=None).k % 2 == 1
    assert theorem_3_2_cutoff(0.01, 0.05, 100) == pytest.approx(8.848, abs=1e-3)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.data())
def test_sensitivity1_distance_is_lipschitz_and_safe(k, data):
    """One vote flip moves dist_true by ≤ 1, and dist_true ≥ 1 ⇒ the flip keeps the label."""
    c = data.draw(st.integers(0, k))
    c2 = data.draw(st.sampled_from([x for x in (c - 1, c + 1) if 0 <= x <= k]))
    (l1, g1), (l2, g2) = majority(c, k), majority(c2, k)
    d1, d2 = int(dist_sensitivity1(g1)), int(dist_sensitivity1(g2))
    assert abs(d1 - d2) <= 1
    if d1 >= 1:
        assert l1 == l2


def test_paper_distance_fails_both_properties():
    """Witness: k = 5, votes 4 → 3 ones: paper dist 2 → 0; true dist 1 → 0."""
    (l1, g1), (l2, g2) = majority(4, 5), majority(3, 5)
    assert int(dist_paper(g1)) - int(dist_paper(g2)) == 2
    assert (int(dist_sensitivity1(g1)), int(dist_sensitivity1(g2))) == (1, 0)
    assert l1 == l2 == 1 and majority(2, 5)[0] == 0        # two flips change the label


def test_astab_pmf_matches_sampler():
    mech = AStab(1.0, 0.01)
    votes = [1] * 10 + [0]
    p = mech.pmf(votes)
    out = mech.sample(votes, 400_000, np.random.default_rng(1))
    assert np.mean(out == BOT) == pytest.approx(p[BOT], abs=5 * math.sqrt(p[BOT] / 4e5) + 1e-4)


def test_first_query_answer_probability():
    p = BinClasParams(1.0, 1e-5, 1, 10)
    mech = BinClasCounts(p)
    half = (p.k + 1) // 2
    for d in (0, 560, 573, 600):
        c = np.full(p.m, half + d)
        exact = svt_answer_probability(p.w - d, p.lam)
        got = np.mean(mech.sample(c, 400_000, np.random.default_rng(d))[:, 0] != BOT)
        assert got == pytest.approx(exact, abs=5 * math.sqrt(exact * (1 - exact) / 4e5) + 1e-5)


def test_count_sampler_matches_dwork_roth_sparse():
    """The count-level core equals Dwork–Roth Sparse (SparseVector variant 2) on −dist with
    threshold −w, cutoff = max_bots, ε_svt = 2c/λ (threshold Lap(λ), queries Lap(2λ))."""
    p = BinClasParams(1.0, 0.05, 1, 5, lam_override=2.0, w_override=4.0, k_override=101)
    dist = np.array([5, 3, 4, 6, 2])
    c = (p.k + 1) // 2 + dist
    ours = BinClasCounts(p).sample(c, 300_000, np.random.default_rng(2))
    sv = SparseVector(epsilon=2 * p.max_bots / p.lam, threshold=-p.w, cutoff=p.max_bots,
                      variant=2)
    assert sv.threshold_scale == pytest.approx(p.lam) and sv.query_scale == pytest.approx(2 * p.lam)
    flags = sv.sample(-dist.astype(float), 300_000, np.random.default_rng(3))
    theirs = np.where(flags == 1, BOT, np.where(flags == -1, HALT, 1))
    for j in range(p.m):
        for code in (1, BOT, HALT):
            a, b = np.mean(ours[:, j] == code), np.mean(theirs[:, j] == code)
            assert a == pytest.approx(b, abs=6 * math.sqrt(max(a, 1e-5) / 3e5) + 1e-4)


def test_halting_outputs_are_data_independent():
    p = BinClasParams(1.0, 1e-5, 1, 10)
    out = BinClasCounts(p).sample(np.full(10, (p.k + 1) // 2), 5000, np.random.default_rng(4))
    bots = np.cumsum(out == BOT, axis=1)
    assert (bots <= p.max_bots).all()
    after = np.concatenate([np.zeros((5000, 1), int), bots[:, :-1]], axis=1) >= p.max_bots
    assert ((out == HALT) == after).all()


def test_split_locality():
    """Hash split: removing a record changes only its chunk; positional split and a
    data-dependent k change many chunks (V11, V12)."""
    rng = np.random.default_rng(6)
    d = np.column_stack([rng.permutation(10_000)[:300], rng.random(300), rng.integers(0, 2, 300)])
    p = BinClasParams(10.0, 0.1, 1, 3, beta=0.2, k_override=30)
    q = (0.2, 0.5, 0.8)
    for cls, local in [(ABinClas, True), (PositionalSplitBinClas, False),
                       (DataDependentKBinClas, False)]:
        mech = cls(p, q, MajorityLearner())
        a, b = mech.chunks(d)[1:], mech.chunks(d[1:])
        changed = len(set(a[a != b]) | set(b[a != b]))
        assert (changed == 0) if local else (changed > 1), cls.__name__
    assert (chunk_of(d[:, 0], 30) == chunk_of(d[:, 0], 30)).all()


def test_threshold_erm():
    fit = ThresholdERM()
    assert fit.fit_threshold(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1])) == 0.6
    assert fit.fit_threshold(np.array([0.1, 0.4]), np.array([0, 0])) == math.inf
    assert list(fit(np.array([0.3, 0.7]), np.array([0, 1]))(np.array([0.5, 0.7]))) == [0, 1]
    assert list(MajorityLearner()(np.zeros(3), np.array([1, 1, 0]))(np.zeros(2))) == [1, 1]


def test_exact_count_sampler_matches_training():
    """threshold_erm_counts has the law of actually training ThresholdERM on k chunks."""
    rng = np.random.default_rng(7)
    k, n, q = 400, 20, np.array([0.52, 0.55, 0.6])
    sampled = np.array([threshold_erm_counts(0.5, n, k, q, rng) for _ in range(50)]).mean(0)
    trained = []
    for _ in range(50):
        x = rng.random((k, n))
        t = [ThresholdERM().fit_threshold(xi, (xi >= 0.5).astype(int)) for xi in x]
        trained.append([(np.array(t) <= qi).sum() for qi in q])
    assert np.allclose(sampled, np.mean(trained, 0), rtol=0.03)


def _scan_oracle(margin: np.ndarray, rho: np.ndarray, nb: int, refresh: bool,
                 halt: bool) -> np.ndarray:
    """Algorithm 2's loop query by query (the s-th ⊥ is the first later query with margin ≤ ρ_s;
    after nb ⊥'s the rest is HALT): the plain oracle of core._scan_run."""
    out = np.zeros(margin.size, dtype=np.int8)
    s = 0
    for i in range(margin.size):
        if s >= nb:
            if halt:
                out[i] = HALT
            continue
        if margin[i] <= rho[s if refresh else 0]:
            out[i] = BOT
            s += 1
    return out


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40), st.integers(1, 12), st.booleans(), st.booleans(), st.data())
def test_scan_run_matches_plain_loop(m, nb, refresh, halt, data):
    """core._scan_run (sure/never/undecided split) equals the query-by-query loop, on margins
    and thresholds drawn from a small grid (ties included)."""
    from algorithms.model_agnostic.core import _scan_run
    grid = st.sampled_from([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
    margin = np.array(data.draw(st.lists(grid, min_size=m, max_size=m)))
    rho = np.array(data.draw(st.lists(grid, min_size=nb, max_size=nb)))
    block = np.zeros(m, dtype=np.int8)
    _scan_run(block, margin, rho, nb, refresh, halt)
    assert (block == _scan_oracle(margin, rho, nb, refresh, halt)).all()


def test_sorted_uniforms_are_order_statistics():
    """Row i of sorted_uniforms has the Beta(i+1, m−i) mean (i+1)/(m+1) and is sorted."""
    u = sorted_uniforms(9, 20_000, np.random.default_rng(3))
    assert (np.diff(u, axis=1) >= 0).all() and ((u > 0) & (u < 1)).all()
    assert np.allclose(u.mean(0), np.arange(1, 10) / 10, atol=0.01)


def apriv_error(params: BinClasParams, n_chunk: int, rng: np.random.Generator,
                t_star: float = 0.5, mechanism: object = None) -> float:
    """err(ĥ; 𝒟) of one A_priv run, the plain way (the oracle of ``apriv_errors``; moved here
    from ``algorithms.model_agnostic.utility``, where no claim test used it): i.i.d. U[0,1]
    public points, exact count sampler, A_binClas (⊥/HALT → fair coins), threshold ERM on the
    argsorted points, err = |min(t̂, 1) − t*|. ``mechanism`` replaces the count-level
    A_binClas (default ``BinClasCounts(params)``)."""
    q = rng.random(params.m)
    counts = threshold_erm_counts(t_star, n_chunk, params.k, q, rng)
    mech = BinClasCounts(params) if mechanism is None else mechanism
    j = int(threshold_erm_batch(q, h_priv_labels(mech.sample(counts, 1, rng), rng))[0])
    t_hat = float(np.sort(q)[j]) if j < params.m else math.inf
    return abs(min(t_hat, 1.0) - t_star)


@pytest.mark.parametrize("bug", [None, "signed_gap"])
def test_apriv_errors_has_the_law_of_apriv_error(bug):
    """The fast A_priv sampler (sorted queries, random processing order) and the plain one
    (i.i.d. queries, argsort) give the same err(ĥ) law: two-sample KS test on 2000 runs each, at
    a small configuration where ⊥'s, wrong labels and (for the mutant) HALT all occur (the same
    check rejects the fast sampler with n/k + 1 for the reference, p ≈ 3e-4 at 1500 runs, and
    without the random processing order for the mutant, p ≈ 5e-13)."""
    from scipy.stats import ks_2samp
    p = BinClasParams(1.0, 1e-5, 4, 60, k_override=401, lam_override=1.0)
    mech = BinClasCounts(p) if bug is None else BuggyBinClasCounts(p, bug)
    rng = np.random.default_rng(11)
    plain = [apriv_error(p, 20, rng, mechanism=mech) for _ in range(2000)]
    fast = apriv_errors(p, 20, 2000, rng, mechanism=mech)
    assert np.std(plain) > 0 and ks_2samp(plain, fast).pvalue > 1e-3


def test_end_to_end_binclas_and_apriv_run():
    p = BinClasParams(10.0, 0.1, 1, 4, beta=0.2, k_override=25, w_override=2.0)
    rng = np.random.default_rng(8)
    x = rng.random(500)
    d = np.column_stack([np.arange(500), x, (x >= 0.5).astype(float)])
    mech = ABinClas(p, (0.1, 0.4, 0.9, 0.95), ThresholdERM())
    assert list(mech.votes(d)) == [0, 0, 25, 25]
    out = mech.sample(d, 1000, rng)
    assert set(np.unique(out)) <= {0, 1, BOT, HALT} and np.mean(out == [0, 0, 1, 1]) > 0.9
    idx = APriv(mech).sample(d, 1000, rng)
    assert np.bincount(idx, minlength=5).argmax() == 2       # threshold at 0.9


def test_buggy_registry_and_variants_run():
    p = BinClasParams(1.0, 1e-5, 1, 10)
    c = np.full(10, (p.k + 1) // 2)
    for bug in BUGS:
        out = BuggyBinClasCounts(p, bug).sample(c if bug != "log10" else np.full(10, 2068), 100,
                                                np.random.default_rng(9))
        assert out.shape == (100, 20 if bug == "release_counts" else 10)   # V18: codes + counts
    assert BUGS["no_refresh"][2] is False and BUGS["raw_majority"][2] is True


@pytest.mark.parametrize("make", [
    lambda: AStab(0.0, 0.1), lambda: AStab(1.0, 1.5), lambda: AStab(1.0, 0.1, distance="x"),
    lambda: BinClasParams(1.0, 1e-5, 0, 10), lambda: BinClasParams(1.0, 1e-5, 1, 0),
    lambda: BinClasParams(1.0, 1e-5, 1, 10, cutoff="never"),
    lambda: BinClasCounts(BinClasParams(1.0, 1e-5, 1, 2)).sample([1, 2, 3], 1,
                                                                 np.random.default_rng()),
    lambda: BinClasCounts(BinClasParams(1.0, 1e-5, 1, 2)).sample([-1, 2], 1,
                                                                 np.random.default_rng()),
    lambda: AStab(1.0, 0.1).pmf([0, 2]),
    lambda: BuggyBinClasCounts(BinClasParams(1.0, 1e-5, 1, 2), "nope"),
    lambda: ABinClas(BinClasParams(1.0, 1e-5, 1, 2), (0.5,), MajorityLearner()),
])
def test_bad_input_raises(make):
    with pytest.raises(InvalidArgument):
        make()


def test_lazy_noisy_threshold_counts_equal_the_materialised_ones() -> None:
    """noisy_threshold_counts_lazy (issue 27: the chunks are drawn only when a query falls in
    [t* − W, t* + W)) returns exactly noisy_threshold_counts' counts on the same generator
    state: 300 cases, queries inside, outside and on both window edges, several t*, η, n/k."""
    from algorithms.model_agnostic.utility import (noisy_threshold_counts,
                                                   noisy_threshold_counts_lazy)

    meta = np.random.default_rng(41)
    skipped = 0
    for case in range(300):
        t_star = float(meta.choice([0.5, 0.3, 0.9]))
        eta, k = float(meta.choice([0.0, 0.02, 0.2])), int(meta.integers(1, 60))
        n_chunk = int(meta.choice([40, 2_000, 243_222]))
        half = min(30.0 / n_chunk, t_star, 1 - t_star)
        q = meta.random(int(meta.integers(1, 40)))
        if case % 3 == 0:
            q = np.r_[q, t_star - half, t_star + half, np.nextafter(t_star - half, 0.0)]
        elif case % 3 == 1:
            q = np.r_[q, t_star - half + 2 * half * meta.random(2)]
        want = noisy_threshold_counts(t_star, eta, n_chunk, k, q,
                                      np.random.Generator(np.random.PCG64(case)))
        rng = np.random.Generator(np.random.PCG64(case))
        got = noisy_threshold_counts_lazy(t_star, eta, n_chunk, k, q, rng)
        skipped += int(rng.random() == np.random.Generator(np.random.PCG64(case)).random())
        assert got.dtype == np.int64 and (got == want).all()
    assert 20 <= skipped <= 280      # both paths were taken
    with pytest.raises(InvalidArgument, match="eta"):
        noisy_threshold_counts_lazy(0.5, 0.5, 100, 3, np.zeros(2), np.random.default_rng(0))


def test_splitmix64_published_vector():
    """chunk_of's hash is SplitMix64 (notes D3): ``_splitmix64(x)`` is the generator's output
    from state x, so x = n·0x9E3779B97F4A7C15 (n = 0..3) gives the published first four outputs
    of seed 0 (Steele, Lea, Flood 2014; Vigna's splitmix64.c, the xoshiro seeder). Mutation
    run: the second multiplier + 1 passed every claim test (chunk assignment only permutes)."""
    from algorithms.model_agnostic.core import _splitmix64
    gamma = 0x9E3779B97F4A7C15
    states = np.array([(n * gamma) % 2 ** 64 for n in range(4)], dtype=np.uint64)
    assert [int(v) for v in _splitmix64(states)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC]
    assert (chunk_of([0], 1 << 20) == 0xE220A8397B1DCDAF % (1 << 20)).all()
