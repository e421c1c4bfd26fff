"""A DP-SGD-style release, vectorised: T noisy gradient steps of a linear model.

Each step Poisson-samples every example with probability ``q``, clips each sampled example's
gradient to norm ``clip`` (here: a scalar gradient clipped to [−clip, clip]), sums, and adds
Gaussian noise of standard deviation ``noise_multiplier · clip · sensitivity_factor``. The
release is the T noisy sums (the model's updates are a post-processing of them). With
``sensitivity_factor = 1`` this is what an accountant's ``PoissonSampledDpEvent(q,
GaussianDpEvent(noise_multiplier))`` composed T times describes under add/remove-one
neighbours; the two classic user bugs are a wrong noise multiplier and the neighbour
convention: under *replace-one* neighbours one example changes the sum by up to ``2·clip``, so
the add/remove accounting understates the loss by a factor of two in sensitivity.

The gradients are the data: ``data`` is a 1-d array of per-example (scalar) gradients. Sampling
is exact: the sum of the sampled clipped gradients of a step is drawn per step from the
examples' Bernoulli(q) inclusions, vectorised over the ``size`` releases.

References
----------
M. Abadi et al., "Deep Learning with Differential Privacy", CCS 2016 (Algorithm 1); Google's
dp-accounting (``PoissonSampledDpEvent``, ``GaussianDpEvent``, ``SelfComposedDpEvent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.errors import InvalidArgument
from dpcheck.validation import check_int, check_real

__all__ = ["NoisyGradientSteps"]


@dataclass(frozen=True)
class NoisyGradientSteps:
    """T steps of Poisson-subsampled, clipped, Gaussian-noised gradient sums (see the module
    docstring); ``sample(data, size, rng)`` returns shape ``(size, steps)``."""

    noise_multiplier: float
    sampling_rate: float
    steps: int
    clip: float = 1.0

    def __post_init__(self) -> None:
        for name in ("noise_multiplier", "clip"):
            value = check_real(name, getattr(self, name))
            if not value > 0:
                raise InvalidArgument(f"{name}={value!r} must be > 0")
        q = check_real("sampling_rate", self.sampling_rate)
        if not 0.0 < q <= 1.0:
            raise InvalidArgument(f"sampling_rate={q!r} must be in (0, 1]")
        check_int(self.steps, "steps", minimum=1)

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        grads = np.clip(np.asarray(data, dtype=np.float64).ravel(), -self.clip, self.clip)
        out = np.zeros((size, self.steps))
        for g in grads:  # loop over examples (few), vectorised over releases and steps
            out += g * (rng.random((size, self.steps)) < self.sampling_rate)
        out += rng.normal(0.0, self.noise_multiplier * self.clip, (size, self.steps))
        return out
