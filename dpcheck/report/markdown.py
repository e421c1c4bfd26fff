"""Markdown rendering of a run document (``audit.md``); also the per-record facts HTML reuses.

Layout: header (run id, seed, α split, scale, environment), summary table, catalogue coverage,
overview figures, one table row per record, then the records in detail — violations and missed
violations first, then expected violations and errata, then the rest — each with its witness,
bounds, p-values, seed and replay command, and finally the per-test outcomes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dpcheck.report.figures import RenderedFigure
from dpcheck.features.featurizer import describe_feature
from dpcheck.report.model import (
    FIGURES_DIR,
    curve_evidence,
    SECTIONS,
    VERDICTS,
    claim_text,
    count,
    event_text,
    header_items,
    holm_map,
    num,
    sides,
    test_name,
    truncate,
    verdict_label,
)

__all__ = ["render_markdown", "record_items", "summary_rows", "records_table", "READING"]

#: One item of a record's detail list: (label, value, value is code).
Item = tuple[str, str, bool]

READING = (
    "How to read this report: a VIOLATION means the claim is refuted at the per-test α (the "
    "ε lower bound exceeds the claimed ε, or the δ lower bound exceeds the claimed δ). "
    "'not refuted' means no evidence against the claim at this sample size — it is not a "
    "proof of privacy. Bounds are Clopper–Pearson bounds on fresh confirmation samples; p̂ is on "
    "the dataset that makes the witness event S likelier. p-values are per record; Holm-adjusted "
    "values cover the family of all claim tests of the run."
)
_SUMMARY = (("tests", "tests"), ("passed", "passed"), ("failed", "failed"),
            ("violations", "violations"), ("expected_violations", "expected violations"),
            ("errata", "errata confirmed"), ("missed", "missed violations"),
            ("measurements", "measurements"))


def _ratio(result: Mapping[str, Any]) -> str:
    if "curve" in result:  # a pure-DP bound against a curve's knee: no meaningful ratio
        return "—"
    lo, eps = result.get("epsilon_lower"), (result.get("claim") or {}).get("epsilon")
    if not isinstance(lo, (int, float)) or not isinstance(eps, (int, float)) or eps <= 0:
        return "—"
    return num(lo / eps, ".3g") if math.isfinite(lo) else "∞"


def _seed(seed: Any) -> str:
    if isinstance(seed, Mapping):
        return f"entropy {seed.get('entropy')}, spawn key {list(seed.get('spawn_key') or [])}"
    return truncate(seed, 120)


def _audit_items(result: Mapping[str, Any], p_holm: Any) -> list[Item]:
    claim = result.get("claim") or {}
    items: list[Item] = [
        ("mechanism", str(result.get("mechanism", "—")), True),
        ("claim", claim_text(claim), False),
        ("neighbour relation", str(result.get("relation") or "not checked (none given)"), False),
    ]
    pair = result.get("pair")
    if isinstance(pair, list) and len(pair) == 2:
        items += [("D", truncate(pair[0], 120), True), ("D′", truncate(pair[1], 120), True)]
    w = result.get("witness")
    if isinstance(w, Mapping):
        num_side, den_side = sides(w.get("direction"))
        level = w.get("interval_alpha")
        items += [
            ("witness event", (f"S = {{{event_text(w)}}}" if event_text(w) != w.get("description")
                               else str(w.get("description"))), True),
            ("feature", feature_text(w), False),
            ("direction", f"{num_side} makes S likelier: p = P[M({num_side}) ∈ S], "
                          f"q = P[M({den_side}) ∈ S]", False),
            ("p̂", _estimate(w, "p", num_side), False),
            ("q̂", _estimate(w, "q", den_side), False),
            ("interval level", f"each Clopper–Pearson bound one-sided at {num(level, '.3g')}",
             False),
            ("witness", str(w.get("description", "")), True),
        ]
    else:
        items.append(("witness", "none", False))
    search = result.get("search")
    if isinstance(search, Mapping):
        items.append(("counterexample search",
                      f"{num(search.get('calls'), 'd')} mechanism calls, "
                      f"{num(search.get('seconds'), '.3g')} s, {search.get('candidates')} "
                      f"candidate pairs ({', '.join(map(str, search.get('sources') or []))}); "
                      f"shrunk from {truncate(search.get('shrunk_from'), 120)}", False))
        items.append(("search replay", str(search.get("replay", "")), True))
    eps = claim.get("epsilon")
    evidence = curve_evidence(result)
    if evidence is not None:
        items.append(("curve", evidence, False))
        items.append(("pure-DP ε lower bound", f"{num(result.get('epsilon_lower'), '.4g')} "
                      "(δ = 0; not the curve claim's parameter)", False))
    else:
        items.append(("ε lower bound", f"{num(result.get('epsilon_lower'), '.4g')} (claimed ε "
                      f"= {num(eps, 'g')}; ε_lower/ε = {_ratio(result)})", False))
    if result.get("delta_lower") is not None:
        items.append(("δ lower bound", f"{num(result.get('delta_lower'), '.4g')} at ε = "
                      f"{num(eps, 'g')} (claimed δ = {num(claim.get('delta'), 'g')})", False))
    items.append(("p-value", f"{num(result.get('p_value'), '.3g')} (Holm-adjusted: "
                  f"{num(p_holm, '.3g')})", False))
    floor = [f for f in result.get("power_floor") or [] if isinstance(f, Mapping)]
    if floor:
        items.append(("what this pass rules out", "with power ≥ 0.9, had such an event been "
                      "confirmed: " + "; ".join(f"mass {num(f.get('mass'), 'g')} with p/q ≥ "
                                                f"{num(f.get('ratio'), '.3g')}" for f in floor),
                      False))
    rare = result.get("support_floor")
    if isinstance(rare, (int, float)) and math.isfinite(rare):
        items.append(("rare values ruled out", f"a value produced under one dataset only with "
                      f"mass ≥ {num(rare, '.3g')} is refuted with power ≥ 0.9", False))
    items.append(("samples per side", f"{count(result.get('samples'))} "
                  f"({count(result.get('explore_samples'))} exploration + "
                  f"{count(result.get('confirm_samples'))} confirmation)", False))
    if result.get("exact_epsilon") is not None:
        items.append(("exact (from pmf)", f"ε = {num(result.get('exact_epsilon'), '.6g')}, "
                      f"δ(claimed ε) = {num(result.get('exact_delta'), '.6g')}", False))
    check = result.get("sampler_check")
    if isinstance(check, Mapping) and check.get("mismatch"):
        items.append(("WARNING", "the sampler contradicts its own pmf: "
                      + truncate(check, 200), False))
    return items


def feature_text(witness: Mapping[str, Any]) -> str:
    """What the witness's feature is, in words, as its family describes it
    (:func:`dpcheck.features.featurizer.describe_feature`; ``output[2]`` → coordinate 2)."""
    event = witness.get("event") if isinstance(witness.get("event"), Mapping) else {}
    name = str(event.get("feature") or "")
    text = describe_feature(name) if name else None
    return f"{name}: {text}" if text else (name or "—")


def _estimate(w: Mapping[str, Any], which: str, side: str) -> str:
    lo, hi = w.get(f"{which}_interval") or (None, None)
    return (f"{num(w.get(f'{which}_hat'), '.4g')} ∈ [{num(lo, '.4g')}, {num(hi, '.4g')}] "
            f"({w.get(f'count_{which}', '?')}/{w.get('n', '?')} on {side})")


def _accuracy_items(result: Mapping[str, Any], p_holm: Any) -> list[Item]:
    return [
        ("trial", str(result.get("name", "—")), True),
        ("claim", f"P[error > {num(result.get('alpha'), 'g')}] ≤ β = "
                  f"{num(result.get('beta'), 'g')}", False),
        ("α (accuracy threshold)", num(result.get("alpha"), "g"), False),
        ("β (claimed failure probability)", num(result.get("beta"), "g"), False),
        ("trials", count(result.get("trials")), False),
        ("failures", count(result.get("failures")), False),
        ("failure rate", f"{num(result.get('failure_rate'), '.4g')} (Clopper–Pearson upper bound "
                         f"{num(result.get('failure_upper'), '.4g')}, lower "
                         f"{num(result.get('failure_lower'), '.4g')}, each at "
                         f"{num(result.get('confidence'), 'g')})", False),
        ("empirical (1−β)-quantile of the error", num(result.get("error_quantile"), ".4g"),
         False),
        ("p-value", f"{num(result.get('p_value'), '.3g')} (Holm-adjusted: "
                    f"{num(p_holm, '.3g')})", False),
    ]


def record_items(record: Mapping[str, Any], holm: Mapping[tuple[str, Any], Any]) -> list[Item]:
    """Everything a reader needs about one record, as (label, value, is_code) items."""
    result = record.get("result") if isinstance(record.get("result"), Mapping) else {}
    kind = record.get("type")
    items: list[Item] = [
        ("paper", f"{record.get('paper') or '—'}, {record.get('ref') or '—'} "
                  f"({record.get('kind') or '—'}); expected outcome: {record.get('expect')}",
         False),
        ("verdict", verdict_label(record.get("verdict")), False),
    ]
    p_holm = holm.get((str(record.get("nodeid")), record.get("call")))
    if kind == "audit":
        items += _audit_items(result, p_holm)
    elif kind == "accuracy":
        items += _accuracy_items(result, p_holm)
    else:
        items.append(("measurement", str(result.get("name", "—")), False))
        items += [(str(k), truncate(v, 300), not isinstance(v, (int, float)))
                  for k, v in result.items() if k not in ("name", "seed", "seconds")]
    if record.get("alpha") is not None:
        items.append(("test level α", num(record.get("alpha"), ".4g"), False))
    seconds = num(result.get("seconds"), ".3g")
    if isinstance(result.get("explore_seconds"), (int, float)):
        seconds += f" (exploration {num(result.get('explore_seconds'), '.3g')})"
    items.append(("seconds", seconds, False))
    if "seed" in result:
        items.append(("seed", _seed(result.get("seed")), False))
    items.append(("replay", str(record.get("replay") or "—"), True))
    return items


def summary_rows(document: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Header and values of the summary table."""
    summary = document.get("summary") or {}
    return [h for _, h in _SUMMARY], [num(summary.get(k)) for k, _ in _SUMMARY]


