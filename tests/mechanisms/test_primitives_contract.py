"""Input contract of ``algorithms.mechanisms.primitives``: exact error messages and dtypes.

Written to kill the survivors of the generic mutation run (``benchmarks/mutation.py``): the
other unit tests check *that* bad input raises :class:`InvalidArgument`, these check *what* it
says (the project's ``name=value must ...`` form, naming the offending value and the valid range)
and the dtypes of the degenerate cases.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest

from algorithms.mechanisms.primitives import (GeometricSum, LaplaceSum, RandomizedResponse,
                                              _records, bounded_sum)
from dpcheck.validation import fmt
from dpcheck.errors import InvalidArgument


def _raises(message: str) -> Any:
    return pytest.raises(InvalidArgument, match="^" + re.escape(message) + "$")


@pytest.mark.parametrize("data", ["abc", b"ab", {1: 2}, {1, 2}, 3])
def test_records_rejects_non_sequences_by_name(data: object) -> None:
    with _raises(f"data={fmt(data)} must be a sequence of records"):
        _records(data, integer=False)


@pytest.mark.parametrize("integer, data, what", [
    (True, [0.5, 1.0], "integer"), (False, [[1.0], [2.0]], "real"), (True, [[1], [0]], "integer")])
def test_records_rejects_wrong_kind_or_shape(integer: bool, data: object, what: str) -> None:
    with _raises(f"data={fmt(data)} must be a flat sequence of {what} records"):
        _records(data, integer=integer)


def test_records_rejects_non_finite() -> None:
    data = [1.0, math.inf]
    with _raises(f"data={fmt(data)} must contain finite records"):
        _records(data, integer=False)


def test_records_empty_dtypes() -> None:
    assert _records([], integer=True).dtype == np.int64
    assert _records([], integer=False).dtype == np.float64


def test_bounded_sum_range_message() -> None:
    data = [0.5, 2.0]
    with _raises(f"data={fmt(data)} must contain records in [0, 1.0]"):
        bounded_sum(data, 1.0)
    with pytest.raises(InvalidArgument, match="must contain records in"):
        LaplaceSum(1.0).sample(data, 1, np.random.default_rng(0))


def test_geometric_messages() -> None:
    mech = GeometricSum(1.0)
    with _raises(f"data={fmt([0, 2])} must contain records in {{0, 1}}"):
        mech.true_count([0, 2])
    ragged = [[1], [1, 2]]
    with _raises(f"values={fmt(ragged)} must be an array of numbers"):
        mech.log_pmf([1], ragged)
    with _raises(f"values={fmt([1.0, math.nan])} must be an array of numbers (no NaN)"):
        mech.log_pmf([1], [1.0, math.nan])


def test_geometric_log_pmf_of_huge_float_values() -> None:
    """Float values beyond the int64 range follow the float branch (no cast to int64)."""
    mech = GeometricSum(1.0)
    log_norm = math.log(-math.expm1(-1.0)) - math.log1p(math.exp(-1.0))
    out = mech.log_pmf([1, 0], np.array([1e19, 3.0]))
    assert out.dtype == np.float64
    assert out[0] == pytest.approx(log_norm - (1e19 - 1), rel=1e-12)
    assert out[1] == pytest.approx(log_norm - 2.0, rel=1e-12)


def test_randomized_response_record_message() -> None:
    mech = RandomizedResponse(1.0, 5)
    for data in ([5], [1, 2]):
        with _raises(f"data={fmt(data)} must be exactly one record in {{0, ..., 4}}"):
            mech.record(data)
