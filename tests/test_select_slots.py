"""The winner's curse of the validation ranking on short shortlists (scalar outputs) and, at
the end, on long ones (vector outputs: noise tails that took every mild slot).

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


# --- long shortlists (vector outputs): noise tails in the mild slots -----------------------

def _long_shortlist(counts):
    """A shortlist of single ``{output[j] > 0}`` events, one feature each, with validation
    counts ``counts`` (numerator side first) and generation counts equal to them."""
    from dpcheck.events.event import Event
    from dpcheck.events.slots import Shortlist

    short = Shortlist()
    for j, _ in enumerate(counts):
        short.entries.append((Event(j, f"output[{j}]", "gt", low=0.0), True, 0.0))
    short.eps_singles = short.singles = len(counts)
    short.partners = [None] * len(counts)
    short.v_p = np.array([p for p, _ in counts], dtype=np.int64)
    short.v_q = np.array([q for _, q in counts], dtype=np.int64)
    short.gen_score = np.zeros(len(counts))
    short.g_d, short.g_dp = short.v_p.copy(), short.v_q.copy()
    return short


#: NoisyHist1 (DP-Sniper's benchmark, 5 Laplace(10) bins, one moved by 1), pair 2's refined
#: exploration at seed 0, one tenth of DP-Sniper's calls: validation counts of the mild
#: ranking's best (n_val = 1,266,375 per side). Three noise tails (a coordinate that is the
#: same under both datasets, 12 against 3; the row sum's tail, 8 against 2; a logistic tail,
#: 14 against 7) took the three mild slots; the certified event was a diluted logistic pair
#: (0.0968) while the coordinate's paired half-line (1,013,578 against 916,883: ratio e^0.100)
#: had no slot. One more tail (20 against 6, z = 2.75) is there to catch a threshold set at the
#: usual 1.96 rather than the shortlist's max-noise level (z = sqrt(2 ln 208) = 3.27).
NOISY_HIST1_SEED0 = [(12, 3), (8, 2), (14, 7), (20, 6), (41728, 37095), (1013578, 916883)]


def test_noise_tails_take_at_most_one_mild_slot_of_a_long_shortlist():
    from dpcheck.events.select import _guesses, _rankings
    from dpcheck.events.slots import NOISE_ALLOWANCE, fill_slots

    filler = [(500 + i % 7, 500) for i in range(208 - len(NOISY_HIST1_SEED0))]
    short = _long_shortlist(NOISY_HIST1_SEED0 + filler)
    kw = dict(n_confirm=21_000_000, alpha_each=0.05 / 4, delta=0.0, ratio=True)
    rankings, quotas, diverse = _rankings(short, 1_266_375, 3, kw)
    assert diverse and quotas[0] == 3
    # the hazard is real: under the mild shrinkage the four noise tails rank first
    assert sorted(rankings[0][0][:4].tolist()) == [0, 1, 2, 3]
    guesses = _guesses(short)
    assert guesses[:4].all() and not guesses[4:6].any()
    chosen, _ = fill_slots(short, rankings[:1], quotas[:1], diverse, True, guesses=guesses)
    picked = [c.event.feature for c in chosen]
    assert NOISE_ALLOWANCE == 1 and len(picked) == 3
    assert picked[0] in (0, 1, 2, 3)  # the allowance: one guess keeps its place
    assert sorted(picked[1:]) == [4, 5]  # the firm events take the other two slots
    # without the allowance (the former behaviour) the firm events get no mild slot
    before, _ = fill_slots(short, rankings[:1], quotas[:1], diverse, True)
    assert {c.event.feature for c in before} <= {0, 1, 2, 3}


def _mild_slots(counts, filler_count=500):
    from dpcheck.events.select import _guesses, _rankings
    from dpcheck.events.slots import fill_slots

    filler = [(filler_count + i % 7, filler_count) for i in range(208 - len(counts))]
    short = _long_shortlist(counts + filler)
    kw = dict(n_confirm=21_000_000, alpha_each=0.05 / 4, delta=0.0, ratio=True)
    rankings, quotas, diverse = _rankings(short, 1_266_375, 3, kw)
    chosen, _ = fill_slots(short, rankings[:1], quotas[:1], diverse, True,
                           guesses=_guesses(short))
    return [c.event.feature for c in chosen], rankings[0][0].tolist()


def test_weak_signals_ranked_below_a_firm_candidate_compete_as_before():
    """Weak real signals are unproven too (the zoo's ``svt1_c2``, seed 2, 10⁶ per side: the
    third mild slot held ``output[9] > 0``, 938 against 849, z = 2.1, and certified 0.0271).
    Ranked below a firm candidate they are not capped: the mild ranking's order stands."""
    picked, order = _mild_slots([(2034, 1800), (938, 849), (800, 700), (18999, 18303)])
    assert order[0] == 0 and sorted(order[1:3]) == [1, 2]  # two unproven after the firm first
    assert picked == order[:3]


def test_weak_signals_measured_with_many_counts_are_not_guesses():
    """The zoo's ``svt2_c2``, seed 2, ``audit_pairs`` at 10⁶ per side: two atom sets of the
    learned scores, 3,093 against 2,855 (z = 3.1) and 3,642 against 3,373 (z = 3.2), just under
    the shortlist's noise level (3.3), were ranked above the first firm entry (13,611 against
    13,021) and, counted as guesses, the second lost its mild slot (0.0246 → 0.0198). Seen
    thousands of times, their ratios are measured, not guessed: with a noise tail (12 against
    3) ahead of them, the tail keeps the one allowance and both weak signals keep their slots."""
    from dpcheck.events.slots import FEW_COUNTS

    picked, order = _mild_slots([(12, 3), (3093, 2855), (3642, 3373), (13611, 13021)])
    assert order[:3] == [0, 1, 2]  # the tail, then the two weak signals, ahead of the firm one
    assert picked == [0, 1, 2]
    assert 12 < FEW_COUNTS <= 2855


def test_guesses_ranked_below_a_weak_signal_compete_as_before():
    """The cap's boundary is the first entry that is not a guess, here a weak signal measured
    with thousands of counts (3,642 against 3,373), not the first firm one: a guess ranked
    below it (42 against 30) keeps its mild slot, as the benchmark runs of stop 42 measured.
    With the boundary at the first firm entry (stop 41's) it would lose it to the firm one."""
    picked, order = _mild_slots([(12, 3), (3642, 3373), (42, 30), (13611, 13021)])
    assert order[:4] == [0, 1, 2, 3]  # tail, weak signal, lesser guess, firm
    assert picked == [0, 1, 2]


def test_slots_the_firm_candidates_cannot_fill_go_to_the_next_guesses():
    """No firm candidate at all (a correct mechanism's noise, every entry seen a handful of
    times): the slots are filled in rank order, as before the cap."""
    picked, order = _mild_slots([c for c in NOISY_HIST1_SEED0 if c[0] < 1000], filler_count=5)
    assert picked == order[:3]
