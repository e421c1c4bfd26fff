"""Exact branch probabilities of Algorithm 1: which of three noisy counts is smallest.

Algorithm 1 compares ``v_mid``, ``v_l``, ``v_r``: independent Laplace variables of one scale ``b``
around the counts ``μ_mid``, ``μ_l``, ``μ_r`` (``μ_l`` or ``μ_r`` may be absent: the paper's ``+∞``
of an empty range, which gets no noise). It returns ``f_mid`` if ``v_mid < min(v_l, v_r)``, goes left
if ``v_l < v_r`` and right otherwise. Hence (ties have probability 0)

* ``P(return) = ∫ f_mid · S_l · S_r``,  ``P(left) = ∫ f_l · S_r · S_mid``,
  ``P(right) = ∫ f_r · S_l · S_mid``,

with ``f`` a Laplace density and ``S`` a survival function (``S ≡ 1`` for an absent value). Each
integrand is, between consecutive centres, a finite sum ``Σ c_k e^{k w}`` (``k ∈ {−3..3}``), so
the integrals are computed in closed form piece by piece (no quadrature), anchored at a piece
end so that no exponential overflows. The three probabilities sum to 1 up to rounding (tested).

References
----------
Li–Wang–Ye (seed 002), Algorithm 1; notes §3.6 ("exact distribution").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["branch_probabilities", "race_integral"]

_CLIP = 300.0  # centres beyond ±300 scale units act as ±∞ (contributions below e^-300)


def _mul(a: dict[int, float], b: dict[int, float]) -> dict[int, float]:
    out: dict[int, float] = {}
    for ka, ca in a.items():
        for kb, cb in b.items():
            out[ka + kb] = out.get(ka + kb, 0.0) + ca * cb
    return out


def race_integral(centres: Sequence[float]) -> float:
    """``∫ ½e^{−|w|} Π_j S(w − c_j) dw`` with ``S`` the standard Laplace survival function.

    ``centres`` are the other variables' means minus the density's mean, in units of the scale.
    """
    cs = [min(max(float(c), -_CLIP), _CLIP) for c in centres]
    bps = sorted({0.0, *cs})
    total = 0.0
    pieces = [(-math.inf, bps[0])] + list(zip(bps[:-1], bps[1:])) + [(bps[-1], math.inf)]
    for p, q in pieces:
        if p == q:
            continue
        if math.isinf(p):
            anchor, probe = q, q - 1.0
        elif math.isinf(q):
            anchor, probe = p, p + 1.0
        else:
            anchor, probe = p, 0.5 * (p + q)
        # density ½e^{−|w|} as c·e^{k(w − anchor)}
        poly = ({1: 0.5 * math.exp(anchor)} if probe < 0 else {-1: 0.5 * math.exp(-anchor)})
        for c in cs:
            if probe < c:  # 1 − ½e^{w−c}
                factor = {0: 1.0, 1: -0.5 * math.exp(anchor - c)}
            else:  # ½e^{−(w−c)}
                factor = {-1: 0.5 * math.exp(c - anchor)}
            poly = _mul(poly, factor)
        for k, coef in poly.items():
            if coef == 0.0:
                continue
            if math.isinf(p):  # ∫_{−∞}^{anchor} e^{k(w−anchor)} = 1/k, k > 0 here
                total += coef / k
            elif math.isinf(q):  # ∫_{anchor}^{∞} e^{k(w−anchor)} = −1/k, k < 0 here
                total += -coef / k
            else:
                total += coef * ((q - p) if k == 0 else math.expm1(k * (q - p)) / k)
    return total


def branch_probabilities(mu_mid: float, mu_l: float | None, mu_r: float | None,
                         scale: float, *, shared_noise: bool = False) -> tuple[float, float, float]:
    """``(P(return f_mid), P(left), P(right))`` of one round of Algorithm 1.

    ``None`` marks an empty range (the paper's ``+∞``, no noise). ``shared_noise=True`` is bug B8:
    one Laplace draw added to all three values, so the comparison is the exact one of the counts.
    """
    inf = math.inf
    ml = inf if mu_l is None else float(mu_l)
    mr = inf if mu_r is None else float(mu_r)
    if shared_noise:
        if mu_mid < min(ml, mr):
            return 1.0, 0.0, 0.0
        return (0.0, 1.0, 0.0) if ml < mr else (0.0, 0.0, 1.0)
    others = [c for c in (mu_l, mu_r) if c is not None]
    p_ret = race_integral([(c - mu_mid) / scale for c in others])
    p_left = 0.0 if mu_l is None else race_integral(
        [(c - mu_l) / scale for c in (mu_r, mu_mid) if c is not None])
    p_right = 0.0 if mu_r is None else race_integral(
        [(c - mu_r) / scale for c in (mu_l, mu_mid) if c is not None])
    return p_ret, p_left, p_right
