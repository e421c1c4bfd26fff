"""Plausible-but-wrong implementations of A_binClas / A_priv (notes §4), each with its true effect.

Count-level variants (:class:`BuggyBinClasCounts`, data = vote counts as for
:class:`~algorithms.model_agnostic.BinClasCounts`) and end-to-end variants (wrong splits,
A_priv trained on D). ``BUGS`` maps each name to its documented effect and to whether it is a
privacy violation of the stated (ε, δ) at all.

References
----------
Bassily, Thakkar, Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018, Algorithm 2
(lines 1–9), Algorithm 3; Theorem 3.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcheck.errors import InvalidArgument

from .core import (BOT, ABinClas, AStab, BinClasCounts, BinClasParams, chunk_of,
                   dist_sensitivity1, svt_runs)
from .utility import threshold_erm_batch

__all__ = ["BUGS", "ASTAB_BUGS", "BuggyAStab", "BuggyBinClasCounts", "buggy_params", "NoSplitBinClas",
           "PositionalSplitBinClas", "DataDependentKBinClas", "APrivTrainsOnD"]

#: name → (what the code does wrong, true effect on privacy, violates the stated (ε, δ)?)
BUGS: dict[str, tuple[str, str, bool]] = {
    "raw_majority": ("releases q̂ on every query, no stability test, no noise (V2)",
                     "a one-vote flip at a tie flips the output w.p. 1: ε = ∞", True),
    "no_dist_noise": ("compares dist with the noisy threshold without Lap(2λ) (V3)",
                      "mixed-direction pattern W3 has P_D ≈ 1/(2λ), P_D' = 0: δ ≈ 0.025", True),
    "noise_scale_eps": ("dist noise Lap(1/ε) instead of Lap(2λ) (V4)",
                        "per-⊥ cost ≈ 1/λ + 2ε; W3 gives ε ≈ 1.3 > 1 at T=1", True),
    "query_noise_lambda": ("dist noise Lap(λ) instead of Lap(2λ) (V5)",
                           "per-⊥ cost 3/λ vs 2/λ: within the stated ε's slack, visible only "
                           "against the internal bound", False),
    "paper_distance": ("dist = max{0, g−1} as printed (V1, the erratum)",
                       "per-⊥ cost 4/λ vs 2/λ; within the stated ε for T ≲ 22 at δ=1e-5, "
                       "visible against the internal bound and at A_stab level", False),
    "no_cutoff": ("never halts (V6)", "loss grows with #⊥ without bound: violation for m ≫ λ²; "
                  "at paper constants needs ~1e9 draws", True),
    "no_refresh": ("threshold drawn once, never re-drawn after ⊥ (V7)",
                   "still ((T+2)/λ)-DP by Lyu et al. Alg. 1: NOT a violation for T ≲ 390", False),
    "output_after_halt": ("after the halt, releases the raw majority (V9)",
                          "post-halt labels flip deterministically: ε = ∞", True),
    "log10": ("log base 10 in λ, k, w (V14)", "label δ-event ≈ (2/3)(δ/2m)^{1/ln 10} per tied "
              "query ≫ δ", True),
    "w_without_m": ("w = 2λ log(2/δ) (V15)", "label δ-event ≈ (T+1)δ/3·... > δ for T ≥ 3", True),
    "shared_noise": ("one Lap(2λ) draw shared by all queries of a run (V17)",
                     "W3 pattern 'answered then ⊥' impossible on D': P_D ≈ 0.0085", True),
    "release_counts": ("also releases ct(1) of every answered query, e.g. as a 'confidence' (V18)",
                       "counts of stable queries differ deterministically: ε = ∞", True),
    "noisy_max_per_query": ("per-query Report-Noisy-Max argmax_y ct(y) + Lap(λ), no SVT (V19)",
                            "loss grows ∝ √m on tied queries (shift ≈ 1/(2λ) each)", True),
    "bot_to_majority": ("h_priv maps ⊥ and HALT to the raw majority q̂, not a coin (V20)",
                        "⊥'s on tied queries reveal the flipped label: ε = ∞", True),
    "cutoff_off_by_one": ("halts one ⊥ late: ⌊T⌋+2 ⊥'s (c ≤ T+1) (V8)",
                          "one more AboveThreshold segment (2/λ): within the stated ε's slack",
                          False),
    "noise_halved": ("both noise scales halved: threshold Lap(λ/2), query Lap(λ) (ours)",
                     "per-⊥ cost 4/λ vs 2/λ: within the stated ε's slack at the paper's "
                     "constants (T = 1), visible only against the internal bound", False),
    "signed_gap": ("dist from the signed gap ct(1) − ct(0), the |·| forgotten (ours)",
                   "every 0-labelled query gets dist 0, hence ⊥, and the run halts early: a "
                   "utility bug (Theorem 3.2, Claim 4.1, Theorem 4.2 fail); privacy is kept "
                   "(dist has sensitivity 1)", False),
}
_COUNT_BUGS = tuple(BUGS)


def buggy_params(params: BinClasParams, bug: str) -> BinClasParams:
    """The constants a buggy variant computes (only ``log10`` and ``w_without_m`` differ)."""
    if bug == "log10":
        return replace(params, log=math.log10)
    if bug == "w_without_m":
        return replace(params, w_override=2 * params.lam * math.log(2 / params.delta))
    return params


@dataclass(frozen=True)
class BuggyBinClasCounts:
    """A_binClas at the count level with one bug of :data:`BUGS` (same data and output codes)."""

    params: BinClasParams
    bug: str

    def __post_init__(self) -> None:
        if self.bug not in _COUNT_BUGS:
            raise InvalidArgument(f"bug={self.bug!r} must be one of {sorted(_COUNT_BUGS)}")

    def sample(self, data: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int8]:
        """``size`` runs of the buggy variant."""
        p = buggy_params(self.params, self.bug)
        ref = BinClasCounts(p, distance="paper" if self.bug == "paper_distance" else "sensitivity1")
        labels, dist = ref.labels_and_dist(data)
        if self.bug == "signed_gap":
            dist = dist_sensitivity1(np.maximum(0, 2 * ref.counts(data) - p.k))
        if self.bug == "raw_majority":
            return np.broadcast_to(labels, (size, p.m)).astype(np.int8)
        if self.bug == "noisy_max_per_query":
            c = ref.counts(data)
            noisy = c - (p.k - c) + rng.laplace(0, p.lam, (size, p.m)) - rng.laplace(
                0, p.lam, (size, p.m))
            return (noisy > 0).astype(np.int8)
        kw: dict[str, Any] = {}
        if self.bug == "no_dist_noise":
            kw["query_scale"] = 0.0
        elif self.bug == "noise_scale_eps":
            kw["query_scale"] = 1.0 / p.epsilon
        elif self.bug == "query_noise_lambda":
            kw["query_scale"] = p.lam
        elif self.bug == "no_refresh":
            kw["refresh"] = False
        elif self.bug == "shared_noise":
            kw["shared_noise"] = True
        elif self.bug == "output_after_halt":
            kw["after_halt"] = "majority"
        max_bots = None if self.bug == "no_cutoff" else p.max_bots + (
            self.bug == "cutoff_off_by_one")
        lam = p.lam / 2 if self.bug == "noise_halved" else p.lam
        out = svt_runs(dist, labels, size, rng, lam=lam, w=p.w, max_bots=max_bots, **kw)
        if self.bug == "bot_to_majority":
            return np.where(out >= BOT, labels, out).astype(np.int8)
        if self.bug == "release_counts":
            counts = np.where(out < BOT, ref.counts(data), -1)
            return np.concatenate([out.astype(np.int64), counts], axis=1)
        return out


#: A_stab variants (Theorems 2.4, 2.5): name → (what the code does wrong, true effect)
ASTAB_BUGS: dict[str, tuple[str, str]] = {
    "paper_distance": ("dist = max{0, g − 1} (Algorithm 2's printed formula, V1)",
                       "one vote flip moves dist by 2: exact ε = 2ε on the shift pair"),
    "gamma_without_eps": ("Γ = ln(1/δ) instead of ln(1/δ)/ε (ours)",
                          "for ε < 1 the label leaks w.p. ½δ^ε > δ on the flip pair"),
    "noise_for_sensitivity_two": ("noise Lap(2/ε), calibrated for a sensitivity-2 distance "
                                  "(ours)", "P(⊥) at the stable distance d* is ½β^{1/2} > β "
                                  "(Theorem 2.5 fails), and the unstable label leaks w.p. "
                                  "½δ^{1/2} > δ (Theorem 2.4 fails too)"),
}


@dataclass(frozen=True)
class BuggyAStab(AStab):
    """A_stab with one bug of :data:`ASTAB_BUGS` (same data, outputs and exact ``pmf``).

    References
    ----------
    Bassily, Thakkar, Thakurta 2018, Algorithm 1, Theorems 2.4 and 2.5.
    """

    bug: str = "paper_distance"

    def __post_init__(self) -> None:
        if self.bug not in ASTAB_BUGS:
            raise InvalidArgument(f"bug={self.bug!r} must be one of {sorted(ASTAB_BUGS)}")
        if self.bug == "paper_distance":
            object.__setattr__(self, "distance", "paper")
        super().__post_init__()

    @property
    def threshold(self) -> float:
        """Γ as the buggy code computes it."""
        if self.bug == "gamma_without_eps":
            return math.log(1 / self.delta)
        return super().threshold

    @property
    def noise_scale(self) -> float:
        """Scale of the Laplace noise on dist."""
        return (2.0 if self.bug == "noise_for_sensitivity_two" else 1.0) / self.epsilon

    def release_probability(self, dist: float) -> float:
        """``P(dist + Lap(noise_scale) > Γ)``."""
        z = (dist - self.threshold) / self.noise_scale
        return 0.5 * math.exp(z) if z <= 0 else 1.0 - 0.5 * math.exp(-z)

    def sample(self, votes: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int8]:
        """``size`` independent releases."""
        label, d = self.label_and_dist(votes)
        noisy = d + rng.laplace(0.0, self.noise_scale, size)
        return np.where(noisy > self.threshold, label, BOT).astype(np.int8)


class NoSplitBinClas(ABinClas):
    """V10: every "chunk" is trained on all of D (no split): one record moves all k votes."""

    def chunks(self, data: ArrayLike) -> NDArray[np.int64]:  # noqa: D102
        return np.full(np.asarray(data).shape[0], -1, dtype=np.int64)

    def votes(self, data: ArrayLike) -> NDArray[np.int64]:  # noqa: D102
        d = np.asarray(data, dtype=float)
        h = self.learner(d[:, 1], d[:, 2])
        return (np.asarray(h(np.asarray(self.queries, float))) == 1).astype(np.int64) * self.params.k


class PositionalSplitBinClas(ABinClas):
    """V11: record i (in sorted-id order) goes to chunk ⌊i·k/n⌋: removing one record shifts many."""

    def chunks(self, data: ArrayLike) -> NDArray[np.int64]:  # noqa: D102
        d = np.asarray(data, dtype=float)
        n, k = d.shape[0], self.params.k
        rank = np.argsort(np.argsort(d[:, 0], kind="stable"), kind="stable")
        return (rank * k) // max(n, 1)


class DataDependentKBinClas(ABinClas):
    """V12: k = n // chunk_size (here 2 records per chunk) instead of the public formula.

    Only :meth:`chunks` is meaningful (split-locality tests); do not sample from it.
    """

    def chunks(self, data: ArrayLike) -> NDArray[np.int64]:  # noqa: D102
        d = np.asarray(data, dtype=float)
        return chunk_of(d[:, 0].astype(np.int64), max(1, d.shape[0] // 2), self.salt)


@dataclass(frozen=True)
class APrivTrainsOnD:
    """V13: A_priv's final learner is trained on Q̃ ∪ D (D's labels leak directly)."""

    binclas: ABinClas

    def sample(self, data: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """``size`` runs; ĥ's threshold index in sorted(Q ∪ D_x) ∪ {+∞}."""
        d = np.asarray(data, dtype=float)
        runs = self.binclas.sample(d, size, rng)
        coins = rng.integers(0, 2, runs.shape, dtype=np.int8)
        labels = np.where(runs >= BOT, coins, runs)
        xs = np.concatenate([np.asarray(self.binclas.queries, float), d[:, 1]])
        ys = np.concatenate([labels, np.broadcast_to(d[:, 2].astype(np.int8),
                                                     (size, d.shape[0]))], axis=1)
        return threshold_erm_batch(xs, ys)

