"""The deterministic pieces of seed 004's relabeling learners: samples as count tables, the
patterns ``Π_H(P)`` and their scores, the relabel distribution of A_Relabel (Algorithm 2), the
private PAC learner stand-in L-EM (:class:`EMLearner`), and the coin helpers shared by the
pipelines of :mod:`algorithms.closure.pipelines`.

See :mod:`algorithms.closure.pipelines` for the conventions (labelled samples, output codes,
decisions of the seed-004 notes §8).

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Algorithm 2 (A_Relabel), Definition 3.3.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.concepts import ConceptClass
from algorithms.mechanisms.selection import ExponentialMechanism
from dpcheck.validation import fmt, check_epsilon
from dpcheck.errors import InvalidArgument

__all__ = ["BUGS", "BUG5_EPSILON", "as_sample", "counts_of", "support_of", "class_labels",
           "patterns", "error_counts", "relabel_distribution", "completion_scores", "relabelled_cells",
           "EMLearner", "CellCountLearner"]

BUGS = ("erm", "relabel_epsilon", "release_pattern", "release_t", "relabel_eps_1_25",
        "inner_eps_1_25", "one_more_draw")
#: Issue 27's budget factor of the subtle mutants (relabel EM and inner learner at 1.25 ε).
OVERSPEND = 1.25
#: The caller's ε that BUG-5 (``"relabel_epsilon"``) wrongly uses inside A_Relabel.
BUG5_EPSILON = 10.0


# ----------------------------------------------------------------------------- data

def as_sample(data: Any, n: int) -> np.ndarray:
    """``data`` as an ``(m, 2)`` int64 array of ``(x, y)`` with ``x ∈ [0, n)``, ``y ∈ {0, 1}``.

    Raises
    ------
    InvalidArgument
        If ``data`` is not a sequence of such pairs.
    """
    try:
        arr = np.asarray(data, dtype=np.int64)
    except (TypeError, ValueError):
        raise InvalidArgument(f"data={fmt(data)} must be a sequence of (x, y) pairs") from None
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InvalidArgument(f"data={fmt(data)} must have shape (m, 2)")
    if ((arr[:, 0] < 0) | (arr[:, 0] >= n)).any() or ((arr[:, 1] != 0) & (arr[:, 1] != 1)).any():
        raise InvalidArgument(f"data={fmt(data)}: need 0 <= x < {n} and y in {{0, 1}}")
    return arr


def counts_of(sample: np.ndarray, n: int) -> np.ndarray:
    """Count table ``c[x, y]`` (shape ``(n, 2)``) of a labelled sample."""
    return np.bincount(sample[:, 0] * 2 + sample[:, 1], minlength=2 * n).reshape(n, 2)


def support_of(sample: np.ndarray) -> int:
    """Bitmask of the distinct points of a sample."""
    return int(sum(1 << int(x) for x in set(sample[:, 0].tolist())))


def class_labels(cls: ConceptClass) -> np.ndarray:
    """Label matrix ``L[i, x] = h_i(x)`` (shape ``(|H|, N)``, int64)."""
    m = cls.as_array()[:, None] >> np.arange(cls.n, dtype=np.uint64)[None, :]
    return (m & np.uint64(1)).astype(np.int64)


def patterns(cls: ConceptClass, support: int) -> np.ndarray:
    """``Π_H(P)``: the distinct restrictions of ``H`` to ``P`` (each once, Algorithm 2 step 2),
    as label rows over the whole domain, zero outside ``P``; sorted by mask."""
    masks = sorted({m & support for m in cls.masks})
    return class_labels(ConceptClass(cls.n, tuple(masks)))


def error_counts(labels: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``#{(x, y) : h(x) ≠ y}`` for every row ``h`` of ``labels``; ``counts`` is ``(..., N, 2)``;
    the result is ``(..., |labels|)``."""
    return counts[..., 0] @ labels.T + counts[..., 1] @ (1 - labels).T


def relabel_distribution(pats: np.ndarray, scores: np.ndarray, *, epsilon: float = 1.0,
                         erm: bool = False) -> np.ndarray:
    """Algorithm 2 step 3: ``Pr[π] ∝ exp(−ε q(D, π)/2)`` over the patterns (ε = 1 in the
    paper). ``erm=True`` is BUG-1 (a point mass on the first minimiser)."""
    if erm:
        out = np.zeros(len(pats))
        out[int(np.argmin(scores))] = 1.0
        return out
    return np.exp(ExponentialMechanism(epsilon).log_probabilities(-np.asarray(scores, float)))


