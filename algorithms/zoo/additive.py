"""Zoo entries for additive-noise mechanisms (anchors-auditing.md §7: A1–A3, A6, A8, A9, B1–B3,
B6–B11, C3, C5, C6). Every entry registers itself at import.

Conventions: ε0 = 0.1 and Δ = 1 unless stated; sums are of records in [0, Δ] and are audited on
``d = [1.0]``, ``d′ = []`` under add/remove, which moves the sum by the full Δ (the worst case of
every mechanism here). ``published`` holds the certified lower bounds of DP-Sniper (LR and MLP)
and StatDP (two runs, verified "lcb") from anchors §4, re-checked against
``eth-sri/dp-sniper/eval_sp2021/reference-results/*.log``.

References
----------
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021; Z. Ding et al., "Detecting Violations of
Differential Privacy", CCS 2018 (StatDP); per-mechanism sources in each description and in
:mod:`algorithms.mechanisms.primitives`, :mod:`algorithms.mechanisms.noisy_sums`, :mod:`algorithms.mechanisms.gaussian`,
:mod:`algorithms.mechanisms.rappor`, :mod:`algorithms.mechanisms.float_laplace`.
"""

from __future__ import annotations

import math
from typing import Any

from algorithms.mechanisms.float_laplace import LatticeReachability, NaiveFloatLaplace
from algorithms.mechanisms.gaussian import GaussianSum
from algorithms.mechanisms.noisy_sums import (
    ClippedLaplaceSum,
    DataScaledLaplace,
    DataSeededLaplace,
    DeltaLeakLaplace,
    RepeatedLaplace,
    TruncatedGeometric,
)
from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, RandomizedResponse
from algorithms.mechanisms.rappor import OneTimeRappor
from algorithms.zoo import Tier, ZooEntry, register
from dpcheck.claims import ApproxDP, PureDP
from dpcheck.neighbours import AddRemove, Replace

__all__ = ["ENTRIES", "EPS0", "INSUFFICIENT_RATIOS", "LEAK_PROBABILITIES", "SUM_PAIR"]

EPS0 = 0.1
#: B1: the noise is calibrated for ε0/r.
INSUFFICIENT_RATIOS = (0.5, 0.75, 0.9, 0.95, 0.99)
#: B10: probabilities δ1 of releasing the raw sum.
LEAK_PROBABILITIES = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
#: The worst-case pair of every bounded-sum entry: the sum moves by the full Δ = 1.
SUM_PAIR = ([1.0], [])
_ADD_REMOVE, _REPLACE = AddRemove(), Replace()
_ENTRIES: list[ZooEntry] = []


def _register(entry: ZooEntry) -> ZooEntry:
    """:func:`algorithms.zoo.register`, also recording the entry in :data:`ENTRIES`."""
    _ENTRIES.append(register(entry))
    return entry


def _published(lr: float, mlp: float, run1: float, run2: float) -> dict[str, float]:
    """Certified ε lower bounds of DP-Sniper (LR, MLP) and StatDP (runs 1, 2; "lcb")."""
    return {"dp_sniper_lr": lr, "dp_sniper_mlp": mlp, "statdp_run1": run1, "statdp_run2": run2}


def _sum_entry(name: str, tier: Tier, anchor: str, mech: Any, true_eps: float, text: str,
               *, claim: PureDP | ApproxDP | None = None, **extra: Any) -> ZooEntry:
    """Register a bounded-sum entry audited on :data:`SUM_PAIR` under add/remove."""
    return _register(ZooEntry(name=name, tier=tier, anchor=anchor, mechanism=mech,
                             claim=claim or PureDP(EPS0), pairs=(SUM_PAIR,),
                             true_epsilon=true_eps, relation=_ADD_REMOVE, description=text,
                             **extra))


# --- Tier A: correct --------------------------------------------------------------------------
_sum_entry("laplace", "A", "A1", LaplaceSum(EPS0), EPS0,
           "Laplace mechanism Σd + Lap(Δ/ε0) on records in [0, 1]: exactly ε0-DP (Dwork et al. "
           "2006, Prop. 1). On d=[1], d'=[] the log-likelihood ratio equals ±ε0 on each half-line "
           "outside [0, 1], so the bound is attained (tight in the tails). DP-Sniper "
           "LaplaceMechanism.", published=_published(0.097, 0.098, 0.100, 0.100))
