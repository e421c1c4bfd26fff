"""Seed 002 (Li–Wang–Ye): the uniform-convergence lemmas at their printed sample sizes.

Each lemma gives an explicit ``n`` (Lemmas 3.1, 3.2, 4.3, 4.4) or an explicit failure bound
(Lemma 4.2); the test draws datasets of exactly that size from a known distribution and checks
the failure rate against β with ``dp_accuracy`` (exact binomial test). Population values are
exact: ``err_D(f_u)``, ``dis_D(f_a, f_b) = D_X((a, b])`` and, at user level,
``err^t_{D^m}(c) = Pr[Bin(m, err_D(c)) > t]`` (notes M13). Datasets are drawn through sufficient
statistics (multinomial counts of the 8 labelled points, or of the 330 possible users of m = 4
examples), so the printed n (≈ 10⁴–5·10⁵) costs one multinomial draw per trial.

The bounds are loose (their constants come from the proofs), so each test also runs a mutant
with a plausible estimator bug (off-by-one threshold or region, "≥ t" for "> t", B11) that the
same body must catch.

References
----------
Li–Wang–Ye (seed 002), Lemmas 3.1, 3.2, 4.2, 4.3, 4.4; notes §4.3 (M1, M2, M5–M7, M13).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from algorithms.pure_agnostic.testbeds import Distribution

N = 4
D = Distribution.noisy_threshold(N, cut=2, noise=0.1)
#: cells (x, y) in the order x = 1..N, y = 0, 1
CELL_P = np.stack([D.px * (1 - D.p1), D.px * D.p1], axis=1).ravel()
U = np.arange(N + 1)
X = np.arange(1, N + 1)


def _mut(name: str) -> Any:
    return pytest.param(name, marks=pytest.mark.mutant(name))


def _mistake_matrix(shift: int = 0) -> np.ndarray:
    """(N+1, 8): whether ``f_u`` errs on cell (x, y); ``shift = 1`` labels by ``1[x ≥ u]``."""
    pred = (X[None, :] > U[:, None] - shift).astype(int)  # (N+1, N)
    return np.stack([pred == 1, pred == 0], axis=2).reshape(N + 1, 2 * N).astype(float)


def _region_matrix(shrink: int = 0) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """(pairs, 8): whether the cell's point is in the disagreement region ``(a, b]`` of
    ``f_a, f_b``; ``shrink = 1`` drops the region's first point (bug)."""
    pairs = list(itertools.combinations(range(N + 1), 2))
    reg = np.array([[(a + shrink < x <= b) for x in X for _ in (0, 1)] for a, b in pairs], float)
    return reg, pairs


# ============================================================================= item level

@pytest.mark.claim(paper="002", ref="Lemma 3.1", kind="generalization")
@pytest.mark.parametrize("variant", ["reference", _mut("empirical_error_off_by_one")])
def test_agnostic_uniform_convergence(variant: str, dp_accuracy: Any) -> None:
    """n = ⌈576/α²·(4·VC + ln(8/β))⌉ (α = β = 0.1, VC = 1: n = 482 688) ⇒
    ``Pr[∃c: |err_D(c) − err_z(c)| > α] ≤ β`` (thresholds on 4 points, η = 0.1)."""
    alpha, beta = 0.1, 0.1
    n = math.ceil(576 / alpha**2 * (4 + math.log(8 / beta)))
    pop = _mistake_matrix() @ CELL_P
    emp_m = _mistake_matrix(1 if variant == "empirical_error_off_by_one" else 0)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        counts = rng.multinomial(n, CELL_P, size=size)
        return np.abs(counts @ emp_m.T / n - pop).max(axis=1)

    dp_accuracy(trial, alpha=alpha, beta=beta, trials=2000)


@pytest.mark.claim(paper="002", ref="Lemma 3.2", kind="generalization")
@pytest.mark.parametrize("variant", ["reference", _mut("disagreement_off_by_one")])
def test_realizable_uniform_convergence(variant: str, dp_accuracy: Any) -> None:
    """n = ⌈96/α·(2·VC·ln(384/α) + ln(4/β))⌉ (α = β = 0.1: n = 19 380) ⇒
    ``Pr[∃c, h: dis_D(c,h) > α and dis_x(c,h) ≤ α/2] ≤ β`` (the paper writes err_{D_X}(c,h) for
    dis, notes §6.7). Trial error = 1 on such a pair."""
    alpha, beta = 0.1, 0.1
    n = math.ceil(96 / alpha * (2 * math.log(384 / alpha) + math.log(4 / beta)))
    reg, _ = _region_matrix()
    emp_reg, _ = _region_matrix(1 if variant == "disagreement_off_by_one" else 0)
    pop = reg @ CELL_P

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        counts = rng.multinomial(n, CELL_P, size=size)
        bad = (pop[None, :] > alpha) & (counts @ emp_reg.T / n <= alpha / 2)
        return bad.any(axis=1).astype(float)

    dp_accuracy(trial, alpha=0.5, beta=beta, trials=2000)


