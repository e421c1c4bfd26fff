"""HTML rendering of a run document (``audit.html``).

No external assets: inline CSS, figures linked from the run folder (``figures/*.png``, written
beside ``audit.html``; not embedded a second time, which kept reports of the main job at 8 MB),
and a few lines of inline JavaScript (filter and sort tables; open every record before printing)
that work from ``file://``. Every string taken from the document goes through
:func:`html.escape`.

Order (what a reader needs first comes first): the verdict banner and outcome counts; a table of
contents; problems (failed tests, unexpected and missed violations, surviving mutants); errata
with the catalogue's explanation and witnesses; the mutant kill matrix; claims; figures; every
record (collapsible ``<details>``, numbered as in the records table); tests; run information.
Stable anchors (functions of the node id, not of the run): ``#t-<hash>`` per test,
``#t-<hash>-cN`` per record, ``#claim-<paper>-<ref slug>`` per catalogue claim (see
:mod:`dpcheck.report.overview`). Size: markup is kept lean because the main job writes about a
thousand records — records are definition lists, verdict colours are classes, anchors are short.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from dpcheck.report.figures import RenderedFigure
from dpcheck.report.html_assets import CSS as _CSS
from dpcheck.report.html_assets import JS as _JS
from dpcheck.report.markdown import READING, record_items
from dpcheck.report.model import (FIGURES_DIR, VERDICTS, claim_text, coverage_rows, header_items,
                                  holm_map, num, test_name, truncate, verdict_colour,
                                  verdict_label)
from dpcheck.report.overview import (
    claim_anchor,
    claim_results,
    errata,
    kill_rows,
    numbered_records,
    outcome,
    problems,
    record_anchor,
    slug,
    test_anchor,
    tests_by_outcome,
)

__all__ = ["render_html"]

def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _vclass(verdict: Any) -> str:
    """The CSS class that carries a verdict's colour (``--c``), see :func:`_verdict_css`."""
    return "v-" + slug(verdict)


def _verdict_css(verdicts: Sequence[Any]) -> str:
    return "".join(f".{_vclass(v)}{{--c:{verdict_colour(v)}}}" for v in dict.fromkeys(verdicts))


def _badge(verdict: Any) -> str:
    return f'<span class="badge {_vclass(verdict)}">{_e(verdict_label(verdict))}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], *, table_id: str = "",
           widths: Sequence[str] = (), sortable: bool = False, filter_hint: str = "",
           verdicts: Sequence[str] = ()) -> str:
    """A table whose cells are already-escaped HTML; ``verdicts``: one per row, each row then
    carries ``data-verdict`` and the table gets a checkbox per verdict (with its count)."""
    out = []
    if table_id and filter_hint:
        boxes = "".join(
            f'<label class="vbox"><input type="checkbox" checked data-verdict-filter='
            f'"{_e(table_id)}" value="{_e(v)}"> {_badge(v)} {verdicts.count(v)}</label>'
            for v in dict.fromkeys(sorted(verdicts)))
        out.append(f'<div class="controls">{boxes}<label>Filter: <input type="search" '
                   f'data-filter="{_e(table_id)}" placeholder="{_e(filter_hint)}"></label> '
                   f'{"(click a column header to sort)" if sortable else ""}</div>')
    cls = ' class="sortable"' if sortable else ""
    tid = f' id="{_e(table_id)}"' if table_id else ""
    out.append(f"<table{tid}{cls}>")
    if widths:
        out.append("<colgroup>" + "".join(f'<col style="width:{w}">' for w in widths)
                   + "</colgroup>")
    out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead>")
    out.append("<tbody>")
    marks = [f' data-verdict="{_e(v)}"' for v in verdicts] or [""] * len(rows)
    # End tags of cells and rows are optional in HTML (WHATWG "optional tags") and left out:
    # about a tenth of the main job's page was ``</td>`` and ``</tr>``.
    out += [f"<tr{mark}>" + "".join(c if c.startswith("<td") else f"<td>{c}" for c in row)
            for row, mark in zip(rows, marks)]
    return "\n".join(out) + "\n</tbody></table>"


