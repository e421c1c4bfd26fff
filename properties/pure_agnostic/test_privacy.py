"""Seed 002 (Li–Wang–Ye): every algorithm is pure ε-DP at user level — exactly and by audit.

Datasets are users (blocks of ``m`` examples over ``X = {1..4}``); neighbours add or remove one
user (the paper's relation) or replace one (``dpcheck.UserLevel(m, mode=...)``). Each claim has
an exact test (``dpcheck.exact.privacy_loss`` of the algorithm's exact law on every pair of a
worst-case family: canonical users of notes §4.1, found by exhaustive enumeration of small
datasets, ``-m slow`` re-runs the enumeration) and an audit (``dp_audit`` of the vectorised
sampler on the family's worst pairs, which also checks the sampler against the exact law).
Mutants are the privacy bugs of notes §5, each caught by the same body.

References
----------
Li–Wang–Ye (seed 002): Lemma C.1, Algorithm 2 / Lemma 4.5, Lemma 5.1, Algorithm 1,
Theorems 3.4, 4.6, 5.2; notes ``shared/research/seed-002.md`` §4.1, §5 (B1–B4, B6, B8).
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
    PrivateThreshold,
    ThresholdLearner,
    UserLearner,
    everything,
    threshold_table,
)
from algorithms.pure_agnostic.testbeds import (
    clean,
    confusing,
    extreme,
    max_loss,
    positioned,
    user_pairs,
    users_over,
)
from dpcheck import AddRemove, PureDP, Replace, UserLevel
from dpcheck.exact import privacy_loss

N = 4
C = threshold_table(N)
TOL = 1e-9


def _mut(name: str) -> Any:
    return pytest.param(name, marks=pytest.mark.mutant(name))


def _canonical(m: int) -> list[tuple[str, list[Any], list[Any]]]:
    """Canonical worst-case pairs for users of ``m`` examples, changed user last: (mode, d, d′).

    These are the shapes of notes §4.1 (found by exhaustive enumeration of small multisets);
    :func:`_family` places the changed user at every position and in every ordering."""
    e10, e11, e40, e41 = (extreme(1, 0, m), extreme(1, 1, m), extreme(4, 0, m),
                          extreme(4, 1, m))
    cl, cf = clean(m), confusing(m)
    return [
        ("add_remove", [], [cf]),
        ("add_remove", [cl] * 3, [cl] * 3 + [cf]),
        ("add_remove", [e10] * 2, [e10] * 3),
        ("add_remove", [e11] * 3, [e11] * 4),
        ("add_remove", [e11] * 3, [e11] * 3 + [extreme(3, 0, m)]),
        ("add_remove", [cl] * 3, [cl] * 3 + [e40]),
        ("add_remove", [e10, cl, e41], [e10, cl, e41, cf]),
        ("replace", [cl, cl], [cl, cf]),
        ("replace", [e10] * 3, [e10] * 2 + [e11]),
        ("replace", [e41] * 3, [e41] * 2 + [e40]),
        ("replace", [e11] * 4, [e11] * 3 + [extreme(3, 0, m)]),
        ("replace", [cl] * 3 + [extreme(3, 1, m)], [cl] * 3 + [e40]),
        ("replace", [cf, e10, e41], [cf, e10, cl]),
    ]


def _family(m: int, orderings: int = 24) -> list[tuple[str, list[Any], list[Any]]]:
    """Worst-case search space (issue 27): every canonical pair with the changed user at every
    position ``0..n`` and in every distinct ordering of its examples (at most ``orderings``),
    plus mixed-user datasets (``[e10, cl, e41]``, ``[cf, e10, e41]``) so that the position
    is visible to a mechanism that treats users unequally. Replaced-last-user only (the
    family before issue 27) missed every per-record bug of the discard step."""
    out = []
    for mode, d, dp in _canonical(m):
        out.extend((mode, a, b) for a, b in positioned(mode, d, dp, orderings=orderings))
    return out


_LAW_CACHE: dict[Any, Any] = {}


def _law(mech: Any, d: list[Any]) -> Any:
    """Exact law of ``mech`` on ``d`` (the *ordered* dataset; cached per mechanism object)."""
    key = (id(mech), tuple(tuple(u) for u in d))
    if key not in _LAW_CACHE:
        _LAW_CACHE[key] = (mech, mech.pmf(d))
    return _LAW_CACHE[key][1]


def _exact_worst(mech: Any, m: int, relation: str | None = None,
                 orderings: int = 24) -> tuple[float, Any]:
    """Exact worst loss of ``mech`` over the family (both relations unless one is named)."""
    worst, arg = -1.0, None
    try:
        for mode, d, dp in _family(m, orderings):
            if relation is not None and mode != relation:
                continue
            assert UserLevel(m, mode=mode).are_neighbours(d, dp)
            eps = privacy_loss(_law(mech, d), _law(mech, dp)).epsilon
            if eps > worst:
                worst, arg = eps, (mode, d, dp)
    finally:
        _LAW_CACHE.clear()
    return worst, arg


def _audit_worst(mech: Any, m: int, eps: float, dp_audit: Any, samples: int,
                 modes: tuple[str, ...] = ("add_remove", "replace")) -> None:
    """Audit the exact-worst pair of each relation (chosen from the mechanism's law)."""
    for mode in modes:
        _, (mode_, d, dp) = _exact_worst(mech, m, mode)
        dp_audit(mech, d, dp, PureDP(eps), samples=samples, relation=UserLevel(m, mode=mode_))


def _overspend(make: Any, pair: Any, eps: float, hi: float = 4.0) -> float | None:
    """Smallest budget factor ``c`` (bisection to 1e-3) at which the reference run at ``c·ε``
    has exact loss ``> ε`` on the recorded worst pair: an exact test on the family catches every
    overspend ≥ ``c`` (with probability 1; the family's worst at ``c·ε`` is at least this
    pair's). ``make(c)`` builds the reference at budget ``c·ε``."""
    mode, d, dp = pair

    def loss(c: float) -> float:
        mech = make(c)
        return privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon

    if loss(hi) <= eps + TOL:
        return None
    lo_, hi_ = 1.0, hi
    while hi_ - lo_ > 1e-3:
        mid = (lo_ + hi_) / 2
        lo_, hi_ = (mid, hi_) if loss(mid) <= eps + TOL else (lo_, mid)
    return hi_


# ============================================================================= Lemma C.1

#: (m, α): m' = min(m, ⌊1/α²⌋) = m at (2, 0.2); at (4, 0.6) m' = 2 < m, so the discard step
#: (first m' examples of each user) is exercised — without it a per-record discard is invisible.
COMPARE_CONFIGS = ((2, 0.2), (4, 0.6))


def _compare(variant: str, m: int = 2, alpha: float = 0.2, budget: float = 1.0) -> PrivateCompare:
    scale = {"compare_noise_over_m": 0.5, "compare_scale_0_8": 0.8}.get(variant, 1.0)
    return PrivateCompare(budget, 0.25, alpha, m=m, domain=N, noise_scale=scale,
                          discard="record" if variant == "compare_discard_per_record" else "user")


@pytest.mark.claim(paper="002", ref="Lemma C.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _mut("compare_noise_over_m"),
                                     _mut("compare_scale_0_8"),
                                     _mut("compare_discard_per_record")])
