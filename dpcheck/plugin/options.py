"""Command-line options of the pytest plugin: parsers of the ``--dpcheck-*`` values.

Each parser turns the option's text into its value or raises :class:`argparse.ArgumentTypeError`
with a one-line message, which pytest shows as a usage error.
"""

from __future__ import annotations

import argparse
import math

from dpcheck.report.model import FORMATS

__all__ = ["seed_arg", "alpha_arg", "scale_arg", "on_off_arg", "formats_arg"]


def seed_arg(text: str) -> int | str:
    """``--dpcheck-seed``: an int ≥ 0, ``last`` or ``random``."""
    low = text.strip().lower()
    if low in ("last", "random"):
        return low
    try:
        value = int(low)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be an int >= 0, 'last' or 'random'")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def alpha_arg(text: str) -> float:
    """``--dpcheck-alpha``: a level in (0, 1)."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number in (0, 1)")
    return value


def scale_arg(text: str) -> float:
    """``--dpcheck-scale``: a finite factor > 0."""
    value = _number(text)
    if not (value > 0.0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def on_off_arg(text: str) -> bool:
    """``--dpcheck-sequential``: ``on`` or ``off`` (also true/false, yes/no, 1/0)."""
    value = text.strip().lower()
    if value in ("on", "true", "yes", "1"):
        return True
    if value in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} must be on or off")


def formats_arg(text: str) -> tuple[str, ...]:
    """``--dpcheck-formats``: a comma-separated subset of :data:`FORMATS`."""
    items = tuple(dict.fromkeys(s.strip().lower() for s in text.split(",") if s.strip()))
    if not items or any(s not in FORMATS for s in items):
        raise argparse.ArgumentTypeError(f"{text!r} must be a comma-separated subset of "
                                         + ",".join(FORMATS))
    return items
