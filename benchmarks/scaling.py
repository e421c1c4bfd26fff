"""Throughput of one audit versus the number of workers, and a cost model for N machines.

**Measured.** One large audit per mechanism, run with ``executor=None`` and with 1 and 2
workers of a ``ProcessPoolExecutor`` and of a Dask ``LocalCluster`` (one thread per worker
process): wall time, the part of it spent before confirmation (``AuditResult.explore_seconds``),
split by the progress phases into the exploration's drawing (``explore``: chunk 0 of D in the
client, the other exploration chunks on the workers, outputs shipped back) and its client share
(``select``: fitting the featurizer and selecting the events, always in the calling process),
the confirmation chunks and the bytes that travel (each task's pickled payload out, its result
back; metered by wrapping the executor). Every run must return the same result bit for bit
(checked). ``t_e``, the seconds of one exploration chunk of ``EXPLORE_CHUNK`` outputs drawn on a
worker and shipped back, is timed on the 1-worker executors (four chunks through
``run_chunks``). Mechanisms:

* ``svt6`` (the zoo entry; vectorised numpy, 10-byte rows), at ``explore_fraction=0.01`` so
  that the confirmation dominates — the throughput figure of docs/howto/large-audits.md;
* ``--library``: diffprivlib's ``Laplace`` through :func:`dpcheck.integrations.diffprivlib.
  from_diffprivlib` (one Python call per output, ~10⁵ outputs/s), at the default
  ``explore_fraction=0.1`` — the slow one-output-per-call case that needs more than one machine.

**Model** (fitted on the runs, validated on them, then extrapolated). With ``n`` outputs per
side, exploration share ``f`` (``m = f·n`` exploration outputs per side), ``W`` workers
(``W = machines × cores``) and chunks of ``C = 2²⁰`` outputs::

    T(n, f, W) = a + b·min(m, C) + E(m, W) + ceil(K / W)·t_chunk
    K = 2·ceil((1 − f)·n / C),  K_v = 2·(ceil(m / C) − 1)
    E(m, W) = 2·(m/C)·t_c                          (m ≤ C: both chunks 0 in the client)
            = t_c + t_e + R(K_v, W)·t_v            (m > C)

``a + b·min(m, C)`` is the client's share of exploration (fitting the featurizer, featurizing
chunk 0, generating and shortlisting on its first half, counting the second half; issue 30
item 5: the validation half of larger explorations is counted on the workers, so the share
stops growing at one chunk — before, it was ``a + b·m`` on all ``m`` outputs). Chunk 0 of D is
drawn in the client (``t_c`` per full chunk), chunk 0 of D′ on a worker and shipped back
(``t_e``); ``R``: the finishing time, in full chunks, of the ``K_v`` validation chunks
(``dpcheck.core.explore_validate``: drawn, featurized, the shortlist counted, ``t_v`` each)
handed in order to ``W`` workers as they free up, partial chunks for their share,
``≈ ceil(K_v/W)``; ``t_v`` defaults to ``t_chunk`` when not measured. ``a + b·m`` is a
least-squares line through the runs and two more audits at exploration shares 5f and 0.5 of
at most one chunk per side; ``t_chunk`` (seconds per confirmation chunk on one worker, dispatch
included) is fitted on the 1-worker run of each executor kind; the 2-worker runs check the
confirmation part (``model_error``), the 0.5-share audit checks the exploration term
(``explore_draw_check``), and one audit at 2.5× the budget and the default
``explore_fraction=0.1`` checks the whole prediction out of sample (``validation``). The client
share is serial, so the speedup is capped at ``T(n, f, 1) / (a + b·min(m, C) + E(m, ∞) +
t_chunk)``; the client holds ``2·min(m, C)`` rows of exploration outputs in memory. Per
confirmation or validation chunk only counts come back, ``8·events`` bytes plus the task payload
out (the fitted featurizer and the events); chunk 0 of D′ comes back as outputs, ``C × row
bytes`` (10.5 MB for SVT6). ``benchmarks/scaling_split.py`` measures the constants in CPU
seconds on a shared machine (where this script's wall-clock fit is not possible) and
extrapolates with :func:`predict`.

The numbers depend on the cores actually free: on a shared 2-core machine two workers can
only approach 2× when nothing else runs. Writes ``reports/bench/scaling.json`` and
``reports/bench/scaling.md``.

Usage::

    python benchmarks/scaling.py --samples 8e6 [--library]
    python benchmarks/scaling.py --refit      # the model's checks again, on the saved runs
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

import dpcheck
from algorithms.zoo import get
from dpcheck.core.confirm import CHUNK
from dpcheck.core.executor import chunk_sizes, run_chunks
from dpcheck.core.explore import EXPLORE_CHUNK, exploration_size, explore_chunk
from dpcheck.mechanism import as_sampler, draw
from dpcheck.core.results import untimed

#: Budgets (outputs per side) and machine counts of the extrapolated table; 2 workers/machine.
PREDICT_SAMPLES = (10**8, 10**9)
PREDICT_FRACTIONS = (0.1, 0.01)
PREDICT_MACHINES = (1, 2, 4, 8, 16, 32, 64)
CORES_PER_MACHINE = 2


class Metered(Executor):
    """An executor that forwards to ``inner`` and counts the bytes of the tasks it is handed
    (dpcheck submits pickled payloads to process executors) and of their results."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.sent, self.received, self.tasks = inner, 0, 0, 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._lock:
            self.tasks += 1
            self.sent += sum(len(a) for a in args if isinstance(a, bytes))
        fut = self.inner.submit(fn, *args, **kwargs)
        fut.add_done_callback(self._count_result)
        return fut  # type: ignore[no-any-return]

    def _count_result(self, fut: Any) -> None:
        if not fut.cancelled() and fut.exception() is None:
            with self._lock:
                self.received += len(pickle.dumps(fut.result()))


