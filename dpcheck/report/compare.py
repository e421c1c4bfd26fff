"""Compare two run documents: what changed between run A (before) and run B (after), and whether
the change should fail a CI job.

Records are matched by ``(nodeid, call)``; tests by ``nodeid``. :func:`compare_runs` returns a
JSON-safe document (``dpcheck/schemas/compare.schema.json``); :func:`compare` renders it as
Markdown. Categories: tests added/removed, test outcome changes, new and closed violations,
verdict changes, records added/removed, changes of the ε lower bound, catalogue coverage.

Seed-to-seed noise. Two runs with different seeds give different ε lower bounds for the same
mechanism, so a change of the point value says little. Each audit record's witness gives a range
for the privacy loss *of its event*: from ``ε_lower = ln((p_low − δ)/q_high)`` to
``ln((p_high − δ)/q_low)`` (both at the record's confidence). A change is **significant** only
when the two runs' ranges do not overlap; for accuracy records the failure-rate intervals are
compared the same way. Only significant increases count as regressions (``--fail-on
regression``); every change is still listed, marked "within noise" or not. Bounds differing by at
most :data:`EPS_TOLERANCE` are equal.

Gates (``fail_on``): ``violation`` (a record is an unexpected violation in B but not in A),
``missed`` (an expected violation — buggy variant, mutant, erratum — is missed in B but was not in
A), ``failure`` (a test passed in A and failed in B, or is new and failed, or B did not complete),
``regression`` (a significant increase of an ε lower bound or failure rate), ``any`` (all of
them). By default (:data:`DEFAULT_GATES`) a comparison fails on new violations, missed expected
violations and newly failing tests: a CI gate cannot pass on a regression unless it says so.

Runs made under different settings — root seed, family α, ``--dpcheck-scale``, dpcheck version —
differ for reasons other than the code: every such difference is a *warning* in the result (and,
with ``strict=True``, a reason to fail), so bound changes are never shown without their cause.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from dpcheck.report.model import num, validate, verdict_label

__all__ = ["compare", "compare_runs", "EPS_TOLERANCE", "GATES", "DEFAULT_GATES",
           "COMPARE_SCHEMA_VERSION", "summary_text"]

#: ε lower bounds differing by at most this much are considered equal.
EPS_TOLERANCE = 1e-9
#: What ``fail_on`` may name.
GATES = ("violation", "regression", "failure", "missed", "any")
#: The gates of a comparison that names none.
DEFAULT_GATES = ("violation", "missed", "failure")
#: Settings whose difference between the runs is a warning: (label, getter).
SETTINGS = (("root seed", lambda d: d.get("root_seed")),
            ("family alpha", lambda d: d.get("alpha_family")),
            ("scale", lambda d: d.get("scale")),
            ("sequential audits", lambda d: d.get("sequential")),
            ("dpcheck version", lambda d: (d.get("environment") or {}).get("dpcheck")))
#: ``schema_version`` of the comparison document.
COMPARE_SCHEMA_VERSION = 1

Key = tuple[str, Any]


def _order(key: Key) -> tuple[str, int, str]:
    call = key[1]
    return (key[0], call if isinstance(call, int) else -1, str(call))


def _records(document: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    return {(str(r.get("nodeid")), r.get("call")): r for r in document.get("records") or []}


def _tests(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(t.get("nodeid")): t for t in document.get("tests") or []}


def _float(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def _eps(record: Mapping[str, Any] | None) -> float | None:
    if record is None or record.get("type") != "audit":
        return None
    return _float((record.get("result") or {}).get("epsilon_lower"))


def _range(record: Mapping[str, Any]) -> tuple[float, float] | None:
    """The record's range for its key quantity (see the module docstring), or None."""
    res = record.get("result") or {}
    if record.get("type") == "audit":
        lo = _float(res.get("epsilon_lower"))
        w = res.get("witness")
        if lo is None:
            return None
        if not isinstance(w, Mapping):
            return (lo, math.inf) if lo > 0 else (0.0, math.inf)
        delta = _float((res.get("claim") or {}).get("delta")) or 0.0
        try:
            p_hi, q_lo = float(w["p_interval"][1]), float(w["q_interval"][0])
        except (KeyError, TypeError, IndexError, ValueError):
            return (lo, math.inf)
        up = math.inf if q_lo <= 0 else (math.log((p_hi - delta) / q_lo)
                                         if p_hi > delta else 0.0)
        return (lo, max(up, lo))
    if record.get("type") == "accuracy":
        lo, hi = _float(res.get("failure_lower")), _float(res.get("failure_upper"))
        if lo is None or hi is None:
            return None
        return (lo, hi)
    return None


