"""Helpers of :mod:`dpcheck.pytest_plugin`: option values, records, verdicts, test outcomes, the
run document and the controller-side hooks.

Records are plain JSON-safe dicts, so the same code runs on xdist workers (which build them) and
on the controller (which assembles the report from deserialised test reports).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["EXPECTS", "FORMATS", "seed_arg", "alpha_arg", "scale_arg", "formats_arg", "spend",
           "replay_command", "verdict", "finalise", "section_text", "missed_message",
           "short_message", "merge_outcome", "build_document", "summary_lines", "Controller",
           "error_paragraph", "junit_properties"]

EXPECTS = ("holds", "violation", "erratum")
FORMATS = ("json", "md", "html")
_FOUND = {"violation": "expected-violation", "erratum": "erratum-confirmed"}


def seed_arg(text: str) -> int | str:
    """``--dpcheck-seed``: an int ≥ 0, ``last`` or ``random``."""
    low = text.strip().lower()
    if low in ("last", "random"):
        return low
    try:
        value = int(low)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be an int >= 0, 'last' or 'random'")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def alpha_arg(text: str) -> float:
    """``--dpcheck-alpha``: a level in (0, 1)."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number in (0, 1)")
    return value


def scale_arg(text: str) -> float:
    """``--dpcheck-scale``: a finite factor > 0."""
    value = _number(text)
    if not (value > 0.0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def formats_arg(text: str) -> tuple[str, ...]:
    """``--dpcheck-formats``: a comma-separated subset of :data:`FORMATS`."""
    items = tuple(dict.fromkeys(s.strip().lower() for s in text.split(",") if s.strip()))
    if not items or any(s not in FORMATS for s in items):
        raise argparse.ArgumentTypeError(f"{text!r} must be a comma-separated subset of "
                                         + ",".join(FORMATS))
    return items


def spend(alpha_test: float, i: int) -> float:
    """α of the ``i``-th (1-based) statistical call of a test: ``alpha_test·6/(π² i²)``."""
    return alpha_test * 6.0 / (math.pi ** 2 * i * i)


def replay_command(nodeid: str, root_seed: int, *, alpha_test: float, scale: float) -> str:
    """One shell line that re-runs ``nodeid`` alone with the same streams and the same α.

    Run alone, the test is a family of one, so ``--dpcheck-alpha`` is set to this run's
    per-test α (when it differs from the default): the replay then reproduces the records
    bit for bit.
    """
    quoted = "'" + nodeid.replace("'", "'\"'\"'") + "'"
    cmd = f"pytest {quoted} --dpcheck-seed {root_seed} -p no:randomly"
    if alpha_test != 0.01:
        cmd += f" --dpcheck-alpha {alpha_test!r}"
    if scale != 1.0:
        cmd += f" --dpcheck-scale {scale!r}"
    return cmd


def verdict(expect: str, violation: bool) -> str:
    """The per-record verdict before the test's other calls are known."""
    if expect == "holds":
        return "violation" if violation else "not-refuted"
    return _FOUND[expect] if violation else "missed-violation"


def finalise(records: list[dict[str, Any]]) -> None:
    """Settle the verdicts of a finished test's records (in place).

    For a test expecting a violation, a non-violating call is a ``missed-violation`` only when no
    call of the test found one; otherwise it is ``not-refuted`` (the claim was not refuted on that
    pair, and the test's expectation was met by another call).
    """
    found = any(r["result"].get("violation") for r in records if r["type"] != "measurement")
    for r in records:
        if r["type"] != "measurement" and r["expect"] != "holds" and not r["result"]["violation"]:
            r["verdict"] = "not-refuted" if found else "missed-violation"


def _headline(record: Mapping[str, Any]) -> str:
    res = record["result"]
    if record["type"] == "audit":
        claim = res.get("claim") or {}
        eps = claim.get("epsilon", "?")
        return (f"{res.get('mechanism')}: epsilon_lower={res['epsilon_lower']:.4g} vs "
                f"epsilon={eps}, p={res['p_value']:.3g}, samples={res['samples']}")
    if record["type"] == "accuracy":
        return (f"{res.get('name')}: failures {res['failures']}/{res['trials']} "
                f"(upper {res['failure_upper']:.4g}) vs beta={res['beta']:g}, "
                f"p={res['p_value']:.3g}")
    return ", ".join(f"{k}={v}" for k, v in res.items())


def section_text(records: Iterable[Mapping[str, Any]]) -> str:
    """The ``dpcheck`` report section: one line per record, then the replay command."""
    lines, replay = [], ""
    for r in records:
        alpha = "" if r["alpha"] is None else f" alpha={r['alpha']:.3g}"
        lines.append(f"call {r['call']} {r['type']} [{r['verdict']}]{alpha}: {_headline(r)}")
        replay = r["replay"]
    return "\n".join(lines + [f"replay: {replay}"])


def missed_message(info: Mapping[str, Any], results: list[Any],
                   records: list[dict[str, Any]]) -> str:
    """Why a test that expects a violation fails: the best evidence it found instead."""
    from .accuracy import AccuracyResult
    from .results import AuditResult

    what = " ".join(x for x in (info["paper"], info["ref"]) if x)
    what = f"{what}: " if what else ""
    audits = [x for x in results if isinstance(x, AuditResult)]
    checks = [x for x in results if isinstance(x, AccuracyResult)]
    if audits:
        best = max(audits, key=lambda x: x.epsilon_lower - x.claim.epsilon)
        text = (f"expected a violation of {what}{best.claim.describe()} but found none: "
                f"epsilon_lower={best.epsilon_lower:.4g} ≤ ε={best.claim.epsilon:g} "
                f"(best of {len(audits)} audit(s))")
    elif checks:
        best = min(checks, key=lambda x: x.p_value)
        text = (f"expected a violation of {what}P[error > {best.alpha:g}] <= {best.beta:g} but "
                f"found none: failures {best.failures}/{best.trials}, p-value="
                f"{best.p_value:.3g} > {best.confidence:.3g}")
    else:
        text = f"expected a violation of {what or 'the claim '}but no dp_audit/dp_accuracy call ran"
    return text + (f"\nreplay: {records[-1]['replay']}" if records else "")


def _user_frames(exc: BaseException, limit: int = 3) -> list[str]:
    """``file:line in function`` of the innermost frames outside dpcheck, numpy and the
    standard library (the code the test author wrote)."""
    import os
    import traceback

    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(here)
              and "site-packages" not in f.filename and "/lib/python" not in f.filename
              and not f.filename.startswith("<frozen")]
    cwd = os.getcwd()
    return [f"{os.path.relpath(f.filename, cwd) if f.filename.startswith(cwd) else f.filename}:"
            f"{f.lineno} in {f.name}" for f in frames[-limit:]]


