"""dpcheck: executable differential-privacy claims.

The public API: claims (:class:`PureDP`, :class:`ApproxDP`), neighbour relations
(:class:`AddRemove`, :class:`Replace`, :class:`UserLevel`, :class:`QueryAnswers`), the auditor
(:func:`audit` → :class:`AuditResult`, :func:`audit_pairs`), accuracy claims (:func:`check_accuracy`), exact analysis (:func:`exact_privacy`, module :mod:`dpcheck.exact`) and the
errors (:class:`InvalidArgument`, :class:`PrivacyViolation`, :class:`AccuracyViolation`).
"""

from . import exact, stats, strategies
from .accuracy import AccuracyResult, check_accuracy
from .audit import audit
from .claims import ApproxDP, PureDP
from .errors import (AccuracyViolation, DPCheckError, GlobalRandomStateWarning, InvalidArgument,
                     PrivacyViolation)
from .events import Event
from .exact import ExactPrivacy, exact_privacy
from .mechanism import ExactMechanism, Mechanism, SamplingMechanism
from .neighbours import AddRemove, QueryAnswers, Replace, UserLevel
from .pairs import PairsResult, audit_pairs
from .results import AuditResult, Witness
from .sampler_check import SamplerCheck
from .search import SearchResult, find_counterexample

__version__ = "0.1.0"

__all__ = [
    "AccuracyResult",
    "AccuracyViolation",
    "AddRemove",
    "ApproxDP",
    "AuditResult",
    "DPCheckError",
    "Event",
    "ExactMechanism",
    "ExactPrivacy",
    "GlobalRandomStateWarning",
    "InvalidArgument",
    "Mechanism",
    "PairsResult",
    "PrivacyViolation",
    "PureDP",
    "QueryAnswers",
    "Replace",
    "SamplerCheck",
    "SamplingMechanism",
    "SearchResult",
    "UserLevel",
    "Witness",
    "audit",
    "audit_pairs",
    "check_accuracy",
    "exact",
    "exact_privacy",
    "find_counterexample",
    "stats",
    "strategies",
]
