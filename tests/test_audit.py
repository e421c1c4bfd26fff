"""Behaviour and power of :func:`dpcheck.audit` (design §4).

Every test runs at a fixed seed, so each is deterministic; the statistical claims each one rests
on are stated next to it. Power tests use 10⁶ samples per side as the issue specifies.
"""

from __future__ import annotations

import json
import math
import time
import warnings

import numpy as np
import pytest

import dpcheck
from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, RandomizedResponse
from dpcheck import ApproxDP, PureDP, audit
from dpcheck.core.confirm import CHUNK
from dpcheck.events.support import SUPPORT_SHARE
from dpcheck.core.audit import exploration_size
from dpcheck.core.results import untimed

MILLION = 1_000_000


#: Laplace noise added to a value in float64 is not private at all (floating-point holes, found
#: by the default float features: tests/test_float_features.py). Tests of the auditor on the
#: *real-valued* mechanism's truth therefore audit the values only.
REAL = {"float_features": False}

def laplace_count(scale: float):
    def mech(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, scale, size)
    return mech


def test_correct_laplace_is_tight_and_not_flagged():
    r = audit(laplace_count(1.0), [1], [0], PureDP(1.0), samples=MILLION, seed=0, **REAL)
    assert not r.violation
    assert 0.95 <= r.epsilon_lower <= 1.0
    assert r.p_value > 0.05


def test_insufficient_noise_laplace_is_flagged():
    """Noise scale for ε/0.8 (true ε = 1.25) claimed at ε = 1."""
    r = audit(laplace_count(0.8), [1], [0], PureDP(1.0), samples=MILLION, seed=0, **REAL)
    assert r.violation
    assert 1.0 < r.epsilon_lower <= 1.25
    assert r.p_value <= 0.05
    with pytest.raises(dpcheck.PrivacyViolation) as info:
        r.raise_if_violation()
    assert info.value.result is r
    assert "VIOLATION" in str(info.value) and "witness" in str(info.value)


def test_raw_data_with_probability_1e3_breaks_approx_claim():
    """With probability 1e-3 the mechanism releases sum(data) exactly: hockey-stick δ = 1e-3."""
    def leak(data, size, rng):
        out = float(np.sum(data)) + rng.laplace(0.0, 1.0, size)
        out[rng.random(size) < 1e-3] = float(np.sum(data))
        return out

    r = audit(leak, [1], [0], ApproxDP(1.0, 1e-4), samples=MILLION, seed=0, **REAL)
    assert r.violation
    assert r.delta_lower is not None and 1e-4 < r.delta_lower <= 1e-3
    assert r.witness.event.kind == "atoms"
    # the same mechanism does satisfy (1, 2e-3)-DP: no violation there
    ok = audit(leak, [1], [0], ApproxDP(1.0, 2e-3), samples=MILLION, seed=0, **REAL)
    assert not ok.violation and ok.delta_lower <= 2e-3


def test_output_that_exists_only_under_one_dataset_reaches_the_ceiling():
    """A noiseless count: M(D) = 1 and M(D′) = 0 always. A pure claim certifies the event with
    the conditional ratio test: all k of the (Poisson-many) confirmation outputs of D fall in
    it and none of D′'s, so π_lo = λ^(1/k) at λ = α/candidates and the bound is
    ln(π_lo/(1 − π_lo)) ≈ ln(k / ln(1/λ)) — the ceiling, no probability floor."""
    def noiseless(data, size, rng):
        return np.full(size, float(np.sum(data)))

    r = audit(noiseless, [1], [0], PureDP(1.0), samples=MILLION, seed=0)
    assert r.violation and r.epsilon_lower >= 12
    b = r.witness.bound
    assert b.k_q == 0 and b.k_p == b.n_p and b.ratio_low is not None
    ranked = [w for w in r.confirmed if not w.event.support]  # support: 10 % of α
    # weighted Bonferroni: half of the ranked 90 % to the first, the rest split equally
    share, k = 0.05 * (1 - SUPPORT_SHARE), len(ranked)
    level = (share / k if k < 3 else share / 2 if ranked.index(r.witness) == 0
             else share / (2 * (k - 1)))
    assert b.alpha == pytest.approx(level)
    pi_lo = level ** (1 / b.k_p)
    assert r.epsilon_lower == pytest.approx(math.log(pi_lo / (1 - pi_lo)), rel=1e-9)
    n_c = MILLION - exploration_size(MILLION)
    assert abs(b.n_p - (n_c - 3 * math.sqrt(n_c))) < 6 * math.sqrt(n_c)


