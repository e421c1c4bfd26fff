"""The result of the generalization checkers, and their rate test.

:class:`GeneralizationResult` is shared by :func:`dpcheck.check_perfect_generalization` (all
three methods, the exact enumeration of :mod:`dpcheck.generalization.enumeration` included) and
:func:`dpcheck.check_robust_generalization`; :func:`rate_test` is the exact one-sided binomial
test both apply to their i.i.d. failure indicators.

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive learning with robust
generalization guarantees", COLT 2016: Definitions 5 and 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scipy.stats import binom

from dpcheck.core.results import json_safe
from dpcheck.errors import PrivacyViolation
from dpcheck.stats import cp_lower

__all__ = ["GeneralizationResult", "rate_test"]


@dataclass(frozen=True)
class GeneralizationResult:
    """Outcome of a perfect- or robust-generalization check.

    Attributes
    ----------
    claim
        The checked claim.
    method
        ``"simulator"``, ``"pairs"`` (PG) or ``"joint"``/``"two-level"`` (RG).
    violation
        ``True`` iff the claim is refuted at confidence 1 − alpha.
    failures, trials
        Per-trial failure verdicts counted on the confirmation trials.
    threshold
        The rate the verdicts may reach under the claim (β + inner_alpha, 2β + inner_alpha, δ).
    failure_lower
        Valid lower confidence bound on the true failure mass (threshold-corrected).
    p_value
        Exact binomial p-value of H0 "verdict rate ≤ threshold".
    witness
        JSON-safe description of the most telling failing trial (dataset, bounds), or ``None``.
    """

    claim: Any
    method: str
    violation: bool
    failures: int
    trials: int
    threshold: float
    failure_lower: float
    p_value: float
    alpha: float
    inner_alpha: float | None
    exact_inner: bool
    seconds: float
    witness: dict[str, Any] | None = None
    details: dict[str, Any] | None = None

    @property
    def failure_rate(self) -> float:
        """Observed verdict rate ``failures / trials``."""
        return self.failures / self.trials

    def summary(self) -> str:
        """Verdict, rates and witness in a few lines."""
        verdict = "VIOLATION" if self.violation else "no violation found"
        lines = [(f"{self.claim.describe()} [{self.method}] -> {verdict} "
                  f"(alpha={self.alpha:g}, p-value={self.p_value:.3g})"),
                 (f"  failures {self.failures}/{self.trials} = {self.failure_rate:.4g} vs "
                  f"threshold {self.threshold:.4g}; failure mass >= {self.failure_lower:.4g}")]
        if self.witness is not None:
            lines.append(f"  witness: {self.witness}")
        return "\n".join(lines)

    def raise_if_violation(self) -> GeneralizationResult:
        """Raise :class:`~dpcheck.PrivacyViolation` (carrying this result) if refuted."""
        if self.violation:
            raise PrivacyViolation(self.summary(), self)  # type: ignore[arg-type]
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record."""
        return json_safe({
            "kind": "generalization", "claim": self.claim.to_dict(), "method": self.method,
            "violation": self.violation, "failures": self.failures, "trials": self.trials,
            "failure_rate": self.failure_rate, "threshold": self.threshold,
            "failure_lower": self.failure_lower, "p_value": self.p_value, "alpha": self.alpha,
            "inner_alpha": self.inner_alpha, "exact_inner": self.exact_inner,
            "seconds": self.seconds, "witness": self.witness, "details": self.details,
        })


def rate_test(failures: int, trials: int, threshold: float, alpha: float) -> tuple[bool, float,
                                                                                    float]:
    """One-sided exact binomial test of "rate ≤ threshold": (violation, CP lower bound on the
    rate at level alpha, p-value ``P[Bin(trials, threshold) ≥ failures]``)."""
    lower = float(cp_lower(failures, trials, alpha))
    p_value = 1.0 if failures == 0 else float(binom.sf(failures - 1, trials, min(threshold, 1.0)))
    return bool(lower > threshold), lower, p_value
