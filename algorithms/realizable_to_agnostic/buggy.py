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
* :class:`ErmBaseAgnostic` (B2, ``erm_base``): Algorithm 2 whose base learner is the
  deterministic smallest consistent threshold of ``T^h`` (not DP): outputs only one side of a
  pair can produce (caught by the Lemma 3.1 claim test, support mismatch).
* :class:`FirstKAgnostic` (B3, ``first_k``): Algorithm 2 whose ``T`` is the first ``k``
  records of ``S`` instead of a uniform size-``k`` subset (order-dependent, so only ``pmf`` /
  ``conditional`` / ``sample`` on one dataset; ``run_counts`` and ``run_iid`` are refused).
* :class:`ReleaseVotesP`, :class:`ReleaseVotesPrediction` (B13, ``release_votes``): Procedure
  P / ``A_AgnPred`` releasing the vote count ``u`` instead of the aggregator's answer.
* :class:`PoissonAgnostic` (B12, ``poisson``): Algorithm 2 with Poisson sampling of ``T`` (each
  index kept independently with probability ``ε``, so ``|T|`` is random; conditioned on ``W``
  being non-empty), outside Lemma 3.1's proof (notes §6.18). A documented non-violation, not a
  mutant: exact losses at the reference's level (``tests/realizable_to_agnostic/
  test_bug_figures.py``). Its exact law enumerates :func:`poisson_tables`.

Deliberately broken code lives here, not in the reference modules, so that the reference stays
the paper's text (and the mutation benchmark, which does not mutate this file, measures the
claim tests against the reference only).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 2, Lemma 3.1, Lemma 4.1, Theorem 4.2; notes
``shared/research/seed-000.md`` §6.1, §6.18, §7 B3, B12, B13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_int

from .agnostic import Agnostic, subset_size
from .agnostic_prediction import AgnosticPrediction, ProcedureP
from .core import as_dataset, as_index_set, counts, prefix
from .tables import _comb_columns, _scatter, bounded_compositions

__all__ = ["ErmBaseAgnostic", "FirstKAgnostic", "PoissonAgnostic", "ReleaseVotesP",
           "ReleaseVotesPrediction", "SortedPartitionP", "SortedPartitionPrediction",
           "poisson_tables", "sorted_hits", "sorted_portions"]


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


def _reference_only(bug: str, name: str, mutant: str) -> None:
    if bug != "reference":
        raise InvalidArgument(f"bug={bug!r} must be 'reference' ({name} is itself the "
                              f"{mutant} mutant)")


def poisson_tables(cs: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Count tables of a Poisson sub-sample (each record kept independently w.p. ``rate``),
    conditioned on ``W`` being non-empty (``|T| < n``), with their probabilities."""
    flat = np.asarray(cs).reshape(-1)
    cells = np.flatnonzero(flat)
    caps = flat[cells].tolist()
    rows = bounded_compositions(flat[cells])
    n, kk = sum(caps), rows.sum(1)
    logc = _comb_columns(caps, rows, log=True).sum(1)
    logp = logc + kk * math.log(rate) + (n - kk) * math.log1p(-rate)
    keep = kk < n
    p = np.exp(logp[keep] - logp[keep].max())
    return _scatter(cells, rows[keep], np.shape(cs)), p / p.sum()


@dataclass(frozen=True)
class ErmBaseAgnostic(Agnostic):
    """Algorithm 2 with a non-private base learner (B2): the smallest threshold consistent with
    ``T^h`` (deterministic) for ``learner="em"``; ``"rr"`` is unchanged.

    References
    ----------
    Seed 000, Algorithm 2, Lemma 3.1; notes §7 B2.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "ErmBaseAgnostic", "erm_base")

    def _learner_logits(self, pl_a: np.ndarray, pl: np.ndarray, present: np.ndarray) -> np.ndarray:
        if self.learner == "rr":
            return super()._learner_logits(pl_a, pl, present)
        first = np.argmax(pl[:, None, :] == pl_a[..., None], axis=-1)
        return np.where(np.arange(self.domain + 1) == first[..., None], 0.0, -np.inf)

    def _learner_weights(self, pl_a: np.ndarray, pl: np.ndarray,
                         present: np.ndarray) -> np.ndarray:
        return np.exp(self._learner_logits(pl_a[:, None], pl, present)[:, 0, :])


