"""The learners of paper 002: ``ItemLearner`` (Thm 3.4), ``UserLearner`` (Thm 4.6),
``ThresholdLearner`` (Thm 5.2). Each releases one hypothesis, with an exact law and a sampler.

* ``ItemLearner``: ``H ~ P``; exponential mechanism over ``H`` at ε with the surrogate score
  ``Q(h) = min_c E(c) + D(c, h)`` and count sensitivity 2 (the paper's Δ = 2/n):
  ``P[h] ∝ exp(−ε·Q(h)/4)``. Item-level data: a sequence of examples ``(x, y)``.
* ``UserLearner``: discard to ``m ≤ 1/α²``; ``η̂ ← PrivateMinError(ε/2, α/6)``; ``t`` from ``η̂``
  (Lemma 4.1 gap √m·α/4200); ``s = 0``; ``H ~ P``; exponential mechanism at ε/2 with
  ``Q(h) = min_c E_t(c) + D_0(c, h)``, count sensitivity 2: ``P[h] ∝ exp(−ε·Q(h)/8)``.
* ``ThresholdLearner``: discard to ``m ≤ 1/α²``; ``η̂ ← PrivateMinError(ε/2, α/6)``; ``t`` as
  above; ``T = ⌈log_{3/2}(2/α)⌉`` (a decision: the paper's log is not an integer, notes §6.4);
  ``PrivateThreshold(ε/2, T, t, θ = 2/3)``.

Outputs are truth-table codes (``ItemLearner``/``UserLearner``) or threshold indices; with
``transcript=True`` the user-level learners release ``j·2^S + output`` where ``η̂ = j/2^T`` (``S``
bits hold the output), the joint law the privacy proof composes.

Decisions (notes §6): β is not an argument — it enters the paper only through its sufficient n
and union-bound splits (β/5, β/7, β/4, β/T), which the tests replace by calibrated sizes
(§6.12); the §3 text's "sensitivity at least 1/n" is read as "at most 2/n" (Appendix B; §6.7);
Theorem 4.6's "as in the item-level (Theorem 4.6)" means Theorem 3.4; the representation is a
black box (§6.8, :mod:`.representation`); C is finite (truth tables, §6.9).

Mutant knobs (notes §5): ``sensitivity`` (B6: 1 instead of 2), ``accounting="item"`` (B1: the
user-level exponential mechanism scored on the flattened ``nm`` examples), ``sign=-1`` (B12:
``exp(+εq/2Δ)``), ``t_from="data"`` (B5: ``t`` from the non-private minimum error),
``stage_epsilon`` (B3: both stages at ε), ``discard="record"`` (issue 27: the per-user discard to
``m_eff`` examples applied to the flattened example list, :meth:`.data.Users.first`).

References
----------
Li–Wang–Ye (seed 002): Theorem 3.4 (Appendix B), Theorem 4.6 (Appendix C.4), Theorem 5.2
(Appendix D.2), Lemma 2.6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.mechanisms.primitives import _check_rng, _check_size
from algorithms.mechanisms.selection import ExponentialMechanism
from dpcheck.validation import check_choice, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .binomial import discard_m, learner_t
from .compare import PrivateMinError, _check_alpha
from .data import Users, as_items, as_users, codes
from .representation import Representation, trivial
from .scores import surrogate_scores, surrogate_scores_items, user_errors
from .threshold import PrivateThreshold

__all__ = [
    "ItemLearner",
    "ThresholdLearner",
    "UserLearner",
    "em_probabilities",
    "threshold_rounds",
]


def threshold_rounds(alpha: float) -> int:
    """``T = ⌈log_{3/2}(2/α)⌉`` (Theorem 5.2), so that ``(2/3)^T ≤ α/2``."""
    return max(1, math.ceil(math.log(2.0 / alpha) / math.log(1.5) - 1e-12))


def em_probabilities(scores: np.ndarray, epsilon: float, sensitivity: float,
                     sign: int = 1) -> np.ndarray:
    """Exponential mechanism, minimisation form: ``P[h] ∝ exp(−sign·ε·Q(h)/(2Δ))`` (Lemma 2.6)."""
    em = ExponentialMechanism(epsilon, sensitivity=sensitivity)
    return np.exp(em.log_probabilities(-sign * np.asarray(scores, dtype=float)))


def _mixture(rep: Representation, score_of: Any, epsilon: float, sensitivity: float,
             sign: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per class of the representation: (codes, EM probabilities)."""
    return [(codes(h), em_probabilities(score_of(h), epsilon, sensitivity, sign))
            for h in rep.classes]