def _figure(fig: RenderedFigure, *, caption: str | None = None) -> str:
    src = f"{FIGURES_DIR}/{fig.name}"
    text = fig.title if caption is None else caption
    return (f'<figure><a href="{_e(src)}"><img alt="{_e(text)}" src="{_e(src)}" '
            f'loading="lazy"></a><figcaption>{_e(text)}</figcaption></figure>')


def _claim_link(paper: Any, ref: Any, doc: Mapping[str, Any]) -> str:
    """``paper ref``, linked to its catalogue row when the catalogue lists it."""
    if not paper:
        return "—"
    entries = (doc.get("catalog") or {}).get("entries") or []
    if not any(str(e.get("paper")) == str(paper) and str(e.get("ref")) == str(ref)
               for e in entries):
        return f"{_e(paper)} {_e(ref or '')}"
    return f'<a href="#{claim_anchor(paper, ref)}">{_e(paper)} {_e(ref or "")}</a>'


def _evidence(rec: Mapping[str, Any]) -> tuple[str, str]:
    """(sortable value, text) of a record's key number."""
    res = rec.get("result") if isinstance(rec.get("result"), Mapping) else {}
    if rec.get("type") == "audit":
        lo, eps = res.get("epsilon_lower"), (res.get("claim") or {}).get("epsilon")
        ratio = (lo / eps if isinstance(lo, (int, float)) and isinstance(eps, (int, float))
                 and eps > 0 else None)
        return (num(ratio, ".6g") if ratio is not None else "",
                f"ε_lower {num(lo, '.3g')} / ε {num(eps, 'g')}"
                + (f" = {num(ratio, '.3g')}" if ratio is not None else ""))
    if rec.get("type") == "accuracy":
        return (num(res.get("failure_rate"), ".6g"),
                f"fail {num(res.get('failure_rate'), '.3g')} (≤ {num(res.get('failure_upper'), '.3g')})"
                f" vs β {num(res.get('beta'), 'g')}")
    return "", truncate(res.get("name", rec.get("type")), 60)


def _banner(doc: Mapping[str, Any]) -> list[str]:
    o = outcome(doc)
    c = o.counts
    cls = "fail" if o.failed else "pass"
    mark = "✗" if o.failed else "✓"
    items = [("tests passed", f"{c['passed']} / {c['tests']}", False),
             ("tests failed", c["failed"], c["failed"] > 0),
             ("unexpected violations", c["unexpected_violations"], c["unexpected_violations"] > 0),
             ("missed violations", c["missed_violations"], c["missed_violations"] > 0),
             ("expected violations caught", c["expected_violations"], False),
             ("erratum records confirmed", c["erratum_records"], False)]
    if c["mutants"]:
        items.append(("mutants caught", f"{c['mutants_caught']} / {c['mutants']}",
                      c["mutants_caught"] < c["mutants"]))
    items += [("claims not refuted", c["not_refuted"], False),
              ("measurements", c["measurements"], False)]
    lis = "".join(('<li class="bad">' if bad else "<li>") + f"<b>{_e(v)}</b> {_e(k)}</li>"
                  for k, v, bad in items)
    return [f'<div class="banner {cls}" role="status" id="verdict">{mark} {_e(o.headline)}'
            "</div>", f'<ul class="counts" aria-label="outcome counts">{lis}</ul>',
            f'<details class="note"><summary>How to read this report</summary>{_e(READING)}'
            "</details>"]


def _problems(doc: Mapping[str, Any], numbers: Mapping[int, int]) -> list[str]:
    items = problems(doc)
    out = ['<h2 id="problems">Problems first</h2>']
    if not items:
        return out + ['<p class="ok">None: no test failed, no claim was refuted unexpectedly, '
                      "no expected violation was missed, no mutant survived.</p>"]
    for p in items:
        num_txt = ""
        if p.record is not None and id(p.record) in numbers:
            num_txt = f"record #{numbers[id(p.record)]} · "
        out.append(f'<div class="problem"><b>{_e(p.kind)}</b>: {num_txt}'
                   f'<a href="#{_e(p.anchor)}"><code>{_e(p.nodeid)}</code></a>'
                   f"<br>{_e(truncate(p.text, 600))}</div>")
    return out


