"""Model-agnostic private learning (Bassily, Thakkar, Thakurta, NeurIPS 2018): A_stab, A_binClas, A_priv.

Output codes (one int8 per query): ``0``/``1`` = released label, ``BOT`` (2) = ⊥, ``HALT`` (3) =
not processed because the run halted (notes D9). A run of A_binClas on ``m`` queries is a row of
``m`` codes.

**The vote-count reduction** (notes §2.3.4). Once the ``k`` chunk classifiers are trained, a run
depends on the data only through the count vector ``c_i = #{j : h_j(x̃_i) = 1}``; one added or
removed record changes one chunk, hence every ``c_i`` by at most ±1 (any sign pattern).
:class:`BinClasCounts` samples runs from ``c`` with O(m) Laplace draws per run, whatever k and n:
privacy audits run at the paper's exact λ, w, k. :class:`ABinClas` trains the chunks (end to end)
and then calls the same sampler. A_priv, the learners, the exact threshold-ERM count sampler
(utility runs at paper scale, n ≈ 1e8–1e10) and the utility experiments live in
:mod:`algorithms.model_agnostic.utility`.

**Decisions on the points the paper leaves open** (notes §6; all configurable):

* distance (D0): ``"sensitivity1"`` = ``max(0, ⌈g/2⌉ − 1)`` (default) or ``"paper"`` =
  ``max(0, g − 1)`` with ``g = |ct(1) − ct(0)|``. One record flips one vote and moves ``g`` by 2,
  so the printed formula has sensitivity 2 and overstates stability (erratum, witness votes
  (1,1,1,1,0) → (0,1,1,1,0): dist 2 → 0). The default is the true distance to instability of a
  chunk majority; the paper's k (34√2 ≈ 48.08·λ·log) is exactly what Theorem 3.2 needs with it.
  (For a majority over *records* rather than chunks, ``g − 1`` would be right.)
* cutoff (D5): ``"paper"`` = loop while ``c ≤ T`` (⌊T⌋ + 1 ⊥'s, the last one halts), or
  ``"strict"`` = halt at ``c ≥ T`` (⌈T⌉ ⊥'s, Dwork–Roth). Default ``"paper"``.
* log base (D6): natural log (``log=math.log``); ``math.log10`` is the bug V14.
* k (D1): ``⌈34√2·λ·ln(4mT/min(δ, β/2))⌉``, optionally rounded up to odd (``odd_k``). k never
  depends on n (V12).
* ties (D2): ``ct(0) = ct(1)`` gives label ``tie_label`` (default 0) and distance 0.
* after halting (D7): every later query is ``HALT`` (never a label); A_priv maps ⊥ and ``HALT`` to
  fresh fair coins.
* n/k not an integer, split (D3): record ``i`` goes to chunk ``splitmix64(id_i ⊕ salt) mod k``,
  which is record-local under add/remove (chunk sizes ≈ n/k, not exactly).
* learner seeds (D4): learners here are deterministic; a randomised learner must seed from
  (salt, chunk index) only.

References
----------
R. Bassily, O. Thakkar, A. Thakurta, "Model-Agnostic Private Learning", NeurIPS 2018:
Algorithm 1 (A_stab; Theorems 2.4, 2.5), Algorithm 2 (A_binClas; Theorems 3.1, 3.2),
Algorithm 3 (A_priv; Claim 4.1, Theorem 4.2). A. Smith, A. Thakurta, COLT 2013 (distance to
instability). C. Dwork, A. Roth, 2014, Algorithm 2 (Sparse).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcheck.errors import InvalidArgument

__all__ = ["BOT", "HALT", "DISTANCES", "dist_sensitivity1", "dist_paper", "majority", "AStab",
           "BinClasParams", "BinClasCounts", "ABinClas", "chunk_of", "svt_answer_probability"]
BOT, HALT = 2, 3
_BLOCK = 1 << 15
Learner = Callable[[NDArray[Any], NDArray[Any]], Callable[[NDArray[Any]], NDArray[Any]]]


def dist_sensitivity1(gap: ArrayLike) -> NDArray[np.int64]:
    """True distance to instability of a chunk majority with vote gap g: ``max(0, ⌈g/2⌉ − 1)``."""
    g = np.asarray(gap, dtype=np.int64)
    return np.maximum(0, (g + 1) // 2 - 1)


def dist_paper(gap: ArrayLike) -> NDArray[np.int64]:
    """Algorithm 2 as printed: ``max(0, g − 1)`` (sensitivity 2 under add/remove: erratum)."""
    return np.maximum(0, np.asarray(gap, dtype=np.int64) - 1)


DISTANCES: dict[str, Callable[[ArrayLike], NDArray[np.int64]]] = {
    "sensitivity1": dist_sensitivity1, "paper": dist_paper}


def majority(counts: ArrayLike, k: int, tie_label: int = 0
             ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Labels q̂ and gaps g = |ct(1) − ct(0)| of ``k`` voters with ``counts`` = ct(1)."""
    c = np.asarray(counts, dtype=np.int64)
    diff = 2 * c - k
    label = np.where(diff > 0, 1, np.where(diff < 0, 0, tie_label)).astype(np.int8)
    return label, np.abs(diff)


