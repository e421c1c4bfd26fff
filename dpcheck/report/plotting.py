"""Shared pieces of the report figures: the figure records and PNG rendering (Agg, no pyplot)."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from dpcheck.report.model import VERDICTS, verdict_colour, verdict_label

__all__ = ["RenderedFigure", "FigureList", "png_bytes", "as_float", "legend_verdicts", "DPI",
           "render_jobs", "POOL_MIN_JOBS", "WORKERS_ENV"]

#: Resolution of the PNG figures.
DPI = 95
#: Figure jobs from which :func:`render_jobs` uses a process pool (below: the pool's start-up,
#: about a second per worker to import matplotlib, costs more than it saves).
POOL_MIN_JOBS = 8
#: Environment variable capping the figure workers (``1``: render in this process).
WORKERS_ENV = "DPCHECK_FIGURE_WORKERS"


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


def _workers(jobs: int) -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    cap = os.environ.get(WORKERS_ENV, "").strip()
    if cap.isdigit() and int(cap) > 0:
        cores = min(cores, int(cap))
    return min(cores, jobs) if jobs >= POOL_MIN_JOBS else 1


def render_jobs(jobs: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]],
                done: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(*args) for fn, args in jobs]``, in order, on a process pool of one worker per
    available core when there are at least :data:`POOL_MIN_JOBS` (``$DPCHECK_FIGURE_WORKERS``
    caps the workers; the report's figures are independent, so both cores of a CI machine
    draw them). ``done(k)`` is called as the first ``k`` results are ready. A pool that cannot
    start or breaks falls back to rendering here."""
    workers = _workers(len(jobs))
    out: list[Any] = []
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods
                                              else "spawn")
        try:
            with ProcessPoolExecutor(workers, mp_context=context) as ex:
                futures = [ex.submit(fn, *args) for fn, args in jobs]
                for future in futures:
                    out.append(future.result())
                    if done is not None:
                        done(len(out))
            return out
        except (BrokenProcessPool, OSError):
            out = []  # render what is left here (a pool-less sandbox, a killed worker)
    for fn, args in jobs[len(out):]:
        out.append(fn(*args))
        if done is not None:
            done(len(out))
    return out
