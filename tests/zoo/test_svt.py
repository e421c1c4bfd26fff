"""Tests of the sparse-vector zoo entries (algorithms.zoo.svt): registry fields, the exact ε of
every listed pair (worst first, never above the declared truth), the suprema behind the declared
true ε, and a smoke audit per entry that must never certify more than the truth.

Exact pattern probabilities and the Alg. 3 law come from :mod:`algorithms.zoo.svt_exact`
(quadrature over the threshold noise, split at every kink of the integrand).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcheck
from algorithms.mechanisms.sparse_vector import TOP
from algorithms.zoo import ZooEntry, _REGISTRY
from algorithms.zoo import svt
from algorithms.zoo.svt_exact import pair_epsilon, svt3_law, svt3_log_density, svt3_release

NAMES = ["svt1", "svt1_c2", "svt2", "svt2_c2", "svt4_c1", "svt4_c2", "svt4_c4", "svt3", "svt5",
         "svt6"]
#: Exact ε of pairs[0] as quoted in each description (computed here, see test below).
FIRST_PAIR = {"svt1": 0.0985, "svt1_c2": 0.0874, "svt2": 0.0984, "svt2_c2": 0.0574,
              "svt4_c1": 0.1749, "svt4_c2": 0.3234, "svt4_c4": 0.5753, "svt6": 0.4200}


def by_name() -> dict[str, ZooEntry]:
    return {e.name: e for e in svt.ENTRIES}


def test_registry_fields() -> None:
    entries = by_name()
    assert list(entries) == NAMES
    keys = {"dp_sniper_lr", "dp_sniper_mlp", "statdp_run1", "statdp_run2"}
    tiers = {"A": {"svt1", "svt1_c2", "svt2", "svt2_c2"}, "C": {"svt5"}}
    for name, e in entries.items():
        assert _REGISTRY[name] is e
        assert e.tier == next((t for t, s in tiers.items() if name in s), "B")
        assert e.claim == dpcheck.PureDP(0.1) and e.relation is None
        assert "l-infinity distance <= 1" in e.description
        assert set(e.published) in (set(), keys)
        assert e.mechanism.epsilon == 0.1 and e.features is None
        for d, dp in e.pairs:
            assert len(d) == len(dp) == 10 and max(abs(a - b) for a, b in zip(d, dp)) == 1
        if e.tier == "A":
            assert e.true_epsilon == 0.1 and e.true_epsilon_is_bound
        else:
            assert e.true_epsilon == e.mechanism.epsilon_bound(10)
    assert entries["svt3"].true_epsilon == pytest.approx(0.5)
    assert not entries["svt3"].true_epsilon_is_bound and entries["svt3"].anchor == "C1"
    assert entries["svt6"].true_epsilon == pytest.approx(0.5) and entries["svt6"].tier == "B"
    assert [entries[f"svt4_c{c}"].true_epsilon for c in (1, 2, 4)] == pytest.approx(
        [0.175, 0.325, 0.625])
    assert math.isinf(entries["svt5"].true_epsilon) and entries["svt5"].infinite
    assert entries["svt5"].published["statdp_run1"] == 14.314


@pytest.mark.parametrize("name", sorted(FIRST_PAIR))
def test_pairs_worst_first_and_within_truth(name: str) -> None:
    e = by_name()[name]
    eps = [pair_epsilon(e.mechanism, d, dp) for d, dp in e.pairs]
    print(f"{name}: exact pair eps = {[round(x, 4) for x in eps]}, true = {e.true_epsilon}")
    assert eps == sorted(eps, reverse=True)
    assert max(eps) <= e.true_epsilon + 1e-9
    assert eps[0] == pytest.approx(FIRST_PAIR[name], abs=6e-5)
    assert f"{FIRST_PAIR[name]:.4g}" in e.description


@pytest.mark.parametrize("c", [1, 2, 4])
def test_svt4_supremum_is_lyu_bound(c: int) -> None:
    """(10 − c) answers far above T force ρ up; the c answers below pay e^{2ε2} each."""
    mech = by_name()[f"svt4_c{c}"].mechanism
    far = pair_epsilon(mech, [100.0] * (10 - c) + [0.0] * c, [101.0] * (10 - c) + [-1.0] * c)
    assert (1 + 6 * c) / 4 * 0.1 - 1e-6 < far <= mech.epsilon_bound(10) + 1e-9


def test_svt4_c1_exact_epsilon_on_worst_pair() -> None:
    """Exact ε of Alg. 4 (c = 1) on its worst listed pair vs Lyu et al.'s ((1+6c)/4)ε."""
    mech, bound = by_name()["svt4_c1"].mechanism, (1 + 6 * 1) / 4 * 0.1
    worst = pair_epsilon(mech, [1.0] * 10, [2.0] * 9 + [0.0])
    print(f"Alg. 4 c=1, 10 queries: exact eps on above9_below1 = {worst:.5f} (bound {bound})")
    assert 0.174 < worst <= bound + 1e-9
    # approaching the supremum needs > c + ε1/ε2 = 4/3 answers pushed above: one is not enough
    assert pair_epsilon(mech, [100.0, 0.0], [101.0, -1.0]) < 0.9 * bound


