"""The layout of ``dpcheck/``: rooms by concept, imports pointing one way only.

The package is a set of *rooms*: the top-level modules a user imports (``claims``, ``errors``,
``stats``, …) and the subpackages (``core/``, ``events/``, ``features/``, …), each counted as one
room. Every ``import`` of a dpcheck module — at module level or inside a function, under
``TYPE_CHECKING`` or not — is an arrow. The tests walk the import graph with :mod:`ast` and fail
on a circle (between rooms, or between the modules of one room) and on an arrow that points from
a lower level back up (:data:`LEVELS`). The package face ``dpcheck/__init__.py`` is the top and
is not imported by any module. Each module stays under :data:`MAX_LINES` lines.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from collections import defaultdict
from pathlib import Path

import pytest

import dpcheck

PACKAGE = Path(dpcheck.__file__).parent

#: Rooms by level: a room may import rooms of *lower* levels only (and modules of its own room,
#: without a circle). The face (``dpcheck/__init__.py``) and ``__main__`` are above all.
LEVELS: dict[str, int] = {
    "errors": 0,
    "validation": 1,
    "internal": 2,
    "claims": 3, "curves": 3, "neighbours": 3, "mechanism": 3, "stats": 3, "exact_curves": 3,
    "catalog": 3, "schemas": 3,
    "strategies": 4, "features": 4, "exact": 4, "cell_bounds": 4,
    "events": 5,
    "core": 6,
    "generalization": 7, "search": 7, "integrations": 7,
    "report": 8,
    "plugin": 9, "cli": 9,
}
#: Longest module allowed (lines), the guideline of design.md §2.
MAX_LINES = 400


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """Absolute names of the dpcheck modules (or packages) a ``from … import`` reaches."""
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not (target == "dpcheck" or target.startswith("dpcheck.")):
        return []
    subs = [f"{target}.{a.name}" for a in node.names if _exists(f"{target}.{a.name}")]
    # `from pkg import module` reaches the module; any other name is the package's own
    return subs if len(subs) == len(node.names) else [target, *subs]


def _exists(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def import_graph() -> dict[str, set[str]]:
    """Module → the dpcheck modules it imports (every import statement, wherever it is)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        arrows: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                arrows.update(_resolve(module, path.name == "__init__.py", node))
            elif isinstance(node, ast.Import):
                arrows.update(a.name for a in node.names if a.name.startswith("dpcheck."))
        arrows.discard(module)
        graph[module] = arrows
    return graph


def room(module: str) -> str:
    """The room of a module: its top-level name under dpcheck (``dpcheck.core.audit`` → core)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "dpcheck"


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    colour: dict[str, int] = defaultdict(int)
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        colour[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour[m] == 1:
                return stack[stack.index(m):] + [m]
            if colour[m] == 0 and (found := visit(m)):
                return found
        stack.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if colour[n] == 0 and (found := visit(n)):
            return found
    return None


def graph_figures(graph: dict[str, set[str]]) -> dict[str, int]:
    """Rooms, levels (longest chain of room arrows) and arrows of the room graph."""
    rooms: dict[str, set[str]] = defaultdict(set)
    for a, targets in graph.items():
        if room(a) in ("dpcheck", "__main__"):
            continue
        rooms[room(a)]
        for b in targets:
            if room(b) not in (room(a), "dpcheck"):
                rooms[room(a)].add(room(b))
    depth: dict[str, int] = {}

    def level(r: str) -> int:
        if r not in depth:
            depth[r] = 1 + max((level(s) for s in rooms.get(r, ())), default=0)
        return depth[r]

    return {"rooms": len(rooms), "levels": max(map(level, rooms)),
            "arrows": sum(len(t) for t in rooms.values())}


def test_every_room_has_a_level() -> None:
    rooms = {room(m) for m in import_graph()} - {"dpcheck", "__main__"}
    assert rooms <= set(LEVELS), f"rooms without a level in LEVELS: {sorted(rooms - set(LEVELS))}"


def test_no_circle_between_modules() -> None:
    graph = import_graph()
    inner = {m: {t for t in ts if t != "dpcheck"} for m, ts in graph.items()}
    assert _cycle(inner) is None, f"import circle: {' -> '.join(_cycle(inner) or [])}"


def back_arrows(graph: dict[str, set[str]]) -> list[str]:
    """Imports that point to the face, or from a room to a room of the same or a higher level."""
    bad = []
    for a, targets in graph.items():
        ra = room(a)
        for b in targets:
            rb = room(b)
            if b == "dpcheck" and a not in ("dpcheck", "dpcheck.__main__"):
                bad.append(f"{a} imports the package face dpcheck/__init__.py")
            elif ra in LEVELS and rb in LEVELS and ra != rb and LEVELS[rb] >= LEVELS[ra]:
                bad.append(f"{a} (level {LEVELS[ra]}) -> {b} (level {LEVELS[rb]})")
    return sorted(bad)


def test_no_arrow_back_up() -> None:
    """Every import points to a lower level, inside its own room, or nowhere near the face."""
    bad = back_arrows(import_graph())
    assert not bad, "arrows back up:\n" + "\n".join(bad)


def test_modules_are_small() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_walker_sees_circles_and_back_arrows() -> None:
    """Negative control: a graph with a circle and one with an upward arrow are flagged."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    tree = ast.parse("def f():\n    from ..plugin import hooks\n    from dpcheck.core import audit\n"
                     "    from dpcheck.core import CERTIFIERS\n")
    first, second, third = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert _resolve("dpcheck.core.audit", False, first) == ["dpcheck.plugin.hooks"]
    assert _resolve("dpcheck.search.explorer", False, second) == ["dpcheck.core.audit"]
    assert _resolve("dpcheck.search.explorer", False, third) == ["dpcheck.core"]
    assert room("dpcheck.core.audit") == "core" and room("dpcheck.claims") == "claims"
    assert back_arrows({"dpcheck.core.audit": {"dpcheck.integrations.scalar"}}) != []
    assert back_arrows({"dpcheck.events.select": {"dpcheck"}}) != []
    assert back_arrows({"dpcheck.core.audit": {"dpcheck.events.select", "dpcheck.core.x"}}) == []


def test_wheel_holds_dpcheck_only(tmp_path: Path) -> None:
    """``python -m build --wheel`` packs dpcheck (with schemas and py.typed), never the
    repository's generic top-level ``algorithms``. Built from a copy of the sources, so the
    checkout gets no ``build/`` or ``*.egg-info``."""
    pytest.importorskip("build")
    root = PACKAGE.parent
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, src / name)
    for name in ("dpcheck", "algorithms"):
        shutil.copytree(root / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir",
                           str(tmp_path / "dist"), str(src)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("dpcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"dpcheck"}, tops
    assert "dpcheck/py.typed" in names
    assert any(n.startswith("dpcheck/schemas/") and n.endswith(".json") for n in names)
    assert "dpcheck/core/audit.py" in names and "dpcheck/plugin/hooks.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "dpcheck = dpcheck.plugin.hooks" in text and "dpcheck = dpcheck.cli:main" in text
