"""The claims catalogue: every numbered result of the seed papers and how it is checked.

``properties/catalog.toml`` (design §7) holds one ``[[claim]]`` table per result::

    [[claim]]
    paper = "003"                 # seed file prefix
    ref = "Theorem 3.1"           # the paper's own label, exactly as printed
    kind = "privacy"              # privacy | utility | combinatorial | generalization
    status = "tested"             # see STATUSES
    tests = ["properties/model_agnostic/test_model_agnostic.py::test_binclas_privacy"]
    mutants = ["binclas_noise_halved"]   # broken variants the same test body must catch
    note = "..."

Statuses: ``tested`` (a property test checks it), ``erratum`` (a test demonstrates a
counterexample to the printed statement), ``asymptotic`` (only O(·) / limit statements: measured,
not pass/fail), ``not-executable`` (no concrete, checkable content), and ``planned`` (checkable
but not implemented yet — the issue that will test it is named in the note). ``planned`` is an
addition to the four statuses of design §7, so that the coverage table can show what is still
to do instead of omitting it.

``mutants`` names the deliberately broken variants that the entry's tests run through the *same*
test body (cases marked ``@pytest.mark.mutant(NAME)``), each of which must be caught: it shows
that the test can fail. Every name must occur in one of the entry's test files
(:func:`missing_mutants`); the plugin also checks that each ``mutant`` marker of a collected
claim test is listed by its entry. An entry with status ``tested``/``erratum`` and kind
``privacy``/``utility`` is expected to name at least one (:func:`entries_without_mutants`).
"""

from __future__ import annotations

import ast
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dpcheck.errors import InvalidArgument

__all__ = ["CatalogEntry", "STATUSES", "KINDS", "load_catalog", "missing_tests",
           "missing_mutants", "entries_without_mutants", "coverage", "mutant_coverage",
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
    mutants: tuple[str, ...] = ()
    slack: float | None = None
    detectable_overspend: float | None = None

    @property
    def key(self) -> tuple[str, str]:
        """``(paper, ref)``: what a ``claim`` marker points at."""
        return (self.paper, self.ref)

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"paper": self.paper, "ref": self.ref, "kind": self.kind, "status": self.status,
                "tests": list(self.tests), "mutants": list(self.mutants), "note": self.note,
                "slack": self.slack, "detectable_overspend": self.detectable_overspend}


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
        unknown = set(item) - {"paper", "ref", "kind", "status", "tests", "mutants", "note",
                               "slack", "detectable_overspend"}
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
        mutants = item.get("mutants", [])
        if (not isinstance(mutants, list)
                or not all(isinstance(m, str) and m.strip() for m in mutants)):
            raise InvalidArgument(f"{label}: mutants={mutants!r} must be a list of non-empty names")
        if len(set(mutants)) != len(mutants):
            raise InvalidArgument(f"{label}: mutants={mutants!r} has duplicates")
        if mutants and not tests:
            raise InvalidArgument(f"{label}: mutants={mutants!r} need tests that run them")
        note = item.get("note", "")
        if not isinstance(note, str):
            raise InvalidArgument(f"{label}: note={note!r} must be a string")
        # a utility reference that never failed at the tested size has slack 0 (its note
        # gives the runs and the rate's upper confidence bound); a privacy loss of 0 is no test
        slack = _sensitivity(item, "slack", 0.0, label, inclusive=item["kind"] == "utility")
        overspend = _sensitivity(item, "detectable_overspend", 1.0, label)
        if (slack is not None or overspend is not None) and (
                item["status"] not in ("tested", "erratum")
                or item["kind"] not in ("privacy", "utility")):
            raise InvalidArgument(f"{label}: slack and detectable_overspend belong to tested "
                                  "privacy and utility results")
        entry = CatalogEntry(item["paper"], item["ref"], item["kind"], item["status"],
                             tuple(tests), note, tuple(mutants), slack, overspend)
        if entry.key in seen:
            raise InvalidArgument(f"{label} duplicates an earlier entry for the same result")
        seen.add(entry.key)
        entries.append(entry)
    return entries


def _sensitivity(item: dict[str, object], name: str, above: float, label: str,
                 inclusive: bool = False) -> float | None:
    """An optional sensitivity figure: a finite number > ``above`` (slack > 0, or ≥ 0 for a
    utility result with ``inclusive``; detectable overspend > 1, a factor), or absent."""
    value = item.get(name)
    if value is None:
        return None
    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
          and (above <= float(value) if inclusive else above < float(value))
          and float(value) < float("inf"))
    if not ok:
        relation = ">=" if inclusive else ">"
        raise InvalidArgument(f"{label}: {name}={value!r} must be a finite number "
                              f"{relation} {above:g}")
    return float(value)


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


def _strings(path: Path) -> set[str]:
    """Every string constant of a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def missing_mutants(entries: Iterable[CatalogEntry], root: str | Path) -> list[str]:
    """Mutant names of ``entries`` that occur in none of the entry's test files.

    A static check (the name must be a string constant of one of the files, as it is in
    ``pytest.mark.mutant("name")``); that the mutant case ran and was caught is decided at run
    time and shown in the report's kill matrix.
    """
    root = Path(root)
    cache: dict[Path, set[str]] = {}
    problems: list[str] = []
    for entry in entries:
        if not entry.mutants:
            continue
        found: set[str] = set()
        for test in entry.tests:
            path = root / test.partition("::")[0]
            if path.is_file():
                if path not in cache:
                    cache[path] = _strings(path)
                found |= cache[path]
        problems += [f"{entry.paper} {entry.ref}: mutant {m!r} occurs in none of its tests"
                     for m in entry.mutants if m not in found]
    return problems


def entries_without_mutants(entries: Iterable[CatalogEntry]) -> list[CatalogEntry]:
    """``tested``/``erratum`` entries of kind ``privacy``/``utility`` that name no mutant."""
    return [e for e in entries if e.status in ("tested", "erratum")
            and e.kind in ("privacy", "utility") and not e.mutants]


def mutant_coverage(entries: Iterable[CatalogEntry]) -> dict[str, dict[str, int]]:
    """Per paper: ``needing`` (tested/erratum privacy/utility entries), ``with_mutants`` (of those,
    entries naming at least one mutant), ``entries_with_mutants`` (any entry) and ``mutants``
    (total names)."""
    table: dict[str, dict[str, int]] = {}
    for e in entries:
        row = table.setdefault(e.paper, {"needing": 0, "with_mutants": 0,
                                         "entries_with_mutants": 0, "mutants": 0})
        needs = e.status in ("tested", "erratum") and e.kind in ("privacy", "utility")
        row["needing"] += needs
        row["with_mutants"] += needs and bool(e.mutants)
        row["entries_with_mutants"] += bool(e.mutants)
        row["mutants"] += len(e.mutants)
    return dict(sorted(table.items()))


def coverage(entries: Iterable[CatalogEntry]) -> dict[str, dict[str, int]]:
    """Per paper, the number of results in each status (every status present, maybe 0)."""
    table: dict[str, Counter[str]] = {}
    for entry in entries:
        table.setdefault(entry.paper, Counter())[entry.status] += 1
    return {paper: {s: counts.get(s, 0) for s in STATUSES} for paper, counts in sorted(table.items())}
