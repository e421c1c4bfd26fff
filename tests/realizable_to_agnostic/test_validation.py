"""Parameter validation of algorithms.realizable_to_agnostic (seed 000): out-of-range or
ill-typed parameters raise ``InvalidArgument`` naming the parameter (review of notes §6, gaps
G1–G20), and the deliberate mutant paths stay open (G4 sizes, G19, G21)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from algorithms.realizable_to_agnostic import bounds
from algorithms.realizable_to_agnostic.agnostic import Agnostic, subset_size
from algorithms.realizable_to_agnostic.agnostic_prediction import AgnosticPrediction
from algorithms.realizable_to_agnostic.auxiliary import Auxiliary
from algorithms.realizable_to_agnostic.buggy import FirstKAgnostic, PoissonAgnostic
from algorithms.realizable_to_agnostic.composite import Composite
from algorithms.realizable_to_agnostic.core import as_dataset
from algorithms.realizable_to_agnostic.empirical import (
    WithReplacement,
    clamped_geometric,
)
from algorithms.realizable_to_agnostic.prediction import (
    aggregate_error,
    vote_probabilities,
)
from dpcheck.errors import InvalidArgument

S = [(0, 0), (1, 1), (2, 1), (3, 0), (1, 0), (2, 1)]
V = [(0, 0), (3, 1)]
W = [(1, 0)] * 3


# ---------------------------------------------------------------- G1, G2: datasets
@pytest.mark.parametrize("data, match", [
    ([(1.5, 0), (2, 1)], "data=.*x and y must be integers"),
    ([(1, 0.7), (2, 1)], "data=.*x and y must be integers"),
    ([("1", "0")], "data=.*x and y must be integers"),
    ([(1, float("nan"))], "data=.*x and y must be integers"),
    ([(1, 0, 0)], r"data=.*shape \(n, 2\)"),
    ([], r"data=.*shape \(n, 2\)"),
    ([(4, 0)], "data=.*0 <= x < 4"),
    ([(1, 2)], "data=.*y in"),
])
def test_as_dataset_refuses(data: Any, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        as_dataset(data, 4)


def test_as_dataset_accepts_integral_values() -> None:
    want = np.array([[1, 0], [2, 1]])
    for data in ([(1, 0), (2, 1)], [(1.0, 0.0), (2.0, 1.0)], [(1, False), (2, True)],
                 np.array(want, dtype=np.uint8), np.array(want, dtype=object)):
        out = as_dataset(data, 4)
        assert out.dtype == np.int64 and (out == want).all()


def test_agnostic_refuses_float_data() -> None:
    """G1 end to end: (1.9, 0.9) used to be truncated to (1, 0)."""
    with pytest.raises(InvalidArgument, match="integers"):
        Agnostic(4, 1 / 3).pmf([(1.9, 0.9)] * 6)


def test_auxiliary_names_v_and_w() -> None:
    """G2: the public datasets are named in the message."""
    with pytest.raises(InvalidArgument, match=r"^v=\[\(9, 0\)\]"):
        Auxiliary(4, 0.1, [(9, 0)], W)
    with pytest.raises(InvalidArgument, match=r"^w=\[\(0, 0\.5\)\]"):
        Auxiliary(4, 0.1, V, [(0, 0.5)])


# ---------------------------------------------------------------- G3: Auxiliary ε ≤ 1/3
@pytest.mark.parametrize("eps, match", [
    (0.5, "epsilon=0.5 must be <= 1/3"),
    (5.0, "epsilon=5.0 must be <= 1/3"),
    (0.0, "epsilon=0.0 must be > 0"),
])
def test_auxiliary_epsilon_range(eps: float, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        Auxiliary(4, eps, V, W)


def test_auxiliary_accepts_one_third() -> None:
    assert abs(sum(Auxiliary(4, 1 / 3, V, W).pmf([(1, 1), (2, 0)]).values()) - 1) < 1e-9


# ---------------------------------------------------------------- G5, G20: count-table batches
RUNNERS: dict[str, Callable[[np.ndarray], Any]] = {
    "composite": lambda sc: Composite(4, 1 / 3, 1).run_counts(sc, np.random.default_rng(0)),
    "agnostic": lambda sc: Agnostic(4, 1 / 3).run_counts(sc, np.random.default_rng(0)),
    "agn_pred": lambda sc: AgnosticPrediction(4, 1 / 3, 0.9).run_votes(sc,
                                                                      np.random.default_rng(0)),
}


@pytest.mark.parametrize("runner", list(RUNNERS))
@pytest.mark.parametrize("sc, match", [
    (np.ones((2, 5, 2), int), r"sc shape \(2, 5, 2\) must be \(B, domain=4, 2\)"),
    (np.ones((4, 2), int), r"sc shape \(4, 2\)"),
    (np.zeros((0, 4, 2), int), "B >= 1"),
    (np.array([[[3, -1], [1, 1], [1, 1], [0, 0]]]), "counts >= 0"),
    (np.full((1, 4, 2), 1.5), "integer counts"),
])
def test_run_counts_checks_tables(runner: str, sc: np.ndarray, match: str) -> None:
    """G5: Composite.run_counts, Agnostic.run_counts, AgnosticPrediction.run_votes share
    core.as_count_tables."""
    with pytest.raises(InvalidArgument, match=match):
        RUNNERS[runner](sc)


def test_composite_sample_size_zero() -> None:
    assert Composite(4, 1 / 3, 1).sample(S, 0, np.random.default_rng(0)).shape == (0,)


@pytest.mark.parametrize("pac_epsilon, match", [
    ("0.5", "pac_epsilon='0.5' must be a real number"),
    (True, "pac_epsilon=True must be a real number"),
    (float("nan"), "pac_epsilon=nan must not be NaN"),
    (-1.0, "pac_epsilon=-1.0 must be > 0"),
])
def test_composite_pac_epsilon_type(pac_epsilon: Any, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        Composite(4, 0.3, 1, pac_epsilon=pac_epsilon)


# ---------------------------------------------------------------- G6: deliberate openness
def test_with_replacement_accepts_undersized_inputs() -> None:
    """G6 (decision, empirical.py docstring): the mechanism accepts any ε_p and input size so
    that the ``input_eps_m`` mutant (n = ⌈ε_p m⌉) can be built; the hypotheses are checked by
    bounds.lemma213 / lemma212_size, where the bound is claimed."""
    for mech, data in ((WithReplacement(4, 5.0, 2), S), (WithReplacement(4, 1.0, 3), S[:2]),
                       (WithReplacement(4, 1.0, 3), S[:1])):
        assert abs(sum(mech.pmf(data).values()) - 1) < 1e-9
    with pytest.raises(InvalidArgument, match="6\\*epsilon\\*m/n=9.0"):
        bounds.lemma213(1.0, 3, 2, 0.0)
    with pytest.raises(InvalidArgument, match="n=1 must be >= 2"):
        bounds.lemma213(1.0, 3, 1, 0.0)
    with pytest.raises(InvalidArgument, match="epsilon=5.0 must be <= 1"):
        bounds.lemma213(5.0, 2, 6, 0.0)


def test_chain_base_is_exactly_eps_delta_private_and_refuses_invalid_budgets() -> None:
    """The ``"chain"`` base (issue 27): ``f(c) = e^ε f(c − 1) + δ`` with equality along the
    counts, the complement event within (ε, δ) too, and ``InvalidArgument`` when ``f(m) > 1``
    or the complement condition fails (δ = 0.2, ε = 1, m = 3: f(3) = 1.28)."""
    mech = WithReplacement(4, 1.0, 3, delta=0.01, base="chain")
    c = np.zeros((4, 4, 2), np.int64)
    c[np.arange(4), 0, 0] = np.arange(4)
    law = mech.base_law(c)
    assert law.shape == (4, 2) and np.allclose(law.sum(-1), 1.0)
    f = law[:, 1]
    assert f[0] == 0 and np.allclose(f[1:], math.e * f[:-1] + 0.01, rtol=1e-12)
    assert (law[:-1, 0] <= math.e * law[1:, 0] + 0.01).all()
    with pytest.raises(InvalidArgument, match="base='chain' is not"):
        WithReplacement(4, 1.0, 3, delta=0.2, base="chain")


# ---------------------------------------------------------------- G7–G15, G18: bounds
BAD_CALLS: list[tuple[str, Callable[[], Any], str]] = [
    # G7 lemma31_epsilon
    ("l31_k_eq_n", lambda: bounds.lemma31_epsilon(6, 0.2, 6), "k=6 must be < n=6"),
    ("l31_eps_big", lambda: bounds.lemma31_epsilon(10, 0.9, 9), "epsilon=0.9 must be <= 1/3"),
    ("l31_k_small", lambda: bounds.lemma31_epsilon(100, 0.1, 5), r"k=5 must be >= epsilon\*n"),
    ("l31_n_float", lambda: bounds.lemma31_epsilon(10.0, 0.1, 1), "n=10.0 must be an integer"),
    ("l31_eps_neg", lambda: bounds.lemma31_epsilon(10, -1.0, 1), "epsilon=-1.0 must be > 0"),
    # G8 theorem36_bounds ε ≤ 1/3
    ("t36_eps_big", lambda: bounds.theorem36_bounds(100, 0.5, 1, 0.1, 0.0),
     "epsilon=0.5 must be <= 1/3"),
    # G9 theorem36_bounds names pac_epsilon and k
    ("t36_pac_big", lambda: bounds.theorem36_bounds(100, 0.1, 1, 2.0, 0.0),
     "pac_epsilon=2.0 must be <= 1"),
    ("t36_ratio", lambda: bounds.theorem36_bounds(100, 0.1, 5, 1.0, 0.0),
     r"6\*pac_epsilon\*m/k=3.0 must be <= 1 \(k=ceil\(epsilon\*n\)=10"),
    ("t36_k_one", lambda: bounds.theorem36_bounds(3, 1 / 3, 1, 0.1, 0.0),
     r"k=ceil\(epsilon\*n\)=1 must be >= 2"),
    ("t36_pac_delta", lambda: bounds.theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1.0),
     r"pac_delta=1.0 must be in \[0, 1\)"),
    # G10 deltas
    ("l31_delta_neg", lambda: bounds.lemma31_delta(10, 2, -1.0), "delta=-1.0 must be >= 0"),
    ("l31_delta_k", lambda: bounds.lemma31_delta(10, 10, 0.1), "k=10 must be < n=10"),
    ("c35_delta", lambda: bounds.claim35_delta(-1.0), r"delta=-1.0 must be in \[0, 1\)"),
    ("l213_delta", lambda: bounds.lemma213(0.1, 1, 20, 2.0), r"delta=2.0 must be in \[0, 1\)"),
    # G11 lemma212_size
    ("l212_eps", lambda: bounds.lemma212_size(3.0, 2), "epsilon=3.0 must be <= 1"),
    # G12 lemma33_size
    ("l33_alpha0", lambda: bounds.lemma33_size(1, 0.0, 0.1), r"alpha=0.0 must be in \(0, 1\)"),
    ("l33_beta0", lambda: bounds.lemma33_size(1, 0.1, 0.0), r"beta=0.0 must be in \(0, 1\)"),
    ("l33_alpha2", lambda: bounds.lemma33_size(1, 2.0, 0.1), r"alpha=2.0 must be in \(0, 1\)"),
    ("l33_d0", lambda: bounds.lemma33_size(0, 0.1, 0.1), "d=0 must be >= 1"),
    # G13 lemma33_holds
    ("l33h_d0", lambda: bounds.lemma33_holds(0, 0.1, 0.1, 10), "d=0 must be >= 1"),
    ("l33h_nan", lambda: bounds.lemma33_holds(1, math.nan, 0.1, 10), "alpha=nan must not be NaN"),
    ("l33h_n", lambda: bounds.lemma33_holds(1, 0.1, 0.1, -3.0), "n=-3.0 must be > 0"),
    ("l33h_ninf", lambda: bounds.lemma33_holds(1, 0.1, 0.1, math.inf), "n=inf must be > 0"),
    # G14 em_tail
    ("tail_eps0", lambda: bounds.em_tail(1.0, 0.0, 4, 0.1), "epsilon=0.0 must be > 0"),
    ("tail_beta0", lambda: bounds.em_tail(1.0, 1.0, 4, 0.0), "beta=0.0 must be > 0"),
    ("tail_size0", lambda: bounds.em_tail(1.0, 1.0, 0, 0.1), "size=0 must be >= 1"),
    ("tail_sens", lambda: bounds.em_tail(-1.0, 1.0, 4, 0.1), "sensitivity=-1.0 must be > 0"),
    # G15 sauer_bound
    ("sauer_float", lambda: bounds.sauer_bound(2.5, 1), "n=2.5 must be an integer"),
    ("sauer_d_float", lambda: bounds.sauer_bound(3, 1.0), "d=1.0 must be an integer"),
    # G18 clamped_geometric
    ("geom_eps", lambda: clamped_geometric(np.array([1]), 2, -1.0), "epsilon=-1.0 must be > 0"),
    ("geom_m", lambda: clamped_geometric(np.array([1]), -1, 1.0), "m=-1 must be >= 0"),
    ("geom_c", lambda: clamped_geometric(np.array([3]), 2, 1.0), r"c must hold counts in \[0, m=2\]"),
]


@pytest.mark.parametrize("call, match", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_bounds_refuse_out_of_range(call: Callable[[], Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        call()


def test_bounds_accept_their_ranges() -> None:
    """The checks leave the values the property tests use unchanged."""
    assert bounds.lemma31_epsilon(12, 1 / 6, 2) == pytest.approx(1.959, abs=1e-3)
    assert bounds.lemma31_epsilon(12, 1 / 6, 3) > bounds.lemma31_epsilon(12, 1 / 6, 2)
    assert bounds.lemma31_delta(10, 2, 5.0) == pytest.approx(4 * math.e)   # vacuous δ_A kept
    assert bounds.lemma212_size(1.0, 2) == 12
    assert bounds.em_tail(0.5, 1.0, 4, 1.0) == pytest.approx(math.log(4))
    assert bounds.lemma33_holds(1, 0.5, 0.5, bounds.lemma33_size(1, 0.5, 0.5))
    assert bounds.sauer_bound(np.int64(4), 1) == pytest.approx(4 * math.e)
    e, d = bounds.theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1e-3)
    assert (e, d) == pytest.approx((2.783, 0.0197), abs=1e-3)


# ---------------------------------------------------------------- G4: conditional's index set
@pytest.mark.parametrize("index_set, match", [
    ([-1, 0], r"index_set=\[-1, 0\]: indices must satisfy 0 <= i < n=6"),
    ([7, 1], r"index_set=\[7, 1\]: indices must satisfy 0 <= i < n=6"),
    ([0, 0], r"index_set=\[0, 0\] has duplicate indices"),
    ([0.5, 1], "index_set=.*integer indices"),
    ([True, False], "index_set=.*integer indices"),
    ([[0], [1]], "index_set=.*flat collection"),
    (5, "index_set=5 must be a collection"),
    ([0, 1, 2], "index_set has 3 indices, must have k=2"),
    ([], "index_set has 0 indices, must have k=2"),
    (list(range(6)), "index_set has 6 indices, must have k=2"),
])
def test_conditional_checks_index_set(index_set: Any, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        Agnostic(4, 1 / 3).conditional(S, index_set)


def test_conditional_accepts_index_types_and_mutant_sizes() -> None:
    """Lists, ranges and integer arrays give the same law; the mutants keep their own sizes:
    ``poisson`` (|I| random: any size < n), ``floor_k`` (k = ⌊εn⌋, here 0), ``half_sample``
    (k = ⌈n/2⌉ at ε = 1/2, exempt from ε ≤ 1/3: G21)."""
    mech = Agnostic(4, 1 / 3)
    want = mech.conditional(S, [0, 1])
    for idx in (range(2), np.array([1, 0], dtype=np.uint8), (0, 1)):
        assert mech.conditional(S, idx) == want
    for bug, eps, idx in (("poisson", 1 / 3, []), ("poisson", 1 / 3, [0, 1, 2, 3, 4]),
                          ("floor_k", 0.1, []), ("half_sample", 0.5, [0, 1, 2])):
        mech = PoissonAgnostic(4, eps) if bug == "poisson" else Agnostic(4, eps, bug=bug)
        assert abs(sum(mech.conditional(S, idx).values()) - 1) < 1e-9
    with pytest.raises(InvalidArgument, match="W would be empty"):
        PoissonAgnostic(4, 1 / 3).conditional(S, range(6))
    with pytest.raises(InvalidArgument, match="bug='floor_k' must be 'reference'"):
        PoissonAgnostic(4, 1 / 3, bug="floor_k")
    with pytest.raises(InvalidArgument, match="must have k=3"):
        Agnostic(4, 0.5, bug="half_sample").conditional(S, [0, 1])


# ---------------------------------------------------------------- G5: accepted batches
def test_run_counts_accepts_unsigned_and_mixed_sizes() -> None:
    rng = np.random.default_rng(1)
    sc = np.zeros((2, 4, 2), np.uint8)
    sc[0, 1, 0], sc[1, 2, 1] = 6, 9                      # n = 6 and n = 9 in one batch
    rep, out = Agnostic(4, 1 / 3).run_counts(sc, rng)
    assert rep.shape == out.shape == (2,)


def test_sample_size_zero() -> None:
    """``size=0`` returns an empty sample (it used to fail in a reshape) after the size checks."""
    rng = np.random.default_rng(0)
    assert Agnostic(4, 1 / 3).sample(S, 0, rng).shape == (0,)
    assert FirstKAgnostic(4, 1 / 3).sample(S, 0, rng).shape == (0,)
    pred = AgnosticPrediction(4, 1 / 3, 0.9)
    assert pred.sample([(0, 0)] * 30, 0, rng).shape == (0,)
    assert pred.sample_queries([(0, 0)] * 30, [0, 1], 0, rng).shape == (0, 2)
    with pytest.raises(InvalidArgument, match="epsilon\\*n"):
        Agnostic(4, 0.1).sample(S, 0, rng)
    with pytest.raises(InvalidArgument, match="must be >= r=9"):
        pred.sample([(0, 0)] * 12, 0, rng)


# ---------------------------------------------------------------- G16, G17: Procedure P helpers
PX = np.full(4, 0.25)
PRED_CALLS: list[tuple[str, Callable[[], Any], str]] = [
    ("votes_big", lambda: vote_probabilities(np.array([9]), 5, 1.0),
     r"votes1 must hold integer vote counts in \[0, r=5\]"),
    ("votes_neg", lambda: vote_probabilities(np.array([-1]), 5, 1.0), "votes1"),
    ("votes_frac", lambda: vote_probabilities(np.array([0.5]), 2, 1.0), "votes1"),
    ("r_neg", lambda: vote_probabilities(np.array([1]), -5, 1.0), "r=-5 must be >= 1"),
    ("r_float", lambda: vote_probabilities(np.array([1]), 2.5, 1.0), "r=2.5 must be an integer"),
    ("votes_eps", lambda: vote_probabilities(np.array([1]), 2, 0.0), "epsilon=0.0 must be > 0"),
    ("g_big", lambda: aggregate_error([9], 2, PX, 1.0), r"g must .* in \[0, N=4\]"),
    ("g_empty", lambda: aggregate_error([], 2, PX, 1.0), "g must be a non-empty"),
    ("g_frac", lambda: aggregate_error([1.5], 2, PX, 1.0), "integer thresholds"),
    ("target_neg", lambda: aggregate_error([1], -3, PX, 1.0), "target=-3 must be >= 0"),
    ("target_big", lambda: aggregate_error([1], 5, PX, 1.0), "target=5 must be <= N=4"),
    ("target_float", lambda: aggregate_error([1], 2.0, PX, 1.0), "target=2.0 must be an integer"),
    ("px_sum", lambda: aggregate_error([1], 2, [0.9] * 4, 1.0), "px .*sum 3.6"),
    ("px_neg", lambda: aggregate_error([1], 2, [1.5, -0.5], 1.0), "px .*probability vector"),
    ("agg_eps", lambda: aggregate_error([1], 2, PX, -1.0), "epsilon=-1.0 must be > 0"),
]


@pytest.mark.parametrize("call, match", [c[1:] for c in PRED_CALLS], ids=[c[0] for c in PRED_CALLS])
def test_prediction_helpers_refuse_out_of_range(call: Callable[[], Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        call()


def test_prediction_helpers_accept_their_ranges() -> None:
    assert vote_probabilities(np.array([0, 1, 2]), 2, 1.0)[1] == pytest.approx(0.5)
    assert aggregate_error([0, 4], 4, PX, 1.0) == pytest.approx(0.5)    # one vote each way
    assert 0 <= aggregate_error(np.array([2, 2, 2], dtype=np.uint8), 2, PX, 1.0) <= 1


# ---------------------------------------------------------------- G19, G21: subset_size
@pytest.mark.parametrize("args, match", [
    ((-1.0, 6), "epsilon=-1.0 must be > 0"),
    ((True, 6), "epsilon=True must be a real number"),
    ((0.1, -3), "n=-3 must be >= 1"),
    ((0.1, 2.5), "n=2.5 must be an integer"),
])
def test_subset_size_refuses(args: tuple[Any, Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        subset_size(*args)


def test_subset_size_keeps_bug_branches() -> None:
    """G19: the check is on types and signs only; the bug branches and ``εn < 1`` stay
    reachable (Agnostic.sizes enforces Algorithm 2's ranges). G21: ``half_sample`` is built at
    ε = 1/2 > 1/3."""
    assert subset_size(0.1, 6) == 1 and subset_size(0.1, 6, bug="floor_k") == 0
    assert subset_size(1 / 3, 7, bug="half_sample") == 4 and subset_size(0.3, 10) == 3
    assert Agnostic(4, 0.5, bug="half_sample").sizes(6) == (3, 3)
    with pytest.raises(InvalidArgument, match="epsilon=0.5 must be <= 1/3"):
        Agnostic(4, 0.5)
