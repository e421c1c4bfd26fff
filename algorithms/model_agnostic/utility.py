"""Paper 003 utility side: A_priv, the black-box learners, exact samplers and utility experiments.

* :class:`APriv` (Algorithm 3), :func:`h_priv_labels` (⊥/HALT → fresh fair coins) and
  :func:`threshold_erm_batch` (threshold ERM on many label rows);
* learners :class:`ThresholdERM` and :class:`MajorityLearner` (end-to-end runs);
* :func:`threshold_erm_counts`: the vote counts of k threshold-ERM chunks drawn from their exact
  order-statistic law (realizable U[0,1] data), so utility runs at paper scale need no data;
* :func:`noisy_threshold_counts`: the same with label noise η (agnostic case), materialised;
  :class:`NoisyThresholdLaw`: its chunk threshold's law in closed form (counts in O(m));
* :func:`rate_parameters`: the self-consistent (α, T, k, n/k) behind Theorems 3.4/3.5 for a
  given n and m (T from Theorem 3.2, k from Algorithm 2, α from the learner's guarantee at
  confidence β/k); :func:`binclas_rates` measures A_binClas's misclassification rate with them.

References
----------
R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018:
Theorems 3.2, 3.4, 3.5, Claim 4.1, Theorem 4.2, Algorithm 3.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcheck.errors import InvalidArgument

from .core import BOT, ABinClas, BinClasCounts, BinClasParams

__all__ = ["APriv", "ThresholdERM", "MajorityLearner", "threshold_erm_batch",
           "threshold_erm_counts", "noisy_threshold_counts", "noisy_threshold_counts_lazy",
           "NoisyThresholdLaw",
           "theorem_3_2_cutoff", "RateParameters", "rate_parameters", "binclas_rates",
           "h_priv_labels", "apriv_errors", "sorted_uniforms"]


def theorem_3_2_cutoff(alpha: float, beta: float, m: int, gamma: float = 0.0) -> float:
    """Theorem 3.2's T = 3((γ+α)m + sqrt((γ+α)m·ln(m/β)/2))."""
    a = (gamma + alpha) * m
    return 3.0 * (a + math.sqrt(a * math.log(m / beta) / 2.0))




def threshold_erm_batch(queries: NDArray[np.float64], labels: NDArray[Any]) -> NDArray[np.int64]:
    """ThresholdERM on (queries, each row of ``labels``): the index into sorted(queries) ∪ {+∞}."""
    order = np.argsort(queries, kind="stable")
    y = labels[:, order]
    b = y.shape[0]
    ones_before = np.concatenate([np.zeros((b, 1), np.int64), np.cumsum(y == 1, axis=1)], axis=1)
    zeros = (y == 0)[:, ::-1]
    zeros_from = np.concatenate([np.cumsum(zeros, axis=1)[:, ::-1], np.zeros((b, 1), np.int64)],
                                axis=1)
    return np.argmin(ones_before + zeros_from, axis=1)


def h_priv_labels(outputs: NDArray[np.int8], rng: np.random.Generator) -> NDArray[np.int8]:
    """h_priv as a binary classifier (§4, before Algorithm 3): A_binClas's labels, with every
    ⊥ and HALT replaced by a uniformly random label — a fresh fair coin per query and per run,
    so the labelled public points are i.i.d. draws from (𝒟_X, h_priv) as Theorem 4.2's proof
    needs. The ONE implementation of this step (:class:`APriv` and :func:`apriv_errors`)."""
    coins = rng.integers(0, 2, np.shape(outputs), dtype=np.int8)
    return np.where(np.asarray(outputs) >= BOT, coins, outputs).astype(np.int8)


