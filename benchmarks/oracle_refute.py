"""Could any single-event auditor refute the late zoo entries at 1/10 of the budget? The oracle.

Issue 30 asks that the median number of samples a sequential audit uses to refute each broken
zoo entry be ≤ 1/10 of today's fixed budget (``benchmarks/sequential.py``: 10⁶ outputs per side
on the entry's first pair). Ten entries (and two the fixed budget rarely refutes) draw the whole
budget. This script asks whether that is dpcheck's weakness or the problem's, with an oracle
that knows the exact output laws: it skips exploration, takes the single event (for pure claims
also the *paired* event ``S`` counted on D with a disjoint ``S′`` counted on D′,
:mod:`dpcheck.events.paired`) with the best chance to refute the entry's claim, and tests it on
all ``n`` outputs per side at the full α with the test dpcheck's certifier uses
(:mod:`dpcheck.core.certify`):

* pure claims (``PureDP(ε)``): Poisson counts ``K_p ~ Poisson(n·a)``, ``K_q ~ Poisson(n·b)``
  (Poissonized confirmation; the oracle's mean is the whole ``n``, dpcheck's ``n − 3√n``) and
  the conditional ratio test :func:`dpcheck.stats.ratio_lower`: refuted iff
  ``ln ratio_lower(K_p, K_q, α) > ε``, i.e. ``P[Binomial(T, e^ε/(1+e^ε)) ≥ K_p] < α`` given
  ``T = K_p + K_q``;
* approximate claims (``ApproxDP(ε, δ)``): fixed sizes ``n`` per side, ``K_p ~ Bin(n, p)``,
  ``K_q ~ Bin(n, q)``, one-sided Clopper–Pearson bounds at α/2 each
  (:func:`dpcheck.stats.event_bound`): refuted iff ``p_low − e^ε q_high > δ``.

``P(refute)`` is computed exactly (a sum over the Poisson total ``T``, resp. over ``K_q``, with
the exact rejection region; ±9 (resp. ±10) standard deviations, the mass outside is
< 10⁻¹⁸) and checked by ``--draws`` simulated count pairs pushed through the dpcheck functions themselves. The events
are super-level sets of the exact likelihood ratio (that family holds the optimum of a single
event's test: for fixed total mass, a larger ``p/q`` only helps), on the outputs' exact masses:
finite laws (truncated geometric, sparse-vector ⊤/⊥ patterns) exactly, one-dimensional laws on a
fine grid of bins (each bin's masses from closed-form CDFs, so every event's probabilities are
exact; only the event family is restricted to grid-aligned sets), Alg. 3 on the value grid of
:func:`algorithms.zoo.svt_exact.svt3_masses`. For each budget the oracle takes the best event of
the family's Pareto frontier (in ``(a + b, a/(a + b))`` for pure claims, ``(p, −q)`` for
approximate ones); the oracle's median samples to refute is the smallest ``n`` per side at which
that best ``P(refute)`` reaches 0.5 (bisection on ``log n``).

Each exact law is checked against the zoo sampler first (``--check`` draws per side, fixed
seed): Kolmogorov–Smirnov for one-dimensional continuous outputs (the δ-leak atom by an exact
binomial test, the rest by KS), χ² for finite outputs (cells with expected count < 5 pooled) and
for Alg. 3's (first-⊤ index, value decile) cells.

Usage::

    python benchmarks/oracle_refute.py [--budget 1e6] [--alpha 0.05] [--only svt]

writes ``reports/bench/oracle_refute.{json,md}``; ``--dpcheck 5e4 1e5 2e5 4e5`` adds dpcheck's
fixed audits of the first pair at those budgets (``--seeds`` 10) beside the oracle's P(refute)
there (about 6 minutes on a loaded 2-core machine; the oracle alone about 4).

Measured (2026-11-28, α = 0.05, budget 10⁶, first pair; ``benchmarks/README.md``, Stop 36): the
oracle's median samples per side to refute exceed 1/10 of the budget on
``laplace_insufficient_r0.95`` (2.1·10⁵), ``subsampled_laplace_linear_calibration`` (5.1·10⁵),
``delta_leak_1e-04`` (1.07·10⁵) and ``svt4_c1`` (1.27·10⁵; 5.5·10⁴ on its x_shape pair): no
single-event auditor reaches issue 30's target there. On the other eight it is 96 – 9.5·10⁴
(``classic_gaussian_eps8`` 9.5·10⁴ and ``svt3`` 7.9·10⁴ barely), and dpcheck's fixed audits need
2–24× more.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as st

from algorithms.zoo import ZooEntry, get, svt_exact
from dpcheck.claims import ApproxDP
from dpcheck.stats import cp_lower, cp_upper, event_bound, ratio_lower

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dpsniper_compare import write_atomic  # noqa: E402

#: The late entries of ``benchmarks/README.md`` ("Stop 35") and dpcheck's fixed audits at 1/10
#: of the budget (10⁵ per side, whole α = 0.05, seeds 0–4; refuted runs of 5), as measured there.
LATE: dict[str, int] = {
    "laplace_insufficient_r0.9": 1, "laplace_insufficient_r0.95": 0,
    "classic_gaussian_eps8": 0, "delta_leak_1e-04": 0, "noisy_max_value_laplace": 1,
    "subsampled_laplace_linear_calibration": 0, "svt4_c1": 0, "svt4_c2": 0, "svt3": 0,
    "truncated_geometric_nominal": 4, "svt4_c4": 4, "noisy_max_value_exponential": 3,
}
#: Pure-DP event families: single events of at most this many prefixes of the likelihood order
#: per direction, and paired events on the product of the thinned prefixes.
PREFIXES = 240
#: Frontier events evaluated exactly per budget: COARSE evenly spread, then ±REFINE strides
#: around the best at ever finer strides.
COARSE, REFINE = 48, 4


# ----------------------------------------------------------------------------- exact power

def _critical_block(t: np.ndarray, pi0: float, alpha: float) -> np.ndarray:
    """Smallest ``k ≥ 1`` with ``P[Bin(t, pi0) ≥ k] < alpha`` (``t + 1`` where none): the
    rejection threshold of :func:`dpcheck.stats.ratio_lower` at ``π0 = e^ε/(1 + e^ε)``."""
    z = st.norm.isf(alpha)
    c = np.clip(np.ceil(t * pi0 + z * np.sqrt(t * pi0 * (1 - pi0))), 1, t + 1).astype(float)

    def rejects(k: np.ndarray) -> np.ndarray:
        return (k >= 1) & (k <= t) & (st.binom.sf(k - 1, t, pi0) < alpha)

    for _ in range(10_000):
        up = ~rejects(c) & (c <= t)
        down = rejects(c - 1)
        if not (up.any() or down.any()):
            return c
        c = c + up - down
    raise RuntimeError("critical values did not converge")


_BLOCK = 4096
_CRITICAL: dict[tuple[float, float, int], np.ndarray] = {}


def _critical(t: np.ndarray, pi0: float, alpha: float) -> np.ndarray:
    """:func:`_critical_block` on consecutive integers ``t``, cached in blocks of ``_BLOCK``."""
    first, last = int(t[0]) // _BLOCK, int(t[-1]) // _BLOCK
    parts = []
    for b in range(first, last + 1):
        key = (pi0, alpha, b)
        if key not in _CRITICAL:
            _CRITICAL[key] = _critical_block(np.arange(b * _BLOCK, (b + 1) * _BLOCK,
                                                       dtype=float), pi0, alpha)
        parts.append(_CRITICAL[key])
    c = np.concatenate(parts)
    return c[int(t[0]) - first * _BLOCK:int(t[-1]) - first * _BLOCK + 1]


def power_ratio(mu: float, pi: float, epsilon: float, alpha: float) -> float:
    """Exact P(refute) of the conditional ratio test: ``T ~ Poisson(mu)``, ``K_p | T ~ Bin(T,
    pi)``, refuted iff ``ln ratio_lower(K_p, T − K_p, alpha) > epsilon``."""
    if mu <= 0 or pi <= 0:
        return 0.0
    pi0 = 1.0 / (1.0 + math.exp(-epsilon))
    if pi <= pi0:
        return float(alpha)  # at most α (valid test); never the oracle's choice
    sd = math.sqrt(mu)
    t = np.arange(max(0, math.floor(mu - 9 * sd - 10)), math.ceil(mu + 9 * sd + 10) + 1,
                  dtype=float)
    c = _critical(t, pi0, alpha)
    return min(1.0, float(np.sum(st.poisson.pmf(t, mu) * st.binom.sf(c - 1, t, pi))))


def _window(n: int, p: float) -> np.ndarray:
    sd = math.sqrt(n * p * (1 - p))
    return np.arange(max(0, math.floor(n * p - 10 * sd - 10)),
                     min(n, math.ceil(n * p + 10 * sd + 10)) + 1, dtype=float)


def power_cp(n: int, p: float, q: float, epsilon: float, delta: float, alpha: float) -> float:
    """Exact P(refute) of the (ε, δ) test of :func:`dpcheck.stats.event_bound` on one event:
    ``K_p ~ Bin(n, p)``, ``K_q ~ Bin(n, q)``, refuted iff ``cp_lower(K_p, n, α/2) − e^ε
    cp_upper(K_q, n, α/2) > δ``."""
    if p <= 0:
        return 0.0
    kq = _window(n, q)
    need = delta + math.exp(epsilon) * np.asarray(cp_upper(kq, n, alpha / 2))
    kp = _window(n, p)
    low = np.asarray(cp_lower(kp, n, alpha / 2))
    kmin = kp[0] + np.searchsorted(low, need, side="right")  # first k with cp_lower > need
    return min(1.0, float(np.sum(st.binom.pmf(kq, n, q) * st.binom.sf(kmin - 1, n, p))))


def simulate(event: dict[str, Any], n: int, claim: Any, alpha: float, draws: int,
             rng: np.random.Generator) -> float:
    """Fraction of ``draws`` simulated count pairs that dpcheck's own functions refute."""
    a, b = event["a"], event["b"]
    hits = 0
    if isinstance(claim, ApproxDP):
        kp, kq = rng.binomial(n, a, draws), rng.binomial(n, b, draws)
        for x, y in zip(kp.tolist(), kq.tolist()):
            hits += event_bound(x, n, y, n, alpha=alpha).epsilon_lower(claim.delta) > claim.epsilon
    else:
        kp, kq = rng.poisson(n * a, draws), rng.poisson(n * b, draws)
        for x, y in zip(kp.tolist(), kq.tolist()):
            r = ratio_lower(x, y, alpha=alpha)
            hits += r > 0 and math.log(r) > claim.epsilon
    return hits / draws


