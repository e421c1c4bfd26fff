"""Zoo entries whose truth is about float64 arithmetic: the textbook noisy sums.

``Σ data + rng.laplace(0, Δ/ε0)`` and ``Σ data + rng.normal(0, σ)`` — the code most people
write — on the worst-case pair ``d = [1.0]``, ``d′ = []`` (sums 1 and 0). In real arithmetic
they are the Laplace (ε0 = 0.1, DP-Sniper's floating-point setting) and analytic Gaussian
((1, 1e-5)) mechanisms of tier A; in float64 they are not private for any ε (true ε = ∞): near
0, outputs from sum 0 are raw noise with the full resolution of their magnitude, while outputs
from sum 1 are exact differences ``1 + noise``, multiples of 2⁻⁵³. Audited with the default
float features (``float_features=True``), which find this black-box. DP-Sniper's bit-pattern
classifier certified 0.252 on numpy's float Laplace at ε0 = 0.1.

References
----------
I. Mironov, CCS 2012; B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §VI-D.
"""

from __future__ import annotations

import math

from algorithms.mechanisms.float_noise import NaiveGaussian, TextbookLaplace
from algorithms.mechanisms.gaussian import GaussianSum
from algorithms.zoo import ZooEntry, register
from dpcheck.claims import ApproxDP, PureDP
from dpcheck.neighbours import AddRemove

__all__ = ["ENTRIES"]

_PAIR = ([1.0], [])
_SIGMA = GaussianSum.analytic(1.0, 1e-5).sigma

ENTRIES: tuple[ZooEntry, ...] = (
    register(ZooEntry(
        "textbook_float_laplace", "C", "", TextbookLaplace(10.0), PureDP(0.1), (_PAIR,),
        math.inf, AddRemove(),
        "Σd + rng.laplace(0, 10) in float64, claimed 0.1-DP (DP-Sniper's floating-point "
        "setting). True ε = ∞: outputs near 0 with spacing finer than 2^-53 occur from sum 0 "
        "only. Found black-box by the default feature lsb(output).",
        float_features=True, published={"dp_sniper_mlp": 0.252})),
    register(ZooEntry(
        "naive_float_gaussian", "C", "", NaiveGaussian(_SIGMA), ApproxDP(1.0, 1e-5), (_PAIR,),
        math.inf, AddRemove(),
        f"Σd + rng.normal(0, {_SIGMA:.6f}) in float64 (the analytic σ for (1, 1e-5)). Not "
        "(ε, δ)-DP for any ε at δ = 1e-5: the outputs only sum 0 can produce have probability "
        "≈ 0.05. Found black-box by lsb(output).",
        float_features=True)),
)
