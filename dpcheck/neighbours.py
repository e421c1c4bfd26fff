"""Neighbour relations: which pairs of datasets a differential-privacy claim is about.

A DP claim bounds the privacy loss between ``M(d)`` and ``M(d′)`` for every pair of
*neighbouring* datasets, so the relation is part of the claim:

* :class:`AddRemove` — ``d′`` is ``d`` with exactly one record inserted or deleted
  ("unbounded" DP: even the dataset size is protected).
* :class:`Replace` — ``d`` and ``d′`` have the same size and differ in exactly one record
  ("bounded" DP: the size is public). A replacement is a deletion followed by an insertion, so
  ε-DP under add/remove implies 2ε-DP under replace; the converse does not hold.
* :class:`UserLevel` — the dataset is a sequence of users, each contributing at most
  ``group_size`` records, and neighbours differ in one whole user (added/removed or replaced).

A dataset is a sequence of records: a list, tuple or other non-string ``Sequence``, or a numpy
array with records along axis 0. ``ordered=True`` compares datasets as sequences (the other
records keep their positions); ``ordered=False`` compares them as multisets. Records are
compared through a canonical hashable key (arrays, lists and tuples compare elementwise, numpy
scalars like Python numbers, and NaN equals NaN), so ``[1, 2]``, ``(1, 2)`` and the row
``np.array([1, 2])`` are the same record.

References
----------
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", Foundations and Trends
in Theoretical Computer Science 9(3–4), 2014, §2.3 (databases as histograms; neighbours at ℓ₁
distance 1, i.e. add/remove — a replacement is at ℓ₁ distance 2).
D. Kifer, A. Machanavajjhala, "No Free Lunch in Data Privacy", SIGMOD 2011 (the names
"unbounded" (add/remove) and "bounded" (replace) DP).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpcheck.errors import InvalidArgument
from dpcheck.internal.datasets import (_add_remove_moves, _add_remove_why, _apply,
                                      _array_diff_positions, _as_dataset, _Cands, _check_bool,
                                      _key, _keys, _Move, _replace_moves, _replace_why)
from dpcheck.validation import check_choice, check_int, fmt

__all__ = ["Relation", "AddRemove", "Replace", "UserLevel", "QueryAnswers"]


class Relation(ABC):
    """Base of the neighbour relations; subclasses are frozen, slotted dataclasses."""

    __slots__ = ()
    _unit: ClassVar[str] = "record"  # what the dataset is a sequence of

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, e.g. ``"replace"`` or ``"user_level(replace, 3)"``."""

    @abstractmethod
    def describe(self) -> str:
        """One line of English."""

    @abstractmethod
    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""

    def _edit(self) -> str:
        """The edit that makes neighbours: ``"add_remove"`` or ``"replace"``."""
        return "add_remove"

    def _ordered(self) -> bool:
        return bool(getattr(self, "ordered", True))

    def _label(self) -> str:
        return type(self).__name__ + ("" if self._ordered() else "(ordered=False)")

    def _keys_of(self, d: Any, name: str) -> tuple[list[Any], str | None]:
        """Keys of ``d``'s elements and why ``d`` is out of the relation's scope (or None)."""
        try:
            return _keys(d), None
        except InvalidArgument as exc:
            raise InvalidArgument(f"{name}: {exc}") from exc

    def _key_of(self, rec: Any, name: str) -> Any:
        """Key of one candidate from ``domain`` (named ``name``), validated."""
        return _key(rec)

    def _why_not(self, d: Any, d_prime: Any) -> str | None:
        (kd, bad), (kp, bad_p) = self._keys_of(d, "d"), self._keys_of(d_prime, "d_prime")
        if bad is not None or bad_p is not None:
            return bad or bad_p
        why = _add_remove_why if self._edit() == "add_remove" else _replace_why
        return why(kd, kp, self._ordered(), self._unit)

    def are_neighbours(self, d: Any, d_prime: Any) -> bool:
        """Whether ``d`` and ``d_prime`` are neighbours (a symmetric relation).

        Raises
        ------
        InvalidArgument
            If ``d`` or ``d_prime`` is not a sequence (malformed input is an error, not False).
        """
        return self._why_not(_as_dataset(d, "d"), _as_dataset(d_prime, "d_prime")) is None

    def check(self, d: Any, d_prime: Any) -> None:
        """Return None if ``d`` and ``d_prime`` are neighbours, else raise saying why.

        Raises
        ------
        InvalidArgument
            ``d and d_prime are not neighbours under <relation>: <reason>``, or a message naming
            ``d`` / ``d_prime`` if one is not a sequence of records.
        """
        reason = self._why_not(_as_dataset(d, "d"), _as_dataset(d_prime, "d_prime"))
        if reason is not None:
            msg = f"d and d_prime are not neighbours under {self._label()}: {reason}"
            raise InvalidArgument(msg)

    def _prepare(self, d: Any, domain: Iterable[Any] | None) -> Iterator[_Move]:
        """Validate ``d`` and ``domain`` eagerly; return the lazy moves giving every neighbour."""
        keys, bad = self._keys_of(_as_dataset(d, "d"), "d")
        if bad is not None:
            raise InvalidArgument(bad)
        cands: _Cands = []
        if domain is None and self._edit() == "replace":
            msg = f"domain=None: {self._label()} needs a domain of {self._unit}s to replace with"
            raise InvalidArgument(msg)
        if isinstance(domain, (str, bytes, bytearray)) or not isinstance(domain, Iterable | None):
            msg = f"domain={fmt(domain)} must be an iterable of candidate {self._unit}s"
            raise InvalidArgument(msg)
        shape = d.shape[1:] if isinstance(d, np.ndarray) and d.dtype.kind != "O" else None
        seen: set[Any] = set()
        for j, rec in enumerate(domain or ()):
            name = f"domain[{j}]"
            if shape is not None and (got := np.shape(np.asarray(rec, dtype=object))) != shape:
                msg = f"{name}={fmt(rec)} has shape {got}, but d's {self._unit}s have shape {shape}"
                raise InvalidArgument(msg)
            k = self._key_of(rec, name)
            if k not in seen:
                seen.add(k)
                cands.append((k, rec))
        moves = _add_remove_moves if self._edit() == "add_remove" else _replace_moves
        return moves(keys, cands, self._ordered())

    def neighbours(self, d: Any, *, domain: Iterable[Any] | None = None) -> Iterator[Any]:
        """Every neighbour of ``d``, each exactly once, in a deterministic order.

        Removals come first (by position), then insertions / replacements (by position, then in
        the domain's iteration order). Repeated domain candidates are used once and moves that
        would reproduce an earlier output (deleting either of two equal adjacent records, say) are
        skipped, so the outputs are pairwise distinct; with ``ordered=False`` one representative
        per multiset is produced (removals/replacements at the first occurrence of each distinct
        record, insertions appended at the end). Outputs have ``d``'s container type (list, tuple,
        ndarray; other sequences give lists); an ndarray output widens its dtype only where that is
        exact (int → float when lossless), else it becomes ``object``.

        Parameters
        ----------
        d
            The dataset.
        domain
            Iterable of candidate records (users, for :class:`UserLevel`) to insert or substitute.
            ``None`` yields only the removals; relations that only replace then raise.

        Raises
        ------
        InvalidArgument
            At call time (not on first iteration) for a malformed ``d`` or ``domain``.
        """
        moves = self._prepare(d, domain)
        return (_apply(d, m) for m in moves)

    def random_neighbour(
        self, d: Any, *, rng: np.random.Generator, domain: Iterable[Any] | None = None
    ) -> Any:
        """One neighbour, uniform over the N distinct outputs of :meth:`neighbours`.

        Each has probability 1/N (so, under add/remove, removal versus insertion is chosen in
        proportion to how many of each there are); consumes one ``rng.integers(N)`` draw.

        Raises
        ------
        InvalidArgument
            If ``rng`` is not a ``numpy.random.Generator``, or ``d`` has no neighbours.
        """
        if not isinstance(rng, np.random.Generator):
            raise InvalidArgument(f"rng={fmt(rng)} must be a numpy.random.Generator")
        moves = list(self._prepare(d, domain))
        if not moves:
            given = "without a domain" if domain is None else "with the given domain"
            raise InvalidArgument(f"d={fmt(d)} has no neighbours under {self._label()} {given}")
        return _apply(d, moves[int(rng.integers(len(moves)))])