def library_laplace() -> Any:
    """diffprivlib's Laplace (ε = 1) on a count, one output per call, seeded by dpcheck."""
    from diffprivlib.mechanisms import Laplace

    from dpcheck.integrations.diffprivlib import from_diffprivlib

    return from_diffprivlib(Laplace(epsilon=1.0, sensitivity=1.0), query=len)


def workload(name: str) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """``(mechanism, d, d_prime, claim, audit keyword arguments)`` of a benchmark mechanism."""
    if name == "svt6":
        entry = get("svt6")
        d, d_prime = entry.pairs[0]
        return entry.mechanism, d, d_prime, entry.claim, {"explore_fraction": 0.01}
    if name == "library_laplace":
        return (library_laplace(), [1, 2, 3], [1, 2], dpcheck.PureDP(1.0),
                {"explore_fraction": 0.1, "float_features": False})
    raise SystemExit(f"unknown workload {name!r}")


def one(name: str, executor: Any, samples: int, **override: Any) -> dict[str, Any]:
    """One audit: wall time, exploration time, chunks, bytes, and its untimed record."""
    mechanism, d, d_prime, claim, kw = workload(name)
    kw = {**kw, **override}
    # a Dask client is used as is (dpcheck recognises it by its type); the bytes and chunks of
    # its runs are those of the process pool's (same seed, same chunks, same payloads)
    metered = Metered(executor) if isinstance(executor, ProcessPoolExecutor) else None
    executor = executor if metered is None else metered
    phases: dict[str, float] = {}

    def progress(done: int, total: int, phase: str) -> None:
        phases.setdefault(phase, time.perf_counter())  # when each phase began

    start = time.perf_counter()
    r = dpcheck.audit(mechanism, d, d_prime, claim, samples=samples, seed=0,
                      executor=executor, progress=progress, **kw)
    seconds = time.perf_counter() - start
    assert r.explore_seconds is not None
    draw_seconds = phases["select"] - phases["explore"]
    return {"seconds": seconds, "explore_seconds": r.explore_seconds,
            "explore_draw_seconds": draw_seconds,
            "explore_client_seconds": r.explore_seconds - draw_seconds,
            "confirm_seconds": seconds - r.explore_seconds,
            "explore_samples": r.explore_samples, "confirm_samples": r.confirm_samples,
            "chunks": None if metered is None else metered.tasks,
            "bytes_sent": None if metered is None else metered.sent,
            "bytes_received": None if metered is None else metered.received,
            "record": untimed(r.to_dict())}


