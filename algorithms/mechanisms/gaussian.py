"""The Gaussian mechanism: exact privacy curve, classic and analytic calibration, a sampler.

For a query of ℓ2-sensitivity Δ released with ``N(0, σ²)`` noise the worst pair of outputs is
``N(0, σ²)`` vs ``N(Δ, σ²)``, whose exact privacy curve (hockey-stick divergence) is

``δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``

(Balle & Wang 2018, Theorem 8). :func:`gaussian_delta` evaluates it in log space so that neither
``e^ε`` nor the difference of two tiny probabilities is ever formed; :func:`analytic_sigma` inverts
it in σ (the *analytic Gaussian mechanism*, Balle & Wang's Algorithm 1: the smallest σ with
``δ(ε) ≤ δ``) and :func:`gaussian_epsilon` in ε. :func:`classic_sigma` is the textbook calibration
``σ = Δ√(2 ln(1.25/δ))/ε``, proven only for ε < 1.

References
----------
B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical
Calibration and Optimal Denoising", ICML 2018, Theorem 8 and Algorithm 1.
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Theorem A.1
(the classic calibration, for ε ∈ (0, 1)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from dpcheck.validation import fmt, check_delta, check_epsilon, check_real
from dpcheck.errors import InvalidArgument

from .primitives import _check_rng, _check_size, bounded_sum

__all__ = ["classic_sigma", "analytic_sigma", "gaussian_delta", "gaussian_epsilon", "GaussianSum",
           "PoissonSubsampledGaussian"]

_RTOL = 4 * np.finfo(float).eps  # relative tolerance handed to brentq
_MAX_STEPS = 4096  # ulp steps allowed when snapping a root to the feasible side


def _check_nonneg(value: object, name: str) -> float:
    out = check_real(name, value)
    if not out >= 0 or math.isinf(out):
        raise InvalidArgument(f"{name}={fmt(value)} must be finite and >= 0")
    return out


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classic calibration ``σ = Δ √(2 ln(1.25/δ)) / ε``.

    Dwork & Roth prove (ε, δ)-DP with this σ only for ε < 1; the function accepts any ε > 0 so
    that misuse beyond that range can be studied (see ``algorithms.zoo.additive``).

    Parameters
    ----------
    epsilon
        Finite, > 0.
    delta
        In (0, 1).
    sensitivity
        The ℓ2-sensitivity Δ, finite, > 0.

    References
    ----------
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm. A.1.
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    sens = check_epsilon(sensitivity, "sensitivity")
    if dlt == 0.0:
        raise InvalidArgument(f"delta={fmt(delta)} must be > 0")
    return sens * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


def _delta(eps: float, sigma: float, sens: float) -> float:
    """Unvalidated :func:`gaussian_delta`."""
    a = sens / (2.0 * sigma) - eps * sigma / sens
    b = -sens / (2.0 * sigma) - eps * sigma / sens
    log_pa = float(log_ndtr(a))
    r = eps + float(log_ndtr(b)) - log_pa  # ln(e^ε Φ(b) / Φ(a)) ≤ 0
    return max(0.0, math.exp(log_pa) * -math.expm1(min(r, 0.0)))


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism with noise σ and sensitivity Δ.

    ``Φ(a) − e^ε Φ(b)`` with ``a = Δ/(2σ) − εσ/Δ``, ``b = −Δ/(2σ) − εσ/Δ``, evaluated as
    ``Φ(a)·(−expm1(ε + ln Φ(b) − ln Φ(a)))`` with ``scipy.special.log_ndtr``: accurate in relative
    terms down to δ ≈ 1e-300 and for ε up to several hundred.

    Parameters
    ----------
    epsilon
        ε ≥ 0 (ε = 0 gives the total-variation distance ``2Φ(Δ/(2σ)) − 1``).
    sigma
        Noise standard deviation, finite, > 0.
    sensitivity
        Δ, finite, > 0.

    References
    ----------
    B. Balle, Y.-X. Wang, ICML 2018, Theorem 8.
    """
    eps = _check_nonneg(epsilon, "epsilon")
    sig = check_epsilon(sigma, "sigma")
    sens = check_epsilon(sensitivity, "sensitivity")
    return _delta(eps, sig, sens)


