"""Running fixed chunks of sampling work locally, on a process pool, or on a Dask cluster.

Work is split by **sample count**, never by worker count: chunk ``i`` of a stream always has the
same size and its own seed (:func:`chunk_generator`), so the result of a run is the same bit for
bit whatever runs the chunks — ``executor=None`` (in this process, in order), any
:class:`concurrent.futures.Executor` (``ProcessPoolExecutor``, ``ThreadPoolExecutor``) or a Dask
``distributed.Client`` — and whatever the number of workers. Only the chunk's small result
(event counts) travels back.

An exception raised in a chunk travels back unchanged, so a mechanism that raises gives the
same one-line :class:`~dpcheck.InvalidArgument` as locally. On Dask, tasks are submitted with
``retries=2`` and ``pure=False``; a worker that dies has its chunks recomputed elsewhere by the
scheduler, with the same seeds, hence the same counts.

References
----------
``shared/design.md`` §4 rule 5 and the wave-2 contract ``audit(..., executor=None)``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .errors import InvalidArgument
from .rng import generator

__all__ = ["check_executor", "run_chunks", "chunk_sizes", "chunk_generator", "is_dask"]

#: Retries of a failed Dask task (a worker lost mid-task); errors raised by the task itself are
#: re-raised after the retries, unchanged.
DASK_RETRIES = 2


def is_dask(executor: Any) -> bool:
    """Whether ``executor`` is a Dask ``distributed.Client``."""
    return type(executor).__module__.split(".")[0] == "distributed"


def check_executor(executor: Any) -> Any:
    """Validate ``executor`` (``None``, a ``concurrent.futures.Executor`` or a Dask client)."""
    if executor is None:
        return None
    if isinstance(executor, type) or not callable(getattr(executor, "submit", None)):
        raise InvalidArgument(
            f"executor={executor!r} must be None, a concurrent.futures.Executor or a "
            "dask.distributed.Client")
    return executor


def chunk_sizes(total: int, chunk: int) -> list[int]:
    """Sizes of the chunks that make up ``total`` draws: ``chunk`` each, the last one smaller."""
    full, rest = divmod(total, chunk)
    return [chunk] * full + ([rest] if rest else [])


def chunk_generator(
    seed_seq: np.random.SeedSequence, name: str, side: int, index: int
) -> np.random.Generator:
    """The stream of chunk ``index`` of stream ``(name, side)``. Chunk 0 is the stream
    ``(name, side)`` itself (so single-chunk runs equal those of earlier dpcheck versions); chunk
    ``i ≥ 1`` is its own child ``(name, side, i)``, independent of the others."""
    if index == 0:
        return generator(seed_seq, name, side)
    return generator(seed_seq, name, side, index)


def run_chunks(
    executor: Any,
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    progress: Callable[[int], None] | None = None,
) -> list[Any]:
    """``[fn(*t) for t in tasks]``, run by ``executor`` (in order locally when ``None``).

    ``progress(i)`` is called after the result of task ``i`` is in, in task order.
    """
    if executor is None:
        results = []
        for i, t in enumerate(tasks):
            results.append(fn(*t))
            if progress is not None:
                progress(i)
        return results
    dask = is_dask(executor)
    futures = []
    try:
        for t in tasks:
            if dask:
                futures.append(executor.submit(fn, *t, pure=False, retries=DASK_RETRIES))
            else:
                futures.append(executor.submit(fn, *t))
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        _cancel(futures)
        raise InvalidArgument(
            f"executor could not be handed the sampling work ({type(exc).__name__}: {exc}); "
            "mechanisms, datasets and feature maps must be picklable (module-level functions "
            "or objects) to run on other processes") from exc
    results = []
    try:
        for i, fut in enumerate(futures):
            results.append(fut.result())
            if progress is not None:
                progress(i)
    except InvalidArgument:
        _cancel(futures)
        raise
    except (pickle.PicklingError, AttributeError) as exc:
        _cancel(futures)
        raise InvalidArgument(
            f"executor could not run the sampling work ({type(exc).__name__}: {exc}); "
            "mechanisms, datasets and feature maps must be picklable (module-level functions "
            "or objects) to run on other processes") from exc
    return results


def _cancel(futures: list[Any]) -> None:
    for fut in futures:
        try:
            fut.cancel()
        except Exception:  # noqa: BLE001 - best effort
            pass
