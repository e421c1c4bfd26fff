"""Coverage of dpcheck's bound on DP-Sniper's own classes and pairs (issue 30, item 3).

Runs :func:`dpsniper_compare.run` (``form="original"``: DP-Sniper's class, its
``PatternGenerator`` pairs, ``audit_pairs(confirm="best")``) over many seeds and counts the
bounds above the exact ε of the pair that was confirmed and above the largest exact ε over the
listed pairs, with the Clopper–Pearson 95 % upper bound on each rate (α is the level the bound
must keep: a rate above α is a validity bug).

The exact ε of each pair is computed here from the mechanism's definition, independently of
``dpcheck`` and of ``algorithms.zoo``:

* one-time RAPPOR (DP-Sniper's ``OneTimeRappor``: 4 murmur3 hashes of ``str(value)`` with seeds
  0–3 modulo 20, permanent randomised response with f = 0.95): the bits are independent, a bit
  set in the filter is 1 with probability 1 − f/2 = 0.525 and a clear one with f/2 = 0.475, so
  the pair's ε is the number of bits where the two filters differ times ln(0.525/0.475);
* SVT1 (``SparseVectorTechnique1(c=1, t=0.5)``, ε = 0.1: ρ ~ Lap(20), ν_i ~ Lap(40)): the output
  is the index of the first query whose noisy value reaches the noisy threshold, or none; its
  probability given ρ is a product of Laplace distribution functions, integrated over ρ by
  adaptive quadrature (:func:`svt1_outcome_probs`); the pair's ε is the largest absolute
  log-ratio over the 11 outcomes (each outcome is one output row).

Usage (DP-Sniper importable, see ``dpsniper_compare.py``)::

    python benchmarks/dpsniper_coverage.py --only rappor --samples 2e5 --seeds 0 100
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dpsniper_compare as cmp  # noqa: E402


def rappor_pair_epsilon(d: list[int], d_prime: list[int], *, n_hashes: int = 4,
                        filter_size: int = 20, f: float = 0.95) -> float:
    """Exact ε of DP-Sniper's ``OneTimeRappor`` on one pair (module docstring)."""
    import mmh3

    def bits(v: int) -> set[int]:
        return {mmh3.hash(str(v), seed=i) % filter_size for i in range(n_hashes)}

    differ = len(bits(int(d[0])) ^ bits(int(d_prime[0])))
    return differ * math.log((1 - f / 2) / (f / 2))


def _lap_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)


def svt1_outcome_probs(a: list[float], *, eps: float = 0.1, t: float = 0.5) -> np.ndarray:
    """Probabilities of SVT1 (cutoff 1) outcomes on queries ``a``: first ⊤ at 0…n−1, then none.

    Given ρ, query i is ⊤ when ν_i ≥ ρ + t − a_i, with probability 1 − F(ρ + t − a_i); the
    first ⊤ at k has probability Π_{i<k} F(ρ + t − a_i) · (1 − F(ρ + t − a_k)); integrated
    against the density of ρ ~ Lap(2/ε) (ν ~ Lap(4/ε) since c = 1).
    """
    b_rho, b_nu = 2 / eps, 4 / eps
    n = len(a)

    def integrand(rho: float, k: int) -> float:
        p = 0.5 / b_rho * math.exp(-abs(rho) / b_rho)
        for i in range(min(k, n)):
            p *= _lap_cdf(rho + t - a[i], b_nu)
        if k < n:
            p *= 1 - _lap_cdf(rho + t - a[k], b_nu)
        return p

    out = np.empty(n + 1)
    # breakpoints where the integrand's pieces change (0 and each ρ = a_i − t)
    points = sorted({0.0, *(ai - t for ai in a)})
    for k in range(n + 1):
        total = 0.0
        edges = [-60 * b_rho, *points, 60 * b_rho]
        for lo, hi in zip(edges[:-1], edges[1:]):
            total += integrate.quad(integrand, lo, hi, args=(k,), epsabs=0, epsrel=1e-11,
                                    limit=200)[0]
        out[k] = total
    return out


def svt1_pair_epsilon(d: list[float], d_prime: list[float]) -> float:
    """Exact ε of DP-Sniper's ``SparseVectorTechnique1(c=1, t=0.5)`` on one pair."""
    p, q = svt1_outcome_probs(d), svt1_outcome_probs(d_prime)
    return float(np.max(np.abs(np.log(p) - np.log(q))))


EXACT = {"rappor_one_time": rappor_pair_epsilon, "svt1": svt1_pair_epsilon}


def clopper_pearson_upper(k: int, n: int, level: float = 0.95) -> float:
    """One-sided Clopper–Pearson upper bound on a rate from ``k`` of ``n``."""
    return 1.0 if k >= n else float(beta.ppf(level, k + 1, n - k))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(EXACT), required=True)
    parser.add_argument("--samples", type=float, default=2e5)
    parser.add_argument("--seeds", nargs=2, type=int, default=[0, 100],
                        help="seed range [start, stop)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--out", default="reports/bench")
    args = parser.parse_args(argv)
    _, pairs = cmp.original(args.only)
    exact = [EXACT[args.only](d, dp) for d, dp in pairs]
    print(json.dumps({"pairs": pairs, "exact": exact}), flush=True)
    out = Path(args.out) / f"dpsniper_coverage_{args.only}_{int(args.samples):.0e}.json"
    records = []
    for seed in range(*args.seeds):
        rec = cmp.run(args.only, int(args.samples), seed, args.alpha, form="original")
        rec["chosen_exact"] = exact[rec["chosen_pair"]]
        rec["above_chosen"] = rec["epsilon_lower"] > rec["chosen_exact"] + 1e-12
        rec["above_max"] = rec["epsilon_lower"] > max(exact) + 1e-12
        records.append(rec)
        print(json.dumps({k: rec[k] for k in ("seed", "epsilon_lower", "chosen_pair",
                                              "chosen_exact", "above_chosen", "seconds")}),
              flush=True)
        n = len(records)
        summary = {"mechanism": args.only, "samples_per_side": int(args.samples),
                   "alpha": args.alpha, "seeds": n, "pairs": pairs, "exact": exact}
        for key in ("above_chosen", "above_max"):
            k = sum(r[key] for r in records)
            summary[key] = k
            summary[key + "_cp95_upper"] = clopper_pearson_upper(k, n)
        summary["mean_bound"] = sum(r["epsilon_lower"] for r in records) / n
        cmp.write_atomic(out, json.dumps({"summary": summary, "records": records},
                                         indent=1) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
