"""Shared state of the dpcheck pytest plugin: per-run state, per-test data, and the ``claim`` /
``mutant`` markers (binding, validation, the family membership of a test).

A ``@pytest.mark.mutant(NAME)`` case (usually a ``pytest.param`` mark beside the reference case of
a parametrised claim test) runs the *same* test body on a deliberately broken variant: it is an
expected violation of the test's claim. It passes iff a dpcheck statistical call (or
``dp_counterexample``) in it finds a violation, or — for tests without statistical fixtures — iff
the body raises ``AssertionError`` (an assertion of the claim failed on the mutant). The name must
be listed in the ``mutants`` of the claim's catalogue entry.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dpcheck.catalog import KINDS
from dpcheck.plugin import records as rec
from dpcheck.plugin.workers import PluginExecutor

__all__: list[str] = []

_STAT_FIXTURES = frozenset({"dp_audit", "dp_accuracy", "dp_search", "dp_check"})
_ALL_FIXTURES = _STAT_FIXTURES | {"dp_record", "dp_counterexample", "dp_sensitivity"}  # tests in the report


@dataclass
class _State:
    root_seed: int
    seed_note: str
    alpha_family: float
    scale: float
    report_dir: Path | None
    formats: tuple[str, ...]
    catalog_path: Path
    catalog_explicit: bool
    worker: bool
    keep: int = 5
    sequential: bool = True
    entries: list[Any] | None = None
    m: int | None = None
    nodes: set[str] = field(default_factory=set)
    executor: PluginExecutor = field(default_factory=PluginExecutor)


@dataclass
class _ItemData:
    records: list[dict[str, Any]] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    stat_calls: int = 0


_STATE = pytest.StashKey[_State]()
_ITEM = pytest.StashKey[_ItemData]()
_INFO = pytest.StashKey[dict[str, Any]]()


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


def _claim_signature(paper: Any = None, ref: Any = None, kind: Any = "privacy",
                     expect: Any = "holds") -> None:
    """The signature of ``@pytest.mark.claim``."""


_CLAIM_SIG = inspect.signature(_claim_signature)


def _bind(item: pytest.Item) -> dict[str, Any] | str | None:
    """The claim marker's arguments with defaults, an error text, or ``None`` if unmarked."""
    mark = item.get_closest_marker("claim")
    if mark is None:
        return None
    try:
        args = _CLAIM_SIG.bind(*mark.args, **mark.kwargs)
    except TypeError as exc:
        return f"{item.nodeid}: invalid claim marker arguments ({exc})"
    args.apply_defaults()
    return dict(args.arguments)


def _mutant(item: pytest.Item) -> str | None | tuple[str]:
    """The name of the item's ``mutant`` marker, ``None`` if unmarked, ``(error,)`` if invalid."""
    marks = list(item.iter_markers("mutant"))
    if not marks:
        return None
    if len(marks) > 1:
        return (f"{item.nodeid}: more than one mutant marker",)
    mark = marks[0]
    if len(mark.args) != 1 or mark.kwargs or not isinstance(mark.args[0], str) \
            or not mark.args[0].strip():
        return (f"{item.nodeid}: mutant marker needs exactly one non-empty name, "
                f"got args={mark.args!r} kwargs={mark.kwargs!r}",)
    return mark.args[0]


def _marker_problems(item: pytest.Item, state: _State) -> list[str]:
    mutant = _mutant(item)
    if isinstance(mutant, tuple):
        return list(mutant)
    a = _bind(item)
    if mutant is not None and not isinstance(a, dict):
        return [a] if a else [f"{item.nodeid}: mutant({mutant!r}) needs a claim marker "
                              "(the claim the mutant must break)"]
    if not isinstance(a, dict):
        return [a] if a else []
    problems = [f"{item.nodeid}: claim({name}={a[name]!r}) must be a string or None"
                for name in ("paper", "ref")
                if a[name] is not None and not isinstance(a[name], str)]
    for name, allowed in (("expect", rec.EXPECTS), ("kind", KINDS)):
        if a[name] not in allowed and not (name == "kind" and a[name] is None):
            problems.append(f"{item.nodeid}: claim({name}={a[name]!r}) must be one of "
                            + ", ".join(repr(x) for x in allowed))
    if (not problems and state.entries is not None and a["paper"] is not None
            and (a["paper"], a["ref"]) not in {e.key for e in state.entries}):
        problems.append(f"{item.nodeid}: claim(paper={a['paper']!r}, ref={a['ref']!r}) matches no "
                        f"entry of the catalogue {state.catalog_path}")
    if mutant is not None and not problems:
        if a["expect"] != "holds":
            problems.append(f"{item.nodeid}: mutant({mutant!r}) runs the body of a claim test "
                            f"that must hold; claim(expect={a['expect']!r}) is not allowed")
        elif state.entries is not None and a["paper"] is not None:
            entry = next(e for e in state.entries if e.key == (a["paper"], a["ref"]))
            if mutant not in entry.mutants:
                problems.append(f"{item.nodeid}: mutant {mutant!r} is not listed in the "
                                f"mutants of catalogue entry {a['paper']} {a['ref']}")
    return problems


def _info(item: pytest.Item) -> dict[str, Any]:
    """paper/ref/kind/expect/mutant of an item (defaults when unmarked or invalid).

    A ``mutant`` case of a claim test expects a violation: its ``expect`` becomes
    ``"violation"`` and ``mutant`` names the broken variant (``None`` for the reference).
    """
    if _INFO not in item.stash:
        bound = _bind(item)
        info = bound if isinstance(bound, dict) else {
            "paper": None, "ref": None, "kind": None, "expect": "holds"}
        mutant = _mutant(item)
        info["mutant"] = mutant if isinstance(mutant, str) else None
        if info["mutant"] is not None:
            info["expect"] = "violation"
        item.stash[_INFO] = info
    return item.stash[_INFO]


def _in_family(item: pytest.Item) -> bool:
    return (item.get_closest_marker("claim") is not None
            or bool(_STAT_FIXTURES.intersection(getattr(item, "fixturenames", ()))))

