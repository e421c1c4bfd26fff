"""``audit_pairs()``: audit one claim on a list of neighbouring pairs, α split built in.

A claim is refuted if it fails on *any* neighbouring pair. Two ways to spend a budget of
``samples`` outputs per side *per pair* (the same number of mechanism calls either way):

* ``confirm="each"``: every pair is audited (explored and confirmed) at ``alpha / len(pairs)``
  (Bonferroni) on its own seed stream; the joint statement — every reported bound holds —
  keeps probability ≥ 1 − alpha, and the result is the largest bound over the pairs.
* ``confirm="best"``: every pair is *explored* as above (same streams, same exploration
  outputs, same chosen events); then each pair's chosen events are counted on a fresh *pilot*
  sample of ``explore`` outputs per side (a stream of its own); the :data:`REFINE` pairs whose
  pilot counts project the largest final bound are *re-explored* — each its exploration
  outputs plus fresh ones, up to ``explore_fraction`` of the budget left to one pair (and at
  most :data:`MAX_EXPLORE_BYTES` of outputs per side), and its events chosen again on them —
  and only the one whose re-chosen events project the largest bound on the validation half of
  its re-exploration is *confirmed*, on the rest of the pooled budget
  ``len(pairs)·(samples − 2·explore)`` per side and at the full ``alpha``. Valid because the
  choice of the pair is a function of exploration and pilot outputs only, which are never
  counted again (design §4 rule 1), exactly as the choice of an event is. With ``m`` pairs the
  confirmed counts are about ``m`` times larger (the standard error of the log-ratio shrinks
  by ``√m``) and no Bonferroni factor ``m`` is paid; the price is that a pair not chosen is
  not certified at all. With one pair it is ``confirm="each"``. The confirmed pair's
  ``samples`` are its own exploration (re-exploration included) and the pooled confirmation;
  the rest of the ``2·samples·len(pairs)`` calls (the other pairs' explorations, every pilot)
  chose the pair and belong to no result.

Why a pilot: the validation scores that rank events inside a pair extrapolate rare events to
the confirmation size, and their maximum over pairs is a winner's curse (an event seen 4 times
under D and never under D′ projects a bound near 2 on SVT3, whose true ε is 0.5). The events are
chosen for the pair's own confirmation size, not the pooled one: projected to the pooled size,
selection favours rare events whose exploration counts are too few to trust.

Why re-explore: the learned scores of vector outputs (:mod:`dpcheck.features.learned`, the
joint cells of :mod:`dpcheck.features.naive_bayes`) need more rows than one pair's exploration
share; the chosen pair then gets the exploration a single audit of its pooled budget would have.
Why two: the pilot ranks the events a pair chose on its small exploration, and how much a pair
gains from the re-exploration differs between pairs. While the pairs are explored only the
explorations of the :data:`REFINE` leaders so far are kept beside the current one; memory holds
two re-explorations at most, whatever the number of pairs.

Why settle: the re-explorations' validation scores are mild (rare-but-real events must not be
shrunk away), so an atom seen 3 times under one dataset and never under the other projects a
large bound (DP-Sniper's SVT34Parallel, one tenth of its calls, seed 2: 1.06 against a
half-line's 0.30, and the atom's pair certified 0.14). When the refined leader leads only by
events seen fewer than :data:`HANDFUL` times in its validation half (without them another pair
would lead: :func:`_contested`), each re-explored pair's events are counted on a second pilot
of fresh outputs (``explore`` per side per pair, taken from the confirmation) and the pilot
score chooses. A second pilot on every audit costs every audit its outputs (median −5.5 % on
the zoo at 10⁵); one whenever the leader's best event rests on a handful ran on all of RAPPOR's
audits for nothing; stronger shrinkage of the validation scores ranks real rare events below
common ones.

The measurements behind these choices are in ``benchmarks/README.md``.

References
----------
``shared/design.md`` §4 (all choices inside the α budget); DP-Sniper's DD-Search and StatDP
both audit lists of input patterns (``shared/research/anchors-auditing.md`` §2).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scipy.stats import norm

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.audit import audit, finish
from dpcheck.core.certify import family_levels
from dpcheck.core.confirm import confirm_counts, oriented_counts
from dpcheck.core.explore import exploration_size, explore, setup_audit
from dpcheck.core.results import AuditResult
from dpcheck.errors import InvalidArgument, PrivacyViolation
from dpcheck.internal.progress import pair_progress, reporter
from dpcheck.internal.rng import child
from dpcheck.stats import ratio_lower
from dpcheck.validation import check_alpha, check_int, check_seed

__all__ = ["PairsResult", "audit_pairs"]


@dataclass(frozen=True)
class PairsResult:
    """Outcome of :func:`audit_pairs`: one :class:`~dpcheck.AuditResult` per pair (``None``
    for the pairs not confirmed when ``confirm == "best"``), the index of the pair with the
    largest bound, and that bound. ``scores`` (``confirm="best"``; ``None`` for ``"each"``):
    each pair's best bound projected by its pilot counts; the :data:`REFINE` pairs leading on
    them are re-explored and ``refined`` holds their best projected bound on the validation
    half of the re-exploration (``None`` for the others; ``refined`` is ``None`` when nothing
    was re-explored); the confirmed pair is the one with the largest refined score, or the
    largest pilot score when nothing was re-explored. ``settled``: when the refined leader led
    only by events seen a handful of times in its validation half, each re-explored pair's best
    bound projected by the counts of a second pilot, which then chose the pair (``None``
    otherwise)."""

    results: tuple[AuditResult | None, ...]
    best: int
    alpha: float
    confirm: Literal["each", "best"] = "each"
    scores: tuple[float, ...] | None = None
    refined: tuple[float | None, ...] | None = None
    settled: tuple[float | None, ...] | None = None

    @property
    def confirmed(self) -> tuple[AuditResult, ...]:
        """The audits that were confirmed (all pairs, or the chosen one)."""
        return tuple(r for r in self.results if r is not None)

    @property
    def violation(self) -> bool:
        """The claim is refuted on some pair (family level ``alpha``)."""
        return any(r.violation for r in self.confirmed)

    @property
    def epsilon_lower(self) -> float:
        """The largest lower bound over the pairs (all hold jointly with prob. ≥ 1 − alpha)."""
        return self.audit.epsilon_lower

    @property
    def audit(self) -> AuditResult:
        """The audit of the pair with the largest bound."""
        result = self.results[self.best]
        assert result is not None
        return result

    @property
    def p_value(self) -> float:
        """Bonferroni p-value (over the confirmed audits) of "the claim holds on every pair"."""
        done = self.confirmed
        return min(1.0, len(done) * min(r.p_value for r in done))

    def __repr__(self) -> str:
        """One line: the verdict over the pairs and the chosen pair's bound."""
        return (f"PairsResult(violation={self.violation}, epsilon_lower="
                f"{self.epsilon_lower:.4g}, p_value={self.p_value:.3g}, best={self.best}, "
                f"pairs={len(self.results)}, confirm={self.confirm!r})")

    def raise_if_violation(self) -> PairsResult:
        """Raise :class:`~dpcheck.PrivacyViolation` (carrying the worst audit) if refuted."""
        if self.violation:
            worst = max(self.confirmed, key=lambda r: (r.violation, r.epsilon_lower))
            raise PrivacyViolation(worst.summary(), worst)
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record."""
        return {"alpha": self.alpha, "violation": self.violation,
                "epsilon_lower": self.epsilon_lower, "best": self.best,
                "p_value": self.p_value, "confirm": self.confirm,
                "scores": None if self.scores is None else list(self.scores),
                "refined": None if self.refined is None else list(self.refined),
                "settled": None if self.settled is None else list(self.settled),
                "results": [None if r is None else r.to_dict() for r in self.results]}


def audit_pairs(
    mechanism: Any,
    pairs: Sequence[tuple[Any, Any]],
    claim: PureDP | ApproxDP,
    *,
    alpha: float = 0.05,
    seed: int | Any = None,
    confirm: Literal["each", "best"] = "each",
    **kwargs: Any,
) -> PairsResult:
    """Audit ``claim`` on a list of pairs: each at ``alpha / len(pairs)``, or only the best.

    Parameters
    ----------
    mechanism, claim
        As for :func:`dpcheck.audit`.
    pairs
        A non-empty sequence of ``(d, d_prime)`` pairs.
    alpha
        Family level: all the reported bounds hold jointly with probability ≥ 1 − alpha.
    seed
        Root seed; pair ``i`` is audited (explored) on the child stream ``("pair", i)``.
    confirm
        ``"each"``: audit every pair at ``alpha / len(pairs)``. ``"best"``: explore every pair,
        confirm only the one with the largest projected bound, on the pooled confirmation
        budget and at ``alpha`` (module docstring). Both cost ``2·samples·len(pairs)`` calls.
    **kwargs
        Passed to :func:`dpcheck.audit` (``samples``, ``relation``, ``features``,
        ``executor``, …).

    Returns
    -------
    PairsResult

    Examples
    --------
    >>> import numpy as np, dpcheck
    >>> def noisy_max_index(data, size, rng):
    ...     return np.argmax(np.asarray(data) + rng.laplace(0, 2.0, (size, len(data))), axis=1)
    >>> r = dpcheck.audit_pairs(noisy_max_index, [([1, 0], [0, 1]), ([1, 1], [0, 1])],
    ...                         dpcheck.PureDP(1.0), samples=50_000, seed=0)
    >>> r.violation, len(r.results)
    (False, 2)
    """
    alpha = check_alpha(alpha)
    root = check_seed(seed)
    try:
        pairs = list(pairs)
    except TypeError as exc:
        raise InvalidArgument(f"pairs={pairs!r} must be a sequence of (d, d_prime)") from exc
    if not pairs:
        raise InvalidArgument("pairs=[] must contain at least one (d, d_prime) pair")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgument(f"pairs[{i}]={pair!r} must be a (d, d_prime) pair")
        if pair[0] is None or pair[1] is None:
            raise InvalidArgument(f"pairs[{i}]={pair!r} must be a pair of datasets (not None)")
    if confirm not in ("each", "best"):
        raise InvalidArgument(f"confirm={confirm!r} must be 'each' or 'best'")
    unknown = sorted(set(kwargs) - set(_AUDIT_OPTIONS))
    if unknown:
        raise InvalidArgument(f"{unknown[0]}={kwargs[unknown[0]]!r} is not an option of audit")
    if confirm == "best":
        return _confirm_best(mechanism, pairs, claim, alpha, root, kwargs)
    level = alpha / len(pairs)
    overall = reporter(kwargs.pop("progress", None))
    results = tuple(audit(mechanism, d, d_prime, claim, alpha=level,
                          seed=child(root, "pair", i), progress=pair_progress(overall, i, m),
                          **kwargs)
                    for i, (d, d_prime), m in zip(range(len(pairs)), pairs,
                                                   [len(pairs)] * len(pairs)))
    best = max(range(len(results)), key=lambda i: results[i].epsilon_lower)
    return PairsResult(results, best, alpha)


def _confirm_best(mechanism: Any, pairs: list[Any], claim: Any, alpha: float, root: Any,
                  kwargs: dict[str, Any]) -> PairsResult:
    """``confirm="best"``: explore every pair, confirm the best on the pooled budget."""
    start = time.perf_counter()
    options = {**_AUDIT_OPTIONS, **kwargs, "alpha": alpha, "seed": root}
    if options.pop("sequential") is not False:
        raise InvalidArgument(f"sequential={kwargs['sequential']!r} is not supported with "
                              "confirm='best' (it confirms one pair on the pooled budget); use "
                              "confirm='each' for sequential audits of every pair")
    if options.pop("stop_within") is not None:
        raise InvalidArgument(f"stop_within={kwargs['stop_within']!r} is not supported with "
                              "confirm='best' (it has no pilots); use confirm='each' with "
                              "sequential=True")
    samples = check_int(options.pop("samples"), "samples", minimum=2)
    setup = setup_audit(mechanism, claim, samples=samples, **options)
    if setup.relation is not None:
        for d, d_prime in pairs:
            setup.relation.check(d, d_prime)
    m = len(pairs)
    n_explore = exploration_size(samples, setup.explore_fraction)
    n_pilot = 0 if m == 1 else min(n_explore, (samples - n_explore) // 2)
    pooled = m * (samples - n_explore - n_pilot)
    total = 2 * samples * m
    rep = setup.progress
    if rep is not None:
        rep.start(total)
    scores: list[float] = []
    # only the explorations of the REFINE pairs leading so far are kept beside the current one
    leading: list[tuple[int, Any]] = []
    for i, (d, d_prime) in enumerate(pairs):
        if rep is not None:
            rep.context = f"pair {i + 1}/{m}"
        # events chosen as the pair's own audit would choose them (projected to its own
        # confirmation size), then confirmed on the pooled size if the pair wins
        e = explore(setup, d, d_prime, n_explore=n_explore, n_confirm=samples - n_explore,
                    seed_seq=child(root, "pair", i))
        e = dataclasses.replace(e, n_confirm=pooled)
        scores.append(max(_pilot_scores(setup, e, n_pilot, pooled)) if m > 1 else 0.0)
        leading.append((i, e))
        del e
        # a stable sort: of equal scores the first pair leads
        leading = sorted(leading, key=lambda t: -scores[t[0]])[:REFINE]
        if rep is not None:
            rep.at(2 * (n_explore + n_pilot) * (i + 1), "pilot")
    done = 2 * (n_explore + n_pilot) * m
    # Re-explore the leading pairs on explore_fraction of the budget left to one pair: its
    # exploration outputs plus fresh ones (none when its exploration is already that large,
    # e.g. at budgets where the exploration floor of 1000 outputs dominates), at most
    # MAX_EXPLORE_BYTES of outputs per side; keep the one whose re-chosen events project the
    # largest bound on their validation half.
    n_more = 0
    if m > 1:
        row = max(1, leading[0][1].out_d[:1].nbytes)
        n_more = min(round(setup.explore_fraction * (n_explore + pooled)),
                     max(n_explore, MAX_EXPLORE_BYTES // row)) - n_explore
        # ... and never more than half the pooled budget for all of them (as a single audit
        # explores on at most half its budget): at explore_fraction ≥ 0.5 two re-explorations
        # of that share would take more than the whole pooled confirmation
        n_more = min(n_more, (pooled - pooled // 2) // len(leading))
    best, chosen = leading[0]
    refined: list[float | None] = [None] * m
    settled: list[float | None] | None = None
    if n_more > 0:
        n_confirm = pooled - n_more * len(leading)
        again: list[tuple[int, Any]] = []
        for i, e in leading:
            if rep is not None:
                rep.context = f"pair {i + 1}/{m}, re-explored"
            e = explore(setup, e.d, e.d_prime, n_explore=n_more, n_confirm=n_confirm,
                        seed_seq=e.seed_seq, prior=(e.out_d, e.out_dp), stream="explore-chosen")
            refined[i] = e.score
            done += 2 * n_more
            if rep is not None:
                rep.at(done, "select")
            again.append((i, e))
        leading = []  # the first explorations are not needed by the confirmation
        # the largest refined score (the first of equal scores) ...
        best, chosen = max(again, key=lambda t: t[1].score)
        n_settle = n_pilot if _contested(again, best) else 0
        if n_settle and n_confirm >= 4 * n_settle * len(again):
            # ... unless its lead rests on a handful of validation counts: then each
            # re-explored pair's events are counted on fresh outputs and the pilot score decides
            n_confirm -= n_settle * len(again)
            pilot = {i: max(_pilot_scores(setup, e, n_settle, n_confirm, "settle"))
                     for i, e in again}
            settled = [pilot.get(i) for i in range(m)]
            done += 2 * n_settle * len(again)
            if rep is not None:
                rep.at(done, "settle")
            # of equal pilot scores the refined leader stays
            best, chosen = max(again, key=lambda t: (pilot[t[0]], t[0] == best))
            chosen = dataclasses.replace(chosen, n_confirm=n_confirm)
        again = []
    if rep is not None:
        rep.context = f"pair {best + 1}/{m}"
    result = finish(setup, chosen, start=start, done=done, total=total)
    if rep is not None:
        rep.context = ""
    results = tuple(result if i == best else None for i in range(len(pairs)))
    return PairsResult(results, best, alpha, "best", tuple(scores),
                       tuple(refined) if n_more > 0 else None,
                       None if settled is None else tuple(settled))


#: The keyword options of :func:`dpcheck.audit` and their defaults (``**kwargs`` must be among
#: them, whichever ``confirm``).
_AUDIT_OPTIONS = {name: p.default for name, p in inspect.signature(audit).parameters.items()
                  if p.kind is inspect.Parameter.KEYWORD_ONLY}

#: Pairs leading on their pilot scores that are re-explored before one is confirmed (module
#: docstring, "Why two").
REFINE = 2

#: The chosen pair's re-exploration keeps at most this many bytes of outputs per side (a
#: 20-coordinate float64 vector: 6.7·10⁶ rows), so an audit at 10⁸ per side per pair fits in
#: the memory of a 24 GB machine (``benchmarks/README.md``).
MAX_EXPLORE_BYTES = 1 << 30

#: A refined leader that leads only by events seen fewer times than this (on their favoured
#: side of the validation half of its re-exploration) is chosen again on fresh pilot counts
#: (module docstring, "Why settle"; :func:`_contested`).
HANDFUL = 10

#: Pilot counts certify each candidate at this one-sided level (about one standard error).
PILOT_LEVEL = 0.16


def _contested(again: list[tuple[int, Any]], best: int) -> bool:
    """Whether the refined leader ``best`` leads only by events seen fewer than
    :data:`HANDFUL` times on their favoured side of the validation half: without them
    (each pair's best score over its other events) another re-explored pair would lead."""
    firm = {i: max((c.score for c in e.chosen if c.explore_p >= HANDFUL), default=-math.inf)
            for i, e in again}
    return any(firm[i] > firm[best] for i, _ in again)


def _pilot_scores(setup: Any, explored: Any, n_pilot: int, n_final: int,
                  stream: str = "pilot") -> list[float]:
    """Count ``explored``'s events on ``n_pilot`` fresh outputs per side (the stream
    ``stream`` of the pair's seed sequence)
    and return, per event, the bound it projects at the final confirmation size: the log-ratio
    certified by the pilot counts at :data:`PILOT_LEVEL` minus the one-sided
    ``z_{alpha/k}`` standard errors the final counts will cost (``-inf`` without evidence).
    All ``k`` events of the chosen pair are confirmed (keeping only the best by pilot score
    saves Bonferroni terms but loses the worst case; ``benchmarks/README.md``).
    """
    chosen = explored.chosen
    shape = (explored.out_d.shape[1:], explored.out_d.dtype.kind)
    counts = confirm_counts(setup.sampler, explored.d, explored.d_prime, explored.featurizer,
                            chosen, (n_pilot, n_pilot), child(explored.seed_seq, stream), shape,
                            None, 0, 0)
    z = float(norm.isf(min(family_levels(chosen, setup.alpha))))
    out = []
    for k_p, _, k_q, _ in oriented_counts(chosen, counts, (n_pilot, n_pilot)):
        lo = ratio_lower(k_p, k_q, alpha=PILOT_LEVEL)
        if lo <= 0:  # k_p = 0: no evidence either way
            out.append(-math.inf)
            continue
        # (a support mismatch, k_q = 0, keeps a finite and large score)
        se = math.sqrt((1.0 / k_p + 1.0 / max(k_q, 0.5)) * n_pilot / n_final)
        out.append(math.log(lo) - z * se)
    return out
