"""``PrivateThreshold`` (Algorithm 1): private binary search over thresholds split at private medians.

Verbatim from the paper (notes §3.6): ``l ← 0, r ← N, ε' ← ε/(4T)``; for ``k = 1..T``: break if
``l = r``; ``mid ← PrivateMedian(z, ε', l, r, θ^{k−1})``; ``v_mid, v_l, v_r`` = ``E_t(f_mid)``,
``min_{u∈[l,mid−1]} E_t(f_u)``, ``min_{u∈[mid+1,r]} E_t(f_u)`` each plus ``Lap(1/ε')`` (count form of
``err^t_z + Lap(1/(nε'))``; an empty range is ``+∞`` without noise); return ``f_mid`` if
``v_mid < min(v_l, v_r)``, else recurse left if ``v_l < v_r``, else right; finally return ``f_l``.
The output is the threshold index ``u ∈ {0..N}`` (``f_u(x) = 1[x > u]``).

Privacy: per round one exponential mechanism and three Laplace releases at ε' each, 4Tε' = ε by
basic composition (:attr:`PrivateThreshold.ledger`).

Exact law: a dynamic programme over the states ``(l, r)`` of each round, with the median's
exponential-mechanism pmf and the closed-form branch probabilities of
:mod:`.laplace_race`. The sampler simulates the algorithm itself (Laplace draws, vectorised over
runs), so the audit's sampler-vs-pmf check compares two independent computations.

Mutant knobs (notes §5): ``median`` ``"exact"`` (B4) / ``"midpoint"`` (B10); ``check_mid=False``
(B9: only the two halves compared); ``shared_noise=True`` (B8); ``releases_per_round=1`` (B3:
``ε' = ε/T``).

References
----------
Li–Wang–Ye (seed 002): Algorithm 1, Lemma 5.1, proof of Theorem 5.2 (Appendix D.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.mechanisms.primitives import _check_rng, _check_size
from dpcheck.validation import check_choice, check_epsilon, check_int, check_real
from dpcheck.errors import InvalidArgument

from .data import Users, as_users
from .laplace_race import branch_probabilities
from .median import median_probabilities
from .scores import threshold_user_errors

__all__ = ["PrivateThreshold", "range_minima"]


def range_minima(errors: np.ndarray) -> np.ndarray:
    """``RM[a, b] = min(errors[a..b])`` for ``a ≤ b`` (``+inf`` below the diagonal)."""
    k = errors.size
    out = np.full((k, k), np.inf)
    e = errors.astype(float)
    for a in range(k):
        out[a, a:] = np.minimum.accumulate(e[a:])
    return out


@dataclass(frozen=True)
class PrivateThreshold:
    """Algorithm 1 over ``X = {1..domain}`` with ``T`` rounds, user-level error parameter ``t``.

    Parameters
    ----------
    epsilon
        Total privacy budget ε (each release gets ``ε/(releases_per_round·T)``).
    rounds
        ``T ≥ 1``.
    t
        The user-level error parameter (public; chosen from ``η̂`` by the pipeline).
    m, domain
        Examples per user, ``N``.
    theta
        Decaying factor θ ∈ (0, 1): round ``k``'s median uses mass bound ``θ^{k−1}``.
    """

    epsilon: float
    rounds: int
    t: int
    m: int
    domain: int
    theta: float = 2.0 / 3.0
    median: str = "private"
    check_mid: bool = True
    shared_noise: bool = False
    releases_per_round: int = 4

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "rounds", check_int(self.rounds, "rounds", minimum=1))
        object.__setattr__(self, "t", check_int(self.t, "t", minimum=0))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "domain", check_int(self.domain, "domain", minimum=1))
        th = check_real("theta", self.theta)
        if not 0 < th < 1:
            raise InvalidArgument(f"theta={self.theta!r} must be in (0, 1)")
        object.__setattr__(self, "median",
                           check_choice(self.median, "median", ("private", "exact", "midpoint")))
        object.__setattr__(self, "releases_per_round",
                           check_int(self.releases_per_round, "releases_per_round", minimum=1))

    @property
    def release_epsilon(self) -> float:
        """ε' = ε/(4T)."""
        return self.epsilon / (self.releases_per_round * self.rounds)

    def ledger(self, rounds_run: int | None = None) -> list[float]:
        """ε of every release in ``rounds_run`` executed rounds (default T): 4 per round."""
        k = self.rounds if rounds_run is None else rounds_run
        return [self.release_epsilon] * (4 * k)

    def _median(self, users: Users, lo: int, hi: int, k: int,
                cache: dict[int, np.ndarray] | None = None) -> np.ndarray:
        return median_probabilities(users, lo, hi, self.theta ** (k - 1), self.release_epsilon,
                                    self.median, cache)

    def _round(self, rm: np.ndarray, errors: np.ndarray, lo: int, hi: int, mid: int
               ) -> tuple[float, float, float]:
        mu_l = None if mid == lo else rm[lo, mid - 1]
        mu_r = None if mid == hi else rm[mid + 1, hi]
        if not self.check_mid:  # B9: f_mid never returned; compare the halves only
            if mu_l is None:
                return 0.0, 0.0, 1.0
            if mu_r is None:
                return 0.0, 1.0, 0.0
            _, pl, pr = branch_probabilities(1e300, mu_l, mu_r, 1.0 / self.release_epsilon,
                                             shared_noise=self.shared_noise)
            s = pl + pr
            return 0.0, pl / s, pr / s
        return branch_probabilities(float(errors[mid]), mu_l, mu_r, 1.0 / self.release_epsilon,
                                    shared_noise=self.shared_noise)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact distribution of the returned threshold index."""
        users = as_users(data, self.m, self.domain)
        errors = threshold_user_errors(users, self.t)
        rm = range_minima(errors)
        out: dict[int, float] = {}
        prefixes: dict[int, np.ndarray] = {}
        states = {(0, self.domain): 1.0}
        for k in range(1, self.rounds + 1):
            nxt: dict[tuple[int, int], float] = {}
            for (lo, hi), w in states.items():
                if lo == hi:
                    out[lo] = out.get(lo, 0.0) + w
                    continue
                probs = self._median(users, lo, hi, k, prefixes)
                for i, pm in enumerate(probs):
                    if pm == 0.0:
                        continue
                    mid = lo + i
                    pr_ret, pr_l, pr_r = self._round(rm, errors, lo, hi, mid)
                    if pr_ret:
                        out[mid] = out.get(mid, 0.0) + w * pm * pr_ret
                    if pr_l:
                        key = (lo, mid - 1)
                        nxt[key] = nxt.get(key, 0.0) + w * pm * pr_l
                    if pr_r:
                        key = (mid + 1, hi)
                        nxt[key] = nxt.get(key, 0.0) + w * pm * pr_r
            states = nxt
        for (lo, _), w in states.items():
            out[lo] = out.get(lo, 0.0) + w
        return {u: p for u, p in sorted(out.items()) if p > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent runs of Algorithm 1 (int64 threshold indices)."""
        users = as_users(data, self.m, self.domain)
        n, gen = _check_size(size), _check_rng(rng)
        errors = threshold_user_errors(users, self.t).astype(float)
        rm = range_minima(errors)
        b = 1.0 / self.release_epsilon
        lo = np.zeros(n, dtype=np.int64)
        hi = np.full(n, self.domain, dtype=np.int64)
        out = np.full(n, -1, dtype=np.int64)
        active = np.ones(n, dtype=bool)
        cache: dict[tuple[int, int, int], np.ndarray] = {}
        prefixes: dict[int, np.ndarray] = {}
        for k in range(1, self.rounds + 1):
            stop = active & (lo == hi)
            out[stop] = lo[stop]
            active &= ~stop
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            mid = np.empty(idx.size, dtype=np.int64)
            keys = lo[idx] * (self.domain + 1) + hi[idx]
            for key in np.unique(keys):
                a, c = divmod(int(key), self.domain + 1)
                sel = keys == key
                if (a, c, k) not in cache:
                    cache[(a, c, k)] = np.cumsum(self._median(users, a, c, k, prefixes))
                cdf = cache[(a, c, k)]
                u = gen.random(int(sel.sum())) * cdf[-1]
                mid[sel] = a + np.minimum(np.searchsorted(cdf, u, side="right"), cdf.size - 1)
            l_i, h_i = lo[idx], hi[idx]
            m_l = np.where(mid > l_i, rm[l_i, np.maximum(mid - 1, 0)], np.inf)
            m_r = np.where(mid < h_i, rm[np.minimum(mid + 1, self.domain), h_i], np.inf)
            m_r = np.where(mid < h_i, m_r, np.inf)
            if self.shared_noise:
                noise = gen.laplace(0.0, b, idx.size)
                nm = nl = nr = noise
            else:
                nm, nl, nr = (gen.laplace(0.0, b, idx.size) for _ in range(3))
            v_mid = errors[mid] + nm if self.check_mid else np.full(idx.size, np.inf)
            v_l = m_l + np.where(np.isfinite(m_l), nl, 0.0)
            v_r = m_r + np.where(np.isfinite(m_r), nr, 0.0)
            ret = v_mid < np.minimum(v_l, v_r)
            left = ~ret & (v_l < v_r)
            right = ~ret & ~left
            out[idx[ret]] = mid[ret]
            active[idx[ret]] = False
            hi[idx[left]] = mid[left] - 1
            lo[idx[right]] = mid[right] + 1
        out[active] = lo[active]
        return out
