"""Unit tests of :mod:`algorithms.closure` (seed 004, Algorithms 2–5)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algorithms.closure import (ClosureLearn, EMLearner, PrivateAgnostic, RelabelAndLearn,
                                as_sample, class_labels, completion_scores, counts_of,
                                patterns, support_of)
from algorithms.concepts import from_masks, negation, thresholds
from dpcheck.errors import InvalidArgument
from dpcheck.exact import privacy_loss

H = thresholds(4)
S = [(0, 1)] * 5 + [(3, 0)] * 4 + [(1, 0)] * 9


@pytest.mark.parametrize("bad", [[(0, 2)], [(4, 0)], [(-1, 1)], "ab", [[1, 2, 3]]])
def test_bad_samples(bad: object) -> None:
    with pytest.raises(InvalidArgument):
        as_sample(bad, 4)


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgument):
        PrivateAgnostic(H, bug="nope")
    with pytest.raises(InvalidArgument):
        PrivateAgnostic(H).pmf(S[:16])             # |D| < 9
    with pytest.raises(InvalidArgument):
        PrivateAgnostic(H).pmf(S[:17])             # odd
    with pytest.raises(InvalidArgument):
        ClosureLearn("and", ())
    with pytest.raises(InvalidArgument):
        ClosureLearn("and", (H, thresholds(5)))
    with pytest.raises(InvalidArgument):
        EMLearner(H, epsilon=0.0)
    with pytest.raises(InvalidArgument):
        RelabelAndLearn(H, EMLearner(H), [(0, 0)], d_size=0)


def test_patterns_count_each_restriction_once() -> None:
    pats = patterns(H, 0b1001)
    assert pats.tolist() == [[0, 0, 0, 0], [0, 0, 0, 1], [1, 0, 0, 1]]
    assert support_of(as_sample(S, 4)) == 0b0011 | 0b1000


@pytest.mark.parametrize("mech", [PrivateAgnostic(H), PrivateAgnostic(H, bug="erm"),
                                  ClosureLearn("and", (H, negation(H))),
                                  RelabelAndLearn(H, EMLearner(H), [(2, 1)], d_size=9)])
def test_sampler_matches_pmf(mech: object) -> None:
    data = S + S if isinstance(mech, ClosureLearn) else S
    p = mech.pmf(data)
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-9)
    out = mech.sample(data, 40_000, np.random.default_rng(3))
    keys, counts = np.unique(out, return_counts=True)
    for k, c in zip(keys.tolist(), counts.tolist()):
        assert abs(c / 40_000 - p[k]) <= 5 * np.sqrt(p[k] * (1 - p[k]) / 40_000) + 1e-3


def test_completion_scores_brute_force() -> None:
    rng = np.random.default_rng(0)
    h1, h2, h3 = H, negation(H), from_masks(4, [1, 6, 9, 15])
    table = tuple(int(rng.integers(2)) for _ in range(8))
    labs = [class_labels(c) for c in (h1, h2, h3)]
    counts = rng.integers(0, 3, size=(4, 2))
    pats = patterns(h2, 0b1111)
    got = completion_scores(table, labs[0][[2]], pats, [labs[2]], counts)
    for j, p in enumerate(pats):
        best = min(sum(counts[x, 1 - table[labs[0][2][x] + 2 * p[x] + 4 * c[x]]]
                       for x in range(4)) for c in labs[2])
        assert got[j] == best


def test_completion_score_matched_sensitivity() -> None:
    """Score (17) has matched sensitivity ≤ 1 (notes ALG-6, derived): h, h′ agreeing on S."""
    rng = np.random.default_rng(1)
    labs = [class_labels(H), class_labels(negation(H))]
    for _ in range(200):
        s = as_sample([(int(rng.integers(4)), int(rng.integers(2))) for _ in range(5)], 4)
        sup = support_of(s)
        for (x, y), (x2, y2) in itertools.product([(a, b) for a in range(4) for b in (0, 1)],
                                                  repeat=2):
            c1 = counts_of(np.vstack([s, [[x, y]]]), 4)
            c2 = counts_of(np.vstack([s, [[x2, y2]]]), 4)
            q1 = completion_scores((0, 0, 0, 1), labs[0][:0], labs[0], [labs[1]], c1)
            q2 = completion_scores((0, 0, 0, 1), labs[0][:0], labs[0], [labs[1]], c2)
            for i, j in itertools.product(range(len(labs[0])), repeat=2):
                agree = all(labs[0][i][p] == labs[0][j][p] for p in range(4) if sup >> p & 1)
                if agree:
                    assert abs(q1[i] - q2[j]) <= 1


def test_relabel_and_learn_within_lemma_5_3() -> None:
    """A substitution in D∘W (V fixed) stays within ε_A + ln(4e) (Lemma 5.3's proof)."""
    a = RelabelAndLearn(H, EMLearner(H), [(0, 0)], d_size=9)
    assert privacy_loss(a.pmf(S), a.pmf(S[:-1] + [(2, 1)])).epsilon <= 1 + np.log(4 * np.e)


def test_subsample_size_and_positional_split() -> None:
    mech = PrivateAgnostic(H)
    dc = counts_of(as_sample(S[:9], 4), 4)
    f, k, pats = mech.learn_counts(dc, 0b1011, 5, np.random.default_rng(0))
    assert f.shape == k.shape == (5,) and pats.shape[1] == 4
    # T only enlarges P: swapping T's order leaves the law unchanged; D's order matters not.
    assert mech.pmf(S[:9] + S[9:][::-1]) == pytest.approx(mech.pmf(S))
