"""Seed 002 (Li–Wang–Ye): accuracy of the algorithms at empirically calibrated sizes.

The paper's sufficient n comes from Lemma 4.1's 1/700 and is 10⁷–10¹⁰ users even for toy
settings (notes §4.2), so utility claims are checked as (α, β) statements at sizes where the
internal decisions already work (n = 200–400; the sizes are ours, not the paper's) with
``dp_accuracy`` (exact binomial test of the failure rate), against exact population errors on a
finite domain; the Õ sample complexities are measured as scaling trends (``dp_record``). Each
body catches the utility bugs of notes §5 (B7, B9, B10, B11, B12, B16) as mutants.

References
----------
Li–Wang–Ye (seed 002): Lemma C.1, Algorithm 2 / Lemma 4.5, Lemma 5.1, Theorems 3.4, 4.6, 5.2;
notes ``shared/research/seed-002.md`` §3.3, §3.7, §4.2 (U3–U8), §5, §6.1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from algorithms.pure_agnostic import (
    ItemLearner,
    PrivateCompare,
    PrivateMedian,
    PrivateMinError,
    Representation,
    ThresholdLearner,
    UserLearner,
    decoys,
    threshold_table,
)
from algorithms.pure_agnostic.data import codes
from algorithms.pure_agnostic.representation import subset, trivial
from algorithms.pure_agnostic.testbeds import Distribution, sample_users

N = 16
NOISY = Distribution.noisy_threshold(N, cut=8, noise=0.1)  # η = 0.1 (f_8)
HEAVY = Distribution.heavy_point(N, 8, heavy=0.85)  # η = 0, only f_8 is optimal
C = threshold_table(N)


def _mut(name: str) -> Any:
    return pytest.param(name, marks=pytest.mark.mutant(name))


def _bind(fn: Any, **kw: Any) -> Any:
    """``trial(rng)`` from ``fn(rng, **kw)`` (dp_accuracy inspects the trial's signature)."""
    def trial(rng: np.random.Generator) -> float:
        return fn(rng, **kw)
    return trial


def _errors_by_code(dist: Distribution, table: np.ndarray) -> dict[int, float]:
    return dict(zip(codes(table).tolist(), dist.errors(table).tolist()))


def _record_sensitivity(dp_sensitivity: Any, results: list[Any], beta: float,
                        conditional: list[list[np.ndarray]] | None = None) -> None:
    """Slack = the largest measured failure rate / β (with ``conditional``, one list per
    configuration of the trials' exact conditional failure probabilities P[fail | z] from the
    learner's law: the largest Rao–Blackwellised rate, their mean); detectable failure-rate
    inflation = the largest over the calls of the exact binomial power-0.9 figure at each
    call's α."""
    from algorithms.realizable_to_agnostic.testbeds import detectable_inflation
    if conditional is None:
        worst = max(r.failure_rate for r in results)
        what = "largest measured failure rate"
    else:
        worst = max(float(np.concatenate(c).mean()) for c in conditional)
        what = ("largest Rao–Blackwellised failure rate (mean over the trials' datasets of the "
                "exact P[fail | z] from the learner's law)")
    det = max(detectable_inflation(r.trials, beta, r.confidence) for r in results)
    dp_sensitivity(loss=max(worst, 1e-9), bound=beta, detectable_overspend=det,
                   basis=f"{what} over {len(results)} configuration(s) / β; detectable "
                         "inflation from the exact binomial power at each call's α")


# ============================================================================= Lemma C.1

@pytest.mark.claim(paper="002", ref="Lemma C.1", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("compare_ge_t")])
def test_private_compare_answers(variant: str, dp_accuracy: Any, dp_sensitivity: Any) -> None:
    """σ = 0 ⇒ η̃ ≥ η − α/2 and σ = 1 ⇒ η̃ ≤ η + α/2, w.p. ≥ 1 − β (β = 0.1), at n = 300 users of
    m = 4 (calibrated size), η = 0.1, α = 0.1, ε = 1, for guesses η̃ outside [η − α/2, η + α/2].
    Mutant B11: ``E_t`` counts "≥ t" mistakes. 1600 trials per guess (issue 27): power ≥ 0.9
    at 1.5β at the 4th call's α (was 300: ≥ 2x β)."""
    m, n, alpha = 4, 300, 0.1
    results = []
    for guess in (0.0, 0.03, 0.2, 0.4):
        mech = PrivateCompare(1.0, guess, alpha, m, N, strict=variant == "reference")
        want = 1 if guess < 0.1 - alpha / 2 else 0

        def trial_fn(rng: np.random.Generator, mech: Any, want: int) -> float:
            z = sample_users(NOISY, n, m, rng)[0]
            return float(mech.sample(z, 1, rng)[0] != want)

        results.append(dp_accuracy(_bind(trial_fn, mech=mech, want=want), alpha=0.5, beta=0.1,
                                   trials=1600))
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, results, 0.1)


