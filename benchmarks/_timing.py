"""Shared timing helper of the speed benchmarks (run as scripts: ``python benchmarks/x.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``, in seconds (the minimum is the
    least disturbed by other processes on a shared machine)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best
