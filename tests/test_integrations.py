"""dpcheck.integrations: diffprivlib and OpenDP adapters (seeding, pickling, claims, errors)."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest

from dpcheck import ApproxDP, InvalidArgument, PureDP

dpl = pytest.importorskip("diffprivlib")
dp = pytest.importorskip("opendp.prelude")
from diffprivlib import mechanisms as M  # noqa: E402
from diffprivlib import tools  # noqa: E402

from dpcheck.integrations.diffprivlib import from_diffprivlib  # noqa: E402
from dpcheck.integrations.opendp import from_opendp, opendp_claim  # noqa: E402

dp.enable_features("contrib")


def float_laplace(scale=1.0):
    return dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=scale)


def float_gaussian():
    return dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                              scale=1.0)


@pytest.mark.parametrize("mech", [
    M.Laplace(epsilon=1.0, sensitivity=1.0),                    # SystemRandom in production
    M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=3),    # RandomState
    M.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0),
])
def test_diffprivlib_mechanism_is_seeded_by_rng_and_pickles(mech):
    adapter = from_diffprivlib(mech, query=np.sum)
    a = adapter([1, 0, 1], 50, np.random.default_rng(1))
    b = pickle.loads(pickle.dumps(adapter))([1, 0, 1], 50, np.random.default_rng(1))
    c = adapter([1, 0, 1], 50, np.random.default_rng(2))
    assert a.shape == (50,) and np.array_equal(a, b) and not np.array_equal(a, c)
    assert abs(a.mean() - 2.0) < 1.5
    assert adapter.seeding == "rng" and "diffprivlib." in repr(adapter)


def test_diffprivlib_production_generator_kind_is_kept():
    """An unseeded mechanism uses secrets.SystemRandom (Python's random API, e.g. normalvariate
    for the Gaussian); the adapter substitutes a seeded random.Random, not a numpy RandomState."""
    import random

    assert from_diffprivlib(M.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=1.0)).python_rng
    assert not from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0, random_state=0)).python_rng
    original = M.Laplace(epsilon=1.0, sensitivity=1.0)
    from_diffprivlib(original)(0.0, 5, np.random.default_rng(0))
    assert isinstance(original._rng, random.SystemRandom)  # the user's object is untouched


def test_diffprivlib_tool_with_output_index_and_fresh_accountants():
    before = len(dpl.BudgetAccountant.load_default(None).spent_budget)
    hist = from_diffprivlib(tools.histogram, epsilon=1.0, bins=3, range=(0.0, 1.0),
                            output_index=0)
    out = hist([0.1, 0.5, 0.9], 20, np.random.default_rng(0))
    assert out.shape == (20, 3) and out.dtype.kind == "i"
    assert len(dpl.BudgetAccountant.load_default(None).spent_budget) == before
    again = pickle.loads(pickle.dumps(hist))([0.1, 0.5, 0.9], 20, np.random.default_rng(0))
    assert np.array_equal(out, again)


@pytest.mark.parametrize("call, match", [
    (lambda: from_diffprivlib(3), "^obj="),
    (lambda: from_diffprivlib(M.Laplace), r"^obj=Laplace must be a diffprivlib mechanism "
                                          r"object .* not a class"),
    (lambda: from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0), bins=3), "for tools"),
    (lambda: from_diffprivlib(tools.mean, query=np.sum), "^query= is for mechanism"),
    (lambda: from_diffprivlib(tools.mean, random_state=0), "^random_state="),
    (lambda: from_diffprivlib(M.Laplace(epsilon=1.0, sensitivity=1.0), query=3), "^query="),
    (lambda: from_opendp(3), "^measurement="),
    (lambda: opendp_claim(3, 1.0), "^measurement="),
    (lambda: opendp_claim(float_laplace(), 1.0, delta=1e-5), "^delta=1e-05 must be None"),
    (lambda: opendp_claim(float_gaussian(), 1.0), "^delta=None"),
    (lambda: opendp_claim(float_gaussian(), 1.0, delta=0.0), "^delta=0.0 must be > 0"),
    # OpenDP's own refusals of d_in came out raw (the CLI called them internal errors)
    (lambda: opendp_claim(float_laplace(), -1.0), r"^d_in=-1.0 must be a distance >= 0"),
    (lambda: opendp_claim(float_laplace(), "a"), r"^d_in='a' must be an input distance the "),
])
def test_bad_arguments_raise_invalid_argument(call, match):
    with pytest.raises(InvalidArgument, match=match):
        call()


def test_opendp_claims_from_privacy_maps():
    assert opendp_claim(float_laplace(2.0), 1.0) == PureDP(0.5)
    g = float_gaussian()  # ρ = 1/2 at d_in = 1
    zcdp = opendp_claim(g, 1.0, delta=1e-5)
    rho = 0.5
    bun_steinke = rho + 2 * np.sqrt(rho * np.log(1 / 1e-5))  # Bun & Steinke Prop. 1.3
    assert isinstance(zcdp, ApproxDP) and zcdp.delta == 1e-5
    assert 0 < zcdp.epsilon <= bun_steinke  # OpenDP's conversion is at least as tight
    fixed = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(g), 1e-5)
    assert opendp_claim(fixed, 1.0) == zcdp
    smoothed = dp.c.make_zCDP_to_approxDP(g)
    assert opendp_claim(smoothed, 1.0, delta=1e-5) == zcdp


def test_opendp_mechanism_pickles_through_a_factory_only():
    raw = from_opendp(float_laplace())
    assert raw.seeding == "none"
    with pytest.raises(TypeError, match="factory"):
        pickle.dumps(raw)
    built = from_opendp(functools.partial(float_laplace, 1.0), query=float)
    clone = pickle.loads(pickle.dumps(built))
    out = clone(3, 100, np.random.default_rng(0))
    assert out.shape == (100,) and abs(out.mean() - 3.0) < 1.0
    assert "opendp:" in repr(clone)


LIBMECHS = '''
import opendp.prelude as dp
from diffprivlib.mechanisms import Geometric
dp.enable_features("contrib")
laplace = dp.m.make_laplace(dp.atom_domain(T=float, nan=False),
                            dp.absolute_distance(T=float), scale=0.1)
geometric = Geometric(epsilon=1.0, sensitivity=1)
'''


def test_cli_audits_library_objects(tmp_path, capsys):
    """``dpcheck audit`` wraps OpenDP measurements and diffprivlib mechanism objects, reads the
    claim off an OpenDP privacy map (``--claim opendp:D_IN``) and can switch float features off."""
    from dpcheck.cli import main

    (tmp_path / "libmechs.py").write_text(LIBMECHS)
    path = str(tmp_path / "libmechs.py")
    common = ["--samples", "2000", "--seed", "0"]
    assert main(["audit", f"{path}:laplace", "--data", "11.0", "--data-prime", "10.0",
                 "--claim", "opendp:1.0", *common]) == 0
    out = capsys.readouterr().out
    assert "claim 10-DP -> no violation" in out and "cannot seed" in out
    assert main(["audit", f"{path}:laplace", "--data", "11.0", "--data-prime", "10.0",
                 "--claim", "pure:0.1", *common]) == 1
    capsys.readouterr()
    assert main(["audit", f"{path}:geometric", "--data", "11", "--data-prime", "10",
                 "--claim", "pure:1", "--no-float-features", *common]) == 0
    assert "diffprivlib.Geometric" in capsys.readouterr().out
    assert main(["audit", f"{path}:geometric", "--data", "11", "--data-prime", "10",
                 "--claim", "opendp:1"]) == 2