def chunks(samples: int, fraction: float) -> int:
    """Confirmation chunks of an audit of ``samples`` per side (both sides; sizes ≈ budget)."""
    return 2 * math.ceil(max(1.0, (1.0 - fraction) * samples) / CHUNK)


def explore_draw_seconds(samples: int, fraction: float, workers: int, t_client: float,
                        t_worker: float, t_validate: float | None = None) -> float:
    """Seconds of the exploration's work outside the client share. One chunk per side: both
    drawn in the client (``t_client`` per full chunk). More: chunk 0 of D in the client, then
    chunk 0 of D′ on a worker, shipped back (``t_worker``), then — after selection's
    generation half — the validation chunks ``1 …`` of both sides, handed to ``workers``
    workers as they free up (``t_validate`` per full chunk: drawn, featurized, the shortlist
    counted; partial chunks for their share; :mod:`dpcheck.core.explore_validate`).
    ``t_validate=None``: the model before issue 30 item 5's validation on the workers (every
    chunk after chunk 0 of D drawn on the workers and shipped back at ``t_worker``)."""
    sizes = [s / EXPLORE_CHUNK for s in chunk_sizes(exploration_size(samples, fraction),
                                                    EXPLORE_CHUNK)]
    if len(sizes) == 1:
        return 2 * t_client * sizes[0]

    def rounds(chunks: list[float]) -> float:  # in order, to the first worker free
        free = [0.0] * max(1, min(workers, len(chunks)))
        for size in chunks:
            free[free.index(min(free))] += size
        return max(free)

    if t_validate is None:
        return t_client * sizes[0] + t_worker * rounds(sizes[1:] + sizes)
    return t_client + t_worker + t_validate * rounds(sizes[1:] + sizes[1:])


def time_explore_chunks(name: str, executor: Any, count: int = 4) -> float:
    """Seconds per exploration chunk of ``EXPLORE_CHUNK`` outputs drawn on ``executor``'s
    workers and shipped back (``count`` chunks of D through ``run_chunks``, ``/ count``)."""
    mechanism, d, _, _, _ = workload(name)
    sampler = as_sampler(mechanism)
    first = draw(sampler, d, 1, np.random.default_rng(0))
    shape = (first.shape[1:], first.dtype.kind)
    seed_seq = np.random.SeedSequence(0)
    tasks = [(sampler, d, EXPLORE_CHUNK, seed_seq, "explore", 0, i + 1, shape)
             for i in range(count)]
    start = time.perf_counter()
    run_chunks(executor, explore_chunk, tasks)
    return (time.perf_counter() - start) / count


def fit(runs: list[dict[str, Any]], explorations: list[dict[str, Any]],
        t_explore: dict[str, float]) -> dict[str, Any]:
    """The model constants of one mechanism from its runs (module docstring) and their check.

    The client's exploration cost ``a + b·m`` (fitting the featurizer and selecting the events
    on ``m`` outputs per side; the drawing phase subtracted) is a least-squares line (``a ≥ 0``)
    through the ``(explore_samples, explore_client_seconds)`` of every run and of
    ``explorations`` (the same audit at larger exploration shares)."""
    # explorations of at most one chunk per side: larger ones keep the client's share at that
    # of one chunk (validation on the workers), and their "select" phase includes it
    points = np.array([[r["explore_samples"], r["explore_client_seconds"]]
                       for r in [*runs, *explorations]
                       if r["explore_samples"] <= EXPLORE_CHUNK], dtype=float)
    b, a = np.polyfit(points[:, 0], points[:, 1], 1)
    if a < 0:  # through the origin instead
        a, b = 0.0, float(points[:, 0] @ points[:, 1] / (points[:, 0] @ points[:, 0]))
    model: dict[str, Any] = {"explore_fixed_seconds": float(a),
                             "explore_seconds_per_output": float(b),
                             "exploration_points": points.tolist(), "per_kind": {}}
    pool = next(r for r in runs if r["executor"] == "process_pool")
    k = pool["chunks"]
    for kind in ("process_pool", "dask_local_cluster"):
        by = {r["workers"]: r for r in runs if r["executor"] == kind}
        if 1 not in by or 2 not in by:
            continue
        t_chunk = by[1]["confirm_seconds"] / k
        predicted = math.ceil(k / 2) * t_chunk
        model["per_kind"][kind] = {
            "t_chunk_seconds": t_chunk, "chunks": k,
            "bytes_sent_per_chunk": pool["bytes_sent"] / k,
            "bytes_received_per_chunk": pool["bytes_received"] / k,
            "t_explore_chunk_seconds": t_explore[kind],
            "t_explore_chunk_seconds_in_client": t_explore["local"],
            "predicted_confirm_seconds_2_workers": predicted,
            "measured_confirm_seconds_2_workers": by[2]["confirm_seconds"],
            "model_error": by[2]["confirm_seconds"] / predicted - 1.0}
    return model