def _errata(doc: Mapping[str, Any], numbers: Mapping[int, int]) -> list[str]:
    items = errata(doc)
    in_cat = [e for e in items if e.in_catalog]
    out = ['<h2 id="errata">Errata</h2>',
           f"<p>{len(in_cat)} catalogue result(s) with status <i>erratum</i>, confirmed by "
           f"{sum(len(e.records) for e in items)} record(s); "
           f"{len(items) - len(in_cat)} further result(s) with confirmed-erratum records that "
           "the catalogue does not list as errata.</p>"]
    for e in items:
        title = f"{e.paper} {e.ref}" if e.paper != "—" else "(no paper given)"
        parts = [f'<div class="erratum"><h3>{_claim_link(e.paper, e.ref, doc) if e.paper != "—" else _e(title)}'
                 f'{"" if e.in_catalog else " — not an erratum entry of the catalogue"}</h3>']
        if e.note:
            parts.append(f"<p>{_e(e.note)}</p>")
        for r in e.records:
            res = r.get("result") or {}
            w = res.get("witness") if isinstance(res.get("witness"), Mapping) else None
            what = str(w.get("description")) if w else truncate(
                {k: v for k, v in res.items() if k not in ("seed", "seconds")}, 300)
            parts.append(f'<p>record #{numbers.get(id(r), "?")}: '
                         f'<a href="#{record_anchor(r)}"><code>{_e(test_name(r.get("nodeid")))}'
                         f"</code></a> — {_e(what)}</p>")
        if not e.records:
            parts.append('<p class="bad">No confirming record in this run.</p>')
        parts.append("</div>")
        out.append("\n".join(parts))
    return out


def _kills(doc: Mapping[str, Any]) -> list[str]:
    rows = kill_rows(doc)
    known = {str(t.get("nodeid")) for t in doc.get("tests") or []}
    out = ['<h2 id="mutants">Mutant kill matrix</h2>']
    if not rows:
        return out + ["<p>No mutant cases in this run.</p>"]
    caught = sum(r.get("outcome") == "caught" for r in rows)
    out.append(f"<p>{caught} of {len(rows)} mutant case(s) caught: each runs a claim test's body "
               "on a deliberately broken variant, which the same checks must refute.</p>")
    body = []
    for r in rows:
        state = str(r.get("outcome"))
        cls = "ok" if state == "caught" else "bad"
        if r.get("epsilon_lower") is not None:
            ev, v = (f"ε_lower {num(r.get('epsilon_lower'), '.3g')} vs ε "
                     f"{num(r.get('claimed_epsilon'), 'g')}"), num(r.get("epsilon_lower"), ".6g")
        elif r.get("failure_rate") is not None:
            ev, v = (f"failure rate {num(r.get('failure_rate'), '.3g')} vs β "
                     f"{num(r.get('beta'), 'g')}"), num(r.get("failure_rate"), ".6g")
        else:
            ev = truncate(r.get("deviation") or r.get("assertion") or r.get("name") or "—", 160)
            v = ev
        body.append([_claim_link(r.get("paper"), r.get("ref"), doc), f"<code>{_e(r.get('mutant'))}</code>",
                     (f'<a href="#{test_anchor(r.get("nodeid"))}">{_e(test_name(r.get("nodeid")))}</a>'
                      if str(r.get("nodeid")) in known else _e(test_name(r.get("nodeid")))),
                     f'<td class="{cls}">{_e(state)}</td>', f'<td data-v="{_e(v)}">{_e(ev)}</td>'])
    return out + [_table(["claim", "mutant", "test", "outcome", "evidence"], body,
                         table_id="kill-table", widths=("14%", "16%", "34%", "9%", "27%"),
                         sortable=True, filter_hint="e.g. survived, 003, no_noise")]


