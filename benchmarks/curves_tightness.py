"""Tightness of curve audits against the exact curves (issue 29), outside CI.

For mechanisms with a known pmf (k-ary randomized response, the geometric mechanism) the exact
μ, ρ and Rényi ε(2) come from :class:`dpcheck.exact.ExactPrivacy`; the audit at the exact value
gives a lower confidence bound, reported as the ratio audited / exact over several seeds, next
to the best any single binary event could certify with exact probabilities (the event family's
ceiling). Then the multi-cell bound (:mod:`dpcheck.cell_bounds`) on the same budget: the
mechanism's outputs as cells (discrete) or 8 fixed intervals (the Gaussian, ρ = 1/2).

    ./dev python benchmarks/curves_tightness.py --samples 3000000 --seeds 3
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import dpcheck
from algorithms.mechanisms.primitives import GeometricSum, RandomizedResponse
from algorithms.zoo import exact_pmf
from dpcheck.cell_bounds import renyi_lower_from_cells, rho_lower_from_cells
from dpcheck.exact import privacy_loss

KEYS = {"gdp": "mu", "zcdp": "rho", "rdp2": "epsilon_at_alpha"}




def claim_of(kind: str, value: float):
    return {"gdp": dpcheck.GaussianDP, "zcdp": dpcheck.ZCDP,
            "rdp2": lambda v: dpcheck.RenyiDP(2.0, v)}[kind](value)


def binary_oracle(p: np.ndarray, q: np.ndarray, kind: str) -> float:
    """Best parameter_lower of one likelihood-ratio threshold event with exact probabilities."""
    lr = np.round(np.log(p) - np.log(q), 12)
    order = np.argsort(lr, kind="stable")
    cuts = np.flatnonzero(np.diff(lr[order])) + 1
    tp, tq = np.cumsum(p[order][::-1])[::-1], np.cumsum(q[order][::-1])[::-1]
    claim = claim_of(kind, 1.0)
    best = 0.0
    for c in cuts:
        a, b = float(min(tp[c], 1.0)), float(min(tq[c], 1.0))
        for x, y in ((a, b), (b, a), (1 - a, 1 - b), (1 - b, 1 - a)):
            if x > y:
                best = max(best, claim.parameter_lower(x, y)[KEYS[kind]])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=3_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    cases = [("rr4 eps=0.1", RandomizedResponse(0.1, 4), [0], [1]),
             ("rr2 eps=1", RandomizedResponse(1.0, 2), [0], [1]),
             ("geometric eps=0.1", GeometricSum(0.1), [1], []),
             ("geometric eps=1", GeometricSum(1.0), [1], [])]
    print(f"samples per side {args.samples}, alpha {args.alpha}, seeds 0..{args.seeds - 1}")
    for name, mech, d, d_prime in cases:
        ex = privacy_loss(exact_pmf(mech, d), exact_pmf(mech, d_prime))
        p, q = np.asarray(ex.p_values), np.asarray(ex.q_values)
        exact = {"gdp": ex.mu(), "zcdp": ex.rho(), "rdp2": ex.renyi(2.0)}
        for kind, value in exact.items():
            start = time.perf_counter()
            ratios = [dpcheck.audit(mech, d, d_prime, claim_of(kind, value), samples=args.samples,
                                    seed=s, alpha=args.alpha).parameter_lower[KEYS[kind]] / value
                      for s in range(args.seeds)]
            print(f"{name:18s} {kind:5s} exact {value:.5g}  audited/exact mean "
                  f"{np.mean(ratios):.3f} min {np.min(ratios):.3f}  binary-event ceiling "
                  f"{binary_oracle(p, q, kind) / value:.3f}  "
                  f"({(time.perf_counter() - start) / args.seeds:.1f} s/audit)")
        if p.size <= 16:  # the outputs as cells (both directions: α split in two)
            cells = []
            for s in range(args.seeds):
                rng = np.random.default_rng(s)
                cp, cq = rng.multinomial(args.samples, p), rng.multinomial(args.samples, q)
                rho = max(rho_lower_from_cells(cp, cq, alpha=args.alpha / 2),
                          rho_lower_from_cells(cq, cp, alpha=args.alpha / 2))
                d2 = max(renyi_lower_from_cells(cp, cq, [2.0], alpha=args.alpha / 2)[0],
                         renyi_lower_from_cells(cq, cp, [2.0], alpha=args.alpha / 2)[0])
                cells.append((rho / exact["zcdp"], d2 / exact["rdp2"]))
            rho_r, d2_r = np.mean(cells, axis=0)
            print(f"{name:18s} cells ({p.size}): rho {rho_r:.3f}, eps(2) {d2_r:.3f} of exact")
    edges = np.linspace(-2.5, 3.5, 7)
    ratios = []
    for s in range(args.seeds):
        rng = np.random.default_rng(s)
        cp = np.bincount(np.searchsorted(edges, rng.normal(1.0, 1.0, args.samples)), minlength=8)
        cq = np.bincount(np.searchsorted(edges, rng.normal(0.0, 1.0, args.samples)), minlength=8)
        ratios.append(max(rho_lower_from_cells(cp, cq, alpha=args.alpha / 2),
                          rho_lower_from_cells(cq, cp, alpha=args.alpha / 2)) / 0.5)
    print(f"gaussian sigma=1     cells (8 intervals): rho {np.mean(ratios):.3f} of exact "
          f"(min {np.min(ratios):.3f})")
    assert math.isfinite(np.mean(ratios))


if __name__ == "__main__":
    main()
