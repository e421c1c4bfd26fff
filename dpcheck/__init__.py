"""dpcheck: executable differential-privacy claims.

The public API: claims (:class:`PureDP`, :class:`ApproxDP`), neighbour relations
(:class:`AddRemove`, :class:`Replace`, :class:`UserLevel`, :class:`QueryAnswers`), the auditor
(:func:`audit` → :class:`AuditResult`, :func:`audit_pairs`), accuracy claims
(:func:`check_accuracy`), exact analysis (:func:`exact_privacy`, module :mod:`dpcheck.exact`),
closeness and generalization checkers (:func:`audit_closeness`,
:func:`check_perfect_generalization`, :func:`check_robust_generalization`), adapters for
one-output-per-call mechanisms (:func:`from_scalar`, :mod:`dpcheck.integrations`) and the errors
(:class:`InvalidArgument`, :class:`PrivacyViolation`, :class:`AccuracyViolation`).
"""

from typing import TYPE_CHECKING, Any

from .audit import audit
from .claims import ApproxDP, PureDP
from .errors import (AccuracyViolation, DPCheckError, GlobalRandomStateWarning, InvalidArgument,
                     PrivacyViolation, WorkerLost)
from .events import Event
from .mechanism import ExactMechanism, Mechanism, SamplingMechanism
from .neighbours import AddRemove, QueryAnswers, Replace, UserLevel
from .results import AuditResult, Witness

# Heavy parts load on first use (module __getattr__, PEP 562), so `import dpcheck` and the
# `dpcheck` command start fast: scipy.stats (accuracy, sampler check, checkers), hypothesis
# (strategies, search) and the rest are imported when a name from them is first touched.
_LAZY = {
    "AccuracyResult": "accuracy", "check_accuracy": "accuracy",
    "ScalarMechanism": "adapters", "from_scalar": "adapters",
    "Closeness": "closeness", "ClosenessResult": "closeness", "audit_closeness": "closeness",
    "ExactPrivacy": "exact", "exact_privacy": "exact",
    "GeneralizationResult": "generalization", "PerfectGeneralization": "generalization",
    "check_perfect_generalization": "generalization",
    "IIDPopulation": "population",
    "PairsResult": "pairs", "audit_pairs": "pairs",
    "RobustGeneralization": "robust", "check_robust_generalization": "robust",
    "SamplerCheck": "sampler_check",
    "SearchResult": "search", "find_counterexample": "search",
}
_LAZY_MODULES = ("exact", "stats", "strategies")

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from . import exact, stats, strategies
    from .accuracy import AccuracyResult, check_accuracy
    from .adapters import ScalarMechanism, from_scalar
    from .closeness import Closeness, ClosenessResult, audit_closeness
    from .exact import ExactPrivacy, exact_privacy
    from .generalization import (GeneralizationResult, PerfectGeneralization,
                                 check_perfect_generalization)
    from .pairs import PairsResult, audit_pairs
    from .population import IIDPopulation
    from .robust import RobustGeneralization, check_robust_generalization
    from .sampler_check import SamplerCheck
    from .search import SearchResult, find_counterexample


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpcheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "GlobalRandomStateWarning",
    "IIDPopulation",
    "InvalidArgument",
    "Mechanism",
    "PairsResult",
    "PerfectGeneralization",
    "PrivacyViolation",
    "PureDP",
    "QueryAnswers",
    "Replace",
    "RobustGeneralization",
    "SamplerCheck",
    "SamplingMechanism",
    "ScalarMechanism",
    "SearchResult",
    "UserLevel",
    "Witness",
    "WorkerLost",
    "audit",
    "audit_closeness",
    "audit_pairs",
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
