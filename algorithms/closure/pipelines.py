"""Relabeling-based private learners of seed 004: A_Relabel, A_RelabelAndLearn,
A_PrivateAgnostic and A_ClosureLearn, on finite domains ``X = {0..N−1}``.

A labelled sample is an ``(n, 2)`` integer array of ``(x, y)`` rows (a sequence of pairs is
accepted). Everything except the output of a learner depends on a sample only through count
tables ``counts[x, y]`` and its support ``P`` (a bitmask over ``X``), so the deterministic part
(patterns ``Π_H(P)``, their scores and relabel probabilities) is computed once per input and
only the coins are vectorised. Every mechanism has ``sample(data, size, rng) -> int64 codes``
and an exact ``pmf(data)`` (enumeration of patterns, of the multinomial subsample counts and
of the learner's exact law), so audits get the exact loss as well.

The private PAC learner is the notes' stand-in **L-EM** (:class:`EMLearner`): the exponential
mechanism over a finite class with score ``#errors`` (ε = 1 by default; (ε, 0)-DP, proper).

Decisions (seed-004 notes §8): A runs on the *relabeled* sample (Algorithm 3's "A(S)" read as
A(S̃)); the D/T and chunk splits are positional; score (17) is evaluated on ``D_i`` (the
argument A_Relabel scores on); the consistent ``h̄`` of Algorithm 3 is a function of Ṽ, so
releasing Ṽ's labels covers it (post-processing); subsample size ``⌊|D|/9⌋`` with replacement.

Buggy variants (notes §6) for :class:`PrivateAgnostic`: ``"erm"`` (BUG-1: argmin instead of
EM), ``"relabel_epsilon"`` (BUG-5: relabel EM at the caller's ε = 10 instead of 1),
``"release_pattern"`` (BUG-6: the chosen pattern is output with f), ``"release_t"`` (BUG-7:
T̃ is published while privacy is claimed for all of S); issue 27's subtle mutants
``"relabel_eps_1_25"`` (relabel EM at 1.25), ``"inner_eps_1_25"`` (the inner learner at 1.25
times its ε), ``"one_more_draw"`` (A′ draws ⌊|D|/9⌋ + 1 rows).

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): Algorithms 1–5, Lemma 3.12, Proposition 3.13,
Lemma 5.3, Claim 5.4, Theorem 2.4 = Theorem 6.1, Lemma 7.2, Lemma 7.3, Theorem 7.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from algorithms.concepts import ConceptClass, _table
from algorithms.mechanisms.primitives import _check_rng, _check_size
from dpcheck.validation import fmt, check_int
from dpcheck.errors import InvalidArgument

from .relabel import (BUG5_EPSILON, BUGS, OVERSPEND, CellCountLearner, EMLearner, _digest, _draw,
                      _outcomes, _subsample_counts, as_sample, completion_scores, counts_of,
                      error_counts, patterns, relabel_distribution, relabelled_cells, support_of)
from .relabel_pmf import relabel_and_learn_pmf, relabel_pattern_pmf

__all__ = ["RelabelAndLearn", "PrivateAgnostic", "ClosureLearn"]


# ----------------------------------------------------------------------------- Algorithm 3

@dataclass(frozen=True)
class RelabelAndLearn:
    """A_RelabelAndLearn (Algorithm 3) with ``V`` fixed: ``data = D∘W`` (``|D| = d_size``).

    Output code ``f + |H_A|·Σ_j ṽ_j 2^j``: A's hypothesis index on S̃ = D̃∘Ṽ∘W̃ and Ṽ's labels
    (h̄ is a function of Ṽ). Lemma 5.3: (ε_A + 3, 4eδ)-DP w.r.t. D∘W for every fixed V (the
    proof gives ε_A + ln(4e)).

    One implementation of each step (issue 27): the pattern law is
    :func:`~algorithms.closure.relabel_pmf.relabel_pattern_pmf` (the law the exact Lemma 5.3 and
    Claim 5.4 tests check), :meth:`pmf` is
    :func:`~algorithms.closure.relabel_pmf.relabel_and_learn_pmf` with L-EM's exact law as the
    inner algorithm, and the sampler relabels with :func:`relabelled_cells` (the count-table
    relabeling of A_PrivateAgnostic and A_ClosureLearn), so a claim test comparing
    :meth:`sample` with :meth:`pmf` ties that step to the ordered relabeling of the exact law.

    References
    ----------
    Seed 004, Algorithm 3, Lemma 5.3.
    """

    cls: ConceptClass
    learner: EMLearner
    v: Any
    d_size: int

    def __post_init__(self) -> None:
        if not isinstance(self.learner, EMLearner) or self.learner.cls.n != self.cls.n:
            raise InvalidArgument("learner must be an EMLearner on the same domain")
        object.__setattr__(self, "v", as_sample(self.v, self.cls.n))
        object.__setattr__(self, "d_size", check_int(self.d_size, "d_size", minimum=1))

    def _split(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        s = as_sample(data, self.cls.n)
        if len(s) < self.d_size:
            raise InvalidArgument(f"data has {len(s)} rows < d_size={self.d_size}")
        return s[: self.d_size], s[self.d_size:]

    def _inner(self, s_tilde: tuple[tuple[int, int], ...]) -> dict[int, float]:
        """L-EM's exact law on the relabeled sample (the inner algorithm A)."""
        counts = counts_of(np.asarray(s_tilde, np.int64).reshape(-1, 2), self.cls.n)
        return dict(enumerate(np.exp(self.learner.log_pmf(counts)).tolist()))

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (:func:`relabel_and_learn_pmf`, outputs coded)."""
        d, w = self._split(data)
        h = len(self.learner.cls)  # (f, Ṽ) ↦ code is one-to-one (V's points are fixed)
        return {int(f) + h * sum(y << j for j, (_, y) in enumerate(vt)): p
                for (f, vt), p in relabel_and_learn_pmf(self.cls, d, self.v, w,
                                                        self._inner).items()}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. output codes (int64)."""
        size, rng = _check_size(size), _check_rng(rng)
        d, w = self._split(data)
        law = relabel_pattern_pmf(self.cls, d, np.concatenate([self.v, w]))
        masks = np.array(list(law), np.int64)
        pats = (masks[:, None] >> np.arange(self.cls.n)) & 1
        full = counts_of(np.concatenate([d, self.v, w]), self.cls.n)
        vcode = (pats[:, self.v[:, 0]] << np.arange(len(self.v))).sum(1)
        k = _draw(np.array(list(law.values())), size, rng)
        f = np.empty(size, np.int64)
        for j in np.unique(k):
            rows = np.flatnonzero(k == j)
            cells = np.broadcast_to(relabelled_cells(full, pats[j]), (len(rows), self.cls.n, 2))
            f[rows] = self.learner.sample(cells, rng)
        return f + len(self.learner.cls) * vcode[k]


