"""``check_perfect_generalization()``: refute (β, ε, δ)-perfect generalization (Definition 8).

``M : Y^n → R`` is (β, ε, δ)-perfectly generalizing if for every distribution ``C`` there is a
simulator ``SIM_C`` (independent of the sample) with ``P_{T~C^n}[M(T) ≈_{ε,δ} SIM_C] ≥ 1 − β``.

Three sound refutations (the third, ``method="optimal"``, refutes every simulator at once for
two-element output spaces; it and the exact enumeration tools live in
:mod:`dpcheck.generalization_exact`):

``method="simulator"``
    Refutes *a given simulator*: draw ``T_1..T_N ~ C^n``, decide for each whether
    ``M(T_j) ≈_{ε,δ} SIM`` fails — exactly when both have a pmf, otherwise by
    :func:`dpcheck.audit_closeness` at level ``inner_alpha`` — and test the failure rate.
    If the simulator is good for a fraction ≥ 1 − β of samples, each per-sample verdict is a false
    alarm with probability ≤ ``inner_alpha``, so the verdicts are i.i.d. Bernoulli with rate
    ``≤ β + inner_alpha``. The checker reports a violation iff the one-sided Clopper–Pearson
    lower bound (level ``alpha``) on that rate exceeds ``β + inner_alpha``; ``failure_lower`` =
    that bound − ``inner_alpha`` is a valid lower bound on the true failure mass.
``method="pairs"``
    Simulator-free (Corollary 10): if ``M`` is (β, ε, δ)-PG with ε < ln 2 (or δ = 0, where the
    ratios simply multiply), then for independent ``T_1, T_2 ~ C^n`` the outputs are
    (2ε, 3δ)-close with probability ≥ 1 − 2β. Same test on N independent pairs against the rate
    ``2β + inner_alpha``. A violation refutes PG for *every* simulator.

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive learning with robust
generalization guarantees", COLT 2016: Definition 8, Lemma 9, Corollary 10.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binom

from ._validation import (
    _fmt,
    check_alpha,
    check_choice,
    check_delta,
    check_int,
    check_real,
    check_seed,
)
from .closeness import Closeness, as_output_sampler, audit_closeness, exact_closeness
from .errors import InvalidArgument, PrivacyViolation
from .mechanism import as_sampler, pmf_of
from .population import as_population
from .results import json_safe
from .rng import child, generator
from .stats import cp_lower

__all__ = [
    "GeneralizationResult",
    "PerfectGeneralization",
    "check_beta",
    "check_perfect_generalization",
]


def check_beta(value: Any, name: str = "beta") -> float:
    """β ∈ [0, 1) (Definition 8)."""
    b = check_real(name, value)
    if not 0.0 <= b < 1.0:
        raise InvalidArgument(f"{name}={_fmt(value)} must be in [0, 1)")
    return b


@dataclass(frozen=True, slots=True)
class PerfectGeneralization:
    """The claim "M is (β, ε, δ)-perfectly generalizing" (Definition 8): β ∈ [0, 1), ε ≥ 0
    finite, δ ∈ [0, 1)."""

    beta: float
    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        object.__setattr__(self, "epsilon", Closeness(self.epsilon, self.delta).epsilon)
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def closeness(self) -> Closeness:
        """The per-sample closeness requirement (ε, δ)."""
        return Closeness(self.epsilon, self.delta)

    def describe(self) -> str:
        """E.g. ``(0.1, 0.5, 0)-PG``."""
        return f"({self.beta:g}, {self.epsilon:g}, {self.delta:g})-PG"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "perfect_generalization", "beta": self.beta,
                "epsilon": self.epsilon, "delta": self.delta}


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


class _Bound:
    """``M(T)`` as an output sampler (with pmf when M has one)."""

    def __init__(self, sampler: Any, pmf: Any, data: Any) -> None:
        self.sample = lambda size, rng: sampler(data, size, rng)
        if pmf is not None:
            self.pmf = lambda: pmf(data)


def check_perfect_generalization(
    mechanism: Any,
    population: Any,
    claim: PerfectGeneralization,
    *,
    simulator: Any = None,
    method: str = "simulator",
    datasets: int = 200,
    samples: int = 20_000,
    alpha: float = 0.05,
    inner_alpha: float = 0.01,
    seed: int | np.random.SeedSequence | None = None,
    **audit_kwargs: Any,
) -> GeneralizationResult:
    """Test (β, ε, δ)-perfect generalization of ``mechanism`` on ``population``.

    Parameters
    ----------
    mechanism
        ``mechanism(data, size, rng)`` or an object with ``.sample`` (and ``.pmf(data)`` for
        exact per-sample closeness).
    population
        :class:`~dpcheck.IIDPopulation`, an object with ``draw(rng)``, or ``population(rng)``.
    claim
        :class:`PerfectGeneralization`.
    simulator
        The simulator's output distribution for this population (``method="simulator"``): a
        sampler ``(size, rng)``, an object with ``.sample(size, rng)``/``.pmf()``, or a pmf.
    method
        ``"simulator"``, ``"pairs"`` (Corollary 10, simulator-free; needs ε < ln 2 if δ > 0) or
        ``"optimal"`` (every simulator at once; two outputs, exact pmf per sample — see
        :func:`dpcheck.generalization_exact.check_optimal_simulator`).
    datasets
        Number of samples T (pairs of samples for ``"pairs"``).
    samples
        Outputs per side of each closeness audit (unused when pmfs are exact).
    alpha
        Level of the whole check.
    inner_alpha
        Level of each per-sample closeness audit (its false alarms are absorbed into the
        threshold, not into ``alpha``); ignored when the per-sample closeness is exact.
    seed
        ``int`` or ``SeedSequence``; deterministic.

    Returns
    -------
    GeneralizationResult

    References
    ----------
    Cummings et al., COLT 2016, Definition 8 and Corollary 10.
    """
    start = time.perf_counter()
    if not isinstance(claim, PerfectGeneralization):
        raise InvalidArgument(f"claim={_fmt(claim)} must be a dpcheck.PerfectGeneralization")
    method = check_choice(method, "method", ("simulator", "pairs", "optimal"))
    if method == "optimal":
        from .generalization_exact import check_optimal_simulator

        return check_optimal_simulator(mechanism, population, claim, datasets=datasets,
                                       alpha=alpha, seed=seed)
    datasets = check_int(datasets, "datasets", minimum=1)
    alpha = check_alpha(alpha)
    inner_alpha = check_alpha(inner_alpha, "inner_alpha")
    pop = as_population(population)
    sampler, pmf = as_sampler(mechanism), pmf_of(mechanism)
    seed_seq = check_seed(seed)
    if method == "simulator":
        if simulator is None:
            raise InvalidArgument("simulator=None: method='simulator' needs a simulator "
                                  "(use method='pairs' for the simulator-free refutation)")
        sim = as_output_sampler(simulator, "simulator")
        target = claim.closeness
        exact_inner = pmf is not None and sim.pmf is not None
        threshold = claim.beta
    else:
        if claim.delta > 0 and not claim.epsilon < math.log(2):
            raise InvalidArgument(f"claim.epsilon={claim.epsilon!r} must be < ln 2 for "
                                  "method='pairs' when delta > 0 (Corollary 10)")
        target = Closeness(2 * claim.epsilon, min(3 * claim.delta, 0.999999))
        exact_inner = pmf is not None
        threshold = 2 * claim.beta
    if not exact_inner:
        threshold += inner_alpha

    failures = 0
    worst: tuple[float, dict[str, Any]] | None = None
    for j in range(datasets):
        rng = generator(seed_seq, "population", j)
        t1 = pop.draw(rng)
        a = _Bound(sampler, pmf, t1)
        b: Any = sim if method == "simulator" else _Bound(sampler, pmf, pop.draw(rng))
        if exact_inner:
            eps_star, delta_star = exact_closeness(a.pmf(), b.pmf(), target)
            failed = not delta_star <= target.delta + 1e-12
            score, info = delta_star, {"exact_delta": delta_star, "exact_epsilon": eps_star}
        else:
            r = audit_closeness(a, b, target, samples=samples, alpha=inner_alpha,
                                seed=child(seed_seq, "closeness", j), **audit_kwargs)
            failed = r.violation
            score, info = r.delta_lower, {"delta_lower": r.delta_lower,
                                          "epsilon_lower": r.epsilon_lower}
        if failed:
            failures += 1
            if worst is None or score > worst[0]:
                worst = (score, {"trial": j, "dataset": json_safe(t1, max_items=64), **info})
    violation, lower, p_value = rate_test(failures, datasets, threshold, alpha)
    mass_lower = max(0.0, lower - (0.0 if exact_inner else inner_alpha))
    if method == "pairs":
        mass_lower = mass_lower / 2  # the pair-failure rate is at most 2β under the claim
    return GeneralizationResult(
        claim=claim, method=method, violation=violation, failures=failures, trials=datasets,
        threshold=threshold, failure_lower=mass_lower, p_value=p_value, alpha=alpha,
        inner_alpha=None if exact_inner else inner_alpha, exact_inner=exact_inner,
        seconds=time.perf_counter() - start, witness=None if worst is None else worst[1],
        details={"target": target.to_dict()},
    )
