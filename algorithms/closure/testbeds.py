"""Test beds for the relabeling pipeline (paper 004, §5–§7), shared by the property tests of
the correct pipeline and of its buggy variants.

* Worst-case neighbouring labelled samples (lists of ``(x, y)`` pairs over a small domain) that
  expose the pipeline's known failure modes (engineering notes ``shared/research/seed-004.md``
  §6).
* The sample sizes of the notes' derived utility chains (T-6.1 for A_PrivateAgnostic, T-7.3
  per round of A_ClosureLearn): explicit constants where the paper gives O(·).
* A utility trial of A_ClosureLearn for ``check_accuracy``: each trial is one whole run of the
  learner on fresh cell counts.

References
----------
N. Alon, A. Beimel, S. Moran, U. Stemmer, "Closure Properties for Private Classification",
COLT 2020, Lemma 5.3 and Theorem 2.4 (restated as Theorem 6.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dpcheck.exact import privacy_loss

from .pipelines import ClosureLearn
from .relabel import EMLearner

__all__ = ["Pair", "erm_pair", "support_pair", "random_pairs", "worst_pair", "agnostic_size",
           "closure_round_size", "closure_trial"]

Pair = tuple[list[tuple[int, int]], list[tuple[int, int]]]


def erm_pair(a: int) -> Pair:
    """BUG-1's pair on thresholds over {0..3}: ``D1 = (a+1)×(0,1) + a×(3,0)`` makes all-ones the
    unique ERM pattern, ``D2`` (one (0,1) → (0,0)) makes all-zeros; ``T = D1``."""
    d1 = [(0, 1)] * (a + 1) + [(3, 0)] * a
    d2 = [(0, 1)] * a + [(0, 0)] + [(3, 0)] * a
    return d1 + d1, d2 + d1


def support_pair(a: int) -> Pair:
    """A substitution inside T that adds a point to P (BUG-6 / BUG-7 exposure)."""
    s1, _ = erm_pair(a)
    s2 = list(s1)
    s2[-1] = (1, 0)
    return s1, s2


def random_pairs(n_dom: int, n: int, count: int, seed: int) -> list[Pair]:
    """``count`` neighbouring samples of size ``n`` with few distinct cells (where the
    exponential-mechanism effects are strongest), from a fixed seed."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        cells = [(int(rng.integers(n_dom)), int(rng.integers(2))) for _ in range(3)]
        s = [cells[int(rng.integers(3))] for _ in range(n)]
        s2 = list(s)
        s2[int(rng.integers(n))] = (int(rng.integers(n_dom)), int(rng.integers(2)))
        out.append((s, s2))
    return out


def worst_pair(mech: Any, pairs: list[Pair]) -> tuple[float, Pair]:
    """The largest exact privacy loss of ``mech`` (which has ``pmf``) over ``pairs``."""
    losses = [privacy_loss(mech.pmf(a), mech.pmf(b)).epsilon for a, b in pairs]
    i = int(np.argmax(losses))
    return losses[i], pairs[i]


def agnostic_size(n_h: int, alpha: float, alpha_a: float, b: float) -> int:
    """|D| of the derived chain for A_PrivateAgnostic (notes T-6.1): max(9 m_A, Hoeffding E1,
    Claim 5.4 (VC = 1, |D| = |S|/2), pairs via Chernoff)."""
    m_a = math.ceil(max(4 / alpha_a, 8 / alpha_a) * math.log(2 * n_h / b))
    e1 = math.log(2 * n_h / b) / (2 * alpha ** 2)
    c54 = (4 / alpha) * math.log(1 / b) + (10 / alpha) * math.log(20 * math.e / alpha)
    pairs = (8 / (2 * alpha_a)) * math.log(n_h ** 2 / b)
    return math.ceil(max(9 * m_a, e1, c54, pairs))


def closure_round_size(cl: ClosureLearn, i: int, alpha: float, b: float) -> int:
    """|D_i| of the derived per-round chain of A_ClosureLearn (notes T-7.3) at accuracy α/k,
    β-terms b."""
    a = alpha / len(cl.classes)
    n_c = len(cl.classes[i]) * math.prod(len(c) for c in cl.classes[i + 1:])
    m_a = EMLearner(cl.classes[i]).sample_size(a, b)
    e1 = math.log(2 * n_c / b) / (2 * a ** 2)
    c54 = (4 / a) * math.log(1 / b) + (10 / a) * math.log(20 * math.e / a)
    pairs = (8 / (2 * a)) * math.log(len(cl.classes[i]) ** 2 / b)
    return math.ceil(max(9 * m_a, e1, c54, pairs))


def closure_trial(cl: ClosureLearn, d_size: int, target: np.ndarray
                  ) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``trial(size, rng)`` for :func:`dpcheck.check_accuracy`: the error of ``size``
    independent A_ClosureLearn runs, each on fresh D_i and T_i cell counts of ``d_size``
    examples drawn uniformly over the domain and labelled by ``target``."""
    n = cl.n
    cell_p = np.zeros((n, 2))
    cell_p[np.arange(n), target] = 1 / n

    def trial(size: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty(size)
        for t in range(size):  # one whole learner run per trial
            ch = []
            for _ in cl.classes:
                dc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
                tc = rng.multinomial(d_size, cell_p.reshape(-1)).reshape(n, 2)
                ch.append((dc, int(sum(1 << int(x) for x in np.flatnonzero((dc + tc).sum(1))))))
            hs = cl.learn_chunks(ch, 1, rng)[0]
            out[t] = float((cl.hypothesis(hs.tolist()) != target).mean())
        return out

    return trial