def predict(model: dict[str, Any], samples: int, fraction: float, workers: int,
            row_bytes: int, kind: str = "dask_local_cluster") -> dict[str, Any]:
    """Predicted wall time of one audit on ``workers`` workers (module docstring)."""
    c = model["per_kind"][kind]
    m = exploration_size(samples, fraction)
    # the client's share: fitting, featurizing and generating on chunk 0 at most (issue 30
    # item 5: the validation half of larger explorations is counted on the workers)
    client = (model["explore_fixed_seconds"]
              + model["explore_seconds_per_output"] * min(m, EXPLORE_CHUNK))
    k = chunks(samples, fraction)
    k_e = 2 * math.ceil(m / EXPLORE_CHUNK)
    t_validate = c.get("t_validate_chunk_seconds", c["t_chunk_seconds"])

    def total(w: int | None) -> tuple[float, float]:  # (exploration, all); None: unbounded
        explore = client + explore_draw_seconds(
            samples, fraction, w or k_e, c["t_explore_chunk_seconds_in_client"],
            c["t_explore_chunk_seconds"], t_validate)
        return explore, explore + (math.ceil(k / w) if w else 1) * c["t_chunk_seconds"]

    explore, seconds = total(workers)
    one_worker = total(1)[1]
    return {"samples_per_side": samples, "explore_fraction": fraction, "workers": workers,
            "seconds": seconds, "explore_seconds": explore,
            "explore_client_seconds": client,
            "speedup": one_worker / seconds,
            # exploration drawn, fitted on and selected on in the client, as before issue 30
            # item 5 (client share linear in m)
            "speedup_local_exploration": one_worker / (
                model["explore_fixed_seconds"] + model["explore_seconds_per_output"] * m
                + 2 * m / EXPLORE_CHUNK * c["t_explore_chunk_seconds_in_client"]
                + math.ceil(k / workers) * c["t_chunk_seconds"]),
            "speedup_limit": one_worker / total(None)[1],
            "client_memory_bytes": 2 * min(m, EXPLORE_CHUNK) * row_bytes,
            "bytes_over_network": (k + max(0, k_e - 2)) * (
                c["bytes_sent_per_chunk"] + c["bytes_received_per_chunk"])
            + (EXPLORE_CHUNK * row_bytes if k_e > 2 else 0)}


def human_seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def human_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000:
            return f"{n:.0f} {unit}"
        n /= 1000
    return f"{n:.0f} PB"