def test_private_compare_exact(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """``PrivateCompare`` (η̃ = 0.25, ε = 1; (m, α) = (2, 0.2) and (4, 0.6), the latter with
    m' = 2 < m) is 1-DP on every pair of the family — changed user at every position and in
    every ordering (count sensitivity of ``n·τ − min_c E_t`` is ``max(τ, 1−τ) ≤ 1``, τ
    clamped). Mutants: B2 ``Lap(1/(mε))``; subtle: Laplace scale × 0.8 (a 25 % overspend);
    per-user discard applied to the flattened example list (loss 0 when the last user changes,
    2 when the first one does)."""
    for m, alpha in COMPARE_CONFIGS:
        worst, arg = _exact_worst(_compare(variant, m, alpha), m)
        dp_record("exact_worst", {"variant": variant, "m": m, "alpha": alpha, "epsilon": worst,
                                  "pair": arg})
        if variant == "reference" and m == 2:
            c = _overspend(lambda c: _compare("reference", m, alpha, c), arg, 1.0)
            dp_sensitivity(loss=worst, bound=1.0, detectable_overspend=c,
                           basis="exact pmf, worst over the positioned family (both relations); "
                                 "overspend by bisection on the budget at the worst pair")
        assert worst <= 1.0 + TOL, f"exact loss {worst} on {arg}"


@pytest.mark.claim(paper="002", ref="Lemma C.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", _mut("compare_noise_over_m"),
                                     _mut("compare_discard_per_record")])
