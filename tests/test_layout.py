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
    "internal": 1,
    "claims": 2, "neighbours": 2, "mechanism": 2, "stats": 2, "exact": 2, "catalog": 2,
    "schemas": 2,
    "strategies": 3, "features": 3,
    "events": 4,
    "core": 5,
    "generalization": 6, "search": 6, "integrations": 6,
    "report": 7,
    "plugin": 8, "cli": 8,
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
    found = [target]
    for alias in node.names:  # `from pkg import module`
        sub = f"{target}.{alias.name}"
        if _exists(sub):
            found.append(sub)
    return found


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


def test_no_arrow_back_up() -> None:
    """Every import points to a lower level, inside its own room, or nowhere near the face."""
    bad = []
    for a, targets in import_graph().items():
        ra = room(a)
        for b in targets:
            rb = room(b)
            if b == "dpcheck" and a not in ("dpcheck", "dpcheck.__main__"):
                bad.append(f"{a} imports the package face dpcheck/__init__.py")
            elif ra in LEVELS and rb in LEVELS and ra != rb and LEVELS[rb] >= LEVELS[ra]:
                bad.append(f"{a} (level {LEVELS[ra]}) -> {b} (level {LEVELS[rb]})")
    assert not bad, "arrows back up:\n" + "\n".join(sorted(bad))


def test_modules_are_small() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_walker_sees_circles_and_back_arrows() -> None:
    """Negative control: a graph with a circle and one with an upward arrow are flagged."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    tree = ast.parse("def f():\n    from ..plugin import hooks\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert "dpcheck.plugin" in _resolve("dpcheck.core.audit", False, node)


@pytest.mark.skipif(sys.platform == "win32", reason="builds with the POSIX toolchain")
def test_wheel_holds_dpcheck_only(tmp_path: Path) -> None:
    """``python -m build --wheel`` packs dpcheck (with schemas and py.typed), never the
    repository's generic top-level ``algorithms``."""
    pytest.importorskip("build")
    root = PACKAGE.parent
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(tmp_path), str(root)], check=True, capture_output=True, cwd=tmp_path)
    (wheel,) = tmp_path.glob("dpcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"dpcheck"}, tops
    assert "dpcheck/py.typed" in names
    assert any(n.startswith("dpcheck/schemas/") and n.endswith(".json") for n in names)
    assert "dpcheck/core/audit.py" in names and "dpcheck/plugin/hooks.py" in names
