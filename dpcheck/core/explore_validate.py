"""The validation half of explorations larger than one chunk per side, counted chunk by chunk.

An exploration of ``m > EXPLORE_CHUNK`` outputs per side (:mod:`dpcheck.core.explore`) keeps
only chunk 0 of each side in the client: the featurizer is fitted on it, the candidate events
are generated and shortlisted on its first half (the *generation* half, :data:`GENERATION`
outputs per side, whatever ``m``), and the rest of the exploration — the second half of chunk 0
and chunks ``1 … K−1`` — is the *validation* half. :func:`validation_counter` counts the
shortlist there: the second half of chunk 0 in the client (its columns are already computed),
every other chunk by :func:`validation_chunk` on the executor's workers (drawn on its own
exploration stream, :func:`dpcheck.core.executor.chunk_generator`, featurized with the client's
fitted featurizer, the shortlist counted with :func:`dpcheck.events.event.count_events`); only
the counts travel back and are summed. The outputs are those unchunked exploration would have
drawn on the same streams; integer sums do not depend on the order in which the workers finish,
so the result is the same bit for bit whatever the executor and the number of workers
(``executor=None``: the same chunks, in this process, in order).

Nothing counted here was seen by generation or by the featurizer's fit beyond chunk 0, and
nothing here is counted again for confirmation (design §4 rule 1: confirmation draws its own
``confirm`` streams).

References
----------
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (select on one sample, estimate on another);
``shared/design.md`` §4 rules 1 and 5; issue 30 item 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.core.executor import chunk_generator, run_chunks
from dpcheck.events.event import Event, count_events
from dpcheck.events.select import Counter
from dpcheck.features.featurizer import Featurizer
from dpcheck.internal.progress import Reporter
from dpcheck.mechanism import draw

__all__ = ["validation_chunk", "validation_counter"]


def validation_chunk(
    sampler: Any, data: Any, size: int, seed_seq: np.random.SeedSequence, stream: str,
    side: int, index: int, shape: tuple[tuple[int, ...], str], featurizer: Featurizer,
    events: tuple[Event, ...],
) -> NDArray[np.int64]:
    """The counts of ``events`` in chunk ``index`` of side ``side`` of exploration stream
    ``stream`` (``size`` outputs of trailing shape and dtype kind ``shape``), featurized with
    ``featurizer``: the unit of validation work sent to an executor's workers."""
    rng = chunk_generator(seed_seq, stream, side, index)
    out = draw(sampler, data, size, rng, arg="mechanism", trailing=shape[0], kind=shape[1])
    cols = featurizer(out, only={ev.feature for ev in events})
    return count_events(events, cols)  # type: ignore[arg-type]


def validation_counter(
    setup: Any, d: Any, d_prime: Any, sizes: list[int], seed_seq: np.random.SeedSequence,
    stream: str, shape: tuple[tuple[int, ...], str], featurizer: Featurizer,
    local: tuple[list[NDArray[Any]], list[NDArray[Any]]], rep: Reporter | None,
) -> Counter:
    """``count(events) -> (counts under D, counts under D′)`` on the validation half: the
    columns ``local`` (the second half of chunk 0 of each side, in this process) plus chunks
    ``1 …`` of ``sizes`` of both sides, run on ``setup.executor`` (module docstring)."""

    def count(events: Sequence[Event]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        evs = tuple(events)
        totals = [count_events(evs, local[0]), count_events(evs, local[1])]
        tasks = [(setup.sampler, data, size, seed_seq, stream, side, i, shape, featurizer, evs)
                 for side, data in enumerate((d, d_prime))
                 for i, size in enumerate(sizes) if i]

        def finished(k: int, part: NDArray[np.int64]) -> None:
            if rep is not None:
                rep.advance(tasks[k][2], "validate")

        parts = run_chunks(setup.executor, validation_chunk, tasks, finished)
        for task, part in zip(tasks, parts):
            totals[task[5]] = totals[task[5]] + part
        return totals[0], totals[1]

    return count
