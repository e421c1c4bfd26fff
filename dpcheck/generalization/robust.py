"""``check_robust_generalization()``: refute (ε, δ)-robust generalization (Definition 5).

``M : X^n → R`` is (ε, δ)-robustly generalizing if for every distribution ``D`` and every
adversary ``A`` (seeing only ``M(S)``), with probability ≥ 1 − ζ over ``S ~ D^n``,
``P[A(M(S)) outputs f with |f(S) − f(D)| ≤ ε] ≥ 1 − γ``, for some ``ζ + γ = δ``.

Procedure (select on one split, confirm on another):

1. **Explore.** ``explore`` trials: draw ``S``, one output ``r = M(S)``; for every adversary in
   the library compute the test function ``f = A(r)`` and whether ``|f(S) − f(D)| > ε``
   (``f(D)`` exactly, from ``population.mean``). With ``bayes=True`` on a finite-support
   population and a finite output space, also build the Bayes-optimal adversary: for each output
   ``r``, the subset ``f_r ⊆ support`` that failed most often on the exploration trials with
   that output (exhaustive over the ``2^k`` subsets). Keep the adversary with most failures.
2. **Confirm** on fresh trials, with that one adversary only:

   * ``form="joint"``: the joint failure probability over ``S``, ``M`` and ``A`` is ≤ ζ + (1 − ζ)γ
     ≤ δ under the claim (necessary for Definition 5); violation iff its one-sided
     Clopper–Pearson lower bound exceeds δ.
   * ``form="two-level"`` (``M`` with a pmf, deterministic adversary): per sample the exact inner
     failure ``g(S) = Σ_r P[M(S) = r]·1[fail(r, S)]``; Definition 5 holds for this (D, A) iff
     ``min_γ (P[g(S) > γ] + γ) ≤ δ``. A uniform one-sided DKW band (Massart) on the empirical
     law of ``g`` gives a lower bound on that minimum valid for every γ at once.

References
----------
Cummings et al., COLT 2016, Definition 5 and footnote 2 (adversaries output functions of the
labelled records); P. Massart, "The tight constant in the DKW inequality", Ann. Probab. 1990.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.claims import RobustGeneralization
from dpcheck.core.results import json_safe
from dpcheck.errors import InvalidArgument
from dpcheck.generalization.population import IIDPopulation, as_population
from dpcheck.generalization.result import GeneralizationResult, rate_test
from dpcheck.internal.rng import generator
from dpcheck.mechanism import as_sampler, draw, pmf_of
from dpcheck.validation import (
    check_alpha,
    check_choice,
    check_int,
    check_seed,
    fmt,
)

__all__ = ["MaskAdversary", "check_robust_generalization"]

Adversary = Callable[[Any], Callable[[np.ndarray], Any]]


@dataclass(frozen=True)
class MaskAdversary:
    """A deterministic adversary on a finite support: output ``r`` ↦ the indicator of the
    records ``support[masks[r]]`` (records compared by row equality; default mask empty)."""

    support: np.ndarray
    masks: dict[Any, np.ndarray]
    name: str = "bayes"

    def __call__(self, output: Any) -> Callable[[np.ndarray], Any]:
        mask = self.masks.get(_key(output))
        chosen = self.support[mask] if mask is not None else self.support[:0]

        def f(records: np.ndarray) -> np.ndarray:
            return _member(np.asarray(records), chosen)

        return f


def _key(output: Any) -> Any:
    arr = np.asarray(output)
    return arr.item() if arr.ndim == 0 else tuple(arr.ravel().tolist())


def _member(records: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    if chosen.shape[0] == 0:
        return np.zeros(records.shape[0], dtype=bool)
    if records.ndim == 1:
        return np.isin(records, chosen)
    return (records[:, None, :] == chosen[None, :, :]).all(axis=2).any(axis=1)


def _index(records: np.ndarray, support: np.ndarray) -> np.ndarray:
    if support.ndim == 1:
        lookup = {v: i for i, v in enumerate(support.tolist())}
        return np.array([lookup[v] for v in records.tolist()])
    eq = (records[:, None, :] == support[None, :, :]).all(axis=2)
    return eq.argmax(axis=1)


def _gap_fail(f: Callable[[np.ndarray], Any], sample: np.ndarray, pop: Any,
              eps: float) -> bool:
    fs = float(np.mean(np.asarray(f(sample), dtype=float)))
    return abs(fs - float(pop.mean(f))) > eps


def _bayes(pop: IIDPopulation, explored: list[tuple[np.ndarray, Any]],
           eps: float) -> MaskAdversary:
    k = len(pop.weights)
    if k > 14:
        raise InvalidArgument(f"bayes=True needs a population support of at most 14 records "
                              f"(got {k})")
    masks = np.array(list(itertools.product((0, 1), repeat=k)), dtype=float)  # (2^k, k)
    f_d = masks @ pop.weights
    by_out: dict[Any, np.ndarray] = {}
    for sample, out in explored:
        counts = np.bincount(_index(np.asarray(sample), pop.support), minlength=k)
        fail = np.abs(masks @ counts / len(sample) - f_d) > eps
        key = _key(out)
        by_out[key] = by_out.get(key, 0) + fail
    best = {key: masks[int(np.argmax(v))].astype(bool) for key, v in by_out.items()}
    return MaskAdversary(pop.support, best)


def check_robust_generalization(
    mechanism: Any,
    population: Any,
    claim: RobustGeneralization,
    *,
    adversaries: Sequence[Adversary] = (),
    bayes: bool = False,
    form: str = "joint",
    trials: int = 2000,
    explore: int | None = None,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
) -> GeneralizationResult:
    """Test (ε, δ)-robust generalization of ``mechanism`` on ``population``.

    Parameters
    ----------
    mechanism
        ``mechanism(data, size, rng)`` / ``.sample``; ``.pmf(data)`` for ``form="two-level"``.
    population
        Needs ``draw(rng)`` and ``mean(f)`` (exact ``E_D[f]``); an
        :class:`~dpcheck.IIDPopulation` has both.
    claim
        :class:`RobustGeneralization`.
    adversaries
        Library of adversaries ``A(output) -> f`` with ``f(records) -> 0/1 array``.
    bayes
        Add the Bayes-optimal subset adversary (finite support ≤ 14 records, finite outputs).
    form
        ``"joint"`` or ``"two-level"``.
    trials
        Confirmation trials (fresh samples ``S``).
    explore
        Exploration trials (default ``trials // 2``); they never enter the reported bound.
    alpha, seed
        Level of the check; seed (deterministic).

    Returns
    -------
    GeneralizationResult
        ``method`` is the form; ``details`` names the chosen adversary.

    References
    ----------
    Cummings et al., COLT 2016, Definition 5.
    """
    start = time.perf_counter()
    if not isinstance(claim, RobustGeneralization):
        raise InvalidArgument(f"claim={fmt(claim)} must be a dpcheck.RobustGeneralization")
    form = check_choice(form, "form", ("joint", "two-level"))
    trials = check_int(trials, "trials", minimum=1)
    explore = check_int(trials // 2 if explore is None else explore, "explore", minimum=1)
    alpha = check_alpha(alpha)
    pop = as_population(population)
    if not callable(getattr(pop, "mean", None)):
        raise InvalidArgument(f"population={fmt(population)} must have .mean(f) (exact E_D[f])")
    library = list(adversaries)
    for i, a in enumerate(library):
        if not callable(a):
            raise InvalidArgument(f"adversaries[{i}]={fmt(a)} must be callable as A(output)")
    if bayes and not isinstance(pop, IIDPopulation):
        raise InvalidArgument("bayes=True needs a dpcheck.IIDPopulation (finite support)")
    if not library and not bayes:
        raise InvalidArgument("adversaries=() and bayes=False: nothing to test")
    sampler, pmf = as_sampler(mechanism), pmf_of(mechanism)
    if form == "two-level" and pmf is None:
        raise InvalidArgument("form='two-level' needs a mechanism with .pmf(data)")
    seed_seq = check_seed(seed)
    eps = claim.epsilon

    rng = generator(seed_seq, "explore")
    explored = []
    for _ in range(explore):
        s = pop.draw(rng)
        explored.append((s, draw(sampler, s, 1, rng)[0]))
    if bayes:
        library.append(_bayes(pop, explored, eps))
    scores = [sum(_gap_fail(a(out), s, pop, eps) for s, out in explored) for a in library]
    chosen = library[int(np.argmax(scores))]

    rng = generator(seed_seq, "confirm")
    worst = None
    if form == "joint":
        fails = 0
        for j in range(trials):
            s = pop.draw(rng)
            out = draw(sampler, s, 1, rng)[0]
            if _gap_fail(chosen(out), s, pop, eps):
                fails += 1
                worst = worst or {"trial": j, "output": json_safe(np.asarray(out), max_items=16)}
        violation, lower, p_value = rate_test(fails, trials, claim.delta, alpha)
        failure_lower, failures = lower, fails
    else:
        g = np.empty(trials)
        for j in range(trials):
            s = pop.draw(rng)
            g[j] = math.fsum(w for r, w in pmf(s).items()
                             if w > 0 and _gap_fail(chosen(r), s, pop, eps))
        band = math.sqrt(math.log(1 / alpha) / (2 * trials))  # one-sided DKW (Massart)
        grid = np.concatenate(([0.0], np.unique(g)))
        emp = np.array([(g > t).mean() for t in grid])
        stat = float(np.min(emp + grid))
        failure_lower = max(0.0, stat - band)
        violation = failure_lower > claim.delta
        failures = int((g > 0).sum())
        p_value = 1.0 if stat <= claim.delta else min(
            1.0, math.exp(-2 * trials * (stat - claim.delta) ** 2))
    return GeneralizationResult(
        claim=claim, method=form, violation=bool(violation), failures=failures, trials=trials,
        threshold=claim.delta, failure_lower=failure_lower, p_value=p_value, alpha=alpha,
        inner_alpha=None, exact_inner=form == "two-level",
        seconds=time.perf_counter() - start, witness=worst,
        details={"adversary": getattr(chosen, "name", getattr(chosen, "__qualname__",
                                                                repr(chosen))),
                 "explore": explore, "explore_failures": [int(x) for x in scores]},
    )
