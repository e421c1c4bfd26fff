"""The controller side of the pytest plugin: the run document, the terminal summary and the
report, written once from the records the workers attach to their test reports.
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpcheck.plugin.records import headline, merge_outcome, witness_line

__all__ = ["build_document", "summary_lines", "kill_matrix", "Controller"]


def _git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def _environment(root: Path, workers: int) -> dict[str, Any]:
    import numpy
    import scipy

    from dpcheck.internal.version import __version__

    return {"python": platform.python_version(), "platform": platform.platform(),
            "numpy": numpy.__version__, "scipy": scipy.__version__, "dpcheck": __version__,
            "xdist_workers": workers, "git_commit": _git_commit(root)}


def _interruption(session: Any, tests: Mapping[str, dict[str, Any]]) -> str | None:
    """Why the session did not run to its end (``None``: it did): Ctrl-C, ``-x`` /
    ``--maxfail``, or tests that started and never finished."""
    import pytest

    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted (KeyboardInterrupt)"
    if getattr(session, "shouldstop", False):
        return f"stopped early: {session.shouldstop}"
    if getattr(session, "shouldfail", False):
        return f"stopped early: {session.shouldfail}"
    unfinished = sum(t["outcome"] == "unfinished" for t in tests.values())
    collected = getattr(session, "testscollected", 0) or 0
    if unfinished:
        return f"{unfinished} test(s) started and did not finish"
    if collected and len(tests) < collected:
        return f"{collected - len(tests)} of {collected} collected test(s) did not run"
    return None


def build_document(*, root_seed: int, alpha_family: float, m: int, scale: float,
                   sequential: bool = True,
                   tests: Mapping[str, dict[str, Any]], records: list[dict[str, Any]],
                   catalog: dict[str, Any] | None, root: Path, workers: int,
                   interrupted: str | None = None) -> dict[str, Any]:
    """The run document handed to :func:`dpcheck.report.write_run` (schema_version 2,
    ``dpcheck/schemas/run.schema.json``)."""
    from dpcheck.stats import holm

    now = _dt.datetime.now(_dt.timezone.utc)
    records = sorted(records, key=lambda r: (r["nodeid"], r["call"]))
    audits = [r for r in records if r["type"] == "audit"]
    adjusted = holm([r["result"]["p_value"] for r in audits]) if audits else []
    verdicts = [r["verdict"] for r in records]
    test_list = [tests[k] for k in sorted(tests)]
    return {
        "schema_version": 2,
        "run_id": f"{now:%Y%m%dT%H%M%SZ}-seed{root_seed}",
        "created": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "root_seed": root_seed, "alpha_family": alpha_family, "n_claim_tests": m,
        "alpha_per_test": alpha_family / m if m else alpha_family, "scale": scale,
        "sequential": sequential,
        "command": " ".join(sys.argv),
        "environment": _environment(root, workers),
        "tests": test_list,
        "records": records,
        "holm": [{"nodeid": r["nodeid"], "call": r["call"], "p_value": r["result"]["p_value"],
                  "p_holm": float(p)} for r, p in zip(audits, adjusted)],
        "catalog": catalog,
        "kill_matrix": kill_matrix(test_list, records),
        "interrupted": interrupted is not None,
        "interruption": interrupted,
        "summary": {
            "tests": len(test_list),
            "passed": sum(t["outcome"] == "passed" for t in test_list),
            "failed": sum(t["outcome"] in ("failed", "error") for t in test_list),
            "unfinished": sum(t["outcome"] == "unfinished" for t in test_list),
            "violations": verdicts.count("violation"),
            "expected_violations": verdicts.count("expected-violation"),
            "errata": verdicts.count("erratum-confirmed"),
            "missed": verdicts.count("missed-violation"),
            "measurements": verdicts.count("measurement"),
        },
    }


def summary_lines(records: list[dict[str, Any]], *, alpha_family: float, m: int,
                  catalog: dict[str, Any] | None, report: str) -> list[str]:
    """The compact terminal summary."""
    per_test = alpha_family / m if m else alpha_family
    lines = [f"family alpha={alpha_family:g} over {m} claim test(s): per-test alpha="
             f"{per_test:.3g}; call i of a test uses alpha_test*6/(pi^2 i^2)"]
    records = sorted(records, key=lambda r: (r["nodeid"], r["call"]))
    groups = [("UNEXPECTED VIOLATIONS", "violation", True),
              ("MISSED violations (expected, none found)", "missed-violation", False)]
    found = [sum(r["verdict"] == k for r in records)
             for k in ("expected-violation", "erratum-confirmed", "not-refuted")]
    lines.append(f"{found[0]} expected violation(s) found, {found[1]} erratum record(s) "
                 f"confirmed, {found[2]} claim check(s) not refuted (details in the report)")
    for title, key, witness in groups:
        hits = [r for r in records if r["verdict"] == key]
        if not hits:
            continue
        lines.append(f"{title} ({len(hits)}):")
        for r in hits:
            where = " ".join(x for x in (r["paper"], r["ref"]) if x)
            tail = witness_line(r) if witness else headline(r)
            lines.append(f"  {r['nodeid']} [call {r['call']}]" + (f" ({where})" if where else "")
                         + f": {tail}")
    if catalog is not None:
        totals: dict[str, int] = {}
        for counts in catalog["coverage"].values():
            for status, n in counts.items():
                totals[status] = totals.get(status, 0) + n
        lines.append(f"catalogue ({catalog['path']}, {len(catalog['coverage'])} papers): "
                     + ", ".join(f"{s} {n}" for s, n in totals.items() if n)
                     + " (dpcheck claims shows them per paper)")
    lines.append(f"report: {report}")
    return lines


def _evidence(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The strongest evidence among a test's records: ε_lower of an audit, or the failure rate
    of an accuracy check, or the deviation/assertion of a counterexample."""
    best: dict[str, Any] = {}
    for r in records:
        res = r.get("result") or {}
        if r["type"] == "audit" and res.get("epsilon_lower") is not None:
            claim = res.get("claim") or {}
            if "epsilon_lower" not in best or res["epsilon_lower"] > best["epsilon_lower"]:
                best.update(epsilon_lower=res["epsilon_lower"],
                            claimed_epsilon=claim.get("epsilon"))
        elif r["type"] == "accuracy" and "failure_rate" in res:
            best.setdefault("failure_rate", res["failure_rate"])
            best.setdefault("beta", res.get("beta"))
        elif r["type"] == "check":
            best.setdefault("check", res.get("check"))
        elif r["type"] == "counterexample":
            for key in ("deviation", "assertion", "name"):
                if key in res:
                    best.setdefault(key, res[key])
    return best


