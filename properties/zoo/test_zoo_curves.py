"""The zoo's Gaussian mechanisms stated as curves (issue 29): a Gaussian sum with sensitivity Δ
and noise σ is exactly (Δ/σ)-GDP and (Δ²/2σ²)-zCDP (Dong, Roth, Su 2022, Theorem 2.7; Bun,
Steinke 2016, Proposition 1.6). At its exact μ and ρ the audit must not refute it; a claim of
more privacy than the truth (μ or ρ at 0.6 of the exact value: the noise overstated by 1/0.6)
must be refuted — the same test body, run on the overstated claim as a mutant case.

The zoo's discrete mechanisms with a known pmf (randomized response, the geometric mechanism) are
audited the same way against their exact μ, ρ and Rényi ε at order 2, computed from the pmfs by
:class:`dpcheck.exact.ExactPrivacy` (:mod:`dpcheck.exact_curves`). Every test records the
tightness ``audited lower bound / exact value`` (``dp_record("curve_tightness", …)``); the
certified bound must never exceed the exact value (validity). For the discrete cases the record
also holds the best any single binary event can certify (the exact oracle: Rényi divergences of
binary events lose information, so a ρ or ε(α) ratio well below 1 can be the event family's
ceiling rather than the sample size's).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtri

import dpcheck
from algorithms.zoo import entries, exact_pmf, get
from dpcheck.exact import ExactPrivacy, privacy_loss

GAUSSIANS = [e for e in entries() if type(e.mechanism).__name__ == "GaussianSum"]
#: Samples per side. zCDP is certified through Rényi divergences of binary events, which lose
#: more than the trade-off curve does (on analytic_gaussian at 3e5: ρ ≥ 0.021 of the true 0.036,
#: μ ≥ 0.256 of 0.268), so its audits get ten times the samples (at 3e6: ρ ≥ 0.026).
SAMPLES = {"gdp": 300_000, "zcdp": 3_000_000}


def _exact(entry, kind: str, factor: float):
    mech = entry.mechanism
    mu = mech.sensitivity / mech.sigma
    return dpcheck.GaussianDP(factor * mu) if kind == "gdp" else dpcheck.ZCDP(factor * mu**2 / 2)


def _cases():
    for e in GAUSSIANS:
        for kind in ("gdp", "zcdp"):
            yield pytest.param(e, kind, 1.0, id=f"{e.name}-{kind}",
                               marks=pytest.mark.claim(kind="privacy", expect="holds"))
            yield pytest.param(e, kind, 0.6, id=f"{e.name}-{kind}-overstated",
                               marks=pytest.mark.claim(kind="privacy", expect="violation"))


@pytest.mark.parametrize("entry, kind, factor", list(_cases()))
def test_zoo_gaussian_meets_its_exact_curve(entry, kind, factor, dp_audit, dp_record):
    claim = _exact(entry, kind, factor)
    for d, d_prime in entry.pairs:
        r = dp_audit(entry.mechanism, d, d_prime, claim, samples=SAMPLES[kind],
                     relation=entry.relation, float_features=False)
        exact_mu = entry.mechanism.sensitivity / entry.mechanism.sigma
        key, exact = ("mu", exact_mu) if kind == "gdp" else ("rho", exact_mu**2 / 2)
        assert r.parameter_lower[key] <= exact + 1e-9  # the certified value never exceeds it
        dp_record("curve_tightness", {"parameter": key, "exact": exact,
                                      "lower": r.parameter_lower[key],
                                      "ratio": r.parameter_lower[key] / exact,
                                      "samples": SAMPLES[kind]})


def test_zoo_has_gaussians():
    assert {"analytic_gaussian", "classic_gaussian_eps4"} <= {e.name for e in GAUSSIANS}


# -- discrete mechanisms with a known pmf: exact curves from ExactPrivacy ----------------------

#: Zoo entries with an exact pmf (ε0 = 0.1): 4-ary randomized response, the geometric mechanism.
DISCRETE = ("randomized_response", "geometric")
#: The claims: (kind, claim class, result key); RDP at order 2.
KINDS = {"gdp": (dpcheck.GaussianDP, "mu"), "zcdp": (dpcheck.ZCDP, "rho"),
         "rdp2": (lambda eps: dpcheck.RenyiDP(2.0, eps), "epsilon_at_alpha")}
#: Overstated claims state half the exact parameter (4-ary RR's order-2 Rényi divergence is
#: certifiable by one binary event only up to 0.64 of the truth: 0.6 would be too close).
OVERSTATED = 0.5
DISCRETE_SAMPLES = 3_000_000




def exact_of(entry) -> ExactPrivacy:
    (d, d_prime), = entry.pairs
    return privacy_loss(exact_pmf(entry.mechanism, d), exact_pmf(entry.mechanism, d_prime))


def exact_value(ex: ExactPrivacy, kind: str) -> float:
    return {"gdp": ex.mu, "zcdp": ex.rho, "rdp2": lambda: ex.renyi(2.0)}[kind]()


def binary_event_oracle(ex: ExactPrivacy, kind: str) -> float:
    """The largest parameter one binary event S can certify with exact probabilities, as the
    audit computes it from a box (``parameter_lower``), over both orientations. The best binary
    coarsening for an f-divergence (and so for D_α and the trade-off) is a likelihood-ratio
    threshold (Tsitsiklis 1993), and within a tie the value is convex in the split, so the
    thresholds between distinct log-ratios suffice."""
    p, q = np.asarray(ex.p_values), np.asarray(ex.q_values)
    lr = np.round(np.log(p) - np.log(q), 12)
    order = np.argsort(lr, kind="stable")
    cuts = np.flatnonzero(np.diff(lr[order])) + 1
    tails_p, tails_q = np.cumsum(p[order][::-1])[::-1], np.cumsum(q[order][::-1])[::-1]
    claim = {"gdp": dpcheck.GaussianDP(1.0), "zcdp": dpcheck.ZCDP(1.0),
             "rdp2": dpcheck.RenyiDP(2.0, 1.0)}[kind]
    key = KINDS[kind][1]
    best = 0.0
    for c in cuts:
        ps, qs = float(min(tails_p[c], 1.0)), float(min(tails_q[c], 1.0))
        for a, b in ((ps, qs), (qs, ps), (1 - ps, 1 - qs), (1 - qs, 1 - ps)):
            if a > b:
                best = max(best, claim.parameter_lower(a, b)[key])
    return best


def _discrete_cases():
    for name in DISCRETE:
        for kind in KINDS:
            yield pytest.param(name, kind, 1.0, id=f"{name}-{kind}",
                               marks=pytest.mark.claim(kind="privacy", expect="holds"))
            yield pytest.param(name, kind, OVERSTATED, id=f"{name}-{kind}-overstated",
                               marks=pytest.mark.claim(kind="privacy", expect="violation"))


@pytest.mark.parametrize("name, kind, factor", list(_discrete_cases()))
def test_zoo_discrete_mechanism_meets_its_exact_curve(name, kind, factor, dp_audit, dp_record):
    """Claimed at the exact μ, ρ or ε(2) of its pmfs the mechanism passes and the certified
    lower bound never exceeds the exact value; claimed at half of it, it is refuted."""
    entry = get(name)
    ex = exact_of(entry)
    exact = exact_value(ex, kind)
    assert 0 < exact < math.inf
    make, key = KINDS[kind]
    (d, d_prime), = entry.pairs
    r = dp_audit(entry.mechanism, d, d_prime, make(factor * exact), samples=DISCRETE_SAMPLES,
                 relation=entry.relation)
    lower = r.parameter_lower[key]
    assert lower <= exact * (1 + 1e-9)
    oracle = binary_event_oracle(ex, kind)
    assert lower <= oracle * (1 + 1e-9) and oracle <= exact * (1 + 1e-9)
    dp_record("curve_tightness", {"parameter": key, "exact": exact, "lower": lower,
                                  "ratio": lower / exact, "binary_event_oracle": oracle,
                                  "ratio_to_oracle": lower / oracle,
                                  "samples": DISCRETE_SAMPLES})


def test_zoo_discrete_exact_curves_match_their_closed_forms():
    """The pmf-derived values are the known ones: 4-ary randomized response's Rényi divergence
    ln((e^{2ε} + e^{−ε} + 2)/(e^ε + 3)) at order 2 and D_∞ = ε; the geometric mechanism's pair
    has only the log-ratios ±ε, so it is binary randomized response: μ = 2Φ⁻¹(e^ε/(1 + e^ε))."""
    eps = 0.1
    rr = exact_of(get("randomized_response"))
    closed = math.log((math.exp(2 * eps) + math.exp(-eps) + 2) / (math.exp(eps) + 3))
    assert rr.renyi(2.0) == pytest.approx(closed, rel=1e-12)
    assert rr.renyi(math.inf) == pytest.approx(eps, rel=1e-12)
    geo = exact_of(get("geometric"))
    assert geo.mu() == pytest.approx(2 * ndtri(math.exp(eps) / (1 + math.exp(eps))), rel=1e-9)
    assert geo.rho() <= eps**2 / 2
