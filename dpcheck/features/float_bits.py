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

``exponent_lsb(output)`` (categorical; added only when the exploration sample shows a *joint* hole)
    the pair (binary exponent of ``|output|``, lsb) as one code: *where* the resolution differs.
    The lsb marginal misses holes that show only jointly with the binade: D rounds onto grid
    2⁻³⁰ in [1, 2) and 2⁻⁴⁰ in [2, 4), D′ the other way round, and both lsb and value have the
    same law under D and D′; or textbook ``v + noise`` at v = 3 vs 2, whose outputs in [0.5, 1)
    lie on grid 2⁻⁵¹ from 3 and 2⁻⁵² from 2 while lsb −52 is common under both (binade [1, 2)).
    The rule (:func:`joint_hole`, on the generation half of the exploration sample, fixed before
    any confirmation output is drawn): with ``need = max(MIN_COUNT, MIN_SHARE·n)``,

    1. the lsb marginal shows no hole: no lsb value is seen ≥ ``need`` times on one side and
       never on the other (otherwise ``lsb(output)`` already has the support events — the
       textbook ``v + noise`` at v = 1 vs 0 — and the joint code would only change selection);
    2. some cell (exponent e, lsb k) is seen ≥ ``need`` times on one side and never on the
       other, while the other side has binade e ≥ ``need`` times and lsb k ≥ ``need`` times:
       the marginals are well populated on both sides, the pair never on one.

    With equal cell probabilities on both sides, ≥ 30 outputs of a cell all on one side have
    chance 2⁻³⁰ (with a ratio r, about e^(−30/r)), so correct mechanisms — and textbook ones whose
    marginal already shows the hole — keep their features and audits unchanged.

Further features, in the user map :func:`bit_features` (slower: many categorical values):

``binade_lsb``
    the pair (sign and binary exponent, lsb) as one categorical code: *where* (in which binade)
    the resolution differs;
``low_bits``
    the 8 lowest mantissa bits, categorical (DP-Sniper's bit-pattern features, coarsened).

None of them knows the sampler; they read only the float64 bits. Only ``lsb`` is always on:
it reaches the sample-size ceiling on the textbook mechanisms (tests/test_float_features.py)
at about a third of the cost of the three together (``benchmarks/README.md``); the joint
``exponent_lsb`` only when the rule above fires (tests/test_binade_holes.py).

References
----------
I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012;
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021, §VI-D (bit-pattern features of float outputs);
J. Jin et al., "Are We There Yet? Timing and Floating-Point Attacks on Differential Privacy
Systems", IEEE S&P 2022; issue 30 item 4 (joint binade × lowest-set-bit events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.features.family import Batch, Exploration, Fitted
from dpcheck.features.feature import Feature

__all__ = ["NAMES", "JOINT", "MIN_COUNT", "MIN_SHARE", "COLUMNS", "FloatBitsFamily",
           "bit_features", "lsb", "binade_lsb", "exponent_lsb", "low_bits", "column",
           "joint_hole"]

#: Feature names (``(name, ordered)``) added for scalar float outputs, in this order.
NAMES: tuple[tuple[str, bool], ...] = (("lsb(output)", True),)
#: The joint feature added when :func:`joint_hole` fires (categorical).
JOINT: tuple[str, bool] = ("exponent_lsb(output)", False)
#: Joint rule: least count of a one-sided cell (and of the other side's marginals) ...
MIN_COUNT = 30
#: ... and its least share of a side's generation outputs (as :mod:`~dpcheck.features.vector_bits`).
MIN_SHARE = 0.002
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


def exponent_lsb(x: NDArray[Any], lsb_x: NDArray[np.float64] | None = None
                 ) -> NDArray[np.float64]:
    """Categorical code of (binary exponent of ``|x|``, lsb) of each float64 in ``x``.

    Parameters
    ----------
    x
        Float64 outputs.
    lsb_x
        ``lsb(x)`` if already computed.

    Returns
    -------
    numpy.ndarray
        ``8192·(biased exponent) + lsb + 4096``: the sign is left out (the textbook mechanism's
        outputs at −x and x from value 1 vs 0 lie on different grids, so a signed code would
        show a joint hole the lsb marginal already has).

    References
    ----------
    Issue 30 item 4 (joint binade × lowest-set-bit events); Mironov, CCS 2012.
    """
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64)
    top = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.float64)  # biased exponent
    return top * 8192.0 + (lsb(x) if lsb_x is None else lsb_x) + 4096.0


def low_bits(x: NDArray[Any]) -> NDArray[np.float64]:
    """The 8 lowest mantissa bits of each float64 (0–255)."""
    bits = np.ascontiguousarray(np.asarray(x, dtype=np.float64)).view(np.uint64)
    return (bits & np.uint64(0xFF)).astype(np.float64)


_FUNCTIONS = {"lsb(output)": lsb, "binade_lsb(output)": binade_lsb,
              "exponent_lsb(output)": exponent_lsb, "low_bits(output)": low_bits}
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


