"""Sequential audits (``audit(sequential=True)``): calibration under optional stopping, and the
samples they use to refute the broken zoo entries.

Not part of CI. Two measurements (three with ``--stop-within``), written to
``reports/bench/sequential.json`` and printed:

1. **Calibration.** The correct zoo entries whose truth is exact (``randomized_response``,
   ``laplace``, ``geometric``: every event sits at or below the claimed ratio) audited at their
   exact ε on their worst-case pair, ``--seeds`` seeds each, sequential on, at ``--calibration``
   samples per side (the smallest budget with both pilots is 2·10⁵). The false-alarm rate must be
   ≤ α = 0.05; it is reported with its exact Clopper–Pearson 95 % upper bound.
2. **Samples to refute.** Every broken zoo entry (tiers B and C) on its worst-case pair at a
   fixed budget ``--budget`` (default 10⁶ per side, the zoo benchmark's largest default), ``--runs``
   seeds each, sequential and fixed: how often each refutes the claim, the median samples per
   side the sequential audit drew, and that median as a fraction of the fixed budget (the target
   of issue 30: ≤ 1/10 for every entry the fixed budget refutes).
3. **Stopping for precision** (``--stop-within τ``): every correct zoo entry (tier A) on its
   worst-case pair at ``--budget``, ``--runs`` seeds, sequential with and without
   ``stop_within=τ``: the samples used, the bound given up, how often a pilot ended the audit;
   and coverage under that stopping — the calibration mechanisms claimed at twice their exact
   ε (so the precision stop can act) at ``--budget``, ``--seeds`` seeds, bounds above the exact
   ε counted.

Usage::

    python benchmarks/sequential.py                    # 1000 calibration seeds, 5 runs per entry
    python benchmarks/sequential.py --seeds 200 --runs 3 --only laplace_insufficient
    python benchmarks/sequential.py --stop-within 0.05 --skip-calibration --runs 5
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

from scipy.stats import binomtest

import dpcheck
from algorithms.zoo import ZooEntry, entries, get

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ("randomized_response", "laplace", "geometric")


def _audit(entry: ZooEntry, samples: int, seed: int, sequential: bool,
           stop_within: float | None = None, claim: Any = None) -> dpcheck.AuditResult:
    d, d_prime = entry.pairs[0]
    return dpcheck.audit(entry.mechanism, d, d_prime, entry.claim if claim is None else claim,
                         samples=samples, seed=seed, alpha=0.05, features=entry.features,
                         float_features=entry.float_features, sequential=sequential,
                         stop_within=stop_within)


def precision(within: float, budget: int, runs: int, seeds: int,
              only: str | None) -> dict[str, Any]:
    """``stop_within=within`` against plain sequential audits on the correct zoo entries, and
    coverage of the bounds under the precision stop (module docstring, item 3)."""
    rows = []
    for entry in entries():
        if not entry.correct or (only and only not in entry.name):
            continue
        plain = [_audit(entry, budget, s, True) for s in range(runs)]
        early = [_audit(entry, budget, s, True, within) for s in range(runs)]
        rec = {"mechanism": entry.name, "claimed_epsilon": entry.claim.epsilon,
               "true_epsilon": entry.true_epsilon, "budget": budget, "runs": runs,
               "stopped_at_a_pilot": sum(r.stages[-1].name != "final" for r in early),
               "median_samples": statistics.median(r.samples for r in early),
               "median_fraction": statistics.median(r.samples for r in early) / budget,
               "epsilon_lower_plain": [round(r.epsilon_lower, 4) for r in plain],
               "epsilon_lower_stop_within": [round(r.epsilon_lower, 4) for r in early],
               "median_bound_given_up": statistics.median(
                   a.epsilon_lower - b.epsilon_lower for a, b in zip(plain, early)),
               "violations": [sum(r.violation for r in plain), sum(r.violation for r in early)]}
        rows.append(rec)
        print(f"{entry.name:40s} claim {entry.claim.epsilon:<8.4g} stopped "
              f"{rec['stopped_at_a_pilot']}/{runs}, median samples {rec['median_samples']:>9,.0f}"
              f", bound given up (median) {rec['median_bound_given_up']:.4f}", flush=True)
    coverage = []
    for name in CALIBRATION:
        entry = get(name)
        truth = float(entry.true_epsilon)
        claim = dataclasses.replace(entry.claim, epsilon=2 * truth)
        res = [_audit(entry, budget, s, True, within, claim) for s in range(seeds)]
        above = sum(r.epsilon_lower > truth for r in res)
        ci = binomtest(above, seeds).proportion_ci(0.95, method="exact")
        coverage.append({"mechanism": name, "claimed_epsilon": 2 * truth, "true_epsilon": truth,
                         "budget": budget, "seeds": seeds, "above_truth": above,
                         "rate_upper95": ci.high,
                         "stopped_at_a_pilot": sum(r.stages[-1].name != "final" for r in res),
                         "median_samples": statistics.median(r.samples for r in res),
                         "median_epsilon_lower": statistics.median(r.epsilon_lower for r in res)})
        print(f"coverage {name} claimed at 2x: {above}/{seeds} bounds above the exact ε "
              f"(95% upper {ci.high:.4f}), {coverage[-1]['stopped_at_a_pilot']} stopped at a "
              "pilot", flush=True)
    return {"stop_within": within, "entries": rows, "coverage": coverage}


def calibration(names: tuple[str, ...], seeds: int, samples: int) -> list[dict[str, Any]]:
    """False alarms of sequential audits of exactly-private entries over ``seeds`` seeds."""
    out = []
    for name in names:
        entry = get(name)
        start = time.perf_counter()
        alarms = stopped = 0
        for seed in range(seeds):
            r = _audit(entry, samples, seed, True)
            alarms += r.violation
            stopped += r.stages is not None and r.stages[-1].name != "final"
        ci = binomtest(alarms, seeds).proportion_ci(0.95, method="exact")
        out.append({"mechanism": name, "samples_per_side": samples, "seeds": seeds,
                    "false_alarms": alarms, "rate": alarms / seeds, "rate_upper95": ci.high,
                    "stopped_at_a_pilot": stopped, "alpha": 0.05,
                    "seconds": round(time.perf_counter() - start, 1)})
        print(f"calibration {name}: {alarms}/{seeds} false alarms (rate {alarms / seeds:.4f}, "
              f"95% upper {ci.high:.4f}; alpha 0.05), {stopped} stopped at a pilot")
    return out


def samples_to_refute(budget: int, runs: int, only: str | None) -> list[dict[str, Any]]:
    """Sequential vs fixed on every broken zoo entry (worst-case pair) at ``budget``."""
    out = []
    for entry in entries():
        if entry.correct or (only and only not in entry.name):
            continue
        seq, fixed = [], []
        t_seq = t_fixed = 0.0
        for seed in range(runs):
            t = time.perf_counter()
            seq.append(_audit(entry, budget, seed, True))
            t_seq += time.perf_counter() - t
            t = time.perf_counter()
            fixed.append(_audit(entry, budget, seed, False))
            t_fixed += time.perf_counter() - t
        used = [r.samples for r in seq]
        refuted = [r.samples for r in seq if r.violation]
        rec = {"mechanism": entry.name, "tier": entry.tier, "claimed_epsilon": entry.claim.epsilon,
               "true_epsilon": entry.true_epsilon, "budget": budget, "runs": runs,
               "fixed_refuted": sum(r.violation for r in fixed),
               "sequential_refuted": sum(r.violation for r in seq),
               "median_samples_used": statistics.median(used),
               "median_samples_to_refute": statistics.median(refuted) if refuted else None,
               "fraction_of_budget": statistics.median(used) / budget,
               "stopped_at": [r.stages[-1].name if r.stages else "fixed" for r in seq],
               "epsilon_lower_sequential": [round(r.epsilon_lower, 4) for r in seq],
               "epsilon_lower_fixed": [round(r.epsilon_lower, 4) for r in fixed],
               "seconds_sequential": round(t_seq, 2), "seconds_fixed": round(t_fixed, 2)}
        out.append(rec)
        print(f"{entry.name:48s} fixed {rec['fixed_refuted']}/{runs} seq "
              f"{rec['sequential_refuted']}/{runs} median used {rec['median_samples_used']:>9,.0f}"
              f" ({rec['fraction_of_budget']:.3f} of budget), {t_seq:6.2f} s vs {t_fixed:6.2f} s")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="calibration seeds per mechanism")
    parser.add_argument("--calibration", type=float, default=2e5,
                        help="calibration samples per side (default 2e5)")
    parser.add_argument("--budget", type=float, default=1e6, help="budget per side (default 1e6)")
    parser.add_argument("--runs", type=int, default=5,
                        help="seeds per broken entry (0: calibration only)")
    parser.add_argument("--only", default=None, help="broken entries whose name contains this")
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument("--stop-within", type=float, default=None,
                        help="also measure stop_within=TAU on the correct entries (item 3)")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench" / "sequential.json")
    args = parser.parse_args(argv)
    doc: dict[str, Any] = {"date": time.strftime("%Y-%m-%d")}
    if not args.skip_calibration:
        doc["calibration"] = calibration(CALIBRATION, args.seeds, int(args.calibration))
    if args.runs < 0:
        parser.error(f"--runs={args.runs} must be >= 0")
    doc["refute"] = (samples_to_refute(int(args.budget), args.runs, args.only)
                     if args.runs and args.stop_within is None else [])
    if args.stop_within is not None:
        doc["precision"] = precision(args.stop_within, int(args.budget), args.runs, args.seeds,
                                     args.only)
    caught = [r for r in doc["refute"] if r["fixed_refuted"] > r["runs"] // 2]
    if caught:
        worst = max(r["fraction_of_budget"] for r in caught)
        print(f"{len(caught)} broken entries refuted by most fixed-budget runs; largest median "
              f"fraction of the budget used by the sequential audit: {worst:.3f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
