"""Running fixed chunks of sampling work locally, on a process pool, or on a Dask cluster.

Work is split by **sample count**, never by worker count: chunk ``i`` of a stream always has the
same size and its own seed (:func:`chunk_generator`), so the result of a run is the same bit for
bit whatever runs the chunks — ``executor=None`` (in this process, in order), any
:class:`concurrent.futures.Executor` (``ProcessPoolExecutor``, ``ThreadPoolExecutor``) or a Dask
``distributed.Client`` — and whatever the number of workers. Only the chunk's result travels
back: event counts for a confirmation chunk (:mod:`dpcheck.core.confirm`), the outputs
themselves for an exploration chunk (:mod:`dpcheck.core.explore`).

Results are handed over as they finish (``as_completed``: progress and checkpoints count the
chunks of all workers), but errors are those of the local run: the error of the lowest-index
failing chunk, unchanged, so a mechanism that raises gives the same one-line
:class:`~dpcheck.InvalidArgument` as locally. Work for other processes travels as bytes
(standard pickle; cloudpickle on Dask, which honours ``register_pickle_by_value``) unpickled
inside the task (:func:`run_pickled`), so work a worker cannot import is a one-line error of the
task rather than a dead pool process or a Dask task that never runs; thread pools get the work
as is. On Dask, tasks are submitted with ``retries=2`` and ``pure=False``; a worker that dies
has its chunks recomputed elsewhere by the scheduler, with the same seeds, hence the same counts
(tested by SIGKILLing a ``LocalCluster`` worker mid-audit). A ``ProcessPoolExecutor`` whose
worker dies is broken for good: :class:`~dpcheck.WorkerLost` says so (resume with a new pool
and ``audit(..., checkpoint=)``).

References
----------
``shared/design.md`` §4 rule 5 and the wave-2 contract ``audit(..., executor=None)``.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument, WorkerLost
from dpcheck.internal.rng import generator

__all__ = ["check_executor", "chunk_generator", "chunk_sizes", "is_dask", "run_chunks"]

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
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """``[fn(*t) for t in tasks]``, run by ``executor`` (in order locally when ``None``).

    ``on_result(i, result)`` is called in this process as soon as the result of task ``i`` is
    in: in task order locally, in completion order (whichever worker finishes first) on an
    executor — so a progress count or a checkpoint built on it covers all workers.

    Errors are those of the local run: if tasks raise, the error of the *lowest-index* failing
    task is raised (the tasks after it are cancelled, those before it are awaited and reported
    to ``on_result``), whatever the order in which the workers finished. A lost worker process
    that the executor cannot make up for raises :class:`~dpcheck.errors.WorkerLost`; Dask
    recomputes the chunks of a dead worker on the others (same task, same seed, same result).
    Interrupting (``KeyboardInterrupt``) cancels the tasks not yet finished.
    """
    if executor is None:
        results = []
        for i, t in enumerate(tasks):
            results.append(fn(*t))
            if on_result is not None:
                on_result(i, results[-1])
        return results
    dask = is_dask(executor)
    futures: list[Any] = []
    threads = isinstance(executor, ThreadPoolExecutor)  # same process: nothing to pickle
    try:
        dumps = _dumps(dask)
        for t in tasks:
            if threads:
                futures.append(executor.submit(fn, *t))
                continue
            payload = dumps((fn, tuple(t)))
            if dask:
                futures.append(executor.submit(run_pickled, payload, pure=False,
                                               retries=DASK_RETRIES))
            else:
                futures.append(executor.submit(run_pickled, payload))
    except BaseException as exc:
        _cancel(futures)
        if isinstance(exc, RuntimeError) and "shutdown" in str(exc):
            raise InvalidArgument(f"executor={executor!r} has been shut down: pass a running "
                                  "executor (or None)") from exc
        if isinstance(exc, (pickle.PicklingError, TypeError, AttributeError)):
            raise InvalidArgument(
                f"executor could not be handed the sampling work ({type(exc).__name__}: {exc}); "
                "mechanisms, datasets and feature maps must be picklable (module-level "
                "functions or objects) to run on other processes") from exc
        raise
    key = (lambda f: f.key) if dask else id  # Dask may hand back equal futures, not the same
    index = {key(fut): i for i, fut in enumerate(futures)}
    results: list[Any] = [None] * len(futures)
    seen: set[int] = set()
    try:
        for fut in _as_completed(futures, dask):
            i = index[key(fut)]
            try:
                results[i] = _unwrap(fut.result())
            except Exception as exc:  # noqa: BLE001 - translated / re-raised below
                _cancel(futures[i + 1:])
                failed, error = i, exc
                for j in range(i):  # the local run would have finished these first
                    if j not in seen:
                        try:
                            results[j] = _unwrap(futures[j].result())
                        except Exception as earlier:  # noqa: BLE001
                            _cancel(futures[j + 1:failed])
                            failed, error = j, earlier
                            break
                        if on_result is not None:
                            on_result(j, results[j])
                translated = _translate(error, failed, len(futures))
                if translated is error:
                    raise error
                raise translated from error
            seen.add(i)
            if on_result is not None:
                on_result(i, results[i])
    except BaseException:
        _cancel(futures)
        raise
    return results


def _dumps(dask: bool) -> Callable[[Any], bytes]:
    """The pickler of the tasks: cloudpickle for Dask (it honours
    ``cloudpickle.register_pickle_by_value``), the standard pickle for other executors."""
    if dask:
        import cloudpickle

        return cloudpickle.dumps  # type: ignore[no-any-return]
    return lambda obj: pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def run_pickled(payload: bytes) -> Any:
    """Unpickle ``(fn, args)`` and return ``fn(*args)`` (runs on the workers).

    Tasks travel as bytes unpickled *inside* the task, so that work a worker cannot load (its
    module is not importable there) is an error of that task, named in one line — instead of a
    worker process that dies (a broken process pool) or a task that Dask never runs.
    """
    try:
        fn, args = pickle.loads(payload)  # our own payload, from this process
    except (ImportError, AttributeError) as exc:
        raise InvalidArgument(
            f"a worker could not load the sampling work ({type(exc).__name__}: {exc}); the "
            "modules that define the mechanism, datasets and feature map must be importable "
            "on the workers (install them there; on Dask, Client.upload_file or "
            "cloudpickle.register_pickle_by_value)") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    if not caught:
        return result
    return _Warned(result, tuple((w.category, str(w.message), w.filename, w.lineno)
                                 for w in caught[:MAX_WORKER_WARNINGS]))


#: Warnings of one task sent back from a worker (the rest are dropped).
MAX_WORKER_WARNINGS = 20


@dataclass(frozen=True)
class _Warned:
    """A task's result with the warnings its worker raised (category, message, file, line)."""

    result: Any
    warnings: tuple[tuple[type[Warning], str, str, int], ...]


