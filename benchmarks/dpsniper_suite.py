"""DP-Sniper's whole benchmark in its original form, audited by dpcheck at a fraction of its calls.

Issue 30 item 3's target: "at one tenth of DP-Sniper's calls, a mean bound ≥ DP-Sniper's
full-budget mean on every mechanism of DP-Sniper's benchmark in its original form". This script
runs every mechanism of DP-Sniper's ``exp_default`` experiment (``eth-sri/dp-sniper`` @ ee087b2,
``dpsniper/experiments/exp_default.py``: 20 classes) as DP-Sniper wrote it — its class with its
constructor arguments, its ``InputDomain`` and the pairs of its ``PatternGenerator``, through the
adapter :func:`dpsniper_compare.dpsniper_form` — with :func:`dpcheck.audit_pairs`
(``confirm="best"``, claimed ε = 0.1 as in DP-Sniper's evaluation, **default black-box
features**: none of DP-Sniper's hand-set ``FlagsFeatureTransformer`` markers is passed).

The budget is a fraction (``--fraction``, default 0.1) of what DP-Sniper's default ``DDConfig``
spends on that mechanism: ``n_train = n = n_check = 10.7·10⁶`` and ``n_final = 2·10⁸``, i.e.
``pairs·(2·n_train + n + 2·n_check) + 2·n_final`` = ``pairs·5.35·10⁷ + 4·10⁸`` calls
(``shared/research/anchors-auditing.md`` §2.3, §4); dpcheck gets that fraction as
``samples = fraction·calls / (2·pairs)`` per side per pair (``audit_pairs`` costs
``2·samples·pairs`` calls).

Beside each bound: DP-Sniper's published full-budget lower bounds (``eval_sp2021/
reference-results``, logistic regression and MLP, confidence 0.9, one run each; §4 of the notes)
and the mechanism's true ε (closed forms or derived bounds of §4/§6 of the notes; ``inf`` where
the mechanism is not private at any ε). A bound above a finite true ε is flagged (``covered``).
dpcheck runs at confidence 1 − ``--alpha`` (default 0.95, stricter than DP-Sniper's 0.9).

Every record is appended to ``reports/bench/dpsniper_suite.jsonl`` as soon as it is done (a run
can be stopped and resumed: records already there for the same mechanism, features, dpcheck
commit, fraction, α and seed are skipped); ``dpsniper_suite.md`` is rewritten from all records after each one.

Needs DP-Sniper importable (``dpsniper``), in a separate environment (see
``benchmarks/dpsniper_compare.py``'s docstring; never vendored), with this repository on
``PYTHONPATH``::

    /tmp/sniper-venv/bin/python benchmarks/dpsniper_suite.py                  # all 20, seed 0
    /tmp/sniper-venv/bin/python benchmarks/dpsniper_suite.py --only SparseVector --seeds 0 1 2
    /tmp/sniper-venv/bin/python benchmarks/dpsniper_suite.py --list            # budgets only

References
----------
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021 (Table/Fig. of its evaluation; code
``eth-sri/dp-sniper``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpcheck  # noqa: E402
from dpsniper_compare import (  # noqa: E402
    NO_DPSNIPER, dpsniper_form, samples_per_side, sniper_calls, write_atomic)

INF = math.inf


@dataclass(frozen=True)
class SniperMechanism:
    """One mechanism of DP-Sniper's ``exp_default`` run, with its published figures.

    ``true_epsilon`` is the mechanism's ε over all neighbours (closed form, or a proven upper
    bound where ``true_is_bound``; ``inf``: not private) from ``anchors-auditing.md`` §4.
    ``lr`` and ``mlp`` are DP-Sniper's published lower bounds (confidence 0.9)."""

    name: str
    module: str
    cls: str
    args: tuple[tuple[str, Any], ...]
    domain: tuple[int, str, tuple[int, int], bool]
    true_epsilon: float
    true_is_bound: bool
    lr: float
    mlp: float

    def form(self) -> tuple[Any, list[tuple[list[Any], list[Any]]]]:
        dims, base, bounds, componentwise = self.domain
        return dpsniper_form(self.module, self.cls, dict(self.args),
                             (dims, base, list(bounds), componentwise))


