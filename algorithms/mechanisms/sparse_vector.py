"""The sparse vector technique (SVT): the six variants analysed by Lyu, Su and Li (PVLDB 2017).

SVT answers a sequence of queries with one bit each — is the noisy answer above a noisy
threshold? — and pays privacy only for the (at most ``c``) "above" answers. Lyu et al. show that
of six published variants only their Alg. 1 and Dwork–Roth's Alg. 2 are ε-DP; this module
implements all six, exactly as in their Figure 1, as vectorised samplers.

The data is the **vector of query answers** ``q = (q_1, …, q_n)`` on the private dataset; every
query has sensitivity ``Δ``, so neighbouring datasets give answer vectors at ℓ∞ distance ≤ Δ
(for ``monotone=True``: all coordinates move in the same direction). ``T`` is the public
threshold, ``c`` the cutoff (number of ⊤ answers after which the algorithm halts) and
``ε = ε1 + ε2`` the budget (ε1 for the threshold noise ρ, ε2 for the query noises ν_i).

===  ====================  ================  ====================  ==============  =========
Alg  origin                ρ                 ν_i                   output on ⊤     halts
===  ====================  ================  ====================  ==============  =========
1    Lyu et al.            Lap(Δ/ε1)         Lap(2cΔ/ε2)           ⊤               after c ⊤
2    Dwork & Roth 2014     Lap(cΔ/ε1), re-   Lap(2cΔ/ε2)           ⊤               after c ⊤
                           drawn after ⊤
3    Roth 2011             Lap(Δ/ε1)         Lap(cΔ/ε2)            q_i + ν_i       after c ⊤
4    Lee & Clifton 2014    Lap(Δ/ε1), ε1=ε/4 Lap(Δ/ε2)             ⊤               after c ⊤
5    Stoddard et al. 2014  Lap(Δ/ε1)         none                  ⊤               never
6    Chen et al. 2015      Lap(Δ/ε1)         Lap(Δ/ε2)             ⊤               never
===  ====================  ================  ====================  ==============  =========

ε1 = ε/2 except in Alg. 4 (ε/4); ``epsilon1=`` overrides the split (Lyu et al. §4.2 recommend
ε1 : ε2 = 1 : (2c)^{2/3}, see :func:`optimal_epsilon1`). With ``monotone=True`` Alg. 1 uses
ν_i ~ Lap(cΔ/ε2). Query ``i`` is answered ⊤ iff ``q_i + ν_i ≥ T + ρ``.

**Output encoding** (one encoding for every variant). ``sample`` returns, per run, the *flags*
``a_i`` for i = 1..n: ``1`` = ⊤ (above), ``0`` = ⊥ (below), ``-1`` = not answered (the run had
already halted after c ⊤). Variants 1, 2, 4, 5, 6 return the flags as ``int8`` of shape
``(size, n)``. Alg. 3 releases numbers, so it returns ``float64`` of shape ``(size, 2n)``:
the released values in columns ``0..n-1`` (``q_i + ν_i`` where ``a_i = 1``, ``+inf`` where
``a_i ≠ 1``) followed by the flags in columns ``n..2n-1``. Why this layout: a sentinel *inside*
the value range (DP-Sniper's −1000/−2000, or 0 and −1) collides with noisy values of positive
density, so a single float vector cannot tell "⊥" from "released −1000"; ``+inf`` cannot be
produced by noise, and with one infinite sign only the row sum never becomes NaN. Every
threshold or interval event on a value column with finite ends, e.g. ``value_i ≤ t``,
then contains *exactly* the runs with a ⊤ at query i released at most t — the events on which
Alg. 3 leaks (see :meth:`SparseVector.epsilon_bound`). Values come first so that an auditor
which projects only the first coordinates sees every released value; the flags are redundant
given the values (finite ⇔ ⊤, and "not answered" ⇔ after the c-th ⊤) and are kept for
readability and for row-pattern atoms.

References
----------
M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
PVLDB 10(6), 2017: Figure 1 (Algorithms 1–6), Theorems 1–5, §4.2 (budget allocation).
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Algorithm 2
(Sparse). A. Roth, lecture notes 2011 (Alg. 3). J. Lee, C. Clifton, KDD 2014 (Alg. 4).
B. Stoddard, Y. Chen, A. Machanavajjhala, 2014 (Alg. 5). R. Chen, Q. Xiao, Y. Zhang, J. Xu,
CCS 2015 (Alg. 6).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.validation import fmt, check_epsilon, check_int, check_real
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument

__all__ = ["SparseVector", "optimal_epsilon1", "TOP", "BOTTOM", "HALTED", "VARIANTS"]

#: Flag values of the output encoding.
TOP, BOTTOM, HALTED = 1, 0, -1
#: Variant number → origin, as attributed by Lyu et al.
VARIANTS: dict[int, str] = {
    1: "Lyu, Su, Li 2017 (proposed)",
    2: "Dwork & Roth 2014",
    3: "Roth 2011",
    4: "Lee & Clifton 2014",
    5: "Stoddard et al. 2014",
    6: "Chen et al. 2015",
}
_HALTING = frozenset({1, 2, 3, 4})


def optimal_epsilon1(epsilon: float, cutoff: int, monotone: bool = False) -> float:
    """Lyu et al.'s budget split for Alg. 1: ``ε1 : ε2 = 1 : (2c)^{2/3}`` (``c^{2/3}`` if monotone).

    It minimises the variance ``2(Δ/ε1)² + 2(kcΔ/ε2)²`` of ``ν − ρ`` (k = 2, or 1 for monotone
    queries) subject to ``ε1 + ε2 = ε``.

    References
    ----------
    M. Lyu, D. Su, N. Li, PVLDB 10(6), 2017, §4.2.
    """
    eps = check_epsilon(epsilon)
    c = check_int(cutoff, "cutoff", minimum=1)
    ratio = (c if monotone else 2 * c) ** (2.0 / 3.0)
    return eps / (1.0 + ratio)


@dataclass(frozen=True, slots=True)
class SparseVector:
    """One of the six SVT variants of Lyu, Su and Li (2017), as a vectorised sampler.

    ``sample(q, size, rng)`` runs the variant ``size`` times on the query-answer vector ``q``
    and returns the encoded answers (module docstring: flags 1 = ⊤, 0 = ⊥, −1 = not answered;
    Alg. 3 prepends the released values, ``+inf`` where nothing is released).

    Parameters
    ----------
    epsilon
        The advertised privacy budget ε (finite, > 0).
    threshold
        The public threshold T (finite real).
    cutoff
        c, the number of ⊤ answers after which variants 1–4 halt (int ≥ 1). Must be ``None``
        for variants 5 and 6, which never halt.
    variant
        Lyu et al.'s algorithm number, 1–6.
    sensitivity
        Δ, the sensitivity of every query (finite, > 0).
    monotone
        Variant 1 only: the queries are monotone (on neighbouring datasets all answers move in
        the same direction), so ν_i ~ Lap(cΔ/ε2) suffices.
    epsilon1
        The threshold budget ε1 in (0, ε); ``None`` for the variant's own split (ε/4 for
        Alg. 4, ε/2 otherwise).

    Notes
    -----
    Dwork–Roth's (ε, δ) version of Alg. 2 (threshold Lap(σ), query noise Lap(2σ) with
    σ = √(32 c ln(1/δ))/ε) is ``SparseVector(2cΔ/σ, T, c, variant=2, sensitivity=Δ)``. With
    a custom ``epsilon1``, Alg. 2 draws every threshold from Lap(cΔ/ε1) and the query noise
    from Lap(2cΔ/ε2) (Lyu et al.'s split ε1 = ε2 makes the labels irrelevant). A "below the
    threshold is costly" use (answers ⊤ when ``q_i ≤ T`` noisily) is obtained by negating the
    answers and the threshold. Privacy: see :meth:`epsilon_bound`.

    References
    ----------
    M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
    PVLDB 10(6), 2017, Figure 1, Algorithms 1–6.
    """

    epsilon: float
    threshold: float
    cutoff: int | None
    variant: int = 1
    sensitivity: float = 1.0
    monotone: bool = False
    epsilon1: float | None = None

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        object.__setattr__(self, "epsilon", eps)
        if isinstance(self.variant, (bool, np.bool_)) or not isinstance(
                self.variant, numbers.Integral) or int(self.variant) not in VARIANTS:
            raise InvalidArgument(f"variant={fmt(self.variant)} must be one of 1, 2, 3, 4, 5, 6")
        variant = int(self.variant)
        object.__setattr__(self, "variant", variant)
        threshold = check_real("threshold", self.threshold)
        if math.isinf(threshold):
            raise InvalidArgument(f"threshold={fmt(self.threshold)} must be finite")
        object.__setattr__(self, "threshold", threshold)
        if variant in _HALTING:
            if self.cutoff is None:
                raise InvalidArgument(f"cutoff=None must be an integer >= 1 for variant {variant}")
            object.__setattr__(self, "cutoff", check_int(self.cutoff, "cutoff", minimum=1))
        elif self.cutoff is not None:
            raise InvalidArgument(f"cutoff={fmt(self.cutoff)} must be None for variant "
                                  f"{variant} (Alg. {variant} never halts)")
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        if not isinstance(self.monotone, (bool, np.bool_)):
            raise InvalidArgument(f"monotone={fmt(self.monotone)} must be True or False")
        object.__setattr__(self, "monotone", bool(self.monotone))
        if self.monotone and variant != 1:
            raise InvalidArgument(f"monotone=True must only be used with variant 1, "
                                  f"not variant {variant}")
        if self.epsilon1 is not None:
            e1 = check_real("epsilon1", self.epsilon1)
            if not 0.0 < e1 < eps:
                raise InvalidArgument(f"epsilon1={fmt(self.epsilon1)} must be in (0, {eps!r})")
            object.__setattr__(self, "epsilon1", e1)

    # -- parameters ------------------------------------------------------------------------
    @property
    def eps1(self) -> float:
        """ε1, the budget of the threshold noise."""
        if self.epsilon1 is not None:
            return self.epsilon1
        return self.epsilon / 4.0 if self.variant == 4 else self.epsilon / 2.0

    @property
    def eps2(self) -> float:
        """ε2 = ε − ε1, the budget of the query noises (unused by Alg. 5)."""
        return self.epsilon - self.eps1

    @property
    def c(self) -> int:
        """The cutoff as an int (variants 5 and 6: 0, meaning no cutoff)."""
        return 0 if self.cutoff is None else int(self.cutoff)

    @property
    def halts(self) -> bool:
        """Whether the variant stops after c ⊤ answers (variants 1–4)."""
        return self.variant in _HALTING

    @property
    def numeric(self) -> bool:
        """Whether ⊤ answers release the noisy query value (Alg. 3)."""
        return self.variant == 3

    @property
    def threshold_scale(self) -> float:
        """Laplace scale of ρ: ``cΔ/ε1`` for Alg. 2, ``Δ/ε1`` otherwise."""
        mult = self.c if self.variant == 2 else 1
        return mult * self.sensitivity / self.eps1

    @property
    def query_scale(self) -> float:
        """Laplace scale of every ν_i (0.0 for Alg. 5, which adds no query noise)."""
        v, delta = self.variant, self.sensitivity
        if v in (1, 2):
            return (1 if self.monotone else 2) * self.c * delta / self.eps2
        if v == 3:
            return self.c * delta / self.eps2
        if v == 5:
            return 0.0
        return delta / self.eps2

    @property
    def claim(self) -> PureDP:
        """The claim the variant is advertised with: ε-DP."""
        return PureDP(self.epsilon)

    def epsilon_bound(self, n_queries: int) -> float:
        """Smallest proven ε for ``n_queries`` queries (ℓ∞-Δ neighbours; monotone if set).

        The minimum of two arguments, with a = Δ/(query scale):

        * *threshold shift* (Lyu et al., proof of Thm. 1): shift ρ by Δ; ⊥ answers are then
          free and each of the ≤ c ⊤ answers costs 2a (a if monotone): ``ε1 + 2ca``
          (Alg. 2: c independent segments, ``c(Δ/b_ρ + 2a)``). It does not apply to Alg. 3,
          whose released value pins ρ ≤ v − T, nor to 5/6, which have no cutoff;
        * *composition*: given the data-independent ρ, the run is post-processing of the n
          Laplace releases q_i + ν_i: ``n·a``.

        Values (default split): Alg. 1, 2: ε (an upper bound; c ≤ n). Alg. 3: ``nε2/c``,
        attained: on q vs q + Δ, every output in which all n queries are answered (the c-th ⊤
        at query n) with released values ≤ min(q) has density ratio exactly e^{nε2/c}, as for
        ρ ≤ min(v) − T every factor sits in its Laplace tail. Alg. 4: ``(1+6c)ε/4``; Alg. 6:
        ``nε2``. Both are suprema, approached but never attained, by outputs that answer ⊥ on
        k answers far above T (forcing ρ up) and ⊤ on the rest, far below T, which drives every
        factor into its tail. Alg. 6 needs
        k ≈ n/2; Alg. 4 needs k > c + ε1/ε2, so the value is exact only for n ≥ 2c + 1 and is
        an upper bound otherwise. Alg. 5: ``inf`` for n ≥ 2, because pattern ⊥⊤ is impossible
        on (1, 1) but has positive probability on (0, 2). Lyu et al. call Algs. 3 and 6 ∞-DP:
        that is the limit n → ∞.

        References
        ----------
        M. Lyu, D. Su, N. Li, PVLDB 10(6), 2017, Theorems 1–5 (Alg. 4: ((1+6c)/4)ε).
        """
        n = check_int(n_queries, "n_queries", minimum=1)
        if self.variant == 5:
            return math.inf if n >= 2 else self.eps1
        a = self.sensitivity / self.query_scale
        composition = n * a
        per_top = a if self.monotone else 2.0 * a
        if self.variant == 2:
            shift = self.c * (self.sensitivity / self.threshold_scale + per_top)
        elif self.variant in (1, 4):
            shift = self.eps1 + min(self.c, n) * per_top
        else:  # 3 and 6: no threshold-shift proof
            shift = math.inf
        return min(shift, composition)

    # -- sampling --------------------------------------------------------------------------
    def answers(self, data: Any) -> NDArray[np.float64]:
        """The validated query-answer vector ``data`` as a 1-d float array (length ≥ 1)."""
        if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, (Sequence, np.ndarray)):
            raise InvalidArgument(f"data={fmt(data)} must be a sequence of query answers")
        arr = np.asarray(data)
        if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
            raise InvalidArgument(
                f"data={fmt(data)} must be a non-empty flat sequence of real query answers")
        out = arr.astype(np.float64)
        if not np.isfinite(out).all():
            raise InvalidArgument(f"data={fmt(data)} must contain finite query answers")
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        """``size`` independent runs on the answers ``data`` (encoding: module docstring).

        All noise is drawn at once — ρ as a ``(size, 1)`` column (Alg. 2: ``(size, min(c, n))``
        thresholds, the k-th used after k ⊤ answers), ν as a ``(size, n)`` matrix — and the
        cutoff is applied through the cumulative count of ⊤ along the query axis.
        """
        q = self.answers(data)
        n = q.size
        size = check_int(size, "size", minimum=0)
        if not isinstance(rng, np.random.Generator):
            raise InvalidArgument(f"rng={fmt(rng)} must be a numpy.random.Generator")
        if self.variant == 2:
            flags, noisy = self._sample_redraw(q, size, rng)
        else:
            rho = rng.laplace(0.0, self.threshold_scale, size=(size, 1))
            if self.variant == 5:
                noisy = np.broadcast_to(q, (size, n))
            else:
                noisy = q + rng.laplace(0.0, self.query_scale, size=(size, n))
            above = noisy >= self.threshold + rho
            if self.halts:
                count_dtype = np.int16 if n < 2**15 else np.int64  # int16 is ~6x faster
                before = np.cumsum(above, axis=1, dtype=count_dtype) - above  # ⊤ before i
                flags = np.where(before < self.c, above, HALTED).astype(np.int8)
            else:
                flags = above.astype(np.int8)
        if not self.numeric:
            return flags
        values = np.where(flags == TOP, noisy, np.inf)
        return np.concatenate([values, flags.astype(np.float64)], axis=1)

    def _sample_redraw(self, q: NDArray[np.float64], size: int, rng: np.random.Generator
                       ) -> tuple[NDArray[np.int8], NDArray[np.float64]]:
        """Alg. 2: the threshold is re-drawn after every ⊤ (loop over queries, not samples)."""
        n, c = q.size, self.c
        k = min(c, n)
        rhos = rng.laplace(0.0, self.threshold_scale, size=(size, k))
        noisy = q + rng.laplace(0.0, self.query_scale, size=(size, n))
        flags = np.empty((size, n), dtype=np.int8)
        count = np.zeros(size, dtype=np.int64)
        rows = np.arange(size)
        for i in range(n):
            active = count < c
            rho = rhos[rows, np.minimum(count, k - 1)]
            above = noisy[:, i] >= self.threshold + rho
            flags[:, i] = np.where(active, above, HALTED)
            count += above & active
        return flags, noisy
