"""Real mechanisms of diffprivlib 0.6.6 and OpenDP 0.16.0 audited at their documented guarantees,
and realistic misconfigurations of them caught with honest bounds.

Every audit uses the default features, including the float-representation features
(:mod:`dpcheck.features.float_bits`). Pairs are chosen where the documented guarantee is tight (the
worst case of the mechanism's sensitivity), at values away from 0: near 0, ``value + noise``
computed in float64 has resolution holes (Mironov 2012), a genuine finding recorded separately
(``test_diffprivlib_laplace_near_zero_has_float_holes``). Sample sizes are modest because one
library call draws one output (reports/bench/adapters_speed.json: ~10⁴–10⁵ calls/s for
diffprivlib mechanisms, ~10³ for tools and OpenDP); misconfigurations are chosen where the
true ε is far above the claim, which such sizes certify.

References
----------
diffprivlib 0.6.6 and OpenDP 0.16.0 documentation (the guarantees); I. Mironov, CCS 2012.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpcheck import AddRemove, ApproxDP, PureDP, Replace
from dpcheck.integrations.scalar import from_scalar

dpl = pytest.importorskip("diffprivlib")
dp = pytest.importorskip("opendp.prelude")
from diffprivlib import mechanisms as M  # noqa: E402
from diffprivlib import tools  # noqa: E402

from dpcheck.integrations.diffprivlib import from_diffprivlib  # noqa: E402
from dpcheck.integrations.opendp import from_opendp, opendp_claim  # noqa: E402

dp.enable_features("contrib")

FAST, TOOL, ODP = 20_000, 3_000, 3_000  # samples per side by calls/s of the adapter


# ----------------------------------------------------------------------------- OpenDP builders
# Module-level factories: the adapters pickle them (measurements themselves cannot be pickled).

def odp_float_laplace(scale: float = 1.0):
    return dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=scale)


def odp_int_laplace():
    return dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=1.0)


def odp_float_gaussian():
    return dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                              scale=2.0)


def odp_int_gaussian():
    return dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=2.0)


def odp_clamped_sum(lower: float = 0.0, upper: float = 1.0, scale: float = 2.0):
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
    return (space >> dp.t.then_clamp((lower, upper)) >> dp.t.then_sum()
            >> dp.m.then_laplace(scale))


def odp_count():
    space = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    return space >> dp.t.then_count() >> dp.m.then_laplace(1.0)


# ------------------------------------------------------------------------------ the cases
# (name, mechanism, d, d′, claim, relation, samples)

def _holds_cases():
    ten, eleven = 10.0, 11.0
    return [
        ("dpl.Laplace", from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0)),
         eleven, ten, PureDP(1.0), None, FAST),
        ("dpl.LaplaceTruncated", from_diffprivlib(
            M.LaplaceTruncated(epsilon=1.0, sensitivity=1.0, lower=0, upper=20)),
         eleven, ten, PureDP(1.0), None, FAST),
        ("dpl.LaplaceFolded", from_diffprivlib(
            M.LaplaceFolded(epsilon=1.0, sensitivity=1.0, lower=0, upper=20)),
         eleven, ten, PureDP(1.0), None, FAST),
        ("dpl.LaplaceBoundedDomain", from_diffprivlib(
            M.LaplaceBoundedDomain(epsilon=1.0, sensitivity=1.0, lower=0, upper=20)),
         eleven, ten, PureDP(1.0), None, FAST),
        ("dpl.Geometric", from_diffprivlib(M.Geometric(epsilon=1.0, sensitivity=1)),
         11, 10, PureDP(1.0), None, FAST),
        ("dpl.GeometricTruncated", from_diffprivlib(
            M.GeometricTruncated(epsilon=0.5, sensitivity=1, lower=0, upper=20)),
         11, 10, PureDP(0.5), None, FAST),
        ("dpl.Gaussian", from_diffprivlib(M.Gaussian(epsilon=0.5, delta=1e-3, sensitivity=1.0)),
         eleven, ten, ApproxDP(0.5, 1e-3), None, FAST),
        ("dpl.GaussianAnalytic", from_diffprivlib(
            M.GaussianAnalytic(epsilon=1.0, delta=1e-3, sensitivity=1.0)),
         eleven, ten, ApproxDP(1.0, 1e-3), None, FAST),
        ("dpl.Snapping", from_diffprivlib(
            M.Snapping(epsilon=1.0, sensitivity=1.0, lower=0, upper=20)),
         eleven, ten, PureDP(1.0), None, FAST // 2),
        ("dpl.Binary", from_diffprivlib(M.Binary(epsilon=1.0, value0="no", value1="yes")),
         "yes", "no", PureDP(1.0), None, FAST),
        ("dpl.ExponentialCategorical", from_diffprivlib(M.ExponentialCategorical(
            epsilon=1.0, utility_list=[["a", "b", 1.0], ["a", "c", 2.0], ["b", "c", 1.0]])),
         "a", "c", PureDP(1.0), None, FAST),
        ("dpl.Uniform", from_diffprivlib(M.Uniform(delta=0.1, sensitivity=1.0)),
         eleven, ten, ApproxDP(0.0, 0.1), None, FAST),
        # count_nonzero truncates to [0, n]: sound when n is public (replace neighbours);
        # histogram adds sensitivity-1 noise per bin: sound for add/remove (a replacement moves
        # two bins, ε would double)
        ("dpl.tools.count_nonzero", from_diffprivlib(tools.count_nonzero, epsilon=1.0),
         [1, 0, 3, 4, 5], [1, 0, 3, 4, 0], PureDP(1.0), Replace(), TOOL),
        ("dpl.tools.histogram", from_diffprivlib(tools.histogram, epsilon=1.0, bins=4,
                                                 range=(0.0, 1.0), output_index=0),
         [0.1, 0.3, 0.6, 0.9], [0.1, 0.3, 0.6], PureDP(1.0), AddRemove(), TOOL),
        ("opendp.laplace(f64)", from_opendp(odp_float_laplace), eleven, ten,
         opendp_claim(odp_float_laplace(), 1.0), None, ODP),
        ("opendp.laplace(int)", from_opendp(odp_int_laplace), 11, 10,
         opendp_claim(odp_int_laplace(), 1), None, ODP),
        ("opendp.gaussian(int) zCDP", from_opendp(odp_int_gaussian), 11, 10,
         opendp_claim(odp_int_gaussian(), 1, delta=1e-3), None, ODP),
        ("opendp.clamp>>sum>>laplace", from_opendp(odp_clamped_sum),
         [0.5, 1.0, 0.25], [0.5, 0.25], opendp_claim(odp_clamped_sum(), 1), AddRemove(), ODP),
        ("opendp.count>>laplace", from_opendp(odp_count), [1, 2, 3, 4], [1, 2, 3],
         opendp_claim(odp_count(), 1), AddRemove(), ODP),
    ]


HOLDS = _holds_cases()


@pytest.mark.claim(kind="privacy")
@pytest.mark.parametrize("case", HOLDS, ids=[c[0] for c in HOLDS])
def test_library_mechanism_meets_its_documented_guarantee(case, dp_audit):
    name, mech, d, d_prime, claim, relation, samples = case
    r = dp_audit(mech, d, d_prime, claim, samples=samples, relation=relation)
    assert not r.violation and r.epsilon_lower <= claim.epsilon + 1e-12


# --------------------------------------------------------------- realistic misconfigurations

def two_releases(data, rng, *, mech):
    """Forgotten composition: the same ε-DP release made twice, both published."""
    value = float(np.sum(data))
    return [mech.randomise(value), mech.randomise(value)]


def _rs(rng):
    return np.random.RandomState(int(rng.integers(0, 2**32)))


def mean_with_data_bounds(data, rng):
    """Bounds taken from the data: diffprivlib warns (PrivacyLeakWarning) and computes them."""
    return tools.mean(np.asarray(data, dtype=float), epsilon=1.0, random_state=_rs(rng),
                      accountant=dpl.BudgetAccountant())


_LAPLACE_1 = M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=0)

MUTANTS = {
    # sum of records in [0, 5] released with sensitivity 1: true ε = 5 on a record of 5
    "understated_sensitivity": (
        from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0), query=np.sum),
        [5.0, 2.0, 3.0], [2.0, 3.0], PureDP(1.0), AddRemove(), FAST, 5.0),
    # records should be clipped to [0, 1] but are not: one record of 20 moves the sum by 20
    "unclipped_data": (
        from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0), query=np.sum),
        [20.0, 0.5, 0.5], [0.5, 0.5], PureDP(1.0), AddRemove(), FAST, 20.0),
    # two ε = 1 releases of one count published together: true ε = 2
    "forgotten_composition": (
        from_scalar(functools.partial(two_releases, mech=_LAPLACE_1), seeding="none",
                    name="two_releases(diffprivlib.Laplace)"),
        [1.0] * 11, [1.0] * 10, PureDP(1.0), AddRemove(), FAST, 2.0),
    # diffprivlib.tools.mean without bounds: bounds from the data, one outlier moves the mean
    "bounds_from_data": (
        from_scalar(mean_with_data_bounds, name="tools.mean(bounds=None)"),
        [0.0, 0.0, 0.0, 1000.0], [0.0, 0.0, 0.0, 0.0], PureDP(1.0), Replace(), TOOL, math.inf),
    # tools.count_nonzero assumes the size n is public (its output is truncated to [0, n]);
    # claimed for add/remove neighbours, the output n + 1 exists on one side only: true ε = ∞
    "wrong_neighbour_relation": (
        from_diffprivlib(tools.count_nonzero, epsilon=1.0),
        [1, 0, 3, 4, 5], [1, 0, 3, 4], PureDP(1.0), AddRemove(), TOOL, math.inf),
    # make_laplace(scale=ε): scale 0.1 passed where ε = 0.1 was meant: true ε = 10
    "scale_passed_for_epsilon": (
        from_opendp(functools.partial(odp_float_laplace, 0.1)), 11.0, 10.0, PureDP(0.1), None,
        ODP, 10.0),
}


@pytest.mark.claim(kind="privacy", expect="violation")
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_library_misconfiguration_is_caught(name, dp_audit):
    mech, d, d_prime, claim, relation, samples, true_eps = MUTANTS[name]
    r = dp_audit(mech, d, d_prime, claim, samples=samples, relation=relation)
    assert r.violation and r.epsilon_lower <= true_eps
    if name == "bounds_from_data":
        assert any("PrivacyLeakWarning" in w for w in r.warnings)


@pytest.mark.claim(kind="privacy", expect="violation")
def test_diffprivlib_mean_has_float_holes(dp_audit):
    """Finding: ``diffprivlib.tools.mean`` (bounds (0, 1), ε = 1, n = 4, replace neighbours) at
    ordinary data: means 0.55 vs 0.3 with noise scale 0.25 put outputs in the cancellation
    region, where ``mean + noise`` is exact and inherits the mean's spacing (2⁻⁵³ vs 2⁻⁵⁴):
    outputs with lowest set bit 2⁻⁵⁵ occur from 0.3 only. Not ε-DP in float64."""
    mech = from_diffprivlib(tools.mean, epsilon=1.0, bounds=(0.0, 1.0))
    r = dp_audit(mech, [0.2, 0.4, 0.6, 1.0], [0.2, 0.4, 0.6, 0.0], PureDP(1.0), samples=TOOL,
                 relation=Replace())
    assert r.violation and r.witness.event.feature_name == "lsb(output)"


@pytest.mark.claim(kind="privacy", expect="violation")
def test_diffprivlib_laplace_near_zero_has_float_holes(dp_audit):
    """Finding: diffprivlib 0.6.6's Laplace (``value − scale·L`` with the four-uniform sampler
    of Holohan & Braghin) at values 1 vs 0: outputs near 0 from value 0 are raw noise with the
    full float64 resolution of their magnitude, those from value 1 are exact differences
    ``1 − scale·L`` and so multiples of 2⁻⁵³. The float feature ``lsb(output)`` separates them:
    the real-valued guarantee ε = 1 does not hold for the float64 implementation."""
    mech = from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0))
    r = dp_audit(mech, 1.0, 0.0, PureDP(1.0), samples=FAST)
    assert r.violation and r.witness.event.feature_name == "lsb(output)"
