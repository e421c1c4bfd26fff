"""One run of the user-level learner of Theorem 4.6 on each of ``B`` datasets at once (issue 27:
the utility test's trials vectorised over datasets).

:func:`user_learner_runs` draws, for every dataset of a (B, n, m, 2) array, one independent run
of :class:`~.learners.UserLearner` — the same law as ``UserLearner.sample(data[b], 1, rng)``
(tested against ``pmf`` in ``tests/pure_agnostic``), with other draws:

1. discard to the first ``m_eff`` examples of each user;
2. ``η̂ ← PrivateMinError(ε/2, α/6)``: for every ``mid = j/2^T`` the margin
   ``n·τ(mid) − min_c E_{t(mid)}(c)`` of each dataset (``(m', t, τ)`` from ``compare_rule``, the
   mistake table once per ``m'``), then the T rounds of the binary search with one Laplace draw
   per dataset and round;
3. ``t = learner_t(m_eff, η̂, α)``;
4. the exponential mechanism at ε/2 over ``H ~ P`` with ``Q(h) = min_c E_t(c) + D_0(c, h)``,
   ``D_0`` from the users' point-set bit masks (as ``scores.disagreements``).

Only the paper's accounting is batched: the privacy mutant knobs (``accounting="item"``,
``t_from="data"``, ``discard="record"``, ``transcript``) raise ``InvalidArgument``.

References
----------
Li–Wang–Ye (seed 002): Theorem 4.6 (Appendix C.4), Algorithm 2 / Lemma 4.5, Lemma 2.6.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from threadpoolctl import threadpool_limits

from algorithms.mechanisms.primitives import _check_rng
from algorithms.mechanisms.selection import ExponentialMechanism
from dpcheck.errors import InvalidArgument

from .binomial import compare_rule, learner_t
from .data import codes

if TYPE_CHECKING:
    from .learners import UserLearner

__all__ = ["user_learner_runs"]

#: Datasets per call of the batched learner (larger inputs are cut into blocks of this many).
RUNS_BLOCK = 200
#: Datasets per block of the (block, n, regions) mask products (memory bound).
BLOCK = 128
#: Up to this many distinct point sets over the batch, D_0 goes through a (B, sets) count table.
DISTINCT = 4096


def _mistakes(x: np.ndarray, y: np.ndarray, table: np.ndarray) -> np.ndarray:
    """(B, n, k): mistakes of every concept on every user, ``mist_i(c) = #ones_i +
    Σ_x (zeros_i(x) − ones_i(x))·c(x)`` (one signed count table, one float64 product: exact)."""
    b, n, m = x.shape
    N = table.shape[1]
    idx = ((np.arange(b * n)[:, None] * N) + (x.reshape(b * n, m) - 1)).ravel()
    signed = np.bincount(idx, weights=1.0 - 2.0 * y.reshape(-1), minlength=b * n * N)
    with threadpool_limits(1, user_api="blas"):  # threads only contend on a loaded machine
        prod = signed.reshape(b * n, N) @ table.astype(float).T
    return np.rint(prod.reshape(b, n, -1) + y.sum(axis=2)[:, :, None]).astype(np.int64)


def _error_table(mist: np.ndarray, m: int) -> np.ndarray:
    """(B, k, m+2): ``table[b, c, t] = E_t(c) = #{i : mist_i(c) > t}`` for ``t = 0..m+1`` (a
    suffix sum of each concept's histogram of mistake counts, which lie in ``0..m``)."""
    b, n, k = mist.shape
    flat = (np.arange(b * k).reshape(b, 1, k) * (m + 1) + mist).ravel()
    hist = np.bincount(flat, minlength=b * k * (m + 1)).reshape(b, k, m + 1)
    tail = np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1]  # tail[..., v] = #{mist ≥ v}
    return np.concatenate([tail[:, :, 1:], np.zeros((b, k, 2), dtype=tail.dtype)], axis=2)


def _disagreements(x: np.ndarray, concepts: np.ndarray, hyps: np.ndarray) -> np.ndarray:
    """(B, |C|, |H|): ``D_0(c, h)`` = users whose point set meets ``{c ≠ h}``, once per distinct
    point set and region (exact integer counts)."""
    sets = np.bitwise_or.reduce(np.left_shift(1, x - 1), axis=2)  # (B, n)
    w = 1 << np.arange(concepts.shape[1], dtype=np.int64)
    region = ((concepts.astype(np.int64) @ w)[:, None] ^ (hyps.astype(np.int64) @ w)[None, :])
    regs, rinv = np.unique(region, return_inverse=True)
    b = sets.shape[0]
    uniq, inv = np.unique(sets, return_inverse=True)
    if uniq.size <= DISTINCT:  # users per distinct point set, times which regions they meet
        cnt = np.bincount((np.arange(b)[:, None] * uniq.size + inv.reshape(b, -1)).ravel(),
                          minlength=b * uniq.size).reshape(b, uniq.size)
        with threadpool_limits(1, user_api="blas"):
            d = np.rint(cnt.astype(float) @ ((uniq[:, None] & regs[None, :]) != 0).astype(float))
    else:
        d = np.empty((b, regs.size))
        for s in range(0, b, BLOCK):
            d[s:s + BLOCK] = ((sets[s:s + BLOCK, :, None] & regs[None, None, :]) != 0).sum(axis=1)
    return d.astype(np.int64)[:, rinv.reshape(-1)].reshape(b, *region.shape)


