"""Buggy variants BUG-4 and BUG-8..BUG-15 of seed 004's relabeling learners (notes §6), as
thin wrappers/subclasses of the correct mechanisms in :mod:`algorithms.closure` and
:mod:`algorithms.closure.learners`. Each class documents the bug and its *true* effect, as
found by the tests in ``properties/closure/test_bugs.py``.

Privacy bugs
    * :class:`ErmClosureLearn` (BUG-1 in Algorithm 5): deterministic ERM relabeling per round.
    * :class:`UnsubsampledAgnostic` (BUG-8): A runs on all of D̃, on its first ``⌊|D|/9⌋``
      rows, or on ``⌊|D|/9⌋`` rows drawn *without* replacement. Not a privacy violation: still a
      (1, 0)-DP learner applied to a relabeled database, so Lemma 5.3 gives (1 + ln 4e, 0).
    * :func:`full_size_subsample` (BUG-9): A′ draws ``|D|`` rows (not ``|D|/9``) with
      replacement. A′ is no longer ε-DP (exact loss > ε at ε = 1).
    * :class:`ReusingClosureLearn` (BUG-10): every round of A_ClosureLearn uses the same
      ``D = first half of S`` (no partition): k-fold composition instead of parallel.
    * :class:`UnrelabeledClosureLearn` (BUG-12): A_i sees the original labels (no relabeling).
      Still DP (A′ is DP), a utility bug.
    * :class:`SortedSplitAgnostic` (BUG-13): data-dependent D/T split (sort by x, or positives
      first) so a substitution moves records across the split.
    * :class:`FullClassAgnostic` (BUG-14): EM over all of H (with multiplicities) or patterns
      built from D's points only. Not a privacy bug (EM over a data-independent set).
    * :func:`overleaking_rr` (BUG-15): an inner algorithm that claims (ε, δ) but leaks S̃ with
      probability ``factor·δ``.

Utility bugs
    * :class:`ErrorRateAgnostic` (BUG-4a): relabel score = error *rate* instead of #errors.
    * :class:`WrongCompletionClosureLearn` (BUG-11): score (17) minimises over completions from
      ``H_i`` (the current class) instead of ``H_{i+1}..H_k``.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Algorithms 2–5, Lemma 3.12, Lemma 5.3, Example 5.2,
Theorem 2.4 / 6.1, Lemma 7.2, Lemma 7.3; notes ``shared/research/seed-004.md`` §6.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .pipelines import ClosureLearn, PrivateAgnostic
from .relabel import (OVERSPEND, EMLearner, _draw, _outcomes, _subsample_counts, as_sample,
                      class_labels, completion_scores, counts_of, error_counts, patterns,
                      relabel_distribution)
from .learners import SubsampledLearner
from .relabel_pmf import LabelRandomizedResponse
from dpcheck.errors import InvalidArgument

__all__ = ["ErmClosureLearn", "ErrorRateAgnostic", "UnsubsampledAgnostic", "full_size_subsample",
           "ReusingClosureLearn", "WrongCompletionClosureLearn", "UnrelabeledClosureLearn",
           "SortedSplitAgnostic", "FullClassAgnostic", "overleaking_rr", "with_learner_epsilon",
           "SwappedArgumentsClosureLearn", "PrefixIgnoredClosureLearn"]

BUG8_MODES = ("all", "prefix", "without_replacement")
BUG13_MODES = ("sorted", "positives_first")
BUG14_MODES = ("full_class", "d_points")


def _support_of_counts(dc: np.ndarray) -> int:
    return int(sum(1 << int(x) for x in np.flatnonzero(dc.sum(1))))


# ----------------------------------------------------------------------------- BUG-4

@dataclass(frozen=True)
class ErrorRateAgnostic(PrivateAgnostic):
    """BUG-4a: A_Relabel's score is the error *rate* ``#errors/|D| ∈ [0, 1]`` (ε = 1).

    Privacy is fine (sensitivity 1/|D| ≤ 1) but the EM is ≈ uniform over the patterns, so the
    relabeled sample is labelled by a near-random pattern and agnostic utility collapses.

    References
    ----------
    Seed 004, Algorithm 2 step 3, Claim 5.4, Theorem 2.4 / 6.1; notes §6 BUG-4.
    """

    def relabel(self, d_counts: np.ndarray, support: int) -> tuple[np.ndarray, np.ndarray]:
        """Patterns and relabel probabilities with the rate score."""
        pats, _ = super().relabel(d_counts, support)
        rate = error_counts(pats, d_counts) / max(int(d_counts.sum()), 1)
        return pats, relabel_distribution(pats, rate)


# ----------------------------------------------------------------------------- BUG-8

@dataclass(frozen=True)
class UnsubsampledAgnostic(PrivateAgnostic):
    """BUG-8: the subsampling step of A_PrivateAgnostic is skipped: A runs on all of D̃
    (``mode="all"``), on the first ``⌊|D|/9⌋`` rows of D̃ (``mode="prefix"``), or on
    ``⌊|D|/9⌋`` rows of D̃ drawn *without* replacement (``mode="without_replacement"``).

    True effect: *not* a privacy violation — the output is a (1, 0)-DP learner applied to the
    relabeled database, so Lemma 5.3 still gives (1 + ln 4e, 0); only the utility argument for
    adversarial learners (footnote 8) is lost. Exact ``pmf``.

    References
    ----------
    Seed 004, Algorithm 4 step 3, Lemma 3.12, Lemma 5.3; notes §6 BUG-8.
    """

    mode: str = "all"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in BUG8_MODES:
            raise InvalidArgument(f"mode={self.mode!r} must be one of {BUG8_MODES}")

    def _q_counts(self, d: np.ndarray, pattern: np.ndarray) -> np.ndarray:
        rows = d if self.mode == "all" else d[: len(d) // 9]
        return counts_of(np.column_stack([rows[:, 0], pattern[rows[:, 0]]]), self.cls.n)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (patterns × L-EM's law on the deterministic Q)."""
        d, t = self._split(data)
        support = _support_of_counts(counts_of(np.concatenate([d, t]), self.cls.n))
        pats, w = self.relabel(counts_of(d, self.cls.n), support)
        out: dict[int, float] = {}
        for j in np.flatnonzero(w > 0):
            for q, pq in self._q_law(d, pats[j]):
                probs = np.exp(self.learner.log_pmf(q))
                for f in np.flatnonzero(probs > 0):
                    out[int(f)] = out.get(int(f), 0.0) + float(w[j] * pq * probs[f])
        return out

    def _q_law(self, d: np.ndarray, pattern: np.ndarray) -> list[tuple[np.ndarray, float]]:
        """Law of Q's count table: a point mass, or multivariate hypergeometric (m of |D|)."""
        if self.mode != "without_replacement":
            return [(self._q_counts(d, pattern), 1.0)]
        cells = counts_of(np.column_stack([d[:, 0], pattern[d[:, 0]]]), self.cls.n).reshape(-1)
        idx, m = np.flatnonzero(cells), len(d) // 9
        out = []
        for combo in itertools.product(*(range(min(int(cells[i]), m) + 1) for i in idx)):
            if sum(combo) == m:
                q = np.zeros(cells.size, np.int64)
                q[idx] = combo
                p = math.prod(math.comb(int(cells[i]), k) for i, k in zip(idx, combo))
                out.append((q.reshape(self.cls.n, 2), p / math.comb(len(d), m)))
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. hypothesis indices."""
        d, t = self._split(data)
        support = _support_of_counts(counts_of(np.concatenate([d, t]), self.cls.n))
        pats, w = self.relabel(counts_of(d, self.cls.n), support)
        k = _draw(w, size, rng)
        out = np.empty(size, np.int64)
        for j in np.unique(k):
            rows = np.flatnonzero(k == j)
            if self.mode == "without_replacement":
                cells = counts_of(np.column_stack([d[:, 0], pats[j][d[:, 0]]]), self.cls.n)
                q = rng.multivariate_hypergeometric(cells.reshape(-1), len(d) // 9,
                                                    size=len(rows)).reshape(-1, self.cls.n, 2)
            else:
                q = np.broadcast_to(self._q_counts(d, pats[j]), (len(rows), self.cls.n, 2))
            out[rows] = self.learner.sample(np.array(q), rng)
        return out


# ----------------------------------------------------------------------------- BUG-9

def full_size_subsample(learner: Any, n: int) -> SubsampledLearner:
    """BUG-9: A′ of Lemma 3.12 drawing ``n = |D|`` rows with replacement from ``n`` (not
    ``n/9``). True effect: amplification is lost and a record drawn J ~ Bin(n, 1/n) times
    leaks ≈ Jε, so A′ is not ε-DP (exact loss > ε at ε = 1, see the tests).

    References
    ----------
    Seed 004, Lemma 3.12; notes §6 BUG-9.
    """
    return SubsampledLearner(learner, n, ratio=1)


# ----------------------------------------------------------------------------- BUG-10/11/12

@dataclass(frozen=True)
class ReusingClosureLearn(ClosureLearn):
    """BUG-10: every round of A_ClosureLearn uses ``S_i = S`` (``D_i`` = first half of S)
    instead of disjoint chunks. True effect: sequential (k-fold) instead of parallel
    composition of the per-round Lemma 5.3 pipelines.

    References
    ----------
    Seed 004, Algorithm 5 step 1, Lemma 7.2; notes §6 BUG-10.
    """

    def chunks(self, data: Any) -> list[tuple[np.ndarray, int]]:
        """``(counts of D, support of S)`` repeated for every round."""
        s = as_sample(data, self.n)
        if len(s) % 2 or len(s) // 2 < 9:
            raise InvalidArgument(f"|S|={len(s)} must be even with |D| >= 9")
        item = (counts_of(s[: len(s) // 2], self.n), _support_of_counts(counts_of(s, self.n)))
        return [item] * len(self.classes)


@dataclass(frozen=True)
class ErmClosureLearn(ClosureLearn):
    """BUG-1 in A_ClosureLearn: round ``i`` relabels with the deterministic minimiser of score
    (17) (the first pattern of least score) instead of the exponential mechanism. True effect:
    the relabeled D̃_i jumps between patterns when one example moves the argmin, and A′ sees
    the jump: exact transcript loss 6.36 > 4 at |D_i| = 99 (AND of thresholds / negated
    thresholds on {0..3}), while at |D_i| ≤ 27 A′'s 1–3 draws hide it (≤ 1.27).

    References
    ----------
    Seed 004, Algorithm 5 step 2b (Algorithm 2 step 3), Lemma 7.2; notes §6 BUG-1.
    """

    def round_law(self, i: int, prefix: Sequence[int], d_counts: np.ndarray,
                  support: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``i``'s patterns and a point mass on the first minimiser of score (17)."""
        pats = patterns(self.classes[i], support)
        pre = np.array([self.learners[j].labels[h] for j, h in enumerate(prefix)],
                       np.int64).reshape(len(prefix), self.n)
        rest = [lr.labels for lr in self.learners[i + 1:]]
        return pats, relabel_distribution(pats, completion_scores(self.table, pre, pats, rest,
                                                                  d_counts), erm=True)


