"""``PrivateCompare`` (proof of Lemma C.1) and ``PrivateMinError`` (Algorithm 2, Lemma 4.5).

Both release only bits / a dyadic estimate, computed in count form (notes §6.2): ``PrivateCompare``
returns 0 iff ``min_c E_t(c) + L ≤ n·τ`` with ``L ~ Lap(1/ε)``, which is the paper's
``min_c err^t_z(c) + Lap(1/(εn)) ≤ τ`` multiplied by ``n``. ``PrivateMinError`` runs a binary search
on ``[0, 1]`` with ``T = ⌈log₂(2/α)⌉`` calls at ``ε/T`` each and returns ``l``.

**Erratum (notes §6.1).** The pseudocode of Algorithm 2 says "if PrivateCompare(…) = 1 then
r ← mid else l ← mid". Lemma C.1 (σ = 0 ⇒ η̃ ≥ η − α/2) and the proof of Lemma 4.5 ("If σ = 0,
then mid ≥ η − α/2. Thus [l_{k−1}, mid] ∩ … ≠ ∅"; σ = 1 keeps [mid, r_{k−1}]) need the opposite.
The reference follows the proof (``branches="proof"``: σ = 0 ⇒ r ← mid, σ = 1 ⇒ l ← mid); the
printed version is kept as ``branches="printed"`` for the erratum test (it returns 1 − 2^{−T}
whenever η is small). Privacy is unaffected by the branch direction.

Exact distributions: ``PrivateCompare`` is one Laplace CDF; ``PrivateMinError`` is a binary tree
of depth T whose edges are Laplace CDFs (2^T leaves, T ≤ 8 at the α used here).

References
----------
Li–Wang–Ye (seed 002): Lemma 2.5 (Laplace mechanism), Lemma C.1 and its proof, Algorithm 2,
Lemma 4.5 and its proof.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.mechanisms.primitives import _check_rng, _check_size
from dpcheck.validation import check_choice, check_epsilon, check_int, check_real
from dpcheck.errors import InvalidArgument

from .binomial import compare_rule
from .data import Users, as_users
from .scores import (ThresholdClass, errors_from_steps, mistakes, sparse_is_faster,
                     threshold_mistakes, threshold_steps)

__all__ = ["PrivateCompare", "PrivateMinError", "laplace_cdf", "min_error_rounds"]


def laplace_cdf(x: np.ndarray | float, scale: float) -> np.ndarray:
    """CDF of ``Lap(scale)`` (``x`` may be ``±inf``)."""
    z = np.asarray(x, dtype=float) / scale
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _check_alpha(alpha: Any) -> float:
    a = check_real("alpha", alpha)
    if not 0 < a < 1:
        raise InvalidArgument(f"alpha={alpha!r} must be in (0, 1)")
    return a


def _concepts(concepts: Any, domain: int) -> np.ndarray | ThresholdClass:
    if concepts is None:
        return ThresholdClass(domain)
    table = np.asarray(concepts)
    if table.ndim != 2 or table.shape[1] != domain or not np.isin(table, (0, 1)).all():
        raise InvalidArgument(f"concepts must be a (k, {domain}) 0/1 truth table")
    return table.astype(np.int8)


def min_error_rounds(alpha: float) -> int:
    """``T = ⌈log₂(2/α)⌉`` of Algorithm 2."""
    return max(1, math.ceil(math.log2(2.0 / alpha) - 1e-12))


class _MinCount:
    """``min_c E_t(c)`` on the first ``m'`` examples, cached per ``(m', t)``."""

    def __init__(self, users: Users, concepts: np.ndarray | ThresholdClass,
                 strict: bool = True, discard: str = "user") -> None:
        self.users, self.concepts, self.strict, self.cache = users, concepts, strict, {}
        self.discard = discard

    def __call__(self, mp: int, t: int) -> int:
        key = (mp, t)
        if key not in self.cache:
            if isinstance(self.concepts, ThresholdClass):  # once per m', then per t
                users = self.users.first(mp, self.discard)
                if not sparse_is_faster(users):               # dense mistake table
                    if ("mist", mp) not in self.cache:
                        self.cache[("mist", mp)] = threshold_mistakes(users)
                    mist = self.cache[("mist", mp)]
                    e = ((mist > t) if self.strict else (mist >= t)).sum(axis=0)
                else:                                         # per-user steps (large N)
                    if ("steps", mp) not in self.cache:
                        self.cache[("steps", mp)] = threshold_steps(users)
                    e = errors_from_steps(self.cache[("steps", mp)], users.domain, t,
                                          strict=self.strict)
            else:                                             # mistakes once per m'
                if ("mist", mp) not in self.cache:
                    self.cache[("mist", mp)] = mistakes(self.users.first(mp, self.discard),
                                                        self.concepts)
                mist = self.cache[("mist", mp)]
                e = ((mist > t) if self.strict else (mist >= t)).sum(axis=0)
            self.cache[key] = int(e.min()) if e.size else 0
        return self.cache[key]


@dataclass(frozen=True)
class PrivateCompare:
    """Is ``η`` above the guess ``η̃``? An ε-DP bit (algorithm 𝖠 in the proof of Lemma C.1).

    Parameters
    ----------
    epsilon
        Privacy parameter (> 0).
    eta
        The guess ``η̃ ∈ [0, 1]`` (public).
    alpha
        Accuracy parameter in (0, 1); sets ``m' = min(m, ⌊1/α²⌋)``, ``t`` and ``τ``.
    m, domain
        Examples per user and ``N`` (``X = {1..N}``).
    concepts
        (k, N) truth table of ``C``; None: the thresholds of §5.
    noise_scale
        Multiplier of the Laplace scale ``1/ε`` (1 in the reference; bug B2 uses ``1/m``).
    strict
        ``E_t`` counts users with more than ``t`` mistakes (False: "≥ t", bug B11).
    discard
        ``"user"`` (reference: the first ``m'`` examples of each user) or ``"record"`` (mutant:
        the first ``n·m'`` examples of the flattened list, :meth:`Users.first`).

    Returns 0 ("η is not above η̃ + α/2") iff ``min_c E_t(c) + Lap(1/ε) ≤ n·τ``, else 1.
    """

    epsilon: float
    eta: float
    alpha: float
    m: int
    domain: int
    concepts: Any = None
    noise_scale: float = 1.0
    strict: bool = True
    discard: str = "user"
    _table: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        eta = check_real("eta", self.eta)
        if not 0 <= eta <= 1:
            raise InvalidArgument(f"eta={self.eta!r} must be in [0, 1]")
        object.__setattr__(self, "eta", eta)
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1))
        object.__setattr__(self, "discard", check_choice(self.discard, "discard", ("user", "record")))
        object.__setattr__(self, "_table", _concepts(self.concepts, self.domain))

    @property
    def rule(self) -> tuple[int, int, float]:
        """``(m', t, τ)``: data-independent (notes §4.4 item 5)."""
        return compare_rule(self.m, self.eta, self.alpha)

    def margin(self, data: Any) -> float:
        """``n·τ − min_c E_t(c)``: σ = 0 iff the Laplace noise is ≤ this."""
        users = as_users(data, self.m, self.domain)
        mp, t, tau = self.rule
        return users.n * tau - _MinCount(users, self._table, self.strict, self.discard)(mp, t)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact ``{0: P[σ=0], 1: P[σ=1]}``."""
        p0 = float(laplace_cdf(self.margin(data), self.noise_scale / self.epsilon))
        return {0: p0, 1: 1.0 - p0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent bits (int64)."""
        margin = self.margin(data)
        noise = _check_rng(rng).laplace(0.0, self.noise_scale / self.epsilon, _check_size(size))
        return (noise > margin).astype(np.int64)


@dataclass(frozen=True)
class PrivateMinError:
    """ε-DP estimate ``η̂ ∈ {j/2^T}`` of the optimal error ``η = inf_c err_D(c)`` (Algorithm 2).

    Parameters
    ----------
    epsilon, alpha
        Privacy and accuracy; ``T = ⌈log₂(2/α)⌉`` calls of :class:`PrivateCompare` at ``ε/T``
        each, with accuracy ``alpha`` (the paper passes its own α to every call).
    m, domain, concepts
        As in :class:`PrivateCompare`.
    branches
        ``"proof"`` (reference: σ = 0 ⇒ r ← mid) or ``"printed"`` (the pseudocode: σ = 1 ⇒ r ← mid).
    call_epsilon
        Budget of each call; None: ``ε/T`` (bug B3 passes ``ε``).
    noise_scale
        Multiplier of every call's Laplace scale (bug B2).
    discard
        As in :class:`PrivateCompare` (``"record"``: the per-user discard applied per record).
    rounds_offset
        Mutant (off by one): the per-call budget is ``ε/(T + rounds_offset)`` while ``T`` calls
        are made (``-1``: ``ε/(T−1)``, a ``T/(T−1)`` overspend).

    Returns ``l`` after T rounds (a float ``j/2^T``, exact in binary).
    """

    epsilon: float
    alpha: float
    m: int
    domain: int
    concepts: Any = None
    branches: str = "proof"
    call_epsilon: float | None = None
    noise_scale: float = 1.0
    discard: str = "user"
    rounds_offset: int = 0
    _table: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1))
        object.__setattr__(self, "branches",
                           check_choice(self.branches, "branches", ("proof", "printed")))
        object.__setattr__(self, "_table", _concepts(self.concepts, self.domain))

    @property
    def rounds(self) -> int:
        """``T``."""
        return min_error_rounds(self.alpha)

    @property
    def per_call(self) -> float:
        """Budget of each ``PrivateCompare`` call (ε/T)."""
        if self.call_epsilon is not None:
            return self.call_epsilon
        return self.epsilon / max(self.rounds + self.rounds_offset, 1)

    @property
    def ledger(self) -> list[float]:
        """The ε of every release (notes §4.4 item 6): T calls."""
        return [self.per_call] * self.rounds

    def _margins(self, users: Users) -> dict[int, float]:
        """``n·τ(mid) − min_c E_{t(mid)}(c)`` for every reachable ``mid = j/2^T`` (by ``j``)."""
        T, count = self.rounds, _MinCount(users, self._table, discard=self.discard)
        out: dict[int, float] = {}
        for j in range(1, 1 << T):
            mp, t, tau = compare_rule(self.m, j / (1 << T), self.alpha)
            out[j] = users.n * tau - count(mp, t)
        return out

    def _down(self, sigma0: Any) -> Any:
        """Whether the search keeps ``[l, mid]`` given ``σ = 0``."""
        return sigma0 if self.branches == "proof" else ~sigma0 if isinstance(
            sigma0, np.ndarray) else not sigma0

    def pmf(self, data: Any) -> dict[float, float]:
        """Exact distribution of ``η̂`` over the ``2^T`` leaves."""
        users = as_users(data, self.m, self.domain)
        T = self.rounds
        margins = self._margins(users)
        b = self.noise_scale / self.per_call
        p0 = {j: float(laplace_cdf(v, b)) for j, v in margins.items()}
        probs = {(0, 1 << T): 1.0}
        for _ in range(T):
            nxt: dict[tuple[int, int], float] = {}
            for (lo, hi), w in probs.items():
                mid = (lo + hi) // 2
                p_down = p0[mid] if self.branches == "proof" else 1.0 - p0[mid]
                nxt[(lo, mid)] = nxt.get((lo, mid), 0.0) + w * p_down
                nxt[(mid, hi)] = nxt.get((mid, hi), 0.0) + w * (1.0 - p_down)
            probs = nxt
        out: dict[float, float] = {}
        for (lo, _), w in probs.items():
            out[lo / (1 << T)] = out.get(lo / (1 << T), 0.0) + w
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent runs of the binary search (float64 ``η̂``)."""
        users = as_users(data, self.m, self.domain)
        n, gen = _check_size(size), _check_rng(rng)
        T, count = self.rounds, _MinCount(users, self._table, discard=self.discard)
        margins: dict[int, float] = {}

        def margin(j: int) -> float:
            """:meth:`_margins`'s entry for ``mid = j/2^T``, computed only for visited mids
            (a run visits T of the 2^T − 1; same values, same draws)."""
            if j not in margins:
                mp, t, tau = compare_rule(self.m, j / (1 << T), self.alpha)
                margins[j] = users.n * tau - count(mp, t)
            return margins[j]

        lo = np.zeros(n, dtype=np.int64)
        hi = np.full(n, 1 << T, dtype=np.int64)
        b = self.noise_scale / self.per_call
        for _ in range(T):
            mid = (lo + hi) // 2
            uniq, inv = np.unique(mid, return_inverse=True)
            thr = np.array([margin(int(j)) for j in uniq])[inv]
            sigma0 = gen.laplace(0.0, b, n) <= thr
            down = self._down(sigma0)
            hi = np.where(down, mid, hi)
            lo = np.where(down, lo, mid)
        return lo / float(1 << T)
