"""Audit reports: ``reports/<run-id>/audit.json`` (the source of truth), ``audit.md``,
an ``audit.html`` with its figures in ``figures/``, and ``reports/latest`` pointing at the newest run.

>>> from dpcheck.report import write_run, load_run, render, compare     # doctest: +SKIP
>>> run_dir = write_run(document)                  # reports/<run_id>/ and reports/latest
>>> document = load_run("reports/latest")
>>> print(compare(load_run(old_dir), document))    # Markdown diff of two runs

Write order: ``audit.json`` first, then ``audit.md`` and ``summary.md`` (a short digest under
60 000 characters for a CI job summary or a PR comment), then ``figures/*.png`` and ``audit.html``;
``latest`` moves only after every file is complete. Each file is written atomically (temporary
file in the same directory + :func:`os.replace`), so an interrupted run leaves earlier runs and
their files intact and never a half-written report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from dpcheck.errors import InvalidArgument
from dpcheck.report.compare import compare
from dpcheck.report.model import (
    FIGURES_DIR,
    FORMATS,
    HTML_NAME,
    JSON_NAME,
    MD_NAME,
    SCHEMA_VERSION,
    atomic_write_bytes,
    atomic_write_text,
    dumps,
    load_run,
    point_latest,
    validate,
)

__all__ = ["write_run", "load_run", "render", "compare", "validate", "prune_runs", "SCHEMA_VERSION",
           "FORMATS"]


def _formats(formats: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(formats, str):
        formats = [f.strip() for f in formats.split(",") if f.strip()]
    out = tuple(formats)
    bad = [f for f in out if f not in FORMATS]
    if bad or not out:
        raise InvalidArgument(f"formats={out!r} must be a non-empty selection of "
                              + ", ".join(repr(f) for f in FORMATS))
    return out


def render(document: Mapping[str, Any], run_dir: str | os.PathLike[str],
           formats: Iterable[str] | str = ("md", "html"),
           progress: Callable[[str, int, int], None] | None = None) -> list[Path]:
    """(Re-)render ``audit.md`` / ``summary.md`` / figures / ``audit.html`` of ``document`` into
    ``run_dir``.

    ``"json"`` in ``formats`` also rewrites ``audit.json``. ``progress(phase, done, total)`` is
    called as figures are drawn and files written. Returns the files written.
    """
    document = validate(document)
    formats = _formats(formats)
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InvalidArgument(f"run_dir={str(run_dir)!r} is not a directory")
    written: list[Path] = []
    if "json" in formats:
        written.append(atomic_write_text(run_dir / JSON_NAME, dumps(document)))
    if "md" not in formats and "html" not in formats:
        return written
    from dpcheck.report.figures import build_figures
    from dpcheck.report.html import render_html
    from dpcheck.report.markdown import render_markdown
    from dpcheck.report.summary import SUMMARY_NAME, render_summary

    # in memory: the Markdown may only link finished files
    figures = build_figures(document, progress=progress)
    if "md" in formats:
        written.append(atomic_write_text(run_dir / MD_NAME, render_markdown(document, figures)))
        written.append(atomic_write_text(run_dir / SUMMARY_NAME,
                                         render_summary(document, figures)))
    fig_dir = run_dir / FIGURES_DIR
    if figures:
        fig_dir.mkdir(exist_ok=True)
        written += [atomic_write_bytes(fig_dir / f.name, f.png) for f in figures]
    if fig_dir.is_dir():  # a re-render may draw fewer figures: drop the stale ones
        keep = {f.name for f in figures}
        for stale in fig_dir.glob("*.png"):
            if stale.name not in keep:
                stale.unlink()
    if "html" in formats:
        if progress is not None:
            progress("HTML", 0, 1)
        written.append(atomic_write_text(run_dir / HTML_NAME, render_html(document, figures)))
    return written


def _new_run_dir(directory: Path, run_id: str) -> Path:
    """``directory/run_id``, or ``run_id.2``, ``.3``, … if that run directory already exists
    (an earlier run is never overwritten)."""
    candidate, n = directory / run_id, 1
    while True:
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            n += 1
            candidate = directory / f"{run_id}.{n}"


def prune_runs(directory: str | os.PathLike[str], keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest run folders of ``directory`` (folders holding an
    ``audit.json``, newest by name: run ids start with their UTC time); the run ``latest``
    points at is always kept. Returns the folders deleted."""
    import shutil

    if keep < 1:
        raise InvalidArgument(f"keep={keep!r} must be >= 1")
    directory = Path(directory)
    latest = directory / "latest"
    current = latest.resolve() if latest.is_symlink() else (
        directory / latest.read_text().strip() if latest.is_file() else None)
    runs = sorted((p for p in directory.iterdir()
                   if p.is_dir() and not p.is_symlink() and (p / JSON_NAME).is_file()),
                  key=lambda p: p.name, reverse=True)
    doomed = [p for p in runs[keep:] if current is None or p.resolve() != current.resolve()]
    for path in doomed:
        shutil.rmtree(path)
    return doomed


def write_run(document: Mapping[str, Any], *, directory: str | os.PathLike[str] = "reports",
              formats: Iterable[str] | str = FORMATS, latest: bool = True) -> Path:
    """Write a run's report into ``directory/<run_id>/`` and point ``directory/latest`` at it
    (``latest=False``, as for an interrupted run: leave ``latest`` where it was).

    ``audit.json`` is always written, first (validated; strict JSON, ``inf`` as ``"inf"``); then, as
    selected by ``formats``, ``audit.md``, ``figures/*.png`` and ``audit.html``. If any step
    fails, the exception propagates, files already completed stay, no partial file exists and
    ``latest`` still points at the previous run.

    Returns
    -------
    pathlib.Path
        The run directory.
    """
    document = validate(document)
    formats = _formats(formats)
    text = dumps(document)  # fail on unserialisable documents before touching the disk
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    run_dir = _new_run_dir(directory, str(document["run_id"]))
    atomic_write_text(run_dir / JSON_NAME, text)
    rest = [f for f in formats if f != "json"]
    if rest:
        render(document, run_dir, rest)
    if latest and not document.get("interrupted"):
        point_latest(directory, run_dir)
    return run_dir