def completion_scores(table: Sequence[int], prefix: np.ndarray, pats: np.ndarray,
                      rest: Sequence[np.ndarray], counts: np.ndarray) -> np.ndarray:
    """Score (17) of A_ClosureLearn: for each pattern ``π`` (round ``i`` = ``len(prefix)``),
    ``min_{c_{i+1..k}} #errors on counts of G(h_1..h_{i−1}, π, c_{i+1}, …, c_k)``.

    ``table`` is G's truth table indexed by ``Σ_j a_j 2^j``; ``prefix`` is ``(i, N)``, ``rest``
    lists the label matrices of ``H_{i+1}..H_k``. Matched sensitivity ≤ 1 (notes ALG-6).
    """
    i = len(prefix)
    base = sum(prefix[j] << j for j in range(i)) if i else np.zeros(pats.shape[1], np.int64)
    comp = np.zeros((1, pats.shape[1]), np.int64)
    for j, lab in enumerate(rest):
        comp = (comp[:, None, :] + (lab[None, :, :] << (i + 1 + j))).reshape(-1, pats.shape[1])
    g = np.asarray(table, np.int64)[base[None, None, :] + (pats[:, None, :] << i) + comp[None]]
    errs = (counts[:, 0] * g).sum(-1) + (counts[:, 1] * (1 - g)).sum(-1)
    return errs.min(axis=1)