def test_private_compare_audit(variant: str, dp_audit: Any) -> None:
    """Audit of the sampler on the worst pair of each relation; at m = 4, α = 0.6 (m' = 2) on
    the exact-worst replace pair of the positioned family (for the per-record discard: the
    *first* user changes)."""
    mech = _compare(variant)
    for mode, d, dp in (("replace", [clean(2), clean(2)], [clean(2), confusing(2)]),
                        ("add_remove", [], [confusing(2)])):
        dp_audit(mech, d, dp, PureDP(1.0), samples=200_000, relation=UserLevel(2, mode=mode))
    # m' = 2 < m = 4: the family's exact-worst replace pair of the mechanism under test
    _audit_worst(_compare(variant, 4, 0.6), 4, 1.0, dp_audit, 200_000, modes=("replace",))


# ============================================================================= Lemma 4.5

#: (m, α): T = 3 calls at (2, 0.25); T = 2 calls and m' = 2 < m at (4, 0.6).
MIN_ERROR_CONFIGS = ((2, 0.25), (4, 0.6))


def _min_error(variant: str, m: int = 2, alpha: float = 0.25,
               budget: float = 1.0) -> PrivateMinError:
    return PrivateMinError(budget, alpha, m=m, domain=N,
                           call_epsilon=budget if variant == "min_error_full_budget_per_call"
                           else None,
                           discard="record" if variant == "min_error_discard_per_record"
                           else "user",
                           rounds_offset=-1 if variant == "min_error_rounds_off_by_one" else 0)


@pytest.mark.claim(paper="002", ref="Lemma 4.5", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("min_error_full_budget_per_call"),
                                     _mut("min_error_rounds_off_by_one"),
                                     _mut("min_error_discard_per_record")])
def test_min_error_exact_privacy(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """``PrivateMinError`` (T calls at ε/T; (m, α) = (2, 0.25): T = 3; (4, 0.6): T = 2 and
    m' = 2 < m) is 1-DP: exact law over the 2^T leaves on every pair of the positioned family.
    Mutants: B3 every call at ε (loss up to Tε); subtle: ε/(T−1) per call (off by one, a
    T/(T−1) overspend); the per-user discard applied per record."""
    for m, alpha in MIN_ERROR_CONFIGS:
        worst, arg = _exact_worst(_min_error(variant, m, alpha), m)
        dp_record("exact_worst", {"variant": variant, "m": m, "alpha": alpha, "epsilon": worst,
                                  "pair": arg})
        if variant == "reference" and m == 2:
            c = _overspend(lambda c: _min_error("reference", m, alpha, c), arg, 1.0)
            dp_sensitivity(loss=worst, bound=1.0, detectable_overspend=c,
                           basis="exact pmf, worst over the positioned family (both relations); "
                                 "overspend by bisection on the budget at the worst pair")
        assert worst <= 1.0 + TOL, f"exact loss {worst} on {arg}"


@pytest.mark.claim(paper="002", ref="Lemma 4.5", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("min_error_full_budget_per_call")])
def test_min_error_audit(variant: str, dp_audit: Any) -> None:
    """Audit of the binary-search sampler on the family's worst pairs."""
    _audit_worst(_min_error(variant), 2, 1.0, dp_audit, 200_000)


# ============================================================================= Lemma 5.1

def _median(variant: str) -> PrivateMedian:
    return PrivateMedian(1.0, 0, N, 1.0, m=2, domain=N,
                         kind="exact" if variant == "median_not_private" else "private",
                         sensitivity=0.8 if variant == "median_sensitivity_0_8" else 1.0,
                         discard="record" if variant == "median_discard_per_record" else "user")


def _median_oracle(d: list[Any], eps: float = 1.0, lo: int = 0, hi: int = N, a: float = 1.0,
                   m: int = 2) -> dict[int, float]:
    """The paper's median law recomputed from the definitions (proof of Lemma 5.1), in plain
    Python, independently of :mod:`algorithms.pure_agnostic.median`/``scores``: keep the first
    m' points of each user; QL(u) = #users with more than s points in [max(lo,1), u−1], QR(u)
    = #users with more than s points in [u+1, hi]; P[u] ∝ exp(−ε·max(QL, QR)/2) (Δ = 1).
    Only (m', s) come from the implementation (``median_s``: data-independent constants)."""
    import math

    from algorithms.pure_agnostic.binomial import median_s
    mp, s_ = median_s(m, a)
    kept = [[x for x, _ in user[:mp]] for user in d]
    w = {}
    for u in range(lo, hi + 1):
        ql = sum(1 for pts in kept if sum(1 for x in pts if max(lo, 1) <= x <= u - 1) > s_)
        qr = sum(1 for pts in kept if sum(1 for x in pts if u + 1 <= x <= hi) > s_)
        w[u] = math.exp(-eps * max(ql, qr) / 2)
    z = sum(w.values())
    return {u: v / z for u, v in w.items()}


