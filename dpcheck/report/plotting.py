"""Shared pieces of the report figures: the figure records and PNG rendering (Agg, no pyplot)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from dpcheck.report.model import VERDICTS, verdict_colour, verdict_label

__all__ = ["RenderedFigure", "FigureList", "png_bytes", "as_float", "legend_verdicts", "DPI"]

#: Resolution of the PNG figures.
DPI = 95


@dataclass(frozen=True)
class RenderedFigure:
    """A PNG figure: file ``name`` (under ``figures/``), ``title`` (alt text) and bytes."""

    name: str
    title: str
    png: bytes
    key: tuple[str, Any] | None = None  # (nodeid, call) of the record a region figure shows


class FigureList(list):  # type: ignore[type-arg]
    """The figures of a report plus ``notes``: what was left out of the figures and why."""

    notes: list[str]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.notes = []


def png_bytes(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def as_float(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def legend_verdicts(ax: Any, verdicts: Sequence[str], extra: list[Any]) -> None:
    handles = extra + [Patch(color=verdict_colour(v), label=verdict_label(v))
                       for v in VERDICTS if v in verdicts]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False, borderaxespad=0.0)