def user_learner_runs(learner: UserLearner, data: Any, rng: np.random.Generator) -> np.ndarray:
    """(B,) codes: one independent run of ``learner`` on each dataset of ``data``, an int array
    (B, n, m, 2) of ``(x, y)`` (as :func:`.testbeds.sample_users` returns)."""
    gen = _check_rng(rng)
    if (learner.accounting, learner.t_from, learner.discard, learner.transcript) != (
            "user", "private", "user", False):
        raise InvalidArgument("user_learner_runs batches the paper's learner only "
                              "(accounting='user', t_from='private', discard='user', "
                              "transcript=False)")
    arr = np.asarray(data)
    if arr.ndim != 4 or arr.shape[2] != learner.m or arr.shape[3] != 2 or arr.dtype.kind not in "iu":
        raise InvalidArgument(f"data of shape {arr.shape} must be an int array (B, n, "
                              f"{learner.m}, 2)")
    if arr.shape[0] > RUNS_BLOCK:  # blocks of datasets: small arrays, few page faults
        return np.concatenate([user_learner_runs(learner, arr[s:s + RUNS_BLOCK], gen)
                               for s in range(0, arr.shape[0], RUNS_BLOCK)])
    x, y = arr[..., 0].astype(np.int64), arr[..., 1].astype(np.int64)
    if x.size and (x.min() < 1 or x.max() > learner.domain or y.min() < 0 or y.max() > 1):
        raise InvalidArgument(f"data has a point outside X = {{1..{learner.domain}}} or a "
                              "label outside {0, 1}")
    k = learner.m_eff
    x, y = x[:, :, :k], y[:, :, :k]
    b, n = x.shape[0], x.shape[1]
    table = learner._c
    est = learner.estimator
    T = est.rounds
    errs = {k: _error_table(_mistakes(x, y, table), k)}  # per m': (B, |C|, m'+2)
    # stage 1: margins of every mid, then the binary search
    margins = np.zeros((b, 1 << T))
    for j in range(1, 1 << T):
        mp, t, tau = compare_rule(est.m, j / (1 << T), est.alpha)
        if mp not in errs:
            errs[mp] = _error_table(_mistakes(x[:, :, :mp], y[:, :, :mp], table), mp)
        margins[:, j] = n * tau - errs[mp][:, :, min(t, mp + 1)].min(axis=1)
    lo = np.zeros(b, dtype=np.int64)
    hi = np.full(b, 1 << T, dtype=np.int64)
    scale = est.noise_scale / est.per_call
    rows = np.arange(b)
    for _ in range(T):
        mid = (lo + hi) // 2
        down = est._down(gen.laplace(0.0, scale, b) <= margins[rows, mid])
        hi = np.where(down, mid, hi)
        lo = np.where(down, lo, mid)
    eta = lo / float(1 << T)
    t_of = {e: learner_t(k, e, learner.alpha) for e in np.unique(eta).tolist()}
    t_run = np.array([t_of[e] for e in eta.tolist()], dtype=np.int64)
    # stage 2: the exponential mechanism over H ~ P
    e_t = errs[k][np.arange(b), :, np.minimum(t_run, k + 1)]  # (B, |C|): E_t(c) at each t
    coef = ExponentialMechanism(learner.half, sensitivity=learner.sensitivity).coefficient
    classes = learner._rep.classes
    which = gen.integers(len(classes), size=b)
    out = np.empty(b, dtype=np.int64)
    for c_i, hyps in enumerate(classes):
        sel = which == c_i
        if not sel.any():
            continue
        q = (e_t[sel][:, :, None] + _disagreements(x[sel], table, hyps)).min(axis=1)
        u = -learner.sign * q.astype(float)
        cdf = np.cumsum(np.exp(coef * (u - u.max(axis=1, keepdims=True))), axis=1)
        v = gen.random(int(sel.sum())) * cdf[:, -1]
        idx = (cdf <= v[:, None]).sum(axis=1)
        out[sel] = codes(hyps)[np.minimum(idx, hyps.shape[0] - 1)]
    return out
