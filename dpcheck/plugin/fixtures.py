"""Fixtures of the dpcheck pytest plugin: ``dp_seed``, ``dp_rng``, ``dp_audit``, ``dp_search``,
``dp_accuracy``, ``dp_check``, ``dp_record`` and ``dp_counterexample`` (see
:mod:`dpcheck.plugin.hooks` for seeds and the family α)."""

from __future__ import annotations

import contextlib
import math
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dpcheck.core.accuracy import AccuracyResult, check_accuracy
from dpcheck.core.audit import audit
from dpcheck.core.sequential import check_stop_within
from dpcheck.core.results import AuditResult, json_safe
from dpcheck.validation import check_real
from dpcheck.errors import AccuracyViolation, InvalidArgument, PrivacyViolation
from dpcheck.internal.rng import child
from dpcheck.plugin import records as rec
from dpcheck.plugin.state import _ITEM, _info, _ItemData, _state
from dpcheck.plugin.workers import run as run_with_executor

__all__ = ["dp_seed", "dp_rng", "dp_audit", "dp_search", "dp_accuracy", "dp_check", "dp_record",
           "dp_sensitivity", "dp_counterexample"]


class _Recorder:
    """Per-test bookkeeping shared by the dpcheck fixtures."""

    def __init__(self, request: pytest.FixtureRequest, seed: np.random.SeedSequence) -> None:
        self.item = request.node
        self.state = _state(request.config)
        self.seed = seed
        self.data = self.item.stash.setdefault(_ITEM, _ItemData())
        self.info = _info(self.item)
        self.alpha_test = self.state.alpha_family / max(self.state.m or 1, 1)
        self.replay = rec.replay_command(self.item.nodeid, self.state.root_seed,
                                         alpha_test=self.alpha_test, scale=self.state.scale,
                                         sequential=self.state.sequential)

    def call(self, fn: Any, work: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``fn(**kwargs)``, with the executor of ``--dpcheck-workers`` / ``--dpcheck-scheduler``
        for ``work`` (what must travel to the workers) unless the test passes its own."""
        return run_with_executor(self.state.executor, getattr(self.item, "module", None), fn,
                                 work, kwargs)

    def next_alpha(self) -> tuple[int, float]:
        self.data.stat_calls += 1
        return self.data.stat_calls, rec.spend(self.alpha_test, self.data.stat_calls)

    def scaled(self, n: Any, minimum: int) -> Any:
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= minimum:
            return max(minimum, round(int(n) * self.state.scale))
        return n  # let dpcheck reject it with its own message

    @contextlib.contextmanager
    def guard(self, fixture: str, subject: Any, claim: Any = None) -> Iterator[None]:
        """Turn an error raised inside a dpcheck call (the mechanism or trial raised, or a bad
        argument) into one readable paragraph without dpcheck's frames. AssertionErrors pass
        through unchanged (a mutant case counts a failed assertion as caught)."""
        __tracebackhide__ = True
        try:
            yield
        except AssertionError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported, not swallowed: the test fails
            from dpcheck.mechanism import mechanism_name

            describe = getattr(claim, "describe", None)
            text = rec.error_paragraph(
                fixture, self.data.stat_calls, self.item.nodeid, self.info,
                f"the mechanism {mechanism_name(subject)}" if fixture != "dp_accuracy"
                else f"the trial {mechanism_name(subject)}",
                describe() if callable(describe) else "", exc, self.replay)
            raise pytest.fail.Exception(text, pytrace=False) from None

    def add(self, kind: str, alpha: float | None, violation: bool | None,
            result: dict[str, Any]) -> dict[str, Any]:
        record = {"nodeid": self.item.nodeid, "call": len(self.data.records) + 1, "type": kind,
                  **self.info, "alpha": alpha,
                  "verdict": "measurement" if violation is None
                  else rec.verdict(self.info["expect"], violation),
                  "replay": self.replay, "result": result}
        self.data.records.append(record)
        return record


def _reject(kwargs: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        if name in kwargs:
            raise InvalidArgument(f"{where}: {name}= is set by the dpcheck plugin (family alpha "
                                  "split and per-test seed); use --dpcheck-alpha/--dpcheck-seed")


@pytest.fixture
def dp_seed(request: pytest.FixtureRequest) -> np.random.SeedSequence:
    """This test's ``SeedSequence``: ``child(SeedSequence(root), "test", nodeid)``."""
    root = np.random.SeedSequence(_state(request.config).root_seed)
    return child(root, "test", request.node.nodeid)


@pytest.fixture
def dp_rng(dp_seed: np.random.SeedSequence) -> np.random.Generator:
    """A PCG64 ``Generator`` on this test's ``SeedSequence``."""
    return np.random.Generator(np.random.PCG64(dp_seed))


@pytest.fixture
def _dpcheck_recorder(request: pytest.FixtureRequest, dp_seed: np.random.SeedSequence) -> _Recorder:
    return _Recorder(request, dp_seed)


@pytest.fixture
def dp_audit(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_audit(mechanism, d, d_prime, claim, *, samples=100_000, **kwargs) -> AuditResult``.

    Runs :func:`dpcheck.audit` at this call's share of the family α, on the call's own stream,
    with ``samples`` times ``--dpcheck-scale`` as its upper limit (sequential: it stops at a
    pilot that refutes the claim, unless ``--dpcheck-sequential off`` or the test passes
    ``sequential=False``, and also, with ``stop_within=τ``, at a pilot as precise as the budget
    promises — ignored when the audit is not sequential); raises
    :class:`~dpcheck.PrivacyViolation` on a violation unless the test's ``claim`` marker
    expects one.
    """
    r = _dpcheck_recorder

    def run(mechanism: Any, d: Any, d_prime: Any, claim: Any, *, samples: int = 100_000,
            **kwargs: Any) -> AuditResult:
        __tracebackhide__ = True
        _reject(kwargs, ("alpha", "seed"), "dp_audit")
        if kwargs.get("stop_within") is not None:
            # checked whatever the session's --dpcheck-sequential, so a test's validity does not
            # depend on it
            check_stop_within(kwargs["stop_within"], claim)
        if not kwargs.get("sequential", r.state.sequential):
            kwargs.pop("stop_within", None)  # a fixed budget has no pilots to stop at
        i, alpha = r.next_alpha()
        with r.guard("dp_audit", mechanism, claim):
            result = r.call(functools.partial(
                audit, mechanism, d, d_prime, claim, samples=r.scaled(samples, 2), alpha=alpha,
                seed=child(r.seed, "audit", i), sequential=r.state.sequential),
                (mechanism, d, d_prime,
                                                  kwargs.get("features")), kwargs)
        r.data.results.append(result)
        record = r.add("audit", alpha, result.violation, result.to_dict())
        if result.violation and r.info["expect"] == "holds":
            raise PrivacyViolation(f"{result.summary()}\nreplay: {record['replay']}", result)
        _check_own_law(result, record)
        return result

    return run


#: Level at which ``dp_audit`` fails a test whose mechanism's samples contradict its own
#: ``pmf``. Not taken from the family α (the check is about the test bed, not the claim); a
#: session with m such checks adds at most m·1e-9 to its family-wise error rate.
SAMPLER_FAIL_LEVEL = 1e-9


def _check_own_law(result: AuditResult, record: dict[str, Any]) -> None:
    """Fail (an ``AssertionError``, so a mutant case counts it as caught) when the mechanism's
    sampler contradicts its declared ``pmf``: outputs outside the pmf's support, or a χ² p-value
    ≤ :data:`SAMPLER_FAIL_LEVEL`. The exact ε/δ the test may assert describe the pmf, and the
    audit describes the sampler; they are one mechanism only if the two agree (issue 27: a
    sampler bug with a correct pmf otherwise passes every exact check)."""
    __tracebackhide__ = True
    check = result.sampler_check
    if check is not None and (check.impossible or check.p_value <= SAMPLER_FAIL_LEVEL):
        raise AssertionError(f"{result.mechanism}: {check.describe()} (dp_audit fails at "
                             f"p <= {SAMPLER_FAIL_LEVEL:g})\nreplay: {record['replay']}")


@pytest.fixture
def dp_search(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_search(mechanism, claim, *, samples=1_000_000, **kwargs) -> SearchResult``.

    :func:`dpcheck.find_counterexample` at this call's share of the family α (its single
    confirmation audit uses it) and the call's own seed. The confirming audit goes into the
    report as an audit record whose result also carries ``search`` (pair, shrunk-from pair,
    mechanism calls, seconds, candidates, replay); a found counterexample raises
    :class:`~dpcheck.PrivacyViolation` unless the test expects a violation.
    """
    r = _dpcheck_recorder

    def run(mechanism: Any, claim: Any, *, samples: int = 1_000_000, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        from dpcheck.search.counterexample import find_counterexample

        _reject(kwargs, ("alpha", "seed"), "dp_search")
        i, alpha = r.next_alpha()
        with r.guard("dp_search", mechanism, claim):
            found = r.call(functools.partial(
                find_counterexample, mechanism, claim, samples=r.scaled(samples, 2),
                alpha=alpha, seed=child(r.seed, "search", i)), (mechanism, kwargs), kwargs)
        info = found.to_dict()
        audit_dict = info.pop("audit")
        if found.audit is None:
            r.add("measurement", alpha, None, {"name": "search", **info})
            return found
        r.data.results.append(found.audit)
        record = r.add("audit", alpha, found.audit.violation, {**audit_dict, "search": info})
        if found.audit.violation and r.info["expect"] == "holds":
            raise PrivacyViolation(f"counterexample found for pair {info['pair']}:\n"
                                   f"{found.audit.summary()}\nreplay: {record['replay']}",
                                   found.audit)
        return found

    return run


@pytest.fixture
def dp_accuracy(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_accuracy(trial, *, alpha, beta, trials=2000, **kwargs) -> AccuracyResult``.

    :func:`dpcheck.core.accuracy.check_accuracy` with ``confidence`` = this call's α and ``trials``
    times ``--dpcheck-scale``; raises :class:`~dpcheck.AccuracyViolation` unless a violation is
    expected.
    """
    r = _dpcheck_recorder

    def run(trial: Any, *, alpha: float, beta: float, trials: int = 2000,
            **kwargs: Any) -> AccuracyResult:
        __tracebackhide__ = True
        _reject(kwargs, ("confidence", "seed"), "dp_accuracy")
        i, level = r.next_alpha()
        with r.guard("dp_accuracy", trial):
            result = r.call(functools.partial(
                check_accuracy, trial, alpha=alpha, beta=beta, trials=r.scaled(trials, 1),
                confidence=level, seed=child(r.seed, "accuracy", i)), (trial,), kwargs)
        r.data.results.append(result)
        record = r.add("accuracy", level, result.violation, result.to_dict())
        if result.violation and r.info["expect"] == "holds":
            raise AccuracyViolation(f"{result.summary()}\nreplay: {record['replay']}", result)
        return result

    return run


@pytest.fixture
def dp_check(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_check(check, *args, kind="check", **kwargs) -> result``: any statistical checker.

    Calls ``check(*args, alpha=α_i, seed=SeedSequence_i, **kwargs)`` at this call's share of the
    family α and on the call's own stream, for checkers that follow dpcheck's conventions (e.g.
    closeness or generalization checkers): the result must have a boolean ``violation``, a
    ``to_dict()`` and preferably a ``summary()``. A violation fails the test unless the test
    expects one (``expect="violation"``/``"erratum"`` or a ``mutant`` case).
    """
    r = _dpcheck_recorder

    def run(check: Any, *args: Any, kind: str = "check", **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if not callable(check):
            raise InvalidArgument(f"check={check!r} must be callable")
        if not isinstance(kind, str) or not kind:
            raise InvalidArgument(f"kind={kind!r} must be a non-empty string")
        _reject(kwargs, ("alpha", "seed"), "dp_check")
        i, alpha = r.next_alpha()
        result = check(*args, alpha=alpha, seed=child(r.seed, kind, i), **kwargs)
        violation = getattr(result, "violation", None)
        if not isinstance(violation, (bool, np.bool_)) or not hasattr(result, "to_dict"):
            raise InvalidArgument(f"check={getattr(check, '__name__', check)!r} must return a "
                                  "result with a boolean .violation and .to_dict()")
        r.data.results.append(result)
        record = r.add("check", alpha, bool(violation),
                       {"check": kind, **json_safe(result.to_dict())})
        if violation and r.info["expect"] == "holds":
            text = result.summary() if hasattr(result, "summary") else str(result.to_dict())
            pytest.fail(f"{text}\nreplay: {record['replay']}", pytrace=False)
        return result

    return run


@pytest.fixture
def dp_record(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_record(name, value: dict)``: put a measurement (not pass/fail) into the report."""
    r = _dpcheck_recorder

    def run(name: str, value: dict[str, Any]) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"name={name!r} must be a non-empty string")
        if not isinstance(value, dict) or "name" in value:
            raise InvalidArgument(f"value={value!r} must be a dict without a 'name' key")
        r.add("measurement", None, None, {"name": name, **json_safe(value)})

    return run


@pytest.fixture
def dp_sensitivity(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_sensitivity(loss=, bound=, detectable_overspend=, basis=)``: record how sharp this
    claim test is (issue 27; catalogue fields ``slack`` and ``detectable_overspend``).

    ``loss`` is the reference's exact or audited loss at the tested configuration (for a
    utility claim: its failure rate), ``bound`` what the test asserts (ε, or β); the record's
    ``slack`` is ``loss / bound`` (near 1: the test is tight; 0.1: a 10× overspend passes).
    ``detectable_overspend`` is the smallest multiplicative error in the budget (noise scale,
    sensitivity; for utility, failure-rate inflation) the test catches with probability ≥ 0.9
    at its share of α (``None`` if not known); ``basis`` says how both were obtained."""
    r = _dpcheck_recorder

    def run(*, loss: float, bound: float, detectable_overspend: float | None,
            basis: str) -> dict[str, Any]:
        loss = check_real("loss", loss)
        if not (0.0 <= loss < math.inf):
            raise InvalidArgument(f"loss={loss!r} must be finite and >= 0")
        bound = check_real("bound", bound)
        if not (0.0 < bound < math.inf):
            raise InvalidArgument(f"bound={bound!r} must be finite and > 0")
        if detectable_overspend is not None:
            detectable_overspend = check_real("detectable_overspend", detectable_overspend)
            if not (1.0 < detectable_overspend < math.inf):
                raise InvalidArgument(
                    f"detectable_overspend={detectable_overspend!r} must be finite and > 1")
        if not isinstance(basis, str) or not basis.strip():
            raise InvalidArgument(f"basis={basis!r} must be a non-empty string")
        value = {"name": "sensitivity", "loss": loss, "bound": bound, "slack": loss / bound,
                 "detectable_overspend": detectable_overspend, "basis": basis}
        r.add("measurement", None, None, value)
        return value

    return run


@dataclass(frozen=True)
class _Counterexample:
    """A deterministic counterexample, verified by the test itself (no statistics involved)."""

    name: str
    violation: bool = True


@pytest.fixture
def dp_counterexample(_dpcheck_recorder: _Recorder) -> Any:
    """``dp_counterexample(name, witness: dict)``: record a *deterministic* counterexample that
    the test has just verified with its own assertions (e.g. a combinatorial erratum: a concrete
    class on which a printed inequality fails). It counts as the violation an
    ``expect="erratum"``/``"violation"`` test needs; in an ``expect="holds"`` test it fails the
    test. No α is spent: nothing about it is random.
    """
    r = _dpcheck_recorder

    def run(name: str, witness: dict[str, Any]) -> None:
        __tracebackhide__ = True
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"name={name!r} must be a non-empty string")
        if not isinstance(witness, dict) or "name" in witness:
            raise InvalidArgument(f"witness={witness!r} must be a dict without a 'name' key")
        r.data.results.append(_Counterexample(name))
        r.add("counterexample", None, True, {"name": name, "violation": True,
                                              **json_safe(witness)})
        if r.info["expect"] == "holds":
            pytest.fail(f"counterexample {name}: {witness}", pytrace=False)

    return run

