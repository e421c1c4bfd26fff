"""Seed 000 (Li–Wang–Ye): utility — Claim 3.2 at a calibrated size and the asymptotic
statements (Lemmas 2.5, 2.6, 2.10, 3.4) as measured scaling trends (``dp_record``).

The paper's constants C, C1, C2 are unspecified: Claim 3.2 is checked at a size chosen by
measurement (stated next to the test), not derived; the O(·) lemmas are recorded as trends.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Lemmas 2.5, 2.6, 2.10, Claim 3.2, Lemma 3.4; notes §4.2.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic import Agnostic
from algorithms.realizable_to_agnostic.testbeds import (
    UTILITY_TRIALS,
    detectable_inflation,
    utility_law,
)

N, T_STAR, ETA = 8, 4, 0.3
X = np.arange(N)
P1 = np.where(X >= T_STAR, 1 - ETA, ETA)                   # Pr[y = 1 | x], D_X uniform
CELL = np.stack([(1 - P1) / N, P1 / N], 1).reshape(-1)     # cell law of (x, y)
ERR = np.array([np.mean(np.where(X >= t, 1 - P1, P1)) for t in range(N + 1)])  # err_D(h_t)


def _data(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    return rng.multinomial(n, CELL, size=size).reshape(size, N, 2)


def _law(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(cell law (N, 2), err_D(h_t)) of a named distribution (:func:`utility_law`)."""
    return utility_law(name, N, T_STAR)


#: (distribution, ε, n, α) at β = 0.1. Sizes are chosen by measurement (C1, C2 unspecified) so
#: that the reference fails 3–6 % of the time (2000 exploratory runs, seed 1, not the test's
#: streams): slack 0.3–0.6, not the 0/400 of the single generous configuration before issue 27.
#: The first three are an ε sweep at fixed |T| = ⌈εn⌉ = 50 (the rate Claim 3.2 improves: the old
#: Δ = 1/|T| needs |T| ~ 1/(αε), mutant em_delta_t).
RELABEL_CONFIGS = [
    ("uniform", 0.1, 500, 0.1),
    ("uniform", 0.05, 1000, 0.1),
    ("uniform", 0.02, 2500, 0.1),
    ("heavy", 0.1, 700, 0.1),
    ("noise45", 0.1, 4000, 0.02),
    ("realizable", 0.1, 800, 0.1),
]
RELABEL_TRIALS = UTILITY_TRIALS
#: Each mutant on the configurations where it is a utility bug (elsewhere it is harmless: an
#: off-by-one threshold costs (1 − 2η)/8 = 0.05 < α on the uniform law).
RELABEL_MUTANTS = {"sign_error": (0,), "threshold_off_by_one": (3, 5), "em_delta_t": (0, 1, 2)}
RELABEL_CASES = [pytest.param(c, "reference", id=f"{c[0]}-eps{c[1]}-n{c[2]}-reference")
                 for c in RELABEL_CONFIGS] + [
    pytest.param(RELABEL_CONFIGS[i], v, marks=pytest.mark.mutant(v),
                 id=f"{RELABEL_CONFIGS[i][0]}-eps{RELABEL_CONFIGS[i][1]}-n{RELABEL_CONFIGS[i][2]}-{v}")
    for v, idx in RELABEL_MUTANTS.items() for i in idx]


@pytest.mark.claim(paper="000", ref="Claim 3.2", kind="utility")
@pytest.mark.parametrize("config, variant", RELABEL_CASES)
def test_relabel_quality(config: tuple[str, float, int, float], variant: str, dp_accuracy: Any,
                         dp_record: Any, dp_sensitivity: Any) -> None:
    """Claim 3.2 (C1, C2 unspecified; sizes chosen by measurement): the relabel h has
    err_D(h) ≤ η + α w.p. ≥ 1 − β (β = 0.1) on four distributions — uniform noisy threshold,
    a heavy point next to t*, extreme noise η = 0.45, realizable — and at ε = 0.1, 0.05, 0.02
    for a fixed |T| = 50. 1400 trials per configuration (power ≥ 0.9 at 1.5β). Mutants:
    sign_error (EM maximises q); subtle: threshold_off_by_one (h_t scored as 1[x > t]: fails
    the heavy point and the realizable case), em_delta_t (Δ = 1/|T|, the old 1/(αε²) cost:
    fails every ε of the sweep). Each mutant runs on the configurations where it is a utility
    bug (:data:`RELABEL_MUTANTS`)."""
    name, eps, n, alpha = config
    cell, err = _law(name)
    eta = float(err.min())
    mech = Agnostic(N, eps, bug=variant)

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        rep, _ = mech.run_iid(cell, n, size, rng)
        return err[rep] - eta

    r = dp_accuracy(trial, alpha=alpha, beta=0.1, trials=RELABEL_TRIALS)
    dp_record("claim_3_2", {"distribution": name, "epsilon": eps, "n": n, "alpha": alpha,
                            "failure_rate": r.failure_rate})
    if variant == "reference":
        dp_sensitivity(loss=max(r.failure_rate, 1e-9), bound=0.1,
                       detectable_overspend=detectable_inflation(RELABEL_TRIALS, 0.1,
                                                                 r.confidence),
                       basis=f"measured failure rate over {RELABEL_TRIALS} trials / β; "
                             "detectable failure-rate inflation from the exact binomial power "
                             "at this call's α")