_register(ZooEntry(
    "geometric", "A", "A2", GeometricSum(EPS0), PureDP(EPS0), (([1], []),), EPS0, _ADD_REMOVE,
    "Two-sided geometric mechanism, P[Z=z] ∝ e^{-ε0|z|}, on a count of {0,1} records: exactly "
    "ε0-DP (Ghosh–Roughgarden–Sundararajan 2009); every output left of the smaller count has "
    "ratio e^{ε0}."))
_register(ZooEntry(
    "randomized_response", "A", "A3", RandomizedResponse(EPS0, 4), PureDP(EPS0),
    (([0], [1]),), EPS0, _REPLACE,
    "4-ary randomized response on one record (local model, replace-one): keeps x w.p. "
    "e^ε0/(e^ε0+3); P(x|x)/P(x|x') = e^ε0 exactly (Warner 1965; Kairouz et al. 2014). Exact pmf."))
_GAUSS = GaussianSum.analytic(1.0, 1e-5)
_sum_entry("analytic_gaussian", "A", "A6", _GAUSS, _GAUSS.epsilon_for(1e-5),
           f"Gaussian mechanism with the analytic σ = {_GAUSS.sigma:.6f} for (1, 1e-5) (Balle & "
           "Wang 2018, Alg. 1; brentq on the exact curve). true_delta is their Theorem 8 curve "
           "Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ); δ(1) = 1e-5 and true_epsilon = 1 up to a "
           "few ulps.", claim=ApproxDP(1.0, 1e-5), true_delta=_GAUSS.delta_for)
_GEO = TruncatedGeometric(EPS0, 5)
_GEO_PUBLISHED = _published(0.116, 0.116, 0.116, 0.117)
_GEO_TEXT = (
    "Balcer–Vadhan GeoSample (arXiv:1709.05396 Alg. 4.8; DP-Sniper TruncatedGeometricMechanism, "
    "n=5) with nominal ε=0.1: k=⌈ln(2/ε)⌉=3 and every ratio P(z|c)/P(z|c±1) is (1+2^-3)^{±1}, so "
    "the exact ε is ln(1+2^-k)=ln(1.125)=0.117783 (their Thm 4.7; recomputed from the exact "
    "integer pmf over all adjacent counts). Pair: counts 2 vs 1 (DP-Sniper's chosen pair); all "
    "adjacent pairs give the same ε. ")
_register(ZooEntry(
    "truncated_geometric", "A", "A8", _GEO, PureDP(_GEO.true_epsilon), (([1, 1], [1]),),
    _GEO.true_epsilon, _ADD_REMOVE, _GEO_TEXT + "Claimed at its exact ε: correct.",
    published=_GEO_PUBLISHED))
_sum_entry("laplace_parallel", "A", "A9", RepeatedLaplace(EPS0 / 20, 20), EPS0,
           "DP-Sniper LaplaceParallel: 20 independent Lap(1/0.005) releases of one sum, claimed "
           "at the composed 20·0.005 = 0.1. Composition is tight here (the per-coordinate ratios "
           "all equal e^0.005 below the smaller sum), so true ε = 0.1. Output shape (size, 20).",
           published=_published(0.035, 0.030, 0.013, 0.013))
_CLASSIC4 = GaussianSum.classic(4.0, 1e-5)
_sum_entry("classic_gaussian_eps4", "A", "B8", _CLASSIC4, _CLASSIC4.epsilon_for(1e-5),
           "Classic Gaussian σ = Δ√(2 ln(1.25/δ))/ε used outside its theorem (Dwork–Roth Thm A.1 "
           f"needs ε<1) at (4, 1e-5): σ = {_CLASSIC4.sigma:.6f}. Anchors §7 lists this as B8 "
           f"(broken), but the exact curve gives δ(4) = {_CLASSIC4.delta_for(4.0):.3g} < 1e-5 "
           f"(true ε at δ=1e-5 is {_CLASSIC4.epsilon_for(1e-5):.4f}): the claim HOLDS, so this is "
           "a correct (tier A) control. The violating misuse is classic_gaussian_eps8.",
           claim=ApproxDP(4.0, 1e-5), true_delta=_CLASSIC4.delta_for)