# ============================================================================= Lemma 4.5

@pytest.mark.claim(paper="002", ref="Lemma 4.5", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("algorithm2_as_printed")])
def test_min_error_is_accurate(variant: str, dp_accuracy: Any, dp_sensitivity: Any) -> None:
    """``|η̂ − η| ≤ α`` w.p. ≥ 1 − β (β = 0.05) at n = 200 users, m ∈ {1, 4}, α = 0.1, ε = 1, for
    η ∈ {0.1, 0.25} (calibrated size; the lemma's n is Õ). Mutant B7: Algorithm 2's branches as
    printed (returns 1 − 2^−T whenever η is small, notes §6.1). 3000 trials per configuration
    (issue 27): power ≥ 0.9 at 1.5β = 0.075 at the 3rd call's α (was 300: ≥ 2.6x β)."""
    branches = "proof" if variant == "reference" else "printed"
    results = []
    for noise, m in ((0.1, 1), (0.1, 4), (0.25, 4)):
        dist = Distribution.noisy_threshold(N, 8, noise)
        eta = float(dist.threshold_errors().min())
        mech = PrivateMinError(1.0, 0.1, m, N, branches=branches)

        def trial_fn(rng: np.random.Generator, mech: Any, m: int, dist: Any, eta: float) -> float:
            z = sample_users(dist, 200, m, rng)[0]
            return abs(float(mech.sample(z, 1, rng)[0]) - eta)

        results.append(dp_accuracy(_bind(trial_fn, mech=mech, m=m, dist=dist, eta=eta),
                                   alpha=0.1, beta=0.05, trials=3000))
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, results, 0.05)


@pytest.mark.claim(paper="002", ref="Lemma 4.5", kind="utility", expect="erratum")
def test_algorithm2_as_printed_is_wrong(dp_counterexample: Any) -> None:
    """ERRATUM (Algorithm 2 as printed; Lemma 4.5 holds for the proof's branches). Witness: 200
    users of m = 4 from the noisy threshold (η = 0.1), α = 0.1, ε = 1, T = 5: the exact law of the
    printed algorithm puts ≥ 0.9999 on η̂ = 1 − 2^−5 = 0.96875 (error 0.869 > α), the proof's
    version puts ≥ 0.99 within α of η."""
    z = sample_users(NOISY, 200, 4, np.random.Generator(np.random.PCG64(0)))[0]
    printed = PrivateMinError(1.0, 0.1, 4, N, branches="printed").pmf(z)
    proof = PrivateMinError(1.0, 0.1, 4, N).pmf(z)
    top = max(printed, key=printed.__getitem__)
    assert top == 1 - 2**-5 and printed[top] >= 0.9999
    assert sum(p for e, p in proof.items() if abs(e - 0.1) <= 0.1) >= 0.99
    dp_counterexample("algorithm2_printed_branches", {
        "dataset": "200 users x 4 examples, noisy threshold N=16, cut=8, noise=0.1, seed 0",
        "eta": 0.1, "alpha": 0.1, "printed_mode": top, "printed_mass": printed[top],
        "proof_mass_within_alpha": sum(p for e, p in proof.items() if abs(e - 0.1) <= 0.1)})


# ============================================================================= Lemma 5.1

SKEWED = Distribution(np.r_[np.full(8, 1 / 8), np.zeros(56)], np.zeros(64))


