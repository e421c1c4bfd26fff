"""Sequential audits: pilots that stop an audit as soon as its claim is refuted.

With ``audit(..., sequential=True)`` the ``samples`` budget is an upper limit. Before the full
audit, two **pilot audits** run — each a complete explore → confirm audit on its own seed
streams, at :data:`PILOT_BUDGETS` of the exploration size (1 % and 9 % of ``samples`` at the
default ``explore_fraction`` of 0.1, so both end at 1/10 of the budget), exploring on
:data:`PILOT_EXPLORE` of their budgets and at :data:`PILOT_ALPHAS` of α (2.5 % and 10 %). The
audit stops at the first pilot that refutes the claim; its result reports the budget of the
stages run. With ``stop_within=τ`` it also stops at the last pilot when its bound is at least τ
and already as good as the budget promises (:func:`precise_enough`): what the pilot can tell the
final stage would certify (:func:`budget_projection`: its events with their probabilities at
the favourable ends of its intervals, and a selection on its exploration sample sized for the
final confirmation) is at most τ above the pilot's bound and τ below the claimed ε. Otherwise
the **final audit** runs at the remaining ``(1 − Σ PILOT_ALPHAS)·α`` (87.5 %)
and takes *every pilot output* (exploration and confirmation) as part of its exploration
sample, topped up to the usual exploration size: its confirmation sample is that of a
fixed-budget audit, and a pass costs no extra outputs (only the pilots' selections). Above one
exploration chunk per side (:data:`REUSE_MAX`) keeping the pilots' outputs would hold the whole
exploration in this process: there the pilots run as fixed-budget audits do (chunked, on the
executor) and the final audit explores afresh on the budget they left (:func:`run_pilot`).

Why this schedule (``benchmarks/README.md``, "Sequential audits", Stop 37): the mildly broken entries of
the zoo that a fixed audit refutes near 10⁵ outputs per side need an exploration of a few 10⁴
outputs to find their event (``noisy_max_value_laplace`` at 10⁵ per side refuted on 3 of 10
seeds when exploring on 10 %, 9 of 10 on 20–30 %), and a look at 1/10 of the budget with more
than 2.5 % of α; gating the second pilot on the first showing an excess skipped it on exactly
these entries.

Validity (the error level holds under this optional stopping). Stage ``k``'s bounds hold with
probability ≥ 1 − α_k whatever happened before it: its confirmation outputs are fresh, and what
it confirms was chosen on earlier outputs only (design §4 rule 1; the final stage's exploration
may use pilot outputs because none of them is counted again). A union bound over the stages
makes every bound the audit can report valid jointly with probability ≥ 1 − Σ α_k = 1 − α, for
any rule that decides to stop from completed stages — an α-spending group-sequential design with
Bonferroni spending over a look schedule fixed in advance. The p-value of the whole procedure is
``min_k p_k · α / α_k`` over the stages run (weighted Bonferroni).

Why not a continuously monitored e-process (test martingale / betting confidence sequence,
Waudby-Smith & Ramdas 2024)? dpcheck looks at its counts only at a few planned points, where a
union bound over three looks costs a constant factor in each look's level (``ln 8`` in the
exponent of a Clopper–Pearson tail at pilot 2's 10 %, ``ln(1/0.875)`` at the final stage) while a mixture martingale's width grows like ``√(ln n / n)``; and the
pilots must be *complete audits* (fresh exploration at each size) because an event chosen on a
small sample is not the event a large one would choose. Measured calibration and the samples used
are in ``benchmarks/sequential.py`` and ``benchmarks/README.md``.

References
----------
P. C. O'Brien, T. R. Fleming, "A multiple testing procedure for clinical trials", Biometrics 35
(1979) and K. K. G. Lan, D. L. DeMets, "Discrete sequential boundaries for clinical trials",
Biometrika 70 (1983) (group-sequential α spending); I. Waudby-Smith, A. Ramdas, "Estimating
means of bounded random variables by betting", JRSS B 86 (2024); design rules of
``shared/design.md`` §4.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.certify import Certified, Certifier
from dpcheck.core.confirm import (confirm_counts, confirmation_sizes, confirmed_events,
                                  count_outputs, oriented_counts)
from dpcheck.core.executor import chunk_generator
from dpcheck.core.explore import (EXPLORE_CHUNK, POISSON_MIN, Explored, Setup,
                                  exploration_size, explore)
from dpcheck.core.results import AuditResult
from dpcheck.errors import InvalidArgument
from dpcheck.events.event import Candidate
from dpcheck.events.select import select_events
from dpcheck.events.slots import FEW_COUNTS
from dpcheck.internal.rng import child
from dpcheck.mechanism import draw
from dpcheck.stats import cp_lower, cp_upper
from dpcheck.validation import check_epsilon

__all__ = ["PILOT_BUDGETS", "PILOT_ALPHAS", "PILOT_EXPLORE", "MIN_PILOT", "Stage", "pilot_plan",
           "run_pilot", "combined_p_value", "reachable", "budget_projection", "precise_enough",
           "check_stop_within", "keeps_pilots", "pilot_name", "staged", "PROJECTION_LEVEL",
           "REUSE_MAX"]

#: Pilot budgets (outputs per side, exploration and confirmation) as fractions of the audit's
#: exploration size: together they are the exploration size, and every pilot output is reused
#: as exploration data by the final audit.
PILOT_BUDGETS = (0.1, 0.9)
#: Share of α each pilot spends (the final audit spends the rest).
PILOT_ALPHAS = (0.025, 0.1)
#: Share of each pilot's budget it explores on (at least the audit's ``explore_fraction``).
PILOT_EXPLORE = (0.1, 0.3)
#: Smallest pilot budget per side: below it a pilot is skipped.
MIN_PILOT = 2000
#: Largest exploration size per side (of the whole audit) at which the pilots' outputs are kept
#: and become the final stage's exploration sample: one exploration chunk. Above it the pilots
#: run as fixed-budget audits do (chunked, on the executor, bounded memory) and the final
#: stage explores afresh on the budget they left (:func:`run_pilot`'s ``keep``).
REUSE_MAX = EXPLORE_CHUNK
#: One-sided level of the intervals whose favourable ends :func:`reachable` projects.
PROJECTION_LEVEL = 0.05


@dataclass(frozen=True)
class Stage:
    """One stage of a sequential audit: its budget per side, its level, what it certified and
    (the last pilot of an audit with ``stop_within``) what it projects the final stage would
    certify (:func:`budget_projection`)."""

    name: str
    samples: int
    alpha: float
    epsilon_lower: float
    p_value: float
    violation: bool
    reachable: float | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form (``reachable`` only when a projection was made)."""
        out = dataclasses.asdict(self)
        if self.reachable is None:
            del out["reachable"]
        return out


