"""Explicit constants of seed 000: the paper's own and those derived from its proofs.

Where the paper states only ``O(·)`` the constants below are read off its proofs (marked
*derived*); they are what the property tests assert.

Decisions (notes ``shared/research/seed-000.md`` §6):

* log = ln throughout (§6.10). The paper writes log in Lemma 3.4, Theorem 3.6, Theorem 4.2 and
  Lemma 2.10, where the base only moves O(·) constants, and ln in Claim 3.2, Lemma 3.3 and
  Lemma 4.1, where it matters.
* One ε, two roles (§6.4): Algorithm 2's ``epsilon`` is both the sampling fraction and the
  relabel EM's ε. It is the paper's *internal* ε (Lemma 3.1 / Theorem 3.6 deliver
  (O(ε), O(δ))); the certified end-to-end ε is :func:`lemma31_epsilon` (≈ 30.6ε for small ε).
  No rescaling to a target ε and no amplification step is done.
* Ranges (§6.5): the theorems' "ε ≤ O(1)" is taken as the proofs' ``ε ≤ 1/3`` with ``εn ≥ 1``
  (Lemma 3.1's proof: ``⌈εn⌉/(n − ⌈εn⌉) ≤ 6ε``; Lemma 3.4's proof: ``|W|/|T| ≥ 1/(6ε)``) and
  Lemma 2.12/2.13's ``ε_p ≤ 1``. Every function checks its hypotheses and raises
  ``InvalidArgument`` naming the parameter.
* Neighbours (§6.15): substitution only; ``k`` and ``Δ = 1/|W|`` depend on ``n``, so add/remove
  neighbours are not analysed and nothing here applies to them.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.4 (Sauer), Lemma 2.9, Lemma 2.12, Lemma 2.13,
Lemma 3.1 (proof), Lemma 3.3, Claim 3.2, Claim 3.5, Theorem 3.6 (proof), Lemma 4.1; notes
§4.1 P8, §5.8, §6.4, §6.5, §6.10, §6.11, §6.15.
"""

from __future__ import annotations

import decimal
import math

from dpcheck.validation import (
    check_alpha,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
    check_real,
)
from dpcheck.errors import InvalidArgument

from .core import check_internal_epsilon

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


def _check_lemma31(n: int, epsilon: float, k: int) -> tuple[int, float, int]:
    """Lemma 3.1's hypotheses: ``ε ∈ (0, 1/3]``, ``n ≥ 2``, ``εn ≤ k < n``."""
    eps = check_internal_epsilon(epsilon, "Lemma 3.1")
    n = check_int(n, "n", minimum=2)
    k = check_int(k, "k", minimum=1)
    if k < eps * n - 1e-9:
        raise InvalidArgument(f"k={k} must be >= epsilon*n={eps * n!r} (Lemma 3.1: |T| >= εn)")
    if k >= n:
        raise InvalidArgument(f"k={k} must be < n={n} (Lemma 3.1: W nonempty)")
    return n, eps, k


def lemma31_epsilon(n: int, epsilon: float, k: int) -> float:
    """*Derived* ε of Lemma 3.1 (proof, last display with its constants kept):
    ``ln(e^ε + 4e²·k/(n − k))`` for a (1, δ)-DP base algorithm, ``k = ⌈εn⌉``.

    This is the certified end-to-end ε of Algorithm 2 run at internal ``epsilon`` (notes §6.4).
    The proof uses ``|T| ≥ εn`` (for ``|W|/|T| ≤ (1 − ε)/ε``) and ``k < n``, so any ``k`` with
    ``εn ≤ k < n`` is accepted; Algorithm 2 uses ``k = ⌈εn⌉``. The relabel EM's sensitivity is
    the two-sided ``Δ = 1/|W|``: the proof's "By symmetry" line should read
    ``q(T1∘W1, h) ≤ q(T2∘W2, h) + 1/|W1|`` (notes §6.11). Substitution neighbours (§6.15).

    Raises
    ------
    InvalidArgument
        If ``ε ∉ (0, 1/3]``, ``n < 2``, ``k < εn`` or ``k ≥ n``.
    """
    n, eps, k = _check_lemma31(n, epsilon, k)
    return math.log(math.exp(eps) + 4.0 * math.e ** 2 * k / (n - k))