def _one_sided(a: NDArray[np.int64], b: NDArray[np.int64], need: float) -> NDArray[np.bool_]:
    """Cells seen at least ``need`` times in ``a`` and never in ``b`` (or the other way)."""
    return ((a >= need) & (b == 0)) | ((b >= need) & (a == 0))


def joint_hole(out_d: NDArray[Any], out_dp: NDArray[Any]) -> bool:
    """Whether these exploration outputs show a hole in (exponent, lsb) that the lsb marginal
    does not (rules 1 and 2 of the module docstring, on the finite non-zero outputs).

    Parameters
    ----------
    out_d, out_dp
        Scalar float outputs (shape ``(n,)`` or ``(n, 1)``) of D and D′; the audit passes the
        generation half of its exploration sample, so the decision is fixed before any
        confirmation output is drawn.

    Returns
    -------
    bool
        ``True`` when no lsb value is one-sided (seen ≥ ``need`` times on one side, never on
        the other; ``need = max(MIN_COUNT, MIN_SHARE·n)``) and some (exponent, lsb) cell is,
        while the other side has that exponent and that lsb ≥ ``need`` times each.

    References
    ----------
    Issue 30 item 4; the one-sided count rule follows
    :func:`dpcheck.features.vector_bits.hole_coordinates` (30 outputs and 0.2 %).
    """
    need = max(MIN_COUNT, MIN_SHARE * min(out_d.shape[0], out_dp.shape[0]))
    if min(out_d.shape[0], out_dp.shape[0]) < need:  # also: no rows at all (tiny audits)
        return False
    x, y = (np.asarray(o, dtype=np.float64).reshape(o.shape[0], -1)[:, 0] + 0.0
            for o in (out_d, out_dp))
    x, y = x[np.isfinite(x) & (x != 0)], y[np.isfinite(y) & (y != 0)]
    if x.size < need or y.size < need:
        return False
    lx, ly = lsb(x), lsb(y)
    cx, cy = exponent_lsb(x, lx), exponent_lsb(y, ly)
    cells, inverse = np.unique(np.concatenate([cx, cy]), return_inverse=True)
    na = np.bincount(inverse[:x.size], minlength=cells.size)
    nb = np.bincount(inverse[x.size:], minlength=cells.size)
    low = cells % 8192.0  # lsb + 4096 (< 8192)
    ks, kinv = np.unique(low, return_inverse=True)
    ma, mb = np.bincount(kinv, na, ks.size), np.bincount(kinv, nb, ks.size)
    if _one_sided(ma, mb, need).any():  # rule 1: the lsb marginal has the hole already
        return False
    es, einv = np.unique(cells // 8192.0, return_inverse=True)
    ea, eb = np.bincount(einv, na, es.size), np.bincount(einv, nb, es.size)
    well = (np.minimum(ma, mb)[kinv] >= need) & (np.minimum(ea, eb)[einv] >= need)
    return bool((_one_sided(na, nb, need) & well).any())  # rule 2


class FloatBitsFamily:
    """The float64 bits of a scalar float output (:data:`NAMES`: ``lsb(output)``, and
    :data:`JOINT` when :func:`joint_hole` fires on the generation half of the exploration
    sample), unless a user map is given or ``float_features=False``."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if (exploration.user_map is not None or exploration.outputs.dtype.kind != "f"
                or not exploration.scalar or not exploration.float_bits):
            return None
        names = NAMES
        if exploration.outputs_prime is not None and joint_hole(*exploration.generation):
            names = NAMES + (JOINT,)
        compute = _Columns(tuple(n for n, _ in names))
        return Fitted(tuple(Feature(n, o) for n, o in names), compute,
                      compute.labels if len(names) > len(NAMES) else None)

    def describe(self, name: str) -> str | None:
        return {"lsb(output)": "the lowest set bit of the output's float64 representation: "
                               "outputs rounded onto different grids betray the input "
                               "(floating-point attack, Mironov 2012; float_features=False "
                               "audits the real-valued idealisation)",
                "binade_lsb(output)": "the lowest set bit relative to the output's binade",
                "exponent_lsb(output)": "the pair (binary exponent, lowest set bit) of the "
                                        "output's float64 representation: in some binades the "
                                        "two datasets' outputs lie on different grids "
                                        "(floating-point attack, Mironov 2012)",
                "low_bits(output)": "the low bits of the output's float64 mantissa"}.get(name)


@dataclass(frozen=True)
class _Columns:
    """``compute(index, batch)`` of the fitted family (picklable for executors)."""

    names: tuple[str, ...]

    def __call__(self, index: int, batch: Batch) -> NDArray[np.float64]:
        return column(self.names[index], batch.outputs)

    def labels(self, index: int, rows: NDArray[Any]) -> tuple[Any, ...]:
        """Words for the cells of an atom event of the joint code (``rows``: its outputs)."""
        if self.names[index] != JOINT[0]:
            return ()
        codes = np.unique(column(JOINT[0], rows))
        return tuple(f"(binade 2^{int(c // 8192) - 1023}, lsb {int(c % 8192) - 4096})"
                     for c in codes)
