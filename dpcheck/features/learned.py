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

Both the logistic score and the naive-Bayes score of :mod:`dpcheck.features.featurizer` code a column the
same way (:meth:`dpcheck.features.coding.Column.codes`): one code per categorical level or sentinel, one per value bin.

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

from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

from dpcheck.features.coding import (
    CATEGORICAL_LEVELS,
    MAX_FIT_ROWS,
    VALUE_BINS,
    CodeCache,
    Column,
    column_coding,
)
from dpcheck.features.family import Exploration, Fitted, score_column
from dpcheck.features.feature import Feature

__all__ = ["LogisticScore", "SignCount", "LogisticFamily", "SignCountFamily", "fit_weights",
           "MAX_COLUMNS", "LEARN_MIN_ROWS"]

#: Columns of the output used by the logistic regression.
MAX_COLUMNS = 128
#: Vector outputs: the logistic-regression score and the sign count are fitted when the
#: generation half of the exploration sample has at least this many outputs per side (audits of
#: ≥ ~10⁵ samples per side); below that the learned weights are mostly noise.
LEARN_MIN_ROWS = 5000
#: L2 penalty per fitted row (on standardised basis functions).
RIDGE = 1e-4
#: Newton steps (at most) and rows used to form the Hessian.
NEWTON_STEPS = 25
HESSIAN_ROWS = 20_000


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

    columns: tuple[Column, ...]
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
        x = np.asarray(outputs)
        count = np.zeros(x.shape[0], dtype=np.intp)
        for j, m in zip(self.indices.tolist(), self.medians.tolist()):  # one pass per column
            count += x[:, j] > m
        return count.astype(np.float64)


def learns(exploration: Exploration) -> bool:
    """Whether the learned scores of a numeric vector are fitted (:data:`LEARN_MIN_ROWS`)."""
    return exploration.learnable and exploration.outputs.shape[0] // 2 >= LEARN_MIN_ROWS


class LogisticFamily:
    """``logit(output)``: the logistic-regression score (aggregate)."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not learns(exploration):
            return None
        score = LogisticScore.fit(*exploration.generation)
        return Fitted((Feature("logit(output)", True, aggregate=True),),
                      partial(score_column, score, True))

    def describe(self, name: str) -> str | None:
        return ("logistic-regression score of the output vector (learned on the exploration "
                "sample)" if name == "logit(output)" else None)


class SignCountFamily:
    """``signs(output)``: the number of coordinates above their pooled median (aggregate)."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if not learns(exploration):
            return None
        signs = SignCount.fit(*exploration.generation)
        if signs is None:
            return None
        return Fitted((Feature("signs(output)", True, aggregate=True),),
                      partial(score_column, signs, False))

    def describe(self, name: str) -> str | None:
        return ("number of coordinates of the output vector above their median"
                if name == "signs(output)" else None)