def kill_matrix(tests: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per mutant case: claim (paper, ref), mutant, test, ``caught`` / ``survived`` /
    ``error`` and the evidence (ε_lower vs the claim, failure rate, or the failed assertion)."""
    by_test: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_test.setdefault(r["nodeid"], []).append(r)
    rows = []
    for t in tests:
        if not t.get("mutant"):
            continue
        outcome = {"passed": "caught", "failed": "survived"}.get(t["outcome"], t["outcome"])
        if outcome == "survived" and "survived" not in (t.get("message") or ""):
            outcome = "error"  # failed for another reason than a missed violation
        rows.append({"paper": t.get("paper"), "ref": t.get("ref"), "mutant": t["mutant"],
                     "nodeid": t["nodeid"], "outcome": outcome,
                     **_evidence(by_test.get(t["nodeid"], []))})
    return rows


class Controller:
    """Controller-only hooks: gather records, cache the seed, write the report, summarise.

    ``state`` is the plugin's per-run state (seed, α, paths, catalogue entries, ``m``).
    """

    def __init__(self, config: Any, state: Any) -> None:
        self.config = config
        self.state = state
        self.tests: dict[str, dict[str, Any]] = {}
        self.records: list[dict[str, Any]] = []
        self.run_dir: str | None = None
        self.write_error: str | None = None
        self.interrupted: str | None = None
        self.pruned = 0

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Every test of the session counts in the run's verdict, as it does for pytest; tests
        that use dpcheck also bring their claim and records."""
        info = getattr(report, "dpcheck_test", None)
        if info is not None and self.state.m is None:
            self.state.m = info.get("n_claim_tests")
        test = self.tests.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "outcome": "unfinished", "duration": 0.0,
            **{k: (info or {}).get(k) for k in ("paper", "ref", "kind", "expect", "mutant")},
            "dpcheck": info is not None, "message": ""})
        if info is not None and not test["dpcheck"]:  # a later phase brought the dpcheck info
            test.update({k: info.get(k) for k in ("paper", "ref", "kind", "expect", "mutant")},
                        dpcheck=True)
        merge_outcome(test, report)
        self.records.extend(getattr(report, "dpcheck_records", None) or [])

    def _catalog(self) -> dict[str, Any] | None:
        from dpcheck.catalog import coverage, mutant_coverage

        entries = self.state.entries
        if entries is None:
            return None
        path, root = self.state.catalog_path, self.config.rootpath
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        return {"path": shown.as_posix(), "entries": [e.to_dict() for e in entries],
                "coverage": coverage(entries), "mutant_coverage": mutant_coverage(entries)}

    def pytest_sessionfinish(self, session: Any) -> None:
        import pytest

        state = self.state
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            cache.set("dpcheck/seed", state.root_seed)
        self.interrupted = _interruption(session, self.tests)
        if state.report_dir is None or not self.records:
            return
        document = build_document(
            root_seed=state.root_seed, alpha_family=state.alpha_family, m=state.m or 0,
            scale=state.scale, sequential=state.sequential, tests=self.tests, records=self.records, catalog=self._catalog(),
            root=self.config.rootpath, workers=len(state.nodes),
            interrupted=self.interrupted)
        try:
            from dpcheck.report import write_run

            from dpcheck.report import prune_runs

            self.run_dir = str(write_run(document, directory=state.report_dir,
                                         formats=state.formats,
                                         latest=self.interrupted is None))
            self.pruned = len(prune_runs(state.report_dir, state.keep))
        except Exception as exc:  # noqa: BLE001 - shown in the summary, fails the run
            self.write_error = f"{type(exc).__name__}: {exc}"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.records and not any(t["dpcheck"] for t in self.tests.values()):
            return  # a session that never used dpcheck gets no dpcheck summary
        tr, state = terminalreporter, self.state
        tr.write_sep("=", "dpcheck")
        if self.run_dir:
            html = Path(self.run_dir).resolve() / "audit.html"
            where = html.as_uri() if html.is_file() else str(Path(self.run_dir).resolve())
            if self.interrupted is not None:
                where += " (not made reports/latest: the run did not complete)"
        else:
            where = ("disabled (--dpcheck-report none)" if state.report_dir is None
                     else "not written")
        lines = summary_lines(self.records, alpha_family=state.alpha_family, m=state.m or 0,
                              catalog=self._catalog(), report=where)
        for line in lines[:-1]:
            tr.write_line(line)
        kills = kill_matrix(list(self.tests.values()), self.records)
        if kills:
            counts = {k: sum(r["outcome"] == k for r in kills) for k in ("caught", "survived",
                                                                         "error")}
            tr.write_line(f"mutants: {counts['caught']} caught, {counts['survived']} survived, "
                          f"{counts['error']} errored, of {len(kills)} mutant case(s) over "
                          f"{len({(r['paper'], r['ref']) for r in kills})} claim(s)")
            for r in kills:
                if r["outcome"] != "caught":
                    tr.write_line(f"  {r['outcome'].upper()}: {r['nodeid']}", red=True)
        if self.write_error:
            tr.write_line(f"dpcheck: writing the report failed: {self.write_error}", red=True)
        from dpcheck.report.overview import outcome

        verdict = outcome({"tests": list(self.tests.values()), "records": self.records,
                           "kill_matrix": kills, "interrupted": self.interrupted is not None,
                           "interruption": self.interrupted})
        tr.write_line(verdict.headline, red=verdict.failed, green=not verdict.failed, bold=True)
        tr.write_line(lines[-1])  # the report's file:// URL, last