# ----------------------------------------------------------------------------- event families

def _prefix_index(mass: np.ndarray, keep: int) -> np.ndarray:
    """Indices of prefixes whose cumulative mass crosses a log- and a linear grid (all of them
    when there are few)."""
    if mass.size <= 2 * keep:
        return np.arange(mass.size)
    pos = mass[mass > 0]
    lo = pos[0] if pos.size else 1e-300
    targets = np.concatenate([np.geomspace(max(lo, 1e-12), mass[-1], keep),
                              np.linspace(0, mass[-1], keep)])
    idx = np.unique(np.clip(np.searchsorted(mass, targets), 0, mass.size - 1))
    return np.unique(np.concatenate([idx, np.arange(min(8, mass.size))]))


def frontier(p: np.ndarray, q: np.ndarray, paired: bool) -> list[dict[str, Any]]:
    """Pareto frontier of the likelihood-ratio events of the laws ``p`` (D) and ``q`` (D′).

    Pure claims (``paired``): events ``(a, b)`` with ``K_p ~ Poisson(n·a)`` and ``K_q ~
    Poisson(n·b)``: super-level sets in either direction, and paired events (a forward
    super-level set S counted on D together with a disjoint backward one S′ counted on D′:
    ``a = P(S) + Q(S′)``, ``b = Q(S) + P(S′)``); frontier in ``(a + b, a/(a + b))``.
    Approximate claims: single super-level sets in either direction, frontier in ``(a, −b)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        llr = np.log(p) - np.log(q)
    llr = np.where(np.isnan(llr), 0.0, llr)
    order = np.argsort(-llr, kind="stable")
    fp, fq = np.cumsum(p[order]), np.cumsum(q[order])  # forward prefixes (high LR first)
    bp, bq = np.cumsum(p[order][::-1]), np.cumsum(q[order][::-1])  # backward prefixes
    fi, bi = _prefix_index(fp, PREFIXES), _prefix_index(bq, PREFIXES)
    cands = [(fp[fi], fq[fi], fi + 1, np.zeros_like(fi)),  # forward: D over D'
             (bq[bi], bp[bi], np.zeros_like(bi), bi + 1)]  # backward: D' over D
    if paired:
        k, j = np.meshgrid(fi, bi, indexing="ij")
        ok = (k + 1) + (j + 1) <= p.size  # disjoint
        k, j = k[ok], j[ok]
        cands.append((fp[k] + bq[j], fq[k] + bp[j], k + 1, j + 1))
    a = np.concatenate([c[0] for c in cands])
    b = np.concatenate([c[1] for c in cands])
    nf = np.concatenate([c[2] for c in cands])
    nb = np.concatenate([c[3] for c in cands])
    keep = a > 0
    a, b, nf, nb = a[keep], b[keep], nf[keep], nb[keep]
    if paired:  # larger total and larger share of a both help
        key, share = a + b, a / (a + b)
        idx = np.lexsort((-share, -key))
        best, out = -1.0, []
        for i in idx:
            if share[i] > best:
                best = share[i]
                out.append(i)
    else:  # larger a and smaller b both help
        idx = np.lexsort((b, -a))
        best, out = math.inf, []
        for i in idx:
            if b[i] < best:
                best = b[i]
                out.append(i)
    out = sorted(out, key=lambda i: a[i] + b[i])
    return [{"a": float(a[i]), "b": float(b[i]), "forward_cells": int(nf[i]),
             "backward_cells": int(nb[i])} for i in out]


def _power(event: dict[str, Any], n: int, claim: Any, alpha: float) -> float:
    if isinstance(claim, ApproxDP):
        return power_cp(n, event["a"], event["b"], claim.epsilon, claim.delta, alpha)
    a, b = event["a"], event["b"]
    return power_ratio(n * (a + b), a / (a + b), claim.epsilon, alpha)


def best_event(events: list[dict[str, Any]], n: int, claim: Any, alpha: float,
               around: int | None = None) -> tuple[float, dict[str, Any], int]:
    """The frontier event with the largest exact P(refute) at ``n`` per side, and its index:
    every ``len/COARSE``-th event (``around``: only the ±REFINE strides around that index, a
    warm start), then ±REFINE strides around each of the three best at strides divided by 4
    down to 1."""
    stride = max(1, len(events) // COARSE)
    powers: dict[int, float] = {}

    def scan(centre: int | None, step: int) -> int:
        lo, hi = (0, len(events)) if centre is None else (centre - REFINE * step,
                                                           centre + REFINE * step + 1)
        for i in range(max(0, lo), min(len(events), hi), step):
            if i not in powers:
                powers[i] = _power(events[i], n, claim, alpha)
        return max(powers, key=powers.__getitem__)

    scan(around, stride)
    starts = sorted(powers, key=powers.__getitem__)[-3:]  # refine the three best
    for top in starts:
        step = stride
        while step > 1:
            step = max(1, step // 4)
            top = scan(top, step)
    top = max(powers, key=powers.__getitem__)
    return powers[top], events[top], top


def median_samples(events: list[dict[str, Any]], claim: Any, alpha: float,
                   hi: float = 1e10) -> float:
    """Smallest ``n`` per side (to 1 %) at which the oracle's best P(refute) reaches 0.5
    (``inf`` if not by ``hi``): decades upwards from 10 (full search), then bisection on
    ``log n`` (warm-started search around the best event at the decade above)."""
    lo_l = 1.0
    while True:
        power, _, top = best_event(events, int(10 ** lo_l), claim, alpha)
        if power >= 0.5:
            break
        lo_l += 1.0
        if 10 ** lo_l > hi:
            return math.inf
    hi_l, lo_l = lo_l, lo_l - 1.0
    if lo_l < 1.0:
        return 10.0
    while hi_l - lo_l > 0.004:
        mid = (lo_l + hi_l) / 2
        power, _, found = best_event(events, int(round(10 ** mid)), claim, alpha, around=top)
        if power >= 0.5:
            hi_l, top = mid, found
        else:
            lo_l = mid
    return float(round(10 ** hi_l))


def expected_epsilon_bound(event: dict[str, Any], n: int, claim: Any, alpha: float) -> float:
    """The ε lower bound the event certifies at its expected counts: the ranking dpcheck's
    selection uses (:mod:`dpcheck.events.projection`: the projected ε bound, δ subtracted for
    approximate claims), as opposed to the claim test's P(refute)."""
    a, b = event["a"], event["b"]
    if isinstance(claim, ApproxDP):
        p_low = float(cp_lower(round(n * a), n, alpha / 2))
        q_high = float(cp_upper(round(n * b), n, alpha / 2))
        return math.log((p_low - claim.delta) / q_high) if p_low > claim.delta else -math.inf
    kp, kq = n * a, n * b
    if kp < 1 or a <= b:
        return -math.inf
    pi = float(st.beta.ppf(alpha, kp, kq + 1))
    return math.log(pi / (1 - pi)) if 0 < pi < 1 else (math.inf if pi >= 1 else -math.inf)


