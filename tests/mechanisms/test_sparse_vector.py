"""Tests of algorithms.mechanisms.sparse_vector: the six SVT variants of Lyu, Su, Li (PVLDB 2017).

Exact output distributions of tiny instances are computed by numerical integration over the
threshold noise ρ (given ρ the query noises are independent, so
``P[pattern] = ∫ f_ρ(r) Π_i P[q_i + ν_i ≥ T + r or <] dr``; Alg. 2 is a product of such integrals,
one per threshold draw). Every goodness-of-fit test uses a fixed seed and rejects at
``LEVEL = 1e-6``; each deliberately mis-specified sampler is rejected by the same test.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad

from algorithms.mechanisms.sparse_vector import HALTED, TOP, SparseVector, optimal_epsilon1
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument

LEVEL = 1e-6


# -- exact distributions by numerical integration ----------------------------------------------
def above_prob(x: float, b: float) -> float:
    """``P[ν ≥ x]`` for ν ~ Lap(b); ν = 0 when b = 0 (Alg. 5)."""
    if b == 0.0:
        return 1.0 if x <= 0 else 0.0
    return 0.5 * math.exp(-x / b) if x >= 0 else 1.0 - 0.5 * math.exp(x / b)


def below_cdf(x: float, b: float) -> float:  # P[ν < x]
    return 1.0 - above_prob(x, b)


def integrate(fun, kinks: list[float], scale: float) -> float:
    """``∫ fun`` over ℝ, split at the kinks (quad with breakpoints) plus the two tails."""
    pts = sorted(set(kinks))
    lo, hi = pts[0] - 60 * scale, pts[-1] + 60 * scale
    kw = dict(epsabs=1e-14, epsrel=1e-11, limit=400)
    total = quad(fun, lo, hi, points=pts, **kw)[0]
    return total + quad(fun, -np.inf, lo, **kw)[0] + quad(fun, hi, np.inf, **kw)[0]


def patterns(n: int, c: int | None) -> list[tuple[int, ...]]:
    """All flag vectors of n queries with cutoff c (None: no cutoff)."""
    out = set()
    for bits in itertools.product((0, 1), repeat=n):
        flags = np.array(bits)
        if c is not None:
            flags[(np.cumsum(flags) - flags) >= c] = HALTED
        out.add(tuple(int(f) for f in flags))
    return sorted(out)


def segment_prob(m: SparseVector, q, seg: list[tuple[int, int]]) -> float:
    """∫ f_ρ Π_{(i, flag) in seg} P[flag of query i | ρ = r] dr for one threshold draw."""
    b_rho, b_nu, t = m.threshold_scale, m.query_scale, m.threshold

    def fun(r: float) -> float:
        val = math.exp(-abs(r) / b_rho) / (2 * b_rho)
        for i, flag in seg:
            x = t + r - q[i]
            val *= above_prob(x, b_nu) if flag == TOP else below_cdf(x, b_nu)
        return val

    return integrate(fun, [0.0] + [q[i] - t for i, _ in seg], max(b_rho, b_nu))


def exact_pmf(m: SparseVector, q) -> dict[tuple[int, ...], float]:
    """Exact flag distribution (all variants; for Alg. 3 the marginal of the flags)."""
    q = [float(x) for x in q]
    pmf = {}
    for pat in patterns(len(q), m.cutoff):
        answered = [(i, f) for i, f in enumerate(pat) if f != HALTED]
        # Alg. 2: one threshold draw per segment ending in ⊤ (and one for the rest)
        cuts = [k + 1 for k, (_, f) in enumerate(answered) if f == TOP and m.variant == 2]
        segs = [answered[a:b] for a, b in zip([0] + cuts, cuts + [len(answered)]) if b > a]
        pmf[pat] = math.prod(segment_prob(m, q, seg) for seg in segs)
    assert abs(sum(pmf.values()) - 1.0) < 1e-9
    return pmf


def alg3_cells(m: SparseVector, q, edges: np.ndarray) -> np.ndarray:
    """Alg. 3, c = 1: P[⊤ at query j with value in [e_k, e_{k+1})], shape (n, K)."""
    assert m.variant == 3 and m.cutoff == 1
    b_rho, b_nu, t, n = m.threshold_scale, m.query_scale, m.threshold, len(q)
    out = np.zeros((n, edges.size - 1))
    for j, k in itertools.product(range(n), range(edges.size - 1)):
        lo_e, hi_e = edges[k], edges[k + 1]

        def fun(r: float, j: int = j, lo_e: float = lo_e, hi_e: float = hi_e) -> float:
            lo = max(t + r, lo_e)
            if lo >= hi_e:
                return 0.0
            val = math.exp(-abs(r) / b_rho) / (2 * b_rho)
            for i in range(j):
                val *= below_cdf(t + r - q[i], b_nu)
            return val * (below_cdf(hi_e - q[j], b_nu) - below_cdf(lo - q[j], b_nu))

        kinks = [0.0] + [qi - t for qi in q] + [e - t for e in edges[1:-1]]
        out[j, k] = integrate(fun, kinks, max(b_rho, b_nu))
    return out


def pooled_chisquare(observed: np.ndarray, expected: np.ndarray) -> float:
    """Chi-square p-value after pooling the cells expecting < 5 counts into one."""
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    exp = exp * obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def flags_of(out: np.ndarray, n: int) -> np.ndarray:
    return out[:, n:].astype(np.int8) if out.dtype.kind == "f" else out


def pattern_pvalue(samples: np.ndarray, pmf: dict[tuple[int, ...], float]) -> float:
    n = len(next(iter(pmf)))
    flags = flags_of(samples, n)
    keys = list(pmf)
    index = {k: i for i, k in enumerate(keys)}
    uniq, counts = np.unique(flags, axis=0, return_counts=True)
    observed = np.zeros(len(keys))
    for row, cnt in zip(uniq, counts):
        observed[index[tuple(int(x) for x in row)]] += cnt  # KeyError = impossible pattern
    return pooled_chisquare(observed, samples.shape[0] * np.array([pmf[k] for k in keys]))


Q3 = [0.5, 1.5, 1.0]
CASES = {  # name -> (mechanism, answers)
    "alg1_c1": (SparseVector(1.0, 1.0, 1, variant=1), Q3),
    "alg1_c2": (SparseVector(1.0, 1.0, 2, variant=1), Q3),
    "alg1_monotone": (SparseVector(1.0, 1.0, 2, variant=1, monotone=True), Q3),
    "alg1_split": (SparseVector(1.0, 1.0, 2, variant=1, epsilon1=optimal_epsilon1(1.0, 2)), Q3),
    "alg2_c2": (SparseVector(1.0, 1.0, 2, variant=2), Q3),
    "alg3_c2_flags": (SparseVector(1.0, 1.0, 2, variant=3), Q3),
    "alg4_c2": (SparseVector(1.0, 1.0, 2, variant=4), Q3),
    "alg5": (SparseVector(1.0, 1.0, None, variant=5), Q3),
    "alg6": (SparseVector(1.0, 1.0, None, variant=6), Q3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sampler_matches_exact_pmf(name: str) -> None:
    mech, q = CASES[name]
    pmf = exact_pmf(mech, q)
    out = mech.sample(q, 200_000, np.random.default_rng(7))
    assert pattern_pvalue(out, pmf) > LEVEL


def _no_redraw(mech: SparseVector, q, size: int, rng: np.random.Generator) -> np.ndarray:
    """Alg. 2's scales without the threshold re-draw (DP-Auditorium's SVT2): a wrong sampler."""
    rho = rng.laplace(0.0, mech.threshold_scale, size=(size, 1))
    above = np.asarray(q) + rng.laplace(0.0, mech.query_scale, size=(size, len(q))) >= (
        mech.threshold + rho)
    before = np.cumsum(above, axis=1) - above
    return np.where(before < mech.c, above, HALTED).astype(np.int8)


@pytest.mark.parametrize(("name", "wrong"), [
    ("alg1_c2", SparseVector(2.0, 1.0, 2, variant=1)),  # every scale halved
    ("alg1_c2", SparseVector(1.0, 1.0, 2, variant=1, monotone=True)),  # ν scale halved
    ("alg1_c2", SparseVector(1.0, 1.0, 2, variant=4)),  # Lee–Clifton scales
    ("alg2_c2", SparseVector(1.0, 1.0, 2, variant=1)),  # ρ not scaled by c
    ("alg4_c2", SparseVector(1.0, 1.0, 2, variant=4, epsilon1=0.5)),  # ε1 = ε/2
    ("alg5", SparseVector(1.5, 1.0, None, variant=5)),
    ("alg6", SparseVector(1.0, 1.0, None, variant=6, epsilon1=0.25)),
])
def test_misscaled_sampler_is_rejected(name: str, wrong: SparseVector) -> None:
    mech, q = CASES[name]
    out = wrong.sample(q, 200_000, np.random.default_rng(7))
    assert pattern_pvalue(out, exact_pmf(mech, q)) < LEVEL


def test_missing_redraw_is_rejected() -> None:
    mech, q = SparseVector(1.0, 1.0, 2, variant=2), [1.0, 0.0, 1.0, 0.0]
    pmf = exact_pmf(mech, q)
    assert pattern_pvalue(mech.sample(q, 400_000, np.random.default_rng(3)), pmf) > LEVEL
    bad = _no_redraw(mech, q, 400_000, np.random.default_rng(3))
    assert pattern_pvalue(bad, pmf) < LEVEL


@pytest.mark.parametrize("epsilon", [1.0, 1.6])
def test_alg3_values_match_exact_distribution(epsilon: float) -> None:
    good = SparseVector(1.0, 1.0, 1, variant=3)
    q = [0.5, 1.5]
    edges = np.array([-np.inf, -2.0, 0.0, 1.0, 2.0, 3.0, 5.0, np.inf])
    cells = alg3_cells(good, q, edges)
    p_none = 1.0 - cells.sum()
    assert abs(p_none - exact_pmf(good, q)[(0, 0)]) < 1e-9
    out = SparseVector(epsilon, 1.0, 1, variant=3).sample(q, 200_000, np.random.default_rng(5))
    pos = np.where(out[:, 2] == TOP, 0, np.where(out[:, 3] == TOP, 1, 2))
    val = np.where(pos == 0, out[:, 0], out[:, 1])
    k = np.searchsorted(edges, val, side="right") - 1
    observed = np.zeros(cells.size + 1)
    np.add.at(observed, np.where(pos < 2, pos * cells.shape[1] + k, cells.size), 1)
    expected = 200_000 * np.append(cells.ravel(), p_none)
    p = pooled_chisquare(observed, expected)
    assert p > LEVEL if epsilon == 1.0 else p < LEVEL  # ε = 1.6: mis-scaled, rejected


# -- vectorised sampler vs a slow per-sample transcription of Lyu et al.'s Figure 1 ------------
def reference(variant: int, eps: float, t: float, c: int | None, q, size: int,
              rng: np.random.Generator, monotone: bool = False) -> np.ndarray:
    """Per-sample, per-query loop; scales recomputed from Figure 1 (default split)."""
    e1 = eps / 4 if variant == 4 else eps / 2
    e2, delta, n = eps - e1, 1.0, len(q)
    nu_scale = {1: (1 if monotone else 2) * (c or 0) * delta / e2, 2: 2 * (c or 0) * delta / e2,
                3: (c or 0) * delta / e2, 4: delta / e2, 5: 0.0, 6: delta / e2}[variant]
    rho_scale = (c if variant == 2 else 1) * delta / e1
    rows = []
    for _ in range(size):
        rho, count = rng.laplace(0.0, rho_scale), 0
        flags, values = [HALTED] * n, [math.inf] * n
        for i in range(n):
            nu = rng.laplace(0.0, nu_scale) if nu_scale else 0.0
            if q[i] + nu >= t + rho:
                flags[i], values[i] = TOP, q[i] + nu
                count += 1
                if variant == 2:
                    rho = rng.laplace(0.0, rho_scale)
                if c is not None and variant <= 4 and count >= c:
                    break
            else:
                flags[i] = 0
        rows.append(values + flags if variant == 3 else flags)
    return np.array(rows)


def _two_sample_p(a: np.ndarray, b: np.ndarray) -> float:
    keys = np.unique(np.concatenate([a, b]))
    ca = np.array([(a == k).sum() for k in keys])
    cb = np.array([(b == k).sum() for k in keys])
    keep = ca + cb >= 10
    table = np.array([np.append(ca[keep], ca[~keep].sum()), np.append(cb[keep], cb[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    return float(stats.chi2_contingency(table)[1])


@pytest.mark.parametrize(("variant", "c", "monotone"), [
    (1, 1, False), (1, 2, False), (1, 2, True), (2, 2, False), (3, 2, False), (4, 2, False),
    (5, None, False), (6, None, False)])
def test_vectorised_equals_reference(variant: int, c: int | None, monotone: bool) -> None:
    q = [0.0, 2.0, 1.0, 0.5]
    mech = SparseVector(1.0, 1.0, c, variant=variant, monotone=monotone)
    fast = mech.sample(q, 20_000, np.random.default_rng(11))
    slow = reference(variant, 1.0, 1.0, c, q, 20_000, np.random.default_rng(12), monotone)
    assert fast.shape == slow.shape
    code = 3 ** np.arange(len(q))  # one integer per flag pattern
    assert _two_sample_p((flags_of(fast, 4) + 1) @ code, (flags_of(slow, 4) + 1) @ code) > LEVEL
    if variant == 3:  # released values: finite exactly on ⊤, and distributed alike
        for out in (fast, slow):
            assert np.array_equal(np.isfinite(out[:, :4]), out[:, 4:] == TOP)
        bins = np.array([-np.inf, -5.0, 0.0, 1.0, 2.0, 4.0, 8.0])
        vf, vs = fast[:, :4][np.isfinite(fast[:, :4])], slow[:, :4][np.isfinite(slow[:, :4])]
        assert _two_sample_p(np.digitize(vf, bins), np.digitize(vs, bins)) > LEVEL


# -- semantics: cutoff, encoding, shapes, determinism ------------------------------------------
@pytest.mark.parametrize(("variant", "c"), [(v, c) for v in (1, 2, 3, 4) for c in (1, 2, 3)]
                         + [(5, 1), (6, 1)])
def test_cutoff_and_encoding(variant: int, c: int) -> None:
    rng = np.random.default_rng(variant * 10 + c)
    q = rng.integers(-3, 4, size=12).astype(float)
    cutoff = c if variant <= 4 else None
    mech = SparseVector(2.0, 0.0, cutoff, variant=variant)
    out = mech.sample(q, 5000, rng)
    n = q.size
    flags = flags_of(out, n)
    assert out.shape == ((5000, 2 * n) if variant == 3 else (5000, n))
    assert out.dtype == (np.float64 if variant == 3 else np.int8)
    assert set(np.unique(flags)) <= {HALTED, 0, TOP}
    tops = np.cumsum(flags == TOP, axis=1)
    if variant <= 4:
        assert tops[:, -1].max() <= c and (tops[:, -1] == c).any()
        done_before = np.concatenate([np.zeros((5000, 1), int), tops[:, :-1]], axis=1) >= c
        assert np.array_equal(flags == HALTED, done_before)  # −1 exactly after the c-th ⊤
    else:
        assert (flags != HALTED).all() and (tops[:, -1] > c).any()  # never halts
    if variant == 3:
        values = out[:, :n]
        assert np.array_equal(np.isfinite(values), flags == TOP)
        assert (values[~np.isfinite(values)] == np.inf).all()


def _upper_sets(flags: np.ndarray, q: np.ndarray) -> bool:
    """Each row's ⊤ set is {i : q_i ≥ s} for some s (ties in q answered alike)."""
    for row in np.unique(flags, axis=0):
        top = q[row == TOP]
        if top.size and (q[row != TOP] >= top.min()).any():
            return False
    return True