MEDIAN_MUTANTS = ["median_not_private", "median_sensitivity_0_8", "median_discard_per_record"]


@pytest.mark.claim(paper="002", ref="Lemma 5.1", kind="utility")
@pytest.mark.parametrize("variant", ["reference", *map(_mut, MEDIAN_MUTANTS)])
def test_median_exact_privacy(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """``PrivateMedian`` on ``[0, 4]`` (exponential mechanism, count sensitivity 1; a = 1 so
    m' = 1 < m = 2) is 1-DP on every pair of the positioned family (first assertion, the
    lemma's ε). The family's worst loss is 0.65 ε, so a second, labelled assertion compares,
    pair by pair, with the tightest bound computed exactly: the loss of the paper's mechanism
    on that pair, recomputed from the definitions (:func:`_median_oracle`). Mutants: B4 the
    exact empirical median (loss ∞); subtle: sensitivity 0.8 (a 25 % overspend: passes the
    ε assertion, caught by the tight one); the discard step applied per record."""
    mech = _median(variant)
    worst, arg = _exact_worst(mech, 2)
    dp_record("exact_worst", {"variant": variant, "epsilon": worst, "pair": arg})
    assert worst <= 1.0 + TOL, f"exact loss {worst} on {arg}"
    # tight: per pair, the implementation's loss ≤ the paper's mechanism's exact loss
    tight_worst, excess = 0.0, []
    for mode, d, dp in _family(2):
        ref = privacy_loss(_median_oracle(d), _median_oracle(dp)).epsilon
        got = privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon
        tight_worst = max(tight_worst, ref)
        if got > ref * (1 + 1e-9) + 1e-12:
            excess.append((got, ref, mode, d, dp))
    if variant == "reference":
        c = _overspend(lambda c: PrivateMedian(c, 0, N, 1.0, m=2, domain=N), arg, worst)
        dp_sensitivity(loss=worst, bound=tight_worst, detectable_overspend=c,
                       basis="exact pmf vs the independently recomputed paper law, pair by pair "
                             f"over the positioned family (against ε = 1: slack {worst:.3f}); "
                             "overspend by bisection on the budget at the worst pair")
    assert not excess, (f"tight bound (paper's exact loss on the pair) exceeded on "
                        f"{len(excess)} pairs, e.g. {excess[0]}")


@pytest.mark.claim(paper="002", ref="Lemma 5.1", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("median_not_private")])
def test_median_audit(variant: str, dp_audit: Any) -> None:
    """Audit on the worst pair of each relation (worst for the reference's exact law)."""
    mech = _median(variant)
    ref = _median("reference")
    for mode in ("add_remove", "replace"):
        _, (_, d, dp) = _exact_worst(ref, 2, mode)
        dp_audit(mech, d, dp, PureDP(1.0), samples=100_000, relation=UserLevel(2, mode=mode))
    # B4 is deterministic: the empty dataset's argmin is u = 0, one user at x = 1 moves it to 1
    d, dp = [], [extreme(1, 0, 2)]
    dp_audit(mech, d, dp, PureDP(1.0), samples=100_000, relation=UserLevel(2, mode="add_remove"))


# ============================================================================= Algorithm 1 (Thm 5.2)

#: (ε, T): T = 1 puts all four releases of a round on one pair; T = 3 is the multi-round case.
ALG1_CONFIGS = ((2.0, 1), (1.0, 3))


def _alg1(variant: str, eps: float, rounds: int) -> PrivateThreshold:
    kw: dict[str, Any] = {"alg1_budget_eps_over_T": {"releases_per_round": 1},
                          "alg1_releases_3": {"releases_per_round": 3},  # survives (slack 0.48): see docstring
                          "alg1_shared_noise": {"shared_noise": True}}.get(variant, {})
    return PrivateThreshold(eps, rounds, 0, m=2, domain=N, **kw)


@pytest.mark.claim(paper="002", ref="Theorem 5.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("alg1_budget_eps_over_T"),
                                     _mut("alg1_shared_noise")])
