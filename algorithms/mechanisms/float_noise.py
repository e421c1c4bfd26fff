"""Textbook float64 noise mechanisms (leaky: floating-point holes) and a snapped Laplace (not).

:func:`textbook_laplace` is ``value + rng.laplace(0, scale, size)``, the code most people write;
:func:`naive_gaussian` is ``value + rng.normal(0, sigma, size)``. Both are exactly the private
mechanism in real arithmetic and not private at all in float64: the set and spacing of float64
outputs depend on the value (Mironov 2012). :class:`SnappedLaplace` rounds the noise to a
power-of-two grid Λ before adding it to an integer value: the sum is exact, so the output is a
data-independent function of the noise shifted by the value — a post-processing of the shifted
noise, private with the noise's ε (its cells' probability ratios are those of the Laplace
distribution up to the sampler's ~2⁻⁵² relative error). Its outputs are floats whose bits
differ between neighbours, yet it is private: the float features must not flag it.

References
----------
I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012
(§3 the attack, §5 snapping); B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §VI-D.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_epsilon, check_int
from dpcheck.errors import InvalidArgument

__all__ = ["TextbookLaplace", "NaiveGaussian", "SnappedLaplace"]


@dataclass(frozen=True, slots=True)
class TextbookLaplace:
    """``Σ data + rng.laplace(0, scale, size)`` in float64 (true ε = ∞ in float arithmetic)."""

    scale: float

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> Any:
        """``size`` outputs."""
        return float(np.sum(data)) + rng.laplace(0.0, self.scale, size)


@dataclass(frozen=True, slots=True)
class NaiveGaussian:
    """``Σ data + rng.normal(0, sigma, size)`` in float64 (not (ε, δ)-DP for any δ < the mass of
    the values only one side can produce)."""

    sigma: float

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> Any:
        """``size`` outputs."""
        return float(np.sum(data)) + rng.normal(0.0, self.sigma, size)


@dataclass(frozen=True, slots=True)
class SnappedLaplace:
    """``Σ data + Λ·round(N/Λ)``, ``N ~ Laplace(1/ε)`` sampled in float64, ``Λ = 2**-grid_bits``,
    on integer records: ε-DP in float64 (exact sum; post-processing of the shifted noise).

    Parameters
    ----------
    epsilon
        Privacy parameter (noise scale 1/ε for a count).
    grid_bits
        Λ = 2⁻ᵍʳⁱᵈ⁻ᵇⁱᵗˢ, 0 ≤ grid_bits ≤ 30.
    """

    epsilon: float
    grid_bits: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        bits = check_int(self.grid_bits, "grid_bits", minimum=0)
        if bits > 30:
            raise InvalidArgument(f"grid_bits={bits} must be <= 30")
        object.__setattr__(self, "grid_bits", bits)

    @property
    def true_epsilon(self) -> float:
        """ε: rounding the noise is post-processing."""
        return self.epsilon

    def sample(self, data: Sequence[int], size: int, rng: np.random.Generator) -> Any:
        """``size`` outputs (float64 on the 2⁻ᵍʳⁱᵈ⁻ᵇⁱᵗˢ grid)."""
        lam = 2.0 ** -self.grid_bits
        noise = np.round(rng.laplace(0.0, 1.0 / self.epsilon, size) / lam) * lam
        return float(int(np.sum(data))) + noise
