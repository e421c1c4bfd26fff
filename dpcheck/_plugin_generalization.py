"""``dp_generalization`` fixture: the generalization checkers inside the dpcheck plugin.

Not registered by the plugin yet: a test module opts in with
``from dpcheck._plugin_generalization import dp_generalization  # noqa: F401`` (the lead can
register it in :mod:`dpcheck.pytest_plugin` by importing it there). Each call spends this test's
next share of the family α (``_Recorder.next_alpha``), runs on the call's own stream
``child(test seed, "generalization", i)``, is recorded (type ``"generalization"``) and, on a
violation in a test that expects the claim to hold, raises :class:`~dpcheck.PrivacyViolation`.
Results carry ``violation``, so expected-violation tests and mutant cases count them.

``dp_generalization.closeness(a, b, claim, **kw)``, ``.perfect(mechanism, population, claim,
**kw)``, ``.robust(mechanism, population, claim, **kw)`` wrap :func:`dpcheck.audit_closeness`,
:func:`dpcheck.check_perfect_generalization` and :func:`dpcheck.check_robust_generalization`.
"""

from __future__ import annotations

from typing import Any

import pytest

from .closeness import audit_closeness
from .errors import PrivacyViolation
from .generalization import check_perfect_generalization
from .robust import check_robust_generalization
from .rng import child

__all__ = ["dp_generalization", "GeneralizationRunner"]


class GeneralizationRunner:
    """The object behind the fixture (one per test)."""

    def __init__(self, recorder: Any) -> None:
        self._r = recorder

    def _run(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        from .pytest_plugin import _reject

        r = self._r
        _reject(kwargs, ("alpha", "seed"), "dp_generalization")
        i, alpha = r.next_alpha()
        result = fn(*args, alpha=alpha, seed=child(r.seed, "generalization", i), **kwargs)
        r.data.results.append(result)
        record = r.add("generalization", alpha, result.violation, result.to_dict())
        if result.violation and r.info["expect"] == "holds":
            raise PrivacyViolation(f"{result.summary()}\nreplay: {record['replay']}", result)
        return result

    def closeness(self, sampler_a: Any, sampler_b: Any, claim: Any, **kwargs: Any) -> Any:
        """:func:`dpcheck.audit_closeness` at this call's α."""
        return self._run(audit_closeness, (sampler_a, sampler_b, claim), kwargs)

    def perfect(self, mechanism: Any, population: Any, claim: Any, **kwargs: Any) -> Any:
        """:func:`dpcheck.check_perfect_generalization` at this call's α."""
        return self._run(check_perfect_generalization, (mechanism, population, claim), kwargs)

    def robust(self, mechanism: Any, population: Any, claim: Any, **kwargs: Any) -> Any:
        """:func:`dpcheck.check_robust_generalization` at this call's α."""
        return self._run(check_robust_generalization, (mechanism, population, claim), kwargs)


@pytest.fixture
def dp_generalization(_dpcheck_recorder: Any) -> GeneralizationRunner:
    """Generalization checks at this test's family-α share (see the module docstring)."""
    return GeneralizationRunner(_dpcheck_recorder)
