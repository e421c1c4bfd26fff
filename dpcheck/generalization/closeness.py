"""``audit_closeness()``: (ε, δ)-closeness of two arbitrary samplers (Cummings et al., Def. 6).

Two output distributions ``J1``, ``J2`` are (ε, δ)-close when, for every event ``O``,
``J1(O) ≤ e^ε J2(O) + δ`` and ``J2(O) ≤ e^ε J1(O) + δ``. Differential privacy is closeness of
``M(D)`` and ``M(D′)`` for neighbouring ``D, D′``; perfect generalization is closeness of ``M(T)``
and a simulator. This module does **not** re-implement the statistics: the two samplers are
wrapped as one mechanism whose ``data`` argument (0 or 1) selects the sampler, and
:func:`dpcheck.audit` (explore → confirm, Clopper–Pearson, Bonferroni over candidates and the two
directions) runs on the pair ``(0, 1)`` with no neighbour relation. Its result is re-labelled:

* ``delta_lower`` — lower confidence bound on ``δ*(ε) = max(HS_ε(J1‖J2), HS_ε(J2‖J1))`` at the
  claimed ε (hockey-stick divergence, the smallest δ for which the pair is (ε, δ)-close);
* ``epsilon_lower`` — lower confidence bound on ``ε*(δ) = inf{ε : δ*(ε) ≤ δ}`` at the claimed δ.

Both hold jointly with probability ≥ 1 − alpha. When both samplers expose ``pmf()``, the exact
``δ*(ε)`` and ``ε*(δ)`` are reported as well (:mod:`dpcheck.exact`).

References
----------
R. Cummings, K. Ligett, K. Nissim, A. Roth, Z. S. Wu, "Adaptive learning with robust
generalization guarantees", COLT 2016, Definition 6 ((ε, δ)-closeness).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.claims import Closeness
from dpcheck.core.audit import audit
from dpcheck.core.results import AuditResult, json_safe
from dpcheck.errors import InvalidArgument, PrivacyViolation
from dpcheck.exact import privacy_loss
from dpcheck.validation import fmt

__all__ = [
    "ClosenessResult",
    "as_output_sampler",
    "audit_closeness",
    "exact_closeness",
]

class _OutputSampler:
    """A distribution given as ``sampler(size, rng)`` (or ``.sample(size, rng)``), optional pmf."""

    def __init__(self, sample: Callable[[int, np.random.Generator], Any],
                 pmf: Callable[[], Mapping[Any, float]] | None, name: str) -> None:
        self.sample = sample
        self.pmf = pmf
        self.name = name


def as_output_sampler(sampler: Any, name: str = "sampler") -> _OutputSampler:
    """Normalise an output distribution: a callable ``sampler(size, rng) -> ndarray``, an object
    with ``.sample(size, rng)`` (and optionally ``.pmf() -> mapping``), or a finite pmf given as
    a mapping ``output -> probability`` (sampled exactly). Raises :class:`InvalidArgument`
    naming ``name`` for anything else."""
    if isinstance(sampler, Mapping):
        dist = privacy_loss(sampler, sampler)  # validates the mapping (sums to 1, ≥ 0)
        outs = np.asarray(dist.outputs)
        probs = np.asarray(dist.p_values, dtype=float)
        probs = probs / probs.sum()
        frozen = {k: float(v) for k, v in zip(dist.outputs, dist.p_values)}
        return _OutputSampler(lambda size, rng: outs[rng.choice(len(outs), size=size, p=probs)],
                              lambda: frozen, f"pmf({len(outs)} outputs)")
    method = getattr(sampler, "sample", None)
    sample = method if callable(method) else sampler if callable(sampler) else None
    if sample is None:
        raise InvalidArgument(f"{name}={fmt(sampler)} must be a sampler: callable as "
                              f"{name}(size, rng), an object with .sample(size, rng), or a pmf "
                              "mapping output -> probability")
    pmf = getattr(sampler, "pmf", None)
    label = getattr(sampler, "__qualname__", None) or type(sampler).__name__
    return _OutputSampler(sample, pmf if callable(pmf) else None, str(label))


class _PairMechanism:
    """Two samplers as one mechanism: ``data`` 0 draws from ``a``, 1 from ``b``."""

    def __init__(self, a: _OutputSampler, b: _OutputSampler) -> None:
        self._samplers = (a, b)
        self.__qualname__ = f"closeness[{a.name} | {b.name}]"
        if a.pmf is not None and b.pmf is not None:
            self.pmf = lambda data: self._samplers[int(data)].pmf()  # type: ignore[misc]

    def sample(self, data: int, size: int, rng: np.random.Generator) -> Any:
        return self._samplers[int(data)].sample(size, rng)


def exact_closeness(pmf_a: Mapping[Any, float], pmf_b: Mapping[Any, float],
                    claim: Any) -> tuple[float, float]:
    """Exact ``(ε*(claim.delta), δ*(claim.epsilon))`` of two finite distributions
    (hockey-stick divergence in both directions; ``inf`` ε on a support mismatch > δ)."""
    c = Closeness.of(claim)
    loss = privacy_loss(pmf_a, pmf_b)
    return loss.epsilon_for_delta(c.delta), loss.delta(c.epsilon)


@dataclass(frozen=True)
class ClosenessResult:
    """Outcome of :func:`audit_closeness`.

    Attributes
    ----------
    claim
        The audited :class:`Closeness` claim.
    violation
        ``True`` iff "the two distributions are (ε, δ)-close" is refuted at confidence 1 − alpha.
    epsilon_lower
        Lower confidence bound on ``ε*(claim.delta)``; may be ``inf``.
    delta_lower
        Lower confidence bound on ``δ*(claim.epsilon)`` (same confidence, jointly).
    p_value
        Bonferroni p-value of H0 "the pair is (ε, δ)-close".
    direction
        ``"a>b"`` (the witness event is likelier under ``a``) or ``"b>a"``.
    exact_epsilon, exact_delta
        Exact ``ε*(δ)`` and ``δ*(ε)`` when both samplers have a pmf, else ``None``.
    audit
        The underlying :class:`~dpcheck.AuditResult` on the wrapped pair (``d`` = a, ``d′`` = b).
    """

    claim: Closeness
    violation: bool
    epsilon_lower: float
    delta_lower: float
    p_value: float
    direction: str
    alpha: float
    samples: int
    exact_epsilon: float | None
    exact_delta: float | None
    audit: AuditResult

    def summary(self) -> str:
        """A few lines: verdict, bounds, witness, exact values when known."""
        verdict = "NOT CLOSE" if self.violation else "no violation found"
        lines = [(f"closeness {self.claim.describe()} -> {verdict} (alpha={self.alpha:g}, "
                  f"p-value={self.p_value:.3g})"),
                 (f"  delta*(eps) >= {self.delta_lower:.4g}, eps*(delta) >= "
                  f"{self.epsilon_lower:.4f}")]
        w = self.audit.witness
        if w is not None:
            lines.append("  witness: " + w.describe().replace("M(D')", "b").replace("M(D)", "a"))
        if self.exact_delta is not None:
            lines.append(f"  exact: delta*(eps) = {self.exact_delta:.6g}, "
                         f"eps*(delta) = {self.exact_epsilon:.6g}")
        return "\n".join(lines)

    def raise_if_violation(self) -> ClosenessResult:
        """Raise :class:`~dpcheck.PrivacyViolation` (carrying this result) if refuted."""
        if self.violation:
            raise PrivacyViolation(self.summary(), self)  # type: ignore[arg-type]
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record (``inf`` kept as a float, like :class:`~dpcheck.AuditResult`)."""
        inner = self.audit.to_dict()
        inner.pop("pair", None)
        return json_safe({
            "kind": "closeness", "claim": self.claim.to_dict(), "violation": self.violation,
            "epsilon_lower": self.epsilon_lower, "delta_lower": self.delta_lower,
            "p_value": self.p_value, "direction": self.direction, "alpha": self.alpha,
            "samples": self.samples, "exact_epsilon": self.exact_epsilon,
            "exact_delta": self.exact_delta, "audit": inner,
        })


