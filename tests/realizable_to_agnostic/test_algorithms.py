"""Unit tests of algorithms.realizable_to_agnostic (seed 000): score formula vs brute force,
sampler vs exact pmf, log-space stability (B14), parameter validation."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic import BUGS, Agnostic
from algorithms.realizable_to_agnostic.buggy import ErmBaseAgnostic, FirstKAgnostic, PoissonAgnostic
from algorithms.realizable_to_agnostic.auxiliary import Auxiliary
from algorithms.realizable_to_agnostic.bounds import lemma213, vote_rounds
from algorithms.realizable_to_agnostic.core import prefix, scores, w_errors
from dpcheck.errors import InvalidArgument


def test_score_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        ct, c0, c1 = (rng.integers(0, 4, 7) for _ in range(3))
        k, w = ct.sum() or 1, (c0 + c1).sum() or 1
        p, e = prefix(ct), w_errors(c0, c1)
        brute = [min(abs(p[a] - p[b]) / k + e[b] / w for b in range(8)) for a in range(8)]
        assert np.allclose(scores(p, e, k, w), brute)
        # weighted-ERM sanity: min err_W <= q <= err_W(h) (notes §3.1)
        q = scores(p, e, k, w)
        assert np.all(q <= e / w + 1e-12) and np.all(q >= e.min() / w - 1e-12)


@pytest.mark.parametrize("bug", BUGS + ("poisson", "erm_base", "first_k"))
def test_sampler_matches_pmf(bug: str) -> None:
    rng = np.random.default_rng(1)
    s = np.stack([rng.integers(0, 5, 12), rng.integers(0, 2, 12)], 1)
    variants = {"poisson": PoissonAgnostic, "erm_base": ErmBaseAgnostic,
                "first_k": FirstKAgnostic}
    mech = variants[bug](5, 1 / 6) if bug in variants else Agnostic(5, 1 / 6, bug=bug)
    pmf = mech.pmf(s)
    assert abs(sum(pmf.values()) - 1) < 1e-9
    x = mech.sample(s, 100_000, rng)
    emp = np.bincount(x, minlength=mech.n_codes) / x.size
    exact = np.array([pmf.get(i, 0.0) for i in range(mech.n_codes)])
    assert np.abs(emp - exact).max() < 0.01


def test_large_exponents_stay_random() -> None:
    """B14: ε|W|/2 in the thousands must not collapse to argmax (log-space normalisation)."""
    n = 30_000
    s = np.tile([[2, 1], [1, 0]], (n // 2, 1))
    mech = Agnostic(4, 0.3, learner="rr", x_star=2)
    out = mech.sample(s, 4000, np.random.default_rng(2))
    assert set(np.unique(out).tolist()) == {0, 1}          # RR still randomises
    # relabel probabilities are finite and normalised despite exponents ~ 1e3
    rep, _ = mech.run_counts(np.broadcast_to(np.array([[0, 0], [0, n // 2], [n // 2, 0],
                                                       [0, 0]]), (50, 4, 2)),
                             np.random.default_rng(3))
    assert (rep >= 0).all() and (rep <= 4).all()


def test_auxiliary_pmf_sums_to_one() -> None:
    rng = np.random.default_rng(3)
    v, w, u = (np.stack([rng.integers(0, 4, m), rng.integers(0, 2, m)], 1) for m in (2, 36, 2))
    assert abs(sum(Auxiliary(4, 0.1, v, w).pmf(u).values()) - 1) < 1e-9


@pytest.mark.parametrize("kwargs, match", [
    ({"domain": 4, "epsilon": 0.5}, "epsilon=0.5 must be <= 1/3"),
    ({"domain": 4, "epsilon": 0.1, "learner_epsilon": 2.0}, "learner_epsilon=2.0 must be <= 1"),
    ({"domain": 4, "epsilon": 0.1, "x_star": 4}, "x_star=4 must be < domain=4"),
    ({"domain": 4, "epsilon": 0.1, "bug": "nope"}, "bug"),
])
def test_bad_parameters_raise(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        Agnostic(**kwargs)


def test_ranges_named() -> None:
    with pytest.raises(InvalidArgument, match="epsilon\\*n"):
        Agnostic(4, 0.1).sizes(5)
    with pytest.raises(InvalidArgument, match="6\\*epsilon\\*m/n"):
        lemma213(1.0, 4, 12, 0.0)
    with pytest.raises(InvalidArgument, match="alpha"):
        vote_rounds(1.5, 1.0)
    with pytest.raises(InvalidArgument, match="must be <= \\(1-epsilon\\)/epsilon"):
        s = np.zeros((2, 2), int)
        Auxiliary(4, 0.1, s, np.zeros((40, 2), int)).pmf(s)


def test_run_iid_matches_run_counts_on_fresh_data() -> None:
    """``run_iid`` (T, W as independent multinomials) has the law of ``run_counts`` on fresh
    multinomial datasets (T a uniform subset of S): relabel representative and output, 100k
    runs each, N = 4, n = 40, ε = 0.1, max frequency gap < 0.01 (≈ 6σ)."""
    law = np.array([[0.2, 0.05], [0.15, 0.1], [0.05, 0.2], [0.1, 0.15]])
    mech = Agnostic(4, 0.1)
    rng = np.random.default_rng(11)
    a = mech.run_iid(law, 40, 100_000, rng)
    b = mech.run_counts(rng.multinomial(40, law.reshape(-1), size=100_000).reshape(-1, 4, 2),
                        rng)
    for u, v in zip(a, b):
        fu = np.bincount(u, minlength=5) / u.size
        fv = np.bincount(v, minlength=5) / v.size
        assert np.abs(fu - fv).max() < 0.01
    with pytest.raises(InvalidArgument, match="cell_law"):
        mech.run_iid(law[:3], 40, 10, rng)
    with pytest.raises(InvalidArgument, match="poisson"):
        PoissonAgnostic(4, 0.1).run_iid(law, 40, 10, rng)