@pytest.mark.claim(paper="002", ref="Lemma 4.2", kind="generalization")
@pytest.mark.parametrize("variant", ["reference", _mut("empirical_error_off_by_one")])
def test_relative_uniform_convergence(variant: str, dp_accuracy: Any) -> None:
    """``Pr[∃c: err_D(c) > (1+γ)err_z(c) + ξ] ≤ 4Π_C(2n)·exp(−γξn/(4(γ+1)))`` at γ = 0.5,
    ξ = 0.1, n = 636 (Π_C(2n) ≤ |C| = 5 on 4 points: the bound is 0.099)."""
    gamma, xi, n = 0.5, 0.1, 636
    beta = 4 * min(2 * n + 1, N + 1) * math.exp(-gamma * xi * n / (4 * (gamma + 1)))
    pop = _mistake_matrix() @ CELL_P
    emp_m = _mistake_matrix(1 if variant == "empirical_error_off_by_one" else 0)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        emp = rng.multinomial(n, CELL_P, size=size) @ emp_m.T / n
        return (pop[None, :] - (1 + gamma) * emp - xi).max(axis=1)

    dp_accuracy(trial, alpha=0.0, beta=beta, trials=2000)


# ============================================================================= user level

M = 4
TYPES = list(itertools.combinations_with_replacement(range(2 * N), M))
#: (types, 8): how many examples of each cell a user of that type holds
TYPE_CELLS = np.array([np.bincount(t, minlength=2 * N) for t in TYPES], dtype=float)
TYPE_P = np.array([stats.multinomial.pmf(c, M, CELL_P) for c in TYPE_CELLS])
TYPE_P /= TYPE_P.sum()


@pytest.mark.claim(paper="002", ref="Lemma 4.3", kind="generalization")
@pytest.mark.parametrize("variant", ["reference", _mut("user_error_ge_t")])
def test_user_level_agnostic_convergence(variant: str, dp_accuracy: Any) -> None:
    """n = ⌈64/α²·(VC·ln(128m/α²) + ln(8/β))⌉ users (α = 0.2, β = 0.1, m = 4: n = 22 143) ⇒
    ``Pr[∃c: |err^t_{D^m}(c) − err^t_z(c)| > α] ≤ β`` for t = 1, with the exact population value
    ``Pr[Bin(m, err_D(c)) > t]``. Mutant B11: ``mist ≥ t``."""
    alpha, beta, t = 0.2, 0.1, 1
    n = math.ceil(64 / alpha**2 * (math.log(128 * M / alpha**2) + math.log(8 / beta)))
    err = _mistake_matrix() @ CELL_P
    pop = stats.binom.sf(t, M, err)
    mist = TYPE_CELLS @ _mistake_matrix().T  # (types, N+1)
    wrong = (mist >= t) if variant == "user_error_ge_t" else (mist > t)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        counts = rng.multinomial(n, TYPE_P, size=size)
        return np.abs(counts @ wrong / n - pop).max(axis=1)

    dp_accuracy(trial, alpha=alpha, beta=beta, trials=2000)


@pytest.mark.claim(paper="002", ref="Lemma 4.4", kind="generalization")
@pytest.mark.parametrize("variant", ["reference", _mut("disagreement_off_by_one")])
def test_user_level_realizable_convergence(variant: str, dp_accuracy: Any) -> None:
    """n = ⌈96/α·(2·VC·ln(384m/α) + ln(4/β))⌉ users (α = 0.2, β = 0.1, m = 4: n = 10 361) ⇒
    ``Pr[∃c,h: dis^s_{D^m}(c,h) > α and dis^s_x(c,h) ≤ α/2] ≤ β`` at s = 0, with
    ``dis^s_{D^m} = Pr[Bin(m, dis_D) > s]``."""
    alpha, beta, s = 0.2, 0.1, 0
    n = math.ceil(96 / alpha * (2 * math.log(384 * M / alpha) + math.log(4 / beta)))
    reg, _ = _region_matrix()
    emp_reg, _ = _region_matrix(1 if variant == "disagreement_off_by_one" else 0)
    pop = stats.binom.sf(s, M, reg @ CELL_P)
    inside = (TYPE_CELLS @ emp_reg.T) > s  # (types, pairs)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        counts = rng.multinomial(n, TYPE_P, size=size)
        bad = (pop[None, :] > alpha) & (counts @ inside / n <= alpha / 2)
        return bad.any(axis=1).astype(float)

    dp_accuracy(trial, alpha=0.5, beta=beta, trials=2000)
