"""Samples per second of the one-output-per-call adapters (dpcheck.integrations.scalar, integrations).

For each adapter: draw ``--n`` outputs in one call (best of ``--repeats``) and report calls/s,
next to the library's own cost (the hand-written loop a user would write, without the adapter).
Writes ``reports/bench/adapters_speed.json``. The machine is shared: the load average is
recorded with the results.

Usage: ``python benchmarks/adapters_speed.py [--n 20000] [--repeats 3]``
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


def laplace_one(data, rng):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0)


def hand_loop(m: int, rng: np.random.Generator) -> list[float]:
    return [laplace_one([1, 0], rng) for _ in range(m)]


def cases(n: int):
    from diffprivlib import mechanisms as M
    from diffprivlib import tools
    import opendp.prelude as dp

    from dpcheck.integrations.diffprivlib import from_diffprivlib
    from dpcheck.integrations.opendp import from_opendp

    dp.enable_features("contrib")
    x = np.linspace(0.0, 1.0, 100)
    lap = M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=0)
    odp = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                            scale=1.0)
    pipe = ((dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
            >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum() >> dp.m.then_laplace(2.0))
    rs = np.random.RandomState(0)
    return [
        ("from_scalar(numpy laplace)", dpcheck.from_scalar(laplace_one), [1, 0], n,
         lambda m: hand_loop(m, np.random.default_rng(0))),
        ("diffprivlib.Laplace", from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0)),
         1.0, n, lambda m: [lap.randomise(1.0) for _ in range(m)]),
        ("diffprivlib.Gaussian", from_diffprivlib(
            M.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)), 1.0, n, None),
        ("diffprivlib.Geometric", from_diffprivlib(M.Geometric(epsilon=1.0)), 1, n, None),
        ("diffprivlib.Snapping", from_diffprivlib(
            M.Snapping(epsilon=1.0, sensitivity=1.0, lower=0, upper=20)), 1.0, n // 4, None),
        ("diffprivlib.tools.mean", from_diffprivlib(tools.mean, epsilon=1.0, bounds=(0.0, 1.0)),
         x, n // 10, lambda m: [tools.mean(x, epsilon=1.0, bounds=(0.0, 1.0), random_state=rs)
                                for _ in range(m)]),
        ("diffprivlib.tools.count_nonzero", from_diffprivlib(tools.count_nonzero, epsilon=1.0),
         x, n // 10, None),
        ("opendp.make_laplace(f64)", from_opendp(odp), 1.0, n // 10,
         lambda m: [odp(1.0) for _ in range(m)]),
        ("opendp clamp>>sum>>laplace", from_opendp(pipe), list(x[:10]), n // 10,
         lambda m: [pipe(list(x[:10])) for _ in range(m)]),
    ]


def best(repeats: int, fn) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="reports/bench/adapters_speed.json")
    args = parser.parse_args()
    records = []
    for name, mech, data, n, loop in cases(args.n):
        t = best(args.repeats, lambda: mech(data, n, np.random.default_rng(0)))
        rec = {"adapter": name, "outputs": n, "seconds": t, "samples_per_second": n / t,
               "seeding": getattr(mech, "seeding", "rng")}
        if loop is not None:
            t_loop = best(args.repeats, lambda: loop(n))
            rec["hand_loop_samples_per_second"] = n / t_loop
        records.append(rec)
        hand = rec.get("hand_loop_samples_per_second")
        print(f"{name:34s} {n / t:10.0f} /s" + ("" if hand is None else
                                                f"   hand loop {hand:10.0f} /s"))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "adapters_speed", "machine": platform.platform(), "cpus": os.cpu_count(),
           "load_average": os.getloadavg(), "numpy": np.__version__, "records": records}
    with tempfile.NamedTemporaryFile("w", dir=out.parent, delete=False, suffix=".tmp") as fh:
        json.dump(doc, fh, indent=2)
    os.replace(fh.name, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
