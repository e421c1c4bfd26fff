"""dpcheck: executable differential-privacy claims.

The public API: claims (:class:`PureDP`, :class:`ApproxDP`), neighbour relations
(:class:`AddRemove`, :class:`Replace`, :class:`UserLevel`), the auditor (:func:`audit` →
:class:`AuditResult`), accuracy claims (:func:`check_accuracy`), exact analysis (:func:`exact_privacy`, module :mod:`dpcheck.exact`), closeness and
generalization checkers (:func:`audit_closeness`, :func:`check_perfect_generalization`,
:func:`check_robust_generalization`) and the errors (:class:`InvalidArgument`,
:class:`PrivacyViolation`, :class:`AccuracyViolation`).
"""

from . import exact, stats, strategies
from .accuracy import AccuracyResult, check_accuracy
from .adapters import ScalarMechanism, from_scalar
from .audit import audit
from .claims import ApproxDP, PureDP
from .closeness import Closeness, ClosenessResult, audit_closeness
from .errors import AccuracyViolation, DPCheckError, InvalidArgument, PrivacyViolation
from .events import Event
from .exact import ExactPrivacy, exact_privacy
from .generalization import (GeneralizationResult, PerfectGeneralization,
                             check_perfect_generalization)
from .mechanism import ExactMechanism, Mechanism, SamplingMechanism
from .neighbours import AddRemove, Replace, UserLevel
from .population import IIDPopulation
from .results import AuditResult, Witness
from .robust import RobustGeneralization, check_robust_generalization
from .sampler_check import SamplerCheck
from .search import SearchResult, find_counterexample

__version__ = "0.1.0"

__all__ = [
    "AccuracyResult",
    "AccuracyViolation",
    "AddRemove",
    "ApproxDP",
    "AuditResult",
    "Closeness",
    "ClosenessResult",
    "DPCheckError",
    "Event",
    "ExactMechanism",
    "ExactPrivacy",
    "GeneralizationResult",
    "IIDPopulation",
    "InvalidArgument",
    "Mechanism",
    "PerfectGeneralization",
    "PrivacyViolation",
    "PureDP",
    "Replace",
    "RobustGeneralization",
    "SamplerCheck",
    "SamplingMechanism",
    "ScalarMechanism",
    "SearchResult",
    "UserLevel",
    "Witness",
    "audit",
    "audit_closeness",
    "check_accuracy",
    "check_perfect_generalization",
    "check_robust_generalization",
    "exact",
    "exact_privacy",
    "find_counterexample",
    "from_scalar",
    "stats",
    "strategies",
]
