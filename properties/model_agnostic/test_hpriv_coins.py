"""Paper 003, Section 4: h_priv as a binary classifier — A_binClas's ⊥ (and HALT) answers
replaced by uniformly random labels, one fresh coin per query (issue 27).

The paper: "w.l.o.g., we can view h_priv as a binary classifier by replacing ⊥ with a uniformly
random label in {0, 1}"; the proof of Theorem 4.2 then uses that every labelled public point
(x̃_t, ŷ_t) of Algorithm 3 is an independent draw from (𝒟_X, h_priv). So the coins must be
fair and independent across queries (and across runs). A coin shared by all ⊥'s of a run (or
one coin vector reused by every run) keeps each ŷ_t marginally fair — the privacy audits and
the slack-heavy utility bounds of Claim 4.1 / Theorem 4.2 cannot see it — but breaks the
independence the proof needs. The step is one function,
:func:`~algorithms.model_agnostic.utility.h_priv_labels`, used by ``APriv.sample`` and by
``apriv_errors`` (the Theorem 4.2 utility measurement), and is tested here on real A_binClas
outputs.

References
----------
R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018: §4
(definition of h_priv), Algorithm 3, Claim 4.1, Theorem 4.2 (proof).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import binomtest

from algorithms.model_agnostic import BOT, BinClasCounts, BinClasParams
from algorithms.model_agnostic.utility import h_priv_labels

#: T = 8: up to 9 ⊥'s per run before HALT; k odd so that a count (k+1)/2 is a vote gap of 1.
COIN_PARAMS = BinClasParams(epsilon=4.0, delta=0.05, T=8, m=60, odd_k=True)
RUNS = 4000

Labeler = Callable[[NDArray[np.int8], np.random.Generator], NDArray[np.int8]]


def _shared_coin(outputs: NDArray[np.int8], rng: np.random.Generator) -> NDArray[np.int8]:
    """Mutant: one coin per run, shared by all its ⊥/HALT answers."""
    coins = rng.integers(0, 2, (outputs.shape[0], 1), dtype=np.int8)
    return np.where(outputs >= BOT, coins, outputs).astype(np.int8)


def _reused_coins(outputs: NDArray[np.int8], rng: np.random.Generator) -> NDArray[np.int8]:
    """Mutant: one coin per query position, the same vector reused by every run."""
    coins = rng.integers(0, 2, (1, outputs.shape[1]), dtype=np.int8)
    return np.where(outputs >= BOT, coins, outputs).astype(np.int8)


LABELERS: dict[str, Labeler] = {"reference": h_priv_labels, "shared_coin": _shared_coin,
                                "reused_coins": _reused_coins}


@dataclass(frozen=True)
class CoinCheck:
    """Exact two-sided binomial tests (Bonferroni over three) that the ⊥ labels are fair
    coins, independent within a run (successive ⊥'s) and across runs (same query position)."""

    p_ones: float
    p_within: float
    p_across: float
    counts: tuple[int, int, int]
    alpha: float

    @property
    def p_value(self) -> float:
        """Bonferroni-combined p-value."""
        return min(1.0, 3 * min(self.p_ones, self.p_within, self.p_across))

    @property
    def violation(self) -> bool:
        """The coins contradict i.i.d. fair coins at level ``alpha``."""
        return self.p_value <= self.alpha

    def summary(self) -> str:
        """One line for people."""
        return (f"h_priv coins: p = {self.p_value:.3g} (ones {self.p_ones:.3g}, within-run "
                f"{self.p_within:.3g}, across-run {self.p_across:.3g}; "
                f"{self.counts[0]} coins) at alpha {self.alpha:.3g}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"p_value": self.p_value, "p_ones": self.p_ones, "p_within": self.p_within,
                "p_across": self.p_across, "n_coins_pairs_within_pairs_across": self.counts,
                "alpha": self.alpha, "violation": self.violation}


def check_coins(outputs: NDArray[np.int8], labeler: Labeler, *, alpha: float,
                seed: np.random.SeedSequence) -> CoinCheck:
    """Label ``outputs`` (runs × queries) with ``labeler`` and test its ⊥/HALT labels.

    Under i.i.d. fair coins the label sum is Bin(N, 1/2), and so are the numbers of equal
    labels between successive ⊥'s of a run and between successive runs with a ⊥ at the same
    query (XORs of successive i.i.d. fair bits are i.i.d. fair bits), conditionally on where the
    ⊥'s are. Non-⊥ answers must pass through unchanged (asserted)."""
    labels = labeler(outputs, np.random.default_rng(seed))
    coin = outputs >= BOT
    assert np.array_equal(labels[~coin], outputs[~coin])   # released labels are kept
    assert np.isin(labels[coin], (0, 1)).all()
    ones = int(labels[coin].sum())
    within = [(r[c][1:] == r[c][:-1]) for r, c in zip(labels, coin)]
    across = [(col[c][1:] == col[c][:-1]) for col, c in zip(labels.T, coin.T)]
    n_within, eq_within = sum(w.size for w in within), int(sum(w.sum() for w in within))
    n_across, eq_across = sum(a.size for a in across), int(sum(a.sum() for a in across))
    n = int(coin.sum())
    return CoinCheck(binomtest(ones, n).pvalue, binomtest(eq_within, n_within).pvalue,
                     binomtest(eq_across, n_across).pvalue, (n, n_within, n_across), alpha)


def _m(name: str) -> Any:
    return pytest.param(name, marks=pytest.mark.mutant(name))


@pytest.mark.claim(paper="003", ref="Theorem 4.2", kind="utility")
@pytest.mark.parametrize("variant", ["reference", _m("shared_coin"), _m("reused_coins")])
def test_hpriv_coins_are_independent(variant: str, dp_rng: Any, dp_check: Any,
                                     dp_record: Any) -> None:
    """A_priv's labels (§4: ⊥ → uniformly random label; Theorem 4.2's proof: the labelled
    public points are i.i.d. from (𝒟_X, h_priv)) on 4 000 runs of the count-level A_binClas
    (ε = 4, δ = 0.05, T = 8, m = 60; queries cycle through stable-1 (count k), stable-0
    (count 0) and tied (vote gap 1) counts, so runs mix labels, ⊥'s and HALT): the ⊥/HALT
    labels pass three exact binomial tests at the plugin's α (fair; successive ⊥'s of a run
    independent; successive runs at one query independent), released labels are unchanged.
    Mutants: one coin shared by all ⊥'s of a run; one coin vector reused by every run."""
    p = COIN_PARAMS
    counts = np.array([(p.k, 0, (p.k + 1) // 2)[i % 3] for i in range(p.m)], np.int64)
    outputs = BinClasCounts(p).sample(counts, RUNS, dp_rng)
    r = dp_check(check_coins, outputs, LABELERS[variant], kind="hpriv_coins")
    dp_record("hpriv_coins", {"variant": variant, **r.to_dict()})
