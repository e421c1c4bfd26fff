"""Calibration and power of curve audits (issue 29), outside CI.

Validity: the Gaussian mechanism with σ = Δ = 1 is exactly 1-GDP, 0.5-zCDP and (2, 1)-RDP, and
its PLD (dp-accounting) is its exact δ(ε) profile; audited at those exact curves over many
seeds, the false-alarm rate must not exceed α (reported with its Clopper–Pearson interval).
Power: σ at 0.8 of what 0.5-zCDP needs, refuted on how many of 20 seeds at 10⁶ per side; the μ
lower bound of the exact 1-GDP Gaussian at 10⁶ and 10⁷ per side.

    ./dev python benchmarks/curves_calibration.py --seeds 1000 --samples 20000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import beta as beta_dist

import dpcheck


def gaussian(sigma: float):
    def mech(d, size, rng):
        return rng.normal(float(np.sum(d)), sigma, size)
    return mech


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--power-seeds", type=int, default=20)
    args = parser.parse_args()
    import dp_accounting

    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1.0))
    claims = {"1-GDP": dpcheck.GaussianDP(1.0), "0.5-zCDP": dpcheck.ZCDP(0.5),
              "(2,1)-RDP": dpcheck.RenyiDP(2.0, 1.0),
              "PLD(sigma=1)": dpcheck.from_accountant(acc, name="PLD")}
    exact = gaussian(1.0)
    print(f"validity: Gaussian sigma=1 at its exact curves, {args.seeds} seeds, "
          f"{args.samples} samples per side, alpha={args.alpha}")
    for name, claim in claims.items():
        start = time.perf_counter()
        alarms = sum(dpcheck.audit(exact, [1.0], [0.0], claim, samples=args.samples, seed=s,
                                   alpha=args.alpha, float_features=False).violation
                     for s in range(args.seeds))
        lo = beta_dist.ppf(0.025, alarms, args.seeds - alarms + 1) if alarms else 0.0
        hi = beta_dist.ppf(0.975, alarms + 1, args.seeds - alarms)
        print(f"  {name:<14} false alarms {alarms}/{args.seeds} = {alarms / args.seeds:.4f} "
              f"(95% CI {lo:.4f}-{hi:.4f}) {time.perf_counter() - start:.0f} s")
    over = gaussian(0.8)
    refuted = sum(dpcheck.audit(over, [1.0], [0.0], dpcheck.ZCDP(0.5), samples=1_000_000,
                                seed=s, float_features=False).violation
                  for s in range(args.power_seeds))
    print(f"power: sigma 0.8 of 0.5-zCDP refuted on {refuted}/{args.power_seeds} seeds at 1e6")
    for n in (1_000_000, 10_000_000):
        r = dpcheck.audit(exact, [1.0], [0.0], dpcheck.GaussianDP(1.0), samples=n, seed=0,
                          float_features=False)
        print(f"mu lower bound of the exact 1-GDP Gaussian at {n:.0e}: "
              f"{r.parameter_lower['mu']:.4f} (violation: {r.violation})")


if __name__ == "__main__":
    main()
