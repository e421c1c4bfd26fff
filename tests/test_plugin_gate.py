"""The run's verdict cannot say PASS on a failure (issue 28): every test of the session counts,
dpcheck fixtures or not; an interrupted run is marked, its unfinished tests are neither passed
nor counted as passed, and ``reports/latest`` moves only when a run completes; a green run's
terminal summary is short and ends with the ``file://`` URL of ``audit.html``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

HEAD = '''
import numpy as np
import pytest
import dpcheck


def laplace(data, size, rng):
    return np.sum(data) + rng.laplace(0.0, 1.0, size)


def test_audited(dp_audit):
    dp_audit(laplace, [1, 0], [1], dpcheck.PureDP(1.0), samples=5_000, float_features=False)
'''


def _run_doc(path: Path) -> dict:
    (run,) = [p for p in (path / "out").iterdir() if p.name != "latest"]
    return json.loads((run / "audit.json").read_text())


def test_a_failing_plain_test_fails_the_run_verdict(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD + '''

def test_plain():
    assert 1 + 1 == 3
''')
    result = pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out")
    result.assert_outcomes(passed=1, failed=1)
    doc = _run_doc(pytester.path)
    outcomes = {t["nodeid"].split("::")[-1]: (t["outcome"], t["dpcheck"]) for t in doc["tests"]}
    assert outcomes == {"test_audited": ("passed", True), "test_plain": ("failed", False)}
    run = next((pytester.path / "out").glob("2*"))
    summary = (run / "summary.md").read_text()
    assert "FAIL: 1 test(s) failed" in summary and "PASS" not in summary
    # the files are beside the summary, wherever --dpcheck-report put them (it said reports/)
    assert f"beside this file, in the run's folder `{run.name}/`" in summary
    assert "`reports/" not in summary
    assert "FAIL: 1 test(s) failed" in result.stdout.str()


def test_an_interrupted_run_is_marked_and_never_latest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD + '''

def test_interrupt(dp_audit):
    dp_audit(laplace, [1, 0], [1], dpcheck.PureDP(1.0), samples=5_000, float_features=False)
    raise KeyboardInterrupt


def test_never_runs(dp_audit):
    pass
''')
    # in a subprocess: the KeyboardInterrupt must not reach this test session
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--dpcheck-report=out")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    doc = _run_doc(pytester.path)
    assert doc["interrupted"] is True and "KeyboardInterrupt" in doc["interruption"]
    outcomes = {t["nodeid"].split("::")[-1]: t["outcome"] for t in doc["tests"]}
    assert outcomes.get("test_interrupt") != "passed" and "test_never_runs" not in outcomes
    assert not (pytester.path / "out" / "latest").exists()
    run = next((pytester.path / "out").glob("2*"))
    assert "INCOMPLETE: the run did not complete" in (run / "summary.md").read_text()
    assert "not made reports/latest" in result.stdout.str()


def test_a_maxfail_stop_is_incomplete(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD + '''

def test_fails():
    assert False


def test_after(dp_audit):
    dp_audit(laplace, [1, 0], [1], dpcheck.PureDP(1.0), samples=5_000, float_features=False)
''')
    result = pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out", "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    doc = _run_doc(pytester.path)
    assert doc["interrupted"] is True and doc["interruption"].startswith("stopped early")
    assert not (pytester.path / "out" / "latest").exists()


def test_a_green_run_summary_is_short_and_ends_with_the_report_url(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD)
    result = pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out")
    result.assert_outcomes(passed=1)
    text = result.stdout.str().splitlines()
    start = next(i for i, line in enumerate(text) if "= dpcheck =" in line)
    block = text[start:]
    tail = [line for line in block if line.strip() and not line.startswith("=")]
    assert tail[-1].startswith("report: file://") and tail[-1].endswith("/audit.html")
    assert Path(tail[-1][len("report: file://"):]).is_file()
    assert any(line.startswith("PASS: 1 of 1 tests passed") for line in tail)
    assert len(block) <= 20, "\n".join(block)
    assert (pytester.path / "out" / "latest").exists()


def test_retention_keeps_the_newest_runs_and_latest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD)
    for _ in range(3):
        pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out", "--dpcheck-keep=2",
                           "--dpcheck-formats=json").assert_outcomes(passed=1)
    runs = sorted(p.name for p in (pytester.path / "out").iterdir() if p.name != "latest")
    assert len(runs) == 2
    assert (pytester.path / "out" / "latest").resolve().name == runs[-1]


def test_the_ini_option_turns_reports_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=HEAD)
    pytester.makeini("[pytest]\ndpcheck_report = none\n")
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()
    assert "report: disabled" in result.stdout.str()
    pytester.makeini("[pytest]\ndpcheck_report = elsewhere\n")
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)
    assert (pytester.path / "elsewhere" / "latest" / "audit.json").is_file()
