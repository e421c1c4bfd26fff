"""Speed of the slowest seed-000 sampler at paper scale: A_Agnostic (Algorithms 1–2, EM base
learner) on thresholds over {0..63}, n = 20 000, ε = 0.05, one fresh dataset per run
(count level: T by sequential hypergeometric draws, O(N) scores). Writes
reports/bench/realizable_to_agnostic_speed.json."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from algorithms.realizable_to_agnostic.agnostic import Agnostic


def main(runs: int = 200_000, batch: int = 20_000) -> dict:
    dom, n = 64, 20_000
    x = np.arange(dom)
    p1 = np.where(x >= 32, 0.6, 0.4)
    cell = np.stack([(1 - p1) / dom, p1 / dom], 1).reshape(-1)
    mech = Agnostic(dom, 0.05)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    done = 0
    while done < runs:
        sc = rng.multinomial(n, cell, size=batch).reshape(batch, dom, 2)
        mech.run_counts(sc, rng)
        done += batch
    secs = time.perf_counter() - start
    rec = {"mechanism": "A_Agnostic(thresholds N=64, n=20000, eps=0.05, EM learner)",
           "runs": done, "seconds": secs, "runs_per_second": done / secs}
    out = Path("reports/bench/realizable_to_agnostic_speed.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=2), encoding="utf-8")
    return rec


if __name__ == "__main__":
    print(main())
