"""The explorer of :func:`dpcheck.find_counterexample`: exploratory audits that rank candidate
pairs, the Hypothesis-guided search over a pairs strategy, greedy shrinking of a witness pair and
the replay command of the confirming audit.

Exploratory audits run at the loose level :data:`EXPLORE_ALPHA` on their own seed streams:
their bounds only rank and gate candidates, never decide; the reported result comes from a
fresh confirming audit at the caller's α.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.claims import ApproxDP, PureDP
from dpcheck.core.audit import audit
from dpcheck.errors import InvalidArgument
from dpcheck.internal.rng import child
from dpcheck.mechanism import mechanism_name
from dpcheck.neighbours import Relation
from dpcheck.search.candidates import (
    _safe_key,
    _shrink_moves,
)
from dpcheck.strategies import QuerySpace
from dpcheck.validation import fmt

__all__ = ["Explorer", "Scored", "hypothesis_search", "shrink", "replay", "jsonable",
           "EXPLORE_ALPHA", "REFINE_TOP", "REFINE_FACTOR", "MAX_SHRINK"]

#: Loose level of the exploratory audits (their bounds only rank and gate, never decide).
EXPLORE_ALPHA = 0.5
#: Candidates re-scored on ``REFINE_FACTOR × explore_samples`` before the best is chosen.
REFINE_TOP, REFINE_FACTOR = 8, 4
#: Maximum exploratory audits spent on shrinking.
MAX_SHRINK = 60

def jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


@dataclass
class Scored:
    pair: tuple[Any, Any]
    bound: float  # exploratory epsilon_lower at EXPLORE_ALPHA
    samples: int  # outputs per side of the exploratory audit
    score: float  # ranking score: the bound, ties broken by the plug-in log-ratio


class Explorer:
    """Scores candidates on independent exploration streams and keeps the books."""

    def __init__(self, mechanism: Any, claim: PureDP | ApproxDP, root: np.random.SeedSequence,
                 explore_samples: int, features: Any, progress: Any) -> None:
        self.mechanism, self.claim, self.root = mechanism, claim, root
        self.n, self.features, self.progress = explore_samples, features, progress
        self.calls = 0
        self.scored = 0
        self.float_features = True
        self.best: list[Scored] = []
        self.seen: set[Any] = set()
        #: Candidates the mechanism rejected (an :class:`InvalidArgument` of their audit), and
        #: the first such error: a search where every candidate failed raises it.
        self.failed = 0
        self.first_error: InvalidArgument | None = None

    def score(self, pair: tuple[Any, Any], samples: int | None = None,
              tag: str = "explore") -> Scored | None:
        """Exploratory audit of ``pair`` (None if the mechanism rejects the inputs)."""
        n = self.n if samples is None else samples
        stream = child(self.root, tag, self.scored)
        self.scored += 1
        self.calls += 2 * n
        try:
            r = audit(self.mechanism, pair[0], pair[1], self.claim, samples=n,
                      alpha=EXPLORE_ALPHA, seed=stream, features=self.features,
                      float_features=self.float_features)
        except InvalidArgument as exc:
            self.failed += 1
            self.first_error = self.first_error or exc
            return None
        delta = self.claim.delta
        plug = -math.inf
        for w in r.confirmed:
            c = 1.0 / max(r.confirm_samples, 1)
            plug = max(plug, math.log(max(w.p_hat - delta, 0.0) + c) - math.log(w.q_hat + c))
        bound = r.epsilon_lower
        s = Scored(pair, bound, n, bound + 1e-3 * math.tanh(plug))  # plug-in only breaks ties
        if self.progress is not None:
            self.progress(self.scored, None)
        return s

    def offer(self, pair: tuple[Any, Any]) -> Scored | None:
        """Score a new candidate (duplicates are skipped) and keep the best ones."""
        key = (_safe_key(pair[0]), _safe_key(pair[1]))
        if key in self.seen:
            return None
        self.seen.add(key)
        s = self.score(pair)
        if s is not None:
            self.best.append(s)
            self.best.sort(key=lambda x: -x.score)
            del self.best[REFINE_TOP:]
        return s

    def decisive(self, s: Scored | None) -> bool:
        """An exploratory bound so far above the claim that further exploration is pointless."""
        return s is not None and s.bound > 2 * self.claim.epsilon + 1.0


def hypothesis_search(ex: Explorer, strategy: Any, max_examples: int,
                       root: np.random.SeedSequence) -> bool:
    """Score up to ``max_examples`` draws of ``strategy``, guided by ``target(score)``."""
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed

    state = {"done": False}

    @hseed(int(root.generate_state(1, dtype=np.uint32)[0]))
    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=False,
              phases=(Phase.generate, Phase.target), suppress_health_check=list(HealthCheck),
              report_multiple_bugs=False, print_blob=False)
    @given(strategy)
    def explore(pair: Any) -> None:
        if state["done"]:
            return
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgument(f"pairs strategy drew {fmt(pair)}, not a pair (d, d_prime)")
        s = ex.offer((pair[0], pair[1]))
        if s is not None:
            target(float(min(s.score, 1e6)), label="epsilon")
            if ex.decisive(s):
                state["done"] = True

    explore()
    return state["done"]


def shrink(ex: Explorer, best: Scored, relation: Relation | None,
            space: QuerySpace | None) -> tuple[Any, Any]:
    """Greedy shrink while the exploratory lower bound stays above the claimed ε."""
    eps = ex.claim.epsilon
    if not best.bound > eps:
        return best.pair
    neighbours = relation.are_neighbours if relation is not None else (
        space.are_neighbours if space is not None else None)
    if neighbours is None:
        return best.pair
    # a marginal witness gets few attempts, each scored on as many samples as it was, and a
    # shrink must not lower its bound; a decisive one may lose a quarter of it
    decisive = ex.decisive(best)
    pair, budget = best.pair, MAX_SHRINK if decisive else MAX_SHRINK // 6
    gate = max(eps, 0.75 * min(best.bound, 2 * eps + 1.0)) if decisive else best.bound
    improved = True
    while improved and budget > 0:
        improved = False
        for cand in _shrink_moves(pair, fixed_length=space is not None):
            if budget <= 0:
                break
            try:
                if not neighbours(cand[0], cand[1]):
                    continue
            except InvalidArgument:
                continue
            budget -= 1
            s = ex.score(cand, best.samples, tag="shrink")
            if s is not None and s.bound > gate:
                pair, improved = (cand[0], cand[1]), True
                break
    return pair


def replay(mechanism: Any, pair: tuple[Any, Any], claim: Any, samples: int, alpha: float,
            seed: np.random.SeedSequence, features: Any) -> str:
    ss = f"np.random.SeedSequence({seed.entropy!r}, spawn_key={tuple(seed.spawn_key)!r})"
    feat = "" if features is None else ", features=<features>"
    return (f"dpcheck.audit({mechanism_name(mechanism)}, {jsonable(pair[0])!r}, "
            f"{jsonable(pair[1])!r}, dpcheck.{claim!r}, samples={samples}, alpha={alpha}, "
            f"seed={ss}{feat})")