@pytest.mark.claim(paper="002", ref="Lemma 5.1", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("median_midpoint")])
def test_median_splits_the_mass(variant: str, dp_accuracy: Any, dp_record: Any,
                                dp_sensitivity: Any) -> None:
    """``max(Pr[x ∈ [l, u−1]], Pr[x ∈ [u+1, r]]) ≤ (2/3)·a`` w.p. ≥ 1 − β (β = 0.1) on
    [l, r] = [0, 64] (a = 1) with D_X uniform on {1..8}, ε = 1, m = 4, n = 100 (calibrated).
    The exact failure probability (mean over 20 datasets) is recorded for a = 0.25 and
    m ∈ {1, 2, 4} (the m-fold amplification of Corollary D.1). Mutant B10: the index midpoint."""
    kind = "private" if variant == "reference" else "midpoint"
    cum = np.r_[0.0, np.cumsum(SKEWED.px)]

    def side_mass(u: np.ndarray) -> np.ndarray:
        return np.maximum(cum[np.maximum(u - 1, 0)], cum[-1] - cum[np.minimum(u, 64)])

    mech = PrivateMedian(1.0, 0, 64, 1.0, 4, 64, kind=kind)

    def trial(rng: np.random.Generator) -> float:
        z = sample_users(SKEWED, 100, 4, rng)[0]
        return float(side_mass(mech.sample(z, 1, rng))[0])

    r = dp_accuracy(trial, alpha=2 / 3, beta=0.1, trials=1400)     # power ≥ 0.9 at 1.5β
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, [r], 0.1)
    # m-fold amplification: [l, r] = [0, 16] holds mass a = 0.25 (uniform on {1..8}; the other
    # 0.75 on {33..64}), so m' = min(m, ⌊1/a⌋) = m for m ≤ 4
    px = np.zeros(64)
    px[:8], px[32:] = 0.25 / 8, 0.75 / 32
    light = Distribution(px, np.zeros(64))
    cum_l = np.r_[0.0, np.cumsum(px)]
    rng = np.random.Generator(np.random.PCG64(5))
    for m in (1, 2, 4):
        for n in (20, 40, 80, 160):
            med = PrivateMedian(1.0, 0, 16, 0.25, m, 64, kind=kind)
            fail = np.mean([sum(p for u, p in med.pmf(z).items()
                                if max(cum_l[max(u - 1, 0)], cum_l[16] - cum_l[u]) > 0.25 * 2 / 3)
                            for z in sample_users(light, n, m, rng, 20)])
            dp_record("median_failure", {"variant": variant, "a": 0.25, "m": m, "n": n,
                                         "failure": float(fail)})


# ============================================================================= Theorem 3.4

def _item(variant: str, representation: Any = None) -> ItemLearner:
    if variant == "item_invalid_representation":  # B16: H misses f_8
        representation = Representation((np.delete(C, 8, axis=0),), "subset")
    return ItemLearner(1.0, C, representation, sign=-1 if variant == "item_sign_flipped" else 1)


#: Trials per configuration of the Theorem 3.4 test (issue 27; was 80): trials are vectorised
#: over datasets (:meth:`ItemLearner.sample_counts`, ~10 µs each), 2000 detect a ≤ 1.43x
#: inflation of β at the first and second call's α of the main job.
ITEM_TRIALS = 2000


def _excess_lookup(dist: Distribution, table: np.ndarray, eta: float) -> Any:
    """``codes -> err_D(h) − η`` for arrays of released codes of rows of ``table``."""
    table = np.unique(table, axis=0)
    order = np.argsort(codes(table))
    keys, excess = codes(table)[order], (dist.errors(table) - eta)[order]

    def lookup(out: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(keys, out)
        assert (keys[np.minimum(pos, keys.size - 1)] == out).all()
        return excess[pos]

    return lookup


def _cells(dist: Distribution) -> np.ndarray:
    """P[(x, y)] over the 2N cells, zeros (y = 0) first: one example of ``dist``."""
    return np.r_[dist.px * (1 - dist.p1), dist.px * dist.p1]


@pytest.mark.claim(paper="002", ref="Theorem 3.4", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("item_sign_flipped"),
                                     _mut("item_invalid_representation")])
