"""dp-accounting's PLD accountant as ground truth for the Gaussian and subsampled Gaussian.

For the zoo's analytic Gaussian (σ for (1, 1e-5), Δ = 1) and a Poisson-subsampled Gaussian
(rate q = 0.2, σ = 1, add/remove of one record), dp-accounting 0.6.0's privacy-loss
distribution gives δ(ε) (pessimistic discretisation: an upper bound, tight to ~1e-4
relative). The Gaussian's curve is cross-checked against the analytic formula of
``algorithms.mechanisms.gaussian`` (Balle & Wang 2018, Thm 8); dpcheck's ``delta_lower`` at
several ε must stay below the curve (it is a valid lower confidence bound), and the ratio
δ_lower / δ(ε) is printed — how much of the true δ the auditor certifies.

The audits look at values only (``float_features=False``): the curves are those of the
real-valued mechanisms, and ``value + noise`` in float64 leaks more (tests/test_float_features.py).

References
----------
B. Balle, Y.-X. Wang, ICML 2018 (Thm 8); dp-accounting (Google), PLD accountant; S. Zhu,
Y.-X. Wang, ICML 2019 (subsampled mechanisms' privacy-loss distributions).
"""

from __future__ import annotations


import pytest

from algorithms.mechanisms.gaussian import PoissonSubsampledGaussian, gaussian_delta
from algorithms.zoo import get
from dpcheck import ApproxDP, audit

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")

EPSILONS = (0.25, 0.5, 1.0)


def pld_delta(sigma: float, q: float, eps: float) -> float:
    dist = pld.from_gaussian_mechanism(sigma, sensitivity=1.0, sampling_prob=q,
                                       value_discretization_interval=1e-4)
    return float(dist.get_delta_for_epsilon(eps))


def test_pld_matches_the_analytic_gaussian_curve():
    sigma = get("analytic_gaussian").mechanism.sigma
    for eps in EPSILONS + (1.0, 2.0):
        exact = gaussian_delta(eps, sigma, 1.0)
        assert pld_delta(sigma, 1.0, eps) == pytest.approx(exact, rel=2e-3)
        assert pld_delta(sigma, 1.0, eps) >= exact * (1 - 1e-9)  # pessimistic


@pytest.mark.parametrize("name", ["analytic_gaussian", "subsampled_gaussian"])
def test_delta_lower_stays_below_the_pld_curve(name):
    if name == "analytic_gaussian":
        mech = get(name).mechanism
        sigma, q, d, d_prime = mech.sigma, 1.0, [1.0], []
    else:
        sigma, q, d, d_prime = 1.0, 0.2, [1.0], []
        mech = PoissonSubsampledGaussian(q, sigma)
    for i, eps in enumerate(EPSILONS):
        truth = pld_delta(sigma, q, eps)
        # claim δ just below the truth: the audit measures how much of δ(ε) it certifies
        r = audit(mech, d, d_prime, ApproxDP(eps, 0.5 * truth), samples=400_000, seed=i,
                  float_features=False)
        ratio = r.delta_lower / truth
        print(f"{name}: eps={eps} delta_pld={truth:.4g} delta_lower={r.delta_lower:.4g} "
              f"ratio={ratio:.3f}")
        assert r.delta_lower <= truth
        if truth > 0.02:  # resolvable at 4e5 samples: the auditor certifies most of δ(ε)
            assert ratio > 0.5
