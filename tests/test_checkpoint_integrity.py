"""A checkpoint's counts are never trusted blindly (issue 28): its digest covers its content, so
an edited count (one digit, or +1) or a corrupted copy is refused with a one-line error, through
the API and the CLI; counts above their chunk's size and chunks the audit never draws are refused
even under a matching digest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcheck import InvalidArgument, PureDP, audit
from dpcheck.core.checkpoint import content_digest
from dpcheck.core.results import untimed


def mech(d, size, rng):  # module level: the checkpoint fingerprints its name
    return rng.laplace(float(sum(d)), 1.0, size)


def _run(path: Path):
    return audit(mech, [1.0], [0.0], PureDP(1.0), samples=40_000, seed=3, checkpoint=path,
                 float_features=False)


def _edit(path: Path, change, *, redigest: bool) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    if redigest:
        doc["digest"] = content_digest(doc)
    path.write_text(json.dumps(doc, indent=1))


def _first(doc: dict) -> list[int]:
    return doc["chunks"][sorted(doc["chunks"])[0]]


@pytest.mark.parametrize("change", [
    lambda doc: _first(doc).__setitem__(0, int("9" + str(_first(doc)[0])[1:])),  # one digit
    lambda doc: _first(doc).__setitem__(0, _first(doc)[0] + 1),                  # +1
    lambda doc: doc["sizes"].__setitem__(0, doc["sizes"][0] + 1),
])
def test_an_edited_checkpoint_is_refused(tmp_path: Path, change) -> None:
    path = tmp_path / "ck.json"
    full = _run(path)
    assert untimed(_run(path).to_dict()) == untimed(full.to_dict())  # an intact one is reused
    _edit(path, change, redigest=False)
    with pytest.raises(InvalidArgument, match="was edited or corrupted"):
        _run(path)


def test_impossible_counts_are_refused_even_with_a_matching_digest(tmp_path: Path) -> None:
    path = tmp_path / "ck.json"
    _run(path)
    _edit(path, lambda doc: _first(doc).__setitem__(0, 10**9), redigest=True)
    with pytest.raises(InvalidArgument, match="refusing to reuse it"):
        _run(path)
    path.unlink()
    _run(path)
    _edit(path, lambda doc: doc["chunks"].__setitem__("0/999", _first(doc)), redigest=True)
    with pytest.raises(InvalidArgument, match="never draws"):
        _run(path)


def test_a_truncated_checkpoint_is_refused_by_the_cli_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import numpy as np\ndef noisy(d, size, rng):\n"
                                   "    return rng.laplace(float(sum(d)), 1.0, size)\n")
    args = [sys.executable, "-m", "dpcheck", "audit", "m.py:noisy", "--data", "[1.0]",
            "--data-prime", "[0.0]", "--claim", "pure:1.0", "--samples", "40000",
            "--checkpoint", "ck.json", "--no-float-features"]
    first = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stderr
    text = (tmp_path / "ck.json").read_text()
    (tmp_path / "ck.json").write_text(text.replace('"chunks"', '"chunks" ', 1)[:-40] + "}}")
    again = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert again.returncode == 2, again.stderr
    assert len(again.stderr.strip().splitlines()) == 1 and "ck.json" in again.stderr


def test_the_digest_is_over_the_content() -> None:
    doc = {"format": "f", "version": 2, "chunks": {"0/0": [1, 2]}}
    d = content_digest(doc)
    assert d == content_digest({**doc, "digest": "anything"})
    assert d != content_digest({**doc, "chunks": {"0/0": [1, 3]}})
    assert np.char.str_len(d) == 64