def _snap(f: Callable[[float], float], x: float, target: float, up: bool) -> float:
    """Move ``x`` by ulps to the feasible point (``f ≤ target``) next to the boundary.

    ``f`` is non-increasing; ``up`` says the feasible side is above ``x``. Returns the feasible
    float closest to the infeasible side.
    """
    step = math.inf if up else -math.inf
    back = -step
    for _ in range(_MAX_STEPS):
        if f(x) <= target:
            break
        x = math.nextafter(x, step)
    for _ in range(_MAX_STEPS):
        nxt = math.nextafter(x, back)
        if nxt <= 0 or f(nxt) > target:
            break
        x = nxt
    return x


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest ε ≥ 0 with ``gaussian_delta(ε, σ, Δ) ≤ δ`` (``inf`` for δ = 0).

    Solved with ``scipy.optimize.brentq`` on the exact formula, then snapped by ulps so that the
    returned ε is feasible and its predecessor is not.

    Parameters
    ----------
    sigma
        Finite, > 0.
    delta
        In [0, 1).
    sensitivity
        Δ, finite, > 0.

    References
    ----------
    B. Balle, Y.-X. Wang, ICML 2018, Theorem 8.
    """
    sig = check_epsilon(sigma, "sigma")
    dlt = check_delta(delta)
    sens = check_epsilon(sensitivity, "sensitivity")
    if dlt == 0.0:
        return math.inf
    if _delta(0.0, sig, sens) <= dlt:
        return 0.0
    hi = 1.0
    while _delta(hi, sig, sens) > dlt:
        hi *= 2.0
    root = brentq(lambda e: _delta(e, sig, sens) - dlt, 0.0, hi, xtol=1e-300, rtol=_RTOL)
    return _snap(lambda e: _delta(e, sig, sens), float(root), dlt, up=True)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The analytic Gaussian calibration: the smallest σ with ``δ(ε; σ) ≤ δ``.

    δ(ε; σ) is continuous and strictly decreasing in σ, from 1 (σ → 0) to 0 (σ → ∞), so the
    root is unique; it is bracketed by halving/doubling from the classic σ, found with
    ``scipy.optimize.brentq`` (relative tolerance 4 ulp) and snapped by ulps so that
    ``δ(ε; σ) ≤ δ < δ(ε; prev(σ))``. This replaces Balle & Wang's bisection on their variable
    ``v`` by a root solve on the exact formula; the solution is the same σ.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    delta
        In (0, 1).
    sensitivity
        Δ, finite, > 0.

    References
    ----------
    B. Balle, Y.-X. Wang, ICML 2018, Algorithm 1 (analytic Gaussian mechanism) and Theorem 8.
    """
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    sens = check_epsilon(sensitivity, "sensitivity")
    if dlt == 0.0:
        raise InvalidArgument(f"delta={fmt(delta)} must be > 0")

    def f(s: float) -> float:
        return _delta(eps, s, sens)

    hi = classic_sigma(eps, dlt, sens)
    while f(hi) > dlt:
        hi *= 2.0
    lo = hi / 2.0
    while f(lo) <= dlt:
        lo /= 2.0
    root = brentq(lambda s: f(s) - dlt, lo, hi, xtol=1e-300, rtol=_RTOL)
    return _snap(f, float(root), dlt, up=True)


@dataclass(frozen=True, slots=True)
class GaussianSum:
    """The Gaussian mechanism on a bounded sum: ``Σ data + N(0, σ²)``.

    Records are reals in ``[0, sensitivity]``, so the sum moves by at most Δ between add/remove
    or replace neighbours, and ``d = [Δ]``, ``d′ = []`` realises the worst case exactly. The
    mechanism is (ε, δ)-DP iff ``δ ≥`` :meth:`delta_for` ``(ε)``.

    Parameters
    ----------
    sigma
        Noise standard deviation, finite, > 0.
    sensitivity
        Finite, > 0: the upper bound of every record.

    References
    ----------
    B. Balle, Y.-X. Wang, ICML 2018, Theorem 8 (exact privacy curve).
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_epsilon(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @classmethod
    def analytic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianSum:
        """Calibrated with :func:`analytic_sigma` (exactly (ε, δ)-DP)."""
        return cls(analytic_sigma(epsilon, delta, sensitivity), sensitivity)

    @classmethod
    def classic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianSum:
        """Calibrated with :func:`classic_sigma` (private for ε < 1; see its docstring)."""
        return cls(classic_sigma(epsilon, delta, sensitivity), sensitivity)

    def delta_for(self, epsilon: float) -> float:
        """Exact worst-case δ(ε), see :func:`gaussian_delta`."""
        return gaussian_delta(epsilon, self.sigma, self.sensitivity)

    def epsilon_for(self, delta: float) -> float:
        """Smallest ε with ``delta_for(ε) ≤ delta``, see :func:`gaussian_epsilon`."""
        return gaussian_epsilon(self.sigma, delta, self.sensitivity)

    def true_sum(self, data: Sequence[float]) -> float:
        """The validated, exactly rounded ``Σ data``."""
        return bounded_sum(data, self.sensitivity)

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        total = self.true_sum(data)
        n, gen = _check_size(size), _check_rng(rng)
        return total + gen.normal(0.0, self.sigma, size=n)


@dataclass(frozen=True, slots=True)
class PoissonSubsampledGaussian:
    """``Σ_{i ∈ S} x_i + N(0, σ²)``, each record kept in ``S`` independently with probability q.

    Used as ground truth with dp-accounting's privacy-loss distribution
    (tests/test_dp_accounting.py) and for the δ lower bound (tests/test_delta_lower.py). Records
    are reals (no clipping: the audited pairs use ``d = [1]``, ``d′ = []``).

    Parameters
    ----------
    q
        Sampling probability, in (0, 1].
    sigma
        Noise standard deviation, finite, > 0.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018;
    Y. Zhu, Y.-X. Wang, ICML 2019 (privacy-loss distributions of subsampled mechanisms).
    """

    q: float
    sigma: float

    def __post_init__(self) -> None:
        q = check_real("q", self.q)
        if not 0.0 < q <= 1.0:
            raise InvalidArgument(f"q={fmt(self.q)} must be in (0, 1]")
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "sigma", check_epsilon(self.sigma, "sigma"))

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        x = np.asarray(data, dtype=float)
        n, gen = _check_size(size), _check_rng(rng)
        kept = gen.random((n, x.size)) < self.q
        return np.asarray(kept @ x + gen.normal(0.0, self.sigma, n), dtype=np.float64)
