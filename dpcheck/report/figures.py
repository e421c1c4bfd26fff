"""Report figures, rendered to PNG bytes with matplotlib's object-oriented API (Agg, no pyplot).

1. :func:`epsilon_figures` — ε lower bound / claimed ε (ratio scale: 1 is the claim), one row per
   audit record, grouped under a header per paper and result; as many pages as needed (no cap).
   Exact ε (from a pmf), where known, is a diamond.
2. :func:`region_figure` — for one refuted claim: the witness's (q̂, p̂) with its Clopper–Pearson
   box against the claim's boundary ``p = e^ε q + δ``; the region above it is forbidden.
3. :func:`accuracy_figure` — failure rate (with its Clopper–Pearson interval) versus claimed β.
4. :func:`delta_figures` — for every approximate-DP audit, the lower confidence bound on the
   privacy profile δ(ε) (the best of the confirmed witnesses: ``max(p_low − e^ε q_high, 0)``)
   against the claimed (ε, δ) and, where known, the exact δ at the claimed ε; small multiples.

Region figures are drawn for at most :data:`MAX_REGIONS` refuted records (unexpected violations
first, then errata, then expected violations); :attr:`FigureList.notes` says which records were
left out and why, and every renderer prints those notes. Nothing is dropped silently.

No pyplot: figures are :class:`matplotlib.figure.Figure` objects drawn by the Agg canvas, so
nothing touches global state or opens a window.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from dpcheck.report.model import (
    claim_text,
    num,
    record_label,
    shows_violation,
    test_name,
    truncate,
    verdict_colour,
    verdict_label,
)
from dpcheck.report.plotting import (
    FigureList,
    RenderedFigure,
    as_float,
    legend_verdicts,
    png_bytes,
    render_jobs,
)
from dpcheck.report.region import region_figure

__all__ = ["RenderedFigure", "FigureList", "build_figures", "epsilon_figure", "epsilon_figures",
           "region_figure", "accuracy_figure", "delta_figures", "MAX_ROWS", "MAX_REGIONS",
           "MAX_PANELS"]

#: Rows per page of the ε and accuracy figures (more rows make more pages, never fewer rows).
MAX_ROWS = 45
#: At most this many privacy-region figures per report (the rest are named in the notes).
MAX_REGIONS = 24
#: Panels per page of the δ(ε) small multiples.
MAX_PANELS = 20


def _group_key(r: Mapping[str, Any]) -> tuple[str, str]:
    return (str(r.get("paper") or "—"), str(r.get("ref") or "no catalogue result"))


def _audit_rows(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    rows = [r for r in records if r.get("type") == "audit" and isinstance(r.get("result"), Mapping)]
    return sorted(rows, key=lambda r: (_group_key(r), str(r.get("nodeid")), str(r.get("call"))))


def epsilon_figure(records: Sequence[Mapping[str, Any]], page: str = "") -> bytes | None:
    """ε_lower / claimed ε per audit record (bar, coloured by verdict; ratio 1 = the claim),
    grouped under a bold header per paper and result, with full row labels."""
    rows = _audit_rows(records)
    if not rows:
        return None
    lines: list[tuple[str, Mapping[str, Any] | None]] = []
    last = None
    for r in rows:
        if _group_key(r) != last:
            last = _group_key(r)
            lines.append((f"{last[0]} · {last[1]}", None))
        lines.append((record_label(r, 70), r))
    n = len(lines)
    y = np.arange(n)[::-1]
    fig = Figure(figsize=(11.0, 1.6 + 0.27 * n))
    ax = fig.add_subplot()
    top = 20.0
    for yi, (label, r) in zip(y, lines):
        if r is None:
            continue
        res = r["result"]
        eps = as_float((res.get("claim") or {}).get("epsilon"))
        lo = as_float(res.get("epsilon_lower"))
        ratio = lo / eps if eps > 0 else math.nan
        shown = top if math.isinf(ratio) else min(ratio, top)
        ax.barh(yi, shown if math.isfinite(shown) else 0.0, height=0.6,
                color=verdict_colour(r.get("verdict")), alpha=0.85, zorder=2)
        exact = as_float(res.get("exact_epsilon"))
        if math.isfinite(exact) and eps > 0:
            ax.plot([min(exact / eps, top)], [yi], "D", color="black", ms=4, zorder=4)
        text = ("ε_lower = ∞" if math.isinf(lo) else
                f"{num(lo, '.3g')} / {num(eps, 'g')}" + (" (beyond axis)" if ratio > top else ""))
        ax.annotate(text, (shown if math.isfinite(shown) else 0.0, yi), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=7,
                    fontweight="bold" if lo > eps else "normal")
    ax.axvline(1.0, color="black", lw=1.6, zorder=3)
    ax.set_xscale("asinh", linear_width=0.25)
    ax.set_xlim(0, top * 1.8)
    ticks = [0, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(y, [t for t, _ in lines], fontsize=7)
    for tick, (_, r) in zip(ax.get_yticklabels(), lines):
        if r is None:
            tick.set_fontweight("bold")
            tick.set_fontsize(8)
    ax.grid(axis="x", color="#dddddd", zorder=0)
    ax.set_xlabel("ε_lower / claimed ε  (1 = the claim; right of the black line refutes it at "
                  "confidence 1 − α)")
    ax.set_title("ε lower bound relative to the claimed ε, per audit, grouped by paper and result"
                 + (f" — {page}" if page else ""), fontsize=10)
    diamond = Line2D([], [], color="black", marker="D", linestyle="none", markersize=5,
                     label="exact ε / claimed ε (from pmf)")
    legend_verdicts(ax, [str(r.get("verdict")) for _, r in lines if r is not None], [diamond])
    return png_bytes(fig)


def epsilon_figures(records: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """:func:`epsilon_figure` in pages of at most :data:`MAX_ROWS` audit records."""
    pngs = (epsilon_figure(chunk, label) for chunk, label in _epsilon_pages(records))
    return [png for png in pngs if png is not None]


def _epsilon_pages(records: Sequence[Mapping[str, Any]]
                   ) -> list[tuple[list[Mapping[str, Any]], str]]:
    # curve claims are judged by their curve (their own figures), not by ε_lower / ε: their
    # ε_lower is a pure-DP bound and their "ε" the curve's knee, so the ratio says nothing
    rows = [r for r in _audit_rows(records) if "curve" not in r["result"]]
    pages = [rows[i:i + MAX_ROWS] for i in range(0, len(rows), MAX_ROWS)]
    return [(chunk, f"page {k} of {len(pages)}" if len(pages) > 1 else "")
            for k, chunk in enumerate(pages, start=1)]


def _profile(res: Mapping[str, Any], grid: Any) -> Any:
    """Lower confidence bound on δ(ε) over ``grid``: the best confirmed witness."""
    best = np.zeros_like(grid)
    for w in res.get("confirmed") or ([res["witness"]] if res.get("witness") else []):
        try:
            p_lo, q_hi = as_float(w["p_interval"][0]), as_float(w["q_interval"][1])
        except (KeyError, TypeError, IndexError):
            continue
        if math.isfinite(p_lo) and math.isfinite(q_hi):
            best = np.maximum(best, p_lo - np.exp(grid) * q_hi)
    return np.clip(best, 0.0, None)


def _delta_pages(records: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    rows = [r for r in _audit_rows(records)
            if (r["result"].get("claim") or {}).get("kind") == "approx"]
    return [rows[i:i + MAX_PANELS] for i in range(0, len(rows), MAX_PANELS)]


def delta_figures(records: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """Small multiples of δ(ε) lower bounds for the approximate-DP audits (pages of
    :data:`MAX_PANELS`)."""
    pages = _delta_pages(records)
    return [_delta_page(chunk, k, len(pages)) for k, chunk in enumerate(pages, start=1)]


def _delta_page(chunk: Sequence[Mapping[str, Any]], k: int, n_pages: int) -> bytes:
    """Page ``k`` of ``n_pages`` of :func:`delta_figures`."""
    cols = 3
    nrow = math.ceil(len(chunk) / cols)
    fig = Figure(figsize=(12.0, 1.0 + 2.9 * nrow), layout="constrained")
    axes = fig.subplots(nrow, cols, squeeze=False)
    for ax in axes.flat[len(chunk):]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, chunk):
        res = r["result"]
        claim = res.get("claim") or {}
        eps, delta = as_float(claim.get("epsilon")), as_float(claim.get("delta") or 0.0)
        lo = as_float(res.get("epsilon_lower"))
        right = max(2.0 * eps, 1.2 * lo if math.isfinite(lo) else 0.0, 0.5)
        grid = np.linspace(0.0, right, 300)
        prof = _profile(res, grid)
        colour = verdict_colour(r.get("verdict"))
        exact = as_float(res.get("exact_delta"))
        positive = prof[prof > 0]
        floor = min([v for v in (delta, exact, float(positive.min()) if positive.size else 1.0)
                     if math.isfinite(v) and v > 0] + [1e-3]) / 10
        ax.set_yscale("log")
        ax.plot(grid, np.where(prof > 0, prof, np.nan), color=colour, lw=1.8,
                label="δ(ε) lower bound")
        ax.fill_between(grid, floor, np.where(prof > floor, prof, floor), color=colour,
                        alpha=0.15, lw=0)
        ax.plot([eps], [max(delta, floor)], "o", color="black", ms=5, label="claimed (ε, δ)")
        ax.axvline(eps, color="black", lw=0.6, ls=":")
        if math.isfinite(exact):
            ax.plot([eps], [max(exact, floor)], "D", mfc="none", color="black", ms=6,
                    label="exact δ at claimed ε" + (" (0: on the floor)" if exact <= 0
                                                    else ""))
        if not positive.size:
            ax.text(0.5, 0.5, "no positive δ lower bound\n(nothing refuted at any ε)",
                    transform=ax.transAxes, ha="center", va="center", fontsize=7,
                    color="#555555")
        ax.set_ylim(floor, 1.5)
        ax.set_xlim(0, right)
        ax.tick_params(labelsize=7)
        name = test_name(r.get("nodeid"))
        ax.set_title(f"{truncate(name, 58)} · call {r.get('call')}\n"
                     f"{r.get('paper') or '—'} {r.get('ref') or ''} · "
                     f"{claim_text(claim)}\n{verdict_label(r.get('verdict'))}",
                     fontsize=7)
        ax.grid(color="#eeeeee")
    axes.flat[0].legend(fontsize=7, loc="upper right", frameon=False)
    fig.suptitle("Approximate DP: lower confidence bound on δ(ε) (curve) vs the claimed "
                 "(ε, δ) (dot); a curve above the dot at the claimed ε refutes the claim"
                 + (f" — page {k} of {n_pages}" if n_pages > 1 else ""), fontsize=10)
    fig.supxlabel("ε", fontsize=9)
    fig.supylabel("δ (log scale)", fontsize=9)
    return png_bytes(fig)


def accuracy_figure(records: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Failure rate with its Clopper–Pearson interval (bar) vs claimed β (tick), per record."""
    rows = [r for r in records
            if r.get("type") == "accuracy" and isinstance(r.get("result"), Mapping)]
    if not rows:
        return None
    n = len(rows)
    y = np.arange(n)[::-1]
    res = [r["result"] for r in rows]
    rate = np.array([as_float(x.get("failure_rate")) for x in res])
    low = np.array([as_float(x.get("failure_lower", x.get("failure_rate"))) for x in res])
    high = np.array([as_float(x.get("failure_upper")) for x in res])
    beta = np.array([as_float(x.get("beta")) for x in res])
    fig = Figure(figsize=(9.0, 1.9 + 0.34 * n))
    ax = fig.add_subplot()
    for yi, r, lo, hi, v in zip(y, rate, low, high, rows):
        c = verdict_colour(v.get("verdict"))
        ax.plot([lo, hi], [yi, yi], color=c, lw=5, alpha=0.45, solid_capstyle="butt")
        ax.plot([r], [yi], "o", color=c, ms=7, zorder=3)
    ax.scatter(beta, y, marker="|", s=420, color="black", linewidths=2.6, zorder=4)
    top = float(np.nanmax(np.concatenate([high, beta, [0.01]])))
    ax.set_xlim(0, min(1.0, top * 1.2))
    ax.set_ylim(-0.7, n - 0.3)
    labels = [f"{record_label(r)} (α={num(x.get('alpha'), 'g')})" for r, x in zip(rows, res)]
    ax.set_yticks(y, labels, fontsize=8)
    ax.grid(axis="x", color="#dddddd", zorder=0)
    ax.set_xlabel("failure probability P[error > α]")
    ax.set_title("Accuracy: observed failure rate (dot) with its Clopper–Pearson interval (band) vs"
                 " claimed β (black tick)\nThe claim is refuted when the whole band lies right of "
                 "the tick", fontsize=10)
    handles = [Line2D([], [], color="black", marker="|", linestyle="none", markersize=14,
                      markeredgewidth=2.5, label="claimed β")]
    legend_verdicts(ax, [str(r.get("verdict")) for r in rows], handles)
    return png_bytes(fig)


