"""The mechanism protocol (design §3) and the validation of what mechanisms return.

A mechanism is any callable ``mechanism(data, size, rng) -> numpy.ndarray`` returning ``size``
independent outputs along axis 0 (shape ``(size,)`` for scalars, ``(size, k)`` for vectors), with
all randomness drawn from ``rng`` (a :class:`numpy.random.Generator`). Objects with a
``.sample(data, size, rng)`` method are accepted too; an object that also has ``.pmf(data)``
(finite support → mapping from output to probability) enables exact analysis.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import GlobalRandomStateWarning, InvalidArgument

__all__ = [
    "records_warnings",
    "seeding_warning",
    "Mechanism",
    "SamplingMechanism",
    "ExactMechanism",
    "Sampler",
    "as_sampler",
    "pmf_of",
    "mechanism_name",
    "draw",
]

Sampler = Callable[[Any, int, np.random.Generator], Any]


@runtime_checkable
class Mechanism(Protocol):
    """A vectorised sampler: ``mechanism(data, size, rng) -> ndarray`` of ``size`` outputs."""

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]: ...


@runtime_checkable
class SamplingMechanism(Protocol):
    """An object whose ``sample(data, size, rng)`` draws ``size`` outputs."""

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> NDArray[Any]: ...


@runtime_checkable
class ExactMechanism(SamplingMechanism, Protocol):
    """A sampler that also knows its exact, finite output distribution."""

    def pmf(self, data: Any) -> Mapping[Any, float]: ...


def as_sampler(mechanism: Any) -> Sampler:
    """Return the sampling function of ``mechanism`` (its ``.sample`` method, or itself).

    A function written ``f(data, size, *, rng)`` (``rng`` keyword-only, as numpy-style code
    often is) is called with ``rng=`` (:class:`KeywordRng`)."""
    sample = getattr(mechanism, "sample", None)
    fn = sample if callable(sample) else mechanism if callable(mechanism) else None
    if fn is not None:
        return KeywordRng(fn) if _keyword_only_rng(fn) else fn  # type: ignore[no-any-return]
    raise InvalidArgument(
        f"mechanism={mechanism!r} must be callable as mechanism(data, size, rng) "
        "or have a .sample(data, size, rng) method"
    )


@dataclasses.dataclass(frozen=True)
class KeywordRng:
    """A sampler ``fn(data, size, *, rng)`` called as ``fn(data, size, rng=rng)`` (picklable
    whenever ``fn`` is)."""

    fn: Callable[..., Any]

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> Any:
        return self.fn(data, size, rng=rng)


def _keyword_only_rng(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` takes ``rng`` as a keyword-only parameter and at most two positional
    arguments (so ``fn(data, size, rng)`` would fail)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: call them positionally
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params) or len(positional) >= 3:
        return False
    return any(p.name == "rng" and p.kind is p.KEYWORD_ONLY for p in params)


def pmf_of(mechanism: Any) -> Callable[[Any], Mapping[Any, float]] | None:
    """The mechanism's ``pmf`` method if it has one (exact mode), else ``None``."""
    pmf = getattr(mechanism, "pmf", None)
    return pmf if callable(pmf) else None


def mechanism_name(mechanism: Any) -> str:
    """A short human-readable name for reports: a function's qualified name, else its repr,
    with memory addresses (``<function f at 0x7f...>``) removed so that the same mechanism has
    the same name in every process and every run."""
    name = getattr(mechanism, "__qualname__", None)
    if isinstance(name, str) and ".<locals>." in name:  # f.<locals>.g -> "g (in f)"
        outer, _, inner = name.rpartition(".<locals>.")
        name = f"{inner} (in {outer.replace('.<locals>', '')})"
    text = name if isinstance(name, str) else _ADDRESS.sub("", repr(mechanism))
    return text if len(text) <= 120 else text[:117] + "..."


