"""Arguments of the ``dpcheck`` command: parsers of claims, neighbour relations, JSON data,
counts, and the loader of a mechanism named by import path."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from dpcheck.errors import InvalidArgument


def count_arg(text: str, minimum: int = 1) -> int:
    """A sample count: ``1000000``, ``1_000_000``, ``1e6`` or ``2.5e5`` (a whole number
    ≥ ``minimum``)."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= minimum and value == int(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= {minimum} (e.g. "
                                         "1000000, 1_000_000 or 1e6)")
    return int(value)


def samples_arg(text: str) -> int:
    """``--samples``: a :func:`count_arg` of at least 2 (an audit's smallest budget)."""
    return count_arg(text, minimum=2)


def max_certifiable_epsilon(samples: int, alpha: float) -> float:
    """The largest ε lower bound ``samples`` outputs per side can certify at level ``alpha``:
    about ``ln(0.9·n / ln(6/α))`` (an event seen only on one side; 90 % of the samples confirm,
    Clopper–Pearson at α/6)."""
    return math.log(max(0.9 * samples / math.log(6.0 / alpha), 1.0))


def parse_json_arg(text: str, name: str) -> Any:
    """JSON text, or ``@path`` to read the JSON from a file."""
    source = "JSON text"
    if text.startswith("@"):
        path = Path(text[1:])
        source = f"file {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidArgument(f"{name}: cannot read {source}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{name}: {source} is not valid JSON ({exc.msg} at line "
                              f"{exc.lineno}, column {exc.colno}); pass e.g. '[1, 0, 1]' or "
                              "@file.json") from exc


def parse_claim(text: str) -> Any:
    """``pure:EPS`` → :class:`PureDP`; ``approx:EPS,DELTA`` → :class:`ApproxDP`."""
    from dpcheck.claims import ApproxDP, PureDP

    kind, _, params = text.partition(":")
    hint = f"--claim={text!r} must be pure:EPS or approx:EPS,DELTA (e.g. pure:1.0, approx:1,1e-5)"
    try:
        values = [float(v) for v in params.split(",")] if params else []
    except ValueError:
        raise InvalidArgument(hint) from None
    if kind == "pure" and len(values) == 1:
        return PureDP(values[0])
    if kind == "approx" and len(values) == 2:
        return ApproxDP(values[0], values[1])
    raise InvalidArgument(hint)


def parse_neighbour(text: str | None) -> Any:
    """``add_remove`` | ``replace`` | ``user_level:K[:MODE]`` | ``none`` → relation or None."""
    from dpcheck.neighbours import AddRemove, Replace, UserLevel

    if text is None or text == "none":
        return None
    if text == "add_remove":
        return AddRemove()
    if text == "replace":
        return Replace()
    parts = text.split(":")
    if parts[0] == "user_level" and len(parts) in (2, 3):
        try:
            size = int(parts[1])
        except ValueError:
            raise InvalidArgument(f"--neighbour={text!r}: K={parts[1]!r} must be an integer "
                                  "(e.g. user_level:3)") from None
        return UserLevel(size, *(parts[2:]))
    raise InvalidArgument(f"--neighbour={text!r} must be add_remove, replace, none or "
                          "user_level:K[:replace|add_remove]")


def _import_module(module: str) -> Any:
    """Import ``module`` (dotted name, importable from the current directory) or a ``.py`` file.

    The module stays importable by name in worker processes: the current directory (for a
    dotted name) or the file's folder stays on ``sys.path``, which spawned workers inherit, and
    a file is imported under its own name when that name is free (else under a private name,
    usable on threads and forked workers). For Dask, the module is pickled by value
    (``cloudpickle.register_pickle_by_value``), so remote workers need no copy of it."""
    if module.endswith(".py"):
        path = Path(module).resolve()
        if not path.is_file():
            raise InvalidArgument(f"mechanism file {module!r} does not exist")
        name = path.stem
        try:
            found = importlib.util.find_spec(name) if name.isidentifier() else None
        except (ImportError, ValueError):
            found = None
        free = name.isidentifier() and (found is None or (
            found.origin is not None and Path(found.origin).resolve() == path))
        if free:
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            mod = importlib.import_module(name)
        else:
            name = f"_dpcheck_cli_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise InvalidArgument(f"cannot import {module!r} as a Python file")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        _by_value(mod)
        return mod
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # kept: spawned workers import the module by name
    mod = importlib.import_module(module)
    _by_value(mod)
    return mod


def _by_value(mod: Any) -> None:
    """Let cloudpickle (Dask) ship ``mod``'s functions by value to remote workers."""
    try:
        import cloudpickle
    except ImportError:
        return
    if not getattr(mod, "__name__", "").startswith(("dpcheck", "algorithms")):
        cloudpickle.register_pickle_by_value(mod)


def load_mechanism(spec: str) -> Any:
    """Import ``MODULE:NAME`` / ``file.py:NAME``; a class is instantiated with no arguments."""
    module, sep, name = spec.rpartition(":")
    if not sep or not module or not name:
        raise InvalidArgument(f"mechanism={spec!r} must be MODULE:NAME (e.g. "
                              "mypkg.mechanisms:noisy_count) or path/to/file.py:NAME")
    try:
        obj = _import_module(module)
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is a bad argument here
        raise InvalidArgument(f"cannot import module {module!r}: {type(exc).__name__}: "
                              f"{exc}") from exc
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InvalidArgument(f"module {module!r} has no attribute {name!r}") from None
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001
            raise InvalidArgument(
                f"class {name!r} could not be instantiated without arguments ({exc}); create an "
                f"instance in {module!r} (mech = {name}(...)) and name it instead") from exc
    if not callable(getattr(obj, "sample", None)) and not callable(obj) and not callable(
            getattr(obj, "randomise", None)):  # diffprivlib mechanism objects: _library_mechanism
        raise InvalidArgument(f"{spec!r} is not a mechanism: it must be callable as "
                              "mechanism(data, size, rng) or have .sample(data, size, rng)")
    return obj


def _library_mechanism(obj: Any, claim_text: str) -> tuple[Any, Any]:
    """Library objects as mechanisms (OpenDP measurement, diffprivlib mechanism object) and the
    claim: ``opendp:D_IN[,DELTA]`` reads it off the measurement's privacy map."""
    from dpcheck.integrations import from_library, library_of

    if claim_text.startswith("opendp:"):
        if library_of(obj) != "opendp":
            raise InvalidArgument(f"--claim={claim_text!r} needs an OpenDP Measurement")
        from dpcheck.integrations.opendp import opendp_claim

        d_in, _, delta = claim_text[len("opendp:"):].partition(",")
        claim = opendp_claim(obj, parse_json_arg(d_in, "--claim"),
                             delta=float(delta) if delta else None)
    else:
        claim = parse_claim(claim_text)
    return from_library(obj), claim
