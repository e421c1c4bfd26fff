"""The HTML report in a real browser (headless Chromium; skipped where none is installed):
no horizontal overflow at a 1366-px laptop width, every in-page link resolves, the verdict
banner is on the first screen. The checker is ``benchmarks/html_check.py``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dpcheck.report import write_run

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("html_check", ROOT / "benchmarks" / "html_check.py")
html_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(html_check)

pytestmark = pytest.mark.skipif(html_check.chromium() is None,
                                reason="no chromium (apt-get install chromium)")


def test_report_fits_a_laptop_screen_and_its_anchors_resolve(tmp_path):
    from tests.test_report import make_document

    doc = make_document()
    doc["records"][0]["nodeid"] = "properties/x/" + "very_long_test_name_" * 8 + "[param]"
    doc["tests"][0]["nodeid"] = doc["records"][0]["nodeid"]
    doc["kill_matrix"] = [{"paper": "003", "ref": "Theorem 2.4", "mutant": "no_noise",
                           "nodeid": doc["tests"][1]["nodeid"], "outcome": "caught",
                           "epsilon_lower": 3.2, "claimed_epsilon": 1.0}]
    run_dir = write_run(doc, directory=tmp_path)
    out = html_check.measure(run_dir / "audit.html", width=1366, height=768)
    assert not out["horizontal_overflow"], out["too_wide"]
    assert out["n_broken"] == 0, out["broken"]
    assert out["links"] > 10
    assert out["verdict_bottom"] is not None and out["verdict_bottom"] < 300
    assert out["problems_top"] < 768  # the problems start on the first screen
