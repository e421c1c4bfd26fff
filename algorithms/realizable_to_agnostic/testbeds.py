"""Worst-case neighbouring pairs for the paper-000 privacy tests (notes §4.3, P5), and the
utility test beds of issue 27: a set of distributions on ``{0..7}`` (uniform noisy threshold,
heavy point, extreme noise, realizable) and the trial count / detectable failure-rate inflation
of a binomial utility test.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemma 3.1 (proof, case 1 ∈ I), Theorem 3.6; notes
shared/research/seed-000.md §4.3 (choosing neighbours).
"""

from __future__ import annotations

import numpy as np

from dpcheck.validation import check_int

__all__ = ["UTILITY_TRIALS", "detectable_inflation", "unique_record_pair", "utility_law"]

#: Trials of a utility claim test for power ≥ 0.9 at a failure rate of 1.5β (β = 0.1): the exact
#: binomial test rejects at the plugin's per-call level (≈ 6.6e-5 for the first call of a test in
#: a ~460-claim-test job) from 162 failures of 1200 (power 0.934) or 186 of 1400 (power 0.968);
#: 1400 leaves room for a larger job (smaller per-test α).
UTILITY_TRIALS = 1400


def utility_law(name: str, domain: int = 8, cut: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """``(cell law (N, 2), err_D(h_t) for t = 0..N)`` of a named distribution on ``{0..N−1}``,
    ``h_t(x) = 1[x ≥ t]``, labels ``1[x ≥ cut]`` flipped w.p. η:

    * ``uniform``: D_X uniform, η = 0.3;
    * ``heavy``: half the mass on ``x = cut``, the rest uniform, η = 0.1 (a threshold one off
      costs 0.4);
    * ``noise45``: uniform, η = 0.45 (every threshold within 0.1 of η: use α ≈ 0.02; one step
      costs 0.0125);
    * ``realizable``: uniform, η = 0 (one step costs 1/N > α = 0.1).
    """
    x = np.arange(domain)
    eta = {"uniform": 0.3, "heavy": 0.1, "noise45": 0.45, "realizable": 0.0}[name]
    px = np.full(domain, 1.0 / domain)
    if name == "heavy":
        px = np.full(domain, 0.5 / (domain - 1))
        px[cut] = 0.5
    p1 = np.where(x >= cut, 1 - eta, eta)
    err = np.array([np.sum(px * np.where(x >= t, 1 - p1, p1)) for t in range(domain + 1)])
    return np.stack([px * (1 - p1), px * p1], 1), err


def detectable_inflation(trials: int, beta: float, confidence: float,
                         power: float = 0.9) -> float:
    """Smallest ``c`` such that a true failure rate ``c·β`` is declared a violation with
    probability ≥ ``power`` by the one-sided exact binomial test at level ``confidence`` (the
    rule of ``dpcheck.check_accuracy``: p-value ``P[Bin(trials, β) ≥ failures] ≤ confidence``);
    bisection to 1e-3."""
    from scipy import stats
    c = int(stats.binom.isf(confidence, trials, beta))
    while stats.binom.sf(c - 1, trials, beta) > confidence:
        c += 1
    lo, hi = 1.0, 1.0 / beta
    while hi - lo > 1e-3:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if stats.binom.sf(c - 1, trials, mid * beta) >= power else (mid, hi)
    return hi


def unique_record_pair(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S′)`` of size ``n`` on ``{0..5}``: ``S`` has the unique point ``x* = 0`` (label 1) at
    index 0, the rest sit at the common value 3 (the first half labelled 0, the others 1); ``S′``
    replaces the record at index 0 by ``(3, 0)``. The changed record is then visible exactly when
    it is drawn into ``T`` — the leak Lemma 3.1's swap case must pay for (notes §4.3, P5)."""
    n = check_int(n, "n", minimum=2)
    s = np.tile([3, 1], (n, 1))
    s[0] = [0, 1]
    s[1: n // 2, 1] = 0
    sp = s.copy()
    sp[0] = [3, 0]
    return s, sp
