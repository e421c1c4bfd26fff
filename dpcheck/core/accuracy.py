"""``check_accuracy()``: test an "(α, β)-accurate" claim by repeated independent trials.

A claim "with probability ≥ 1 − β the error is ≤ α" is a claim about a Bernoulli rate: the
failure probability ``P[error > α]`` is at most β. ``check_accuracy`` runs ``trials``
independent trials, counts failures ``k``, and tests H0 "failure rate ≤ β" with the exact
one-sided binomial test (``scipy.stats.binomtest(k, trials, β, alternative="greater")``);
``failure_upper`` is the one-sided Clopper–Pearson upper bound on the failure rate at level
``confidence``. A violation is declared iff the p-value ≤ ``confidence`` (equivalently, the
Clopper–Pearson *lower* bound at that level exceeds β).

Trials run in batches of :data:`BATCH`, each on its own seed, locally or on an ``executor``;
a batch hands back only its failure count and its largest errors — as many as the reported
error quantile can need — so what travels back from workers and what is saved is
O(β·trials), and ``checkpoint=PATH`` saves it after every batch
(:class:`dpcheck.core.checkpoint.AccuracyCheckpoint`): an interrupted check rerun with the same
arguments draws only the missing batches and gives the same result bit for bit.

References
----------
C. J. Clopper, E. S. Pearson, Biometrika 26 (1934); the (α, β)-accuracy notion of the seed
papers (e.g. seed 003, Definition 2.1; seed 004, §2).
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.core.checkpoint import AccuracyCheckpoint, fingerprint_call
from dpcheck.core.executor import check_executor, chunk_sizes, run_chunks
from dpcheck.errors import AccuracyViolation, InvalidArgument
from dpcheck.internal.rng import generator
from dpcheck.stats import cp_lower, cp_upper
from dpcheck.validation import check_alpha, check_int, check_probability, check_real, check_seed

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

    def __repr__(self) -> str:
        """One line: the verdict and the failure rate against β."""
        return (f"AccuracyResult(violation={self.violation}, failure_rate="
                f"{self.failure_rate:.4g}, failure_upper={self.failure_upper:.4g}, "
                f"beta={self.beta:g}, alpha={self.alpha:g}, trials={self.trials}, "
                f"p_value={self.p_value:.3g})")

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
        # required positional parameters only: trial(rng, scale=1.0) is a one-output trial
        params = [p for p in inspect.signature(trial).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
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
    checkpoint: str | os.PathLike[str] | None = None,
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
        Significance level of the test (the "α" of the statistical test; not the accuracy α),
        in (0, 0.5]: a confidence level such as 0.95 is refused with a hint.
    seed
        As for :func:`dpcheck.audit`; ``None`` means 0.
    name
        Label for reports.
    executor
        ``None``, a :class:`concurrent.futures.Executor` or a Dask ``distributed.Client``:
        batches of :data:`BATCH` trials (each with its own seed) run on its workers. The result
        does not depend on it.
    checkpoint
        A file path: after every finished batch its failure count and largest errors are saved
        there; rerunning the same check with the same ``checkpoint`` draws only the missing
        batches, with the same result bit for bit. A checkpoint written by a check with other
        arguments is refused. The file is kept when the check completes.

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
    if confidence > 0.5:  # a confidence level passed where the significance level goes
        raise InvalidArgument(f"confidence={confidence!r} must be <= 0.5: it is the test's "
                              "significance level (its false-alarm probability, default 0.05),"
                              f" not a confidence level; for {confidence:.0%} confidence pass "
                              f"confidence={1 - confidence:.3g}")
    seed_seq = check_seed(seed)
    executor = check_executor(executor)
    vectorised = _takes_size(trial)
    keep = tail_size(trials, beta)
    sizes = chunk_sizes(trials, BATCH)
    saved = None
    if checkpoint is not None:
        saved = AccuracyCheckpoint.open(checkpoint, fingerprint_call(
            trial, alpha=alpha, beta=beta, trials=trials, confidence=confidence,
            batch=BATCH, seed={"entropy": seed_seq.entropy,
                               "spawn_key": list(seed_seq.spawn_key)}))
    summaries: dict[int, tuple[int, np.ndarray]] = {}
    if saved is not None:
        saved.check_chunks((len(sizes),))
    for i, size in enumerate(sizes):
        got = None if saved is None else saved.get(0, i, 1 + min(keep, size))
        if got is not None and got[0] > size:
            raise InvalidArgument(f"checkpoint={str(saved.path)!r}: batch {i} counts {got[0]} "
                                  f"failures of {size} trials: refusing to reuse it")
        if got is not None:
            summaries[i] = (int(got[0]), np.asarray(got[1:], dtype=np.float64))
    missing = [i for i in range(len(sizes)) if i not in summaries]
    tasks = [(trial, vectorised, sizes[i], seed_seq, i, alpha, keep) for i in missing]

    def done(j: int, result: tuple[int, np.ndarray]) -> None:
        summaries[missing[j]] = result
        if saved is not None:
            saved.record(0, missing[j], [result[0], *(float(e) for e in result[1])])

    run_chunks(executor, run_summary, tasks, on_result=done)
    failures = sum(summaries[i][0] for i in range(len(sizes)))
    tails = np.concatenate([summaries[i][1] for i in range(len(sizes))])
    from scipy.stats import binomtest  # lazy: scipy.stats costs ~1.5 s at import

    p_value = float(binomtest(failures, trials, beta, alternative="greater").pvalue)
    return AccuracyResult(
        alpha=alpha, beta=beta, trials=trials, failures=failures,
        failure_rate=failures / trials,
        failure_lower=float(cp_lower(failures, trials, confidence)),
        failure_upper=float(cp_upper(failures, trials, confidence)),
        p_value=p_value, violation=bool(p_value <= confidence), confidence=confidence,
        error_quantile=upper_quantile(tails, trials, beta),
        seconds=time.perf_counter() - start,
        seed={"entropy": seed_seq.entropy, "spawn_key": list(seed_seq.spawn_key)},
        name=name or getattr(trial, "__qualname__", repr(trial)),
    )


def tail_size(trials: int, beta: float) -> int:
    """How many of the largest errors determine the reported ``(1 − beta)``-quantile: those at
    and above sorted position ``⌊(1 − beta)(trials − 1)⌋`` (numpy's linear interpolation reads
    that position and the next), with a margin of 2 against rounding; 1 (the maximum) for
    ``beta = 0``."""
    if beta == 0:
        return 1
    return min(trials, trials - math.floor((1.0 - beta) * (trials - 1)) + 2)


def upper_quantile(tails: np.ndarray, trials: int, beta: float) -> float:
    """``np.quantile(errors, 1 − beta)`` (``errors.max()`` for ``beta = 0``) from ``tails``,
    the union of every batch's :func:`tail_size` largest errors, which contains the
    ``tail_size`` largest of all. The other positions are filled with the smallest of those,
    which changes no order statistic numpy reads, so the value is the same bit for bit. Where
    infinite errors leave numpy's interpolation undefined (``inf − inf``), the larger of the
    two order statistics it interpolates between."""
    keep = tail_size(trials, beta)
    top = np.sort(tails)[-keep:]
    if beta == 0:
        return float(top[-1])
    filled = np.concatenate([np.full(trials - keep, top[0]), top])
    with np.errstate(invalid="ignore"):
        value = float(np.quantile(filled, 1.0 - beta))
    if math.isnan(value):
        value = float(np.quantile(filled, 1.0 - beta, method="higher"))
    return value


def run_summary(
    trial: Callable[..., Any], vectorised: bool, size: int, seed_seq: np.random.SeedSequence,
    index: int, alpha: float, keep: int,
) -> tuple[int, np.ndarray]:
    """Batch ``index`` reduced to what the check needs (runs on the workers): its failure count
    (errors ``> alpha``) and its ``keep`` largest errors, ascending."""
    errors = run_batch(trial, vectorised, size, seed_seq, index)
    cut = size - min(keep, size)
    return int(np.count_nonzero(errors > alpha)), np.sort(np.partition(errors, cut)[cut:])


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
