"""Seed 002 (Li–Wang–Ye): the combinatorial statements, exactly, with their printed constants.

Lemma 4.1 (binomial total variation, K/700), Corollary D.1 (m·α/4200), Lemma A.2 (Sauer) and
Lemma 3.3 (VC of a union; O(·) only, measured). The selectors of ``t``/``s`` used by the
algorithms are the objects under test where a statement is existential ("there exists ℓ"):
the argmax-gap choice (notes §6.3) must meet the printed gap; the mutant picks the largest
index instead.

References
----------
Li–Wang–Ye (seed 002), Lemma 4.1, Corollary D.1, Lemma A.2, Lemma 3.3; notes
``shared/research/seed-002.md`` §4.3 (M3, M4, M8, M9), §8.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from algorithms.concepts import from_masks, intervals, thresholds, union, vc_dimension
from algorithms.pure_agnostic.binomial import lemma41_k, select_gap

TOL = 1e-12


def _mut(name: str) -> Any:
    return pytest.param(name, marks=pytest.mark.mutant(name))


def _selector(variant: str):
    if variant == "selector_largest_index":
        def largest(m: int, p: float, q: float) -> tuple[int, float]:
            t = m - 1
            return t, float(stats.binom.sf(t, m, q) - stats.binom.sf(t, m, p))
        return largest
    return select_gap


# ============================================================================= Lemma 4.1

@pytest.mark.claim(paper="002", ref="Lemma 4.1", kind="combinatorial")
@pytest.mark.parametrize("variant", ["reference", _mut("k_without_sqrt_m"),
                                     _mut("selector_largest_index")])
def test_binomial_tv_bounds(variant: str, dp_record: Any) -> None:
    """``K/700 ≤ d_TV(Bin(m,p), Bin(m,q)) ≤ K`` with ``K = min(m|p−q|, √m|p−q|/√(p(1−p)), 1)``
    (middle term ``+∞`` at p ∈ {0, 1}), and the selected ℓ has
    ``|Pr[Bin(m,p) > ℓ] − Pr[Bin(m,q) > ℓ]| ≥ K/700``, exactly, for m ∈ {1..40, 60, 100, 200}
    and p, q on a 21-point grid of [0, 1]. Mutants: ``K`` without the √m (a transcription
    slip: the upper bound fails) and the selector choosing ℓ = m − 1."""
    select = _selector(variant)
    grid = np.linspace(0.0, 1.0, 21)
    worst_ratio = math.inf
    for m in [*range(1, 41), 60, 100, 200]:
        k = np.arange(m + 1)
        pmf = stats.binom.pmf(k[None, :], m, grid[:, None])
        tv = 0.5 * np.abs(pmf[:, None, :] - pmf[None, :, :]).sum(axis=2)
        for i, j in itertools.combinations(range(grid.size), 2):
            p, q = float(grid[i]), float(grid[j])
            kk = lemma41_k(m, p, q)
            if variant == "k_without_sqrt_m" and 0 < p < 1:
                kk = min(m * abs(p - q), abs(p - q) / math.sqrt(p * (1 - p)), 1.0)
            assert tv[i, j] <= kk + TOL, f"TV {tv[i, j]} > K {kk} at m={m}, p={p}, q={q}"
            assert tv[i, j] >= kk / 700 - TOL
            _, gap = select(m, p, q)
            assert gap >= kk / 700 - TOL, f"gap {gap} < K/700 at m={m}, p={p}, q={q}"
            worst_ratio = min(worst_ratio, gap / kk)
    dp_record("min_gap_over_K", {"variant": variant, "ratio": worst_ratio, "printed": 1 / 700})


# ============================================================================= Corollary D.1

@pytest.mark.claim(paper="002", ref="Corollary D.1", kind="combinatorial")
@pytest.mark.parametrize("variant", ["reference", _mut("selector_largest_index")])
def test_corollary_d1(variant: str, dp_record: Any) -> None:
    """For 0 < α ≤ 1 and m ≤ 1/α the selected ℓ has
    ``Pr[Bin(m, α/2) > ℓ] + mα/4200 ≤ Pr[Bin(m, 2α/3) > ℓ]`` (α on a 100-point grid of
    [0.01, 1], every m ≤ min(1/α, 100)). The minimum of gap/(mα) is recorded (printed 1/4200)."""
    select = _selector(variant)
    worst = math.inf
    for a in np.linspace(0.01, 1.0, 100):
        for m in range(1, min(int(math.floor(1 / a + 1e-9)), 100) + 1):
            _, gap = select(m, a / 2, 2 * a / 3)
            assert gap >= m * a / 4200 - TOL, f"gap {gap} < m*a/4200 at m={m}, a={a}"
            worst = min(worst, gap / (m * a))
    dp_record("min_gap_over_m_alpha", {"variant": variant, "ratio": worst, "printed": 1 / 4200})


# ============================================================================= Lemma A.2

def _growth(masks: list[int], points: tuple[int, ...]) -> int:
    return len({tuple(h >> x & 1 for x in points) for h in masks})


@pytest.mark.claim(paper="002", ref="Lemma A.2", kind="combinatorial")
@pytest.mark.parametrize("variant", ["reference", _mut("sauer_without_e")])
def test_sauer(variant: str) -> None:
    """``Π_C(n) ≤ (e·n/d)^d`` for n ≥ d = VC(C): growth functions by brute force for thresholds,
    intervals, their union and 40 random classes on ≤ 6 points (thresholds: Π = n + 1).
    Mutant: the bound without e, ``(n/d)^d``."""
    rng = np.random.Generator(np.random.PCG64(2))
    classes = [thresholds(6), intervals(6), union(thresholds(5), intervals(5))]
    classes += [from_masks(5, rng.integers(0, 32, size=int(rng.integers(2, 12))).tolist())
                for _ in range(40)]
    base = math.e if variant == "reference" else 1.0
    for cls in classes:
        d = vc_dimension(cls)
        for n in range(max(d, 1), cls.n + 1):
            pi = max(_growth(list(cls.masks), pts) for pts in itertools.combinations(range(cls.n), n))
            if d == 0:
                assert pi <= 1
                continue
            assert pi <= (base * n / d) ** d + 1e-9, f"Pi={pi} > bound at n={n}, d={d}"


# ============================================================================= Lemma 3.3

@pytest.mark.claim(paper="002", ref="Lemma 3.3", kind="combinatorial")
def test_vc_of_union_measured(dp_record: Any) -> None:
    """VC(H1 ∪ H2) = O(VC(H1) + VC(H2)) has no constant in the paper; measured on 60 random pairs
    of classes on 6 points against the standard explicit form d1 + d2 + 1 (not the paper's)."""
    rng = np.random.Generator(np.random.PCG64(3))
    rows = []
    for _ in range(60):
        h1 = from_masks(6, rng.integers(0, 64, size=int(rng.integers(1, 10))).tolist())
        h2 = from_masks(6, rng.integers(0, 64, size=int(rng.integers(1, 10))).tolist())
        d1, d2, du = vc_dimension(h1), vc_dimension(h2), vc_dimension(union(h1, h2))
        rows.append((d1, d2, du))
        assert du <= d1 + d2 + 1
    ratio = max(du / max(d1 + d2, 1) for d1, d2, du in rows)
    dp_record("vc_union", {"pairs": len(rows), "max_vc_union_over_sum": ratio,
                           "max_excess_over_d1_plus_d2": max(du - d1 - d2 for d1, d2, du in rows)})
