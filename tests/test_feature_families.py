"""The feature-family seam (:mod:`dpcheck.features.family`): every family in one list, every
feature explained in words, a fitted featurizer that travels by pickle, a new family in one line,
and the claim seam (:mod:`dpcheck.core.certify`): one certifier per claim type."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import dpcheck
from dpcheck.core.certify import CERTIFIERS, certifier_for
from dpcheck.features import featurizer as featurizer_module
from dpcheck.features.family import Batch, Exploration, Fitted
from dpcheck.features.feature import Feature
from dpcheck.features.featurizer import FAMILIES, Featurizer, describe_feature
from dpcheck.report.markdown import feature_text


def _outputs() -> dict[str, tuple[np.ndarray, np.ndarray | None, Any]]:
    rng = np.random.default_rng(0)
    flags = rng.integers(0, 2, (12_000, 6)).astype(np.float64)
    flags[:, 2] = np.where(rng.random(12_000) < 0.5, -1000.0, rng.normal(0, 1, 12_000))
    return {
        "scalar float": (rng.laplace(0, 1, 400), None, None),
        "scalar int (n, 1)": (rng.integers(0, 5, (400, 1)), None, None),
        "strings": (np.array(["a", "b"] * 200), None, None),
        "vector with flags": (flags, flags[::-1].copy(), None),
        "user map": (rng.laplace(0, 1, 400), None, lambda x: np.column_stack([x, x ** 2])),
    }


@pytest.mark.parametrize("case", list(_outputs()))
def test_every_feature_is_explained_in_words(case: str) -> None:
    """The report's feature line names every feature the featurizer makes (``lsb(output)``,
    learned scores, cells …), not only the value and the coordinates."""
    out, prime, user_map = _outputs()[case]
    feats = Featurizer.build(out, user_map, prime).features
    assert feats, case
    for f in feats:
        text = describe_feature(f.name)
        assert text, f"{case}: no description for {f.name!r}"
        assert feature_text({"event": {"feature": f.name}}) == f"{f.name}: {text}"
    assert describe_feature("no such feature") is None


def test_feature_order_follows_the_family_list() -> None:
    out, prime, _ = _outputs()["vector with flags"]
    names = [f.name for f in Featurizer.build(out, None, prime).features]
    assert names[:6] == [f"output[{j}]" for j in range(6)]
    assert names[6:10] == ["sum(output)", "llr(output)", "cells(output)", "pllr(output)"]
    assert {"logit(output)", "logit(summary)"} <= set(names) and names[-1] == "row"
    assert [f.name for f in Featurizer.build(_outputs()["scalar float"][0]).features] == [
        "output", "lsb(output)"]
    aggregate = {f.name for f in Featurizer.build(out, None, prime).features if f.aggregate}
    assert aggregate == {"sum(output)", "llr(output)", "pllr(output)", "logit(output)",
                         "signs(output)"} & set(names)


def test_fitted_featurizer_pickles_with_identical_columns() -> None:
    """Executors send the featurizer to other processes: no lambdas or closures inside."""
    out, prime, _ = _outputs()["vector with flags"]
    feat = Featurizer.build(out, None, prime)
    copy = pickle.loads(pickle.dumps(feat))
    for a, b in zip(feat(out[:500]), copy(out[:500])):
        assert np.array_equal(a, b)


@dataclass(frozen=True)
class _MaxFamily:
    """A new family: the largest coordinate of a vector (one class and one line in FAMILIES)."""

    def fit(self, exploration: Exploration) -> Fitted | None:
        if exploration.scalar:
            return None
        return Fitted((Feature("max(output)", True),), _max_column)

    def describe(self, name: str) -> str | None:
        return "the largest coordinate" if name == "max(output)" else None


def _max_column(_: int, batch: Batch) -> np.ndarray:
    return batch.outputs.max(axis=1)


def test_a_new_family_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(featurizer_module, "FAMILIES", (*FAMILIES, _MaxFamily()))
    out = np.arange(12.0).reshape(4, 3)
    feat = Featurizer.build(out)
    assert feat.features[-1].name == "max(output)"
    assert np.array_equal(feat(out)[-1], [2.0, 5.0, 8.0, 11.0])
    assert featurizer_module.describe_feature("max(output)") == "the largest coordinate"


def test_each_claim_type_has_one_certifier() -> None:
    assert set(CERTIFIERS) == {dpcheck.PureDP, dpcheck.ApproxDP, dpcheck.GaussianDP,
                               dpcheck.TradeOff, dpcheck.ZCDP, dpcheck.RenyiDP,
                               dpcheck.PrivacyCurve}
    assert certifier_for(dpcheck.PureDP(1.0)).selection(dpcheck.PureDP(1.0)).poissonize
    approx = certifier_for(dpcheck.ApproxDP(1.0, 0.1)).selection(dpcheck.ApproxDP(1.0, 0.1))
    assert not approx.poissonize and approx.delta_epsilon == 1.0 and approx.delta == 0.1
    with pytest.raises(dpcheck.InvalidArgument, match=r"claim=.* must be a dpcheck.PureDP or "
                                                      r"dpcheck.ApproxDP or dpcheck.GaussianDP"):
        certifier_for(dpcheck.Closeness(1.0))
    with pytest.raises(dpcheck.InvalidArgument, match="must be a dpcheck.PureDP"):
        dpcheck.audit(lambda d, n, rng: rng.random(n), 0, 1, dpcheck.Closeness(1.0), samples=10)


def test_results_have_one_line_reprs() -> None:
    """scipy-style one-line ``repr``s (issue 28): the verdict and the numbers, not a dump."""
    def noisy(d, size, rng):
        return float(sum(d)) + rng.laplace(0.0, 0.5, size)

    r = dpcheck.audit(noisy, [1.0], [0.0], dpcheck.PureDP(1.0), samples=20_000, seed=0,
                      float_features=False)
    text = repr(r)
    assert "\n" not in text and len(text) < 200 and text.startswith("AuditResult(violation=True")
    a = dpcheck.check_accuracy(lambda size, rng: np.abs(rng.laplace(0, 1, size)), alpha=3.0,
                               beta=0.05, trials=500, seed=0)
    assert repr(a).startswith("AccuracyResult(violation=") and len(repr(a)) < 200
    p = dpcheck.audit_pairs(noisy, [([1.0], [0.0]), ([0.0], [1.0])], dpcheck.PureDP(1.0),
                            samples=20_000, seed=0, float_features=False)
    assert repr(p).startswith("PairsResult(violation=True") and "\n" not in repr(p)


def test_a_float_hole_witness_says_what_it_is() -> None:
    def textbook(d, size, rng):
        return float(sum(d)) + rng.laplace(0.0, 1.0, size)

    r = dpcheck.audit(textbook, [1.0, 1.0], [1.0], dpcheck.PureDP(1.0), samples=100_000,
                      seed=0)
    assert r.violation and r.float_hole
    assert "floating-point hole" in r.summary() and "float_features=False" in r.summary()
    values = dpcheck.audit(textbook, [1.0, 1.0], [1.0], dpcheck.PureDP(1.0), samples=100_000,
                           seed=0, float_features=False)
    assert not values.float_hole and "floating-point hole" not in values.summary()
