"""CPU cost per output of each audit phase: scalar float outputs against float vectors.

Issue 30 item 4 asks for a float-vector path as fast per output as the scalar one. This script
runs the phases of one :func:`dpcheck.audit` by hand, with the library's own functions and in
its order (:func:`dpcheck.core.explore.explore`, :func:`dpcheck.core.confirm.count_outputs`),
and charges each one's CPU time (``time.process_time``: the machine is shared) to

* ``draw``: the mechanism's own calls (exploration and confirmation chunks), per output drawn;
* ``fit``: :meth:`~dpcheck.features.featurizer.Featurizer.build`, per exploration output;
* ``featurize``: the featurizer on both exploration samples, per exploration output;
* ``select``: event selection, support candidates and row labels, per exploration output;
* ``confirm``: featurizing and counting the chosen events on the confirmation chunks (drawing
  excluded), per confirmation output;

and prints µs per output per phase (the fastest of ``--repeats`` runs, phase by phase) plus
``audit``: the sum of the phases but drawing, divided by all outputs (exploration and
confirmation, both sides), and ``audit_per_value``: ``audit`` divided by the number of values
in one output (``values``: 1 for a scalar, 6 for the vectors below). Mechanisms (claim ε = 1):

* ``laplace``: scalar ``Σdata + Lap(1)``, pair ([1], [0]);
* ``hist6``: a 6-bin Laplace histogram ``counts + Lap(1/ε, (size, 6))``, counts
  (5, 3, 0, 2, 7, 1) vs bin 0 one lower;
* ``topk_gaps``: noisy top-3 of 6 scores with the gaps between consecutive noisy values
  (Ding et al. 2019, free gap information): indices (as floats) then gaps, shape (size, 6),
  Lap(2k/ε) noise; scores (5, 3, 0, 2, 7, 1) vs the same with score 4 one lower.

Usage: ``python benchmarks/vector_float_speed.py [--samples 1e6 3e6] [--only hist6]``

References
----------
Z. Ding, Y. Wang, D. Zhang, D. Kifer, "Free Gap Information from the Differentially Private
Sparse Vector and Noisy Max Mechanisms", PVLDB 13(3), 2019 (noisy top-k with gaps).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

import dpcheck
from dpcheck.core.confirm import CHUNK, count_outputs
from dpcheck.core.executor import chunk_generator, chunk_sizes
from dpcheck.core.explore import exploration_size
from dpcheck.events.pools import MAX_ATOMS
from dpcheck.events.select import select_events
from dpcheck.events.support import support_candidates, with_support
from dpcheck.features.featurizer import Featurizer
from dpcheck.internal.rng import generator
from dpcheck.mechanism import as_sampler, draw

EPS = 1.0
COUNTS = [5.0, 3.0, 0.0, 2.0, 7.0, 1.0]
TOPK = 3


def laplace(data: Any, size: int, rng: np.random.Generator) -> Any:
    return float(np.sum(data)) + rng.laplace(0.0, 1.0 / EPS, size)


def hist6(data: Any, size: int, rng: np.random.Generator) -> Any:
    return np.asarray(data, dtype=np.float64) + rng.laplace(0.0, 1.0 / EPS, (size, 6))


def topk_gaps(data: Any, size: int, rng: np.random.Generator) -> Any:
    noisy = np.asarray(data, dtype=np.float64) + rng.laplace(0.0, 2 * TOPK / EPS, (size, 6))
    order = np.argsort(-noisy, axis=1)[:, :TOPK + 1]
    top = np.take_along_axis(noisy, order, axis=1)
    return np.hstack([order[:, :TOPK].astype(np.float64), top[:, :-1] - top[:, 1:]])


def _lower(c: list[float], i: int) -> list[float]:
    return [v - 1.0 if j == i else v for j, v in enumerate(c)]


MECHANISMS = {"laplace": (laplace, [1.0], [0.0]),
              "hist6": (hist6, COUNTS, _lower(COUNTS, 0)),
              "topk_gaps": (topk_gaps, COUNTS, _lower(COUNTS, 4))}


def phases(name: str, samples: int, seed: int = 0) -> dict[str, float]:
    """CPU seconds per phase of one audit of ``name`` at ``samples`` per side (module docstring;
    audit()'s defaults: 3 candidates, α = 0.05, no ties; pure claim, confirmation at exactly
    ``n`` per side instead of Poisson sizes)."""
    mech, d, dp = MECHANISMS[name]
    sampler = as_sampler(mech)
    seed_seq = np.random.SeedSequence(seed)
    n_e = exploration_size(samples)
    n_c = samples - n_e
    t: dict[str, float] = {}
    clock = time.process_time
    s = clock()
    out = [draw(sampler, x, n_e, generator(seed_seq, "explore", side)) for side, x in
           enumerate((d, dp))]
    t["draw"] = clock() - s
    s = clock()
    fz = Featurizer.build(out[0], None, out[1], float_bits=True)
    t["fit"] = clock() - s
    s = clock()
    cols = [fz(o) for o in out]
    t["featurize"] = clock() - s
    s = clock()
    k = 3  # audit()'s default candidates
    chosen, _ = select_events(cols[0], cols[1], fz.features, n_confirm=n_c,
                              alpha_each=0.05 / (2 * k), delta=0.0, k=k, max_atoms=MAX_ATOMS,
                              ratio=True, delta_epsilon=None)
    chosen = with_support(chosen, support_candidates(cols[0], cols[1], fz.features))
    t["select"] = clock() - s
    events = tuple(c.event for c in chosen) + tuple(c.partner for c in chosen
                                                   if c.partner is not None)
    t["confirm"] = 0.0
    for side, x in enumerate((d, dp)):
        for i, size in enumerate(chunk_sizes(n_c, CHUNK)):
            s = clock()
            o = draw(sampler, x, size, chunk_generator(seed_seq, "confirm", side, i))
            t["draw"] += clock() - s
            s = clock()
            count_outputs(o, fz, events, seed_seq, side, i)
            t["confirm"] += clock() - s
    us = {"draw": 1e6 * t["draw"] / (2 * samples), "fit": 1e6 * t["fit"] / (2 * n_e),
          "featurize": 1e6 * t["featurize"] / (2 * n_e), "select": 1e6 * t["select"] / (2 * n_e),
          "confirm": 1e6 * t["confirm"] / (2 * n_c)}
    us["audit"] = 1e6 * (sum(t.values()) - t["draw"]) / (2 * samples)
    us["values"] = float(np.asarray(out[0]).reshape(n_e, -1).shape[1])
    return us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", nargs="+", type=float, default=[1e6, 3e6])
    parser.add_argument("--only", default="")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per case; each phase's fastest run is kept (shared machine)")
    parser.add_argument("--audit", action="store_true",
                        help="also time one whole dpcheck.audit (CPU s) and print its bound")
    args = parser.parse_args()
    for samples in (int(v) for v in args.samples):
        for name in MECHANISMS:
            if args.only not in name:
                continue
            runs = [phases(name, samples, args.seed) for _ in range(args.repeats)]
            us = {k: min(r[k] for r in runs) for k in runs[0]}
            us["audit"] = (us["fit"] + us["featurize"] + us["select"]) * (
                exploration_size(samples) / samples) + us["confirm"] * (
                1 - exploration_size(samples) / samples)
            us["audit_per_value"] = us["audit"] / us["values"]
            row = {"mechanism": name, "samples_per_side": samples,
                   **{k: round(v, 3) for k, v in us.items()}}
            if args.audit:
                mech, d, dp = MECHANISMS[name]
                s = time.process_time()
                r = dpcheck.audit(mech, d, dp, dpcheck.PureDP(EPS), samples=samples,
                                  seed=args.seed)
                row["audit_cpu_s"] = round(time.process_time() - s, 2)
                row["epsilon_lower"] = round(r.epsilon_lower, 4)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
