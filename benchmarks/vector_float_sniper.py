"""DP-Sniper and dpcheck side by side on float-vector outputs, at equal mechanism calls.

Issue 30 item 4 measured dpcheck at about 3× DP-Sniper's time on float-vector outputs (25–31 s
against 8–11 s at 6·10⁶ calls). This script times both on the two vector mechanisms of
``vector_float_speed.py`` — a 6-bin Laplace histogram and a noisy top-3 of 6 with its gaps — in
**CPU seconds of the process and its children** (``resource.getrusage``; robust to other load on
a shared machine, and DP-Sniper's worker process is a child):

* DP-Sniper (eth-sri/dp-sniper, its logistic regression with SGD as in its ``example.py``):
  ``DDSearch`` on the one input pair, then ``compute_eps_high_precision``, with its default
  ``DDConfig`` proportions (``n_train = n = n_check = 10.7`` units, ``n_final = 200``; calls
  ``5·10.7 + 400 = 453.5`` units) scaled to the calls, one worker process, confidence 0.9;
  numpy, ``random`` and torch seeded with the seed (its runs still vary a little: torch);
* dpcheck: ``dpcheck.audit`` with its defaults (α = 0.05), ``calls / 2`` outputs per side.

Run from an environment with DP-Sniper installed (``pip install --no-deps`` of a checkout plus
numpy, torch, scikit-learn, tensorboard and mmh3; never vendored) and this repository on
``PYTHONPATH``. Appends JSON lines to ``reports/bench/vector_float_sniper.jsonl``.

Usage::

    PYTHONPATH=.:benchmarks python benchmarks/vector_float_sniper.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

import vector_float_speed as speed  # benchmarks/ on sys.path

try:
    from dpsniper.mechanisms.abstract import Mechanism
except ImportError:  # dpcheck's side still runs
    Mechanism = object

#: DP-Sniper's default DDConfig in units: n_train = n = n_check = 10.7, n_final = 200.
UNITS = {"n_train": 10.7, "n": 10.7, "n_check": 10.7, "n_final": 200.0}
CALLS_PER_UNIT = 5 * 10.7 + 2 * 200.0


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class SniperForm(Mechanism):  # type: ignore[misc,valid-type]
    """A ``vector_float_speed`` mechanism as a DP-Sniper ``Mechanism`` (module level: its
    worker process unpickles it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def m(self, a: Any, n_samples: int = 1) -> Any:
        rng = np.random.default_rng(np.random.randint(2**32))
        return speed.MECHANISMS[self.name][0](list(a), n_samples, rng)


class OnePair:
    """DP-Sniper's input generator for the one pair of the mechanism."""

    def __init__(self, d: Any, d_prime: Any) -> None:
        self.d, self.d_prime = d, d_prime

    def get_input_pairs(self) -> Any:
        yield np.asarray(self.d, float), np.asarray(self.d_prime, float)


def sniper(name: str, calls: int, seed: int, logs: Path) -> dict[str, Any]:
    import random

    import torch
    from dpsniper.attack.dpsniper import DPSniper
    from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory
    from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory
    from dpsniper.search.ddconfig import DDConfig
    from dpsniper.search.ddsearch import DDSearch
    from dpsniper.utils.initialization import initialize_dpsniper

    _, d, d_prime = speed.MECHANISMS[name]
    unit = calls / CALLS_PER_UNIT
    sizes = {k: int(round(v * unit / 1000)) * 1000 for k, v in UNITS.items()}
    config = DDConfig(**sizes, n_processes=1)
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    mech = SniperForm(name)
    factory = LogisticRegressionFactory(in_dimensions=len(d),
                                        optimizer_factory=SGDOptimizerFactory())
    cpu, wall = cpu_seconds(), time.perf_counter()
    with initialize_dpsniper(config, out_dir=str(logs)):
        witness = DDSearch(mech, DPSniper(mech, factory, config), OnePair(d, d_prime),
                           config).run()
        witness.compute_eps_high_precision(mech, config)
    return {"tool": "dp-sniper", "epsilon_lower": float(witness.lower_bound),
            "confidence": 0.9, "cpu_seconds": cpu_seconds() - cpu,
            "wall_seconds": time.perf_counter() - wall}


def dpcheck_side(name: str, calls: int, seed: int) -> dict[str, Any]:
    import scipy.stats  # noqa: F401 - its lazy import is not the audit's time

    import dpcheck

    fn, d, d_prime = speed.MECHANISMS[name]
    cpu, wall = cpu_seconds(), time.perf_counter()
    r = dpcheck.audit(fn, d, d_prime, dpcheck.PureDP(speed.EPS), samples=calls // 2, seed=seed)
    return {"tool": "dpcheck", "epsilon_lower": r.epsilon_lower, "confidence": 0.95,
            "cpu_seconds": cpu_seconds() - cpu, "wall_seconds": time.perf_counter() - wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mechanisms", nargs="+", default=["hist6", "topk_gaps"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--calls", type=float, default=6e6)
    parser.add_argument("--tools", nargs="+", default=["dp-sniper", "dpcheck"])
    parser.add_argument("--out", type=Path, default=Path("reports/bench"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    calls = int(args.calls)
    for seed in args.seeds:
        for name in args.mechanisms:
            for tool in args.tools:
                rec = (sniper(name, calls, seed, args.out / "dpsniper_logs")
                       if tool == "dp-sniper" else dpcheck_side(name, calls, seed))
                rec = {"mechanism": name, "seed": seed, "calls": calls, **rec}
                with (args.out / "vector_float_sniper.jsonl").open("a") as fh:
                    fh.write(json.dumps(rec) + "\n")
                print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
