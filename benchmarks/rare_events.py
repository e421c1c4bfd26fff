"""Rare events (issue 30 item 2): how often an output value leaked with small probability is
refuted, with and without the support candidates of :mod:`dpcheck.events.support`.

The mechanisms are the zoo's ``delta_leak_*`` entries (with probability δ1 release the exact
sum, else the sum plus Laplace noise; claimed (ε0, δ1/10)), audited with
``float_features=False`` so that the float64 grid of the Laplace part (a hole of its own that
the default features find) cannot refute the claim instead of the leak; and a categorical
mechanism, 4-ary randomized response at ε = 0.1 that returns a fifth, rare category under D
only. Each setting runs at the budget where exploration (10 %) expects three sightings of
the leaked value, over seeds 0–19, at the audit's default α = 0.05.

Run: ``./dev python benchmarks/rare_events.py [--seeds 20] [--out reports/bench/rare_events.json]``
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

import dpcheck
from algorithms.zoo import get


class RareCategory:
    """4-ary randomized response at ε0 on the first record; under a dataset whose first record
    is 1, the output is the extra category 4 with probability ``leak`` (never under 0)."""

    def __init__(self, eps: float, leak: float) -> None:
        self.eps, self.leak = eps, leak

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        value = int(np.asarray(data)[0])
        keep = np.exp(self.eps) / (np.exp(self.eps) + 3)
        other = rng.integers(0, 3, size)
        other += other >= value  # uniform over the three other categories
        out = np.where(rng.random(size) < keep, value, other)
        if value == 1:
            out = np.where(rng.random(size) < self.leak, 4, out)
        return out.astype(np.int64)


def _settings() -> list[dict[str, Any]]:
    rows = []
    for leak, samples in ((1e-3, 30_000), (1e-4, 300_000), (1e-5, 3_000_000)):
        e = get(f"delta_leak_{leak:.0e}")
        d, dp = e.pairs[0]
        rows.append({"name": f"delta_leak_{leak:.0e}", "mechanism": e.mechanism, "d": d,
                     "d_prime": dp, "claim": e.claim, "samples": samples,
                     "kwargs": {"float_features": False}})
    rows.append({"name": "rare_category_1e-04", "mechanism": RareCategory(0.1, 1e-4),
                 "d": [1], "d_prime": [0],
                 "claim": dpcheck.ApproxDP(0.1, 1e-5), "samples": 300_000, "kwargs": {}})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--out", default="reports/bench/rare_events.json")
    args = ap.parse_args()
    results = []
    for row in _settings():
        for support in (True, False):
            refuted, eps, secs, floors = 0, [], 0.0, []
            for seed in range(args.seeds):
                t = time.perf_counter()
                r = dpcheck.audit(row["mechanism"], row["d"], row["d_prime"], row["claim"],
                                  samples=row["samples"], seed=seed, support=support,
                                  **row["kwargs"])
                secs += time.perf_counter() - t
                refuted += bool(r.violation)
                eps.append(r.epsilon_lower)
                if r.support_floor is not None:
                    floors.append(r.support_floor)
            out = {"setting": row["name"], "samples_per_side": row["samples"],
                   "claim": str(row["claim"]), "support": support, "seeds": args.seeds,
                   "refuted": refuted, "median_epsilon_lower": float(np.median(eps)),
                   "seconds_per_audit": secs / args.seeds,
                   "support_floor_median": float(np.median(floors)) if floors else None}
            results.append(out)
            print(json.dumps(out), flush=True)
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"benchmark": "rare_events", "results": results}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