def _m(name: str, module: str, cls: str, args: dict[str, Any],
       domain: tuple[int, str, tuple[int, int], bool], truth: float, bound: bool, lr: float,
       mlp: float) -> SniperMechanism:
    return SniperMechanism(name, module, cls, tuple(sorted(args.items())), domain, truth,
                           bound, lr, mlp)


_F1 = (1, "FLOAT", (-10, 10), False)
_F5 = (5, "FLOAT", (-10, 10), True)
_F10 = (10, "FLOAT", (-10, 10), True)
_SVT = "sparse_vector_technique"
_RNM = "report_noisy_max"
#: ``exp_default``'s 20 mechanisms in its order (cheap scalar ones first in a run anyway).
SUITE: tuple[SniperMechanism, ...] = (
    _m("LaplaceMechanism", "laplace", "LaplaceMechanism", {}, _F1, 0.1, False, 0.097, 0.098),
    _m("TruncatedGeometric", "geometric", "TruncatedGeometricMechanism", {},
       (1, "INT", (0, 5), False), math.log1p(2.0**-3), False, 0.116, 0.116),
    _m("NoisyHist1", "noisy_hist", "NoisyHist1", {}, (5, "INT", (0, 10), False), 0.1, False,
       0.098, 0.098),
    _m("NoisyHist2", "noisy_hist", "NoisyHist2", {}, (5, "INT", (0, 10), False), 10.0, False,
       4.602, 4.601),
    _m("ReportNoisyMax1", _RNM, "ReportNoisyMax1", {}, _F5, 0.1, True, 0.092, 0.093),
    _m("ReportNoisyMax2", _RNM, "ReportNoisyMax2", {}, _F5, 0.1, True, 0.098, 0.098),
    _m("ReportNoisyMax3", _RNM, "ReportNoisyMax3", {}, _F5, 0.25, False, 0.248, 0.249),
    _m("ReportNoisyMax4", _RNM, "ReportNoisyMax4", {}, _F5, INF, False, 0.346, 0.353),
    _m("SVT1", _SVT, "SparseVectorTechnique1", {"c": 1, "t": 0.5}, _F10, 0.1, True, 0.086,
       0.086),
    _m("SVT2", _SVT, "SparseVectorTechnique2", {"c": 1, "t": 1}, _F10, 0.1, True, 0.086, 0.085),
    _m("SVT3", _SVT, "SparseVectorTechnique3", {"c": 1, "t": 1}, _F10, INF, False, 0.172, 0.182),
    _m("SVT4", _SVT, "SparseVectorTechnique4", {"c": 1, "t": 1}, _F10, 0.175, False, 0.169,
       0.170),
    _m("SVT5", _SVT, "SparseVectorTechnique5", {"c": 1, "t": 1}, _F10, INF, False, 1.761, 1.761),
    _m("SVT6", _SVT, "SparseVectorTechnique6", {"c": 1, "t": 1}, _F10, 1.05, True, 0.272, 0.270),
    _m("Rappor", "rappor", "Rappor", {}, (1, "INT", (-10, 10), False), 0.40, True, 0.293, 0.301),
    _m("OneTimeRappor", "rappor", "OneTimeRappor", {}, (1, "INT", (-10, 10), False), 0.80, True,
       0.598, 0.600),
    _m("LaplaceParallel", "parallel", "LaplaceParallel", {"eps": 0.005, "n_parallel": 20}, _F1,
       0.1, False, 0.035, 0.030),
    _m("SVT34Parallel", "parallel", "SVT34Parallel", {}, _F10, INF, False, 0.261, 0.262),
    _m("PrefixSum", "prefix_sum", "PrefixSum", {}, _F10, 1.0, True, 0.504, 0.577),
    _m("NumericalSVT", _SVT, "NumericalSVT", {}, _F10, 0.1, True, 0.034, 0.035),
)


