"""User-level datasets of Li–Wang–Ye (paper 002) and the count statistics the algorithms use.

A dataset is ``z = (z_1, …, z_n)``: ``n`` users, each a block of exactly ``m`` labelled examples
``(x, y)`` with ``x ∈ X = {1, …, N}`` and ``y ∈ {0, 1}`` (§2; the item-level setting is
``m = 1``). ``m`` is public and the same for every user, so every algorithm here is constructed
with its ``m`` and rejects users of another size. Datasets are given as a sequence of users
(each a sequence of ``(x, y)`` pairs) or as an integer array of shape ``(n, m, 2)``; item-level
learners also take a flat sequence of examples.

Hypotheses are truth tables over ``X``: an array ``(k, N)`` of 0/1 whose column ``j`` is the label
of the point ``j + 1`` (the paper's convention ``X = {1..N}`` is kept throughout; a
:class:`algorithms.concepts.ConceptClass` over ``{0..N−1}`` maps bit ``j`` to the point ``j+1``).
A released hypothesis is its truth-table *code* ``Σ_j h(j+1)·2^j``.

Count form (notes §2.3, a decision: no normalised value is ever released, see §6.2):
``mist_i(c)`` = mistakes of ``c`` on user ``i``; ``E_t(c) = #{i : mist_i(c) > t}``;
``dcnt_i(c, h)`` = points of user ``i`` where ``c`` and ``h`` disagree;
``D_s(c, h) = #{i : dcnt_i(c, h) > s}``. Then ``err^t_z = E_t/n`` and ``dis^s_x = D_s/n``.

References
----------
B. Li, W. Wang, P. Ye, "Improved Bounds for Pure Private Agnostic Learning: Item-Level and
User-Level Privacy" (seed 002), §2 (definitions of err^t_z, dis^s_x), §5 (thresholds f_u).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import fmt, check_int
from dpcheck.errors import InvalidArgument

__all__ = [
    "Users",
    "all_functions",
    "as_items",
    "as_users",
    "code_of",
    "codes",
    "table_from_class",
    "threshold_table",
]


@dataclass(frozen=True, eq=False)
class Users:
    """``n`` users of ``m`` examples over ``X = {1..domain}``: ``x`` and ``y`` of shape (n, m)."""

    x: np.ndarray
    y: np.ndarray
    domain: int

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.x.shape[0])

    @property
    def m(self) -> int:
        """Examples per user."""
        return int(self.x.shape[1])

    def first(self, k: int, per: str = "user") -> Users:
        """The discard rule (notes §6.5, a decision): keep the first ``k`` examples of each user.

        ``per="record"`` is a mutant (issue 27, "per-user step applied per record"): the first
        ``n·k`` examples of the *flattened* example list, re-blocked into ``n`` users of ``k`` —
        the first users' examples fill several pseudo-users and the last users are dropped, so
        replacing the last user changes nothing while replacing the first one moves every count
        by up to ``m/k``.
        """
        k = min(k, self.m)
        if k == self.m:
            return self
        if per == "record":
            n = self.n
            return Users(self.x.reshape(-1)[:n * k].reshape(n, k),
                         self.y.reshape(-1)[:n * k].reshape(n, k), self.domain)
        return Users(self.x[:, :k], self.y[:, :k], self.domain)

    def label_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ones, zeros)``, each (n, N): how often user ``i`` holds ``(j+1, 1)`` / ``(j+1, 0)``."""
        n, N = self.n, self.domain
        idx = (np.arange(n)[:, None] * N + self.x - 1).ravel()
        y = self.y.ravel()
        ones = np.bincount(idx[y == 1], minlength=n * N).reshape(n, N).astype(np.int64)
        zeros = np.bincount(idx[y == 0], minlength=n * N).reshape(n, N).astype(np.int64)
        return ones, zeros

    def prefix_points(self) -> np.ndarray:
        """(n, N+1): ``P[i, u]`` = points of user ``i`` that are ``≤ u`` (``P[:, 0] = 0``)."""
        ones, zeros = self.label_counts()
        out = np.zeros((self.n, self.domain + 1), dtype=np.int64)
        np.cumsum(ones + zeros, axis=1, out=out[:, 1:])
        return out


def _check_domain(domain: Any) -> int:
    return check_int(domain, "domain", minimum=1)


