"""The ``mutant`` marker, the catalogue's ``mutants`` field and the report's kill matrix."""

pytest_plugins = ["pytester"]

import json  # noqa: E402 - pytest_plugins must come first
import math  # noqa: E402
from importlib.resources import files  # noqa: E402
from pathlib import Path  # noqa: E402

import jsonschema  # noqa: E402
import pytest  # noqa: E402

from dpcheck.catalog import (CatalogEntry, entries_without_mutants, load_catalog,  # noqa: E402
                             missing_mutants, mutant_coverage)
from dpcheck.errors import InvalidArgument  # noqa: E402

INI = """
[pytest]
filterwarnings = error
addopts = --strict-markers -p no:randomly -p no:hypothesispytest
"""

SUITE = '''
import numpy as np
import pytest

import dpcheck


def laplace(scale):
    def mechanism(data, size, rng):
        return np.sum(data) + rng.laplace(0.0, scale, size)
    return mechanism


SCALES = {"reference": 1.0, "quarter_noise": 0.25, "barely_off": 0.999}


@pytest.mark.claim(paper="900", ref="Theorem 1")
@pytest.mark.parametrize("variant", [
    "reference",
    pytest.param("quarter_noise", marks=pytest.mark.mutant("quarter_noise")),
    pytest.param("barely_off", marks=pytest.mark.mutant("barely_off")),
])
def test_laplace_is_private(variant, dp_audit):
    # values only: the float64 spacing of ``sum + laplace`` is a real leak the float features
    # would (rightly) report for the reference too; this test is about the mutant contract
    dp_audit(laplace(SCALES[variant]), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000,
             float_features=False)


def total(xs, bug=False):
    return sum(xs) + (1 if bug else 0)


@pytest.mark.claim(paper="900", ref="Lemma 2", kind="combinatorial")
@pytest.mark.parametrize("bug", [False, pytest.param(True, marks=pytest.mark.mutant("off_by_one"))])
def test_sum_is_additive(bug):
    assert total([1, 2], bug) + total([3], bug) == total([1, 2, 3], bug)
'''

CATALOG = '''
[[claim]]
paper = "900"
ref = "Theorem 1"
kind = "privacy"
status = "tested"
tests = ["test_suite.py::test_laplace_is_private"]
mutants = ["quarter_noise", "barely_off"]

[[claim]]
paper = "900"
ref = "Lemma 2"
kind = "combinatorial"
status = "tested"
tests = ["test_suite.py::test_sum_is_additive"]
mutants = ["off_by_one"]
'''


def setup(pytester: pytest.Pytester, suite: str = SUITE, catalog: str = CATALOG) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=suite)
    pytester.path.joinpath("properties").mkdir()
    pytester.path.joinpath("properties", "catalog.toml").write_text(catalog, encoding="utf-8")


def test_mutants_caught_survived_and_the_kill_matrix(pytester: pytest.Pytester) -> None:
    setup(pytester)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "out")
    # reference holds, quarter_noise caught by the audit, off_by_one caught by the assertion,
    # barely_off (scale 0.999: true eps 1.001) survives at 20,000 samples -> that case fails
    result.assert_outcomes(passed=4, failed=1)
    out = result.stdout.str()
    assert "mutant 'barely_off' survived" in out
    assert "mutants: 2 caught, 1 survived, 0 errored, of 3 mutant case(s) over 2 claim(s)" in out
    (run,) = [p for p in (pytester.path / "out").iterdir() if p.is_dir() and p.name != "latest"]
    doc = json.loads((run / "audit.json").read_text(encoding="utf-8"))
    kills = {row["mutant"]: row for row in doc["kill_matrix"]}
    assert set(kills) == {"quarter_noise", "barely_off", "off_by_one"}
    assert kills["quarter_noise"]["outcome"] == "caught"
    assert kills["quarter_noise"]["epsilon_lower"] > 1.0
    assert kills["barely_off"]["outcome"] == "survived"
    assert kills["barely_off"]["epsilon_lower"] <= 1.0
    assert kills["off_by_one"]["outcome"] == "caught"
    assert "assert" in kills["off_by_one"]["assertion"]
    entry = next(e for e in doc["catalog"]["entries"] if e["ref"] == "Theorem 1")
    assert entry["mutants"] == ["quarter_noise", "barely_off"]
    assert doc["catalog"]["mutant_coverage"]["900"] == {
        "needing": 1, "with_mutants": 1, "entries_with_mutants": 2, "mutants": 3}
    tests = {t["nodeid"]: t for t in doc["tests"]}
    assert tests["test_suite.py::test_laplace_is_private[reference]"]["mutant"] is None
    assert tests["test_suite.py::test_laplace_is_private[quarter_noise]"]["expect"] == "violation"


def test_a_mutant_that_raises_something_else_is_not_caught(pytester: pytest.Pytester) -> None:
    suite = '''
import pytest

@pytest.mark.claim(paper="900", ref="Lemma 2", kind="combinatorial")
@pytest.mark.parametrize("bug", [False, pytest.param(True, marks=pytest.mark.mutant("off_by_one"))])
def test_sum_is_additive(bug):
    if bug:
        raise KeyError("broken test code is not a caught mutant")
'''
    catalog = CATALOG.split("[[claim]]")[2]
    setup(pytester, suite, "[[claim]]" + catalog)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*KeyError*"])