def dpcheck_commit() -> str:
    """The short hash of the last commit that changed ``dpcheck/`` in the checkout this script
    runs from (``"unknown"`` outside git), recorded with every record: selection changes move
    the bounds (uncommitted changes are not seen)."""
    try:
        # run from the repository's root: the pathspec is relative to the working directory
        # (from benchmarks/ it named benchmarks/dpcheck and gave "" before stop 38)
        return subprocess.run(["git", "log", "-1", "--format=%h", "--", "dpcheck"],
                              capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parents[1]).stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run(mech: SniperMechanism, fraction: float, seed: int, alpha: float,
        values_only: bool = False) -> dict[str, Any]:
    """Audit one mechanism in DP-Sniper's form at ``fraction`` of its calls; one record.

    ``values_only`` audits with ``float_features=False``: the idealised real-valued mechanism's
    view, the question DP-Sniper's published bounds answer (they use no bit features); by
    default dpcheck also looks at the float64 bits and finds the textbook floating-point holes
    of DP-Sniper's ``np.random.laplace``-based classes (Mironov 2012), whose implemented ε is
    then ∞ rather than the idealised ``true_epsilon``."""
    mechanism, pairs = mech.form()
    samples = samples_per_side(len(pairs), fraction)
    start = time.perf_counter()
    cpu = time.process_time()
    with warnings.catch_warnings():
        # the adapter seeds numpy's global state from the audit's rng (replayable)
        warnings.simplefilter("ignore", dpcheck.GlobalRandomStateWarning)
        res = dpcheck.audit_pairs(mechanism, pairs, dpcheck.PureDP(0.1), samples=samples,
                                  seed=seed, alpha=alpha, confirm="best",
                                  float_features=not values_only)
    r = res.audit
    truth = mech.true_epsilon
    return {
        "mechanism": mech.name, "dpsniper_class": mech.cls, "args": dict(mech.args),
        "features": "values" if values_only else "default", "dpcheck": dpcheck_commit(),
        "pairs": len(pairs), "fraction": fraction, "seed": seed, "alpha": alpha,
        "samples_per_side": samples, "mechanism_calls": 2 * samples * len(pairs),
        "dp_sniper_calls": sniper_calls(len(pairs)),
        "epsilon_lower": r.epsilon_lower,
        "true_epsilon": "inf" if math.isinf(truth) else truth,
        "true_is_bound": mech.true_is_bound,
        "covered": bool(r.epsilon_lower <= truth + 1e-12),
        "dp_sniper_lr": mech.lr, "dp_sniper_mlp": mech.mlp,
        "at_or_above_lr": bool(r.epsilon_lower >= mech.lr),
        "chosen_pair": res.best,
        "pilot_scores": list(res.scores) if res.scores is not None else None,
        "refined_scores": list(res.refined) if res.refined is not None else None,
        "settled_scores": list(res.settled) if res.settled is not None else None,
        "witness": r.witness.describe(),
        "seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
    }


