"""Paper 004's private learners on finite classes, with exact output distributions.

* :class:`ExponentialLearner` — Algorithm 1 (``A_ExponentialMechanism``) used as the generic
  private proper learner of Kasiviswanathan et al.: score ``q(S, h) = #{i : h(x_i) ≠ y_i}``
  (sensitivity 1), ``P[h] ∝ exp(−ε q(S, h)/2)``. Built on
  :class:`~algorithms.mechanisms.selection.ExponentialMechanism` (log space, exact pmf). ``bug`` selects the
  buggy variants of the engineering notes: ``"no-half"`` (``exp(−ε q)``, the sensitivity
  misstated, 2ε-DP) and ``"sign"`` (``exp(+ε q/2)``, the sign of the proof of Lemma 5.3: still
  ε-DP, maximises the errors).
* :class:`SubsampledLearner` — Lemma 3.12 (Bun et al. 2015): on ``9m`` labelled examples, draw
  ``m`` of them i.i.d. uniformly (with replacement) and run the learner on them. Its ``pmf``
  enumerates the multinomial counts of the distinct records (exact; the inner learner must depend
  on its sample only through the multiset, as :class:`ExponentialLearner` does).
* :func:`relabel_pattern_pmf` — Step 3 of ``A_Relabel`` (Algorithm 2): the exponential mechanism
  with ε = 1 over the patterns ``Π_H(P)`` of H on the points P of ``D∘T``, scored on D.
  :func:`relabel_and_learn_pmf` is the exact output law of ``A_RelabelAndLearn`` (Algorithm 3)
  for an inner algorithm with a ``pmf``; :class:`LabelRandomizedResponse` is the worst-case
  inner algorithm of the notes (the RR label leaker).

A labelled sample is a sequence of pairs ``(x, y)`` with ``x ∈ {0..N−1}`` and ``y ∈ {0, 1}``
(a tuple of tuples or an ``(m, 2)`` integer array); neighbours substitute one pair (Def 3.3).

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Algorithm 1 and Proposition 3.13, Lemma 3.12,
Algorithms 2 and 3, Lemma 5.3 and Claim 5.4. F. McSherry, K. Talwar, FOCS 2007.
S. Kasiviswanathan, H. Lee, K. Nissim, S. Raskhodnikova, A. Smith, SICOMP 2011.
M. Bun, K. Nissim, U. Stemmer, S. Vadhan, FOCS 2015. Engineering notes
``shared/research/seed-004.md`` (§3 ALG-1, ALG-2, ALG-3, ALG-4; §5 T-EM, T-3.12, T-5.3, T-5.4).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.concepts import ConceptClass
from algorithms.mechanisms.primitives import _check_rng, _check_size
from algorithms.mechanisms.selection import ExponentialMechanism
from dpcheck.validation import fmt, check_epsilon, check_int, check_real
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument

__all__ = ["labelled_sample", "label_counts", "mistakes", "ExponentialLearner",
           "em_tail_bound", "SubsampledLearner"]

_BUGS = (None, "no-half", "sign")
#: Most multinomial count vectors :meth:`SubsampledLearner.pmf` enumerates.
MAX_COMPOSITIONS = 200_000


# ----------------------------------------------------------------------------- samples

def labelled_sample(data: Any, n: int) -> np.ndarray:
    """``data`` as an ``(m, 2)`` int64 array of pairs ``(x, y)``, ``x < n``, ``y ∈ {0, 1}``.

    Raises
    ------
    InvalidArgument
        If ``data`` is not a sequence of such pairs (the empty sample is allowed).
    """
    n = check_int(n, "n", minimum=1)
    msg = f"data={fmt(data)} must be a sequence of pairs (x, y), 0 <= x < {n}, y in {{0, 1}}"
    if isinstance(data, (str, bytes, Mapping)):
        raise InvalidArgument(msg)
    try:
        arr = np.asarray(data)
    except (TypeError, ValueError):
        raise InvalidArgument(msg) from None
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
        raise InvalidArgument(msg)
    arr = arr.astype(np.int64)
    bad_y = (arr[:, 1] != 0) & (arr[:, 1] != 1)
    if (arr[:, 0] < 0).any() or (arr[:, 0] >= n).any() or bad_y.any():
        raise InvalidArgument(msg)
    return arr


def label_counts(data: Any, n: int) -> np.ndarray:
    """``c[x, y]`` = number of occurrences of ``(x, y)`` in the sample, shape ``(n, 2)``."""
    arr = labelled_sample(data, n)
    out = np.zeros((n, 2), dtype=np.int64)
    np.add.at(out, (arr[:, 0], arr[:, 1]), 1)
    return out


def _bits(cls: ConceptClass) -> np.ndarray:
    """``b[i, x] = h_i(x)``, shape ``(|H|, n)``."""
    return np.array([[m >> x & 1 for x in range(cls.n)] for m in cls.masks], dtype=np.int64)


def _class(cls: Any) -> ConceptClass:
    if not isinstance(cls, ConceptClass) or len(cls) == 0:
        raise InvalidArgument(f"cls={fmt(cls)} must be a non-empty ConceptClass")
    return cls


def mistakes(cls: ConceptClass, data: Any) -> np.ndarray:
    """``q(S, h) = #{i : h(x_i) ≠ y_i}`` for every ``h`` of ``cls`` (in ``cls.masks`` order).

    References
    ----------
    Seed 004, §3 (after Proposition 3.13) and Example 5.2.
    """
    cls = _class(cls)
    c = label_counts(data, cls.n)
    b = _bits(cls)
    return b @ c[:, 0] + (1 - b) @ c[:, 1]


# ----------------------------------------------------------------------------- Algorithm 1

@dataclass(frozen=True, slots=True)
class ExponentialLearner:
    """Algorithm 1 as a learner: ``P[h] ∝ exp(−ε·q(S, h)/2)``, ``q`` = mistakes on S.

    Outputs are hypotheses (bitmasks of ``cls``). Privacy (Proposition 3.13 (i)): ε-DP under
    substitution of one labelled example, since ``q`` has sensitivity 1. Utility (Proposition
    3.13 (ii)): ``P[q(S, h) ≥ min_f q(S, f) + Δm] ≤ |H| exp(−εΔm/2)`` (:meth:`tail`,
    :func:`em_tail_bound`).

    Parameters
    ----------
    cls
        Non-empty finite class (the solution set H).
    epsilon
        Finite, > 0.
    bug
        None (the paper), ``"no-half"`` (weights ``exp(−ε q)``: the score sensitivity taken as
        1/2; 2ε-DP) or ``"sign"`` (weights ``exp(+ε q/2)``, as written in the proof of Lemma
        5.3: ε-DP, but it prefers the worst hypotheses).

    References
    ----------
    Seed 004, Algorithm 1 and Proposition 3.13; McSherry & Talwar, FOCS 2007; Kasiviswanathan
    et al., SICOMP 2011 (generic private learner). Notes §6 BUG-2, BUG-3.
    """

    cls: ConceptClass
    epsilon: float
    bug: str | None = None

    def __post_init__(self) -> None:
        _class(self.cls)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        if self.bug not in _BUGS:
            raise InvalidArgument(f"bug={fmt(self.bug)} must be one of {_BUGS}")

    @property
    def _mechanism(self) -> ExponentialMechanism:
        eps = 2.0 * self.epsilon if self.bug == "no-half" else self.epsilon
        sign = 1.0 if self.bug == "sign" else -1.0
        return ExponentialMechanism(eps, 1.0, score=lambda d: sign * mistakes(self.cls, d))

    @property
    def true_epsilon(self) -> float:
        """ε (2ε for ``bug="no-half"``): the supremum of the privacy loss."""
        return 2.0 * self.epsilon if self.bug == "no-half" else self.epsilon

    @property
    def claim(self) -> PureDP:
        """The claim of Proposition 3.13 (i): ε-DP (also what the buggy variants claim)."""
        return PureDP(self.epsilon)

    def scores(self, data: Any) -> np.ndarray:
        """``q(S, h)`` for every hypothesis, in ``cls.masks`` order."""
        return mistakes(self.cls, data)

    def log_probabilities(self, data: Any) -> np.ndarray:
        """``ln P[h]`` for every hypothesis, in ``cls.masks`` order."""
        return self._mechanism.log_probabilities(data)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law ``{mask: probability}``."""
        p = np.exp(self.log_probabilities(data))
        return {int(m): float(v) for m, v in zip(self.cls.masks, p)}

    def tail(self, data: Any, t: float) -> float:
        """Exact ``P[q(S, h) ≥ min_f q(S, f) + t]`` (Proposition 3.13 (ii) with ``t = Δm``)."""
        t = check_real("t", t)
        q = self.scores(data)
        p = np.exp(self.log_probabilities(data))
        return float(math.fsum(p[q >= q.min() + t - 1e-12].tolist()))

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs (masks, int64)."""
        idx = self._mechanism.sample(data, size, rng)
        return np.asarray(self.cls.masks, dtype=np.int64)[idx]


def em_tail_bound(size: int, epsilon: float, t: float) -> float:
    """``|H|·exp(−ε t/2)``, the bound of Proposition 3.13 (ii) with ``t = Δm``.

    References
    ----------
    Seed 004, Proposition 3.13 (ii).
    """
    k = check_int(size, "size", minimum=1)
    eps, tt = check_epsilon(epsilon), check_real("t", t)
    return k * math.exp(-eps * tt / 2.0)


# ----------------------------------------------------------------------------- Lemma 3.12

def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """All ``parts``-tuples of non-negative integers summing to ``total``."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total, -1, -1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