def _check_pos(name: str, value: Any, upper: float | None = None) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{name}={value!r} must be a real number") from exc
    if not math.isfinite(v) or v <= 0 or (upper is not None and v >= upper):
        raise InvalidArgument(f"{name}={value!r} must be finite and in (0, {upper or 'inf'})")
    return v


def _distance(name: str) -> Callable[[ArrayLike], NDArray[np.int64]]:
    if name not in DISTANCES:
        raise InvalidArgument(f"distance={name!r} must be one of {sorted(DISTANCES)}")
    return DISTANCES[name]


@dataclass(frozen=True)
class AStab:
    """A_stab (Algorithm 1) for f = majority of a 0/1 vote vector: release f(D) iff
    ``dist + Lap(1/ε) > Γ``, else ⊥ (code ``BOT``).

    The data is the vote vector (one vote per chunk; a neighbour flips one vote). ``gamma``
    defaults to Theorem 2.4's ``Γ = ln(1/δ)/ε``. Exact output law: :meth:`pmf`.

    References
    ----------
    Bassily, Thakkar, Thakurta 2018, Algorithm 1, Theorems 2.4 and 2.5.
    """

    epsilon: float
    delta: float
    distance: str = "sensitivity1"
    tie_label: int = 0
    gamma: float | None = None

    def __post_init__(self) -> None:
        _check_pos("epsilon", self.epsilon)
        _check_pos("delta", self.delta, 1.0)
        _distance(self.distance)
        if self.tie_label not in (0, 1):
            raise InvalidArgument(f"tie_label={self.tie_label!r} must be 0 or 1")

    @property
    def threshold(self) -> float:
        """Γ (Theorem 2.4: ln(1/δ)/ε unless overridden)."""
        return math.log(1 / self.delta) / self.epsilon if self.gamma is None else self.gamma

    def label_and_dist(self, votes: ArrayLike) -> tuple[int, int]:
        """f(D) and dist_f(D) of a non-empty 0/1 vote vector."""
        v = np.asarray(votes)
        if v.ndim != 1 or v.size == 0 or not np.isin(v, (0, 1)).all():
            raise InvalidArgument(f"votes={votes!r} must be a non-empty 0/1 vector")
        label, gap = majority(int(v.sum()), v.size, self.tie_label)
        return int(label), int(_distance(self.distance)(gap))

    def release_probability(self, dist: float) -> float:
        """``P(dist + Lap(1/ε) > Γ)`` = ½e^{−ε(Γ−d)} (d ≤ Γ), 1 − ½e^{−ε(d−Γ)} (d ≥ Γ)."""
        z = self.epsilon * (dist - self.threshold)
        return 0.5 * math.exp(z) if z <= 0 else 1.0 - 0.5 * math.exp(-z)

    def pmf(self, votes: ArrayLike) -> dict[int, float]:
        """Exact output distribution over {label, BOT}."""
        label, d = self.label_and_dist(votes)
        p = self.release_probability(d)
        return {label: p, BOT: 1.0 - p}

    def sample(self, votes: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int8]:
        """``size`` independent releases."""
        label, d = self.label_and_dist(votes)
        noisy = d + rng.laplace(0.0, 1.0 / self.epsilon, size)
        return np.where(noisy > self.threshold, label, BOT).astype(np.int8)