def test_svt6_supremum_is_n_eps2() -> None:
    mech = by_name()["svt6"].mechanism
    far = pair_epsilon(mech, [400.0] * 5 + [-400.0] * 5, [401.0] * 5 + [-401.0] * 5)
    assert 0.5 - 1e-6 < far <= 0.5 + 1e-9


def _alg5_patterns(q, t: float) -> set[tuple[int, ...]]:
    """Patterns of Alg. 5 with positive probability: {i : q_i ≥ T + ρ} for ρ in an interval
    of positive length (ρ is Laplace, so every such interval has positive mass)."""
    levels = np.unique(np.asarray(q, float) - t)
    cuts = np.concatenate([[levels[0] - 1], (levels[:-1] + levels[1:]) / 2, [levels[-1] + 1]])
    return {tuple(int(x) for x in (np.asarray(q) - t >= rho)) for rho in cuts}


def test_svt5_pairs_have_support_mismatch() -> None:
    e = by_name()["svt5"]
    for d, dp in e.pairs:
        assert _alg5_patterns(d, 1.0) != _alg5_patterns(dp, 1.0)
    out = e.mechanism.sample(e.pairs[0][1], 20_000, np.random.default_rng(0))
    seen = {tuple(int(x) for x in row) for row in np.unique(out, axis=0)}
    assert seen == _alg5_patterns(e.pairs[0][1], 1.0)  # sampler support = computed support


def test_svt3_first_pair_attains_the_truth() -> None:
    """all_above: the event '⊥ on queries 1–9, ⊤ at query 10 with value ≤ 1' has ratio e^{0.5};
    by the tails its probability on [1]*10 is ∫_{-∞}^{1} f(v−1)·2e^{(v−1)/2}/20480 dv."""
    e = by_name()["svt3"]
    assert e.pairs[0] == ([1] * 10, [2] * 10)
    p = 2 / (40 * 20480) / 0.55  # closed form from the tails (b = 20)
    out = e.mechanism.sample([1] * 10, 2_000_000, np.random.default_rng(2))
    hits = int(((out[:, 19] == TOP) & (out[:, 9] <= 1.0)).sum())
    assert abs(hits - 2e6 * p) < 6 * math.sqrt(2e6 * p) and p < 1e-5


def test_svt3_sampler_matches_its_exact_law() -> None:
    """The Alg. 3 sampler against :func:`svt3_law` on half_half's second dataset: the
    probability of each first-⊤ index (and of none) and the released value's distribution at
    the index with the most mass (Kolmogorov–Smirnov against the exact CDF)."""
    from scipy.stats import chisquare, kstest

    e = by_name()["svt3"]
    q = e.pairs[3][1]
    law = svt3_law(e.mechanism, q)
    out = e.mechanism.sample(q, 400_000, np.random.default_rng(5))
    j, v = svt3_release(out)
    grid = np.linspace(-800.0, 800.0, 400_001)
    dens = np.exp(svt3_log_density(e.mechanism, law, np.repeat(np.arange(10), grid.size),
                                   np.tile(grid, 10), q)).reshape(10, grid.size)
    mass = np.append(np.trapezoid(dens, grid, axis=1), law[2])
    assert abs(mass.sum() - 1.0) < 1e-6
    seen = np.bincount(j, minlength=11)
    assert chisquare(seen, mass / mass.sum() * seen.sum()).pvalue > 1e-3
    top = int(np.argmax(mass[:10]))
    cdf = np.concatenate([[0.0], np.cumsum((dens[top, 1:] + dens[top, :-1]) / 2
                                           * np.diff(grid))]) / mass[top]
    assert kstest(v[j == top], lambda x: np.interp(x, grid, cdf)).pvalue > 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_smoke_audit_never_exceeds_truth(name: str) -> None:
    # svt3 outputs +inf for unreleased values: the auditor must handle infinite outputs
    # (warnings are errors in this suite).
    e = by_name()[name]
    r = dpcheck.audit(e.mechanism, *e.pairs[0], e.claim, samples=200_000, seed=0,
                      float_features=e.float_features)
    print(f"{name}: tier {e.tier}, true eps {e.true_epsilon}, epsilon_lower "
          f"{r.epsilon_lower:.4f}, violation {r.violation}, witness {r.witness.event.describe()}")
    if math.isfinite(e.true_epsilon):
        assert r.epsilon_lower <= e.true_epsilon + 1e-9
