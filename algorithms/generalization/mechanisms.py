"""Small mechanisms on ``{0,1}^n`` with exact output pmfs (Cummings et al., Section 5).

* :class:`Majority` — Lemma 37: output 1 iff more than ``⌊n/2⌋`` entries are 1 (deterministic).
* :class:`StrangeNormal` — Theorem 38: "Strange" (encoded 1) iff the *ordered* sample is
  ``(1,…,1,0,…,0)`` with ``⌊n/2⌋`` ones first, else "Normal" (0).
* :class:`LaplaceMajority` — Theorem 40: ``ŝ = s̄ + Lap(1/(nε))``, output 1 iff ``ŝ > 1/2``.

Datasets are 0/1 arrays of length n (order matters only for :class:`StrangeNormal`). All
samplers are vectorised; pmfs are mappings ``{0: P[0], 1: P[1]}``.

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive learning with robust
generalization guarantees", COLT 2016: Lemma 37, Theorem 38, Theorem 40.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_epsilon

__all__ = [
    "LaplaceMajority",
    "Majority",
    "StrangeNormal",
    "constant",
    "laplace_majority_log_pmf",
]


def _bits(data: Any) -> np.ndarray:
    return np.asarray(data, dtype=np.int64).ravel()


def _point(out: int, size: int) -> np.ndarray:
    return np.full(size, out, dtype=np.int64)


@dataclass(frozen=True)
class Majority:
    """Lemma 37's mechanism: 1 iff ``#ones > ⌊n/2⌋``."""

    def output(self, data: Any) -> int:
        """The deterministic output."""
        s = _bits(data)
        return int(s.sum() > len(s) // 2)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` copies of the output."""
        return _point(self.output(data), size)

    def pmf(self, data: Any) -> dict[int, float]:
        """Point mass."""
        o = self.output(data)
        return {o: 1.0, 1 - o: 0.0}


@dataclass(frozen=True)
class StrangeNormal:
    """Theorem 38's mechanism ("Strange" = 1, "Normal" = 0) on ordered 0/1 samples."""

    def output(self, data: Any) -> int:
        """1 iff ``s_1..s_⌊n/2⌋ = 1`` and ``s_⌊n/2⌋+1..s_n = 0``."""
        s = _bits(data)
        half = len(s) // 2
        return int(bool(np.all(s[:half] == 1) and np.all(s[half:] == 0)))

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` copies of the output."""
        return _point(self.output(data), size)

    def pmf(self, data: Any) -> dict[int, float]:
        """Point mass."""
        o = self.output(data)
        return {o: 1.0, 1 - o: 0.0}


def laplace_majority_log_pmf(c: np.ndarray, n: int, epsilon: float) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """``(log P[1 | c], log P[0 | c])`` for counts ``c`` of ones (log space, exact)."""
    x = epsilon * (np.asarray(c, dtype=float) - n / 2)      # ε(c − n/2) = (s̄ − 1/2)/b
    half = math.log(0.5)
    log1 = np.where(x <= 0, half + np.minimum(x, 0), np.log1p(-0.5 * np.exp(-np.abs(x))))
    log0 = np.where(x <= 0, np.log1p(-0.5 * np.exp(-np.abs(x))), half - np.maximum(x, 0))
    return log1, log0


@dataclass(frozen=True)
class LaplaceMajority:
    """Theorem 40's (ε, 0)-DP mechanism; ``scale`` overrides the noise scale ``1/(nε)`` (for
    broken variants)."""

    epsilon: float
    scale: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def _eff_eps(self, n: int) -> float:
        return self.epsilon if self.scale is None else 1.0 / (n * self.scale)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Vectorised: ``1[s̄ + Lap(b) > 1/2]``."""
        s = _bits(data)
        b = 1.0 / (len(s) * self._eff_eps(len(s)))
        return (s.mean() + rng.laplace(0.0, b, size) > 0.5).astype(np.int64)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact ``P[1] = ½e^{−ε(n/2−c)}`` (c ≤ n/2), ``1 − ½e^{−ε(c−n/2)}`` otherwise."""
        s = _bits(data)
        return self.pmf_count(int(s.sum()), len(s))

    def pmf_count(self, c: int, n: int) -> dict[int, float]:
        """The pmf from the count of ones."""
        l1, l0 = laplace_majority_log_pmf(np.array([c]), n, self._eff_eps(n))
        return {1: float(np.exp(l1[0])), 0: float(np.exp(l0[0]))}


def constant(output: int) -> dict[int, float]:
    """A deterministic simulator (pmf) on ``{0, 1}``, e.g. Theorem 38's ``SIM ≡ "Normal"``."""
    return {output: 1.0, 1 - output: 0.0}
