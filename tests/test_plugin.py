"""The pytest plugin (``dpcheck.plugin.hooks``), exercised on small generated test suites."""

pytest_plugins = ["pytester"]

import json  # noqa: E402 - pytest_plugins must come first
import math  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from dpcheck.core.results import untimed as untimed_record  # noqa: E402

# Shared head of the generated test files: imports and a Laplace count mechanism.
LAPLACE_HEADER = '''
import numpy as np
import pytest

import dpcheck


def laplace(scale):
    def mechanism(data, size, rng):  # noise snapped to 2**-20: exact sums, private in float64
        return np.sum(data) + np.round(rng.laplace(0.0, scale, size) * 2.0**20) / 2.0**20
    mechanism.__qualname__ = f"laplace_{scale}"
    return mechanism
'''

# Four claim tests (one with two audits, one expecting a violation, an accuracy check with a
# measurement, an erratum) and one unmarked test that only records a draw of dp_rng.
SUITE = LAPLACE_HEADER + '''

@pytest.mark.claim(paper="900", ref="Theorem 1")
def test_holds(dp_audit):
    dp_audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)
    dp_audit(laplace(1.0), [1, 0], [1, 0, 1], dpcheck.PureDP(1.0), samples=20_000)


@pytest.mark.claim(paper="900", ref="Theorem 2", expect="violation")
def test_buggy_variant_is_caught(dp_audit):
    dp_audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)
    dp_audit(laplace(0.25), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)


@pytest.mark.claim(paper="900", ref="Lemma 3", kind="utility")
def test_accuracy(dp_accuracy, dp_record):
    dp_accuracy(lambda size, rng: np.abs(rng.laplace(0.0, 1.0, size)), alpha=3.0, beta=0.05,
                trials=2_000)
    dp_record("trend", {"slope": np.float64(-0.5)})


@pytest.mark.claim(paper="900", ref="Theorem 4", expect="erratum")
def test_erratum(dp_audit):
    dp_audit(laplace(0.5), [1, 0, 1], [1, 0], dpcheck.ApproxDP(1.0, 1e-3), samples=20_000)


def test_unmarked(dp_rng, dp_record):
    dp_record("draw", {"x": float(dp_rng.random())})
'''

CATALOG = '''
[[claim]]
paper = "900"
ref = "Theorem 1"
kind = "privacy"
status = "tested"
tests = ["test_suite.py::test_holds"]

[[claim]]
paper = "900"
ref = "Theorem 2"
kind = "privacy"
status = "tested"
tests = ["test_suite.py::test_buggy_variant_is_caught"]

[[claim]]
paper = "900"
ref = "Lemma 3"
kind = "utility"
status = "tested"
tests = ["test_suite.py::test_accuracy"]

[[claim]]
paper = "900"
ref = "Theorem 4"
kind = "privacy"
status = "erratum"
tests = ["test_suite.py::test_erratum"]

[[claim]]
paper = "900"
ref = "Corollary 5"
kind = "utility"
status = "asymptotic"
'''

