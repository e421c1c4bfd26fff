"""Algorithm 2 ``A_Agnostic`` (with Algorithm 1 ``A_Relabel`` inside), its base learners, the old
baseline (Beimel et al. + subsampling) and the buggy variants of the seed-000 notes §7.

One object, :class:`Agnostic`, is a mechanism of the dpcheck protocol on datasets
``S ∈ ({0..N−1}×{0,1})^n``: ``.pmf(S)`` is the exact output law (the law of ``T``'s count table
enumerated, :mod:`.tables`, notes §4.4), ``.conditional(S, I)`` the law given the sampled index set (the white-box
hook of the proof of Lemma 3.1), ``.sample(S, size, rng)`` the vectorised sampler (``T`` as
sequential hypergeometric cell counts, O(N) per run), ``.run_counts(sc, rng)`` runs it on a
batch of datasets given as count tables and ``.run_iid(law, n, size, rng)`` on fresh i.i.d.
datasets (utility tests and benchmarks at paper scale).

Decisions (notes §6, the paper wins where they differ):

* §6.1 order of ``T`` / ``T^h``: every base learner here is symmetric (depends on the multiset
  ``T^h`` only), so the swap coupling of Lemma 3.1's proof applies verbatim. Procedure P, the one
  order-sensitive base (Theorem 4.2), cuts a *uniformly permuted* ``T^h`` into its portions
  (:mod:`.agnostic_prediction`), which makes it symmetric too.
* §6.2 representative: smallest threshold of each labeling class; never released (B1 is).
* §6.4 one ε, two roles: ``epsilon`` is the paper's *internal* ε (sampling fraction and the
  relabel EM's privacy parameter); Lemma 3.1 delivers (O(ε), O(δ)), and the certified
  end-to-end ε is ``bounds.lemma31_epsilon(n, ε, ⌈εn⌉)`` (≈ 30.6ε for small ε). No rescaling
  to a target ε and no amplification step is done.
* §6.5 ranges: ``0 < ε ≤ 1/3``, ``εn ≥ 1`` (Lemma 3.1 / 3.4), ``n − k ≥ 1``; the base
  learner must be (1, 0)-DP (``learner_epsilon ≤ 1``). Violations raise ``InvalidArgument``
  (the buggy variants that need other sizes are exempt where noted).
* §6.10 log base: natural logarithms everywhere.
* §6.11 (Lemma 3.1's proof, "By symmetry" line): the relabel score has the *two-sided*
  sensitivity ``Δ = 1/|W|``; the line should read ``q(T1∘W1, h) ≤ q(T2∘W2, h) + 1/|W1|``.
* §6.15 neighbours: substitution only. ``k = ⌈εn⌉`` and ``Δ = 1/|W|`` depend on ``n``, so
  add/remove neighbours are not analysed and no claim here covers them.

Base learners ``A`` (on ``T^h`` labelled by ``h_a``; ``#errors(h_b) = |P[a] − P[b]|``):
``"em"`` the exponential-mechanism learner over thresholds (pure ``ε_A``-DP, proper),
``"rr"`` the adversarial 1-DP learner of notes §3.9 (randomized response on
``1[x* ∈ T^h_X]``; not a learner: it makes the derived bound of Lemma 3.1 as sharp as a
(1, 0)-DP ``A`` allows).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithms 1 and 2, Lemma 3.1, §3 (old transformation);
notes ``shared/research/seed-000.md`` §3.1–3.2, §3.8, §7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_choice, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .core import (
    as_count_tables,
    as_dataset,
    as_index_set,
    check_internal_epsilon,
    counts,
    log_softmax,
    multiplicity,
    prefix,
    representative,
    sample_rows,
    scores,
    w_errors,
    x_counts,
)
from .tables import draw_subset_counts, subset_tables

__all__ = [
    "BUGS",
    "LEARNERS",
    "Agnostic",
    "draw_subset_counts",
    "relabel_log_probs",
    "relabel_scores",
    "relabel_weights",
    "subset_size",
]

LEARNERS = ("em", "rr")
#: Buggy variants (notes §7) and the old baseline (``"baseline"``, a correct control).
BUGS = ("reference", "baseline", "release_h", "half_sample",
        "em_eps_one", "em_no_half", "naive_score", "relabel_all", "base_eps5", "h_from_s",
        "uses_t_labels", "floor_k", "sign_error", "em_delta_n",
        "threshold_off_by_one", "em_delta_t", "em_scale_1_25", "base_eps_1_25", "k_plus_1")
# issue 27 (subtle): base_eps_1_25 runs the base learner at 1.25ε_A; k_plus_1 draws
# |I| = ⌈εn⌉ + 1 (at the tested k = 1 a 2x overspend of the subsampling rate)


def subset_size(epsilon: float, n: int, *, bug: str = "reference") -> int:
    """``k = |I| = ⌈εn⌉`` (Algorithm 2 step 1); ``floor_k`` (B16) uses ``⌊εn⌋``,
    ``half_sample`` (B4) ``⌈n/2⌉``. Float rounding guarded (``εn`` within 1e-9 of an integer).

    Raises
    ------
    InvalidArgument
        If ``ε`` is not a finite real ``> 0`` or ``n`` not an integer ``≥ 1``. The ranges of
        Algorithm 2 (``ε ≤ 1/3``, ``εn ≥ 1``, ``k < n``) are checked by :meth:`Agnostic.sizes`,
        so the bug branches stay reachable here.
    """
    epsilon = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=1)
    if bug == "half_sample":
        return math.ceil(n / 2)
    x = epsilon * n
    r = round(x)
    if abs(x - r) < 1e-9:
        return int(r) + (1 if bug == "k_plus_1" else 0)
    if bug == "k_plus_1":
        return math.ceil(x) + 1
    return math.floor(x) if bug == "floor_k" else math.ceil(x)


def relabel_scores(ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                   cs: np.ndarray, *, bug: str = "reference",
                   p: np.ndarray | None = None) -> np.ndarray:
    """Algorithm 1's score ``q(T∘W, h_t)`` for every threshold ``t`` (batch ``(B, N+1)``);
    ``naive_score`` (B7) and ``uses_t_labels`` (B11) are the mutants' scores. ``p`` is
    ``prefix(x_counts(ct))`` if already computed."""
    p = prefix(x_counts(ct)) if p is None else p
    k2, w2 = k[:, None].astype(float), w[:, None].astype(float)
    e = w_errors(cw[..., 0], cw[..., 1])
    q = scores(p, e, k2, w2)
    if bug == "naive_score":               # B7: err_S of the representative
        rep = representative(p)
        es = w_errors(cs[..., 0], cs[..., 1])
        q = np.take_along_axis(es, rep, -1) / (k2 + w2)
    if bug == "uses_t_labels":             # B11: adds err_T(h) with T's own labels
        q = q + w_errors(ct[..., 0], ct[..., 1]) / np.maximum(k2, 1.0)
    if bug == "threshold_off_by_one":      # issue 27: h_t scored as 1[x > t] (= h_{t+1})
        q = np.concatenate([q[..., :1], q[..., :-1]], axis=-1)
    return q


def _relabel_logits(ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                    cs: np.ndarray, p: np.ndarray, epsilon: float, bug: str) -> np.ndarray:
    """``−ε|W| q(t)/2`` (or the mutant's exponent) for every threshold: constant on each
    labeling class of ``T_X`` for every variant."""
    if bug == "baseline":                  # §3.8: err_T(h) with T's labels, ε₀ = 1, Δ = 1/|T|
        return -w_errors(ct[..., 0], ct[..., 1]) / 2.0
    q = relabel_scores(ct, cw, k, w, cs, bug=bug, p=p)
    eps = 1.0 if bug == "em_eps_one" else epsilon
    w2 = w[:, None].astype(float)
    # B6: em_no_half drops the /2 (equivalently Δ = 1/(2|W|)); em_delta_n uses Δ = 1/n;
    # em_delta_t (issue 27) Δ = 1/|T|: private, but back to the old 1/(αε²) sample cost
    scale = ((k[:, None] + w2) if bug == "em_delta_n" else
             k[:, None].astype(float) if bug == "em_delta_t" else w2)
    coef = eps * scale / (1.0 if bug == "em_no_half" else 2.0)
    if bug == "em_scale_1_25":             # issue 27: the EM at 1.25ε (a 25 % overspend)
        coef = 1.25 * coef
    return -coef * q if bug != "sign_error" else coef * q


def relabel_log_probs(ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                      cs: np.ndarray, *, epsilon: float, bug: str = "reference") -> tuple[
                          np.ndarray, np.ndarray]:
    """Algorithm 1 on a batch of count tables ``(B, N, 2)``: log-probabilities over thresholds
    ``t`` (each labeling's mass split evenly over its members, so a labeling has probability
    ``∝ exp(−ε|W| q/2)``) and the prefix ``P`` of ``T``. ``k, w`` are ``(B,)`` sizes, ``cs`` the
    counts of all of ``S`` (read by mutants only)."""
    p = prefix(x_counts(ct))
    logit = _relabel_logits(ct, cw, k, w, cs, p, epsilon, bug)
    # B10 h_from_s: H from Π_C(S_X), one member per S-labeling
    mult = multiplicity(prefix(x_counts(cs)) if bug == "h_from_s" else p)
    return log_softmax(logit - np.log(mult)), p


def relabel_weights(ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                    cs: np.ndarray, *, epsilon: float, bug: str = "reference") -> tuple[
                        np.ndarray, np.ndarray, bool]:
    """The sampler's form of :func:`relabel_log_probs`: unnormalised weights ``(B, N+1)``, the
    prefix ``P`` and whether each labeling's whole mass sits on its representative (the
    smallest ``t`` of the class; then a draw *is* the representative). Same law over labelings:
    the inverse-CDF draw picks the same class for the same uniform (the class boundaries of the
    CDF are unchanged), so outputs match the even-split form for a seed up to float rounding."""
    p = prefix(x_counts(ct))
    logit = _relabel_logits(ct, cw, k, w, cs, p, epsilon, bug)
    wt = np.exp(logit - logit.max(-1, keepdims=True))
    if bug == "h_from_s":                  # B10: S-labeling members, mass split by S-classes
        return wt / multiplicity(prefix(x_counts(cs))), p, False
    if bug == "relabel_all":               # B8 reads h on all of S: the member matters
        return wt / multiplicity(p), p, False
    wt[:, 1:] *= p[:, 1:] != p[:, :-1]     # keep only the first member of each class
    return wt, p, True


@dataclass(frozen=True)
class Agnostic:
    """``A_Agnostic(ε; S, A)`` over thresholds on ``{0..domain−1}`` (Algorithm 2).

    Parameters
    ----------
    domain
        ``N ≥ 2``.
    epsilon
        ``ε ∈ (0, 1/3]``: both the sampling fraction (``k = ⌈εn⌉``) and the privacy parameter of
        the exponential mechanism of Algorithm 1 (sensitivity ``Δ = 1/|W|``, two-sided: the
        "By symmetry" line of Lemma 3.1's proof should read ``q(T1∘W1, h) ≤ q(T2∘W2, h) +
        1/|W1|``, notes §6.11). This is the paper's *internal* ε: Lemma 3.1 (Theorem 3.6)
        delivers (O(ε), O(δ)), and the certified end-to-end ε is
        ``bounds.lemma31_epsilon(n, ε, ⌈εn⌉)`` ≈ 30.6ε for small ε (notes §6.4). No rescaling
        to a target ε is done.
    learner
        ``"em"`` or ``"rr"`` (module docstring).
    learner_epsilon
        ``ε_A ∈ (0, 1]`` (Lemma 3.1 needs a (1, δ)-DP ``A``).
    x_star
        The point the ``"rr"`` learner tests for.
    bug
        ``"reference"``, ``"baseline"`` (old transformation, §3.8: ``W`` discarded, score
        ``err_T(h)`` with ``ε₀ = 1``, ``Δ = 1/|T|``) or a buggy variant of :data:`BUGS`.

    References
    ----------
    Seed 000, Algorithms 1–2 and Lemma 3.1; notes §3.9 (stand-ins), §7 (bugs).
    """

    domain: int
    epsilon: float
    learner: str = "em"
    learner_epsilon: float = 1.0
    x_star: int = 0
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        eps = check_epsilon(self.epsilon)
        check_choice(self.learner, "learner", LEARNERS)
        check_choice(self.bug, "bug", BUGS)
        # half_sample (B4, k = ⌈n/2⌉) is exempt so that it can be built with ε = 1/2.
        if self.bug != "half_sample":
            check_internal_epsilon(eps, "Lemmas 3.1 and 3.4")
        ea = check_epsilon(self.learner_epsilon, "learner_epsilon")
        if ea > 1.0:
            raise InvalidArgument(f"learner_epsilon={ea!r} must be <= 1 (Lemma 3.1: A is "
                                  "(1, delta)-DP)")
        check_int(self.x_star, "x_star", minimum=0)
        if self.x_star >= self.domain:
            raise InvalidArgument(f"x_star={self.x_star!r} must be < domain={self.domain}")

    # ------------------------------------------------------------------ sizes and outputs
    def sizes(self, n: int) -> tuple[int, int]:
        """``(k, |W|) = (⌈εn⌉, n − k)``; raises if ``εn < 1`` or ``W`` would be empty."""
        n = check_int(n, "n", minimum=2)
        if self.epsilon * n < 1 - 1e-9 and self.bug != "floor_k":
            raise InvalidArgument(f"epsilon*n={self.epsilon * n!r} must be >= 1 (Lemma 3.1)")
        k = subset_size(self.epsilon, n, bug=self.bug)
        if n - k < 1:
            raise InvalidArgument(f"n={n} too small: W = S minus T would be empty (k={k})")
        return k, n - k

    @property
    def n_out(self) -> int:
        """Size of the base learner's output space."""
        return 2 if self.learner == "rr" else self.domain + 1

    @property
    def n_codes(self) -> int:
        """Size of the mechanism's output space (B1 releases ``(h, A(T^h))``)."""
        return self.n_out * (self.domain + 1 if self.bug == "release_h" else 1)

    # ------------------------------------------------------------------ one conditional step
    def _relabel(self, ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                 cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return relabel_log_probs(ct, cw, k, w, cs, epsilon=self.epsilon, bug=self.bug)

    def _learner_input(self, p: np.ndarray, ct: np.ndarray, cs: np.ndarray) -> tuple[
            np.ndarray, np.ndarray]:
        """Prefix the base learner sees and the ``x*``-presence bit (B8 relabels all of S)."""
        src = cs if self.bug == "relabel_all" else ct
        return (prefix(x_counts(src)) if self.bug == "relabel_all" else p,
                (src[:, self.x_star, 0] + src[:, self.x_star, 1]) > 0)

    def _learner_logits(self, pl_a: np.ndarray, pl: np.ndarray, present: np.ndarray) -> np.ndarray:
        """Log-probabilities of A's outputs given the relabel threshold's prefix value ``pl_a``
        (shape ``(B, M)``) → ``(B, M, n_out)``."""
        ea = (5.0 if self.bug == "base_eps5" else
              1.25 * self.learner_epsilon if self.bug == "base_eps_1_25" else self.learner_epsilon)
        if self.learner == "rr":
            lp1 = np.where(present, ea, 0.0) - np.logaddexp(ea, 0.0)
            lp = np.stack([np.log1p(-np.exp(lp1)), lp1], -1)
            return np.broadcast_to(lp[:, None, :], pl_a.shape + (2,))
        return log_softmax(-ea * np.abs(pl_a[..., None] - pl[:, None, :]) / 2.0)

    def _cond_pmf(self, ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                  cs: np.ndarray) -> np.ndarray:
        """Exact output law given ``T`` (one row per batch element), shape ``(B, n_codes)``."""
        lt, p = self._relabel(ct, cw, k, w, cs)
        pl, present = self._learner_input(p, ct, cs)
        pl_a = pl if self.bug == "relabel_all" else p    # B8: h_a relabels all of S
        la = self._learner_logits(pl_a, pl, present)            # (B, N+1, n_out)
        joint = np.exp(lt[..., None] + la)                       # (B, N+1, n_out)
        if self.bug != "release_h":
            return joint.sum(1)
        rep = representative(p)
        out = np.zeros((ct.shape[0], self.domain + 1, self.n_out))
        for b in range(ct.shape[0]):
            np.add.at(out[b], rep[b], joint[b])
        return out.reshape(ct.shape[0], -1)

    def _learner_weights(self, pl_a: np.ndarray, pl: np.ndarray,
                         present: np.ndarray) -> np.ndarray:
        """Unnormalised law of A's output per row (``pl_a`` shape ``(B,)``) for the sampler:
        the EM learner's ``exp(−ε_A |P_a − P_b|/2)`` directly (its maximum is 1, at ``b = a``),
        otherwise ``exp`` of :meth:`_learner_logits`."""
        if self.learner == "em" and self.bug not in ("base_eps5", "base_eps_1_25"):
            return np.exp(np.abs(pl_a[:, None] - pl) * (-self.learner_epsilon / 2.0))
        return np.exp(self._learner_logits(pl_a[:, None], pl, present)[:, 0, :])

    def _cond_sample(self, ct: np.ndarray, cw: np.ndarray, k: np.ndarray, w: np.ndarray,
                     cs: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One output per row (O(N) per row): ``(relabel representative, code)``."""
        wt, p, firsts = relabel_weights(ct, cw, k, w, cs, epsilon=self.epsilon, bug=self.bug)
        t = sample_rows(wt, rng)
        rows = np.arange(ct.shape[0])
        pl, present = self._learner_input(p, ct, cs)
        pl_a = pl[rows, t] if self.bug == "relabel_all" else p[rows, t]
        out = sample_rows(self._learner_weights(pl_a, pl, present), rng)
        rep = t if firsts else np.argmax(p == p[rows, t][:, None], axis=-1)
        code = rep * self.n_out + out if self.bug == "release_h" else out
        return rep, code

    # ------------------------------------------------------------------ index sets
    def _tables(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Law of ``T``'s count table: ``(C, N, 2)`` tables with their probabilities (exact
        integers, :mod:`.tables`); the order-dependent ``first_k`` mutant (B3) of :mod:`.buggy`
        overrides it."""
        cs = counts(s, self.domain)
        k, _ = self.sizes(s.shape[0])
        return subset_tables(cs, k)

    def _batch(self, s: np.ndarray, ct: np.ndarray) -> tuple[np.ndarray, ...]:
        cs = counts(s, self.domain)
        k = x_counts(ct).sum(-1)
        return ct, cs[None] - ct, k, s.shape[0] - k, np.broadcast_to(cs, ct.shape)

    # ------------------------------------------------------------------ public API
    def conditional(self, data: Any, index_set: Any) -> dict[int, float]:
        """Exact output law given the sampled index set ``I`` (0-based indices).

        Raises
        ------
        InvalidArgument
            If ``index_set`` is not a collection of distinct integers ``0 ≤ i < n`` of the size
            Algorithm 2 samples (``k`` of :meth:`sizes`).
        """
        s = as_dataset(data, self.domain)
        idx = self._index_set(index_set, s.shape[0])
        ct = counts(s[idx], self.domain)[None]
        probs = self._cond_pmf(*self._batch(s, ct))[0]
        return {i: float(v) for i, v in enumerate(probs) if v > 0}

    def _index_set(self, index_set: Any, n: int) -> np.ndarray:
        """``index_set`` as distinct in-range indices (:func:`.core.as_index_set`) of the size
        Algorithm 2 samples."""
        idx = as_index_set(index_set, n)
        k, _ = self.sizes(n)
        if idx.size != k:
            raise InvalidArgument(f"index_set has {idx.size} indices, must have k={k} "
                                  f"(n={n}, epsilon={self.epsilon!r}, bug={self.bug!r})")
        return idx

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law: ``(1/C(n,k)) Σ_I P[output | I]`` (notes §4.4), summed over the
        count tables of ``T`` with their multivariate hypergeometric weights."""
        s = as_dataset(data, self.domain)
        ct, w = self._tables(s)
        probs = w @ self._cond_pmf(*self._batch(s, ct))
        return {i: float(v) for i, v in enumerate(probs) if v > 0}

    def run_counts(self, sc: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                           np.ndarray]:
        """Run on a batch of datasets given as count tables ``sc`` (shape ``(B, N, 2)``, sizes
        may differ), one run each: ``(relabel representative, output code)``.

        Raises
        ------
        InvalidArgument
            If ``sc`` is not a non-empty ``(B, domain, 2)`` table of integer counts ``≥ 0``
            (:func:`.core.as_count_tables`) or a size ``n`` fails :meth:`sizes`.
        """
        return self._run_counts(as_count_tables(sc, self.domain), rng)

    def _run_counts(self, sc: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                             np.ndarray]:
        """:meth:`run_counts` on a checked int64 table (``sample`` passes its own)."""
        n = x_counts(sc).sum(-1)
        ct = self._draw_t(sc, n, rng)
        kk = x_counts(ct).sum(-1)
        return self._cond_sample(ct, sc - ct, kk, n - kk, sc, rng)

    def _draw_t(self, sc: np.ndarray, n: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Count tables of ``T`` (a uniform size-``k`` subset of each dataset ``sc``, sizes
        ``n``); the Poisson mutant of :mod:`.buggy` overrides it."""
        un, inv = np.unique(n, return_inverse=True)              # sizes once per distinct n
        k = np.array([self.sizes(int(v))[0] for v in un], dtype=np.int64)[inv.reshape(-1)]
        return draw_subset_counts(sc.reshape(len(sc), -1), k, rng).reshape(sc.shape)

    def run_iid(self, cell_law: Any, n: int, size: int, rng: np.random.Generator) -> tuple[
            np.ndarray, np.ndarray]:
        """``size`` runs, each on a fresh dataset ``S ~ D^n``, ``cell_law[x, y] = Pr_D[(x, y)]``
        (shape ``(N, 2)``): ``(relabel representative, output code)``.

        ``I`` is independent of ``S``, so ``T = S_I`` and ``W = S_{[n]∖I}`` are independent
        i.i.d. samples of sizes ``k`` and ``n − k``: their count tables are drawn as two
        independent multinomials — the same joint law as :meth:`run_counts` on multinomial
        datasets, without the ``2N − 1`` hypergeometric draws of ``T``.
        """
        law = np.asarray(cell_law, dtype=float)
        if law.shape != (self.domain, 2) or (law < 0).any() or abs(law.sum() - 1) > 1e-9:
            raise InvalidArgument(f"cell_law must be a ({self.domain}, 2) probability table, "
                                  f"got shape {law.shape} summing to {law.sum()!r}")
        k, w = self.sizes(n)
        size = check_int(size, "size", minimum=1)
        flat = law.reshape(-1)
        ct = rng.multinomial(k, flat, size=size).reshape(size, self.domain, 2)
        cw = rng.multinomial(w, flat, size=size).reshape(size, self.domain, 2)
        return self._cond_sample(ct, cw, np.full(size, k), np.full(size, w), ct + cw, rng)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs on one dataset (vectorised)."""
        s = as_dataset(data, self.domain)
        size = check_int(size, "size", minimum=0)
        if size == 0:
            self.sizes(s.shape[0])
            return np.empty(0, dtype=np.int64)
        return self._sample_dataset(s, size, rng)

    def _sample_dataset(self, s: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size ≥ 1`` outputs on the validated dataset ``s`` (the variants' hook)."""
        sc = np.broadcast_to(counts(s, self.domain), (size, self.domain, 2))
        return self._run_counts(sc, rng)[1].astype(np.int64)
