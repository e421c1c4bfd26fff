"""``summary.md``: a short digest of a run for a CI job summary or a pull-request comment.

GitHub limits a job summary to 1 MiB per step and shows at most 65 536 characters of a comment;
the digest is kept under :data:`LIMIT` characters (sections are cut, with a note, when a run has
very many problems). It has no images (relative image paths break once the text is pasted
elsewhere) and links nothing outside itself: it names the full report files instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dpcheck.report.model import coverage_rows, num, test_name, truncate
from dpcheck.report.overview import errata, kill_rows, outcome, problems

__all__ = ["render_summary", "SUMMARY_NAME", "LIMIT"]

SUMMARY_NAME = "summary.md"
#: Upper bound on the length of ``summary.md`` in characters.
LIMIT = 60_000


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return (["| " + " | ".join(_cell(h) for h in head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
            + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows] + [""])


def _capped(lines: list[str], budget: int, what: str) -> list[str]:
    out, used = [], 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 > budget:
            return out + [f"- … and {len(lines) - i} more {what} (see audit.md / audit.html)", ""]
        out.append(line)
        used += len(line) + 1
    return out


def render_summary(document: Mapping[str, Any], figures: Sequence[Any] = ()) -> str:
    """The digest (Markdown, fewer than :data:`LIMIT` characters)."""
    o = outcome(document)
    c = o.counts
    mark = "❌" if o.failed else "✅"
    out = [f"## {mark} dpcheck {o.headline}", "",
           f"Run `{document.get('run_id')}` · seed {document.get('root_seed')} · family α "
           f"{num(document.get('alpha_family'), 'g')} over {document.get('n_claim_tests')} "
           f"claim tests · scale {num(document.get('scale'), 'g')}", ""]
    rows = [["tests passed", f"{c['passed']} / {c['tests']}"], ["tests failed", c["failed"]],
            ["checks refuting a claim unexpectedly", c["unexpected_violations"]],
            ["checks missing an expected violation", c["missed_violations"]],
            ["expected violations caught", c["expected_violations"]],
            ["erratum records confirmed", c["erratum_records"]],
            ["claims not refuted (not a proof)", c["not_refuted"]],
            ["measurements", c["measurements"]]]
    if c["mutants"]:
        rows.insert(2, ["mutants caught", f"{c['mutants_caught']} / {c['mutants']}"])
    out += _table(["outcome", "count"], rows)
    probs = problems(document)
    if probs:
        out += [f"### Problems ({len(probs)})", ""]
        out += _capped([f"- **{p.kind}** `{p.nodeid}`: {_cell(truncate(p.text, 400))}"
                        for p in probs], 25_000, "problems")
        out.append("")
    errs = errata(document)
    if errs:
        out += [f"### Errata ({sum(e.in_catalog for e in errs)} in the catalogue, "
                f"{sum(len(e.records) for e in errs)} confirming records)", ""]
        out += _capped([f"- **{_label(e)}** ({len(e.records)} record(s)"
                        + ("" if e.in_catalog else "; not a catalogue erratum") + "): "
                        + _cell(truncate(e.note or _witness_name(e), 300)) for e in errs],
                       10_000, "errata")
        out.append("")
    kills = kill_rows(document)
    survivors = [k for k in kills if k.get("outcome") != "caught"]
    if kills:
        out += [f"### Mutants: {c['mutants_caught']} of {len(kills)} caught", ""]
        if survivors:
            out += _capped([f"- **{k.get('outcome')}** {k.get('paper')} {k.get('ref')}: mutant "
                            f"`{k.get('mutant')}` in `{test_name(k.get('nodeid'))}`"
                            for k in survivors], 8_000, "mutants")
            out.append("")
    statuses, cov = coverage_rows(document.get("catalog"))
    out += ["### Claims catalogue coverage", ""]
    if cov:
        out += _table(["paper", *statuses, "total"], [[p, *n, sum(n)] for p, n in cov])
    else:
        out += ["No claims catalogue was loaded for this run.", ""]
    notes = list(getattr(figures, "notes", []))
    # (the run's folder is wherever --dpcheck-report put it: name the files, not a path)
    out += [f"Full report: `audit.html` (with `figures/`), `audit.md` and `audit.json` beside "
            f"this file, in the run's folder `{document.get('run_id')}/`."
            + (" Some figures were left out: see the Figures section there." if notes else ""),
            ""]
    text = "\n".join(out)
    if len(text) > LIMIT:  # cannot happen with the caps above; a last guard
        text = text[: LIMIT - 80] + "\n\n… (cut at the summary limit; see audit.md)\n"
    return text


def _label(e: Any) -> str:
    """``paper ref`` of an erratum, or a plain word when it is tied to no numbered result."""
    label = " ".join(x for x in (e.paper, e.ref) if x and x != "—")
    return label or "unnumbered statement"


def _witness_name(e: Any) -> str:
    """The name of the first confirming record (what the witness shows), for errata that have
    no catalogue note."""
    for r in e.records:
        name = (r.get("result") or {}).get("name") if hasattr(r, "get") else None
        if name:
            return f"witness: {name}"
    return "—"