INI = """
[pytest]
filterwarnings = error
addopts = --strict-markers -p no:randomly -p no:hypothesispytest
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run_dirs(directory: Path) -> list[Path]:
    """Run directories under a report directory (not the ``latest`` pointer)."""
    if not directory.exists():
        return []
    return [p for p in directory.iterdir()
            if p.is_dir() and not p.is_symlink() and p.name != "latest"]


def document(directory: Path) -> dict:
    (run,) = run_dirs(directory)
    return json.loads((run / "audit.json").read_text(encoding="utf-8"))


def untimed(records: list[dict]) -> list[dict]:
    """Records without their wall-clock fields."""
    return [dict(r, result=untimed_record(r["result"])) for r in records]


def header_seed(result: pytest.RunResult) -> int:
    match = re.search(r"^dpcheck: seed=(\d+)", result.stdout.str(), re.M)
    assert match, result.stdout.str()
    return int(match.group(1))


def test_serial_and_xdist_runs_agree_alpha_is_split_and_only_the_controller_writes(suite):
    suite.path.joinpath("properties").mkdir()
    suite.path.joinpath("properties", "catalog.toml").write_text(CATALOG, encoding="utf-8")
    common = ["-p", "no:cacheprovider", "--dpcheck-seed", "7", "--dpcheck-alpha", "0.02",
              "--dpcheck-formats", "json"]
    serial = suite.runpytest(*common, "-n", "0", "--dpcheck-report", "serial")
    serial.assert_outcomes(passed=5)
    parallel = suite.runpytest(*common, "-n", "2", "--dpcheck-report", "parallel")
    parallel.assert_outcomes(passed=5)
    assert len(run_dirs(suite.path / "parallel")) == 1  # workers wrote nothing
    assert not (suite.path / "reports").exists()
    a, b = document(suite.path / "serial"), document(suite.path / "parallel")
    assert untimed(a["records"]) == untimed(b["records"])
    assert [r["nodeid"] for r in a["records"]] == sorted(r["nodeid"] for r in a["records"])
    assert [dict(t, duration=0) for t in a["tests"]] == [dict(t, duration=0) for t in b["tests"]]
    assert (a["environment"]["xdist_workers"], b["environment"]["xdist_workers"]) == (0, 2)

    # Family alpha: 4 claim tests at 0.02 -> 0.005 each; call i spends 0.005*6/(pi^2 i^2).
    assert (a["n_claim_tests"], a["alpha_family"], a["root_seed"]) == (4, 0.02, 7)
    assert a["alpha_per_test"] == pytest.approx(0.005)
    calls = {(r["nodeid"].split("::")[1], r["call"]): r for r in a["records"]}
    assert calls["test_holds", 1]["alpha"] == pytest.approx(0.005 * 6 / math.pi**2)
    assert calls["test_holds", 2]["alpha"] == pytest.approx(0.005 * 6 / (math.pi**2 * 4))
    assert calls["test_accuracy", 1]["result"]["confidence"] == calls["test_holds", 1]["alpha"]
    assert calls["test_holds", 1]["result"]["samples"] == 20_000

    verdicts = {k: r["verdict"] for k, r in calls.items()}
    assert verdicts == {
        ("test_holds", 1): "not-refuted", ("test_holds", 2): "not-refuted",
        ("test_buggy_variant_is_caught", 1): "not-refuted",
        ("test_buggy_variant_is_caught", 2): "expected-violation",
        ("test_accuracy", 1): "not-refuted", ("test_accuracy", 2): "measurement",
        ("test_erratum", 1): "erratum-confirmed", ("test_unmarked", 1): "measurement"}
    assert calls["test_accuracy", 2]["result"] == {"name": "trend", "slope": -0.5}
    replay = calls["test_holds", 2]["replay"]
    assert replay == ("pytest 'test_suite.py::test_holds' --dpcheck-seed 7 -p no:randomly "
                      "--dpcheck-alpha 0.005")
    # The replay command reproduces the test's records exactly.
    again = suite.runpytest(*shlex.split(replay)[1:], "-p", "no:cacheprovider",
                            "--dpcheck-report", "replay", "--dpcheck-formats", "json")
    again.assert_outcomes(passed=1)
    assert untimed(document(suite.path / "replay")["records"]) == untimed(
        [r for r in a["records"] if r["nodeid"].endswith("::test_holds")])
    assert a["summary"] == {"tests": 5, "passed": 5, "failed": 0, "unfinished": 0,
                            "violations": 0, "expected_violations": 1, "errata": 1,
                            "missed": 0, "measurements": 2}
    assert len(a["holm"]) == 5
    assert a["catalog"]["coverage"]["900"]["tested"] == 3
    assert a["catalog"]["coverage"]["900"]["asymptotic"] == 1
    parallel.stdout.fnmatch_lines([
        "dpcheck: seed=7, alpha_family=0.02, scale=1, sequential=on, report=*parallel",
        "*family alpha=0.02 over 4 claim test(s): per-test alpha=0.005*",
        "1 expected violation(s) found, 1 erratum record(s) confirmed, 4 claim check(s) not "
        "refuted (details in the report)",
        "catalogue (*, 1 papers): tested 3, erratum 1, asymptotic 1 (dpcheck claims shows them "
        "per paper)",
        "PASS: 5 of 5 tests passed, no unexpected violation",
        "report: *parallel*seed7*",
    ])


def test_seeds_random_last_and_report_none(suite):
    # A random root seed makes this test nondeterministic: at the default family alpha 0.01 the
    # suite's borderline accuracy claim (P[|Lap(1)| > 3] = 0.0498 vs beta 0.05) would refute in
    # about 1 run in 700. At alpha 1e-6 a false alarm is a one-in-a-million event, and the
    # expected violations of the suite (true eps 4 and 2 against claims 1) are still certain.
    tiny = ("--dpcheck-alpha", "1e-6")
    first = suite.runpytest(*tiny, "--dpcheck-seed", "random", "--dpcheck-report", "r1",
                            "--dpcheck-formats", "json")
    first.assert_outcomes(passed=5)
    seed = header_seed(first)
    again = suite.runpytest(*tiny, "--dpcheck-seed", "last", "--dpcheck-report", "r2",
                            "--dpcheck-formats", "json")
    assert header_seed(again) == seed
    again.stdout.fnmatch_lines([f"dpcheck: seed={seed} (last), *"])
    other = suite.runpytest(*tiny, "--dpcheck-seed", str(seed + 1), "--dpcheck-report", "r3",
                            "--dpcheck-formats", "json")
    r1, r2, r3 = (document(suite.path / d) for d in ("r1", "r2", "r3"))
    assert r1["root_seed"] == r2["root_seed"] == seed
    assert untimed(r1["records"]) == untimed(r2["records"])
    eps = lambda doc: [r["result"].get("epsilon_lower") for r in doc["records"]]  # noqa: E731
    assert eps(r1) != eps(r3)
    assert r3["root_seed"] == seed + 1 and other.ret == 0

    quiet = suite.runpytest(*tiny, "--dpcheck-seed", "last", "--dpcheck-report", "none")
    quiet.assert_outcomes(passed=5)
    assert header_seed(quiet) == seed + 1
    quiet.stdout.fnmatch_lines(["report: disabled (--dpcheck-report none)"])
    assert sorted(p.name for p in suite.path.iterdir() if p.name.startswith("r")) == [
        "r1", "r2", "r3"]


VIOLATIONS = LAPLACE_HEADER + '''

@pytest.mark.claim(paper="900", ref="Theorem 1")
def test_unexpected_violation(dp_audit):
    dp_audit(laplace(0.25), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)


@pytest.mark.claim(paper="900", ref="Theorem 2", expect="violation")
def test_expected_violation_found(dp_audit):
    r = dp_audit(laplace(0.25), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)
    assert r.violation


@pytest.mark.claim(paper="900", ref="Theorem 3", expect="violation")
def test_expected_violation_missed(dp_audit):
    dp_audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)


@pytest.mark.claim(paper="900", ref="Lemma 4", kind="utility")
def test_inaccurate(dp_accuracy):
    dp_accuracy(lambda size, rng: np.abs(rng.laplace(0.0, 1.0, size)), alpha=1.0, beta=0.05)
'''


def test_violations_and_expectations_through_the_installed_entry_point(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    pytester.makeini(INI)
    pytester.makepyfile(test_v=VIOLATIONS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--dpcheck-report", "none",
                                           "--dpcheck-scale", "0.5")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["plugins:*dpcheck*"])  # loaded through the pytest11 entry point
    result.stdout.fnmatch_lines(["dpcheck: seed=0, alpha_family=0.01, scale=0.5, sequential=on, report=none"])
    result.stdout.fnmatch_lines([
        "E   *PrivacyViolation: laplace_0.25: claim 1-DP -> VIOLATION*",
        "E *witness: S = *",
        "E *replay: pytest 'test_v.py::test_unexpected_violation' --dpcheck-seed 0 "
        "-p no:randomly --dpcheck-alpha 0.0025 --dpcheck-scale 0.5",
        "*- dpcheck -*",
        "call 1 audit [[]violation[]] alpha=*samples=10000",
    ])
    result.stdout.fnmatch_lines([
        "expected a violation of 900 Theorem 3: 1-DP but found none: epsilon_lower=0.* ≤ ε=1 *",
    ])
    result.stdout.fnmatch_lines(["E   *AccuracyViolation: *P[[]error > 1[]] <= 0.05 -> VIOLATION*"])
    result.stdout.fnmatch_lines([
        "UNEXPECTED VIOLATIONS (2):",
        "  test_v.py::test_inaccurate [[]call 1[]] (900 Lemma 4): *failures*",
        "  test_v.py::test_unexpected_violation [[]call 1[]] (900 Theorem 1): S = *",
        "MISSED violations (expected, none found) (1):",
    ])
    assert not (pytester.path / "reports").exists()


CASES = {
    "unknown status": (
        '[[claim]]\npaper = "900"\nref = "Theorem 1"\nkind = "privacy"\nstatus = "proved"\n'
        'tests = ["test_c.py::test_a"]\n',
        "*dpcheck catalogue: *claim #1 (900 Theorem 1): status='proved' must be one of*"),
    "missing test": (
        '[[claim]]\npaper = "900"\nref = "Theorem 1"\nkind = "privacy"\nstatus = "tested"\n'
        'tests = ["test_c.py::test_a", "test_c.py::test_gone"]\n',
        "*900 Theorem 1: test_c.py::test_gone not found*"),
    "marker without entry": (
        '[[claim]]\npaper = "900"\nref = "Theorem 1"\nkind = "privacy"\nstatus = "tested"\n'
        'tests = ["test_c.py::test_a"]\n',
        "*test_c.py::test_b: claim(paper='900', ref='Theorem 9') matches no entry of the "
        "catalogue*catalog.toml"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_catalogue_errors_are_usage_errors(pytester, case):
    catalog, message = CASES[case]
    pytester.makeini(INI)
    pytester.mkdir("properties").joinpath("catalog.toml").write_text(catalog, encoding="utf-8")
    pytester.makepyfile(test_c="""
        import pytest

        @pytest.mark.claim(paper="900", ref="Theorem 1")
        def test_a():
            pass

        @pytest.mark.claim(paper="900", ref="Theorem 9")
        def test_b():
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_invalid_markers_are_usage_errors_and_collection_errors_on_xdist_workers(pytester):
    pytester.makeini(INI)
    pytester.makepyfile(test_m="""
        import pytest

        @pytest.mark.claim(paper="900", ref="Theorem 1", expect="maybe")
        def test_bad_expect():
            pass

        @pytest.mark.claim("900", "Theorem 2", "privacy", "holds", "extra")
        def test_bad_arguments():
            pass
    """)
    expected = ["*test_m.py::test_bad_expect: claim(expect='maybe') must be one of 'holds', "
                "'violation', 'erratum'",
                "*test_m.py::test_bad_arguments: invalid claim marker arguments*"]
    serial = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none")
    assert serial.ret == pytest.ExitCode.USAGE_ERROR
    serial.stderr.fnmatch_lines(expected)
    parallel = pytester.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none",
                                  "-n", "1")
    assert parallel.ret != pytest.ExitCode.OK
    assert "INTERNALERROR" not in parallel.stdout.str()
    parallel.stdout.fnmatch_lines(expected)
    assert "passed" not in parallel.stdout.str()


