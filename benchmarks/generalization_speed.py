"""Throughput of the paper-001 checkers: closeness audits per second.

Three settings: (1) ``audit_closeness`` between two sampled distributions (no pmf) at 10⁴
outputs per side — the per-sample cost of the PG checker when M has no pmf; (2) the PG checker
on Algorithm 1 with exact per-sample closeness (thresholds m = 10, n = 1000); (3) the PG checker
with sampled per-sample closeness on the same learner with its pmf hidden. Writes
``reports/bench/generalization_speed.json``.

Usage: ``python benchmarks/generalization_speed.py [--datasets 200] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from algorithms.generalization.learner import (
    GenericPGLearner,
    labelled_loss,
    noisy_threshold_distribution,
    threshold_predictions,
)
from dpcheck import (
    Closeness,
    IIDPopulation,
    PerfectGeneralization,
    audit_closeness,
    check_perfect_generalization,
)


class _Hidden:
    """The learner without its pmf (forces sampled closeness audits)."""

    def __init__(self, learner: GenericPGLearner) -> None:
        self.learner = learner

    def sample(self, data, size, rng):
        return self.learner.sample(data, size, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="reports/bench/generalization_speed.json")
    args = parser.parse_args()
    m, n = 10, 1000
    loss = labelled_loss(threshold_predictions(m))
    w = noisy_threshold_distribution(m, 5, 0.1)
    learner = GenericPGLearner(0.1, 0.5, loss)
    pop = IIDPopulation(np.arange(2 * m), w, n)
    sim = learner.simulator(w, n)
    claim = PerfectGeneralization(0.1, 0.5)
    records = []

    def a(size, rng):
        return rng.integers(0, 11, size)

    def b(size, rng):
        return rng.integers(0, 11, size)

    def closeness_only() -> int:
        for i in range(args.datasets):
            audit_closeness(a, b, Closeness(0.5), samples=10_000, seed=i)
        return args.datasets

    def pg_exact() -> int:
        check_perfect_generalization(learner, pop, claim, simulator=sim,
                                     datasets=args.datasets, seed=0)
        return args.datasets

    def pg_sampled() -> int:
        check_perfect_generalization(_Hidden(learner), pop, claim, simulator=sim,
                                     datasets=args.datasets, samples=10_000, seed=0)
        return args.datasets

    for name, fn in (("audit_closeness, 1e4 samples/side", closeness_only),
                     ("PG checker, exact per-sample closeness", pg_exact),
                     ("PG checker, sampled closeness 1e4/side", pg_sampled)):
        best = np.inf
        for _ in range(args.repeats):
            start = time.perf_counter()
            count = fn()
            best = min(best, time.perf_counter() - start)
        records.append({"setting": name, "closeness_checks": count, "seconds": best,
                        "closeness_audits_per_second": count / best})
        print(f"{name}: {count / best:,.0f} closeness checks/s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"benchmark": "generalization_speed", "cpus": os.cpu_count(),
                               "records": records}, indent=2))
    os.replace(tmp, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
