"""Speed of the auditor core against the cost of the noise it consumes.

Measures, for a scalar Laplace mechanism (true ε = 1) audited at 10⁵, 10⁶ and 10⁷ samples per
side, the audit's wall time and the time numpy alone needs to draw the same Laplace variates in
the same chunks (best of ``--repeats``), and writes ``reports/bench/core_speed.json``.

Usage: ``python benchmarks/core_speed.py [--repeats 5] [--max-samples 10000000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import dpcheck
from dpcheck.core.confirm import CHUNK
from dpcheck.core.audit import exploration_size


def laplace_count(data, size, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def numpy_only(samples: int, rng: np.random.Generator) -> None:
    """Draw exactly the variates an audit with ``samples`` per side consumes."""
    n_e = exploration_size(samples)
    for _ in range(2):
        rng.laplace(0.0, 1.0, n_e)
        left = samples - n_e
        while left:
            rng.laplace(0.0, 1.0, min(CHUNK, left))
            left -= min(CHUNK, left)


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-samples", type=int, default=10_000_000)
    parser.add_argument("--out", default="reports/bench/core_speed.json")
    args = parser.parse_args()
    records = []
    for samples in (10**5, 10**6, 10**7):
        if samples > args.max_samples:
            continue
        rng = np.random.default_rng(0)
        t_numpy = best_of(args.repeats, lambda: numpy_only(samples, rng))
        results = []
        t_audit = best_of(args.repeats, lambda: results.append(dpcheck.audit(
            laplace_count, [1], [0], dpcheck.PureDP(1.0), samples=samples, seed=0)))
        r = results[-1]
        rec = {"mechanism": "laplace_count(scale=1)", "claimed_epsilon": 1.0,
               "true_epsilon": 1.0, "epsilon_lower": r.epsilon_lower,
               "samples_per_side": samples, "seconds": t_audit, "numpy_seconds": t_numpy,
               "ratio_to_numpy": t_audit / t_numpy, "violation": r.violation,
               "overhead_ns_per_sample": 1e9 * (t_audit - t_numpy) / (2 * samples)}
        records.append(rec)
        print(f"{samples:>9} per side: audit {t_audit * 1e3:8.1f} ms, numpy {t_numpy * 1e3:8.1f} ms,"
              f" ratio {rec['ratio_to_numpy']:.2f}, overhead {rec['overhead_ns_per_sample']:.1f}"
              f" ns/sample, epsilon_lower {r.epsilon_lower:.4f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "core_speed", "machine": platform.platform(),
           "cpus": os.cpu_count(), "numpy": np.__version__, "records": records}
    with tempfile.NamedTemporaryFile("w", dir=out.parent, delete=False, suffix=".tmp") as fh:
        json.dump(doc, fh, indent=2)
    os.replace(fh.name, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