@pytest.mark.parametrize("args, message", [
    (["--dpcheck-seed", "-3"], "*--dpcheck-seed*'-3' must be an int >= 0, 'last' or 'random'*"),
    (["--dpcheck-alpha", "1.5"], "*--dpcheck-alpha*'1.5' must be a number in (0, 1)*"),
    (["--dpcheck-scale", "0"], "*--dpcheck-scale*'0' must be a finite number > 0*"),
    (["--dpcheck-formats", "json,pdf"], "*--dpcheck-formats*must be a comma-separated subset*"),
    (["--dpcheck-seed", "last", "-p", "no:cacheprovider"], "*--dpcheck-seed=last needs*cache*"),
])
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_o="def test_a():\n    pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


COUNTEREXAMPLES = '''
import pytest

@pytest.mark.claim(kind="combinatorial", expect="erratum")
def test_erratum_with_witness(dp_counterexample):
    assert not 0 < 0   # the printed strict inequality fails on the witness
    dp_counterexample("strict_inequality", {"lhs": 0, "rhs": 0})

@pytest.mark.claim(kind="combinatorial", expect="erratum")
def test_erratum_without_witness(dp_counterexample):
    assert 1 < 2

@pytest.mark.claim(kind="combinatorial")
def test_counterexample_in_a_holding_claim(dp_counterexample):
    dp_counterexample("surprise", {"n": 3})
'''


