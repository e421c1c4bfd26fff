"""What a reader needs first, computed once for every renderer (HTML, Markdown, summary.md).

* :func:`outcome` — the run's verdict (``FAIL`` / ``PASS``) and the counts behind it. A run fails
  when a test failed or errored, a claim was refuted without being expected to be, an expected
  violation was missed, or a mutant survived.
* :func:`problems` — failed tests (including tests whose mechanism raised and that therefore left
  no record), unexpected violations and missed violations, in that order.
* :func:`errata` — the catalogue's ``erratum`` entries with their explanation (the entry's note)
  and the records that confirm them, plus confirmed-erratum records of tests that no catalogue
  entry lists. The counts say which is which, so "errata" never means two different numbers.
* :func:`kill_rows` — the mutant kill matrix (claim × mutant → caught / survived / error with the
  evidence: ε_lower vs the claimed ε, or the failure rate vs β).
* :func:`slug`, :func:`test_anchor`, :func:`record_anchor`, :func:`claim_anchor` — stable anchors.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Outcome", "outcome", "problems", "errata", "kill_rows", "slug", "test_anchor",
           "record_anchor", "claim_anchor", "numbered_records"]

Doc = Mapping[str, Any]


def slug(text: Any) -> str:
    """A stable, URL-safe anchor fragment of ``text`` (lower case, ``-`` separated)."""
    out = re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()
    return out or "x"


def test_anchor(nodeid: Any) -> str:
    """Anchor of a test: ``t-`` + the first 10 hex digits of the SHA-1 of its node id.

    Stable across runs and renderings (a function of the node id only) and short: a slug of the
    node id made a third of the main job's ``audit.html`` (272 KB of 2.5 MB) out of anchors."""
    return "t-" + hashlib.sha1(str(nodeid).encode("utf-8")).hexdigest()[:10]


def record_anchor(record: Mapping[str, Any]) -> str:
    """Anchor of a record: its test's anchor + ``-cN`` (N: the call number within the test)."""
    return f"{test_anchor(record.get('nodeid'))}-c{record.get('call')}"


def claim_anchor(paper: Any, ref: Any) -> str:
    """Anchor of a catalogue claim, e.g. ``claim-003-theorem-3-1``."""
    return f"claim-{slug(paper)}-{slug(ref)}"


@dataclass(frozen=True)
class Outcome:
    """The verdict of a run and its counts (every count is of *tests*, *records* or *mutant
    cases*, as its name says)."""

    failed: bool
    headline: str
    counts: dict[str, int] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()


def _tests(doc: Doc) -> list[Mapping[str, Any]]:
    return [t for t in doc.get("tests") or [] if isinstance(t, Mapping)]


def _records(doc: Doc) -> list[Mapping[str, Any]]:
    return [r for r in doc.get("records") or [] if isinstance(r, Mapping)]


def kill_rows(doc: Doc) -> list[Mapping[str, Any]]:
    """The kill matrix rows of the document (``kill_matrix``), sorted by claim then mutant."""
    rows = [r for r in doc.get("kill_matrix") or [] if isinstance(r, Mapping)]
    return sorted(rows, key=lambda r: (str(r.get("paper")), str(r.get("ref")),
                                       str(r.get("mutant")), str(r.get("nodeid"))))


def outcome(doc: Doc) -> Outcome:
    """The run's verdict and counts."""
    tests, records, kills = _tests(doc), _records(doc), kill_rows(doc)
    verdicts = [str(r.get("verdict")) for r in records]
    n_failed = sum(t.get("outcome") in ("failed", "error") for t in tests)
    counts = {
        "tests": len(tests),
        "passed": sum(t.get("outcome") == "passed" for t in tests),
        "failed": n_failed,
        "skipped": sum(t.get("outcome") == "skipped" for t in tests),
        "unfinished": sum(t.get("outcome") == "unfinished" for t in tests),
        "unexpected_violations": verdicts.count("violation"),
        "missed_violations": verdicts.count("missed-violation"),
        "expected_violations": verdicts.count("expected-violation"),
        "erratum_records": verdicts.count("erratum-confirmed"),
        "not_refuted": verdicts.count("not-refuted"),
        "measurements": verdicts.count("measurement"),
        "records": len(records),
        "mutants": len(kills),
        "mutants_caught": sum(k.get("outcome") == "caught" for k in kills),
        "mutants_survived": sum(k.get("outcome") == "survived" for k in kills),
        "mutants_error": sum(k.get("outcome") not in ("caught", "survived") for k in kills),
    }
    reasons = []
    if doc.get("interrupted"):
        reasons.append(f"the run did not complete ({doc.get('interruption') or 'interrupted'})")
    if counts["unfinished"]:
        reasons.append(f"{counts['unfinished']} test(s) did not finish")
    if n_failed:
        reasons.append(f"{n_failed} test(s) failed")
    if counts["unexpected_violations"]:
        reasons.append(f"{counts['unexpected_violations']} check(s) refuted a claim unexpectedly")
    if counts["missed_violations"]:
        reasons.append(f"{counts['missed_violations']} check(s) missed an expected violation")
    if counts["mutants_survived"]:
        reasons.append(f"{counts['mutants_survived']} mutant(s) survived")
    failed = bool(reasons)
    label = "INCOMPLETE" if doc.get("interrupted") else "FAIL"
    headline = (f"{label}: " + ", ".join(reasons)) if failed else (
        f"PASS: {counts['passed']} of {counts['tests']} tests passed, no unexpected violation")
    return Outcome(failed, headline, counts, tuple(reasons))


