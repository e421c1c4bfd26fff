"""One audit on ``W`` simulated workers: its real tasks, measured, replayed on a schedule.

Issue 30 item 5 asks for one audit's speedup on 8 simulated workers (SVT6 at 10⁸ outputs per
side). ``scaling.py`` answers with a cost model fitted on a few constants; this script measures
the audit itself. :class:`Tracer` is a ``concurrent.futures.Executor`` that runs every task
dpcheck hands it **in this process, at once**, and records a trace of what happened in order:

* ``("client", s)``: CPU seconds the calling process spent between two executor calls
  (featurizer fits, selection, pickling the payloads, merging counts, progress);
* ``("submit", task, s, out, back)``: a task, its CPU seconds, the bytes of its payload and of
  its pickled result;
* ``("wait", task)``: the calling process asks for that task's result.

CPU seconds are ``time.process_time`` (every thread of this process; robust to other load on
a shared machine, since nothing else runs in the process meanwhile). :func:`replay` then plays
the trace on ``W`` workers: the client's clock advances by its segments; a task submitted at
client time ``c`` starts at ``max(c + latency + out/bandwidth, first free worker)`` (first come,
first served, as a process pool or Dask's scheduler hands out equal chunks) and its result is
there ``s + back/bandwidth`` later; a wait moves the client's clock to that time. dpcheck's own
call structure — what runs in the client, what waits for what — is therefore the real one, not
a model of it; what is simulated is only that the workers are other machines: no contention
between them, a fixed per-task ``latency`` (measured here on a ``ProcessPoolExecutor``:
:func:`measure_latency`) and a network ``bandwidth`` (default 1 Gbit/s).

Results are waited for in submission order (:func:`in_order` replaces ``as_completed`` for the
tracer's futures, which are all finished at once): equal chunks handed out first come, first
served finish in about that order. The traced audit must give the same result, bit for bit, as
the audit with ``executor=None`` (checked on every run).

The replay is checked against a real pool: ``--check N`` also runs the audit at ``N`` outputs
per side on a 2-worker ``ProcessPoolExecutor`` (wall seconds; meaningful only on an idle
2-core machine) and compares with the replay of its own trace at ``W = 2``.

Writes ``reports/bench/simulated_workers.json`` and ``.md``.

Usage::

    PYTHONPATH=. python benchmarks/simulated_workers.py --samples 1e8 --workers 1 2 4 8 16
    PYTHONPATH=. python benchmarks/simulated_workers.py --samples 2e7 --check 2e7
"""

from __future__ import annotations

import argparse
import heapq
import json
import pickle
import platform
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import dpcheck
import dpcheck.core.executor as executor_module
from algorithms.zoo import get

#: Default network bandwidth between the client and a worker (bytes per second): 1 Gbit/s.
BANDWIDTH = 125e6
#: A slow cluster, reported beside the default: 10 ms per task, 100 Mbit/s.
SLOW = {"latency": 0.010, "bandwidth": 12.5e6}

Event = tuple[Any, ...]


class TracedFuture(Future):  # type: ignore[type-arg]
    """A finished future whose ``result()`` is recorded as a wait of the client."""

    def __init__(self, tracer: Tracer, task: int) -> None:
        super().__init__()
        self.tracer, self.task = tracer, task

    def result(self, timeout: float | None = None) -> Any:
        self.tracer.wait(self.task)
        return super().result(timeout)