@dataclass(frozen=True)
class WrongCompletionClosureLearn(ClosureLearn):
    """BUG-11: score (17) minimises over completions ``c_{i+1..k}`` drawn from ``H_i`` (the
    current round's class) instead of ``H_{i+1}..H_k``. Privacy unchanged (the score still has
    matched sensitivity 1); utility fails for heterogeneous classes.

    References
    ----------
    Seed 004, Algorithm 5 score (17), Lemma 7.3; notes §6 BUG-11.
    """

    def round_law(self, i: int, prefix: Sequence[int], d_counts: np.ndarray,
                  support: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``i``'s patterns and relabel law with the wrong completion classes."""
        pats = patterns(self.classes[i], support)
        pre = np.array([self.learners[j].labels[h] for j, h in enumerate(prefix)],
                       np.int64).reshape(len(prefix), self.n)
        rest = [self.learners[i].labels] * (len(self.classes) - i - 1)
        return pats, relabel_distribution(pats, completion_scores(self.table, pre, pats, rest,
                                                                  d_counts))


@dataclass(frozen=True)
class UnrelabeledClosureLearn(ClosureLearn):
    """BUG-12: no relabeling — round ``i`` runs A′ (``⌊|D_i|/9⌋`` draws, L-EM over ``H_i``) on
    the original ``D_i``. True effect: still private (A′ is DP, chunks are disjoint), but A_i
    sees data that ``H_i`` cannot fit and ignores ``h_{<i}``: with tied best fits the rounds
    pick inconsistent pieces and ``G(h_1..h_k)`` errs often.

    References
    ----------
    Seed 004, Algorithm 5 steps 2–3, Lemma 7.3; notes §6 BUG-12.
    """

    def _step_pmf(self, i: int, prefix: Sequence[int], dc: np.ndarray,
                  support: int) -> np.ndarray:
        out = np.zeros(len(self.classes[i]))
        for q, pq in _outcomes(dc.reshape(-1), int(dc.sum()) // 9):
            out += pq * np.exp(self.learners[i].log_pmf(q.reshape(dc.shape)))
        return out

    def learn_chunks(self, ch: Sequence[tuple[np.ndarray, int]], size: int,
                     rng: np.random.Generator) -> np.ndarray:
        """``size`` transcripts; A′ on the original labels of every ``D_i``."""
        hs = np.zeros((size, len(ch)), np.int64)
        for i, (dc, _) in enumerate(ch):
            hs[:, i] = self.learners[i].sample(
                _subsample_counts(dc, int(dc.sum()) // 9, size, rng), rng)
        return hs


# ----------------------------------------------------------------------------- BUG-13

@dataclass(frozen=True)
class SortedSplitAgnostic(PrivateAgnostic):
    """BUG-13: the D/T split of A_PrivateAgnostic is data dependent: rows sorted by ``(x, y)``
    (``mode="sorted"``) or positives first (``mode="positives_first"``) before halving. One
    substitution can move records across the split. Exact ``pmf`` (inherited).

    References
    ----------
    Seed 004, Algorithm 4 step 1, Lemma 5.3; notes §6 BUG-13.
    """

    mode: str = "sorted"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in BUG13_MODES:
            raise InvalidArgument(f"mode={self.mode!r} must be one of {BUG13_MODES}")

    def _split(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        d, t = super()._split(data)
        s = np.concatenate([d, t])
        key = s[:, 0] * 2 + s[:, 1] if self.mode == "sorted" else (1 - s[:, 1]) * 2 * self.cls.n \
            + s[:, 0]
        s = s[np.argsort(key, kind="stable")]
        return s[: len(s) // 2], s[len(s) // 2:]


# ----------------------------------------------------------------------------- BUG-14

@dataclass(frozen=True)
class FullClassAgnostic(PrivateAgnostic):
    """BUG-14: the relabel EM runs over all of H with multiplicities (``mode="full_class"``)
    or over the patterns of H on D's points only (``mode="d_points"``; T's points get an
    arbitrary extension, which the output never uses).

    True effect: *not* a privacy bug — the EM runs over a set that does not depend on the
    substituted point (full class) or depends on D only, so the relabel stage is a standard
    ε = 1 EM and the pipeline is (1 + ε_A′, 0)-DP for ``full_class`` (better than Lemma 5.3).

    References
    ----------
    Seed 004, Algorithm 2 steps 1–3, Lemma 5.3; notes §6 BUG-14.
    """

    mode: str = "full_class"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in BUG14_MODES:
            raise InvalidArgument(f"mode={self.mode!r} must be one of {BUG14_MODES}")

    def relabel(self, d_counts: np.ndarray, support: int) -> tuple[np.ndarray, np.ndarray]:
        """EM over H (full class) or over ``Π_H(points of D)``."""
        if self.mode == "d_points":
            return super().relabel(d_counts, _support_of_counts(d_counts))
        pats = class_labels(self.cls)
        return pats, relabel_distribution(pats, error_counts(pats, d_counts))


# ----------------------------------------------------------------------------- BUG-15

def overleaking_rr(epsilon: float, delta: float, factor: float) -> Any:
    """BUG-15: an inner algorithm for :func:`~algorithms.closure.learners.relabel_and_learn_pmf`
    that *claims* (ε, δ)-DP but publishes the relabeled S̃ with probability ``factor·δ``
    (otherwise the RR label leaker at ε). Its true guarantee is (ε, factor·δ).

    References
    ----------
    Seed 004, Lemma 5.3 (c); notes §3 (L-leak), §6 BUG-15.
    """
    if not 0 <= factor * delta <= 1:
        raise InvalidArgument(f"factor*delta={factor * delta} must be in [0, 1]")
    rr, leak = LabelRandomizedResponse(epsilon), factor * delta

    def inner(s: tuple[tuple[int, int], ...]) -> dict[Any, float]:
        out: dict[Any, float] = {o: (1 - leak) * p for o, p in rr.pmf(s).items()}
        if leak:
            out[("leak", s)] = leak
        return out

    return inner


def with_learner_epsilon(cl: ClosureLearn, epsilon: float) -> ClosureLearn:
    """A copy of ``cl`` (correct or buggy) whose L-EM learners run at ``epsilon`` instead of 1
    (Algorithm 5 allows any (ε, δ)-DP learners A_i; large ε makes BUG-10 visible, notes §6).

    References
    ----------
    Seed 004, Algorithm 5, Lemma 7.2; notes §6 BUG-10.
    """
    out = replace(cl)
    object.__setattr__(out, "learners", tuple(EMLearner(c, epsilon) for c in cl.classes))
    return out


class SwappedArgumentsClosureLearn(ClosureLearn):
    """Issue 27: score (17) evaluates ``G`` with its two arguments swapped (``G(a_2, a_1)``;
    k = 2). Invisible for symmetric ``G`` (AND, OR: the test beds before issue 27); on
    ``G = a AND NOT b`` every run errs (measured failure 1.0 at α = 0.05).

    References
    ----------
    Seed 004, Algorithm 5 score (17), Lemma 7.3.
    """

    def round_law(self, i: int, prefix: Sequence[int], d_counts: np.ndarray,
                  support: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``i``'s relabel law with the argument order of ``G`` reversed."""
        pats = patterns(self.classes[i], support)
        pre = np.array([self.learners[j].labels[h] for j, h in enumerate(prefix)],
                       np.int64).reshape(len(prefix), self.n)
        rest = [lr.labels for lr in self.learners[i + 1:]]
        swapped = tuple(self.table[(a >> 1) | ((a & 1) << 1)] for a in range(4))
        return pats, relabel_distribution(pats, completion_scores(swapped, pre, pats, rest,
                                                                  d_counts))


class PrefixIgnoredClosureLearn(ClosureLearn):
    """Issue 27: round ``i`` scores its patterns as if ``h_{<i}`` were all-zero (the earlier
    hypotheses do not enter score (17)). Invisible when the second round ignores ``h_1``
    (OR with H₁ = H₂ up to ties); on ``G = a AND NOT b`` round 2 sees ``G(0, ·) ≡ 0``, all
    patterns tie and h₂ is uniform.

    References
    ----------
    Seed 004, Algorithm 5 score (17), Lemma 7.3.
    """

    def round_law(self, i: int, prefix: Sequence[int], d_counts: np.ndarray,
                  support: int) -> tuple[np.ndarray, np.ndarray]:
        """Round ``i``'s relabel law with ``h_{<i}`` replaced by the all-zero labelling."""
        pats = patterns(self.classes[i], support)
        pre = np.zeros((len(prefix), self.n), np.int64)
        rest = [lr.labels for lr in self.learners[i + 1:]]
        return pats, relabel_distribution(pats, completion_scores(self.table, pre, pats, rest,
                                                                  d_counts))


@dataclass(frozen=True)
class RelabelEps125ClosureLearn(ClosureLearn):
    """Issue 27 mutant: every round's relabel EM runs at ε = 1.25 instead of Algorithm 2's 1
    (a 25 % overspend of the relabel step). True effect: a privacy bug, invisible to the
    derived bound at |D_i| = 99 but caught by the supremum over all inner learners.

    References
    ----------
    Seed 004, Algorithm 2 step 3, Algorithm 5 step 2b, Lemma 7.2.
    """

    relabel_epsilon: ClassVar[float] = OVERSPEND


@dataclass(frozen=True)
class InnerEps125ClosureLearn(ClosureLearn):
    """Issue 27 mutant: the inner learners run at 1.25 times their ε (a 25 % overspend of A_i's
    budget). Caught by the supremum over all 1-DP inner learners with the extremal learner.

    References
    ----------
    Seed 004, Algorithm 5 step 2c, Lemma 7.2.
    """

    inner_scale: ClassVar[float] = OVERSPEND


@dataclass(frozen=True)
class OneMoreDrawClosureLearn(ClosureLearn):
    """Issue 27 mutant: A′ draws ⌊|D_i|/9⌋ + 1 rows of D̃_i (off by one).

    References
    ----------
    Seed 004, Algorithm 5 step 2c, Lemma 3.12, Lemma 7.2.
    """

    extra_draws: ClassVar[int] = 1
