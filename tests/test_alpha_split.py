"""The split of an audit's α over its confirmed candidates: half of the ranked candidates' α to
the lead — the strong last slot's candidate if there is one, else the best validated one
(:func:`dpcheck.events.slots.lead_weighted`), 10 % to the support
candidates (:func:`dpcheck.events.support.with_support`), weighted Bonferroni
(:func:`dpcheck.core.certify.family_levels`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpcheck
from dpcheck.core.certify import family_levels
from dpcheck.events.event import Candidate, Event
from dpcheck.events.slots import LEAD_SHARE, lead_weighted
from dpcheck.events.support import SUPPORT_SHARE, with_support


def _cand(i: int, support: bool = False) -> Candidate:
    event = Event(0, "output", "atoms", values=np.array([float(i)]), support=support)
    return Candidate(event, "d>d_prime", float(-i), 10, 1)


@pytest.mark.parametrize("k", [1, 2])
def test_two_or_fewer_candidates_share_equally(k: int) -> None:
    chosen = [_cand(i) for i in range(k)]
    assert lead_weighted(chosen) == chosen
    assert family_levels(lead_weighted(chosen), 0.05) == pytest.approx([0.05 / k] * k)


@pytest.mark.parametrize("k", [3, 4, 6, 8])
def test_the_first_candidate_holds_half_and_the_others_split_the_rest(k: int) -> None:
    chosen = [_cand(i) for i in range(k)]
    levels = family_levels(lead_weighted(chosen), 0.05)
    assert levels[0] == pytest.approx(0.05 * LEAD_SHARE) == pytest.approx(0.025)
    assert levels[1:] == pytest.approx([0.025 / (k - 1)] * (k - 1))
    assert sum(levels) == pytest.approx(0.05, rel=1e-12)
    # order and candidates unchanged but for the first one's weight
    assert [c.event for c in lead_weighted(chosen)] == [c.event for c in chosen]
    assert [c.weight for c in chosen] == [1.0] * k  # the input is not modified


def test_support_candidates_keep_their_ten_percent_beside_the_lead() -> None:
    ranked = lead_weighted([_cand(i) for i in range(4)])
    chosen = with_support(ranked, [_cand(10, support=True), _cand(11, support=True)])
    levels = family_levels(chosen, 0.05)
    assert sum(levels[4:]) == pytest.approx(0.05 * SUPPORT_SHARE)
    assert levels[0] == pytest.approx(0.05 * (1 - SUPPORT_SHARE) * LEAD_SHARE)
    assert levels[1:4] == pytest.approx([0.05 * (1 - SUPPORT_SHARE) * LEAD_SHARE / 3] * 3)
    assert sum(levels) == pytest.approx(0.05, rel=1e-12)


def laplace(data: list[float], size: int, rng: np.random.Generator) -> np.ndarray:
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def test_the_strong_slot_candidate_leads_when_there_is_one() -> None:
    """A candidate put in by the strong last slot (``strong=True``) takes the lead share in
    place of the first; order and the other weights are unchanged."""
    chosen = [_cand(i) for i in range(3)] + [dataclasses.replace(_cand(3), strong=True)]
    weighted = lead_weighted(chosen)
    assert [c.event for c in weighted] == [c.event for c in chosen]
    levels = family_levels(weighted, 0.05)
    assert levels[3] == pytest.approx(0.05 * LEAD_SHARE)
    assert levels[:3] == pytest.approx([0.05 * (1 - LEAD_SHARE) / 3] * 3)


def test_an_audit_certifies_its_lead_at_the_lead_share() -> None:
    """Seed 0 of a Laplace audit: the mild ranking's first two are narrow intervals of the lower
    tail, the strong last slot holds the half-line ``output > 1.187`` — the lead, and the event
    that certifies the bound (0.9940 against the intervals' 0.987)."""
    r = dpcheck.audit(laplace, [1.0], [0.0], dpcheck.PureDP(1.0), samples=200_000, seed=0,
                      float_features=False)
    ranked = [w for w in r.confirmed if not w.event.support]
    assert len(ranked) == 3
    share = 0.05 * (1 - SUPPORT_SHARE)
    assert ranked[2].bound.alpha == pytest.approx(share * LEAD_SHARE)
    assert [w.bound.alpha for w in ranked[:2]] == pytest.approx([share * (1 - LEAD_SHARE) / 2] * 2)
    assert sum(w.bound.alpha for w in r.confirmed) == pytest.approx(0.05, rel=1e-12)
    assert ranked[2].event.kind != "atoms" and ranked[2].event.high is None  # a half-line
    assert r.witness is not None and r.witness.event == ranked[2].event
    assert r.epsilon_lower == pytest.approx(0.99399, abs=1e-5)


def test_an_audit_without_a_strong_slot_leads_with_its_first_candidate() -> None:
    """Seed 1: the strong shrinkage's best is among the mild ranking's picks, so no candidate is
    put in and the first holds the lead share."""
    r = dpcheck.audit(laplace, [1.0], [0.0], dpcheck.PureDP(1.0), samples=200_000, seed=1,
                      float_features=False)
    ranked = [w for w in r.confirmed if not w.event.support]
    share = 0.05 * (1 - SUPPORT_SHARE)
    assert [w.bound.alpha for w in ranked] == pytest.approx(
        [share * LEAD_SHARE] + [share * (1 - LEAD_SHARE) / (len(ranked) - 1)] * (len(ranked) - 1))


def test_approximate_claims_keep_equal_shares() -> None:
    """The lead share is for pure claims: an (ε, δ) audit also confirms the δ-objective
    candidate, and its ranked candidates share their α equally."""
    r = dpcheck.audit(laplace, [1.0], [0.0], dpcheck.ApproxDP(1.0, 1e-6), samples=200_000,
                      seed=0, float_features=False)
    ranked = [w for w in r.confirmed if not w.event.support]
    assert len(ranked) >= 3
    share = 0.05 * (1 - SUPPORT_SHARE)
    assert [w.bound.alpha for w in ranked] == pytest.approx([share / len(ranked)] * len(ranked))
