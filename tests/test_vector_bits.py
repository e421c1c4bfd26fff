"""Float holes of vector outputs (:mod:`dpcheck.features.vector_bits`, issue 30 item 4)."""

from __future__ import annotations

import pickle

import numpy as np

import dpcheck
from dpcheck.features.featurizer import describe_feature
from dpcheck.features.vector_bits import hole_coordinates


def histogram(data, size, rng):
    """A noisy histogram written as textbook code: float counts + numpy's Laplace(1). The
    real-valued mechanism is 1-DP on add/remove; in float64, bin 3 of (0, 1, 2, 3) is
    ``1 + noise`` (grid of ulp(1) near 0) against ``0 + noise`` (full resolution)."""
    counts = np.bincount(np.asarray(data), minlength=4).astype(float)
    return counts + rng.laplace(0.0, 1.0, (size, 4))


def rounded_histogram(data, size, rng):
    """The same, rounded to 6 decimals: both datasets on one grid, no hole."""
    return np.round(histogram(data, size, rng), 6)


def _names(r):
    return [f["name"] for f in r.features["features"]]


def test_a_hole_in_one_coordinate_is_found():
    r = dpcheck.audit(histogram, [0, 1, 2, 3], [0, 1, 2], dpcheck.PureDP(1.0), samples=300_000,
                      seed=0)
    assert "lsb(output[3])" in _names(r) and "lsb(output[0])" not in _names(r)
    assert r.violation and r.epsilon_lower > 5 and r.witness.event.feature_name == "lsb(output[3])"
    assert "coordinate 3" in describe_feature("lsb(output[3])")
    values = dpcheck.audit(histogram, [0, 1, 2, 3], [0, 1, 2], dpcheck.PureDP(1.0),
                           samples=300_000, seed=0, float_features=False)
    assert not values.violation and "lsb(output[3])" not in _names(values)


def test_no_feature_without_a_hole_and_the_audit_is_unchanged():
    kw = dict(samples=300_000, seed=0)
    on = dpcheck.audit(rounded_histogram, [0, 1, 2, 3], [0, 1, 2], dpcheck.PureDP(1.0), **kw)
    off = dpcheck.audit(rounded_histogram, [0, 1, 2, 3], [0, 1, 2], dpcheck.PureDP(1.0),
                        float_features=False, **kw)
    assert not any(n.startswith("lsb(") for n in _names(on))
    assert on.epsilon_lower == off.epsilon_lower and not on.violation


def test_gate_counts_outputs_below_the_other_sides_finest_bit():
    rng = np.random.default_rng(1)
    a = 1.0 + rng.laplace(size=(20_000, 2))
    b = 0.0 + rng.laplace(size=(20_000, 2))
    a[:, 0] = b[:, 0] + 0.0  # coordinate 0: same law, no hole
    b[:, 0] = rng.laplace(size=20_000)
    assert hole_coordinates(a, b) == [1]
    assert hole_coordinates(np.round(a, 6), np.round(b, 6)) == []


def test_fitted_family_pickles_for_executors():
    from dpcheck.features.featurizer import Featurizer

    rng = np.random.default_rng(2)
    out_d = histogram([0, 1, 2, 3], 20_000, rng)
    out_dp = histogram([0, 1, 2], 20_000, rng)
    f = Featurizer.build(out_d, None, out_dp, float_bits=True)
    g = pickle.loads(pickle.dumps(f))
    assert [x.name for x in g.features] == [x.name for x in f.features]
    np.testing.assert_array_equal(g(out_d)[-1], f(out_d)[-1])