def _plottable(record: Mapping[str, Any]) -> bool:
    res = record["result"]
    if "curve" in res:  # drawn against its own curve (curve_figures), not an (ε, δ) line
        return False
    w = res["witness"]
    values = [as_float((res.get("claim") or {}).get("epsilon")), as_float(w.get("p_hat")), as_float(w.get("q_hat"))]
    for key in ("p_interval", "q_interval"):
        pair = w.get(key)
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            return False
        values += [as_float(v) for v in pair]
    return all(math.isfinite(v) for v in values) and 0 < as_float(w["q_interval"][1]) <= 1


def curve_figures(records: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], bytes]]:
    """One figure per audit of a GDP, zCDP or RDP claim (:mod:`dpcheck.core.curve_plot`): the
    claimed curve against the confirmed boxes (at most :data:`MAX_REGIONS`)."""
    return [(rec, _curve_png(*args)) for rec, args in _curve_jobs(records)]


def _curve_jobs(records: Sequence[Mapping[str, Any]]
                ) -> list[tuple[Mapping[str, Any], tuple[Any, ...]]]:
    make = ("gdp", "zcdp", "rdp")
    out: list[tuple[Mapping[str, Any], tuple[Any, ...]]] = []
    for rec in records:
        res = rec.get("result") if isinstance(rec.get("result"), Mapping) else {}
        claim = res.get("claim") if isinstance(res.get("claim"), Mapping) else {}
        if rec.get("type") != "audit" or claim.get("kind") not in make:
            continue
        boxes = [(as_float(w["p_interval"][0]), as_float(w["q_interval"][1]))
                 for w in res.get("confirmed") or [] if w.get("p_interval") and w.get("q_interval")]
        if boxes and len(out) < MAX_REGIONS:
            out.append((rec, (dict(claim), boxes, str(rec.get("nodeid")))))
    return out


