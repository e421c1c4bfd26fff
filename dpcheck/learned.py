"""Learned scores for vector and structured outputs: a logistic-regression attack and a sign count.

DP-Sniper (Bichsel et al. 2021) audits a vector-valued mechanism by training a classifier
``P(D | x)`` on samples of M(D) and M(D′) and thresholding its score: by the Neyman–Pearson lemma
the optimal event for the privacy loss is a super-level set of the likelihood ratio, and a
well-calibrated classifier's logit is that ratio up to a monotone map. dpcheck fits the same kind
of score on the *generation half* of the exploration sample only, so by the time the validation
half and the confirmation samples are drawn the score is a fixed function and every half-line on
it is a fixed event; selection (which threshold, which direction) stays on the exploration
sample, and the reported bounds come from fresh samples (design §4 rule 1). No validity rests on
the classifier being good: a bad score only costs power.

:class:`LogisticScore` — logistic regression (L2-penalised, L-BFGS on the exact log-likelihood)
on a generic basis of each output row, built per column from the generation sample:

* a column with at most :data:`CATEGORICAL_LEVELS` distinct values (flags, bits, answer codes)
  → one indicator per value except the most frequent;
* any other column → the value itself (centred on the pooled median, scaled by the pooled
  inter-quartile range and clipped to ±:data:`CLIP`), its sign against the median, its absolute
  deviation (a change of noise scale), indicators of :data:`VALUE_BINS` pooled-quantile bins
  (a non-monotone log-likelihood ratio, such as a bump near a threshold, is piecewise constant
  on them), and one indicator per **sentinel**: a value repeated in the pooled sample although
  the column is continuous (``-1000`` for "no answer", ``+inf`` for "not released"), which is
  then treated as a flag and not as a number. Centre, scale and bins come from the regular
  (non-sentinel) values only: in a column that is "not released" in 95 % of the rows, bins on
  all values would all sit on the sentinel.

Both the logistic score and the naive-Bayes score of :mod:`dpcheck.features` code a column the
same way (:meth:`_Column.codes`): one code per categorical level or sentinel, one per value bin.

:class:`SignCount` — the number of coordinates above their pooled median. For composed noisy
releases of one statistic with heavy-tailed noise (``k`` independent Laplace releases) the
log-likelihood ratio is a sum of per-coordinate clipped terms that are almost always at their
clip value, i.e. a multiple of this count, so thresholds on it are nearly optimal events; it has
no fitted weights, hence no estimation noise (a learned weight vector with 20 weights each
estimated to ±0.006 loses much of a 0.005-per-coordinate signal).

References
----------
B. Bichsel, S. Steffen, I. Bogunovic, M. Vechev, "DP-Sniper: Black-Box Discovery of Differential
Privacy Violations using Classifiers", IEEE S&P 2021, §4 (optimal attack as a thresholded
posterior, Theorem 1; logistic regression classifier). J. Neyman, E. S. Pearson, Phil. Trans.
R. Soc. A 231 (1933).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

__all__ = ["LogisticScore", "SignCount", "CodeCache", "CATEGORICAL_LEVELS", "MAX_FIT_ROWS",
           "CLIP", "VALUE_BINS", "column_coding", "fit_weights"]

#: Columns with at most this many distinct values are treated as categorical (one-hot).
CATEGORICAL_LEVELS = 16
#: Rows per side used to fit the logistic regression (the first ones of the generation half).
MAX_FIT_ROWS = 50_000
#: Columns of the output used by the logistic regression.
MAX_COLUMNS = 128
#: Standardised values are clipped to ±CLIP (heavy tails must not dominate a linear score).
CLIP = 4.0
#: Sentinels per continuous column (values repeated although the column is continuous).
MAX_SENTINELS = 4
#: Pooled-quantile bins of the regular values of a continuous column (basis indicators).
VALUE_BINS = 8
#: L2 penalty per fitted row (on standardised basis functions).
RIDGE = 1e-4
#: Newton steps (at most) and rows used to form the Hessian.
NEWTON_STEPS = 25
HESSIAN_ROWS = 20_000


@dataclass(frozen=True, eq=False)
class _Column:
    """How one output column enters the basis (and the codes of the naive-Bayes score)."""

    index: int
    levels: NDArray[np.float64]  # categorical: indicator values; continuous: sentinels
    categorical: bool
    centre: float = 0.0
    scale: float = 1.0
    edges: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    base: float = math.nan  # categorical: the most frequent value (code 0)

    @property
    def width(self) -> int:
        return self.levels.size + (0 if self.categorical else 3 + self.edges.size)

    @property
    def n_codes(self) -> int:
        """Number of distinct :meth:`codes`."""
        return 1 + self.levels.size + (0 if self.categorical else self.edges.size + 1)

    @cached_property
    def key(self) -> tuple[object, ...]:
        """Equal for two codings that give every value the same code (:class:`CodeCache`)."""
        return (self.index, self.categorical, self.levels.tobytes(), self.edges.tobytes())

    def codes(self, x: NDArray[np.float64]) -> NDArray[np.intp]:
        """A cell per value: ``0`` for the most frequent categorical level (or an unseen
        non-finite value), ``1 + i`` for ``levels[i]``, then one per value bin (continuous)."""
        out = np.zeros(x.shape[0], dtype=np.intp)
        regular = np.ones(x.shape[0], dtype=bool) if not self.categorical else None
        for i, v in enumerate(self.levels):
            hit = x == v
            out[hit] = 1 + i
            if regular is not None:
                regular &= ~hit
        if regular is not None:
            regular &= np.isfinite(x)
            first = 1 + self.levels.size
            out[regular] = first + np.searchsorted(self.edges, x[regular], "right")
        return out

    def describe_code(self, code: int, name: str) -> str:
        """The cell ``code`` of :meth:`codes` in words, e.g. ``0.8 <= output[5] < 4.9``."""
        if code == 0:
            return f"{name} = {self.base:g}" if self.categorical else f"{name} not seen"
        if code <= self.levels.size:
            return f"{name} = {self.levels[code - 1]:g}"
        b = code - 1 - self.levels.size
        lo = f"{self.edges[b - 1]:.6g} <= " if b > 0 else ""
        hi = f" < {self.edges[b]:.6g}" if b < self.edges.size else ""
        return f"{lo}{name}{hi}" if lo or hi else f"{name} regular"

    def basis(self, x: NDArray[np.float64], out: NDArray[np.float64]) -> None:
        """Write this column's basis functions for values ``x`` into ``out`` (n, width): the
        indicators of the levels, then (continuous) the clipped standardised value, its sign
        and absolute value, and the indicators of value bins 1.. (bin 0 is the baseline)."""
        code = self.codes(x)
        k = self.levels.size
        for i in range(k):
            out[:, i] = code == 1 + i
        if self.categorical:
            return
        regular = code > k
        z = np.zeros(x.shape[0])
        z[regular] = self._clipped(x[regular])
        out[:, k] = z
        out[:, k + 1] = np.sign(z)
        out[:, k + 2] = np.abs(z)
        for b in range(self.edges.size):
            out[:, k + 3 + b] = code == k + 2 + b

    def score(self, x: NDArray[np.float64], w: NDArray[np.float64],
              code: NDArray[np.intp] | None = None) -> NDArray[np.float64]:
        """``basis(x) @ w`` without building the basis: the indicator weights are looked up by
        :meth:`codes` (the same cells; ``code``: already computed), the clipped value terms are
        added for regular values. Equal to the product up to the order of floating-point
        additions."""
        if code is None:
            code = self.codes(x)
        k = self.levels.size
        table = np.zeros(self.n_codes)
        table[1:1 + k] = w[:k]
        if self.categorical:
            return table[code]
        table[k + 2:] = w[k + 3:]  # value bins 1.. (bin 0, code k + 1, is the baseline)
        out = table[code]
        regular = code > k
        z = self._clipped(x[regular])
        out[regular] += z * w[k] + np.sign(z) * w[k + 1] + np.abs(z) * w[k + 2]
        return out

    def _clipped(self, regular: NDArray[np.float64]) -> NDArray[np.float64]:
        """Regular values standardised (pooled median and IQR scale) and clipped to ±CLIP."""
        return np.clip((regular - self.centre) / self.scale, -CLIP, CLIP)


class CodeCache:
    """The float64 columns of one batch of output rows and their :meth:`_Column.codes`, each
    computed once: the naive-Bayes score, its joint cells and the logistic score code the same
    columns alike (same rows, same bins), and confirmation computes all three per chunk."""

    __slots__ = ("outputs", "_columns", "_codes")

    def __init__(self, outputs: NDArray[np.generic]) -> None:
        self.outputs = np.asarray(outputs)
        self._columns: dict[int, NDArray[np.float64]] = {}
        self._codes: dict[tuple[object, ...], NDArray[np.intp]] = {}

    def column(self, index: int) -> NDArray[np.float64]:
        """Column ``index`` of the outputs as contiguous float64."""
        x = self._columns.get(index)
        if x is None:
            x = self._columns[index] = np.ascontiguousarray(self.outputs[:, index],
                                                            dtype=np.float64)
        return x

    def codes(self, col: _Column) -> NDArray[np.intp]:
        """``col.codes`` of its column (shared by every coding with the same :attr:`key`)."""
        code = self._codes.get(col.key)
        if code is None:
            code = self._codes[col.key] = col.codes(self.column(col.index))
        return code


def column_coding(index: int, pooled: NDArray[np.float64], bins: int = VALUE_BINS) -> _Column:
    """How column ``index`` with pooled exploration values ``pooled`` is coded: categorical
    (at most :data:`CATEGORICAL_LEVELS` distinct values) or continuous with up to
    :data:`MAX_SENTINELS` sentinels and ``bins`` quantile bins of the regular values."""
    values, counts = np.unique(pooled, return_counts=True)
    if values.size <= CATEGORICAL_LEVELS:
        top = int(np.argmax(counts))
        return _Column(index, np.delete(values, top).astype(np.float64), True,
                       base=float(values[top]))
    repeated = (counts >= 3) | ~np.isfinite(values)
    order = np.argsort(-counts[repeated], kind="stable")[:MAX_SENTINELS]
    sentinels = np.sort(values[repeated][order]).astype(np.float64)
    regular = pooled[np.isfinite(pooled) & ~np.isin(pooled, sentinels)]
    if regular.size == 0:
        return _Column(index, sentinels, False)
    q1, med, q3 = np.quantile(regular, [0.25, 0.5, 0.75])
    scale = float(q3 - q1) / 1.349
    if not np.isfinite(scale) or scale <= 0:
        scale = float(np.std(regular)) or 1.0
    edges = np.unique(np.quantile(regular, np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    return _Column(index, sentinels, False, float(med), scale, edges.astype(np.float64))


def _newton(x: NDArray[np.float64], y: NDArray[np.float64], lam: float) -> NDArray[np.float64]:
    """Penalised logistic regression by damped Newton steps (column 0 of ``x`` is the
    unpenalised intercept). The Hessian is formed on at most :data:`HESSIAN_ROWS` rows (a
    quasi-Newton step; the backtracking line search on the exact loss keeps it a descent)."""
    n, k = x.shape
    sign = 2.0 * y - 1.0
    pen = np.full(k, lam)
    pen[0] = 0.0
    sub = x[:: max(1, n // HESSIAN_ROWS)]
    scale = n / sub.shape[0]

    def loss(theta: NDArray[np.float64]) -> float:
        return -float(np.sum(log_expit(sign * (x @ theta)))) + 0.5 * float(pen @ theta**2)

    theta = np.zeros(k)
    current = loss(theta)
    for _ in range(NEWTON_STEPS):
        grad = x.T @ (expit(x @ theta) - y) + pen * theta
        ps = expit(sub @ theta)
        hess = (sub.T * (ps * (1.0 - ps))) @ sub * scale + np.diag(pen + 1e-9 * n)
        step = np.linalg.solve(hess, grad)
        decrease = float(grad @ step)
        if decrease < 1e-10 * n:
            break
        t = 1.0
        while t > 1e-4:
            trial = loss(theta - t * step)
            if trial <= current - 1e-4 * t * decrease:
                break
            t /= 2
        else:
            break
        theta, current = theta - t * step, trial
    return theta


def fit_weights(phi: NDArray[np.float64], n_d: int) -> NDArray[np.float64]:
    """Weights ``w`` of the logit ``phi @ w`` (plus an intercept, dropped) of a penalised
    logistic regression of "drawn from D" on the basis rows ``phi``: the first ``n_d`` rows are
    outputs of D, the rest of D′. The basis is standardised for the fit (the penalty
    :data:`RIDGE` per row acts on standardised functions) and the weights are mapped back, so
    ``phi @ w`` is the fitted logit up to a constant. ``phi`` is overwritten."""
    y = np.zeros(phi.shape[0])
    y[:n_d] = 1.0
    mu = phi.mean(axis=0)
    sd = phi.std(axis=0)
    sd[sd == 0] = 1.0
    phi -= mu
    phi /= sd
    with threadpool_limits(1, user_api="blas"):  # small products: threads only contend
        theta = _newton(np.hstack([np.ones((phi.shape[0], 1)), phi]), y, RIDGE * phi.shape[0])
    return theta[1:] / sd


@dataclass(frozen=True, eq=False)
class LogisticScore:
    """``x ↦ w · φ(x)``: the logit of a logistic regression of "drawn from D" on the basis φ."""

    columns: tuple[_Column, ...]
    weights: NDArray[np.float64]

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic], *,
            bins: int = VALUE_BINS, max_rows: int = MAX_FIT_ROWS) -> LogisticScore:
        """Fit on (generation-half) outputs of D and D′, 2-d numeric arrays of equal width: the
        first ``max_rows`` of each, ``bins`` quantile bins per continuous column."""
        a = np.asarray(out_d[:max_rows], dtype=np.float64)
        b = np.asarray(out_dp[:max_rows], dtype=np.float64)
        pooled = np.concatenate([a, b])
        cols = tuple(column_coding(j, pooled[:, j], bins)
                     for j in range(min(pooled.shape[1], MAX_COLUMNS)))
        cols = tuple(c for c in cols if c.width)
        shell = cls(cols, np.zeros(0))
        return cls(cols, fit_weights(shell.basis(pooled), a.shape[0]))

    def basis(self, outputs: NDArray[np.generic]) -> NDArray[np.float64]:
        """The basis φ of each output row, shape ``(n, Σ widths)``."""
        x = np.asarray(outputs, dtype=np.float64)
        out = np.zeros((x.shape[0], sum(c.width for c in self.columns)))
        start = 0
        for c in self.columns:  # loop over columns, never over samples
            c.basis(x[:, c.index], out[:, start:start + c.width])
            start += c.width
        return out

    def __call__(self, outputs: NDArray[np.generic],
                 cache: CodeCache | None = None) -> NDArray[np.float64]:
        """The score of each output row (larger: more typical of D); ``cache``: the columns
        and codes of ``outputs`` shared with other scores."""
        if cache is None:
            cache = CodeCache(outputs)
        score = np.zeros(outputs.shape[0])
        start = 0
        for c in self.columns:  # column by column, by table lookup: memory O(n)
            score += c.score(cache.column(c.index), self.weights[start:start + c.width],
                             cache.codes(c))
            start += c.width
        return score


@dataclass(frozen=True, eq=False)
class SignCount:
    """Number of (continuous) coordinates strictly above their pooled exploration median."""

    indices: NDArray[np.intp]
    medians: NDArray[np.float64]

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic]) -> SignCount | None:
        """Medians of the columns that are not categorical; ``None`` if fewer than two."""
        pooled = np.concatenate([out_d[:MAX_FIT_ROWS], out_dp[:MAX_FIT_ROWS]]).astype(np.float64)
        idx, med = [], []
        for j in range(min(pooled.shape[1], MAX_COLUMNS)):
            col = pooled[:, j]
            if np.unique(col).size <= CATEGORICAL_LEVELS:
                continue
            idx.append(j)
            med.append(float(np.median(col)))
        if len(idx) < 2:
            return None
        return cls(np.asarray(idx, dtype=np.intp), np.asarray(med))

    def __call__(self, outputs: NDArray[np.generic]) -> NDArray[np.float64]:
        """The count of each output row, as float64."""
        x = np.asarray(outputs)[:, self.indices]
        return np.count_nonzero(x > self.medians, axis=1).astype(np.float64)
