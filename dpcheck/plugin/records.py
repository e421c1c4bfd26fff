"""Records of the pytest plugin: α spending, replay commands, verdicts, failure messages, test
outcomes and JUnit properties.

Records are plain JSON-safe dicts, so the same code runs on xdist workers (which build them) and
on the controller (which assembles the report from deserialised test reports).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["EXPECTS", "spend", "replay_command", "verdict", "finalise", "section_text",
           "missed_message", "short_message", "merge_outcome", "error_paragraph",
           "junit_properties", "witness_line", "headline"]

#: What a claim test may expect of its audits (``expect=`` of the ``claim`` marker).
EXPECTS = ("holds", "violation", "erratum")
_FOUND = {"violation": "expected-violation", "erratum": "erratum-confirmed"}


def spend(alpha_test: float, i: int) -> float:
    """α of the ``i``-th (1-based) statistical call of a test: ``alpha_test·6/(π² i²)``."""
    return alpha_test * 6.0 / (math.pi ** 2 * i * i)


def replay_command(nodeid: str, root_seed: int, *, alpha_test: float, scale: float,
                   sequential: bool = True) -> str:
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
    if not sequential:
        cmd += " --dpcheck-sequential off"
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


def headline(record: Mapping[str, Any]) -> str:
    res = record["result"]
    if record["type"] == "audit":
        from dpcheck.report.model import claim_text, curve_evidence

        claim = res.get("claim") or {}
        evidence = curve_evidence(res)
        if evidence is not None:  # a curve claim: judged by its curve, not by an ε
            return (f"{res.get('mechanism')}: {claim_text(claim)}: {evidence}, "
                    f"p={res['p_value']:.3g}, samples={res['samples']}")
        eps = claim.get("epsilon", "?")
        eps = f"{eps:g}" if isinstance(eps, (int, float)) else eps
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
        lines.append(f"call {r['call']} {r['type']} [{r['verdict']}]{alpha}: {headline(r)}")
        replay = r["replay"]
    return "\n".join(lines + [f"replay: {replay}"])


def missed_message(info: Mapping[str, Any], results: list[Any],
                   records: list[dict[str, Any]]) -> str:
    """Why a test that expects a violation fails: the best evidence it found instead."""
    from dpcheck.core.accuracy import AccuracyResult
    from dpcheck.core.results import AuditResult

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

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # dpcheck/
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
    from dpcheck.errors import InvalidArgument

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
    return witness["description"] if witness else headline(record)


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
    """Fold one phase report into the test's entry (outcome, duration, message). A test is
    ``unfinished`` until its call phase passes (or a phase fails or skips): a test cut off by
    an interruption is never counted as passed."""
    test["duration"] += float(report.duration)
    if report.failed:
        new = "failed" if report.when == "call" else "error"
    elif report.skipped:
        new = "skipped"
    elif report.when == "call":
        new = "passed"
    else:
        return
    rank = {"unfinished": -1, "passed": 0, "skipped": 1, "failed": 2, "error": 3}
    if rank[new] > rank[test["outcome"]]:
        test["outcome"] = new
        test["message"] = short_message(report) if new != "passed" else ""