def lemma31_delta(n: int, k: int, delta: float) -> float:
    """*Derived* δ of Lemma 3.1: ``4e·(k/n)·δ_A`` (``1 ≤ k < n``, ``δ_A ≥ 0``; a ``δ_A ≥ 1``
    handed on by Lemma 2.13 is vacuous but accepted)."""
    n = check_int(n, "n", minimum=2)
    k = check_int(k, "k", minimum=1)
    if k >= n:
        raise InvalidArgument(f"k={k} must be < n={n} (Lemma 3.1: W nonempty)")
    d = check_real("delta", delta)
    if not 0 <= d < math.inf:
        raise InvalidArgument(f"delta={delta!r} must be >= 0 and finite")
    return 4.0 * math.e * k / n * d


def claim35_delta(delta: float) -> float:
    """Claim 3.5's δ: ``4eδ`` (``δ ∈ [0, 1)``)."""
    return 4.0 * math.e * check_delta(delta)


def lemma213(epsilon: float, m: int, n: int, delta: float) -> tuple[float, float]:
    """Lemma 2.13: ``(6εm/n, exp(6εm/n)·(4m/n)·δ)``; requires ``ε ≤ 1``, ``n ≥ 2``,
    ``6εm/n ≤ 1`` (raises ``InvalidArgument`` naming the violated condition)."""
    eps = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=2)
    delta = check_delta(delta)
    if eps > 1:
        raise InvalidArgument(f"epsilon={eps!r} must be <= 1 (Lemma 2.13)")
    r = 6 * eps * m / n
    if r > 1 + 1e-12:
        raise InvalidArgument(f"6*epsilon*m/n={r!r} must be <= 1 (Lemma 2.13)")
    return r, math.exp(r) * 4 * m / n * delta


def lemma212_size(epsilon: float, m: int) -> int:
    """Lemma 2.12's input size ``⌈6εm⌉`` (then Lemma 2.13 gives ``(≤1, ≤ (2e/(3ε))δ)``);
    requires ``ε ≤ 1`` (Lemma 2.12, via Lemma 2.13).

    The Lemma 2.12 proof's "random generalization of T" means random *generation* (a
    with-replacement draw from T; notes §6.11)."""
    eps = check_epsilon(epsilon)
    if eps > 1:
        raise InvalidArgument(f"epsilon={eps!r} must be <= 1 (Lemma 2.12)")
    return math.ceil(6 * eps * check_int(m, "m", minimum=1) - 1e-9)


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

    ``epsilon`` is Algorithm 2's internal ε (notes §6.4); the returned ε is the certified one.

    Raises
    ------
    InvalidArgument
        If ``ε ∉ (0, 1/3]``, ``εn < 1``, ``n ≤ k``, ``ε_p ∉ (0, 1]``, ``k < 2`` or
        ``6ε_p m/k > 1`` (Lemma 2.13 at ``(ε_p, m, k)``); the message names ``pac_epsilon``
        and ``k``.
    """
    eps = check_internal_epsilon(epsilon, "Lemma 3.1")
    n = check_int(n, "n", minimum=2)
    if eps * n < 1 - 1e-9:
        raise InvalidArgument(f"epsilon*n={eps * n!r} must be >= 1 (Lemma 3.1)")
    k = math.ceil(eps * n - 1e-9)
    if k >= n:
        raise InvalidArgument(f"n={n} must exceed k=ceil(epsilon*n)={k} (Lemma 3.1)")
    ep = check_epsilon(pac_epsilon, "pac_epsilon")
    if ep > 1:
        raise InvalidArgument(f"pac_epsilon={ep!r} must be <= 1 (Lemma 2.13)")
    m = check_int(m, "m", minimum=1)
    if k < 2:
        raise InvalidArgument(f"k=ceil(epsilon*n)={k} must be >= 2 (Lemma 2.13)")
    r = 6 * ep * m / k
    if r > 1 + 1e-12:
        raise InvalidArgument(f"6*pac_epsilon*m/k={r!r} must be <= 1 (k=ceil(epsilon*n)={k}; "
                              "Lemmas 2.12 and 2.13)")
    _, delta_a = lemma213(ep, m, k, check_delta(pac_delta, "pac_delta"))
    return lemma31_epsilon(n, eps, k), lemma31_delta(n, k, delta_a)


def _check_lemma33(d: int, alpha: float, beta: float) -> tuple[int, float, float]:
    """Lemma 3.3's hypotheses: ``d ≥ 1`` an integer, ``α, β ∈ (0, 1)``."""
    return check_int(d, "d", minimum=1), check_alpha(alpha, "alpha"), check_alpha(beta, "beta")


