"""Noisy sums with exactly known privacy, correct and deliberately broken (zoo building blocks).

All mechanisms follow the protocol of :mod:`algorithms.mechanisms.primitives` (vectorised
``sample(data, size, rng)``, frozen validated dataclasses, a ``true_epsilon`` property). Records
are reals in ``[0, sensitivity]`` unless stated otherwise, so the sum moves by at most Δ between
add/remove or replace neighbours and ``d = [Δ]``, ``d′ = []`` realises the worst case.

References
----------
C. Dwork, F. McSherry, K. Nissim, A. Smith, TCC 2006 (Laplace mechanism).
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm. 3.16
(basic composition).
V. Balcer, S. Vadhan, "Differential Privacy on Finite Computers", ITCS 2018 / arXiv:1709.05396,
Algorithm 4.8 (GeoSample) and Theorem 4.7.
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (the TruncatedGeometric and LaplaceParallel
benchmark mechanisms, ``dpsniper/mechanisms/{geometric,parallel}.py``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcheck.validation import fmt, check_epsilon, check_int, check_probability, check_real
from dpcheck.errors import InvalidArgument

from .primitives import _check_rng, _check_size, _records, bounded_sum

__all__ = [
    "RepeatedLaplace",
    "ClippedLaplaceSum",
    "DeltaLeakLaplace",
    "DataScaledLaplace",
    "DataSeededLaplace",
    "TruncatedGeometric",
]


@dataclass(frozen=True, slots=True)
class RepeatedLaplace:
    """``k`` independent Laplace releases of one bounded sum: output row ``Σ data + Lap(Δ/ε)^k``.

    Each release is ε-DP, so by basic composition the whole row is ``kε``-DP, and this is tight:
    the log-likelihood ratio of a row is the sum of k independent per-coordinate ratios, each
    equal to ε on the half-line below the smaller sum. Correct when claimed at ``kε`` (DP-Sniper
    ``LaplaceParallel``), a forgotten composition when claimed at ε.

    Parameters
    ----------
    epsilon
        Per-release ε, finite, > 0.
    k
        Number of releases, ≥ 1.
    sensitivity
        Record bound Δ, finite, > 0.

    References
    ----------
    C. Dwork, A. Roth, 2014, Theorem 3.16 (composition); DP-Sniper ``LaplaceParallel``.
    """

    epsilon: float
    k: int
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "k", check_int(self.k, "k", minimum=1))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε of the whole row: ``k·ε``."""
        return self.k * self.epsilon

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. rows, float64 of shape ``(size, k)``."""
        total = bounded_sum(data, self.sensitivity)
        n, gen = _check_size(size), _check_rng(rng)
        return total + gen.laplace(0.0, self.sensitivity / self.epsilon, size=(n, self.k))


@dataclass(frozen=True, slots=True)
class ClippedLaplaceSum:
    """Sum of records clipped to ``[0, bound]`` plus ``Lap(noise_sensitivity / ε)``.

    The clipped sum has sensitivity ``bound``; noise calibrated to ``noise_sensitivity`` makes the
    mechanism exactly ``ε · bound / noise_sensitivity``-DP (``noise_sensitivity = bound / 2``: the
    sensitivity-underestimate bug, true 2ε). Records may be any finite reals.

    Parameters
    ----------
    epsilon
        The ε the noise is calibrated for, finite, > 0.
    bound
        Clipping bound B, finite, > 0.
    noise_sensitivity
        The sensitivity the noise assumes, finite, > 0.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith, TCC 2006, Proposition 1 (Laplace with the true
    sensitivity; a scale s gives exactly ε = bound / s).
    """

    epsilon: float
    bound: float = 1.0
    noise_sensitivity: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "bound", check_epsilon(self.bound, "bound"))
        ns = check_epsilon(self.noise_sensitivity, "noise_sensitivity")
        object.__setattr__(self, "noise_sensitivity", ns)

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε: ``ε · bound / noise_sensitivity``."""
        return self.epsilon * self.bound / self.noise_sensitivity

    def clipped_sum(self, data: Sequence[float]) -> float:
        """``Σ clip(x, 0, bound)`` over the validated records."""
        arr = _records(data, integer=False)
        return math.fsum(np.clip(arr, 0.0, self.bound).tolist())

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        total = self.clipped_sum(data)
        n, gen = _check_size(size), _check_rng(rng)
        return total + gen.laplace(0.0, self.noise_sensitivity / self.epsilon, size=n)