def markdown(out: dict[str, Any]) -> str:
    lines = ["# Scaling of one audit and a cost model for N machines", "",
             f"Machine: {out['cpu_count']} CPUs, load average {out['load_average']}; "
             f"CHUNK = {CHUNK} outputs. Results bit-identical across executors: "
             f"{out['all_identical']}.", "",
             "## Measured", "",
             "| mechanism | executor | workers | seconds | of which exploration | chunks | "
             "outputs/s | bytes out / back per chunk |", "|---|---|---|---|---|---|---|---|"]
    for mech in out["mechanisms"]:
        for r in mech["runs"]:
            per = ("" if r["chunks"] is None else
                   f"{r['bytes_sent'] / r['chunks']:.0f} / {r['bytes_received'] / r['chunks']:.0f}")
            lines.append(f"| {mech['mechanism']} | {r['executor']} | {r['workers']} | "
                         f"{r['seconds']:.1f} | {r['explore_seconds']:.2f} | {r['chunks'] or ''} | "
                         f"{r['outputs_per_second']:.3g} | {per} |")
    lines += ["", "Scaling efficiency 1 → 2 workers (throughput(2) / 2·throughput(1)): "
              + ", ".join(f"{m['mechanism']} {k} {v:.2f}" for m in out["mechanisms"]
                          for k, v in m["scaling_efficiency_1_to_2"].items()) + ".", "",
              "## Model", "",
              "`T(n, f, W) = a + b·min(m, C) + E(m, W) + ceil(K/W)·t_chunk`, `m = f·n` "
              "exploration outputs per side; `E = 2·(m/C)·t_c` for one chunk per side (both "
              "chunks 0 in the client), else `t_c + t_e + R·t_v` (chunk 0 of D in the client, "
              "of D′ on a worker, `R ≈ ceil(K_v/W)` rounds of the `K_v = 2·(ceil(m/C) − 1)` "
              "validation chunks on the workers), `K = 2·ceil((1 − f)·n / C)`, "
              "`C = 2²⁰` (benchmarks/scaling.py). `a + b·min(m, C)` is the client's share "
              "(fitting the featurizer, generating on chunk 0). Fitted constants and the check "
              "of the 2-worker prediction:", "",
              "| mechanism | a (s) | b (s/output) | executor | t_e (s) | t_chunk (s) | 2 workers: "
              "predicted / measured confirmation (s) | error |",
              "|---|---|---|---|---|---|---|---|"]
    for mech in out["mechanisms"]:
        m = mech["model"]
        for kind, c in m["per_kind"].items():
            lines.append(f"| {mech['mechanism']} | {m['explore_fixed_seconds']:.2f} | "
                         f"{m['explore_seconds_per_output']:.3g} | {kind} | "
                         f"{c['t_explore_chunk_seconds']:.3f} | {c['t_chunk_seconds']:.3f} | "
                         f"{c['predicted_confirm_seconds_2_workers']:.1f} / "
                         f"{c['measured_confirm_seconds_2_workers']:.1f} | "
                         f"{100 * c['model_error']:+.0f} % |")
    checks = [(m["mechanism"], m["model"]["validation"]) for m in out["mechanisms"]]
    lines += ["", "Out of sample (2.5× the budget, default `explore_fraction=0.1`, process pool "
              "of 2): " + "; ".join(
                  f"{name} at {v['samples_per_side']:.2g} per side predicted "
                  f"{v['predicted_seconds']:.1f} s (exploration "
                  f"{v['predicted_explore_seconds']:.1f} s), measured {v['measured_seconds']:.1f} s "
                  f"({v['measured_explore_seconds']:.1f} s), error {100 * v['error']:+.0f} %"
                  for name, v in checks) + "."]
    lines += ["", "Exploration drawn on the workers (largest exploration share, process pool of "
              "2): " + "; ".join(
                  f"{m['mechanism']} at f = {v['explore_fraction']} ({v['explore_chunks']} "
                  f"chunks) predicted {v['predicted_draw_seconds']:.1f} s, measured "
                  f"{v['measured_draw_seconds']:.1f} s, error {100 * v['error']:+.0f} %"
                  for m in out["mechanisms"] for v in [m["model"]["explore_draw_check"]]) + "."]
    lines += ["", "Target (issue 30 item 5): one audit on 8 workers at 10⁸ outputs per side "
              "(Dask constants): " + "; ".join(
                  f"{m['mechanism']} at f = {p['explore_fraction']}: {p['speedup']:.1f}× "
                  f"(exploration drawn in the client: {p['speedup_local_exploration']:.1f}×) "
                  f"({human_seconds(p['seconds'])}, of which exploration "
                  f"{human_seconds(p['explore_seconds'])}, client share "
                  f"{human_seconds(p['explore_client_seconds'])})"
                  for m in out["mechanisms"] for p in m["predictions"]
                  if p["workers"] == 8 and p["samples_per_side"] == 10**8) + "."]
    lines += ["", f"## Predicted: one audit on N machines of {CORES_PER_MACHINE} workers "
              "(Dask constants)", "",
              "| mechanism | outputs per side | explore_fraction | machines | wall time | "
              "of which exploration | speedup over 1 worker | Amdahl limit | "
              "exploration outputs in client memory | network |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for mech in out["mechanisms"]:
        for p in mech["predictions"]:
            lines.append(
                f"| {mech['mechanism']} | {p['samples_per_side']:.0e} | {p['explore_fraction']} | "
                f"{p['workers'] // CORES_PER_MACHINE} | {human_seconds(p['seconds'])} | "
                f"{human_seconds(p['explore_seconds'])} | {p['speedup']:.1f} | "
                f"{p['speedup_limit']:.0f} | {human_bytes(p['client_memory_bytes'])} | "
                f"{human_bytes(p['bytes_over_network'])} |")
    return "\n".join(lines) + "\n"


def measure(name: str, samples: int) -> dict[str, Any]:
    """All runs of one mechanism, its model and its predictions."""
    runs: list[dict[str, Any]] = []
    reference: dict[str, Any] | None = None

    def record(kind: str, workers: int, executor: Any) -> None:
        nonlocal reference
        one(name, executor, min(samples, 200_000))  # warm-up: imports on the workers
        r = one(name, executor, samples)
        if reference is None:
            reference = r["record"]
        runs.append({"executor": kind, "workers": workers,
                     "outputs_per_second": 2 * samples / r["seconds"],
                     "identical_result": r["record"] == reference,
                     "epsilon_lower": r["record"]["epsilon_lower"],
                     **{k: v for k, v in r.items() if k != "record"}})
        print(json.dumps({"mechanism": name, **runs[-1]}), flush=True)

    t_explore: dict[str, float] = {}
    record("local", 1, None)
    t_explore["local"] = time_explore_chunks(name, None)
    ctx = multiprocessing.get_context("spawn")
    for workers in (1, 2):
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            record("process_pool", workers, pool)
            if workers == 1:
                t_explore["process_pool"] = time_explore_chunks(name, pool)
    from distributed import Client, LocalCluster

    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0", silence_logs=logging.CRITICAL
                          ) as cluster, Client(cluster) as client:  # no shutdown heartbeat noise
            record("dask_local_cluster", workers, client)
            if workers == 1:
                t_explore["dask_local_cluster"] = time_explore_chunks(name, client)
    # larger explorations for the exploration cost a + b·n (confirmation on a 2-worker pool)
    fraction = workload(name)[4]["explore_fraction"]
    with ProcessPoolExecutor(2, mp_context=ctx) as pool:
        explorations = [{**one(name, pool, samples, explore_fraction=f), "explore_fraction": f}
                        for f in sorted({min(0.5, 5 * fraction), 0.5})]
        model = fit(runs, explorations, t_explore)
        # out of sample: 2.5x the budget at the default explore_fraction, 2 workers
        big = int(2.5 * samples)
        check = one(name, pool, big, explore_fraction=0.1)
    model["validation"] = {"samples_per_side": big, "explore_fraction": 0.1, "workers": 2,
                           "measured_seconds": check["seconds"],
                           "measured_explore_seconds": check["explore_seconds"]}
    efficiency = {}
    for kind in ("process_pool", "dask_local_cluster"):
        t = {r["workers"]: r["outputs_per_second"] for r in runs if r["executor"] == kind}
        efficiency[kind] = t[2] / (2 * t[1])
    mechanism, d, *_ = workload(name)
    row_bytes = int(draw(as_sampler(mechanism), d, 1, np.random.default_rng(0)).nbytes)
    out = {"mechanism": name, "samples_per_side": samples, "row_bytes": row_bytes,
           "runs": runs,
           "explorations": [{k: v for k, v in e.items() if k != "record"} for e in explorations],
           "scaling_efficiency_1_to_2": efficiency, "model": model}
    derive(out)
    print(json.dumps({"mechanism": name, "validation": model["validation"]}), flush=True)
    return out


