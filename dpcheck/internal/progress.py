"""Progress of long work: phases (explore, select, confirm; per pair for audit_pairs), counts
from the first second, rate and ETA per phase.

:class:`Reporter` is what the auditor calls: it knows the total and the outputs drawn so far,
and forwards them to the user's ``progress`` callback as ``progress(done, total)`` or, when the
callback takes a ``phase`` keyword, ``progress(done, total, phase=...)``. :class:`ProgressBar`
is such a callback that prints one line per phase (rewritten in place on a terminal);
``audit(progress=True)`` and the ``dpcheck audit`` command (on a terminal) use it.
:class:`PhaseProgress` prints the phases of ``dpcheck report render``.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["ProgressBar", "PhaseProgress", "Reporter", "pair_progress", "takes_phase"]


def takes_phase(callback: Callable[..., Any]) -> bool:
    """Whether ``callback`` accepts a ``phase`` keyword (or ``**kwargs``)."""
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "phase" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class Reporter:
    """The auditor's side of progress: ``total`` outputs planned (both sides), ``done`` so
    far, and the current phase (prefixed by ``context``, e.g. ``"pair 2/4"``)."""

    def __init__(self, callback: Callable[..., Any]) -> None:
        self.callback, self.phased = callback, takes_phase(callback)
        self.total, self.done, self.context = 0, 0, ""

    def start(self, total: int, done: int = 0) -> None:
        self.total, self.done = int(total), int(done)

    def at(self, done: int, phase: str) -> None:
        """Report ``done`` outputs drawn in ``phase``."""
        self.done = int(done)
        label = f"{phase} ({self.context})" if self.context else phase
        if self.phased:
            self.callback(self.done, self.total, phase=label)
        else:
            self.callback(self.done, self.total)

    def advance(self, n: int, phase: str) -> None:
        """``n`` more outputs drawn in ``phase``."""
        self.at(self.done + int(n), phase)

    def confirming(self) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` for the confirmation loop, reported as ``confirm``."""
        return lambda done, total: self.at(done, "confirm")


def reporter(progress: Any) -> Reporter | None:
    """``progress=`` of the auditor as a :class:`Reporter`: ``None`` (silent), ``True`` (a
    :class:`ProgressBar` on standard error) or a callback."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return Reporter(ProgressBar(sys.stderr))
    return Reporter(progress)


class ProgressBar:
    """A text progress bar for :func:`dpcheck.audit`'s ``progress`` callback (throttled).

    With phases (``progress(done, total, phase=...)``), each phase gets its own line, its rate
    and its ETA computed from the phase's own start (exploration and selection do not distort
    the confirmation's ETA); a phase change is always shown at once."""

    def __init__(self, stream: TextIO, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream, self.width, self.interval = stream, width, interval
        self._last = -float("inf")
        self._open = False
        self._start = time.monotonic()
        self._phase: str | None = None
        self._phase_start, self._phase_done = self._start, 0

    def __call__(self, done: int, total: int, phase: str | None = None) -> None:
        now = time.monotonic()
        if phase != self._phase:
            if self._open:
                self.stream.write("\n")
            self._phase, self._phase_start, self._phase_done = phase, now, done
        elif done < total and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, done / total) if total else 1.0
        fill = int(frac * self.width)
        spent = now - self._phase_start
        rate = (done - self._phase_done) / spent if spent > 0 else 0.0
        eta = (f", ETA {(total - done) / rate:.0f} s" if rate > 0 and done < total
               else f", {now - self._start:.1f} s")
        label = f"{phase}: " if phase else ""
        self.stream.write(f"\r{label}[{'#' * fill}{'-' * (self.width - fill)}] {frac:6.1%}  "
                          f"{done:,}/{total:,} outputs sampled ({rate:,.0f}/s{eta})  ")
        self._open = done < total
        if not self._open:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line if the bar was left unfinished (e.g. on an error)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


class PhaseProgress:
    """``progress(phase, done, total)`` printer for long steps: phase, count, rate and ETA on
    one line of ``stream`` (rewritten in place on a terminal, one line per phase change and at
    most every ``interval`` seconds otherwise, so CI logs stay short)."""

    def __init__(self, stream: TextIO, prefix: str, *, interval: float = 2.0) -> None:
        self.stream, self.prefix, self.interval = stream, prefix, interval
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last, self._phase = -float("inf"), None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        changed = phase != self._phase
        if not changed and now - self._last < (0.2 if self.tty else self.interval):
            return
        self._last, self._phase = now, phase
        spent = now - self.start
        rate = done / spent if spent > 0 else 0.0
        eta = f", ETA {max(total - done, 0) / rate:.0f} s" if rate > 0 and done < total else ""
        line = (f"{self.prefix}: {phase}: {done}/{total} steps, {spent:.0f} s elapsed"
                f" ({rate:.2g}/s{eta})")
        self.stream.write(("\r" + line.ljust(100)) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._phase is not None:
            self.stream.write("\n")
            self.stream.flush()


def pair_progress(overall: Reporter | None, i: int, m: int) -> Any:
    """The ``progress`` of pair ``i`` of ``m`` audited one after the other: its counts offset
    by the pairs before it, its phases labelled with the pair."""
    if overall is None:
        return None

    def progress(done: int, total: int, phase: str = "") -> None:
        overall.total = total * m
        overall.at(i * total + done, f"{phase} (pair {i + 1}/{m})")

    return progress