def records_table(document: Mapping[str, Any],
                  numbered: Sequence[tuple[int, Mapping[str, Any]]] | None = None,
                  ) -> tuple[list[str], list[list[str]]]:
    """One row per record (in ``numbered`` order and numbering, default: document order):
    number, test, paper/result, claim, ε_lower, ratio, p, p (Holm), verdict."""
    holm = holm_map(document)
    if numbered is None:
        numbered = list(enumerate(document.get("records") or [], start=1))
    head = ["#", "test · call", "paper", "result", "claim", "ε_lower", "ε_lower/ε", "p",
            "p (Holm)", "verdict"]
    rows = []
    for i, rec in numbered:
        res = rec.get("result") if isinstance(rec.get("result"), Mapping) else {}
        if rec.get("type") == "audit":
            claim, lo = claim_text(res.get("claim")), num(res.get("epsilon_lower"))
            ratio = _ratio(res)
        elif rec.get("type") == "accuracy":
            claim = f"P[err > {num(res.get('alpha'), 'g')}] ≤ {num(res.get('beta'), 'g')}"
            lo = ratio = "—"
        else:
            claim, lo, ratio = truncate(res.get("name", "measurement"), 40), "—", "—"
        rows.append([str(i), f"{test_name(rec.get('nodeid'))} · {rec.get('call')}",
                     str(rec.get("paper") or "—"), str(rec.get("ref") or "—"), claim, lo, ratio,
                     num(res.get("p_value"), ".3g"),
                     num(holm.get((str(rec.get("nodeid")), rec.get("call"))), ".3g"),
                     verdict_label(rec.get("verdict"))])
    return head, rows


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    text = " ".join(text.split())
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out + [""]