@dataclass(frozen=True)
class APriv:
    """A_priv (Algorithm 3): label the public points with A_binClas (⊥ and HALT → fair coins),
    train threshold ERM on them, output the index of ĥ's threshold in sorted(Q) ∪ {+∞}.

    Post-processing of A_binClas: inherits its (ε, δ) (notes §2.4).
    """

    binclas: ABinClas

    def sample(self, data: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """``size`` runs; each returns ĥ's threshold index."""
        labels = h_priv_labels(self.binclas.sample(data, size, rng), rng)
        return threshold_erm_batch(np.asarray(self.binclas.queries, float), labels)



class ThresholdERM:
    """ERM over thresholds h_t(x) = 1[x ≥ t], t ∈ data ∪ {+∞}; ties → smallest t.

    On realizable data this is "the smallest positive point" (+∞ without positives).
    """

    def fit_threshold(self, X: NDArray[Any], y: NDArray[Any]) -> float:
        """The ERM threshold."""
        X = np.asarray(X, dtype=float).ravel()
        y = np.asarray(y).ravel()
        order = np.argsort(X, kind="stable")
        xs, ys = X[order], y[order]
        # error of t = xs[j]: ones strictly before j + zeros from j on (ties of x: first index)
        ones_before = np.concatenate([[0], np.cumsum(ys == 1)])
        zeros_from = np.concatenate([np.cumsum((ys == 0)[::-1])[::-1], [0]])
        err = ones_before + zeros_from
        valid = np.concatenate([np.r_[True, xs[1:] != xs[:-1]], [True]])
        j = int(np.flatnonzero(valid)[np.argmin(err[valid])])
        return float(xs[j]) if j < xs.size else math.inf

    def __call__(self, X: NDArray[Any], y: NDArray[Any]) -> Callable[[NDArray[Any]], NDArray[Any]]:
        t = self.fit_threshold(X, y)
        return lambda q: (np.asarray(q, dtype=float) >= t).astype(np.int8)


class MajorityLearner:
    """Constant classifier: the majority label of its chunk (tie and empty chunk → 0)."""

    def __call__(self, X: NDArray[Any], y: NDArray[Any]) -> Callable[[NDArray[Any]], NDArray[Any]]:
        label = int(2 * int(np.sum(np.asarray(y) == 1)) > np.size(y))
        return lambda q: np.full(np.shape(q)[0], label, dtype=np.int8)



def threshold_erm_counts(t_star: float, n_chunk: int, k: int, queries: NDArray[np.float64],
                         rng: np.random.Generator) -> NDArray[np.int64]:
    """Exact vote counts of k ThresholdERM chunks of ``n_chunk`` realizable U[0,1] points.

    Each chunk's threshold t̂ is its smallest positive point, i.i.d. over chunks with CDF
    ``F(q) = 1 − (1 − (q − t*))^{n_chunk}`` for ``t* ≤ q ≤ 1`` (0 below t*; t̂ = +∞ when the
    chunk has no positive point). The counts ``#{j : t̂_j ≤ q}`` at the sorted queries are the
    cumulative sums of one multinomial draw of k over the cells between them — exact in law,
    O(m) whatever k, without materialising data or thresholds.
    """
    q = np.asarray(queries, dtype=float)
    order = np.argsort(q, kind="stable")
    x = np.clip(q[order] - t_star, 0.0, 1.0 - t_star)
    cdf = -np.expm1(n_chunk * np.log1p(-x))            # F at the sorted queries
    cells = np.diff(cdf, prepend=0.0)
    draw = rng.multinomial(k, np.append(cells, max(0.0, 1.0 - cdf[-1])) if q.size else [1.0])
    counts = np.empty(q.size, dtype=np.int64)
    counts[order] = np.cumsum(draw[:-1])
    return counts


def noisy_threshold_counts(t_star: float, eta: float, n_chunk: int, k: int,
                           queries: NDArray[np.float64], rng: np.random.Generator,
                           window: float = 30.0, block: int = 4096) -> NDArray[np.int64]:
    """Vote counts of k ThresholdERM chunks, each fit on ``n_chunk`` U[0,1] points labelled
    ``1[x ≥ t*]`` flipped independently w.p. ``eta`` (γ = η < 1/2); ties → smallest threshold.

    Only the points within W = ``window``/n_chunk of t* are drawn (Bin(n_chunk, 2W) of them):
    the points outside add a constant to every in-window candidate's error, and the ERM leaves
    the window only if the error walk (drift 1 − 2η per point) falls back by ≈ (1−2η)·window,
    probability ≲ (η/(1−η))^{(1−2η)·window/2} (< 1e-15 at η ≤ 0.1, window 30; then t̂ = t*±W).
    """
    if not 0 <= eta < 0.5:
        raise InvalidArgument(f"eta={eta!r} must be in [0, 1/2)")
    half = min(window / n_chunk, t_star, 1 - t_star)
    thresholds = np.empty(k)
    for lo in range(0, k, block):
        b = min(block, k - lo)
        n_in = rng.binomial(n_chunk, 2 * half, b)
        L = int(n_in.max()) if b else 0
        valid = np.arange(L) < n_in[:, None]
        x = np.where(valid, t_star - half + 2 * half * rng.random((b, L)), np.inf)
        order = np.argsort(x, axis=1)
        x = np.take_along_axis(x, order, axis=1)
        valid = np.take_along_axis(valid, order, axis=1)
        y = (x >= t_star) ^ (rng.random((b, L)) < eta)
        zeros = np.zeros((b, 1), np.int64)
        ones_before = np.concatenate([zeros, np.cumsum(y & valid, axis=1)], axis=1)
        zeros_from = np.concatenate([np.cumsum((~y & valid)[:, ::-1], axis=1)[:, ::-1], zeros],
                                    axis=1)
        j = np.argmin(ones_before + zeros_from, axis=1)
        xs = np.concatenate([np.minimum(x, t_star + half), np.full((b, 1), t_star + half)],
                            axis=1)
        thresholds[lo:lo + b] = xs[np.arange(b), j]
    thresholds.sort()
    return np.searchsorted(thresholds, queries, side="right").astype(np.int64)


def noisy_threshold_counts_lazy(t_star: float, eta: float, n_chunk: int, k: int,
                                queries: NDArray[np.float64], rng: np.random.Generator,
                                window: float = 30.0) -> NDArray[np.int64]:
    """:func:`noisy_threshold_counts` drawn only when it matters (issue 27; same values).

    Every chunk threshold that function returns lies in ``[t* − W, t* + W]`` (W = ``half``
    there: the in-window points and the clamp to ``t* + W``), so a query below ``t* − W`` gets
    count 0 and one at or above ``t* + W`` gets ``k``, whatever the draws. The k chunks are
    drawn (by :func:`noisy_threshold_counts`, from ``rng`` in its state at the call) only when
    some query lies in ``[t* − W, t* + W)``; otherwise the counts are these constants and
    ``rng`` is not used. The result equals ``noisy_threshold_counts`` on the same generator
    state (tested); at the Claim 4.1 sizes (W = 1.2e-4, m = 1565) 68 % of runs skip the draw.
    """
    if not 0 <= eta < 0.5:
        raise InvalidArgument(f"eta={eta!r} must be in [0, 1/2)")
    half = min(window / n_chunk, t_star, 1 - t_star)
    q = np.asarray(queries, dtype=float)
    if ((q >= t_star - half) & (q < t_star + half)).any():
        return noisy_threshold_counts(t_star, eta, n_chunk, k, q, rng, window)
    return np.where(q >= t_star + half, k, 0).astype(np.int64)


def _stay_nonnegative(n: int, up: float, strict: bool) -> NDArray[np.float64]:
    """``out[i, h]`` = P(a ±1 walk from 0 with P(+1) = ``up`` is at height h after i steps and
    stayed ≥ 0 (``strict``: > 0 after step 0) throughout), i, h ∈ [0, n]."""
    out = np.zeros((n + 1, n + 2))
    out[0, 0] = 1.0
    for i in range(n):
        nxt = np.zeros(n + 2)
        nxt[1:] = out[i, :-1] * up
        nxt[:-1] += out[i, 1:] * (1.0 - up)
        if strict:
            nxt[0] = 0.0
        out[i + 1] = nxt
    return out[:, :n + 1]


class NoisyThresholdLaw:
    """The exact law of one chunk threshold of :func:`noisy_threshold_counts`, in closed form
    (issue 27: counts at a cost independent of k).

    That sampler draws ``(n_L, n_R)`` points left / right of t* in the window [t* − W, t* + W)
    (Multinomial(n_chunk; W, W)), labels ``1[x ≥ t*]`` flipped w.p. η, and takes the first
    minimiser j of the error walk S_j = #{ones before j} + #{zeros from j}; the threshold is the
    j-th sorted point, or t* + W past the last. Read from the boundary point j = n_L, the walk
    splits into two independent ±1 walks of n_L (leftwards) and n_R (rightwards) steps, each
    +1 w.p. 1 − η; with m_A, m_B their minima, the first minimiser is on the left (at the last
    index I of A's minimum, counted from the boundary) iff m_A ≤ m_B, else on the right (at the
    first index J of B's minimum). By the Markov property at the minimiser, P(m_A = −h, I = i)
    = P(a walk of i steps ends at its weak minimum −h)·P(n_L − i steps stay > 0), and P(m_B =
    −h, J = j) = P(j steps first reach −h at step j)·P(n_R − j steps stay ≥ 0); the first
    factors are walks kept ≥ 0 (> 0) in reversed time. Given (n_L, n_R, side, index) the
    threshold is a uniform order statistic: t* − W + W·Beta(n_L − I + 1, I) (I ≥ 1),
    t* + W·Beta(J + 1, n_R − J) (J < n_R; J = 0 when I = 0), or the atom t* + W. F is this
    mixture; n_L, n_R are truncated where Bin(n_chunk, W)'s tail is below 1e-18.

    References
    ----------
    R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018,
    Theorem 3.5 (the agnostic rate test runs A_binClas on counts drawn from this law).
    """

    def __init__(self, t_star: float, eta: float, n_chunk: int, window: float = 30.0) -> None:
        if not 0 <= eta < 0.5:
            raise InvalidArgument(f"eta={eta!r} must be in [0, 1/2)")
        if not isinstance(n_chunk, (int, np.integer)) or n_chunk < 1:
            raise InvalidArgument(f"n_chunk={n_chunk!r} must be an int >= 1")
        if not 0 < t_star < 1:
            raise InvalidArgument(f"t_star={t_star!r} must be in (0, 1)")
        from scipy.stats import binom
        self.t_star, self.half = float(t_star), min(window / n_chunk, t_star, 1 - t_star)
        W = self.half
        n = int(n_chunk * W)                     # smallest n with P(Bin(n_chunk, W) > n) < 1e-18
        while n < n_chunk and binom.sf(n, n_chunk, W) >= 1e-18:
            n += 1
        up = 1.0 - eta
        weak_end = _stay_nonnegative(n, eta, strict=False)      # reversed walk: P(+1) = η
        first_end = _stay_nonnegative(n, eta, strict=True)
        stay_gt = _stay_nonnegative(n, up, strict=True).sum(axis=1)
        stay_ge = _stay_nonnegative(n, up, strict=False).sum(axis=1)
        idx = np.arange(n + 1)
        # pa[nl, i, h] = P(m_A = −h, I = i | n_L = nl); pb likewise (first index J)
        valid = idx[None, :] <= idx[:, None]                           # i <= nl
        rest = np.clip(idx[:, None] - idx[None, :], 0, n)
        pa = (weak_end[None, :, :] * (stay_gt[rest] * valid)[:, :, None])
        pb = (first_end[None, :, :] * (stay_ge[rest] * valid)[:, :, None])
        cdf_a = np.cumsum(pa.sum(axis=1), axis=1)                      # P(h_A <= h | n_L)
        cdf_b = np.cumsum(pb.sum(axis=1), axis=1)
        pl = binom.pmf(idx, n_chunk, W)
        w = pl[:, None] * binom.pmf(idx[None, :], n_chunk - idx[:, None], W / (1 - W))
        g_b = w @ cdf_b                                                # [nl, h]: Σ w P(h_B <= h)
        left = np.einsum("lih,lh->li", pa, g_b)                        # side left, I = i
        h_a = np.concatenate([np.zeros((n + 1, 1)), cdf_a[:, :-1]], axis=1)   # P(h_A < h)
        right = np.einsum("rjh,rh->rj", pb, w.T @ h_a)                 # side right, J = j
        # I = 0 (threshold = the first right point): Σ_nl w·P(h_A = 0, I = 0)·P(h_B = 0)
        first_right = (w * pa[:, 0, 0][:, None]).sum(axis=0) * cdf_b[:, 0]
        nl, ii = np.nonzero(left[:, 1:] > 0)
        ii = ii + 1                                                    # I >= 1 (I <= n_L)
        nr, jj = np.nonzero(right > 0)
        keep = (jj >= 1) & (jj < nr)
        self._left = (nl - ii + 1.0, ii.astype(float), left[nl, ii])
        self._right = (np.r_[np.ones(n), jj[keep] + 1.0], np.r_[idx[1:], nr[keep] - jj[keep]],
                       np.r_[first_right[1:], right[nr[keep], jj[keep]]])
        self.atom = float(first_right[0] + right[idx, idx][1:].sum())
        self.total = float(self._left[2].sum() + self._right[2].sum() + self.atom)
        # terms below 1e-20 (about half at the test sizes) dropped from the CDF (≤ 1e-15, tested)
        parts = []
        for a, b, p in (self._left, self._right):
            keep = p >= 1e-20
            parts.append((a[keep], b[keep], p[keep]))
        self.pruned = self.total - self.atom - float(sum(p.sum() for _, _, p in parts))
        self._left, self._right = parts

    def cdf(self, q: ArrayLike) -> NDArray[np.float64]:
        """P(t̂ ≤ q) for one chunk threshold t̂."""
        from scipy.special import betainc
        q = np.atleast_1d(np.asarray(q, dtype=float))
        t, W = self.t_star, self.half
        out = np.where(q >= t + W, 1.0, 0.0)
        inside = (q >= t - W) & (q < t + W)
        if inside.any():
            x = q[inside]
            a, b, p = self._left
            s = betainc(a, b, np.clip((x[:, None] - t + W) / W, 0.0, 1.0)) @ p
            a, b, p = self._right
            s += betainc(a, b, np.clip((x[:, None] - t) / W, 0.0, 1.0)) @ p
            out[inside] = np.minimum(1.0, s)
        return out

    def counts(self, k: int, queries: ArrayLike, rng: np.random.Generator
               ) -> NDArray[np.int64]:
        """Vote counts ``#{j ≤ k : t̂_j ≤ q}`` of k i.i.d. chunk thresholds at the queries: 0
        below t* − W, k at or above t* + W, and at the r in-window queries (sorted) the
        cumulative sums of one Multinomial(k; F-increments) — the law of
        :func:`noisy_threshold_counts` (tested), at a cost O(m + r·#mixture terms)."""
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidArgument(f"k={k!r} must be an int >= 1")
        q = np.asarray(queries, dtype=float)
        t, W = self.t_star, self.half
        out = np.where(q >= t + W, k, 0).astype(np.int64)
        inside = np.flatnonzero((q >= t - W) & (q < t + W))
        if inside.size:
            order = inside[np.argsort(q[inside], kind="stable")]
            f = np.maximum.accumulate(self.cdf(q[order]))
            cells = np.diff(f, prepend=0.0)
            draw = rng.multinomial(k, np.append(cells, max(0.0, 1.0 - f[-1])))
            out[order] = np.cumsum(draw[:-1])
        return out


@dataclass(frozen=True)
class RateParameters:
    """Self-consistent constants for one (n, m): learner error α at confidence β/k on n/k
    points, T (Theorem 3.2, floored at 1), k (Algorithm 2) and the chunk size n/k."""

    alpha: float
    T: float
    k: int
    n_chunk: int
    params: BinClasParams


def rate_parameters(n: int, m: int, *, epsilon: float = 1.0, delta: float = 1e-5,
                    beta: float = 0.05, gamma: float = 0.0) -> RateParameters:
    """The proof of Theorems 3.4 (γ = 0) and 3.5 (γ > 0) made concrete for 1-D thresholds (V=1).

    α is the threshold-ERM guarantee for n/k points at confidence β/k: realizable (one-sided)
    ``1 − (β/k)^{k/n}``; agnostic (DKW, ours) ``sqrt(8 ln(4k/β)/(n/k))``. T = Theorem 3.2's
    cutoff at (α, β, m, γ), but at least 1 (the theorems use m̄ = max(M, m): below M, T = Θ̃(1)),
    and k = k(T) from Algorithm 2; iterated to the fixed point T = T(α(k(T))).
    """
    T = 1.0
    for _ in range(200):
        p = BinClasParams(epsilon, delta, T, m, beta=beta)
        k = p.k
        n_chunk = n // k
        if n_chunk < 1:
            raise InvalidArgument(f"n={n} is smaller than k={k}")
        if gamma == 0:
            alpha = -math.expm1(math.log(beta / k) / n_chunk)
        else:
            alpha = min(1.0, math.sqrt(8 * math.log(4 * k / beta) / n_chunk))
        T_new = max(1.0, theorem_3_2_cutoff(alpha, beta, m, gamma))
        if abs(T_new - T) <= 1e-9 * T:
            break
        T = T_new
    p = replace(p, T=T_new)
    return RateParameters(alpha, T_new, p.k, n // p.k, p)


def binclas_rates(rp: RateParameters, runs: int, rng: np.random.Generator, *, eta: float = 0.0,
                  t_star: float = 0.5) -> NDArray[np.float64]:
    """Per-run misclassification rate of A_binClas (⊥ and HALT count as errors, notes D10) on m
    fresh U[0,1] queries. Realizable (η = 0): exact count sampler, the rate against the labels.
    Agnostic: the *excess* rate over γ = η, computed against the clean labels without label noise
    in the estimate: rate − η = (1 − η)·P(⊥/HALT) + (1 − 2η)·P(label ≠ h*(x)).
    """
    p = rp.params
    out = np.empty(runs)
    for r in range(runs):
        q = rng.random(p.m)
        if eta == 0:
            counts = threshold_erm_counts(t_star, rp.n_chunk, rp.k, q, rng)
        else:
            counts = noisy_threshold_counts(t_star, eta, rp.n_chunk, rp.k, q, rng)
        o = BinClasCounts(p).sample(counts, 1, rng)[0]
        clean = (q >= t_star).astype(np.int8)
        no_label = o >= BOT
        out[r] = (1 - eta) * np.mean(no_label) + (1 - 2 * eta) * np.mean(~no_label & (o != clean))
    return out


def sorted_uniforms(m: int, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``(size, m)`` rows of the order statistics of m i.i.d. U[0,1] (normalised cumulative
    Exp(1) spacings: exact in law, O(m) per row, no sort)."""
    e = np.cumsum(rng.standard_exponential((size, m + 1)), axis=1)
    return e[:, :m] / e[:, m:]


def apriv_errors(params: BinClasParams, n_chunk: int, size: int, rng: np.random.Generator,
                 t_star: float = 0.5, mechanism: Any = None) -> NDArray[np.float64]:
    """``size`` independent draws of err(ĥ; 𝒟) of A_priv (realizable thresholds, x ~ U[0,1]):
    A_binClas labels the m public points (⊥/HALT → fair coins), threshold ERM on them gives t̂,
    and err = |min(t̂, 1) − t*| exactly.

    An i.i.d. U[0,1] query sample in A_binClas's processing order is (its order statistics, a
    uniformly random order): the queries are drawn sorted (:func:`sorted_uniforms`) and handed
    to the mechanism permuted by a fresh uniform permutation; the votes are drawn from the
    exact multinomial of :func:`threshold_erm_counts` on the sorted queries (vectorised over
    runs), and threshold ERM runs on the sorted queries with the labels un-permuted (same
    first-minimum tie rule as :func:`threshold_erm_batch`). Only the mechanism runs once per
    run (``mechanism`` replaces the count-level A_binClas, default ``BinClasCounts(params)``;
    a buggy variant for mutant runs).
    """
    m, k = params.m, params.k
    mech = BinClasCounts(params) if mechanism is None else mechanism
    out = np.empty(size)
    block = max(1, min(size, 2_000_000 // (m + 1)))
    for lo in range(0, size, block):
        b = min(block, size - lo)
        q = sorted_uniforms(m, b, rng)
        x = np.clip(q - t_star, 0.0, 1.0 - t_star)
        cdf = -np.expm1(n_chunk * np.log1p(-x))
        cells = np.diff(cdf, axis=1, prepend=0.0)
        pvals = np.concatenate([cells, np.maximum(0.0, 1.0 - cdf[:, -1:])], axis=1)
        counts = np.cumsum(rng.multinomial(k, pvals)[:, :m], axis=1)
        for r in range(b):
            perm = rng.permutation(m)
            o = mech.sample(counts[r, perm], 1, rng)[0]
            labels = np.empty(m, dtype=np.int8)
            labels[perm] = h_priv_labels(o, rng)
            ones_before = np.concatenate([[0], np.cumsum(labels == 1)])
            zeros_from = np.concatenate([np.cumsum((labels == 0)[::-1])[::-1], [0]])
            j = int(np.argmin(ones_before + zeros_from))
            t_hat = float(q[r, j]) if j < m else 1.0
            out[lo + r] = abs(min(t_hat, 1.0) - t_star)
    return out
