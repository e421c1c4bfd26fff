"""``select_events``: which events an audit confirms, chosen on the exploration sample.

For every feature (:mod:`dpcheck.features`) the exploration outputs of D and D′ generate
candidate events (:mod:`dpcheck.events.pools`):

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
*project* onto the confirmation sample (:mod:`dpcheck.events.projection`). A shortlist — the
:data:`~dpcheck.events.pools.PER_FAMILY` best of every event family of every feature and the
:data:`VALIDATE` best overall — is then re-scored on the untouched second (*validation*) half,
and the best ``k`` by that score are kept — on long shortlists at most one of them a
candidate ranked above the first firm one whose validation counts show no difference beyond
the shortlist's noise (a one-sided binomial ``z`` below ``sqrt(2 ln m)``: rare real events keep
a slot, noise tails do not take them all; :func:`~dpcheck.events.slots.fill_slots`). On short
shortlists (scalar outputs) the last of
them is the best under max-noise shrinkage (``estimate − sqrt(2 ln m)·SE`` for ``m``
shortlisted) when that one was left out: the luckiest of many equal tail intervals no longer
takes every slot from the half-line with the same ratio and twenty times the mass
(:func:`~dpcheck.events.slots.strong_last_slot`). An event holding every validation output of
both sides never gets a slot. Pure claims with Poissonized confirmation sizes also get **paired
events** (:mod:`dpcheck.events.paired`: an upper and a disjoint lower half-line counted in
opposite directions); on long shortlists the best *balanced* pairs of the aggregate
scores of the row (features marked ``aggregate``) get slots of their own. Scoring thousands of
candidates on the data that generated them has a winner's curse (a rare atom seen 10 times
under D and never under D′ by chance looks like a support mismatch); the validation half
removes it. Scores only rank; the reported bounds come from fresh confirmation samples
(:mod:`dpcheck.core.audit`).

References
----------
B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (select on one sample, estimate on another);
Z. Ding et al., "Detecting violations of differential privacy", CCS 2018 (point events).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcheck.events.event import Candidate, Event, count_events
from dpcheck.events.paired import AGGREGATE_PAIRS, RESERVED_SHRINK, pair_shortlist
from dpcheck.events.pools import MAX_ATOMS, PER_FAMILY, Pool, best_per_family, feature_pool
from dpcheck.events.projection import (
    MILD_SHORTLIST,
    VALIDATION_SHRINK,
    projected_delta,
    max_noise_shrink,
    projected_pair,
    projected_score,
    validation_shrink,
)
from dpcheck.events.slots import (FEW_COUNTS, Ranking, Shortlist, delta_slot, fill_slots,
                                  strong_last_slot)
from dpcheck.features.feature import Feature

__all__ = ["select_events", "MAX_ATOMS"]

#: Extra candidates (ranked with the stronger shrinkage) for long shortlists.
EXTRA_STRONG = 1
#: Candidates re-scored on the validation half of the exploration sample: the best of every
#: event family of every feature, plus this many of the best overall.
VALIDATE = 32
#: Intervals and two-tailed events are generated only when there are at most this many
#: features (scalar outputs and their float views; small user feature maps). Vector outputs
#: have dozens of features, and aggregate scores whose half-lines are the likelihood-ratio
#: events (the logistic score has an |x − median| term per coordinate for scale changes);
#: there the quadratic number of intervals per feature mostly adds lucky validation counts.
INTERVAL_FEATURES = 8


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
    validation: Validation | None = None,
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
    by the likelihood-ratio event ``{L > e^ε}``, which is common (its effect is measured in
    ``tests/test_delta_lower.py``). Its generation shortlist and validation ranking are
    separate from the ε ranking's; the caller's Bonferroni split counts it like any other
    candidate.

    The steps: split the exploration sample into halves (:func:`_halves`), generate and score
    every candidate on the first (:func:`_generate`), shortlist the best of every family and
    overall (:func:`_shortlist`), re-count the shortlist and the paired events on the second
    (:func:`_validate`), rank by validation scores (:func:`_rankings`), fill the ``k`` slots
    (:func:`~dpcheck.events.slots.fill_slots`) and add the δ-objective slot
    (:func:`~dpcheck.events.slots.delta_slot`).

    ``validation``: ``(n_val, count)`` when the validation half is not in ``explore_d``,
    ``explore_dp`` (explorations larger than one chunk per side, :mod:`dpcheck.core.explore`):
    the columns given are then the whole generation half, and ``count(events)`` returns the
    counts of ``events`` on the ``n_val`` validation outputs of D and of D′ (counted elsewhere,
    e.g. on an executor's workers).
    """
    halves = _halves(explore_d, explore_dp, validation)
    kw = dict(n_confirm=n_confirm, alpha_each=alpha_each, delta=delta, ratio=ratio)
    gen = _generate(halves, features, max_atoms, kw)
    dkw = dict(n_confirm=n_confirm, alpha_each=alpha_each, epsilon=delta_epsilon)
    short = _shortlist(gen, delta_epsilon is not None, dkw)
    pairs = (pair_shortlist(gen.pools, features, halves.half, n_confirm, alpha_each)
             if ratio else [])
    _validate(short, halves, pairs, gen.pools)
    rankings, quotas, diverse = _rankings(short, halves.n_val, k, kw)
    picked: list[int] = []
    guesses = _guesses(short) if diverse else None
    chosen, taken = fill_slots(short, rankings, quotas, diverse, ratio, picked=picked,
                               guesses=guesses)
    if not diverse and k >= 2:
        chosen, taken = strong_last_slot(short, rankings[1], chosen, taken, picked, ratio,
                                         k)
    if delta_epsilon is not None:
        chosen += delta_slot(short, halves.n_val, rankings, taken, dkw)
    return chosen, 2 * gen.total


