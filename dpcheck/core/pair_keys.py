"""Which pairs of :func:`dpcheck.audit_pairs` are the same test: equal, or each other's swap.

:func:`same_as` maps every pair to the first pair equal to it or to its swap
(``dpcheck.core.audit_pairs`` audits each such group once on its pooled budget); datasets are
compared by :func:`data_key`, by type and value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["data_key", "same_as"]


def data_key(x: Any) -> Any:
    """A hashable key equal for equal datasets of equal types.

    Parameters
    ----------
    x
        A dataset (list, tuple or numpy array of records) or a record.

    Returns
    -------
    Any
        Equal keys for equal values of equal types: ``1``, ``1.0`` and ``True`` differ, as do
        ``0.0`` and ``-0.0`` (a mechanism may tell them apart, e.g. through ``str``).

    Raises
    ------
    TypeError
        For objects other than numpy arrays and scalars, lists, tuples, numbers, strings,
        bytes and ``None``.
    """
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "O":
            return ("ndarray", x.shape, tuple(data_key(v) for v in x.ravel().tolist()))
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.generic):
        return ("scalar", x.dtype.str, x.tobytes())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(data_key(v) for v in x))
    if isinstance(x, (float, complex)):
        return (type(x).__name__, repr(x))
    if isinstance(x, (bool, int, str, bytes)) or x is None:
        return (type(x).__name__, x)
    raise TypeError(type(x).__name__)


def same_as(pairs: list[Any]) -> tuple[int, ...] | None:
    """For each pair, the index of the first pair equal to it or to its swap.

    Parameters
    ----------
    pairs
        ``(d, d_prime)`` pairs.

    Returns
    -------
    tuple of int or None
        ``None`` when the pairs are distinct, or when some dataset has no :func:`data_key`
        (then nothing is merged).

    Examples
    --------
    >>> same_as([([1], [0]), ([0], [1]), ([1], [2]), ([1.0], [0.0])])
    (0, 0, 2, 3)
    """
    try:
        keys = [(data_key(d), data_key(d_prime)) for d, d_prime in pairs]
    except TypeError:
        return None
    first: dict[Any, int] = {}
    same = []
    for i, (a, b) in enumerate(keys):
        j = first.get((a, b), first.get((b, a), i))
        first.setdefault((a, b), j)
        same.append(j)
    return None if same == list(range(len(pairs))) else tuple(same)