@dataclass(frozen=True, slots=True)
class DeltaLeakLaplace:
    """With probability ``leak`` release the exact sum, otherwise ``Σ data + Lap(Δ/ε)``.

    For ``d = [Δ]``, ``d′ = []`` the output law of d is ``leak·1{Δ} + (1 − leak)·Lap(Δ, Δ/ε)``.
    The atom at Δ has probability ``leak`` under d and 0 under d′, and the continuous parts are
    ε-indistinguishable with Laplace privacy curve ``max(0, 1 − e^{(ε′−ε)/2})``, so the exact
    privacy curve (both directions) is

    ``δ(ε′) = leak + (1 − leak)·max(0, 1 − e^{(ε′ − ε)/2})``,

    equal to ``leak`` for every ε′ ≥ ε: the mechanism is (ε, leak)-DP and not (ε′, δ)-DP for any
    ε′ when δ < leak.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    leak
        Probability of releasing the raw sum, in [0, 1].
    sensitivity
        Record bound Δ, finite, > 0.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, NeurIPS 2018, Theorem 1 (δ(ε) as a hockey-stick
    divergence); the Laplace privacy curve follows by integrating ``(p − e^{ε′} q)_+`` over
    ``{x < (Δ − ε′Δ/ε)/2}``.
    """

    epsilon: float
    leak: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "leak", check_probability(self.leak, "leak"))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def true_epsilon(self) -> float:
        """The pure-DP ε: ``inf`` when ``leak > 0`` (support mismatch), else ε."""
        return math.inf if self.leak > 0 else self.epsilon

    def true_delta(self, epsilon: float) -> float:
        """Exact worst-case δ(ε′) (formula in the class docstring), for ε′ ≥ 0."""
        eps = check_real("epsilon", epsilon)
        if not eps >= 0:
            raise InvalidArgument(f"epsilon={fmt(epsilon)} must be >= 0")
        lap = -math.expm1(min(0.0, (eps - self.epsilon) / 2.0))
        return self.leak + (1.0 - self.leak) * lap

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)`` (leaks are exactly ``Σ data``)."""
        total = bounded_sum(data, self.sensitivity)
        n, gen = _check_size(size), _check_rng(rng)
        leaked = gen.random(n) < self.leak
        noise = gen.laplace(0.0, self.sensitivity / self.epsilon, size=n)
        return total + np.where(leaked, 0.0, noise)


@dataclass(frozen=True, slots=True)
class DataScaledLaplace:
    """Laplace noise whose scale depends on the private sum: ``Lap((Δ + Σ data)/ε)``.

    For sums s ≠ s′ the scales b ≠ b′ differ and the log-likelihood ratio
    ``|x − s′|/b′ − |x − s|/b + ln(b′/b)`` grows linearly in ``|x|`` with slope ``|1/b′ − 1/b|``:
    no finite ε bounds it (``true_epsilon = inf``); tail events certify ever larger ε.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    sensitivity
        Record bound Δ, finite, > 0.

    References
    ----------
    Google DP-Auditorium ``mechanisms/mean.py`` (noise scale computed from the true count), the
    zoo's anchor C3.
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def true_epsilon(self) -> float:
        """``inf``: the tail log-likelihood ratio is unbounded."""
        return math.inf

    def scale(self, data: Sequence[float]) -> float:
        """The data-dependent Laplace scale ``(Δ + Σ data)/ε``."""
        return (self.sensitivity + bounded_sum(data, self.sensitivity)) / self.epsilon

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        total, scale = bounded_sum(data, self.sensitivity), self.scale(data)
        n, gen = _check_size(size), _check_rng(rng)
        return total + gen.laplace(0.0, scale, size=n)


@dataclass(frozen=True, slots=True)
class DataSeededLaplace:
    """Laplace noise from an RNG seeded with a hash of the dataset (noise reuse).

    The noise is one ``Lap(Δ/ε)`` draw from ``numpy.random.default_rng(seed(data))`` with
    ``seed(data)`` the first 8 bytes of SHA-256 of the records as float64; ``rng`` is validated
    but never used. The output is therefore deterministic given the data: M(d) and M(d′) are point
    masses at (almost surely) different values and ``true_epsilon = inf``.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    sensitivity
        Record bound Δ, finite, > 0.

    References
    ----------
    Tumult Core ``TestCorrelationDetection`` (reused noise); the zoo's anchor C5.
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def true_epsilon(self) -> float:
        """``inf``: the output is a deterministic function of the data."""
        return math.inf

    def release(self, data: Sequence[float]) -> float:
        """The single value every sample on ``data`` equals."""
        total = bounded_sum(data, self.sensitivity)
        raw = np.ascontiguousarray(_records(data, integer=False), dtype=np.float64).tobytes()
        seed = int.from_bytes(hashlib.sha256(raw).digest()[:8], "little")
        noise = np.random.default_rng(seed).laplace(0.0, self.sensitivity / self.epsilon)
        return total + float(noise)

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` identical outputs, float64 of shape ``(size,)``."""
        value = self.release(data)
        n = _check_size(size)
        _check_rng(rng)
        return np.full(n, value)


