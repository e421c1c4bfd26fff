"""Integrations of differential-privacy libraries (optional dependencies).

:mod:`dpcheck.integrations.scalar`
    :func:`dpcheck.from_scalar`: any function that releases one output per call as a
    mechanism of the protocol (the base of the library adapters).
:mod:`dpcheck.integrations.diffprivlib`
    diffprivlib mechanism objects (``randomise``) and ``diffprivlib.tools`` functions as
    mechanisms, seeded from dpcheck's ``rng`` once per chunk.
:mod:`dpcheck.integrations.opendp`
    OpenDP measurements as mechanisms, and the claim their privacy map makes for an input
    distance (pure ε, zCDP ρ converted to (ε, δ), approximate (ε, δ)).

:func:`from_library` recognises a library object and adapts it (the ``dpcheck audit`` command
uses it). Each library module offers ``recognises(obj)`` and ``adapt(obj)`` and imports its
library lazily: importing :mod:`dpcheck` never needs them. A new library is one module and one
line in :data:`LIBRARIES`. Install them with the ``dev`` extra (versions pinned in
``pyproject.toml``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["LIBRARIES", "diffprivlib", "from_library", "library_of", "opendp"]

#: Library modules asked in this order whether they recognise an object.
LIBRARIES = ("opendp", "diffprivlib")


def _module(name: str) -> ModuleType:
    if name == "opendp":
        from dpcheck.integrations import opendp as module
    elif name == "diffprivlib":
        from dpcheck.integrations import diffprivlib as module
    else:  # pragma: no cover - LIBRARIES lists the modules above
        raise KeyError(name)
    return module


def library_of(obj: Any) -> str | None:
    """The name of the library whose object ``obj`` is (``None``: not a library object)."""
    for name in LIBRARIES:
        if _module(name).recognises(obj):
            return name
    return None


def from_library(obj: Any) -> Any:
    """``obj`` as a dpcheck mechanism: adapted when a library of :data:`LIBRARIES` recognises
    it (an OpenDP measurement, a diffprivlib mechanism object), unchanged otherwise.

    Examples
    --------
    >>> from dpcheck.integrations import from_library
    >>> def noisy(data, size, rng):
    ...     return rng.laplace(sum(data), 1.0, size)
    >>> from_library(noisy) is noisy
    True
    """
    name = library_of(obj)
    return obj if name is None else _module(name).adapt(obj)
