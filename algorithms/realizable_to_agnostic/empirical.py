"""Procedure E (Lemmas 2.12 / 2.13): draw ``m`` points uniformly *with replacement* from the input
and run an (ε, δ)-DP algorithm on them. Exact output law by enumerating the multinomial
compositions of the ``m`` draws over the input's records (tiny inputs).

Base algorithm (stand-in): the exponential-mechanism learner over thresholds on ``{0..N−1}``
with ``#errors`` score (pure ε-DP, proper), or (``base="rr"``) randomized response on
``1[some drawn point at x = 0]`` (exactly ε-DP: makes the bound sharp); with ``delta > 0`` it additionally, with probability
``δ``, releases the number of drawn points at ``x = 0`` (an (ε, δ)-DP leak).

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 2.12, Lemma 2.13 (Bun et al. 2015).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck._validation import check_choice, check_delta, check_epsilon, check_int

from .core import as_dataset, log_softmax, w_errors

__all__ = ["E_BUGS", "WithReplacement"]

#: ``first_m``: runs A on the first m records (no resampling).
E_BUGS = ("reference", "first_m")


@dataclass(frozen=True)
class WithReplacement:
    """Procedure E around the EM learner: ``A(T′)``, ``T′`` = ``m`` draws with replacement."""

    domain: int
    epsilon: float
    m: int
    delta: float = 0.0
    base: str = "em"
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        check_epsilon(self.epsilon)
        check_int(self.m, "m", minimum=1)
        check_delta(self.delta)
        check_choice(self.bug, "bug", E_BUGS)
        check_choice(self.base, "base", ("em", "rr"))

    def _base(self, c: np.ndarray) -> np.ndarray:
        """Law of A on a drawn count table ``c`` (N, 2): N+1 thresholds then leak codes."""
        if self.base == "rr":                 # RR on 1[some drawn point at x = 0]: exactly ε-DP
            hit = math.exp(self.epsilon) / (1 + math.exp(self.epsilon))
            p1 = hit if c[0].sum() > 0 else 1 - hit
            lp = np.zeros(self.domain + 1)
            lp[:2] = (1 - p1, p1)
        else:
            lp = np.exp(log_softmax(-self.epsilon * w_errors(c[:, 0], c[:, 1]) / 2.0))
        out = np.zeros(self.domain + 2 + self.m)
        out[: self.domain + 1] = (1 - self.delta) * lp
        out[self.domain + 1 + int(c[0].sum())] += self.delta
        return out

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact output law (compositions of the m draws over the records)."""
        s = as_dataset(data, self.domain)
        n = len(s)
        total = np.zeros(self.domain + 2 + self.m)
        if self.bug == "first_m":
            draws = [(np.arange(min(self.m, n)), 1.0)]
        else:
            draws = []
            for combo in itertools.combinations_with_replacement(range(n), self.m):
                k = np.bincount(np.asarray(combo), minlength=n)
                logp = math.lgamma(self.m + 1) - sum(math.lgamma(v + 1) for v in k) \
                    - self.m * math.log(n)
                draws.append((np.asarray(combo), math.exp(logp)))
        for idx, p in draws:
            c = np.zeros((self.domain, 2), np.int64)
            np.add.at(c, (s[idx, 0], s[idx, 1]), 1)
            total += p * self._base(c)
        return {i: float(v) for i, v in enumerate(total) if v > 0}

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs drawn from the exact law."""
        pmf = self.pmf(data)
        keys = np.array(list(pmf), dtype=np.int64)
        pr = np.array(list(pmf.values()))
        return keys[rng.choice(len(keys), size=check_int(size, "size", minimum=0),
                               p=pr / pr.sum())]
