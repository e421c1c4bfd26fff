"""Exact perfect-generalization analysis by enumerating samples (no statistics, no α).

* :func:`exact_failure_mass` — ``P_{T~C^n}[M(T) ≉_{ε,δ} SIM]`` for a given simulator pmf.
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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._validation import _fmt
from .closeness import exact_closeness
from .errors import InvalidArgument
from .generalization import PerfectGeneralization
from .mechanism import pmf_of
from .population import IIDPopulation

__all__ = ["exact_failure_mass", "optimal_simulator", "OptimalSimulator", "binary_interval"]


def _pmfs(mechanism: Any, population: IIDPopulation, exchangeable: bool,
          limit: int) -> list[tuple[Any, Mapping[Any, float], float]]:
    pmf = pmf_of(mechanism)
    if pmf is None:
        raise InvalidArgument(f"mechanism={_fmt(mechanism)} must have .pmf(data) for exact "
                              "analysis")
    if not isinstance(population, IIDPopulation):
        raise InvalidArgument(f"population={_fmt(population)} must be a dpcheck.IIDPopulation "
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
    events: list[tuple[float, int, float]] = []
    for _, p, w in rows:
        lo, hi = binary_interval(float(p.get(outs[0], 0.0)), claim.epsilon, claim.delta)
        if lo <= hi + 1e-15:
            events.append((lo, 0, w))            # starts sort before ends at equal q
            events.append((max(lo, hi), 1, -w))
    events.sort(key=lambda e: (e[0], e[1]))
    best, best_q, cover = 0.0, 0.5, 0.0
    for q, kind, w in events:
        cover += w
        if kind == 0 and cover > best:
            best, best_q = cover, q
    total = math.fsum(w for _, _, w in rows)
    return OptimalSimulator(outputs=(outs[0], outs[1]), q=float(best_q),
                            failure=max(0.0, total - best), samples_enumerated=len(rows))

