"""``check_accuracy()``: test an "(α, β)-accurate" claim by repeated independent trials.

A claim "with probability ≥ 1 − β the error is ≤ α" is a claim about a Bernoulli rate: the
failure probability ``P[error > α]`` is at most β. ``check_accuracy`` runs ``trials``
independent trials, counts failures ``k``, and tests H0 "failure rate ≤ β" with the exact
one-sided binomial test (``scipy.stats.binomtest(k, trials, β, alternative="greater")``);
``failure_upper`` is the one-sided Clopper–Pearson upper bound on the failure rate at level
``confidence``. A violation is declared iff the p-value ≤ ``confidence`` (equivalently, the
Clopper–Pearson *lower* bound at that level exceeds β).

References
----------
C. J. Clopper, E. S. Pearson, Biometrika 26 (1934); the (α, β)-accuracy notion of the seed
papers (e.g. seed 003, Definition 2.1; seed 004, §2).
"""

from __future__ import annotations

import inspect

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import check_alpha, check_int, check_probability, check_real, check_seed
from .errors import AccuracyViolation, InvalidArgument
from .executor import check_executor, chunk_sizes, run_chunks
from .rng import generator
from .stats import cp_lower, cp_upper

__all__ = ["AccuracyResult", "check_accuracy"]

#: Vectorised trials are drawn in batches of this many (fixed: results depend on it).
BATCH = 1 << 16


@dataclass(frozen=True)
class AccuracyResult:
    """Outcome of :func:`check_accuracy`.

    Attributes
    ----------
    violation
        The claim "P[error > alpha] ≤ beta" is refuted at level ``confidence``.
    failure_rate
        Observed fraction of trials with error > alpha.
    failure_upper, failure_lower
        One-sided Clopper–Pearson bounds on the failure probability (each at ``confidence``).
    p_value
        Exact one-sided binomial p-value of H0 "failure probability ≤ beta".
    """

    alpha: float
    beta: float
    trials: int
    failures: int
    failure_rate: float
    failure_lower: float
    failure_upper: float
    p_value: float
    violation: bool
    confidence: float
    error_quantile: float
    seconds: float
    seed: dict[str, object]
    name: str

    def summary(self) -> str:
        """Two lines for people."""
        verdict = "VIOLATION" if self.violation else "no violation found"
        return (f"{self.name}: claim P[error > {self.alpha:g}] <= {self.beta:g} -> {verdict} "
                f"(p-value={self.p_value:.3g})\n  failures {self.failures}/{self.trials} = "
                f"{self.failure_rate:.4g} (upper bound {self.failure_upper:.4g}); "
                f"empirical (1-beta)-quantile of the error = {self.error_quantile:.4g}")

    def raise_if_violation(self) -> AccuracyResult:
        """Raise :class:`~dpcheck.AccuracyViolation` (carrying this result) if refuted."""
        if self.violation:
            raise AccuracyViolation(self.summary(), self)
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON-safe record."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _takes_size(trial: Callable[..., Any]) -> bool:
    try:
        params = [p for p in inspect.signature(trial).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return len(params) >= 2


def check_accuracy(
    trial: Callable[..., Any],
    *,
    alpha: float,
    beta: float,
    trials: int = 2000,
    confidence: float = 0.05,
    seed: int | np.random.SeedSequence | None = None,
    name: str | None = None,
    executor: Any = None,
) -> AccuracyResult:
    """Test "with probability ≥ 1 − beta, error ≤ alpha" by ``trials`` independent trials.

    Parameters
    ----------
    trial
        Either ``trial(size, rng) -> array of size errors`` (vectorised, preferred) or
        ``trial(rng) -> one error``; errors are real numbers, NaN is rejected.
    alpha
        The accuracy threshold (any real; an error counts as a failure iff ``error > alpha``).
    beta
        Claimed failure probability, in [0, 1).
    trials
        Number of independent trials, ≥ 1.
    confidence
        Significance level of the test (the "α" of the statistical test; not the accuracy α).
    seed
        As for :func:`dpcheck.audit`; ``None`` means 0.
    name
        Label for reports.
    executor
        ``None``, a :class:`concurrent.futures.Executor` or a Dask ``distributed.Client``:
        batches of :data:`BATCH` trials (each with its own seed) run on its workers. The result
        does not depend on it.

    Returns
    -------
    AccuracyResult
    """
    start = time.perf_counter()
    if not callable(trial):
        raise InvalidArgument(f"trial={trial!r} must be callable")
    alpha = check_real("alpha", alpha)
    beta = check_probability(beta, "beta")
    if beta >= 1.0:
        raise InvalidArgument(f"beta={beta!r} must be in [0, 1)")
    trials = check_int(trials, "trials", minimum=1)
    confidence = check_alpha(confidence, "confidence")
    seed_seq = check_seed(seed)
    executor = check_executor(executor)
    vectorised = _takes_size(trial)
    tasks = [(trial, vectorised, size, seed_seq, i)
             for i, size in enumerate(chunk_sizes(trials, BATCH))]
    errors = np.concatenate(run_chunks(executor, run_batch, tasks))
    failures = int(np.count_nonzero(errors > alpha))
    from scipy.stats import binomtest  # lazy: scipy.stats costs ~1.5 s at import

    p_value = float(binomtest(failures, trials, beta, alternative="greater").pvalue)
    return AccuracyResult(
        alpha=alpha, beta=beta, trials=trials, failures=failures,
        failure_rate=failures / trials,
        failure_lower=float(cp_lower(failures, trials, confidence)),
        failure_upper=float(cp_upper(failures, trials, confidence)),
        p_value=p_value, violation=bool(p_value <= confidence), confidence=confidence,
        error_quantile=float(np.quantile(errors, 1.0 - beta)) if beta > 0 else float(errors.max()),
        seconds=time.perf_counter() - start,
        seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
        name=name or getattr(trial, "__qualname__", repr(trial)),
    )


def run_batch(
    trial: Callable[..., Any], vectorised: bool, size: int, seed_seq: np.random.SeedSequence,
    index: int,
) -> np.ndarray:
    """Errors of batch ``index`` (``size`` trials) on its own stream: batch 0 on the stream
    ``"accuracy"`` (as in earlier versions), batch ``i ≥ 1`` on its child ``i``."""
    rng = generator(seed_seq, "accuracy") if index == 0 else generator(seed_seq, "accuracy", index)
    try:
        if vectorised:
            errors = np.asarray(trial(size, rng), dtype=np.float64)
            if errors.shape != (size,):
                raise InvalidArgument(
                    f"trial returned shape {errors.shape} for size={size}; it must return "
                    f"({size},) errors")
        else:
            errors = np.array([float(trial(rng)) for _ in range(size)])
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with context
        raise InvalidArgument(f"trial raised {type(exc).__name__}: {exc}") from exc
    if np.isnan(errors).any():
        raise InvalidArgument("trial returned NaN errors")
    return errors
