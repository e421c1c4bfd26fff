"""Adapters: mechanisms that return one output per call become mechanisms of the protocol.

Library mechanisms usually release one noisy answer per call (``mech.randomise(value)``,
``tools.mean(x, ...)``, an OpenDP ``Measurement(x)``); dpcheck samples
``mechanism(data, size, rng) -> ndarray`` of ``size`` outputs (design §3). :func:`from_scalar`
turns ``fn(data, rng) -> one output`` into such a mechanism by calling ``fn`` ``size`` times and
stacking the outputs along axis 0.

Seeding. dpcheck's determinism rule (same seed ⇒ same result) holds only if every bit of
randomness comes from the ``rng`` dpcheck hands over. An adapter therefore records how the
wrapped function is seeded, in :attr:`ScalarMechanism.seeding`:

``"rng"``
    ``fn`` draws from ``rng`` or derives the library's own seed (``random_state``) from it:
    reproducible.
``"none"``
    the library draws from its own entropy source (e.g. OpenDP's OS CSPRNG, which cannot be
    seeded): the audit is still valid — its statistics never assume reproducibility — but the
    same seed will not reproduce the same result. :func:`dpcheck.audit` says so in the result's
    ``warnings``.

Adapters are plain frozen dataclasses holding ``fn``: they pickle whenever ``fn`` does (a
module-level function, a :func:`functools.partial` of one, or an integration object from
:mod:`dpcheck.integrations`), so an executor can draw chunks in other processes.

References
----------
Design §3 (the mechanism protocol) and §4 rule 5 (determinism); contract ``dpcheck.from_scalar``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_int

__all__ = ["ScalarMechanism", "from_scalar", "SEEDINGS", "callable_name", "stack_outputs"]

#: At most this many distinct warnings are kept in a result.

#: How an adapted function is seeded (see the module docstring).
SEEDINGS = ("rng", "none")


@dataclass(frozen=True)
class ScalarMechanism:
    """``fn(data, rng) -> one output`` as a mechanism ``mechanism(data, size, rng)``.

    Attributes
    ----------
    fn
        Called ``size`` times per draw with the same ``rng`` (a :class:`numpy.random.Generator`
        that advances between calls).
    seeding
        ``"rng"`` or ``"none"`` (see :mod:`dpcheck.integrations.scalar`).
    name
        Shown in reports (default: ``fn``'s qualified name).
    """

    fn: Callable[[Any, np.random.Generator], Any]
    seeding: str = "rng"
    name: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise InvalidArgument(f"fn={self.fn!r} must be callable as fn(data, rng)")
        if self.seeding not in SEEDINGS:
            raise InvalidArgument(f"seeding={self.seeding!r} must be one of {SEEDINGS}")
        if self.name is not None and not isinstance(self.name, str):
            raise InvalidArgument(f"name={self.name!r} must be a string or None")

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        """``size`` outputs of ``fn(data, rng)`` stacked along axis 0."""
        size = check_int(size, "size", minimum=1)
        if not isinstance(rng, np.random.Generator):
            raise InvalidArgument(f"rng={rng!r} must be a numpy.random.Generator")
        fn = self.fn
        return stack_outputs([fn(data, rng) for _ in range(size)])

    def __repr__(self) -> str:
        return f"from_scalar({self.display_name})"

    @property
    def display_name(self) -> str:
        """The name used in reports."""
        return self.name if self.name is not None else callable_name(self.fn)


def from_scalar(
    fn: Callable[[Any, np.random.Generator], Any], *, seeding: str = "rng", name: str | None = None
) -> ScalarMechanism:
    """Turn ``fn(data, rng) -> one output`` into a mechanism ``mechanism(data, size, rng)``.

    Parameters
    ----------
    fn
        Releases one output (a number, a string or a fixed-length vector) on ``data``. Draw all
        randomness from ``rng``, or derive the library's seed from it, e.g.
        ``random_state=np.random.RandomState(rng.integers(2**32))`` — or use the faster
        adapters of :mod:`dpcheck.integrations`, which seed once per chunk.
    seeding
        ``"rng"`` (default): ``fn`` is seeded by ``rng``, so audits are reproducible.
        ``"none"``: the library cannot be seeded; the audit result then carries a warning that
        the same seed will not reproduce it.
    name
        Name shown in reports.

    Returns
    -------
    ScalarMechanism
        Picklable whenever ``fn`` is.

    Examples
    --------
    >>> import numpy as np, dpcheck
    >>> def noisy_count(data, rng):                      # one output per call
    ...     return len(data) + rng.laplace(0.0, 1.0)
    >>> mech = dpcheck.from_scalar(noisy_count)
    >>> mech([1, 2, 3], 4, np.random.default_rng(0)).shape
    (4,)
    """
    return ScalarMechanism(fn, seeding=seeding, name=name)


def callable_name(fn: Any) -> str:
    """A stable, readable name: ``qualname`` of a function, ``f(args, k=v)`` of a
    :func:`functools.partial` (no memory addresses, so reports compare across runs)."""
    if isinstance(fn, functools.partial):
        args = [repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in fn.keywords.items()]
        return f"{callable_name(fn.func)}({', '.join(args)})"
    name = getattr(fn, "__qualname__", None)
    return name if isinstance(name, str) else type(fn).__name__


def stack_outputs(outputs: list[Any]) -> NDArray[Any]:
    """Stack per-call outputs (scalars or equal-length vectors) into one array along axis 0."""
    try:
        return np.asarray(outputs)
    except ValueError as exc:  # ragged vectors
        raise InvalidArgument(
            f"the adapted function returned outputs of different shapes ({exc})") from exc