@dataclass(frozen=True)
class BinClasParams:
    """The public constants of A_binClas (Algorithm 2, lines 1–2), with overrides.

    ``lam``, ``w``, ``k`` override the formulas (internal-accounting tests at small λ);
    ``log`` is the logarithm used in them (natural by default).
    """

    epsilon: float
    delta: float
    T: float
    m: int
    beta: float = 0.05
    cutoff: str = "paper"
    odd_k: bool = False
    log: Callable[[float], float] = math.log
    lam_override: float | None = None
    w_override: float | None = None
    k_override: int | None = None

    def __post_init__(self) -> None:
        _check_pos("epsilon", self.epsilon)
        _check_pos("delta", self.delta, 1.0)
        _check_pos("T", self.T)
        _check_pos("beta", self.beta, 1.0)
        if not isinstance(self.m, (int, np.integer)) or self.m < 1:
            raise InvalidArgument(f"m={self.m!r} must be an int >= 1")
        if self.cutoff not in ("paper", "strict"):
            raise InvalidArgument(f"cutoff={self.cutoff!r} must be 'paper' or 'strict'")
        if self.k_override is not None and self.k_override < 1:
            raise InvalidArgument(f"k_override={self.k_override!r} must be >= 1")

    @property
    def lam(self) -> float:
        """λ = sqrt(32·T·log(2/δ))/ε."""
        if self.lam_override is not None:
            return float(self.lam_override)
        return math.sqrt(32 * self.T * self.log(2 / self.delta)) / self.epsilon

    @property
    def k(self) -> int:
        """k = ⌈34√2·λ·log(4mT/min(δ, β/2))⌉ (odd if ``odd_k``)."""
        if self.k_override is not None:
            return int(self.k_override)
        raw = 34 * math.sqrt(2) * self.lam * self.log(4 * self.m * self.T
                                                       / min(self.delta, self.beta / 2))
        k = math.ceil(raw)
        return k + 1 if self.odd_k and k % 2 == 0 else k

    @property
    def w(self) -> float:
        """w = 2λ·log(2m/δ)."""
        return float(self.w_override) if self.w_override is not None else \
            2 * self.lam * self.log(2 * self.m / self.delta)

    @property
    def max_bots(self) -> int:
        """Number of ⊥ after which the run halts: ⌊T⌋+1 ("paper": c ≤ T) or ⌈T⌉ ("strict")."""
        return math.floor(self.T) + 1 if self.cutoff == "paper" else max(1, math.ceil(self.T))


def svt_answer_probability(gap_to_threshold: float, lam: float) -> float:
    """P(Lap(2λ) − Lap(λ) > x): first-query answer probability at x = w − dist (notes §5)."""
    x = gap_to_threshold
    s = (2 / 3) * math.exp(-abs(x) / (2 * lam)) - (1 / 6) * math.exp(-abs(x) / lam)
    return s if x >= 0 else 1.0 - s


_FEW_RUNS = 4