@pytest.mark.claim(paper="000", ref="Lemma 2.6", kind="generalization")
def test_agnostic_uniform_convergence_scaling(dp_record: Any) -> None:
    """Lemma 2.6 (Talagrand, C unspecified): sup_c |err_S(c) − err_D(c)| over thresholds,
    recorded against n; √n·mean deviation stays bounded (the 1/α² rate)."""
    rng = np.random.default_rng(26)
    rows = []
    for n in (100, 400, 1600, 6400):
        c = _data(rng, 300, n)
        emp = (np.concatenate([np.zeros((300, 1)), np.cumsum(c[..., 1], 1)], 1)
               + (c[..., 0].sum(1, keepdims=True)
                  - np.concatenate([np.zeros((300, 1)), np.cumsum(c[..., 0], 1)], 1))) / n
        dev = np.abs(emp - ERR).max(1)
        rows.append({"n": n, "mean_sup_dev": float(dev.mean()),
                     "sqrt_n_times_dev": float(dev.mean() * np.sqrt(n))})
    dp_record("lemma_2_6", {"rows": rows})
    assert rows[-1]["mean_sup_dev"] < rows[0]["mean_sup_dev"]


@pytest.mark.claim(paper="000", ref="Lemma 2.5", kind="generalization")
def test_realizable_generalization_scaling(dp_record: Any) -> None:
    """Lemma 2.5 (C unspecified): failure rate of E1 (∃ thresholds with dis_S ≤ α but
    dis_D > 2α) on uniform {0..63}, α = 0.05, recorded against n (expected ~ e^{−cnα})."""
    rng = np.random.default_rng(25)
    alpha, dom = 0.05, 64
    rows = []
    for n in (20, 60, 180, 540):
        xs = rng.integers(0, dom, (400, n))
        c = np.stack([np.bincount(r, minlength=dom) for r in xs])
        p = np.concatenate([np.zeros((400, 1)), np.cumsum(c, 1)], 1) / n
        dis_s = np.abs(p[:, :, None] - p[:, None, :])
        t = np.arange(dom + 1)
        dis_d = np.abs(t[:, None] - t[None, :]) / dom
        fail = ((dis_s <= alpha) & (dis_d[None] > 2 * alpha)).any((1, 2))
        rows.append({"n": n, "failure_rate": float(fail.mean())})
    dp_record("lemma_2_5", {"alpha": alpha, "rows": rows})
    assert rows[-1]["failure_rate"] <= rows[0]["failure_rate"]


@pytest.mark.claim(paper="000", ref="Lemma 3.4", kind="utility")
def test_agnostic_excess_error_scaling(dp_record: Any) -> None:
    """Lemma 3.4 (O(α), constants unspecified): mean excess error err_D(A(T^h)) − η of
    A_Agnostic with the EM learner (ε_A = 1) on the noisy threshold, ε = 0.1, against n.

    Recorded as a trend, so the proof's constants are not asserted. One of them is off (notes
    §6.11): the proof takes ``dis_D(h, h̄) ≤ α`` from Lemma 2.5, but Lemma 2.5 as stated gives
    ``2α`` (its event E1: ``dis_V ≤ α ⇒ dis_D ≤ 2α``, applied to ``h, h̄``, which agree on
    ``V``); this changes constants only."""
    rng = np.random.default_rng(34)
    rows = []
    for n in (250, 1000, 4000, 16000):
        mech = Agnostic(N, 0.1)
        _, out = mech.run_counts(_data(rng, 400, n), rng)
        ex = ERR[out] - ETA
        rows.append({"n": n, "mean_excess": float(ex.mean()),
                     "q90_excess": float(np.quantile(ex, 0.9))})
    dp_record("lemma_3_4", {"rows": rows})
    assert rows[-1]["mean_excess"] <= rows[0]["mean_excess"]


@pytest.mark.claim(paper="000", ref="Lemma 2.10", kind="generalization")
def test_dp_generalization_rate(dp_record: Any) -> None:
    """Lemma 2.10 (failure constant unspecified): A = EM learner over thresholds (ε = 1, pure,
    so any δ works; δ = 1e-6) on a sample realizable by t* = 32 over uniform {0..63}; the
    predicate is g ⊕ h_{t*}. Recorded: the rate at which E_D[h] exceeds
    e^{2ε}(mean_S h + 10 log(1/(εδn))/(εn)) (expected 0 up to the O(εδn/log) term)."""
    rng = np.random.default_rng(210)
    eps, delta, dom = 1.0, 1e-6, 64
    rows = []
    for n in (50, 200, 800):
        xs = rng.integers(0, dom, (400, n))
        c = np.stack([np.bincount(r, minlength=dom) for r in xs])
        p = np.concatenate([np.zeros((400, 1)), np.cumsum(c, 1)], 1)
        errs = np.abs(p - p[:, [32]])                       # #errors of h_b on S^{h_t*}
        logit = -eps * errs / 2.0
        prob = np.exp(logit - logit.max(1, keepdims=True))
        prob /= prob.sum(1, keepdims=True)
        g = (prob.cumsum(1) > rng.random((400, 1))).argmax(1)
        true = np.abs(g - 32) / dom
        emp = errs[np.arange(400), g] / n
        rhs = np.exp(2 * eps) * (emp + 10 / (eps * n) * np.log(1 / (eps * delta * n)))
        rows.append({"n": n, "violation_rate": float((true > rhs).mean()),
                     "mean_true": float(true.mean())})
    dp_record("lemma_2_10", {"rows": rows, "epsilon": eps, "delta": delta})