def test_item_learner_is_accurate(variant: str, dp_accuracy: Any, dp_sensitivity: Any) -> None:
    """``err_D(h) ≤ η + α`` w.p. ≥ 1 − β (α = β = 0.1, ε = 1) at n = 300 examples (calibrated):
    the noisy threshold (η = 0.1) with H = C, and the heavy point (D_X(8) = 0.85, only f_8
    optimal) with improper H = C ∪ 20 random functions (four draws; the surrogate score at
    work). :data:`ITEM_TRIALS` trials per configuration, each a fresh dataset (its label counts,
    Multinomial(300, D): the learner reads only these) and one run of the learner
    (:meth:`ItemLearner.sample_counts`; its law equals :meth:`ItemLearner.sample`'s, tested in
    tests/pure_agnostic). Slack: the Rao–Blackwellised failure rate (exact P[fail | z] from the
    learner's law, averaged over the trials' datasets). Mutants: B12 (``exp(+εq/2Δ)``), B16 (a
    "representation" missing f_8)."""
    rep = decoys(C, 20, 4, seed=7)
    if variant == "reference":
        # Definition 2.3's premise: every H in the support contains C (then P is a
        # (0, 0)-representation), H = C included; B16's random subsets of C are not one
        # (mutation run: the membership check and the subset constructor reached no claim test)
        assert trivial(C).is_proper_superset_of(C) and rep.is_proper_superset_of(C)
        assert not subset(C, len(C) - 1, 3, seed=16).is_proper_superset_of(C)
    hyps = np.vstack([C, *rep.classes])
    results, cond = [], []
    for dist, r in ((NOISY, None), (HEAVY, rep)):
        mech = _item(variant, r)
        excess = _excess_lookup(dist, hyps, float(dist.threshold_errors().min()))
        cells, mine = _cells(dist), []
        cond.append(mine)

        def trial(size: int, rng: np.random.Generator, mech: Any = mech, cells: Any = cells,
                  excess: Any = excess, mine: Any = mine) -> np.ndarray:
            counts = rng.multinomial(300, cells, size=size)
            zeros, ones = counts[:, :N], counts[:, N:]
            parts = mech.probabilities_counts(ones, zeros)
            mine.append(sum(ps[:, excess(cs) > 0.1].sum(axis=1) for cs, ps in parts)
                        / len(parts))
            return excess(mech.sample_counts(ones, zeros, rng, parts=parts))

        results.append(dp_accuracy(trial, alpha=0.1, beta=0.1, trials=ITEM_TRIALS))
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, results, 0.1, cond)


# ============================================================================= Theorem 4.6

#: Trials of the Theorem 4.6 test per configuration, in call order (issue 27; was 60 each):
#: power 0.9 at a ≤ 1.49x inflation of β at the 1st/2nd/3rd call's α with a per-test α of
#: 1.2e-5. Trials are vectorised over datasets (:meth:`UserLearner.sample_datasets`, the law of
#: :meth:`UserLearner.sample` on each dataset, tested in tests/pure_agnostic): ≈ 0.3–1.5 ms CPU
#: each under load (m = 16 the costliest; the old per-dataset trial ≈ 3–10 ms).
USER_TRIALS = (1400, 1550, 1650)


@pytest.mark.claim(paper="002", ref="Theorem 4.6", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("user_invalid_representation")])
def test_user_learner_is_accurate(variant: str, dp_accuracy: Any, dp_sensitivity: Any) -> None:
    """``err_D(h) ≤ η + α`` w.p. ≥ 1 − β (α = β = 0.1, ε = 1) at n = 300 users (calibrated):
    noisy threshold with m = 16 and m = 1, heavy point with m = 4, :data:`USER_TRIALS` trials
    (the costliest configuration, m = 16, first: it gets the largest α), each a fresh dataset and
    one run of the learner; a mutant case runs 60 per configuration. Mutant B16 (H misses f_8:
    fails on the heavy point)."""
    rep = Representation((np.delete(C, 8, axis=0),), "subset") if variant != "reference" else None
    results = []
    for (dist, m), trials in zip(((NOISY, 16), (NOISY, 1), (HEAVY, 4)), USER_TRIALS):
        mech = UserLearner(1.0, 0.1, m, C, rep)
        excess = _excess_lookup(dist, C, float(dist.threshold_errors().min()))

        def trial(size: int, rng: np.random.Generator, mech: Any = mech, dist: Any = dist,
                  m: int = m, excess: Any = excess) -> np.ndarray:
            blocks = [min(200, size - s) for s in range(0, size, 200)]  # small arrays
            return np.concatenate([excess(mech.sample_datasets(
                sample_users(dist, 300, m, rng, b), rng)) for b in blocks])

        results.append(dp_accuracy(trial, alpha=0.1, beta=0.1,
                                   trials=trials if variant == "reference" else 60))
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, results, 0.1)


@pytest.mark.claim(paper="002", ref="Theorem 4.6", kind="utility")
def test_user_learner_scaling_in_m(dp_record: Any) -> None:
    """Õ(RepD/ε + RepD/(√m αε) + VC/(mα²)): the exact failure probability (mixed over 15
    datasets) of the user-level learner falls with m at fixed n (noisy threshold, α = 0.1,
    ε = 1); recorded per (m, n), with the smallest n reaching failure ≤ 0.1."""
    rng = np.random.Generator(np.random.PCG64(11))
    err = _errors_by_code(NOISY, C)
    bad = {c for c, e in err.items() if e > 0.1 + 0.1 + 1e-12}
    need = {}
    for m in (1, 4, 16):
        mech = UserLearner(1.0, 0.1, m, C)
        for n in (25, 50, 100):
            fail = float(np.mean([sum(p for c, p in mech.pmf(z).items() if c in bad)
                                  for z in sample_users(NOISY, n, m, rng, 15)]))
            dp_record("user_learner_failure", {"m": m, "n": n, "failure": fail})
            if fail <= 0.1 and m not in need:
                need[m] = n
    dp_record("user_learner_n_needed", {str(m): need.get(m) for m in (1, 4, 16)})


