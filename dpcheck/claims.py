"""Privacy claims: what a mechanism promises on every pair of neighbouring datasets.

A claim is a frozen, validated value object. The auditor asks two things of it: the ε at which
the privacy loss is claimed to be bounded, and the δ slack allowed at that ε.

References
----------
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Definition 2.4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import InvalidArgument
from ._validation import _fmt, check_delta, check_epsilon, check_real

__all__ = ["Claim", "PureDP", "ApproxDP"]


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


def _check_approx_epsilon(value: object) -> float:
    """ε of an approximate claim: finite and ≥ 0 (0 is total variation; -0.0 becomes 0.0)."""
    eps = check_real("epsilon", value)
    if eps == 0.0:
        return 0.0
    if eps < 0:
        raise InvalidArgument(f"epsilon={_fmt(value)} must be >= 0")
    return check_epsilon(value)


Claim = PureDP | ApproxDP