def _claims(doc: Mapping[str, Any]) -> list[str]:
    catalog = doc.get("catalog") or {}
    out = ['<h2 id="claims">Claims catalogue</h2>']
    statuses, rows = coverage_rows(catalog)
    if not rows:
        return out + ["<p>No claims catalogue was loaded for this run.</p>"]
    out.append(f"<p>Catalogue <code>{_e(catalog.get('path', '?'))}</code>: coverage per paper "
               "(number of results in each status).</p>")
    out.append(_table(["paper", *statuses, "total"],
                      [[_e(p), *(_e(x) for x in c), _e(sum(c))] for p, c in rows]))
    results = claim_results(doc)
    tests = {str(t.get("nodeid")): t for t in doc.get("tests") or []}
    body = []
    for e in catalog.get("entries") or []:
        key = (str(e.get("paper")), str(e.get("ref")))
        recs = results.get(key, [])
        verdicts = sorted({str(r.get("verdict")) for r in recs})
        ran = [t for t in tests.values() if (str(t.get("paper")), str(t.get("ref"))) == key]
        failed = sum(t.get("outcome") in ("failed", "error") for t in ran)
        run_txt = (f"{len(ran)} test case(s), {failed} failed; " if ran else "not run; ") + (
            ", ".join(verdict_label(v) for v in verdicts) if verdicts else "no records")
        note = str(e.get("note") or "")
        body.append([f'<td id="{claim_anchor(*key)}">{_e(key[0])}</td>', _e(key[1]),
                     _e(e.get("kind")), _e(e.get("status")),
                     f'<td class="{"bad" if failed else ""}">{_e(run_txt)}</td>',
                     _e(", ".join(e.get("mutants") or []) or "—"),
                     f"<details><summary>{_e(truncate(note, 70))}</summary>{_e(note)}</details>"
                     if len(note) > 70 else _e(note)])
    return out + [_table(["paper", "result", "kind", "status", "this run", "mutants", "note"],
                         body, table_id="claims-table",
                         widths=("6%", "12%", "9%", "9%", "22%", "14%", "28%"), sortable=True,
                         filter_hint="e.g. 003, erratum, planned")]


def _records(doc: Mapping[str, Any], numbered: list[tuple[int, Mapping[str, Any]]],
             by_key: Mapping[tuple[str, Any], RenderedFigure]) -> list[str]:
    holm = holm_map(doc)
    out = ['<h2 id="records">Records</h2>',
           "<p>One row per dpcheck call; the number is the record's number everywhere in this "
           "report. Click a test to open its details.</p>"]
    if not numbered:
        return out + ["<p>No records.</p>"]
    rows = []
    for n, r in numbered:
        res = r.get("result") if isinstance(r.get("result"), Mapping) else {}
        claim = (claim_text(res.get("claim")) if r.get("type") == "audit" else
                 f"P[err > {num(res.get('alpha'), 'g')}] ≤ {num(res.get('beta'), 'g')}"
                 if r.get("type") == "accuracy" else _e(r.get("type")))
        v, ev = _evidence(r)
        rows.append([str(n),
                     f'<a href="#{record_anchor(r)}">{_e(test_name(r.get("nodeid")))}</a>'
                     f" · {_e(r.get('call'))}", _claim_link(r.get("paper"), r.get("ref"), doc),
                     _e(claim), f'<td data-v="{_e(v)}">{_e(ev)}</td>' if v else _e(ev),
                     _badge(r.get("verdict"))])
    out.append(_table(["#", "test · call", "paper result", "claim", "bound vs claim", "verdict"],
                      rows, table_id="records-table",
                      widths=("4%", "40%", "13%", "12%", "17%", "14%"), sortable=True,
                      filter_hint="e.g. 004, Laplace, svt",
                      verdicts=[str(r.get("verdict")) for _, r in numbered]))
    # Items shown in another form are left out: the verdict is the summary's badge, and an
    # audit's witness line is the event, direction, p̂ and q̂ items (audit.md keeps the line).
    for n, r in numbered:
        nodeid = str(r.get("nodeid"))
        listed = record_items(r, holm)
        hidden = {"verdict", "witness"} if any(k == "witness event" for k, _, _ in listed) else {
            "verdict"}
        items = "".join(f"<dt>{_e(k)}<dd>{'<code>' + _e(v) + '</code>' if code else _e(v)}"
                        for k, v, code in listed if v not in ("—", "") and k not in hidden)
        fig = by_key.get((nodeid, r.get("call")))
        is_open = " open" if r.get("verdict") in ("violation", "missed-violation") else ""
        caption = (f"{fig.title.split(' of ')[0].split(':')[0]}, record #{n}" if fig is not None
                   else None)
        out.append(f'<details class="record {_vclass(r.get("verdict"))}" id="{record_anchor(r)}"'
                   f"{is_open}><summary><b>#{n}</b> <code>{_e(test_name(nodeid))}</code> · call "
                   f"{_e(r.get('call'))} {_badge(r.get('verdict'))}</summary>"
                   f'<dl class="kv">{items}</dl>'
                   + (_figure(fig, caption=caption) if fig is not None else "") + "</details>")
    return out


