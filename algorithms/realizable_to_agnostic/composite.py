"""The composite learner of Theorem 3.6: Algorithm 2 (``A_Agnostic``) whose base learner is
``A_emp`` = Procedure E (Lemmas 2.12 / 2.13) around an (ε_p, δ_p)-DP PAC learner ``A_PAC`` with
sample complexity ``m``, run on ``T^h`` (``|T| = k = ⌈εn⌉``).

Exact law on tiny inputs, by count tables only (no index set is enumerated):

* ``T``'s count table is multivariate hypergeometric over ``S``'s cells (notes §4.4, "type
  counts"): weight ``Π_c C(cS_c, cT_c)/C(n, k)``;
* given ``T``, Algorithm 1 picks a threshold ``t`` (:func:`agnostic.relabel_log_probs`);
* ``T^{h_t}``'s labels are ``h_t(x)``, so ``A_emp``'s ``m`` draws are a multinomial over the
  *points* ``x`` with probabilities ``cT_x/k`` (labels follow from ``x`` and ``t``): the
  compositions of ``m`` over ``T``'s support are enumerated with their multinomial weights.

``A_PAC`` stand-ins (on the drawn table ``d`` labelled by ``h_t``): ``"em"`` the exponential-
mechanism learner over thresholds (``#errors(h_b) = |D[t] − D[b]|``, ``D`` the prefix of ``d``;
pure ε_p-DP, proper); ``"count"`` the adversarial clamped geometric on ``d[x*]`` (exactly
ε_p-DP, a record drawn ``j`` times costs ``jε_p``; not a learner); ``"cell_rr"`` (issue 27)
randomized response on "a uniformly chosen drawn point is ``(x*, 0)``", i.e. ``P[1] =
(c/m)·e^{ε_p}/(1 + e^{ε_p}) + (1 − c/m)/(1 + e^{ε_p})`` with ``c`` the drawn copies of ``x*``
labelled 0 by ``h_t`` (exactly ε_p-DP: one substituted record moves one choice; with ``m = 1``
it attains the supremum over all ε_p-DP ``A_PAC`` at the tested pair, see
``properties/realizable_to_agnostic/test_composite.py``); ``"chain"`` (issue 27) the
group-privacy-extremal (ε_p, δ_p)-DP base of :mod:`.empirical`: one bit, ``1`` with
probability ``δ_p(e^{ε_p d[x*]} − 1)/(e^{ε_p} − 1)`` (it spends its δ_p in the bit, no leak;
clipped at 1 for the mutants that draw more than ``m``). With ``pac_delta > 0`` the other
bases leak ``d[x*]`` with probability ``δ_p`` (codes after the base's own outputs).

Decision (paper vs notes): Theorem 3.6 uses the *same* ε for ``A_PAC`` and Algorithm 2;
``pac_epsilon`` defaults to ``epsilon`` but may be any ``ε_p ≤ 1`` with ``k ≥ 6ε_p m`` — the
hypotheses under which Lemma 2.12 (via Lemma 2.13) makes ``A_emp`` (1, δ_A)-DP, which is all
Lemma 3.1 needs. Violations raise ``InvalidArgument`` naming the parameters.

Further decisions (notes ``shared/research/seed-000.md`` §6):

* §6.1 order: ``A_emp`` draws with replacement from the x-counts of ``T^h``, so it is
  symmetric in ``T^h`` and the swap coupling of Lemma 3.1's proof applies verbatim.
* §6.4 one ε, two roles: ``epsilon`` is the paper's internal ε (sampling fraction and relabel
  EM); Theorem 3.6 delivers (O(ε), O(δ)) and the certified pair is
  :func:`bounds.theorem36_bounds` (ε ≈ 30.6·``epsilon`` for small ε). No rescaling to a target
  ε is done.
* §6.5 ranges: Theorem 3.6's "ε ≤ O(1)" is taken as the proofs' ``ε ≤ 1/3`` (Lemma 3.1:
  ``⌈εn⌉/(n − ⌈εn⌉) ≤ 6ε``; Lemma 3.4: ``|W|/|T| ≥ 1/(6ε)``), with ``εn ≥ 1`` and ``n − k ≥ 1``.
* §6.12: utility (Theorem 3.6) fails w.p. O(β + δn), so utility checks keep ``δ_p ≪ 1/n``
  (they use ``δ_p = 0``).
* §6.15: substitution neighbours only.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 2, Lemma 2.12, Lemma 2.13, Lemma 3.1, Theorem 3.6;
notes ``shared/research/seed-000.md`` §3.4, §3.5, §4.1 P8, §4.2 U5, §6.1, §6.4, §6.5, §6.7,
§6.12, §6.15, §7 B9.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_choice, check_delta, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .agnostic import relabel_log_probs, subset_size
from .core import (
    as_count_tables,
    as_dataset,
    check_internal_epsilon,
    counts,
    log_softmax,
    prefix,
    sample_rows,
)
from .empirical import clamped_geometric
from .tables import compositions, draw_subset_counts, multinomial_log_pmf, subset_tables

__all__ = ["COMPOSITE_BUGS", "Composite"]

#: ``draw_n``: Procedure E draws ``n = |S|`` points instead of ``m`` (6ε_p·n/k > 1, B9);
#: ``pac_eps5``: ``A_PAC`` run at ε_p = 5 (base not (1, δ)-DP, B9); ``sign_error``, ``threshold_off_by_one``, ``em_delta_t`` (issue 27): Algorithm 1's
#: EM maximises the score (utility mutant, B13); ``pac_eps_1_25`` (issue 27): ``A_PAC`` at
#: 1.25ε_p (a 25 % overspend); ``draw_m_plus_1`` (issue 27): Procedure E draws ``m + 1``.
COMPOSITE_BUGS = ("reference", "draw_n", "pac_eps5", "sign_error", "threshold_off_by_one",
                  "em_delta_t", "pac_eps_1_25", "draw_m_plus_1")
#: Bugs of Algorithm 1 (the relabeling), passed through to :func:`.agnostic.relabel_log_probs`.
_RELABEL_BUGS = ("sign_error", "threshold_off_by_one", "em_delta_t")
_MAX_TABLES = 100_000


@dataclass(frozen=True)
class Composite:
    """``A_Agnostic(ε; S, A_emp)``, ``A_emp`` = Procedure E(``A_PAC``), thresholds on
    ``{0..domain−1}`` (Theorem 3.6).

    Parameters
    ----------
    domain
        ``N ≥ 2``.
    epsilon
        Algorithm 2's internal ``ε ∈ (0, 1/3]`` (``k = ⌈εn⌉`` and the relabel EM); not the
        certified end-to-end ε, which is :func:`bounds.theorem36_bounds` (notes §6.4).
    m
        ``A_PAC``'s sample complexity (Procedure E's number of draws).
    pac_epsilon
        ``ε_p ∈ (0, 1]`` of ``A_PAC`` (``None``: ``epsilon``, as in Theorem 3.6).
    pac_delta
        ``δ_p`` (probability of the ``d[x*]`` leak). Utility fails w.p. O(β + δ_p n), so keep
        ``δ_p ≪ 1/n`` when utility matters (notes §6.12).
    base
        ``"em"``, ``"count"``, ``"cell_rr"`` or ``"chain"`` (module docstring).
    x_star
        The point the ``"count"`` and ``"cell_rr"`` bases and the leak count.
    bug
        ``"reference"`` or one of :data:`COMPOSITE_BUGS`.

    References
    ----------
    Seed 000, Theorem 3.6 (proof: Lemma 2.12 then Lemma 3.1).
    """

    domain: int
    epsilon: float
    m: int
    pac_epsilon: float | None = None
    pac_delta: float = 0.0
    base: str = "em"
    x_star: int = 0
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        check_internal_epsilon(self.epsilon, "Lemmas 3.1 and 3.4")
        check_int(self.m, "m", minimum=1)
        if self.pac_epsilon is not None:          # before eps_p's float(): no str/bool through
            check_epsilon(self.pac_epsilon, "pac_epsilon")
        ep = check_epsilon(self.eps_p, "pac_epsilon")
        if ep > 1.0:
            raise InvalidArgument(f"pac_epsilon={ep!r} must be <= 1 (Lemma 2.13)")
        check_delta(self.pac_delta, "pac_delta")
        check_choice(self.base, "base", ("em", "count", "cell_rr", "chain"))
        if self.base == "chain":
            f = self.pac_delta * np.expm1(self.eps_p * np.array([self.m - 1, self.m])) \
                / math.expm1(self.eps_p)
            if f[1] > 1 or (math.exp(self.eps_p) + 1) * f[0] + self.pac_delta > 1:
                raise InvalidArgument(f"base='chain' is not (pac_epsilon, pac_delta)-DP at m="
                                      f"{self.m}: need f(m) <= 1 and (e^eps_p + 1) f(m-1) + "
                                      "pac_delta <= 1")
        check_choice(self.bug, "bug", COMPOSITE_BUGS)
        check_int(self.x_star, "x_star", minimum=0)
        if self.x_star >= self.domain:
            raise InvalidArgument(f"x_star={self.x_star!r} must be < domain={self.domain}")

    @property
    def eps_p(self) -> float:
        """``A_PAC``'s ε as configured (``pac_epsilon`` or ``epsilon``)."""
        return float(self.epsilon if self.pac_epsilon is None else self.pac_epsilon)

    # ------------------------------------------------------------------ sizes
    def sizes(self, n: int) -> tuple[int, int]:
        """``(k, draws)``: ``k = ⌈εn⌉`` and Procedure E's number of draws.

        Raises
        ------
        InvalidArgument
            If ``εn < 1``, ``W`` would be empty, or ``k < 6ε_p m`` (Lemma 2.12's input size).
        """
        n = check_int(n, "n", minimum=2)
        if self.epsilon * n < 1 - 1e-9:
            raise InvalidArgument(f"epsilon*n={self.epsilon * n!r} must be >= 1 (Lemma 3.1)")
        k = subset_size(self.epsilon, n)
        if n - k < 1:
            raise InvalidArgument(f"n={n} too small: W = S minus T would be empty (k={k})")
        need = 6 * self.eps_p * self.m
        if k < 2 or need > k + 1e-9:
            raise InvalidArgument(
                f"k=ceil(epsilon*n)={k} (epsilon={self.epsilon!r}, n={n}) must be >= 2 and >= "
                f"6*pac_epsilon*m={need!r} (pac_epsilon={self.eps_p!r}, m={self.m}; Lemma 2.12)")
        return k, (n if self.bug == "draw_n" else
                   self.m + 1 if self.bug == "draw_m_plus_1" else self.m)

    def n_base(self, draws: int) -> int:
        """Number of ``A_PAC``'s own output codes (the leak codes ``n_base + j`` follow)."""
        return {"count": draws + 1, "cell_rr": 2, "chain": 2}.get(self.base, self.domain + 1)

    @property
    def leak_delta(self) -> float:
        """Probability of the ``d[x*]`` leak (``"chain"`` spends its δ_p in its bit)."""
        return 0.0 if self.base == "chain" else self.pac_delta

    # ------------------------------------------------------------------ A_PAC
    def _pac_eps(self) -> float:
        return (5.0 if self.bug == "pac_eps5" else
                1.25 * self.eps_p if self.bug == "pac_eps_1_25" else self.eps_p)

    def _pac_logits(self, dx: np.ndarray, t: np.ndarray, draws: int) -> np.ndarray:
        """Log-law of ``A_PAC``'s own outputs on drawn x-tables ``dx`` (``(B, N)``) labelled by
        ``h_t``; ``t`` broadcasts against the batch as ``(B, M)`` → ``(B, M, n_base)``."""
        if self.base == "count":
            lp = np.log(clamped_geometric(dx[:, self.x_star], draws, self._pac_eps()))
            return np.broadcast_to(lp[:, None, :], t.shape + lp.shape[-1:])
        if self.base == "chain":               # δ_p(e^{ε_p c} − 1)/(e^{ε_p} − 1), c = d[x*]
            p1 = np.minimum(self.pac_delta * np.expm1(self._pac_eps() * dx[:, self.x_star])
                            / math.expm1(self._pac_eps()), 1.0)
            with np.errstate(divide="ignore"):              # log 0 = −inf: no x* drawn
                lp = np.log(np.stack([1 - p1, p1], -1))
            return np.broadcast_to(lp[:, None, :], t.shape + (2,))
        if self.base == "cell_rr":             # share of draws that are (x*, 0) under h_t
            share = dx[:, self.x_star, None] * (self.x_star < t) / draws       # (B, M)
            hit = 1.0 / (1.0 + np.exp(-self._pac_eps()))
            p1 = share * hit + (1 - share) * (1 - hit)
            return np.log(np.stack([1 - p1, p1], -1))
        d = prefix(dx)                                         # (B, N+1)
        dt = np.take_along_axis(d, t, -1)                      # (B, M)
        return log_softmax(-self._pac_eps() * np.abs(dt[..., None] - d[:, None, :]) / 2.0)

    def _emp_law(self, cx: np.ndarray, k: int, draws: int) -> np.ndarray:
        """``A_emp``'s law on ``T^{h_t}`` for one ``T`` (x-counts ``cx``), every ``t`` →
        ``(N+1, n_base + draws + 1)`` (compositions of the draws over ``T``'s support)."""
        cells = np.flatnonzero(cx)
        d = compositions(draws, len(cells))
        w = np.exp(multinomial_log_pmf(d, cx[cells] / k))
        dx = np.zeros((len(d), self.domain), np.int64)
        dx[:, cells] = d
        ts = np.broadcast_to(np.arange(self.domain + 1), (len(d), self.domain + 1))
        law = np.exp(self._pac_logits(dx, ts, draws))          # (C, N+1, n_base)
        nb = self.n_base(draws)
        out = np.zeros((self.domain + 1, nb + draws + 1))
        out[:, :nb] = (1 - self.leak_delta) * np.einsum("c,cto->to", w, law)
        leak = np.bincount(dx[:, self.x_star], weights=w, minlength=draws + 1)
        out[:, nb:] += self.leak_delta * leak
        return out

    # ------------------------------------------------------------------ T tables
    def _tables(self, cs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Distinct count tables of ``T`` with their multivariate hypergeometric weights
        (:func:`.tables.subset_tables`, at most ``_MAX_TABLES`` of them)."""
        return subset_tables(cs, k, limit=_MAX_TABLES)

    def _relabel(self, ct: np.ndarray, cs: np.ndarray, k: int, n: int) -> np.ndarray:
        b = len(ct)
        agn_bug = self.bug if self.bug in _RELABEL_BUGS else "reference"
        lt, _ = relabel_log_probs(ct, cs[None] - ct, np.full(b, k), np.full(b, n - k),
                                  np.broadcast_to(cs, ct.shape), epsilon=self.epsilon,
                                  bug=agn_bug)
        return lt

    # ------------------------------------------------------------------ public API
    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (T tables × relabel threshold × drawn tables)."""
        s = as_dataset(data, self.domain)
        n = len(s)
        k, draws = self.sizes(n)
        cs = counts(s, self.domain)
        ct, wt = self._tables(cs, k)
        pt = np.exp(self._relabel(ct, cs, k, n))                # (B, N+1)
        total = 0.0
        for b in range(len(ct)):
            total = total + wt[b] * (pt[b] @ self._emp_law(ct[b].sum(-1), k, draws))
        return {i: float(v) for i, v in enumerate(np.asarray(total)) if v > 0}

    def run_counts(self, sc: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                           np.ndarray]:
        """One run per dataset of a batch of count tables ``sc`` (``(B, N, 2)``, equal ``n``):
        ``(relabel threshold t, output code)``.

        Raises
        ------
        InvalidArgument
            If ``sc`` is not a non-empty ``(B, domain, 2)`` table of integer counts ``≥ 0`` with
            equal totals, or the totals ``n`` fail :meth:`sizes`.
        """
        sc = as_count_tables(sc, self.domain)
        n = int(sc[0].sum())
        if (sc.sum((1, 2)) != n).any():
            raise InvalidArgument("run_counts needs datasets of equal size n")
        k, draws = self.sizes(n)
        size = len(sc)
        ct = draw_subset_counts(sc.reshape(size, -1), np.full(size, k), rng).reshape(sc.shape)
        agn_bug = self.bug if self.bug in _RELABEL_BUGS else "reference"
        lt, _ = relabel_log_probs(ct, sc - ct, np.full(size, k), np.full(size, n - k), sc,
                                  epsilon=self.epsilon, bug=agn_bug)
        t = sample_rows(np.exp(lt), rng)
        dx = rng.multinomial(draws, ct.sum(-1) / k)             # (B, N)
        out = sample_rows(np.exp(self._pac_logits(dx, t[:, None], draws)[:, 0, :]), rng)
        leak = rng.random(size) < self.leak_delta
        out = np.where(leak, self.n_base(draws) + dx[:, self.x_star], out)
        return t, out.astype(np.int64)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs on one dataset (vectorised)."""
        s = as_dataset(data, self.domain)
        size = check_int(size, "size", minimum=0)
        if size == 0:
            self.sizes(len(s))
            return np.empty(0, dtype=np.int64)
        sc = np.broadcast_to(counts(s, self.domain), (size, self.domain, 2))
        return self.run_counts(sc, rng)[1]
