"""The CI gate of the command line (issue 28), in subprocesses as CI runs it: ``report compare``
fails by default on new violations, missed expected violations and newly failing tests, warns
(and with ``--strict`` fails) when the runs' settings differ, has a one-screen ``--summary``;
unreadable input exits 2 with one line, an internal error exits 3 (never 1, "gate failed"),
and an output path that cannot be written is refused before the work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpcheck.report import write_run


def _doc(run_id: str, *, verdict: str = "not-refuted", outcome: str = "passed",
         seed: int = 0, scale: float = 1.0) -> dict:
    nodeid = "properties/test_zoo.py::test_laplace"
    result = {"violation": verdict == "violation", "epsilon_lower": 0.5, "p_value": 0.5,
              "claim": {"kind": "pure", "epsilon": 1.0, "delta": 0.0}}
    return {"schema_version": 2, "run_id": run_id, "created": "2026-01-01T00:00:00Z",
            "root_seed": seed, "alpha_family": 0.01, "n_claim_tests": 1,
            "alpha_per_test": 0.01, "scale": scale, "command": "pytest",
            "environment": {"dpcheck": "0.1.0"},
            "tests": [{"nodeid": nodeid, "outcome": outcome, "duration": 0.1},
                      {"nodeid": "tests/test_plain.py::test_x", "outcome": outcome}],
            "records": [{"nodeid": nodeid, "call": 1, "type": "accuracy", "paper": "003",
                         "ref": "Theorem 2.4", "kind": "privacy", "expect": "holds",
                         "alpha": 0.01, "verdict": verdict, "replay": "pytest x",
                         "result": result}],
            "holm": [], "catalog": None, "summary": {"tests": 2}}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("DPCHECK_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "dpcheck", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    out = {"a": _doc("run-a"), "failing": _doc("run-f", outcome="failed"),
           "violation": _doc("run-v", verdict="violation"),
           "reseeded": _doc("run-s", seed=5, scale=0.1)}
    missed = _doc("run-m", verdict="missed-violation")
    expected = _doc("run-e", verdict="expected-violation")
    out["expected"], out["missed"] = expected, missed
    return {k: write_run(v, directory=tmp_path / k, formats=("json",)) for k, v in out.items()}


@pytest.mark.parametrize("b, reason", [("failing", "newly failing"),
                                       ("violation", "new violation"),
                                       ("missed", "now missed")])
def test_compare_fails_by_default_on_regressions(runs: dict[str, Path], tmp_path: Path,
                                                 b: str, reason: str) -> None:
    base = runs["expected"] if b == "missed" else runs["a"]
    proc = _cli("report", "compare", str(base), str(runs[b]), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert reason in proc.stderr
    assert _cli("report", "compare", str(base), str(runs[b]), "--fail-on", "none",
                cwd=tmp_path).returncode == 0
    from dpcheck.report import load_run
    from dpcheck.report.compare import compare_runs

    api = compare_runs(load_run(base), load_run(runs[b]))  # the API has the same default
    assert api["failed"] and any(reason in r for r in api["reasons"])


def test_different_settings_warn_and_fail_with_strict(runs: dict[str, Path],
                                                      tmp_path: Path) -> None:
    proc = _cli("report", "compare", str(runs["a"]), str(runs["reseeded"]), "--summary",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning: root seed differs: A 0, B 5" in proc.stderr
    assert "warning: scale differs: A 1.0, B 0.1" in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PASS: run run-s against run-a") and len(lines) <= 10
    strict = _cli("report", "compare", str(runs["a"]), str(runs["reseeded"]), "--strict",
                  "--json", cwd=tmp_path)
    assert strict.returncode == 1
    doc = json.loads(strict.stdout)
    assert doc["strict"] and len(doc["warnings"]) == 2 and "setting(s) differ" in doc["reasons"][0]


def test_unreadable_input_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "audit.json"
    bad.write_text("{not json")
    proc = _cli("report", "compare", str(bad), str(bad), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    missing = _cli("report", "compare", str(tmp_path / "nope"), str(bad), cwd=tmp_path)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_an_internal_error_exits_3_not_1(tmp_path: Path) -> None:
    """A bug of dpcheck (here: a run document whose records break the comparison after
    validation) is status 3, as pytest's internal error, never 1 ("gate failed")."""
    script = tmp_path / "boom.py"
    script.write_text("import dpcheck.cli.commands as c, dpcheck.cli as cli, sys\n"
                      "def boom(args):\n    raise RuntimeError('a bug')\n"
                      "c._cmd_claims.__code__ = boom.__code__\n"
                      "sys.exit(cli.main(['claims']))\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert "internal error: RuntimeError: a bug" in proc.stderr and "Traceback" not in proc.stderr


def test_out_path_is_checked_before_the_audit(tmp_path: Path) -> None:
    mech = tmp_path / "mech.py"
    mech.write_text("import numpy as np\n"
                    "def noisy(data, size, rng):\n    return sum(data) + rng.laplace(0, 1, size)\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root ignores permissions: use a file as the folder
            locked.chmod(0o700)
            locked = tmp_path / "a_file"
            locked.write_text("")
        proc = _cli("audit", "mech.py:noisy", "--data", "[1, 0]", "--data-prime", "[1]",
                    "--claim", "pure:1.0", "--samples", "1e9", "--out",
                    str(locked / "result.json"), cwd=tmp_path)
    finally:
        if locked.is_dir():
            locked.chmod(0o700)
    assert proc.returncode == 2, proc.stderr  # refused at once, not after 1e9 samples
    assert "--out=" in proc.stderr and "cannot write" in proc.stderr


@pytest.mark.parametrize("form", ["mechs.py:noisy", "mechs:noisy"])
def test_file_and_module_forms_work_with_workers(tmp_path: Path, form: str) -> None:
    """``file.py:NAME`` and ``module:NAME`` (from the current directory, no PYTHONPATH) run on
    a pool of worker processes, with the same result as in one process."""
    (tmp_path / "mechs.py").write_text("import numpy as np\ndef noisy(d, size, rng):\n"
                                       "    return np.sum(d) + rng.laplace(0.0, 0.7, size)\n")
    args = ["audit", form, "--data", "[1, 1]", "--data-prime", "[1]", "--claim", "pure:1.0",
            "--samples", "200000", "--no-float-features", "--json"]
    local = _cli(*args, cwd=tmp_path)
    pooled = _cli(*args, "--workers", "2", cwd=tmp_path)
    assert local.returncode == pooled.returncode == 1, pooled.stderr
    a, b = json.loads(local.stdout), json.loads(pooled.stdout)
    assert a["epsilon_lower"] == b["epsilon_lower"] > 1.0 and a["verdict"] == "violation"


@pytest.mark.parametrize("extra", [[], ["--list"], ["--list", "--paper", "003"]])
def test_every_claims_json_validates_against_its_schema(extra: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.cli import main
    from dpcheck.report.strict_json import schema_errors

    catalog = Path(__file__).resolve().parents[1] / "properties" / "catalog.toml"
    assert main(["claims", "--catalog", str(catalog), "--json", *extra]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert schema_errors(doc, "claims") == []
    assert doc["results"] == 99 and len(doc["claims"]) == (14 if "003" in extra else 99)
