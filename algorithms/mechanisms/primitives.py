"""Vectorised reference samplers with exactly known privacy.

Every class follows the mechanism protocol used by the auditor:

``sample(data, size, rng) -> numpy.ndarray``
    ``size`` independent outputs of the mechanism on ``data`` stacked along axis 0, all randomness
    drawn from ``rng`` (a :class:`numpy.random.Generator`) with vectorised numpy calls (no Python
    loop per sample).

Mechanisms with a finite output support also provide ``pmf(data) -> dict[output, probability]``.
Each class is a frozen, validated dataclass with a ``true_epsilon`` property (the exact worst-case ε
over neighbouring datasets under the relation stated in its docstring) and a ``claim`` property
(the :class:`dpcheck.claims.PureDP` claim it is designed to satisfy).

References
----------
C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in private data
analysis", TCC 2006 (the Laplace mechanism).
A. Ghosh, T. Roughgarden, M. Sundararajan, "Universally utility-maximizing privacy mechanisms",
STOC 2009 (the two-sided geometric mechanism).
S. L. Warner, "Randomized response: a survey technique for eliminating evasive answer bias",
JASA 1965; P. Kairouz, S. Oh, P. Viswanath, "Extremal mechanisms for local differential
privacy", NeurIPS 2014 (k-ary randomized response).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpcheck.validation import fmt, check_epsilon, check_int
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument

__all__ = ["LaplaceSum", "GeometricSum", "RandomizedResponse", "bounded_sum"]


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(f"rng={fmt(rng)} must be a numpy.random.Generator")
    return rng


def _check_size(size: Any) -> int:
    return check_int(size, "size", minimum=0)


def _records(data: Any, *, integer: bool) -> np.ndarray:
    """``data`` as a 1-d numeric array; integer records if ``integer`` (bools are rejected)."""
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, (Sequence, np.ndarray)):
        raise InvalidArgument(f"data={fmt(data)} must be a sequence of records")
    arr = np.asarray(data)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64 if integer else float)
    kinds = "iu" if integer else "iuf"
    if arr.ndim != 1 or arr.dtype.kind not in kinds:
        what = "integer" if integer else "real"
        raise InvalidArgument(f"data={fmt(data)} must be a flat sequence of {what} records")
    if not integer and not np.isfinite(arr).all():
        raise InvalidArgument(f"data={fmt(data)} must contain finite records")
    return arr


def bounded_sum(data: Sequence[float], bound: float) -> float:
    """The exactly rounded ``Σ data`` after checking every record lies in ``[0, bound]``."""
    arr = _records(data, integer=False)
    if ((arr < 0) | (arr > bound)).any():
        raise InvalidArgument(f"data={fmt(data)} must contain records in [0, {bound!r}]")
    return math.fsum(arr.tolist())


@dataclass(frozen=True, slots=True)
class LaplaceSum:
    """The Laplace mechanism on a bounded sum: ``Σ data + Laplace(scale = sensitivity/ε)``.

    Records are reals in ``[0, sensitivity]``, so the sum has ℓ1-sensitivity ``sensitivity``
    under both add/remove-one and replace-one neighbours, and the mechanism is exactly ε-DP
    (``true_epsilon == epsilon``).

    Parameters
    ----------
    epsilon
        Finite, > 0.
    sensitivity
        Finite, > 0: the upper bound of every record.

    References
    ----------
    C. Dwork, F. McSherry, K. Nissim, A. Smith, TCC 2006, Proposition 1 / Example 1.
    """

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check_epsilon(self.sensitivity, "sensitivity"))

    @property
    def scale(self) -> float:
        """The Laplace scale ``sensitivity / epsilon``."""
        return self.sensitivity / self.epsilon

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε over add/remove and replace neighbours."""
        return self.epsilon

    @property
    def claim(self) -> PureDP:
        """The claim the mechanism is designed to satisfy."""
        return PureDP(self.epsilon)

    def true_sum(self, data: Sequence[float]) -> float:
        """The validated, exactly rounded ``Σ data``."""
        return bounded_sum(data, self.sensitivity)

    def sample(self, data: Sequence[float], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, float64 of shape ``(size,)``."""
        total = self.true_sum(data)
        n, gen = _check_size(size), _check_rng(rng)
        return total + gen.laplace(0.0, self.scale, size=n)


@dataclass(frozen=True, slots=True)
class GeometricSum:
    """The two-sided geometric mechanism on a count: ``Σ data + Z``, ``P[Z = z] ∝ e^{−ε|z|}``.

    Records are integers in {0, 1}; the count has sensitivity 1 under add/remove and replace
    neighbours, so the mechanism is exactly ε-DP (``true_epsilon == epsilon``).

    Parameters
    ----------
    epsilon
        Finite, > 0.

    References
    ----------
    A. Ghosh, T. Roughgarden, M. Sundararajan, STOC 2009, Definition 2.1.
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε over add/remove and replace neighbours."""
        return self.epsilon

    @property
    def claim(self) -> PureDP:
        """The claim the mechanism is designed to satisfy."""
        return PureDP(self.epsilon)

    def true_count(self, data: Sequence[int]) -> int:
        """The validated count ``Σ data``."""
        arr = _records(data, integer=True)
        if ((arr != 0) & (arr != 1)).any():
            raise InvalidArgument(f"data={fmt(data)} must contain records in {{0, 1}}")
        return int(arr.sum())

    def sample(self, data: Sequence[int], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, int64 of shape ``(size,)``.

        ``Z`` is the difference of two i.i.d. geometric variables with success probability
        ``1 − e^{−ε}``.
        """
        total = self.true_count(data)
        n, gen = _check_size(size), _check_rng(rng)
        p = -math.expm1(-self.epsilon)
        noise = gen.geometric(p, size=n) - gen.geometric(p, size=n)
        return (total + noise).astype(np.int64)

    def log_pmf(self, data: Sequence[int], values: ArrayLike) -> np.ndarray:
        """Exact ``ln P[M(data) = v]`` for an array of ``values`` (``-inf`` off the integers).

        ``ln((1 − a)/(1 + a)) − ε|v − Σ data|`` with ``a = e^{−ε}``.
        """
        total = self.true_count(data)
        try:
            v = np.asarray(values)
        except (TypeError, ValueError):
            raise InvalidArgument(f"values={fmt(values)} must be an array of numbers") from None
        if v.dtype.kind not in "iuf" or (v.dtype.kind == "f" and np.isnan(v).any()):
            raise InvalidArgument(f"values={fmt(values)} must be an array of numbers (no NaN)")
        log_norm = math.log(-math.expm1(-self.epsilon)) - math.log1p(math.exp(-self.epsilon))
        if v.dtype.kind in "iu":
            dist = np.abs(v.astype(np.int64) - total).astype(float)
        else:
            dist = np.abs(v - total)
        out = log_norm - self.epsilon * dist
        if v.dtype.kind == "f":
            out = np.where(v == np.round(v), out, -np.inf)
        return np.asarray(out, dtype=float)


@dataclass(frozen=True, slots=True)
class RandomizedResponse:
    """k-ary randomized response in the local model.

    The dataset is a single record ``[x]`` with ``x ∈ {0, …, k−1}``; neighbours are ``[x]`` and
    ``[x′]`` (replace-one). The output is ``x`` with probability ``e^ε / (e^ε + k − 1)`` and each
    other value with probability ``1 / (e^ε + k − 1)``; the mechanism is exactly ε-DP.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    k
        Number of categories, ≥ 2.

    References
    ----------
    S. L. Warner, JASA 1965; P. Kairouz, S. Oh, P. Viswanath, NeurIPS 2014, Section 4.
    """

    epsilon: float
    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "k", check_int(self.k, "k", minimum=2))

    @property
    def keep_probability(self) -> float:
        """``e^ε / (e^ε + k − 1)``, computed without overflow."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.epsilon))

    @property
    def other_probability(self) -> float:
        """``1 / (e^ε + k − 1)``: the probability of each value other than the input."""
        a = math.exp(-self.epsilon)
        return a / (1.0 + (self.k - 1) * a)

    @property
    def true_epsilon(self) -> float:
        """Exact worst-case ε over replace-one neighbours."""
        return self.epsilon

    @property
    def claim(self) -> PureDP:
        """The claim the mechanism is designed to satisfy."""
        return PureDP(self.epsilon)

    def record(self, data: Sequence[int]) -> int:
        """The validated single record of ``data``."""
        arr = _records(data, integer=True)
        if arr.shape != (1,) or not 0 <= int(arr[0]) < self.k:
            raise InvalidArgument(
                f"data={fmt(data)} must be exactly one record in {{0, ..., {self.k - 1}}}"
            )
        return int(arr[0])

    def pmf(self, data: Sequence[int]) -> dict[int, float]:
        """Exact output distribution ``{output: probability}`` over all k outputs."""
        x = self.record(data)
        keep, other = self.keep_probability, self.other_probability
        return {j: keep if j == x else other for j in range(self.k)}

    def sample(self, data: Sequence[int], size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, int64 of shape ``(size,)``."""
        x = self.record(data)
        n, gen = _check_size(size), _check_rng(rng)
        keep = gen.random(n) < self.keep_probability
        offset = gen.integers(1, self.k, size=n)
        return np.where(keep, x, (x + offset) % self.k).astype(np.int64)
