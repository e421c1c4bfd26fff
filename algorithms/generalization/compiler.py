"""Algorithm 2: compile a perfectly generalizing mechanism into a DP one by bootstrap.

``M′(M, S)``: draw ``T ~iid (E_S)^n`` — n indices uniform on ``{1..n}`` with replacement, an
*ordered* resample of the same size — and output ``M(T)``. Exact pmfs:

* order-dependent ``M`` (e.g. Strange/Normal): enumerate the ordered resamples over the distinct
  values of S, ``P[T = (t_1..t_n)] = Π_j c_{t_j}/n`` (``|values|^n`` terms);
* count-based ``M`` with ``pmf_counts``/``log_probs_counts``: enumerate the multinomial count
  vectors of the resample.

References
----------
Cummings et al., COLT 2016, Algorithm 2 and Theorem 32.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import multinomial

__all__ = ["BootstrapCompiler"]


@dataclass(frozen=True, eq=False)
class BootstrapCompiler:
    """``M′(M, ·)`` of Algorithm 2. ``resample`` is the resample size (``None`` = n, as in the
    paper; other values are broken variants); ``bootstrap=False`` skips the resampling (the
    "no bootstrap" mutant, ``M′ = M``)."""

    mechanism: Any
    resample: int | None = None
    bootstrap: bool = True

    def _size(self, n: int) -> int:
        return n if self.resample is None else self.resample

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Vectorised for count-based mechanisms (``sample_counts``), else one call per
        output."""
        s = np.asarray(data)
        if not self.bootstrap:
            return np.asarray(self.mechanism.sample(s, size, rng))
        n, m = len(s), self._size(len(s))
        if hasattr(self.mechanism, "sample_counts"):
            k = self.mechanism.counts(s)
            counts = rng.multinomial(m, k / n, size=size)
            return self.mechanism.sample_counts(counts, rng)
        idx = rng.integers(0, n, size=(size, m))
        return np.concatenate([np.asarray(self.mechanism.sample(s[i], 1, rng)) for i in idx])

    def pmf(self, data: Any) -> dict[Any, float]:
        """Exact output pmf of ``M′(S)``."""
        s = np.asarray(data)
        if not self.bootstrap:
            return dict(self.mechanism.pmf(s))
        n, m = len(s), self._size(len(s))
        out: dict[Any, float] = {}
        if hasattr(self.mechanism, "log_probs_counts"):
            k = self.mechanism.counts(s)
            pos = np.flatnonzero(k)
            combos = np.array([np.bincount(c, minlength=len(pos)) for c in
                               itertools.combinations_with_replacement(range(len(pos)), m)])
            full = np.zeros((len(combos), len(k)))
            full[:, pos] = combos
            w = multinomial(m, k[pos] / n).pmf(combos)
            probs = w @ np.exp(self.mechanism.log_probs_counts(full))
            return {h: float(v) for h, v in enumerate(probs)}
        values, counts = np.unique(s, return_counts=True)
        for tup in itertools.product(range(len(values)), repeat=m):
            w = float(np.prod(counts[list(tup)] / n))
            for o, p in self.mechanism.pmf(values[list(tup)]).items():
                out[o] = out.get(o, 0.0) + w * p
        return out
