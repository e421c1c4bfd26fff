"""Count-form scores of paper 002: user-level errors, surrogate scores, median scores.

All functions return integer counts (numbers of users); dividing by ``n`` gives the paper's
normalised quantities. Sensitivities (notes §4.4, checked by ``tests/pure_agnostic``): under
adding, removing or replacing one user, ``E_t(c)``, ``min_c E_t(c)``, every range minimum and the
median score move by at most 1; the surrogate score by at most 2. Under adding a user every
count is non-decreasing.

References
----------
Li–Wang–Ye (seed 002): Theorem 3.4 (item-level surrogate ``q(z,h) = min_c err_z(c) + dis_x(c,h)``),
Theorem 4.6 (user-level ``min_c err^t_z(c) + dis^s_x(c,h)``), proof of Lemma 5.1 (median score
``max(dis^s_x(f_{l−1}, f_{u−1}), dis^s_x(f_u, f_r))``).
"""

from __future__ import annotations

import numpy as np

from .data import Users

__all__ = [
    "ThresholdClass",
    "class_errors",
    "disagreements",
    "median_scores",
    "mistakes",
    "surrogate_scores",
    "surrogate_scores_items",
    "threshold_mistakes",
    "threshold_user_errors",
    "threshold_steps",
    "errors_from_steps",
    "sparse_is_faster",
    "user_errors",
]


def mistakes(users: Users, table: np.ndarray) -> np.ndarray:
    """(n, k): ``mist_i(c)`` for every user and every row ``c`` of ``table``."""
    ones, zeros = users.label_counts()
    t = table.astype(np.int64)
    return ones @ (1 - t).T + zeros @ t.T


def user_errors(users: Users, table: np.ndarray, t: int, *, strict: bool = True) -> np.ndarray:
    """(k,): ``E_t(c) = #{i : mist_i(c) > t}`` (``strict=False``: ``≥ t``, bug B11)."""
    mist = mistakes(users, table)
    return ((mist > t) if strict else (mist >= t)).sum(axis=0)


def threshold_mistakes(users: Users) -> np.ndarray:
    """(n, N+1): mistakes of ``f_u(x) = 1[x > u]`` on each user, by cumulative sums (notes §3.8).

    ``mist_i(f_u) = #{j : x_ij ≤ u, y_ij = 1} + #{j : x_ij > u, y_ij = 0}``.
    """
    ones, zeros = users.label_counts()
    n, N = ones.shape
    c1 = np.zeros((n, N + 1), dtype=np.int64)
    c0 = np.zeros((n, N + 1), dtype=np.int64)
    np.cumsum(ones, axis=1, out=c1[:, 1:])
    np.cumsum(zeros, axis=1, out=c0[:, 1:])
    return c1 + (c0[:, -1:] - c0)


