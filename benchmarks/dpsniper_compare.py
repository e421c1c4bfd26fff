"""dpcheck against DP-Sniper on the mechanisms where DP-Sniper's classifier used to win.

For the zoo entries that reproduce DP-Sniper's vector-output mechanisms (one-time RAPPOR, SVT1,
SVT3, SVT6, LaplaceParallel), audit the entry's pairs with :func:`dpcheck.audit_pairs` at each
budget — ``--confirm best`` (default: explore every pair, confirm the most promising one on the
pooled budget at the full α) or ``--confirm each`` (every pair at ``alpha / len(pairs)``, as
``benchmarks/zoo.py`` does); both cost ``2·samples·len(pairs)`` mechanism calls — and put the
bound beside:

* ``dp_sniper_equal_calls``: DP-Sniper (logistic regression, claimed ε = 0.1) measured side by
  side at equal numbers of mechanism calls, as quoted in issue #14 (not re-measured here);
* ``dp_sniper_published``: DP-Sniper's own reference logs (``eval_sp2021``, ≈10⁹ calls,
  confidence 0.9; ``shared/research/anchors-auditing.md`` §4).

Writes ``reports/bench/dpsniper_compare.json`` (records with the design §8 fields plus the
references) and a Markdown table next to it.

Usage::

    python benchmarks/dpsniper_compare.py                 # 1e6 samples per side
    python benchmarks/dpsniper_compare.py --budgets 1e6 1e7 --only laplace_parallel
    python benchmarks/dpsniper_compare.py --seeds 0 1 2      # stability across seeds
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import dpcheck
from algorithms.zoo import get

#: DP-Sniper (LR) at equal mechanism calls, as measured side by side in issue #14.
EQUAL_CALLS = {"rappor_one_time": 0.590, "svt1": 0.067, "svt3": 0.165, "svt6": 0.184,
               "laplace_parallel": 0.035}
#: dpcheck before issue #14 parts 1–2 (main at ae9b961: no paired events; same script, budget
#: 1e6), by seed. Issue #14 started from main at d80afe2: 0.7071, 0.0430, 0.0588, 0.2328, 0.0.
BEFORE_1E6 = {
    0: {"rappor_one_time": 0.7331, "svt1": 0.0781, "svt3": 0.1542, "svt6": 0.2589,
        "laplace_parallel": 0.0241},
    1: {"rappor_one_time": 0.7304, "svt1": 0.0778, "svt3": 0.1923, "svt6": 0.2732,
        "laplace_parallel": 0.0},
    2: {"rappor_one_time": 0.4374, "svt1": 0.0430, "svt3": 0.1104, "svt6": 0.2495,
        "laplace_parallel": 0.0},
}
NAMES = tuple(EQUAL_CALLS)


def run(name: str, samples: int, seed: int, alpha: float, executor: object = None,
        confirm: str = "best") -> dict[str, object]:
    entry = get(name)
    start = time.perf_counter()
    pairs = dpcheck.audit_pairs(entry.mechanism, entry.pairs, entry.claim, samples=samples,
                                seed=seed, alpha=alpha, features=entry.features,
                                executor=executor, confirm=confirm)
    r = pairs.audit
    true_eps = entry.true_epsilon
    return {
        "mechanism": name,
        "claimed_epsilon": entry.claim.epsilon,
        "true_epsilon": "inf" if math.isinf(true_eps) else true_eps,
        "true_epsilon_is_bound": entry.true_epsilon_is_bound,
        "epsilon_lower": r.epsilon_lower,
        "per_pair": [None if x is None else x.epsilon_lower for x in pairs.results],
        "confirm": confirm,
        "chosen_pair": pairs.best,
        "covered": bool(r.epsilon_lower <= true_eps + 1e-12),
        "violation": bool(r.violation),
        "samples_per_side": samples,
        "mechanism_calls": 2 * samples * len(entry.pairs),
        "seconds": time.perf_counter() - start,
        "witness": r.witness.describe(),
        "method": "ratio" if r.witness.bound.ratio_low is not None else "union",
        "dp_sniper_equal_calls": EQUAL_CALLS[name],
        "dp_sniper_published": entry.published.get("dp_sniper_lr"),
        "dpcheck_before_1e6": BEFORE_1E6.get(seed, {}).get(name) if samples == 10**6 else None,
        "alpha": alpha,
        "seed": seed,
    }


def markdown(records: list[dict[str, object]]) -> str:
    lines = ["# dpcheck vs DP-Sniper (claimed ε = 0.1)", "",
             ("| mechanism | true ε | samples/side | seed | dpcheck before | dpcheck | "
              "DP-Sniper equal calls | DP-Sniper published (~1e9 calls) | confirm | seconds |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        pub = r["dp_sniper_published"]
        lines.append(
            f"| {r['mechanism']} | {_fmt(r['true_epsilon'])} | {r['samples_per_side']:.0e} | "
            f"{r['seed']} | {_fmt(r['dpcheck_before_1e6'])} | **{_fmt(r['epsilon_lower'])}** | "
            f"{_fmt(r['dp_sniper_equal_calls'])} | {_fmt(pub)} | {r['confirm']} | "
            f"{r['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def _fmt(x: object) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", nargs="+", type=float, default=[1e6])
    parser.add_argument("--only", default="", help="substring filter on mechanism names")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0],
                        help="audit seeds (several: stability across seeds)")
    parser.add_argument("--confirm", choices=("each", "best"), default="best",
                        help="audit_pairs mode (see the module docstring)")
    parser.add_argument("--out", default="reports/bench")
    args = parser.parse_args(argv)
    records = []
    for budget in args.budgets:
        for name in NAMES:
            for seed in args.seeds if args.only in name else ():
                rec = run(name, int(budget), seed, args.alpha, confirm=args.confirm)
                print(json.dumps({k: rec[k] for k in ("mechanism", "samples_per_side", "seed",
                                                      "epsilon_lower", "dp_sniper_equal_calls",
                                                      "seconds")}), flush=True)
                records.append(rec)
    out = Path(args.out)
    suffix = ("" if not args.only else f"_{args.only}") + (
        "" if args.confirm == "best" else "_each")
    write_atomic(out / f"dpsniper_compare{suffix}.json", json.dumps(records, indent=1) + "\n")
    write_atomic(out / f"dpsniper_compare{suffix}.md", markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