def as_users(data: Any, m: int, domain: int, name: str = "data") -> Users:
    """Validate ``data`` as users of exactly ``m`` examples over ``{1..domain}``.

    Raises
    ------
    InvalidArgument
        ``data[i] has 3 examples, every user must have m=4`` and the like.
    """
    m = check_int(m, "m", minimum=1)
    domain = _check_domain(domain)
    if isinstance(data, Users):
        if data.m != m or data.domain != domain:
            raise InvalidArgument(f"{name} has m={data.m}, domain={data.domain}; "
                                  f"expected m={m}, domain={domain}")
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind in "iu":
        arr = data
        if arr.ndim != 3 or arr.shape[1:] != (m, 2):
            raise InvalidArgument(f"{name} has shape {arr.shape}, must be (n, {m}, 2)")
    else:
        if isinstance(data, (str, bytes)) or not isinstance(data, Sequence | np.ndarray):
            raise InvalidArgument(f"{name}={fmt(data)} must be a sequence of users")
        rows = []
        for i, user in enumerate(data):
            try:
                block = np.asarray(user, dtype=np.int64)
            except (TypeError, ValueError):
                raise InvalidArgument(f"{name}[{i}]={fmt(user)} must be {m} pairs (x, y)") from None
            if block.shape != (m, 2):
                raise InvalidArgument(
                    f"{name}[{i}]={fmt(user)} has shape {block.shape}, every user must be "
                    f"m={m} pairs (x, y)")
            rows.append(block)
        arr = np.stack(rows) if rows else np.zeros((0, m, 2), dtype=np.int64)
    x, y = arr[..., 0].astype(np.int64), arr[..., 1].astype(np.int64)
    if x.size and (x.min() < 1 or x.max() > domain):
        raise InvalidArgument(f"{name} has a point outside X = {{1..{domain}}}")
    if y.size and not np.isin(y, (0, 1)).all():
        raise InvalidArgument(f"{name} has a label outside {{0, 1}}")
    return Users(x, y, domain)


def as_items(data: Any, domain: int, name: str = "data") -> Users:
    """Item-level data (``(x, y)`` examples, or users of one example) as users with ``m = 1``."""
    if isinstance(data, Users):
        return as_users(data, 1, domain, name)
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence | np.ndarray):
        raise InvalidArgument(f"{name}={fmt(data)} must be a sequence of examples (x, y)")
    if len(data) == 0:
        return as_users(np.zeros((0, 1, 2), dtype=np.int64), 1, domain, name)
    try:
        flat = np.asarray([np.asarray(r) for r in data], dtype=np.int64)
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name}={fmt(data)} must be a sequence of pairs (x, y)") from None
    if flat.ndim == 3 and flat.shape[1:] == (1, 2):  # users of one example (m = 1)
        flat = flat[:, 0, :]
    if flat.ndim != 2 or flat.shape[1] != 2:
        raise InvalidArgument(f"{name}={fmt(data)} must be a sequence of pairs (x, y)")
    return as_users(flat[:, None, :], 1, domain, name)


def threshold_table(domain: int) -> np.ndarray:
    """Thresholds ``f_u(x) = 1[x > u]``, ``u = 0..N`` (§5): row ``u`` of an (N+1, N) table."""
    N = _check_domain(domain)
    xs = np.arange(1, N + 1)
    return (xs[None, :] > np.arange(N + 1)[:, None]).astype(np.int8)


def all_functions(domain: int) -> np.ndarray:
    """All ``2^N`` functions ``X → {0, 1}`` (rows in code order), ``N ≤ 12``."""
    N = _check_domain(domain)
    if N > 12:
        raise InvalidArgument(f"domain={N} must be <= 12 for all_functions")
    codes_ = np.arange(1 << N)
    return ((codes_[:, None] >> np.arange(N)[None, :]) & 1).astype(np.int8)


def table_from_class(cls: Any) -> np.ndarray:
    """Truth tables of a :class:`algorithms.concepts.ConceptClass` (bit ``j`` ↦ point ``j+1``)."""
    masks = np.array(cls.masks, dtype=np.int64)
    return ((masks[:, None] >> np.arange(cls.n)[None, :]) & 1).astype(np.int8)


def codes(table: np.ndarray) -> np.ndarray:
    """The code ``Σ_j h(j+1)·2^j`` of every row of a truth table (what learners release)."""
    weights = (1 << np.arange(table.shape[1], dtype=np.int64))
    return table.astype(np.int64) @ weights


def code_of(row: Sequence[int]) -> int:
    """The code of one truth table ``(h(1), …, h(N))``."""
    return int(sum(int(b) << j for j, b in enumerate(row)))
