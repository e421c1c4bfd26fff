"""Agnostic private prediction ``A_AgnPred(ε; S, x)`` (Theorem 4.2 / 1.2) and Procedure P as a
mechanism on its (realizable) input, over thresholds on ``{0..N−1}``.

``A_AgnPred`` (notes §3.7): steps 1–3 of Algorithm 2 (``I`` uniform of size ``k = ⌈εn⌉``,
``T^h ← A_Relabel(ε; T, W)``), then Procedure P at privacy 1 on ``T^h``: ``r = ⌈6 ln(4/α)⌉``
disjoint portions of ``n′ = ⌊k/r⌋`` points, ``g_i`` = a consistent threshold of portion ``i``, and
the query ``x`` answered by the reconstructed aggregator (two-outcome exponential mechanism on the
vote count ``u = #{i : g_i(x) = 1}``: ``P[1] = σ(ε_P(2u − r)/2)``, ``ε_P = 1``; prediction.py).

Decisions (the paper leaves them open; notes §6):

* **Partition** (§6.1, B13): a *uniformly random* partition of ``T^h`` — a uniform random
  permutation, portion ``i`` = positions ``[i n′, (i+1) n′)``. Random (not positional) so that
  Procedure P is symmetric in ``T^h`` and the swap coupling of Lemma 3.1 applies: one changed
  record of ``T^h`` changes at most one portion. Made in :func:`_portions` (sampler,
  portions drawn as successive uniform subsets of the remaining counts) and :func:`hits_law`
  (exact law); the positional variant is the mutant ``sorted_partition`` (:mod:`.buggy`).
* **Sizes** (§6.6): ``n′ = ⌊|T|/r⌋ = ⌊k/r⌋``; the ``k − r n′`` leftover points of the permuted
  ``T^h`` are *dropped* (not spread): Theorem 4.2's proof needs only ``|T| ≥ r n′``, and equal
  portions keep Lemma 4.1's "disjoint portions" literal.
* **Consistent learner** ``A′``: the *smallest* consistent threshold (the smallest ERM threshold;
  on realizable input this is ``1 + max{x labelled 0}``, or ``0``). Then ``g_i(x) = 0`` iff
  portion ``i`` holds a label-0 point at some ``x′ ≥ x``, so the vote count at ``x`` depends on
  the data only through ``m(x)`` = the number of label-0 points of ``T^h`` at ``≥ x`` and the
  partition: ``u = r − hits(m)``, ``hits`` = number of portions that receive one of those ``m``
  points. Its law is computed exactly (``hits_law``); this makes the pmf exact.
* **Coins** (§6.9): every call ``A(S, x)`` is a *fresh run*: ``I``, ``h``, the partition and
  the aggregator coin are all drawn anew per query. Against Definition 2.8: privacy is per query
  ("for any x, A(S, x) is DP w.r.t. S"), the same under either choice; ``err_D(A(S, ·))`` is
  over ``(x, y) ~ D`` *and* A's coins, so with fresh runs it is ``E_run[err_D(run)]``, the
  average over ``(I, h, partition)`` of one run's error. Theorem 4.2's proof conditions on one
  ``(I, h)`` and bounds a single run: ``err_D(run) ≤ inf_c err_D(c) + 2α`` with probability
  ``≥ 1 − 2β`` over ``S`` and the run. Definition 2.8's form follows by Markov: with
  ``B(S) = P_run[err_D(run) > inf + 2α | S]``, ``E_S B ≤ 2β``, so ``P_S[E_run err_D ≤ inf + 2α
  + γ] ≥ 1 − 2β/γ`` for any ``γ ∈ (0, 1]`` (e.g. ``γ = √(2β)``) — a constant-factor change of
  ``α, β`` that the theorem's "adjusting ε, α, β by constant factors" absorbs. The utility
  checks (:meth:`AgnosticPrediction.answer_probabilities`) draw one run and integrate only the
  aggregator coin exactly: the proof's per-run statement.
* **Multi-query use** (§6.9): not claimed by the paper (Lemma 4.1 is per query). With fresh
  runs, ``Q`` answers on one ``S`` compose to at most ``Q`` times the per-query bound
  (:meth:`AgnosticPrediction.sample_queries`, ``shared_run=False``). Answering several queries
  from one run (``shared_run=True``) has no privacy claim; its single-query form is the mutant
  ``repeat_query``, which the per-query audit catches.
* ``|T| ≥ r`` is required (otherwise portions are empty); ranges of Algorithm 2 as in
  agnostic.py (``0 < ε ≤ 1/3``, ``εn ≥ 1``, ``n − k ≥ 1``).
* **|W| size, sum vs max** (§6.11c): Theorem 4.2's proof asks ``|W| ≥ C2(VC + ln(1/β))/α² +
  |T|/(6ε)`` (a *sum*), Claim 3.2 only the *max* of the two terms. The sum is sufficient and is
  what the utility check's size uses (``properties/realizable_to_agnostic/test_prediction.py``,
  explicit constants derived there); the algorithm itself enforces only the ranges above.

Mutants (notes §7 B2, B13): ``release_votes`` (outputs ``u``; subclasses in :mod:`.buggy`),
``bagging`` (overlapping portions: each a bootstrap sample of size ``k`` of ``T^h``), ``no_half`` (aggregator
``exp(ε_P u)``: 2-DP in ``T^h``), ``majority`` (deterministic majority ``1[2u ≥ r]``),
``sorted_partition`` (positional blocks of ``T^h`` sorted by ``x``; subclasses in
:mod:`.buggy`), ``repeat_query`` (one run,
:data:`REPEATS` answers at ``x`` with fresh aggregator coins, released as their sum — a sufficient
statistic of the answer vector, so the privacy loss is that of the vector), ``sign_error``
(Algorithm 1 maximises the score; a utility bug), ``few_portions`` (``r = ⌈6 ln(4/α)/3⌉``),
and two relabeling bugs of agnostic.py (B11 ``uses_t_labels``: the score adds ``err_T`` with
``T``'s own labels; B5 ``em_eps_one``: Algorithm 1 at privacy 1 instead of ``ε``).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithms 1–2, Lemma 3.1, Lemma 4.1, Theorem 4.2 (Theorem 1.2
restated), Definition 2.8; C. Dwork, V. Feldman, "Privacy-preserving prediction", COLT 2018;
notes ``shared/research/seed-000.md`` §3.6, §3.7, §4.1 P9, §4.2 U7, §6, §7 B2, B13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_choice, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .agnostic import Agnostic, relabel_log_probs
from .bounds import prediction_rounds
from .core import as_count_tables, as_dataset, counts, sample_rows
from .tables import draw_subset_counts, subset_tables

__all__ = ["PRED_BUGS", "P_BUGS", "REPEATS", "AgnosticPrediction", "ProcedureP", "hits_law"]

PRED_BUGS = ("reference", "bagging", "no_half", "scale_1_25", "majority",
             "repeat_query", "sign_error", "few_portions", "uses_t_labels", "em_eps_one",
             "threshold_off_by_one", "em_delta_t")
#: The mutants that concern Procedure P itself (the others act on Algorithm 1 or on ``r``).
P_BUGS = ("reference", "bagging", "no_half", "scale_1_25", "majority",
          "repeat_query")
#: Mutants of Algorithm 1 inside ``A_AgnPred`` (agnostic.py's variants of the same name).
_RELABEL_BUGS = ("sign_error", "uses_t_labels", "em_eps_one", "threshold_off_by_one",
                 "em_delta_t")
#: Aggregator exponent factors of the mutants: ``no_half`` (exp(u), B2) and ``scale_1_25``
#: (issue 27: exp(1.25·u/2), a 25 % overspend of Procedure P's ε).
_AGG_FACTOR = {"no_half": 2.0, "scale_1_25": 1.25}
#: Answers released by the ``repeat_query`` mutant.
REPEATS = 10
_MAX_TYPES = 500_000
_CHUNK = 8192          # type tables per vectorised block of the exact pmf (bounds the memory)


def hits_law(k: int, r: int, *, bug: str = "reference") -> np.ndarray:
    """``L[m, h] = P[hits = h]``: the number of portions receiving at least one of ``m`` marked
    points of ``T^h`` (``|T^h| = k``), for every ``m ∈ 0..k`` — shape ``(k+1, r+1)``.

    ``reference``: a uniform random partition into ``r`` portions of ``n′ = ⌊k/r⌋`` (leftover
    dropped): the marked points occupy a uniform ``m``-subset of the ``k`` slots; counted exactly
    by a dynamic programme over portions. ``bagging``: ``r`` independent bootstrap samples of
    size ``k``, so ``hits ~ Bin(r, 1 − (1 − m/k)^k)``.
    """
    k = check_int(k, "k", minimum=1)
    r = check_int(r, "r", minimum=1)
    if bug == "bagging":
        q = 1.0 - (1.0 - np.arange(k + 1) / k) ** k
        h = np.arange(r + 1)
        comb = np.array([math.comb(r, j) for j in h], float)
        return comb * q[:, None] ** h * (1 - q[:, None]) ** (r - h)
    npr = k // r
    f = np.zeros((k + 1, r + 1))                 # f[j, h]: ways, j marked slots, h portions hit
    f[0, 0] = 1.0
    ways = np.array([math.comb(npr, i) for i in range(npr + 1)], float)
    for _ in range(r):
        g = np.zeros_like(f)
        g[:, :] += f * ways[0]
        for i in range(1, npr + 1):
            g[i:, 1:] += f[:-i, :-1] * ways[i]
        f = g
    dump = k - r * npr
    out = np.zeros((k + 1, r + 1))
    for m in range(k + 1):
        for j in range(max(0, m - dump), m + 1):
            out[m] += f[j] * math.comb(dump, m - j)
        out[m] /= math.comb(k, m)
    return out


def _aggregator(u: np.ndarray, r: int, bug: str, epsilon: float = 1.0) -> np.ndarray:
    """``P[answer 1 | u]`` of the reconstructed aggregator: ``σ(ε(2u − r)/2)`` (prediction.py;
    the mutants' exponent factors :data:`_AGG_FACTOR`; ``majority``: ``1[2u ≥ r]``)."""
    if bug == "majority":                        # B2: deterministic, ties to 1
        return (2 * u >= r).astype(float)
    scale = epsilon * _AGG_FACTOR.get(bug, 1.0)
    return 1.0 / (1.0 + np.exp(-scale * (2 * u - r) / 2.0))


def _answer_law(u_law: np.ndarray, r: int, bug: str, epsilon: float = 1.0) -> np.ndarray:
    """Output law from the vote-count law ``u_law[..., u]`` (``u ∈ 0..r``); aggregator
    ``P[1] = σ(ε(2u − r)/2)``."""
    p1 = _aggregator(np.arange(r + 1), r, bug, epsilon)
    if bug == "repeat_query":
        j = np.arange(REPEATS + 1)
        comb = np.array([math.comb(REPEATS, i) for i in j], float)
        per = comb * p1[:, None] ** j * (1 - p1[:, None]) ** (REPEATS - j)   # (r+1, Q+1)
        return u_law @ per
    return np.stack([u_law @ (1 - p1), u_law @ p1], -1)


def _portions(cx: np.ndarray, r: int, bug: str, rng: np.random.Generator) -> np.ndarray:
    """Count tables over ``x`` of the ``r`` portions of ``T^h`` for a batch: ``cx`` (B, N)
    counts of ``T_X`` → (B, r, N). A uniform random partition into portions of ``⌊k/r⌋``
    (successive uniform subsets of the remaining counts; leftover dropped); ``bagging``: ``r``
    bootstrap samples of size ``k``."""
    b, n_dom = cx.shape
    k = int(cx[0].sum())
    npr = k // r
    if bug == "bagging":
        return np.stack([rng.multinomial(k, cx / k) for _ in range(r)], 1)
    left = cx.copy()
    port = np.zeros((b, r, n_dom), np.int64)
    for i in range(r):
        port[:, i] = draw_subset_counts(left, np.full(b, npr), rng)
        left -= port[:, i]
    return port


def _portion_thresholds(port: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Smallest consistent thresholds ``t_i`` of the portions ``port`` (B, r, N) of ``T^h``,
    ``a`` (B,) the relabel threshold (``T^h``'s labels are ``1[x ≥ a]``) → (B, r)."""
    x = np.arange(port.shape[-1])
    zero = (port > 0) & (x[None, None, :] < a[:, None, None])       # label-0 points of T^h
    return ((x + 1)[None, None, :] * zero).max(-1)


@dataclass(frozen=True)
class ProcedureP:
    """Procedure P (Lemma 4.1, reconstructed aggregator) as a mechanism on its input ``T^h``.

    ``data``: a realizable labelled dataset (labels ``1[x ≥ a]`` for some threshold ``a``);
    ``r`` random disjoint portions, the smallest consistent threshold per portion, and the query
    ``x`` answered with ``P[1] = σ(ε(2u − r)/2)``. Claimed ``ε``-DP under substitution of one
    record (one portion, one vote changes). ``bug`` one of :data:`P_BUGS`.

    References
    ----------
    Seed 000, Lemma 4.1; notes §3.6, §7 B13.
    """

    domain: int
    rounds: int
    query: int
    epsilon: float = 1.0
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        check_int(self.rounds, "rounds", minimum=1)
        check_int(self.query, "query", minimum=0)
        if self.query >= self.domain:
            raise InvalidArgument(f"query={self.query!r} must be < domain={self.domain}")
        check_epsilon(self.epsilon)
        check_choice(self.bug, "bug", P_BUGS)

    def _split(self, data: Any) -> tuple[np.ndarray, int]:
        s = as_dataset(data, self.domain)
        c = counts(s, self.domain)
        zero_x = np.nonzero(c[:, 0])[0]
        one_x = np.nonzero(c[:, 1])[0]
        if zero_x.size and one_x.size and zero_x.max() >= one_x.min():
            raise InvalidArgument("data must be realizable by a threshold (every label-0 x "
                                  "below every label-1 x)")
        if s.shape[0] < self.rounds:
            raise InvalidArgument(f"n={s.shape[0]} must be >= rounds={self.rounds}")
        return c, s.shape[0]

    def _portions(self, cx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The portions of a batch (:func:`_portions`; the ``sorted_partition`` mutant of
        :mod:`.buggy` overrides it)."""
        return _portions(cx, self.rounds, self.bug, rng)

    def _u_law(self, data: Any) -> np.ndarray:
        """Law of the vote count ``u = r − hits(m)``, ``m`` = label-0 points at ``≥ x``."""
        c, k = self._split(data)
        m = int(c[self.query:, 0].sum())
        return hits_law(k, self.rounds, bug=self.bug)[m][::-1]

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (bit; vote count for ``release_votes``; sum of answers for
        ``repeat_query``)."""
        law = self._answer_law(self._u_law(data))
        return {i: float(v) for i, v in enumerate(law) if v > 0}

    def _answer_law(self, u_law: np.ndarray) -> np.ndarray:
        """Output law from the vote-count law (:func:`_answer_law`; the ``release_votes``
        mutant of :mod:`.buggy` overrides it)."""
        return _answer_law(u_law, self.rounds, self.bug, self.epsilon)

    def _answers(self, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Answers drawn from vote counts ``u`` (:func:`_draw_answers`; the ``release_votes``
        mutant of :mod:`.buggy` overrides it)."""
        return _draw_answers(u, self.rounds, self.bug, rng, self.epsilon)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs (vectorised: partitions drawn as portion counts)."""
        c, _ = self._split(data)
        size = check_int(size, "size", minimum=0)
        cx = np.broadcast_to(c.sum(-1), (size, self.domain)).copy()
        a = np.full(size, int(c[:, 0].nonzero()[0].max()) + 1 if c[:, 0].any() else 0)
        t = _portion_thresholds(self._portions(cx, rng), a)
        u = (t <= self.query).sum(-1)
        return self._answers(u, rng)


def _draw_answers(u: np.ndarray, r: int, bug: str, rng: np.random.Generator,
                  epsilon: float = 1.0) -> np.ndarray:
    p1 = _aggregator(u, r, bug, epsilon)
    if bug == "majority":                        # deterministic: no coin drawn
        return p1.astype(np.int64)
    if bug == "repeat_query":
        return rng.binomial(REPEATS, p1).astype(np.int64)
    return (rng.random(u.shape) < p1).astype(np.int64)


@dataclass(frozen=True)
class AgnosticPrediction:
    """``A_AgnPred(ε; S, x)`` over thresholds on ``{0..domain−1}`` (Theorem 4.2).

    Parameters
    ----------
    domain
        ``N ≥ 2``.
    epsilon
        ``ε ∈ (0, 1/3]`` (sampling fraction and Algorithm 1's privacy parameter).
    alpha
        ``α ∈ (0, 1)``: ``r = ⌈6 ln(4/α)⌉`` portions (Lemma 4.1 at privacy 1).
    query
        The query point ``x``.
    bug
        ``"reference"`` or a mutant of :data:`PRED_BUGS`.

    Notes
    -----
    Per-query privacy bound derived from Lemma 3.1's proof with ``ε_A = 1``, ``δ_A = 0``:
    ``ln(e^ε + 4e²k/(n − k))`` (``bounds.lemma31_epsilon``).

    References
    ----------
    Seed 000, Theorem 4.2 and its proof, Lemma 3.1, Lemma 4.1; notes §3.7.
    """

    domain: int
    epsilon: float
    alpha: float
    query: int = 0
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_choice(self.bug, "bug", PRED_BUGS)
        Agnostic(self.domain, self.epsilon)      # validates domain and epsilon (Algorithm 2)
        prediction_rounds(self.alpha)
        check_int(self.query, "query", minimum=0)
        if self.query >= self.domain:
            raise InvalidArgument(f"query={self.query!r} must be < domain={self.domain}")

    @property
    def _algorithm2(self) -> Agnostic:
        return Agnostic(self.domain, self.epsilon)

    @property
    def rounds(self) -> int:
        """``r = ⌈6 ln(4/α)⌉`` (``few_portions``: ``⌈6 ln(4/α)/3⌉``)."""
        r = prediction_rounds(self.alpha)
        return math.ceil(r / 3) if self.bug == "few_portions" else r

    @property
    def _relabel_bug(self) -> str:
        return self.bug if self.bug in _RELABEL_BUGS else "reference"

    def _portions(self, cx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The portions of ``T^h`` for a batch (:func:`_portions`; the ``sorted_partition``
        mutant of :mod:`.buggy` overrides it)."""
        return _portions(cx, self.rounds, self.bug, rng)

    def sizes(self, n: int) -> tuple[int, int]:
        """``(k, |W|)``; raises ``InvalidArgument`` if ``k < r`` (empty portions)."""
        k, w = self._algorithm2.sizes(n)
        if k < self.rounds:
            raise InvalidArgument(f"|T|=k={k} must be >= r={self.rounds} portions "
                                  f"(n={n}, epsilon={self.epsilon}, alpha={self.alpha})")
        return k, w

    # ------------------------------------------------------------------ exact law
    def _types(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All type-count tables of ``T`` (multivariate hypergeometric, notes §4.4;
        :func:`.tables.subset_tables`, at most ``_MAX_TYPES`` of them): ``ct`` (V, N, 2) and
        their probabilities (V,)."""
        k, _ = self.sizes(s.shape[0])
        return subset_tables(counts(s, self.domain), k, limit=_MAX_TYPES)

    def _vote_law(self, ct: np.ndarray, cs: np.ndarray, n: int) -> np.ndarray:
        """Law of the vote count ``u`` given ``T`` (one row per type table): (V, r+1)."""
        k, w = self.sizes(n)
        v = ct.shape[0]
        kk, ww = np.full(v, k), np.full(v, w)
        lt, p = relabel_log_probs(ct, np.broadcast_to(cs, ct.shape) - ct, kk, ww,
                                  np.broadcast_to(cs, ct.shape), epsilon=self.epsilon,
                                  bug=self._relabel_bug)
        prob = np.exp(lt)                                              # (V, N+1) over a
        a = np.arange(self.domain + 1)
        x = self.query
        lo = p[:, x][:, None]
        hi = np.where(a[None, :] > x, p, lo)                           # label-0 positions [lo, hi)
        return self._votes_given_relabel(prob, lo, hi, k)

    def _votes_given_relabel(self, prob: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                             k: int) -> np.ndarray:
        """Vote-count law (V, r+1) from the relabel law ``prob`` (V, N+1) over ``a`` and the
        positions ``[lo, hi)`` of the label-0 points at ``≥ x`` in ``T^h`` sorted by ``x``: the
        random partition's :func:`hits_law` of ``m = hi − lo`` (the ``sorted_partition`` mutant
        of :mod:`.buggy` overrides it)."""
        law = hits_law(k, self.rounds, bug=self.bug)[:, ::-1]          # (k+1, r+1) over u
        return np.einsum("va,vau->vu", prob, law[hi - lo])

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law ``Σ_T P[T] Σ_h P[h | T] P[answer | T^h]`` (type tables of ``T``
        enumerated; the random partition handled by :func:`hits_law`)."""
        s = as_dataset(data, self.domain)
        ct, w = self._types(s)
        cs = counts(s, self.domain)
        u_law = sum(w[i:i + _CHUNK] @ self._vote_law(ct[i:i + _CHUNK], cs, s.shape[0])
                    for i in range(0, len(w), _CHUNK))
        law = self._answer_law(u_law)
        return {i: float(val) for i, val in enumerate(law) if val > 0}

    def _answer_law(self, u_law: np.ndarray) -> np.ndarray:
        """Output law from the vote-count law (:func:`_answer_law`; the ``release_votes``
        mutant of :mod:`.buggy` overrides it)."""
        return _answer_law(u_law, self.rounds, self.bug)

    def _answers(self, u: np.ndarray, rng: np.random.Generator, bug: str) -> np.ndarray:
        """Answers drawn from vote counts ``u`` (:func:`_draw_answers`; the ``release_votes``
        mutant of :mod:`.buggy` overrides it)."""
        return _draw_answers(u, self.rounds, bug, rng)

    # ------------------------------------------------------------------ sampler
    def run_votes(self, sc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One run per dataset of a batch given as count tables ``sc`` (B, N, 2), all of the
        same size ``n``: the vote counts ``u(x)`` at every ``x`` — shape (B, N).

        Raises
        ------
        InvalidArgument
            If ``sc`` is not a non-empty ``(B, domain, 2)`` table of integer counts ``≥ 0``
            (:func:`.core.as_count_tables`) with equal sizes ``n``, or ``n`` fails
            :meth:`sizes`.
        """
        sc = as_count_tables(sc, self.domain)
        n = int(sc[0].sum())
        if (sc.sum((1, 2)) != n).any():
            raise InvalidArgument("all datasets of a batch must have the same size n")
        k, w = self.sizes(n)
        b = sc.shape[0]
        ct = draw_subset_counts(sc.reshape(b, -1), np.full(b, k), rng).reshape(sc.shape)
        lt, _ = relabel_log_probs(ct, sc - ct, np.full(b, k), np.full(b, w), sc,
                                  epsilon=self.epsilon, bug=self._relabel_bug)
        a = sample_rows(np.exp(lt), rng)
        t = _portion_thresholds(self._portions(ct.sum(-1), rng), a)           # (B, r)
        return (t[:, :, None] <= np.arange(self.domain)[None, None, :]).sum(1)

    def answer_probabilities(self, sc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``P[A(S, x) = 1 | run]`` for every ``x``, one run per dataset (B, N): the aggregator
        coin integrated exactly (``majority``: 0/1)."""
        return _aggregator(self.run_votes(sc, rng), self.rounds, self.bug)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. answers to the query (each a fresh run; vectorised)."""
        s = as_dataset(data, self.domain)
        size = check_int(size, "size", minimum=0)
        if size == 0:
            self.sizes(s.shape[0])
            return np.empty(0, dtype=np.int64)
        sc = np.broadcast_to(counts(s, self.domain), (size, self.domain, 2))
        u = self.run_votes(sc, rng)[:, self.query]
        return self._answers(u, rng, self.bug)

    def sample_queries(self, data: Any, queries: Any, size: int, rng: np.random.Generator, *,
                       shared_run: bool = False) -> np.ndarray:
        """Answers to several queries, shape ``(size, len(queries))``.

        ``shared_run=False`` (the paper's per-query algorithm): every answer is a fresh run, so
        ``Q`` answers compose to at most ``Q`` times the per-query bound. ``shared_run=True``:
        one run (``I``, ``h``, partition) per row answers all queries with fresh aggregator
        coins — *no* privacy claim covers this (notes §4.1 P9, §6.9; the ``repeat_query``
        mutant is its single-query form).
        """
        s = as_dataset(data, self.domain)
        size = check_int(size, "size", minimum=0)
        qs = np.asarray(queries, dtype=np.int64).reshape(-1)
        if qs.size == 0 or (qs < 0).any() or (qs >= self.domain).any():
            raise InvalidArgument(f"queries={queries!r} must be a non-empty list of points in "
                                  f"0..{self.domain - 1}")
        if size == 0:
            self.sizes(s.shape[0])
            return np.empty((0, qs.size), dtype=np.int64)
        sc = np.broadcast_to(counts(s, self.domain), (size, self.domain, 2))
        if shared_run:
            u = self.run_votes(sc, rng)[:, qs]
        else:
            u = np.stack([self.run_votes(sc, rng)[:, q] for q in qs], 1)
        bug = "reference" if self.bug == "repeat_query" else self.bug
        return self._answers(u, rng, bug)
