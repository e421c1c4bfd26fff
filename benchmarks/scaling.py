"""Throughput of one audit versus the number of workers (process pool and Dask LocalCluster).

One large audit of a 10-query sparse-vector mechanism (SVT6, the zoo entry) with a small
exploration share, so that the confirmation (the part that runs on workers) dominates: outputs
per second for ``executor=None`` and for 1 and 2 workers of a ``ProcessPoolExecutor`` and of a
Dask ``LocalCluster`` (one thread per worker process). Scaling efficiency is
``throughput(2) / (2 · throughput(1))`` for each executor kind. Every run must return the same
result bit for bit (checked). Writes ``reports/bench/scaling.json``.

The numbers depend on the cores actually free: on a shared 2-core machine two workers can
only approach 2× when nothing else runs.

Usage::

    python benchmarks/scaling.py --samples 8e6
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import dpcheck
from algorithms.zoo import get


def one(executor: object, samples: int) -> tuple[float, dict[str, object]]:
    entry = get("svt6")
    d, dp = entry.pairs[0]
    start = time.perf_counter()
    r = dpcheck.audit(entry.mechanism, d, dp, entry.claim, samples=samples, seed=0,
                      explore_fraction=0.01, executor=executor)
    seconds = time.perf_counter() - start
    rec = r.to_dict()
    rec.pop("seconds")
    return seconds, rec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=float, default=8e6)
    parser.add_argument("--out", default="reports/bench")
    args = parser.parse_args(argv)
    samples = int(args.samples)
    runs = []
    reference = None

    def record(kind: str, workers: int, executor: object) -> None:
        nonlocal reference
        one(executor, 200_000)  # warm-up: imports on the workers
        seconds, rec = one(executor, samples)
        if reference is None:
            reference = rec
        same = rec == reference
        runs.append({"executor": kind, "workers": workers, "seconds": seconds,
                     "outputs_per_second": 2 * samples / seconds, "identical_result": same,
                     "epsilon_lower": rec["epsilon_lower"]})
        print(json.dumps(runs[-1]), flush=True)

    record("local", 1, None)
    ctx = multiprocessing.get_context("spawn")
    for workers in (1, 2):
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            record("process_pool", workers, pool)
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask is in the dev extra
        LocalCluster = None
    if LocalCluster is not None:
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                record("dask_local_cluster", workers, client)
    efficiency = {}
    for kind in ("process_pool", "dask_local_cluster"):
        t = {r["workers"]: r["outputs_per_second"] for r in runs if r["executor"] == kind}
        if 1 in t and 2 in t:
            efficiency[kind] = t[2] / (2 * t[1])
    out = {"mechanism": "svt6", "samples_per_side": samples, "explore_fraction": 0.01,
           "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "runs": runs,
           "scaling_efficiency_1_to_2": efficiency,
           "all_identical": all(r["identical_result"] for r in runs)}
    path = Path(args.out) / "scaling.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    os.replace(tmp, path)
    print(json.dumps({"scaling_efficiency_1_to_2": efficiency,
                      "all_identical": out["all_identical"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
