"""Speed of paper 002's user-level learners at realistic sizes (runs per second).

For ``UserLearner`` (thresholds on N = 16, Theorem 4.6) and ``ThresholdLearner`` (N = 1024,
Theorem 5.2) on datasets of n ∈ {1 000, 10 000} users × m ∈ {4, 16} examples (noisy threshold,
η = 0.1, α = 0.1, ε = 1), measures

* ``runs_per_second``: independent runs of the whole algorithm on one dataset, vectorised
  (``sample(data, size=runs)``: the data-dependent counts once, the randomness vectorised);
* ``single_run_seconds``: one run including every data-dependent precomputation
  (``sample(data, size=1)``), i.e. the cost of one private release;

best of ``--repeats``, and writes ``reports/bench/pure_agnostic_speed.json`` atomically.

Usage: ``python benchmarks/pure_agnostic_speed.py [--repeats 3] [--runs 2000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from pathlib import Path

import numpy as np
from _timing import best_of

from algorithms.pure_agnostic import ThresholdLearner, UserLearner, threshold_table
from algorithms.pure_agnostic.testbeds import Distribution, sample_users


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--out", default="reports/bench/pure_agnostic_speed.json")
    args = ap.parse_args()
    rng = np.random.Generator(np.random.PCG64(0))
    records = []
    for name, domain in (("UserLearner", 16), ("ThresholdLearner", 1024)):
        dist = Distribution.noisy_threshold(domain, domain // 2, 0.1)
        for n in (1_000, 10_000):
            for m in (4, 16):
                z = sample_users(dist, n, m, rng)[0]
                mech = (UserLearner(1.0, 0.1, m, threshold_table(domain)) if name == "UserLearner"
                        else ThresholdLearner(1.0, 0.1, m, domain))
                many = best_of(lambda mech=mech, z=z: mech.sample(z, args.runs, rng), args.repeats)
                one = best_of(lambda mech=mech, z=z: mech.sample(z, 1, rng), args.repeats)
                rec = {"mechanism": name, "domain": domain, "users": n, "m": m,
                       "runs": args.runs, "runs_per_second": args.runs / many,
                       "batch_seconds": many, "single_run_seconds": one}
                records.append(rec)
                print(f"{name:17s} N={domain:5d} n={n:6d} m={m:3d}: "
                      f"{rec['runs_per_second']:10.0f} runs/s, one release {one * 1e3:8.1f} ms",
                      flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "pure_agnostic_speed", "python": platform.python_version(),
               "machine": platform.machine(), "records": records}
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(payload, fh, indent=2)
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