def pilot_plan(samples: int, explore_fraction: float) -> tuple[tuple[int, float, float], ...]:
    """The pilots of an audit of ``samples``: ``(budget per side, share of α, exploration
    fraction)`` for each pilot whose budget is at least :data:`MIN_PILOT`; empty when the
    budget is too small for any pilot. A function of the audit's arguments only, so the
    stages and their levels are fixed before any output is drawn."""
    n_explore = exploration_size(samples, explore_fraction)
    plan = ((int(f * n_explore), a, max(e, explore_fraction))
            for f, a, e in zip(PILOT_BUDGETS, PILOT_ALPHAS, PILOT_EXPLORE))
    return tuple(p for p in plan if p[0] >= MIN_PILOT)


def keeps_pilots(n_explore: int) -> bool:
    """Whether an audit exploring on ``n_explore`` outputs per side keeps its pilots' outputs as
    its final stage's exploration sample (at most :data:`REUSE_MAX`), or runs them as
    fixed-budget audits and explores afresh (:func:`run_pilot`'s ``keep``)."""
    return n_explore <= REUSE_MAX


def staged(result: AuditResult, alpha: float, stages: list[Stage], budget: int,
           spent: int, within: float | None = None) -> AuditResult:
    """The result of the stage that ended a sequential audit of ``budget`` at level ``alpha``
    (with ``stop_within=within``), as the audit's: ``alpha``, the samples per side the stages
    run were given (``spent``: the pilots' budgets, or the whole budget when the final stage
    ran), the weighted-Bonferroni p-value, the stages and ``within``."""
    return dataclasses.replace(
        result, alpha=alpha, samples=spent, p_value=combined_p_value(stages, alpha),
        stages=tuple(stages), budget=budget, stop_within=within)


def pilot_name(index: int, planned: int = len(PILOT_BUDGETS)) -> str:
    """The name of pilot ``index`` of a plan of ``planned`` pilots: its place in
    :data:`PILOT_BUDGETS` (:func:`pilot_plan` drops the small first pilot of small budgets, so
    a lone pilot is "pilot 2", the 9 % one)."""
    return f"pilot {index + 1 + len(PILOT_BUDGETS) - planned}"


def combined_p_value(stages: list[Stage], alpha: float) -> float:
    """Weighted-Bonferroni p-value of the stages run: ``min_k p_k · α / α_k`` (at most 1)."""
    return float(min(1.0, min(s.p_value * alpha / s.alpha for s in stages)))


