"""The winner's curse of the validation ranking on short shortlists (scalar outputs).

``select_events`` ranks the shortlisted candidates by their projected bound on fresh validation
counts, shrunk mildly so that rare real events survive. On a location shift every tail event
beyond both means has the true ratio e^ε, and among a few dozen of them the best mild score is
often a narrow interval whose validation ratio came out high by chance: it takes every slot,
the half-line that carries the same ratio with twenty times the mass gets none, and the
certified bound falls far below what the budget allows (seed 7 below certified 0.0 before).
The last of the ``k`` slots now goes to the best candidate under the max-noise shrinkage
(``estimate − sqrt(2 ln m)·SE``, :func:`dpcheck.events.projection.max_noise_shrink`) when the
mild ranking left it out, and events holding every validation output of both sides (ratio 1)
never take a slot. The number of candidates, so every Bonferroni share, is unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtri

import dpcheck
from algorithms.zoo import get
from dpcheck.events.projection import max_noise_shrink
from dpcheck.events.support import SUPPORT_SHARE


@pytest.mark.parametrize("m", [2, 10, 64, 500])
def test_max_noise_shrink_is_the_expected_maximum_of_m_normals(m):
    assert ndtri(1.0 - max_noise_shrink(m)) == pytest.approx(math.sqrt(2 * math.log(m)))
    assert max_noise_shrink(m + 1) < max_noise_shrink(m)


def shifted_laplace(data, size, rng):
    return float(data[0]) + rng.laplace(0.0, 10.0, size)


#: Laplace(10) shifted by 1, claim ε = 0.1 (true), 10⁶ per side, values only, seeds 0–7.
#: Measured: before the max-noise slot 0.1019 0.0899 0.0954 0.0869 0.0957 0.0936 0.0720 0.0000
#: (mean 0.079); with it 0.1019 0.0925 0.0970 0.0946 0.0962 0.0936 0.0949 0.0943 (mean 0.0956,
#: min 0.0925). The oracle (the half-line beyond both means, confirmed on all samples) is about
#: 0.0985 in median. Seed 0's 0.1019 is above the true 0.1 with either ranking (the same
#: interval event): an α-level miss, 1 of 8 at α = 0.05 (coverage: tests/test_calibration.py).
#: With the lead share on the strong slot's candidate (stop 39; the half-line or two-tailed
#: event leads on seeds 1–4, 6, 7): 0.1035 0.0928 0.0973 0.0950 0.0966 0.0939 0.0953 0.0946
#: (mean 0.0961, min 0.0928; seed 0's interval is still the first and certifies 0.1035).
MEAN, MIN = 0.09, 0.085


def test_a_location_shift_keeps_its_half_line():
    bounds = []
    for seed in range(8):
        r = dpcheck.audit(shifted_laplace, [1.0], [0.0], dpcheck.PureDP(0.1),
                          samples=1_000_000, seed=seed, float_features=False)
        # still k = 3 ranked candidates: half of their 90 % of α to the lead (the strong
        # slot's candidate when there is one, else the first), a quarter each to the others
        share = 0.05 * (1 - SUPPORT_SHARE)
        ranked = [w for w in r.confirmed if not w.event.support]
        assert sorted(w.bound.alpha for w in ranked) == pytest.approx(
            [share / 4, share / 4, share / 2])
        assert ranked[1].bound.alpha == pytest.approx(share / 4)  # the lead: first or last
        bounds.append(r.epsilon_lower)
    assert np.mean(bounds) >= MEAN and min(bounds) >= MIN, bounds


def test_the_whole_output_space_never_takes_a_slot():
    """Noisy argmax with exponential noise over 5 candidates (zoo), seed 5: before, two of the
    three slots went to ``{output <= 4}`` (every output, both directions), ratio exactly 1."""
    entry = get("report_noisy_max_exponential")
    d, d_prime = entry.pairs[0]
    r = dpcheck.audit(entry.mechanism, d, d_prime, entry.claim, samples=100_000, seed=5,
                      features=entry.features, float_features=entry.float_features)
    ranked = [w for w in r.confirmed if "seen under one dataset only" not in w.describe()]
    assert len(ranked) == 3
    assert not [w.describe() for w in ranked if w.p_hat == 1.0 and w.q_hat == 1.0]
