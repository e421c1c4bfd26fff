"""Progress output of the ``dpcheck`` command on a terminal (quiet when not a terminal)."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    """A text progress bar for :func:`dpcheck.audit`'s ``progress`` callback (throttled)."""

    def __init__(self, stream: TextIO, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream, self.width, self.interval = stream, width, interval
        self._last = -float("inf")
        self._open = False
        self._start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, done / total) if total else 1.0
        fill = int(frac * self.width)
        spent = now - self._start
        rate = done / spent if spent > 0 else 0.0
        eta = (f", ETA {(total - done) / rate:.0f} s" if rate > 0 and done < total
               else f", {spent:.1f} s")
        self.stream.write(f"\r[{'#' * fill}{'-' * (self.width - fill)}] {frac:6.1%}  "
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
