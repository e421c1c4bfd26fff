"""Unit tests of the Theorem 3.6 composite (algorithms.realizable_to_agnostic.composite) and of
Procedure E's count base: pmf vs brute force, sampler vs pmf, validation, determinism."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.realizable_to_agnostic.agnostic import relabel_log_probs
from algorithms.realizable_to_agnostic.bounds import theorem36_bounds
from algorithms.realizable_to_agnostic.composite import COMPOSITE_BUGS, Composite
from algorithms.realizable_to_agnostic.core import counts
from algorithms.realizable_to_agnostic.empirical import (
    WithReplacement,
    clamped_geometric,
)
from algorithms.realizable_to_agnostic.tables import compositions
from dpcheck.errors import InvalidArgument

S6 = np.array([[0, 1], [2, 0], [2, 1], [3, 1], [1, 0], [3, 0]])


def _brute_pmf(mech: Composite, s: np.ndarray) -> dict[int, float]:
    """Every index set I, every relabel threshold t, every ordered m-tuple of draws from T."""
    n, dom = len(s), mech.domain
    k, draws = mech.sizes(n)
    cs = counts(s, dom)
    out: dict[int, float] = {}
    subsets = list(itertools.combinations(range(n), k))
    for idx in subsets:
        t_rows = s[list(idx)]
        ct = counts(t_rows, dom)[None]
        lt, _ = relabel_log_probs(ct, cs[None] - ct, np.array([k]), np.array([n - k]),
                                  cs[None], epsilon=mech.epsilon)
        for t, pt in enumerate(np.exp(lt[0])):
            for tup in itertools.product(range(k), repeat=draws):
                xs = t_rows[list(tup), 0]
                ys = (xs >= t).astype(int)
                w = pt / len(subsets) / k ** draws
                c0 = int((xs == mech.x_star).sum())
                if mech.base == "em":
                    errs = np.array([((xs >= b).astype(int) != ys).sum()
                                     for b in range(dom + 1)])
                    law = np.exp(-mech.eps_p * errs / 2.0)
                    law /= law.sum()
                else:
                    law = clamped_geometric(np.array(c0), draws, mech.eps_p)
                nb = len(law)
                for o, p in enumerate(law):
                    out[o] = out.get(o, 0.0) + w * (1 - mech.pac_delta) * p
                out[nb + c0] = out.get(nb + c0, 0.0) + w * mech.pac_delta
    return out


@pytest.mark.parametrize("base", ["em", "count"])
def test_pmf_matches_brute_force(base: str) -> None:
    mech = Composite(4, 1 / 3, 1, pac_delta=0.05, base=base)       # n = 6, k = 2 = 6ε_p m
    exact = mech.pmf(S6)
    brute = _brute_pmf(mech, S6)
    assert abs(sum(exact.values()) - 1) < 1e-12
    for key in set(exact) | set(brute):
        assert exact.get(key, 0.0) == pytest.approx(brute.get(key, 0.0), abs=1e-12)


@pytest.mark.parametrize("bug", COMPOSITE_BUGS)
@pytest.mark.parametrize("base", ["em", "count", "cell_rr", "chain"])
def test_sampler_matches_pmf(base: str, bug: str) -> None:
    s = np.array([[0, 1]] + [[1, 0]] * 5 + [[2, 1]] * 6)          # n = 12, k = 4
    mech = Composite(3, 1 / 3, 2, pac_delta=0.05, base=base, bug=bug)
    pmf = mech.pmf(s)
    assert abs(sum(pmf.values()) - 1) < 1e-9
    x = mech.sample(s, 100_000, np.random.default_rng(7))
    size = max(max(pmf), int(x.max())) + 1
    emp = np.bincount(x, minlength=size) / x.size
    ex = np.array([pmf.get(i, 0.0) for i in range(size)])
    assert 0.5 * np.abs(emp - ex).sum() < 0.01                   # TV at 1e5 draws


def test_sampler_is_deterministic_for_a_seed() -> None:
    mech = Composite(3, 1 / 3, 2, pac_delta=0.05)
    s = np.array([[0, 1]] + [[1, 0]] * 5 + [[2, 1]] * 6)
    a = mech.sample(s, 500, np.random.default_rng(11))
    b = mech.sample(s, 500, np.random.default_rng(11))
    assert np.array_equal(a, b)


def test_composite_outputs_are_proper_without_leak() -> None:
    mech = Composite(3, 1 / 3, 2)
    s = np.array([[0, 1]] + [[1, 0]] * 5 + [[2, 1]] * 6)
    assert set(mech.pmf(s)) <= set(range(4))                     # thresholds 0..N only


@pytest.mark.parametrize("kwargs, match", [
    ({"epsilon": 0.5, "m": 1}, "epsilon=0.5 must be <= 1/3"),
    ({"epsilon": 1 / 3, "m": 1, "pac_epsilon": 2.0}, "pac_epsilon=2.0 must be <= 1"),
    ({"epsilon": 1 / 3, "m": 0}, "m"),
    ({"epsilon": 1 / 3, "m": 1, "pac_delta": 1.5}, "pac_delta"),
    ({"epsilon": 1 / 3, "m": 1, "base": "rr"}, "base"),
    ({"epsilon": 1 / 3, "m": 1, "x_star": 3}, "x_star=3 must be < domain=3"),
    ({"epsilon": 1 / 3, "m": 1, "bug": "nope"}, "bug"),
])
def test_invalid_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        Composite(3, **kwargs)


def test_undersized_t_is_refused() -> None:
    """k = ⌈εn⌉ = 4 < 6ε_p m = 6 (Lemma 2.12): the message names k, epsilon, n, pac_epsilon, m."""
    s = np.array([[0, 1]] + [[1, 0]] * 11)
    with pytest.raises(InvalidArgument, match=r"k=ceil\(epsilon\*n\)=4 .*6\*pac_epsilon\*m"):
        Composite(3, 1 / 3, 3).pmf(s)
    with pytest.raises(InvalidArgument, match="epsilon\\*n"):
        Composite(3, 0.01, 1).sample(s, 3, np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match=r"6\*pac_epsilon\*m/k=1\.5 .*k=ceil\(epsilon\*n\)=4"):
        theorem36_bounds(12, 1 / 3, 3, 1 / 3, 0.0)


def test_theorem36_bounds_match_p8() -> None:
    """Notes P8: δ = 16e·e^{ε_A}(m/n)δ_p, ε = ln(e^ε + 4e²k/(n−k))."""
    e, d = theorem36_bounds(18, 1 / 3, 3, 1 / 3, 1e-3)
    assert e == pytest.approx(math.log(math.exp(1 / 3) + 4 * math.e ** 2 * 6 / 12))
    assert d == pytest.approx(16 * math.e * math.e ** 1.0 * 3 / 18 * 1e-3)


def test_compositions_and_count_base() -> None:
    d = compositions(3, 3)
    assert len(d) == math.comb(5, 2) and (d.sum(1) == 3).all() and len(np.unique(d, axis=0)) == 10
    law = clamped_geometric(np.arange(5), 4, 0.7)
    assert np.allclose(law.sum(-1), 1)
    ratio = law[1:] / law[:-1]                                   # neighbouring counts
    assert np.all(np.abs(np.log(ratio)) <= 0.7 + 1e-12)
    assert np.log(law[4, 4] / law[0, 4]) == pytest.approx(4 * 0.7)   # j copies cost jε


def test_with_replacement_count_base_sampler_and_first_m() -> None:
    s = np.array([[0, 1]] + [[3, 0]] * 5)
    for bug in ("reference", "first_m"):
        mech = WithReplacement(5, 0.5, 3, delta=0.1, base="count", bug=bug)
        pmf = mech.pmf(s)
        assert abs(sum(pmf.values()) - 1) < 1e-12
        x = mech.sample(s, 50_000, np.random.default_rng(5))
        emp = np.bincount(x, minlength=9) / x.size
        assert np.abs(emp - np.array([pmf.get(i, 0.0) for i in range(9)])).max() < 0.01
