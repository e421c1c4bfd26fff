"""from_scalar and the library adapters: shapes, seeding, pickling, warnings in the result."""

from __future__ import annotations

import functools
import pickle
import re
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import dpcheck
from dpcheck import InvalidArgument, PureDP
from dpcheck.integrations.scalar import ScalarMechanism, from_scalar
from dpcheck.core.results import untimed


def noisy_len(data, rng, scale=1.0):
    return len(data) + rng.laplace(0.0, scale)


def noisy_pair(data, rng):
    return [float(np.sum(data)) + rng.laplace(), rng.integers(0, 2)]


def test_from_scalar_stacks_one_output_per_call():
    mech = from_scalar(noisy_len)
    out = mech([1, 2, 3], 5, np.random.default_rng(0))
    assert out.shape == (5,) and out.dtype == np.float64
    assert len(set(out.tolist())) == 5  # the rng advances between calls
    vec = from_scalar(noisy_pair)([1, 2], 4, np.random.default_rng(0))
    assert vec.shape == (4, 2)


def test_from_scalar_is_seeded_by_rng():
    mech = from_scalar(noisy_len)
    a = mech([1], 100, np.random.default_rng(7))
    b = mech([1], 100, np.random.default_rng(7))
    c = mech([1], 100, np.random.default_rng(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_from_scalar_audit_is_reproducible_and_honest():
    mech = from_scalar(functools.partial(noisy_len, scale=1.0), name="noisy_len")
    r1 = dpcheck.audit(mech, [1, 1], [1], PureDP(1.0), samples=4000, seed=3)
    r2 = dpcheck.audit(mech, [1, 1], [1], PureDP(1.0), samples=4000, seed=3)
    assert untimed(r1.to_dict()) == untimed(r2.to_dict())
    assert r1.mechanism == "from_scalar(noisy_len)" and r1.warnings == ()
    leaky = from_scalar(functools.partial(noisy_len, scale=0.25))
    assert dpcheck.audit(leaky, [1, 1], [1], PureDP(1.0), samples=4000, seed=3).violation


def test_from_scalar_pickles_and_runs_in_another_process():
    mech = from_scalar(functools.partial(noisy_len, scale=2.0))
    clone = pickle.loads(pickle.dumps(mech))
    assert isinstance(clone, ScalarMechanism)
    with ProcessPoolExecutor(1) as pool:
        remote = pool.submit(mech, [1, 2], 50, np.random.default_rng(5)).result()
    assert np.array_equal(remote, mech([1, 2], 50, np.random.default_rng(5)))


def test_unseedable_mechanism_is_flagged_in_the_result():
    mech = from_scalar(noisy_len, seeding="none")
    r = dpcheck.audit(mech, [1, 1], [1], PureDP(1.0), samples=2000, seed=0)
    assert len(r.warnings) == 1 and "same seed will not reproduce" in r.warnings[0]
    assert r.to_dict()["warnings"] == list(r.warnings)
    assert "warning:" in r.summary()


def warns_every_call(data, rng):
    warnings.warn("bounds were taken from the data", UserWarning)
    return float(data) + rng.laplace()


def test_library_warnings_are_recorded_not_raised():
    """pytest runs with -W error: the warning would fail the test if the audit let it out."""
    r = dpcheck.audit(from_scalar(warns_every_call), 1.0, 0.0, PureDP(1.0), samples=2000, seed=0)
    # one warning per mechanism call, folded into one line with its count (the number of calls
    # depends on the Poissonized confirmation sizes of pure claims, about 2000 per side)
    (line,) = r.warnings
    match = re.fullmatch(r"UserWarning: bounds were taken from the data \(x(\d+)\)", line)
    assert match and 3000 <= int(match.group(1)) <= 4000, line


@pytest.mark.parametrize("bad, match", [
    (dict(fn=3), "^fn="), (dict(fn=noisy_len, seeding="os"), "^seeding="),
    (dict(fn=noisy_len, name=1), "^name="),
])
def test_from_scalar_rejects_bad_arguments(bad, match):
    fn = bad.pop("fn")
    with pytest.raises(InvalidArgument, match=match):
        from_scalar(fn, **bad)


def test_from_scalar_rejects_bad_calls_and_ragged_outputs():
    mech = from_scalar(noisy_len)
    with pytest.raises(InvalidArgument, match="^size="):
        mech([1], 0, np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="^rng="):
        mech([1], 3, 0)
    ragged = from_scalar(lambda data, rng: [0.0] * int(rng.integers(1, 3)))
    with pytest.raises(InvalidArgument, match="different shapes"):
        ragged([1], 50, np.random.default_rng(0))


def test_total_variation_claim_is_audited():
    """ApproxDP(0, δ): TV(Lap(1), Lap(0)) = 1 − e^{−1/2} ≈ 0.393 for unit scale."""
    mech = from_scalar(lambda data, rng: float(data) + rng.laplace())
    holds = dpcheck.audit(mech, 1.0, 0.0, dpcheck.ApproxDP(0.0, 0.4), samples=20_000, seed=1,
                          float_features=False)
    refuted = dpcheck.audit(mech, 1.0, 0.0, dpcheck.ApproxDP(0.0, 0.3), samples=20_000, seed=1,
                            float_features=False)
    assert not holds.violation and refuted.violation
    assert 0.3 < refuted.delta_lower <= 1 - np.exp(-0.5)


def test_dpcheck_own_warnings_are_not_swallowed(monkeypatch):
    """A warning issued inside dpcheck (an auditor problem) still surfaces (here: as an error
    under the suite's -W error), while the mechanism's are recorded."""
    import sys

    audit_module = sys.modules["dpcheck.core.audit"]

    real = audit_module.exploration_size

    def noisy_size(samples, fraction=0.1):
        warnings.warn("internal", RuntimeWarning, stacklevel=2)  # attributed to dpcheck.audit
        return real(samples, fraction)

    monkeypatch.setattr(audit_module, "exploration_size", noisy_size)
    with pytest.raises(RuntimeWarning, match="internal"):
        dpcheck.audit(from_scalar(noisy_len), [1], [], PureDP(1.0), samples=100, seed=0)