# ----------------------------------------------------------------------------- exact laws

@dataclass(frozen=True)
class Law:
    """Exact masses of one output partition under D (``p``) and D′ (``q``) and the check of
    both against the zoo sampler (``check(rng, draws)`` → test name and p-value per side)."""

    p: np.ndarray
    q: np.ndarray
    check: Callable[[np.random.Generator, int], dict[str, Any]]


LogCdf = Callable[[np.ndarray], np.ndarray]


def _grid_masses(logcdf: LogCdf, logsf: LogCdf, edges: np.ndarray) -> np.ndarray:
    """Masses of ``(−∞, e_0], (e_0, e_1], …, (e_last, ∞)``: CDF differences below the median,
    survival differences above (no cancellation in either tail)."""
    c = np.concatenate([[0.0], np.exp(logcdf(edges)), [1.0]])
    s = np.concatenate([[1.0], np.exp(logsf(edges)), [0.0]])
    return np.maximum(np.where(c[1:] <= 0.5, c[1:] - c[:-1], s[:-1] - s[1:]), 0.0)


def _mixture(noise: Any, shifts: np.ndarray, weights: np.ndarray) -> tuple[LogCdf, LogCdf]:
    """``(ln F, ln(1 − F))`` of ``Σ_k w_k·noise(· − s_k)`` (a noisy sum of a random subsample;
    one shift for a plain noisy sum)."""
    lw = np.log(weights)[:, None]
    return (lambda t: np.logaddexp.reduce(lw + noise.logcdf(t[None, :] - shifts[:, None]), 0),
            lambda t: np.logaddexp.reduce(lw + noise.logsf(t[None, :] - shifts[:, None]), 0))


