"""The "Audit a library mechanism" example (docs/howto/libraries.md; formerly in the README) runs
as printed: diffprivlib's geometric count holds its claim, OpenDP's Laplace with the scale passed
for ε is caught, and the OpenDP result carries the reproducibility warning."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "howto" / "libraries.md"


def test_readme_library_example_runs():
    pytest.importorskip("diffprivlib")
    pytest.importorskip("opendp")
    import numpy as np

    import dpcheck

    text = PAGE.read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                if "from_diffprivlib" in b and "from_opendp" in b)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(PAGE), "exec"), {"np": np, "dpcheck": dpcheck})
    first, second = out.getvalue().strip().splitlines()
    verdict, bound = first.split()
    assert verdict == "False" and 0.5 < float(bound) <= 1.0
    assert second.startswith("True PureDP(epsilon=10.0) opendp.Measurement")
    assert "shadows the installed package" in text