def test_private_threshold_exact_privacy(variant: str, dp_record: Any,
                                         dp_sensitivity: Any) -> None:
    """Algorithm 1 (4 releases of ε/(4T) per round) is ε-DP: exact law by dynamic programming
    with closed-form branch probabilities, on every pair of the positioned family. Mutants: B3
    (ε' = ε/T; exact loss 5.25 at ε = 2, T = 1), B8 (one Laplace draw shared by the three
    values: loss ∞). Slack is 0.48 (0.954 of ε = 2 at T = 1): a subtle ε/(3T) per release
    (off by one in the release count, a 4/3 overspend: 1.36) is NOT caught — no independent
    tight bound for the Laplace-race DP yet (issue 27, open)."""
    for eps, rounds in ALG1_CONFIGS:
        worst, arg = _exact_worst(_alg1(variant, eps, rounds), 2)
        dp_record("exact_worst", {"variant": variant, "epsilon": eps, "T": rounds,
                                  "loss": worst, "pair": arg})
        if variant == "reference" and rounds == 1:
            c = _overspend(lambda c: _alg1("reference", eps * c, rounds), arg, eps)
            dp_sensitivity(loss=worst, bound=eps, detectable_overspend=c,
                           basis="exact pmf, worst over the positioned family at ε = 2, T = 1 "
                                 "(T = 3 at ε = 1 reaches 0.12 only); overspend by bisection "
                                 "on the budget at the worst pair")
        assert worst <= eps + TOL, f"exact loss {worst} > {eps} on {arg}"


@pytest.mark.claim(paper="002", ref="Theorem 5.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("alg1_budget_eps_over_T"),
                                     _mut("alg1_shared_noise")])
def test_private_threshold_audit(variant: str, dp_audit: Any) -> None:
    """Audit of the simulated Algorithm 1 (ε = 2, T = 1) on the replace and add pairs where B3
    is worst, and the add pair where B8 is deterministic (3 CLEAN users + EXTREME(4, 0))."""
    mech = _alg1(variant, 2.0, 1)
    e11, cl = extreme(1, 1, 2), clean(2)
    for mode, d, dp in (("replace", [e11] * 4, [e11] * 3 + [extreme(3, 0, 2)]),
                        ("add_remove", [e11] * 3, [e11] * 4),
                        ("add_remove", [cl] * 3, [cl] * 3 + [extreme(4, 0, 2)])):
        dp_audit(mech, d, dp, PureDP(2.0), samples=100_000, relation=UserLevel(2, mode=mode))


# ============================================================================= Theorem 3.4

ITEM_SENSITIVITY = {"item_delta_1": 1.0, "item_delta_1_6": 1.6}


def _item(variant: str, rep: Any = "all", budget: float = 1.0) -> ItemLearner:
    return ItemLearner(budget, C, everything(N) if rep == "all" else None,
                       sensitivity=ITEM_SENSITIVITY.get(variant, 2.0),
                       data_dependent=variant == "item_data_dependent_h")


#: Replace pair of the exhaustive enumeration (n ≤ 4, H = all 16 functions): reference 0.577,
#: Δ = 1/n (B6) 1.184; and the add/remove worst pair (reference 0.353, B6 0.727 < 1: B6
#: violates replace-one only, since add/remove moves every score the same way). The tests
#: place the changed example at every position (:func:`positioned`).
ITEM_PAIRS = (("replace", [(1, 1), (1, 1), (3, 0), (2, 1)], [(1, 1), (1, 1), (3, 0), (4, 0)]),
              ("add_remove", [(1, 1), (2, 0), (3, 0)], [(1, 1), (2, 0), (3, 0), (4, 0)]))


def _item_family() -> list[tuple[str, list[Any], list[Any]]]:
    return [(mode, a, b) for mode, d, dp in ITEM_PAIRS
            for a, b in positioned(mode, d, dp, orderings=1)]


def _item_oracle(data: list[Any], rep: Any, eps: float = 1.0) -> dict[int, float]:
    """Theorem 3.4's law recomputed from its definition in plain Python, independently of
    ``scores``/``learners``: P[h] ∝ exp(−ε·Q(h)/4) over the hypothesis class (Δ = 2 in count
    form, the paper's 2/n), Q(h) = min_c (#examples c mislabels + #examples where c ≠ h)."""
    import math

    hyps = [tuple(int(v) for v in row) for row in
            (np.asarray(everything(N).classes[0]) if rep == "all" else C)]
    concepts = [tuple(int(v) for v in row) for row in C]
    w: dict[int, float] = {}
    for h in hyps:
        q = min(sum(1 for x, y in data if c[x - 1] != y) + sum(1 for x, _ in data
                                                                if c[x - 1] != h[x - 1])
                for c in concepts)
        code = sum(b << j for j, b in enumerate(h))
        w[code] = w.get(code, 0.0) + math.exp(-eps * q / 4)
    z = sum(w.values())
    return {k: v / z for k, v in w.items()}