def test_deterministic_counterexamples(pytester):
    """dp_counterexample satisfies an erratum test, its absence fails one, and recording one in
    an expect="holds" test fails that test; none of this spends α."""
    pytester.makepyfile(test_cx=COUNTEREXAMPLES)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                "--dpcheck-report", "out")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "expected a violation" in out and "counterexample surprise" in out
    doc = json.loads(next((pytester.path / "out").glob("*/audit.json")).read_text())
    cx = [r for r in doc["records"] if r["type"] == "counterexample"]
    assert {r["verdict"] for r in cx} == {"erratum-confirmed", "violation"}
    assert all(r["alpha"] is None for r in cx)


SEARCH = '''
import numpy as np
import pytest
import dpcheck

def leaky(data, size, rng):   # private except on one ordered dataset
    if list(data) == [1, 0, 1]:
        return np.full(size, 9.0)
    return float(np.sum(data)) + np.round(rng.laplace(0.0, 1.0, size) * 2.0**20) / 2.0**20

@pytest.mark.claim(kind="privacy", expect="violation")
def test_search_finds_it(dp_search):
    s = dp_search(leaky, dpcheck.PureDP(1.0), samples=20_000, relation=dpcheck.AddRemove(),
                  domain=[0, 1], explore_samples=2_000, enumerate_max_records=3)
    assert s.found
'''