#: `` at 0x7fa9...`` inside reprs of functions and objects without a custom repr.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def draw(
    sampler: Sampler,
    data: Any,
    size: int,
    rng: np.random.Generator,
    *,
    arg: str = "mechanism",
    trailing: tuple[int, ...] | None = None,
    kind: str | None = None,
) -> NDArray[Any]:
    """Call ``sampler(data, size, rng)`` and validate the result.

    Outputs are returned as an array with ``size`` rows; arrays with more than two dimensions are
    flattened to ``(size, k)``. Raises :class:`InvalidArgument` (naming ``arg``) when the
    mechanism raises, returns the wrong number of outputs, a non-numeric / non-string array, NaN,
    or a trailing shape / dtype kind different from ``trailing`` / ``kind`` (those of earlier
    draws; booleans count as integers).
    """
    try:
        raw = np.asarray(sampler(data, size, rng))  # ragged output raises here, inside the try
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise InvalidArgument(
            f"{arg} raised {type(exc).__name__}: {exc} (called with size={size})"
        ) from exc
    out = raw
    if out.ndim == 0 or out.shape[0] != size:
        shape = out.shape
        raise InvalidArgument(
            f"{arg} returned an array of shape {shape} for size={size}; "
            f"it must return exactly {size} outputs along axis 0"
        )
    if out.ndim > 2:
        out = out.reshape(size, -1)
    got = out.dtype.kind
    if got == "b":
        out = out.astype(np.int8)
    elif got not in "iufUS":
        raise InvalidArgument(
            f"{arg} returned dtype {out.dtype}; outputs must be numeric, boolean or strings "
            "(encode structured outputs as numeric vectors)"
        )
    if got == "f" and out.size and np.isnan(out.min()):  # min is NaN iff some entry is
        raise InvalidArgument(f"{arg} returned NaN among its {size} outputs")
    if out.ndim == 2 and out.shape[1] == 0:
        raise InvalidArgument(f"{arg} returned outputs of shape {out.shape[1:]}: empty outputs")
    if kind is not None and out.dtype.kind != kind and {out.dtype.kind, kind} != {"i", "u"}:
        raise InvalidArgument(
            f"{arg} returned dtype {out.dtype} after earlier outputs of kind {kind!r}; every "
            "output must have the same type")
    if trailing is not None and out.shape[1:] != trailing:
        raise InvalidArgument(
            f"{arg} returned outputs of shape {out.shape[1:]} after earlier outputs of shape "
            f"{trailing}; every output must have the same shape"
        )
    return out


#: Distinct warnings kept in a result (the rest are counted in one line).
MAX_WARNINGS = 20
_F = TypeVar("_F", bound=Callable[..., Any])
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep  # dpcheck/


def seeding_warning(mechanism: Any) -> str | None:
    """The reproducibility warning for ``mechanism`` (``None`` if it is seeded by dpcheck)."""
    if getattr(mechanism, "seeding", "rng") != "none":
        return None
    name = getattr(mechanism, "display_name", None) or repr(mechanism)
    return (f"{name} draws its randomness from a source dpcheck cannot seed (seeding='none'): "
            "the bounds are valid, but the same seed will not reproduce this result")


def records_warnings(audit_fn: _F) -> _F:
    """Decorate :func:`dpcheck.audit`: warnings raised while it runs (e.g. diffprivlib's
    ``PrivacyLeakWarning`` when bounds are taken from the data) are recorded in the result's
    ``warnings`` — distinct ``Category: message`` lines with their counts — instead of being
    printed or, under ``-W error``, failing the audit; a mechanism dpcheck cannot seed adds
    :func:`seeding_warning`.

    Warnings issued by dpcheck's own code are re-issued, not recorded (they signal a problem
    of the auditor, and the test suite turns them into errors). Warnings raised on an
    executor's workers (exploration and confirmation chunks) come back with the chunk's result
    (:func:`dpcheck.core.executor.run_pickled`, at most 20 per chunk) and are re-issued here,
    so they are recorded as if raised in this process.
    """

    @functools.wraps(audit_fn)
    def wrapper(mechanism: Any, *args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = audit_fn(mechanism, *args, **kwargs)
        counts: dict[str, int] = {}
        for w in caught:
            if w.filename.startswith(_PACKAGE_DIR):  # dpcheck's own: surface them as before
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                if not issubclass(w.category, GlobalRandomStateWarning):
                    continue  # about the mechanism: also recorded in the result
            line = f"{w.category.__name__}: {w.message}"
            counts[line] = counts.get(line, 0) + 1
        notes = [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]
        note = seeding_warning(mechanism)
        if note is not None:
            notes.insert(0, note)
        if not notes:
            return result
        if len(notes) > MAX_WARNINGS:
            notes = notes[:MAX_WARNINGS] + [f"... {len(notes) - MAX_WARNINGS} more"]
        return dataclasses.replace(result, warnings=tuple(result.warnings) + tuple(notes))

    return wrapper  # type: ignore[return-value]
