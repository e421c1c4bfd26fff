"""The command line for CI: compare gates (--fail-on, --json, --common-only, seed noise),
1e6-style sample counts, errors that name flags, the small-sample warning, claims --list."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpcheck
from dpcheck.cli import count_arg, main, max_certifiable_epsilon
from dpcheck.report import write_run
from dpcheck.report.compare import compare_runs


def _doc(run_id: str, *, scale: float, verdict: str, seed: int = 0) -> dict:
    r = dpcheck.audit(lambda d, size, rng: np.sum(d) + rng.laplace(0.0, scale, size),
                      [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000, seed=seed,
                      float_features=False)  # values only: floating-point bits are not the point
    nodeid = "properties/test_zoo.py::test_laplace"
    return {"schema_version": 2, "run_id": run_id, "created": "2025-01-01T00:00:00Z",
            "root_seed": seed, "alpha_family": 0.05, "n_claim_tests": 1, "alpha_per_test": 0.05,
            "scale": 1.0, "command": "pytest", "environment": {},
            "tests": [{"nodeid": nodeid, "outcome": "passed", "duration": 0.1}],
            "records": [{"nodeid": nodeid, "call": 1, "type": "audit", "paper": "003",
                         "ref": "Theorem 2.4", "kind": "privacy", "expect": "holds",
                         "alpha": 0.05, "verdict": verdict, "replay": f"pytest '{nodeid}'",
                         "result": r.to_dict()}],
            "holm": [], "catalog": None, "summary": {"tests": 1}}


def test_seed_noise_is_not_a_regression_but_a_real_leak_is():
    a = _doc("a", scale=1.0, verdict="not-refuted", seed=0)
    noise = _doc("b", scale=1.0, verdict="not-refuted", seed=1)  # same mechanism, new seed
    leak = _doc("c", scale=0.3, verdict="violation", seed=1)    # much less noise
    same = compare_runs(a, noise, fail_on="any")
    eps = [c for c in same["changes"] if c["category"] == "epsilon"]
    assert eps and not eps[0]["significant"] and not same["failed"]
    worse = compare_runs(a, leak, fail_on="regression")
    eps = [c for c in worse["changes"] if c["category"] == "epsilon"]
    assert eps[0]["significant"] and eps[0]["regression"] and worse["failed"]
    assert compare_runs(a, leak, fail_on="violation")["reasons"] == ["1 new violation(s)"]


def test_compare_cli_gates_json_and_common_only(tmp_path, capsys):
    from dpcheck.report.strict_json import schema_errors

    a = write_run(_doc("run-a", scale=1.0, verdict="not-refuted"), directory=tmp_path,
                  formats=("json",))
    doc_b = _doc("run-b", scale=0.3, verdict="violation", seed=1)
    doc_b["tests"].append({"nodeid": "properties/test_new.py::test_x", "outcome": "failed"})
    b = write_run(doc_b, directory=tmp_path, formats=("json",))
    assert main(["report", "compare", str(a), str(b)]) == 1  # default: --fail-on violation
    assert "FAIL" in capsys.readouterr().err
    assert main(["report", "compare", str(a), str(b), "--fail-on", "none"]) == 0
    capsys.readouterr()
    assert main(["report", "compare", str(a), str(b), "--fail-on", ""]) == 2  # not "none"
    assert "--fail-on='' must name at least one of" in capsys.readouterr().err
    assert main(["report", "compare", str(a), str(b), "--json", "--fail-on", "failure"]) == 1
    out = json.loads(capsys.readouterr().out,
                     parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
    assert out["schema_version"] == 1 and out["reasons"] == ["1 test(s) newly failing"]
    pytest.importorskip("jsonschema")
    assert schema_errors(out, "compare") == []
    assert main(["report", "compare", str(a), str(b), "--json", "--fail-on", "failure",
                 "--common-only"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not any(c["category"] == "test-added" for c in out["changes"])
    assert main(["report", "compare", str(a), str(b), "--fail-on", "bogus"]) == 2
    assert "--fail-on" in capsys.readouterr().err


@pytest.mark.parametrize("text, value", [("1000000", 10**6), ("1_000_000", 10**6),
                                         ("1e6", 10**6), ("2.5e5", 250_000)])
def test_sample_counts_accept_scientific_notation(text, value):
    assert count_arg(text) == value


def test_errors_name_flags_and_small_samples_warn(tmp_path, capsys):
    mechs = tmp_path / "m.py"
    mechs.write_text("import numpy as np\ndef lap(data, size, rng):\n"
                     "    return sum(data) + rng.laplace(0, 1.0, size)\n", encoding="utf-8")
    base = ["audit", f"{mechs}:lap", "--data", "[1]", "--data-prime", "[]", "--claim", "pure:1",
            "--no-float-features"]
    assert main([*base, "--samples", "1.5"]) == 2
    assert "argument --samples" in capsys.readouterr().err
    assert main([*base, "--alpha", "2"]) == 2
    assert "--alpha=2.0" in capsys.readouterr().err
    assert main([*base, "--samples", "1e3"]) == 0
    err = capsys.readouterr().err
    assert "warning: --samples 1000 can certify at most" in err
    assert max_certifiable_epsilon(10**6, 0.05) == pytest.approx(12.1, abs=0.1)
    # a claim the small budget refutes anyway gets no warning that it could not
    assert main([*base[:-2], "pure:0.05", "--no-float-features", "--samples", "3e3"]) == 1
    assert "warning" not in capsys.readouterr().err
    # the parser's minimum is the audit's (it said >= 1, then the audit refused 1)
    assert main([*base, "--samples", "1"]) == 2
    assert "'1' must be a whole number >= 2" in capsys.readouterr().err
    # flags, not Python names, in the audit's own refusals
    assert main([*base, "--stop-within", "0.1"]) == 2
    assert "--stop-within=0.1 needs --sequential" in capsys.readouterr().err
    assert main([*base, "--sequential", "--stop-within", "0.6"]) == 2
    assert "--stop-within=0.6 must be <= epsilon/2=0.5" in capsys.readouterr().err


def test_claims_list_filters_by_status_and_paper(tmp_path, capsys):
    catalog = tmp_path / "catalog.toml"
    catalog.write_text('[[claim]]\npaper = "003"\nref = "Theorem 2.4"\nkind = "privacy"\n'
                       'status = "tested"\ntests = ["properties/test_x.py::test_a"]\n\n'
                       '[[claim]]\npaper = "001"\nref = "Lemma 3.1"\nkind = "utility"\n'
                       'status = "planned"\nnote = "issue 12"\n', encoding="utf-8")
    assert main(["claims", "--catalog", str(catalog), "--list", "--status", "planned"]) == 0
    out = capsys.readouterr().out
    assert "Lemma 3.1" in out and "issue 12" in out and "Theorem 2.4" not in out
    assert main(["claims", "--catalog", str(catalog), "--list", "--paper", "003",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and [c["ref"] for c in doc["claims"]] == ["Theorem 2.4"]
    assert main(["claims", "--catalog", str(catalog), "--list", "--status", "bogus"]) == 2
    capsys.readouterr()
    assert main(["claims", "--catalog", str(catalog), "--list", "--paper", "999"]) == 2
    assert "--paper='999' must be one of 001, 003" in capsys.readouterr().err