def _maximum(noise: Any, scores: np.ndarray) -> tuple[LogCdf, LogCdf]:
    """``(ln F, ln(1 − F))`` of ``max_i (s_i + noise_i)``, independent noises:
    ``F(t) = Π_i F_noise(t − s_i)``."""
    def logcdf(t: np.ndarray) -> np.ndarray:
        return np.sum(noise.logcdf(t[None, :] - scores[:, None]), axis=0)

    def logsf(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(-np.expm1(logcdf(t)))
    return logcdf, logsf


def _ks(sampler: Callable[[Any, int, np.random.Generator], np.ndarray], data: tuple[Any, Any],
        laws: tuple[tuple[LogCdf, LogCdf], ...], atoms: tuple[float, float] | None = None,
        leak: float = 0.0) -> Callable[[np.random.Generator, int], dict[str, Any]]:
    """KS of ``draws`` sampler outputs per side against the exact CDF (outputs equal to the
    side's atom, if any, removed first and their number tested by an exact binomial test)."""
    def check(rng: np.random.Generator, draws: int) -> dict[str, Any]:
        out: dict[str, Any] = {"test": "KS" if atoms is None else "binomial (atom) + KS"}
        for side, d, (logcdf, _) in zip(("d", "d_prime"), data, laws):
            x = np.asarray(sampler(d, draws, rng), float)
            if atoms is not None:
                at = x == atoms[side == "d_prime"]
                out[f"atom_p_{side}"] = float(st.binomtest(int(at.sum()), draws, leak).pvalue)
                x = x[~at]
            out[f"p_{side}"] = float(st.kstest(x, lambda t: np.exp(logcdf(np.atleast_1d(
                np.asarray(t, float))))).pvalue)
        return out
    return check


def _chi2(observed: np.ndarray, expected: np.ndarray) -> float:
    """χ² p-value, cells with expected count < 5 pooled into one."""
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return float(st.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def _continuous_law(entry: ZooEntry, d: Any, d_prime: Any) -> Law:
    """Laws of the one-dimensional entries on a grid of ~10⁴–10⁵ bins."""
    mech = entry.mechanism
    name = entry.name
    sampler = mech.sample
    atoms = None
    leak = 0.0
    if name.startswith("laplace_insufficient") or name.startswith("delta_leak"):
        scale = mech.scale if hasattr(mech, "scale") else mech.sensitivity / mech.epsilon
        noise = st.laplace(0.0, scale)
        laws = tuple(_mixture(noise, np.array([sum(x)], float), np.ones(1)) for x in (d, d_prime))
        centres = [float(sum(d)), float(sum(d_prime))]
        edges = np.arange(min(centres) - 50 * scale, max(centres) + 50 * scale, scale / 100)
        if name.startswith("delta_leak"):
            atoms, leak = (centres[0], centres[1]), mech.leak
    elif name.startswith("classic_gaussian"):
        noise = st.norm(0.0, mech.sigma)
        laws = tuple(_mixture(noise, np.array([sum(x)], float), np.ones(1)) for x in (d, d_prime))
        edges = np.arange(-30 * mech.sigma, 1 + 30 * mech.sigma, mech.sigma / 200)
    elif name.startswith("noisy_max_value"):
        noise = (st.laplace(0.0, mech.scale) if mech.noise == "laplace"
                 else st.expon(0.0, mech.scale))
        laws = tuple(_maximum(noise, np.asarray(x, float)) for x in (d, d_prime))
        lo = min(max(d), max(d_prime))
        if mech.noise == "laplace":
            edges = np.arange(lo - 50 * mech.scale, max(max(d), max(d_prime)) + 50 * mech.scale,
                              mech.scale / 100)
        else:  # support edges max(d), max(d') on the grid; fine near them
            edges = lo + np.arange(0, 50_001) * (mech.scale / 1000)
    elif name.startswith("subsampled_laplace"):
        noise = st.laplace(0.0, mech.mechanism.scale)
        laws = []
        for x in (d, d_prime):
            arr = np.asarray(x, float)
            assert set(arr.tolist()) <= {0.0, 1.0}
            ks = np.arange(0, mech.m + 1)
            w = st.hypergeom(arr.size, int(arr.sum()), mech.m).pmf(ks)
            laws.append(_mixture(noise, ks[w > 0].astype(float), w[w > 0]))
        laws = tuple(laws)
        s = mech.mechanism.scale
        edges = np.arange(-50 * s, mech.m + 50 * s, s / 100)
    else:
        raise KeyError(name)
    p, q = (_grid_masses(lc, ls, edges) for lc, ls in laws)
    if atoms is not None:  # the released raw sums: an atom under each side
        p, q = np.append(p * (1 - leak), [leak, 0.0]), np.append(q * (1 - leak), [0.0, leak])
    return Law(p, q, _ks(sampler, (d, d_prime), laws, atoms, leak))


def _finite_law(entry: ZooEntry, d: Any, d_prime: Any) -> Law:
    """Truncated geometric (its pmf) and the ⊤/⊥ sparse-vector variants (pattern pmf)."""
    mech = entry.mechanism
    if entry.name.startswith("svt"):
        pats, lp = svt_exact.log_pmf(mech, d)
        pats_q, lq = svt_exact.log_pmf(mech, d_prime)
        assert (pats == pats_q).all()
        p, q = np.exp(lp), np.exp(lq)
        index = {tuple(r): i for i, r in enumerate(pats.tolist())}

        def cells(x: np.ndarray) -> np.ndarray:
            return np.array([index[tuple(r)] for r in x.tolist()])
    else:
        pp, qq = mech.pmf(d), mech.pmf(d_prime)
        keys = sorted(set(pp) | set(qq))
        p = np.array([pp.get(k, 0.0) for k in keys])
        q = np.array([qq.get(k, 0.0) for k in keys])
        index = {k: i for i, k in enumerate(keys)}

        def cells(x: np.ndarray) -> np.ndarray:
            return np.array([index[k] for k in x.tolist()])

    def check(rng: np.random.Generator, draws: int) -> dict[str, Any]:
        out: dict[str, Any] = {"test": "chi2"}
        for side, x, law in (("d", d, p), ("d_prime", d_prime, q)):
            c = np.bincount(cells(np.asarray(mech.sample(x, draws, rng))), minlength=law.size)
            out[f"p_{side}"] = _chi2(c, draws * law)
        return out
    return Law(p, q, check)


SVT3_VALUES = np.linspace(-800.0, 800.0, 160_001)  # the grid of oracle_ceiling.svt3
_SVT3_CACHE: dict[tuple[float, ...], np.ndarray] = {}


def _svt3_law(entry: ZooEntry, d: Any, d_prime: Any) -> Law:
    """Alg. 3: cells "⊤ first at query j with value on the grid" and "nothing released"."""
    mech = entry.mechanism
    masses = []
    for x in (d, d_prime):
        key = tuple(float(v) for v in x)
        if key not in _SVT3_CACHE:
            _SVT3_CACHE[key] = svt_exact.svt3_masses(mech, list(key), SVT3_VALUES)
        masses.append(_SVT3_CACHE[key])
    p, q = masses
    n, g = len(d), SVT3_VALUES.size
    step = float(SVT3_VALUES[1] - SVT3_VALUES[0])

    def check(rng: np.random.Generator, draws: int) -> dict[str, Any]:
        """χ² on (first-⊤ index, exact value decile) cells plus "nothing released"."""
        out: dict[str, Any] = {"test": "chi2 (index x value decile)"}
        for side, x, law in (("d", d, p), ("d_prime", d_prime, q)):
            j, v = svt_exact.svt3_release(np.asarray(mech.sample(x, draws, rng)))
            obs, exp = [int((j == n).sum())], [law[-1]]
            for k in range(n):
                m = law[k * g:(k + 1) * g]
                if m.sum() * draws < 50:
                    obs.append(int((j == k).sum()))
                    exp.append(m.sum())
                    continue
                cum = np.cumsum(m) / m.sum()
                cut = np.unique(np.searchsorted(cum, np.linspace(0.1, 0.9, 9)))
                bounds = np.concatenate([[-np.inf], SVT3_VALUES[cut] + step / 2, [np.inf]])
                obs += np.histogram(v[j == k], bounds)[0].tolist()
                exp += [m[a:b].sum() for a, b in zip(np.concatenate([[0], cut + 1]),
                                                      np.concatenate([cut + 1, [g]]))]
            out[f"p_{side}"] = _chi2(np.array(obs, float), draws * np.array(exp))
        return out
    return Law(p, q, check)


def law(entry: ZooEntry, d: Any, d_prime: Any) -> Law:
    """The exact law of ``entry`` on the pair ``(d, d_prime)``."""
    if entry.name == "svt3":
        return _svt3_law(entry, d, d_prime)
    if entry.name.startswith("svt") or entry.name.startswith("truncated_geometric"):
        return _finite_law(entry, d, d_prime)
    return _continuous_law(entry, d, d_prime)


# ----------------------------------------------------------------------------- the benchmark

def pair_record(entry: ZooEntry, index: int, n: int, alpha: float, check: int, draws: int,
                rng: np.random.Generator, at: tuple[int, ...] = ()) -> dict[str, Any]:
    """Law check, oracle P(refute) at ``n`` per side (and at the budgets ``at``) and median
    samples on one listed pair."""
    d, d_prime = entry.pairs[index]
    start = time.perf_counter()
    exact = law(entry, d, d_prime)
    sampler_check = exact.check(rng, check) if check else {}
    claim = entry.claim
    approx = isinstance(claim, ApproxDP)
    with np.errstate(divide="ignore", invalid="ignore"):
        llr = np.log(exact.p) - np.log(exact.q)
    mismatch = bool(((exact.p > 0) & (exact.q == 0)).any() or ((exact.q > 0) & (exact.p == 0)).any())
    both = (exact.p > 0) & (exact.q > 0)
    events = frontier(exact.p, exact.q, paired=not approx)
    power, event, _ = best_event(events, n, claim, alpha)
    simulated = simulate(event, n, claim, alpha, draws, rng)
    ci = st.binomtest(round(simulated * draws), draws).proportion_ci(0.95, method="exact")
    median = median_samples(events, claim, alpha)
    eps_best = max(events, key=lambda e: expected_epsilon_bound(e, n, claim, alpha))
    rec: dict[str, Any] = {
        "pair": index, "d": list(d), "d_prime": list(d_prime),
        "pair_epsilon": math.inf if mismatch else float(np.abs(llr[both]).max()),
        "pair_epsilon_finite_part": float(np.abs(llr[both]).max()),
        "cells": int(exact.p.size), "frontier_events": len(events),
        "sampler_check": {**sampler_check, "draws_per_side": check},
        "samples_per_side": n, "p_refute": power,
        "p_refute_simulated": simulated, "simulated_ci95": [ci.low, ci.high],
        "simulated_draws": draws,
        "event": {**event, "log_ratio": (math.log(event["a"] / event["b"]) if event["b"] > 0
                                         else math.inf),
                  "paired": bool(event["forward_cells"] and event["backward_cells"])},
        "median_samples": median,
        "oracle_at": {str(b): best_event(events, b, claim, alpha)[0] for b in at},
        "max_epsilon_event": {**eps_best, "expected_epsilon_bound": expected_epsilon_bound(
            eps_best, n, claim, alpha), "p_refute": _power(eps_best, n, claim, alpha)},
        "seconds": 0.0}
    if approx:
        rec["event"]["delta_excess"] = event["a"] - math.exp(claim.epsilon) * event["b"]
        e_eps = math.exp(claim.epsilon)
        rec["pair_delta"] = float(max(np.maximum(exact.p - e_eps * exact.q, 0).sum(),
                                      np.maximum(exact.q - e_eps * exact.p, 0).sum()))
    rec["seconds"] = round(time.perf_counter() - start, 1)
    return rec


def entry_record(name: str, budget: int, alpha: float, check: int, draws: int,
                 rng: np.random.Generator, at: tuple[int, ...] = ()) -> dict[str, Any]:
    """Every listed pair of ``name`` (:func:`pair_record`) and the best of them."""
    entry = get(name)
    n = budget // 10
    pairs = [pair_record(entry, i, n, alpha, check, draws, rng, at)
             for i in range(len(entry.pairs))]
    best = min(range(len(pairs)), key=lambda i: (pairs[i]["median_samples"],
                                                 -pairs[i]["p_refute"]))
    claim = entry.claim
    rec = {"mechanism": name, "tier": entry.tier, "claim": repr(claim),
           "claimed_epsilon": claim.epsilon,
           "claimed_delta": claim.delta if isinstance(claim, ApproxDP) else 0.0,
           "true_epsilon": entry.true_epsilon, "true_epsilon_is_bound": entry.true_epsilon_is_bound,
           "true_delta_at_claimed_epsilon": (entry.true_delta(claim.epsilon)
                                             if entry.true_delta else None),
           "budget": budget, "tenth": n, "alpha": alpha,
           "dpcheck_fixed_refuted_at_tenth": LATE.get(name), "dpcheck_runs": 5,
           "first_pair": pairs[0], "best_pair": best, "pairs": pairs}
    return rec


def dpcheck_fixed(name: str, budgets: list[int], seeds: int, alpha: float
                  ) -> dict[str, Any]:
    """dpcheck's fixed audits (``sequential=False``) of the entry's first pair, as
    ``benchmarks/sequential.py`` runs them: refuted runs of ``seeds`` per budget."""
    import dpcheck

    entry = get(name)
    d, d_prime = entry.pairs[0]
    out: dict[str, Any] = {}
    for n in budgets:
        start = time.perf_counter()
        runs = [dpcheck.audit(entry.mechanism, d, d_prime, entry.claim, samples=n, seed=seed,
                              alpha=alpha, features=entry.features,
                              float_features=entry.float_features, sequential=False)
                for seed in range(seeds)]
        out[str(n)] = {"refuted": sum(r.violation for r in runs), "runs": seeds,
                       "violation": [bool(r.violation) for r in runs],
                       "epsilon_lower": [round(r.epsilon_lower, 4) for r in runs],
                       "seconds": round(time.perf_counter() - start, 1)}
    return out


def _fmt_n(x: float) -> str:
    if not math.isfinite(x):
        return "> 10¹⁰"
    e = math.floor(math.log10(x))
    return f"{x / 10 ** e:.2f}·10^{e}"


def markdown(records: list[dict[str, Any]]) -> str:
    """The report: per entry and listed pair, the oracle against dpcheck's fixed audits."""
    lines = ["# Oracle samples to refute the late zoo entries (exact laws, one event, full α)", "",
             "Budget = today's fixed budget per side (benchmarks/sequential.py: 10⁶, first pair "
             "only); the oracle tests its best likelihood-ratio event (pure claims: single or "
             "paired) on all n outputs per side with dpcheck's test at the full α. P(refute) "
             "exact, in brackets simulated count pairs through dpcheck.stats; 'median n' = "
             "smallest n per side with P(refute) ≥ 0.5; 'max-ε event' = P(refute) of the "
             "event with the largest expected ε bound (dpcheck's ranking). Law check: p-values "
             "of the exact law against the zoo sampler on D, D′.", "",
             "| entry | truth | pair | pair ε (δ) | oracle P(refute) at budget/10 (sim) | "
             "max-ε event | oracle median n | / budget | law check p |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        truth = (f"δ({r['claimed_epsilon']:g}) = {r['true_delta_at_claimed_epsilon']:.4g} "
                 f"> {r['claimed_delta']:g}" if r["true_delta_at_claimed_epsilon"] is not None
                 else f"ε = {r['true_epsilon']:.4g}" + (" (sup)" if r["true_epsilon_is_bound"]
                                                        else "") + f" > {r['claimed_epsilon']:g}")
        for p in r["pairs"]:
            mark = " (audited)" if p["pair"] == 0 else ""
            mark += " **best**" if p["pair"] == r["best_pair"] and len(r["pairs"]) > 1 else ""
            sc = p["sampler_check"]
            checks = f"{sc.get('p_d', math.nan):.2g}, {sc.get('p_d_prime', math.nan):.2g}"
            if "atom_p_d" in sc:
                checks += f"; atom {sc['atom_p_d']:.2g}, {sc['atom_p_d_prime']:.2g}"
            size = (f"δ = {p['pair_delta']:.4g}" if "pair_delta" in p
                    else f"{p['pair_epsilon']:.4g}")
            lines.append(
                f"| {r['mechanism']} | {truth} | {p['pair']}{mark} | {size} | "
                f"{p['p_refute']:.3f} ({p['p_refute_simulated']:.3f}) | "
                f"{p['max_epsilon_event']['p_refute']:.3f} | "
                f"{_fmt_n(p['median_samples'])} | {p['median_samples'] / r['budget']:.3g} | "
                f"{checks} |")
    lines += ["", "Best events at budget/10 (a = mass counted for D, b for D′; paired: a forward "
              "and a backward likelihood-ratio set counted together):", "",
              "| entry | pair | a | b | ln(a/b) | paired | P(refute) |",
              "|---|---|---|---|---|---|---|"]
    for r in records:
        for p in r["pairs"]:
            ev = p["event"]
            lines.append(f"| {r['mechanism']} | {p['pair']} | {ev['a']:.4g} | {ev['b']:.4g} | "
                         f"{ev['log_ratio']:.4g} | {'yes' if ev['paired'] else 'no'} | "
                         f"{p['p_refute']:.3f} |")
    with_dp = [r for r in records if "dpcheck_fixed" in r]
    if with_dp:
        budgets = list(with_dp[0]["dpcheck_fixed"])
        lines += ["", "dpcheck's fixed audits of the first pair (refuted runs, seeds 0–"
                  f"{with_dp[0]['dpcheck_fixed'][budgets[0]]['runs'] - 1}; α = "
                  f"{with_dp[0]['alpha']}) against the oracle's P(refute) on the same pair:", "",
                  "| entry | oracle median n | " + " | ".join(
                      f"n = {_fmt_n(float(b))}: dpcheck (oracle)" for b in budgets) + " |",
                  "|---|---|" + "---|" * len(budgets)]
        for r in with_dp:
            cells = []
            for b in budgets:
                f = r["dpcheck_fixed"][b]
                o = r["pairs"][0]["oracle_at"].get(b, math.nan)
                cells.append(f"{f['refuted']}/{f['runs']} ({o:.2f})")
            lines.append(f"| {r['mechanism']} | {_fmt_n(r['pairs'][0]['median_samples'])} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1e6,
                        help="today's fixed budget per side (the oracle is run at 1/10)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--check", type=int, default=200_000,
                        help="sampler draws per side for the law checks (0: skip)")
    parser.add_argument("--draws", type=int, default=4000, help="simulated count pairs")
    parser.add_argument("--only", default=None, help="entries whose name contains this")
    parser.add_argument("--dpcheck", type=float, nargs="*", default=[],
                        help="also run dpcheck's fixed audits of the first pair at these "
                             "budgets per side (--seeds seeds each)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds of dpcheck's audits")
    parser.add_argument("--out", default="reports/bench")
    parser.add_argument("--markdown-only", action="store_true",
                        help="rewrite the .md from the existing .json")
    args = parser.parse_args(argv)
    out = Path(args.out)
    suffix = "" if args.only is None else "_" + args.only
    if args.markdown_only:
        records = json.loads((out / f"oracle_refute{suffix}.json").read_text())
        write_atomic(out / f"oracle_refute{suffix}.md", markdown(records))
        return 0
    rng = np.random.default_rng(0)
    records = []
    for name in LATE:
        if args.only and args.only not in name:
            continue
        rec = entry_record(name, int(args.budget), args.alpha, args.check, args.draws, rng,
                           tuple(int(b) for b in args.dpcheck))
        if args.dpcheck:
            rec["dpcheck_fixed"] = dpcheck_fixed(name, [int(b) for b in args.dpcheck],
                                                 args.seeds, args.alpha)
            print(f"{name:40s} dpcheck fixed {rec['dpcheck_fixed']}", flush=True)
        for p in rec["pairs"]:
            print(f"{name:40s} pair {p['pair']} eps {p['pair_epsilon']:.4g} "
                  f"P(refute at {rec['tenth']:.0e}) {p['p_refute']:.3f} "
                  f"(sim {p['p_refute_simulated']:.3f}) median n {p['median_samples']:.4g} "
                  f"check {p['sampler_check']} {p['seconds']} s", flush=True)
        records.append(rec)
    write_atomic(out / f"oracle_refute{suffix}.json", json.dumps(records, indent=1) + "\n")
    write_atomic(out / f"oracle_refute{suffix}.md", markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