#: Counts of events on the validation outputs of D and of D′ (see :func:`select_events`).
Counter = Callable[[Sequence[Event]], tuple[NDArray[np.int64], NDArray[np.int64]]]
#: The validation half when it is counted elsewhere: its size per side and its counter.
Validation = tuple[int, Counter]


@dataclass(frozen=True)
class _Halves:
    """The generation half of the exploration columns, the size of the validation half and
    the counter of events on it (n = 1: one sample serves both)."""

    gen_d: list[NDArray[Any]]
    gen_dp: list[NDArray[Any]]
    half: int
    n_val: int
    count: Counter


def _halves(explore_d: list[NDArray[Any]], explore_dp: list[NDArray[Any]],
            validation: Validation | None = None) -> _Halves:
    n = explore_d[0].shape[0]
    if validation is not None:  # the validation half is counted elsewhere
        return _Halves(explore_d, explore_dp, n, validation[0], validation[1])
    half = n // 2 if n >= 2 else n  # n = 1: nothing to split; generate and validate on it
    gen_d, gen_dp = [c[:half] for c in explore_d], [c[:half] for c in explore_dp]
    val_d = [c[half:] for c in explore_d] if half < n else gen_d
    val_dp = [c[half:] for c in explore_dp] if half < n else gen_dp

    def count(events: Sequence[Event]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        return count_events(events, val_d), count_events(events, val_dp)

    return _Halves(gen_d, gen_dp, half, val_d[0].shape[0], count)


@dataclass(frozen=True)
class _Generated:
    """Every candidate of every feature on the generation half: pools, their concatenated
    counts, and the projected scores of both directions (forward first)."""

    pools: list[Pool]
    cd: NDArray[np.int64]
    cdp: NDArray[np.int64]
    scores: NDArray[np.float64]
    offsets: NDArray[np.int64]
    half: int

    @property
    def total(self) -> int:
        return int(self.cd.size)


def _generate(halves: _Halves, features: tuple[Feature, ...], max_atoms: int,
              kw: dict[str, Any]) -> _Generated:
    intervals = len(features) <= INTERVAL_FEATURES
    pools = [feature_pool(j, f, halves.gen_d[j], halves.gen_dp[j], max_atoms, intervals)
             for j, f in enumerate(features)]
    cd = np.concatenate([p.count_d for p in pools])
    cdp = np.concatenate([p.count_dp for p in pools])
    scores = np.concatenate([projected_score(cd, cdp, n_explore=halves.half, **kw),
                             projected_score(cdp, cd, n_explore=halves.half, **kw)])
    offsets = np.cumsum([0] + [p.count_d.size for p in pools])
    return _Generated(pools, cd, cdp, scores, offsets, halves.half)



def _shortlist(gen: _Generated, with_delta: bool, dkw: dict[str, Any]) -> Shortlist:
    """The :data:`PER_FAMILY` best of every family and the best overall by the ε projection
    (distinct generation-count signatures), then the best of every family by the δ projection."""
    short = Shortlist()
    seen: set[tuple[int, int, int, int]] = set()
    scores, total, offsets = gen.scores, gen.total, gen.offsets

    def add(flat: int, force: bool = False) -> None:
        forward = bool(flat < total)
        i = int(flat % total)
        pool_index = int(np.searchsorted(offsets, i, "right") - 1)
        signature = (pool_index, int(forward), int(gen.cd[i]), int(gen.cdp[i]))
        if signature in seen or (not force and not math.isfinite(scores[flat])
                                 and short.entries):
            return
        seen.add(signature)
        event = gen.pools[pool_index].materialise(i - int(offsets[pool_index]))
        short.entries.append((event, forward, float(scores[flat])))

    for flat in best_per_family(scores, gen.pools, offsets, total):
        add(int(flat))
    for flat in np.argsort(-scores, kind="stable")[: 4 * VALIDATE]:
        if len(short.entries) >= VALIDATE + 2 * PER_FAMILY * 10 * len(gen.pools):
            break
        add(int(flat))
    short.eps_singles = len(short.entries)  # the ε ranking's shortlist; δ entries follow
    if with_delta:
        d_scores = np.concatenate([projected_delta(gen.cd, gen.cdp, n_explore=gen.half, **dkw),
                                   projected_delta(gen.cdp, gen.cd, n_explore=gen.half, **dkw)])
        for flat in best_per_family(d_scores, gen.pools, offsets, total):
            add(int(flat), force=True)
    short.singles = len(short.entries)
    return short


def _validate(short: Shortlist, halves: _Halves,
              pairs: list[tuple[Event, Event, bool, float, bool]],
              pools: list[Pool] | None = None) -> None:
    """Count the shortlist on the validation half, then append the paired events with their
    combined counts (numerator side first); on the generation half with the columns
    ``pools`` sorted already."""
    entries = short.entries
    counted = [ev for ev, _, _ in entries] + [e for p in pairs for e in p[:2]]
    all_d, all_dp = halves.count(counted)
    base = len(entries)
    v_d, v_dp = all_d[:base], all_dp[:base]
    fwd = np.array([f for _, f, _ in entries], dtype=bool)
    v_p, v_q = np.where(fwd, v_d, v_dp), np.where(fwd, v_dp, v_d)
    gen_score = np.array([sc for _, _, sc in entries])
    short.partners = [None] * short.singles
    for j, (event, partner, forward, score, even) in enumerate(pairs):
        if even:
            short.balanced.append(len(entries))
        at = base + 2 * j  # this pair's event, then its partner, in ``counted``
        c = (all_d[at], all_dp[at], all_d[at + 1], all_dp[at + 1])
        entries.append((event, forward, score))
        short.partners.append(partner)
        pp, pq = (c[0] + c[3], c[1] + c[2]) if forward else (c[1] + c[2], c[0] + c[3])
        v_p, v_q = np.append(v_p, pp), np.append(v_q, pq)
        gen_score = np.append(gen_score, score)
    short.v_p, short.v_q, short.gen_score = v_p, v_q, gen_score
    events = [ev for ev, _, _ in entries]
    sorted_d = None if pools is None else [p.sorted_d for p in pools]
    sorted_dp = None if pools is None else [p.sorted_dp for p in pools]
    short.g_d = count_events(events, halves.gen_d, sorted_d)
    short.g_dp = count_events(events, halves.gen_dp, sorted_dp)




def _guesses(short: Shortlist) -> NDArray[np.bool_]:
    """Entries that are guesses: seen fewer than :data:`~dpcheck.events.slots.FEW_COUNTS` times
    on their favoured side of the validation half, and without a difference beyond the
    shortlist's noise: ``(v_p − v_q) / sqrt(v_p + v_q) < sqrt(2 ln m)`` for ``m`` shortlisted
    entries — the normal score of the split of ``v_p + v_q`` outputs under ratio 1, against
    about the largest of ``m`` standard normal noises (as
    :func:`dpcheck.events.projection.max_noise_shrink`). Ranking only: a threshold on data the
    bounds never use."""
    v_p = short.v_p.astype(np.float64)
    v_q = short.v_q.astype(np.float64)
    z = (v_p - v_q) / np.sqrt(np.maximum(v_p + v_q, 1.0))
    noise = z < math.sqrt(2.0 * math.log(max(len(short.entries), 2)))
    return np.asarray(noise & (short.v_p < FEW_COUNTS))


def _rankings(short: Shortlist, n_val: int, k: int, kw: dict[str, Any]
              ) -> tuple[list[Ranking], list[int], bool]:
    """The validation rankings (order, score, union score) and the slots each fills.

    The ``k`` best fresh validation scores under mild shrinkage (rare real events survive); for
    long shortlists (vector outputs: hundreds of candidates) one more candidate, the best under
    shrinkage grown with the shortlist, so that a noise tail event does not take the place of a
    weak real signal. Paired events are scored by the conditional test on combined counts.
    Long shortlists also rank the balanced pairs of aggregate scores among themselves, for
    :data:`~dpcheck.events.paired.AGGREGATE_PAIRS` slots: their signal is spread over the
    coordinates, so among hundreds of per-coordinate tail events a lucky noise event outscores
    it on the validation half far more often than it loses on confirmation. The balanced pairs
    form a small nested family, so they are ranked with the light shrinkage
    :data:`~dpcheck.events.paired.RESERVED_SHRINK`."""
    singles, eps_singles = short.singles, short.eps_singles
    v_p, v_q, gen_score = short.v_p, short.v_q, short.gen_score
    n_confirm, alpha_each = kw["n_confirm"], kw["alpha_each"]
    rankings: list[Ranking] = []
    extra = singles - eps_singles  # δ-objective entries: ranked below, not in the ε rankings
    in_eps = np.ones(len(short.entries), dtype=bool)
    in_eps[eps_singles:singles] = False
    # an event holding every validation output of both sides (the whole output space, seen
    # through some feature) has ratio 1: never worth a slot while anything else is on offer
    full = np.concatenate([np.full(singles, n_val), np.full(len(v_p) - singles, 2 * n_val)])
    keep = in_eps & ~((v_p >= full) & (v_q >= full))
    if not keep.any():
        keep = in_eps
    diverse = eps_singles > MILD_SHORTLIST
    strong = (validation_shrink(len(short.entries) - extra) if diverse
              else max_noise_shrink(len(short.entries) - extra))
    for shrink in (VALIDATION_SHRINK, strong):
        s_p, s_q = v_p[:singles], v_q[:singles]
        score = projected_score(s_p, s_q, n_explore=n_val, shrink=shrink, **kw)
        union = projected_score(s_p, s_q, n_explore=n_val, shrink=shrink,
                                n_confirm=n_confirm, alpha_each=alpha_each, delta=kw["delta"])
        paired = projected_pair(v_p[singles:], v_q[singles:], n_val, n_confirm,
                                2 * alpha_each, shrink)
        score = np.concatenate([score, paired])
        union = np.concatenate([union, np.full(paired.size, -np.inf)])
        order = np.lexsort((-gen_score, -score))
        rankings.append((order[keep[order]], score, union))
    quotas = [k, EXTRA_STRONG if diverse else 0]
    reserved = np.asarray(short.balanced, dtype=np.int64)
    if diverse and reserved.size:
        v_score = np.full(len(short.entries), -np.inf)
        v_score[reserved] = projected_pair(v_p[reserved], v_q[reserved], n_val, n_confirm,
                                           2 * alpha_each, RESERVED_SHRINK)
        sub = reserved[np.lexsort((-gen_score[reserved], -v_score[reserved]))]
        rankings.append((sub, v_score, np.full(len(short.entries), -np.inf)))
        quotas.append(AGGREGATE_PAIRS)
    return rankings, quotas, diverse