@dataclass(frozen=True, slots=True)
class AddRemove(Relation):
    """Add/remove ("unbounded") neighbours: ``d′`` is ``d`` with one record inserted or deleted.

    Parameters
    ----------
    ordered
        True: sequences, the other records keep their order. False: multisets.
    """

    ordered: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "ordered", _check_bool(self.ordered, "ordered"))

    @property
    def name(self) -> str:
        return "add_remove" if self.ordered else "add_remove(unordered)"

    def describe(self) -> str:
        how = "the other records keeping their order" if self.ordered else "as multisets"
        return f"add/remove: d' is d with exactly one record inserted or deleted ({how})"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "add_remove", "ordered": self.ordered}


@dataclass(frozen=True, slots=True)
class Replace(Relation):
    """Replace ("bounded") neighbours: same size, exactly one record differs.

    Parameters
    ----------
    ordered
        True: exactly one position differs. False: as multisets, one record was swapped for a
        different one (the others may be permuted).
    """

    ordered: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "ordered", _check_bool(self.ordered, "ordered"))

    @property
    def name(self) -> str:
        return "replace" if self.ordered else "replace(unordered)"

    def describe(self) -> str:
        how = "at exactly one position" if self.ordered else "in exactly one record, as multisets"
        return f"replace: d and d' have the same size and differ {how}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "replace", "ordered": self.ordered}

    def _edit(self) -> str:
        return "replace"

    def _why_not(self, d: Any, d_prime: Any) -> str | None:
        if isinstance(d, np.ndarray) and isinstance(d_prime, np.ndarray) and d.ndim > 1 \
                and d_prime.ndim > 1 and d.shape[1:] != d_prime.shape[1:]:  # not a row count
            return f"their records have different shapes ({d.shape[1:]} and {d_prime.shape[1:]})"
        pos = _array_diff_positions(d, d_prime) if self.ordered else None
        if pos is not None:  # vectorised fast path for same-shape numeric arrays
            return _replace_why([], [], True, "record", pos)
        return Relation._why_not(self, d, d_prime)


