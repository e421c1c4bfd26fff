"""Multi-cell lower confidence bounds on Rényi divergences and ρ (dpcheck.cell_bounds): valid
(never above any point of the confidence region; coverage over seeds), consistent (the exact
coarsened divergence at huge counts) and tighter than any single binary event; and the bounds
an audit's confirmed event boxes give together (no α beyond the boxes')."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import dpcheck
from algorithms.mechanisms.primitives import RandomizedResponse
from dpcheck.cell_bounds import (_start, cell_region, renyi_lower_from_cells,
                                 renyi_lower_from_events, rho_lower_from_cells)
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss
from dpcheck.exact_curves import renyi_divergence


def rr(x: int, eps: float, k: int = 4) -> np.ndarray:
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    return np.array([keep if j == x else (1 - keep) / (k - 1) for j in range(k)])


def best_binary_rho(p: np.ndarray, q: np.ndarray) -> float:
    """The largest ρ bound any single event can give with exact probabilities (the audit's
    parameter_lower of a binary event), over all 2^k events."""
    z = dpcheck.ZCDP(1.0)
    best = 0.0
    for mask in range(1, 2 ** p.size - 1):
        s = np.array([(mask >> i) & 1 for i in range(p.size)], bool)
        a, b = float(p[s].sum()), float(q[s].sum())
        for x, y in ((a, b), (b, a)):
            if x > y:
                best = max(best, z.parameter_lower(x, y)["rho"])
    return best


@pytest.mark.parametrize("order", [1.0, 1.5, 2.0, 8.0])
def test_the_bound_is_below_every_point_of_the_region(order: float) -> None:
    """The linearisation bound is ≤ D_α(p‖q) at 500 random points (p, q) of the simultaneous
    Clopper–Pearson region: valid whatever the optimiser returned."""
    rng = np.random.default_rng(3)
    cp, cq = rng.multinomial(2000, rr(0, 1.0)), rng.multinomial(2000, rr(1, 1.0))
    bound = renyi_lower_from_cells(cp, cq, [order], alpha=0.05)[0]
    lo_p, hi_p, lo_q, hi_q = cell_region(cp, cq, 0.05)
    values = []
    for _ in range(500):
        p = _start(lo_p, hi_p, rng.dirichlet(np.ones(4)))
        q = _start(lo_q, hi_q, rng.dirichlet(np.ones(4)))
        assert abs(p.sum() - 1) < 1e-9 and np.all((p >= lo_p) & (p <= hi_p))
        values.append(renyi_divergence(p, q, order, "pq"))
    assert 0 < bound <= min(values) + 1e-12


def test_coverage_over_seeds() -> None:
    """4-ary randomized response (ε = 1), 400 outputs per side, α = 0.2, 200 seeds: the ρ bound
    (over the orders 1, 1.5, 2, 4) and the D_2 bound exceed the truth on at most a binomially
    plausible share of α (one-sided test at 1e-3; Bonferroni makes it conservative: a few at
    most are expected)."""
    p, q = rr(0, 1.0), rr(1, 1.0)
    ex = privacy_loss(dict(enumerate(p)), dict(enumerate(q)))
    rho, d2 = ex.rho(), ex.renyi(2.0)
    over_rho = over_d2 = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        cp, cq = rng.multinomial(400, p), rng.multinomial(400, q)
        bounds = renyi_lower_from_cells(cp, cq, [1.0, 1.5, 2.0, 4.0], alpha=0.2)
        over_rho += np.max(bounds / [1.0, 1.5, 2.0, 4.0]) > rho
        over_d2 += bounds[2] > d2
    for over in (over_rho, over_d2):
        assert binom.sf(over - 1, 200, 0.2) > 1e-3, over


def test_consistent_at_huge_counts() -> None:
    """Counts of 10¹² per side at the exact probabilities: the bounds reach the exact
    divergences of the pair (the cells are the outputs) to 0.5 %."""
    p, q = rr(0, 0.5), rr(1, 0.5)
    n = 10**12
    cp, cq = np.round(p * n).astype(np.int64), np.round(q * n).astype(np.int64)
    orders = np.array([1.0, 2.0, 5.0])
    got = renyi_lower_from_cells(cp, cq, orders, alpha=0.05)
    exact = renyi_divergence(p, q, orders, "pq")
    assert np.all(got <= exact) and np.all(got >= 0.995 * exact)


def test_tighter_than_any_binary_event() -> None:
    """4-ary randomized response at ε0 = 0.1 (the zoo's), 3·10⁶ outputs per side, α = 0.05:
    the four cells certify ρ ≥ 0.88 of the exact ρ, above the best any single event can certify
    even with exact probabilities (0.807 of ρ; the audit certifies about 0.70)."""
    p, q = rr(0, 0.1), rr(1, 0.1)
    rho = privacy_loss(dict(enumerate(p)), dict(enumerate(q))).rho()
    rng = np.random.default_rng(0)
    cp, cq = rng.multinomial(3_000_000, p), rng.multinomial(3_000_000, q)
    lower = rho_lower_from_cells(cp, cq, alpha=0.05)
    oracle = best_binary_rho(p, q)
    assert oracle == pytest.approx(0.807 * rho, rel=1e-3)
    assert oracle < 0.88 * rho <= lower <= rho


def test_gaussian_cells() -> None:
    """N(1, 1) against N(0, 1) (ρ = 1/2), 8 cells at fixed thresholds, 10⁶ outputs per side:
    ρ ≥ 0.85 of the truth (one half-line at 0.5 gives 0.61, the audit's best event 0.76)."""
    rng = np.random.default_rng(1)
    edges = np.linspace(-2.5, 3.5, 7)
    cp = np.bincount(np.searchsorted(edges, rng.normal(1.0, 1.0, 10**6)), minlength=8)
    cq = np.bincount(np.searchsorted(edges, rng.normal(0.0, 1.0, 10**6)), minlength=8)
    assert 0.85 * 0.5 <= rho_lower_from_cells(cp, cq, alpha=0.05) <= 0.5


def test_bad_input() -> None:
    with pytest.raises(InvalidArgument, match="counts_p=.* must be a 1-d array"):
        renyi_lower_from_cells([1.5, 2.0], [1, 2], [2.0], alpha=0.05)
    with pytest.raises(InvalidArgument, match="same length"):
        renyi_lower_from_cells([1, 2], [1, 2, 3], [2.0], alpha=0.05)
    with pytest.raises(InvalidArgument, match=r"orders\[0\]=0.5 must be >= 1"):
        renyi_lower_from_cells([1, 2], [2, 1], [0.5], alpha=0.05)
    with pytest.raises(InvalidArgument, match="must be finite"):
        renyi_lower_from_cells([1, 2], [2, 1], [math.inf], alpha=0.05)
    with pytest.raises(InvalidArgument, match="alpha="):
        rho_lower_from_cells([1, 2], [2, 1], alpha=1.5)


# -- bounds from an audit's confirmed event boxes (no α beyond the boxes') -------------------


def test_the_dual_linear_bound_is_below_the_lp_optimum_and_reaches_it() -> None:
    from scipy.optimize import linprog

    from dpcheck.cell_bounds import _dual_linear_min

    rng = np.random.default_rng(5)
    for _ in range(50):
        k, m = 5, 3
        g = rng.normal(size=k)
        member = rng.integers(0, 2, (m, k)).astype(float)
        x_true = rng.dirichlet(np.ones(k))
        lo, hi = member @ x_true - rng.uniform(0, 0.1, m), member @ x_true + rng.uniform(0, 0.1, m)
        a_ub, b_ub = np.vstack([-member, member]), np.concatenate([-lo, hi])
        opt = linprog(g, A_ub=a_ub, b_ub=b_ub, A_eq=np.ones((1, k)), b_eq=[1.0],
                      bounds=(0, 1), method="highs").fun
        bound = _dual_linear_min(g, a_ub, b_ub)
        assert bound <= opt + 1e-12 and bound == pytest.approx(opt, abs=1e-7)


def test_event_bounds_are_below_the_truth_whenever_it_meets_them() -> None:
    """Bounds built around the true cell probabilities (so the truth meets them): the certified
    D_α is never above the truth's, at 4 orders, on 20 random pairs of 5 cells and 3 events."""
    rng = np.random.default_rng(6)
    orders = np.array([1.0, 1.5, 3.0, 10.0])
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        member = rng.integers(0, 2, (3, 5)).astype(float)
        width = rng.uniform(0.0, 0.05, (4, 3))
        bounds = renyi_lower_from_events(member, member @ p - width[0], member @ p + width[1],
                                         member @ q - width[2], member @ q + width[3], orders)
        assert np.all(bounds <= renyi_divergence(p, q, orders, "pq") * (1 + 1e-9) + 1e-12)


def test_an_audits_confirmed_boxes_together_certify_more_than_the_best_one() -> None:
    """4-ary randomized response at ε = 1 (ρ = 0.3005), a 0.3005-zCDP audit at 10⁶ per side:
    its best box certifies ρ ≥ 0.81 of the truth (the best any single event can: 0.818); the
    same confirmed boxes together (the outputs as cells, no further α) certify ≥ 0.95."""
    from dpcheck.cell_bounds import rho_lower_from_events

    mech = RandomizedResponse(1.0, 4)
    ex = privacy_loss(mech.pmf([0]), mech.pmf([1]))
    r = dpcheck.audit(mech, [0], [1], dpcheck.ZCDP(ex.rho()), samples=1_000_000, seed=0)
    rows, pl, ph, ql, qh = [], [], [], [], []
    for w in r.confirmed:
        rows.append(w.event.mask([np.arange(4)]).astype(float))
        forward = w.direction == "d>d_prime"
        pl.append(w.bound.p_low if forward else 0.0)
        ph.append(1.0 if forward else w.bound.q_high)
        ql.append(0.0 if forward else w.bound.p_low)
        qh.append(w.bound.q_high if forward else 1.0)
    joint = rho_lower_from_events(np.array(rows), pl, ph, ql, qh,
                                  orders=[1.0, 1.1, 1.5, 2.0, 4.0])
    single = r.parameter_lower["rho"]
    assert single <= 0.82 * ex.rho() and 0.95 * ex.rho() <= joint <= ex.rho()


def test_event_bounds_bad_input() -> None:
    with pytest.raises(InvalidArgument, match="must be a 0/1 matrix"):
        renyi_lower_from_events([[0.5, 1.0]], [0.1], [1.0], [0.0], [0.2], [2.0])
    with pytest.raises(InvalidArgument, match="must be a 0/1 matrix"):
        renyi_lower_from_events([[0, 1]], [0.1, 0.2], [1.0], [0.0], [0.2], [2.0])
