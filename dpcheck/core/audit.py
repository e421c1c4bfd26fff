"""``audit()``: explore → confirm, the statistically valid core of dpcheck.

1. **Explore.** Draw ``explore_samples`` outputs from M(D) and M(D′) on their own streams, map
   them to features and score every candidate (event, direction) by the bound it would project
   (:mod:`dpcheck.events.select`). Keep the ``candidates`` best distinct ones. For an ``ApproxDP``
   claim also keep the event with the best projected δ lower bound ``p_lo − e^ε q_hi`` at the
   claimed ε, if it is new and expected to certify a positive δ: the ε ranking favours rare
   events with a large ratio, while δ(ε) is attained by the common likelihood-ratio event.
2. **Confirm.** Draw ``confirm_samples`` fresh outputs per side (in chunks of
   :data:`CHUNK`, streaming counts), count each kept event, and certify each with one-sided
   Clopper–Pearson bounds at half its share of ``alpha`` per binomial — weighted Bonferroni
   over the confirmed candidates (for pure claims a lead — the best validated one, or the
   strong slot's candidate — holds half of the ranked candidates' α,
   :func:`dpcheck.events.slots.lead_weighted`; the support candidates
   10 %) and a union bound over the two sides, so *all* reported bounds hold simultaneously
   with probability ≥ 1 − alpha whatever was selected during exploration.

   **Pure claims** (``PureDP``, at least :data:`POISSON_MIN` confirmation outputs) draw
   ``Poisson(n − 3√n)`` confirmation outputs per side instead of exactly ``n`` (the sizes come
   from their own stream, drawn before any confirmation output). Then an event's counts are
   independent Poisson variables, and given their total the count under the numerator side is
   ``Binomial(total, p/(p+q))`` exactly, so one Clopper–Pearson bound at the candidate's share
   bounds ``p/q`` (:func:`dpcheck.stats.ratio_lower`) without the union bound over two
   binomials. Which statistic certifies a candidate (``"ratio"`` or ``"union"``, the latter with
   the realised sizes as binomial trial counts, valid conditionally on them) is decided on the
   exploration sample by their projected bounds; the conditional test is sharper for rare
   events (by ≈ 1/3 of the gap for p, q ≪ 1), the union for probabilities near 1.
   Poissonized audits also confirm **paired events** (:mod:`dpcheck.events.paired`): an upper and a
   disjoint lower half-line of one feature, counted in opposite directions, whose combined
   Poisson counts the same conditional test certifies (twice the counts for a symmetric
   privacy loss).
3. Report ``epsilon_lower = max_k ln((p_lo − δ)/q_hi)``, ``delta_lower = max_k (p_lo − e^ε
   q_hi)``, ``violation`` iff ``epsilon_lower > ε`` (equivalently ``p_lo − e^ε q_hi > δ`` for some
   confirmed event) and the Bonferroni p-value.

References
----------
Design rules of ``shared/design.md`` §4; B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (fresh
samples for the final estimate); Z. Ding et al., "Detecting violations of differential
privacy", CCS 2018 (point events for zero-probability outputs).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.certify import Certified, family_levels
from dpcheck.core.confirm import (CHUNK, audit_checkpoint, confirm_counts, confirmation_sizes,
                                  oriented_counts)
from dpcheck.core.explore import Explored, Setup, exploration_size, explore, setup_audit
from dpcheck.core.results import AuditResult
from dpcheck.core.sampler_check import exact_analysis
from dpcheck.errors import InvalidArgument
from dpcheck.events.pools import MAX_ATOMS
from dpcheck.features.feature import FeatureMap
from dpcheck.core.sequential import (Stage, budget_projection, check_stop_within, keeps_pilots,
                                     pilot_name, pilot_plan, precise_enough, run_pilot, staged)
from dpcheck.mechanism import mechanism_name, records_warnings
from dpcheck.events.support import MAX_SUPPORT, SUPPORT_SHARE, has_identity, support_floor
from dpcheck.stats import power_floor
from dpcheck.validation import check_int

#: Largest ``samples`` per side an audit accepts (its exploration sample is held in memory).
MAX_SAMPLES = 10**11

__all__ = ["audit", "MAX_SAMPLES", "finish", "confirmation_sizes", "exploration_size", "CHUNK"]

@records_warnings
def audit(
    mechanism: Any,
    d: Any,
    d_prime: Any,
    claim: PureDP | ApproxDP,
    *,
    samples: int = 1_000_000,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    relation: Any = None,
    features: FeatureMap | None = None,
    candidates: int = 3,
    explore_fraction: float = 0.1,
    max_atoms: int = MAX_ATOMS,
    progress: Callable[..., None] | bool | None = None,
    float_features: bool = True,
    executor: Any = None,
    checkpoint: str | os.PathLike[str] | None = None,
    ties: bool = False,
    sequential: bool = False,
    support: bool = True,
    stop_within: float | None = None,
) -> AuditResult:
    """Audit a privacy claim of ``mechanism`` on the neighbouring pair ``(d, d_prime)``.

    Parameters
    ----------
    mechanism
        ``mechanism(data, size, rng) -> ndarray`` or an object with ``.sample(data, size, rng)``
        (and optionally ``.pmf(data)`` for exact analysis). See :mod:`dpcheck.mechanism`.
    d, d_prime
        The two datasets.
    claim
        :class:`~dpcheck.PureDP`, :class:`~dpcheck.ApproxDP`, or a curve claim
        (:class:`~dpcheck.GaussianDP`, :class:`~dpcheck.ZCDP`, :class:`~dpcheck.RenyiDP`,
        :class:`~dpcheck.TradeOff`, :class:`~dpcheck.PrivacyCurve`; :mod:`dpcheck.curves`).
    samples
        Outputs drawn per dataset in total (exploration and confirmation together), ≥ 2.
    alpha
        The result's bounds hold jointly with probability ≥ 1 − alpha; ``violation`` is a test
        at level alpha.
    seed
        ``int ≥ 0`` or ``SeedSequence``; ``None`` means seed 0 (deterministic by default — pass
        distinct seeds for independent audits). Same seed ⇒ same result, bit for bit.
    relation
        A neighbour relation (:class:`~dpcheck.AddRemove`, :class:`~dpcheck.Replace`,
        :class:`~dpcheck.UserLevel`); when given, ``(d, d_prime)`` must be neighbours under it.
    features
        Optional map ``outputs -> (n,) or (n, m)`` numeric array of features to build events on
        (replaces the default per-coordinate projections of vector outputs).
    candidates
        How many explored events are confirmed (α is split between them by Bonferroni).
        Approximate-DP claims may confirm one more: the event with the best projected
        ``delta_lower`` at the claimed ε, when the ε ranking did not choose it (module
        docstring, step 1).
    explore_fraction
        Share of ``samples`` used for selection (see :func:`exploration_size`).
    max_atoms
        Cap on the number of point events per feature.
    progress
        Called as ``progress(done, total)`` with the outputs drawn so far (both sides; with
        Poissonized confirmation sizes the confirmation share is scaled to the budget, so the
        last call is ``progress(total, total)``), from the start of exploration on; a callback
        that takes a ``phase`` keyword also gets the phase (``"explore"``, ``"select"``,
        ``"confirm"``). ``True``: a progress bar on standard error, one line per phase with its
        own rate and ETA (:class:`dpcheck.internal.progress.ProgressBar`).
    float_features
        Float outputs: also build events on the bits of their float64 representation — of a
        scalar (:mod:`dpcheck.features.float_bits`) or of each coordinate of a vector
        (:mod:`dpcheck.features.vector_bits`) —, which expose floating-point holes such as
        ``value + noise`` computed in float64 (Mironov 2012). ``False`` looks at the values only
        — the idealised real-valued mechanism's view.
    executor
        ``None`` (draw in this process), a :class:`concurrent.futures.Executor` or a Dask
        ``distributed.Client``: the confirmation chunks (:data:`CHUNK` outputs each, with their
        own seeds) are drawn and counted on its workers and only the counts come back; so are
        the exploration chunks beyond the first (:mod:`dpcheck.core.explore`). The result
        does not depend on the executor or on
        the number of workers. The mechanism, datasets and feature map must be picklable for
        process-based executors.
    checkpoint
        ``None`` or a file path: after every finished confirmation chunk the counts so far are
        saved there (JSON, atomically); rerunning the same audit with the same path draws only
        the missing chunks and gives the same result bit for bit (:mod:`dpcheck.core.checkpoint`).
        A checkpoint written by an audit with other arguments is refused. The file is kept
        after the audit (a rerun then only recomputes exploration).

    ties
        Randomise the boundary atom of chosen half-line events on discrete features
        (:mod:`dpcheck.events.ties`; DP-Sniper's randomised threshold). Off by default: the
        bound is flat in the event's mass near its optimum, and choosing γ adds selection
        noise (measurements: ``benchmarks/README.md``).

    sequential
        Stop early when the claim is refuted: two pilot audits (1 % and 9 % of ``samples`` at
        the default ``explore_fraction``, at 2.5 % and 10 % of α) run first, and the audit
        ends at the first that refutes the claim; otherwise the full audit runs at the
        remaining 87.5 % of α and reuses every pilot output for its exploration (above one
        exploration chunk, :data:`dpcheck.core.sequential.REUSE_MAX`, the pilots run chunked on
        ``executor`` as fixed audits do and the final audit explores afresh on the budget they
        left), so ``samples`` is an upper limit and ``result.samples`` the budget per side of
        the stages run. Valid under this
        optional stopping (union bound over the stages, :mod:`dpcheck.core.sequential`); the
        result's ``stages`` list each stage's budget, level, bound and p-value. Off by default
        (a fixed budget); the pytest plugin turns it on (``--dpcheck-sequential``). Budgets
        below 22 226 have no pilots, below 200 000 only the 9 % one (:data:`dpcheck.core.sequential.MIN_PILOT`).
    support
        Also confirm, per direction, the event "the output is one of the values seen under
        this dataset only during exploration" (:mod:`dpcheck.events.support`), with 10 % of α
        for both together (weighted Bonferroni; the ranked candidates share the other 90 %,
        for pure claims half of it to the lead, :func:`dpcheck.events.slots.lead_weighted`).
        It catches an output value of small mass produced under one dataset only (a rare
        δ-leak) that exploration saw too few times to rank; ``result.support_floor`` is the
        smallest such mass refuted with probability ≥ 0.9. ``False``: the ranked candidates
        only.
    stop_within
        With ``sequential=True``: also stop at the last pilot (9 % of ``samples``) when it did
        not refute the claim, certified at least ``stop_within`` (in ε), and is within
        ``stop_within`` of what it projects the full budget would certify, while that
        projection stays ``stop_within`` below the claimed ε
        (:func:`dpcheck.core.sequential.budget_projection`,
        :func:`~dpcheck.core.sequential.precise_enough`): as far as the pilot can tell, more
        samples would neither refute the claim nor tighten the bound by more than
        ``stop_within``. The projection is in ``result.stages`` (``reachable``). The bounds
        stay valid (the stopping rule uses completed stages only); the result is the pilot's,
        with its smaller sample's floors. ``None`` (default): only a refutation stops early.

    Returns
    -------
    AuditResult

    Raises
    ------
    InvalidArgument
        For invalid arguments, non-neighbouring datasets, or a mechanism that raises or returns
        the wrong shape or NaN.
    WorkerLost
        If ``executor`` lost a worker process and cannot redraw its chunks (a broken process
        pool); Dask redraws them elsewhere.

    References
    ----------
    See the module docstring (design §4 rules 1–5).

    Examples
    --------
    >>> import numpy as np, dpcheck
    >>> def laplace_count(data, size, rng):
    ...     return np.sum(data) + rng.laplace(0.0, 1.0, size)
    >>> r = dpcheck.audit(laplace_count, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
    ...                   samples=200_000, seed=1, float_features=False)  # values only
    >>> r.violation, 0.85 < r.epsilon_lower <= 1.0
    (False, True)
    """
    start = time.perf_counter()
    samples = check_int(samples, "samples", minimum=2)
    if samples > MAX_SAMPLES:
        raise InvalidArgument(f"samples={samples!r} must be <= {MAX_SAMPLES:.0e} outputs per "
                              "side (exploration alone would hold "
                              f"{exploration_size(samples, 0.1):.1e} outputs per side in memory)")
    for name, value in (("d", d), ("d_prime", d_prime)):
        if value is None:
            raise InvalidArgument(f"{name}=None must be a dataset (the pair is d, d_prime)")
    setup = setup_audit(
        mechanism, claim, samples=samples, alpha=alpha, seed=seed, relation=relation,
        features=features, candidates=candidates, explore_fraction=explore_fraction,
        max_atoms=max_atoms, progress=progress, float_features=float_features,
        executor=executor, checkpoint=checkpoint, ties=ties, support=support)
    if relation is not None:
        relation.check(d, d_prime)
    if not isinstance(sequential, bool):
        raise InvalidArgument(f"sequential={sequential!r} must be True or False")
    if stop_within is not None:
        stop_within = check_stop_within(stop_within, setup.claim)
        if not sequential:
            raise InvalidArgument(f"stop_within={stop_within!r} needs sequential=True")
    n_explore = exploration_size(samples, setup.explore_fraction)
    if setup.progress is not None:
        setup.progress.start(2 * samples)
    plan = pilot_plan(samples, setup.explore_fraction) if sequential else ()
    if plan:
        return _sequential(setup, d, d_prime, samples, plan, start=start, within=stop_within)
    explored = explore(setup, d, d_prime, n_explore=n_explore, n_confirm=samples - n_explore)
    return finish(setup, explored, start=start)


def _sequential(setup: Setup, d: Any, d_prime: Any, samples: int,
                plan: tuple[tuple[int, float, float], ...], *, start: float,
                within: float | None) -> AuditResult:
    """Pilots, then (unless one refuted the claim, or with ``within`` was precise enough) the
    final audit on the pilots' outputs plus fresh exploration outputs — or, when the audit's
    exploration is larger than one chunk per side (:data:`dpcheck.core.sequential.REUSE_MAX`),
    on the budget the pilots left, explored as a fixed-budget audit explores (on the executor,
    with bounded memory) (:mod:`dpcheck.core.sequential`)."""
    stages: list[Stage] = []
    prior = None
    final_alpha = setup.alpha * (1 - sum(p[1] for p in plan))
    n_explore = exploration_size(samples, setup.explore_fraction)
    reuse = keeps_pilots(n_explore)
    spent = sum(p[0] for p in plan)  # every pilot's budget per side
    final_budget = samples if reuse else samples - spent
    final_confirm = final_budget - exploration_size(final_budget, setup.explore_fraction)
    drawn = 0
    for index, (budget, share, fraction) in enumerate(plan):
        level, drawn, name = setup.alpha * share, drawn + budget, pilot_name(index, len(plan))
        explored, certified, prior, counts = run_pilot(
            setup, d, d_prime, budget=budget, index=index, alpha=level,
            explore_fraction=fraction, prior=prior, keep=reuse, name=name)
        last = index == len(plan) - 1  # the earlier pilots explore too little to judge
        projected = (None if within is None or certified.violation or not last else
                     budget_projection(setup, explored, counts, n_final=final_confirm,
                                       alpha=final_alpha))
        stages.append(Stage(name, budget, level, certified.epsilon_lower,
                            certified.p_value, certified.violation, projected))
        if certified.violation or (projected is not None and precise_enough(
                certified.epsilon_lower, projected, setup.claim.epsilon, within)):
            result = _result(dataclasses.replace(setup, alpha=level), explored, certified,
                             start=start, explore_seconds=time.perf_counter() - start)
            return staged(result, setup.alpha, stages, samples, drawn, within)
    final = dataclasses.replace(setup, alpha=final_alpha)
    if reuse:  # every pilot output (at most n_explore per side) is final exploration
        assert prior is not None
        keep = min(prior[0].shape[0], n_explore)
        explored = explore(final, d, d_prime, n_explore=n_explore - keep,
                           n_confirm=final_confirm, prior=(prior[0][:keep], prior[1][:keep]))
        result = finish(final, explored, start=start)
    else:
        n_more = exploration_size(final_budget, setup.explore_fraction)
        explored = explore(final, d, d_prime, n_explore=n_more, n_confirm=final_confirm)
        result = finish(final, explored, start=start, done=2 * (spent + n_more),
                        total=2 * samples)
    stages.append(Stage("final", final_budget, final.alpha, result.epsilon_lower,
                        result.p_value, result.violation))
    return staged(result, setup.alpha, stages, samples, samples, within)


def finish(
    setup: Setup, explored: Explored, *, start: float, done: int | None = None,
    total: int | None = None,
) -> AuditResult:
    """Confirm the events of ``explored`` on fresh samples and certify them (steps 2 and 3 of
    the module docstring). ``done``/``total``: progress already made and planned (both sides;
    default: this pair's exploration and its whole budget)."""
    explore_seconds = time.perf_counter() - start  # everything before confirmation
    n_explore, n_confirm = explored.n_explore, explored.n_confirm
    samples = n_explore + n_confirm
    saved = audit_checkpoint(setup, explored, samples)
    sizes = confirmation_sizes(explored)
    chosen = explored.chosen
    if saved is not None:
        saved.bind(tuple((c.event, c.partner, c.direction, c.method) for c in chosen),
                   [f"{c.event.describe()} ({c.direction})" for c in chosen], sizes)
    out_d = explored.out_d
    counts = confirm_counts(setup.sampler, explored.d, explored.d_prime, explored.featurizer,
                            chosen, sizes, explored.seed_seq, (out_d.shape[1:], out_d.dtype.kind),
                            None if setup.progress is None else setup.progress.confirming(),
                            2 * n_explore if done is None else done,
                            2 * samples if total is None else total, setup.executor, saved)
    certified = setup.certifier.certify(setup.claim, chosen,
                                        oriented_counts(chosen, counts, sizes), setup.alpha)
    return _result(setup, explored, certified, start=start, explore_seconds=explore_seconds)


def _result(setup: Setup, explored: Explored, certified: Certified, *, start: float,
            explore_seconds: float) -> AuditResult:
    """The :class:`AuditResult` of a certified audit (with the exact analysis when the
    mechanism has a pmf)."""
    claim, mechanism, seed_seq = setup.claim, setup.mechanism, explored.seed_seq
    d, d_prime = explored.d, explored.d_prime
    n_explore = explored.n_explore
    exact_eps, exact_delta, sampler_report = exact_analysis(mechanism, d, d_prime, claim,
                                                            explored.out_d, explored.out_dp)
    floor = rare = None
    levels = family_levels(explored.chosen, setup.alpha)
    if not certified.violation and certified.curve is None:  # a pass states what it rules out
        n = min(w.bound.n_p for w in certified.witnesses)
        floor = tuple(power_floor(n, alpha=levels[0], epsilon=claim.epsilon,
                                  delta=claim.delta))
    if (setup.support and certified.curve is None
            and has_identity(explored.featurizer.features)):
        # per support candidate: its level when both directions had one (an empty set is
        # the one-sided-value-free case the floor speaks of: its share is that level too)
        level = setup.alpha * SUPPORT_SHARE / 2
        rare = support_floor(min(n_explore, MAX_SUPPORT),
                             min(w.bound.n_q for w in certified.witnesses),
                             alpha=level, epsilon=claim.epsilon, delta=claim.delta)
    relation = setup.relation
    return AuditResult(
        claim=claim,
        violation=certified.violation,
        epsilon_lower=certified.epsilon_lower,
        delta_lower=certified.delta_lower,
        p_value=certified.p_value,
        witness=certified.witnesses[certified.best],
        samples=n_explore + explored.n_confirm,
        explore_samples=n_explore,
        confirm_samples=explored.n_confirm,
        alpha=setup.alpha,
        seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
        seconds=time.perf_counter() - start,
        confirmed=certified.witnesses,
        candidates_scored=explored.scored,
        features=explored.featurizer.to_dict(),
        mechanism=mechanism_name(mechanism),
        relation=None if relation is None else str(getattr(relation, "name", relation)),
        pair=(d, d_prime),
        exact_epsilon=exact_eps,
        exact_delta=exact_delta,
        sampler_check=sampler_report,
        explore_seconds=explore_seconds,
        curve=certified.curve,
        power_floor=floor,
        support_floor=rare,
    )
