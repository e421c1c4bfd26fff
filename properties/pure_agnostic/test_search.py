"""Seed 002 (Li–Wang–Ye): the counterexample search on user-level pairs, unaided.

``dpcheck.find_counterexample`` gets only a Hypothesis strategy of neighbouring datasets of users
(``dpcheck.strategies.users(..., min_records=m)`` with ``UserLevel(m, mode="add_remove")``, the
paper's relation); it explores, shrinks the winning pair (records inside users move towards
simpler values, common users are dropped) and confirms once on fresh samples.

References
----------
Li–Wang–Ye (seed 002), Algorithm 2 / Lemma 4.5 (privacy by composition over T calls); notes §5 B3.
"""

from __future__ import annotations

from typing import Any

import pytest

from algorithms.pure_agnostic import PrivateMinError
from dpcheck import PureDP, UserLevel
from dpcheck.strategies import neighbouring_pairs, users

RECORDS = [(x, y) for x in range(1, 5) for y in (0, 1)]


@pytest.mark.claim(paper="002", ref="Lemma 4.5", kind="utility")
@pytest.mark.parametrize("variant", [
    "reference", pytest.param("min_error_full_budget_per_call",
                              marks=pytest.mark.mutant("min_error_full_budget_per_call"))])
def test_search_user_level_pairs(variant: str, dp_search: Any, dp_record: Any) -> None:
    """``PrivateMinError`` (α = 0.25, m = 2) searched over add/remove-one-user pairs of ≤ 2 users:
    no counterexample for the reference; B3 (every call at ε) is found and shrunk (exact loss of
    the confirmed pair ≈ 1.85)."""
    rel = UserLevel(2, mode="add_remove")
    strat = neighbouring_pairs(users(RECORDS, 2, 2, min_records=2), rel)
    mech = PrivateMinError(1.0, 0.25, 2, 4,
                           call_epsilon=None if variant == "reference" else 1.0)
    s = dp_search(mech, PureDP(1.0), pairs=strat, samples=200_000, explore_samples=10_000,
                  max_examples=30)
    assert s.pair is not None and rel.are_neighbours(*s.pair)
    dp_record("search", {"variant": variant, "found": s.found, "pair": s.pair,
                         "exact_epsilon": s.audit.exact_epsilon, "calls": s.calls})