@dataclass(frozen=True, slots=True)
class UserLevel(Relation):
    """User-level neighbours: a sequence of users, each a sequence of ≤ ``group_size`` records.

    Users form an ordered sequence and are compared as ordered sequences of records (order
    within a user matters). A user with more than ``group_size`` records makes a pair
    non-neighbours (and makes ``d`` or a ``domain`` entry invalid for :meth:`neighbours`).

    Parameters
    ----------
    group_size
        Maximum records per user, an int >= 1.
    mode
        ``"replace"``: same number of users, exactly one user differs. ``"add_remove"``: one user
        inserted or deleted, the others keeping their order.
    """

    group_size: int
    mode: str = "replace"
    _unit = "user"

    def __post_init__(self) -> None:
        object.__setattr__(self, "group_size", check_int(self.group_size, "group_size", minimum=1))
        object.__setattr__(self, "mode", check_choice(self.mode, "mode", ("replace", "add_remove")))

    @property
    def name(self) -> str:
        return f"user_level({self.mode}, {self.group_size})"

    def describe(self) -> str:
        what = "adding or removing one user" if self.mode == "add_remove" else "replacing one user"
        size = self.group_size
        return f"user-level: users of at most {size} records; neighbours differ by {what}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": "user_level", "group_size": self.group_size, "mode": self.mode}

    def _edit(self) -> str:
        return self.mode

    @property
    def _limit(self) -> str:
        return f"group_size={self.group_size}"

    def _label(self) -> str:
        return f"UserLevel(group_size={self.group_size}, mode={self.mode!r})"

    def _keys_of(self, d: Any, name: str) -> tuple[list[Any], str | None]:
        keys, over = [], None
        for i, user in enumerate(d):
            user = _as_dataset(user, f"{name}[{i}]")
            if over is None and len(user) > self.group_size:
                over = f"user {i} of {name} has {len(user)} records, more than {self._limit}"
            keys.append(tuple(_keys(user)))
        return keys, over

    def _key_of(self, rec: Any, name: str) -> Any:
        user = _as_dataset(rec, name)
        if len(user) > self.group_size:
            raise InvalidArgument(f"{name} has {len(user)} records, more than {self._limit}")
        return tuple(_keys(user))


