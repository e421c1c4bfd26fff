"""``check_accuracy``: exact binomial test of "(α, β)-accurate" claims.

The reference trial is the error of a Laplace(1) count, ``|Z|`` with ``P[|Z| > t] = e^{-t}``,
so the claim "P[error > ln(1/β)] ≤ β" holds with equality (the hardest true claim) and any
smaller α is false.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcheck
from dpcheck import AccuracyViolation, InvalidArgument, check_accuracy


def laplace_error(size, rng):
    return np.abs(rng.laplace(0.0, 1.0, size))


def test_true_claim_at_equality_is_not_flagged_and_bounds_bracket_beta():
    r = check_accuracy(laplace_error, alpha=math.log(20), beta=0.05, trials=20_000, seed=0)
    assert not r.violation
    assert r.failure_lower <= 0.05 <= r.failure_upper
    assert r.raise_if_violation() is r


def test_false_claim_is_flagged():
    # true failure probability at alpha = 2 is e^-2 = 0.135 > beta = 0.05
    r = check_accuracy(laplace_error, alpha=2.0, beta=0.05, trials=5000, seed=0)
    assert r.violation and r.failure_lower > 0.05
    with pytest.raises(AccuracyViolation) as info:
        r.raise_if_violation()
    assert info.value.result is r


def test_false_alarm_rate_at_equality_is_at_most_the_level():
    """200 seeds, claim true with equality: violations ≤ confidence = 0.05 of the runs."""
    flags = sum(check_accuracy(laplace_error, alpha=math.log(20), beta=0.05, trials=2000,
                               seed=s).violation for s in range(200))
    assert flags / 200 <= 0.05, flags


def test_scalar_trials_and_vectorised_trials_agree_in_distribution():
    scalar = check_accuracy(lambda rng: abs(rng.laplace()), alpha=1.0, beta=0.5, trials=4000,
                            seed=1)
    vector = check_accuracy(laplace_error, alpha=1.0, beta=0.5, trials=4000, seed=1)
    # both estimate e^-1 = 0.368; the two 99.9% intervals must overlap
    assert abs(scalar.failure_rate - math.exp(-1)) < 0.03
    assert abs(vector.failure_rate - math.exp(-1)) < 0.03


def test_deterministic_and_json_safe():
    a = check_accuracy(laplace_error, alpha=1.0, beta=0.4, trials=1000, seed=3).to_dict()
    b = check_accuracy(laplace_error, alpha=1.0, beta=0.4, trials=1000, seed=3).to_dict()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    import json
    json.dumps(a)


def test_batches_span_more_than_one_call():
    calls = []

    def trial(size, rng):
        calls.append(size)
        return laplace_error(size, rng)

    r = check_accuracy(trial, alpha=3.0, beta=0.1, trials=70_000, seed=0)
    assert sum(calls) == 70_000 and len(calls) == 2 and r.trials == 70_000


@pytest.mark.parametrize("kwargs, name", [
    (dict(alpha=1.0, beta=1.0), "beta"), (dict(alpha=1.0, beta=-0.1), "beta"),
    (dict(alpha=float("nan"), beta=0.1), "alpha"), (dict(alpha="1", beta=0.1), "alpha"),
    (dict(alpha=1.0, beta=0.1, trials=0), "trials"), (dict(alpha=1.0, beta=0.1, trials=2.5), "trials"),
    (dict(alpha=1.0, beta=0.1, confidence=0.0), "confidence"),
    (dict(alpha=1.0, beta=0.1, seed=-1), "seed"),
])
def test_bad_arguments(kwargs, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        check_accuracy(laplace_error, **kwargs)


@pytest.mark.parametrize("trial, match", [
    (lambda size, rng: np.zeros(size + 1), "shape"),
    (lambda size, rng: np.full(size, np.nan), "NaN"),
    (lambda size, rng: 1 / 0, "ZeroDivisionError"),
])
def test_bad_trials(trial, match):
    with pytest.raises(InvalidArgument, match=match):
        check_accuracy(trial, alpha=1.0, beta=0.1, trials=100)
    with pytest.raises(InvalidArgument, match="^trial="):
        check_accuracy(3, alpha=1.0, beta=0.1)


def test_exported():
    assert dpcheck.check_accuracy is check_accuracy


def test_a_one_output_trial_with_a_default_argument_is_not_vectorised():
    """``trial(rng, scale=1.0)`` takes one required argument: it was called as
    ``trial(size, rng)`` because its defaulted parameter was counted."""
    r = check_accuracy(lambda rng, scale=1.0: abs(rng.laplace(0.0, scale)), alpha=3.0,
                       beta=0.1, trials=200, seed=0)
    assert r.trials == 200 and not r.violation


def test_a_confidence_level_in_place_of_the_significance_level_is_refused():
    """``confidence`` is the test's significance level: 0.95 refuted a claim that is exactly
    true about 95 % of the time."""
    with pytest.raises(InvalidArgument, match=r"confidence=0.95 must be <= 0.5: it is the "
                                              r"test's significance level .* pass "
                                              r"confidence=0.05"):
        check_accuracy(lambda size, rng: np.abs(rng.laplace(0, 1, size)), alpha=math.log(20),
                       beta=0.05, trials=100, seed=0, confidence=0.95)