def relabelled_cells(d_counts: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    """Algorithm 2 step 4 (D̃: D's points with the labels of the chosen pattern), as cell
    counts: every example at ``x`` moves to ``(x, pattern[x])``. The ONE implementation of the
    relabeling step, used by the samplers and by the exact laws of A_RelabelAndLearn and
    A_ClosureLearn (issue 27: a bug in a second copy would be seen only by a loose bound)."""
    d_counts = np.asarray(d_counts)
    cells = np.zeros_like(d_counts)
    cells[np.arange(d_counts.shape[0]), np.asarray(pattern)] = d_counts.sum(1)
    return cells


def _outcomes(cells: np.ndarray, m: int) -> list[tuple[np.ndarray, float]]:
    """Law of the cell counts of ``m`` uniform draws with replacement from a multiset with cell
    multiplicities ``cells`` (the with-replacement subsample of Lemma 3.12)."""
    idx = np.flatnonzero(cells)
    p = cells[idx] / cells.sum()
    out = []
    for combo in itertools.combinations_with_replacement(range(len(idx)), m):
        k = np.bincount(np.asarray(combo, np.int64), minlength=len(idx))
        logp = math.lgamma(m + 1) + float(np.sum(k * np.log(p) - [math.lgamma(v + 1) for v in k]))
        full = np.zeros(cells.size, np.int64)
        full[idx] = k
        out.append((full, math.exp(logp)))
    return out


# ----------------------------------------------------------------------------- learner

@dataclass(frozen=True)
class EMLearner:
    """L-EM (notes ALG-1b): the exponential mechanism over ``cls`` with score ``#errors``.

    (ε, 0)-DP under substitution, proper; (α, β)-PAC for
    ``m ≥ max(4/(εα), 8/α)·ln(2|H|/β)`` (:meth:`sample_size`, derived in the notes).

    References
    ----------
    Seed 004, Proposition 3.13 and the generic learner after it (Kasiviswanathan et al. 2011).
    """

    cls: ConceptClass
    epsilon: float = 1.0
    labels: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cls, ConceptClass) or len(self.cls) == 0:
            raise InvalidArgument(f"cls={fmt(self.cls)} must be a non-empty ConceptClass")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "labels", class_labels(self.cls))

    def log_pmf(self, counts: np.ndarray) -> np.ndarray:
        """Exact log-probabilities of the hypothesis indices given a count table."""
        return ExponentialMechanism(self.epsilon).log_probabilities(
            -error_counts(self.labels, counts).astype(float))

    def sample(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One hypothesis index per count table of ``counts`` (``(size, N, 2)``), Gumbel-max."""
        logits = -0.5 * self.epsilon * error_counts(self.labels, counts)
        return np.argmax(logits + rng.gumbel(size=logits.shape), axis=1).astype(np.int64)

    def sample_size(self, alpha: float, beta: float) -> int:
        """Derived realizable PAC sample size ``max(4/(εα), 8/α)·ln(2|H|/β)`` (notes ALG-1b)."""
        return math.ceil(max(4 / (self.epsilon * alpha), 8 / alpha)
                         * math.log(2 * len(self.cls) / beta))


@dataclass(frozen=True)
class CellCountLearner:
    """An extremal ε-DP inner learner (issue 27): it outputs hypothesis ``h_in`` or ``h_out``
    of ``cls`` only, as a function of ``g`` = the number of input records in the labelled
    ``cells``: ``Pr[h_in] = e^{ε(g−g0+1)}/(1+e^ε)`` for ``g < g0`` and
    ``1 − e^{−ε(g−g0)}/(1+e^ε)`` for ``g ≥ g0``. One substitution moves g by at most 1 and
    each output's probability by a factor at most e^ε, so it is (ε, 0)-DP on inputs of any
    size. Useless as a PAC learner; it is the form of the optimisers of the linear programme
    "supremum of the pipeline's loss over all ε-DP inner learners" at the tested pairs
    (``properties/closure/independent.py``), so the pipeline built on it attains that
    supremum.

    References
    ----------
    Seed 004, Theorem 6.1 and Lemma 7.2 (their premise: any (1, δ)-DP learner A), Definition 3.3.
    """

    cls: ConceptClass
    cells: tuple[tuple[int, int], ...]
    g0: int
    h_in: int = 0
    h_out: int = 1
    epsilon: float = 1.0
    labels: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cls, ConceptClass) or len(self.cls) < 2:
            raise InvalidArgument(f"cls={fmt(self.cls)} must be a ConceptClass of size >= 2")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "labels", class_labels(self.cls))
        for name in ("h_in", "h_out"):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v < len(self.cls):
                raise InvalidArgument(f"{name}={fmt(v)} must be an index into cls")
        if self.h_in == self.h_out:
            raise InvalidArgument(f"h_out={self.h_out} must differ from h_in")
        if not isinstance(self.g0, int) or self.g0 < 0:
            raise InvalidArgument(f"g0={fmt(self.g0)} must be an int >= 0")
        cells = tuple((int(x), int(y)) for x, y in self.cells)
        if not cells or any(not 0 <= x < self.cls.n or y not in (0, 1) for x, y in cells):
            raise InvalidArgument(f"cells={fmt(self.cells)} must be (x, y) cells of the domain")
        object.__setattr__(self, "cells", cells)

    def _p_in(self, counts: np.ndarray) -> np.ndarray:
        c = np.asarray(counts)
        g = sum(c[..., x, y] for x, y in self.cells)
        e = self.epsilon
        return np.where(g < self.g0, np.exp(e * (g - self.g0 + 1.0)) / (1 + math.exp(e)),
                        1 - np.exp(-e * np.maximum(g - self.g0, 0)) / (1 + math.exp(e)))

    def log_pmf(self, counts: np.ndarray) -> np.ndarray:
        """Exact log-probabilities of the hypothesis indices given one count table."""
        p = float(self._p_in(counts))
        out = np.full(len(self.cls), -np.inf)
        out[self.h_in], out[self.h_out] = math.log(p), math.log1p(-p)
        return out

    def sample(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One hypothesis index per count table of ``counts`` (``(size, N, 2)``)."""
        p = self._p_in(counts)
        return np.where(rng.random(p.shape) < p, self.h_in, self.h_out).astype(np.int64)


def _digest(values: np.ndarray) -> int:
    """Stable 24-bit code of an int sequence (released T̃ of BUG-7; small enough for every
    report serialiser)."""
    raw = hashlib.blake2b(np.ascontiguousarray(values, np.int64).tobytes(), digest_size=3)
    return int.from_bytes(raw.digest(), "little")


def _draw(probs: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(probs)
    return np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right"),
                      len(probs) - 1)


def _subsample_counts(cells: np.ndarray, m: int, size: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``size`` count tables of ``m`` with-replacement draws from ``cells`` (``(N, 2)``)."""
    flat = cells.reshape(-1)
    return rng.multinomial(m, flat / flat.sum(), size=size).reshape(size, *cells.shape)


