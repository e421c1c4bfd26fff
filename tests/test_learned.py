"""Learned events and the conditional ratio test keep the auditor honest (design §4 rule 3).

* :func:`dpcheck.stats.ratio_lower` covers ``p/q`` on Poisson counts at its level, and the same
  harness fails a bound that overstates the ratio.
* Audits of vector mechanisms whose learned scores (logistic regression, sign count, the row
  summary score of :mod:`dpcheck.features.row_summary`, with its count × value interactions) are fitted,
  claimed at their exact ε, over many seeds: the fraction with ``epsilon_lower > true ε`` stays
  ≤ α (the calibration criterion of ``tests/test_calibration.py``).
* The learned scores themselves: sentinels become flags, the sign count is the composed-Laplace
  statistic, the fit sees only the generation half.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms.mechanisms.noisy_sums import RepeatedLaplace
from algorithms.mechanisms.rappor import OneTimeRappor
from dpcheck import PureDP, audit
from dpcheck.features.coding import CodeCache
from dpcheck.features.learned import LogisticScore, SignCount
from dpcheck.features.row_summary import SummaryScore
from dpcheck.stats import clopper_pearson, event_bound, ratio_lower, ratio_p_value

REPS = 2000


def _ratio_miscoverage(counts_p, counts_q, ratio, alpha):
    return sum(ratio_lower(int(a), int(b), alpha=alpha) > ratio
               for a, b in zip(counts_p, counts_q))


@pytest.mark.parametrize("lam_q, ratio", [(3.0, math.e), (200.0, 1.2), (5000.0, 1.05)])
def test_ratio_bound_covers_on_poisson_counts(lam_q, ratio):
    rng = np.random.default_rng(7)
    alpha = 0.1
    kp = rng.poisson(lam_q * ratio, REPS)
    kq = rng.poisson(lam_q, REPS)
    over = _ratio_miscoverage(kp, kq, ratio, alpha)
    high = clopper_pearson(over, REPS, 0.01)[1]
    assert over / REPS <= alpha, (over, high)


def test_ratio_harness_catches_an_understated_ratio():
    """The same harness fails a bound when the truth is below it: counts whose real ratio is
    1.3 checked against a claimed 1.2 exceed it in most repetitions."""
    rng = np.random.default_rng(7)
    kp = rng.poisson(200.0 * 1.3 * 4, REPS)
    kq = rng.poisson(200.0 * 4, REPS)
    assert _ratio_miscoverage(kp, kq, 1.2, 0.1) / REPS > 0.5


def test_ratio_bound_is_sharper_than_the_union_bound_for_rare_events():
    kp, kq, n = 5230, 2330, 900_000
    union = event_bound(kp, n, kq, n, alpha=0.05 / 3).epsilon_lower()
    ratio = math.log(ratio_lower(kp, kq, alpha=0.05 / 3))
    assert ratio > union + 0.02
    assert ratio_p_value(kp, kq, epsilon=ratio + 1e-6) > 0.05 / 3 > ratio_p_value(
        kp, kq, epsilon=ratio - 1e-3)


MECHANISMS = {
    # five composed Laplace(1/0.1) releases of one sum: exactly 0.5-DP on (1, 0)
    "composed_laplace": (RepeatedLaplace(0.1, 5), [1.0], [0.0]),
    # one-time RAPPOR, values with disjoint 4-bit filters: exactly 8·0.10008-DP
    "rappor": (OneTimeRappor(4, 20, 0.95), [10], [6]),
}
R = 50


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_learned_events_are_calibrated_at_the_true_epsilon(name, record_property):
    mech, d, d_prime = MECHANISMS[name]
    true_eps = mech.true_epsilon
    alpha = 0.2
    over = 0
    for seed in range(R):
        r = audit(mech, d, d_prime, PureDP(true_eps), samples=20_000, alpha=alpha, seed=seed,
                  explore_fraction=0.5, float_features=False)  # real-valued truth
        names = {f["name"] for f in r.features["features"]}
        assert "logit(output)" in names
        assert ("logit(summary)" in names) == (name == "rappor")  # flags: 0/1 bits
        over += r.epsilon_lower > true_eps
    low, high = clopper_pearson(over, R, 0.05)
    record_property("miscoverage", {"count": over, "runs": R, "rate": over / R,
                                    "ci95": [float(low), float(high)], "alpha": alpha})
    print(f"{name}: miscoverage {over}/{R} (95% CI {low:.3f}-{high:.3f}), alpha={alpha}")
    assert over / R <= alpha


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_learned_events_are_calibrated_at_1e5(name):
    mech, d, d_prime = MECHANISMS[name]
    over = sum(audit(mech, d, d_prime, PureDP(mech.true_epsilon), samples=100_000, alpha=0.2,
                     seed=seed, float_features=False).epsilon_lower > mech.true_epsilon
               for seed in range(200))
    assert over / 200 <= 0.2


def test_sentinels_are_flags_and_rare_columns_are_categorical():
    rng = np.random.default_rng(0)
    n = 6000
    a = rng.laplace(0.0, 1.0, (n, 3))
    b = rng.laplace(0.0, 1.0, (n, 3))
    a[rng.random(n) < 0.3, 0] = -1000.0  # "no answer" far more often under D
    b[rng.random(n) < 0.1, 0] = -1000.0
    a[:, 2] = rng.integers(0, 3, n)
    b[:, 2] = rng.integers(0, 3, n)
    score = LogisticScore.fit(a, b)
    first = score.columns[0]
    assert not first.categorical and list(first.levels) == [-1000.0]
    assert score.columns[2].categorical
    # the flag, not the number -1000, carries the signal: "no answer" scores higher under D
    flagged = np.array([[-1000.0, 0.0, 0.0]])
    plain = np.array([[0.0, 0.0, 0.0]])
    assert score(flagged)[0] > score(plain)[0] + 0.5


def test_sign_count_counts_continuous_coordinates_above_the_median():
    rng = np.random.default_rng(1)
    a = np.column_stack([rng.normal(1, 1, 5000), rng.normal(1, 1, 5000),
                         rng.integers(0, 2, 5000)])
    b = np.column_stack([rng.normal(-1, 1, 5000), rng.normal(-1, 1, 5000),
                         rng.integers(0, 2, 5000)])
    signs = SignCount.fit(a, b)
    assert signs is not None and list(signs.indices) == [0, 1]
    assert list(signs(np.array([[5.0, 5.0, 1.0], [5.0, -5.0, 0.0], [-5, -5, 1]]))) == [2, 1, 0]
    assert SignCount.fit(a[:, 2:], b[:, 2:]) is None


# --- sentinel-coded columns, joint cells, few distinct rows ---------------------------------

from dpcheck.features.featurizer import Featurizer
from dpcheck.features.naive_bayes import NaiveBayesLLR
from dpcheck.features.coding import VALUE_BINS, column_coding


def _sentinel_rows(shift: float, n: int, rng: np.random.Generator, rate: float = 0.03,
                   sentinel: float = np.inf):
    """Column 0: a Laplace value released in ``rate`` of the rows (``sentinel`` otherwise),
    column 1 its flag; the released values are centred on ``shift``."""
    released = rng.random(n) < rate
    value = np.where(released, shift + rng.laplace(0.0, 1.0, n), sentinel)
    return np.column_stack([value, released.astype(float)])


def test_column_coding_bins_the_regular_values_of_a_sentinel_column():
    """A column that is ``+inf`` ("not released") in 97 % of the rows: the sentinel is a level
    of its own and the quantile bins are those of the released values, not of the pooled
    column (whose quantiles would all be ``+inf``)."""
    rows = _sentinel_rows(0.0, 40_000, np.random.default_rng(0))
    col = column_coding(0, rows[:, 0])
    assert not col.categorical and list(col.levels) == [np.inf]
    assert col.edges.size == VALUE_BINS - 1 and np.isfinite(col.edges).all()
    released = rows[np.isfinite(rows[:, 0]), 0]
    codes = col.codes(rows[:, 0])
    assert (codes[~np.isfinite(rows[:, 0])] == 1).all()
    # every bin of the released values holds about 1/VALUE_BINS of them
    share = np.bincount(col.codes(released), minlength=col.n_codes)[2:] / released.size
    assert np.allclose(share, 1 / VALUE_BINS, atol=0.03)
    assert col.describe_code(1, "x") == "x = inf"
    assert col.describe_code(2, "x") == f"x < {col.edges[0]:.6g}"
    assert col.describe_code(col.n_codes - 1, "x") == f"{col.edges[-1]:.6g} <= x"
    flag = column_coding(1, rows[:, 1])
    assert flag.categorical and flag.base == 0.0 and list(flag.levels) == [1.0]


@pytest.mark.parametrize("sentinel", [np.inf, -1000.0])
def test_naive_bayes_score_sees_the_values_of_a_rarely_released_column(sentinel):
    """The released value carries the signal (centred on 0 under D, on 2 under D′): the
    learned score must rank a released 0 far above a released 2, whether "not released" is
    written ``+inf`` or as a finite code such as DP-Sniper's ``-1000``. With bins on the
    quantiles of the column's finite values, every bin edge is ``-1000`` and the value is
    invisible (measured before: both scores equal)."""
    rng = np.random.default_rng(1)
    nb = NaiveBayesLLR.fit(_sentinel_rows(0.0, 50_000, rng, sentinel=sentinel),
                           _sentinel_rows(2.0, 50_000, rng, sentinel=sentinel))
    low, high = nb(np.array([[0.0, 1.0], [2.0, 1.0]]))
    assert low > high + 1.0


def _released_at(position_shift: float):
    """Vector outputs of three values, exactly one released (position uniform, independent
    of the data): the value is ``x + Lap(1)`` at position 0 (``x`` the data) and ``Lap(1)``
    elsewhere; the other positions read ``+inf``. True ε on (x, x') is ``|x − x'|``, carried
    only by (position 0, value) jointly."""
    def mech(data, size, rng):
        pos = rng.integers(0, 3, size)
        value = rng.laplace(0.0, 1.0, size) + np.where(pos == 0, position_shift * data[0], 0.0)
        out = np.full((size, 3), np.inf)
        out[np.arange(size), pos] = value
        return out
    return mech


def test_rows_with_one_released_value_get_a_joint_cells_feature():
    mech = _released_at(1.0)
    rng = np.random.default_rng(2)
    a, b = mech([2.0], 40_000, rng), mech([0.0], 40_000, rng)
    feats = [f.name for f in Featurizer.build(a, None, b).features]
    assert "cells(output)" in feats
    r = audit(mech, [2.0], [0.0], PureDP(1.0), samples=400_000, seed=0, float_features=False)
    assert r.violation and 1.0 < r.epsilon_lower <= 2.0
    cells = [w for w in r.confirmed if w.event.feature_name == "cells(output)"]
    assert cells and "output[0]" in cells[0].event.describe()  # cells read as value ranges
    # all-categorical rows are rows already; 20 continuous columns have no repeated cells
    flags = rng.integers(0, 3, (4000, 12)).astype(float)
    assert "cells(output)" not in [f.name for f in Featurizer.build(flags, None, flags).features]
    noise = rng.laplace(0.0, 1.0, (4000, 20))
    assert "cells(output)" not in [f.name for f in Featurizer.build(noise, None, noise).features]


def test_vector_randomized_response_is_tight_at_its_true_epsilon():
    """Two randomized-response bits (ε = 0.5 each, true ε = 1 on (1, 1) vs (0, 0)): four
    distinct rows; not flagged at the exact claim, and the bound is within 5 % of it."""
    def two_bits(data, size, rng):
        keep = rng.random((size, 2)) < math.exp(0.5) / (1 + math.exp(0.5))
        return np.where(keep, data, 1 - np.asarray(data)).astype(np.int64)

    r = audit(two_bits, [1, 1], [0, 0], PureDP(1.0), samples=1_000_000, seed=0)
    assert not r.violation and 0.95 <= r.epsilon_lower <= 1.0


def _released_after_flags(data: list[float], size: int, rng: np.random.Generator) -> np.ndarray:
    """Sparse-vector-like rows of four coordinates: ``k`` ⊥ flags (0.0, ``k`` uniform on 0..3,
    independent of the data), then the value ``x·(k + 1)/4 + Lap(1)``, then ``+inf``. The
    log-likelihood ratio on (1, 0) depends on ``k`` and the value jointly (the summary score's
    count × value interactions); true ε = 1, attained at ``k = 3``, value ≥ 1."""
    k = rng.integers(0, 4, size)
    out = np.full((size, 4), np.inf)
    out[np.arange(4)[None, :] < k[:, None]] = 0.0
    out[np.arange(size), k] = rng.laplace(0.0, 1.0, size) + data[0] * (k + 1) / 4
    return out


def test_released_after_flags_gets_summary_interactions():
    rng = np.random.default_rng(6)
    a, b = _released_after_flags([1.0], 20_000, rng), _released_after_flags([0.0], 20_000, rng)
    fitted = SummaryScore.fit(a, b)
    assert fitted is not None and fitted.interactions  # the count of ⊥ takes 4 values


@pytest.mark.parametrize("kind", ["cells", "rows", "summary interactions"])
def test_cells_and_row_events_are_calibrated_at_the_true_epsilon(kind, record_property):
    """Claimed at the exact ε, the fraction of audits with ``epsilon_lower > ε`` stays ≤ α
    (α = 0.2, 50 seeds) for the new event sources: joint cells, rows, and the summary score
    with count × value interactions."""
    if kind == "cells":
        mech, d, d_prime, true_eps = _released_at(1.0), [1.0], [0.0], 1.0
    elif kind == "summary interactions":
        mech, d, d_prime, true_eps = _released_after_flags, [1.0], [0.0], 1.0
    else:
        def mech(data, size, rng):  # three RR bits, ε = 0.4 each: 8 rows, true ε = 1.2
            keep = rng.random((size, 3)) < math.exp(0.4) / (1 + math.exp(0.4))
            return np.where(keep, data, 1 - np.asarray(data)).astype(np.int64)
        d, d_prime, true_eps = [1, 1, 1], [0, 0, 0], 1.2
    required = {"cells": {"cells(output)", "logit(summary)"}, "rows": {"row"},
                "summary interactions": {"logit(summary)"}}
    alpha, runs, over = 0.2, 50, 0
    for seed in range(runs):
        r = audit(mech, d, d_prime, PureDP(true_eps), samples=20_000, alpha=alpha, seed=seed,
                  explore_fraction=0.5, float_features=False)  # real-valued truth
        names = {f["name"] for f in r.features["features"]}
        assert required[kind] <= names
        over += r.epsilon_lower > true_eps
    record_property("miscoverage", {"count": over, "runs": runs, "alpha": alpha})
    assert over / runs <= alpha


def test_logistic_score_by_table_lookup_equals_its_basis_product():
    """``LogisticScore.__call__`` looks weights up by cell instead of building the basis (5×
    faster on SVT3's confirmation chunks); it is the same function as ``basis(x) @ weights``:
    categorical, sentinel and binned columns, values beyond the clip, and values never seen in
    the fit (a new category, ``-inf``, NaN)."""
    rng = np.random.default_rng(5)
    n = 20_000
    flags = rng.integers(0, 3, n).astype(float)
    released = np.where(rng.random(n) < 0.3, rng.laplace(0.0, 20.0, n), np.inf)
    wide = rng.standard_cauchy(n)
    a = np.column_stack([flags, released, wide])
    b = np.column_stack([flags, np.where(rng.random(n) < 0.35, rng.laplace(1.0, 20.0, n),
                                         np.inf), wide * 1.1])
    score = LogisticScore.fit(a, b)
    assert {c.categorical for c in score.columns} == {True, False}
    x = np.vstack([a[:500], [[7.0, -np.inf, np.nan], [2.0, 1e9, -1e9], [0.0, np.nan, np.inf]]])
    assert np.allclose(score(x), score.basis(x) @ score.weights, rtol=0, atol=1e-12)
    broken = LogisticScore(score.columns, np.roll(score.weights, 1))  # the harness can fail
    assert not np.allclose(broken(x), score.basis(x) @ score.weights, rtol=0, atol=1e-12)


def test_code_cache_shares_codes_only_between_identical_codings():
    """The featurizer codes each chunk once (:class:`dpcheck.features.learned.CodeCache`): the
    naive-Bayes score, its cells and the logistic score share the codes of a column when
    their codings agree (same levels and bins), and a coding of the same column with other
    bins gets its own. The scores with a shared cache equal those computed alone; a cache
    keyed by the column index only (the mutant) hands the 4-bin coding the 8-bin codes."""
    rng = np.random.default_rng(6)
    n = 20_000
    a = np.column_stack([rng.integers(0, 3, n).astype(float),
                         np.where(rng.random(n) < 0.3, rng.laplace(0.0, 2.0, n), np.inf)])
    b = np.column_stack([rng.integers(0, 3, n).astype(float),
                         np.where(rng.random(n) < 0.35, rng.laplace(1.0, 2.0, n), np.inf)])
    nb, logit = NaiveBayesLLR.fit(a, b), LogisticScore.fit(a, b)
    assert [c.key for c in nb.columns] == [c.key for c in logit.columns]
    x = np.vstack([a[:3000], b[:3000]])
    cache = CodeCache(x)
    shared = nb(x, cache), nb.cells(x, cache), logit(x, cache)
    assert len(cache._codes) == 2  # one entry per column, shared by all three scores
    alone = nb(x), nb.cells(x), logit(x)
    for s, t in zip(shared, alone):
        assert np.array_equal(s, t)
    coarse = column_coding(1, np.concatenate([a[:, 1], b[:, 1]]), 4)

    def check(cache_cls):
        c = cache_cls(x)
        c.codes(nb.columns[1])
        return np.array_equal(c.codes(coarse), coarse.codes(x[:, 1]))

    assert check(CodeCache)

    class ByIndex(CodeCache):
        def codes(self, col):
            code = self._codes.get(col.index)
            if code is None:
                code = self._codes[col.index] = col.codes(self.column(col.index))
            return code

    assert not check(ByIndex)