def derive(mech: dict[str, Any]) -> None:
    """The checks and predictions of a measured mechanism's model (``--refit`` redoes them on a
    saved ``scaling.json``): the exploration drawing term on the largest exploration share,
    the out-of-sample validation, the predicted table."""
    model, samples, row_bytes = mech["model"], mech["samples_per_side"], mech["row_bytes"]
    widest = mech["explorations"][-1]  # the largest exploration share: several chunks per side
    c = model["per_kind"]["process_pool"]
    drawn = explore_draw_seconds(samples, widest["explore_fraction"], 2,
                                 c["t_explore_chunk_seconds_in_client"],
                                 c["t_explore_chunk_seconds"],
                                 c.get("t_validate_chunk_seconds", c["t_chunk_seconds"]))
    model["explore_draw_check"] = {
        "samples_per_side": samples, "explore_fraction": widest["explore_fraction"],
        "workers": 2, "explore_chunks": 2 * math.ceil(widest["explore_samples"] / EXPLORE_CHUNK),
        "predicted_draw_seconds": drawn, "measured_draw_seconds": widest["explore_draw_seconds"],
        "error": widest["explore_draw_seconds"] / drawn - 1.0}
    v = model["validation"]
    expected = predict(model, v["samples_per_side"], 0.1, 2, 0, kind="process_pool")
    v.update(predicted_seconds=expected["seconds"],
             predicted_explore_seconds=expected["explore_seconds"],
             error=v["measured_seconds"] / expected["seconds"] - 1.0)
    mech["predictions"] = [predict(model, n, f, CORES_PER_MACHINE * m, row_bytes)
                           for n in PREDICT_SAMPLES for f in PREDICT_FRACTIONS
                           for m in PREDICT_MACHINES]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=8e6,
                        help="outputs per side of the svt6 audit (default 8e6)")
    parser.add_argument("--library", action="store_true",
                        help="also the one-output-per-call diffprivlib Laplace (4.5e6 per side)")
    parser.add_argument("--library-samples", type=float, default=4.5e6)
    parser.add_argument("--out", default="reports/bench")
    parser.add_argument("--refit", action="store_true",
                        help="redo the model's checks and predictions on OUT/scaling.json "
                             "without measuring again")
    args = parser.parse_args(argv)
    path = Path(args.out)
    if args.refit:
        out = json.loads((path / "scaling.json").read_text(encoding="utf-8"))
        for mech in out["mechanisms"]:
            derive(mech)
        write(path, out)
        return 0
    mechanisms = [measure("svt6", int(args.samples))]
    if args.library:
        mechanisms.append(measure("library_laplace", int(args.library_samples)))
    out = {"cpu_count": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
           "chunk": CHUNK, "cores_per_machine": CORES_PER_MACHINE, "mechanisms": mechanisms,
           "all_identical": all(r["identical_result"] for m in mechanisms for r in m["runs"]),
           # the docs' figure (svt6, docs/howto/large-audits.md), as before
           "scaling_efficiency_1_to_2": mechanisms[0]["scaling_efficiency_1_to_2"]}
    write(path, out)
    print(json.dumps({m["mechanism"]: m["scaling_efficiency_1_to_2"] for m in mechanisms}
                     | {"all_identical": out["all_identical"]}))
    return 0


def write(path: Path, out: dict[str, Any]) -> None:
    """``scaling.json`` and ``scaling.md`` in ``path``, each written atomically."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (("scaling.json", json.dumps(out, indent=1) + "\n"),
                       ("scaling.md", markdown(out))):
        tmp = path / (name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path / name)


if __name__ == "__main__":
    sys.exit(main())
