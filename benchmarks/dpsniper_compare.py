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
  confidence 0.9; ``shared/research/anchors-auditing.md`` §4);

and, with several ``--seeds``, compares the spread of dpcheck's bounds with DP-Sniper's own
seed runs at equal calls (:data:`DP_SNIPER_SEEDS`): means, worst seeds, the sorted bounds rank
by rank, and how often the claimed ε = 0.1 is refuted.

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

#: DP-Sniper (LR) at equal mechanism calls, as first measured side by side in issue #14 (one
#: run each). The seed runs below show these were favourable draws: laplace_parallel's 0.035 is
#: reached by no equal-calls run (it is DP-Sniper's published figure at about 10⁹ calls).
EQUAL_CALLS = {"rappor_one_time": 0.590, "svt1": 0.067, "svt3": 0.165, "svt6": 0.184,
               "laplace_parallel": 0.035}
#: DP-Sniper's own seed spread at equal calls, measured here (stop 19 of issue #14):
#: eth-sri/dp-sniper @ ee087b2, unpatched, its exp_default logistic regression, claimed ε 0.1,
#: the zoo entries' pairs, DDSearch over the pairs then the final estimate on the best, with
#: DP-Sniper's proportions n_train = n = n_check = 10.7 units, n_final = 200 units scaled to
#: 2·10⁶ calls per pair in total (svt1/svt3: 8·10⁶ calls, svt6 6·10⁶, the one-pair entries
#: 2·10⁶), seeds 0–9 (numpy, random and torch seeded; its worker pool replaced by a serial map),
#: lower bounds at DP-Sniper's confidence 0.9 (dpcheck runs at 0.95). Four protocols were run
#: (zoo pair order or both orders; DP-Sniper's training batch of 10⁵ or a batch scaled with the
#: budget); per mechanism the protocol with the best mean is kept here. Negative bounds
#: (DP-Sniper does not clip) are read as 0.
DP_SNIPER_SEEDS = {
    "svt1": ("both orders, scaled batch",
             [0.061, 0.040, 0.029, 0.063, 0.065, 0.053, 0.064, 0.022, 0.074, 0.062]),
    "svt3": ("zoo order, batch 1e5",
             [0.090, 0.152, 0.142, 0.041, 0.151, 0.164, 0.122, 0.149, 0.040, 0.036]),
    "laplace_parallel": ("zoo order, scaled batch",
                         [0.0, 0.0, 0.0, 0.0, 0.0, 0.017, 0.0, 0.0, 0.017, 0.0]),
    "svt6": ("zoo order, scaled batch",
             [0.265, 0.261, 0.243, 0.267, 0.250, 0.255, 0.242, 0.259, 0.244, 0.252]),
    "rappor_one_time": ("zoo order, scaled batch",
                        [0.613, 0.632, 0.613, 0.635, 0.627, 0.632, 0.623, 0.621, 0.622, 0.608]),
}
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
            f"| {r['mechanism']} | {fmt(r['true_epsilon'])} | {r['samples_per_side']:.0e} | "
            f"{r['seed']} | {fmt(r['dpcheck_before_1e6'])} | **{fmt(r['epsilon_lower'])}** | "
            f"{fmt(r['dp_sniper_equal_calls'])} | {fmt(pub)} | {r['confirm']} | "
            f"{r['seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def seed_summary(records: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per mechanism and budget with several seeds: dpcheck's bounds against DP-Sniper's seed
    runs (:data:`DP_SNIPER_SEEDS`): means, worst seeds, rank-by-rank dominance of the sorted
    bounds, and how often the claimed ε = 0.1 is refuted (for the entries whose true ε is
    above it)."""
    out = []
    groups: dict[tuple[str, int], list[float]] = {}
    for r in records:
        groups.setdefault((str(r["mechanism"]), int(r["samples_per_side"])), []).append(
            float(r["epsilon_lower"]))
    for (name, samples), ours in groups.items():
        if len(ours) < 2 or name not in DP_SNIPER_SEEDS:
            continue
        protocol, theirs = DP_SNIPER_SEEDS[name]
        k = min(len(ours), len(theirs))
        a, b = sorted(ours), sorted(theirs)
        rank_lo = [i * (len(a) - 1) // max(k - 1, 1) for i in range(k)]
        rank_hi = [i * (len(b) - 1) // max(k - 1, 1) for i in range(k)]
        true_eps = get(name).true_epsilon
        out.append({
            "mechanism": name, "samples_per_side": samples, "seeds": len(ours),
            "dpcheck_mean": sum(ours) / len(ours), "dpcheck_min": a[0], "dpcheck_max": a[-1],
            "dp_sniper_protocol": protocol, "dp_sniper_mean": sum(theirs) / len(theirs),
            "dp_sniper_min": b[0], "dp_sniper_max": b[-1],
            "ranks_at_or_above": sum(a[i] >= b[j] for i, j in zip(rank_lo, rank_hi)),
            "ranks": k,
            "refuted_dpcheck": (sum(x > 0.1 for x in ours) if true_eps > 0.1 else None),
            "refuted_dp_sniper": (sum(x > 0.1 for x in theirs) if true_eps > 0.1 else None),
        })
    return out


def seed_markdown(rows: list[dict[str, object]]) -> str:
    lines = ["", "## Seed spread at equal calls (dpcheck α = 0.05; DP-Sniper confidence 0.9)", "",
             "| mechanism | samples/side | seeds | dpcheck mean (min–max) | DP-Sniper mean "
             "(min–max) | sorted ranks where dpcheck ≥ DP-Sniper | claim 0.1 refuted: "
             "dpcheck / DP-Sniper |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        refuted = ("—" if r["refuted_dpcheck"] is None else
                   f"{r['refuted_dpcheck']}/{r['seeds']} / {r['refuted_dp_sniper']}/10")
        lines.append(
            f"| {r['mechanism']} | {r['samples_per_side']:.0e} | {r['seeds']} | "
            f"{r['dpcheck_mean']:.3f} ({r['dpcheck_min']:.3f}–{r['dpcheck_max']:.3f}) | "
            f"{r['dp_sniper_mean']:.3f} ({r['dp_sniper_min']:.3f}–{r['dp_sniper_max']:.3f}; "
            f"{r['dp_sniper_protocol']}) | {r['ranks_at_or_above']}/{r['ranks']} | {refuted} |")
    return "\n".join(lines) + "\n"


def fmt(x: object) -> str:
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
    spread = seed_summary(records)
    write_atomic(out / f"dpsniper_compare{suffix}.json",
                 json.dumps({"records": records, "seed_spread": spread}, indent=1) + "\n")
    write_atomic(out / f"dpsniper_compare{suffix}.md", markdown(records) + seed_markdown(spread))
    for row in spread:
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