def _mixture_pmf(parts: list[tuple[np.ndarray, np.ndarray]], weight: float = 1.0,
                 out: dict[int, float] | None = None, offset: int = 0) -> dict[int, float]:
    out = {} if out is None else out
    w = weight / len(parts)
    for cs, ps in parts:
        for c, p in zip(cs.tolist(), ps.tolist()):
            out[offset + c] = out.get(offset + c, 0.0) + w * p
    return out


def _mixture_sample(parts: list[tuple[np.ndarray, np.ndarray]], n: int,
                    gen: np.random.Generator) -> np.ndarray:
    which = gen.integers(len(parts), size=n)
    out = np.empty(n, dtype=np.int64)
    for j, (cs, ps) in enumerate(parts):
        sel = which == j
        k = int(sel.sum())
        if k:
            cdf = np.cumsum(ps)
            idx = np.searchsorted(cdf, gen.random(k) * cdf[-1], side="right")
            out[sel] = cs[np.minimum(idx, cs.size - 1)]
    return out


def _table(concepts: Any, domain: int) -> np.ndarray:
    table = np.asarray(concepts)
    if table.ndim != 2 or table.shape[1] != domain or not np.isin(table, (0, 1)).all():
        raise InvalidArgument(f"concepts must be a (k, {domain}) 0/1 truth table")
    return table.astype(np.int8)


