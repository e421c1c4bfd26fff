"""Finite concept classes over ``{0, …, N−1}`` and exact VC, Littlestone and threshold dimensions.

A hypothesis ``h: {0..N−1} → {0, 1}`` is an ``N``-bit integer mask (bit ``x`` is ``h(x)``); a
:class:`ConceptClass` is a sorted, duplicate-free tuple of masks. Constructors build the
standard classes (thresholds, points, intervals), unions, negations and compositions
``G(H_1, …, H_k) = {x ↦ G(h_1(x), …, h_k(x))}`` under an aggregation rule ``G`` (a truth table
over ``{0,1}^k``; :func:`rule` names majority, AND, OR, XOR).

The calculators are exact. Subclasses are Python-int bitsets over the class's indices, with one
precomputed column bitset per domain point, so splitting a version space on ``x`` is one AND.

* :func:`vc_dimension` — largest shattered set, grown level by level from shattered sets (a
  subset of a shattered set is shattered).
* :func:`littlestone_dimension` — ``L(∅) = −1``, ``L(V) = max(0, max_x 1 + min(L(V_x^0),
  L(V_x^1)))`` over the ``x`` that split ``V``, memoised on ``V``, balanced splits first, pruned by
  ``L(V) ≤ ⌊log2 |V|⌋``.
* :func:`threshold_dimension` — longest ``x_1..x_t`` with ``h_1..h_t ∈ H`` such that
  ``h_i(x_j) = 1 ⟺ i ≤ j``; depth-first extension memoised on (pattern classes, zero class).

Conventions: the empty class has VC and Littlestone dimension −1 and threshold dimension 0.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification and
Online Prediction", COLT 2020 (seed 004): §3.1 (mistake trees, Definition 3.1, threshold
dimension), Theorem 3.2 (Shelah; Hodges), §4.
N. Littlestone, "Learning quickly when irrelevant attributes abound", Machine Learning 2 (1988).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import fmt, check_choice, check_int
from dpcheck.errors import InvalidArgument

__all__ = ["ConceptClass", "MAX_DOMAIN", "from_masks", "thresholds", "points", "intervals",
           "union", "negation", "rule", "compose", "vc_dimension", "littlestone_dimension",
           "threshold_dimension", "threshold_witness"]

#: Largest supported domain (masks are handled as numpy uint64 when composing).
MAX_DOMAIN = 62
#: Largest product ``Π |H_i|`` :func:`compose` enumerates.
MAX_PRODUCT = 4_000_000
_RULES = ("and", "or", "maj", "xor")


@dataclass(frozen=True, slots=True)
class ConceptClass:
    """A finite class of hypotheses over ``{0..n−1}``, as sorted distinct bitmasks.

    Build it with :func:`from_masks` or a named constructor (they validate); ``masks[i]`` has bit
    ``x`` set iff hypothesis ``i`` labels ``x`` with 1.
    """

    n: int
    masks: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.masks)

    def __iter__(self) -> Iterator[int]:
        return iter(self.masks)

    def __contains__(self, mask: object) -> bool:
        return mask in set(self.masks)

    def columns(self) -> list[int]:
        """``col[x]``: bitset over hypothesis indices of ``{i : masks[i](x) = 1}``."""
        cols = [0] * self.n
        for i, m in enumerate(self.masks):
            for x in range(self.n):
                if m >> x & 1:
                    cols[x] |= 1 << i
        return cols

    def as_array(self) -> np.ndarray:
        """The masks as a ``uint64`` array."""
        return np.array(self.masks, dtype=np.uint64)

    def label(self, mask: int, x: int) -> int:
        """``h(x)`` for the hypothesis with bitmask ``mask``."""
        return mask >> x & 1


def _check_n(n: Any) -> int:
    n = check_int(n, "n", minimum=1)
    if n > MAX_DOMAIN:
        raise InvalidArgument(f"n={n} must be <= {MAX_DOMAIN}")
    return n


def from_masks(n: int, masks: Iterable[int]) -> ConceptClass:
    """The class over ``{0..n−1}`` with the given hypotheses (bitmasks; duplicates merged).

    Raises
    ------
    InvalidArgument
        If ``n`` is not in ``[1, MAX_DOMAIN]`` or a mask is not an integer in ``[0, 2^n)``.
    """
    n = _check_n(n)
    if isinstance(masks, (str, bytes)):
        raise InvalidArgument(f"masks={fmt(masks)} must be an iterable of integers")
    try:
        items = list(masks)
    except TypeError:
        raise InvalidArgument(f"masks={fmt(masks)} must be an iterable of integers") from None
    out = set()
    for m in items:
        m = check_int(m, "mask", minimum=0)
        if m >> n:
            raise InvalidArgument(f"mask={m} has bits outside the domain {{0..{n - 1}}}")
        out.add(m)
    return ConceptClass(n, tuple(sorted(out)))


def thresholds(n: int) -> ConceptClass:
    """``{x ↦ 1[x ≥ c] : c = 0..n}`` (``n + 1`` functions, including all-ones and all-zeros)."""
    n = _check_n(n)
    full = (1 << n) - 1
    return from_masks(n, (full >> c << c for c in range(n + 1)))


def points(n: int, *, empty: bool = False) -> ConceptClass:
    """``{1[x = a] : a < n}``, plus the all-zero function if ``empty``."""
    n = _check_n(n)
    return from_masks(n, [1 << a for a in range(n)] + ([0] if empty else []))


def intervals(n: int, *, empty: bool = True) -> ConceptClass:
    """``{1[a ≤ x ≤ b] : a ≤ b < n}``, plus the empty interval if ``empty``."""
    n = _check_n(n)
    ms = [((1 << (b + 1)) - 1) >> a << a for a in range(n) for b in range(a, n)]
    return from_masks(n, ms + ([0] if empty else []))


def _same_domain(classes: Sequence[ConceptClass]) -> int:
    if not classes or not all(isinstance(c, ConceptClass) for c in classes):
        raise InvalidArgument(f"classes={fmt(classes)} must be one or more ConceptClass")
    ns = {c.n for c in classes}
    if len(ns) != 1:
        raise InvalidArgument(f"classes have different domains {sorted(ns)}")
    return ns.pop()


def union(*classes: ConceptClass) -> ConceptClass:
    """``H_1 ∪ … ∪ H_k`` (same domain)."""
    n = _same_domain(classes)
    return from_masks(n, (m for c in classes for m in c))


def negation(cls: ConceptClass) -> ConceptClass:
    """``¬H = {1 − h : h ∈ H}``."""
    n = _same_domain([cls])
    return from_masks(n, (((1 << n) - 1) ^ m for m in cls))


def rule(name: str, k: int) -> tuple[int, ...]:
    """Truth table of a named k-ary rule: entry ``a`` (bits ``a_j = a >> j & 1``) is ``G(a)``.

    ``name`` is ``"and"``, ``"or"``, ``"xor"`` or ``"maj"`` (strict majority; ``k`` odd).
    """
    check_choice(name, "name", _RULES)
    k = check_int(k, "k", minimum=1)
    if k > 8:
        raise InvalidArgument(f"k={k} must be <= 8")
    if name == "maj" and k % 2 == 0:
        raise InvalidArgument(f"k={k} must be odd for 'maj'")
    f: Callable[[int], bool] = {"and": lambda c: c == k, "or": lambda c: c > 0,
                                "xor": lambda c: c % 2 == 1, "maj": lambda c: 2 * c > k}[name]
    return tuple(int(f(a.bit_count())) for a in range(1 << k))


def _table(g: Any, k: int) -> tuple[int, ...]:
    if isinstance(g, str):
        return rule(g, k)
    if callable(g):
        return tuple(int(bool(g(tuple(a >> j & 1 for j in range(k))))) for a in range(1 << k))
    try:
        table = tuple(int(v) for v in g)
    except (TypeError, ValueError):
        raise InvalidArgument(f"G={fmt(g)} must be a rule name, a callable or a truth "
                              "table") from None
    if len(table) != 1 << k or any(v not in (0, 1) for v in table):
        raise InvalidArgument(f"G={fmt(g)} must be a 0/1 truth table of length 2^k = {1 << k}")
    return table


def compose(g: str | Sequence[int] | Callable[[tuple[int, ...]], Any],
            *classes: ConceptClass) -> ConceptClass:
    """``G(H_1, …, H_k) = {x ↦ G(h_1(x), …, h_k(x)) : h_i ∈ H_i}`` (deduplicated).

    ``g`` is a rule name (see :func:`rule`), a truth table of length ``2^k`` indexed by
    ``Σ_j a_j 2^j``, or a callable on the k-tuple of labels.

    Raises
    ------
    InvalidArgument
        If the classes differ in domain, one is empty, or ``Π |H_i| > MAX_PRODUCT``.
    """
    n = _same_domain(classes)
    k = len(classes)
    table = _table(g, k)
    if any(len(c) == 0 for c in classes):
        raise InvalidArgument("cannot compose an empty class")
    if int(np.prod([float(len(c)) for c in classes])) > MAX_PRODUCT:
        raise InvalidArgument(f"product of class sizes exceeds {MAX_PRODUCT}")
    full = np.uint64((1 << n) - 1)
    arrays = [c.as_array().reshape([-1 if j == i else 1 for j in range(k)])
              for i, c in enumerate(classes)]
    out = np.zeros([len(c) for c in classes], dtype=np.uint64)
    for a, value in enumerate(table):
        if value:
            term = np.full(out.shape, full, dtype=np.uint64)
            for j, arr in enumerate(arrays):
                term = term & (arr if a >> j & 1 else arr ^ full)
            out |= term
    return from_masks(n, (int(m) for m in np.unique(out)))


# ----------------------------------------------------------------------------- dimensions

def _class_arg(cls: Any) -> ConceptClass:
    if not isinstance(cls, ConceptClass):
        raise InvalidArgument(f"cls={fmt(cls)} must be a ConceptClass")
    return cls


def vc_dimension(cls: ConceptClass) -> int:
    """The VC dimension: largest ``A ⊆ X`` with ``|{h|_A : h ∈ H}| = 2^{|A|}`` (−1 if empty).

    References
    ----------
    Seed 004, §3 (preliminaries); exact search over shattered sets by increasing size.
    """
    cls = _class_arg(cls)
    if len(cls) == 0:
        return -1
    arr = cls.as_array()
    level: list[tuple[int, int]] = [(0, -1)]  # (subset mask, largest element): shattered sets
    size = 0
    while level and (1 << (size + 1)) <= len(cls):
        nxt = []
        for sub, top in level:
            for x in range(top + 1, cls.n):
                a = sub | 1 << x
                if len(np.unique(arr & np.uint64(a))) == 1 << (size + 1):
                    nxt.append((a, x))
        if not nxt:
            break
        level, size = nxt, size + 1
    return size


def littlestone_dimension(cls: ConceptClass) -> int:
    """The Littlestone dimension: depth of the deepest mistake tree shattered by ``H``.

    Returns −1 for the empty class and 0 for a single hypothesis (a leaf has depth 0, as in the
    proof of Proposition 4.2).

    References
    ----------
    Seed 004, §3.1 (mistake trees); N. Littlestone (1988). Exact memoised recursion
    ``L(V) = max(0, max_x 1 + min(L(V_x^0), L(V_x^1)))``.
    """
    cls = _class_arg(cls)
    if len(cls) == 0:
        return -1
    cols = cls.columns()
    memo: dict[int, int] = {}

    def solve(v: int) -> int:
        got = memo.get(v)
        if got is not None:
            return got
        ub = v.bit_count().bit_length() - 1  # ⌊log2 |V|⌋
        best = 0
        if ub > 0:
            splits: dict[int, tuple[int, int]] = {}
            for c in cols:
                a = v & c
                if a and a != v:
                    lo, hi = (a, v ^ a) if a.bit_count() <= (v ^ a).bit_count() else (v ^ a, a)
                    splits.setdefault(lo, (lo.bit_count(), hi))
            for lo, (cnt, hi) in sorted(splits.items(), key=lambda kv: -kv[1][0]):
                if cnt.bit_length() <= best:  # 1 + ⌊log2 min⌋ ≤ best: no later split helps
                    break
                first = solve(lo)
                if first + 1 <= best:
                    continue
                best = max(best, 1 + min(first, solve(hi)))
                if best >= ub:
                    break
        memo[v] = best
        return best

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * cls.n + 100))
    try:
        return solve((1 << len(cls)) - 1)
    finally:
        sys.setrecursionlimit(limit)


def _threshold_search(cls: ConceptClass, want_witness: bool) -> tuple[int, list[int]]:
    """Branch and bound over prefixes ``x_1..x_t``.

    A prefix is summarised by its pattern classes ``S_i = {h : h(x_j) = 1[i ≤ j], j ≤ t}`` and
    its zero class ``Z = {h : h(x_j) = 0, j ≤ t}``; appending ``x`` maps ``S_i ↦ S_i ∩ col[x]``
    and adds ``Z ∩ col[x]``. The new classes are disjoint subsets of ``Z``, so at most ``|Z|``
    points can still be appended. ``extend(state, need)`` returns the exact longest extension
    if it is ``≥ need`` and otherwise an upper bound ``< need`` (both memoised).
    """
    cols = cls.columns()
    full = (1 << len(cls)) - 1
    exact: dict[tuple[frozenset[int], int], int] = {}
    upper: dict[tuple[frozenset[int], int], int] = {}

    def children(pats: frozenset[int], zero: int) -> list[tuple[int, frozenset[int], int]]:
        out = []
        for x, c in enumerate(cols):
            new = zero & c
            if new and all(s & c for s in pats):
                out.append((new.bit_count(), x, frozenset(s & c for s in pats) | {new}))
        out.sort(key=lambda item: item[0])  # keep the zero class large first
        return [(x, p, zero & ~cols[x]) for _, x, p in out]

    def extend(pats: frozenset[int], zero: int, need: int) -> int:
        key = (pats, zero)
        if key in exact:
            return exact[key]
        if key in upper and upper[key] < need:
            return upper[key]
        kids = children(pats, zero)
        cap = min(zero.bit_count(), len(kids))
        if cap < need:
            upper[key] = cap
            return cap
        best, bound = 0, 0
        for _, p, z in kids:
            if best >= cap:
                break
            target = max(need, best + 1) - 1
            r = extend(p, z, target)
            if r >= target:
                best = max(best, r + 1)
            else:
                bound = max(bound, r + 1)
        if best >= need:
            exact[key] = best
            return best
        value = min(max(best, bound), need - 1)
        upper[key] = min(upper.get(key, value), value)
        return value

    t = extend(frozenset(), full, 0)
    seq: list[int] = []
    if want_witness:
        pats, zero = frozenset[int](), full
        while len(seq) < t:
            left = t - len(seq) - 1
            x, pats, zero = next((x, p, z) for x, p, z in children(pats, zero)
                                 if extend(p, z, left) >= left)
            seq.append(x)
    return t, seq


def threshold_dimension(cls: ConceptClass) -> int:
    """``T(H)``: the longest ``x_1..x_t`` threshold-shattered by ``H``.

    ``x_1..x_t`` is threshold-shattered if some ``h_1..h_t ∈ H`` have ``h_i(x_j) = 1 ⟺ i ≤ j``.

    References
    ----------
    Seed 004, §2 and §3.1 (definition before Theorem 3.2).
    """
    return _threshold_search(_class_arg(cls), False)[0]


def threshold_witness(cls: ConceptClass) -> tuple[list[int], list[int]]:
    """A longest threshold-shattered sequence ``x_1..x_t`` and masks ``h_1..h_t`` shattering it."""
    cls = _class_arg(cls)
    _, xs = _threshold_search(cls, True)
    hs = []
    for i in range(len(xs)):
        want = [int(i <= j) for j in range(len(xs))]
        hs.append(next(m for m in cls if [m >> x & 1 for x in xs] == want))
    return xs, hs

