"""Test beds of paper 002 (issue 27): the positioned neighbour family, the ordered pmf cache of
``max_loss`` and the per-record discard mutant of ``Users.first``."""

from __future__ import annotations

import numpy as np

from algorithms.pure_agnostic import PrivateCompare, as_users
from algorithms.pure_agnostic.testbeds import (
    clean,
    confusing,
    extreme,
    max_loss,
    positioned,
)
from dpcheck.neighbours import UserLevel


def test_positioned_places_the_changed_user_everywhere() -> None:
    e10, cf = extreme(1, 0, 2), confusing(2)
    adds = list(positioned("add_remove", [e10, e10], [e10, e10, cf]))
    # 2 orderings of CONFUSING(2) x 3 insertion positions
    assert len(adds) == 6
    assert {tuple(dp).index(v) for _, dp in adds for v in dp if v != e10} == {0, 1, 2}
    reps = list(positioned("replace", [e10, clean(2)], [e10, cf], orderings=1))
    assert [d.index(clean(2)) for d, _ in reps] == [0, 1]
    for d, dp in adds:
        assert UserLevel(2, mode="add_remove").are_neighbours(d, dp)
    for d, dp in reps:
        assert UserLevel(2, mode="replace").are_neighbours(d, dp)


def test_max_loss_keeps_the_order_of_users() -> None:
    """An order-dependent law must not be served from a sorted-multiset cache."""
    def pmf(d):  # a 'mechanism' that reveals whether the first user is EXTREME(1, 0)
        first = bool(d) and tuple(d[0]) == extreme(1, 0, 2)
        return {0: 0.9, 1: 0.1} if first else {0: 0.1, 1: 0.9}

    a, b = extreme(1, 0, 2), extreme(4, 1, 2)
    w = max_loss(pmf, [([a, b], [b, a])])
    assert w.epsilon > 2.0           # ln 9; a sorted-multiset cache would report 0


def test_first_per_record_is_the_flattened_discard() -> None:
    u = as_users([clean(4), confusing(4)], 4, 4)
    per_user = u.first(2)
    per_record = u.first(2, "record")
    assert per_user.x.tolist() == [[1, 2], [2, 2]]
    assert per_record.x.tolist() == [[1, 2], [3, 4]]   # both pseudo-users from user 0
    # the reference is symmetric in its users, the mutant is not
    mech = PrivateCompare(1.0, 0.25, 0.6, m=4, domain=4, discard="record")
    ref = PrivateCompare(1.0, 0.25, 0.6, m=4, domain=4)
    d1, d2 = [clean(4), confusing(4)], [confusing(4), clean(4)]
    assert np.isclose(ref.pmf(d1)[0], ref.pmf(d2)[0])
    assert not np.isclose(mech.pmf(d1)[0], mech.pmf(d2)[0])
