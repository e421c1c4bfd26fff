"""Claims: what a mechanism promises, as frozen, validated value objects.

Every claim dpcheck can test lives here, so a new claim type starts in this file:

* privacy on neighbouring datasets — :class:`PureDP` (ε-DP) and :class:`ApproxDP` ((ε, δ)-DP),
  certified by :func:`dpcheck.audit` (each claim type has one certifier, see
  :mod:`dpcheck.core.certify`);
* closeness of two output distributions — :class:`Closeness` (``J1 ≈_{ε,δ} J2``), checked by
  :func:`dpcheck.audit_closeness`;
* generalization — :class:`PerfectGeneralization` and :class:`RobustGeneralization`, checked by
  :func:`dpcheck.check_perfect_generalization` and :func:`dpcheck.check_robust_generalization`.

Every claim satisfies the :class:`Claim` protocol: ``epsilon``, ``delta``, ``describe()`` (a
short human-readable form) and ``to_dict()`` (a JSON-safe form with a ``"kind"``).

References
----------
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Definition 2.4.
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive Learning with Robust
Generalization Guarantees", COLT 2016 (seed 001): Definitions 5, 6 and 8.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_delta, check_epsilon, check_real, fmt

__all__ = [
    "Claim",
    "PureDP",
    "ApproxDP",
    "Closeness",
    "PerfectGeneralization",
    "RobustGeneralization",
    "check_beta",
]

#: ε used for the wrapped audit when a closeness claim has ε = 0: ``e^ε`` rounds to 1, so the
#: audit's test ``p_lo − e^ε q_hi > δ`` is exactly the ε = 0 test (``ApproxDP`` requires ε > 0).
TINY_EPSILON = 1e-300


@runtime_checkable
class Claim(Protocol):
    """What every claim offers: its ε and δ, a short description and a JSON-safe form."""

    @property
    def epsilon(self) -> float: ...

    @property
    def delta(self) -> float: ...

    def describe(self) -> str: ...

    def to_dict(self) -> dict[str, object]: ...


@dataclass(frozen=True, slots=True)
class PureDP:
    """ε-differential privacy: ``P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S]`` for all events S.

    Parameters
    ----------
    epsilon
        Finite, > 0.
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def delta(self) -> float:
        """Pure DP is approximate DP with δ = 0."""
        return 0.0

    def holds_for(self, p: float, q: float) -> bool:
        """Whether event probabilities ``p = P[M(D) ∈ S]``, ``q = P[M(D′) ∈ S]`` satisfy the claim."""
        return p <= math.exp(self.epsilon) * q

    def describe(self) -> str:
        """Short human-readable form, e.g. ``1.0-DP``."""
        return f"{self.epsilon:g}-DP"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "pure", "epsilon": self.epsilon, "delta": 0.0}

    def as_closeness(self) -> Closeness:
        """The claim on the output distributions of one neighbouring pair: (ε, 0)-close."""
        return Closeness(self.epsilon, 0.0)


@dataclass(frozen=True, slots=True)
class ApproxDP:
    """(ε, δ)-differential privacy: ``P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S] + δ`` for all events S.

    ``ApproxDP(0.0, δ)`` is the total-variation claim ``TV(M(D), M(D′)) ≤ δ`` (the
    hockey-stick divergence at ε = 0); the auditor treats it like any other (ε, δ) claim.

    Parameters
    ----------
    epsilon
        Finite, ≥ 0.
    delta
        In [0, 1).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_approx_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def holds_for(self, p: float, q: float) -> bool:
        """Whether event probabilities ``p``, ``q`` satisfy the claim."""
        return p <= math.exp(self.epsilon) * q + self.delta

    def describe(self) -> str:
        """Short human-readable form, e.g. ``(1, 1e-05)-DP``."""
        return f"({self.epsilon:g}, {self.delta:g})-DP"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "approx", "epsilon": self.epsilon, "delta": self.delta}

    def as_closeness(self) -> Closeness:
        """The claim on the output distributions of one neighbouring pair: (ε, δ)-close."""
        return Closeness(self.epsilon, self.delta)


def _check_approx_epsilon(value: object) -> float:
    """ε of an approximate claim: finite and ≥ 0 (0 is total variation; -0.0 becomes 0.0)."""
    eps = check_real("epsilon", value)
    if eps == 0.0:
        return 0.0
    if eps < 0:
        raise InvalidArgument(f"epsilon={fmt(value)} must be >= 0")
    return check_epsilon(value)



def _check_finite_epsilon(value: Any) -> float:
    """ε of a closeness or generalization claim: finite and ≥ 0."""
    eps = check_real("epsilon", value)
    if not (eps >= 0 and math.isfinite(eps)):
        raise InvalidArgument(f"epsilon={fmt(value)} must be finite and >= 0")
    return eps


def check_beta(value: Any, name: str = "beta") -> float:
    """β ∈ [0, 1) (seed 001, Definition 8): the same range as δ."""
    return check_delta(value, name)


@dataclass(frozen=True, slots=True)
class Closeness:
    """The claim "``J1 ≈_{ε,δ} J2``" (Cummings et al., Definition 6).

    Parameters
    ----------
    epsilon
        ε ≥ 0 (finite). ε = 0 with δ = 0 means identical distributions; ε = 0 alone bounds the
        total-variation distance by δ.
    delta
        δ in [0, 1).
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_finite_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def describe(self) -> str:
        """E.g. ``(0.5, 0.01)-close``."""
        return f"({self.epsilon:g}, {self.delta:g})-close"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "closeness", "epsilon": self.epsilon, "delta": self.delta}

    def as_closeness(self) -> Closeness:
        """The claim itself."""
        return self

    def as_dp(self) -> ApproxDP:
        """The equivalent claim on the pair (0, 1) of the wrapped mechanism."""
        return ApproxDP(max(self.epsilon, TINY_EPSILON), self.delta)

    @staticmethod
    def of(claim: Any) -> Closeness:
        """``claim`` as a closeness claim: a :class:`Closeness`, or a DP claim's (ε, δ)."""
        convert = getattr(claim, "as_closeness", None)
        if not callable(convert) or isinstance(claim, type):
            raise InvalidArgument(
                f"claim={fmt(claim)} must be a dpcheck.Closeness (or PureDP/ApproxDP)")
        return convert()


@dataclass(frozen=True, slots=True)
class PerfectGeneralization:
    """The claim "M is (β, ε, δ)-perfectly generalizing" (Definition 8): β ∈ [0, 1), ε ≥ 0
    finite, δ ∈ [0, 1)."""

    beta: float
    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "beta", check_beta(self.beta))
        object.__setattr__(self, "epsilon", Closeness(self.epsilon, self.delta).epsilon)
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def closeness(self) -> Closeness:
        """The per-sample closeness requirement (ε, δ)."""
        return Closeness(self.epsilon, self.delta)

    def describe(self) -> str:
        """E.g. ``(0.1, 0.5, 0)-PG``."""
        return f"({self.beta:g}, {self.epsilon:g}, {self.delta:g})-PG"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "perfect_generalization", "beta": self.beta,
                "epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class RobustGeneralization:
    """The claim "M is (ε, δ)-robustly generalizing" (Definition 5): ε ≥ 0, δ ∈ [0, 1)."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_finite_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    def describe(self) -> str:
        """E.g. ``(0.1, 0.05)-RG``."""
        return f"({self.epsilon:g}, {self.delta:g})-RG"

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"kind": "robust_generalization", "epsilon": self.epsilon, "delta": self.delta}
