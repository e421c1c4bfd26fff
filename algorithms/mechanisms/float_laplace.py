"""The naive floating-point Laplace mechanism (Mironov 2012) and a feature map that exposes it.

:class:`NaiveFloatLaplace` implements the textbook inverse-CDF sampler in float64,
``Σ data − b·sgn(v)·ln(1 − 2|v|)`` with ``v = u − 1/2`` and ``u = j·2⁻⁵³`` uniform on the 53-bit
grid (``j ∈ [1, 2⁵³)``, exactly what ``Generator.random`` produces apart from excluding 0). Only
2⁵² noise magnitudes can occur, and after the rounded addition ``μ + noise`` the set of reachable
outputs depends on μ: most floats reachable from μ = 0 are not reachable from μ = 1 and vice
versa ("holes" in the output lattice). So M(d) puts positive mass on outputs M(d′) can never
produce and the true ε is infinite (Mironov 2012, §3), although the *real-valued* distribution
is exactly Laplace.

A black-box auditor that only looks at the output *value* (thresholds, intervals, quantile grids
— dpcheck's default features) sees two Laplace distributions and can certify at most ≈ ε; it
cannot see lattice holes. :class:`LatticeReachability` is a user feature map on the exact float
bits: for each candidate location μ it reports whether the output is reachable from μ by
re-running the sampler's float arithmetic on the few grid points whose noise could round to it.
With it, the event "not reachable from μ_d" has probability 0 under d and ≈ 0.8 under d′, and the
auditor certifies ε up to its sample-size ceiling.

References
----------
I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012,
§3 (the attack on the naive float Laplace mechanism) and §5 (snapping).
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §VI-D (``exp_floating_point.py``: numpy's float
Laplace at ε = 0.1 with 64 bit-pattern features).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.validation import fmt, check_epsilon, check_real
from dpcheck.errors import InvalidArgument

from .primitives import bounded_sum
from .primitives import _check_rng, _check_size

__all__ = ["NaiveFloatLaplace", "LatticeReachability"]

_TWO52 = 2.0**52
_CHUNK = 1 << 18  # rows per block in reachable()


@dataclass(frozen=True, slots=True)
class NaiveFloatLaplace:
    """Naive inverse-CDF float64 Laplace on a bounded sum (true ε = ∞ in float arithmetic).

    Output ``μ + (−b·sgn(v))·ln(1 − 2|v|)`` with ``μ = Σ data``, ``b = Δ/ε``, ``v = j·2⁻⁵³ − 1/2``
    and ``j`` uniform on ``[1, 2⁵³)``; every operation is float64 numpy arithmetic.

    Parameters
    ----------
    epsilon
        The ε the scale is calibrated for, finite, > 0.
    sensitivity
        Record bound Δ, finite, > 0.

    References
    ----------
    I. Mironov, CCS 2012, §3.
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def scale(self) -> float:
        """The Laplace scale ``b = Δ/ε``."""
        return self.sensitivity / self.epsilon

    @property
    def true_epsilon(self) -> float:
        """``inf``: the reachable output sets of neighbouring sums differ."""
        return math.inf

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        mu = bounded_sum(data, self.sensitivity)
        n, gen = _check_size(size), _check_rng(rng)
        v = gen.integers(1, 2**53, size=n) * 2.0**-53 - 0.5  # exact on the 2^-53 grid
        m = 1.0 - 2.0 * np.abs(v)  # exact: a multiple of 2^-52 in (0, 1]
        return mu + (-self.scale * np.sign(v)) * np.log(m)

    def reachable(self, outputs: ArrayLike, location: float) -> np.ndarray:
        """Whether each output can be produced by the sampler at sum ``location`` (bool array).

        An output o ≠ μ needs noise of sign ``sgn(o − μ)`` and magnitude ≈ ``|o − μ|``, i.e.
        ``m = j·2⁻⁵²`` with ``j ≈ 2⁵² e^{−|o−μ|/b}``. The rounding of ``o − μ`` and of the sum moves
        that j by at most ``j·(|o| + |o − μ|)·2⁻⁵²/b`` ≤ ``(|μ|/b + 1)``, so the 2W + 1 grid points
        around it (W chosen from that bound, plus 3) contain every preimage; each is pushed
        through the sampler's own float operations and compared with o bit for bit.
        """
        mu = check_real("location", location)
        o = np.asarray(outputs, dtype=np.float64).ravel()
        if not np.isfinite(o).all() or not math.isfinite(mu):
            raise InvalidArgument(f"outputs and location={fmt(location)} must be finite")
        out = np.empty(o.size, dtype=bool)
        for start in range(0, o.size, _CHUNK):
            out[start : start + _CHUNK] = self._reachable(o[start : start + _CHUNK], mu)
        return out

    def _reachable(self, o: np.ndarray, mu: float) -> np.ndarray:
        b = self.scale
        y = o - mu
        j_star = np.floor(_TWO52 * np.exp(-np.abs(y) / b))
        spread = j_star * (np.abs(o) + np.abs(y)) / (_TWO52 * b) if o.size else np.zeros(1)
        width = 3 + math.ceil(float(spread.max()))
        if width > 1024:
            raise InvalidArgument(f"location={mu!r} is too far from 0 relative to scale={b!r}")
        j = np.clip(j_star[:, None] + np.arange(-width, width + 1), 1.0, _TWO52 - 1.0)
        m = j * 2.0**-52  # the sampler's m = 1 - 2|v| for the grid point j
        candidates = mu + (-b * np.sign(y))[:, None] * np.log(m)
        return (candidates == o[:, None]).any(axis=1) | (o == mu)


@dataclass(frozen=True, slots=True)
class LatticeReachability:
    """Feature map ``outputs -> (n, L)``: column i is 1 iff the output is reachable from
    ``locations[i]`` under ``mechanism`` (see :meth:`NaiveFloatLaplace.reachable`).

    Parameters
    ----------
    mechanism
        The :class:`NaiveFloatLaplace` whose float arithmetic defines reachability.
    locations
        Candidate true sums, e.g. the sums of the audited pair.

    References
    ----------
    I. Mironov, CCS 2012, §3 (membership of an output in the image of the sampler reveals μ).
    """

    mechanism: NaiveFloatLaplace
    locations: tuple[float, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, NaiveFloatLaplace):
            raise InvalidArgument(f"mechanism={fmt(self.mechanism)} must be NaiveFloatLaplace")
        locs = tuple(check_real("locations[i]", x) for x in self.locations)
        if not locs:
            raise InvalidArgument("locations=() must name at least one location")
        object.__setattr__(self, "locations", locs)

    def __call__(self, outputs: ArrayLike) -> np.ndarray:
        """0/1 float64 array of shape ``(n, len(locations))``."""
        cols = [self.mechanism.reachable(outputs, mu) for mu in self.locations]
        return np.column_stack(cols).astype(np.float64)