ITEM_MUTANTS = ["item_delta_1", "item_delta_1_6", "item_data_dependent_h"]


@pytest.mark.claim(paper="002", ref="Theorem 3.4", kind="utility")
@pytest.mark.parametrize("variant", ["reference", *map(_mut, ITEM_MUTANTS)])
def test_item_learner_exact_privacy(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """The item-level learner (exponential mechanism over H with the surrogate score, Δ = 2/n)
    is 1-DP, exactly, on the enumeration's worst pairs with the changed example at every
    position, for the improper H of all 16 functions (where the surrogate moves by 2) and for
    H = C. The worst loss is 0.58 ε, so a second, labelled assertion compares pair by pair
    with the tightest bound computed exactly: the paper's mechanism's loss on that pair,
    recomputed from the definition (:func:`_item_oracle`). Mutants: B6 Δ = 1/n (the §3
    text's "1/n"); subtle: Δ = 1.6/n (a 25 % overspend: passes the ε assertion, caught by the
    tight one); B13 H built from the observed points (support mismatch: loss ∞)."""
    worst_all, tight_all, excess = 0.0, 0.0, []
    for rep in ("all", "C"):
        mech = _item(variant, rep)
        for mode, d, dp in _item_family():
            eps = privacy_loss(mech.pmf(d), mech.pmf(dp)).epsilon
            ref = privacy_loss(_item_oracle(d, rep), _item_oracle(dp, rep)).epsilon
            dp_record("exact", {"variant": variant, "H": rep, "relation": mode,
                                "epsilon": eps, "paper": ref})
            assert eps <= 1.0 + TOL, f"exact loss {eps} ({mode}, H={rep}, {d} → {dp})"
            if eps > ref * (1 + 1e-9) + 1e-12:
                excess.append((eps, ref, rep, mode, d, dp))
            if eps > worst_all:
                worst_all, arg = eps, (mode, d, dp)
            tight_all = max(tight_all, ref)
    if variant == "reference":
        c = _overspend(lambda c: _item("reference", "all", c), arg, worst_all)
        dp_sensitivity(loss=worst_all, bound=tight_all, detectable_overspend=c,
                       basis="exact pmf vs the independently recomputed paper law, pair by pair "
                             f"(against ε = 1: slack {worst_all:.3f}); overspend by bisection on "
                             "the budget at the worst pair")
    assert not excess, (f"tight bound (paper's exact loss on the pair) exceeded on "
                        f"{len(excess)} pairs, e.g. {excess[0]}")


@pytest.mark.claim(paper="002", ref="Theorem 3.4", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("item_delta_1"),
                                     _mut("item_data_dependent_h")])
def test_item_learner_audit(variant: str, dp_audit: Any) -> None:
    """Audit (H = all 16 functions) under replace- and add/remove-one-example."""
    mech = _item(variant)
    for mode, d, dp in ITEM_PAIRS:
        rel = Replace() if mode == "replace" else AddRemove()
        dp_audit(mech, d, dp, PureDP(1.0), samples=200_000, relation=rel)


# ============================================================================= Theorem 4.6

USER_KW: dict[str, dict[str, Any]] = {
    "user_item_accounting": {"accounting": "item"},
    "user_stages_full_budget": {"stage_epsilon": 1.0},
    "user_stage_0_6": {"stage_epsilon": 0.6},
    "user_discard_per_record": {"discard": "record"},
}

#: α = 0.25: m_eff = m = 4; α = 0.6: m_eff = ⌊1/α²⌋ = 2 < m (the discard step is exercised).
USER_ALPHAS = (0.25, 0.6)


def _user(variant: str, transcript: bool = True, m: int = 4, alpha: float = 0.25,
          budget: float = 1.0) -> UserLearner:
    return UserLearner(budget, alpha, m, C, transcript=transcript, **USER_KW.get(variant, {}))