def audit_closeness(
    sampler_a: Any,
    sampler_b: Any,
    claim: Any,
    *,
    samples: int = 100_000,
    alpha: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    **audit_kwargs: Any,
) -> ClosenessResult:
    """Audit "``sampler_a ≈_{ε,δ} sampler_b``" from samples, both directions.

    Parameters
    ----------
    sampler_a, sampler_b
        Output distributions: ``sampler(size, rng) -> ndarray`` of ``size`` outputs, an object
        with ``.sample(size, rng)`` (and optionally ``.pmf()`` for exact values), or a finite pmf
        mapping ``output -> probability``.
    claim
        :class:`Closeness` (``PureDP``/``ApproxDP`` are accepted and read as closeness claims).
    samples, alpha, seed
        As in :func:`dpcheck.audit` (per sampler; bounds hold jointly with prob. ≥ 1 − alpha).
    **audit_kwargs
        Passed on to :func:`dpcheck.audit` (``features``, ``candidates``, ``explore_fraction``,
        ``max_atoms``, ``progress``); ``relation`` is not accepted.

    Returns
    -------
    ClosenessResult

    References
    ----------
    Cummings et al., COLT 2016, Definition 6; dpcheck design §4 (the audit's statistical rules).

    Examples
    --------
    >>> import dpcheck
    >>> r = dpcheck.audit_closeness({0: 0.5, 1: 0.5}, {0: 0.9, 1: 0.1}, dpcheck.Closeness(1.0),
    ...                             samples=20_000, seed=0)
    >>> r.violation, r.exact_epsilon > 1.0
    (True, True)
    """
    c = Closeness.of(claim)
    if "relation" in audit_kwargs:
        raise InvalidArgument("relation= has no meaning for audit_closeness (two samplers, no "
                              "neighbouring datasets)")
    a = as_output_sampler(sampler_a, "sampler_a")
    b = as_output_sampler(sampler_b, "sampler_b")
    pair = _PairMechanism(a, b)
    res = audit(pair, 0, 1, c.as_dp(), samples=samples, alpha=alpha, seed=seed, **audit_kwargs)
    exact_eps = exact_delta = None
    if a.pmf is not None and b.pmf is not None:
        try:
            exact_eps, exact_delta = exact_closeness(a.pmf(), b.pmf(), c)
        except InvalidArgument as exc:
            raise InvalidArgument(f"sampler pmf is not a valid distribution: {exc}") from exc
    direction = "a>b" if res.witness is None or res.witness.direction == "d>d_prime" else "b>a"
    return ClosenessResult(
        claim=c, violation=res.violation, epsilon_lower=res.epsilon_lower,
        delta_lower=float(res.delta_lower or 0.0), p_value=res.p_value, direction=direction,
        alpha=res.alpha, samples=res.samples, exact_epsilon=exact_eps, exact_delta=exact_delta,
        audit=res,
    )
