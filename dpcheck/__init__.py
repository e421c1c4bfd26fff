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

from dpcheck.claims import ApproxDP, Closeness, PerfectGeneralization, PureDP, RobustGeneralization
from dpcheck.core.audit import audit
from dpcheck.core.results import AuditResult, Witness
from dpcheck.curves import ZCDP, GaussianDP, PrivacyCurve, RenyiDP, TradeOff, from_accountant
from dpcheck.errors import (
    AccuracyViolation,
    DPCheckError,
    GlobalRandomStateWarning,
    InvalidArgument,
    PrivacyViolation,
    WorkerLost,
)
from dpcheck.events.event import Event
from dpcheck.internal.version import __version__ as __version__
from dpcheck.mechanism import ExactMechanism, Mechanism, SamplingMechanism
from dpcheck.neighbours import AddRemove, QueryAnswers, Replace, UserLevel

# Heavy parts load on first use (module __getattr__, PEP 562), so `import dpcheck` and the
# `dpcheck` command start fast: scipy.stats (accuracy, sampler check, checkers), hypothesis
# (strategies, search) and the rest are imported when a name from them is first touched.
_LAZY = {
    "AccuracyResult": "core.accuracy", "check_accuracy": "core.accuracy",
    "ScalarMechanism": "integrations.scalar", "from_scalar": "integrations.scalar",
    "ClosenessResult": "generalization.closeness", "audit_closeness": "generalization.closeness",
    "ExactPrivacy": "exact", "exact_privacy": "exact",
    "GeneralizationResult": "generalization.result",
    "check_perfect_generalization": "generalization.perfect",
    "IIDPopulation": "generalization.population",
    "PairsResult": "core.audit_pairs", "audit_pairs": "core.audit_pairs",
    "check_robust_generalization": "generalization.robust",
    "SamplerCheck": "core.sampler_check",
    "SearchResult": "search.counterexample", "find_counterexample": "search.counterexample",
}
_LAZY_MODULES = ("exact", "stats", "strategies")

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from dpcheck import exact, stats, strategies
    from dpcheck.core.accuracy import AccuracyResult, check_accuracy
    from dpcheck.core.audit_pairs import PairsResult, audit_pairs
    from dpcheck.core.sampler_check import SamplerCheck
    from dpcheck.exact import ExactPrivacy, exact_privacy
    from dpcheck.generalization.closeness import ClosenessResult, audit_closeness
    from dpcheck.generalization.perfect import check_perfect_generalization
    from dpcheck.generalization.population import IIDPopulation
    from dpcheck.generalization.result import GeneralizationResult
    from dpcheck.generalization.robust import check_robust_generalization
    from dpcheck.integrations.scalar import ScalarMechanism, from_scalar
    from dpcheck.search.counterexample import SearchResult, find_counterexample


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



__all__ = [
    "AccuracyResult",
    "AccuracyViolation",
    "AddRemove",
    "ApproxDP",
    "AuditResult",
    "Closeness",
    "GaussianDP",
    "PrivacyCurve",
    "RenyiDP",
    "TradeOff",
    "ZCDP",
    "from_accountant",
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