def reachable(certifier: Certifier, claim: Any, chosen: Sequence[Candidate],
              counts: Sequence[tuple[int, int, int, int]], *, scale: float,
              alpha: float) -> Certified:
    """What a pilot's confirmed events could certify with ``scale`` times its confirmation
    outputs, at level ``alpha``: the certifier run on grown counts ``(n_p·s·p⁺, n_p·s, n_q·s·q⁻,
    n_q·s)`` (rounded), where ``p⁺`` and ``q⁻`` are the favourable ends of the one-sided
    Clopper–Pearson intervals at :data:`PROJECTION_LEVEL` of the pilot's counts — an
    optimistic projection, so that a pilot whose events might still refute the claim or gain
    more than the requested distance does not stop the audit. An event seen fewer than
    :data:`~dpcheck.events.slots.FEW_COUNTS` times on its favoured side is grown at its point
    estimates instead: the interval ends of a handful of counts say nothing (a snapped
    Laplace's grid atoms, 4 against 1, projected 2.96 where the budget certifies 0.99). A
    projection, not a bound: the final stage chooses its own events on a larger exploration
    sample."""
    grown = []
    for k_p, n_p, k_q, n_q in counts:
        big_p, big_q = max(n_p, 1) * scale, max(n_q, 1) * scale
        if k_p < FEW_COUNTS:  # a handful (or never seen): its point estimates, not more
            grown.append((round(k_p * scale), round(big_p), round(k_q * scale), round(big_q)))
            continue
        p_hi = float(cp_upper(k_p, max(n_p, 1), PROJECTION_LEVEL))
        q_lo = float(cp_lower(k_q, max(n_q, 1), PROJECTION_LEVEL))
        grown.append((round(big_p * p_hi), round(big_p), round(big_q * q_lo), round(big_q)))
    return certifier.certify(claim, chosen, grown, alpha)


def budget_projection(setup: Setup, explored: Explored,
                      counts: Sequence[tuple[int, int, int, int]], *, n_final: int,
                      alpha: float) -> float:
    """What a pilot can tell about the ε bound the final stage (``n_final`` confirmation
    outputs per side, level ``alpha``) would certify: the larger of its confirmed events'
    optimistic projection (:func:`reachable`) and the best validation score of a fresh ε
    selection on its exploration sample sized for ``n_final`` (rarer events with larger
    ratios pay at the final size that did not at the pilot's), among its candidates seen at
    least :data:`~dpcheck.events.slots.FEW_COUNTS` times on their favoured side. Blind to
    events the pilot's exploration did not see (``benchmarks/README.md``, stop 43)."""
    scale = n_final / max(explored.n_confirm, 1)
    mine = reachable(setup.certifier, setup.claim, explored.chosen, counts, scale=scale,
                     alpha=alpha).epsilon_lower
    fz = explored.featurizer
    wanted = setup.certifier.selection(setup.claim)
    k = setup.candidates
    fresh, _ = select_events(fz(explored.out_d), fz(explored.out_dp), fz.features,
                             n_confirm=n_final, alpha_each=alpha / (2 * k),
                             delta=wanted.delta, k=k, max_atoms=setup.max_atoms,
                             ratio=wanted.poissonize and n_final >= POISSON_MIN)
    # a candidate seen fewer than FEW_COUNTS times on its favoured side is a guess (its log
    # ratio is uncertain by more than ±0.2 per side), not a projection
    return max([mine, *(c.score for c in fresh if c.explore_p >= FEW_COUNTS)])


def check_stop_within(within: Any, claim: Any) -> float:
    """``stop_within`` validated against the audited ``claim``: a number > 0 (in ε), for a
    :class:`~dpcheck.PureDP` or :class:`~dpcheck.ApproxDP` claim (the rule compares ε bounds
    with the claimed ε; a curve claim's parameter is not an ε), and at most half the claimed ε
    (:func:`precise_enough` needs a bound ≥ τ that stays τ below the claimed ε, so a larger τ
    could never stop the audit)."""
    within = check_epsilon(within, "stop_within")
    if not isinstance(claim, (PureDP, ApproxDP)):
        raise InvalidArgument(
            f"stop_within={within!r} needs a PureDP or ApproxDP claim: it compares ε bounds "
            f"with the claimed ε, and {type(claim).__name__} is a curve claim")
    if within > claim.epsilon / 2:
        raise InvalidArgument(
            f"stop_within={within!r} must be <= epsilon/2={claim.epsilon / 2!r}: the audit "
            "stops early only with a bound of at least stop_within that stays stop_within "
            "below the claimed epsilon")
    return within


