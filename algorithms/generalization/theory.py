"""Constructions and closed forms from the paper's proofs (exact, no sampling).

* :func:`hard_distribution` — Lemma 23's distribution that defeats any threshold learner with a
  finite output set.
* :func:`geometric_mean_simulator` — Theorem 39's simulator ``∝ exp(E_{S′}[ln P[M(S′) = r]])``
  for a count-based mechanism on Bernoulli(p) data.
* :func:`theorem40_lower` — the proof's lower bound ``ε′ ≥ ½ ln(e^{Knε} − 1)``,
  ``K = √(ln(1/(15γ)))/(4√n)``, ``γ = 2√β`` (needs β < 1/900 and K ≤ 1/8).
* :func:`theorem30_size`, :func:`lemma36_alpha`, :func:`theorem21_alpha`,
  :func:`theorem39_epsilon` — the printed constants.

References
----------
Cummings et al., COLT 2016: Lemma 23, Theorems 21, 30, 39, 40, Lemma 36.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import binom

from dpcheck.errors import InvalidArgument

__all__ = [
    "count_failure_mass",
    "geometric_mean_simulator",
    "hard_distribution",
    "lemma36_alpha",
    "theorem21_alpha",
    "theorem30_size",
    "theorem39_epsilon",
    "theorem40_lower",
    "threshold_error",
]


def hard_distribution(outputs: Sequence[float], *, straddle: bool = False
                      ) -> tuple[float, float, float]:
    """Lemma 23: ``(y, z, target)`` with mass ½ on ``y`` and on ``z``, ``x_1 < y < z < x_2``
    between the two smallest output thresholds, target ``c = h_y`` (``c(y) = 1``, ``c(z) = 0``).
    ``straddle=True`` is the broken construction ``y < x_1 < z`` (for the mutant)."""
    xs = sorted(float(x) for x in outputs)
    if not xs:
        raise InvalidArgument("outputs=[] must name at least one output threshold")
    x1 = xs[0]
    x2 = xs[1] if len(xs) > 1 else x1 + 1.0
    if straddle:
        return x1 - 0.5, x1 + (x2 - x1) / 3, x1 - 0.5
    y, z = x1 + (x2 - x1) / 3, x1 + 2 * (x2 - x1) / 3
    return y, z, y


def threshold_error(h: float, y: float, z: float, target: float) -> float:
    """True error of ``h_h(u) = 1[u ≤ h]`` under mass ½ on ``y`` and ``z``, labels ``h_target``."""
    return 0.5 * ((y <= h) != (y <= target)) + 0.5 * ((z <= h) != (z <= target))


def geometric_mean_simulator(log_pmf_count: Callable[[np.ndarray], np.ndarray], n: int,
                             p: float) -> np.ndarray:
    """Theorem 39's simulator for a count-based mechanism: ``log_pmf_count(c)`` returns
    ``(n+1, |R|)`` log-probabilities for counts ``c = 0..n``; returns the simulator pmf."""
    c = np.arange(n + 1)
    w = binom.pmf(c, n, p)
    logs = log_pmf_count(c)
    g = w @ logs
    g -= g.max()
    q = np.exp(g)
    return q / q.sum()


def count_failure_mass(log_pmf: np.ndarray, log_q: np.ndarray, weights: np.ndarray,
                       epsilon: float) -> float:
    """``Σ_c w_c·1[max_r |ln P(r|c) − ln q(r)| > ε]`` (δ = 0 closeness failure, exact)."""
    e = np.max(np.abs(log_pmf - log_q[None, :]), axis=1)
    return float(weights[e > epsilon + 1e-12].sum())


def theorem40_lower(n: int, epsilon: float, beta: float) -> float | None:
    """The proof's bound ``½ ln(e^{Knε} − 1)`` or ``None`` where the proof does not apply."""
    gamma = 2 * math.sqrt(beta)
    if not 15 * gamma < 1:
        return None
    k = math.sqrt(math.log(1 / (15 * gamma))) / (4 * math.sqrt(n))
    if k > 1 / 8:
        return None
    x = k * n * epsilon
    return 0.5 * (x + math.log(-math.expm1(-x)))


def theorem30_size(size_h: int, epsilon: float, alpha: float, gamma: float,
                   constant: float = 6.0) -> int:
    """``n ≥ constant·(ln(2|H|) + ln(1/γ))³/(ε²α²)`` (6 printed; the proof's arithmetic 18)."""
    return math.ceil(constant * (math.log(2 * size_h) + math.log(1 / gamma)) ** 3
                     / (epsilon ** 2 * alpha ** 2))


def lemma36_alpha(n: int, epsilon: float, beta: float, delta: float) -> float:
    """``α = √((2/n) ln(2(2ε+1)/(β+δ)))``."""
    return math.sqrt(2 / n * math.log(2 * (2 * epsilon + 1) / (beta + delta)))


def theorem21_alpha(n: int, size_r: int, beta: float) -> float:
    """``α = √(ln(|R|/β)/(2n))``."""
    return math.sqrt(math.log(size_r / beta) / (2 * n))


def theorem39_epsilon(n: int, epsilon: float, size_r: int, beta: float) -> float:
    """``ε·√(2n ln(2|R|/β))``."""
    return epsilon * math.sqrt(2 * n * math.log(2 * size_r / beta))