def test_rare_support_mismatch_is_found_without_a_probability_floor():
    """An output of probability 1e-3 that M(D′) never produces: ε is ∞ and the bound is far
    above ln(1/c) for any c ≥ 1e-3 (DP-Sniper's cap would be 4.6)."""
    def rare(data, size, rng):
        out = rng.integers(0, 4, size)
        out[rng.random(size) < 1e-3 * data[0]] = 99
        return out

    r = audit(rare, [1], [0], PureDP(1.0), samples=MILLION, seed=0)
    assert r.violation and r.epsilon_lower > 5
    assert r.witness.event.describe() == "output in {99}"


def test_same_seed_same_result_bit_for_bit_and_different_seed_differs():
    mech = laplace_count(1.0)
    a = audit(mech, [1], [0], PureDP(1.0), samples=50_000, seed=3).to_dict()
    b = audit(mech, [1], [0], PureDP(1.0), samples=50_000, seed=3).to_dict()
    c = audit(mech, [1], [0], PureDP(1.0), samples=50_000, seed=4).to_dict()
    a, b, c = (untimed(rec) for rec in (a, b, c))
    assert a == b
    assert a != c
    assert audit(mech, [1], [0], PureDP(1.0), samples=2000).seed["entropy"] == 0


def test_explore_seconds_is_the_time_before_confirmation():
    """``explore_seconds`` covers exploration and selection, not confirmation: a mechanism that
    sleeps on every call makes each phase last at least its calls' sleeps (two exploration
    calls, then one confirmation chunk per side)."""
    def sleepy(data, size, rng):
        time.sleep(0.25)
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    r = audit(sleepy, [1], [0], PureDP(1.0), samples=20_000, seed=0, float_features=False)
    assert r.confirm_samples < CHUNK and r.explore_seconds is not None
    assert 0.5 <= r.explore_seconds <= r.seconds - 0.5
    rec = r.to_dict()
    assert rec["explore_seconds"] == r.explore_seconds
    assert "seconds" not in untimed(rec) and "explore_seconds" not in untimed(rec)


def test_samples_are_split_and_chunked():
    r = audit(laplace_count(1.0), [1], [0], ApproxDP(1.0, 1e-6), samples=2 * CHUNK, seed=0)
    assert r.explore_samples + r.confirm_samples == r.samples == 2 * CHUNK
    assert r.confirm_samples > CHUNK  # confirmation spans two chunks
    assert r.witness.bound.n_p == r.witness.bound.n_q == r.confirm_samples


def test_pure_claims_poissonize_the_confirmation_within_the_budget():
    """Pure claims draw Poisson(n − 3√n) confirmation outputs per side (for the conditional
    ratio test), never more than the budget here, and they differ between the sides."""
    r = audit(laplace_count(1.0), [1], [0], PureDP(1.0), samples=2 * CHUNK, seed=0)
    n_c = r.confirm_samples
    b = r.witness.bound
    for n in (b.n_p, b.n_q):
        assert n <= n_c and abs(n - (n_c - 3 * math.sqrt(n_c))) < 6 * math.sqrt(n_c)
    assert b.n_p != b.n_q


