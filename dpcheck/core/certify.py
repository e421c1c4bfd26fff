"""Certification: from confirmation counts to the bounds a claim is judged by.

Each claim type has one :class:`Certifier`. It says what exploration should look for
(:meth:`Certifier.selection`: the δ the ε ranking subtracts, whether Poissonized confirmation
sizes and the conditional ratio test are valid, the ε of a δ-objective candidate) and turns the
confirmation counts of the chosen candidates into the result's bounds (:meth:`Certifier.certify`).
:func:`certifier_for` looks the certifier of a claim up in :data:`CERTIFIERS`; a new claim type
is a claim class (:mod:`dpcheck.claims`) plus its certifier registered there.

For (ε, δ) claims each candidate's counts give one-sided Clopper–Pearson bounds at
the candidate's share of ``alpha`` (Bonferroni over the candidates, weighted by
``Candidate.weight``: :func:`family_levels`, the weights set during exploration by
:func:`dpcheck.events.slots.lead_weighted` and :func:`dpcheck.events.support.with_support`;
a union bound over the two sides inside
:func:`dpcheck.stats.event_bound`), or for ``method == "ratio"`` the exact conditional test of
:func:`dpcheck.stats.ratio_lower`; ``epsilon_lower = max ln((p_lo − δ)/q_hi)``, ``delta_lower =
max (p_lo − e^ε q_hi)`` (approximate claims), ``violation`` iff ``epsilon_lower > ε`` and the
p-value is the (weighted) Bonferroni-adjusted minimum.

References
----------
C. J. Clopper, E. S. Pearson, Biometrika 26 (1934); design rules of ``shared/design.md`` §4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.results import Witness
from dpcheck.curves import CURVE_CLAIMS
from dpcheck.errors import InvalidArgument
from dpcheck.events.event import Candidate
from dpcheck.stats import event_bound, ratio_lower, ratio_p_value, violation_p_value
from dpcheck.validation import fmt

__all__ = ["CERTIFIERS", "Certified", "Certifier", "CurveCertifier", "DPCertifier", "Selection",
           "certifier_for", "family_levels"]


def family_levels(chosen: Sequence[Candidate], alpha: float) -> list[float]:
    """Each candidate's level under weighted Bonferroni: ``alpha · w_i / Σ w`` (equal weights:
    ``alpha / k``)."""
    total = sum(c.weight for c in chosen)
    return [alpha * c.weight / total for c in chosen]


@dataclass(frozen=True)
class Selection:
    """What exploration looks for under a claim.

    ``delta``: subtracted from ``p_lo`` when candidates are ranked by their ε bound;
    ``poissonize``: whether confirmation sizes may be Poissonized (then the conditional ratio
    test and paired events are valid); ``delta_epsilon``: the ε at which one more candidate is
    ranked by its projected δ bound (``None``: no such candidate)."""

    delta: float
    poissonize: bool
    delta_epsilon: float | None


@dataclass(frozen=True)
class Certified:
    """The certified bounds of one audit: every confirmed candidate's witness and the best
    (``curve``: for curve claims, the margin, the point on the curve and parameter bounds)."""

    witnesses: tuple[Witness, ...]
    best: int
    epsilon_lower: float
    delta_lower: float | None
    p_value: float
    violation: bool
    curve: dict[str, Any] | None = None


class Certifier(Protocol):
    """How one claim type is explored for and certified."""

    def selection(self, claim: Any) -> Selection: ...

    def certify(self, claim: Any, chosen: Sequence[Candidate],
                counts: Sequence[tuple[int, int, int, int]], alpha: float) -> Certified:
        """Bounds from the oriented counts ``(k_p, n_p, k_q, n_q)`` of each candidate, jointly
        valid with probability ≥ ``1 − alpha``."""
        ...


@dataclass(frozen=True)
class DPCertifier:
    """Certifier of (ε, δ) claims: ``PureDP`` (``pure=True``: Poissonized confirmation, the
    conditional ratio test, no δ bound) and ``ApproxDP`` (a δ-objective candidate and
    ``delta_lower``)."""

    pure: bool

    def selection(self, claim: PureDP | ApproxDP) -> Selection:
        return Selection(delta=claim.delta, poissonize=self.pure,
                         delta_epsilon=None if self.pure else claim.epsilon)

    def certify(self, claim: PureDP | ApproxDP, chosen: Sequence[Candidate],
                counts: Sequence[tuple[int, int, int, int]], alpha: float) -> Certified:
        levels = family_levels(chosen, alpha)
        witnesses = []
        p_values = []
        for cand, level, (k_p, n_p, k_q, n_q) in zip(chosen, levels, counts):
            bound = event_bound(k_p, max(n_p, 1), k_q, max(n_q, 1), alpha=level)
            if cand.method == "ratio":
                bound = dataclasses.replace(bound, ratio_low=ratio_lower(k_p, k_q, alpha=level))
                p_values.append(ratio_p_value(k_p, k_q, epsilon=claim.epsilon))
            else:
                p_values.append(violation_p_value(k_p, max(n_p, 1), k_q, max(n_q, 1),
                                                  epsilon=claim.epsilon, delta=claim.delta))
            witnesses.append(Witness(cand.event, cand.direction, bound, cand.partner))
        eps_bounds = [w.bound.epsilon_lower(claim.delta) for w in witnesses]
        best = int(np.argmax(eps_bounds))
        delta_lower = (None if self.pure else
                       max(w.bound.delta_lower(claim.epsilon) for w in witnesses))
        return Certified(tuple(witnesses), best, eps_bounds[best], delta_lower,
                         min(1.0, min(p * alpha / lv for p, lv in zip(p_values, levels))),
                         bool(eps_bounds[best] > claim.epsilon))


@dataclass(frozen=True)
class CurveCertifier:
    """Certifier of curve claims (:mod:`dpcheck.curves`): each confirmed event's box
    ``{p ≥ p_low, q ≤ q_high}`` (Clopper–Pearson, Bonferroni over the candidates) is checked
    against the whole claimed curve by the claim's ``margin`` (> 0: every pair in the box is
    impossible under the claim, so the claim is refuted at level α). The p-value is the
    smallest family level at which some box would refute the claim (bisection on the level:
    the boxes shrink monotonically as the level grows). ``epsilon_lower`` is the pure-DP bound
    (δ = 0) of the same boxes, not a bound on the claim's parameter; the witness is the box
    with evidence (``p_low > 0``) farthest outside the curve, or nearest to it on a pass;
    ``curve`` holds its margin, its point on the curve and the lower bounds on the claim's
    parameter (:meth:`parameter_lower` of the claim) over all boxes."""

    def selection(self, claim: Any) -> Selection:
        return Selection(delta=0.0, poissonize=False, delta_epsilon=claim.epsilon)

    def certify(self, claim: Any, chosen: Sequence[Candidate],
                counts: Sequence[tuple[int, int, int, int]], alpha: float) -> Certified:
        levels = family_levels(chosen, alpha)
        bounds = [event_bound(k_p, max(n_p, 1), k_q, max(n_q, 1), alpha=level)
                  for level, (k_p, n_p, k_q, n_q) in zip(levels, counts)]
        witnesses = tuple(Witness(c.event, c.direction, b, c.partner)
                          for c, b in zip(chosen, bounds))
        margins = [claim.margin(b.p_low, b.q_high) for b in bounds]
        # the witness: the box farthest outside (or nearest to) the curve among the boxes with
        # evidence (p_low > 0); an empty box sits at the corner (0, 0), next to every curve
        seen = [i for i, b in enumerate(bounds) if b.p_low > 0] or list(range(len(bounds)))
        best = max(seen, key=lambda i: margins[i][0])
        lower: dict[str, float] = {}
        for b in bounds:
            for key, value in claim.parameter_lower(b.p_low, b.q_high).items():
                lower[key] = max(lower.get(key, 0.0), value)
        violation = bool(margins[best][0] > 0)
        curve = {"margin": margins[best][0], "point": margins[best][1],
                 "parameter_lower": lower}
        return Certified(witnesses, best, max(b.epsilon_lower(0.0) for b in bounds), None,
                         self._p_value(claim, counts, [lv / alpha for lv in levels]),
                         violation, curve)

    @staticmethod
    def _p_value(claim: Any, counts: Sequence[tuple[int, int, int, int]],
                 shares: Sequence[float]) -> float:
        """Smallest family level (weighted Bonferroni, ``shares`` of it per candidate) at
        which a box refutes ``claim``."""
        def refutes(family: float) -> bool:
            return any(claim.margin(b.p_low, b.q_high)[0] > 0 for b in (
                event_bound(k_p, max(n_p, 1), k_q, max(n_q, 1), alpha=family * share)
                for share, (k_p, n_p, k_q, n_q) in zip(shares, counts)))

        if not refutes(1.0 - 1e-12):
            return 1.0
        lo, hi = -300.0, 0.0  # log10 of the family level
        if refutes(10.0 ** lo):
            return 1e-300
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if refutes(10.0 ** mid) else (mid, hi)
        return float(min(1.0, 10.0 ** hi))


#: The certifier of each claim type :func:`dpcheck.audit` accepts.
CERTIFIERS: dict[type, Certifier] = {
    PureDP: DPCertifier(pure=True),
    ApproxDP: DPCertifier(pure=False),
    **{kind: CurveCertifier() for kind in CURVE_CLAIMS},
}


def certifier_for(claim: Any) -> Certifier:
    """The certifier of ``claim``'s type; :class:`~dpcheck.errors.InvalidArgument` if the
    auditor has none."""
    certifier = next((CERTIFIERS[t] for t in type(claim).__mro__ if t in CERTIFIERS), None)
    if certifier is None:
        names = " or ".join(f"dpcheck.{t.__name__}" for t in CERTIFIERS)
        raise InvalidArgument(f"claim={fmt(claim)} must be a {names}")
    return certifier
