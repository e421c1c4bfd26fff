"""The ``dpcheck`` command line, run in-process through ``dpcheck.cli.main(argv)``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpcheck
from dpcheck.cli import ProgressBar, main
from dpcheck.report import write_run

MECHS = textwrap.dedent("""
    import numpy as np

    def snap(noise):                             # 2**-20 grid: exact sums, private in float64
        return np.round(noise * 2.0**20) / 2.0**20

    def too_little_noise(data, size, rng):      # claims 1-DP, scale 0.5 is only 2-DP
        return np.sum(data) + snap(rng.laplace(0.0, 0.5, size))

    def correct(data, size, rng):               # 1-DP under add/remove
        return np.sum(data) + snap(rng.laplace(0.0, 1.0, size))

    class LaplaceCount:                          # instantiated with no arguments by the CLI
        def sample(self, data, size, rng):
            return np.sum(data) + snap(rng.laplace(0.0, 1.0, size))

    class NeedsArgs:
        def __init__(self, scale):
            self.scale = scale
        def sample(self, data, size, rng):
            return np.sum(data) + snap(rng.laplace(0.0, self.scale, size))

    def broken(data, size, rng):
        raise RuntimeError("boom")

    not_a_mechanism = 42
""")

AUDIT = ["--data", "[1, 0, 1]", "--data-prime", "[1, 0]", "--samples", "20000"]


@pytest.fixture
def mechs(tmp_path, monkeypatch):
    (tmp_path / "dpcheck_cli_mechs.py").write_text(MECHS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and "Traceback" not in err
    return lines[0]


def test_audit_finds_a_violation_and_exits_1(mechs, capsys):
    code = main(["audit", "dpcheck_cli_mechs:too_little_noise", *AUDIT, "--claim", "pure:1.0"])
    out = capsys.readouterr().out
    assert code == 1
    assert "claim 1-DP -> VIOLATION" in out and "witness: S = {" in out


def test_audit_without_violation_exits_0_and_writes_json(mechs, capsys):
    out_file = mechs / "results" / "r.json"
    code = main(["audit", "dpcheck_cli_mechs:correct", *AUDIT, "--claim", "approx:1,1e-5",
                 "--neighbour", "add_remove", "--seed", "3", "--json", "--out", str(out_file)])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["violation"] is False and printed["claim"] == {
        "kind": "approx", "epsilon": 1.0, "delta": 1e-5}
    assert printed["relation"] == "add_remove" and printed["seed"]["entropy"] == 3
    assert json.loads(out_file.read_text(encoding="utf-8")) == printed
    assert [p.name for p in out_file.parent.iterdir()] == ["r.json"]  # no temp file left


def test_audit_is_deterministic_and_matches_the_api(mechs, capsys):
    main(["audit", "dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--json"])
    printed = json.loads(capsys.readouterr().out)
    import dpcheck_cli_mechs

    r = dpcheck.audit(dpcheck_cli_mechs.correct, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0),
                      samples=20000, seed=0)
    assert printed["epsilon_lower"] == r.epsilon_lower and printed["p_value"] == r.p_value


def test_audit_accepts_a_class_a_file_path_and_data_files(mechs, capsys):
    (mechs / "d.json").write_text("[1, 0, 1]", encoding="utf-8")
    (mechs / "local.py").write_text(MECHS, encoding="utf-8")
    code = main(["audit", "local.py:LaplaceCount", "--data", "@d.json", "--data-prime",
                 "[1, 0]", "--claim", "pure:1", "--samples", "20000"])
    assert code == 0
    assert "LaplaceCount" in capsys.readouterr().out


def test_audit_stops_within_a_distance_on_request(mechs, capsys):
    """``--sequential --stop-within`` ends a claim that holds by a margin at a pilot."""
    code = main(["audit", "dpcheck_cli_mechs:correct", "--data", "[1, 0, 1]", "--data-prime",
                 "[1, 0]", "--claim", "pure:2", "--samples", "1e6", "--no-float-features",
                 "--sequential", "--stop-within", "0.1", "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0 and printed["violation"] is False
    stages = printed["sequential"]["stages"]
    assert stages[-1]["name"].startswith("pilot") and stages[-1]["reachable"] is not None
    assert printed["samples"] <= 100_000


def test_audit_progress_bar_on_request(mechs, capsys):
    code = main(["audit", "dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1",
                 "--progress"])
    err = capsys.readouterr().err
    assert code == 0 and "100.0%" in err and "40,000/40,000 outputs" in err
    main(["audit", "dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1"])
    assert capsys.readouterr().err == ""  # not a terminal: no bar by default


def test_progress_bar_is_throttled():
    class Sink:
        def __init__(self):
            self.parts = []

        def write(self, text):
            self.parts.append(text)

        def flush(self):
            pass

    sink = Sink()
    bar = ProgressBar(sink, interval=3600.0)
    for done in range(0, 1001, 10):
        bar(done, 1000)
    drawn = [p for p in sink.parts if p.startswith("\r")]
    assert len(drawn) == 2 and "1,000/1,000 outputs" in drawn[-1]  # first and final
    assert sink.parts[-1] == "\n"


@pytest.mark.parametrize("args, message", [
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:x"], "--claim='pure:x' must be"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:-1"], "epsilon=-1.0 must be > 0"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "renyi:2"], "must be pure:EPS"),
    (["dpcheck_cli_mechs:correct", "--data", "[1, 0", "--data-prime", "[1]", "--claim",
      "pure:1"], "--data: JSON text is not valid JSON"),
    (["dpcheck_cli_mechs:correct", "--data", "@missing.json", "--data-prime", "[1]",
      "--claim", "pure:1"], "cannot read file"),
    (["no_such_module_xyz:f", *AUDIT, "--claim", "pure:1"], "cannot import module"),
    (["dpcheck_cli_mechs:nope", *AUDIT, "--claim", "pure:1"], "has no attribute 'nope'"),
    (["dpcheck_cli_mechs", *AUDIT, "--claim", "pure:1"], "must be MODULE:NAME"),
    (["missing.py:f", *AUDIT, "--claim", "pure:1"], "does not exist"),
    (["dpcheck_cli_mechs:NeedsArgs", *AUDIT, "--claim", "pure:1"], "without arguments"),
    (["dpcheck_cli_mechs:not_a_mechanism", *AUDIT, "--claim", "pure:1"], "not a mechanism"),
    (["dpcheck_cli_mechs:broken", *AUDIT, "--claim", "pure:1"], "RuntimeError: boom"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--neighbour", "replace"],
     "not neighbours"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--neighbour", "user_level:x"],
     "must be an integer"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--neighbour", "friends"],
     "must be add_remove, replace"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--alpha", "2"], "alpha"),
    (["dpcheck_cli_mechs:correct", "--data", "[1]", "--data-prime", "[]", "--claim", "pure:1",
      "--samples", "1"], "'1' must be a whole number >= 2"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--samples", "many"],
     "must be a whole number"),
    (["dpcheck_cli_mechs:correct", "--data", "[1]", "--claim", "pure:1"],
     "the following arguments are required: --data-prime"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--stop-within", "0.1"],
     "--stop-within=0.1 needs --sequential"),
    (["dpcheck_cli_mechs:correct", *AUDIT, "--claim", "pure:1", "--sequential",
      "--stop-within", "-1"], "--stop-within=-1.0 must be > 0"),
])
def test_bad_arguments_give_one_line_errors_and_exit_2(mechs, capsys, args, message):
    assert main(["audit", *args]) == 2
    captured = capsys.readouterr()
    assert message in _one_line_error(captured.err)
    assert captured.out == ""


def test_help_texts_guide_a_newcomer(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "audit" in out and "report" in out and "claims" in out and "examples:" in out
    assert main(["audit", "--help"]) == 0
    out = capsys.readouterr().out
    assert "MODULE:NAME" in out and "instantiated with no arguments" in out
    assert "exit status" in out and "--neighbour" in out
    assert main(["report", "render", "--help"]) == 0
    assert main([]) == 2 and main(["report"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_python_dash_m_dpcheck_help():
    done = subprocess.run([sys.executable, "-m", "dpcheck", "--help"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "usage: dpcheck" in done.stdout and "audit" in done.stdout


def _document(run_id: str, verdict: str) -> dict:
    r = dpcheck.audit(lambda d, size, rng: np.sum(d) + rng.laplace(0.0, 1.0, size),
                      [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=5000, seed=0,
                      float_features=False)
    nodeid = "properties/test_zoo.py::test_laplace"
    return {"schema_version": 1, "run_id": run_id, "created": "2025-01-01T00:00:00Z",
            "root_seed": 0, "alpha_family": 0.05, "n_claim_tests": 1, "alpha_per_test": 0.05,
            "scale": 1.0, "command": "pytest", "environment": {},
            "tests": [{"nodeid": nodeid, "outcome": "passed", "duration": 0.1}],
            "records": [{"nodeid": nodeid, "call": 1, "type": "audit", "paper": "003",
                         "ref": "Theorem 2.4", "kind": "privacy", "expect": "holds",
                         "alpha": 0.05, "verdict": verdict, "replay": f"pytest '{nodeid}'",
                         "result": r.to_dict()}],
            "holm": [], "catalog": None, "summary": {"tests": 1}}


def test_report_render_and_compare(tmp_path, capsys):
    a = write_run(_document("run-a", "holds"), directory=tmp_path, formats=("json",))
    b = write_run(_document("run-b", "violation"), directory=tmp_path, formats=("json",))
    assert main(["report", "render", str(a), "--formats", "md"]) == 0
    assert (a / "audit.md").is_file() and not (a / "audit.html").exists()
    assert str(a / "audit.md") in capsys.readouterr().out
    assert main(["report", "render", str(tmp_path)]) == 0  # a reports directory: its latest run
    assert (b / "audit.html").is_file()
    capsys.readouterr()
    assert main(["report", "compare", str(a), str(b / "audit.json")]) == 1  # a new violation
    out = capsys.readouterr().out
    assert "## Verdict changes (1)" in out and "## New violations (1)" in out
    assert main(["report", "render", str(tmp_path / "nope")]) == 2
    assert "does not exist" in _one_line_error(capsys.readouterr().err)
    assert main(["report", "render", str(a), "--formats", "pdf"]) == 2
    assert "formats" in _one_line_error(capsys.readouterr().err)


CATALOG = """
[[claim]]
paper = "003"
ref = "Theorem 2.4"
kind = "privacy"
status = "tested"
tests = ["properties/test_x.py::test_a"]