def _user_oracle(d: list[Any], alpha: float, eps: float = 1.0, m: int = 4) -> dict[int, float]:
    """Theorem 4.6's transcript law (η̂, h) recomputed from the paper's definitions in plain
    Python, independently of ``compare``/``scores``/``learners`` (H = C): keep the first
    m_eff = min(m, ⌊1/α²⌋) examples of each user; PrivateMinError(ε/2, α/6): T = ⌈log₂(12/α)⌉
    comparisons at ε/(2T), σ = 0 w.p. F_Lap(2T/ε)(n·τ − min_c E_t(c)); then the exponential
    mechanism at ε/2 with Q(h) = min_c E_t(c) + D_0(c, h), Δ = 2: P[h] ∝ exp(−ε·Q(h)/8).
    Only the data-independent constants (m', t, τ) and the learner's t(η̂) are taken from
    ``binomial`` (they depend on public parameters only)."""
    import math

    from algorithms.pure_agnostic.binomial import compare_rule, discard_m, learner_t
    me = discard_m(m, 1.0 / alpha**2)
    users = [[tuple(e) for e in u[:me]] for u in d]
    cs = [tuple(int(v) for v in row) for row in C]
    n, a6, T = len(users), alpha / 6, max(1, math.ceil(math.log2(2.0 / (alpha / 6)) - 1e-12))

    def mist(u: list[Any], c: tuple[int, ...], k: int) -> int:
        return sum(1 for x, y in u[:k] if c[x - 1] != y)

    def e_t(c: tuple[int, ...], k: int, t: int) -> int:
        return sum(1 for u in users if mist(u, c, k) > t)

    def lap_cdf(x: float, b: float) -> float:
        return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)

    b = 2 * T / eps
    leaves = {(0, 1 << T): 1.0}
    for _ in range(T):
        nxt: dict[tuple[int, int], float] = {}
        for (lo, hi), w in leaves.items():
            mid = (lo + hi) // 2
            mp, t, tau = compare_rule(me, mid / (1 << T), a6)
            p0 = lap_cdf(n * tau - min(e_t(c, mp, t) for c in cs), b)
            nxt[(lo, mid)] = nxt.get((lo, mid), 0.0) + w * p0
            nxt[(mid, hi)] = nxt.get((mid, hi), 0.0) + w * (1 - p0)
        leaves = nxt
    out: dict[int, float] = {}
    for (lo, _), w in leaves.items():
        t = learner_t(me, lo / (1 << T), alpha)
        q = {}
        for h in cs:
            q[h] = min(e_t(c, me, t) + sum(1 for u in users
                                           if sum(1 for x, _ in u if c[x - 1] != h[x - 1]) > 0)
                       for c in cs)
        z = sum(math.exp(-eps * v / 8) for v in q.values())
        for h, v in q.items():
            code = (lo << N) + sum(bit << j for j, bit in enumerate(h))
            out[code] = out.get(code, 0.0) + w * math.exp(-eps * v / 8) / z
    return out


USER_MUTANTS = ["user_item_accounting", "user_stages_full_budget", "user_stage_0_6",
                "user_discard_per_record"]


@pytest.mark.claim(paper="002", ref="Theorem 4.6", kind="utility")
@pytest.mark.parametrize("variant", ["reference", *map(_mut, USER_MUTANTS)])
def test_user_learner_exact_privacy(variant: str, dp_record: Any, dp_sensitivity: Any) -> None:
    """The user-level learner (``PrivateMinError`` at ε/2, then the exponential mechanism at ε/2
    on user-level errors) is 1-DP on the joint transcript (η̂, h), exactly, on every pair of the
    positioned family (m = 4; α = 0.25, and α = 0.6 where m_eff = 2 < m). The worst loss is
    0.71 ε, so a second, labelled assertion compares pair by pair (changed user at every
    position, 2 orderings: the pure-Python oracle costs ~10 ms a dataset) with the tightest bound computed exactly: the paper's transcript
    law recomputed from the definitions (:func:`_user_oracle`). Mutants: B1 (item-level
    accounting on the flattened examples: 1.41), B3 (both stages at ε: 1.43); subtle: stages
    at 0.6 ε (a 20 % overspend: caught by the tight assertion), the discard step applied per
    record (1.24 at α = 0.6)."""
    worst_all, tight_all, excess, arg = 0.0, 0.0, [], None
    for alpha in USER_ALPHAS:
        mech = _user(variant, alpha=alpha)
        worst, where = _exact_worst(mech, 4, orderings=6)
        dp_record("exact_worst", {"variant": variant, "alpha": alpha, "epsilon": worst,
                                  "pair": where})
        assert worst <= 1.0 + TOL, f"exact loss {worst} on {where} (α = {alpha})"
        if worst > worst_all:
            worst_all, arg = worst, where
        laws: dict[Any, Any] = {}

        def law(fn: Any, d: list[Any]) -> Any:
            key = (fn, tuple(tuple(u) for u in d))
            if key not in laws:
                laws[key] = _user_oracle(d, alpha) if fn == "paper" else mech.pmf(d)
            return laws[key]

        for mode, d, dp in _family(4, orderings=2):
            ref = privacy_loss(law("paper", d), law("paper", dp)).epsilon
            got = privacy_loss(law("impl", d), law("impl", dp)).epsilon
            tight_all = max(tight_all, ref)
            if got > ref * (1 + 1e-9) + 1e-12:
                excess.append((got, ref, alpha, mode, d, dp))
    if variant == "reference":
        c = _overspend(lambda c: _user("reference", budget=c), arg, worst_all)
        dp_sensitivity(loss=worst_all, bound=tight_all, detectable_overspend=c,
                       basis="exact transcript pmf vs the independently recomputed paper law, "
                             f"pair by pair (against ε = 1: slack {worst_all:.3f}); overspend "
                             "by bisection on the budget at the worst pair")
    assert not excess, (f"tight bound (paper's exact loss on the pair) exceeded on "
                        f"{len(excess)} pairs, e.g. {excess[0]}")