def _unwrap(value: Any) -> Any:
    """A worker's result; the warnings it raised are issued again here, where the audit
    records them (:func:`dpcheck.mechanism.records_warnings`) — a warning on a worker is not
    lost."""
    if not isinstance(value, _Warned):
        return value
    for category, message, filename, lineno in value.warnings:
        warnings.warn_explicit(message, category, filename, lineno)
    return value.result


def _as_completed(futures: list[Any], dask: bool) -> Any:
    """Futures in completion order (Dask's or ``concurrent.futures``' ``as_completed``)."""
    if dask:
        from distributed import as_completed

        return as_completed(futures)
    from concurrent.futures import as_completed as cf_as_completed

    return cf_as_completed(futures)


def _translate(exc: BaseException, i: int, n: int) -> BaseException:
    """The error of a failed task as the caller should see it (see :func:`run_chunks`)."""
    if isinstance(exc, InvalidArgument):
        return exc
    if isinstance(exc, (pickle.PicklingError, AttributeError)):
        return InvalidArgument(
            f"executor could not run the sampling work ({type(exc).__name__}: {exc}); "
            "mechanisms, datasets and feature maps must be picklable (module-level functions "
            "or objects) to run on other processes")
    name = type(exc).__name__
    if name in ("BrokenProcessPool", "KilledWorker", "TerminatedWorkerError"):
        how = ("a process pool whose worker died cannot run anything more: create a new pool"
               if name != "KilledWorker" else
               "Dask gave up on this chunk after its workers kept dying")
        return WorkerLost(
            f"executor lost a worker process while drawing chunk {i + 1} of {n} "
            f"({name}: {exc}); {how}. Pass checkpoint=PATH (CLI: --checkpoint PATH) to keep "
            "the finished chunks and rerun to resume; a Dask client redraws a lost worker's "
            "chunks on the other workers from the same seeds")
    return exc


def _cancel(futures: list[Any]) -> None:
    for fut in futures:
        with contextlib.suppress(Exception):  # best effort
            fut.cancel()