class Tracer(Executor):
    """Runs each task when it is submitted, in this process, and records the trace (module
    docstring)."""

    def __init__(self) -> None:
        self.trace: list[Event] = []
        self.tasks = 0
        self._waited: set[int] = set()
        self._mark = time.process_time()

    def _client(self) -> None:
        now = time.process_time()
        self.trace.append(("client", now - self._mark))
        self._mark = now

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self._client()
        out = sum(len(a) for a in args if isinstance(a, bytes))
        start = time.process_time()
        try:
            result, error = fn(*args, **kwargs), None
        except Exception as exc:  # noqa: BLE001 - handed back through the future
            result, error = None, exc
        seconds = time.process_time() - start
        back = len(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        task, self.tasks = self.tasks, self.tasks + 1
        self.trace.append(("submit", task, seconds, out, back))
        fut = TracedFuture(self, task)
        if error is None:
            fut.set_result(result)
        else:
            fut.set_exception(error)
        self._mark = time.process_time()  # the task and its measuring are not client time
        return fut

    def wait(self, task: int) -> None:
        if task not in self._waited:
            self._waited.add(task)
            self._client()
            self.trace.append(("wait", task))

    def close(self) -> None:
        """The client's last segment (after the last executor call)."""
        self._client()


def in_order(futures: list[Any], dask: bool) -> Iterator[Any]:
    """``as_completed`` for the tracer's futures: submission order (see module docstring)."""
    if futures and all(isinstance(f, TracedFuture) for f in futures):
        return iter(futures)
    return _AS_COMPLETED(futures, dask)


_AS_COMPLETED = executor_module._as_completed


def replay(trace: Iterable[Event], workers: int, *, latency: float = 0.0,
           bandwidth: float = BANDWIDTH) -> dict[str, float]:
    """Play ``trace`` on ``workers`` workers: the client's finishing time (seconds), its own
    CPU seconds and the workers' busy seconds (see module docstring)."""
    if workers < 1:
        raise ValueError(f"workers={workers} must be >= 1")
    clock = client = busy = 0.0
    free = [0.0] * workers  # when each worker is next free (a heap)
    done: dict[int, float] = {}
    for event in trace:
        if event[0] == "client":
            clock += event[1]
            client += event[1]
        elif event[0] == "submit":
            _, task, seconds, out, back = event
            ready = clock + latency + out / bandwidth
            start = max(ready, heapq.heappop(free))
            finish = start + seconds + back / bandwidth
            heapq.heappush(free, finish)
            done[task] = finish
            busy += seconds
        else:
            clock = max(clock, done[event[1]])
    return {"seconds": clock, "client_seconds": client, "worker_seconds": busy}


def measure_latency(tasks: int = 200) -> float:
    """Seconds of overhead per task of a 1-worker ``ProcessPoolExecutor`` through
    :func:`dpcheck.core.executor.run_chunks`: wall time of ``tasks`` no-op tasks, less one
    warm-up, divided by their number."""
    with ProcessPoolExecutor(1) as pool:
        executor_module.run_chunks(pool, int, [(1,)])  # start the worker process
        start = time.perf_counter()
        executor_module.run_chunks(pool, int, [(i,) for i in range(tasks)])
        return (time.perf_counter() - start) / tasks


def workload(name: str) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """``(mechanism, d, d_prime, claim, audit keyword arguments)``; issue 30's SVT6 at the
    default ``explore_fraction``."""
    entry = get(name)
    d, d_prime = entry.pairs[0]
    return (entry.mechanism, d, d_prime, entry.claim,
            {"features": entry.features, "float_features": entry.float_features})


def run(name: str, samples: int, executor: Any) -> tuple[dict[str, Any], float, float]:
    """One audit, seed 0: its result dict without timings, CPU and wall seconds."""
    mechanism, d, d_prime, claim, kw = workload(name)
    cpu, wall = time.process_time(), time.perf_counter()
    r = dpcheck.audit(mechanism, d, d_prime, claim, samples=samples, seed=0,
                      executor=executor, **kw)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    record = r.to_dict()
    for key in ("seconds", "explore_seconds"):
        record.pop(key, None)
    return record, cpu, wall


def traced(name: str, samples: int) -> tuple[dict[str, Any], list[Event], float]:
    """The audit on a :class:`Tracer`: result, trace, CPU seconds."""
    tracer = Tracer()
    executor_module._as_completed = in_order
    try:
        record, cpu, _ = run(name, samples, tracer)
        tracer.close()
    finally:
        executor_module._as_completed = _AS_COMPLETED
    return record, tracer.trace, cpu


def markdown(out: dict[str, Any]) -> str:
    lines = [f"# One audit on simulated workers ({out['mechanism']}, "
             f"{out['samples']:.3g} outputs per side)", "",
             f"Serial (`executor=None`): {out['serial_cpu_seconds']:.1f} CPU s. Traced: "
             f"{out['tasks']} tasks, {out['worker_seconds']:.1f} s on workers, "
             f"{out['client_seconds']:.1f} s in the client; latency "
             f"{out['latency'] * 1e3:.2f} ms per task, bandwidth {out['bandwidth'] / 1e6:.0f} MB/s; "
             f"result identical to the serial audit: {out['identical']}.", "",
             "| workers | seconds | speedup over serial | slow cluster (10 ms, 100 Mbit/s) |",
             "|---|---|---|---|"]
    for row in out["replays"]:
        lines.append(f"| {row['workers']} | {row['seconds']:.1f} | {row['speedup']:.2f}× | "
                     f"{row['slow_seconds']:.1f} s, {row['slow_speedup']:.2f}× |")
    if out.get("check"):
        c = out["check"]
        lines += ["", f"Check at {c['samples']:.3g} per side: a real 2-worker process pool took "
                  f"{c['wall_seconds']:.1f} s wall; the replay of its trace at W = 2 predicts "
                  f"{c['predicted_seconds']:.1f} s ({c['error']:+.0%}); serial wall "
                  f"{c['serial_wall_seconds']:.1f} s."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mechanism", default="svt6")
    parser.add_argument("--samples", type=float, default=1e8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--bandwidth", type=float, default=BANDWIDTH)
    parser.add_argument("--latency", type=float, default=None,
                        help="seconds per task (default: measured on a process pool)")
    parser.add_argument("--check", type=float, default=None,
                        help="also compare with a real 2-worker pool at this many samples")
    parser.add_argument("--out", type=Path, default=Path("reports/bench"))
    args = parser.parse_args(argv)
    samples = int(args.samples)
    latency = measure_latency() if args.latency is None else args.latency
    serial, serial_cpu, _ = run(args.mechanism, samples, None)
    record, trace, _ = traced(args.mechanism, samples)
    base = replay(trace, 1, latency=latency, bandwidth=args.bandwidth)
    out: dict[str, Any] = {
        "mechanism": args.mechanism, "samples": samples, "latency": latency,
        "bandwidth": args.bandwidth, "serial_cpu_seconds": serial_cpu,
        "identical": record == serial, "epsilon_lower": serial["epsilon_lower"],
        "tasks": sum(e[0] == "submit" for e in trace),
        "client_seconds": base["client_seconds"], "worker_seconds": base["worker_seconds"],
        "bytes_out": sum(e[3] for e in trace if e[0] == "submit"),
        "bytes_back": sum(e[4] for e in trace if e[0] == "submit"),
        "replays": [], "machine": platform.platform(), "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    for w in args.workers:
        r = replay(trace, w, latency=latency, bandwidth=args.bandwidth)
        slow = replay(trace, w, **SLOW)
        out["replays"].append({"workers": w, "seconds": r["seconds"],
                               "speedup": serial_cpu / r["seconds"],
                               "slow_seconds": slow["seconds"],
                               "slow_speedup": serial_cpu / slow["seconds"]})
    if args.check:
        n = int(args.check)
        check_serial, _, serial_wall = run(args.mechanism, n, None)
        with ProcessPoolExecutor(2) as pool:
            executor_module.run_chunks(pool, int, [(1,), (2,)])  # start both processes
            real, _, wall = run(args.mechanism, n, pool)
        _, check_trace, _ = traced(args.mechanism, n)
        predicted = replay(check_trace, 2, latency=latency, bandwidth=args.bandwidth)["seconds"]
        out["check"] = {"samples": n, "wall_seconds": wall, "predicted_seconds": predicted,
                        "error": predicted / wall - 1, "serial_wall_seconds": serial_wall,
                        "identical": real == check_serial}
    if not out["identical"]:
        raise SystemExit("the traced audit's result differs from the serial one")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "simulated_workers.json").write_text(json.dumps(out, indent=1) + "\n")
    (args.out / "simulated_workers.md").write_text(markdown(out))
    print(markdown(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