@dataclass(frozen=True, slots=True)
class QueryAnswers(Relation):
    """Neighbouring vectors of query answers: each coordinate moves by at most ``sensitivity``.

    The data of a query-answering mechanism (sparse vector, noisy max, histograms) is often the
    vector ``q(D) = (q_1(D), …, q_k(D))`` itself. Neighbouring datasets give answer vectors of
    the same length at ℓ∞ distance ≤ Δ (every query has sensitivity Δ); with ``monotone=True``
    all coordinates also move in the same direction (monotone queries, e.g. counts under
    add/remove). Pairs come from patterns (:func:`dpcheck.strategies.statdp_patterns`) or
    :func:`dpcheck.strategies.query_vector_pairs`; there is no enumeration of neighbours (a
    continuum), so :meth:`neighbours` raises.

    Parameters
    ----------
    sensitivity
        Δ > 0.
    monotone
        Require all coordinates to move in the same direction.

    References
    ----------
    M. Lyu, D. Su, N. Li, "Understanding the Sparse Vector Technique for Differential Privacy",
    PVLDB 10(6), 2017, §2 (query answers as the input; monotone queries).
    """

    sensitivity: float = 1.0
    monotone: bool = False
    _unit = "answer"

    def __post_init__(self) -> None:
        s = self.sensitivity
        if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)) or \
                not np.isfinite(s) or s <= 0:
            raise InvalidArgument(f"sensitivity={s!r} must be a finite number > 0")
        object.__setattr__(self, "sensitivity", float(s))
        object.__setattr__(self, "monotone", _check_bool(self.monotone, "monotone"))

    @property
    def name(self) -> str:
        return f"query_answers({self.sensitivity:g}{', monotone' if self.monotone else ''})"

    def describe(self) -> str:
        how = ", all in the same direction" if self.monotone else ""
        return (f"query answers: same number of answers, each moving by at most "
                f"{self.sensitivity:g}{how}")

    def to_dict(self) -> dict[str, object]:
        return {"kind": "query_answers", "sensitivity": self.sensitivity,
                "monotone": self.monotone}

    def _label(self) -> str:
        return f"QueryAnswers(sensitivity={self.sensitivity:g}, monotone={self.monotone})"

    def _why_not(self, d: Any, d_prime: Any) -> str | None:
        try:
            a = np.asarray(d, dtype=np.float64)
            b = np.asarray(d_prime, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument(f"d and d_prime must be vectors of numbers: {exc}") from exc
        if a.shape != b.shape or a.ndim != 1:
            return f"answer vectors of shapes {a.shape} and {b.shape} (must be equal, 1-d)"
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            return "answers must be finite"
        diff = b - a
        worst = float(np.max(np.abs(diff))) if diff.size else 0.0
        if worst > self.sensitivity * (1 + 1e-12):
            i = int(np.argmax(np.abs(diff)))
            return f"answer {i} moves by {worst:g} > sensitivity {self.sensitivity:g}"
        if self.monotone and np.any(diff > 0) and np.any(diff < 0):
            return "answers move in both directions (monotone=True)"
        return None

    def _prepare(self, d: Any, domain: Iterable[Any] | None) -> Iterator[_Move]:
        raise InvalidArgument(
            f"{self._label()} has a continuum of neighbours and does not enumerate them; use "
            "dpcheck.strategies.query_vector_pairs or statdp_patterns for pairs")