@dataclass(frozen=True)
class FirstKAgnostic(Agnostic):
    """Algorithm 2 whose ``T`` is the first ``k = ⌈εn⌉`` records of ``S`` (B3): the records'
    order decides who is in ``T``, so the law is not a function of the count table.

    References
    ----------
    Seed 000, Algorithm 2, Lemma 3.1; notes §7 B3.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "FirstKAgnostic", "first_k")

    def _tables(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k, _ = self.sizes(s.shape[0])
        return counts(s[:k], self.domain)[None], np.ones(1)

    def run_counts(self, sc: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                           np.ndarray]:
        """Refused: a count table has no order."""
        raise InvalidArgument("bug='first_k' needs the dataset's order: use sample()")

    def run_iid(self, cell_law: Any, n: int, size: int, rng: np.random.Generator) -> tuple[
            np.ndarray, np.ndarray]:
        """Refused: ``T`` is not a fixed-size uniform subset."""
        raise InvalidArgument("bug='first_k' is not a fixed-size uniform subset: use "
                              "run_counts() or sample()")

    def _sample_dataset(self, s: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs on one dataset (``T`` fixed by the order; vectorised)."""
        ct, cw, k, w, cs = self._batch(s, self._tables(s)[0])
        rep = np.repeat
        return self._cond_sample(rep(ct, size, 0), rep(cw, size, 0), rep(k, size),
                                 rep(w, size), rep(cs, size, 0), rng)[1].astype(np.int64)


@dataclass(frozen=True)
class ReleaseVotesP(ProcedureP):
    """Procedure P releasing the vote count ``u`` instead of the aggregator's answer (B13).

    References
    ----------
    Seed 000, Lemma 4.1; notes §7 B13.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "ReleaseVotesP", "release_votes")

    def _answer_law(self, u_law: np.ndarray) -> np.ndarray:
        return u_law

    def _answers(self, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return u.astype(np.int64)


@dataclass(frozen=True)
class ReleaseVotesPrediction(AgnosticPrediction):
    """``A_AgnPred`` whose Procedure P releases the vote count ``u`` at the query (B13).

    References
    ----------
    Seed 000, Theorem 4.2, Lemma 4.1; notes §7 B13.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "ReleaseVotesPrediction", "release_votes")

    def _answer_law(self, u_law: np.ndarray) -> np.ndarray:
        return u_law

    def _answers(self, u: np.ndarray, rng: np.random.Generator, bug: str) -> np.ndarray:
        return u.astype(np.int64)


@dataclass(frozen=True)
class PoissonAgnostic(Agnostic):
    """Algorithm 2 with Poisson sampling of ``T`` (B12): each index kept w.p. ``ε``, ``|T|``
    random, ``W`` non-empty. No ``εn ≥ 1`` requirement (``|T|`` may be 0).

    References
    ----------
    Seed 000, Algorithm 2, Lemma 3.1; notes §6.18, §7 B12.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "PoissonAgnostic", "poisson")

    def sizes(self, n: int) -> tuple[int, int]:
        """The reference's ``(⌈εn⌉, n − k)`` (the *expected* size up to rounding) without its
        ``εn ≥ 1`` check: ``|T|`` is random here."""
        n = check_int(n, "n", minimum=2)
        k = subset_size(self.epsilon, n)
        if n - k < 1:
            raise InvalidArgument(f"n={n} too small: W = S minus T would be empty (k={k})")
        return k, n - k

    def _tables(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return poisson_tables(counts(s, self.domain), self.epsilon)

    def _index_set(self, index_set: Any, n: int) -> np.ndarray:
        """``|I|`` is random: any size ``< n`` (``W`` must stay non-empty)."""
        idx = as_index_set(index_set, n)
        if idx.size >= n:
            raise InvalidArgument(f"index_set has {idx.size} indices: W would be empty (n={n})")
        return idx

    def _draw_t(self, sc: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return rng.binomial(sc, self.epsilon)

    def run_iid(self, cell_law: Any, n: int, size: int, rng: np.random.Generator) -> tuple[
            np.ndarray, np.ndarray]:
        """Refused: ``|T|`` is random, not a fixed-size uniform subset."""
        raise InvalidArgument("bug='poisson' (PoissonAgnostic) is not a fixed-size uniform "
                              "subset: use run_counts() or sample()")

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs on one dataset (no size check at ``size = 0``)."""
        s = as_dataset(data, self.domain)
        if check_int(size, "size", minimum=0) == 0:
            return np.empty(0, dtype=np.int64)
        return super().sample(s, size, rng)


@dataclass(frozen=True)
class SortedPartitionP(ProcedureP):
    """Procedure P with positional portions of ``T^h`` sorted by ``x`` (B13).

    References
    ----------
    Seed 000, Lemma 4.1; notes §6.1, §7 B13.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        _reference_only(self.bug, "SortedPartitionP", "sorted_partition")

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
        _reference_only(self.bug, "SortedPartitionPrediction", "sorted_partition")

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