def lemma33_size(d: int, alpha: float, beta: float) -> float:
    """Lemma 3.3's threshold ``(2d ln(2/α) + 2 ln(1/β))/α`` (``d ≥ 1``, ``α, β ∈ (0, 1)``)."""
    d, alpha, beta = _check_lemma33(d, alpha, beta)
    return (2 * d * math.log(2 / alpha) + 2 * math.log(1 / beta)) / alpha


def lemma33_holds(d: int, alpha: float, beta: float, n: float) -> bool:
    """``nα ≥ d ln(en/d) + ln(1/β)`` (Lemma 3.3's conclusion), exactly on the float inputs
    (60-digit decimal arithmetic: the slack is ~2e-6 as α → 1, notes §4.2 U3); ``n > 0`` finite."""
    d, alpha, beta = _check_lemma33(d, alpha, beta)
    nf = check_real("n", n)
    if not 0 < nf < math.inf:
        raise InvalidArgument(f"n={n!r} must be > 0 and finite")
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        nn, aa, bb = decimal.Decimal(nf), decimal.Decimal(alpha), decimal.Decimal(beta)
        rhs = d * (1 + (nn / d).ln()) + (1 / bb).ln()
        return bool(nn * aa >= rhs)


def sauer_bound(n: int, d: int) -> float:
    """Lemma 2.4: ``Π_C(n) ≤ (en/d)^d`` for integers ``n ≥ d = VC(C) ≥ 1``."""
    n, d = check_int(n, "n"), check_int(d, "d")
    if d < 1 or n < d:
        raise InvalidArgument(f"need n={n} >= d={d} >= 1 (Lemma 2.4)")
    return (math.e * n / d) ** d


def em_tail(sensitivity: float, epsilon: float, size: int, beta: float) -> float:
    """Lemma 2.9's utility gap ``(2Δ/ε) ln(|H|/β)`` (``Δ, ε > 0``, ``|H| ≥ 1``, ``β ∈ (0, 1]``).

    Claim 3.2 allocates β/3 to its event E2, so its tail is
    ``em_tail(1/|W|, ε, |H|, β/3)``, i.e. ``ln(3|H|/β)``; the paper's ``ln(|H|/β)`` there is a
    slip (notes §6.11). β is taken as given here.
    """
    delta_q = check_epsilon(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    size = check_int(size, "size", minimum=1)
    b = check_probability(beta, "beta")
    if b <= 0:
        raise InvalidArgument(f"beta={beta!r} must be > 0")
    return 2 * delta_q / eps * math.log(size / b)


def vote_rounds(alpha: float, epsilon: float) -> int:
    """Lemma 4.1: ``r = ⌈6 ln(4/α)/ε⌉``."""
    a = check_probability(alpha, "alpha")
    if not 0 < a < 1:
        raise InvalidArgument(f"alpha={alpha!r} must be in (0, 1)")
    return math.ceil(6 * math.log(4 / a) / check_epsilon(epsilon) - 1e-9)


def prediction_rounds(alpha: float) -> int:
    """Theorem 4.2's proof: ``r = ⌈6 ln(4/α)⌉`` (Lemma 4.1 at privacy 1)."""
    return vote_rounds(alpha, 1.0)
