"""Binomial tails and the data-independent choices of ``t`` and ``s`` (paper 002, §4, App. C/D).

``upper(m, p, t) = Pr[Bin(m, p) > t]``; ``err^t_{D^m}(c) = upper(m, err_D(c), t)`` (notes M13).
The paper only says "there exists some t (s)" with a gap inequality; the decision (notes §6.3)
is the argmax of the gap over ``{0..m−1}``, ties to the smallest, with probabilities clamped to
``[0, 1]``. Every selector depends only on public values and already-private estimates, never on
the data (notes §4.4 item 5); each checks the paper's required gap and raises if it fails.

References
----------
Li–Wang–Ye (seed 002): Lemma 4.1 (binomial TV, K/700), proof of Lemma C.1 (gap √m·α/1400,
threshold offset √m·α/2800), proofs of Theorems 4.6 and 5.2 (gap √m·α/4200), Corollary D.1 and
proof of Lemma 5.1 (gap m·α/4200).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

__all__ = [
    "SelectionError",
    "compare_rule",
    "discard_m",
    "learner_t",
    "lemma41_k",
    "median_s",
    "select_gap",
    "tv_distance",
    "upper",
]


class SelectionError(ArithmeticError):
    """The selected ``t``/``s`` misses the gap the paper's lemma guarantees (never expected)."""


def _clamp(p: float) -> float:
    return min(1.0, max(0.0, float(p)))


@lru_cache(maxsize=65536)
def upper(m: int, p: float, t: int) -> float:
    """``Pr[Bin(m, p) > t]`` with ``p`` clamped to [0, 1]."""
    return float(stats.binom.sf(t, m, _clamp(p)))


@lru_cache(maxsize=4096)
def _tails(m: int, p: float) -> np.ndarray:
    return stats.binom.sf(np.arange(m), m, _clamp(p))


def tv_distance(m: int, p: float, q: float) -> float:
    """``d_TV(Bin(m, p), Bin(m, q))`` exactly (half the ℓ1 distance of the pmfs)."""
    k = np.arange(m + 1)
    return 0.5 * float(np.abs(stats.binom.pmf(k, m, _clamp(p)) - stats.binom.pmf(k, m, _clamp(q))).sum())


def lemma41_k(m: int, p: float, q: float) -> float:
    """``K = min(m|p−q|, √m|p−q|/√(p(1−p)), 1)`` of Lemma 4.1 (middle term ``+∞`` at p ∈ {0,1},
    notes §6.11)."""
    d = abs(p - q)
    v = p * (1 - p)
    mid = math.inf if v <= 0 else math.sqrt(m) * d / math.sqrt(v)
    return min(m * d, mid, 1.0)


def select_gap(m: int, p: float, q: float) -> tuple[int, float]:
    """``argmax_{t<m} Pr[Bin(m,q) > t] − Pr[Bin(m,p) > t]`` (smallest on ties) and the gap."""
    gaps = _tails(m, _clamp(q)) - _tails(m, _clamp(p))
    t = int(np.argmax(gaps))
    return t, float(gaps[t])


def discard_m(m: int, bound: float) -> int:
    """``min(m, ⌊bound⌋)``, at least 1: the paper's "discard the extra samples" (notes §6.5)."""
    return max(1, min(m, int(math.floor(bound + 1e-9))))


@lru_cache(maxsize=65536)
def compare_rule(m: int, eta: float, alpha: float) -> tuple[int, int, float]:
    """``(m', t, τ)`` of ``PrivateCompare`` (proof of Lemma C.1).

    ``m' = min(m, ⌊1/α²⌋)``; ``t`` with ``Pr[Bin(m', η̃) > t] + √m'·α/1400 ≤ Pr[Bin(m', η̃+α/2) > t]``;
    ``τ = Pr[Bin(m', η̃) > t] + √m'·α/2800``, clamped to ``≤ 1`` (notes §3.2: under add/remove the
    count statistic ``min_c E_t − nτ`` then has sensitivity ``max(τ, 1−τ) ≤ 1``).
    """
    mp = discard_m(m, 1.0 / alpha**2)
    t, gap = select_gap(mp, eta, eta + alpha / 2)
    need = math.sqrt(mp) * alpha / 1400
    if gap + 1e-15 < need and eta + alpha / 2 <= 1:
        raise SelectionError(f"PrivateCompare: gap {gap} < {need} at m'={mp}, eta={eta}")
    tau = min(1.0, upper(mp, eta, t) + math.sqrt(mp) * alpha / 2800)
    return mp, t, tau


@lru_cache(maxsize=65536)
def learner_t(m: int, eta_hat: float, alpha: float) -> int:
    """``t`` of Theorems 4.6/5.2: ``Pr[Bin(m, η̂+α/6) > t] + √m·α/4200 ≤ Pr[Bin(m, η̂+α/3) > t]``."""
    t, gap = select_gap(m, eta_hat + alpha / 6, eta_hat + alpha / 3)
    need = math.sqrt(m) * alpha / 4200
    if gap + 1e-15 < need and eta_hat + alpha / 3 <= 1:
        raise SelectionError(f"learner t: gap {gap} < {need} at m={m}, eta_hat={eta_hat}")
    return t


@lru_cache(maxsize=4096)
def median_s(m: int, a: float) -> tuple[int, int]:
    """``(m', s)`` of ``PrivateMedian`` (proof of Lemma 5.1, Corollary D.1).

    ``m' = min(m, ⌊1/a⌋)``; ``s`` with ``Pr[Bin(m', a/2) > s] + m'·a/4200 ≤ Pr[Bin(m', 2a/3) > s]``.
    """
    mp = discard_m(m, 1.0 / a)
    s, gap = select_gap(mp, a / 2, 2 * a / 3)
    need = mp * a / 4200
    if gap + 1e-15 < need:
        raise SelectionError(f"PrivateMedian: gap {gap} < {need} at m'={mp}, a={a}")
    return mp, s
