"""Speed of the slowest seed-000 sampler at paper scale: A_Agnostic (Algorithms 1–2, EM base
learner ε_A = 1) on thresholds over {0..63}, n = 20 000, ε = 0.05 (k = 1000, |W| = 19 000).

Stages (best of ``--repeats``, batches of ``--batch`` runs, runs per second):

* ``fresh_data_old_definition``: a multinomial dataset per run, then ``run_counts`` (the figure
  this benchmark reported before the vectorisation: 18.7k–22k runs/s);
* ``fresh_data_run_iid``: ``run_iid`` (T and W drawn as two independent multinomials, the same
  law, notes §4.4);
* ``given_datasets``: ``run_counts`` on pre-drawn datasets (T by 2N − 1 hypergeometric draws);
* ``fixed_dataset``: ``sample(data, size)`` on one dataset (the audit path);
* ``given_t``: Algorithm 1 + the base learner given the count tables of T and W (``_cond_sample``).

The floor of the first four is numpy's per-variate cost of the ~127 hypergeometric/binomial
draws that T and W need per run (≈ 0.1–0.2 µs each); ``given_t`` is the part this code controls.
Writes ``reports/bench/realizable_to_agnostic_speed.json`` atomically.

Usage: ``python benchmarks/realizable_to_agnostic_speed.py [--repeats 3] [--batch 20000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _timing import best_of

from algorithms.realizable_to_agnostic.agnostic import Agnostic, draw_subset_counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=20_000)
    ap.add_argument("--out", default="reports/bench/realizable_to_agnostic_speed.json")
    args = ap.parse_args()
    dom, n, eps, b = 64, 20_000, 0.05, args.batch
    x = np.arange(dom)
    p1 = np.where(x >= 32, 0.6, 0.4)
    law = np.stack([(1 - p1) / dom, p1 / dom], 1)
    cell = law.reshape(-1)
    mech = Agnostic(dom, eps)
    k, w = mech.sizes(n)
    rng = np.random.Generator(np.random.PCG64(0))
    sc = rng.multinomial(n, cell, size=b).reshape(b, dom, 2)
    ct = draw_subset_counts(sc.reshape(b, -1), np.full(b, k), rng).reshape(sc.shape)
    data = np.repeat(np.arange(2 * dom), sc[0].reshape(-1))
    data = np.stack([data // 2, data % 2], 1)
    stages: dict[str, Callable[[], object]] = {
        "fresh_data_old_definition": lambda: mech.run_counts(
            rng.multinomial(n, cell, size=b).reshape(b, dom, 2), rng),
        "fresh_data_run_iid": lambda: mech.run_iid(law, n, b, rng),
        "given_datasets": lambda: mech.run_counts(sc, rng),
        "fixed_dataset": lambda: mech.sample(data, b, rng),
        "given_t": lambda: mech._cond_sample(ct, sc - ct, np.full(b, k), np.full(b, w), sc,
                                             rng),
    }
    records = []
    for name, fn in stages.items():
        secs = best_of(fn, args.repeats)
        records.append({"stage": name, "runs": b, "batch_seconds": secs,
                        "runs_per_second": b / secs, "microseconds_per_run": secs / b * 1e6})
        print(f"{name:26s} {b / secs:10.0f} runs/s ({secs / b * 1e6:6.2f} µs/run)", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "realizable_to_agnostic_speed",
               "mechanism": f"A_Agnostic(thresholds N={dom}, n={n}, eps={eps}, EM learner)",
               "k": k, "w": w, "python": platform.python_version(),
               "numpy": np.__version__, "machine": platform.machine(), "records": records}
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(payload, fh, indent=2)
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