def error_paragraph(fixture: str, call: int, nodeid: str, info: Mapping[str, Any],
                    subject: str, claim: str, exc: BaseException, replay: str) -> str:
    """One paragraph for a dpcheck call that raised: what was checked, what raised where (frames
    of the test author's code only), and the replay command. Shown with ``pytrace=False``."""
    from .errors import InvalidArgument

    cause = exc.__cause__ if isinstance(exc, InvalidArgument) and exc.__cause__ else exc
    where = " ".join(x for x in (info.get("paper"), info.get("ref")) if x)
    head = f"{fixture} (call {call}"
    head += f", {where}" if where else ""
    head += f", claim {claim})" if claim else ")"
    if cause is exc and isinstance(exc, InvalidArgument):
        text = f"{head}: invalid argument: {exc}"
    else:
        text = f"{head}: {subject} raised {type(cause).__name__}: {cause}"
    frames = _user_frames(cause)
    if frames:
        text += "\n  " + "\n  ".join(f"at {f}" for f in frames)
    return (text + f"\nNo result was recorded for this call; the test stops here."
            f"\nreplay: {replay}")


def junit_properties(info: Mapping[str, Any],
                     records: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """JUnit XML ``<property>`` pairs of a test (``record_property`` style): the claim, the
    mutant, and per dpcheck call its verdict, claim and key bound."""
    out: list[tuple[str, str]] = []
    if info.get("paper"):
        out.append(("dpcheck.claim", f"{info.get('paper')} {info.get('ref') or ''}".strip()))
    if info.get("mutant"):
        out.append(("dpcheck.mutant", str(info["mutant"])))
    for r in records:
        key = f"dpcheck.call{r['call']}"
        out.append((f"{key}.verdict", str(r["verdict"])))
        res = r.get("result") or {}
        if r["type"] == "audit":
            claim = res.get("claim") or {}
            out.append((f"{key}.claim", f"epsilon={claim.get('epsilon')}, "
                                         f"delta={claim.get('delta') or 0}"))
            out.append((f"{key}.epsilon_lower", f"{res.get('epsilon_lower'):.6g}"))
        elif r["type"] == "accuracy":
            out.append((f"{key}.claim", f"P[error > {res.get('alpha')}] <= {res.get('beta')}"))
            out.append((f"{key}.failure_rate", f"{res.get('failure_rate'):.6g}"))
    return out


def witness_line(record: Mapping[str, Any]) -> str:
    """The witness of a violating record, or its headline."""
    witness = record["result"].get("witness") if record["type"] == "audit" else None
    return witness["description"] if witness else _headline(record)


def short_message(report: Any, limit: int = 500) -> str:
    """A short failure/skip text of a (possibly deserialised) test report."""
    if getattr(report, "wasxfail", None) is not None and report.skipped:
        return f"xfail: {report.wasxfail}"
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(longrepr, (tuple, list)) and len(longrepr) == 3:
        text = str(longrepr[2])
    else:
        text = str(longrepr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def merge_outcome(test: dict[str, Any], report: Any) -> None:
    """Fold one phase report into the test's entry (outcome, duration, message)."""
    test["duration"] += float(report.duration)
    if report.failed:
        new = "failed" if report.when == "call" else "error"
    elif report.skipped:
        new = "skipped"
    else:
        return
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    if rank[new] > rank[test["outcome"]]:
        test["outcome"] = new
        test["message"] = short_message(report)


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

    from . import __version__

    return {"python": platform.python_version(), "platform": platform.platform(),
            "numpy": numpy.__version__, "scipy": scipy.__version__, "dpcheck": __version__,
            "xdist_workers": workers, "git_commit": _git_commit(root)}


def build_document(*, root_seed: int, alpha_family: float, m: int, scale: float,
                   tests: Mapping[str, dict[str, Any]], records: list[dict[str, Any]],
                   catalog: dict[str, Any] | None, root: Path, workers: int) -> dict[str, Any]:
    """The run document handed to :func:`dpcheck.report.write_run` (schema_version 2,
    ``dpcheck/schemas/run.schema.json``)."""
    from .stats import holm

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
        "command": " ".join(sys.argv),
        "environment": _environment(root, workers),
        "tests": test_list,
        "records": records,
        "holm": [{"nodeid": r["nodeid"], "call": r["call"], "p_value": r["result"]["p_value"],
                  "p_holm": float(p)} for r, p in zip(audits, adjusted)],
        "catalog": catalog,
        "kill_matrix": kill_matrix(test_list, records),
        "summary": {
            "tests": len(test_list),
            "passed": sum(t["outcome"] == "passed" for t in test_list),
            "failed": sum(t["outcome"] in ("failed", "error") for t in test_list),
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
              ("expected violations found", "expected-violation", False),
              ("errata confirmed", "erratum-confirmed", False),
              ("MISSED violations (expected, none found)", "missed-violation", False)]
    for title, key, witness in groups:
        hits = [r for r in records if r["verdict"] == key]
        if not hits:
            continue
        lines.append(f"{title} ({len(hits)}):")
        for r in hits:
            where = " ".join(x for x in (r["paper"], r["ref"]) if x)
            tail = witness_line(r) if witness else _headline(r)
            lines.append(f"  {r['nodeid']} [call {r['call']}]" + (f" ({where})" if where else "")
                         + f": {tail}")
    if catalog is not None:
        lines.append(f"catalogue coverage ({catalog['path']}):")
        for paper, counts in catalog["coverage"].items():
            lines.append(f"  {paper}: " + ", ".join(f"{s} {n}" for s, n in counts.items()))
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

    def pytest_runtest_logreport(self, report: Any) -> None:
        info = getattr(report, "dpcheck_test", None)
        if info is None:
            return
        if self.state.m is None:
            self.state.m = info.get("n_claim_tests")
        test = self.tests.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "outcome": "passed", "duration": 0.0,
            **{k: info.get(k) for k in ("paper", "ref", "kind", "expect", "mutant")},
            "message": ""})
        merge_outcome(test, report)
        self.records.extend(getattr(report, "dpcheck_records", None) or [])

    def _catalog(self) -> dict[str, Any] | None:
        from .catalog import coverage, mutant_coverage

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
        if state.report_dir is None or not self.records:
            return
        document = build_document(
            root_seed=state.root_seed, alpha_family=state.alpha_family, m=state.m or 0,
            scale=state.scale, tests=self.tests, records=self.records, catalog=self._catalog(),
            root=self.config.rootpath, workers=len(state.nodes))
        try:
            from dpcheck.report import write_run

            self.run_dir = str(write_run(document, directory=state.report_dir,
                                         formats=state.formats))
        except Exception as exc:  # noqa: BLE001 - shown in the summary, fails the run
            self.write_error = f"{type(exc).__name__}: {exc}"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.records and not self.tests:
            return
        tr, state = terminalreporter, self.state
        tr.write_sep("=", "dpcheck")
        where = (self.run_dir if self.run_dir else "disabled (--dpcheck-report none)"
                 if state.report_dir is None else "not written")
        for line in summary_lines(self.records, alpha_family=state.alpha_family,
                                  m=state.m or 0, catalog=self._catalog(), report=where):
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
