"""The split of an audit's α over its confirmed candidates: half of the ranked candidates' α to
the best validated one (:func:`dpcheck.events.slots.lead_weighted`), 10 % to the support
candidates (:func:`dpcheck.events.support.with_support`), weighted Bonferroni
(:func:`dpcheck.core.certify.family_levels`)."""

from __future__ import annotations

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


def test_an_audit_certifies_its_first_candidate_at_the_lead_share() -> None:
    r = dpcheck.audit(laplace, [1.0], [0.0], dpcheck.PureDP(1.0), samples=200_000, seed=0,
                      float_features=False)
    ranked = [w for w in r.confirmed if not w.event.support]
    assert len(ranked) >= 3
    share = 0.05 * (1 - SUPPORT_SHARE)
    assert ranked[0].bound.alpha == pytest.approx(share * LEAD_SHARE)
    assert [w.bound.alpha for w in ranked[1:]] == pytest.approx(
        [share * (1 - LEAD_SHARE) / (len(ranked) - 1)] * (len(ranked) - 1))
    assert sum(w.bound.alpha for w in r.confirmed) == pytest.approx(0.05, rel=1e-12)


def test_approximate_claims_keep_equal_shares() -> None:
    """The lead share is for pure claims: an (ε, δ) audit also confirms the δ-objective
    candidate, and its ranked candidates share their α equally."""
    r = dpcheck.audit(laplace, [1.0], [0.0], dpcheck.ApproxDP(1.0, 1e-6), samples=200_000,
                      seed=0, float_features=False)
    ranked = [w for w in r.confirmed if not w.event.support]
    assert len(ranked) >= 3
    share = 0.05 * (1 - SUPPORT_SHARE)
    assert [w.bound.alpha for w in ranked] == pytest.approx([share / len(ranked)] * len(ranked))
