"""Figures of curve audits: the claimed curve against what the confirmed events certify.

* trade-off claims (:class:`~dpcheck.GaussianDP`, :class:`~dpcheck.TradeOff`): the claimed
  ``f`` and, per confirmed event, the point ``(1 − p_low, q_high)`` — a point below ``f`` refutes
  the claim (its confidence box lies entirely below the curve);
* Rényi claims (:class:`~dpcheck.ZCDP`, :class:`~dpcheck.RenyiDP`): the claimed ``ε(α)`` and the
  certified lower bound ``max_S D_α(Bern(p_low) ‖ Bern(q_high))``;
* δ(ε) curves (:class:`~dpcheck.PrivacyCurve`): the claimed δ(ε) and the certified lower bound
  ``max_S p_low − e^ε q_high``.

Drawn with matplotlib's object API (no pyplot): :func:`curve_figure` returns a
:class:`matplotlib.figure.Figure`; :meth:`dpcheck.AuditResult.plot` calls it; the HTML report
embeds the same figure for curve records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpcheck.curves import ORDERS, CURVE_GRID, bernoulli_renyi

__all__ = ["curve_figure"]


def curve_figure(claim: Any, boxes: Sequence[tuple[float, float]], title: str = "") -> Any:
    """The claimed curve of ``claim`` against the confirmed boxes ``(p_low, q_high)``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.2, 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    kind = claim.to_dict().get("kind")
    if kind in ("gdp", "f-dp"):
        x = np.linspace(0.0, 1.0, 201)
        f = claim.tradeoff(x) if hasattr(claim, "tradeoff") else [claim.f(float(v)) for v in x]
        ax.plot(x, f, color="#1f77b4", label=f"claimed {claim.describe()}")
        ax.scatter([1 - p for p, _ in boxes], [q for _, q in boxes], color="#d62728", s=18,
                   zorder=3, label="confirmed events (1 − p_low, q_high)")
        ax.set_xlabel("type I error α")
        ax.set_ylabel("type II error β")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    elif kind in ("zcdp", "rdp"):
        orders = ORDERS[ORDERS <= 64]
        lower = np.max([bernoulli_renyi(p, q, orders) if p > q else np.zeros_like(orders)
                        for p, q in boxes], axis=0)
        claimed = (claim.rho * orders if kind == "zcdp"
                   else np.where(orders == claim.alpha, claim.epsilon, np.nan))
        if kind == "zcdp":
            ax.plot(orders, claimed, color="#1f77b4", label=f"claimed {claim.describe()}")
        else:
            ax.scatter([claim.alpha], [claim.epsilon], color="#1f77b4",
                       label=f"claimed {claim.describe()}")
        ax.plot(orders, lower, color="#d62728", label="certified lower bound")
        ax.set_xscale("log")
        ax.set_xlabel("order α")
        ax.set_ylabel("Rényi divergence ε(α)")
    else:
        eps = CURVE_GRID[CURVE_GRID <= 8]
        claimed = claim.profile[1][: eps.size] if hasattr(claim, "profile") else None
        lower = np.max([p - np.exp(eps) * q for p, q in boxes], axis=0)
        if claimed is not None:
            ax.plot(eps, claimed, color="#1f77b4", label=f"claimed {claim.describe()}")
        ax.plot(eps, np.maximum(lower, 0), color="#d62728", label="certified lower bound")
        ax.set_xlabel("ε")
        ax.set_ylabel("δ(ε)")
    ax.legend(fontsize=8)
    ax.set_title(title or claim.describe(), fontsize=10)
    fig.tight_layout()
    return fig
