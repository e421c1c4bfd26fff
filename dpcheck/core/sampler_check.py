"""Goodness of fit of a mechanism's sampler against its own ``pmf``.

When a mechanism declares its exact output distribution, :func:`dpcheck.audit` reports the exact
privacy loss computed from it. That number describes the *sampler* only if the sampler draws
from the declared pmf, so the audit also tests this: an output outside the declared support is a
certain mismatch; otherwise a Pearson χ² test (cells with expected count < 5 pooled) is run on
each side's exploration sample and the two p-values are combined by Bonferroni.

The χ² p-value is asymptotic (valid when the pooled cells have expected counts ≥ 5, which the
pooling ensures); a mismatch is flagged at level :data:`SAMPLER_ALPHA`, independent of the
privacy α, and is reported as a warning on the result, never as a privacy violation. The pytest
plugin's ``dp_audit`` fails the test instead, at p ≤ 1e-9
(:data:`dpcheck.plugin.fixtures.SAMPLER_FAIL_LEVEL`).

References
----------
K. Pearson, "On the criterion that a given system of deviations …", Phil. Mag. 50 (1900).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss
from dpcheck.mechanism import pmf_of

__all__ = ["SamplerCheck", "check_sampler", "exact_analysis", "SAMPLER_ALPHA"]

#: Level at which a sampler/pmf mismatch is flagged.
SAMPLER_ALPHA = 1e-3
_MIN_EXPECTED = 5.0


def _key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tuple(_key(v) for v in value.tolist()) if value.ndim else value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class SamplerCheck:
    """Result of testing samples of M(D) and M(D′) against ``pmf(D)`` and ``pmf(D′)``."""

    p_value: float
    alpha: float
    mismatch: bool
    impossible: tuple[Any, ...]
    samples: int

    def describe(self) -> str:
        """One line for people."""
        if self.impossible:
            shown = ", ".join(repr(v) for v in self.impossible)
            return f"sampler produced outputs outside its pmf's support: {shown}"
        state = "contradicts" if self.mismatch else "is consistent with"
        return (f"sampler {state} its pmf (chi-square p = {self.p_value:.3g}, "
                f"{self.samples} samples per side, flagged at {self.alpha:g})")

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form."""
        return {"p_value": self.p_value, "alpha": self.alpha, "mismatch": self.mismatch,
                "impossible": [repr(v) for v in self.impossible], "samples": self.samples,
                "description": self.describe()}


def _one_side(outputs: NDArray[Any], pmf: Mapping[Any, float]) -> tuple[float, list[Any]]:
    probs = {_key(k): float(v) for k, v in pmf.items()}
    if outputs.ndim == 1:
        values, counts = np.unique(outputs, return_counts=True)
    else:
        values, counts = np.unique(outputs, axis=0, return_counts=True)
    observed: dict[Any, int] = {}
    impossible: list[Any] = []
    for value, count in zip(values, counts):  # loop over distinct outputs, not samples
        key = _key(value)
        if probs.get(key, 0.0) <= 0.0:
            impossible.append(key)
        else:
            observed[key] = int(count)
    if impossible:
        return 0.0, impossible
    n = int(counts.sum())
    support = [k for k, p in probs.items() if p > 0]
    expected = np.array([probs[k] for k in support]) * n
    obs = np.array([observed.get(k, 0) for k in support], dtype=np.float64)
    small = expected < _MIN_EXPECTED
    if small.any():
        expected = np.append(expected[~small], expected[small].sum())
        obs = np.append(obs[~small], obs[small].sum())
    if expected.size < 2:
        return 1.0, []
    expected *= n / expected.sum()
    from scipy.stats import chisquare  # lazy: scipy.stats costs ~1.5 s at import

    return float(chisquare(obs, expected).pvalue), []


def check_sampler(
    outputs_d: NDArray[Any],
    pmf_d: Mapping[Any, float],
    outputs_dp: NDArray[Any],
    pmf_dp: Mapping[Any, float],
    *,
    alpha: float = SAMPLER_ALPHA,
) -> SamplerCheck:
    """Test both samples against their declared pmfs (see module docstring)."""
    p1, bad1 = _one_side(outputs_d, pmf_d)
    p2, bad2 = _one_side(outputs_dp, pmf_dp)
    impossible = tuple(dict.fromkeys(bad1 + bad2))[:5]
    p_value = min(1.0, 2 * min(p1, p2))
    return SamplerCheck(p_value, alpha, bool(impossible) or p_value <= alpha, impossible,
                        int(outputs_d.shape[0]))


def exact_analysis(
    mechanism: Any, d: Any, d_prime: Any, claim: Any, out_d: Any, out_dp: Any
) -> tuple[float | None, float | None, SamplerCheck | None]:
    """The exact loss from the mechanism's ``pmf`` (if it has one) — ε, and δ at the claimed
    ε — and this module's check of the sampler's exploration outputs against that pmf
    (``None, None, None`` without a pmf)."""
    pmf = pmf_of(mechanism)
    if pmf is None:
        return None, None, None
    try:
        p, q = pmf(d), pmf(d_prime)
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise InvalidArgument(f"mechanism.pmf raised {type(exc).__name__}: {exc}") from exc
    try:
        exact = privacy_loss(p, q)
    except InvalidArgument as exc:
        raise InvalidArgument(f"mechanism.pmf returned an invalid distribution: {exc}") from exc
    eps = exact.epsilon
    return (eps if math.isfinite(eps) else math.inf, exact.delta(claim.epsilon),
            check_sampler(out_d, p, out_dp, q))
