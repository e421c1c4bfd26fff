"""Stand-ins for the probabilistic representation ``P`` of a concept class (notes §2.6).

The paper only uses the existence of an ``(α, β)``-probabilistic representation (Definition 2.3):
a distribution over hypothesis classes ``H`` such that, for every ``c ∈ C`` and every ``D_X``, with
probability ``1 − β`` some ``h ∈ H`` has ``dis_{D_X}(c, h) ≤ α``. ``H`` is drawn independently of
the data. A :class:`Representation` is a uniform distribution over finitely many truth tables,
so mixtures over the ``H``-draw have exact laws.

* :func:`trivial` — ``H = C`` (a (0, 0)-representation, optimal up to constants for thresholds);
  the default, with which the paper's (α/18, β/5) and (α/(134400√m), β/7) parameters are moot.
* :func:`decoys` — ``H = C ∪ R_j`` with ``R_j`` random functions (improper; still valid since
  ``H ⊇ C``): the only case where the surrogate score differs from the error (notes §0) and
  where the score can move by 2 counts (bug B6).
* :func:`everything` — all ``2^N`` functions (improper, deterministic).
* :func:`subset` — a random subset of ``C``: **not** a representation (negative control B16;
  utility must fail for some D, privacy must hold).

Never build ``H`` from the data (bug B13).

References
----------
Li–Wang–Ye (seed 002), Definition 2.3, Theorems 3.4 and 4.6; A. Beimel, K. Nissim, U. Stemmer,
"Characterizing the sample complexity of private learners", ITCS 2013 (probabilistic
representations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcheck.validation import check_int
from dpcheck.errors import InvalidArgument

from .data import all_functions, codes

__all__ = ["Representation", "decoys", "everything", "subset", "trivial"]


@dataclass(frozen=True, eq=False)
class Representation:
    """The uniform distribution over the hypothesis classes ``classes`` (truth tables)."""

    classes: tuple[np.ndarray, ...]
    name: str = "custom"

    def __post_init__(self) -> None:
        if not self.classes:
            raise InvalidArgument("classes=() must contain at least one hypothesis class")
        widths = {c.shape[1] for c in self.classes}
        if len(widths) != 1 or any(c.ndim != 2 or c.shape[0] == 0 for c in self.classes):
            raise InvalidArgument("classes must be non-empty (k, N) truth tables of one N")

    @property
    def domain(self) -> int:
        """``N``."""
        return int(self.classes[0].shape[1])

    @property
    def size(self) -> float:
        """``size(P) = max_H ln |H|`` (Definition 2.3)."""
        return float(max(np.log(len(c)) for c in self.classes))

    def is_proper_superset_of(self, concepts: np.ndarray) -> bool:
        """Whether every ``H`` in the support contains ``C`` (then it is a (0, 0)-representation)."""
        need = set(codes(concepts).tolist())
        return all(need <= set(codes(h).tolist()) for h in self.classes)


def _dedupe(table: np.ndarray) -> np.ndarray:
    _, first = np.unique(codes(table), return_index=True)
    return table[np.sort(first)]


def trivial(concepts: np.ndarray) -> Representation:
    """``H = C`` with probability 1."""
    return Representation((_dedupe(np.asarray(concepts, dtype=np.int8)),), "trivial")


def decoys(concepts: np.ndarray, extra: int, draws: int, *, seed: int) -> Representation:
    """Uniform over ``draws`` classes ``C ∪ R_j``, each ``R_j`` = ``extra`` random functions.

    The ``R_j`` are fixed at construction from ``seed`` (data-independent), so the mixture law
    is exact.
    """
    extra = check_int(extra, "extra", minimum=1)
    draws = check_int(draws, "draws", minimum=1)
    c = np.asarray(concepts, dtype=np.int8)
    gen = np.random.Generator(np.random.PCG64(seed))
    out = tuple(_dedupe(np.vstack([c, gen.integers(0, 2, (extra, c.shape[1]), dtype=np.int8)]))
                for _ in range(draws))
    return Representation(out, f"decoys({extra}x{draws})")


def everything(domain: int) -> Representation:
    """All ``2^N`` functions (improper, ``N ≤ 12``)."""
    return Representation((all_functions(domain),), "all-functions")


def subset(concepts: np.ndarray, keep: int, draws: int, *, seed: int) -> Representation:
    """Uniform over ``draws`` random ``keep``-subsets of ``C`` (invalid: negative control B16)."""
    c = np.asarray(concepts, dtype=np.int8)
    keep = check_int(keep, "keep", minimum=1)
    if keep > len(c):
        raise InvalidArgument(f"keep={keep} must be <= |C|={len(c)}")
    gen = np.random.Generator(np.random.PCG64(seed))
    out = tuple(c[np.sort(gen.choice(len(c), keep, replace=False))] for _ in range(draws))
    return Representation(out, f"subset({keep}x{draws})")