@dataclass(frozen=True)
class Problem:
    """One item of the problems list."""

    kind: str  # "failed test" | "unexpected violation" | "missed violation" | "mutant survived"
    nodeid: str
    text: str
    anchor: str
    record: Mapping[str, Any] | None = None


def problems(doc: Doc) -> list[Problem]:
    """Failed tests first, each once with its message and its offending records (a test whose
    mechanism raised is here even though it left no record); then unexpected and missed
    violations of tests that did not fail (none in a consistent run); then surviving mutants."""
    out: list[Problem] = []
    records = _records(doc)
    by_test: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        by_test.setdefault(str(r.get("nodeid")), []).append(r)
    failed_ids: set[str] = set()
    for t in _tests(doc):
        if t.get("outcome") in ("failed", "error"):
            nodeid = str(t.get("nodeid"))
            failed_ids.add(nodeid)
            where = " ".join(str(x) for x in (t.get("paper"), t.get("ref")) if x)
            text = (f"{t.get('outcome')}" + (f" ({where})" if where else "") + ": "
                    + (str(t.get("message") or "no message").strip()))
            mine = by_test.get(nodeid, [])
            anchor = record_anchor(mine[0]) if mine else test_anchor(nodeid)
            if not mine:
                text += " — no dpcheck record: the test stopped before or inside its first check"
            out.append(Problem("failed test", nodeid, text, anchor,
                               next((r for r in mine if r.get("verdict") in
                                     ("violation", "missed-violation")), None)))
    for verdict, kind in (("violation", "unexpected violation"),
                          ("missed-violation", "missed violation")):
        for r in records:
            if r.get("verdict") == verdict and str(r.get("nodeid")) not in failed_ids:
                res = r.get("result") or {}
                w = res.get("witness") if isinstance(res.get("witness"), Mapping) else None
                text = str(w.get("description")) if w else str(res.get("name") or "")
                out.append(Problem(kind, str(r.get("nodeid")), text, record_anchor(r), r))
    known = {str(t.get("nodeid")) for t in _tests(doc)}
    for k in kill_rows(doc):
        if k.get("outcome") != "caught" and str(k.get("nodeid")) not in failed_ids:
            out.append(Problem(f"mutant {k.get('outcome')}", str(k.get("nodeid")),
                               f"mutant {k.get('mutant')} of {k.get('paper')} {k.get('ref')}",
                               test_anchor(k.get("nodeid")) if str(k.get("nodeid")) in known
                               else "mutants"))
    return out


@dataclass(frozen=True)
class Erratum:
    """A catalogue erratum entry (or an un-catalogued confirmed erratum) and its evidence."""

    paper: str
    ref: str
    note: str
    tests: tuple[str, ...]
    records: tuple[Mapping[str, Any], ...]
    in_catalog: bool


def errata(doc: Doc) -> list[Erratum]:
    """Catalogue ``erratum`` entries with their explanation and confirming records, then
    confirmed-erratum records whose (paper, ref) is not such an entry."""
    catalog = doc.get("catalog") or {}
    entries = [e for e in catalog.get("entries") or [] if isinstance(e, Mapping)
               and e.get("status") == "erratum"]
    records = [r for r in _records(doc) if r.get("verdict") == "erratum-confirmed"]
    out: list[Erratum] = []
    used: set[int] = set()
    for e in entries:
        key = (str(e.get("paper")), str(e.get("ref")))
        tests = tuple(str(t) for t in e.get("tests") or [])
        mine = []
        for i, r in enumerate(records):
            node = str(r.get("nodeid"))
            if (str(r.get("paper")), str(r.get("ref"))) == key or any(
                    node == t or node.startswith(t + "[") for t in tests):
                mine.append(r)
                used.add(i)
        out.append(Erratum(key[0], key[1], str(e.get("note") or ""), tests, tuple(mine), True))
    rest: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for i, r in enumerate(records):
        if i not in used:
            rest.setdefault((str(r.get("paper") or "—"), str(r.get("ref") or "—")), []).append(r)
    for (paper, ref), recs in rest.items():
        out.append(Erratum(paper, ref, "", tuple(sorted({str(r.get("nodeid")) for r in recs})),
                           tuple(recs), False))
    return out


def numbered_records(doc: Doc) -> list[tuple[int, Mapping[str, Any]]]:
    """Records in report order (problems, expected, the rest; stable within) with the number
    used everywhere (table row, detail card, figure caption)."""
    from dpcheck.report.model import sectioned

    ordered = [r for part in sectioned(_records(doc)) for r in part]
    return list(enumerate(ordered, start=1))


def claim_results(doc: Doc) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Records per (paper, ref)."""
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in _records(doc):
        if r.get("paper"):
            out.setdefault((str(r.get("paper")), str(r.get("ref"))), []).append(r)
    return out


def tests_by_outcome(doc: Doc) -> Sequence[Mapping[str, Any]]:
    """Tests, failures first."""
    rank = {"failed": 0, "error": 0, "passed": 1, "skipped": 2}
    return sorted(_tests(doc), key=lambda t: (rank.get(str(t.get("outcome")), 3),
                                              str(t.get("nodeid"))))
