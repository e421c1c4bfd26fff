"""Exact output laws of seed 004's A_Relabel (Algorithm 2, Step 3) and A_RelabelAndLearn
(Algorithm 3) for an inner algorithm with a ``pmf``, the worst-case inner algorithm of the notes
(:class:`LabelRandomizedResponse`, the RR label leaker) and the sample sizes of Claim 5.4.

* :func:`relabel_pattern_pmf` — the exponential mechanism with ε = 1 over the patterns
  ``Π_H(P)`` of H on the points P of ``D∘T``, scored on D.
* :func:`relabel_and_learn_pmf` — the exact output law of ``A_RelabelAndLearn``.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Algorithms 2 and 3, Lemma 5.3, Claim 5.4.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.concepts import ConceptClass, from_masks
from dpcheck.validation import fmt, check_epsilon, check_int, check_real
from dpcheck.errors import InvalidArgument


from .learners import ExponentialLearner, _class, labelled_sample

__all__ = ["relabel_patterns", "relabel_pattern_pmf", "relabel_and_learn_pmf",
           "LabelRandomizedResponse", "claim_5_4_size", "claim_5_4_size_half"]


# ----------------------------------------------------------------------------- A_Relabel

def _points_mask(*samples: np.ndarray) -> int:
    pm = 0
    for s in samples:
        for x in s[:, 0].tolist():
            pm |= 1 << int(x)
    return pm


def relabel_patterns(cls: ConceptClass, d: Any, t: Any = ()) -> ConceptClass:
    """``Π_H(P)``: the distinct restrictions of ``cls`` to the points P of ``D∘T`` (Step 2 of
    ``A_Relabel``; patterns are masks with bits only on P, each counted once).

    References
    ----------
    Seed 004, Algorithm 2, Steps 1–2.
    """
    cls = _class(cls)
    pm = _points_mask(labelled_sample(d, cls.n), labelled_sample(t, cls.n))
    return from_masks(cls.n, (h & pm for h in cls.masks))


def relabel_pattern_pmf(cls: ConceptClass, d: Any, t: Any = (),
                        bug: str | None = None) -> dict[int, float]:
    """Exact law of the pattern chosen in Step 3 of ``A_Relabel(D, T)``: Algorithm 1 with
    ε = 1 over ``Π_H(P)``, score = mistakes on D. ``bug`` is passed to the
    :class:`ExponentialLearner` (``"sign"``: weights exp(+q/2), as the proof of Lemma 5.3
    writes them — BUG-3 copied into A_Relabel).

    References
    ----------
    Seed 004, Algorithm 2, Step 3; Claim 5.4 and the proof of Lemma 5.3 (``w_{t,h}``).
    """
    return ExponentialLearner(relabel_patterns(cls, d, t), 1.0, bug=bug).pmf(d)


def _relabel(sample: np.ndarray, pattern: int) -> tuple[tuple[int, int], ...]:
    return tuple((int(x), pattern >> int(x) & 1) for x in sample[:, 0].tolist())


def relabel_and_learn_pmf(cls: ConceptClass, d: Any, v: Any, w: Any,
                          inner: Callable[[tuple[tuple[int, int], ...]], Mapping[Hashable, float]]
                          ) -> dict[tuple[Hashable, tuple[tuple[int, int], ...]], float]:
    """Exact output law of ``A_RelabelAndLearn(D, V, W)`` (Algorithm 3) without ``h̄``.

    Outputs are ``(A(S̃), Ṽ)`` with ``S̃ = D̃∘Ṽ∘W̃`` (the proof's reading of "A(S)"); ``h̄`` is a
    deterministic function of Ṽ (post-processing), so it is left out.

    Parameters
    ----------
    cls
        The class H.
    d, v, w
        Labelled samples.
    inner
        ``inner(S̃) -> {output: probability}``, the exact law of A.

    References
    ----------
    Seed 004, Algorithms 2 and 3, Lemma 5.3.
    """
    cls = _class(cls)
    if not callable(inner):
        raise InvalidArgument(f"inner={fmt(inner)} must be callable")
    ad, av, aw = (labelled_sample(s, cls.n) for s in (d, v, w))
    pats = relabel_pattern_pmf(cls, ad, np.concatenate([av, aw]))
    out: dict[tuple[Hashable, tuple[tuple[int, int], ...]], list[float]] = {}
    for pat, wp in pats.items():
        vt = _relabel(av, pat)
        st = _relabel(ad, pat) + vt + _relabel(aw, pat)
        for o, p in inner(st).items():
            out.setdefault((o, vt), []).append(wp * float(p))
    return {k: math.fsum(ps) for k, ps in out.items()}


@dataclass(frozen=True, slots=True)
class LabelRandomizedResponse:
    """The RR label leaker: output every label (in order, without the x's), each kept with
    probability ``e^ε/(1 + e^ε)``, independently. ε-DP under substitution.

    References
    ----------
    Notes ``seed-004.md`` §3 (auditing-only mechanisms), used for Lemma 5.3 (T-5.3 (b)).
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def pmf(self, data: Any) -> dict[tuple[int, ...], float]:
        """Exact law over label tuples."""
        arr = labelled_sample(data, int(np.asarray(data)[:, 0].max()) + 1 if len(data) else 1)
        ys = arr[:, 1].tolist()
        keep = 1.0 / (1.0 + math.exp(-self.epsilon))
        out = {}
        for flips in itertools.product((0, 1), repeat=len(ys)):
            k = sum(flips)
            out[tuple(y ^ f for y, f in zip(ys, flips))] = keep ** (len(ys) - k) * (1 - keep) ** k
        return out


# ----------------------------------------------------------------------------- Claim 5.4

def _check_ab(alpha: Any, beta: Any) -> tuple[float, float]:
    a, b = check_real("alpha", alpha), check_real("beta", beta)
    if not (0 < a < 1 and 0 < b < 1):
        raise InvalidArgument(f"alpha={fmt(alpha)}, beta={fmt(beta)} must be in (0, 1)")
    return a, b


def claim_5_4_size(alpha: float, beta: float, vc: int, s_size: int) -> float:
    """``(2/α) ln(1/β) + (2 VC/α) ln(e|S|/VC)`` (the VC term is 0 when VC = 0).

    References
    ----------
    Seed 004, Claim 5.4.
    """
    a, b = _check_ab(alpha, beta)
    d, s = check_int(vc, "vc", minimum=0), check_int(s_size, "s_size", minimum=1)
    return 2 / a * math.log(1 / b) + (2 * d / a * math.log(math.e * s / d) if d else 0.0)


def claim_5_4_size_half(alpha: float, beta: float, vc: int) -> float:
    """``(4/α) ln(1/β) + (10 VC/α) ln(20e/α)``, sufficient when ``|D| ≥ |S|/2``.

    References
    ----------
    Seed 004, Claim 5.4 ("in particular").
    """
    a, b = _check_ab(alpha, beta)
    d = check_int(vc, "vc", minimum=0)
    return 4 / a * math.log(1 / b) + 10 * d / a * math.log(20 * math.e / a)

