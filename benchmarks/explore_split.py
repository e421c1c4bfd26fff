"""Client share and bound of one large exploration, before and after validation on the workers.

Issue 30 item 5: an exploration of ``m > EXPLORE_CHUNK`` outputs per side used to be fitted,
featurized and selected on in the client (cost linear in ``m``); it now keeps generation on the
first half of chunk 0 in the client and counts the validation half on the workers
(:mod:`dpcheck.core.explore_validate`). This script runs :func:`dpcheck.core.explore.explore`
with ``n_explore = m`` on a 1-worker process pool and measures the client process's CPU
seconds (``time.process_time``: the workers' CPU is not in it; drawing chunk 0 of D is) and
the wall seconds of exploration, then confirms on ``n_confirm`` fresh outputs per side
(:func:`dpcheck.core.audit.finish`) for the bound. It uses only the API both versions share, so
it runs against any checkout::

    PYTHONPATH=<checkout> nice -n 15 python benchmarks/explore_split.py --mechanism svt6 \\
        --chunks 4 --confirm-chunks 4 --seeds 0 1 2 --label after

One JSON line per seed (appended to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from contextlib import nullcontext
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from algorithms.zoo import get
from dpcheck.core.audit import finish
from dpcheck.core.explore import EXPLORE_CHUNK, explore, setup_audit
from dpcheck.events.select import MAX_ATOMS


def _workload(name: str) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    entry = get(name)
    d, d_prime = entry.pairs[0]
    kw = {"float_features": not name.startswith("delta_leak")}  # rare_events.py's choice
    return entry.mechanism, d, d_prime, entry.claim, kw


def run(name: str, m: int, n_confirm: int, seed: int, workers: int = 1) -> dict[str, Any]:
    """One exploration of ``m`` outputs per side and its confirmation; CPU and wall seconds
    (``workers=0``: no executor, the client's CPU is the whole exploration's)."""
    mechanism, d, d_prime, claim, kw = _workload(name)
    ctx = multiprocessing.get_context("spawn")
    with (ProcessPoolExecutor(workers, mp_context=ctx) if workers else nullcontext()) as pool:
        if pool is not None:
            pool.submit(sum, [1]).result()  # the worker is up before timing
        setup = setup_audit(mechanism, claim, samples=m + n_confirm, alpha=0.05, seed=seed,
                            relation=None, features=None, candidates=3, explore_fraction=0.1,
                            max_atoms=MAX_ATOMS, progress=None, executor=pool, checkpoint=None,
                            ties=False, **kw)
        cpu, wall = time.process_time(), time.perf_counter()
        explored = explore(setup, d, d_prime, n_explore=m, n_confirm=n_confirm)
        client_cpu = time.process_time() - cpu
        explore_wall = time.perf_counter() - wall
        result = finish(setup, explored, start=wall)
    return {"mechanism": name, "m_per_side": m, "n_confirm": n_confirm, "seed": seed,
            "workers": workers,
            "client_cpu_seconds": round(client_cpu, 2),
            "explore_wall_seconds": round(explore_wall, 2),
            "epsilon_lower": result.epsilon_lower, "violation": bool(result.violation),
            "load": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mechanism", default="svt6")
    p.add_argument("--chunks", type=float, default=4.0, help="m in units of EXPLORE_CHUNK")
    p.add_argument("--confirm-chunks", type=float, default=4.0)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--label", default="")
    p.add_argument("--workers", type=int, default=1, help="process pool size (0: no executor)")
    p.add_argument("--out", default="reports/bench/explore_split.jsonl")
    a = p.parse_args(argv)
    m, nc = int(a.chunks * EXPLORE_CHUNK), int(a.confirm_chunks * EXPLORE_CHUNK)
    for seed in a.seeds:
        row = {"label": a.label, **run(a.mechanism, m, nc, seed, a.workers)}
        line = json.dumps(row, default=str)
        print(line, flush=True)
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