def test_progress_reports_every_output_drawn():
    seen: list[tuple[int, int]] = []
    audit(laplace_count(1.0), [1], [0], ApproxDP(1.0, 1e-3), samples=10_000, seed=0,
          progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (20_000, 20_000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    seen.clear()  # pure claims: Poisson confirmation sizes, all of them reported
    audit(laplace_count(1.0), [1], [0], PureDP(1.0), samples=10_000, seed=0,
          progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (20_000, 20_000)  # Poisson sizes: scaled to the budget
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_to_dict_is_json_safe_and_complete():
    r = audit(RandomizedResponse(1.0, 4), [0], [1], PureDP(1.0), samples=20_000, seed=0,
              relation=dpcheck.Replace())
    rec = json.loads(json.dumps(r.to_dict()))
    for key in ("violation", "epsilon_lower", "delta_lower", "p_value", "witness", "samples",
                "seconds", "claim", "pair", "seed", "exact_epsilon", "sampler_check"):
        assert key in rec
    assert rec["pair"] == [[0], [1]]
    assert rec["witness"]["event"]["kind"] in {"atoms", "le", "gt", "interval"}
    assert rec["relation"] == dpcheck.Replace().name


def test_exact_mode_reports_the_pmf_loss_and_passes_the_sampler_check():
    rr = RandomizedResponse(0.5, 3)
    r = audit(rr, [0], [2], PureDP(0.5), samples=200_000, seed=1)
    assert r.exact_epsilon == pytest.approx(0.5)
    assert r.exact_delta == pytest.approx(0.0, abs=1e-12)
    assert r.sampler_check is not None and not r.sampler_mismatch
    assert r.epsilon_lower <= r.exact_epsilon


class _LyingRR:
    """Claims the pmf of 1-DP randomized response but samples with keep probability 0.6."""

    rr = RandomizedResponse(1.0, 3)

    def pmf(self, data):
        return self.rr.pmf(data)

    def sample(self, data, size, rng):
        keep = rng.random(size) < 0.6
        return np.where(keep, data[0], (data[0] + rng.integers(1, 3, size)) % 3)


def test_sampler_that_contradicts_its_pmf_is_flagged():
    r = audit(_LyingRR(), [0], [1], PureDP(1.0), samples=200_000, seed=0)
    assert r.sampler_mismatch
    assert "contradicts" in r.summary()


def test_sampler_with_outputs_outside_its_pmf_is_flagged():
    class Outside(_LyingRR):
        def sample(self, data, size, rng):
            return np.where(rng.random(size) < 0.999, data[0], 7)

    r = audit(Outside(), [0], [1], PureDP(1.0), samples=20_000, seed=0)
    assert r.sampler_mismatch and r.sampler_check.impossible == (7,)


def test_discrete_mechanisms_at_their_true_epsilon_are_not_flagged():
    for mech, d, dp in ((RandomizedResponse(1.0, 5), [0], [1]),
                        (GeometricSum(1.0), [1], [0]),
                        (LaplaceSum(1.0), [1.0], [0.0])):
        r = audit(mech, d, dp, mech.claim, samples=MILLION, seed=0, **REAL)
        assert not r.violation, r.summary()
        assert r.epsilon_lower >= 0.95, r.summary()


def test_vector_outputs_use_row_atoms_for_answer_patterns():
    """Answer patterns with identical coordinate marginals and identical sums under D and D′
    but disjoint joint support: no single coordinate or their sum can see the difference; point
    events on whole rows (or on the learned score, whose values differ per pattern) can."""
    rows_d = np.array([[1, 1, 0], [0, 0, 1]])
    rows_dp = np.array([[1, 0, 0], [0, 1, 1]])

    def patterns(data, size, rng):
        return (rows_d if data[0] else rows_dp)[rng.integers(0, 2, size)]

    r = audit(patterns, [1], [0], PureDP(1.0), samples=200_000, seed=0)
    assert r.violation and r.epsilon_lower > 9
    assert r.witness.event.kind == "atoms"
    assert r.witness.event.feature_name in {"row", "llr(output)"}
    assert "row" in [f["name"] for f in r.features["features"]]


def test_user_feature_map():
    """Five composed Laplace(1) releases of one count: true ε = 5. The user feature
    Σ_i clip(x_i − 0.5, −0.5, 0.5) is the exact log-likelihood ratio, so half-lines on it are
    the optimal events."""
    def composed(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, (size, 5))

    def llr(x):
        return np.clip(x - 0.5, -0.5, 0.5).sum(axis=1)

    r = audit(composed, [1], [0], PureDP(1.0), samples=MILLION, seed=0, features=llr)
    assert r.violation and 4.0 < r.epsilon_lower <= 5.0


def test_learned_llr_score_finds_composition_without_a_feature_map():
    """Five composed Laplace(1/0.1) releases of one count claimed 0.1-DP: true ε = 0.5. The
    naive-Bayes score learned on the exploration sample is close to the exact log-likelihood
    ratio, so no user feature map is needed to get near the truth."""
    def composed(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 10.0, (size, 5))

    r = audit(composed, [1], [0], PureDP(0.1), samples=MILLION, seed=0,
              float_features=False)  # real-valued truth (float64 holes: float_features)
    assert r.violation and 0.4 < r.epsilon_lower <= 0.5
    # a learned or rank score (for Laplace noise the sign count is the exact LLR up to scale)
    assert r.witness.event.feature_name in {"llr(output)", "signs(output)", "logit(output)"}


def test_string_outputs():
    def answer(data, size, rng):
        return np.where(rng.random(size) < 0.7, "yes" if data[0] else "no", "maybe")

    r = audit(answer, [1], [0], PureDP(1.0), samples=100_000, seed=0)
    assert r.violation and r.witness.event.kind == "atoms"


def test_relation_is_checked():
    r = audit(laplace_count(1.0), [1, 0, 1], [1, 0], PureDP(1.0), samples=2000, seed=0,
              relation=dpcheck.AddRemove())
    assert r.relation == dpcheck.AddRemove().name
    with pytest.raises(dpcheck.InvalidArgument, match="not neighbours"):
        audit(laplace_count(1.0), [1, 0, 1], [0], PureDP(1.0), samples=2000,
              relation=dpcheck.AddRemove())


def test_object_with_sample_method_and_bool_outputs():
    class Coin:
        def sample(self, data, size, rng):
            return rng.random(size) < (0.9 if data[0] else 0.1)

    r = audit(Coin(), [1], [0], PureDP(1.0), samples=100_000, seed=0)
    assert r.violation and r.epsilon_lower > 2.0  # true ε = ln 9 ≈ 2.197
    assert r.epsilon_lower <= math.log(9)


def test_row_witnesses_are_described_by_their_rows():
    """With an uninformative feature map only the whole-row atoms can separate the patterns;
    the witness must name the rows themselves, not their hashes."""
    rows_d = np.array([[1, 1, 0], [0, 0, 1]])
    rows_dp = np.array([[1, 0, 0], [0, 1, 1]])

    def patterns(data, size, rng):
        return (rows_d if data[0] else rows_dp)[rng.integers(0, 2, size)]

    r = audit(patterns, [1], [0], PureDP(1.0), samples=20_000, seed=0,
              features=lambda out: np.zeros(out.shape[0]))
    ev = r.witness.event
    assert r.violation and ev.feature_name == "row"
    text = ev.describe()
    assert "(1, 1, 0)" in text or "(1, 0, 0)" in text, text
    assert json.loads(json.dumps(r.to_dict()))["witness"]["event"]["rows"]


@pytest.mark.parametrize("samples", [1_000_000, 10_000_000])
def test_long_tailed_integer_output_keeps_a_half_line_slot(samples: int) -> None:
    """A two-sided geometric at ε = 0.1 has ~300 distinct outputs; their nested likelihood-ratio
    unions of rare tail atoms used to take all k slots (lucky on the validation half, flat on
    confirmation), so ε_lower *fell* with the budget: 0.057 at 10⁶, 0.000 at 10⁷ (true 0.1).
    At most k − 1 slots now go to one shape family of a feature while another has candidates."""
    r = audit(GeometricSum(0.1), [1], [], PureDP(0.1), samples=samples, seed=0)
    kinds = {c["event"]["kind"] for c in r.to_dict()["confirmed"]}
    assert kinds - {"atoms"}, kinds
    assert 0.09 <= r.epsilon_lower <= 0.1


def _keyword_rng_laplace(data, size, *, rng):
    return float(sum(data)) + rng.laplace(0.0, 1.0, size)


def _positional_rng_laplace(data, size, rng):
    return float(sum(data)) + rng.laplace(0.0, 1.0, size)


def test_a_sampler_with_keyword_only_rng_is_called_with_rng_keyword() -> None:
    """``f(data, size, *, rng)`` (numpy style) audits exactly like ``f(data, size, rng)``,
    also on a process pool (the adapter pickles)."""
    from concurrent.futures import ProcessPoolExecutor

    import dpcheck

    kw = dpcheck.audit(_keyword_rng_laplace, [0], [1], dpcheck.PureDP(1.0), samples=20_000, seed=3)
    pos = dpcheck.audit(_positional_rng_laplace, [0], [1], dpcheck.PureDP(1.0), samples=20_000,
                        seed=3)
    assert kw.to_dict()["witness"] == pos.to_dict()["witness"]
    assert kw.epsilon_lower == pos.epsilon_lower
    with ProcessPoolExecutor(1) as pool:
        pooled = dpcheck.audit(_keyword_rng_laplace, [0], [1], dpcheck.PureDP(1.0),
                               samples=20_000, seed=3, executor=pool)
    assert pooled.epsilon_lower == kw.epsilon_lower


@pytest.mark.parametrize("alpha", [1e-16, 1e-300])
def test_a_tiny_alpha_still_refutes_a_gross_violation(alpha):
    """z of the ranking's Wilson bounds is ``-ndtri(alpha)``: ``ndtri(1 - alpha)`` is infinite
    once ``1 - alpha`` rounds to 1 (alpha ≤ 1e-16), and every candidate's score became NaN —
    an audit without power that passed a claim 5× too small."""
    def laplace_02(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, 0.2, size)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = dpcheck.audit(laplace_02, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=100_000,
                          alpha=alpha, seed=0, float_features=False)
    assert r.violation and 3.5 < r.epsilon_lower <= 5.0


def test_summary_lines_say_what_the_fields_say():
    """A curve claim that holds is inside its curve (the summary said "outside" for any
    margin), and a budget too small to rule anything out prints no empty "rules out" line."""
    def rr(data, size, rng):  # randomized response at ε = 1: μ-GDP with μ ≈ 0.74
        keep = rng.random(size) < math.e / (1 + math.e)
        return np.where(keep, data[0], 1 - data[0])

    holds = dpcheck.audit(rr, [0], [1], dpcheck.GaussianDP(3.0), samples=20_000, seed=0)
    assert not holds.violation and holds.curve["margin"] < 0
    assert f"{-holds.curve['margin']:.3g} inside the claimed curve" in holds.summary()
    refuted = dpcheck.audit(rr, [0], [1], dpcheck.GaussianDP(0.2), samples=20_000, seed=0)
    assert refuted.violation and "outside the claimed curve" in refuted.summary()
    tiny = dpcheck.audit(rr, [0], [1], PureDP(1.0), samples=2, seed=0)
    assert all(math.isinf(f["ratio"]) for f in tiny.power_floor)
    assert "rules out" not in tiny.summary()