def test_search_results_render_into_the_report(pytester):
    """dp_search records the confirming audit with the search cost and pair in the report."""
    pytester.makepyfile(test_s=SEARCH)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                "--dpcheck-report", "out")
    result.assert_outcomes(passed=1)
    doc = json.loads(next((pytester.path / "out").glob("*/audit.json")).read_text())
    (record,) = doc["records"]
    assert record["type"] == "audit" and record["verdict"] == "expected-violation"
    search = record["result"]["search"]
    assert search["found"] and search["calls"] > 0 and "dpcheck.audit(" in search["replay"]
    assert [1, 0, 1] in search["pair"]
    md = next((pytester.path / "out").glob("*/audit.md")).read_text()
    assert "test_search_finds_it" in md and "counterexample search" in md


STOP_WITHIN = LAPLACE_HEADER + '''

@pytest.mark.claim(paper="900", ref="Theorem 5")
def test_loose_claim(dp_audit):
    r = dp_audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), samples=1_000_000,
                 float_features=False, stop_within=0.1)
    print("SAMPLES", r.samples, "STAGES", None if r.stages is None else len(r.stages))
'''


@pytest.mark.parametrize("sequential, stopped", [("on", True), ("off", False)])
def test_dp_audit_passes_stop_within_to_sequential_audits_only(pytester, sequential, stopped):
    """``dp_audit(..., stop_within=τ)`` stops a loose claim at a pilot when the session is
    sequential, and is ignored (no error) under ``--dpcheck-sequential off``."""
    pytester.makepyfile(test_sw=STOP_WITHIN)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-s",
                                "--dpcheck-report", "none", "--dpcheck-sequential", sequential)
    result.assert_outcomes(passed=1)
    line = next(x for x in result.stdout.lines if "SAMPLES" in x)
    samples = int(line.split("SAMPLES")[1].split()[0])
    assert (samples <= 100_000) == stopped
    assert line.endswith("None") == (not stopped)


BAD_STOP_WITHIN = LAPLACE_HEADER + '''

def test_bad_stop_within(dp_audit):
    dp_audit(laplace(1.0), [1, 0, 1], [1, 0], dpcheck.PureDP(2.0), samples=50_000,
             float_features=False, stop_within=-1.0)
'''


@pytest.mark.parametrize("sequential", ["on", "off"])
def test_dp_audit_checks_stop_within_whatever_the_session(pytester, sequential):
    """A bad ``stop_within`` fails the test under ``--dpcheck-sequential off`` too (it was
    dropped unchecked there, so a test's validity depended on a session flag)."""
    pytester.makepyfile(test_bad_sw=BAD_STOP_WITHIN)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                                "--dpcheck-report", "none", "--dpcheck-sequential", sequential)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*stop_within=-1.0 must be > 0*"])

