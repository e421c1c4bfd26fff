"""``audit()``: explore → confirm, the statistically valid core of dpcheck.

1. **Explore.** Draw ``explore_samples`` outputs from M(D) and M(D′) on their own streams, map
   them to features and score every candidate (event, direction) by the bound it would project
   (:mod:`dpcheck.events`). Keep the ``candidates`` best distinct ones. For an ``ApproxDP``
   claim also keep the event with the best projected δ lower bound ``p_lo − e^ε q_hi`` at the
   claimed ε, if it is new and expected to certify a positive δ: the ε ranking favours rare
   events with a large ratio, while δ(ε) is attained by the common likelihood-ratio event
   (subsampled Gaussian at its exact (1, δ), 10⁶ per side, seeds 0–7: mean ``delta_lower / δ``
   0.43 → 0.58; tests/test_delta_lower.py).
2. **Confirm.** Draw ``confirm_samples`` fresh outputs per side (in chunks of
   :data:`CHUNK`, streaming counts), count each kept event, and certify each with one-sided
   Clopper–Pearson bounds at ``alpha / (2·candidates)`` per binomial — Bonferroni over the
   confirmed candidates and a union bound over the two sides, so *all* reported bounds hold
   simultaneously with probability ≥ 1 − alpha whatever was selected during exploration.

   **Pure claims** (``PureDP``, at least :data:`POISSON_MIN` confirmation outputs) draw
   ``Poisson(n − 3√n)`` confirmation outputs per side instead of exactly ``n`` (the sizes come
   from their own stream, drawn before any confirmation output). Then an event's counts are
   independent Poisson variables, and given their total the count under the numerator side is
   ``Binomial(total, p/(p+q))`` exactly, so one Clopper–Pearson bound at ``alpha/candidates``
   bounds ``p/q`` (:func:`dpcheck.stats.ratio_lower`) without the union bound over two
   binomials. Which statistic certifies a candidate (``"ratio"`` or ``"union"``, the latter with
   the realised sizes as binomial trial counts, valid conditionally on them) is decided on the
   exploration sample by their projected bounds; the conditional test is sharper for rare
   events (by ≈ 1/3 of the gap for p, q ≪ 1), the union for probabilities near 1.
   Poissonized audits also confirm **paired events** (:mod:`dpcheck.paired`): an upper and a
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
import inspect
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .adapters import records_warnings
from ._validation import check_alpha, check_int, check_probability, check_seed
from .checkpoint import Checkpoint, fingerprint, stable_name
from .claims import ApproxDP, PureDP
from .errors import GlobalRandomStateWarning, InvalidArgument
from .events import MAX_ATOMS, Candidate, select_events
from . import confirm as _confirmation
from .confirm import CHUNK, confirm_counts, oriented_counts
from .executor import check_executor
from .features import FeatureMap, Featurizer
from .mechanism import as_sampler, draw, mechanism_name, pmf_of
from .results import AuditResult, Witness
from .rng import generator
from .stats import event_bound, poisson_size, ratio_lower, ratio_p_value, violation_p_value
from .ties import randomise_ties

__all__ = ["audit", "exploration_size", "CHUNK"]

_MIN_EXPLORE = 1000
#: Pure claims with at least this many confirmation outputs per side Poissonize the
#: confirmation sizes (enables the conditional ratio test).
POISSON_MIN = 400


def exploration_size(samples: int, fraction: float = 0.1) -> int:
    """Outputs per side used for selection: ``fraction·samples``, but at least
    ``min(1000, samples // 2)`` and at most ``samples // 2``."""
    floor = min(_MIN_EXPLORE, samples // 2)
    return int(min(samples // 2, max(floor, round(fraction * samples))))


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
    progress: Callable[[int, int], None] | None = None,
    float_features: bool = True,
    executor: Any = None,
    checkpoint: str | os.PathLike[str] | None = None,
    ties: bool = False,
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
        :class:`~dpcheck.PureDP` or :class:`~dpcheck.ApproxDP`.
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
        last call is ``progress(total, total)``).
    float_features
        Scalar float outputs: also build events on the bits of their float64 representation
        (:mod:`dpcheck.float_features`), which expose floating-point holes such as
        ``value + noise`` computed in float64 (Mironov 2012). ``False`` looks at the values only
        — the idealised real-valued mechanism's view.
    executor
        ``None`` (draw in this process), a :class:`concurrent.futures.Executor` or a Dask
        ``distributed.Client``: the confirmation chunks (:data:`CHUNK` outputs each, with their
        own seeds) are drawn and counted on its workers and only the counts come back.
        Exploration stays in this process. The result does not depend on the executor or on
        the number of workers. The mechanism, datasets and feature map must be picklable for
        process-based executors.
    checkpoint
        ``None`` or a file path: after every finished confirmation chunk the counts so far are
        saved there (JSON, atomically); rerunning the same audit with the same path draws only
        the missing chunks and gives the same result bit for bit (:mod:`dpcheck.checkpoint`).
        A checkpoint written by an audit with other arguments is refused. The file is kept
        after the audit (a rerun then only recomputes exploration).

    ties
        Randomise the boundary atom of chosen half-line events on discrete features
        (:mod:`dpcheck.ties`; DP-Sniper's randomised threshold). Off by default: on the
        DP-Sniper mechanisms at 10⁶ samples per side it changed no bound by more than noise
        (the bound is flat in the event's mass near its optimum, and choosing γ adds selection
        noise).

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
    ...                   samples=200_000, seed=1)
    >>> r.violation, 0.85 < r.epsilon_lower <= 1.0
    (False, True)
    """
    start = time.perf_counter()
    samples = check_int(samples, "samples", minimum=2)
    setup = _setup(
        mechanism, claim, samples=samples, alpha=alpha, seed=seed, relation=relation,
        features=features, candidates=candidates, explore_fraction=explore_fraction,
        max_atoms=max_atoms, progress=progress, float_features=float_features,
        executor=executor, checkpoint=checkpoint, ties=ties)
    if relation is not None:
        relation.check(d, d_prime)
    n_explore = exploration_size(samples, setup.explore_fraction)
    explored = explore(setup, d, d_prime, n_explore=n_explore, n_confirm=samples - n_explore)
    return finish(setup, explored, start=start)


@dataclass(frozen=True, eq=False)
class Setup:
    """The validated arguments of one audit (shared by the pairs of :func:`dpcheck.audit_pairs`)."""

    mechanism: Any
    sampler: Any
    claim: PureDP | ApproxDP
    alpha: float
    seed_seq: np.random.SeedSequence
    relation: Any
    features: FeatureMap | None
    candidates: int
    explore_fraction: float
    max_atoms: int
    progress: Callable[[int, int], None] | None
    float_features: bool
    executor: Any
    checkpoint: str | os.PathLike[str] | None
    ties: bool


@dataclass(frozen=True, eq=False)
class Explored:
    """One pair after exploration: the events chosen for ``n_confirm`` confirmation outputs per
    side, and ``score``, the best of their projected bounds on the validation half."""

    d: Any
    d_prime: Any
    seed_seq: np.random.SeedSequence
    out_d: NDArray[Any]
    out_dp: NDArray[Any]
    featurizer: Featurizer
    chosen: list[Candidate]
    scored: int
    n_confirm: int
    poisson: bool

    @property
    def score(self) -> float:
        return max(c.score for c in self.chosen)


def _setup(
    mechanism: Any, claim: Any, *, samples: Any, alpha: Any, seed: Any, relation: Any,
    features: Any, candidates: Any, explore_fraction: Any, max_atoms: Any, progress: Any,
    float_features: Any, executor: Any, checkpoint: Any, ties: Any,
) -> Setup:
    """Validate the arguments of :func:`audit` (everything but the pair itself)."""
    if not isinstance(claim, (PureDP, ApproxDP)):
        raise InvalidArgument(f"claim={claim!r} must be a dpcheck.PureDP or dpcheck.ApproxDP")
    check_int(samples, "samples", minimum=2)
    alpha = check_alpha(alpha)
    seed_seq = check_seed(seed)
    candidates = check_int(candidates, "candidates", minimum=1)
    max_atoms = check_int(max_atoms, "max_atoms", minimum=1)
    explore_fraction = check_probability(explore_fraction, "explore_fraction")
    if not 0.0 < explore_fraction < 1.0:
        raise InvalidArgument(f"explore_fraction={explore_fraction!r} must be in (0, 1)")
    if progress is not None:
        try:
            inspect.signature(progress).bind(0, 0)
        except TypeError as exc:
            raise InvalidArgument(
                f"progress={progress!r} must be callable as progress(done, total) or None"
            ) from exc
        except ValueError:  # builtins without a signature: trust them
            pass
    if relation is not None and (
            isinstance(relation, type) or not callable(getattr(relation, "check", None))):
        raise InvalidArgument(f"relation={relation!r} must be a dpcheck neighbour relation")
    executor = check_executor(executor)
    sampler = as_sampler(mechanism)
    if not isinstance(float_features, bool):
        raise InvalidArgument(f"float_features={float_features!r} must be True or False")
    if not isinstance(ties, bool):
        raise InvalidArgument(f"ties={ties!r} must be True or False")
    return Setup(mechanism, sampler, claim, alpha, seed_seq, relation, features, candidates,
                 explore_fraction, max_atoms, progress, float_features, executor, checkpoint,
                 ties)


def explore(
    setup: Setup, d: Any, d_prime: Any, *, n_explore: int, n_confirm: int,
    seed_seq: np.random.SeedSequence | None = None,
    prior: tuple[NDArray[Any], NDArray[Any]] | None = None, stream: str = "explore",
) -> Explored:
    """Draw ``n_explore`` outputs per side and choose the events to confirm on ``n_confirm``
    fresh outputs per side (design §4 rule 1: nothing drawn here is counted again).

    ``prior``: outputs of D and D′ from earlier exploration (never counted for confirmation),
    put in front of the ``n_explore`` new ones; ``stream`` names the seed stream of the new
    ones (distinct names give independent outputs)."""
    seed_seq = setup.seed_seq if seed_seq is None else seed_seq
    mechanism, sampler, claim = setup.mechanism, setup.sampler, setup.claim
    trailing = kind = None
    if prior is not None:
        trailing, kind = prior[0].shape[1:], prior[0].dtype.kind
    before = _global_state()
    out_d = draw(sampler, d, n_explore, generator(seed_seq, stream, 0), arg="mechanism",
                 trailing=trailing, kind=kind)
    if _global_state() != before:
        warnings.warn(
            f"{mechanism_name(mechanism)} draws from numpy's global np.random state instead of "
            "the rng it is given: the audit's seed does not determine its outputs, so results "
            "cannot be replayed", GlobalRandomStateWarning, stacklevel=3)
    out_dp = draw(sampler, d_prime, n_explore, generator(seed_seq, stream, 1),
                  arg="mechanism", trailing=out_d.shape[1:], kind=out_d.dtype.kind)
    if prior is not None:
        out_d = np.concatenate([prior[0], out_d])
        out_dp = np.concatenate([prior[1], out_dp])
    featurizer = Featurizer.build(out_d, setup.features, out_dp,
                                  float_bits=setup.float_features)
    poisson = isinstance(claim, PureDP) and n_confirm >= POISSON_MIN
    cols_d, cols_dp = featurizer(out_d), featurizer(out_dp)
    k = setup.candidates
    chosen, scored = select_events(
        cols_d, cols_dp, featurizer.features, n_confirm=n_confirm,
        alpha_each=setup.alpha / (2 * k), delta=claim.delta, k=k,
        max_atoms=setup.max_atoms, ratio=poisson,
        delta_epsilon=claim.epsilon if isinstance(claim, ApproxDP) else None,
    )
    if setup.ties:  # randomised boundary atoms (dpcheck.ties), chosen on the exploration sample
        chosen = randomise_ties(chosen, cols_d, cols_dp, n_confirm=n_confirm,
                                alpha_each=setup.alpha / (2 * len(chosen)), delta=claim.delta)
    chosen = _label_rows(chosen, featurizer, out_d, out_dp)
    return Explored(d, d_prime, seed_seq, out_d, out_dp, featurizer, chosen, scored, n_confirm,
                    poisson)


def finish(
    setup: Setup, explored: Explored, *, start: float, done: int | None = None,
    total: int | None = None,
) -> AuditResult:
    """Confirm the events of ``explored`` on fresh samples and certify them (steps 2 and 3 of
    the module docstring). ``done``/``total``: progress already made and planned (both sides;
    default: this pair's exploration and its whole budget)."""
    explore_seconds = time.perf_counter() - start  # everything before confirmation
    claim, alpha, mechanism = setup.claim, setup.alpha, setup.mechanism
    d, d_prime, seed_seq, chosen = explored.d, explored.d_prime, explored.seed_seq, explored.chosen
    n_explore, n_confirm = explored.out_d.shape[0], explored.n_confirm
    samples = n_explore + n_confirm
    saved = None
    if setup.checkpoint is not None:
        saved = Checkpoint.open(setup.checkpoint, fingerprint(
            mechanism, d, d_prime, claim, samples=samples, alpha=alpha,
            chunk=_confirmation.CHUNK,
            seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
            candidates=setup.candidates, explore_fraction=setup.explore_fraction,
            max_atoms=setup.max_atoms, float_features=setup.float_features, ties=setup.ties,
            features=None if setup.features is None else stable_name(setup.features)))
    if explored.poisson:  # confirmation sizes ~ Poisson, from their own stream (module docstring)
        size_rng = generator(seed_seq, "confirm-size")
        sizes = tuple(int(v) for v in size_rng.poisson(poisson_size(n_confirm), 2))
    else:
        sizes = (n_confirm, n_confirm)
    if saved is not None:
        saved.bind(tuple((c.event, c.partner, c.direction, c.method) for c in chosen),
                   [f"{c.event.describe()} ({c.direction})" for c in chosen], sizes)
    out_d, out_dp = explored.out_d, explored.out_dp
    counts = confirm_counts(setup.sampler, d, d_prime, explored.featurizer, chosen, sizes, seed_seq,
                      (out_d.shape[1:], out_d.dtype.kind), setup.progress,
                      2 * n_explore if done is None else done,
                      2 * samples if total is None else total, setup.executor, saved)

    level = alpha / len(chosen)
    witnesses = []
    p_values = []
    for cand, (k_p, n_p, k_q, n_q) in zip(chosen, oriented_counts(chosen, counts, sizes)):
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
    epsilon_lower = eps_bounds[best]
    delta_lower = (max(w.bound.delta_lower(claim.epsilon) for w in witnesses)
                   if isinstance(claim, ApproxDP) else None)
    p_value = min(1.0, len(chosen) * min(p_values))

    exact_eps, exact_delta, sampler_report = _exact(mechanism, d, d_prime, claim, out_d, out_dp)
    relation = setup.relation
    return AuditResult(
        claim=claim,
        violation=bool(epsilon_lower > claim.epsilon),
        epsilon_lower=epsilon_lower,
        delta_lower=delta_lower,
        p_value=p_value,
        witness=witnesses[best],
        samples=samples,
        explore_samples=n_explore,
        confirm_samples=n_confirm,
        alpha=alpha,
        seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
        seconds=time.perf_counter() - start,
        confirmed=tuple(witnesses),
        candidates_scored=explored.scored,
        features=explored.featurizer.to_dict(),
        mechanism=mechanism_name(mechanism),
        relation=None if relation is None else str(getattr(relation, "name", relation)),
        pair=(d, d_prime),
        exact_epsilon=exact_eps,
        exact_delta=exact_delta,
        sampler_check=sampler_report,
        explore_seconds=explore_seconds,
    )


def _global_state() -> tuple[int, bytes]:
    """A fingerprint of NumPy's legacy global random state (position and key words)."""
    state = np.random.get_state(legacy=False)
    inner = state["state"] if isinstance(state, dict) else None
    if inner is not None and "key" in inner:
        return int(inner["pos"]), np.asarray(inner["key"]).tobytes()
    return 0, repr(state).encode()


def _label_rows(
    chosen: list[Candidate], featurizer: Featurizer, out_d: Any, out_dp: Any
) -> list[Candidate]:
    """Give hashed-row atom events the rows they stand for (looked up on the exploration
    outputs, for the chosen events only), so witnesses read ``row in {(1, 0, -1), …}``."""
    labelled = []
    for cand in chosen:
        ev = cand.event
        name = featurizer.features[ev.feature].name
        if ev.kind == "atoms" and name in ("row", "cells(output)"):
            rows = np.concatenate([out_d[ev.mask(featurizer(out_d, only={ev.feature}))],
                                   out_dp[ev.mask(featurizer(out_dp, only={ev.feature}))]])
            if name == "cells(output)":  # cells read as value ranges, e.g. "output[5] < 14"
                assert featurizer.llr is not None
                cells = featurizer.llr.codes(rows) if rows.size else rows
                uniq = np.unique(cells, axis=0) if rows.size else cells
                labels = tuple(featurizer.llr.describe_cell(c) for c in uniq[:1000])
            else:
                uniq = np.unique(rows, axis=0) if rows.size else rows
                labels = tuple(tuple(r.tolist()) for r in uniq[:1000])
            cand = dataclasses.replace(cand, event=dataclasses.replace(ev, labels=labels))
        labelled.append(cand)
    return labelled


def _exact(
    mechanism: Any, d: Any, d_prime: Any, claim: PureDP | ApproxDP, out_d: Any, out_dp: Any
) -> tuple[float | None, float | None, Any]:
    """Exact loss from ``pmf`` (if the mechanism has one) and the sampler-vs-pmf check."""
    pmf = pmf_of(mechanism)
    if pmf is None:
        return None, None, None
    from .exact import privacy_loss
    from .sampler_check import check_sampler

    try:
        p, q = pmf(d), pmf(d_prime)
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise InvalidArgument(f"mechanism.pmf raised {type(exc).__name__}: {exc}") from exc
    try:
        exact = privacy_loss(p, q)
    except InvalidArgument as exc:
        raise InvalidArgument(f"mechanism.pmf returned an invalid distribution: {exc}") from exc
    eps = exact.epsilon
    return (eps if math.isfinite(eps) else math.inf, exact.delta(claim.epsilon),
            check_sampler(out_d, p, out_dp, q))
