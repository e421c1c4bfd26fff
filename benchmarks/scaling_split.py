"""The cost model of benchmarks/scaling.py refitted for validation on the workers (issue 30 item 5).

``scaling.py`` needs an idle machine (every executor kind, 1 and 2 workers, a dozen large
audits); on a shared 2-core machine this script measures the model's constants in **CPU
seconds** of this process (``time.process_time``, ``nice``-robust), one at a time:

* ``t_c``: one SVT6 exploration chunk of ``EXPLORE_CHUNK`` outputs drawn in the client;
* ``t_e``: the same drawn on a worker and shipped back: ``t_c`` plus pickling and unpickling the
  chunk's outputs;
* ``t_v``: one validation chunk (:func:`dpcheck.core.explore_validate.validation_chunk`): drawn,
  featurized with a fitted featurizer and a shortlist counted — a half-line on every feature,
  so every feature column is computed and sorted once (the shortlist's cost is one sort per
  feature it touches; this is its upper end);
* ``t_chunk``: one confirmation chunk (:func:`dpcheck.core.confirm.count_chunk`) of the events an
  audit chose;

and takes the client share from ``benchmarks/explore_split.py``'s runs (``--runs``, JSON lines):
its **plateau** ``P`` (mean client CPU of the ``after`` runs, explorations of 4 and 16 chunks
per side) and the **line** ``a + b·m`` of the ``before`` runs (the client fitted, featurized and
selected on all ``m`` outputs). The model of ``scaling.py`` (``predict``) then gives the speedup
of one audit on ``W`` workers, before (client ``a + b·m``) and after (client ``P``); its
exploration term is checked out of sample on the ``after-local`` runs (a whole exploration
without an executor, CPU seconds: ``P + t_c + K_v·t_v`` predicted). Wall seconds of the runs
are not used: on the shared machine they varied 3.5× between identical runs.

Usage::

    PYTHONPATH=. nice -n 15 python benchmarks/scaling_split.py --runs reports/bench/explore_split.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np

from algorithms.zoo import get
from dpcheck.core.confirm import confirmed_events, count_chunk
from dpcheck.core.explore import EXPLORE_CHUNK, explore, explore_chunk, setup_audit
from dpcheck.core.explore_validate import validation_chunk
from dpcheck.events.event import Event
from dpcheck.events.select import MAX_ATOMS
from dpcheck.mechanism import as_sampler

import scaling  # benchmarks/scaling.py (run from benchmarks/ or with it on sys.path)


def _cpu(fn: Any, *args: Any) -> tuple[float, Any]:
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def constants() -> dict[str, Any]:
    """``t_c``, ``t_e``, ``t_v``, ``t_chunk`` (CPU seconds per full chunk) and bytes per task."""
    entry = get("svt6")
    d, d_prime = entry.pairs[0]
    sampler = as_sampler(entry.mechanism)
    setup = setup_audit(entry.mechanism, entry.claim, samples=2 * EXPLORE_CHUNK, alpha=0.05,
                        seed=0, relation=None, features=None, candidates=3,
                        explore_fraction=0.5, max_atoms=MAX_ATOMS, progress=None,
                        float_features=True, executor=None, checkpoint=None, ties=False)
    e = explore(setup, d, d_prime, n_explore=EXPLORE_CHUNK, n_confirm=EXPLORE_CHUNK)
    shape = (e.out_d.shape[1:], e.out_d.dtype.kind)
    seq = np.random.SeedSequence(1)
    t_c, out = _cpu(explore_chunk, sampler, d, EXPLORE_CHUNK, seq, "explore", 0, 1, shape)
    t_ship, _ = _cpu(lambda: pickle.loads(pickle.dumps(out, pickle.HIGHEST_PROTOCOL)))
    shortlist = tuple(Event(j, f.name, "le", high=0.0) for j, f in enumerate(e.featurizer.features))
    t_v, _ = _cpu(validation_chunk, sampler, d, EXPLORE_CHUNK, seq, "explore", 0, 2, shape,
                  e.featurizer, shortlist)
    events = confirmed_events(e.chosen)
    task = (sampler, d, EXPLORE_CHUNK, seq, 0, 3, e.featurizer, events, shape)
    t_chunk, counts = _cpu(count_chunk, *task)
    vtask = (sampler, d, EXPLORE_CHUNK, seq, "explore", 0, 2, shape, e.featurizer, shortlist)
    return {"t_explore_chunk_seconds_in_client": t_c,
            "t_explore_chunk_seconds": t_c + t_ship,
            "t_validate_chunk_seconds": t_v, "t_chunk_seconds": t_chunk,
            "validate_features": len(shortlist), "confirm_events": len(events),
            "bytes_sent_per_chunk": len(pickle.dumps((count_chunk, task))),
            "bytes_received_per_chunk": len(pickle.dumps(counts)),
            "bytes_sent_per_validation_chunk": len(pickle.dumps((validation_chunk, vtask))),
            "row_bytes": int(out[:1].nbytes)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default="reports/bench/explore_split.jsonl")
    p.add_argument("--out", default="reports/bench/scaling_split.json")
    p.add_argument("--reuse-constants", action="store_true",
                   help="take the constants from OUT instead of measuring them again")
    a = p.parse_args(argv)
    rows = [json.loads(line) for line in Path(a.runs).read_text().splitlines() if line.strip()]
    svt = [r for r in rows if r["mechanism"] == "svt6"]
    after = [r for r in svt if r["label"] == "after"]
    before = [r for r in svt if r["label"] == "before"]
    plateau = float(np.mean([r["client_cpu_seconds"] for r in after]))
    xs = np.array([r["m_per_side"] for r in before], dtype=float)
    ys = np.array([r["client_cpu_seconds"] for r in before], dtype=float)
    b, a0 = np.polyfit(xs, ys, 1) if len(set(xs)) > 1 else (float(ys.mean() / xs.mean()), 0.0)
    c = (json.loads(Path(a.out).read_text())["constants"] if a.reuse_constants
         else constants())
    kind = {k: v for k, v in c.items() if k not in ("row_bytes",)}
    after_model = {"explore_fixed_seconds": plateau - b * EXPLORE_CHUNK,
                   "explore_seconds_per_output": b, "per_kind": {"process_pool": kind}}
    out: dict[str, Any] = {"load_average": os.getloadavg(), "constants": c,
                           "client_plateau_cpu_seconds": plateau,
                           "client_line_before": {"a": a0, "b_per_output": b},
                           "predictions": [], "explore_check": []}
    for n in scaling.PREDICT_SAMPLES:
        for f in scaling.PREDICT_FRACTIONS:
            for w in (8, 16, 64):
                new = scaling.predict(after_model, n, f, w, c["row_bytes"], "process_pool")
                # before: client a + b·m, exploration chunks drawn on the workers and shipped
                m = scaling.exploration_size(n, f)
                old_explore = (a0 + b * m + scaling.explore_draw_seconds(
                    n, f, w, c["t_explore_chunk_seconds_in_client"],
                    c["t_explore_chunk_seconds"]))
                old_one = (a0 + b * m + scaling.explore_draw_seconds(
                    n, f, 1, c["t_explore_chunk_seconds_in_client"],
                    c["t_explore_chunk_seconds"])
                    + scaling.chunks(n, f) * c["t_chunk_seconds"])
                old_w = old_explore + math.ceil(scaling.chunks(n, f) / w) * c["t_chunk_seconds"]
                out["predictions"].append({
                    "samples_per_side": n, "explore_fraction": f, "workers": w,
                    "speedup": new["speedup"], "speedup_limit": new["speedup_limit"],
                    "seconds": new["seconds"], "explore_seconds": new["explore_seconds"],
                    "client_seconds": new["explore_client_seconds"],
                    "speedup_before": old_one / old_w, "client_seconds_before": a0 + b * m})
    for r in (r for r in svt if r["label"] == "after-local"):
        # out of sample: a whole exploration without an executor, in CPU seconds of this
        # process: the client share, chunk 0 of D′ drawn here, every validation chunk here
        k_v = 2 * (math.ceil(r["m_per_side"] / EXPLORE_CHUNK) - 1)
        predicted = (plateau + c["t_explore_chunk_seconds_in_client"]
                     + k_v * c["t_validate_chunk_seconds"])
        out["explore_check"].append({"m_per_side": r["m_per_side"], "seed": r["seed"],
                                     "predicted_cpu_seconds": predicted,
                                     "measured_cpu_seconds": r["client_cpu_seconds"],
                                     "error": r["client_cpu_seconds"] / predicted - 1.0})
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
