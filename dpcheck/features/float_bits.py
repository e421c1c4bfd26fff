"""Features of the binary representation of float64 outputs (on by default for float outputs).

A mechanism that computes ``value + noise`` in floating point is not the real-valued mechanism
of its privacy proof: the set of float64 numbers it can output, and how finely, depends on the
value (Mironov 2012). Near the value, cancellation makes ``value + noise`` exact, so its
resolution is that of the *noise* at magnitude ≈ |value| — a multiple of ``ulp(value)``-sized
steps — while the same output produced from another value (e.g. raw noise at value 0) has the
full resolution of its own magnitude. Such differences are invisible to events on the output's
*value*, but they are events on its *bits*, and every event is legitimate evidence: a feature is
a fixed function of the output, so adding features never invalidates the audit's bounds (only
the number of confirmed candidates costs α), it only lets it see more.

Default feature (scalar float outputs, without a user ``features=`` map):

``lsb(output)``
    the 2-adic valuation: ``k`` such that the output is an odd multiple of ``2**k`` (the
    position of its lowest set bit, i.e. the output's actual spacing); 0 gets ``+2048`` and
    ±inf ``+2047``. Ordered: half-lines ``{lsb ≤ k}`` ask "is the output finer than 2^k?", and
    point events / likelihood-ratio-ordered unions of values see any pattern of spacings.

Further features, in the user map :func:`bit_features` (slower: many categorical values):

``binade_lsb``
    the pair (sign and binary exponent, lsb) as one categorical code: *where* (in which binade)
    the resolution differs;
``low_bits``
    the 8 lowest mantissa bits, categorical (DP-Sniper's bit-pattern features, coarsened).

None of them knows the sampler; they read only the float64 bits. Only ``lsb`` is on by default:
it reaches the sample-size ceiling on the textbook mechanisms (tests/test_float_features.py)
at about a third of the cost of the three together (``benchmarks/README.md``).

References
----------
I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012;
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §VI-D (bit-pattern features of float outputs);
J. Jin et al., "Are We There Yet? Timing and Floating-Point Attacks on Differential Privacy
Systems", IEEE S&P 2022.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.family import Batch, Exploration, Fitted
from dpcheck.features.feature import Feature

__all__ = ["NAMES", "COLUMNS", "FloatBitsFamily", "bit_features", "lsb", "binade_lsb", "low_bits",
           "column"]

#: Feature names (``(name, ordered)``) added for scalar float outputs, in this order.
NAMES: tuple[tuple[str, bool], ...] = (("lsb(output)", True),)
_ZERO, _INF = 2048.0, 2047.0
_MANT = np.uint64((1 << 52) - 1)


def lsb(x: NDArray[Any]) -> NDArray[np.float64]:
    """2-adic valuation of each float64 in ``x`` (see the module docstring).

    Clearing the lowest set bit of a float's bit pattern (``b & (b − 1)``) gives a float of the
    same binade when the mantissa is non-zero, and their difference is exactly ``±2**lsb``; a
    mantissa of zero means a power of two, its own lowest bit. ``frexp`` reads the exponent.
    """
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float64))
    bits = x.view(np.uint64)
    cleared = (bits & (bits - np.uint64(1))).view(np.float64)
    low = np.where((bits & _MANT) != 0, x - cleared, x)  # exact: same binade
    out = (np.frexp(low)[1] - 1).astype(np.float64)
    special = ~np.isfinite(low) | (low == 0)
    if special.any():
        out[low == 0] = _ZERO
        out[~np.isfinite(low)] = _INF
    return out


def binade_lsb(x: NDArray[Any], lsb_x: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Categorical code of (sign, binary exponent, lsb) (``lsb_x``: ``lsb(x)`` if known)."""
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64)
    top = (bits >> np.uint64(52)).astype(np.float64)  # sign and biased exponent, < 4096
    return top * 8192.0 + (lsb(x) if lsb_x is None else lsb_x) + 4096.0


def low_bits(x: NDArray[Any]) -> NDArray[np.float64]:
    """The 8 lowest mantissa bits of each float64 (0–255)."""
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64)
    return (bits & np.uint64(0xFF)).astype(np.float64)


_FUNCTIONS = {"lsb(output)": lsb, "binade_lsb(output)": binade_lsb, "low_bits(output)": low_bits}
#: Names :func:`column` computes.
COLUMNS = frozenset(_FUNCTIONS)


def column(name: str, outputs: NDArray[Any]) -> NDArray[np.float64]:
    """The feature ``name`` of scalar outputs (shape ``(n,)`` or ``(n, 1)``)."""
    x = (outputs if outputs.ndim == 1 else outputs[:, 0]) + 0.0  # -0.0 and 0.0: one output
    return _FUNCTIONS[name](x)


def bit_features(outputs: NDArray[Any]) -> NDArray[np.float64]:
    """User feature map ``features=bit_features`` for scalar float outputs: columns value,
    ``lsb``, ``binade_lsb`` and ``low_bits`` (all treated as ordered by the auditor; the
    value's half-lines and every column's point events and likelihood-ratio-ordered unions)."""
    x = np.asarray(outputs, dtype=np.float64)
    x = (x if x.ndim == 1 else x[:, 0]) + 0.0
    low = lsb(x)
    return np.column_stack([x, low, binade_lsb(x, low), low_bits(x)])


class FloatBitsFamily:
    """The float64 bits of a scalar float output (:data:`NAMES`: ``lsb(output)``), unless a
    user map is given or ``float_features=False``."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if (exploration.user_map is not None or exploration.outputs.dtype.kind != "f"
                or not exploration.scalar or not exploration.float_bits):
            return None
        return Fitted(tuple(Feature(n, o) for n, o in NAMES), _bits_column)

    def describe(self, name: str) -> str | None:
        return {"lsb(output)": "the lowest set bit of the output's float64 representation: "
                               "outputs rounded onto different grids betray the input "
                               "(floating-point attack, Mironov 2012; float_features=False "
                               "audits the real-valued idealisation)",
                "binade_lsb(output)": "the lowest set bit relative to the output's binade",
                "low_bits(output)": "the low bits of the output's float64 mantissa"}.get(name)


def _bits_column(j: int, batch: Batch) -> NDArray[np.float64]:
    return column(NAMES[j][0], batch.outputs)
