"""Exploration: validate an audit's arguments, draw the exploration sample, choose the events.

:func:`setup_audit` validates everything but the pair (and finds the claim's certifier,
:mod:`dpcheck.core.certify`); :func:`explore` draws ``n_explore`` outputs per side on their own
seed streams, fits the featurizer (:mod:`dpcheck.features`) and chooses the candidates to
confirm (:func:`dpcheck.events.select.select_events`, optionally randomised boundary atoms,
:mod:`dpcheck.events.ties`, and the one-sided values of :mod:`dpcheck.events.support`). Nothing drawn here is counted again for confirmation (design §4
rule 1). :class:`Setup` and :class:`Explored` carry one audit from here to
:func:`dpcheck.core.audit.finish`; :func:`dpcheck.audit_pairs` shares them across pairs.

**Drawing on an executor.** Exploration outputs are drawn in chunks of :data:`EXPLORE_CHUNK`
outputs per side, each on its own stream (:func:`dpcheck.core.executor.chunk_generator`: chunk 0
is the stream ``(stream, side)`` itself, so an exploration of at most one chunk per side draws
exactly what unchunked exploration drew). Chunk 0 of D is drawn in the calling process first: it
is where the global-``np.random`` check runs and it fixes the trailing shape and dtype kind that
every other chunk must have (the same :func:`~dpcheck.mechanism.draw` errors as before). The
other chunks run on ``executor`` (:func:`~dpcheck.core.executor.run_chunks`: progress per chunk,
the error of the lowest-index failing chunk, worker warnings recorded) — in this process when
``executor`` is ``None``. The result is the same bit for bit whatever the executor and the
number of workers. Exploration is not checkpointed (a resumed audit redraws it, same seeds).

**At most one chunk per side** (``n_explore ≤ EXPLORE_CHUNK``, or outputs of an earlier
exploration given as ``prior``): both sides are drawn here, the featurizer is fitted on the
whole sample and :func:`~dpcheck.events.select.select_events` splits it into its generation
and validation halves — the procedure of dpcheck before chunked exploration, bit for bit.

**Larger explorations** (issue 30 item 5): only chunk 0 of each side comes to this process
(chunk 0 of D′ drawn on a worker, its outputs shipped back). The featurizer is fitted on it
(as in an exploration of one chunk; most learned parts read a prefix of it), the candidates
are generated and shortlisted on its first half (``EXPLORE_CHUNK // 2`` outputs per side,
the generation half of an exploration of one chunk), and the shortlist is counted on the rest — the second half of
chunk 0 here, chunks ``1 …`` on the workers, where each is drawn, featurized with the fitted
featurizer and counted; only counts come back (:mod:`dpcheck.core.explore_validate`). The
client's share is thus bounded by one chunk's whatever ``n_explore`` (it was linear in it:
SVT6, 2²⁰ outputs per side, CPU seconds for both sides: drawing 1.0, fitting 1.2, featurizing
1.9, selecting 5.8), and so is its memory (``Explored.out_d`` holds chunk 0,
``Explored.n_explore`` the outputs explored). The one-sided support values
(:mod:`dpcheck.events.support`) come from a prefix of chunk 0; randomised ties and the row
labels of witnesses are computed on chunk 0. Nothing counted for validation is generated on,
nothing explored is counted for confirmation (benchmarks/scaling.py has the cost model,
docs/howto/large-audits.md the figures).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.core.certify import Certifier, certifier_for
from dpcheck.core.executor import (check_executor, chunk_generator, chunk_sizes,
                                    run_chunks)
from dpcheck.core.explore_validate import validation_counter
from dpcheck.errors import GlobalRandomStateWarning, InvalidArgument
from dpcheck.events.event import Candidate, Event
from dpcheck.events.select import select_events
from dpcheck.events.slots import lead_weighted
from dpcheck.events.support import support_candidates, with_support
from dpcheck.events.ties import randomise_ties
from dpcheck.features.feature import FeatureMap
from dpcheck.features.featurizer import Featurizer
from dpcheck.internal.progress import Reporter, reporter
from dpcheck.internal.rng import generator
from dpcheck.mechanism import as_sampler, draw, mechanism_name
from dpcheck.validation import check_alpha, check_int, check_probability, check_seed

__all__ = ["EXPLORE_CHUNK", "Explored", "Setup", "explore", "explore_chunk", "exploration_size",
           "setup_audit", "POISSON_MIN"]

#: Exploration outputs are drawn in chunks of this many per side (fixed: results depend on it;
#: explorations of at most one chunk per side draw what unchunked exploration drew).
EXPLORE_CHUNK = 1 << 20  # the confirmation chunk (dpcheck.core.confirm.CHUNK)

_MIN_EXPLORE = 1000
#: Pure claims with at least this many confirmation outputs per side Poissonize the
#: confirmation sizes (enables the conditional ratio test).
POISSON_MIN = 400


def exploration_size(samples: int, fraction: float = 0.1) -> int:
    """Outputs per side used for selection: ``fraction·samples``, but at least
    ``min(1000, samples // 2)`` and at most ``samples // 2``."""
    floor = min(_MIN_EXPLORE, samples // 2)
    return int(min(samples // 2, max(floor, round(fraction * samples))))


@dataclass(frozen=True, eq=False)
class Setup:
    """The validated arguments of one audit (shared by the pairs of :func:`dpcheck.audit_pairs`)."""

    mechanism: Any
    sampler: Any
    claim: Any
    certifier: Certifier
    alpha: float
    seed_seq: np.random.SeedSequence
    relation: Any
    features: FeatureMap | None
    candidates: int
    explore_fraction: float
    max_atoms: int
    progress: Reporter | None
    float_features: bool
    executor: Any
    checkpoint: str | os.PathLike[str] | None
    ties: bool
    support: bool = True


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
    #: outputs per side explored (``out_d``, ``out_dp`` keep chunk 0 only when it is larger)
    n_explore: int

    @property
    def score(self) -> float:
        return max(c.score for c in self.chosen)


def setup_audit(
    mechanism: Any, claim: Any, *, samples: Any, alpha: Any, seed: Any, relation: Any,
    features: Any, candidates: Any, explore_fraction: Any, max_atoms: Any, progress: Any,
    float_features: Any, executor: Any, checkpoint: Any, ties: Any, support: Any = True,
) -> Setup:
    """Validate the arguments of :func:`audit` (everything but the pair itself)."""
    certifier = certifier_for(claim)
    check_int(samples, "samples", minimum=2)
    alpha = check_alpha(alpha)
    seed_seq = check_seed(seed)
    candidates = check_int(candidates, "candidates", minimum=1)
    max_atoms = check_int(max_atoms, "max_atoms", minimum=1)
    explore_fraction = check_probability(explore_fraction, "explore_fraction")
    if not 0.0 < explore_fraction < 1.0:
        raise InvalidArgument(f"explore_fraction={explore_fraction!r} must be in (0, 1)")
    if progress is not None and not isinstance(progress, bool):
        try:
            signature = inspect.signature(progress)
            try:
                signature.bind(0, 0)
            except TypeError:
                signature.bind(0, 0, phase="explore")
        except TypeError as exc:
            raise InvalidArgument(
                f"progress={progress!r} must be callable as progress(done, total), True or None"
            ) from exc
        except ValueError:  # builtins without a signature: trust them
            pass
    progress = reporter(progress)
    if relation is not None and (
            isinstance(relation, type) or not callable(getattr(relation, "check", None))):
        raise InvalidArgument(f"relation={relation!r} must be a dpcheck neighbour relation")
    executor = check_executor(executor)
    sampler = as_sampler(mechanism)
    if not isinstance(float_features, bool):
        raise InvalidArgument(f"float_features={float_features!r} must be True or False")
    if not isinstance(ties, bool):
        raise InvalidArgument(f"ties={ties!r} must be True or False")
    if not isinstance(support, bool):
        raise InvalidArgument(f"support={support!r} must be True or False")
    return Setup(mechanism, sampler, claim, certifier, alpha, seed_seq, relation, features, candidates,
                 explore_fraction, max_atoms, progress, float_features, executor, checkpoint,
                 ties, support)


def explore(
    setup: Setup, d: Any, d_prime: Any, *, n_explore: int, n_confirm: int,
    seed_seq: np.random.SeedSequence | None = None,
    prior: tuple[NDArray[Any], NDArray[Any]] | None = None, stream: str = "explore",
) -> Explored:
    """Draw ``n_explore`` outputs per side and choose the events to confirm on ``n_confirm``
    fresh outputs per side (design §4 rule 1: nothing drawn here is counted again).

    ``prior``: outputs of D and D′ from earlier exploration (never counted for confirmation),
    put in front of the ``n_explore`` new ones (none drawn when ``n_explore`` is 0); ``stream``
    names the seed stream of the new ones (distinct names give independent outputs)."""
    seed_seq = setup.seed_seq if seed_seq is None else seed_seq
    claim = setup.claim
    trailing = kind = None
    if prior is not None:
        trailing, kind = prior[0].shape[1:], prior[0].dtype.kind
    rep = setup.progress
    if rep is not None:
        rep.at(rep.done, "explore")  # at once: exploration may take a while
    split = prior is None and n_explore > EXPLORE_CHUNK  # validation on the workers
    if prior is not None and n_explore == 0:  # the prior is the whole exploration sample
        out_d, out_dp = prior
    else:
        out_d, out_dp = _draw_sides(setup, d, d_prime, min(n_explore, EXPLORE_CHUNK) if split
                                    else n_explore, seed_seq, stream, trailing, kind, split)
        if prior is not None:
            out_d = np.concatenate([prior[0], out_d])
            out_dp = np.concatenate([prior[1], out_dp])
    if rep is not None:
        rep.at(rep.done, "select")  # features and event selection
    featurizer = Featurizer.build(out_d, setup.features, out_dp,
                                  float_bits=setup.float_features)
    wanted = setup.certifier.selection(claim)
    poisson = wanted.poissonize and n_confirm >= POISSON_MIN
    cols_d, cols_dp = featurizer(out_d), featurizer(out_dp)
    k = setup.candidates
    gen_d, gen_dp, validation = cols_d, cols_dp, None
    if split:  # generation on the first half of chunk 0 (explore_validate's docstring)
        half = EXPLORE_CHUNK // 2
        gen_d, gen_dp = [c[:half] for c in cols_d], [c[:half] for c in cols_dp]
        local = ([c[half:] for c in cols_d], [c[half:] for c in cols_dp])
        validation = (n_explore - half, validation_counter(
            setup, d, d_prime, chunk_sizes(n_explore, EXPLORE_CHUNK), seed_seq, stream,
            (out_d.shape[1:], out_d.dtype.kind), featurizer, local, rep))
    chosen, scored = select_events(
        gen_d, gen_dp, featurizer.features, n_confirm=n_confirm,
        alpha_each=setup.alpha / (2 * k), delta=wanted.delta, k=k,
        max_atoms=setup.max_atoms, ratio=poisson, delta_epsilon=wanted.delta_epsilon,
        validation=validation,
    )
    if setup.ties:  # randomised boundary atoms (dpcheck.events.ties), chosen on the exploration sample
        chosen = randomise_ties(chosen, cols_d, cols_dp, n_confirm=n_confirm,
                                alpha_each=setup.alpha / (2 * len(chosen)), delta=wanted.delta)
    if wanted.delta_epsilon is None:  # pure claims: half the ranked α to the lead
        chosen = lead_weighted(chosen)
    if setup.support:  # values seen under one side only (dpcheck.events.support)
        chosen = with_support(chosen, support_candidates(cols_d, cols_dp, featurizer.features))
    chosen = _label_rows(chosen, featurizer, out_d, out_dp)
    return Explored(d, d_prime, seed_seq, out_d, out_dp, featurizer, chosen, scored, n_confirm,
                    poisson, n_explore if split else out_d.shape[0])


def _draw_sides(
    setup: Setup, d: Any, d_prime: Any, n: int, seed_seq: np.random.SeedSequence, stream: str,
    trailing: tuple[int, ...] | None, kind: str | None, spread: bool = False,
) -> tuple[NDArray[Any], NDArray[Any]]:
    """``n`` exploration outputs of each side, in chunks of :data:`EXPLORE_CHUNK` (module
    docstring): chunk 0 of D here (the global-state check; its shape and dtype kind are those
    every other chunk must have), then the other chunks on ``setup.executor`` (in this
    process when it is ``None`` or when only one chunk is left, unless ``spread``: chunk 0
    of D′ of a split exploration)."""
    sampler, rep = setup.sampler, setup.progress
    sizes = chunk_sizes(n, EXPLORE_CHUNK) or [0]
    before = _global_state()
    first = draw(sampler, d, sizes[0], generator(seed_seq, stream, 0), arg="mechanism",
                 trailing=trailing, kind=kind)
    if rep is not None:
        rep.advance(sizes[0], "explore")
    if _global_state() != before:
        warnings.warn(
            f"{mechanism_name(setup.mechanism)} draws from numpy's global np.random state "
            "instead of the rng it is given: the audit's seed does not determine its outputs, "
            "so results cannot be replayed", GlobalRandomStateWarning, stacklevel=4)
    shape = (first.shape[1:], first.dtype.kind)
    tasks = [(sampler, data, size, seed_seq, stream, side, i, shape)
             for side, data in enumerate((d, d_prime)) for i, size in enumerate(sizes)
             if side or i]

    def finished(k: int, part: NDArray[Any]) -> None:
        if rep is not None:
            rep.advance(tasks[k][2], "explore")

    parts = run_chunks(setup.executor if len(tasks) > 1 or spread else None, explore_chunk,
                       tasks, finished)
    cut = len(sizes) - 1
    return _joined([first, *parts[:cut]]), _joined(parts[cut:])


def explore_chunk(
    sampler: Any, data: Any, size: int, seed_seq: np.random.SeedSequence, stream: str,
    side: int, index: int, shape: tuple[tuple[int, ...], str],
) -> NDArray[Any]:
    """Chunk ``index`` of side ``side`` of exploration stream ``stream`` (``size`` outputs of
    the trailing shape and dtype kind ``shape``): the unit of exploration work sent to an
    executor's workers; the outputs themselves travel back."""
    rng = chunk_generator(seed_seq, stream, side, index)
    return draw(sampler, data, size, rng, arg="mechanism", trailing=shape[0], kind=shape[1])


def _joined(parts: list[NDArray[Any]]) -> NDArray[Any]:
    """The chunks of one side in order (a single chunk as is: bit for bit the draw of dpcheck
    versions before chunked exploration)."""
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


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
    """Give atom events of row features the labels their family makes (the rows, or their
    cells in words; looked up on the exploration outputs, for the chosen events only), so
    witnesses read ``row in {(1, 0, -1), …}``."""
    labelled = []
    for cand in chosen:
        ev = cand.event
        if ev.kind == "atoms" and not ev.support:
            def rows(ev: Event = ev) -> Any:
                return np.concatenate([out_d[ev.mask(featurizer(out_d, only={ev.feature}))],
                                       out_dp[ev.mask(featurizer(out_dp, only={ev.feature}))]])
            labels = featurizer.row_labels(ev.feature, rows)
            if labels is not None:
                cand = dataclasses.replace(cand, event=dataclasses.replace(ev, labels=labels))
        labelled.append(cand)
    return labelled
