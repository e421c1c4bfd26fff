"""Strict JSON for every document dpcheck writes: no ``NaN``/``Infinity`` literals, a
``schema_version``, and JSON Schemas shipped in :mod:`dpcheck.schemas`.

Encoding of non-finite numbers (the decision, documented in every schema): a float that is not
finite is written as the **string** ``"inf"``, ``"-inf"`` or ``"nan"`` (the same spelling as
``true_epsilon`` in ``reports/bench/latest.json``). Every JSON parser accepts the file
(``JSON.parse``, ``jq``, Go's ``encoding/json``); a reader that wants floats back calls
:func:`decode` (``float("inf")`` also parses the strings). Numbers that may be infinite are
typed ``extended_number`` in the schemas.

>>> dumps_strict({"epsilon_lower": float("inf")})
'{"epsilon_lower": "inf"}'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["encode", "decode", "dumps_strict", "load_schema", "schema_errors", "SCHEMAS",
           "NONFINITE"]

#: The strings that stand for non-finite floats.
NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
#: Schema files in :mod:`dpcheck.schemas`, by the kind of document they describe.
SCHEMAS = {"run": "run.schema.json", "audit": "audit-result.schema.json",
           "claims": "claims.schema.json", "compare": "compare.schema.json"}


def _float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def encode(value: Any) -> Any:
    """``value`` as plain JSON data: non-finite floats become strings (see the module docstring),
    numpy scalars and arrays become Python numbers and lists, tuples/sets lists, paths strings.

    Raises
    ------
    TypeError
        For a value with no JSON form.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [encode(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    item = getattr(value, "item", None)  # numpy scalars (no numpy import needed here)
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and getattr(value, "ndim", 0):
        return encode(tolist())
    if callable(item):
        return encode(item())
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` for numbers: ``"inf"``, ``"-inf"``, ``"nan"`` become floats
    (anywhere in the document; dpcheck writes no other string with these exact values)."""
    if isinstance(value, str):
        return NONFINITE.get(value, value)
    if isinstance(value, dict):
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def dumps_strict(value: Any, *, indent: int | None = None) -> str:
    """Strict JSON text of ``value`` (``allow_nan=False`` after :func:`encode`)."""
    return json.dumps(encode(value), indent=indent, allow_nan=False, ensure_ascii=False)


def load_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document ``kind`` (a key of :data:`SCHEMAS`)."""
    text = resources.files("dpcheck.schemas").joinpath(SCHEMAS[kind]).read_text("utf-8")
    return json.loads(text)


def schema_errors(document: Any, kind: str) -> list[str]:
    """Messages of every violation of the ``kind`` schema by ``document`` (as written: encoded).

    Needs the ``jsonschema`` package (in the ``dev`` extra).
    """
    import jsonschema

    schema = load_schema(kind)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(encode(document)), key=lambda e: e.path)]