def render_markdown(document: Mapping[str, Any],
                    figures: Sequence[RenderedFigure] = ()) -> str:
    """The full Markdown report; figures are linked as ``figures/<name>`` (relative to the run
    directory). It starts with the digest of ``summary.md`` (verdict, counts, problems, errata,
    mutants, coverage), then figures, every record (numbered as in the HTML) and the tests."""
    from dpcheck.report.overview import kill_rows, numbered_records
    from dpcheck.report.summary import render_summary

    holm = holm_map(document)
    out = [f"# dpcheck audit report — {document.get('run_id')}", ""]
    digest = render_summary(document, figures).splitlines()
    out += [line for line in digest if not line.startswith("Full report:")]
    out += [READING, ""]
    kills = kill_rows(document)
    if kills:
        out += ["## Mutant kill matrix", ""]
        out += _table(["paper", "result", "mutant", "test", "outcome", "evidence"],
                      [[k.get("paper") or "—", k.get("ref") or "—", k.get("mutant"),
                        test_name(k.get("nodeid")), k.get("outcome"),
                        (f"ε_lower {num(k.get('epsilon_lower'), '.3g')} vs ε "
                         f"{num(k.get('claimed_epsilon'), 'g')}"
                         if k.get("epsilon_lower") is not None else
                         f"failure rate {num(k.get('failure_rate'), '.3g')} vs β "
                         f"{num(k.get('beta'), 'g')}" if k.get("failure_rate") is not None
                         else truncate(k.get("deviation") or k.get("assertion") or "—", 120))]
                       for k in kills])
    by_key = {f.key: f for f in figures if f.key is not None}
    overview = [f for f in figures if f.key is None]
    if overview:
        out += ["## Figures", ""]
        out += [f"![{f.title}]({FIGURES_DIR}/{f.name})" + "\n" for f in overview]
    out += [f"_{note}_" + "\n" for note in getattr(figures, "notes", [])]
    numbered = numbered_records(document)
    out += ["## Records", ""]
    head, rows = records_table(document, numbered)
    out += _table(head, rows) if rows else ["No records.", ""]
    section = None
    for number, rec in numbered:
        title = SECTIONS[VERDICTS.get(str(rec.get("verdict")), ("", "", 2))[2]]
        if title != section:
            section = title
            out += [f"## {title}", ""]
        out += [f"### {number}. {_code(str(rec.get('nodeid')))} · call {rec.get('call')} — "
                f"{verdict_label(rec.get('verdict'))}", ""]
        for label, value, is_code in record_items(rec, holm):
            out.append(f"- **{label}**: {_code(value) if is_code else _cell(value)}")
        fig = by_key.get((str(rec.get("nodeid")), rec.get("call")))
        if fig is not None:
            out += ["", f"![{fig.title}]({FIGURES_DIR}/{fig.name})"]
        out.append("")
    tests = list(document.get("tests") or [])
    if tests:
        rank = {"failed": 0, "error": 0, "passed": 1, "skipped": 2}
        tests.sort(key=lambda t: rank.get(str(t.get("outcome")), 3))
        out += ["## Tests", ""]
        out += _table(["outcome", "test", "paper", "result", "mutant", "seconds", "message"],
                      [[t.get("outcome"), t.get("nodeid"), t.get("paper") or "—",
                        t.get("ref") or "—", t.get("mutant") or "—",
                        num(t.get("duration"), ".3g"), truncate(t.get("message") or "", 200)]
                       for t in tests])
    out += ["## Run information", ""]
    out += _table(["", ""], [[k, v] for k, v in header_items(document)])
    return "\n".join(out).rstrip() + "\n"