def threshold_steps(users: Users) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The t-independent part of :func:`threshold_user_errors`: each user's points sorted
    (``xs``, (n, m)), its mistake count ``vals[i, k] = mist_i(u)`` for ``u`` in
    ``[xs[i, k], xs[i, k+1])`` and ``zeros[i] = mist_i(u)`` below its first point.

    ``mist_i(u) = #zeros_i + Σ_{j: x_ij ≤ u} (2y_ij − 1)`` (the mistakes of ``f_u = 1[x > u]``)
    is a step function of u with steps at the user's own m points.
    """
    x = np.asarray(users.x, dtype=np.int64)
    y = np.asarray(users.y)
    zeros = (y == 0).sum(axis=1)
    order = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, order, axis=1)
    steps = np.take_along_axis(np.where(y == 1, 1, -1), order, axis=1)
    return xs, zeros[:, None] + np.cumsum(steps, axis=1), zeros


def errors_from_steps(steps: tuple[np.ndarray, np.ndarray, np.ndarray], domain: int, t: int,
                      *, strict: bool = True) -> np.ndarray:
    """(N+1,): ``E_t(f_u)`` from :func:`threshold_steps`: each user adds ±1 to a difference
    array where its indicator ``mist_i > t`` switches (O(n·m + N))."""
    xs, vals, zeros = steps
    bad = ((vals > t) if strict else (vals >= t)).astype(np.int64)
    bad0 = ((zeros > t) if strict else (zeros >= t)).astype(np.int64)   # u below every point
    delta = np.diff(np.concatenate([bad0[:, None], bad], axis=1), axis=1)
    diff = np.bincount(xs.ravel(), weights=delta.ravel(), minlength=domain + 1)
    return (int(bad0.sum()) + np.cumsum(diff)).round().astype(np.int64)


def threshold_user_errors(users: Users, t: int, *, strict: bool = True) -> np.ndarray:
    """(N+1,): ``E_t(f_u)`` for every threshold ``u = 0..N`` (``strict=False``: ``≥ t``, B11).

    On a large domain (``N + 1 > 8m``) without the dense (n, N+1) mistake table of
    :func:`threshold_mistakes` (same values; :func:`threshold_steps` +
    :func:`errors_from_steps`): O(n·m log m + N) instead of O(n·N).
    """
    if sparse_is_faster(users):
        return errors_from_steps(threshold_steps(users), users.domain, t, strict=strict)
    mist = threshold_mistakes(users)
    return ((mist > t) if strict else (mist >= t)).sum(axis=0)


def sparse_is_faster(users: Users) -> bool:
    """Whether the per-user step representation beats the dense mistake table (measured:
    the dense table wins on small domains such as N = 16, the steps on N = 256, m = 4)."""
    return users.domain + 1 > 8 * users.m


def disagreements(users: Users, concepts: np.ndarray, hyps: np.ndarray, s: int) -> np.ndarray:
    """(|C|, |H|): ``D_s(c, h) = #{i : dcnt_i(c, h) > s}``.

    ``s = 0`` (every use in the learners) on a domain of at most 62 points: user ``i`` counts
    iff its point set (a bit mask, bit ``j`` = point ``j+1``) meets the disagreement region of
    ``c`` and ``h`` (the mask ``code(c) XOR code(h)``), computed once per distinct point set —
    the same integers as the count form below (tested), without its (n, |C|·|H|) product.
    """
    if s == 0 and users.domain <= 62:
        x = np.asarray(users.x, dtype=np.int64)
        sets = np.bitwise_or.reduce(np.left_shift(1, x - 1), axis=1) if x.shape[1] else \
            np.zeros(x.shape[0], dtype=np.int64)
        uniq, mult = np.unique(sets, return_counts=True)
        weights = 1 << np.arange(users.domain, dtype=np.int64)
        region = ((concepts.astype(np.int64) @ weights)[:, None]
                  ^ (hyps.astype(np.int64) @ weights)[None, :])  # (|C|, |H|)
        meets = (uniq[:, None] & region.reshape(1, -1)) != 0  # (distinct sets, |C|·|H|)
        return (mult @ meets).reshape(region.shape).astype(np.int64)
    ones, zeros = users.label_counts()
    occ = ones + zeros  # (n, N)
    diff = (concepts[:, None, :] != hyps[None, :, :]).astype(np.int64)  # (|C|, |H|, N)
    dcnt = occ @ diff.reshape(-1, diff.shape[-1]).T  # (n, |C|·|H|)
    return (dcnt > s).sum(axis=0).reshape(concepts.shape[0], hyps.shape[0])


def surrogate_scores(users: Users, concepts: np.ndarray, hyps: np.ndarray, t: int,
                     s: int) -> np.ndarray:
    """(|H|,): ``Q(h) = min_{c∈C} E_t(c) + D_s(c, h)`` (item level: ``t = s = 0``, ``m = 1``)."""
    e = user_errors(users, concepts, t)
    return (e[:, None] + disagreements(users, concepts, hyps, s)).min(axis=0)


def surrogate_scores_items(ones: np.ndarray, zeros: np.ndarray, concepts: np.ndarray,
                           hyps: np.ndarray) -> np.ndarray:
    """(B, |H|): the item-level ``Q(h) = min_c E_0(c) + D_0(c, h)`` of ``B`` datasets at once,
    from their (B, N) label counts (``ones[b, j]`` / ``zeros[b, j]`` = examples ``(j+1, 1)`` /
    ``(j+1, 0)``).

    With one example per user, ``mist_i(c)`` and ``dcnt_i(c, h)`` are 0 or 1, so ``E_0`` and
    ``D_0`` are linear in the counts: ``E_0(c) = Σ_j ones_j (1 − c_j) + zeros_j c_j`` and
    ``D_0(c, h) = Σ_j (ones_j + zeros_j)·1[c_j ≠ h_j]`` — the same integers as
    :func:`surrogate_scores` on the examples at ``t = s = 0`` (tested).
    """
    # float64 products (BLAS): exact, every count and sum is an integer < 2^53
    ones = np.asarray(ones, dtype=np.float64)
    zeros = np.asarray(zeros, dtype=np.float64)
    c = concepts.astype(np.float64)
    e = ones @ (1 - c).T + zeros @ c.T  # (B, |C|)
    diff = (concepts[:, None, :] != hyps[None, :, :]).astype(np.float64)  # (|C|, |H|, N)
    d = ((ones + zeros) @ diff.reshape(-1, diff.shape[-1]).T).reshape(
        ones.shape[0], concepts.shape[0], hyps.shape[0])
    return np.rint((e[:, :, None] + d).min(axis=1)).astype(np.int64)


def median_scores(prefix: np.ndarray, lo: int, hi: int, s: int) -> np.ndarray:
    """(hi−lo+1,): ``max(QL(u), QR(u))`` for ``u = lo..hi`` (proof of Lemma 5.1, count form).

    ``QL(u)`` = users with more than ``s`` points in ``[lo, u−1]`` (the disagreement region of
    ``f_{lo−1}`` and ``f_{u−1}``; ``lo = 0`` means ``[1, u−1]`` since ``f_{−1} ≡ f_0``), ``QR(u)`` =
    users with more than ``s`` points in ``[u+1, hi]``. ``prefix`` is :meth:`Users.prefix_points`.
    The paper's prose says "more than m·s samples"; the definition of dis^s and Corollary D.1
    mean "more than s" (erratum, notes §6.6).
    """
    us = np.arange(lo, hi + 1)
    left_lo = max(lo, 1)
    # points in [left_lo, u−1] = P[u−1] − P[left_lo−1]  (empty when u−1 < left_lo)
    left = prefix[:, np.maximum(us - 1, left_lo - 1)] - prefix[:, [left_lo - 1]]
    right = prefix[:, [hi]] - prefix[:, us]  # points in [u+1, hi]
    ql = (left > s).sum(axis=0)
    qr = (right > s).sum(axis=0)
    return np.maximum(ql, qr)


class ThresholdClass:
    """The thresholds ``{f_u : u = 0..N}`` over ``{1..N}`` (§5), with a cumulative-sum fast path."""

    __slots__ = ("domain",)

    def __init__(self, domain: int) -> None:
        self.domain = int(domain)

    def __repr__(self) -> str:
        return f"ThresholdClass({self.domain})"

    @property
    def table(self) -> np.ndarray:
        from .data import threshold_table
        return threshold_table(self.domain)


def class_errors(users: Users, concepts: np.ndarray | ThresholdClass, t: int, *,
                 strict: bool = True) -> np.ndarray:
    """``E_t(c)`` for every concept of a truth table or a :class:`ThresholdClass`."""
    if isinstance(concepts, ThresholdClass):
        return threshold_user_errors(users, t, strict=strict)
    return user_errors(users, concepts, t, strict=strict)


def median_scores_sorted(points: np.ndarray, domain: int, lo: int, hi: int,
                         s: int) -> np.ndarray:
    """:func:`median_scores` from each user's sorted points (n, m'), in O(n·m' + N).

    ``QL(u)`` counts users whose (s+1)-th point ``≥ max(lo, 1)`` is ``≤ u − 1``; ``QR(u)`` those
    whose (s+1)-th largest point ``≤ hi`` is ``≥ u + 1``. Identical to :func:`median_scores`
    (tested), without the (n, r−l+1) matrices.
    """
    n, mp = points.shape
    us = np.arange(lo, hi + 1)
    rows = np.arange(n)
    j = (points < max(lo, 1)).sum(axis=1) + s
    ok = j < mp
    v = points[rows[ok], j[ok]]
    cum_v = np.cumsum(np.bincount(v, minlength=domain + 2))  # cum_v[w] = #{v ≤ w}
    ql = np.where(us >= 1, cum_v[np.maximum(us - 1, 0)], 0)
    j2 = (points <= hi).sum(axis=1) - 1 - s
    ok2 = j2 >= 0
    w = points[rows[ok2], j2[ok2]]
    cum_w = np.cumsum(np.bincount(w, minlength=domain + 2))
    qr = w.size - cum_w[us]
    return np.maximum(ql, qr)
