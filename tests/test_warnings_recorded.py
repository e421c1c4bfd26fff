"""Warnings reach the result (issue 28): the global-``np.random`` warning lands in
``result.warnings`` and the JSON record (and is still raised), and warnings raised on executor
workers (other processes) are recorded as if raised here."""

from __future__ import annotations

import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from dpcheck import GlobalRandomStateWarning, PureDP, audit


def global_state_mech(d, size, rng):
    return float(sum(d)) + np.random.laplace(0.0, 1.0, size)


def warning_mech(d, size, rng):
    warnings.warn("clamping to the data bounds", RuntimeWarning, stacklevel=1)
    return rng.laplace(float(sum(d)), 1.0, size)


def test_global_random_state_warning_is_recorded_and_raised() -> None:
    with pytest.warns(GlobalRandomStateWarning):
        r = audit(global_state_mech, [1.0], [0.0], PureDP(1.0), samples=4_000, seed=0,
                  float_features=False)
    assert any(w.startswith("GlobalRandomStateWarning:") for w in r.warnings)
    assert any("GlobalRandomStateWarning" in w for w in r.to_dict()["warnings"])


def test_warnings_on_worker_processes_are_recorded() -> None:
    with ProcessPoolExecutor(2) as pool:
        r = audit(warning_mech, [1.0], [0.0], PureDP(1.0), samples=40_000, seed=0,
                  float_features=False, executor=pool)
    local = audit(warning_mech, [1.0], [0.0], PureDP(1.0), samples=40_000, seed=0,
                  float_features=False)
    # exploration (2 calls here) and confirmation (2 chunks, on the workers): as counted locally
    assert r.warnings == local.warnings == ("RuntimeWarning: clamping to the data bounds (x4)",)