# --- Tier B: buggy, finite true ε ------------------------------------------------------------
for _r in INSUFFICIENT_RATIOS:
    _sum_entry(f"laplace_insufficient_r{_r:g}", "B", "B1", LaplaceSum(EPS0 / _r), EPS0 / _r,
               f"'Insufficient noise' Laplace (Google PR #38 protocol): scale rΔ/ε0 with r={_r:g}, "
               f"i.e. noise for ε0/r; claimed ε0. True ε = ε0/r = {EPS0 / _r:.6g} exactly "
               "(Laplace with scale s is exactly Δ/s-DP).")
_sum_entry("laplace_scale_eps", "B", "B2", LaplaceSum(1.0 / EPS0), 1.0 / EPS0,
           "Laplace scale set to ε0 instead of Δ/ε0 (StatDP histogram_eps, DP-Sniper NoisyHist2): "
           "true ε = Δ/ε0 = 10 at ε0=0.1. NoisyHist2 adds the same noise to 5 bins of which one "
           "changes; the other 4 are independent of the pair, so this 1-bin version has the same "
           "privacy loss and the published bounds apply.",
           published=_published(4.602, 4.601, 9.717, 10.002))
_sum_entry("bad_partial_sum", "B", "B3", LaplaceSum(2 * EPS0), 2 * EPS0,
           "CheckDP BadPartialSum: the sum gets Lap(1/(2ε0)) instead of Lap(1/ε0); the Laplace "
           "mechanism with scale Δ/(2ε0) is exactly 2ε0-DP.")
_sum_entry("forgotten_composition", "B", "B6", RepeatedLaplace(EPS0, 5), 5 * EPS0,
           "Forgotten composition: 5 independent Lap(Δ/ε0) releases of one sum claimed ε0. Tight "
           "basic composition (per-coordinate ratios all e^ε0 below the smaller sum): true 5ε0 = "
           "0.5. Output shape (size, 5).")
_sum_entry("sensitivity_underestimate", "B", "B7", ClippedLaplaceSum(EPS0, 1.0, 0.5), 2 * EPS0,
           "Records clipped to [0, B=1] (so the sum has sensitivity B) but noise calibrated to "
           "B/2: Lap(B/(2ε0)), exactly 2ε0-DP.")
_CLASSIC8 = GaussianSum.classic(8.0, 0.1)
_sum_entry("classic_gaussian_eps8", "B", "B8", _CLASSIC8, _CLASSIC8.epsilon_for(0.1),
           f"Classic Gaussian σ = Δ√(2 ln(1.25/δ))/ε at (8, 0.1), far outside Dwork–Roth Thm A.1 "
           f"(ε<1): σ = {_CLASSIC8.sigma:.6f}. Exact Balle–Wang curve: δ(8) = "
           f"{_CLASSIC8.delta_for(8.0):.4f} > 0.1, true ε at δ=0.1 is "
           f"{_CLASSIC8.epsilon_for(0.1):.4f}. (Anchors' example (4, 1e-5) is NOT a violation, "
           "see classic_gaussian_eps4; at δ=1e-5 the classic σ stays valid up to ε≈8.42, and "
           "certifying a δ excess beyond that needs >1e9 samples.)",
           claim=ApproxDP(8.0, 0.1), true_delta=_CLASSIC8.delta_for)
