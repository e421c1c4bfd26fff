"""diffprivlib mechanisms and tools as dpcheck mechanisms.

:func:`from_diffprivlib` accepts

* a mechanism object of ``diffprivlib.mechanisms`` (anything with ``randomise(value)``): each
  output is ``mechanism.randomise(query(data))``;
* a function of ``diffprivlib.tools`` (``mean``, ``var``, ``histogram``, ``quantile``, …),
  called as ``tool(data, **kwargs, random_state=…, accountant=BudgetAccountant())``.

Seeding. diffprivlib draws from ``random_state``. For every chunk the adapter derives a seed
from dpcheck's ``rng`` and gives the library a generator of the kind it would use in
production: a mechanism created without ``random_state`` draws from ``secrets.SystemRandom``;
the adapter substitutes ``random.Random(seed)`` — the same class of generator (same methods,
same code path inside diffprivlib, e.g. ``normalvariate`` for the Gaussian), but seeded — and a
mechanism created with an integer or ``RandomState`` gets ``numpy.random.RandomState(seed)``.
Tools get a ``RandomState`` (their documented way to be deterministic). Audits are therefore
reproducible (``seeding == "rng"``). The wrapped mechanism is copied, never modified.

Each tool call gets a fresh ``BudgetAccountant``: the default global accountant would record
every one of the hundreds of thousands of calls of an audit.

References
----------
N. Holohan et al., "Diffprivlib: The IBM Differential Privacy Library", 2019; N. Holohan,
S. Braghin, "Secure Random Sampling in Differential Privacy", ESORICS 2021 (the samplers).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import InvalidArgument
from dpcheck.integrations.scalar import stack_outputs
from dpcheck.validation import check_int

__all__ = ["DiffprivlibMechanism", "DiffprivlibTool", "adapt", "from_diffprivlib", "recognises"]


def recognises(obj: Any) -> bool:
    """Whether ``obj`` is a diffprivlib mechanism object (it has ``randomise``)."""
    return not isinstance(obj, type) and callable(getattr(obj, "randomise", None))


def adapt(obj: Any) -> DiffprivlibMechanism | DiffprivlibTool:
    """A diffprivlib mechanism object as a mechanism, with the defaults of
    :func:`from_diffprivlib`."""
    return from_diffprivlib(obj)


def _seed(rng: np.random.Generator) -> int:
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(f"rng={rng!r} must be a numpy.random.Generator")
    return int(rng.integers(0, 2**32))


class DiffprivlibMechanism:
    """``mechanism.randomise(query(data))`` per output (see :func:`from_diffprivlib`)."""

    seeding = "rng"

    def __init__(self, mechanism: Any, query: Callable[[Any], Any] | None = None,
                 name: str | None = None) -> None:
        if not callable(getattr(mechanism, "randomise", None)):
            raise InvalidArgument(f"mechanism={mechanism!r} must have a randomise(value) method")
        if query is not None and not callable(query):
            raise InvalidArgument(f"query={query!r} must be callable or None")
        mech = copy.copy(mechanism)
        rng = getattr(mech, "_rng", None)
        # production default (random_state=None) is secrets.SystemRandom: a random.Random
        self.python_rng = isinstance(rng, random.Random)
        mech._rng = random.Random(0) if self.python_rng else np.random.RandomState(0)
        self.mechanism = mech
        self.query = query
        self.name = name

    @property
    def display_name(self) -> str:
        """Name shown in reports."""
        if self.name is not None:
            return self.name
        m = self.mechanism
        params = ", ".join(f"{k}={getattr(m, k)!r}" for k in ("epsilon", "delta", "sensitivity")
                           if hasattr(m, k))
        return f"diffprivlib.{type(m).__name__}({params})"

    def __repr__(self) -> str:
        return self.display_name

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        size = check_int(size, "size", minimum=1)
        seed = _seed(rng)
        value = data if self.query is None else self.query(data)
        mech = copy.copy(self.mechanism)
        mech._rng = random.Random(seed) if self.python_rng else np.random.RandomState(seed)
        randomise = mech.randomise
        return stack_outputs([randomise(value) for _ in range(size)])


class DiffprivlibTool:
    """``tool(data, **kwargs)`` per output (see :func:`from_diffprivlib`)."""

    seeding = "rng"

    def __init__(self, tool: Callable[..., Any], kwargs: dict[str, Any],
                 output_index: int | None = None, name: str | None = None) -> None:
        if not callable(tool):
            raise InvalidArgument(f"tool={tool!r} must be callable")
        for key in ("random_state", "accountant"):
            if key in kwargs:
                raise InvalidArgument(f"{key}= is set by the adapter; do not pass it")
        self.tool = tool
        self.kwargs = dict(kwargs)
        self.output_index = output_index
        self.name = name

    @property
    def display_name(self) -> str:
        """Name shown in reports."""
        if self.name is not None:
            return self.name
        params = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"diffprivlib.tools.{getattr(self.tool, '__name__', 'tool')}({params})"

    def __repr__(self) -> str:
        return self.display_name

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]:
        from diffprivlib.accountant import BudgetAccountant

        size = check_int(size, "size", minimum=1)
        state = np.random.RandomState(_seed(rng))
        tool, kwargs, index = self.tool, self.kwargs, self.output_index
        outs = []
        for _ in range(size):
            out = tool(data, **kwargs, random_state=state, accountant=BudgetAccountant())
            outs.append(out if index is None else out[index])
        return stack_outputs(outs)


def from_diffprivlib(
    obj: Any,
    *,
    query: Callable[[Any], Any] | None = None,
    output_index: int | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> DiffprivlibMechanism | DiffprivlibTool:
    """A diffprivlib mechanism object or tool function as a dpcheck mechanism.

    Parameters
    ----------
    obj
        A ``diffprivlib.mechanisms`` object (``randomise``) or a ``diffprivlib.tools`` function.
    query
        Mechanism objects only: maps a dataset to the value to randomise (default: the dataset
        *is* the value). Picklable (e.g. ``numpy.sum``) if the audit uses a process executor.
    output_index
        Tools only: keep ``result[output_index]`` (e.g. 0 for ``histogram``'s counts).
    name
        Name shown in reports.
    **kwargs
        Tools only: the tool's parameters (``epsilon``, ``bounds``, …).

    Returns
    -------
    DiffprivlibMechanism or DiffprivlibTool
        Mechanisms of the protocol ``mechanism(data, size, rng)``, seeded from ``rng``,
        picklable.

    Examples
    --------
    >>> import numpy as np, dpcheck
    >>> from diffprivlib.mechanisms import Laplace
    >>> from dpcheck.integrations.diffprivlib import from_diffprivlib
    >>> mech = from_diffprivlib(Laplace(epsilon=1.0, sensitivity=1.0), query=np.sum)
    >>> mech([1, 0, 1], 3, np.random.default_rng(0)).shape
    (3,)
    """
    if isinstance(obj, type):  # the class itself: its randomise is an unbound function
        raise InvalidArgument(f"obj={obj.__name__} must be a diffprivlib mechanism object "
                              f"(e.g. {obj.__name__}(epsilon=1.0, ...)) or tools function, "
                              "not a class")
    if callable(getattr(obj, "randomise", None)):
        if kwargs or output_index is not None:
            raise InvalidArgument("keyword arguments other than query= and name= are for tools; "
                                  "configure a mechanism object when you create it")
        return DiffprivlibMechanism(obj, query, name)
    if callable(obj):
        if query is not None:
            raise InvalidArgument("query= is for mechanism objects; a tool takes the dataset")
        return DiffprivlibTool(obj, kwargs, output_index, name)
    raise InvalidArgument(f"obj={obj!r} must be a diffprivlib mechanism or tools function")
