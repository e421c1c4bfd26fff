"""``find_counterexample()``: search for a neighbouring pair that refutes a privacy claim.

Hypothesis searches, statistics decides:

1. **Explore.** Candidate pairs come, in this order, from an explicit list of pairs; StatDP's
   structured patterns for query-vector inputs; exhaustive enumeration of small datasets over a
   finite record domain; and a Hypothesis search over a pairs strategy guided by
   ``hypothesis.target(score)``. Each candidate is scored by a cheap exploratory
   :func:`dpcheck.audit` (``explore_samples`` outputs per side, loose α = 0.5) on its own seed
   stream. The best few are re-scored on five times as many samples; the best of those is
   greedily shrunk (fewer records, values towards 0) while its exploratory lower bound still
   exceeds the claimed ε. Exploration never fails and never decides.
2. **Confirm once.** One :func:`dpcheck.audit` of the final pair with ``samples`` fresh outputs
   per side at level ``alpha`` on a seed stream independent of every exploration stream;
   ``found`` is its ``violation``. The search is adaptive, but the confirming audit sees only
   fresh samples, so ``found`` is a valid level-``alpha`` test.

References
----------
Z. Ding et al., "Detecting Violations of Differential Privacy", CCS 2018 (input patterns, search
then test). B. Bichsel et al., "DP-Sniper", IEEE S&P 2021 (fresh samples for the final
estimate). R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive Learning with Robust
Generalization Guarantees", COLT 2016, Theorem 38 (a mechanism that misbehaves on a single
dataset: random neighbour sampling misses it, enumeration does not).
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.audit import audit
from dpcheck.core.certify import certifier_for
from dpcheck.core.executor import check_executor
from dpcheck.core.results import AuditResult
from dpcheck.errors import InvalidArgument
from dpcheck.internal.rng import child
from dpcheck.mechanism import as_sampler, mechanism_name
from dpcheck.neighbours import AddRemove, Relation
from dpcheck.search.candidates import (
    _enumerate,
    _enumeration_size,
    _explicit_pairs,
    _is_strategy,
    _sampled,
)
from dpcheck.search.explorer import REFINE_FACTOR, Explorer, hypothesis_search, jsonable, shrink
from dpcheck.search.explorer import replay as replay_command
from dpcheck.strategies import QuerySpace, describe, statdp_patterns
from dpcheck.validation import check_alpha, check_int, check_seed, fmt

__all__ = ["SearchResult", "find_counterexample"]

#: Maximum pairs enumerated exhaustively (beyond it: smaller sizes, then random sampling).
MAX_ENUMERATED = 2000


@dataclass(frozen=True)
class SearchResult:
    """Outcome of :func:`find_counterexample`.

    Attributes
    ----------
    found
        Whether the confirming audit refuted the claim at level ``alpha``.
    pair
        The (shrunk) best pair ``(d, d′)`` that was confirmed, or None if no candidate could be
        scored.
    audit
        The confirming :class:`~dpcheck.AuditResult` (fresh samples), or None.
    calls
        Mechanism outputs drawn in total (exploration and confirmation, both sides).
    seconds
        Wall time.
    candidates
        Number of pairs scored during exploration (shrink attempts included).
    shrunk_from
        The best pair before shrinking.
    replay
        One line of Python reproducing the confirmation.
    sources
        Which candidate sources were used, in order (``"explicit"``, ``"patterns"``,
        ``"enumeration"``, ``"sampled"``, ``"hypothesis"``).
    """

    found: bool
    pair: tuple[Any, Any] | None
    audit: AuditResult | None
    calls: int
    seconds: float
    candidates: int
    shrunk_from: tuple[Any, Any] | None
    replay: str
    sources: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        """One line: whether a counterexample was found, its bound and the pair."""
        eps = "—" if self.audit is None else f"{self.audit.epsilon_lower:.4g}"
        pair = "None" if self.pair is None else repr(self.pair)
        pair = pair if len(pair) <= 60 else pair[:57] + "..."
        return (f"SearchResult(found={self.found}, epsilon_lower={eps}, pair={pair}, "
                f"calls={self.calls})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "found": self.found,
            "pair": None if self.pair is None else [jsonable(x) for x in self.pair],
            "audit": None if self.audit is None else self.audit.to_dict(),
            "calls": self.calls,
            "seconds": self.seconds,
            "candidates": self.candidates,
            "shrunk_from": (None if self.shrunk_from is None
                            else [jsonable(x) for x in self.shrunk_from]),
            "replay": self.replay,
            "sources": list(self.sources),
        }


def _check_progress(progress: Any) -> None:
    if progress is None:
        return
    try:
        inspect.signature(progress).bind(0, 0)
    except TypeError as exc:
        raise InvalidArgument(
            f"progress={progress!r} must be callable as progress(done, total) or None") from exc
    except ValueError:
        pass


def find_counterexample(
    mechanism: Any,
    claim: PureDP | ApproxDP,
    *,
    pairs: Any = None,
    relation: Relation | None = None,
    domain: Any = None,
    samples: int = 1_000_000,
    explore_samples: int = 20_000,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = 0,
    max_examples: int = 200,
    enumerate_max_records: int = 12,
    progress: Callable[[int, int | None], None] | None = None,
    features: Any = None,
    float_features: bool = True,
    executor: Any = None,
    checkpoint: str | os.PathLike[str] | None = None,
) -> SearchResult:
    """Search for a neighbouring pair on which ``mechanism`` violates ``claim``; confirm it once.

    Parameters
    ----------
    mechanism
        A dpcheck mechanism (``mechanism(data, size, rng)`` or ``.sample``).
    claim
        :class:`~dpcheck.PureDP` or :class:`~dpcheck.ApproxDP`.
    pairs
        An explicit iterable of ``(d, d′)`` pairs, or a Hypothesis strategy of pairs (e.g.
        :func:`dpcheck.strategies.neighbouring_pairs`, :func:`~dpcheck.strategies.query_vector_pairs`).
    relation
        Neighbour relation: checks explicit pairs, drives enumeration and shrinking. Defaults to
        the relation of a ``neighbouring_pairs`` strategy, else :class:`~dpcheck.AddRemove` when
        a finite ``domain`` is enumerated.
    domain
        A finite collection of records: enumerate every neighbouring pair of datasets with at
        most ``enumerate_max_records`` records over it (smaller sizes if that exceeds
        :data:`MAX_ENUMERATED` pairs, then ``max_examples`` random pairs of larger sizes).
        Or a :class:`~dpcheck.strategies.QuerySpace` to score StatDP's patterns.
    samples
        Outputs per side of the single confirming audit.
    explore_samples
        Outputs per side of each exploratory audit.
    alpha
        Level of the confirming audit.
    seed
        ``int ≥ 0`` or ``SeedSequence``; same seed ⇒ same result. Exploration streams and the
        confirmation stream are distinct children of it.
    max_examples
        Hypothesis examples (and randomly sampled pairs in the enumeration fallback).
    enumerate_max_records
        Largest dataset enumerated over ``domain``.
    progress
        Called as ``progress(candidates_scored, None)`` after each exploratory audit.
    features
        Feature map handed to every audit (see :func:`dpcheck.audit`).
    float_features
        Handed to every audit (see :func:`dpcheck.audit`).
    executor
        Runs the confirming audit's sampling (see :func:`dpcheck.audit`); the small exploratory
        audits stay in this process. The result does not depend on it.
    checkpoint
        A file path handed to the confirming audit (see :func:`dpcheck.audit`): its chunk
        counts are saved as they finish, and rerunning the same search with the same
        ``checkpoint`` redoes the (seeded, deterministic) exploration and draws only the
        confirmation chunks missing from the file — the same result bit for bit.

    Returns
    -------
    SearchResult

    Raises
    ------
    InvalidArgument
        For invalid arguments (the message names the argument).
    """
    start = time.perf_counter()
    certifier_for(claim)
    as_sampler(mechanism)
    check_executor(executor)
    if checkpoint is not None and (not isinstance(checkpoint, (str, os.PathLike))
                                   or not str(checkpoint)):
        raise InvalidArgument(f"checkpoint={checkpoint!r} must be a file path or None")
    samples = check_int(samples, "samples", minimum=2)
    explore_samples = check_int(explore_samples, "explore_samples", minimum=2)
    alpha = check_alpha(alpha)
    root = check_seed(seed)
    max_examples = check_int(max_examples, "max_examples", minimum=0)
    enumerate_max_records = check_int(enumerate_max_records, "enumerate_max_records", minimum=0)
    _check_progress(progress)
    if relation is not None and (isinstance(relation, type) or not isinstance(relation, Relation)):
        raise InvalidArgument(f"relation={relation!r} must be a dpcheck neighbour relation")
    strategy = pairs if _is_strategy(pairs) else None
    meta = describe(strategy) if strategy is not None else {}
    explicit = None if pairs is None or strategy is not None else _explicit_pairs(pairs, relation)
    space: QuerySpace | None = None
    finite: list[Any] | None = None
    if isinstance(domain, QuerySpace):
        space = domain
    elif domain is not None:
        if isinstance(domain, (str, bytes)) or not isinstance(domain, Iterable) or _is_strategy(
                domain):
            raise InvalidArgument(
                f"domain={fmt(domain)} must be a finite collection of records or a QuerySpace")
        finite = list(domain)
        if not finite:
            raise InvalidArgument(f"domain={fmt(domain)} must not be empty")
    if space is None and meta.get("kind") == "query_pairs":
        space = meta["space"]
    if relation is None and isinstance(meta.get("relation"), Relation):
        relation = meta["relation"]
    if explicit is None and strategy is None and space is None and finite is None:
        raise InvalidArgument(
            "pairs=None needs domain=: give pairs (an iterable or strategy of (d, d_prime)) or "
            "a finite domain to enumerate")
    if finite is not None and relation is None:
        relation = AddRemove()

    ex = Explorer(mechanism, claim, child(root, "search"), explore_samples, features, progress)
    ex.float_features = float_features
    sources: list[str] = []
    done = False

    def run(cands: Iterable[tuple[Any, Any]], name: str) -> None:
        nonlocal done
        sources.append(name)
        for pair in cands:
            if ex.decisive(ex.offer(pair)):
                done = True
                return

    if explicit is not None:
        run(explicit, "explicit")
    if not done and space is not None:
        run(((d, dp) for _, d, dp in statdp_patterns(space.n, space.delta)), "patterns")
    if not done and finite is not None:
        assert relation is not None
        m = enumerate_max_records
        while m > 0 and _enumeration_size(len(finite), m, relation) > MAX_ENUMERATED:
            m -= 1
        run(_enumerate(finite, m, relation), "enumeration")
        if not done and m < enumerate_max_records and max_examples:
            rng = np.random.Generator(np.random.PCG64(child(root, "sampled-pairs")))
            run(_sampled(finite, m + 1, enumerate_max_records, relation, max_examples, rng),
                "sampled")
    if not done and strategy is not None and max_examples:
        sources.append("hypothesis")
        done = hypothesis_search(ex, strategy, max_examples, root)

    if not ex.scored:
        raise InvalidArgument("find_counterexample had no candidate pair to try: pass pairs=, "
                              "domain= with enumerate_max_records >= 1, space=, or strategy= "
                              "with max_examples >= 1")
    if not ex.best:
        if ex.failed and ex.first_error is not None:  # nothing could be scored at all
            raise InvalidArgument(f"mechanism={mechanism_name(mechanism)} failed on every "
                                  f"candidate pair the search tried ({ex.failed}); the first "
                                  f"error: {ex.first_error}") from ex.first_error
        return SearchResult(False, None, None, ex.calls, time.perf_counter() - start,
                            ex.scored, None, "", tuple(sources))

    # refine: re-score the best few on more (still exploratory) samples
    best = ex.best[0]
    if len(ex.best) > 1 and not ex.decisive(best):
        refined = [ex.score(s.pair, REFINE_FACTOR * explore_samples, "refine") for s in ex.best]
        ok = [s for s in refined if s is not None]
        if ok:
            best = max(ok, key=lambda s: s.score)
    shrunk_from = best.pair
    pair = shrink(ex, best, relation, space)

    confirm = audit(mechanism, pair[0], pair[1], claim, samples=samples, alpha=alpha,
                    seed=child(root, "confirm"), features=features,
                    float_features=float_features, executor=executor,
                    checkpoint=checkpoint)
    calls = ex.calls + 2 * samples
    command = replay_command(mechanism, pair, claim, samples, alpha, child(root, "confirm"), features)
    if not float_features:
        command = command[:-1] + ", float_features=False)"
    return SearchResult(bool(confirm.violation), pair, confirm, calls,
                        time.perf_counter() - start, ex.scored, shrunk_from, command,
                        tuple(sources))


