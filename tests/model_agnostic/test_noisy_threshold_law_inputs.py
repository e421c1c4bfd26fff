"""NoisyThresholdLaw (paper 003, Theorem 3.5's count law): bad input and the count sampler's
constants outside the window (its law is checked in properties/model_agnostic)."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.model_agnostic.utility import NoisyThresholdLaw
from dpcheck.errors import InvalidArgument


@pytest.mark.parametrize("make, message", [
    (lambda: NoisyThresholdLaw(0.5, 0.5, 100), "eta=0.5 must be in [0, 1/2)"),
    (lambda: NoisyThresholdLaw(0.5, 0.1, 0), "n_chunk=0 must be an int >= 1"),
    (lambda: NoisyThresholdLaw(1.0, 0.1, 100), "t_star=1.0 must be in (0, 1)"),
    (lambda: NoisyThresholdLaw(0.5, 0.1, 100).counts(0, [0.5], np.random.default_rng(0)),
     "k=0 must be an int >= 1"),
])
def test_bad_input_raises(make, message):
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[")):
        make()


def test_counts_outside_the_window_use_no_randomness():
    law = NoisyThresholdLaw(0.5, 0.02, 10_000)            # W = 3e-3
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    c = law.counts(7, np.array([0.1, 0.49, 0.504, 0.9]), rng)
    assert c.tolist() == [0, 0, 7, 7] and rng.bit_generator.state == state
