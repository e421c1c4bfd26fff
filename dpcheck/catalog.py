"""The claims catalogue: every numbered result of the seed papers and how it is checked.

``properties/catalog.toml`` (design §7) holds one ``[[claim]]`` table per result::

    [[claim]]
    paper = "003"                 # seed file prefix
    ref = "Theorem 3.1"           # the paper's own label, exactly as printed
    kind = "privacy"              # privacy | utility | combinatorial | generalization
    status = "tested"             # see STATUSES
    tests = ["properties/model_agnostic/test_model_agnostic.py::test_binclas_privacy"]
    note = "..."

Statuses: ``tested`` (a property test checks it), ``erratum`` (a test demonstrates a
counterexample to the printed statement), ``asymptotic`` (only O(·) / limit statements: measured,
not pass/fail), ``not-executable`` (no concrete, checkable content), and ``planned`` (checkable
but not implemented yet — the issue that will test it is named in the note). ``planned`` is an
addition to the four statuses of design §7, so that the coverage table can show what is still
to do instead of omitting it.
"""

from __future__ import annotations

import ast
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidArgument

__all__ = ["CatalogEntry", "STATUSES", "KINDS", "load_catalog", "missing_tests", "coverage",
           "DEFAULT_PATH"]

STATUSES = ("tested", "erratum", "asymptotic", "not-executable", "planned")
KINDS = ("privacy", "utility", "combinatorial", "generalization")
#: Where the catalogue lives, relative to the repository root.
DEFAULT_PATH = Path("properties") / "catalog.toml"


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One numbered result of one paper."""

    paper: str
    ref: str
    kind: str
    status: str
    tests: tuple[str, ...] = ()
    note: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """``(paper, ref)``: what a ``claim`` marker points at."""
        return (self.paper, self.ref)

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"paper": self.paper, "ref": self.ref, "kind": self.kind, "status": self.status,
                "tests": list(self.tests), "note": self.note}


def load_catalog(path: str | Path = DEFAULT_PATH) -> list[CatalogEntry]:
    """Read and validate a catalogue file.

    Raises
    ------
    InvalidArgument
        If the file is missing or not TOML, or an entry has a missing/unknown field, an unknown
        status or kind, a non-list ``tests``, a ``tested``/``erratum`` status without tests, or
        duplicates another entry's ``(paper, ref)``. Messages name the file and entry number.
    """
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidArgument(f"catalog={str(path)!r} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgument(f"catalog={str(path)!r} is not valid TOML: {exc}") from exc
    raw = doc.get("claim", [])
    if not isinstance(raw, list):
        raise InvalidArgument(f"catalog={str(path)!r}: 'claim' must be an array of tables")
    entries: list[CatalogEntry] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(raw, start=1):
        where = f"{path}: claim #{i}"
        if not isinstance(item, dict):
            raise InvalidArgument(f"{where} must be a table")
        unknown = set(item) - {"paper", "ref", "kind", "status", "tests", "note"}
        if unknown:
            raise InvalidArgument(f"{where} has unknown field(s) {sorted(unknown)}")
        for name in ("paper", "ref", "kind", "status"):
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise InvalidArgument(f"{where}: {name}={item.get(name)!r} must be a non-empty "
                                      "string")
        label = f"{where} ({item['paper']} {item['ref']})"
        if item["status"] not in STATUSES:
            raise InvalidArgument(f"{label}: status={item['status']!r} must be one of "
                                  + ", ".join(repr(s) for s in STATUSES))
        if item["kind"] not in KINDS:
            raise InvalidArgument(f"{label}: kind={item['kind']!r} must be one of "
                                  + ", ".join(repr(k) for k in KINDS))
        tests = item.get("tests", [])
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            raise InvalidArgument(f"{label}: tests={tests!r} must be a list of test ids")
        if item["status"] in ("tested", "erratum") and not tests:
            raise InvalidArgument(f"{label}: status={item['status']!r} needs at least one test")
        note = item.get("note", "")
        if not isinstance(note, str):
            raise InvalidArgument(f"{label}: note={note!r} must be a string")
        entry = CatalogEntry(item["paper"], item["ref"], item["kind"], item["status"],
                             tuple(tests), note)
        if entry.key in seen:
            raise InvalidArgument(f"{label} duplicates an earlier entry for the same result")
        seen.add(entry.key)
        entries.append(entry)
    return entries


def _defined(path: Path) -> set[str]:
    """``func`` and ``Class::func`` names defined at module level in a test file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}::{f.name}" for f in node.body
                         if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def missing_tests(entries: Iterable[CatalogEntry], root: str | Path) -> list[str]:
    """Test ids named by ``entries`` that do not exist under ``root`` (file or function missing).

    Ids are ``path::function`` or ``path::Class::function``; a parametrisation suffix
    ``[...]`` is ignored.
    """
    root = Path(root)
    cache: dict[Path, set[str]] = {}
    problems: list[str] = []
    for entry in entries:
        for test in entry.tests:
            file_part, _, name = test.partition("::")
            name = name.split("[", 1)[0]
            path = root / file_part
            if not path.is_file():
                problems.append(f"{entry.paper} {entry.ref}: test file {file_part} not found")
                continue
            if path not in cache:
                cache[path] = _defined(path)
            if name and name not in cache[path]:
                problems.append(f"{entry.paper} {entry.ref}: {test} not found")
    return problems


def coverage(entries: Iterable[CatalogEntry]) -> dict[str, dict[str, int]]:
    """Per paper, the number of results in each status (every status present, maybe 0)."""
    table: dict[str, Counter[str]] = {}
    for entry in entries:
        table.setdefault(entry.paper, Counter())[entry.status] += 1
    return {paper: {s: counts.get(s, 0) for s in STATUSES} for paper, counts in sorted(table.items())}
