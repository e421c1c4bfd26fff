"""Algorithm 3 ``A_Auxiliary(ε; U, V, W, A)`` (an analysis device of Lemma 3.4), exact pmf.

``T = U∘V`` is relabelled by Algorithm 1 (with ``W``), ``h̄`` is the smallest threshold consistent
with ``V^h`` (decision, notes §3.3: a deterministic function of ``V^h``), and the output is the
hypothesis ``A(T^h) ⊕ h̄`` as an ``N``-bit mask. ``A`` is *improper*: the exponential mechanism
over intervals ``1[lo ≤ x < hi]`` (a superclass of the thresholds) with ``#errors`` score, pure
``ε_A``-DP. Claim 3.5 is about neighbouring ``U`` with ``V, W`` public.

Sizes (decision, notes §6.6): ``Auxiliary`` does not split ``T``: callers pass ``U`` and ``V``
(any ``|U|, |V| ≥ 1``). When ``T`` is split as in the proof of Lemma 3.4
(``|U| = |V| = |T|/2``), odd ``|T|`` gives ``|U| = ⌈|T|/2⌉``. The proof of Claim 3.5 needs
``|W|/|T| ≤ (1 − ε)/ε``; violations raise ``InvalidArgument``.

Parameter range (decision, notes §6.5): ``ε ∈ (0, 1/3]`` is enforced, the setting of Lemma 3.4
(through Lemma 3.1's ``ε ≤ 1/3``); larger ``ε`` raises ``InvalidArgument`` naming ``epsilon``.

Order (decision, notes §6.1): ``T = U∘V`` enters only through counts, so it is a multiset; the
relabel EM and the interval learner ``A`` are symmetric in ``T^h``, and ``h̄`` depends on
``V^h``'s x-counts only.

References
----------
B. Li, W. Wang, P. Ye (seed 000): Algorithm 3, Claim 3.5, proof of Lemma 3.4; notes
``shared/research/seed-000.md`` §3.3, §6.1, §6.5, §6.6.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.validation import check_choice, check_epsilon, check_int
from dpcheck.errors import InvalidArgument

from .agnostic import relabel_log_probs
from .core import as_dataset, check_internal_epsilon, counts, prefix, sample_pmf

__all__ = ["AUX_BUGS", "Auxiliary"]

#: ``hbar_from_t``: h̄ consistent with all of ``T^h`` (reads U); ``em_eps_one``: B5 inside;
#: issue 27 (subtle): ``learner_scale_1_25`` (the interval learner at 1.25ε_A),
#: ``em_scale_1_25`` (Algorithm 1's EM at 1.25ε), ``proper_learner`` (the learner's class
#: collapses from the 16 intervals to the 6 thresholds on {0..4}: a proper A).
AUX_BUGS = ("reference", "hbar_from_t", "em_eps_one", "learner_scale_1_25", "em_scale_1_25",
            "proper_learner")


@dataclass(frozen=True)
class Auxiliary:
    """``A_Auxiliary`` with public ``V`` and ``W``; the mechanism's data is ``U``.

    Parameters
    ----------
    domain
        ``N ≥ 2``.
    epsilon
        ``ε ∈ (0, 1/3]`` (enforced, notes §6.5).
    v, w
        Public datasets (``(m, 2)`` arrays of ``(x, y)``).
    learner_epsilon
        ``ε_A ≤ 1`` of the interval learner.
    bug
        One of :data:`AUX_BUGS`.
    """

    domain: int
    epsilon: float
    v: Any
    w: Any
    learner_epsilon: float = 1.0
    bug: str = "reference"

    def __post_init__(self) -> None:
        check_int(self.domain, "domain", minimum=2)
        check_internal_epsilon(self.epsilon, "Lemma 3.4 setting")
        check_epsilon(self.learner_epsilon, "learner_epsilon")
        check_choice(self.bug, "bug", AUX_BUGS)
        if self.learner_epsilon > 1:
            raise InvalidArgument(f"learner_epsilon={self.learner_epsilon!r} must be <= 1")
        object.__setattr__(self, "v", as_dataset(self.v, self.domain, name="v"))
        object.__setattr__(self, "w", as_dataset(self.w, self.domain, name="w"))

    def _intervals(self) -> np.ndarray:
        n = self.domain
        if self.bug == "proper_learner":
            return np.array([(np.arange(n) >= t).astype(int) for t in range(n + 1)], np.int64)
        rows = {tuple(((np.arange(n) >= lo) & (np.arange(n) < hi)).astype(int))
                for lo in range(n + 1) for hi in range(lo, n + 1)}
        return np.array(sorted(rows), dtype=np.int64)

    def pmf(self, data: Any) -> dict[int, float]:
        """Exact law of the output mask ``Σ_x (A(T^h) ⊕ h̄)(x)·2^x``."""
        u = as_dataset(data, self.domain)
        t = np.concatenate([u, self.v])
        k, wn = len(t), len(self.w)
        if self.epsilon * wn > (1 - self.epsilon) * k + 1e-9:
            raise InvalidArgument(f"|W|/|T|={wn}/{k} must be <= (1-epsilon)/epsilon "
                                  "(proof of Claim 3.5)")
        ct = counts(t, self.domain)[None]
        cw = counts(self.w, self.domain)[None]
        lt, _ = relabel_log_probs(ct, cw, np.array([k]), np.array([wn]), ct + cw,
                                  epsilon=self.epsilon * (1.25 if self.bug == "em_scale_1_25"
                                                          else 1.0),
                                  bug="em_eps_one" if self.bug == "em_eps_one" else "reference")
        prob_t = np.exp(lt[0])
        grid = np.arange(self.domain)
        tx = t[:, 0]
        vx = (t if self.bug == "hbar_from_t" else self.v)[:, 0]
        pv = prefix(np.bincount(vx, minlength=self.domain))
        ints = self._intervals()
        bits = 1 << grid
        out: dict[int, float] = {}
        for a in range(self.domain + 1):
            if prob_t[a] == 0:
                continue
            lab = (tx >= a).astype(np.int64)
            errs = (ints[:, tx] != lab[None, :]).sum(1)
            lg = -self.learner_epsilon * (1.25 if self.bug == "learner_scale_1_25" else 1.0) \
                * errs / 2.0
            pg = np.exp(lg - lg.max())
            pg /= pg.sum()
            hbar = int(np.argmax(pv == pv[a]))
            hmask = (grid >= hbar).astype(np.int64)
            for g, p in zip(ints, pg):
                code = int(((g ^ hmask) * bits).sum())
                out[code] = out.get(code, 0.0) + float(prob_t[a] * p)
        return out

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` outputs drawn from the exact law (tiny inputs only)."""
        return sample_pmf(self.pmf(data), size, rng)