def summary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per mechanism, fraction and α: dpcheck's mean (min–max) over seeds against DP-Sniper."""
    groups: dict[tuple[str, float, float], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["mechanism"], r["features"], r.get("dpcheck", "unknown"),
                           r["fraction"], r["alpha"]), []).append(r)
    order = {m.name: i for i, m in enumerate(SUITE)}
    rows = []
    for (name, features, commit, fraction, alpha), rs in sorted(groups.items(), key=lambda kv: (
            kv[0][1], order.get(kv[0][0], 99), kv[0][3], kv[0][4], kv[0][2])):
        bounds = [float(r["epsilon_lower"]) for r in rs]
        mean = statistics.fmean(bounds)
        rows.append({
            "mechanism": name, "features": features, "dpcheck": commit, "fraction": fraction,
            "alpha": alpha,
            "seeds": len(rs),
            "pairs": rs[0]["pairs"], "samples_per_side": rs[0]["samples_per_side"],
            "true_epsilon": rs[0]["true_epsilon"], "true_is_bound": rs[0]["true_is_bound"],
            "mean": mean, "min": min(bounds), "max": max(bounds),
            "dp_sniper_lr": rs[0]["dp_sniper_lr"], "dp_sniper_mlp": rs[0]["dp_sniper_mlp"],
            "mean_at_or_above_lr": mean >= rs[0]["dp_sniper_lr"],
            "not_covered": sum(not r["covered"] for r in rs),
            "seconds_mean": statistics.fmean(float(r["seconds"]) for r in rs),
        })
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["# DP-Sniper's benchmark in its original form (claimed ε = 0.1)", "",
             "dpcheck `audit_pairs(confirm=\"best\")`, default features, confidence 1 − α; "
             "DP-Sniper: published full-budget bounds (confidence 0.9).", "",
             "| mechanism | features | dpcheck | pairs | idealised ε | fraction of DP-Sniper's calls | samples/side/pair | "
             "α | seeds | dpcheck mean (min–max) | DP-Sniper LR | DP-Sniper MLP | mean ≥ LR | "
             "above idealised ε | s/seed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        truth = r["true_epsilon"]
        truth_s = ("∞" if truth == "inf" else ("≤ " if r["true_is_bound"] else "")
                   + f"{float(truth):.3g}")
        lines.append(
            f"| {r['mechanism']} | {r['features']} | {r['dpcheck']} | {r['pairs']} | {truth_s} | {r['fraction']:g} | "
            f"{r['samples_per_side']:.3g} | {r['alpha']:g} | {r['seeds']} | "
            f"**{r['mean']:.3f}** ({r['min']:.3f}–{r['max']:.3f}) | {r['dp_sniper_lr']:.3f} | "
            f"{r['dp_sniper_mlp']:.3f} | {'yes' if r['mean_at_or_above_lr'] else 'no'} | "
            f"{r['not_covered']} | {r['seconds_mean']:.0f} |")
    return "\n".join(lines) + "\n"


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fraction", type=float, default=0.1,
                        help="fraction of DP-Sniper's default calls per mechanism")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--only", nargs="*", default=[],
                        help="mechanism names (exact) or substrings of them (any matches)")
    parser.add_argument("--values-only", action="store_true",
                        help="float_features=False: the idealised mechanism's view (run())")
    parser.add_argument("--list", action="store_true", help="print the budgets and exit")
    parser.add_argument("--out", default="reports/bench")
    args = parser.parse_args(argv)
    # an exact name selects that mechanism only (--only SVT3 is not SVT34Parallel); other
    # strings select every name containing them (--only SVT: all eight SVT variants)
    names = {m.name for m in SUITE}
    chosen = [m for m in SUITE if not args.only or any(
        s == m.name if s in names else s in m.name for s in args.only)]
    try:
        import dpsniper  # noqa: F401
    except ImportError:
        print(NO_DPSNIPER, file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            pairs = len(m.form()[1])
            print(f"{m.name:20s} pairs {pairs:2d}: DP-Sniper {sniper_calls(pairs):.3g} calls; "
                  f"dpcheck {samples_per_side(pairs, args.fraction):.3g} per side per pair")
        return 0
    out = Path(args.out)
    log = out / "dpsniper_suite.jsonl"
    out.mkdir(parents=True, exist_ok=True)
    records = load(log)
    features = "values" if args.values_only else "default"
    commit = dpcheck_commit()
    done = {(r["mechanism"], r["features"], r.get("dpcheck"), r["fraction"], r["alpha"],
             r["seed"]) for r in records}
    for seed in args.seeds:
        for m in chosen:
            if (m.name, features, commit, args.fraction, args.alpha, seed) in done:
                continue
            rec = run(m, args.fraction, seed, args.alpha, values_only=args.values_only)
            with log.open("a") as fh:
                fh.write(json.dumps(rec) + "\n")
            records.append(rec)
            print(json.dumps({k: rec[k] for k in (
                "mechanism", "features", "seed", "pairs", "samples_per_side", "epsilon_lower",
                "dp_sniper_lr", "true_epsilon", "chosen_pair", "seconds")}), flush=True)
            rows = summary(records)
            write_atomic(out / "dpsniper_suite.json",
                         json.dumps({"records": records, "summary": rows}, indent=1) + "\n")
            write_atomic(out / "dpsniper_suite.md", markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