def test_alg5_is_a_threshold_on_the_answers() -> None:
    q = np.array([0.0, 2.0, 1.0, 1.0, -1.0])
    out = SparseVector(1.0, 1.0, None, variant=5).sample(q, 20_000, np.random.default_rng(1))
    assert _upper_sets(out, q)
    assert len(np.unique(out, axis=0)) == 5  # 4 distinct answer levels → 5 patterns
    # support mismatch behind svt5's ∞: ⊥⊤ is impossible on (1, 1) but not on (0, 2)
    mech = SparseVector(0.1, 1.0, None, variant=5)
    p = exact_pmf(mech, [0.0, 2.0])[(0, 1)]
    assert p > 0.04 and exact_pmf(mech, [1.0, 1.0])[(0, 1)] == 0.0
    assert math.isinf(mech.epsilon_bound(2))


@pytest.mark.parametrize("variant", [1, 2, 3, 4, 5, 6])
def test_shapes_determinism_and_inputs(variant: int) -> None:
    mech = SparseVector(0.5, 1.0, 2 if variant <= 4 else None, variant=variant)
    width = 6 if variant == 3 else 3
    assert mech.sample([1, 2, 3], 0, np.random.default_rng(0)).shape == (0, width)
    a = mech.sample([1, 2, 3], 100, np.random.default_rng(4))
    b = mech.sample(np.array([1.0, 2.0, 3.0]), 100, np.random.default_rng(4))
    c = mech.sample((1, 2, 3), 100, np.random.default_rng(5))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert mech.sample([7], 10, np.random.default_rng(0)).shape == (10, 2 if variant == 3 else 1)
    assert mech.claim == PureDP(0.5)