@dataclass(frozen=True, slots=True)
class SubsampledLearner:
    """``A′`` of Lemma 3.12: on ``9m`` examples, run ``learner`` on ``m`` i.i.d. uniform draws.

    The draws are with replacement, so the subsample's multiset is multinomial over the distinct
    records; ``learner`` must depend on its sample only through that multiset (its ``pmf`` and
    ``sample`` receive the subsample sorted). ``pmf`` is exact (a sum over the
    ``C(m + k − 1, k − 1)`` count vectors of the ``k`` distinct records, at most
    :data:`MAX_COMPOSITIONS`).

    Lemma 3.12 claims ``A′`` is (ε, δ)-DP when ``learner`` is. That holds for ε ≤ 1 (then
    :func:`~algorithms.mechanisms.subsampling.amplified_epsilon_with_replacement` ``(ε, m, 9m) ≤ ε``) and
    fails for large ε: a record drawn J ~ Bin(m, 1/(9m)) times leaks ``Jε``, and
    ``ln E[e^{εJ}] = m ln(1 + (e^ε − 1)/(9m)) > ε`` e.g. at ε = 4, m = 10.

    Parameters
    ----------
    learner
        An object with ``sample(data, size, rng)`` (and ``pmf(data)`` for :meth:`pmf`).
    m
        Subsample size ≥ 1; the input must have ``ratio·m`` examples.
    ratio
        9 in the paper.

    References
    ----------
    Seed 004, Lemma 3.12 (Bun, Nissim, Stemmer, Vadhan, FOCS 2015); notes §5 T-3.12, BUG-9.
    """

    learner: Any
    m: int
    ratio: int = 9

    def __post_init__(self) -> None:
        if not callable(getattr(self.learner, "sample", None)):
            raise InvalidArgument(f"learner={fmt(self.learner)} must have a .sample method")
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "ratio", check_int(self.ratio, "ratio", minimum=1))

    @property
    def n(self) -> int:
        """Required input size ``ratio·m``."""
        return self.ratio * self.m

    def _records(self, data: Any) -> tuple[list[tuple[int, int]], np.ndarray]:
        """Distinct records (sorted) and their multiplicities."""
        if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, (Sequence, np.ndarray)):
            raise InvalidArgument(f"data={fmt(data)} must be a sequence of (x, y) pairs")
        if len(data) != self.n:
            raise InvalidArgument(f"data has {len(data)} examples, expected {self.n} = "
                                  f"{self.ratio}·m")
        arr = labelled_sample(data, int(np.asarray(data)[:, 0].max()) + 1)
        rec, counts = np.unique(arr, axis=0, return_counts=True)
        return [(int(x), int(y)) for x, y in rec], counts

    @staticmethod
    def _subsample(records: list[tuple[int, int]],
                   picks: Sequence[int]) -> tuple[tuple[int, int], ...]:
        return tuple(r for r, k in zip(records, picks) for _ in range(int(k)))

    def pmf(self, data: Any) -> dict[Hashable, float]:
        """Exact output law: ``Σ_counts Mult(counts) · learner.pmf(subsample)``."""
        if not callable(getattr(self.learner, "pmf", None)):
            raise InvalidArgument("the inner learner has no pmf")
        records, counts = self._records(data)
        k = len(records)
        if math.comb(self.m + k - 1, k - 1) > MAX_COMPOSITIONS:
            raise InvalidArgument(f"{math.comb(self.m + k - 1, k - 1)} count vectors, at most "
                                  f"{MAX_COMPOSITIONS} are supported")
        logp = np.log(counts / counts.sum())
        acc: dict[Hashable, list[float]] = {}
        base = math.lgamma(self.m + 1)
        for picks in _compositions(self.m, k):
            lw = base + sum(j * lp - math.lgamma(j + 1) for j, lp in zip(picks, logp) if j)
            w = math.exp(lw)
            for out, p in self.learner.pmf(self._subsample(records, picks)).items():
                acc.setdefault(out, []).append(w * float(p))
        return {out: math.fsum(ps) for out, ps in acc.items()}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, each on a fresh subsample (grouped by count vector)."""
        records, counts = self._records(data)
        size, gen = _check_size(size), _check_rng(rng)
        picks = gen.multinomial(self.m, counts / counts.sum(), size=size)
        rows, inverse = np.unique(picks, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        out: np.ndarray | None = None
        for r, row in enumerate(rows):
            where = np.flatnonzero(inverse == r)
            part = np.asarray(self.learner.sample(self._subsample(records, row.tolist()),
                                                  where.size, gen))
            if out is None:
                out = np.empty((size, *part.shape[1:]), dtype=part.dtype)
            out[where] = part
        return out if out is not None else np.zeros(0, dtype=np.int64)