@dataclass(frozen=True, slots=True)
class TruncatedGeometric:
    """Balcer–Vadhan GeoSample: a truncated geometric count on ``{0, …, n}`` with integer sampling.

    With ``k = ⌈ln(2/ε)⌉`` and ``d = (2^{k+1} + 1)(2^k + 1)^{n−1}``, the count c ∈ {0..n} is
    released as the smallest z with ``F_c(z) ≥ u`` for u uniform on {1..d}, where
    ``F_c(z) = 2^{k(c−z)}(2^k+1)^{n−(c−z)}`` for z < c, ``d − 2^{k(z−c+1)}(2^k+1)^{n−1−(z−c)}`` for
    c ≤ z < n and ``F_c(n) = d``. Then ``P(z | c)`` is proportional to ``(1 + 2^{−k})^{−|z−c|}``
    in the interior with the tails folded onto 0 and n, and every ratio ``P(z|c)/P(z|c±1)`` is
    ``(1 + 2^{−k})^{±1}``, so the exact ε is ``ln(1 + 2^{−k})`` (0.11778 at ε = 0.1), not ε.
    Records are integers in {0, 1}; their count must not exceed n.

    Parameters
    ----------
    epsilon
        Nominal ε, in (0, 2) (so that k ≥ 1).
    n
        Largest count, ≥ 1; ``d`` must be below 2⁶³.

    References
    ----------
    V. Balcer, S. Vadhan, arXiv:1709.05396, Algorithm 4.8 and Theorem 4.7; DP-Sniper
    ``dpsniper/mechanisms/geometric.py`` (``TruncatedGeometricMechanism``, n = 5).
    """

    epsilon: float
    n: int = 5

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        if not eps < 2.0:
            raise InvalidArgument(f"epsilon={fmt(self.epsilon)} must be < 2")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "n", check_int(self.n, "n", minimum=1))
        bits = self.k + 1 + (self.n - 1) * math.log2(2**self.k + 1)  # log2(d) up to rounding
        if bits > 64 or self.denominator >= 2**63:
            raise InvalidArgument(f"n={self.n} is too large for epsilon={eps!r} (d >= 2**63)")

    @property
    def k(self) -> int:
        """``⌈ln(2/ε)⌉``."""
        return math.ceil(math.log(2.0 / self.epsilon))

    @property
    def denominator(self) -> int:
        """``d = (2^{k+1} + 1)(2^k + 1)^{n−1}``."""
        return (2 ** (self.k + 1) + 1) * (2**self.k + 1) ** (self.n - 1)

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε: ``ln(1 + 2^{−k})``."""
        return math.log1p(2.0**-self.k)

    def count(self, data: Sequence[int]) -> int:
        """The validated count ``Σ data`` in {0..n}."""
        arr = _records(data, integer=True)
        if ((arr != 0) & (arr != 1)).any():
            raise InvalidArgument(f"data={fmt(data)} must contain records in {{0, 1}}")
        c = int(arr.sum())
        if c > self.n:
            raise InvalidArgument(f"data={fmt(data)} has count {c} > n={self.n}")
        return c

    def cdf_numerators(self, data: Sequence[int]) -> list[int]:
        """``[F_c(0), …, F_c(n)]`` as exact integers (``F_c(n) = d``)."""
        c, k, n, d = self.count(data), self.k, self.n, self.denominator
        two_k, base = 2**k, 2**k + 1
        below = [two_k ** (c - z) * base ** (n - (c - z)) for z in range(c)]
        above = [d - two_k ** (z - c + 1) * base ** (n - 1 - (z - c)) for z in range(c, n)]
        return below + above + [d]

    def pmf(self, data: Sequence[int]) -> dict[int, float]:
        """Exact output distribution ``{z: (F_c(z) − F_c(z−1)) / d}`` over z ∈ {0..n}."""
        f, d = self.cdf_numerators(data), self.denominator
        return {z: (f[z] - (f[z - 1] if z else 0)) / d for z in range(self.n + 1)}

    def sample(self, data: Sequence[int], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, int64 of shape ``(size,)``, by exact integer inversion."""
        f = np.array(self.cdf_numerators(data), dtype=np.int64)
        n, gen = _check_size(size), _check_rng(rng)
        u = gen.integers(1, self.denominator + 1, size=n, dtype=np.int64)
        return np.searchsorted(f, u, side="left").astype(np.int64)
