"""Procedure E (Lemmas 2.12 / 2.13): draw ``m`` points uniformly *with replacement* from the input
and run an (ε, δ)-DP algorithm on them (the Lemma 2.12 proof's "random generalization of T"
means this random *generation*, notes §6.11). Exact output law: the drawn count table is multinomial
over the input's distinct ``(x, y)`` cells, so the compositions of ``m`` over those cells are
enumerated (``C(m + K − 1, K − 1)`` tables for ``K`` distinct cells, independent of ``n``;
:func:`.tables.compositions` and :func:`.tables.multinomial_log_pmf`, shared with
:mod:`.composite`).

Base algorithms (stand-ins, on the drawn count table ``c``):

* ``"em"``: the exponential-mechanism learner over thresholds on ``{0..N−1}`` with ``#errors``
  score (pure ε-DP, proper);
* ``"rr"``: randomized response on ``1[some drawn point at x = 0]`` (exactly ε-DP, but blind to
  *how many* draws hit ``x = 0``);
* ``"count"``: the clamped two-sided geometric mechanism on the number ``c_0`` of drawn points at
  ``x = 0`` (output ``clamp(c_0 + Z, 0, m)``, ``P[Z = z] ∝ e^{−ε|z|}``): exactly ε-DP in
  ``c_0`` and its likelihood ratio is ``e^{ε j}`` between counts ``j`` apart, so a record drawn
  ``j`` times costs ``j·ε`` — the adversarial base that makes Lemma 2.13 bite;
* ``"chain"``: the group-privacy-extremal (ε, δ)-DP base (issue 27): one bit, ``1`` with
  probability ``f(c_0) = δ·(e^{ε c_0} − 1)/(e^ε − 1)``, so ``f(c) = e^ε f(c − 1) + δ`` with
  equality along the whole chain of counts (``f(0) = 0``). Valid (ε, δ)-DP needs
  ``f(m) ≤ 1`` and ``(e^ε + 1)·f(m − 1) + δ ≤ 1`` (the complement event); checked. It
  attains the largest δ(ε′) any (ε, δ)-DP base can give Procedure E at the tested
  configurations (``properties/realizable_to_agnostic/test_lemmas.py``).

With ``delta > 0`` each base except ``"chain"`` additionally, with probability ``δ``,
releases ``c_0`` (an (ε, δ)-DP leak; codes after the base's own outputs); ``"chain"`` spends
its ``δ`` in the bit.

Ranges (decision, notes §6.5): :class:`WithReplacement` accepts any ``ε_p > 0`` and any input
size ``n ≥ 1``. Lemma 2.13's hypotheses (``ε_p ≤ 1``, ``n ≥ 2``, ``6ε_p m/n ≤ 1``) and Lemma
2.12's input size ``n ≥ 6ε_p m`` are enforced where the bound is claimed
(:func:`bounds.lemma213`, :func:`bounds.lemma212_size`), so that the undersized-input mutant
(``input_eps_m``, ``n = ⌈ε_p m⌉``) can be built and caught.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.12, Lemma 2.13 (Bun et al. 2015); notes §3.4, §4.1 P7,
§6.5, §6.11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_choice, check_delta, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .core import as_dataset, counts, log_softmax, sample_pmf, w_errors
from .tables import compositions, multinomial_log_pmf

__all__ = ["BASES", "E_BUGS", "WithReplacement", "clamped_geometric"]

#: ``first_m``: runs A on the first m records (no resampling).
E_BUGS = ("reference", "first_m")
BASES = ("em", "rr", "count", "chain")


def clamped_geometric(c: np.ndarray, m: int, epsilon: float) -> np.ndarray:
    """Law of ``clamp(c + Z, 0, m)``, ``P[Z = z] = (1−a)/(1+a)·a^{|z|}``, ``a = e^{−ε}``, for
    every count in ``c`` (any shape) → shape ``c.shape + (m+1,)``. Exactly ε-DP in ``c``
    (Ghosh–Roughgarden–Sundararajan truncated geometric); ratio ``e^{ε|c − c′|}`` at ``j = m``.

    Raises
    ------
    InvalidArgument
        If ``ε ≤ 0``, ``m`` is not an integer ``≥ 0`` or a count lies outside ``[0, m]``.
    """
    a = math.exp(-check_epsilon(epsilon))
    m = check_int(m, "m", minimum=0)
    c = np.asarray(c, dtype=float)
    if not ((c >= 0) & (c <= m)).all():
        raise InvalidArgument(f"c must hold counts in [0, m={m}]")
    c = c[..., None]
    j = np.arange(m + 1, dtype=float)
    out = (1 - a) / (1 + a) * a ** np.abs(j - c)
    out[..., 0] = a ** c[..., 0] / (1 + a)
    out[..., m] = a ** (m - c[..., 0]) / (1 + a)
    if m == 0:
        out[..., 0] = 1.0
    return out


@dataclass(frozen=True)
class WithReplacement:
    """Procedure E around a base algorithm: ``A(T′)``, ``T′`` = ``m`` draws with replacement.

    Parameters
    ----------
    domain
        ``N ≥ 2`` (points ``{0..N−1}``).
    epsilon
        The base algorithm's ``ε_p > 0`` (any value: Lemma 2.13's ``ε_p ≤ 1`` is checked by
        :func:`bounds.lemma213`, module docstring).
    m
        Number of draws (the PAC learner's sample complexity).
    delta
        Probability of the ``c_0`` leak (the base is then ``(ε_p, δ)``-DP).
    base
        ``"em"``, ``"rr"``, ``"count"`` or ``"chain"`` (module docstring).
    bug
        ``"reference"`` or ``"first_m"`` (A on the first ``m`` records, no resampling).

    References
    ----------
    Seed 000, Lemma 2.13 (Procedure E) and Lemma 2.12 (``n_in = ⌈6ε_p m⌉``).
    """

    domain: int
    epsilon: float
    m: int
    delta: float = 0.0
    base: str = "em"
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        check_epsilon(self.epsilon)
        check_int(self.m, "m", minimum=1)
        check_delta(self.delta)
        check_choice(self.bug, "bug", E_BUGS)
        check_choice(self.base, "base", BASES)
        if self.base == "chain":
            f = self._chain(np.array([self.m - 1, self.m]))
            if f[1] > 1 or (math.exp(self.epsilon) + 1) * f[0] + self.delta > 1:
                raise InvalidArgument(
                    f"base='chain' is not (epsilon, delta)-DP at epsilon={self.epsilon!r}, "
                    f"delta={self.delta!r}, m={self.m}: need f(m) <= 1 and "
                    "(e^epsilon + 1) f(m-1) + delta <= 1")

    def _chain(self, c0: np.ndarray) -> np.ndarray:
        """``f(c_0) = δ·(e^{ε c_0} − 1)/(e^ε − 1)`` (the ``"chain"`` base's bit)."""
        return self.delta * np.expm1(self.epsilon * np.asarray(c0, float)) / math.expm1(
            self.epsilon)

    @property
    def n_base(self) -> int:
        """Number of the base's own output codes (the leak codes follow)."""
        return {"count": self.m + 1, "chain": 2}.get(self.base, self.domain + 1)

    def base_law(self, c: np.ndarray) -> np.ndarray:
        """Law of A on drawn count tables ``c`` (shape ``(B, N, 2)``) → ``(B, n_base + m + 1)``
        (``(B, 2)`` for ``"chain"``, which has no leak codes)."""
        c = np.asarray(c, dtype=np.int64)
        c0 = c[:, 0].sum(-1)
        if self.base == "chain":
            p1 = self._chain(c0)
            return np.stack([1 - p1, p1], axis=-1)
        if self.base == "rr":                 # RR on 1[some drawn point at x = 0]: exactly ε-DP
            hit = math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
            p1 = np.where(c0 > 0, hit, 1 - hit)
            lp = np.zeros((len(c), self.n_base))
            lp[:, 0], lp[:, 1] = 1 - p1, p1
        elif self.base == "count":
            lp = clamped_geometric(c0, self.m, self.epsilon)
        else:
            lp = np.exp(log_softmax(-self.epsilon * w_errors(c[..., 0], c[..., 1]) / 2.0))
        out = np.zeros((len(c), self.n_base + self.m + 1))
        out[:, : self.n_base] = (1 - self.delta) * lp
        out[np.arange(len(c)), self.n_base + np.minimum(c0, self.m)] += self.delta
        return out

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law: multinomial law of the drawn count table, compositions of ``m``
        over the input's distinct cells enumerated."""
        s = as_dataset(data, self.domain)
        if self.bug == "first_m":
            total = self.base_law(counts(s[: self.m], self.domain)[None])[0]
        else:
            cs = counts(s, self.domain).reshape(-1)
            cells = np.flatnonzero(cs)
            d = compositions(self.m, len(cells))
            w = np.exp(multinomial_log_pmf(d, cs[cells] / len(s)))
            tables = np.zeros((len(d), 2 * self.domain), np.int64)
            tables[:, cells] = d
            total = w @ self.base_law(tables.reshape(-1, self.domain, 2))
        return {i: float(v) for i, v in enumerate(total) if v > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs drawn from the exact law."""
        return sample_pmf(self.pmf(data), size, rng)
