"""Confirmation: count the chosen events on fresh samples, in seeded chunks, on any executor.

The unit of work is one chunk of :data:`CHUNK` outputs of one side, drawn from its own stream
(:func:`dpcheck.core.executor.chunk_generator`) and reduced to one count per event
(:func:`count_chunk`), so the counts — and every bound built on them — are the same whatever
the executor, the number of workers and the order in which chunks finish.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.core.checkpoint import Checkpoint, fingerprint, stable_name
from dpcheck.core.executor import chunk_generator, chunk_sizes, run_chunks
from dpcheck.events.event import Candidate, Event, across_blocks
from dpcheck.features.featurizer import Featurizer
from dpcheck.internal.rng import generator
from dpcheck.mechanism import draw
from dpcheck.stats import poisson_size

if TYPE_CHECKING:
    from dpcheck.core.explore import Explored

__all__ = ["CHUNK", "audit_checkpoint", "confirm_counts", "confirmation_sizes", "confirmed_events",
           "count_chunk", "count_outputs", "oriented_counts"]

#: Confirmation samples are drawn in chunks of this many outputs (fixed: results depend on it).
CHUNK = 1 << 20


def confirmation_sizes(explored: Explored) -> tuple[int, int]:
    """Confirmation outputs per side: ``Poisson(n − 3√n)`` each from their own stream, drawn
    before any confirmation output, when the audit is Poissonized; else ``n`` each."""
    n_confirm = explored.n_confirm
    if not explored.poisson:
        return n_confirm, n_confirm
    size_rng = generator(explored.seed_seq, "confirm-size")
    a, b = (int(v) for v in size_rng.poisson(poisson_size(n_confirm), 2))
    return a, b


def oriented_counts(
    chosen: list[Candidate], counts: list[tuple[int, int]], sizes: tuple[int, int]
) -> list[tuple[int, int, int, int]]:
    """``(k_p, n_p, k_q, n_q)`` of every chosen event from the counts of :func:`_confirm`:
    numerator side first; a paired event's counts combined with its partner's (the partners'
    counts follow the chosen events', in order)."""
    out = []
    extra = iter(counts[len(chosen):])
    for cand, (c_d, c_dp) in zip(chosen, counts):
        forward = cand.direction == "d>d_prime"
        k_p, k_q = (c_d, c_dp) if forward else (c_dp, c_d)
        n_p, n_q = sizes if forward else sizes[::-1]
        if cand.partner is not None:  # paired event (dpcheck.events.paired): combined Poisson counts
            o_d, o_dp = next(extra)
            k_p, k_q = (k_p + o_dp, k_q + o_d) if forward else (k_p + o_d, k_q + o_dp)
            n_p = n_q = sizes[0] + sizes[1]
        out.append((k_p, n_p, k_q, n_q))
    return out


def audit_checkpoint(setup: Any, explored: Any, samples: int) -> Checkpoint | None:
    """The confirmation checkpoint of an audit (:func:`dpcheck.core.audit.finish`: its
    :class:`~dpcheck.core.explore.Setup` and :class:`~dpcheck.core.explore.Explored`; ``None``
    without one), fingerprinted with every argument that determines its counts."""
    if setup.checkpoint is None:
        return None
    seed_seq = explored.seed_seq
    return Checkpoint.open(setup.checkpoint, fingerprint(
        setup.mechanism, explored.d, explored.d_prime, setup.claim, samples=samples,
        alpha=setup.alpha, chunk=CHUNK,  # read at call time (tests shrink it)
        seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
        candidates=setup.candidates, explore_fraction=setup.explore_fraction,
        max_atoms=setup.max_atoms, float_features=setup.float_features, ties=setup.ties,
        features=None if setup.features is None else stable_name(setup.features),
        **({} if setup.support else {"support": False})))


def confirm_counts(
    sampler: Any, d: Any, d_prime: Any, featurizer: Featurizer, chosen: list[Candidate],
    sizes: tuple[int, int], seed_seq: np.random.SeedSequence, shape: tuple[tuple[int, ...], str],
    progress: Callable[[int, int], None] | None, done: int, total: int, executor: Any = None,
    saved: Checkpoint | None = None,
) -> list[tuple[int, int]]:
    """Count every chosen event (then every partner of a paired one) on fresh samples of both
    sides, in chunks of :data:`CHUNK` (each with its own stream,
    :func:`dpcheck.core.executor.chunk_generator`), run by ``executor``; only the counts come back.
    Chunks saved in ``saved`` are not drawn again; each finished chunk is saved there before
    ``progress`` hears of it."""
    events = confirmed_events(chosen)
    counts = np.zeros((len(events), 2), dtype=np.int64)
    drawn = [0]
    tasks = []
    if saved is not None:
        saved.check_chunks((len(chunk_sizes(sizes[0], CHUNK)), len(chunk_sizes(sizes[1], CHUNK))))
    for side, data in enumerate((d, d_prime)):
        for i, size in enumerate(chunk_sizes(sizes[side], CHUNK)):
            old = None if saved is None else saved.get(side, i, len(events), size)
            if old is None:
                tasks.append((sampler, data, size, seed_seq, side, i, featurizer, events, shape))
            else:
                counts[:, side] += np.asarray(old, dtype=np.int64)
                drawn[0] += size
    planned = max(sum(sizes), 1)

    def finished(k: int, part: NDArray[np.int64]) -> None:
        # Poisson sizes: progress scaled to the budget, ends at total
        if saved is not None:
            saved.record(tasks[k][4], tasks[k][5], [int(c) for c in part])
        drawn[0] += tasks[k][2]
        if progress is not None:
            progress(done + (total - done) * drawn[0] // planned, total)

    parts = run_chunks(executor, count_chunk, tasks, finished)
    for task, part in zip(tasks, parts):
        counts[:, task[4]] += part
    return [(int(a), int(b)) for a, b in counts]


def count_chunk(
    sampler: Any, data: Any, size: int, seed_seq: np.random.SeedSequence, side: int, index: int,
    featurizer: Featurizer, events: tuple[Event, ...], shape: tuple[tuple[int, ...], str],
) -> NDArray[np.int64]:
    """Draw chunk ``index`` of side ``side`` (``size`` outputs) and count each event in it
    (the unit of work sent to an executor's workers)."""
    rng = chunk_generator(seed_seq, "confirm", side, index)
    out = draw(sampler, data, size, rng, arg="mechanism", trailing=shape[0], kind=shape[1])
    return count_outputs(out, featurizer, events, seed_seq, side, index)


def count_outputs(
    out: NDArray[Any], featurizer: Featurizer, events: tuple[Event, ...],
    seed_seq: np.random.SeedSequence, side: int, index: int,
) -> NDArray[np.int64]:
    """How many of the outputs ``out`` (chunk ``index`` of side ``side``) fall in each event;
    randomised boundary atoms (:mod:`dpcheck.events.ties`) toss their coins on the chunk's own
    ``confirm-ties`` stream."""
    only = {ev.feature for ev in events}
    if not any(ev.tie_value is not None for ev in events):
        # counts add up over the featurizer's row blocks, whose columns stay in cache; the
        # support events of a block share one sort or table slots, and every block the
        # atom sets' flag tables
        counts = np.zeros(len(events), dtype=np.int64)
        shared: dict[Any, NDArray[Any]] = {}
        for cols in featurizer.blocks(out, only):
            counts += [ev.count(cols, shared) for ev in events]
            shared = across_blocks(shared)
        return counts
    cols = featurizer(out, only=only)
    coins = chunk_generator(seed_seq, "confirm-ties", side, index)  # randomised events
    return np.array([ev.count_random(cols, coins) for ev in events], dtype=np.int64)


def confirmed_events(chosen: list[Candidate]) -> tuple[Event, ...]:
    """The events confirmation counts: every chosen event, then every partner of a paired one
    (the order :func:`oriented_counts` reads them in)."""
    return (tuple(cand.event for cand in chosen)
            + tuple(cand.partner for cand in chosen if cand.partner is not None))
