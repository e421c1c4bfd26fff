"""The PG and RG checkers: calibration at the boundary of the claim, invalid variants rejected by
the same harness, exact tools, bad input.

PG boundary case: a population on three records; a sample ``T = (0,)`` (mass β) makes the
mechanism output a distribution far from the simulator, ``T = (1,)`` or ``(2,)`` make it
*exactly* ε-close to it. The true failure mass is β, so a (β, ε, 0)-PG claim holds with
equality and any alarm is false. The per-sample closeness is audited from samples (no pmf), so
the checker's ``inner_alpha`` accounting is exercised. The invalid variant replaces each
per-sample audit by the plug-in log-ratio (no confidence bound, max over outputs).

RG boundary case: 16 records uniform, n = 10, a mechanism that outputs a data-independent token,
10 adversaries each testing a random 8-subset; every adversary fails with probability exactly
``P[|Bin(10, ½)/10 − ½| > ¼] = 112/1024``. Claimed δ = 112/1024: alarms are false. The invalid
variant selects the best adversary and certifies it on the same trials.

Criterion (default run, few repetitions): a valid checker's false-alarm rate must not be
*significantly* above α (95% Clopper–Pearson lower bound ≤ α); an invalid one must be
significantly above α. The ``slow`` runs use 200 (PG) and 1000 (RG) repetitions with the same criterion (at the boundary the
exact false-alarm probability is close to α, e.g. 0.148 at α = 0.2 for the RG case, so
"observed ≤ α" would fail by chance).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpcheck
from dpcheck import (
    IIDPopulation,
    InvalidArgument,
    PerfectGeneralization,
    RobustGeneralization,
    check_perfect_generalization,
    check_robust_generalization,
)
from dpcheck.generalization.enumeration import (
    binary_interval,
    exact_failure_mass,
    optimal_simulator,
)
from dpcheck.stats import clopper_pearson, cp_lower

EPS, BETA = 1.0, 0.2
E = math.exp(EPS)
SIM = {0: 0.5, 1: 0.5}
NEAR = E / (1 + E)
#: Bern(NEAR) vs Bern(1/2): the max log-ratio is on output 0, ln((1+E)/2).
CLOSE_EPS = math.log((1 + E) / 2)


class BoundaryMechanism:
    """Record 0 → P[1] = 0.99 (far); records 1, 2 → P[1] = E/(1+E): exactly CLOSE_EPS-close
    to Bern(1/2). No pmf (the checker must audit from samples) unless ``exact``."""

    def __init__(self, exact: bool = False) -> None:
        if exact:
            self.pmf = lambda data: self._pmf(int(np.asarray(data).ravel()[0]))

    @staticmethod
    def _p(rec: int) -> float:
        return 0.99 if rec == 0 else NEAR

    def _pmf(self, rec: int) -> dict[int, float]:
        return {1: self._p(rec), 0: 1 - self._p(rec)}

    def sample(self, data, size, rng):
        return (rng.random(size) < self._p(int(np.asarray(data).ravel()[0]))).astype(np.int64)


POP = IIDPopulation(np.array([0, 1, 2]), [BETA, (1 - BETA) / 2, (1 - BETA) / 2], 1)
PG_CLAIM = PerfectGeneralization(BETA, CLOSE_EPS)


def pg_valid(seed: int, alpha: float) -> bool:
    return check_perfect_generalization(BoundaryMechanism(), POP, PG_CLAIM, simulator=SIM,
                                        datasets=20, samples=1000, alpha=alpha,
                                        inner_alpha=0.05, seed=seed).violation


def pg_plugin(seed: int, alpha: float) -> bool:
    """INVALID: per-sample plug-in closeness (empirical max log-ratio > ε), threshold β."""
    rng = np.random.default_rng(seed)
    mech, fails = BoundaryMechanism(), 0
    for _ in range(20):
        t = POP.draw(rng)
        p1 = mech.sample(t, 1000, rng).mean()
        ratio = max(abs(math.log(max(p1, 1e-9) / 0.5)), abs(math.log(max(1 - p1, 1e-9) / 0.5)))
        fails += ratio > PG_CLAIM.epsilon
    return bool(cp_lower(fails, 20, alpha) > BETA)


SUBSETS = np.random.default_rng(5).permuted(np.tile(np.arange(16) < 8, (10, 1)), axis=1)
RG_POP = IIDPopulation(np.arange(16), np.ones(16), 10)
RG_DELTA = 112 / 1024
RG_CLAIM = RobustGeneralization(0.25, RG_DELTA)


def _token(data, size, rng):
    return rng.integers(0, 4, size)


def _subset_adversary(mask):
    def f(records):
        return mask[records]

    return lambda out: f


ADVERSARIES = [_subset_adversary(m) for m in SUBSETS]


def rg_valid(seed: int, alpha: float) -> bool:
    return check_robust_generalization(_token, RG_POP, RG_CLAIM, adversaries=ADVERSARIES,
                                       trials=200, explore=100, alpha=alpha, seed=seed).violation


def rg_same_sample(seed: int, alpha: float) -> bool:
    """INVALID: select the adversary with most failures and certify it on the same trials."""
    rng = np.random.default_rng(seed)
    fails = np.zeros(len(SUBSETS), dtype=int)
    for _ in range(200):
        s = RG_POP.draw(rng)
        fails += np.abs(SUBSETS[:, s].mean(axis=1) - 0.5) > 0.25
    return bool(cp_lower(int(fails.max()), 200, alpha) > RG_DELTA)


def rate(check, runs: int, alpha: float) -> int:
    return sum(check(seed, alpha) for seed in range(runs))


def report(over: int, runs: int, alpha: float, record_property) -> float:
    """Record the rate; return the 95% Clopper–Pearson lower bound of the false-alarm rate."""
    low, high = clopper_pearson(over, runs, 0.05)
    record_property("false_alarms", {"count": over, "runs": runs, "rate": over / runs,
                                     "ci95": [float(low), float(high)], "alpha": alpha})
    print(f"false alarms {over}/{runs} = {over / runs:.3f} (95% CI {low:.3f}-{high:.3f})")
    return float(low)


def test_boundary_cases_are_exact():
    """The calibration pairs sit exactly on the claims (checked without sampling)."""
    mass, _ = exact_failure_mass(BoundaryMechanism(exact=True), POP, SIM, PG_CLAIM)
    assert mass == pytest.approx(BETA)
    from scipy.stats import binom
    assert binom.cdf(2, 10, 0.5) * 2 == pytest.approx(RG_DELTA)


@pytest.mark.parametrize("check, runs, alpha", [(pg_valid, 30, 0.2), (rg_valid, 30, 0.2)],
                         ids=["pg", "rg"])
def test_false_alarm_rate_at_the_boundary(check, runs, alpha, record_property):
    over = rate(check, runs, alpha)
    assert report(over, runs, alpha, record_property) <= alpha


@pytest.mark.slow
@pytest.mark.parametrize("check", [pg_valid, rg_valid], ids=["pg", "rg"])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_false_alarm_rate_at_the_boundary_large(check, alpha, record_property):
    runs = 200 if check is pg_valid else 1000
    over = rate(check, runs, alpha)
    assert report(over, runs, alpha, record_property) <= alpha


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_rg_confirmation_false_alarm_probability_is_exactly_below_alpha(alpha):
    """Given any adversary whose true failure rate is δ, the confirmation test alarms with
    probability P[Bin(200, δ) ≥ k*] (k* the smallest count whose CP lower bound exceeds δ);
    computed exactly it is ≤ α (0.0466 at α = 0.05, 0.148 at α = 0.2)."""
    from scipy.stats import binom

    k_star = next(k for k in range(201) if cp_lower(k, 200, alpha) > RG_DELTA)
    assert binom.sf(k_star - 1, 200, RG_DELTA) <= alpha


@pytest.mark.parametrize("check, runs, alpha", [(pg_plugin, 30, 0.2), (rg_same_sample, 30, 0.2)],
                         ids=["pg_plugin", "rg_same_sample"])
def test_harness_rejects_invalid_checkers(check, runs, alpha, record_property):
    over = rate(check, runs, alpha)
    assert report(over, runs, alpha, record_property) > alpha


def test_exact_inner_mode_and_pairs():
    mech = BoundaryMechanism(exact=True)
    r = check_perfect_generalization(mech, POP, PG_CLAIM, simulator=SIM, datasets=200, seed=0)
    assert r.exact_inner and r.inner_alpha is None and not r.violation
    assert r.failures / r.trials == pytest.approx(BETA, abs=0.08)
    bad = check_perfect_generalization(mech, POP, PerfectGeneralization(0.05, CLOSE_EPS),
                                       simulator=SIM, datasets=400, seed=0)
    assert bad.violation and bad.failure_lower > 0.05
    json.dumps(bad.to_dict())
    assert "VIOLATION" in bad.summary()
    pairs = check_perfect_generalization(mech, POP, PerfectGeneralization(0.05, 0.5),
                                         method="pairs", datasets=400, seed=0)
    assert pairs.violation  # P[pair not (1, 0)-close] = 1 - 0.2^2 - 0.8^2 = 0.32 > 0.1


def test_optimal_simulator_sweep():
    assert binary_interval(0.5, 0.0, 0.0) == (0.5, 0.5)
    lo, hi = binary_interval(0.3, 0.0, 0.1)
    assert lo == pytest.approx(0.2) and hi == pytest.approx(0.4)
    best = optimal_simulator(BoundaryMechanism(exact=True), POP, PerfectGeneralization(0.1, 0.0))
    assert best.failure == pytest.approx(BETA) and best.refutes(PerfectGeneralization(0.1, 0.0))
    assert best.outputs[0] == 1 and best.q == pytest.approx(NEAR)


def test_two_level_form_is_at_least_the_joint_form():
    from algorithms.generalization import Majority

    pop = IIDPopulation(np.array([0, 1]), [0.5, 0.5], 11)
    claim = RobustGeneralization(0.1, 0.3)
    j = check_robust_generalization(Majority(), pop, claim, bayes=True, trials=400, seed=0)
    t = check_robust_generalization(Majority(), pop, claim, bayes=True, trials=400, seed=0,
                                    form="two-level")
    assert t.failures == j.failures  # deterministic mechanism: g ∈ {0, 1}
    assert j.details["adversary"] == "bayes"


@pytest.mark.parametrize("make, name", [
    (lambda: PerfectGeneralization(1.0, 0.1), "beta"),
    (lambda: PerfectGeneralization(-0.1, 0.1), "beta"),
    (lambda: PerfectGeneralization(0.1, -1.0), "epsilon"),
    (lambda: PerfectGeneralization(0.1, 0.1, 1.0), "delta"),
    (lambda: RobustGeneralization(0.1, 1.5), "delta"),
    (lambda: IIDPopulation(np.array([]), [], 3), "support"),
    (lambda: IIDPopulation(np.array([0, 1]), [0.0, 0.0], 3), "no support"),
    (lambda: IIDPopulation(np.array([0, 1]), [0.5, 0.5], 0), "n"),
    (lambda: check_perfect_generalization(BoundaryMechanism(), POP, PG_CLAIM, simulator=3),
     "simulator"),
    (lambda: check_perfect_generalization(BoundaryMechanism(), POP, PG_CLAIM), "simulator"),
    (lambda: check_perfect_generalization(BoundaryMechanism(), 5, PG_CLAIM, simulator=SIM),
     "population"),
    (lambda: check_perfect_generalization(BoundaryMechanism(), POP, 0.1, simulator=SIM),
     "claim"),
    (lambda: check_perfect_generalization(BoundaryMechanism(), POP,
                                          PerfectGeneralization(0.1, 1.0, 0.1), method="pairs"),
     "ln 2"),
    (lambda: check_robust_generalization(_token, RG_POP, RG_CLAIM), "nothing to test"),
    (lambda: check_robust_generalization(_token, RG_POP, RG_CLAIM, adversaries=[3]),
     "adversaries"),
    (lambda: check_robust_generalization(_token, RG_POP, RG_CLAIM, bayes=True,
                                         form="two-level"), "pmf"),
])
def test_bad_input_names_the_argument(make, name):
    with pytest.raises(InvalidArgument, match=name):
        make()


def test_public_api():
    for name in ("audit_closeness", "Closeness", "check_perfect_generalization",
                 "check_robust_generalization", "PerfectGeneralization", "RobustGeneralization",
                 "IIDPopulation", "GeneralizationResult"):
        assert name in dpcheck.__all__


class _HiddenMajority:
    """Majority without a pmf: the pairs method must audit each pair from samples."""

    def sample(self, data, size, rng):
        from algorithms.generalization import Majority

        return Majority().sample(data, size, rng)


def test_pairs_with_sampled_closeness_refutes_majority():
    pop = IIDPopulation(np.array([0, 1]), [0.5, 0.5], 11)
    r = check_perfect_generalization(_HiddenMajority(), pop, PerfectGeneralization(0.1, 0.5, 0.1),
                                     method="pairs", datasets=200, samples=2000, seed=4)
    assert not r.exact_inner and r.inner_alpha == 0.01
    assert r.violation and r.threshold == pytest.approx(0.21)


def test_checkers_are_deterministic():
    kw = {"simulator": SIM, "datasets": 10, "samples": 1000, "seed": 12}
    a = check_perfect_generalization(BoundaryMechanism(), POP, PG_CLAIM, **kw)
    b = check_perfect_generalization(BoundaryMechanism(), POP, PG_CLAIM, **kw)
    assert (a.failures, a.failure_lower) == (b.failures, b.failure_lower)
    ss = np.random.SeedSequence(12)
    c = check_robust_generalization(_token, RG_POP, RG_CLAIM, adversaries=ADVERSARIES,
                                    trials=50, seed=ss)
    d = check_robust_generalization(_token, RG_POP, RG_CLAIM, adversaries=ADVERSARIES,
                                    trials=50, seed=12)
    assert (c.failures, c.details) == (d.failures, d.details)
    with pytest.raises(InvalidArgument, match="seed"):
        check_robust_generalization(_token, RG_POP, RG_CLAIM, adversaries=ADVERSARIES, seed=-1)


def test_optimal_method_refutes_every_simulator():
    """Majority, uniform D, n = 11: the best simulator fails on ½ of the samples, whatever ε′
    and δ′ < ½; the DKW-corrected bound refutes (0.2, 5, 0.4)-PG. At β = 0.6 it cannot."""
    from algorithms.generalization import Majority

    pop = IIDPopulation(np.array([0, 1]), [0.5, 0.5], 11)
    r = check_perfect_generalization(Majority(), pop, PerfectGeneralization(0.2, 5.0, 0.4),
                                     method="optimal", datasets=500, seed=1)
    assert r.violation and r.details["empirical_min_failure"] == pytest.approx(0.5, abs=0.06)
    ok = check_perfect_generalization(Majority(), pop, PerfectGeneralization(0.6, 5.0, 0.4),
                                      method="optimal", datasets=500, seed=1)
    assert not ok.violation
    with pytest.raises(InvalidArgument, match="pmf"):
        check_perfect_generalization(_HiddenMajority(), pop, PerfectGeneralization(0.2, 5.0),
                                     method="optimal")


@pytest.mark.parametrize("runs, alpha", [(40, 0.2)])
def test_optimal_method_false_alarms_at_the_boundary(runs, alpha, record_property):
    """BoundaryMechanism: the best simulator (q = NEAR) fails exactly on record 0 (mass β), so
    (β, ε, 0)-PG holds with equality; false alarms must not be significantly above α."""
    over = sum(check_perfect_generalization(BoundaryMechanism(exact=True), POP, PG_CLAIM,
                                            method="optimal", datasets=200, alpha=alpha,
                                            seed=s).violation for s in range(runs))
    assert report(over, runs, alpha, record_property) <= alpha
