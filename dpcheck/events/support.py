"""Support candidates: the values one side produced during exploration and the other did not.

A mechanism that leaks through one rare output value (a δ-leak that releases the exact answer
with probability 10⁻⁴, a sentinel returned on an error path) hides it from the ranked
selection of :mod:`dpcheck.events.select` at small budgets: exploration sees the value a
handful of times, a continuous feature only keeps values seen twice as atoms, and the
validation half must see it again before it can win a slot. Yet one sighting is enough to
*name* it. For the identity feature of the outputs (``output`` for scalars, ``row`` for the
hashed rows of vectors) this module builds, per direction, the event

    S = {values seen under D during exploration} ∖ {values seen under D′ during exploration}

and hands it to confirmation as a candidate of its own, whatever its exploration counts. On a
continuous output without atoms S is a finite set of single draws and has probability 0 under
both datasets (the candidate confirms nothing and costs only its α share); an atom of mass p
seen at least once under D only is in S, and confirmation counts it on fresh samples. Both
directions together get :data:`SUPPORT_SHARE` of the audit's α (weighted Bonferroni: the
ranked candidates keep ``1 − SUPPORT_SHARE`` of it, so their bounds barely move).

:func:`support_floor` states what the check rules out: the smallest mass ``p`` of a value
produced under one dataset only that the audit refutes with probability ≥ 0.9 (nomination by
exploration and refutation by confirmation together).

References
----------
Z. Ding et al., "Detecting violations of differential privacy", CCS 2018 (point events);
issue 30 item 2 (rare events).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.events.event import Candidate, Event
from dpcheck.features.feature import Feature, sorted_unique

__all__ = ["SUPPORT_SHARE", "MAX_SUPPORT", "IDENTITY_FEATURES", "support_candidates",
           "support_floor", "with_support", "has_identity"]

#: Share of an audit's α spent on the support candidates (both directions together).
SUPPORT_SHARE = 0.1
#: Exploration outputs per side a support set is built from (a prefix of the exploration
#: sample, so the set and its pickled size stay bounded on clusters).
MAX_SUPPORT = 1 << 17
#: Names of the features whose values identify an output.
IDENTITY_FEATURES = ("output", "row")


def has_identity(features: Sequence[Feature]) -> bool:
    """Whether the audit's features include one whose values identify an output."""
    return _identity(features) is not None


def _identity(features: Sequence[Feature]) -> int | None:
    for name in IDENTITY_FEATURES:
        for j, f in enumerate(features):
            if f.name == name:
                return j
    return None


def support_candidates(
    cols_d: list[NDArray[Any]], cols_dp: list[NDArray[Any]], features: Sequence[Feature],
) -> list[Candidate]:
    """The support candidates of both directions (none for an empty set or without an
    identity feature). Their ``weight`` is set by :func:`with_support`."""
    j = _identity(features)
    if j is None:
        return []
    a = sorted_unique(cols_d[j][:MAX_SUPPORT])
    b = sorted_unique(cols_dp[j][:MAX_SUPPORT])
    out = []
    for values, direction in ((np.setdiff1d(a, b, assume_unique=True), "d>d_prime"),
                              (np.setdiff1d(b, a, assume_unique=True), "d_prime>d")):
        if values.size:
            event = Event(j, features[j].name, "atoms", values=values, support=True)
            out.append(Candidate(event, direction, -math.inf, 0, 0))  # type: ignore[arg-type]
    return out


def with_support(chosen: list[Candidate], support: list[Candidate]) -> list[Candidate]:
    """``chosen`` followed by ``support``, weighted so that the support candidates together
    hold :data:`SUPPORT_SHARE` of the family's α (every ranked candidate has weight 1)."""
    if not support or not chosen:
        return chosen + support
    w = SUPPORT_SHARE / (1.0 - SUPPORT_SHARE) * sum(c.weight for c in chosen) / len(support)
    return chosen + [dataclasses.replace(c, weight=w) for c in support]


def support_floor(n_explore: int, n_confirm: int, *, alpha: float, epsilon: float,
                  delta: float, power: float = 0.9) -> float:
    """Smallest mass ``p`` of an output value produced under one dataset only that an audit
    with these sizes refutes with probability ≥ ``power``: the value is seen during
    exploration (probability ``1 − (1 − p)^n_explore``) and its support candidate, at level
    ``alpha`` (its share), certifies ``ln((p_lo − δ)/q_hi) > ε`` with ``K_q = 0``. ``inf`` if
    no mass in (0, 1] suffices."""
    from scipy.stats import binom

    from dpcheck.stats import cp_lower, cp_upper

    if n_explore < 1 or n_confirm < 1:
        return math.inf
    q_high = float(cp_upper(0, n_confirm, alpha / 2))
    need = delta + math.exp(epsilon) * q_high
    ks = np.unique(np.geomspace(1, n_confirm, 256).astype(np.int64))
    ok = np.asarray(cp_lower(ks, n_confirm, alpha / 2)) > need  # increasing in the count
    if not ok.any():
        return math.inf
    i = int(np.argmax(ok))
    if i > 0:  # the exact smallest count in the bracket (ks[i-1], ks[i]]
        ks = np.arange(ks[i - 1] + 1, ks[i] + 1)
        ok = np.asarray(cp_lower(ks, n_confirm, alpha / 2)) > need
    k_min = int(ks[int(np.argmax(ok))])

    def prob(p: NDArray[np.float64]) -> NDArray[np.float64]:
        seen = -np.expm1(n_explore * np.log1p(-np.minimum(p, 1.0 - 1e-16)))
        return seen * binom.sf(k_min - 1, n_confirm, p)

    if prob(np.array([1.0 - 1e-16]))[0] < power:
        return math.inf
    grid = np.geomspace(1e-15, 1.0 - 1e-16, 400)  # then two vectorised refinements
    for _ in range(3):
        ok = prob(grid) >= power
        i = int(np.argmax(ok))  # first mass that reaches the power (prob is increasing)
        if i == 0:
            return float(grid[0])
        grid = np.linspace(grid[i - 1], grid[i], 64)
    return float(grid[int(np.argmax(prob(grid) >= power))])
