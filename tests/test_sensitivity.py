"""How sharp a claim test is (issue 27): the ``dp_sensitivity`` fixture records the reference's
loss against the asserted bound and the smallest detectable overspend; the catalogue carries
``slack`` and ``detectable_overspend``; ``dpcheck claims`` shows them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcheck.catalog import load_catalog
from dpcheck.cli import main
from dpcheck.errors import InvalidArgument

pytest_plugins = ["pytester"]

SUITE = '''
import pytest

@pytest.mark.claim(paper="900", ref="Theorem 1")
def test_tight(dp_sensitivity):
    rec = dp_sensitivity(loss=0.9, bound=1.0, detectable_overspend=1.2, basis="exact pmf")
    assert abs(rec["slack"] - 0.9) < 1e-12

@pytest.mark.claim(paper="900", ref="Theorem 2")
def test_bad(dp_sensitivity):
    dp_sensitivity(loss=0.9, bound=0.0, detectable_overspend=None, basis="x")
'''

ENTRY = '''
[[claim]]
paper = "900"
ref = "Theorem 1"
kind = "privacy"
status = "tested"
tests = ["t.py::test_x"]
{extra}
'''


def test_the_fixture_records_slack_and_rejects_bad_input(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:randomly", "--dpcheck-report=out")
    result.assert_outcomes(passed=1, failed=1)
    assert "bound=0.0 must be finite and > 0" in result.stdout.str()
    (run,) = [p for p in (pytester.path / "out").iterdir() if p.name != "latest"]
    doc = json.loads((run / "audit.json").read_text())
    (rec,) = [r for r in doc["records"] if r["result"].get("name") == "sensitivity"]
    assert rec["result"]["slack"] == pytest.approx(0.9)
    assert rec["result"]["detectable_overspend"] == 1.2 and rec["result"]["basis"] == "exact pmf"


@pytest.mark.parametrize("extra, message", [
    ("slack = 0.0", "slack=0.0 must be a finite number > 0"),
    ("detectable_overspend = 0.9", "detectable_overspend=0.9 must be a finite number > 1"),
    ('slack = "high"', "slack='high' must be a finite number > 0"),
])
def test_catalogue_rejects_bad_figures(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(ENTRY.format(extra=extra))
    with pytest.raises(InvalidArgument, match=message):
        load_catalog(path)


def test_a_utility_reference_that_never_failed_has_slack_zero(tmp_path: Path) -> None:
    """Slack 0 is a measured figure for utility (0 failures at the tested size), not for
    privacy (a loss of 0 means the test exercised nothing)."""
    path = tmp_path / "catalog.toml"
    path.write_text(ENTRY.replace('"privacy"', '"utility"').format(extra="slack = 0.0"))
    (entry,) = load_catalog(path)
    assert entry.slack == 0.0
    path.write_text(ENTRY.replace('"privacy"', '"utility"').format(extra="slack = -0.1"))
    with pytest.raises(InvalidArgument, match=r"slack=-0.1 must be a finite number >= 0"):
        load_catalog(path)


def test_catalogue_figures_reach_claims_list(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(ENTRY.format(extra="slack = 0.93\ndetectable_overspend = 1.25"))
    (entry,) = load_catalog(path)
    assert (entry.slack, entry.detectable_overspend) == (0.93, 1.25)
    assert main(["claims", "--catalog", str(path), "--list"]) == 0
    assert "slack 0.93, detectable overspend 1.25" in capsys.readouterr().out
    assert main(["claims", "--catalog", str(path)]) == 0
    table = capsys.readouterr().out
    assert "with slack" in table and "1/1" in table and "0.93" in table and "1.25" in table
    assert main(["claims", "--catalog", str(path), "--list", "--json"]) == 0
    claims = json.loads(capsys.readouterr().out)["claims"]
    assert claims[0]["slack"] == 0.93 and claims[0]["detectable_overspend"] == 1.25
