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

from collections.abc import Callable
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
           "fit_basis", "MAX_COLUMNS", "LEARN_MIN_ROWS", "DESIGN_BLOCK"]

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
    quasi-Newton step; the backtracking line search on the exact loss keeps it a descent).

    Each accepted step's logits ``x @ θ`` (computed by the line search) serve the next
    gradient, and the logits at ``θ = 0`` are zeros: the matrix–vector products are the same
    calls on the same operands as recomputing them (single-threaded BLAS gives the same bits
    for the same operands, tested), so the coefficients are unchanged, with one pass over
    ``x`` fewer per step."""
    n, k = x.shape
    sign = 2.0 * y - 1.0
    pen = np.full(k, lam)
    pen[0] = 0.0
    sub = x[:: max(1, n // HESSIAN_ROWS)]
    scale = n / sub.shape[0]

    def loss(theta: NDArray[np.float64],
             margin: NDArray[np.float64] | None = None) -> tuple[float, NDArray[np.float64]]:
        if margin is None:
            margin = x @ theta
        value = -float(np.sum(log_expit(sign * margin))) + 0.5 * float(pen @ theta**2)
        return value, margin

    theta = np.zeros(k)
    current, margin = loss(theta, np.zeros(n))  # x @ 0: ±0 per row, the same losses
    for _ in range(NEWTON_STEPS):
        grad = x.T @ (expit(margin) - y) + pen * theta
        ps = expit(sub @ theta)
        hess = (sub.T * (ps * (1.0 - ps))) @ sub * scale + np.diag(pen + 1e-9 * n)
        step = np.linalg.solve(hess, grad)
        decrease = float(grad @ step)
        if decrease < 1e-10 * n:
            break
        t = 1.0
        while t > 1e-4:
            trial, trial_margin = loss(theta - t * step)
            if trial <= current - 1e-4 * t * decrease:
                break
            t /= 2
        else:
            break
        theta, current, margin = theta - t * step, trial, trial_margin
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


#: Rows of the basis written and standardised together by :func:`fit_basis` (2048 rows of
#: 60 basis functions: 1 MB, in cache while they are summed).
DESIGN_BLOCK = 2048
#: ``fill(start, stop, out)``: write the basis of rows ``start:stop`` into ``out``.
Fill = Callable[[int, int, NDArray[np.float64]], None]


def fit_basis(n: int, width: int, n_d: int, fill: Fill) -> NDArray[np.float64]:
    """:func:`fit_weights` of the ``n`` basis rows (``width`` functions) that ``fill`` writes
    block by block, bit for bit, without its copies: the rows go straight into the Newton
    design matrix beside its intercept column, and their mean and variance are summed block
    by block, in cache. A column sum over rows (``np.add.reduce(·, axis=0)`` of a C-ordered
    array with at least two columns) adds the rows one after another, so a block's sums
    continued from the previous blocks' total are the whole array's sums (tested); with a
    single column numpy sums pairwise, and the rows are fitted by :func:`fit_weights`."""
    if width < 2:
        phi = np.empty((n, width))
        fill(0, n, phi)
        return fit_weights(phi, n_d)
    x = np.empty((n, width + 1))
    x[:, 0] = 1.0
    phi = x[:, 1:]
    buf = np.empty((DESIGN_BLOCK + 1, width))  # row 0: the running total
    total: NDArray[np.float64] | None = None
    for start in range(0, n, DESIGN_BLOCK):
        stop = min(n, start + DESIGN_BLOCK)
        fill(start, stop, buf[1:1 + stop - start])
        phi[start:stop] = buf[1:1 + stop - start]
        total = _running_sum(total, buf, stop - start)
    mu = total / n if total is not None else np.zeros(width)  # phi.mean(axis=0)
    squares: NDArray[np.float64] | None = None
    for start in range(0, n, DESIGN_BLOCK):
        stop = min(n, start + DESIGN_BLOCK)
        block = phi[start:stop]
        block -= mu
        np.square(block, out=buf[1:1 + stop - start])
        squares = _running_sum(squares, buf, stop - start)
    sd = np.sqrt(squares / n) if squares is not None else np.zeros(width)  # phi.std(axis=0)
    sd[sd == 0] = 1.0
    phi /= sd
    y = np.zeros(n)
    y[:n_d] = 1.0
    with threadpool_limits(1, user_api="blas"):  # small products: threads only contend
        theta = _newton(x, y, RIDGE * n)
    return theta[1:] / sd


def _running_sum(total: NDArray[np.float64] | None, buf: NDArray[np.float64],
                 m: int) -> NDArray[np.float64]:
    """Column sums of ``buf[1:1 + m]`` continued from ``total`` (written into ``buf[0]``)."""
    if total is None:
        return np.add.reduce(buf[1:1 + m], axis=0)
    buf[0] = total
    return np.add.reduce(buf[:1 + m], axis=0)


@dataclass(frozen=True, eq=False)
class LogisticScore:
    """``x ↦ w · φ(x)``: the logit of a logistic regression of "drawn from D" on the basis φ."""

    columns: tuple[Column, ...]
    weights: NDArray[np.float64]

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic], *,
            bins: int = VALUE_BINS, max_rows: int = MAX_FIT_ROWS,
            coding: Callable[[int, int], Column] | None = None) -> LogisticScore:
        """Fit on (generation-half) outputs of D and D′, 2-d numeric arrays of equal width: the
        first ``max_rows`` of each, ``bins`` quantile bins per continuous column. ``coding(j,
        bins)``: the :func:`column_coding` of column ``j`` of those pooled rows, when already
        computed (:meth:`dpcheck.features.family.Exploration.coding`)."""
        a = np.asarray(out_d[:max_rows], dtype=np.float64)
        b = np.asarray(out_dp[:max_rows], dtype=np.float64)
        pooled = np.concatenate([a, b])
        code = coding if coding is not None else partial(_pooled_coding, pooled)
        cols = tuple(code(j, bins) for j in range(min(pooled.shape[1], MAX_COLUMNS)))
        cols = tuple(c for c in cols if c.width)
        shell = cls(cols, np.zeros(0))
        return cls(cols, fit_basis(pooled.shape[0], shell.width, a.shape[0],
                                   partial(_fill_rows, shell, pooled)))

    @property
    def width(self) -> int:
        """Number of basis functions."""
        return sum(c.width for c in self.columns)

    def basis(self, outputs: NDArray[np.generic],
              out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """The basis φ of each output row, shape ``(n, Σ widths)`` (written into ``out``,
        which must be zero or be overwritten whole, when given)."""
        x = np.asarray(outputs, dtype=np.float64)
        if out is None:
            out = np.zeros((x.shape[0], self.width))
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


def _pooled_coding(pooled: NDArray[np.float64], j: int, bins: int) -> Column:
    return column_coding(j, pooled[:, j], bins)


def _fill_rows(score: LogisticScore, pooled: NDArray[np.float64], start: int, stop: int,
               out: NDArray[np.float64]) -> None:
    """Write the basis of ``pooled[start:stop]`` into ``out`` (:data:`Fill`)."""
    out.fill(0.0)
    score.basis(pooled[start:stop], out)


@dataclass(frozen=True, eq=False)
class SignCount:
    """Number of (continuous) coordinates strictly above their pooled exploration median."""

    indices: NDArray[np.intp]
    medians: NDArray[np.float64]

    @classmethod
    def fit(cls, out_d: NDArray[np.generic], out_dp: NDArray[np.generic], *,
            coding: Callable[[int, int], Column] | None = None) -> SignCount | None:
        """Medians of the columns that are not categorical; ``None`` if fewer than two.
        ``coding(j, bins)``: :meth:`dpcheck.features.family.Exploration.coding` of these
        outputs, whose ``categorical`` already says whether column ``j`` has at most
        :data:`CATEGORICAL_LEVELS` distinct values."""
        pooled = np.concatenate([out_d[:MAX_FIT_ROWS], out_dp[:MAX_FIT_ROWS]]).astype(np.float64)
        idx, med = [], []
        for j in range(min(pooled.shape[1], MAX_COLUMNS)):
            col = pooled[:, j]
            if (coding(j, VALUE_BINS).categorical if coding is not None
                    else np.unique(col).size <= CATEGORICAL_LEVELS):
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
        score = LogisticScore.fit(*exploration.generation, coding=exploration.coding)
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
        signs = SignCount.fit(*exploration.generation, coding=exploration.coding)
        if signs is None:
            return None
        return Fitted((Feature("signs(output)", True, aggregate=True),),
                      partial(score_column, signs, False))

    def describe(self, name: str) -> str | None:
        return ("number of coordinates of the output vector above their median"
                if name == "signs(output)" else None)
