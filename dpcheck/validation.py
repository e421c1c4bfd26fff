"""Argument validation: the checkers behind every public function of dpcheck.

Each checker returns the normalised value or raises :class:`~dpcheck.errors.InvalidArgument`
with a message of the form ``name=value must be …`` (:func:`fmt` shortens long values). The
module is public on purpose: code that builds on dpcheck — the reference implementations in the
repository's ``algorithms/``, a user's own mechanisms — validates its arguments with the same
checkers and messages, as hypothesis's ``extra`` modules use ``hypothesis.internal.validation``.

Examples
--------
>>> from dpcheck.validation import check_epsilon
>>> check_epsilon(0.5)
0.5
>>> check_epsilon(-1.0)
Traceback (most recent call last):
  ...
dpcheck.errors.InvalidArgument: epsilon=-1.0 must be > 0
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument

__all__ = [
    "fmt",
    "check_real",
    "check_epsilon",
    "check_delta",
    "check_alpha",
    "check_probability",
    "check_int",
    "check_choice",
    "check_seed",
]


def fmt(value: Any) -> str:
    """``repr(value)``, cut to 80 characters: the value part of an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a float; reject bools, non-numbers and NaN."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidArgument(f"{name}={fmt(value)} must be a real number")
    out = float(value)
    if math.isnan(out):
        raise InvalidArgument(f"{name}={fmt(value)} must not be NaN")
    return out


#: The largest ε a claim may state: ``e^ε`` overflows float64 beyond about 709.78, and no
#: sample size can tell such claims apart.
MAX_EPSILON = 700.0


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """ε must be a finite real number in (0, :data:`MAX_EPSILON`]."""
    eps = check_real(name, value)
    if not eps > 0:
        raise InvalidArgument(f"{name}={fmt(value)} must be > 0")
    if math.isinf(eps):
        raise InvalidArgument(f"{name}={fmt(value)} must be finite")
    if eps > MAX_EPSILON:
        raise InvalidArgument(f"{name}={fmt(value)} must be <= {MAX_EPSILON:g} (e^{name} "
                              "overflows float64 beyond about 709)")
    return eps


def check_delta(value: Any, name: str = "delta") -> float:
    """δ must lie in [0, 1)."""
    delta = check_real(name, value)
    if not 0.0 <= delta < 1.0:
        raise InvalidArgument(f"{name}={fmt(value)} must be in [0, 1)")
    return delta


def check_alpha(value: Any, name: str = "alpha") -> float:
    """A significance level must lie in the open interval (0, 1)."""
    alpha = check_real(name, value)
    if not 0.0 < alpha < 1.0:
        raise InvalidArgument(f"{name}={fmt(value)} must be in (0, 1)")
    return alpha


def check_probability(value: Any, name: str) -> float:
    """A probability must lie in [0, 1]."""
    p = check_real(name, value)
    if not 0.0 <= p <= 1.0:
        raise InvalidArgument(f"{name}={fmt(value)} must be in [0, 1]")
    return p


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """An integer (not a bool, not a float), optionally ≥ ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InvalidArgument(f"{name}={fmt(value)} must be an integer")
    out = int(value)
    if minimum is not None and out < minimum:
        raise InvalidArgument(f"{name}={fmt(value)} must be >= {minimum}")
    return out


def check_choice(value: Any, name: str, choices: Iterable[str]) -> str:
    """A string option that must be one of ``choices``; the message lists them."""
    options = tuple(choices)
    if not isinstance(value, str) or value not in options:
        listed = ", ".join(repr(c) for c in options)
        raise InvalidArgument(f"{name}={fmt(value)} must be one of {listed}")
    return value


def check_seed(value: Any, name: str = "seed") -> np.random.SeedSequence:
    """Turn a seed into a :class:`numpy.random.SeedSequence`.

    ``None`` means the fixed default seed 0 (dpcheck is deterministic by default); an int ≥ 0 or
    a ``SeedSequence`` is used as given.
    """
    if value is None:
        return np.random.SeedSequence(0)
    if isinstance(value, np.random.SeedSequence):
        return value
    seed = check_int(value, name, minimum=0)
    return np.random.SeedSequence(seed)
