"""Subsampling and privacy amplification.

:class:`Subsample` runs a mechanism on a random subsample of the data (without replacement: a
uniform m-subset; with replacement: m i.i.d. draws); the ``amplified_epsilon_*`` functions bound
the privacy of the result. Fast path: for sum mechanisms (:class:`~algorithms.mechanisms.primitives.LaplaceSum`,
:class:`~algorithms.mechanisms.primitives.GeometricSum`) the subsample sums are drawn directly and the noise
is added in one call.

References
----------
B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS 2018, Theorems 8 and 9 (not re-verified against the paper
text here; the with-replacement bound is derived in this module's docstrings and tested).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from algorithms.mechanisms.primitives import GeometricSum, LaplaceSum, _check_rng, _check_size
from algorithms.mechanisms.selection import _check_bool
from dpcheck.validation import fmt, check_epsilon, check_int, check_real
from dpcheck.claims import PureDP
from dpcheck.errors import InvalidArgument

__all__ = [
    "Subsample", "amplified_epsilon_without_replacement", "amplified_epsilon_poisson",
    "amplified_epsilon_with_replacement",
]

_CHUNK = 1 << 22  # max random draws held in memory at once
_MAX_ENUMERATION = 200_000  # max subsamples enumerated by Subsample.pmf
_SUM_MECHANISMS = (LaplaceSum, GeometricSum)


def _check_mn(m: Any, n: Any, *, replace: bool) -> tuple[int, int]:
    mm, nn = check_int(m, "m", minimum=1), check_int(n, "n", minimum=1)
    if not replace and mm > nn:
        raise InvalidArgument(f"m={m!r} must be <= n={n!r} when sampling without replacement")
    return mm, nn


def amplified_epsilon_without_replacement(epsilon: float, m: int, n: int) -> float:
    """``ln(1 + (m/n)(e^ε − 1))``: privacy of an ε-DP mechanism run on a uniform m-subset.

    Relation: replace-one on datasets of size n (the inner mechanism ε-DP under replace-one on
    size m); for (ε, δ) inner mechanisms δ′ = (m/n)δ. Proof: the argument of
    :func:`amplified_epsilon_with_replacement` with K ∈ {0, 1}, P[K = 1] = m/n. Tight:
    Laplace / geometric sums attain it on ``[0]*n`` vs ``[Δ] + [0]*(n−1)`` (for outputs ≥ Δ
    the ratio is exactly ``1 − m/n + (m/n)e^ε``).

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, NeurIPS 2018, Theorem 9 (recalled; the paper text was not
    re-verified here, the bound and its tightness are checked by exact enumeration in the tests).
    """
    eps, (mm, nn) = check_epsilon(epsilon), _check_mn(m, n, replace=False)
    return math.log1p(mm / nn * math.expm1(eps))


def amplified_epsilon_poisson(epsilon: float, rate: float) -> float:
    """``ln(1 + γ(e^ε − 1))``: an ε-DP mechanism run on a Poisson subsample of rate γ.

    Relation: add/remove-one (inner mechanism ε-DP under add/remove). Tight for counts.

    References
    ----------
    N. Li, W. Qardaji, D. Su, ASIACCS 2012, Theorem 1; B. Balle, G. Barthe, M. Gaboardi,
    NeurIPS 2018, Theorem 8 (recalled, not re-verified; checked by exact enumeration).
    """
    eps, gamma = check_epsilon(epsilon), check_real("rate", rate)
    if not 0.0 < gamma <= 1.0:
        raise InvalidArgument(f"rate={rate!r} must be in (0, 1]")
    return math.log1p(gamma * math.expm1(eps))


def amplified_epsilon_with_replacement(epsilon: float, m: int, n: int) -> float:
    """A pure-DP bound for an ε-DP mechanism run on m i.i.d. uniform draws from n records.

    Relation: replace-one. Derivation: couple the draws; K ~ Bin(m, 1/n) counts draws of the
    changed record, ``w_k = P[K = k]``, ``P_k`` / ``P′_k`` the output laws given K = k and
    ``P_0 = P′_0``. Replacing the k copies by fresh draws from the other records gives
    ``P′_k ≤ e^{kε}P_0`` and ``P_k ≥ e^{−kε}P_0``; the same draws give ``P′_k ≤ e^{kε}P_k``.
    Hence ``P′/P ≤ max over u_k ∈ [e^{−kε}, 1] of (w_0 + Σ w_k e^{kε}u_k)/(w_0 + Σ w_k u_k)``,
    a linear-fractional maximum attained at a threshold vertex, computed exactly here (and
    symmetric in D, D′). When ``(1 + (e^ε − 1)/n)^m ≤ e^ε`` it equals ``m·ln(1 + (e^ε − 1)/n)``
    and Laplace / geometric sums attain it on ``[0]*n`` vs ``[Δ] + [0]*(n−1)``; otherwise it may
    be loose (never above mε; n = 1 gives mε).

    The often-quoted ``ln(1 + (1 − (1 − 1/n)^m)(e^ε − 1))`` is not a pure-DP bound for m ≥ 2 (a
    record drawn twice leaks 2ε; the sums above exceed it). Balle, Barthe & Gaboardi (2018)
    pair it with a δ′ > 0 built from group-privacy profiles (recalled, not re-verified).
    """
    eps, (mm, nn) = check_epsilon(epsilon), _check_mn(m, n, replace=True)
    if nn == 1:
        return mm * eps
    k = np.arange(mm + 1)
    logw = binom.logpmf(k, mm, 1.0 / nn)
    best = -math.inf
    for k0 in range(1, mm + 2):  # u_k = e^{−kε} below k0, u_k = 1 from k0 on
        low = k < k0
        num = logsumexp(np.where(low, logw, logw + k * eps))
        den = logsumexp(np.where(low & (k > 0), logw - k * eps, logw))
        best = max(best, float(num - den))
    return min(best, mm * eps)


@dataclass(frozen=True, slots=True)
class Subsample:
    """Run ``mechanism`` on a random subsample of ``m`` of the records.

    Without replacement: a uniform m-subset, in the records' original order. With replacement:
    m i.i.d. uniform draws, in draw order.

    Sampling: for a :class:`~algorithms.mechanisms.primitives.LaplaceSum` or ``GeometricSum`` (data enter
    only through the sum) the subsample sums are drawn directly — multivariate hypergeometric /
    multinomial counts of ≤ 8 distinct record values, else sums of drawn records — and the inner
    noise is added in one call. Otherwise the indices of all subsamples are drawn at once
    (m-subsets: i.i.d. draws conditioned on being distinct, or row-wise permutations when that
    rejects too often) and grouped, and the inner mechanism is called once per distinct
    subsample (≤ C(n, m) or n^m calls; one call per output only when almost all subsamples
    differ, which a black-box inner mechanism cannot avoid).

    ``true_epsilon`` (replace-one, size ``n``): the amplified inner ``true_epsilon``
    (:func:`amplified_epsilon_without_replacement` / :func:`amplified_epsilon_with_replacement`;
    ``n=None`` takes the worst size, n = m resp. n = 1). Exact for Laplace / geometric sums
    (with replacement: when ``(1 + (e^ε − 1)/n)^m ≤ e^ε``), an upper bound otherwise.

    Parameters
    ----------
    mechanism
        ``mechanism(data, size, rng)`` or an object with ``.sample`` (``.pmf`` for
        :attr:`pmf`, ``.true_epsilon`` for :attr:`true_epsilon`).
    m
        Subsample size, ≥ 1 (≤ n without replacement).
    replace
        Draw with replacement.
    n
        Required dataset size (None: any).

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, NeurIPS 2018, Theorem 9.
    """

    mechanism: Any
    m: int
    replace: bool = False
    n: int | None = None

    def __post_init__(self) -> None:
        if not (callable(getattr(self.mechanism, "sample", None)) or callable(self.mechanism)):
            raise InvalidArgument(f"mechanism={fmt(self.mechanism)} must be callable as "
                                  "mechanism(data, size, rng) or have a .sample method")
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=1))
        object.__setattr__(self, "replace", _check_bool(self.replace, "replace"))
        if self.n is not None:
            _check_mn(self.m, self.n, replace=self.replace)

    @property
    def true_epsilon(self) -> float:
        """The amplified inner ``true_epsilon`` (see the class docstring)."""
        eps = float(self.mechanism.true_epsilon)
        if math.isinf(eps):
            return math.inf
        if self.replace:
            return amplified_epsilon_with_replacement(eps, self.m, self.n or 1)
        return amplified_epsilon_without_replacement(eps, self.m, self.n or self.m)

    @property
    def claim(self) -> PureDP:
        """The amplified claim."""
        return PureDP(self.true_epsilon)

    def _size(self, data: Any) -> int:
        if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, (Sequence, np.ndarray)):
            raise InvalidArgument(f"data={fmt(data)} must be a sequence of records")
        n = len(data)
        if (self.n is not None and n != self.n) or n == 0 or (not self.replace and self.m > n):
            raise InvalidArgument(f"data has {n} records: cannot subsample m={self.m}"
                                  + ("" if self.n is None else f" of n={self.n}"))
        return n

    def _count(self, n: int) -> int:
        return n**self.m if self.replace else math.comb(n, self.m)

    @staticmethod
    def _take(data: Any, idx: Sequence[int]) -> Any:
        if isinstance(data, np.ndarray):
            return data[np.asarray(idx, dtype=np.intp)]
        items = [data[i] for i in idx]
        return tuple(items) if isinstance(data, tuple) else items

    def _indices(self, n: int, size: int, gen: np.random.Generator) -> np.ndarray:
        """``(size, m)`` record indices; without replacement sorted uniform m-subsets."""
        if self.replace:
            return gen.integers(0, n, size=(size, self.m))
        out = np.empty((size, self.m), dtype=np.int64)
        accept = math.lgamma(n + 1) - math.lgamma(n - self.m + 1) - self.m * math.log(n)
        if accept > math.log(0.05):  # i.i.d. draws conditioned on all distinct: exact
            todo = np.arange(size)
            while todo.size:
                draw = np.sort(gen.integers(0, n, size=(todo.size, self.m)), axis=1)
                ok = (np.diff(draw, axis=1) > 0).all(axis=1)
                out[todo[ok]], todo = draw[ok], todo[~ok]
            return out
        step = max(1, _CHUNK // n)
        for start in range(0, size, step):  # exact uniform permutations, chunks of rows
            rows = min(step, size - start)
            perm = gen.permuted(np.broadcast_to(np.arange(n), (rows, n)), axis=1)
            out[start : start + rows] = np.sort(perm[:, : self.m], axis=1)
        return out

    def _sample_sum(self, data: Any, size: int, gen: np.random.Generator) -> np.ndarray:
        mech, n, arr = self.mechanism, len(data), np.asarray(data)
        if isinstance(mech, LaplaceSum):  # validates the records
            mech.true_sum(data)
        else:
            mech.true_count(data)
        values, counts = np.unique(arr, return_counts=True)
        few = values.size <= 8  # draw counts per distinct value, else record indices
        sums = np.empty(size, dtype=arr.dtype)
        step = max(1, _CHUNK // (values.size if few else self.m))
        for start in range(0, size, step):  # chunks bound the memory
            rows = min(step, size - start)
            if not few:
                sums[start : start + rows] = arr[self._indices(n, rows, gen)].sum(axis=1)
                continue
            picks = (gen.multinomial(self.m, counts / n, size=rows) if self.replace
                     else gen.multivariate_hypergeometric(counts, self.m, size=rows))
            sums[start : start + rows] = picks @ values
        return sums + mech.sample([], size, gen)  # inner noise around 0

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` i.i.d. outputs, each on a fresh subsample."""
        n = self._size(data)
        size, gen = _check_size(size), _check_rng(rng)
        if isinstance(self.mechanism, _SUM_MECHANISMS):
            return self._sample_sum(data, size, gen)
        sampler = getattr(self.mechanism, "sample", self.mechanism)
        if size == 0:
            return np.asarray(sampler(self._take(data, range(min(self.m, n))), 0, gen))
        idx = self._indices(n, size, gen)
        if self.m * math.log2(n + 1) < 62:  # fast grouping on one integer key per row
            key = idx @ (n ** np.arange(self.m - 1, -1, -1, dtype=np.int64))
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            groups = idx[first]
        else:
            groups, inverse = np.unique(idx, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        parts = []
        for row, count in zip(groups, np.bincount(inverse, minlength=len(groups)).tolist()):
            part = np.asarray(sampler(self._take(data, row.tolist()), count, gen))
            if part.ndim == 0 or part.shape[0] != count:
                raise InvalidArgument(f"mechanism returned shape {part.shape} for size={count}")
            parts.append(part)
        stacked = np.concatenate(parts)
        out = np.empty_like(stacked)
        out[np.argsort(inverse, kind="stable")] = stacked
        return out

    @property
    def pmf(self) -> Callable[[Any], dict[Any, float]] | None:
        """``pmf(data)``, the exact output law, or None without an inner ``pmf``.

        Averages the inner pmf over all C(n, m) (or n^m) subsamples; None also when ``n`` is
        set and there are more than 200 000 of them (with ``n=None``, ``pmf(data)`` raises).
        """
        if not callable(getattr(self.mechanism, "pmf", None)):
            return None
        if self.n is not None and self._count(self.n) > _MAX_ENUMERATION:
            return None
        return self._pmf

    def _pmf(self, data: Any) -> dict[Any, float]:
        n = self._size(data)
        total = self._count(n)
        if total > _MAX_ENUMERATION:
            raise InvalidArgument(f"{total} subsamples to enumerate, at most "
                                  f"{_MAX_ENUMERATION} are supported")
        draws = (itertools.product(range(n), repeat=self.m) if self.replace
                 else itertools.combinations(range(n), self.m))
        acc: dict[Any, list[float]] = {}
        for idx in draws:
            for out, p in self.mechanism.pmf(self._take(data, idx)).items():
                acc.setdefault(out, []).append(float(p))
        return {out: math.fsum(ps) / total for out, ps in acc.items()}
