"""Exceptions raised by dpcheck.

Every error dpcheck raises on bad input is an :class:`InvalidArgument` (a ``ValueError``) whose
message names the offending argument, in the form ``epsilon=-1.0 must be > 0``. A refuted claim
is reported by :class:`PrivacyViolation` / :class:`AccuracyViolation`; both are
``AssertionError`` subclasses so that pytest shows them as ordinary test failures, and both carry
the result object that proves the violation.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AccuracyViolation", "DPCheckError", "GlobalRandomStateWarning", "InvalidArgument",
           "PrivacyViolation", "WorkerLost"]


class DPCheckError(Exception):
    """Base class of every exception dpcheck raises on purpose."""


class InvalidArgument(DPCheckError, ValueError):
    """An argument (or a mechanism's output) is not valid; the message names the argument."""


class PrivacyViolation(DPCheckError, AssertionError):
    """A privacy claim was refuted at the requested confidence.

    Parameters
    ----------
    message
        Human-readable explanation, including the witness event.
    result
        The :class:`~dpcheck.core.results.AuditResult` (or search result) that refutes the claim.
    """

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class AccuracyViolation(DPCheckError, AssertionError):
    """An (α, β)-accuracy claim was refuted at the requested confidence; carries the result."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class WorkerLost(DPCheckError, RuntimeError):
    """An executor lost the process that was drawing a chunk and cannot redraw it (a
    ``ProcessPoolExecutor`` whose worker died is broken for good; a Dask task whose workers kept
    dying). The chunks finished before are kept in the checkpoint, if one was given."""


class GlobalRandomStateWarning(UserWarning):
    """The mechanism draws from NumPy's global ``np.random`` state instead of the ``rng`` it is
    given: its outputs do not depend on the audit's seed, so the audit cannot be replayed (the
    bounds stay valid: the draws are still independent). Pass ``rng`` through to every draw."""
