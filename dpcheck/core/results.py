"""Result objects of an audit: the witness and the :class:`AuditResult`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.errors import InvalidArgument, PrivacyViolation
from dpcheck.events.event import Event
from dpcheck.features.float_bits import COLUMNS as FLOAT_BITS
from dpcheck.stats import EventBound

__all__ = ["Witness", "AuditResult", "TIMING_KEYS", "json_safe", "untimed"]

#: Keys of a result record that hold wall-clock times: the only ones in which two runs with the
#: same seed differ (design §4 rule 5: bit for bit, whatever the executor).
TIMING_KEYS = ("seconds", "explore_seconds")


def untimed(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` (a ``to_dict()`` of a result) without its wall times (:data:`TIMING_KEYS`).

    >>> untimed({"epsilon_lower": 0.5, "seconds": 1.2, "explore_seconds": 0.3})
    {'epsilon_lower': 0.5}
    """
    return {k: v for k, v in record.items() if k not in TIMING_KEYS}


def json_safe(value: Any, *, max_items: int = 1000) -> Any:
    """Best-effort conversion of datasets and numpy values to JSON-safe Python objects."""
    import numpy as np

    if isinstance(value, np.ndarray):
        if value.size > max_items:
            return {"shape": list(value.shape), "dtype": str(value.dtype), "truncated": True}
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        if len(value) > max_items:
            return {"length": len(value), "truncated": True}
        return [json_safe(v, max_items=max_items) for v in value]
    if isinstance(value, dict):
        return {str(k): json_safe(v, max_items=max_items) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@dataclass(frozen=True)
class Witness:
    """The confirmed event that certifies the reported bound.

    ``direction == "d>d_prime"``: ``p = P[M(D) ∈ S]`` and ``q = P[M(D′) ∈ S]``; otherwise the
    roles are swapped. Intervals are one-sided Clopper–Pearson bounds at ``bound.alpha / 2``
    each, computed on the confirmation sample only.

    ``partner`` (paired events, :mod:`dpcheck.events.paired`): a disjoint event S′ counted in the
    other direction. Then ``p``/``q`` are the mixtures ``(P(S) + Q(S′))/2`` and
    ``(Q(S) + P(S′))/2`` on both sides' confirmation outputs together, the ε bound comes from the
    conditional test (``bound.ratio_low``), and the intervals (binomial on the pooled count, a
    sum of two independent binomials, which is less dispersed: Hoeffding 1956, Thm. 4) are
    descriptive.
    """

    event: Event
    direction: str
    bound: EventBound
    partner: Event | None = None

    @property
    def p_hat(self) -> float:
        """Empirical probability of the event on the numerator side."""
        return self.bound.p_hat

    @property
    def q_hat(self) -> float:
        """Empirical probability of the event on the denominator side."""
        return self.bound.q_hat

    @property
    def p_interval(self) -> tuple[float, float]:
        """Clopper–Pearson bounds on ``p`` (each one-sided at ``bound.alpha / 2``)."""
        return (self.bound.p_low, self.bound.p_high)

    @property
    def q_interval(self) -> tuple[float, float]:
        """Clopper–Pearson bounds on ``q``."""
        return (self.bound.q_low, self.bound.q_high)

    def describe(self) -> str:
        """One line: the event, the direction and the two estimates with their bounds."""
        num, den = ("D", "D'") if self.direction == "d>d_prime" else ("D'", "D")
        b = self.bound
        sizes = (f"{b.n_p} samples per side" if b.n_p == b.n_q
                 else f"{b.n_p} and {b.n_q} samples")
        ratio = "" if b.ratio_low is None else f", p/q >= {b.ratio_low:.4g} (conditional test)"
        if self.partner is not None:
            return (f"S = {{{self.event.describe()}}} with S' = {{{self.partner.describe()}}} "
                    f"(paired): (P[M({num}) in S] + P[M({den}) in S'])/2 = {b.p_hat:.4g}, "
                    f"(P[M({den}) in S] + P[M({num}) in S'])/2 = {b.q_hat:.4g}, "
                    f"{b.n_p} samples of both sides{ratio}")
        return (f"S = {{{self.event.describe()}}}: P[M({num}) in S] = {b.p_hat:.4g} "
                f"(>= {b.p_low:.4g}), P[M({den}) in S] = {b.q_hat:.4g} (<= {b.q_high:.4g}), "
                f"{sizes}{ratio}")

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form (human-readable ``description`` plus machine ``event``)."""
        b = self.bound
        return {
            "description": self.describe(),
            "event": self.event.to_dict(),
            "partner_event": None if self.partner is None else self.partner.to_dict(),
            "direction": self.direction,
            "count_p": b.k_p, "count_q": b.k_q, "n": b.n_p, "n_q": b.n_q,
            "ratio_lower": b.ratio_low,
            "p_hat": b.p_hat, "q_hat": b.q_hat,
            "p_interval": [b.p_low, b.p_high], "q_interval": [b.q_low, b.q_high],
            "interval_alpha": b.alpha,
        }


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`dpcheck.audit` on one neighbouring pair.

    Attributes
    ----------
    claim
        The audited claim.
    violation
        ``True`` iff the claim is refuted at confidence ``1 − alpha`` on this pair.
    epsilon_lower
        Lower confidence bound (level ``1 − alpha``) on the privacy loss: the smallest ε for
        which the mechanism could be (ε, claim.delta)-DP on this pair. ≥ 0; may be ``math.inf``.
        For curve claims (:mod:`dpcheck.curves`) the pure-DP (δ = 0) bound of the confirmed
        events, not a bound on the claim's parameter: those are in ``curve``.
    delta_lower
        For :class:`~dpcheck.ApproxDP`: lower bound on the hockey-stick divergence at the
        claimed ε (same confidence); ``None`` for pure claims.
    p_value
        p-value of H0 "the claim holds on this pair" (Bonferroni over the confirmed events).
    witness
        The confirmed event that achieves ``epsilon_lower`` (curve claims: the one whose box is
        farthest outside the claimed curve, or nearest to it on a pass).
    curve
        Curve claims only (``None`` otherwise): the witness's ``margin`` against the claimed
        curve (> 0: outside it, the claim is refuted), its ``point`` on the curve and the lower
        confidence bounds on the claim's parameter (``parameter_lower``: μ, ρ, ε(α)).
    samples, explore_samples, confirm_samples
        Outputs per dataset: in total, for event selection, and for the bounds (nominal
        sizes: a Poissonized confirmation draws ``Poisson(n − 3√n)``, the witness's
        ``bound.n_p``/``n_q``). In a sequential audit ``samples`` is the budget per side of
        the stages run (the pilots' budgets up to the one that ended it, or the whole
        ``budget`` when the final stage ran) and the other two are the ending stage's (its
        exploration sample may include the earlier stages' outputs).
    power_floor, support_floor
        What a pass rules out (:func:`dpcheck.stats.power_floor`: per event mass, the ratio
        a confirmed event would have refuted with probability ≥ 0.9); the smallest mass of an
        output value produced under one dataset only that the audit refutes with probability
        ≥ 0.9, exploration and confirmation together (:mod:`dpcheck.events.support`; ``None``
        with ``support=False`` or for curve claims).
    stages, budget, stop_within
        Sequential audits (``audit(sequential=True)``, :mod:`dpcheck.core.sequential`): each
        stage run (:class:`dpcheck.core.sequential.Stage`: name, budget per side, level,
        ε lower bound, p-value, whether it refuted the claim), the ``samples`` upper limit and
        the ``stop_within`` the audit was given; ``None`` for fixed-budget audits (and
        ``stop_within`` without one). ``p_value`` is then the weighted-Bonferroni
        combination over the stages, and the bounds are those of the last stage (valid at its
        level, below ``alpha``).
    warnings
        Warnings raised while the audit ran (e.g. a library's privacy-leak warning), and a note
        when the mechanism cannot be seeded by dpcheck (:mod:`dpcheck.integrations.scalar`).
    seconds, explore_seconds
        Wall time of the whole audit, and of the part before confirmation (exploration and
        event selection, which run in the calling process; for :func:`dpcheck.audit_pairs` with
        ``confirm="best"`` the exploration, pilot and re-exploration of every pair). The rest,
        ``seconds − explore_seconds``, is the confirmation that an ``executor`` spreads over
        its workers. Like ``seconds``, it varies from run to run.
    """

    claim: PureDP | ApproxDP
    violation: bool
    epsilon_lower: float
    delta_lower: float | None
    p_value: float
    witness: Witness | None
    samples: int
    explore_samples: int
    confirm_samples: int
    alpha: float
    seed: dict[str, object]
    seconds: float
    confirmed: tuple[Witness, ...]
    candidates_scored: int
    features: dict[str, object]
    mechanism: str
    relation: str | None = None
    pair: tuple[Any, Any] | None = None
    exact_epsilon: float | None = None
    exact_delta: float | None = None
    sampler_check: Any = None
    warnings: tuple[str, ...] = ()
    explore_seconds: float | None = None
    curve: dict[str, Any] | None = None
    power_floor: tuple[dict[str, float], ...] | None = None
    support_floor: float | None = None
    stages: tuple[Any, ...] | None = None
    budget: int | None = None
    stop_within: float | None = None

    @property
    def sampler_mismatch(self) -> bool:
        """``True`` when the mechanism's samples contradict its own ``pmf``."""
        return bool(self.sampler_check is not None and self.sampler_check.mismatch)

    def __repr__(self) -> str:
        """One line, as scipy's result objects: the verdict and the numbers behind it."""
        delta = "" if self.delta_lower is None else f", delta_lower={self.delta_lower:.4g}"
        return (f"AuditResult(violation={self.violation}, epsilon_lower="
                f"{self.epsilon_lower:.4g}{delta}, p_value={self.p_value:.3g}, claim="
                f"{self.claim.describe()}, samples={self.samples}, mechanism={self.mechanism})")

    @property
    def float_hole(self) -> bool:
        """Whether the witness is a floating-point hole: an event on the float64 bits of the
        output (:mod:`dpcheck.features.float_bits`), not on its value."""
        return self.witness is not None and self.witness.event.feature_name in FLOAT_BITS

    def summary(self) -> str:
        """A few lines for people: verdict, bound, witness, exact values when known."""
        verdict = "VIOLATION" if self.violation else "no violation found"
        lines = [
            f"{self.mechanism}: claim {self.claim.describe()} -> {verdict} "
            f"(alpha={self.alpha:g}, p-value={self.p_value:.3g})",
            f"  epsilon_lower = {self.epsilon_lower:.4f}"
            + (" (pure DP, delta = 0: a curve claim is judged by its curve below)"
               if self.curve is not None else "")
            + (f", delta_lower = {self.delta_lower:.3g}" if self.delta_lower is not None else ""),
        ]
        if self.witness is not None:
            lines.append(f"  witness: {self.witness.describe()}")
        if self.float_hole and self.violation:
            lines.append("  note: a floating-point hole: the two datasets' outputs lie on "
                         "different float64 grids (Mironov 2012); float_features=False audits "
                         "the values only (the real-valued idealisation)")
        if self.curve is not None:
            lower = ", ".join(f"{k} >= {v:.4g}" for k, v in self.parameter_lower.items())
            margin = self.curve["margin"]
            where = ("no confirmed box near the claimed curve" if not math.isfinite(margin)
                     else f"the witness's box is {margin:.3g} outside the claimed curve"
                     if margin > 0 else
                     f"the witness's box is {-margin:.3g} inside the claimed curve")
            lines.append(f"  curve: {where}" + (f"; {lower}" if lower else ""))
        finite = [f for f in self.power_floor or () if math.isfinite(f["ratio"])]
        if finite:  # (every ratio is infinite when the budget is too small to rule anything out)
            lines.append("  rules out (power >= 0.9, had the event been confirmed): "
                         + "; ".join(f"mass {f['mass']:g} with p/q >= {f['ratio']:.3g}"
                                     for f in finite))
        if self.support_floor is not None and math.isfinite(self.support_floor):
            lines.append(f"  rare values: one produced under one dataset only with mass >= "
                         f"{self.support_floor:.3g} is refuted with probability >= 0.9")
        if self.exact_epsilon is not None:
            lines.append(f"  exact (from pmf): epsilon = {self.exact_epsilon:.6g}, "
                         f"delta(claimed epsilon) = {self.exact_delta:.6g}")
        if self.sampler_mismatch:
            lines.append(f"  WARNING: {self.sampler_check.describe()}")
        if self.stages:
            last = self.stages[-1]
            why = ("" if last.violation or last.reachable is None else
                   f": its bound is within stop_within of the {last.reachable:.4g} its events would "
                   "certify at the full budget (stop_within)")
            lines.append(f"  sequential: stopped at {last.name} after {self.samples:,} of "
                         f"{self.budget:,} samples per side{why}" if last.name != "final" else
                         f"  sequential: no pilot refuted the claim; the full budget of "
                         f"{self.budget:,} samples per side was used")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    @property
    def parameter_lower(self) -> dict[str, float]:
        """Curve claims: lower confidence bounds on the claim's parameter (``mu`` of GDP,
        ``rho`` of zCDP, ``epsilon_at_alpha`` of RDP), from the confirmed events."""
        return dict((self.curve or {}).get("parameter_lower") or {})

    def plot(self) -> Any:
        """Curve claims: a :class:`matplotlib.figure.Figure` of the claimed curve against what
        the confirmed events certify (:mod:`dpcheck.core.curve_plot`)."""
        if self.curve is None:
            raise InvalidArgument(f"plot() draws curve claims; claim={self.claim.describe()!r} "
                                  "is a single (epsilon, delta)")
        from dpcheck.core.curve_plot import curve_figure

        boxes = [(w.bound.p_low, w.bound.q_high) for w in self.confirmed]
        return curve_figure(self.claim, boxes, f"{self.mechanism}: {self.claim.describe()}")

    def raise_if_violation(self) -> AuditResult:
        """Raise :class:`~dpcheck.PrivacyViolation` (carrying this result) if refuted."""
        if self.violation:
            raise PrivacyViolation(self.summary(), self)
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record (``json.dumps`` works; ``inf`` is kept as a float)."""
        return {
            "mechanism": self.mechanism,
            "claim": self.claim.to_dict(),
            "relation": self.relation,
            "pair": None if self.pair is None else [json_safe(x) for x in self.pair],
            "violation": self.violation,
            "epsilon_lower": self.epsilon_lower,
            "delta_lower": self.delta_lower,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "witness": None if self.witness is None else self.witness.to_dict(),
            "confirmed": [w.to_dict() for w in self.confirmed],
            "samples": self.samples,
            "explore_samples": self.explore_samples,
            "confirm_samples": self.confirm_samples,
            "candidates_scored": self.candidates_scored,
            "features": self.features,
            "seed": self.seed,
            "seconds": self.seconds,
            "explore_seconds": self.explore_seconds,
            "exact_epsilon": self.exact_epsilon,
            "exact_delta": self.exact_delta,
            "sampler_check": None if self.sampler_check is None else self.sampler_check.to_dict(),
            "warnings": list(self.warnings),
            **({} if self.curve is None else {"curve": json_safe(self.curve)}),
            **({} if self.power_floor is None
               else {"power_floor": [json_safe(f) for f in self.power_floor]}),
            **({} if self.support_floor is None
               else {"support_floor": json_safe(self.support_floor)}),
            **({} if self.stages is None else {"sequential": {
                "budget": self.budget, "stages": [s.to_dict() for s in self.stages],
                **({} if self.stop_within is None else {"stop_within": self.stop_within})}}),
        }

    def __post_init__(self) -> None:
        if self.epsilon_lower < 0 or math.isnan(self.epsilon_lower):
            raise ValueError(f"epsilon_lower={self.epsilon_lower!r} must be >= 0")