def _scan_run(block: NDArray[np.int8], margin: NDArray[np.float64], rho: NDArray[np.float64],
              nb: int, refresh: bool, halt: bool) -> None:
    """One run of :func:`svt_runs`'s loop in place (same noise, same outputs as the vectorised
    path; used when a block holds few runs, e.g. utility runs with thousands of ⊥'s).

    The s-th ⊥ is the first query after the (s−1)-th with ``margin ≤ ρ_s``. A query with
    ``margin ≤ min ρ`` is a ⊥ in whichever segment reaches it, one with ``margin > max ρ`` never
    is: only the queries in between are decided one by one (in a Python loop), each against the
    ρ of the segment it falls in (= the number of ⊥'s before it). O(m) array work + O(#undecided).
    """
    m = block.size
    if nb <= 0 or m == 0:
        return
    thr = rho[:nb] if refresh else rho[:1]
    lo, hi = float(thr.min()), float(thr.max())
    sure = np.flatnonzero(margin <= lo)
    accepted: list[int] = []
    for i in np.flatnonzero((margin > lo) & (margin <= hi)):
        seg = int(np.searchsorted(sure, i)) + len(accepted)
        if seg >= nb:
            break
        if margin[i] <= rho[seg]:
            accepted.append(int(i))
    bots = np.sort(np.concatenate([sure, np.asarray(accepted, dtype=np.int64)]))[:nb]
    block[bots] = BOT
    if halt and bots.size == nb:
        block[bots[-1] + 1:] = HALT


def svt_runs(dist: NDArray[np.int64], labels: NDArray[np.int8], size: int,
             rng: np.random.Generator, *, lam: float, w: float, max_bots: int | None,
             query_scale: float | None = None, refresh: bool = True, shared_noise: bool = False,
             after_halt: str = "halt") -> NDArray[np.int8]:
    """``size`` runs of Algorithm 2's loop on fixed distances/labels (the count-level core).

    Segment s (after s ⊥'s) compares ``dist_i + ν_i`` with ``w + ρ_s`` from the query after the
    s-th ⊥ on; its first non-exceeding query is the (s+1)-th ⊥. Thresholds ρ_s ~ Lap(λ) (one per
    segment if ``refresh``), query noise ν ~ Lap(``query_scale``, default 2λ; 0 = no noise),
    fresh per query unless ``shared_noise``. After ``max_bots`` ⊥'s (``None``: never) the rest
    is ``HALT`` (``after_halt="majority"``: the raw labels, bug V9). Cost: O(max_bots·m) array
    operations per block of runs, no Python loop over runs or queries.
    """
    m = dist.size
    q_scale = 2 * lam if query_scale is None else query_scale
    nb = m if max_bots is None else min(max_bots, m)
    out = np.empty((size, m), dtype=np.int8)
    idx = np.arange(m)
    for lo in range(0, size, _BLOCK):
        b = min(_BLOCK, size - lo)
        rho = rng.laplace(0.0, lam, (b, nb if refresh else 1))
        noise_shape = (b, 1) if shared_noise else (b, m)
        nu = rng.laplace(0.0, q_scale, noise_shape) if q_scale > 0 else np.zeros(noise_shape)
        margin = dist + nu - w                       # ⊥ iff margin <= ρ_s
        block = np.broadcast_to(labels, (b, m)).copy()
        if b <= _FEW_RUNS:                           # few long runs: scan, O(m + #⊥) each
            for r in range(b):
                _scan_run(block[r], margin[r], rho[r], nb, refresh,
                          max_bots is not None and max_bots <= m and after_halt == "halt")
            out[lo:lo + b] = block
            continue
        start = np.zeros(b, dtype=np.int64)
        first = np.full(b, m, dtype=np.int64)
        for s in range(nb):
            live = start < m
            if not live.any():
                break
            r = rho[:, s if refresh else 0][:, None]
            below = (margin <= r) & (idx >= start[:, None])
            has = below.any(axis=1)
            first = np.where(has, below.argmax(axis=1), m)
            rows = np.flatnonzero(has)
            block[rows, first[rows]] = BOT
            start = first + 1
        if max_bots is not None and max_bots <= m and after_halt == "halt":
            block[idx > first[:, None]] = HALT     # first = position of the nb-th ⊥, or m
        out[lo:lo + b] = block
    return out