def _curve_png(claim: Mapping[str, Any], boxes: list[tuple[float, float]], nodeid: str) -> bytes:
    """The figure of one curve claim (see :func:`curve_figures`)."""
    from dpcheck.core.curve_plot import curve_figure
    from dpcheck.curves import ZCDP, GaussianDP, RenyiDP

    kind = claim["kind"]
    made = (GaussianDP(claim["mu"]) if kind == "gdp" else ZCDP(claim["rho"]) if kind == "zcdp"
            else RenyiDP(claim["alpha"], claim["epsilon"]))
    return png_bytes(curve_figure(made, boxes, nodeid))


def build_figures(document: Mapping[str, Any],
                  progress: Callable[[str, int, int], None] | None = None) -> FigureList:
    """Every figure of a run document: ε pages, δ(ε) pages, regions (at most
    :data:`MAX_REGIONS`, the rest named in ``notes``), accuracy. ``progress(phase, done, total)``
    is called after each figure."""
    records = [r for r in document.get("records") or [] if isinstance(r, Mapping)]
    out = FigureList()
    order = {"violation": 0, "erratum-confirmed": 1, "expected-violation": 2}
    refuted = sorted((r for r in records if shows_violation(r)),
                     key=lambda r: order.get(str(r.get("verdict")), 3))
    plottable = [r for r in refuted if _plottable(r)]
    unplottable = [r for r in refuted if not _plottable(r)]
    drawn, left = plottable[:MAX_REGIONS], plottable[MAX_REGIONS:]
    # every figure is an independent job: rendered on a process pool when there are many
    # (render_jobs), assembled here in a fixed order
    eps_pages = _epsilon_pages(records)
    delta_pages = _delta_pages(records)
    curves = _curve_jobs(records)
    jobs: list[tuple[Callable[..., Any], tuple[Any, ...], str]] = []
    jobs += [(epsilon_figure, (chunk, label), "ε overview") for chunk, label in eps_pages]
    jobs += [(_delta_page, (chunk, k, len(delta_pages)), "δ(ε) curves")
             for k, chunk in enumerate(delta_pages, start=1)]
    jobs.append((accuracy_figure, (records,), "accuracy"))
    jobs += [(_curve_png, args, "curves") for _, args in curves]
    jobs += [(region_figure, (rec,), "privacy regions") for rec in drawn]
    pngs = iter(render_jobs([(fn, args) for fn, args, _ in jobs],
                            None if progress is None else
                            lambda done: progress(jobs[done - 1][2], done, len(jobs))))
    eps_png = [png for png in (next(pngs) for _ in eps_pages) if png is not None]
    for k, png in enumerate(eps_png, start=1):
        name = "epsilon.png" if len(eps_png) == 1 else f"epsilon-{k}.png"
        out.append(RenderedFigure(name, "ε lower bound / claimed ε per audit, grouped by paper "
                                  "and result" + (f" (page {k} of {len(eps_png)})"
                                                  if len(eps_png) > 1 else ""), png))
    for k in range(1, len(delta_pages) + 1):
        out.append(RenderedFigure(f"delta-{k}.png", "Approximate DP: δ(ε) lower bounds vs the "
                                  "claimed (ε, δ)" + (f" (page {k} of {len(delta_pages)})"
                                                      if len(delta_pages) > 1 else ""),
                                  next(pngs)))
    acc = next(pngs)
    if acc is not None:
        out.append(RenderedFigure("accuracy.png", "Accuracy: failure rate vs claimed β", acc))
    for i, (rec, _) in enumerate(curves, start=1):
        out.append(RenderedFigure(f"curve-{i:02d}.png", f"Claimed curve vs certified bound: "
                                  f"{rec.get('nodeid')} call {rec.get('call')}", next(pngs),
                                  (str(rec.get("nodeid")), rec.get("call"))))
    for i, rec in enumerate(drawn, start=1):
        title = (f"Privacy region of {rec.get('nodeid')} call {rec.get('call')} "
                 f"({verdict_label(rec.get('verdict'))})")
        out.append(RenderedFigure(f"region-{i:02d}.png", title, next(pngs),
                                  (str(rec.get("nodeid")), rec.get("call"))))
    if left:
        out.notes.append(
            f"Privacy-region figures are drawn for {len(drawn)} of {len(plottable)} refuted "
            f"records (at most {MAX_REGIONS}, unexpected violations first, then errata, then "
            "expected violations, to keep the report small). Left out: "
            + "; ".join(f"{r.get('nodeid')} call {r.get('call')}" for r in left)
            + ". Their witnesses and bounds are in their record details.")
    if unplottable:
        out.notes.append(
            "No privacy-region figure for " + "; ".join(
                f"{r.get('nodeid')} call {r.get('call')}" for r in unplottable)
            + " (a curve claim, drawn against its curve instead, or a witness with a "
            "non-finite or empty interval, e.g. q_high = 0).")
    return out
