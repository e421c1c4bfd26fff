"""Private selection: exponential mechanism and report-noisy-max (subsampling lives in
:mod:`algorithms.mechanisms.subsampling`).

:class:`ExponentialMechanism` and :class:`ReportNoisyMax` take a score vector as data (or
anything a ``score`` callable maps to one); :class:`ScoreNeighbours` is their neighbour relation
(ℓ∞ distance ≤ Δ). Samplers follow :mod:`algorithms.mechanisms.primitives`
(``sample(data, size, rng)``; scores computed once per call, only the noise vectorised).

References
----------
F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007, Theorem 6.
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Claim 3.9
(report-noisy-max) and Theorem 3.10 (exponential mechanism).
Z. Ding, D. Kifer, T. Steinke et al., "The permute-and-flip mechanism is identical to
report-noisy-max with exponential noise", arXiv:2105.07260, 2021.
B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018, Theorems 8 and 9.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.mechanisms.primitives import _check_rng, _check_size
from dpcheck.validation import fmt, check_choice, check_epsilon, check_int, check_real
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument
from dpcheck.neighbours import Relation

__all__ = ["ScoreNeighbours", "ExponentialMechanism", "ReportNoisyMax"]

_CHUNK = 1 << 22  # max random draws held in memory at once


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgument(f"{name}={fmt(value)} must be True or False")
    return bool(value)


def _check_score(score: Any) -> None:
    if score is not None and not callable(score):
        raise InvalidArgument(f"score={fmt(score)} must be callable or None")


def _vector(values: Any, name: str) -> np.ndarray:
    """``values`` as a non-empty 1-d float array of finite scores."""
    def bad() -> InvalidArgument:   # the message (a repr of values) only when it is raised
        return InvalidArgument(f"{name}={fmt(values)} must be a non-empty flat sequence of "
                               "finite real scores")
    if isinstance(values, (str, bytes, Mapping)):
        raise bad()
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise bad() from None
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
        raise bad()
    arr = arr.astype(float)
    if not np.isfinite(arr).all():
        raise bad()
    return arr


def _scores(score: Callable[[Any], Any] | None, data: Any, k: int | None = None) -> np.ndarray:
    out = _vector(data, "data") if score is None else _vector(score(data), "score(data)")
    if k is not None and out.size != k:
        raise InvalidArgument(f"data={fmt(data)} gives {out.size} scores, expected k={k}")
    return out


@dataclass(frozen=True, slots=True)
class ScoreNeighbours(Relation):
    """Neighbouring score / query-answer vectors: equal length, ``0 < ‖d − d′‖∞ ≤ sensitivity``.

    Every score moves by at most Δ, in any direction, when one record changes (e.g. the error
    counts of a finite hypothesis class under replace-one).

    Parameters
    ----------
    sensitivity
        Δ, finite, > 0.
    monotone
        Also require all coordinates to move the same way (counting queries, add/remove).
    low, high
        All scores of both vectors lie in ``[low, high]`` (default unbounded).
    """

    sensitivity: float = 1.0
    monotone: bool = False
    low: float = -math.inf
    high: float = math.inf

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "monotone", _check_bool(self.monotone, "monotone"))
        low, high = check_real("low", self.low), check_real("high", self.high)
        if not low < high:
            raise InvalidArgument(f"low={self.low!r} must be < high={self.high!r}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def name(self) -> str:
        return f"scores(linf<={self.sensitivity:g}{', monotone' if self.monotone else ''})"

    def describe(self) -> str:
        mono = ", all in the same direction" if self.monotone else ""
        return (f"score vectors of equal length in [{self.low:g}, {self.high:g}] whose entries "
                f"differ by at most {self.sensitivity:g}{mono}")

    def to_dict(self) -> dict[str, object]:
        return {"kind": "scores", "sensitivity": self.sensitivity, "monotone": self.monotone,
                "low": self.low, "high": self.high}

    def _why_not(self, d: Any, d_prime: Any) -> str | None:
        a, b = _vector(d, "d"), _vector(d_prime, "d_prime")
        if a.size != b.size:
            return f"lengths {a.size} and {b.size} differ"
        if min(a.min(), b.min()) < self.low or max(a.max(), b.max()) > self.high:
            return f"a score lies outside [{self.low:g}, {self.high:g}]"
        diff = b - a
        gap = float(np.abs(diff).max())
        if gap == 0 or gap > self.sensitivity:
            return f"the largest score change is {gap:g}, must be in (0, {self.sensitivity:g}]"
        if self.monotone and (diff > 0).any() and (diff < 0).any():
            return "scores move in both directions, monotone neighbours move in one"
        return None

    def neighbours(self, d: Any, *, domain: Any = None) -> Iterator[np.ndarray]:
        """The corner neighbours ``d + Δ·v``, ``v ∈ {−1, 0, 1}^k \\ {0}``, within the bounds.

        Every neighbour is a convex combination of these. ``domain`` must be None; k ≤ 12.
        """
        vec = _vector(d, "d")
        if domain is not None or vec.size > 12:
            raise InvalidArgument(f"neighbours need domain=None and at most 12 scores, got "
                                  f"domain={fmt(domain)} and {vec.size} scores")
        for v in itertools.product((-1.0, 0.0, 1.0), repeat=vec.size):
            step = np.array(v)
            if step.any() and not (self.monotone and step.min() < 0 < step.max()):
                out = vec + self.sensitivity * step
                if out.min() >= self.low and out.max() <= self.high:
                    yield out

    def random_neighbour(
        self, d: Any, *, rng: np.random.Generator, domain: Any = None
    ) -> np.ndarray:
        """One of :meth:`neighbours`, uniformly (one ``rng.integers`` draw)."""
        gen, options = _check_rng(rng), list(self.neighbours(d, domain=domain))
        if not options:
            raise InvalidArgument(f"d={fmt(d)} has no neighbours within the bounds")
        return options[int(gen.integers(len(options)))]


@dataclass(frozen=True, slots=True)
class ExponentialMechanism:
    """The exponential mechanism over k candidates: ``P[i] ∝ exp(c·score_i)``, c = ε/(2Δ).

    With ``monotone=True``, c = ε/Δ. Probabilities are normalised in log space after shifting
    the scores by their maximum, so scores of any magnitude (±1e6) give exact, finite values;
    ``sample`` inverts the exact CDF (O(size·log k), no size×k noise matrix).

    Privacy: ε-DP under :class:`ScoreNeighbours` ``(Δ)`` (``monotone=True``: under monotone
    neighbours; otherwise it is only 2ε-DP). ``true_epsilon = ε`` is the supremum over
    unbounded scores, approached as the raised candidate's probability tends to 0, never
    attained; for scores in a range of width R it is ``ε − ln(1 + (e^ε − 1)/(1 + (k−1)e^{εR/2}))``
    (pair ``[low, high, …]`` vs ``[low + Δ, high − Δ, …]``).

    Parameters
    ----------
    epsilon, sensitivity
        Finite, > 0.
    score
        ``score(data) -> 1-d array`` of finite scores; None: ``data`` is the score vector.
    monotone
        Use c = ε/Δ.

    References
    ----------
    F. McSherry, K. Talwar, FOCS 2007, Theorem 6; C. Dwork, A. Roth, 2014, Theorem 3.10 and
    the remark on monotone utilities after it.
    """

    epsilon: float
    sensitivity: float = 1.0
    score: Callable[[Any], Any] | None = None
    monotone: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        _check_score(self.score)
        object.__setattr__(self, "monotone", _check_bool(self.monotone, "monotone"))

    @property
    def coefficient(self) -> float:
        """c = ε/(2Δ), or ε/Δ when monotone."""
        return self.epsilon / (self.sensitivity * (1.0 if self.monotone else 2.0))

    @property
    def true_epsilon(self) -> float:
        """ε, the exact supremum over neighbouring (unbounded) score vectors."""
        return self.epsilon

    @property
    def claim(self) -> PureDP:
        """The claim the mechanism is designed to satisfy."""
        return PureDP(self.epsilon)

    def log_probabilities(self, data: Any) -> np.ndarray:
        """``ln P[i]`` for every candidate (never NaN or +inf)."""
        s = _scores(self.score, data)
        a = self.coefficient * (s - s.max())  # ≤ 0 with max 0: no overflow, Z ∈ [1, k]
        return a - math.log(math.fsum(np.exp(a).tolist()))

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output distribution ``{index: probability}``."""
        return {i: float(p) for i, p in enumerate(np.exp(self.log_probabilities(data)))}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. candidate indices, int64 of shape ``(size,)``."""
        cdf = np.cumsum(np.exp(self.log_probabilities(data)))
        n, gen = _check_size(size), _check_rng(rng)
        idx = np.searchsorted(cdf, gen.random(n) * cdf[-1], side="right")
        return np.minimum(idx, cdf.size - 1).astype(np.int64)


@dataclass(frozen=True, slots=True)
class ReportNoisyMax:
    """Report-noisy-max: add i.i.d. noise of scale ``b = 2Δ/ε`` to every score, report the max.

    ``output="index"`` reports the arg-max (correct); ``output="value"`` the noisy maximum
    (the classic bug). Noise:

    * ``"laplace"``: Lap(b). Dwork–Roth Claim 3.9 uses Lap(Δ/ε) for *monotone* counting
      queries; DP-Sniper's ReportNoisyMax1 (Ding et al. 2018, Alg. 5) uses Lap(2/ε) — this
      class with Δ = 1 — which is ε-DP for scores moving in any direction (pass 2ε for Lap(Δ/ε)).
    * ``"exponential"``: Exp(scale b), identical to permute-and-flip at ε (Ding et al. 2021),
      hence ε-DP (DP-Sniper ReportNoisyMax2).
    * ``"gumbel"``: Gumbel(b); its arg-max is exactly the exponential mechanism at ε, Δ.

    ``true_epsilon`` over :class:`ScoreNeighbours` ``(Δ)``: for indices ε, the supremum
    (approached by ``[0, M, …]`` vs ``[Δ, M − Δ, …]`` as M → ∞ since every noise tail is
    exponential with rate ε/(2Δ); attained with exponential noise, e.g. ``[1]*5`` vs
    ``[0, 2, 2, 2, 2]``). For values: ``kε/2`` with Laplace noise (post-processing of a Lap(b)
    vector of ℓ1 sensitivity kΔ, attained by the all-shift pair on ``{max ≤ t}``, t ≤ min
    score; ``inf`` if ``k`` is None); ``inf`` with exponential noise (the support
    ``[max score, ∞)`` moves) and Gumbel noise (unbounded log-ratio of a shifted Gumbel).

    Parameters
    ----------
    epsilon, sensitivity
        Finite, > 0.
    noise
        ``"laplace"``, ``"exponential"`` or ``"gumbel"``.
    output
        ``"index"`` (int64) or ``"value"`` (float64).
    k
        Required number of scores (None: any).
    score
        ``score(data) -> 1-d array``; None: ``data`` is the score vector.

    References
    ----------
    C. Dwork, A. Roth, 2014, Claim 3.9; Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer,
    "Detecting violations of differential privacy", CCS 2018, Algorithms 5–8; Z. Ding et al.,
    arXiv:2105.07260, 2021, Theorem 1.
    """

    epsilon: float
    noise: str = "laplace"
    output: str = "index"
    sensitivity: float = 1.0
    k: int | None = None
    score: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        check_choice(self.noise, "noise", ("laplace", "exponential", "gumbel"))
        check_choice(self.output, "output", ("index", "value"))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))
        if self.k is not None:
            object.__setattr__(self, "k", check_int(self.k, "k", minimum=1))
        _check_score(self.score)

    @property
    def scale(self) -> float:
        """The noise scale 2Δ/ε."""
        return 2.0 * self.sensitivity / self.epsilon

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε over :class:`ScoreNeighbours` (a supremum for indices)."""
        if self.output == "index":
            return self.epsilon
        return self.k * self.epsilon / 2 if self.noise == "laplace" and self.k else math.inf

    @property
    def claim(self) -> PureDP:
        """The claim the mechanism is advertised with."""
        return PureDP(self.epsilon)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs of shape ``(size,)``: int64 indices or float64 values."""
        s = _scores(self.score, data, self.k)
        n, gen = _check_size(size), _check_rng(rng)
        draw = {"laplace": lambda shape: gen.laplace(0.0, self.scale, shape),
                "exponential": lambda shape: gen.exponential(self.scale, shape),
                "gumbel": lambda shape: gen.gumbel(0.0, self.scale, shape)}[self.noise]
        index = self.output == "index"
        out = np.empty(n, dtype=np.int64 if index else float)
        step = max(1, _CHUNK // s.size)
        for start in range(0, n, step):  # chunks of rows bound the memory
            noisy = s + draw((min(step, n - start), s.size))
            out[start : start + len(noisy)] = noisy.argmax(axis=1) if index else noisy.max(1)
        return out
