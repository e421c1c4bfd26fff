"""Load a helper module that sits beside a claim test, by path.

Modules under ``properties/`` are not importable (pytest collects them with
``--import-mode=importlib``), yet some claim tests share test-side computations that must stay
out of ``algorithms/`` — the issue-27 "tight" bounds re-derived from a paper's definitions
(``properties/<paper>/independent.py``), which may share no code with the reference
implementations they check. This is the one loader those tests use.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load_beside"]


def load_beside(test_file: str, filename: str) -> ModuleType:
    """The module ``filename`` in the directory of ``test_file`` (pass ``__file__``), loaded
    once per process (cached in ``sys.modules`` under a name derived from its path)."""
    path = Path(test_file).resolve().with_name(filename)
    name = "_beside_" + "_".join(path.with_suffix("").parts[-2:])
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