@pytest.mark.parametrize("marks, catalog_mutants, message", [
    ('pytest.mark.mutant("unlisted")', '["listed"]', "mutant 'unlisted' is not listed"),
    ('pytest.mark.mutant("")', '["listed"]', "needs exactly one non-empty name"),
    ('[pytest.mark.mutant("a"), pytest.mark.mutant("b")]', '["a", "b"]', "more than one"),
])
def test_invalid_mutant_markers_are_usage_errors(pytester, marks, catalog_mutants, message):
    suite = f'''
import pytest

@pytest.mark.claim(paper="900", ref="Lemma 2", kind="combinatorial")
@pytest.mark.parametrize("bug", [False, pytest.param(True, marks={marks})])
def test_sum_is_additive(bug):
    assert not bug
    "listed"
'''
    catalog = ('[[claim]]\npaper = "900"\nref = "Lemma 2"\nkind = "combinatorial"\n'
               'status = "tested"\ntests = ["test_suite.py::test_sum_is_additive"]\n'
               f'mutants = {catalog_mutants}\n')
    setup(pytester, suite, catalog)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none")
    assert result.ret != 0
    assert message in result.stdout.str() + result.stderr.str()


def test_catalogue_mutants_must_occur_in_their_tests(pytester: pytest.Pytester) -> None:
    setup(pytester, catalog=CATALOG.replace('"off_by_one"]', '"off_by_one", "ghost"]'))
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none")
    assert result.ret != 0
    assert "mutant 'ghost' occurs in none of its tests" in result.stderr.str()


@pytest.mark.parametrize("field, message", [
    ('mutants = "a"', "must be a list of non-empty names"),
    ('mutants = ["a", "a"]', "has duplicates"),
    ('mutants = [""]', "must be a list of non-empty names"),
])
def test_catalogue_mutants_field_is_validated(tmp_path: Path, field: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[[claim]]\npaper = "9"\nref = "T"\nkind = "privacy"\nstatus = "tested"\n'
                    f'tests = ["t.py::f"]\n{field}\n', encoding="utf-8")
    with pytest.raises(InvalidArgument, match=message):
        load_catalog(path)


def test_mutant_helpers(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text('import pytest\nX = pytest.mark.mutant("seen")\n')
    e = CatalogEntry("9", "T", "privacy", "tested", ("t.py::f",), "", ("seen", "unseen"))
    assert missing_mutants([e], tmp_path) == ["9 T: mutant 'unseen' occurs in none of its tests"]
    bare = CatalogEntry("9", "U", "utility", "erratum", ("t.py::f",))
    combinatorial = CatalogEntry("9", "V", "combinatorial", "tested", ("t.py::f",))
    assert entries_without_mutants([e, bare, combinatorial]) == [bare]
    assert mutant_coverage([e, bare, combinatorial])["9"] == {
        "needing": 2, "with_mutants": 1, "entries_with_mutants": 1, "mutants": 2}


def test_dp_check_spends_alpha_and_records_any_checker(pytester: pytest.Pytester) -> None:
    suite = '''
import pytest
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    violation: bool
    alpha: float

    def to_dict(self):
        return {"violation": self.violation, "alpha": self.alpha}

    def summary(self):
        return f"toy check: violation={self.violation}"


def toy(flag, *, alpha, seed):
    assert 0 < alpha < 1 and seed is not None
    return Result(flag, alpha)


@pytest.mark.claim(paper="900", ref="Lemma 2", kind="generalization")
@pytest.mark.parametrize("flag", [False, pytest.param(True, marks=pytest.mark.mutant("leaky"))])
def test_toy(flag, dp_check):
    dp_check(toy, flag, kind="toy")


@pytest.mark.claim(paper="900", ref="Lemma 2", kind="generalization")
def test_toy_violation_fails(dp_check):
    dp_check(toy, True, kind="toy")


def test_bad_result(dp_check):
    dp_check(lambda *, alpha, seed: 3)
'''
    catalog = ('[[claim]]\npaper = "900"\nref = "Lemma 2"\nkind = "generalization"\n'
               'status = "tested"\ntests = ["test_suite.py::test_toy"]\nmutants = ["leaky"]\n')
    setup(pytester, suite, catalog)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "out")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "toy check: violation=True" in out and "replay:" in out
    assert "must return a result with a boolean .violation" in out
    (run,) = [p for p in (pytester.path / "out").iterdir() if p.is_dir() and p.name != "latest"]
    doc = json.loads((run / "audit.json").read_text(encoding="utf-8"))
    toys = [r for r in doc["records"] if r["type"] == "check" and r["result"]["check"] == "toy"]
    per_call = 0.01 / 4 * 6 / math.pi**2  # 4 claim tests; the first call of each spends 6/pi^2
    assert len(toys) == 3 and all(r["alpha"] == pytest.approx(per_call) for r in toys)
    assert [r["mutant"] for r in doc["kill_matrix"]] == ["leaky"]
    schema = json.loads(files("dpcheck.schemas").joinpath("run.schema.json").read_text())
    jsonschema.validate(doc, schema)  # check records are part of the documented format
    assert doc["kill_matrix"][0]["outcome"] == "caught"
