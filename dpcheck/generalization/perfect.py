"""``check_perfect_generalization()``: refute (β, ε, δ)-perfect generalization (Definition 8).

``M : Y^n → R`` is (β, ε, δ)-perfectly generalizing if for every distribution ``C`` there is a
simulator ``SIM_C`` (independent of the sample) with ``P_{T~C^n}[M(T) ≈_{ε,δ} SIM_C] ≥ 1 − β``.

Three sound refutations (the third, ``method="optimal"``, refutes every simulator at once for
two-element output spaces; it and the exact enumeration tools live in
:mod:`dpcheck.generalization.enumeration`):

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
from typing import Any

import numpy as np

from dpcheck.claims import Closeness, PerfectGeneralization
from dpcheck.core.results import json_safe
from dpcheck.errors import InvalidArgument
from dpcheck.generalization.closeness import as_output_sampler, audit_closeness, exact_closeness
from dpcheck.generalization.enumeration import check_optimal_simulator
from dpcheck.generalization.population import as_population
from dpcheck.generalization.result import GeneralizationResult, rate_test
from dpcheck.internal.rng import child, generator
from dpcheck.mechanism import as_sampler, pmf_of
from dpcheck.validation import (
    check_alpha,
    check_choice,
    check_int,
    check_seed,
    fmt,
)

__all__ = [
    "GeneralizationResult",
    "check_perfect_generalization",
]


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
        :func:`dpcheck.generalization.enumeration.check_optimal_simulator`).
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
        raise InvalidArgument(f"claim={fmt(claim)} must be a dpcheck.PerfectGeneralization")
    method = check_choice(method, "method", ("simulator", "pairs", "optimal"))
    if method == "optimal":

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