def test_scales_follow_figure_1() -> None:
    eps, c, delta = 0.6, 3, 2.0
    table = {1: (delta / 0.3, 2 * c * delta / 0.3), 2: (c * delta / 0.3, 2 * c * delta / 0.3),
             3: (delta / 0.3, c * delta / 0.3), 4: (delta / 0.15, delta / 0.45),
             5: (delta / 0.3, 0.0), 6: (delta / 0.3, delta / 0.3)}
    for v, (b_rho, b_nu) in table.items():
        m = SparseVector(eps, 0.0, c if v <= 4 else None, variant=v, sensitivity=delta)
        assert m.threshold_scale == pytest.approx(b_rho) and m.query_scale == pytest.approx(b_nu)
    mono = SparseVector(eps, 0.0, c, variant=1, sensitivity=delta, monotone=True)
    assert mono.query_scale == pytest.approx(c * delta / 0.3)
    e1 = optimal_epsilon1(eps, c)
    assert (eps - e1) / e1 == pytest.approx((2 * c) ** (2 / 3))
    assert (eps - optimal_epsilon1(eps, c, True)) / optimal_epsilon1(eps, c, True) == (
        pytest.approx(c ** (2 / 3)))


BAD = [
    (dict(epsilon=0.0), "epsilon=0.0 must be > 0"), (dict(epsilon=-1), "epsilon=-1 must be > 0"),
    (dict(epsilon=math.inf), "must be finite"), (dict(epsilon=True), "must be a real number"),
    (dict(threshold=math.nan), "threshold=nan must not be NaN"),
    (dict(threshold=math.inf), "threshold=inf must be finite"),
    (dict(threshold="1"), "threshold='1' must be a real number"),
    (dict(cutoff=0), "cutoff=0 must be >= 1"), (dict(cutoff=1.5), "cutoff=1.5 must be an integer"),
    (dict(cutoff=True), "cutoff=True must be an integer"),
    (dict(cutoff=None), "cutoff=None must be an integer >= 1"),
    (dict(variant=5), "cutoff=1 must be None for variant 5"),
    (dict(variant=6, cutoff=3), "cutoff=3 must be None for variant 6"),
    (dict(variant=0), "variant=0 must be one of 1, 2, 3, 4, 5, 6"),
    (dict(variant=7), "variant=7 must be one of"), (dict(variant="1"), "variant='1' must be"),
    (dict(variant=1.0), "variant=1.0 must be one of"),
    (dict(variant=True), "variant=True must be one of"),
    (dict(sensitivity=0.0), "sensitivity=0.0 must be > 0"),
    (dict(monotone=1), "monotone=1 must be True or False"),
    (dict(monotone=True, variant=2), "monotone=True must only be used with variant 1"),
    (dict(epsilon1=1.0), "epsilon1=1.0 must be in (0, 1.0)"),
    (dict(epsilon1=0.0), "epsilon1=0.0 must be in (0, 1.0)"),
    (dict(epsilon1=math.nan), "epsilon1=nan must not be NaN"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_parameters(change: dict, message: str) -> None:
    kwargs = dict(epsilon=1.0, threshold=1.0, cutoff=1, variant=1) | change
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        SparseVector(**kwargs)


@pytest.mark.parametrize(("data", "size", "rng", "message"), [
    ([], 1, None, "must be a non-empty flat sequence"),
    ([[1, 2]], 1, None, "must be a non-empty flat sequence"),
    (["a"], 1, None, "must be a non-empty flat sequence"),
    ([True, False], 1, None, "must be a non-empty flat sequence"),
    ("12", 1, None, "must be a sequence of query answers"),
    (5, 1, None, "must be a sequence of query answers"),
    ([1.0, math.nan], 1, None, "must contain finite query answers"),
    ([1.0, math.inf], 1, None, "must contain finite query answers"),
    ([1.0], -1, None, "size=-1 must be >= 0"),
    ([1.0], 2.0, None, "size=2.0 must be an integer"),
    ([1.0], 2, "rng", "rng='rng' must be a numpy.random.Generator"),
])
def test_bad_sample_arguments(data, size, rng, message: str) -> None:
    gen = np.random.default_rng(0) if rng is None else rng
    for variant in (1, 2, 5):
        mech = SparseVector(1.0, 1.0, 1 if variant < 5 else None, variant=variant)
        with pytest.raises(InvalidArgument, match=re.escape(message)):
            mech.sample(data, size, gen)
    with pytest.raises(InvalidArgument, match="n_queries=0 must be >= 1"):
        SparseVector(1.0, 1.0, 1).epsilon_bound(0)


# -- exact privacy of tiny instances -----------------------------------------------------------
def pair_epsilon(m: SparseVector, d, d_prime) -> float:
    p, q = exact_pmf(m, d), exact_pmf(m, d_prime)
    return max(abs(math.log(p[k]) - math.log(q[k])) for k in p if p[k] > 0 or q[k] > 0)


def linf_pairs(n: int, monotone: bool = False):
    for base in itertools.product((0.0, 1.0, 2.0), repeat=n):
        for shift in itertools.product((-1.0, 0.0, 1.0), repeat=n):
            if monotone and min(shift) < 0 < max(shift):
                continue
            yield list(base), [b + s for b, s in zip(base, shift)]


@pytest.mark.parametrize(("c", "monotone"), [(1, False), (2, False), (1, True)])
def test_alg1_two_queries_within_claim(c: int, monotone: bool) -> None:
    mech = SparseVector(1.0, 1.0, c, variant=1, monotone=monotone)
    worst = max(pair_epsilon(mech, d, dp) for d, dp in linf_pairs(2, monotone))
    print(f"Alg. 1 c={c} monotone={monotone}: exact worst eps on the grid = {worst:.4f}")
    assert 0.2 < worst <= 1.0 + 1e-9


def test_monotone_option_breaks_on_non_monotone_pairs() -> None:
    mech = SparseVector(1.0, 1.0, 1, variant=1, monotone=True)
    assert pair_epsilon(mech, [5.0, 0.0, -1.0], [6.0, 1.0, -2.0]) > 1.0  # ⊥⊥⊤: 2 up, 1 down


def test_alg2_three_queries_within_claim() -> None:
    mech = SparseVector(1.0, 1.0, 2, variant=2)
    pairs = [([0.0, 1.0, 2.0], [1.0, 2.0, 1.0]), ([1.0, 1.0, 1.0], [2.0, 0.0, 2.0]),
             ([2.0, 2.0, 0.0], [1.0, 1.0, 1.0]), ([1.0, 1.0, 1.0], [0.0, 2.0, 0.0])]
    assert max(pair_epsilon(mech, d, dp) for d, dp in pairs) <= 1.0 + 1e-9


def test_alg3_loss_is_n_eps2_over_c_and_attained() -> None:
    """On q vs q + 1 every factor of the density of '⊥⊥ then v ≤ min q' is in its Laplace
    tail, so the ratio is exactly e^{n ε2 / c}; no output exceeds it."""
    mech = SparseVector(1.0, 1.0, 1, variant=3)
    n, bound = 3, 3 * 0.5
    assert mech.epsilon_bound(n) == pytest.approx(bound)
    low, high = [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]
    edges = np.array([-np.inf, -3.0, 0.0, 1.0, 1.5, 2.5, np.inf])
    a, b = alg3_cells(mech, low, edges), alg3_cells(mech, high, edges)
    ratio = np.log(a / b)
    assert ratio[2, 0] == pytest.approx(bound, abs=1e-9)  # ⊤ at query 3, value ≤ −3
    assert ratio[2, 2] == pytest.approx(bound, abs=1e-9)  # value in [0, 1)
    assert np.abs(ratio).max() <= bound + 1e-9
    for d, dp in [([0.0, 2.0, 1.0], [1.0, 1.0, 2.0]), ([2.0, 0.0, 0.0], [1.0, 1.0, 1.0])]:
        r = np.log(alg3_cells(mech, d, edges) / alg3_cells(mech, dp, edges))
        assert np.abs(r).max() <= bound + 1e-9


def test_epsilon_bound_table() -> None:
    eps = 0.1
    expect = {(1, 1): eps, (1, 2): eps, (2, 1): eps, (2, 2): eps, (3, 1): 0.5, (3, 2): 0.25,
              (4, 1): 0.175, (4, 2): 0.325, (4, 4): 0.625, (5, None): math.inf, (6, None): 0.5}
    for (v, c), val in expect.items():
        assert SparseVector(eps, 1.0, c, variant=v).epsilon_bound(10) == pytest.approx(val)
    assert SparseVector(eps, 1.0, 4, variant=4).epsilon_bound(3) == pytest.approx(3 * 0.075)
    assert SparseVector(eps, 1.0, None, variant=5).epsilon_bound(1) == pytest.approx(0.05)
