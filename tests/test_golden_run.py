"""A fixed-seed main-job run reproduces its committed ``audit.json``, bit for bit (timings aside).

The run is a cross-section of ``properties/``: scalar, float, vector and paired-event audits of
the zoo, an approximate-DP audit, counterexample search, closeness and generalization checkers,
exact-pmf audits of paper 000. Every record of its ``audit.json`` — bounds, p-values, witnesses,
features, verdicts, the catalogue and the kill matrix — must equal the committed copy in
``tests/data/golden_audit.json`` after :func:`normalise` removes what legitimately varies
(timings, run id, dates, the environment, the command line and the copy of the catalogue). A refactoring that changes no
behaviour passes; a change that moves one bound fails, and the diff names the record.

Regenerate the copy after an *intended* change of behaviour (and say why in the commit)::

    python tests/test_golden_run.py --update
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "data" / "golden_audit.json"
SELECTION = [
    "properties/pure_agnostic/test_search.py",
    "properties/pure_agnostic/test_privacy.py",
    "properties/generalization/test_separations.py",
    "properties/generalization/test_closeness_tools.py",
    "properties/zoo/test_zoo.py::test_buggy_mechanism_is_caught[rappor_one_time]",
    "properties/zoo/test_zoo.py::test_buggy_mechanism_is_caught[svt5]",
    "properties/zoo/test_zoo.py::test_buggy_mechanism_is_caught[naive_float_laplace]",
    "properties/zoo/test_zoo.py::test_buggy_mechanism_is_caught[delta_leak_1e-04]",
    "properties/zoo/test_zoo.py::test_correct_mechanism_passes_its_claim[geometric]",
    "properties/zoo/test_zoo.py::test_correct_mechanism_passes_its_claim[report_noisy_max_laplace]",
]
#: Keys whose values vary between identical runs (wall-clock, identity of the run, machine),
#: and ``catalog``: a copy of ``properties/catalog.toml`` (data, tested by test_catalog.py), not
#: a computed result.
VARYING = frozenset({"seconds", "explore_seconds", "duration", "created", "run_id",
                     "environment", "command", "catalog"})


def normalise(value: Any) -> Any:
    """``value`` without the :data:`VARYING` keys, at any depth."""
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def run_selection(out: Path) -> dict[str, Any]:
    """Run :data:`SELECTION` at seed 0 in a subprocess; the normalised ``audit.json``."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
           "-n", "0", "--dpcheck-seed", "0", f"--dpcheck-report={out}", *SELECTION]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (run,) = [p for p in out.iterdir() if p.is_dir() and p.name != "latest"]
    return normalise(json.loads((run / "audit.json").read_text()))


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'golden' if k in a else 'this run'}"
            if (d := _first_difference(a[k], b[k], f"{path}.{k}")) is not None:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            label = x.get("nodeid", i) if isinstance(x, dict) else i
            if (d := _first_difference(x, y, f"{path}[{label}]")) is not None:
                return d
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_fixed_seed_run_reproduces_the_golden_audit_json(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    this = run_selection(tmp_path)
    assert this == golden, _first_difference(golden, this)


def test_the_comparison_sees_a_moved_bound() -> None:
    """Negative control: one bound changed in the last digit is a difference, a timing is not."""
    golden = json.loads(GOLDEN.read_text())
    moved = json.loads(GOLDEN.read_text())
    record = next(r for r in moved["records"] if isinstance(r.get("result"), dict)
                  and isinstance(r["result"].get("epsilon_lower"), float))
    record["result"]["epsilon_lower"] = float.fromhex(
        (record["result"]["epsilon_lower"] + 1e-9).hex())
    assert _first_difference(golden, moved) is not None
    assert normalise({"a": 1, "seconds": 2.0}) == normalise({"a": 1, "seconds": 3.0})


if __name__ == "__main__":  # python tests/test_golden_run.py --update
    import tempfile

    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_golden_run.py --update")
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(run_selection(Path(tmp)), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
