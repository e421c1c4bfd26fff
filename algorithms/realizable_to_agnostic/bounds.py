"""Explicit constants of seed 000: the paper's own and those derived from its proofs.

Where the paper states only ``O(·)`` the constants below are read off its proofs (marked
*derived*); they are what the property tests assert.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.4 (Sauer), Lemma 2.9, Lemma 2.12, Lemma 2.13,
Lemma 3.1 (proof), Lemma 3.3, Claim 3.5, Theorem 3.6 (proof), Lemma 4.1; notes §4.1 P8, §5.8.
"""

from __future__ import annotations

import decimal
import math

from dpcheck._validation import check_delta, check_epsilon, check_int, check_probability
from dpcheck.errors import InvalidArgument

__all__ = [
    "CLAIM35_EPSILON",
    "claim35_delta",
    "em_tail",
    "lemma31_delta",
    "lemma31_epsilon",
    "lemma33_holds",
    "lemma33_size",
    "lemma212_size",
    "lemma213",
    "prediction_rounds",
    "sauer_bound",
    "theorem36_bounds",
    "vote_rounds",
]

#: Claim 3.5: ``A_Auxiliary`` is ``(2 + 2 ln 2, 4eδ)``-DP with respect to ``U``.
CLAIM35_EPSILON = 2.0 + 2.0 * math.log(2.0)


def lemma31_epsilon(n: int, epsilon: float, k: int) -> float:
    """*Derived* ε of Lemma 3.1 (proof, last display with its constants kept):
    ``ln(e^ε + 4e²·k/(n − k))`` for a (1, δ)-DP base algorithm, ``k = ⌈εn⌉``."""
    return math.log(math.exp(epsilon) + 4.0 * math.e ** 2 * k / (n - k))


def lemma31_delta(n: int, k: int, delta: float) -> float:
    """*Derived* δ of Lemma 3.1: ``4e·(k/n)·δ_A``."""
    return 4.0 * math.e * k / n * delta


def claim35_delta(delta: float) -> float:
    """Claim 3.5's δ: ``4eδ``."""
    return 4.0 * math.e * delta


def lemma213(epsilon: float, m: int, n: int, delta: float) -> tuple[float, float]:
    """Lemma 2.13: ``(6εm/n, exp(6εm/n)·(4m/n)·δ)``; requires ``ε ≤ 1``, ``n ≥ 2``,
    ``6εm/n ≤ 1`` (raises ``InvalidArgument`` naming the violated condition)."""
    eps = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=2)
    if eps > 1:
        raise InvalidArgument(f"epsilon={eps!r} must be <= 1 (Lemma 2.13)")
    r = 6 * eps * m / n
    if r > 1 + 1e-12:
        raise InvalidArgument(f"6*epsilon*m/n={r!r} must be <= 1 (Lemma 2.13)")
    return r, math.exp(r) * 4 * m / n * delta


def lemma212_size(epsilon: float, m: int) -> int:
    """Lemma 2.12's input size ``⌈6εm⌉`` (then Lemma 2.13 gives ``(≤1, ≤ (2e/(3ε))δ)``)."""
    return math.ceil(6 * check_epsilon(epsilon) * check_int(m, "m", minimum=1) - 1e-9)


def theorem36_bounds(n: int, epsilon: float, m: int, pac_epsilon: float,
                     pac_delta: float) -> tuple[float, float]:
    """*Derived* explicit privacy of the Theorem 3.6 composite (the paper: "(O(ε), O(δ))").

    Derivation (notes §4.1 P8), following the proof of Theorem 3.6 step by step:

    1. ``k = ⌈εn⌉`` is ``A_emp``'s input size. Lemma 2.13 with ``A_PAC`` (ε_p, δ_p)-DP,
       ``ε_p ≤ 1``, ``k ≥ 2`` and ``6ε_p m/k ≤ 1`` (Lemma 2.12's ``k ≥ 6ε_p m``) makes
       ``A_emp`` ``(ε_A, δ_A) = (6ε_p m/k, e^{ε_A}·(4m/k)·δ_p)``-DP, and ``ε_A ≤ 1``.
    2. Hence ``A_emp`` is (1, δ_A)-DP and Lemma 3.1 (its proof's constants,
       :func:`lemma31_epsilon`, :func:`lemma31_delta`) gives
       ``ε = ln(e^ε + 4e²·k/(n − k))`` and ``δ = 4e·(k/n)·δ_A = 16e·e^{ε_A}·(m/n)·δ_p``.

    The paper's remark that the constant factors can be removed by subsampling is not used.

    Raises
    ------
    InvalidArgument
        If ``εn < 1``, ``n ≤ k`` or Lemma 2.13's hypotheses fail at ``(ε_p, m, k)``.
    """
    eps = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=2)
    if eps * n < 1 - 1e-9:
        raise InvalidArgument(f"epsilon*n={eps * n!r} must be >= 1 (Lemma 3.1)")
    k = math.ceil(eps * n - 1e-9)
    if k >= n:
        raise InvalidArgument(f"n={n} must exceed k=ceil(epsilon*n)={k} (Lemma 3.1)")
    _, delta_a = lemma213(pac_epsilon, m, k, check_delta(pac_delta, "pac_delta"))
    return lemma31_epsilon(n, eps, k), lemma31_delta(n, k, delta_a)


def lemma33_size(d: int, alpha: float, beta: float) -> float:
    """Lemma 3.3's threshold ``(2d ln(2/α) + 2 ln(1/β))/α``."""
    return (2 * d * math.log(2 / alpha) + 2 * math.log(1 / beta)) / alpha


def lemma33_holds(d: int, alpha: float, beta: float, n: float) -> bool:
    """``nα ≥ d ln(en/d) + ln(1/β)`` (Lemma 3.3's conclusion), exactly on the float inputs
    (60-digit decimal arithmetic: the slack is ~2e-6 as α → 1, notes §4.2 U3)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        nn, aa, bb = decimal.Decimal(n), decimal.Decimal(alpha), decimal.Decimal(beta)
        rhs = d * (1 + (nn / d).ln()) + (1 / bb).ln()
        return bool(nn * aa >= rhs)


def sauer_bound(n: int, d: int) -> float:
    """Lemma 2.4: ``Π_C(n) ≤ (en/d)^d`` for ``n ≥ d = VC(C) ≥ 1``."""
    if d < 1 or n < d:
        raise InvalidArgument(f"need n={n} >= d={d} >= 1 (Lemma 2.4)")
    return (math.e * n / d) ** d


def em_tail(sensitivity: float, epsilon: float, size: int, beta: float) -> float:
    """Lemma 2.9's utility gap ``(2Δ/ε) ln(|H|/β)``."""
    return 2 * sensitivity / epsilon * math.log(size / check_probability(beta, "beta"))


def vote_rounds(alpha: float, epsilon: float) -> int:
    """Lemma 4.1: ``r = ⌈6 ln(4/α)/ε⌉``."""
    a = check_probability(alpha, "alpha")
    if not 0 < a < 1:
        raise InvalidArgument(f"alpha={alpha!r} must be in (0, 1)")
    return math.ceil(6 * math.log(4 / a) / check_epsilon(epsilon) - 1e-9)


def prediction_rounds(alpha: float) -> int:
    """Theorem 4.2's proof: ``r = ⌈6 ln(4/α)⌉`` (Lemma 4.1 at privacy 1)."""
    return vote_rounds(alpha, 1.0)