def _value(record: Mapping[str, Any]) -> float | None:
    res = record.get("result") or {}
    if record.get("type") == "audit":
        return _float(res.get("epsilon_lower"))
    if record.get("type") == "accuracy":
        return _float(res.get("failure_rate"))
    return None


def _changed(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a != b
    if math.isnan(a) or math.isnan(b):
        return not (math.isnan(a) and math.isnan(b))
    return abs(a - b) > EPS_TOLERANCE


def _key(key: Key) -> str:
    return f"{key[0]} · call {key[1]}"


def _coverage(document: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    cov = (document.get("catalog") or {}).get("coverage") or {}
    return {(str(p), str(s)): int(n) for p, counts in cov.items() for s, n in counts.items()}


def _gates(fail_on: Iterable[str] | str | None) -> tuple[str, ...]:
    from dpcheck.errors import InvalidArgument

    if fail_on is None:
        return DEFAULT_GATES
    if isinstance(fail_on, str):
        fail_on = [s.strip() for s in fail_on.split(",") if s.strip()]
    items = tuple(dict.fromkeys(fail_on))
    if not items:  # an empty list is not "none": say which
        raise InvalidArgument("--fail-on='' must name at least one of " + ", ".join(GATES)
                              + " (or none)")
    if "none" in items:
        return ()
    bad = [g for g in items if g not in GATES]
    if bad:
        raise InvalidArgument(f"--fail-on={','.join(items)!r} must be a comma-separated subset of "
                              + ", ".join(GATES) + " (or none)")
    return tuple(g for g in GATES if g in items or ("any" in items and g != "any"))


def compare_runs(doc_a: Mapping[str, Any], doc_b: Mapping[str, Any], *,
                 common_only: bool = False,
                 fail_on: Iterable[str] | str | None = None,
                 strict: bool = False) -> dict[str, Any]:
    """How run ``doc_b`` differs from run ``doc_a``, as a JSON-safe document.

    Parameters
    ----------
    common_only
        Only tests and records present in both runs (e.g. comparing a full run with a partial
        one): additions and removals are not reported.
    fail_on
        Gates (see the module docstring; default :data:`DEFAULT_GATES`, ``"none"`` for none);
        ``failed`` is true when a change of a named category occurred, and ``reasons`` says
        which.
    strict
        Also fail when the runs' settings differ (``warnings``: seed, α, scale, version).

    Raises
    ------
    InvalidArgument
        If either document is not a valid run document, or ``fail_on`` names an unknown gate.
    """
    a, b = validate(doc_a), validate(doc_b)
    gates = _gates(fail_on)
    ra, rb = _records(a), _records(b)
    ta, tb = _tests(a), _tests(b)
    if common_only:
        both_t = set(ta) & set(tb)
        ta = {k: v for k, v in ta.items() if k in both_t}
        tb = {k: v for k, v in tb.items() if k in both_t}
        both_r = set(ra) & set(rb)
        ra = {k: v for k, v in ra.items() if k in both_r}
        rb = {k: v for k, v in rb.items() if k in both_r}
    changes: list[dict[str, Any]] = []
    for t in sorted(set(tb) - set(ta)):
        changes.append({"category": "test-added", "key": t, "b": tb[t].get("outcome"),
                        "regression": tb[t].get("outcome") in ("failed", "error")})
    for t in sorted(set(ta) - set(tb)):
        changes.append({"category": "test-removed", "key": t, "a": ta[t].get("outcome")})
    for t in sorted(set(ta) & set(tb)):
        oa, ob = ta[t].get("outcome"), tb[t].get("outcome")
        if oa != ob:
            changes.append({"category": "outcome", "key": t, "a": oa, "b": ob,
                            "regression": ob in ("failed", "error")
                            and oa not in ("failed", "error")})

    def has(records: Mapping[Key, Mapping[str, Any]], k: Key, verdict: str) -> bool:
        return k in records and records[k].get("verdict") == verdict

    keys = sorted(set(ra) | set(rb), key=_order)
    for k in keys:
        if has(rb, k, "violation") and not has(ra, k, "violation"):
            r = rb[k]
            changes.append({"category": "new-violation", "key": _key(k), "b": _eps(r),
                            "paper": r.get("paper"), "ref": r.get("ref"), "regression": True,
                            "significant": True})
        if has(ra, k, "violation") and not has(rb, k, "violation"):
            changes.append({"category": "closed-violation", "key": _key(k),
                            "b": rb[k].get("verdict") if k in rb else None})
    for k in (k for k in keys if k in ra and k in rb):
        va, vb = ra[k].get("verdict"), rb[k].get("verdict")
        if va != vb:
            changes.append({"category": "verdict", "key": _key(k), "a": va, "b": vb,
                            "regression": vb == "missed-violation" and va != vb})
    for k in sorted(set(rb) - set(ra), key=_order):
        changes.append({"category": "record-added", "key": _key(k), "b": rb[k].get("verdict")})
    for k in sorted(set(ra) - set(rb), key=_order):
        changes.append({"category": "record-removed", "key": _key(k), "a": ra[k].get("verdict")})
    for k in (k for k in keys if k in ra and k in rb):
        xa, xb = _value(ra[k]), _value(rb[k])
        if xa is None or xb is None or not _changed(xa, xb):
            continue
        rng_a, rng_b = _range(ra[k]), _range(rb[k])
        significant = bool(rng_a and rng_b and (rng_b[0] > rng_a[1] or rng_b[1] < rng_a[0]))
        up = significant and rng_b is not None and rng_a is not None and rng_b[0] > rng_a[1]
        claim_side = ra[k].get("expect") in (None, "holds") and not ra[k].get("mutant")
        changes.append({"category": "epsilon" if ra[k].get("type") == "audit" else "failure-rate",
                        "key": _key(k), "a": xa, "b": xb,
                        "range_a": list(rng_a) if rng_a else None,
                        "range_b": list(rng_b) if rng_b else None,
                        "significant": significant, "regression": bool(up and claim_side)})
    ca, cb = _coverage(a), _coverage(b)
    for p, s in sorted(set(ca) | set(cb)):
        if ca.get((p, s), 0) != cb.get((p, s), 0):
            changes.append({"category": "coverage", "key": f"{p} {s}", "a": ca.get((p, s), 0),
                            "b": cb.get((p, s), 0)})
    for c in changes:  # the schema has one category for both kinds of bound
        if c["category"] == "failure-rate":
            c["category"], c["quantity"] = "epsilon", "failure_rate"
    counts: dict[str, int] = {}
    for c in changes:
        counts[c["category"]] = counts.get(c["category"], 0) + 1
    reasons = []
    if "violation" in gates and counts.get("new-violation"):
        reasons.append(f"{counts['new-violation']} new violation(s)")
    if "missed" in gates:
        n = sum(c["category"] == "verdict" and c.get("b") == "missed-violation" for c in changes)
        if n:
            reasons.append(f"{n} expected violation(s) now missed")
    if "failure" in gates:
        n = sum(c["category"] in ("outcome", "test-added") and c.get("regression")
                for c in changes)
        if n:
            reasons.append(f"{n} test(s) newly failing")
    if "regression" in gates:
        n = sum(c["category"] == "epsilon" and c.get("regression") for c in changes)
        if n:
            reasons.append(f"{n} bound(s) increased beyond seed-to-seed noise")
    if "failure" in gates and b.get("interrupted"):
        reasons.append("run B did not complete (" + str(b.get("interruption") or "interrupted")
                       + ")")
    warnings = [f"{label} differs: A {get(a)!r}, B {get(b)!r}" for label, get in SETTINGS
                if get(a) != get(b)]
    if strict and warnings:
        reasons.append(f"{len(warnings)} setting(s) differ (--strict)")

    def run(d: Mapping[str, Any]) -> dict[str, Any]:
        return {"run_id": d.get("run_id"), "created": d.get("created"),
                "root_seed": d.get("root_seed")}

    return {"schema_version": COMPARE_SCHEMA_VERSION, "a": run(a), "b": run(b),
            "common_only": common_only, "fail_on": list(gates), "failed": bool(reasons),
            "reasons": reasons, "warnings": warnings, "strict": strict, "counts": counts,
            "changes": changes}


def summary_text(result: Mapping[str, Any]) -> str:
    """One screen: the verdict, its reasons, the settings that differ and the change counts."""
    verdict = "FAIL" if result["failed"] else "PASS"
    lines = [f"{verdict}: run {result['b'].get('run_id')} against {result['a'].get('run_id')} "
             f"(gates: {', '.join(result['fail_on']) or 'none'})"]
    lines += [f"  reason: {r}" for r in result["reasons"]]
    lines += [f"  warning: {w}" for w in result.get("warnings") or []]
    counts = result["counts"]
    lines.append("  changes: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                                  if counts else "none"))
    return "\n".join(lines) + "\n"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return out + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows] + [""]


def _delta(a: float, b: float) -> str:
    if math.isinf(a) or math.isinf(b):
        return "—"
    return f"{b - a:+.4g}"


def _rng(r: Any) -> str:
    return "—" if not r else f"[{num(r[0], '.3g')}, {num(r[1], '.3g')}]"


def _k(key: str) -> str:
    """``nodeid · call N`` with the node id as code."""
    node, sep, call = key.partition(" · call ")
    return f"`{node}` · call {call}" if sep else f"`{key}`"


def render_comparison(result: Mapping[str, Any]) -> str:
    """Markdown of a :func:`compare_runs` document."""
    a, b = result["a"], result["b"]
    out = [f"# dpcheck run comparison: {a.get('run_id')} → {b.get('run_id')}", "",
           f"A = `{a.get('run_id')}` (created {a.get('created', '?')}, seed "
           f"{a.get('root_seed', '?')}), B = `{b.get('run_id')}` (created "
           f"{b.get('created', '?')}, seed {b.get('root_seed', '?')})"
           + ("; only tests and records present in both runs" if result["common_only"] else "")
           + ".", ""]
    if result["fail_on"]:
        out += [("**FAIL** (" + "; ".join(result["reasons"]) + ")" if result["failed"] else
                 "**PASS**") + f" for --fail-on {','.join(result['fail_on'])}.", ""]
    out += [f"- warning: {w}" for w in result.get("warnings") or []]
    if result.get("warnings"):
        out.append("")
    by: dict[str, list[Mapping[str, Any]]] = {}
    for c in result["changes"]:
        by.setdefault(c["category"], []).append(c)
    sections: list[tuple[str, list[str]]] = []
    added, removed = by.get("test-added", []), by.get("test-removed", [])
    if added or removed:
        lines = ([f"- added: `{c['key']}` ({c.get('b')})" for c in added]
                 + [f"- removed: `{c['key']}`" for c in removed])
        sections.append((f"Tests added ({len(added)}) / removed ({len(removed)})", lines + [""]))
    if by.get("outcome"):
        sections.append((f"Test outcome changes ({len(by['outcome'])})",
                         _table(["test", "A", "B"], [[f"`{c['key']}`", c["a"], c["b"]]
                                                     for c in by["outcome"]])))
    if by.get("new-violation"):
        sections.append((f"New violations ({len(by['new-violation'])})",
                         [f"- {_k(c['key'])}: {c.get('paper') or '—'} {c.get('ref') or ''}, "
                          f"ε_lower = {num(c.get('b'))}" for c in by["new-violation"]] + [""]))
    if by.get("closed-violation"):
        sections.append((f"Closed violations ({len(by['closed-violation'])})",
                         [f"- {_k(c['key'])}: now " + (verdict_label(c["b"]) if c.get("b")
                                                     else "record removed")
                          for c in by["closed-violation"]] + [""]))
    if by.get("verdict"):
        sections.append((f"Verdict changes ({len(by['verdict'])})",
                         _table(["record", "A", "B"],
                                [[f"{_k(c['key'])}", verdict_label(c["a"]), verdict_label(c["b"])]
                                 for c in by["verdict"]])))
    only = ([f"- new record: {_k(c['key'])} ({verdict_label(c['b'])})"
             for c in by.get("record-added", [])]
            + [f"- record gone: {_k(c['key'])} (was {verdict_label(c['a'])})"
               for c in by.get("record-removed", [])])
    if only:
        sections.append(("Records added / removed", only + [""]))
    if by.get("epsilon"):
        rows = [[f"{_k(c['key'])}", c.get("quantity", "epsilon_lower"), num(c["a"]), num(c["b"]),
                 _delta(c["a"], c["b"]), _rng(c.get("range_a")), _rng(c.get("range_b")),
                 ("**beyond noise**" + (" (regression)" if c.get("regression") else ""))
                 if c.get("significant") else "within noise"] for c in by["epsilon"]]
        n_sig = sum(bool(c.get("significant")) for c in by["epsilon"])
        sections.append((f"ε lower-bound changes ({len(rows)}; {n_sig} beyond seed noise)",
                         _table(["record", "quantity", "A", "B", "change", "range A", "range B",
                                 "significant?"], rows)))
    if by.get("coverage"):
        sections.append(("Catalogue coverage changes",
                         _table(["paper", "status", "A", "B"],
                                [[*c["key"].split(" ", 1), c["a"], c["b"]]
                                 for c in by["coverage"]])))
    if not sections:
        return "\n".join(out + ["No differences."]) + "\n"
    out += ["Changes: " + "; ".join(title for title, _ in sections) + ".", ""]
    for title, lines in sections:
        out += [f"## {title}", "", *lines]
    return "\n".join(out).rstrip() + "\n"


def compare(doc_a: Mapping[str, Any], doc_b: Mapping[str, Any], *, common_only: bool = False,
            fail_on: Iterable[str] | str | None = None) -> str:
    """Markdown describing how run ``doc_b`` differs from run ``doc_a`` (see
    :func:`compare_runs`)."""
    return render_comparison(compare_runs(doc_a, doc_b, common_only=common_only,
                                          fail_on=fail_on))
