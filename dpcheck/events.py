"""Event families and their selection on the exploration sample.

For every feature (see :mod:`dpcheck.features`) the exploration outputs of D and D′ generate
candidate events:

* **atoms** — point events ``{x = v}`` for every value when a feature takes at most
  ``max_atoms`` distinct values, otherwise for every value seen at least twice (a continuous
  distribution repeats a float64 value with probability ~0, so repeats are atoms of a mixture);
  an atom seen on one side only is a **support mismatch**;
* **likelihood-ratio-ordered unions** of atoms — prefixes of the atoms sorted by estimated
  ``P_D/P_D′`` (and reversed), the Neyman–Pearson-optimal events;
* **half-lines** ``{x ≤ t}``, ``{x > t}``, **intervals** ``{s < x ≤ t}`` and their complements
  ``{x ≤ s or x > t}`` (two tails: the optimal events when D′ only changes a noise scale;
  only with at most :data:`INTERVAL_FEATURES` features, i.e. not for vector outputs) on a
  grid of pooled order statistics of each ordered feature: geometric from both ends (so tail
  events down to probability ~1/n are reachable, never capped at a fixed floor) plus a uniform
  middle.

Selection is two-stage. The exploration sample is split in halves. On the first (*generation*)
half every candidate (event, direction) is generated and scored by the ε lower bound it would
*project* onto the confirmation sample: counts are shrunk (Wilson bound at level ``SHRINK``,
punishing events seen a handful of times) and turned into the bound the confirmation size would
give. A shortlist — the :data:`PER_FAMILY` best of every event family of every feature and the
:data:`VALIDATE` best overall — is then re-scored on the untouched second (*validation*) half,
and the best ``k`` by that score are kept. Pure claims with Poissonized confirmation sizes also
get **paired events** (:mod:`dpcheck.paired`: an upper and a disjoint lower half-line counted in
opposite directions); on long shortlists the best *balanced* pairs of the aggregate scores of
the row (:data:`dpcheck.paired.AGGREGATE_FEATURES`) get slots of their own. Scoring thousands
of candidates on the data that generated them has a winner's curse (a rare atom seen 10 times
under D and never under D′ by chance looks like a support mismatch); the validation half
removes it. Scores only
rank; the reported bounds come from fresh confirmation samples (:mod:`dpcheck.audit`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .features import Feature
from .paired import (
    AGGREGATE_PAIRS,
    RESERVED_SHRINK,
    pair_shortlist,
    projected_pair,
)
from .stats import wilson_lower, wilson_upper

__all__ = ["Event", "Candidate", "select_events", "SHRINK", "MAX_ATOMS"]

#: One-sided level of the shrinkage applied to generation counts before projecting (strong:
#: thousands of candidates compete on the same counts).
SHRINK = 0.1
#: Shrinkage at the validation stage (mild: the counts are fresh for the shortlist, so only a
#: small winner's curse remains, and rare-but-real events must not be shrunk away).
VALIDATION_SHRINK = 0.3
#: Shortlists longer than this get proportionally stronger validation shrinkage.
MILD_SHORTLIST = 100
#: Extra candidates (ranked with the stronger shrinkage) for long shortlists.
EXTRA_STRONG = 1
#: Candidates re-scored on the validation half of the exploration sample: the best of every
#: event family of every feature, plus this many of the best overall.
VALIDATE = 32
PER_FAMILY = 2
#: Intervals and two-tailed events are generated only when there are at most this many
#: features (scalar outputs and their float views; small user feature maps). Vector outputs
#: have dozens of features, and aggregate scores whose half-lines are the likelihood-ratio
#: events (the logistic score has an |x − median| term per coordinate for scale changes);
#: there the quadratic number of intervals per feature mostly adds lucky validation counts
#: (laplace_parallel at 10⁶ per side, seeds 0–9: worst bound 0.001 with them, 0.019 without).
INTERVAL_FEATURES = 8
#: Default cap on the number of point events per feature.
MAX_ATOMS = 2048
#: Features with at most this many distinct values use every value as a threshold.
_FULL_GRID = 128
_UNIFORM_GRID = 64
_TAIL_GRID = 40

Direction = Literal["d>d_prime", "d_prime>d"]
Kind = Literal["le", "gt", "interval", "outside", "atoms"]


@dataclass(frozen=True, eq=False)
class Event:
    """A fixed set of outputs, described by one feature.

    ``kind`` is ``"le"`` (feature ≤ high), ``"gt"`` (feature > low), ``"interval"``
    (low < feature ≤ high), ``"outside"`` (feature ≤ low or feature > high) or ``"atoms"``
    (feature ∈ values). ``labels`` are human-readable forms of the values (for hashed rows:
    the output rows themselves, as seen during exploration). ``tie_value``/``tie``: a
    randomised event (:mod:`dpcheck.ties`) that also holds each output equal to ``tie_value``
    with probability ``tie``; :meth:`mask` and :meth:`count` are its deterministic part,
    :meth:`count_random` draws the coins.
    """

    feature: int
    feature_name: str
    kind: Kind
    low: float | None = None
    high: float | None = None
    values: NDArray[Any] = field(default_factory=lambda: np.empty(0))
    labels: tuple[Any, ...] = ()
    tie_value: float | None = None
    tie: float = 0.0

    def ties(self, columns: list[NDArray[Any]]) -> int:
        """Outputs at the randomised boundary value ``tie_value`` (0 for a plain event)."""
        if self.tie_value is None or self.tie == 0.0:
            return 0
        return int(np.count_nonzero(columns[self.feature] == self.tie_value))

    def count_random(self, columns: list[NDArray[Any]], coins: np.random.Generator) -> int:
        """Outputs in the event, each output at ``tie_value`` counted with probability ``tie``
        (Bichsel et al. 2021 §4: the randomised threshold of the optimal attack). The coins of
        the ``m`` tied outputs are independent, so their count is drawn as ``Binomial(m,
        tie)`` from ``coins`` — a Bernoulli indicator per output, so the counts stay binomial
        (Poisson with Poissonized sizes) and the exact tests apply unchanged."""
        base = self.count(columns)
        m = self.ties(columns)
        return base + int(coins.binomial(m, self.tie)) if m else base

    def mask(self, columns: list[NDArray[Any]]) -> NDArray[np.bool_]:
        """Boolean membership of each output (given its feature columns)."""
        x = columns[self.feature]
        if self.kind == "le":
            return x <= self.high
        if self.kind == "gt":
            return x > self.low
        if self.kind == "interval":
            return (x > self.low) & (x <= self.high)
        if self.kind == "outside":
            return (x <= self.low) | (x > self.high)
        vals = self.values
        if vals.size == 0:
            return np.zeros(x.shape[0], dtype=bool)
        idx = np.minimum(np.searchsorted(vals, x), vals.size - 1)
        return vals[idx] == x

    def count(self, columns: list[NDArray[Any]]) -> int:
        """Number of outputs in the event."""
        return int(np.count_nonzero(self.mask(columns)))

    def describe(self) -> str:
        """Human-readable form, e.g. ``output ≤ -0.25`` or ``row ∈ {…3 values…}``."""
        f = self.feature_name
        if self.tie_value is not None and self.tie > 0.0:
            plain = dataclasses.replace(self, tie_value=None, tie=0.0).describe()
            return f"{plain}, or {f} = {self.tie_value:.6g} with probability {self.tie:.4g}"
        if self.kind == "le":
            return f"{f} <= {self.high:.6g}"
        if self.kind == "gt":
            return f"{f} > {self.low:.6g}"
        if self.kind == "interval":
            return f"{self.low:.6g} < {f} <= {self.high:.6g}"
        if self.kind == "outside":
            return f"{f} <= {self.low:.6g} or {f} > {self.high:.6g}"
        items = self.labels if self.labels else self.values
        shown = ", ".join(_show(v) for v in items[:5])
        more = f", … ({self.values.size} values)" if self.values.size > 5 else ""
        return f"{f} in {{{shown}{more}}}"

    def to_dict(self, max_values: int = 1000) -> dict[str, object]:
        """JSON-safe machine form (atom lists longer than ``max_values`` are truncated)."""
        out: dict[str, object] = {"feature": self.feature_name, "kind": self.kind}
        if self.low is not None:
            out["low"] = float(self.low)
        if self.high is not None:
            out["high"] = float(self.high)
        if self.tie_value is not None and self.tie > 0.0:
            out["tie_value"] = float(self.tie_value)
            out["tie_probability"] = float(self.tie)
        if self.kind == "atoms":
            out["n_values"] = int(self.values.size)
            out["values"] = [_json_value(v) for v in self.values[:max_values]]
            out["values_truncated"] = bool(self.values.size > max_values)
            if self.labels:
                out["rows"] = [_json_value(v) for v in self.labels[:max_values]]
        return out


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ")"
    return f"{v:.6g}" if isinstance(v, (float, np.floating)) else str(_json_value(v))


def _json_value(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, tuple):
        return [_json_value(x) for x in v]
    return v


@dataclass(frozen=True)
class Candidate:
    """An event chosen on the exploration sample, with the direction it is tested in.

    ``direction == "d>d_prime"`` means the event is claimed more likely under D (``p`` is
    ``P[M(D) ∈ S]``); ``explore_p`` / ``explore_q`` are its counts on the validation half of
    the exploration sample, in that order, and ``score`` its projected bound there. ``method``
    is the confirmation statistic projected to be sharper: ``"union"`` (two Clopper–Pearson
    bounds) or ``"ratio"`` (the conditional test of :func:`dpcheck.stats.ratio_lower`, only
    offered when confirmation sizes are Poissonized). ``partner``: for a paired event
    (:mod:`dpcheck.paired`), the disjoint event counted in the *other* direction; the counts are
    then combined and certified by the conditional test.
    """

    event: Event
    direction: Direction
    score: float
    explore_p: int
    explore_q: int
    method: Literal["union", "ratio"] = "union"
    partner: Event | None = None


@dataclass
class _Segment:
    """A run of same-kind candidates: ``kind`` with parameter arrays ``a`` (and ``b``)."""

    kind: str
    size: int
    a: NDArray[Any]
    b: NDArray[Any] | None = None


@dataclass
class _Pool:
    """Candidate events of one feature: counts as parallel arrays, parameters by segment."""

    feature: int
    name: str
    atoms: NDArray[Any]
    segments: list[_Segment]
    count_d: NDArray[np.int64]
    count_dp: NDArray[np.int64]

    def materialise(self, i: int) -> Event:
        """The ``i``-th candidate event of this pool."""
        for seg in self.segments:
            if i < seg.size:
                break
            i -= seg.size
        f, name = self.feature, self.name
        if seg.kind == "atom":
            return Event(f, name, "atoms", values=self.atoms[i : i + 1].copy())
        if seg.kind == "prefix":
            return Event(f, name, "atoms", values=np.sort(self.atoms[seg.a[: i + 1]]))
        if seg.kind == "le":
            return Event(f, name, "le", high=float(seg.a[i]))
        if seg.kind == "gt":
            return Event(f, name, "gt", low=float(seg.a[i]))
        assert seg.b is not None
        kind: Kind = "outside" if seg.kind == "outside" else "interval"
        return Event(f, name, kind, low=float(seg.a[i]), high=float(seg.b[i]))


def _grid_indices(n: int) -> NDArray[np.int64]:
    tail = np.unique(np.round(np.geomspace(1, max(n / 2, 1), _TAIL_GRID)).astype(np.int64))
    mid = np.round(np.linspace(0, n - 1, _UNIFORM_GRID)).astype(np.int64)
    idx = np.concatenate([tail - 1, n - tail, mid])
    return np.unique(np.clip(idx, 0, n - 1))


def _side_counts(sorted_x: NDArray[Any], values: NDArray[Any]) -> NDArray[np.int64]:
    return (np.searchsorted(sorted_x, values, "right")
            - np.searchsorted(sorted_x, values, "left")).astype(np.int64)


def _feature_pool(
    j: int, feat: Feature, a: NDArray[Any], b: NDArray[Any], max_atoms: int,
    intervals: bool = True,
) -> _Pool:
    sa, sb = np.sort(a), np.sort(b)
    pooled = np.sort(np.concatenate([sa, sb]), kind="stable")  # merge of two sorted runs
    n = pooled.size
    new = np.ones(n, dtype=bool)
    np.not_equal(pooled[1:], pooled[:-1], out=new[1:])
    uniq = pooled[new]
    if uniq.size <= max_atoms:
        atoms = uniq
    else:  # values seen at least twice in the pooled sample
        atoms = np.unique(pooled[1:][~new[1:]])
        if atoms.size > max_atoms:
            mult = _side_counts(pooled, atoms)
            atoms = np.sort(atoms[np.argsort(-mult, kind="stable")[:max_atoms]])
    ca, cb = _side_counts(sa, atoms), _side_counts(sb, atoms)
    segments = [_Segment("atom", atoms.size, atoms)]
    counts_d: list[NDArray[np.int64]] = [ca]
    counts_dp: list[NDArray[np.int64]] = [cb]
    if atoms.size > 1:
        ratio = np.log((ca + 0.5) / (cb + 0.5))
        for order in (np.argsort(-ratio, kind="stable"), np.argsort(ratio, kind="stable")):
            segments.append(_Segment("prefix", atoms.size - 1, order))
            counts_d.append(np.cumsum(ca[order])[:-1])
            counts_dp.append(np.cumsum(cb[order])[:-1])
    if feat.ordered:
        t = uniq if uniq.size <= _FULL_GRID else np.unique(pooled[_grid_indices(n)])
        le_a = np.searchsorted(sa, t, "right").astype(np.int64)
        le_b = np.searchsorted(sb, t, "right").astype(np.int64)
        segments += [_Segment("le", t.size, t), _Segment("gt", t.size, t)]
        counts_d += [le_a, sa.size - le_a]
        counts_dp += [le_b, sb.size - le_b]
        if intervals:
            lo, hi = np.triu_indices(t.size, 1)
            inside_a, inside_b = le_a[hi] - le_a[lo], le_b[hi] - le_b[lo]
            segments += [_Segment("interval", lo.size, t[lo], t[hi]),
                         _Segment("outside", lo.size, t[lo], t[hi])]
            counts_d += [inside_a, sa.size - inside_a]
            counts_dp += [inside_b, sb.size - inside_b]
    return _Pool(j, feat.name, atoms, segments, np.concatenate(counts_d),
                 np.concatenate(counts_dp))


def _best_per_family(
    scores: NDArray[np.float64], pools: list[_Pool], offsets: NDArray[np.int64], total: int
) -> list[int]:
    """Flat indices of the :data:`PER_FAMILY` best (event, direction) pairs of every event
    family (segment) of every feature, so validation sees every kind of event, not only the
    family with the luckiest generation counts."""
    picks: list[int] = []
    for p, pool in enumerate(pools):
        start = int(offsets[p])
        for seg in pool.segments:
            for base in (start, start + total):  # both directions
                block = scores[base : base + seg.size]
                if block.size:
                    top = np.argsort(-block, kind="stable")[:PER_FAMILY]
                    picks.extend(int(base + t) for t in top)
            start += seg.size
    return picks


def projected_score(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], *, n_explore: float | NDArray[np.float64],
    n_confirm: int, alpha_each: float, delta: float, shrink: float = SHRINK,
    ratio: bool = False,
) -> NDArray[np.float64]:
    """Projected ε lower bound of events with exploration counts ``k_p``, ``k_q`` out of
    ``n_explore`` (scalar or per event) per side (ranking only). With ``ratio``, the larger of
    the union projection and the conditional-ratio projection (see :func:`projected_ratio`)."""
    p_t, q_t, p_lo, q_hi = _projected_bounds(k_p, k_q, n_explore, n_confirm, alpha_each, shrink)
    with np.errstate(divide="ignore", invalid="ignore"):
        union = np.where(p_lo > delta,
                         np.log(np.maximum(p_lo - delta, 1e-300)) - np.log(q_hi), -np.inf)
    if not ratio:
        return union
    return np.maximum(union, projected_ratio(p_t, q_t, n_confirm, 2 * alpha_each))


def projected_ratio(
    p_t: NDArray[np.float64], q_t: NDArray[np.float64], n_confirm: float, level: float
) -> NDArray[np.float64]:
    """Projected ``ln`` of the conditional ratio bound (:func:`dpcheck.stats.ratio_lower`, one
    test at ``level``) for shrunk probabilities ``p_t``, ``q_t`` (ranking only)."""
    x, y = p_t * n_confirm, q_t * n_confirm
    total = x + y
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.maximum(total, 1e-12)
        pi_lo = wilson_lower(x, safe, level)
        pi_lo = np.minimum(pi_lo, 1.0 - 1e-15)
        return np.where((x > 0) & (pi_lo > 0), np.log(pi_lo) - np.log1p(-pi_lo), -np.inf)


def projected_delta(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], *, n_explore: float, n_confirm: int,
    alpha_each: float, epsilon: float, shrink: float = SHRINK,
) -> NDArray[np.float64]:
    """Projected δ lower bound ``p_lo − e^ε q_hi`` at ``epsilon`` of events with exploration
    counts ``k_p``, ``k_q`` out of ``n_explore`` per side (ranking only; the reported bound is
    :meth:`dpcheck.stats.EventBound.delta_lower` on fresh counts)."""
    _, _, p_lo, q_hi = _projected_bounds(k_p, k_q, n_explore, n_confirm, alpha_each, shrink)
    return np.asarray(p_lo - math.exp(epsilon) * q_hi, dtype=np.float64)


def _projected_bounds(
    k_p: NDArray[np.int64], k_q: NDArray[np.int64], n_explore: float | NDArray[np.float64],
    n_confirm: int, alpha_each: float, shrink: float,
) -> tuple[NDArray[np.float64], ...]:
    """Shrunk exploration estimates ``p_t``, ``q_t`` and the Wilson bounds ``p_lo``, ``q_hi``
    they project at ``n_confirm`` outputs per side and level ``alpha_each``."""
    p_t = wilson_lower(k_p.astype(np.float64), n_explore, shrink)
    q_t = wilson_upper(k_q.astype(np.float64), n_explore, shrink)
    p_lo = wilson_lower(p_t * n_confirm, n_confirm, alpha_each)
    q_hi = wilson_upper(q_t * n_confirm, n_confirm, alpha_each)
    return p_t, q_t, p_lo, q_hi


def validation_shrink(shortlisted: int) -> float:
    """Shrinkage level at the validation stage: :data:`VALIDATION_SHRINK` for up to
    :data:`MILD_SHORTLIST` shortlisted candidates, then proportionally stronger (the best of
    many fresh scores still has a winner's curse: with hundreds of candidates from many
    vector coordinates a noise tail event otherwise beats a weak real signal)."""
    return VALIDATION_SHRINK * min(1.0, MILD_SHORTLIST / max(shortlisted, 1))


def select_events(
    explore_d: list[NDArray[Any]],
    explore_dp: list[NDArray[Any]],
    features: tuple[Feature, ...],
    *,
    n_confirm: int,
    alpha_each: float,
    delta: float,
    k: int,
    max_atoms: int = MAX_ATOMS,
    ratio: bool = False,
    delta_epsilon: float | None = None,
) -> tuple[list[Candidate], int]:
    """Choose up to ``k`` (event, direction) candidates on the exploration sample.

    Returns the candidates (best first by validation score; distinct generation-count
    signatures so that α is not spent twice on one event; ``k + 1`` of them for shortlists
    longer than :data:`MILD_SHORTLIST`, see the code) and the number of (event, direction)
    pairs that were generated. ``ratio=True`` (pure claims with Poissonized confirmation sizes)
    also projects the conditional ratio test and records the sharper method per candidate.

    ``delta_epsilon`` (approximate-DP claims: the claimed ε) adds one more candidate, chosen by
    a second objective: the projected δ lower bound ``p_lo − e^ε q_hi`` at that ε
    (:func:`projected_delta`), if the event is not already chosen and its projected bound at
    the validation point estimates is positive. The ε ranking above favours rare events with
    a large ratio, whose ``p_lo − e^ε q_hi`` is small; the hockey-stick divergence is attained
    by the likelihood-ratio event ``{L > e^ε}``, which is common. Measured at the exact
    (ε, δ(ε)) claims, 8 seeds each, mean ``delta_lower / δ``: subsampled Gaussian (q = 0.2,
    σ = 1, ε = 1) at 10⁶ per side 0.43 → 0.58 (oracle 0.73); Gaussian σ = 2.5, ε = 1 at 10⁶
    0.25 → 0.37; σ = 2, ε = 1 at 10⁵ 0.09 → 0.18. Its generation shortlist and validation
    ranking are separate from the ε ranking's, which are unchanged; the caller's Bonferroni
    split counts it like any other candidate.
    """
    n = explore_d[0].shape[0]
    half = n // 2 if n >= 2 else n  # n = 1: nothing to split; generate and validate on it
    gen_d, gen_dp = [c[:half] for c in explore_d], [c[:half] for c in explore_dp]
    val_d = [c[half:] for c in explore_d] if half < n else gen_d
    val_dp = [c[half:] for c in explore_dp] if half < n else gen_dp
    intervals = len(features) <= INTERVAL_FEATURES
    pools = [_feature_pool(j, f, gen_d[j], gen_dp[j], max_atoms, intervals)
             for j, f in enumerate(features)]
    cd = np.concatenate([p.count_d for p in pools])
    cdp = np.concatenate([p.count_dp for p in pools])
    kw = dict(n_confirm=n_confirm, alpha_each=alpha_each, delta=delta, ratio=ratio)
    scores = np.concatenate([projected_score(cd, cdp, n_explore=half, **kw),
                             projected_score(cdp, cd, n_explore=half, **kw)])
    total = cd.size
    offsets = np.cumsum([0] + [p.count_d.size for p in pools])
    shortlist: list[tuple[Event, bool, float]] = []
    seen: set[tuple[int, int, int, int]] = set()

    def add(flat: int, force: bool = False) -> None:
        forward = bool(flat < total)
        i = int(flat % total)
        pool_index = int(np.searchsorted(offsets, i, "right") - 1)
        signature = (pool_index, int(forward), int(cd[i]), int(cdp[i]))
        if signature in seen or (not force and not math.isfinite(scores[flat]) and shortlist):
            return
        seen.add(signature)
        event = pools[pool_index].materialise(i - int(offsets[pool_index]))
        shortlist.append((event, forward, float(scores[flat])))

    for flat in _best_per_family(scores, pools, offsets, total):
        add(int(flat))
    for flat in np.argsort(-scores, kind="stable")[: 4 * VALIDATE]:
        if len(shortlist) >= VALIDATE + 2 * PER_FAMILY * 10 * len(pools):
            break
        add(int(flat))
    eps_singles = len(shortlist)  # the ε ranking's shortlist; δ-objective entries follow
    dkw = dict(n_confirm=n_confirm, alpha_each=alpha_each, epsilon=delta_epsilon)
    if delta_epsilon is not None:
        d_scores = np.concatenate([projected_delta(cd, cdp, n_explore=half, **dkw),
                                   projected_delta(cdp, cd, n_explore=half, **dkw)])
        for flat in _best_per_family(d_scores, pools, offsets, total):
            add(int(flat), force=True)
    n_val = val_d[0].shape[0]
    singles = len(shortlist)
    v_d = np.array([ev.count(val_d) for ev, _, _ in shortlist], dtype=np.int64)
    v_dp = np.array([ev.count(val_dp) for ev, _, _ in shortlist], dtype=np.int64)
    fwd = np.array([f for _, f, _ in shortlist], dtype=bool)
    v_p, v_q = np.where(fwd, v_d, v_dp), np.where(fwd, v_dp, v_d)
    gen_score = np.array([s for _, _, s in shortlist])
    pairs = (pair_shortlist(pools, features, half, n_confirm, alpha_each) if ratio else [])
    partners: list[Event | None] = [None] * singles
    balanced: list[int] = []
    for event, partner, forward, score, even in pairs:
        if even:
            balanced.append(len(shortlist))
        c = (event.count(val_d), event.count(val_dp), partner.count(val_d),
             partner.count(val_dp))
        shortlist.append((event, forward, score))
        partners.append(partner)
        pp, pq = (c[0] + c[3], c[1] + c[2]) if forward else (c[1] + c[2], c[0] + c[3])
        v_p, v_q = np.append(v_p, pp), np.append(v_q, pq)
        gen_score = np.append(gen_score, score)
    # The k best fresh validation scores under mild shrinkage (rare real events survive); for
    # long shortlists (vector outputs: hundreds of candidates) one more candidate, the best
    # under shrinkage grown with the shortlist, so that a noise tail event does not take the
    # place of a weak real signal. The caller's Bonferroni split counts every candidate.
    # Paired events (dpcheck.paired) are scored by the conditional test on combined counts.
    rankings = []
    extra = singles - eps_singles  # δ-objective entries: ranked below, not in the ε rankings
    in_eps = np.ones(len(shortlist), dtype=bool)
    in_eps[eps_singles:singles] = False
    for shrink in (VALIDATION_SHRINK, validation_shrink(len(shortlist) - extra)):
        s_p, s_q = v_p[:singles], v_q[:singles]
        score = projected_score(s_p, s_q, n_explore=n_val, shrink=shrink, **kw)
        union = projected_score(s_p, s_q, n_explore=n_val, shrink=shrink,
                                n_confirm=n_confirm, alpha_each=alpha_each, delta=delta)
        paired = projected_pair(v_p[singles:], v_q[singles:], n_val, n_confirm,
                                2 * alpha_each, shrink)
        score = np.concatenate([score, paired])
        union = np.concatenate([union, np.full(paired.size, -np.inf)])
        order = np.lexsort((-gen_score, -score))
        rankings.append((order[in_eps[order]], score, union))
    chosen: list[Candidate] = []
    taken: set[tuple[Any, ...]] = set()
    # Long shortlists (many features): one candidate per feature — neighbouring thresholds of
    # one feature are near-duplicates (for noise tails, of one chance fluctuation) and other
    # views get the slot. Short shortlists (scalar outputs) keep k thresholds of one feature.
    features_taken: set[int] = set()
    diverse = eps_singles > MILD_SHORTLIST
    quotas = [k, EXTRA_STRONG if diverse else 0]
    # Long shortlists: one more slot for the best paired event on an aggregate score of the
    # whole row (learned or summed), ranked among those only — their signal is spread over
    # the coordinates, so among hundreds of per-coordinate tail events a lucky noise event
    # outscores it on the validation half far more often than it loses on confirmation.
    # The balanced pairs form a small nested family, so they are ranked with the light
    # shrinkage RESERVED_SHRINK: the validation shrinkage would push them to large masses
    # (it costs a rare event far more than a common one when the signal is weak).
    reserved = np.asarray(balanced, dtype=np.int64)
    if diverse and reserved.size:
        v_score = np.full(len(shortlist), -np.inf)
        v_score[reserved] = projected_pair(v_p[reserved], v_q[reserved], n_val, n_confirm,
                                           2 * alpha_each, RESERVED_SHRINK)
        sub = reserved[np.lexsort((-gen_score[reserved], -v_score[reserved]))]
        rankings.append((sub, v_score, np.full(len(shortlist), -np.inf)))
        quotas.append(AGGREGATE_PAIRS)
    reserved_features: set[int] = set()
    for r, ((order, v_score, v_union), quota) in enumerate(zip(rankings, quotas)):
        # the reserved pairs may share a single's feature, but not each other's
        one_per_feature = diverse and r < 2
        if r == 2:
            features_taken = reserved_features
        # Short shortlists (scalar outputs): at most k − 1 of the k main slots go to one shape
        # family of one feature (its atom sets, or its half-lines and intervals) while another
        # family has a candidate; the last slot then goes to the best of the others. With many
        # rare atoms (a geometric's long tails at 10⁷ samples) the nested atom unions fill the
        # validation ranking with lucky tail sets, and the half-line that carries the real
        # signal would get no slot at all (measured: ε_lower 0 against 0.097).
        family_limit = max(1, quota - 1) if (r == 0 and not diverse) else quota
        family_count: dict[tuple[int, bool], int] = {}
        picked = 0
        for limit in dict.fromkeys((family_limit, quota)):  # capped pass, then fill up
            for idx in order:
                if picked == quota:
                    break
                event, forward, _ = shortlist[idx]
                partner = partners[idx]
                # The same set of outputs reached through two features (a row pattern, its
                # flag column, its learned score) has identical counts on both halves:
                # confirm it once.
                twin: tuple[Any, ...] = (bool(forward), event.count(gen_d),
                                         event.count(gen_dp), int(v_p[idx]), int(v_q[idx]),
                                         partner is None)
                if twin in taken or ((one_per_feature or r == 2)
                                     and event.feature in features_taken):
                    continue
                if not math.isfinite(v_score[idx]) and partner is not None:
                    continue
                family = (event.feature, event.kind == "atoms")
                if family_count.get(family, 0) >= limit:
                    continue
                family_count[family] = family_count.get(family, 0) + 1
                taken.add(twin)
                features_taken.add(event.feature)
                picked += 1
                direction: Direction = "d>d_prime" if forward else "d_prime>d"
                method: Literal["union", "ratio"] = (
                    "ratio" if ratio and v_score[idx] > v_union[idx] else "union")
                chosen.append(Candidate(event, direction, float(v_score[idx]), int(v_p[idx]),
                                        int(v_q[idx]), method, partner))
    if delta_epsilon is not None:  # the δ-objective slot (see the docstring)
        v_delta = projected_delta(v_p[:singles], v_q[:singles], n_explore=n_val,
                                  shrink=VALIDATION_SHRINK, **dkw)
        best = int(np.lexsort((-gen_score[:singles], -v_delta))[0]) if singles else -1
        # only if the event is expected to certify a positive δ: its projected bound at the
        # validation point estimates (no shrinkage) is positive
        if best >= 0 and projected_delta(v_p[best:best + 1], v_q[best:best + 1],
                                         n_explore=n_val, shrink=0.5, **dkw)[0] > 0:
            event, forward, _ = shortlist[best]
            twin = (bool(forward), event.count(gen_d), event.count(gen_dp), int(v_p[best]),
                    int(v_q[best]), True)
            if twin not in taken:
                union_score = float(rankings[0][2][best])
                chosen.append(Candidate(event, "d>d_prime" if forward else "d_prime>d",
                                        union_score, int(v_p[best]), int(v_q[best])))
    return chosen, 2 * total