_RAPPOR = OneTimeRappor(4, 20, 0.95)
_register(ZooEntry(
    "rappor_one_time", "B", "B9", _RAPPOR, PureDP(EPS0), (([10], [6]),), _RAPPOR.true_epsilon,
    _REPLACE,
    "One-time RAPPOR exactly as DP-Sniper's OneTimeRappor (h=4 mmh3 hashes, m=20, f=0.95; "
    "Erlingsson et al. 2014 steps 1–2). The claim ε0=0.1 is the one-bit ε ln((1−f/2)/(f/2)) = "
    "0.10008, forgetting that a value change flips up to 2h bits. Values 10 and 6 have disjoint "
    "4-bit filters, so true ε = 8·0.10008 = 0.80067 (exact: product of independent bits, "
    "re-derived from the 2^8-outcome pmf of the differing bits). DP-Sniper's chosen pair "
    "(1, 0) has disjoint but 3-bit filters (one hash collision each), so its ε is 6·0.10008 = "
    "0.6005 — what DP-Sniper certified (0.598); the worst pair over its domain [-10, 10] gives "
    "0.8007.",
    published=_published(0.598, 0.600, 0.471, 0.060)))
_register(ZooEntry(
    "truncated_geometric_nominal", "B", "B11", _GEO, PureDP(EPS0), (([1, 1], [1]),),
    _GEO.true_epsilon, _ADD_REMOVE,
    _GEO_TEXT + "Claimed at the nominal ε=0.1: an 18% violation (resolution test).",
    published=_GEO_PUBLISHED))

# --- Tier C: infinite true ε -----------------------------------------------------------------
for _d1 in LEAK_PROBABILITIES:
    _leak = DeltaLeakLaplace(EPS0, _d1)
    _sum_entry(f"delta_leak_{_d1:.0e}", "C", "B10", _leak, math.inf,
               f"δ-leak: w.p. δ1={_d1:g} release the exact sum, else Σd + Lap(1/ε0); claimed "
               f"(ε0, δ1/10). The atom at Σd has mass δ1 under d and 0 under d', the Laplace parts "
               "are ε0-close, so δ(ε) = δ1 + (1−δ1)·max(0, 1−e^{(ε−ε0)/2}) exactly and δ(ε0) = "
               "δ1 (true_delta). No ε gives δ(ε) ≤ δ1/10, so true_epsilon = inf (anchors list "
               "this as B10, finite; it is finite only as the pair (ε0, δ1)). Rare-event test.",
               claim=ApproxDP(EPS0, _d1 / 10), true_delta=_leak.true_delta)
_sum_entry("noise_scale_from_data", "C", "C3", DataScaledLaplace(EPS0), math.inf,
           "Laplace whose scale (Δ + Σd)/ε0 depends on the private sum (cf. DP-Auditorium "
           "MeanMechanism): scales 20 vs 10 on the pair, so the log-likelihood ratio "
           "|x|/10 − |x−1|/20 − ln 2 grows like x/20 in the tails: unbounded, true ε = inf; tail "
           "events certify ever larger ε as samples grow.")
_sum_entry("noise_seeded_from_data", "C", "C5", DataSeededLaplace(EPS0), math.inf,
           "Noise reuse: one Lap(Δ/ε0) draw from an RNG seeded with SHA-256 of the dataset; rng "
           "is ignored and all `size` outputs are equal. M(d), M(d') are point masses at different "
           "values: true ε = inf, witnessed by a single point event.")
_FLOAT = NaiveFloatLaplace(EPS0)
_sum_entry("naive_float_laplace", "C", "C6", _FLOAT, math.inf,
           "Naive inverse-CDF float64 Laplace μ − b·sgn(v)·ln(1−2|v|) (Mironov 2012 §3): only "
           "2^52 noise magnitudes exist and the rounded μ+noise lattices for μ=0 and μ=1 differ, "
           "so true ε = inf. dpcheck's default value features see two Laplace laws and cannot "
           "certify more than ≈ε0. `features` is a LatticeReachability map (re-runs the sampler's "
           "float ops on the ≤9 grid points near each output): ≈81% of M(d') outputs are "
           "unreachable from μ=1, so 2e5 samples reach the Clopper–Pearson ceiling. It is a "
           "white-box feature (it knows the sampler and the pair's sums). DP-Sniper's figure is "
           "for numpy's own float Laplace with 64 bit-pattern features.",
           features=LatticeReachability(_FLOAT, (1.0, 0.0)), published={"dp_sniper_mlp": 0.252})

#: The entries of this module, in registration order.
ENTRIES: tuple[ZooEntry, ...] = tuple(_ENTRIES)