# ----------------------------------------------------------------------------- Algorithm 4

@dataclass(frozen=True)
class PrivateAgnostic:
    """A_PrivateAgnostic (Algorithm 4): split S = D∘T positionally, relabel with the #errors
    score on D (EM at ε = 1 over Π_H(P)), draw ``⌊|D|/9⌋`` rows of D̃ with replacement, run
    the private learner (default L-EM over ``cls`` at ε = 1) and output its hypothesis index.

    Theorem 2.4 = 6.1 with Lemmas 3.12 and 5.3: for a (1, δ)-DP learner the pipeline is
    (4, 4eδ)-DP (proof constant 1 + ln(4e) ≈ 3.386). ``bug`` selects a variant of
    :data:`BUGS`; the variants that release extra data use output code ``f + |H_A|·extra``.

    References
    ----------
    Seed 004, Algorithm 4, Theorem 2.4 / 6.1, Lemma 3.12, Lemma 5.3, Claim 5.4.
    """

    cls: ConceptClass
    learner: EMLearner | CellCountLearner | None = None
    bug: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cls, ConceptClass) or len(self.cls) == 0:
            raise InvalidArgument(f"cls={fmt(self.cls)} must be a non-empty ConceptClass")
        if self.learner is None:
            object.__setattr__(self, "learner", EMLearner(self.cls, 1.0))
        if not isinstance(self.learner, (EMLearner, CellCountLearner)) \
                or self.learner.cls.n != self.cls.n:
            raise InvalidArgument("learner must be an EMLearner or CellCountLearner on the "
                                  "same domain")
        if self.bug is not None and self.bug not in BUGS:
            raise InvalidArgument(f"bug={self.bug!r} must be None or one of {BUGS}")
        if self.bug == "inner_eps_1_25":
            object.__setattr__(self, "learner", replace(
                self.learner, epsilon=OVERSPEND * self.learner.epsilon))

    def draws(self, d_size: int) -> int:
        """Rows A′ draws from D̃: ``⌊|D|/9⌋`` (one more under ``"one_more_draw"``)."""
        return d_size // 9 + (self.bug == "one_more_draw")

    def relabel(self, d_counts: np.ndarray, support: int) -> tuple[np.ndarray, np.ndarray]:
        """Patterns of H on P and their relabel probabilities (Algorithm 2 steps 1–3)."""
        pats = patterns(self.cls, support)
        eps = {"relabel_epsilon": BUG5_EPSILON, "relabel_eps_1_25": OVERSPEND}.get(
            self.bug or "", 1.0)
        return pats, relabel_distribution(pats, error_counts(pats, d_counts), epsilon=eps,
                                          erm=self.bug == "erm")

    def learn_counts(self, d_counts: np.ndarray, support: int, size: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``size`` runs on one D (given by counts) and support P: ``(f, pattern index,
        patterns)``. The count-table core shared by :meth:`sample` and utility trials."""
        pats, w = self.relabel(d_counts, support)
        m = self.draws(int(d_counts.sum()))
        if int(d_counts.sum()) < 9:
            raise InvalidArgument(f"|D|={int(d_counts.sum())} must be >= 9")
        k = _draw(w, size, rng)
        f = np.empty(size, np.int64)
        for j in np.unique(k):
            rows = np.flatnonzero(k == j)
            cells = relabelled_cells(d_counts, pats[j])
            f[rows] = self.learner.sample(_subsample_counts(cells, m, len(rows), rng), rng)
        return f, k, pats

    def _split(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        s = as_sample(data, self.cls.n)
        if len(s) % 2 or len(s) < 18:
            raise InvalidArgument(f"|S|={len(s)} must be even and >= 18")
        return s[: len(s) // 2], s[len(s) // 2:]

    def _extra(self, pats: np.ndarray, t: np.ndarray, support: int) -> np.ndarray:
        if self.bug == "release_pattern":
            return (pats << np.arange(self.cls.n)).sum(1) + (support << self.cls.n)  # (π, P)
        if self.bug == "release_t":
            return np.array([_digest(t[:, 0] * 2 + p[t[:, 0]]) for p in pats])  # T̃
        return np.zeros(len(pats), np.int64)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (patterns × multinomial subsample counts × L-EM's law)."""
        d, t = self._split(data)
        support = support_of(np.concatenate([d, t]))
        dc = counts_of(d, self.cls.n)
        pats, w = self.relabel(dc, support)
        extra, h, m = self._extra(pats, t, support), len(self.learner.cls), self.draws(len(d))
        out: dict[int, float] = {}
        for j in np.flatnonzero(w > 0):
            cells = relabelled_cells(dc, pats[j])
            for q, pq in _outcomes(cells.reshape(-1), m):
                probs = np.exp(self.learner.log_pmf(q.reshape(cells.shape)))
                for f in np.flatnonzero(probs > 0):
                    key = int(f) + h * int(extra[j])
                    out[key] = out.get(key, 0.0) + w[j] * pq * probs[f]
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. output codes (int64)."""
        size, rng = _check_size(size), _check_rng(rng)
        d, t = self._split(data)
        support = support_of(np.concatenate([d, t]))
        f, k, pats = self.learn_counts(counts_of(d, self.cls.n), support, size, rng)
        return f + len(self.learner.cls) * self._extra(pats, t, support)[k]


# ----------------------------------------------------------------------------- Algorithm 5

@dataclass(frozen=True)
class ClosureLearn:
    """A_ClosureLearn (Algorithm 5): ``S = S_1∘…∘S_k`` (equal positional chunks), round ``i``
    splits ``S_i = D_i∘T_i``, relabels with score (17) on ``D_i`` and class ``H_i``, draws
    ``⌊|D_i|/9⌋`` rows of D̃_i with replacement and runs L-EM over ``H_i`` (ε = 1).

    Output: the transcript ``(h_1, …, h_k)`` coded as ``Σ_i idx_i Π_{j<i} |H_j|`` (auditing the
    transcript is stronger than auditing ``G(h_1..h_k)``). Lemma 7.2 prints "(ε, O(δ))-DP,
    ε < 1"; the proof gives (O(1), O(δ)); derived: (4, 4eδ) by parallel composition.

    References
    ----------
    Seed 004, Algorithm 5, Lemma 7.2, Lemma 7.3, Theorem 7.1.
    """

    g: Any
    classes: tuple[ConceptClass, ...]
    table: tuple[int, ...] = field(init=False)
    learners: tuple[EMLearner, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cl = tuple(self.classes) if isinstance(self.classes, (list, tuple)) else ()
        if not cl or not all(isinstance(c, ConceptClass) and len(c) for c in cl) \
                or len({c.n for c in cl}) != 1:
            raise InvalidArgument("classes must be non-empty ConceptClasses on one domain")
        object.__setattr__(self, "classes", cl)
        object.__setattr__(self, "table", _table(self.g, len(cl)))
        object.__setattr__(self, "learners",
                           tuple(EMLearner(c, self.inner_scale) for c in cl))

    #: Issue 27 mutants (subclasses in :mod:`algorithms.closure.buggy`) override these: the
    #: relabel EM's ε (the paper: 1), extra rows A′ draws, a factor on the learners' ε.
    relabel_epsilon: ClassVar[float] = 1.0
    extra_draws: ClassVar[int] = 0
    inner_scale: ClassVar[float] = 1.0

    def with_learners(self, learners: Sequence[EMLearner | CellCountLearner]) -> ClosureLearn:
        """A copy whose round-``i`` inner learner is ``learners[i]`` (any ε-DP learner with
        ``log_pmf``/``sample``/``labels`` over ``classes[i]``; Algorithm 5 allows any private
        A_i), its ε times :attr:`inner_scale`."""
        ls = tuple(learners)
        if len(ls) != len(self.classes) or any(
                not isinstance(lr, (EMLearner, CellCountLearner)) or lr.cls != c
                for lr, c in zip(ls, self.classes)):
            raise InvalidArgument("learners must be one EMLearner or CellCountLearner per "
                                  "class, over that class")
        out = replace(self)
        object.__setattr__(out, "learners", tuple(
            replace(lr, epsilon=lr.epsilon * self.inner_scale) for lr in ls))
        return out

    def draws(self, d_size: int) -> int:
        """Rows A′ draws from D̃_i: ``⌊|D_i|/9⌋`` (+ :attr:`extra_draws`)."""
        return d_size // 9 + self.extra_draws

    @property
    def n(self) -> int:
        """Domain size."""
        return self.classes[0].n

    def round_law(self, i: int, prefix: Sequence[int], d_counts: np.ndarray,
                  support: int) -> tuple[np.ndarray, np.ndarray]:
        """Patterns of ``H_i`` on ``P_i`` and their relabel probabilities given ``h_{<i}``."""
        pats = patterns(self.classes[i], support)
        pre = np.array([self.learners[j].labels[h] for j, h in enumerate(prefix)],
                       np.int64).reshape(len(prefix), self.n)
        rest = [lr.labels for lr in self.learners[i + 1:]]
        return pats, relabel_distribution(pats, completion_scores(self.table, pre, pats, rest,
                                                                  d_counts),
                                          epsilon=self.relabel_epsilon)

    def chunks(self, data: Any) -> list[tuple[np.ndarray, int]]:
        """``(counts of D_i, support of S_i)`` for every round."""
        s = as_sample(data, self.n)
        k = len(self.classes)
        if len(s) % (2 * k) or len(s) // (2 * k) < 9:
            raise InvalidArgument(f"|S|={len(s)} must be a multiple of 2k={2 * k} with "
                                  "|D_i| >= 9")
        size = len(s) // k
        return [(counts_of(s[i * size: i * size + size // 2], self.n),
                 support_of(s[i * size: (i + 1) * size])) for i in range(k)]

    def _step_pmf(self, i: int, prefix: Sequence[int], dc: np.ndarray,
                  support: int) -> np.ndarray:
        pats, w = self.round_law(i, prefix, dc, support)
        out = np.zeros(len(self.classes[i]))
        for j in np.flatnonzero(w > 0):
            cells = relabelled_cells(dc, pats[j])
            for q, pq in _outcomes(cells.reshape(-1), self.draws(int(dc.sum()))):
                out += w[j] * pq * np.exp(self.learners[i].log_pmf(q.reshape(cells.shape)))
        return out

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact law of the transcript code."""
        ch = self.chunks(data)
        law: dict[tuple[int, ...], float] = {(): 1.0}
        for i, (dc, sup) in enumerate(ch):
            new: dict[tuple[int, ...], float] = {}
            for prefix, p in law.items():
                for h, ph in enumerate(self._step_pmf(i, prefix, dc, sup)):
                    if ph > 0:
                        new[prefix + (h,)] = p * ph
            law = new
        return {self.encode(np.array([k])).item(): p for k, p in law.items()}

    def encode(self, hs: np.ndarray) -> np.ndarray:
        """Transcript rows ``(size, k)`` → int64 codes."""
        radix = np.cumprod([1] + [len(c) for c in self.classes[:-1]]).astype(np.int64)
        return (np.asarray(hs, np.int64) * radix).sum(-1)

    def learn_chunks(self, ch: Sequence[tuple[np.ndarray, int]], size: int,
                     rng: np.random.Generator) -> np.ndarray:
        """``size`` transcripts ``(size, k)`` from per-round ``(D_i counts, S_i support)``."""
        hs = np.zeros((size, len(ch)), np.int64)
        for i, (dc, sup) in enumerate(ch):
            prefixes, inv = np.unique(hs[:, :i], axis=0, return_inverse=True)
            for g_idx, prefix in enumerate(prefixes):
                rows = np.flatnonzero(inv.reshape(-1) == g_idx)
                pats, w = self.round_law(i, prefix.tolist(), dc, sup)
                k = _draw(w, len(rows), rng)
                for j in np.unique(k):
                    sub = rows[k == j]
                    cells = relabelled_cells(dc, pats[j])
                    q = _subsample_counts(cells, self.draws(int(dc.sum())), len(sub), rng)
                    hs[sub, i] = self.learners[i].sample(q, rng)
        return hs

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. transcript codes (int64)."""
        size, rng = _check_size(size), _check_rng(rng)
        return self.encode(self.learn_chunks(self.chunks(data), size, rng))

    def hypothesis(self, hs: Sequence[int]) -> np.ndarray:
        """Labels of ``G(h_1..h_k)`` over the domain for one transcript."""
        a = sum(self.learners[i].labels[h] << i for i, h in enumerate(hs))
        return np.asarray(self.table, np.int64)[a]


