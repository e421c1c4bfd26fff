"""Seed 000 (Li–Wang–Ye), Lemma 3.1 end to end at a size where ``C(n, k)`` overflows a float.

The exact pmf of A_Agnostic sums over the count tables of ``T`` with multivariate hypergeometric
weights ``Π_j C(c_j, t_j) / C(n, k)`` (:func:`algorithms.realizable_to_agnostic.tables.
subset_tables`); once ``C(n, k) ≥ 2^1000`` they are computed in log space. No other claim test
reaches that branch (issue 27: the mutation run's gap), because every other exact pmf runs at
``n ≤ 100``. Here n = 1 200, ε = 1/3, k = ⌈εn⌉ = 400 (``log2 C(1200, 400) = 1 096.6``), on a
dataset with three distinct records, so there are only ≈ 800 tables.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 2, Lemma 3.1 and its proof; notes
``shared/research/seed-000.md`` §4.4 (count tables), §7 (B4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic import Agnostic
from dpcheck import PureDP, Replace
from dpcheck.core.sampler_check import check_sampler
from dpcheck.exact import privacy_loss

N_LARGE, EPS = 1200, 1 / 3
TOL = 1e-9


def _pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Record 0 is the only one at x* = 0 (label 1), then ⌈n/2⌉ − 1 records (3, 0) and n/2
    records (3, 1); the neighbour moves record 0 to (3, 0), so x* leaves the dataset."""
    s = np.tile([3, 1], (n, 1))
    s[0] = [0, 1]
    s[1: n // 2, 1] = 0
    sp = s.copy()
    sp[0] = [3, 0]
    return s, sp


@pytest.mark.claim(paper="000", ref="Lemma 3.1", kind="privacy")
@pytest.mark.parametrize("variant", ["reference", pytest.param(
    "half_sample", marks=pytest.mark.mutant("half_sample"))])
def test_agnostic_rr_exact_at_large_n(variant: str, dp_audit: Any, dp_rng: Any,
                                      dp_record: Any) -> None:
    """A_Agnostic with the adversarial 1-DP RR learner on b = 1[x* ∈ T^h] (domain {0..5},
    x* = 0), n = 1 200, ε = 1/3 (C(n, k) ≈ 2^1096: the log-space hypergeometric weights).
    Derived exact law (notes, B4): x* is in T iff record 0 is, w.p. k/n with k = ⌈εn⌉ (the
    paper's uniform size-k subset), so with RR at ε_A = 1 the exact loss is
    ln(1 + (k/n)(e − 1)) = 0.45283; asserted to 1e-9, with both pmfs summing to 1, the bound of
    Lemma 3.1's proof ln(e^ε + 4e²k/(n − k)) = 2.783, the sampler against the exact law
    (Pearson χ², 50k per side, 10⁻³) and an audit at that bound (100k per side). Mutant B4
    half_sample (|T| = n/2): exact loss ln((e + 1)/2) = 0.6201 ≠ the law of k = 400."""
    s, sp = _pair(N_LARGE)
    k = math.ceil(EPS * N_LARGE)
    assert math.comb(N_LARGE, k) >= 2.0 ** 1000          # the log-space branch is taken
    mech = Agnostic(6, EPS, learner="rr", x_star=0, bug=variant)
    p1, p2 = mech.pmf(s), mech.pmf(sp)
    exact = privacy_loss(p1, p2).epsilon
    closed = math.log(1 + k / N_LARGE * (math.e - 1))
    bound = math.log(math.exp(EPS) + 4 * math.e ** 2 * k / (N_LARGE - k))
    dp_record("agnostic_rr_large_n", {"variant": variant, "n": N_LARGE, "k": k,
                                      "exact_epsilon": exact, "closed_form": closed,
                                      "bound": bound, "mass": [sum(p1.values()),
                                                               sum(p2.values())]})
    assert sum(p1.values()) == pytest.approx(1.0, abs=TOL)
    assert sum(p2.values()) == pytest.approx(1.0, abs=TOL)
    assert exact == pytest.approx(closed, abs=TOL), (exact, closed)
    assert exact <= bound + TOL
    check = check_sampler(mech.sample(s, 50_000, dp_rng), p1, mech.sample(sp, 50_000, dp_rng), p2)
    assert not check.mismatch, check.describe()
    dp_audit(mech, s, sp, PureDP(bound), samples=100_000, relation=Replace())
