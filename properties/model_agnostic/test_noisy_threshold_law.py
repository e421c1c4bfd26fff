"""Paper 003: the closed-form chunk-threshold law behind Theorem 3.5's main-job test.

``test_binclas_rate_scaling_agnostic`` (Theorem 3.5) draws A_binClas's vote counts from
:class:`algorithms.model_agnostic.utility.NoisyThresholdLaw` — the law of one chunk's ERM
threshold as the windowed sampler ``noisy_threshold_counts`` draws it, in closed form (two
independent ±1 walks read from the window's centre, their minima and minimisers, uniform order
statistics), so that a run's counts cost O(m) whatever k. This file checks that law against the
windowed sampler itself (which ``test_sampler_laws.py::test_windowed_erm_sampler_is_erm`` checks
against ERM by its definition): k chunk thresholds drawn by the sampler give their empirical CDF
at a grid (the counts ``#{j : t̂_j ≤ g}``), compared with the law's CDF by the exact one-sample
Kolmogorov–Smirnov distribution (``kstwo``; on a grid the statistic is at most the full one, so
the test is conservative). One check per case at the plugin's per-test α (``dp_check``).

References
----------
R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018,
Theorem 3.5 (agnostic misclassification rate of A_binClas).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import kstwo

from algorithms.beside import load_beside
from algorithms.model_agnostic.utility import NoisyThresholdLaw, noisy_threshold_counts


LawCheck = load_beside(__file__, "law_check.py").LawCheck


def check_cdf(counts: NDArray[np.int64], chunks: int, cdf: NDArray[np.float64], *,
              alpha: float, seed: np.random.SeedSequence) -> LawCheck:
    """Exact one-sample KS: ``counts/chunks`` (empirical CDF of ``chunks`` i.i.d. thresholds at
    a grid) against ``cdf`` (the law's CDF at the same grid); p = P(D_chunks ≥ d)."""
    del seed
    d = float(np.max(np.abs(counts / chunks - cdf)))
    return LawCheck(float(kstwo.sf(d, chunks)), alpha, {"ks": d, "chunks": chunks},
                    "chunk-threshold law")


#: (t*, η, n_chunk, chunks): the windowed test's small chunks on both sides of ½ (W = min(30/n,
#: t*, 1 − t*): the window set by [0, 1]'s nearer end; 100 000 chunks, cheap at n = 40), a
#: strong-noise case (walk minima below 0 and ties common) and the Theorem 3.5 test's own chunks
#: at n = 4e8 (ε = 40: k = 10 130, n/k = 39 486, W = 7.6e-4), 20 000 chunks each; 201-point
#: grid. KS critical distance at α ≈ 1e-6: ≈ 0.0085 (100 000 chunks), 0.019 (20 000). Power
#: (scratch, sup |ΔF| on the grid of law variants): ties to the right side 0.089 (and mass
#: 0.91), one index off in the right order statistics 0.025–0.039, in the left ones 0.009
#: (n = 40 cases: at the edge of the critical distance), the first right point's Beta(2, ·)
#: 0.16–0.33.
LAW_CASES = [(0.8, 0.1, 40, 100_000), (0.3, 0.1, 40, 100_000), (0.5, 0.2, 300, 20_000),
             (0.5, 0.02, 39_486, 20_000)]
LAW_GRID = 201


@pytest.mark.claim(paper="003", ref="Theorem 3.5", kind="utility")
@pytest.mark.parametrize("t_star, eta, n_chunk, chunks", LAW_CASES)
def test_noisy_threshold_law_is_the_windowed_sampler(t_star: float, eta: float, n_chunk: int,
                                                     chunks: int, dp_rng: Any, dp_check: Any,
                                                     dp_record: Any) -> None:
    """:class:`NoisyThresholdLaw` is the law of ``noisy_threshold_counts``' chunk thresholds:
    its mixture weights sum to 1 (up to float rounding, 1e-12; the truncation of n_L, n_R at a
    1e-18 tail is below that; the terms below 1e-20 it drops weigh ≤ 1e-15), its CDF is 0
    below t* − W and 1 at t* + W, and ``chunks`` sampler thresholds match it on a
    :data:`LAW_GRID`-point grid over the window (exact one-sample KS). Its counts are drawn at
    in-window queries as a multinomial of k over the CDF's increments: k i.i.d. thresholds, as
    the sampler's."""
    law = NoisyThresholdLaw(t_star, eta, n_chunk)
    assert law.total == pytest.approx(1.0, abs=1e-12) and abs(law.pruned) <= 1e-15
    w = law.half
    assert w == min(30.0 / n_chunk, t_star, 1 - t_star)
    grid = np.linspace(t_star - w, t_star + w, LAW_GRID)
    cdf = law.cdf(grid)
    assert np.all(np.diff(cdf) >= -1e-12) and cdf[-1] == 1.0
    assert law.cdf(np.array([t_star - 1.01 * w]))[0] == 0.0
    counts = noisy_threshold_counts(t_star, eta, n_chunk, chunks, grid, dp_rng)
    r = dp_check(check_cdf, counts, chunks, cdf, kind="noisy_threshold_law")
    # the count sampler itself: constants outside the window, a multinomial inside
    q = np.array([t_star - 2 * w, t_star - w / 2, t_star, t_star + w / 3, t_star + w])
    c = law.counts(1000, q, dp_rng)
    assert c[0] == 0 and c[-1] == 1000 and np.all(np.diff(c) >= 0)
    dp_record("noisy_threshold_law", {"t_star": t_star, "eta": eta, "n_chunk": n_chunk,
                                      "atom": law.atom, **r.to_dict()})
