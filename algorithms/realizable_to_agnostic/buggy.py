"""Seed 000's buggy variants that need code of their own (not a ``bug=`` knob of the reference
modules), as thin subclasses of the correct mechanisms.

* :class:`SortedPartitionP`, :class:`SortedPartitionPrediction` (B13, ``sorted_partition``):
  Procedure P's portions are *positional* blocks ``[i n′, (i+1) n′)``, ``i < r``, of ``T^h``
  sorted by ``x`` instead of a uniformly random partition (notes §6.1). With the smallest
  consistent threshold as the portion learner this is *not* a leak: one changed record shifts
  each block by at most one position and changes the vote of at most one block (exact loss
  0.98 ≤ 1 for Procedure P, 0.57 = the reference's inside ``A_AgnPred`` on the searched pairs;
  catalogue note of Theorem 4.2). Sampler and exact pmf agree (unit tests in
  ``tests/realizable_to_agnostic/test_agnostic_prediction.py``).

Deliberately broken code lives here, not in the reference modules, so that the reference stays
the paper's text (and the mutation benchmark, which does not mutate this file, measures the
claim tests against the reference only).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 4.1, Theorem 4.2; notes
``shared/research/seed-000.md`` §6.1, §7 B13.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument

from .agnostic_prediction import AgnosticPrediction, ProcedureP
from .core import prefix

__all__ = ["SortedPartitionP", "SortedPartitionPrediction", "sorted_hits", "sorted_portions"]


def sorted_portions(cx: np.ndarray, r: int) -> np.ndarray:
    """Positional portions: block ``i`` holds positions ``[i n′, (i+1) n′)`` of ``T^h`` sorted
    by ``x``, ``n′ = ⌊k/r⌋`` (leftover dropped); ``cx`` (B, N) counts of ``T_X`` → (B, r, N)."""
    npr = int(cx[0].sum()) // r
    c = prefix(cx)                                               # (B, N+1)
    s = np.arange(r)[None, :, None] * npr
    e = s + npr
    return np.maximum(0, np.minimum(c[:, None, 1:], e) - np.maximum(c[:, None, :-1], s))


def sorted_hits(lo: np.ndarray, hi: np.ndarray, k: int, r: int) -> np.ndarray:
    """Number of positional blocks ``[i n′, (i+1) n′)``, ``i < r``, meeting positions
    ``[lo, hi)`` of ``T^h`` sorted by ``x``."""
    npr = max(k // r, 1)
    first = lo // npr
    last = np.minimum(-(-hi // npr) - 1, r - 1)
    return np.where(hi > lo, np.maximum(last - first + 1, 0), 0)


def _reference_only(bug: str, name: str) -> None:
    if bug != "reference":
        raise InvalidArgument(f"bug={bug!r} must be 'reference' ({name} is itself the "
                              "sorted_partition mutant)")


@dataclass(frozen=True)
class SortedPartitionP(ProcedureP):
    """Procedure P with positional portions of ``T^h`` sorted by ``x`` (B13).

    References
    ----------
    Seed 000, Lemma 4.1; notes §6.1, §7 B13.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "SortedPartitionP")

    def _portions(self, cx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sorted_portions(cx, self.rounds)

    def _u_law(self, data: Any) -> np.ndarray:
        c, k = self._split(data)
        # sorted by x, label-0 points come first; marked = label-0 at >= query
        lo, hi = int(c[: self.query].sum()), int(c[:, 0].sum())
        hits = int(sorted_hits(np.array(lo), np.array(max(hi, lo)), k, self.rounds))
        law = np.zeros(self.rounds + 1)
        law[self.rounds - hits] = 1.0
        return law


@dataclass(frozen=True)
class SortedPartitionPrediction(AgnosticPrediction):
    """``A_AgnPred`` whose Procedure P uses positional portions of ``T^h`` sorted by ``x``
    (B13).

    References
    ----------
    Seed 000, Theorem 4.2; notes §6.1, §7 B13.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "SortedPartitionPrediction")

    def _portions(self, cx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sorted_portions(cx, self.rounds)

    def _votes_given_relabel(self, prob: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                             k: int) -> np.ndarray:
        r = self.rounds
        v, na = prob.shape
        hits = sorted_hits(np.broadcast_to(lo, hi.shape), hi, k, r)
        u_law = np.zeros((v, r + 1))
        np.add.at(u_law, (np.repeat(np.arange(v), na), (r - hits).ravel()), prob.ravel())
        return u_law