[[claim]]
paper = "003"
ref = "Lemma 3.1"
kind = "utility"
status = "planned"
note = "issue 12"

[[claim]]
paper = "004"
ref = "Claim 4.1"
kind = "privacy"
status = "erratum"
tests = ["properties/test_y.py::test_b"]
mutants = ["b_leak"]
"""


def test_claims_prints_the_coverage_table(tmp_path, capsys):
    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG, encoding="utf-8")
    assert main(["claims", "--catalog", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("3 results")
    assert lines[1].split() == ["paper", "tested", "erratum", "asymptotic", "not-executable",
                                "planned", "total", "with", "mutants", "with", "slack", "min",
                                "slack", "max", "overspend"]
    assert lines[2].split() == ["003", "1", "0", "0", "0", "1", "2", "0/1", "0/1", "—", "—"]
    assert lines[-2].split() == ["total", "1", "1", "0", "0", "1", "3", "1/2", "0/2", "—", "—"]
    assert lines[-1].startswith("with mutants: ")
    assert main(["claims", "--catalog", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["coverage"]["004"]["erratum"] == 1 and data["totals"]["planned"] == 1
    assert [c["ref"] for c in data["claims"]] == ["Theorem 2.4", "Lemma 3.1", "Claim 4.1"]
    assert data["claims"][2] == {"paper": "004", "ref": "Claim 4.1", "kind": "privacy",
                                 "status": "erratum", "tests": ["properties/test_y.py::test_b"],
                                 "mutants": ["b_leak"], "note": "", "slack": None,
                                 "detectable_overspend": None}
    assert data["mutant_coverage"]["004"]["with_mutants"] == 1


def test_claims_errors_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["claims"]) == 2
    assert "properties/catalog.toml" in _one_line_error(capsys.readouterr().err)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[claim]]\npaper = "003"\nref = "x"\nkind = "privacy"\nstatus = "done"\n',
                   encoding="utf-8")
    assert main(["claims", "--catalog", str(bad)]) == 2
    assert "status='done'" in _one_line_error(capsys.readouterr().err)
