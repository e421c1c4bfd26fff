"""Algorithm 1 (generic perfectly generalizing agnostic learner) and its simulator (Lemma 29).

Labelled examples live on a finite support ``Z = X × {0,1}`` indexed ``z = 2·(x−1) + y`` for
``x ∈ {1..m}``; a hypothesis class is a 0/1 prediction matrix ``pred[h, x]``. A sample is an
array of support indices. Algorithm 1 outputs ``h`` with probability
``∝ exp(−λ·err(S_L, h))``, ``λ = √n·ε / √(2 ln(2|H|/β))``; the Lemma 29 simulator replaces the
empirical error by the true error under ``D_L``. The randomness enters after the deterministic
error computation, so sampling is one vectorised inverse-CDF draw.

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, COLT 2016: Algorithm 1, Lemma 29,
Theorem 30, Corollary 31.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import logsumexp

from dpcheck.validation import check_epsilon, check_int
from dpcheck.errors import InvalidArgument

__all__ = [
    "GenericPGLearner",
    "coefficient",
    "interval_predictions",
    "labelled_loss",
    "noisy_threshold_distribution",
    "threshold_predictions",
]


def threshold_predictions(m: int) -> np.ndarray:
    """Thresholds ``h_t(x) = 1[x ≤ t]`` on ``{1..m}``, ``t = 0..m`` (``h_0`` all-zero)."""
    m = check_int(m, "m", minimum=1)
    x = np.arange(1, m + 1)
    return (x[None, :] <= np.arange(m + 1)[:, None]).astype(np.int64)


def interval_predictions(m: int) -> np.ndarray:
    """Distinct labelings of ``{1..m}`` by intervals ``1[a ≤ x ≤ b]`` plus the empty one
    (Corollary 31's ``H′``: ``m(m+1)/2 + 1`` hypotheses)."""
    m = check_int(m, "m", minimum=1)
    x = np.arange(1, m + 1)
    rows = [np.zeros(m, dtype=np.int64)]
    rows += [((a <= x) & (x <= b)).astype(np.int64) for a in x for b in x if a <= b]
    return np.array(rows)


def labelled_loss(pred: np.ndarray) -> np.ndarray:
    """``loss[h, z] = 1[pred[h, x] ≠ y]`` with ``z = 2(x−1) + y``."""
    pred = np.asarray(pred, dtype=np.int64)
    loss = np.empty((pred.shape[0], 2 * pred.shape[1]))
    loss[:, 0::2] = pred != 0
    loss[:, 1::2] = pred != 1
    return loss


def noisy_threshold_distribution(m: int, t_star: int, eta: float,
                                 marginal: np.ndarray | None = None) -> np.ndarray:
    """``D_L`` on ``Z``: ``x ~ marginal`` (uniform by default), ``y = h_{t*}(x)`` flipped with
    probability ``eta``."""
    px = np.full(m, 1.0 / m) if marginal is None else np.asarray(marginal, dtype=float)
    clean = (np.arange(1, m + 1) <= t_star).astype(int)
    w = np.empty(2 * m)
    w[0::2] = px * np.where(clean == 0, 1 - eta, eta)
    w[1::2] = px * np.where(clean == 1, 1 - eta, eta)
    return w / w.sum()


def coefficient(n: int, epsilon: float, beta: float, size_h: int) -> float:
    """``λ = √n·ε / √(2 ln(2|H|/β))`` (Algorithm 1)."""
    return math.sqrt(n) * epsilon / math.sqrt(2 * math.log(2 * size_h / beta))


@dataclass(frozen=True, eq=False)
class GenericPGLearner:
    """Algorithm 1 ``𝒜(β, ε, ·, H)`` over the loss matrix ``loss[h, z]``.

    ``variant`` selects a deliberately broken coefficient for mutants: ``"n"`` uses ``n``
    instead of ``√n``; ``"no_sqrt_n"`` drops ``√n``; ``"erm"`` multiplies λ by 10⁶ (a
    deterministic empirical risk minimiser, not PG).
    """

    beta: float
    epsilon: float
    loss: np.ndarray
    variant: str = "reference"
    _k: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if not 0 < self.beta < 1:
            raise InvalidArgument(f"beta={self.beta!r} must be in (0, 1)")
        object.__setattr__(self, "loss", np.asarray(self.loss, dtype=float))
        object.__setattr__(self, "_k", self.loss.shape[1])

    @property
    def size_h(self) -> int:
        """``|H|``."""
        return int(self.loss.shape[0])

    def lam(self, n: int) -> float:
        """The exponential-mechanism coefficient for sample size ``n``."""
        lam = coefficient(n, self.epsilon, self.beta, self.size_h)
        if self.variant == "n":
            return lam * math.sqrt(n)
        if self.variant == "no_sqrt_n":
            return lam / math.sqrt(n)
        if self.variant == "erm":
            return lam * 1e6
        return lam

    def log_probs_counts(self, counts: np.ndarray) -> np.ndarray:
        """Log output pmfs for count vectors ``counts`` (shape ``(N, |Z|)`` → ``(N, |H|)``)."""
        counts = np.atleast_2d(np.asarray(counts, dtype=float))
        n = counts.sum(axis=1, keepdims=True)
        err = counts @ self.loss.T / n
        logits = -np.array([self.lam(int(k)) for k in n.ravel()])[:, None] * err
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def counts(self, data: Any) -> np.ndarray:
        """Count vector of a sample of support indices."""
        return np.bincount(np.asarray(data, dtype=np.int64).ravel(), minlength=self._k)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output pmf on a sample."""
        p = np.exp(self.log_probs_counts(self.counts(data))[0])
        return {h: float(v) for h, v in enumerate(p)}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` hypotheses (indices) drawn from the exact pmf (one vectorised draw)."""
        p = np.exp(self.log_probs_counts(self.counts(data))[0])
        return np.minimum(np.searchsorted(np.cumsum(p), rng.random(size) * p.sum()),
                          self.size_h - 1)

    def simulator(self, weights: np.ndarray, n: int) -> dict[int, float]:
        """Lemma 29's simulator: ``∝ exp(−λ·err_D(h))`` with the same λ (true errors)."""
        logits = -self.lam(n) * (self.loss @ np.asarray(weights, dtype=float))
        p = np.exp(logits - logsumexp(logits))
        return {h: float(v) for h, v in enumerate(p)}

    def sample_counts(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One hypothesis per count vector (vectorised over rows)."""
        p = np.exp(self.log_probs_counts(counts))
        u = rng.random(p.shape[0])[:, None]
        return np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), self.size_h - 1)