def precise_enough(bound: float, projected: float, claimed: float, within: float) -> bool:
    """Whether a pilot that certified ``bound`` (and did not refute the claim of ε =
    ``claimed``) may end an audit with ``stop_within=within``: the pilot found evidence
    (``bound ≥ within``), and the projection of the final stage (:func:`budget_projection`)
    is at most ``within`` above ``bound`` and at least ``within`` below the claimed ε (so the
    whole budget would not refute the claim either, as far as the pilot can tell). Stopping
    on any rule of completed stages keeps every bound valid (module docstring)."""
    return bool(bound >= within and projected + within <= claimed
                and bound >= projected - within)


def run_pilot(
    setup: Setup, d: Any, d_prime: Any, *, budget: int, index: int, alpha: float,
    explore_fraction: float, prior: tuple[NDArray[Any], NDArray[Any]] | None,
    keep: bool = True, name: str | None = None,
) -> tuple[Explored, Certified, tuple[NDArray[Any], NDArray[Any]] | None,
           list[tuple[int, int, int, int]]]:
    """Pilot ``index``: a complete audit of ``budget`` outputs per side at level ``alpha``,
    exploring on ``explore_fraction`` of them, on the seed streams ``child(seed, "pilot",
    index)`` (``name``: its name in progress reports, default :func:`pilot_name`). ``prior``:
    earlier pilots' outputs, used as extra exploration data. Returns the
    exploration, the certified bounds, every output this pilot saw (the prior, its exploration
    and its confirmation outputs) for the next stage's exploration, and the oriented counts its
    bounds came from.

    ``keep=False`` (audits whose exploration exceeds :data:`REUSE_MAX`): nothing is kept for the
    next stage (``None`` instead of the outputs) and the pilot runs as a fixed-budget audit
    does — its exploration chunked on the executor, its confirmation counted chunk by chunk
    there (:func:`dpcheck.core.confirm.confirm_counts`) — so memory stays bounded and the
    workers do the drawing. ``keep=True``: the pilot runs in this process, its confirmation in
    one draw per side (at most :data:`REUSE_MAX` outputs)."""
    seq = child(setup.seed_seq, "pilot", index)
    stage = dataclasses.replace(setup, alpha=alpha, seed_seq=seq, checkpoint=None,
                                **({"executor": None} if keep else {}))
    n_explore = exploration_size(budget, explore_fraction)
    explored = explore(stage, d, d_prime, n_explore=n_explore, n_confirm=budget - n_explore,
                       seed_seq=seq, prior=prior)
    sizes = confirmation_sizes(explored)
    out_d = explored.out_d
    shape, kind = out_d.shape[1:], out_d.dtype.kind
    rep, name = setup.progress, name or pilot_name(index)
    outputs: tuple[NDArray[Any], NDArray[Any]] | None = None
    if keep:
        events = confirmed_events(explored.chosen)
        seen, counts = [], np.zeros((len(events), 2), dtype=np.int64)
        for side, (data, size) in enumerate(zip((d, d_prime), sizes)):
            out = draw(setup.sampler, data, size, chunk_generator(seq, "confirm", side, 0),
                       arg="mechanism", trailing=shape, kind=kind)
            counts[:, side] = count_outputs(out, explored.featurizer, events, seq, side, 0)
            seen.append(out)
            if rep is not None:
                rep.advance(size, f"{name} confirm")
        pairs = [(int(a), int(b)) for a, b in counts]
        # Poissonized confirmation sizes differ between the sides: exploration wants equal ones
        n = min(out_d.shape[0] + seen[0].shape[0], explored.out_dp.shape[0] + seen[1].shape[0])
        outputs = (np.concatenate([out_d, seen[0]])[:n],
                   np.concatenate([explored.out_dp, seen[1]])[:n])
    else:
        done = 0 if rep is None else rep.done
        pairs = confirm_counts(
            setup.sampler, d, d_prime, explored.featurizer, explored.chosen, sizes, seq,
            (shape, kind), None if rep is None else _pilot_progress(rep, name), done,
            done + sum(sizes), setup.executor)
    oriented = oriented_counts(explored.chosen, pairs, sizes)
    certified = setup.certifier.certify(setup.claim, explored.chosen, oriented, alpha)
    return explored, certified, outputs, oriented


def _pilot_progress(rep: Any, name: str) -> Any:
    """A :func:`~dpcheck.core.confirm.confirm_counts` progress callback for the pilot ``name``."""
    def progress(done: int, total: int) -> None:
        rep.at(done, f"{name} confirm")
    return progress