# ============================================================================= Theorem 5.2

#: N = 256, x uniform on {120..123}, y = 1[x > 121] (B9: f_mid never returned fails here)
NARROW = Distribution.narrow(256, (120, 121, 122, 123), cut=121)
#: N = 128, x uniform on {60..63}, y = 1[x > 62], α = 0.3 (T = 5): the index midpoint (B10)
#: ends in an 8-wide interval whose left end errs on half the support
NARROW_B10 = Distribution.narrow(128, (60, 61, 62, 63), cut=62)


#: Trials per configuration of the Theorem 5.2 test (issue 27): a trial (fresh 300 users + one
#: run of the learner) costs ≈ 2.8 ms on NARROW and ≈ 2.1 ms on NARROW_B10 (≈ 12 / 6 ms before
#: the sparse threshold_user_errors). NARROW is the calibrated configuration (reference failure
#: 8 % over 400 exploratory runs, seed 12345; 7 % in the test); NARROW_B10 (reference failure 0)
#: is where B10 shows. 1400 / 1500 trials detect a 1.48x / 1.49x inflation of β at the first /
#: second call's α in the main job.
THRESHOLD_TRIALS = {"narrow": 1400, "narrow_b10": 1500}
#: Mutant knobs and the configuration each is a utility bug on; the trial count of a mutant case.
#: alg1_release_noise_1_5x (ours, subtle): every Algorithm 1 release at ε/(6T) instead of
#: ε/(4T), i.e. Laplace noise 1.5x too large: fails ≈ 27 % on NARROW (400 exploratory runs).
THRESHOLD_MUTANTS = {"alg1_without_mid_check": ((("check_mid", False),), "narrow", 60),
                     "alg1_midpoint_split": ((("median", "midpoint"),), "narrow_b10", 60),
                     "alg1_release_noise_1_5x": ((("releases_per_round", 6),), "narrow", 300)}


@pytest.mark.claim(paper="002", ref="Theorem 5.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", *(_mut(v) for v in THRESHOLD_MUTANTS)])
def test_threshold_learner_is_accurate(variant: str, dp_accuracy: Any,
                                      dp_sensitivity: Any) -> None:
    """``err_D(f_u) ≤ η + α`` w.p. ≥ 1 − β (β = 0.1, m = 4, ε = 4, n = 300: calibrated) on two
    narrow supports: N = 256 at α = 0.1 (T = 8) and N = 128 at α = 0.3 (T = 5), with
    :data:`THRESHOLD_TRIALS` trials. Mutants, each on the configuration where it is a utility
    bug (:data:`THRESHOLD_MUTANTS`): B9 (f_mid never returned: fails ≈ 78% on the first), B10
    (index midpoint instead of the private median: fails ≈ 100% on the second) and the subtle
    alg1_release_noise_1_5x (release noise 1.5x: fails ≈ 27 % on the first)."""
    kw, only, mutant_trials = THRESHOLD_MUTANTS.get(variant, ((), None, 0))
    results = {}
    for name, dist, alpha in (("narrow", NARROW, 0.1), ("narrow_b10", NARROW_B10, 0.3)):
        if only is not None and name != only:
            continue
        errs = dist.threshold_errors()
        eta = float(errs.min())
        mech = ThresholdLearner(4.0, alpha, 4, dist.domain, threshold_kwargs=kw)

        def trial_fn(rng: np.random.Generator, mech: Any, dist: Any, errs: np.ndarray,
                     eta: float) -> float:
            z = sample_users(dist, 300, 4, rng)[0]
            return float(errs[mech.sample(z, 1, rng)[0]]) - eta

        results[name] = dp_accuracy(_bind(trial_fn, mech=mech, dist=dist, errs=errs, eta=eta),
                                    alpha=alpha, beta=0.1,
                                    trials=mutant_trials or THRESHOLD_TRIALS[name])
    if variant == "reference":
        _record_sensitivity(dp_sensitivity, list(results.values()), 0.1)
