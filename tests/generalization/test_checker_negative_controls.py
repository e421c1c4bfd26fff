"""Negative controls for every checker path the paper-001 claim tests rely on (issue 27).

Each control is a known answer: a mechanism that certainly violates the claim on that path,
with the violation visible *only* to that path (one direction of closeness, the Bayes-optimal
adversary alone, the two-level form, sampled vs exact inner closeness). A checker whose path
is inverted or weakened — argmin instead of argmax in the Bayes adversary, one hockey-stick
direction instead of both, a sampled closeness audit that never rejects — fails the control.

The Bayes adversary's inversion is also *demonstrated* here: the RG checker's
``dpcheck.generalization.robust._bayes`` is monkeypatched (from the test; dpcheck's source is
not changed) with the argmin version, and the same call then misses the leak. The claim tests
in ``properties/generalization`` cannot serve as this control: at their α (0.19 for Lemma 36
at n = 200, ≥ 0.5 for Lemma 37 / Theorem 21 at n ≤ 6) no mechanism's gap is visible to the
Bayes adversary alone (even releasing the full count vector gives E[TV] ≈ 0.085 at n = 200).

The exact-direction controls were checked against a locally edited dpcheck (exact_closeness
with one hockey-stick direction; not committed): ``test_pg_simulator_exact_both_directions``
fails on the ``sim_wider`` case, as it must.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpcheck import (
    IIDPopulation,
    PerfectGeneralization,
    RobustGeneralization,
    check_perfect_generalization,
    check_robust_generalization,
)
from dpcheck.generalization import robust

K, N = 6, 4
POP = IIDPopulation(np.arange(K), np.ones(K), N)
#: Any released presence mask P gives the subset P a gap 1 − |P|/6 ≥ 1/3 > 0.25.
RG_CLAIM = RobustGeneralization(0.25, 0.1)


class PresenceRelease:
    """Releases which of the 6 records occur in S (a bitmask): not (0.25, 0.1)-RG."""

    def output(self, data) -> int:
        return int(np.bitwise_or.reduce(1 << np.asarray(data)))

    def sample(self, data, size, rng):
        return np.full(size, self.output(data), dtype=np.int64)

    def pmf(self, data):
        return {self.output(data): 1.0}


def _inverted_bayes(pop, explored, eps):
    """The RG checker's Bayes adversary with argmax → argmin (the bug of issue 27)."""
    k = len(pop.weights)
    masks = np.array(list(itertools.product((0, 1), repeat=k)), dtype=float)
    f_d = masks @ pop.weights
    by_out: dict = {}
    for sample, out in explored:
        counts = np.bincount(robust._index(np.asarray(sample), pop.support), minlength=k)
        fail = np.abs(masks @ counts / len(sample) - f_d) > eps
        key = robust._key(out)
        by_out[key] = by_out.get(key, 0) + fail
    worst = {key: masks[int(np.argmin(v))].astype(bool) for key, v in by_out.items()}
    return robust.MaskAdversary(pop.support, worst)


@pytest.mark.parametrize("form", ["joint", "two-level"])
def test_rg_bayes_adversary_alone_catches_a_leak(form):
    """Bayes adversary only (no library): the presence leak must be refuted, by the Bayes
    adversary, in both forms."""
    r = check_robust_generalization(PresenceRelease(), POP, RG_CLAIM, bayes=True, trials=400,
                                    form=form, alpha=1e-3, seed=0)
    assert r.violation and r.details["adversary"] == "bayes", r.summary()
    assert r.failure_lower > 0.5


def test_rg_inverted_bayes_adversary_misses_the_leak(monkeypatch):
    """The control above is load-bearing: with argmin instead of argmax the same call finds
    nothing (so an inverted checker fails ``test_rg_bayes_adversary_alone_catches_a_leak``)."""
    monkeypatch.setattr(robust, "_bayes", _inverted_bayes)
    r = check_robust_generalization(PresenceRelease(), POP, RG_CLAIM, bayes=True, trials=400,
                                    alpha=1e-3, seed=0)
    assert not r.violation and r.failures == 0


class Fixed:
    """Outputs ``pmf`` whatever the data (with or without declaring it)."""

    def __init__(self, pmf: dict, exact: bool) -> None:
        self._pmf = pmf
        if exact:
            self.pmf = lambda data: dict(pmf)

    def sample(self, data, size, rng):
        keys = np.array(list(self._pmf))
        return rng.choice(keys, size=size, p=np.array(list(self._pmf.values())))


BITS = IIDPopulation(np.array([0, 1]), [0.5, 0.5], 3)
CASES = {
    # M puts mass 1 on 0, SIM is uniform: only HS(SIM‖M) is large (support mismatch in SIM).
    "sim_wider": ({0: 1.0}, {0: 0.5, 1: 0.5}),
    # M is uniform, SIM puts mass 1 on 0: only HS(M‖SIM) is large.
    "mech_wider": ({0: 0.5, 1: 0.5}, {0: 1.0}),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("exact", [True, False], ids=["exact_inner", "audited_inner"])
def test_pg_simulator_path_audits_both_directions(case, exact):
    """(0.1, ln 3, 0.2)-PG must be refuted in both cases: e^ε·½ = 1.5 covers the forward ratio
    of "sim_wider" (HS_ε(M‖SIM) = 0) but the reverse direction has δ* = ½ > 0.2; "mech_wider"
    the other way round. Exact inner closeness and the sampled (audited) inner path."""
    mech_pmf, sim = CASES[case]
    claim = PerfectGeneralization(0.1, float(np.log(3.0)), 0.2)
    r = check_perfect_generalization(Fixed(mech_pmf, exact), BITS, claim, simulator=sim,
                                     datasets=60, samples=20_000, alpha=1e-3, seed=0)
    assert r.exact_inner is exact
    assert r.violation and r.failures == r.trials, r.summary()


def test_pg_pairs_and_optimal_paths_catch_a_data_copying_mechanism():
    """Output s_1 (deterministic): two independent samples disagree w.p. ½ > 2β = 0.2, so the
    Corollary 10 pairs refutation must fire, exact and audited; the optimal-simulator method
    must refute it too."""

    class First:
        def __init__(self, exact: bool) -> None:
            if exact:
                self.pmf = lambda data: {int(np.asarray(data)[0]): 1.0}

        def sample(self, data, size, rng):
            return np.full(size, int(np.asarray(data)[0]), dtype=np.int64)

    for exact in (True, False):
        r = check_perfect_generalization(First(exact), BITS, PerfectGeneralization(0.1, 0.3),
                                         method="pairs", datasets=200, samples=5_000,
                                         alpha=1e-3, seed=0)
        assert r.violation and r.failure_lower > 0.2, (exact, r.summary())
    # method="optimal" (every simulator at once): the best simulator still fails on half the
    # samples (s_1 = 0 or 1 with probability ½ each, point masses), > β = 0.1
    r = check_perfect_generalization(First(True), BITS, PerfectGeneralization(0.1, 0.3),
                                     method="optimal", datasets=200, alpha=1e-3, seed=0)
    assert r.violation, r.summary()
