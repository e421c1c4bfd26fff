"""Exact perfect-generalization analysis by enumerating samples (no statistics, no α).

* :func:`exact_failure_mass` — ``P_{T~C^n}[M(T) ≉_{ε,δ} SIM]`` for a given simulator pmf.
* :func:`check_optimal_simulator` — the statistical version on sampled ``T`` (DKW band).
* :func:`optimal_simulator` — the smallest failure mass over **all** simulators when the output
  space has two elements (exhaustive, so a result above β refutes (β, ε, δ)-PG soundly): each
  sample ``T`` with ``p_T = P[M(T) = r₁]`` admits exactly an interval of simulators
  ``q = P[SIM = r₁]`` (the four hockey-stick constraints of Definition 6 are linear in q), and
  the best simulator is a point covered by the heaviest set of intervals (a sweep).

References
----------
Cummings et al., COLT 2016, Definitions 6 and 8; notes ``seed-001.md`` D8 (optimised simulator).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.claims import PerfectGeneralization
from dpcheck.errors import InvalidArgument
from dpcheck.generalization.closeness import exact_closeness
from dpcheck.generalization.population import IIDPopulation, as_population
from dpcheck.generalization.result import GeneralizationResult
from dpcheck.internal.rng import generator
from dpcheck.mechanism import pmf_of
from dpcheck.validation import check_alpha, check_int, check_seed, fmt

__all__ = [
    "OptimalSimulator",
    "binary_interval",
    "exact_failure_mass",
    "optimal_binary_failure",
    "optimal_simulator",
]


def _pmfs(mechanism: Any, population: IIDPopulation, exchangeable: bool,
          limit: int) -> list[tuple[Any, Mapping[Any, float], float]]:
    pmf = pmf_of(mechanism)
    if pmf is None:
        raise InvalidArgument(f"mechanism={fmt(mechanism)} must have .pmf(data) for exact "
                              "analysis")
    if not isinstance(population, IIDPopulation):
        raise InvalidArgument(f"population={fmt(population)} must be a dpcheck.IIDPopulation "
                              "for exact enumeration")
    return [(t, pmf(t), w) for t, w in population.enumerate(exchangeable=exchangeable,
                                                           limit=limit)]


def exact_failure_mass(mechanism: Any, population: IIDPopulation, simulator: Mapping[Any, float],
                       claim: PerfectGeneralization, *, exchangeable: bool = False,
                       limit: int = 1 << 17) -> tuple[float, Any]:
    """``(mass, worst_sample)``: the exact probability over ``T ~ C^n`` that ``M(T)`` is not
    (ε, δ)-close to ``simulator`` (a pmf), and one failing sample (``None`` if none)."""
    mass, worst = 0.0, None
    for t, p, w in _pmfs(mechanism, population, exchangeable, limit):
        _, d = exact_closeness(p, simulator, claim.closeness)
        if d > claim.delta + 1e-12:
            mass += w
            worst = t if worst is None else worst
    return mass, worst


def binary_interval(p: float, epsilon: float, delta: float) -> tuple[float, float]:
    """The simulators ``q`` with ``Bern(p) ≈_{ε,δ} Bern(q)``: a closed interval ``[lo, hi]``
    (empty when ``lo > hi``)."""
    e, ie = math.exp(epsilon), math.exp(-epsilon)
    lo = max(0.0, (p - delta) * ie, 1.0 - e * (1.0 - p) - delta)
    hi = min(1.0, e * p + delta, 1.0 - (1.0 - p - delta) * ie)
    return lo, hi


@dataclass(frozen=True)
class OptimalSimulator:
    """Best simulator over a two-element output space: ``q = P[SIM = outputs[0]]`` and its
    exact failure mass ``failure`` (the minimum over all simulators)."""

    outputs: tuple[Any, Any]
    q: float
    failure: float
    samples_enumerated: int

    def refutes(self, claim: PerfectGeneralization) -> bool:
        """Whether every simulator fails on more than a β-fraction of samples."""
        return self.failure > claim.beta + 1e-12

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"outputs": [repr(o) for o in self.outputs], "q": self.q,
                "failure": self.failure, "samples_enumerated": self.samples_enumerated}


def optimal_simulator(mechanism: Any, population: IIDPopulation, claim: PerfectGeneralization,
                      *, exchangeable: bool = False, limit: int = 1 << 17) -> OptimalSimulator:
    """Exhaustive search over all simulators for a mechanism with two possible outputs.

    Returns the simulator minimising ``P_T[M(T) ≉_{ε,δ} SIM]`` and that minimum (exact). If the
    minimum exceeds β, ``M`` is not (β, ε, δ)-PG for this population — for any simulator.
    """
    rows = _pmfs(mechanism, population, exchangeable, limit)
    outs = list(dict.fromkeys(k for _, p, _ in rows for k, v in p.items() if v > 0))
    if len(outs) > 2:
        raise InvalidArgument(f"mechanism has {len(outs)} outputs; optimal_simulator handles "
                              "two-element output spaces only")
    while len(outs) < 2:
        outs.append(("<other>", len(outs)))
    probs = np.array([float(p.get(outs[0], 0.0)) for _, p, _ in rows])
    weights = np.array([w for _, _, w in rows])
    failure, best_q = optimal_binary_failure(probs, weights, claim.epsilon, claim.delta)
    return OptimalSimulator(outputs=(outs[0], outs[1]), q=best_q, failure=failure,
                            samples_enumerated=len(rows))


def optimal_binary_failure(p: Any, weights: Any, epsilon: float, delta: float
                           ) -> tuple[float, float]:
    """Vectorised core of :func:`optimal_simulator`: samples with ``P[M(T) = r₁] = p[i]`` and
    probability ``weights[i]``; returns ``(min over q of the failure mass, the best q)``."""
    p = np.asarray(p, dtype=float)
    w = np.asarray(weights, dtype=float)
    e, ie = math.exp(epsilon), math.exp(-epsilon)
    lo = np.maximum.reduce([np.zeros_like(p), (p - delta) * ie, 1.0 - e * (1.0 - p) - delta])
    hi = np.minimum.reduce([np.ones_like(p), e * p + delta, 1.0 - (1.0 - p - delta) * ie])
    ok = lo <= hi + 1e-15
    lo, hi, w_ok = lo[ok], np.maximum(lo[ok], hi[ok]), w[ok]
    if not ok.any():
        return float(w.sum()), 0.5
    points = np.concatenate([lo, hi])
    kinds = np.concatenate([np.zeros(len(lo)), np.ones(len(hi))])  # starts sort before ends
    order = np.lexsort((kinds, points))
    cover = np.cumsum(np.concatenate([w_ok, -w_ok])[order])
    starts = kinds[order] == 0
    k = int(np.argmax(np.where(starts, cover, -np.inf)))
    return max(0.0, float(w.sum() - cover[k])), float(points[order][k])



def check_optimal_simulator(mechanism: Any, population: Any, claim: PerfectGeneralization, *,
                            datasets: int = 1000, alpha: float = 0.05,
                            seed: int | np.random.SeedSequence | None = None) -> Any:
    """Refute (β, ε, δ)-PG against **every** simulator from sampled ``T`` (two outputs, exact
    pmf per sample).

    For binary outputs the samples a simulator ``q`` fails on are ``{p_T < a(q)} ∪ {p_T > b(q)}``
    (``p_T = P[M(T) = r₁]``; the interval ends of :func:`binary_interval` are increasing in
    ``p_T``), so for every ``q`` the failure mass is a difference of two values of the CDF of
    ``p_T``. With the two-sided DKW band (Massart: ``t = √(ln(2/α)/(2N))``) every such mass is
    within ``2t`` of its empirical value simultaneously, hence
    ``min_q F(q) ≥ min_q F̂(q) − 2t`` with probability ≥ 1 − α; violation iff that exceeds β.

    Returns a :class:`~dpcheck.GeneralizationResult` (``method="optimal"``, ``details`` holds the
    empirical optimum and the band).

    References
    ----------
    Cummings et al., COLT 2016, Definition 8; P. Massart, Ann. Probab. 18 (1990) (DKW constant).
    """
    start = time.perf_counter()
    if not isinstance(claim, PerfectGeneralization):
        raise InvalidArgument(f"claim={fmt(claim)} must be a dpcheck.PerfectGeneralization")
    datasets = check_int(datasets, "datasets", minimum=1)
    alpha = check_alpha(alpha)
    seed_seq = check_seed(seed)
    pop = as_population(population)
    pmf = pmf_of(mechanism)
    if pmf is None:
        raise InvalidArgument(f"mechanism={fmt(mechanism)} must have .pmf(data) for "
                              "method='optimal'")
    rng = generator(seed_seq, "population")
    pmfs = [pmf(pop.draw(rng)) for _ in range(datasets)]
    outs = list(dict.fromkeys(k for p in pmfs for k, v in p.items() if v > 0))
    if len(outs) > 2:
        raise InvalidArgument(f"mechanism has {len(outs)} outputs; method='optimal' handles "
                              "two-element output spaces only")
    outs += [("<other>",)] * (2 - len(outs))
    probs = np.array([float(p.get(outs[0], 0.0)) for p in pmfs])
    emp, q = optimal_binary_failure(probs, np.full(datasets, 1.0 / datasets), claim.epsilon,
                                    claim.delta)
    band = math.sqrt(math.log(2 / alpha) / (2 * datasets))
    lower = max(0.0, emp - 2 * band)
    gap = emp - claim.beta
    p_value = 1.0 if gap <= 0 else min(1.0, 2 * math.exp(-2 * datasets * (gap / 2) ** 2))
    return GeneralizationResult(
        claim=claim, method="optimal", violation=bool(lower > claim.beta),
        failures=round(emp * datasets), trials=datasets, threshold=claim.beta,
        failure_lower=lower, p_value=p_value, alpha=alpha, inner_alpha=None, exact_inner=True,
        seconds=time.perf_counter() - start, witness={"best_q": q, "output": repr(outs[0])},
        details={"empirical_min_failure": emp, "dkw_band": 2 * band})