@dataclass(frozen=True)
class ItemLearner:
    """Item-level ε-DP agnostic learner of Theorem 3.4 (exponential mechanism, surrogate score).

    Parameters
    ----------
    epsilon
        Privacy parameter.
    concepts
        (k, N) truth table of the finite class ``C``.
    representation
        The distribution ``P`` of ``H`` (default :func:`~.representation.trivial`: ``H = C``).
    sensitivity
        Count sensitivity of the score used by the mechanism (2 in the paper; bug B6: 1).
    sign
        +1 (reference) or −1 (bug B12: the mechanism favours high scores).
    data_dependent
        Bug B13: ``H`` = the concepts ``f_u`` with ``u`` an observed point (or 0), built from
        the data (assumes ``C`` is the thresholds table) — a support mismatch.
    """

    epsilon: float
    concepts: Any
    representation: Representation | None = None
    sensitivity: float = 2.0
    sign: int = 1
    data_dependent: bool = False
    _c: np.ndarray = field(init=False, repr=False, compare=False)
    _rep: Representation = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        c = np.asarray(self.concepts)
        object.__setattr__(self, "_c", _table(c, c.shape[-1] if c.ndim == 2 else 0))
        rep = self.representation or trivial(self._c)
        if rep.domain != self.domain:
            raise InvalidArgument(f"representation has domain {rep.domain}, C has {self.domain}")
        object.__setattr__(self, "_rep", rep)

    @property
    def domain(self) -> int:
        """``N``."""
        return int(self._c.shape[1])

    def scores(self, data: Any, hyps: np.ndarray) -> np.ndarray:
        """``Q(h) = min_c E(c) + D(c, h)`` for every row of ``hyps``."""
        return surrogate_scores(as_items(data, self.domain), self._c, hyps, 0, 0)

    def _parts(self, data: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        users = as_items(data, self.domain)
        rep = self._rep
        if self.data_dependent:  # B13: never do this (notes §2.6 item 5)
            seen = sorted({0, *users.x.ravel().tolist()})
            rep = Representation((self._c[seen],), "data-dependent")
        return _mixture(rep, lambda h: surrogate_scores(users, self._c, h, 0, 0),
                        self.epsilon, self.sensitivity, self.sign)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact law of the released code (mixed over ``H ~ P``)."""
        return _mixture_pmf(self._parts(data))

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent runs (``H`` drawn per run)."""
        return _mixture_sample(self._parts(data), _check_size(size), _check_rng(rng))

    def probabilities_counts(self, ones: Any, zeros: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        """The law of one run on each of ``B`` datasets given by their (B, N) label counts: per
        class of the representation (each drawn w.p. 1/#classes), its codes and the (B, |H|)
        exponential-mechanism probabilities (same scores and mechanism as :meth:`pmf`)."""
        ones, zeros = np.asarray(ones), np.asarray(zeros)
        if ones.ndim != 2 or ones.shape != zeros.shape or ones.shape[1] != self.domain:
            raise InvalidArgument(f"ones, zeros of shapes {ones.shape}, {zeros.shape} must be "
                                  f"(B, {self.domain})")
        if self.data_dependent:
            raise InvalidArgument("data_dependent=True has no batched law (H depends on z)")
        coef = ExponentialMechanism(self.epsilon, sensitivity=self.sensitivity).coefficient
        parts = []
        for h in self._rep.classes:
            u = -self.sign * surrogate_scores_items(ones, zeros, self._c, h).astype(float)
            a = coef * (u - u.max(axis=1, keepdims=True))
            p = np.exp(a)
            parts.append((codes(h), p / p.sum(axis=1, keepdims=True)))
        return parts

    def sample_counts(self, ones: Any, zeros: Any, rng: np.random.Generator, *,
                      parts: list[tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
        """One independent run on each of ``B`` datasets given by their label counts (the
        learner reads only these counts): (B,) codes, ``H`` drawn per run; the law of
        :meth:`sample` on any dataset with those counts (tested). ``parts``: the
        :meth:`probabilities_counts` of the same counts, if already computed."""
        gen = _check_rng(rng)
        parts = self.probabilities_counts(ones, zeros) if parts is None else parts
        b = parts[0][1].shape[0]
        which = gen.integers(len(parts), size=b)
        out = np.empty(b, dtype=np.int64)
        for j, (cs, ps) in enumerate(parts):
            sel = which == j
            if sel.any():
                cdf = np.cumsum(ps[sel], axis=1)
                v = gen.random(int(sel.sum())) * cdf[:, -1]
                idx = (cdf <= v[:, None]).sum(axis=1)
                out[sel] = cs[np.minimum(idx, cs.size - 1)]
        return out


@dataclass(frozen=True)
class UserLearner:
    """User-level ε-DP agnostic learner of Theorem 4.6.

    Parameters
    ----------
    epsilon, alpha
        Privacy and accuracy.
    m, concepts, representation
        Examples per user; (k, N) truth table of ``C``; ``P`` (default ``H = C``).
    transcript
        Release ``(η̂, h)`` jointly (encoded as one integer) instead of ``h``.
    sensitivity, sign, accounting, t_from, stage_epsilon, discard
        Mutant knobs (module docstring); defaults are the paper's.
    """

    epsilon: float
    alpha: float
    m: int
    concepts: Any
    representation: Representation | None = None
    transcript: bool = False
    sensitivity: float = 2.0
    sign: int = 1
    accounting: str = "user"
    t_from: str = "private"
    stage_epsilon: float | None = None
    discard: str = "user"
    _c: np.ndarray = field(init=False, repr=False, compare=False)
    _rep: Representation = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        c = np.asarray(self.concepts)
        object.__setattr__(self, "_c", _table(c, c.shape[-1] if c.ndim == 2 else 0))
        rep = self.representation or trivial(self._c)
        if rep.domain != self.domain:
            raise InvalidArgument(f"representation has domain {rep.domain}, C has {self.domain}")
        object.__setattr__(self, "_rep", rep)
        object.__setattr__(self, "accounting",
                           check_choice(self.accounting, "accounting", ("user", "item")))
        object.__setattr__(self, "t_from", check_choice(self.t_from, "t_from", ("private", "data")))
        object.__setattr__(self, "discard",
                           check_choice(self.discard, "discard", ("user", "record")))

    @property
    def domain(self) -> int:
        """``N``."""
        return int(self._c.shape[1])

    @property
    def m_eff(self) -> int:
        """``min(m, ⌊1/α²⌋)`` (the discard rule of Theorem 4.6)."""
        return discard_m(self.m, 1.0 / self.alpha**2)

    @property
    def half(self) -> float:
        """Budget of each stage (ε/2)."""
        return self.epsilon / 2 if self.stage_epsilon is None else self.stage_epsilon

    @property
    def estimator(self) -> PrivateMinError:
        """The first stage: ``PrivateMinError(ε/2, α/6)`` on the kept examples."""
        return PrivateMinError(self.half, self.alpha / 6, self.m_eff, self.domain, self._c,
                               discard=self.discard)

    @property
    def ledger(self) -> list[float]:
        """ε of every release: T calls of ε/(2T), then one exponential mechanism at ε/2."""
        return self.estimator.ledger + [self.half]

    def _t(self, eta_hat: float, users: Users) -> int:
        if self.t_from == "data":  # B5: t from the exact (non-private) minimum error
            eta_hat = float(user_errors(users, self._c, 0).min()) / max(users.n * users.m, 1)
        return learner_t(self.m_eff, eta_hat, self.alpha)

    def _parts(self, users: Users, t: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if self.accounting == "item":  # B1: flatten the nm examples, item-level score
            flat = Users(users.x.reshape(-1, 1), users.y.reshape(-1, 1), users.domain)
            return _mixture(self._rep, lambda h: surrogate_scores(flat, self._c, h, 0, 0),
                            self.half, self.sensitivity, self.sign)
        return _mixture(self._rep, lambda h: surrogate_scores(users, self._c, h, t, 0),
                        self.half, self.sensitivity, self.sign)

    def _split(self, data: Any) -> tuple[Users, dict[float, float]]:
        users = as_users(data, self.m, self.domain).first(self.m_eff, self.discard)
        return users, self.estimator.pmf(users)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact law of ``h`` (or of the transcript)."""
        users, eta = self._split(data)
        T, out = self.estimator.rounds, {}
        by_t: dict[int, list[tuple[float, float]]] = {}
        for e, p in eta.items():
            by_t.setdefault(self._t(e, users), []).append((e, p))
        for t, items in by_t.items():
            parts = self._parts(users, t)
            for e, p in items:
                off = int(round(e * (1 << T))) << self.domain if self.transcript else 0
                _mixture_pmf(parts, p, out, off)
        return {k: v for k, v in out.items() if v > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent runs of both stages."""
        n, gen = _check_size(size), _check_rng(rng)
        users = as_users(data, self.m, self.domain).first(self.m_eff, self.discard)
        eta = self.estimator.sample(users, n, gen)
        ts = np.array([self._t(float(e), users) for e in np.unique(eta)])
        t_of = dict(zip(np.unique(eta).tolist(), ts.tolist()))
        t_run = np.array([t_of[e] for e in eta.tolist()], dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        for t in np.unique(t_run):
            sel = t_run == t
            out[sel] = _mixture_sample(self._parts(users, int(t)), int(sel.sum()), gen)
        if self.transcript:
            T = self.estimator.rounds
            out += np.round(eta * (1 << T)).astype(np.int64) << self.domain
        return out

    def sample_datasets(self, data: Any, rng: np.random.Generator) -> np.ndarray:
        """One independent run on each dataset of a (B, n, m, 2) int array: (B,) codes, the
        law of :meth:`sample` on each (vectorised over datasets, :mod:`.batched`; tested)."""
        from .batched import user_learner_runs
        return user_learner_runs(self, data, rng)


@dataclass(frozen=True)
class ThresholdLearner:
    """User-level ε-DP agnostic learner for thresholds over ``{1..domain}`` (Theorem 5.2).

    Releases a threshold index ``u`` (``f_u(x) = 1[x > u]``), or the transcript ``(η̂, u)``.
    ``threshold_kwargs`` are passed to :class:`PrivateThreshold` (mutant knobs).
    """

    epsilon: float
    alpha: float
    m: int
    domain: int
    transcript: bool = False
    threshold_kwargs: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "alpha", _check_alpha(self.alpha))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1))

    @property
    def m_eff(self) -> int:
        """``min(m, ⌊1/α²⌋)``."""
        return discard_m(self.m, 1.0 / self.alpha**2)

    @property
    def rounds(self) -> int:
        """``T = ⌈log_{3/2}(2/α)⌉``."""
        return threshold_rounds(self.alpha)

    @property
    def estimator(self) -> PrivateMinError:
        """``PrivateMinError(ε/2, α/6)`` over the thresholds."""
        return PrivateMinError(self.epsilon / 2, self.alpha / 6, self.m_eff, self.domain)

    def search(self, t: int) -> PrivateThreshold:
        """Algorithm 1 at ``ε/2`` with ``T`` rounds, this ``t`` and ``θ = 2/3``."""
        return PrivateThreshold(self.epsilon / 2, self.rounds, t, self.m_eff, self.domain,
                                2.0 / 3.0, **dict(self.threshold_kwargs))

    @property
    def ledger(self) -> list[float]:
        """ε of every release: T' compares at ε/(2T'), then 4T releases at ε/(8T)."""
        return self.estimator.ledger + self.search(0).ledger()

    def _bits(self) -> int:
        return max(1, int(self.domain).bit_length())

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact law of ``u`` (or of the transcript)."""
        users = as_users(data, self.m, self.domain).first(self.m_eff)
        eta = self.estimator.pmf(users)
        Tm, out = self.estimator.rounds, {}
        cache: dict[int, dict[int, float]] = {}
        for e, p in eta.items():
            t = learner_t(self.m_eff, e, self.alpha)
            if t not in cache:
                cache[t] = self.search(t).pmf(users)
            off = int(round(e * (1 << Tm))) << self._bits() if self.transcript else 0
            for u, q in cache[t].items():
                out[off + u] = out.get(off + u, 0.0) + p * q
        return {k: v for k, v in out.items() if v > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent runs of both stages."""
        n, gen = _check_size(size), _check_rng(rng)
        users = as_users(data, self.m, self.domain).first(self.m_eff)
        eta = self.estimator.sample(users, n, gen)
        uniq, inv = np.unique(eta, return_inverse=True)
        t_run = np.array([learner_t(self.m_eff, float(e), self.alpha) for e in uniq])[inv]
        out = np.empty(n, dtype=np.int64)
        for t in np.unique(t_run):
            sel = t_run == t
            out[sel] = self.search(int(t)).sample(users, int(sel.sum()), gen)
        if self.transcript:
            out += np.round(eta * (1 << self.estimator.rounds)).astype(np.int64) << self._bits()
        return out