@pytest.mark.claim(paper="002", ref="Theorem 4.6", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("user_item_accounting")])
def test_user_learner_audit(variant: str, dp_audit: Any) -> None:
    """Audit of the released hypothesis (m = 8) under replace-one-user, EXTREME(1,0) →
    EXTREME(1,1) among two EXTREME(1,0) users: exact loss 0.209 (reference), 1.924 (B1)."""
    mech = _user(variant, transcript=False, m=8)
    e10 = extreme(1, 0, 8)
    dp_audit(mech, [e10] * 3, [e10] * 2 + [extreme(1, 1, 8)], PureDP(1.0), samples=400_000,
             relation=UserLevel(8, mode="replace"))


# ============================================================================= Theorem 5.2

def _thr_learner(variant: str) -> ThresholdLearner:
    kw = (("shared_noise", True),) if variant == "threshold_shared_noise" else ()
    return ThresholdLearner(2.0, 0.5, 2, N, transcript=True, threshold_kwargs=kw)


@pytest.mark.claim(paper="002", ref="Theorem 5.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("threshold_shared_noise")])
def test_threshold_learner_exact_privacy(variant: str, dp_record: Any,
                                         dp_sensitivity: Any) -> None:
    """The thresholds pipeline (``PrivateMinError`` at ε/2, t from η̂, Algorithm 1 at ε/2 with
    T = ⌈log_{3/2}(2/α)⌉ = 4, θ = 2/3) is 2-DP on the joint transcript (η̂, u), exactly, on the
    add/remove pairs of the family (m = 2). Mutant B8 inside Algorithm 1: loss ∞."""
    worst, arg = _exact_worst(_thr_learner(variant), 2, "add_remove")
    dp_record("exact_worst", {"variant": variant, "epsilon": worst, "pair": arg})
    if variant == "reference":
        dp_sensitivity(loss=worst, bound=2.0, detectable_overspend=None,
                       basis="exact transcript pmf, worst over the positioned add/remove family; "
                             "no tight second bound yet (issue 27: open), so an overspend below "
                             "2/loss passes")
    assert worst <= 2.0 + TOL, f"exact loss {worst} on {arg}"


@pytest.mark.claim(paper="002", ref="Theorem 5.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _mut("threshold_shared_noise")])
def test_threshold_learner_audit(variant: str, dp_audit: Any) -> None:
    """Audit of the pipeline's transcript on adding one user to the empty dataset."""
    dp_audit(_thr_learner(variant), [], [extreme(2, 0, 2)], PureDP(2.0), samples=100_000,
             relation=UserLevel(2, mode="add_remove"))


# ============================================================================= slow: enumeration

@pytest.mark.slow
@pytest.mark.parametrize("name", ["compare", "min_error", "median", "alg1"])
def test_exhaustive_small_pairs(name: str) -> None:
    """Every add/remove pair with ≤ 2 users of m = 2 examples over X = {1..4} (1 332 pairs):
    the exact loss stays ≤ ε (the default tests use this enumeration's worst pairs)."""
    mech = {"compare": _compare("reference"), "min_error": _min_error("reference"),
            "median": _median("reference"), "alg1": _alg1("reference", 2.0, 1)}[name]
    eps = 2.0 if name == "alg1" else 1.0
    w = max_loss(mech.pmf, user_pairs(users_over(N, 2), 2, "add_remove"))
    assert w.epsilon <= eps + TOL, (w.epsilon, w.pair)
    assert np.isfinite(w.epsilon)
