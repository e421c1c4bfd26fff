"""The README's Python example runs and prints what the README says it prints; the examples that
moved from the README to the docs (the pytest property test, the counterexample search) still do
what the README promised (``tests/test_docs.py`` also runs them and checks their output)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import dpcheck

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[1] / "README.md"
TUTORIAL = README.parent / "docs" / "tutorial.md"


def blocks(lang: str, page: Path = README) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_readme_example_runs_and_its_output_is_current():
    code = blocks("python")[0]
    text = README.read_text(encoding="utf-8")
    match = re.search(r"prints \(in about [^)]*\)\n\n```\n(.*?)```", text, re.S)
    printed = match.group(1) if match else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(dpcheck.PrivacyViolation):
        exec(compile(code, str(README), "exec"), {})
    assert printed is not None
    assert out.getvalue().strip() == printed.strip()


def test_readme_shows_the_two_quick_start_commands():
    text = README.read_text(encoding="utf-8")
    assert "pytest -n auto" in text and "pytest -n auto tests" in text
    assert 'pip install -e ".[dev]"' in text


def test_readme_points_to_the_docs_and_how_to_build_them():
    text = README.read_text(encoding="utf-8")
    assert "./dev sphinx-build -W --keep-going -b html docs docs/_build/html" in text
    assert len(text.splitlines()) < 200


def test_tutorial_property_test_example_passes_under_the_plugin(pytester):
    """The tutorial's 'Put the claim in pytest' example (formerly the README's 'Property tests
    that read like the theorem') is a passing test file: a correct claim and an expected
    violation."""
    code = next(b for b in blocks("python", TUTORIAL) if "dp_audit" in b)
    pytester.makepyfile(test_example=code)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dpcheck-report", "none",
                                           "-p", "no:randomly")
    result.assert_outcomes(passed=2)


def test_tutorial_search_example_finds_the_ordered_leak():
    """The tutorial's counterexample search (formerly in the README)."""
    import numpy as np

    code = next(b for b in blocks("python", TUTORIAL) if "find_counterexample" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(TUTORIAL), "exec"), {"np": np, "dpcheck": dpcheck})
    found, *_ = out.getvalue().split()
    assert found == "True" and "[1, 0, 1]" in out.getvalue()


def test_ci_runs_exactly_the_readme_quick_start_commands():
    """.ci/run extracts the quick-start block (between the quickstart markers) and runs it
    verbatim: two commands, with python3 and the environment set-up built in (./dev)."""
    import subprocess

    root = README.parent
    out = subprocess.run([str(root / ".ci" / "run"), "--print-commands"], check=True,
                         capture_output=True, text=True, cwd=root).stdout.splitlines()
    assert [line.split("#")[0].split() for line in out] == [
        ["./dev", "pytest", "-n", "auto"], ["./dev", "pytest", "-n", "auto", "tests"]]
    script = (root / "dev").read_text(encoding="utf-8")
    assert "python3" in script and '-m venv' in script and 'pip install' in script
    assert "python -m venv" not in README.read_text(encoding="utf-8")