def _tests(doc: Mapping[str, Any]) -> list[str]:
    tests = tests_by_outcome(doc)
    out = ['<h2 id="tests">Tests</h2>']
    if not tests:
        return out + ["<p>No tests.</p>"]
    rows = []
    for t in tests:
        state = str(t.get("outcome"))
        rows.append([f'<td class="bad">{_e(state)}</td>' if state in ("failed", "error")
                     else _e(state),
                     f'<td id="{test_anchor(t.get("nodeid"))}"><code>{_e(t.get("nodeid"))}</code></td>',
                     _claim_link(t.get("paper"), t.get("ref"), doc),
                     _e(t.get("mutant") or "—"), _e(num(t.get("duration"), ".3g")),
                     _e(truncate(t.get("message") or "", 400))])
    return out + [_table(["outcome", "test", "paper result", "mutant", "s", "message"], rows,
                         table_id="tests-table", widths=("8%", "38%", "12%", "10%", "5%", "27%"),
                         sortable=True, filter_hint="e.g. failed, 003")]


def _verdicts_of(doc: Mapping[str, Any]) -> list[str]:
    """Every verdict that can get a colour class on the page (records and the known ones)."""
    return [*VERDICTS, *(str(r.get("verdict")) for r in doc.get("records") or [])]


def render_html(document: Mapping[str, Any], figures: Sequence[RenderedFigure] = ()) -> str:
    """The HTML report as a string (figures linked from ``figures/`` beside it)."""
    run_id = document.get("run_id")
    numbered = numbered_records(document)
    numbers = {id(r): n for n, r in numbered}
    overview = [f for f in figures if f.key is None]
    by_key = {f.key: f for f in figures if f.key is not None}
    toc = [("verdict", "Verdict"), ("problems", "Problems"), ("errata", "Errata"),
           ("mutants", "Mutants"), ("claims", "Claims"), ("figures", "Figures"),
           ("records", "Records"), ("tests", "Tests"), ("run", "Run information")]
    body = [f"<h1>dpcheck audit report — {_e(run_id)}</h1>", *_banner(document),
            '<nav class="toc" aria-label="contents">'
            + "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in toc) + "</nav>",
            *_problems(document, numbers), *_errata(document, numbers), *_kills(document),
            *_claims(document), '<h2 id="figures">Figures</h2>']
    body += [_figure(f) for f in overview] or ["<p>No figures.</p>"]
    body += [f'<p class="note">{_e(note)}</p>' for note in getattr(figures, "notes", [])]
    body += _records(document, numbered, by_key)
    body += _tests(document)
    body += ['<h2 id="run">Run information</h2>', '<table class="kv">',
             *(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in header_items(document)),
             "</table>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>dpcheck audit report — {_e(run_id)}</title>\n<style>{_CSS}"
            f"{_verdict_css(_verdicts_of(document))}</style>\n"
            "</head>\n<body>\n" + "\n".join(body) + f"\n<script>{_JS}</script>\n</body>\n</html>\n")
