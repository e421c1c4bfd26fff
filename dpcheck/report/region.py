"""The privacy-region figure of a refuted claim: the witness's (q̂, p̂) with its Clopper–Pearson
box against the claim's boundary ``p = e^ε q + δ`` (the region above it is forbidden)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from dpcheck.report.model import (
    claim_text,
    event_text,
    num,
    record_label,
    sides,
    truncate,
    verdict_label,
)
from dpcheck.report.plotting import as_float, png_bytes

__all__ = ["region_figure"]


def region_figure(record: Mapping[str, Any]) -> bytes:
    """The privacy region of one refuted claim, readable on its own (see the module docstring)."""
    res = record["result"]
    w = res["witness"]
    claim = res.get("claim") or {}
    eps, delta = as_float(claim.get("epsilon")), as_float(claim.get("delta") or 0.0)
    p_hat, q_hat = as_float(w.get("p_hat")), as_float(w.get("q_hat"))
    p_lo, p_hi = (as_float(v) for v in w.get("p_interval", (p_hat, p_hat)))
    q_lo, q_hi = (as_float(v) for v in w.get("q_interval", (q_hat, q_hat)))
    eps_low = as_float(res.get("epsilon_lower"))
    num_side, den_side = sides(w.get("direction"))
    log = q_hat <= 0 or p_hi < 0.01  # support mismatch, or every probability tiny
    fig = Figure(figsize=(7.6, 6.4))
    ax = fig.add_subplot()
    if log:
        x0 = q_hi / 300 if q_hat <= 0 else q_lo / 10
        x1 = min(1.0, q_hi * 30)
        y0 = max(min(p_lo, math.exp(eps) * x0 + delta) / 5, 1e-300)
        y1 = min(1.0, max(p_hi * 3, math.exp(eps) * q_hi + delta))
        ax.set_xscale("log")
        ax.set_yscale("log")
        grid = np.geomspace(x0, x1, 400)
    else:
        x0, y0 = 0.0, 0.0
        x1 = min(1.0, 1.5 * q_hi)
        y1 = min(1.0, max(p_hi, math.exp(eps) * x1 + delta) * 1.15)
        grid = np.linspace(x0, x1, 400)
    line = math.exp(eps) * grid + delta
    ax.fill_between(grid, np.minimum(line, y1), y1, color="#d62728", alpha=0.12, lw=0,
                    label=f"forbidden by the claim: P[M({num_side})∈S] > "
                          f"e^ε·P[M({den_side})∈S] + δ")
    ax.plot(grid, line, color="#d62728", lw=2,
            label=f"claim boundary p = e^ε·q + δ  (ε = {eps:g}, δ = {delta:g})")
    if math.isfinite(eps_low) and p_lo > delta:
        ax.plot(grid, math.exp(eps_low) * grid + delta, color="#555555", lw=1.2, ls="--",
                label="p = e^(ε_lower)·q + δ through the worst-case corner "
                      f"(ε_lower = {eps_low:.3g})")
    box_left = max(q_lo, x0) if log else q_lo
    ax.add_patch(Rectangle((box_left, p_lo), q_hi - box_left, p_hi - p_lo, fill=True,
                           facecolor="#1f77b4", alpha=0.25, edgecolor="#1f77b4", lw=1.5,
                           hatch="//" if q_hat <= 0 else None, label="Clopper–Pearson box"))
    if q_hat > 0:
        ax.plot([q_hat], [p_hat], "o", color="#1f77b4", ms=7, label=r"estimate $(\hat q, \hat p)$")
    else:
        ax.plot([x0], [p_hat], "<", color="#1f77b4", ms=11, clip_on=False,
                label=r"estimate: $\hat p$ at $\hat q = 0$ (off the log axis, far left)")
        ax.annotate(f"q̂ = 0: S never occurred on {den_side} in {w.get('n', '?')} samples;\n"
                    f"only q ≤ q_high = {q_hi:.3g} is known", (x0 * 1.3, p_lo), xytext=(0, -8),
                    textcoords="offset points", fontsize=8.5, color="#1f77b4", va="top")
    ax.plot([q_hi], [p_lo], "D", color="black", ms=6, zorder=5,
            label=r"worst-case corner $(q_{high}, p_{low})$: still forbidden ⇒ violation")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel(f"q = P[M({den_side}) ∈ S]")
    ax.set_ylabel(f"p = P[M({num_side}) ∈ S]")
    ax.grid(color="#e5e5e5", which="major")
    title = (f"{truncate(record_label(record), 80)}\n"
             f"claim {claim_text(claim)} refuted [{verdict_label(record.get('verdict'))}]: "
             f"ε_lower = {num(eps_low, '.4g')}\nS = {{{truncate(event_text(w), 80)}}}")
    ax.set_title(title, fontsize=10)
    n = w.get("n", "?")
    stats = (f"p̂ = {p_hat:.4g}  [{p_lo:.4g}, {p_hi:.4g}]   ({w.get('count_p', '?')}/{n} on "
             f"{num_side})\nq̂ = {q_hat:.4g}  [{q_lo:.4g}, {q_hi:.4g}]   ({w.get('count_q', '?')}/"
             f"{n} on {den_side})\nε_lower = ln((p_low − δ)/q_high) = {num(eps_low, '.4g')}"
             f" > claimed ε = {eps:g}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.11), fontsize=8, frameon=True,
              edgecolor="#cccccc", title=stats, alignment="left",
              title_fontproperties={"family": "DejaVu Sans Mono", "size": 8.5})
    return png_bytes(fig)