@dataclass(frozen=True)
class BinClasCounts:
    """A_binClas (Algorithm 2) at the vote-count level: data = ``c`` (length m, ints in [0, k]).

    ``sample(c, size, rng)`` returns ``(size, m)`` int8 codes. Neighbours: ``|c_i − c'_i| ≤ 1``
    for all i (notes §2.3.4). Runs/s at the paper's constants: see the tests (≈1e5–1e6 for m=100).

    References
    ----------
    Bassily, Thakkar, Thakurta 2018, Algorithm 2 and Theorem 3.1.
    """

    params: BinClasParams
    distance: str = "sensitivity1"
    tie_label: int = 0

    def __post_init__(self) -> None:
        _distance(self.distance)
        if self.tie_label not in (0, 1):
            raise InvalidArgument(f"tie_label={self.tie_label!r} must be 0 or 1")

    def counts(self, data: ArrayLike) -> NDArray[np.int64]:
        """Validated count vector."""
        c = np.asarray(data)
        k, m = self.params.k, self.params.m
        if c.shape != (m,) or c.dtype.kind not in "iu" or (c < 0).any() or (c > k).any():
            raise InvalidArgument(f"data must be {m} integer vote counts in [0, {k}]")
        return c.astype(np.int64)

    def labels_and_dist(self, data: ArrayLike) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
        """q̂_i and dist_i of every query."""
        label, gap = majority(self.counts(data), self.params.k, self.tie_label)
        return label, _distance(self.distance)(gap)

    def sample(self, data: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int8]:
        """``size`` independent runs (codes 0, 1, BOT, HALT)."""
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise InvalidArgument(f"size={size!r} must be an int >= 0")
        labels, dist = self.labels_and_dist(data)
        p = self.params
        return svt_runs(dist, labels, int(size), rng, lam=p.lam, w=p.w, max_bots=p.max_bots)


def _splitmix64(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def chunk_of(ids: ArrayLike, k: int, salt: int = 0) -> NDArray[np.int64]:
    """Record-local chunk assignment ``splitmix64(id ⊕ salt) mod k`` (notes D3)."""
    u = np.asarray(ids, dtype=np.int64).astype(np.uint64) ^ np.uint64(salt)
    return (_splitmix64(u) % np.uint64(k)).astype(np.int64)


@dataclass(frozen=True)
class ABinClas:
    """A_binClas end to end: data = ``(n, 3)`` array of records ``(id, x, y)``.

    Splits by :func:`chunk_of`, fits ``learner`` (any ``fit(X, y) -> predict``) on every chunk,
    counts the votes on the public ``queries`` once, then samples with :class:`BinClasCounts`.
    """

    params: BinClasParams
    queries: tuple[float, ...]
    learner: Learner
    distance: str = "sensitivity1"
    tie_label: int = 0
    salt: int = 0

    def __post_init__(self) -> None:
        if len(self.queries) != self.params.m:
            raise InvalidArgument(f"{len(self.queries)} queries but m={self.params.m}")
        if not callable(self.learner):
            raise InvalidArgument("learner must be callable: fit(X, y) -> predict")

    def chunks(self, data: ArrayLike) -> NDArray[np.int64]:
        """Chunk index of every record."""
        d = np.asarray(data, dtype=float)
        if d.ndim != 2 or d.shape[1] != 3:
            raise InvalidArgument("data must be an (n, 3) array of records (id, x, y)")
        return chunk_of(d[:, 0].astype(np.int64), self.params.k, self.salt)

    def votes(self, data: ArrayLike) -> NDArray[np.int64]:
        """ct(1) on every query (the deterministic, data-dependent precomputation)."""
        d = np.asarray(data, dtype=float)
        chunk = self.chunks(d)
        q = np.asarray(self.queries, dtype=float)
        counts = np.zeros(q.size, dtype=np.int64)
        for j in range(self.params.k):
            rows = d[chunk == j]
            counts += np.asarray(self.learner(rows[:, 1], rows[:, 2])(q)) == 1
        return counts

    def sample(self, data: ArrayLike, size: int, rng: np.random.Generator) -> NDArray[np.int8]:
        """``size`` runs on the records ``data``."""
        return BinClasCounts(self.params, self.distance, self.tie_label).sample(
            self.votes(data), size, rng)
