"""``audit_pairs()``: audit one claim on a list of neighbouring pairs, α split built in.

A claim is refuted if it fails on *any* neighbouring pair, so auditing several pairs is a family
of tests: each pair is audited at ``alpha / len(pairs)`` (Bonferroni) on its own seed stream, and
the joint statement — every reported bound holds — keeps probability ≥ 1 − alpha. The result
is the largest bound over the pairs with the audit that certifies it.

References
----------
``shared/design.md`` §4 (all choices inside the α budget); DP-Sniper's DD-Search and StatDP
both audit lists of input patterns (``shared/research/anchors-auditing.md`` §2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._validation import check_alpha, check_seed
from .audit import audit
from .claims import ApproxDP, PureDP
from .errors import InvalidArgument, PrivacyViolation
from .results import AuditResult
from .rng import child

__all__ = ["PairsResult", "audit_pairs"]


@dataclass(frozen=True)
class PairsResult:
    """Outcome of :func:`audit_pairs`: one :class:`~dpcheck.AuditResult` per pair (each at
    ``alpha / len(results)``), the index of the pair with the largest bound, and that bound."""

    results: tuple[AuditResult, ...]
    best: int
    alpha: float

    @property
    def violation(self) -> bool:
        """The claim is refuted on some pair (family level ``alpha``)."""
        return any(r.violation for r in self.results)

    @property
    def epsilon_lower(self) -> float:
        """The largest lower bound over the pairs (all hold jointly with prob. ≥ 1 − alpha)."""
        return self.results[self.best].epsilon_lower

    @property
    def audit(self) -> AuditResult:
        """The audit of the pair with the largest bound."""
        return self.results[self.best]

    @property
    def p_value(self) -> float:
        """Bonferroni p-value of "the claim holds on every pair"."""
        return min(1.0, len(self.results) * min(r.p_value for r in self.results))

    def raise_if_violation(self) -> PairsResult:
        """Raise :class:`~dpcheck.PrivacyViolation` (carrying the worst audit) if refuted."""
        if self.violation:
            worst = max(self.results, key=lambda r: (r.violation, r.epsilon_lower))
            raise PrivacyViolation(worst.summary(), worst)
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record."""
        return {"alpha": self.alpha, "violation": self.violation,
                "epsilon_lower": self.epsilon_lower, "best": self.best,
                "p_value": self.p_value, "results": [r.to_dict() for r in self.results]}


def audit_pairs(
    mechanism: Any,
    pairs: Sequence[tuple[Any, Any]],
    claim: PureDP | ApproxDP,
    *,
    alpha: float = 0.05,
    seed: int | Any = None,
    **kwargs: Any,
) -> PairsResult:
    """Audit ``claim`` on every pair of ``pairs`` at ``alpha / len(pairs)`` each.

    Parameters
    ----------
    mechanism, claim
        As for :func:`dpcheck.audit`.
    pairs
        A non-empty sequence of ``(d, d_prime)`` pairs.
    alpha
        Family level: all the reported bounds hold jointly with probability ≥ 1 − alpha.
    seed
        Root seed; pair ``i`` is audited on the child stream ``("pair", i)``.
    **kwargs
        Passed to :func:`dpcheck.audit` (``samples``, ``relation``, ``features``,
        ``executor``, …).

    Returns
    -------
    PairsResult

    Examples
    --------
    >>> import numpy as np, dpcheck
    >>> def noisy_max_index(data, size, rng):
    ...     return np.argmax(np.asarray(data) + rng.laplace(0, 2.0, (size, len(data))), axis=1)
    >>> r = dpcheck.audit_pairs(noisy_max_index, [([1, 0], [0, 1]), ([1, 1], [0, 1])],
    ...                         dpcheck.PureDP(1.0), samples=50_000, seed=0)
    >>> r.violation, len(r.results)
    (False, 2)
    """
    alpha = check_alpha(alpha)
    root = check_seed(seed)
    try:
        pairs = list(pairs)
    except TypeError as exc:
        raise InvalidArgument(f"pairs={pairs!r} must be a sequence of (d, d_prime)") from exc
    if not pairs:
        raise InvalidArgument("pairs=[] must contain at least one (d, d_prime) pair")
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgument(f"pairs[{i}]={pair!r} must be a (d, d_prime) pair")
    level = alpha / len(pairs)
    results = tuple(audit(mechanism, d, d_prime, claim, alpha=level,
                          seed=child(root, "pair", i), **kwargs)
                    for i, (d, d_prime) in enumerate(pairs))
    best = max(range(len(results)), key=lambda i: results[i].epsilon_lower)
    return PairsResult(results, best, alpha)
