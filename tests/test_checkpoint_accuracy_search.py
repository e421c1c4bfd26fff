"""Checkpoints of ``check_accuracy`` and ``find_counterexample`` (issue 14 part 3).

* ``check_accuracy(..., checkpoint=PATH)`` saves every finished batch as its failure count and
  its largest errors — as many as the reported ``(1 − β)``-quantile can need — and an
  interrupted check rerun with the same arguments draws only the missing batches, with the
  same result bit for bit. The quantile computed from the batches' tails equals
  ``np.quantile`` of all errors exactly (property test; a tail one element too short is caught).
* ``find_counterexample(..., checkpoint=PATH)`` hands the file to its confirming audit: a rerun
  redoes the seeded exploration and draws only the missing confirmation chunks.
* Checkpoints written for other arguments, of another kind, or unreadable are refused.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcheck.core.accuracy as accuracy_module
from dpcheck.core.checkpoint import content_digest
from dpcheck import InvalidArgument, PureDP, audit, check_accuracy, find_counterexample
from dpcheck.core.accuracy import run_batch, tail_size, upper_quantile
from dpcheck.core.results import untimed as untimed_record
from dpcheck.internal.rng import generator

CONFIRM = sys.modules["dpcheck.core.confirm"]


class _Stop(KeyboardInterrupt):
    pass


def untimed(result) -> dict:
    return untimed_record(result.to_dict())


def laplace_errors(size, rng):
    """Errors of a Laplace(1/ε) release, ε = 1: ``|Lap(1)|``."""
    return np.abs(rng.laplace(0.0, 1.0, size))


class Interrupting:
    """A vectorised trial that raises (as Ctrl-C would) at its ``stop``-th call, and counts."""

    def __init__(self, stop: int | None = None) -> None:
        self.stop, self.calls = stop, 0

    def __call__(self, size, rng):
        self.calls += 1
        if self.stop is not None and self.calls == self.stop:
            raise _Stop
        return laplace_errors(size, rng)


# ------------------------------------------------------------------ quantile from batch tails

def tails_of(errors: np.ndarray, batch: int, keep: int) -> np.ndarray:
    parts = [np.sort(errors[i:i + batch])[-keep:] for i in range(0, errors.size, batch)]
    return np.concatenate(parts)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(n=st.integers(1, 400), batch=st.integers(1, 64), beta=st.floats(0.0, 0.999),
       seed=st.integers(0, 2**32 - 1), ties=st.booleans())
def test_quantile_from_batch_tails_is_numpys(n, batch, beta, seed, ties):
    rng = np.random.default_rng(seed)
    errors = rng.integers(0, 5, n).astype(float) if ties else rng.standard_cauchy(n)
    expected = float(np.quantile(errors, 1 - beta)) if beta > 0 else float(errors.max())
    got = upper_quantile(tails_of(errors, batch, tail_size(n, beta)), n, beta)
    assert got == expected  # bit for bit


def test_a_tail_too_short_is_caught():
    """The mutant: batches keep 3 fewer errors than :func:`tail_size` (no rounding margin and
    one short); the same comparison must then fail for some input."""
    rng = np.random.default_rng(0)
    wrong = 0
    for n in range(20, 200, 7):
        errors = rng.standard_normal(n)
        beta = 0.1
        keep = tail_size(n, beta) - 3
        top = np.sort(tails_of(errors, 8, keep))[-keep:]
        filled = np.concatenate([np.full(n - keep, top[0]), top])
        wrong += float(np.quantile(filled, 1 - beta)) != float(np.quantile(errors, 1 - beta))
    assert wrong > 0


def test_check_accuracy_equals_the_statistics_of_all_errors(monkeypatch):
    monkeypatch.setattr(accuracy_module, "BATCH", 1_000)
    seq = np.random.SeedSequence(7)
    r = check_accuracy(laplace_errors, alpha=3.0, beta=0.05, trials=10_500, seed=seq)
    errors = np.concatenate([run_batch(laplace_errors, True, size, seq, i)
                             for i, size in enumerate([1_000] * 10 + [500])])
    assert r.failures == int(np.count_nonzero(errors > 3.0))
    assert r.error_quantile == float(np.quantile(errors, 0.95))
    assert abs(r.error_quantile - np.log(20)) < 0.1  # |Lap(1)|: P[> t] = e^{-t}


# ------------------------------------------------------------------ check_accuracy checkpoints

def accuracy(trial, path=None, executor=None, **kw):
    args = dict(alpha=3.0, beta=0.05, trials=10_500, seed=11, name="laplace errors")
    args.update(kw)
    return check_accuracy(trial, checkpoint=path, executor=executor, **args)


def test_interrupted_accuracy_check_resumes_from_its_checkpoint(monkeypatch, tmp_path):
    monkeypatch.setattr(accuracy_module, "BATCH", 1_000)  # 11 batches
    path = tmp_path / "acc.json"
    full = accuracy(Interrupting())
    with pytest.raises(_Stop):
        accuracy(Interrupting(stop=5), path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "dpcheck-accuracy-checkpoint"
    assert sorted(doc["chunks"]) == sorted(f"0/{i}" for i in range(4))
    keep = tail_size(10_500, 0.05)
    assert all(len(v) == 1 + min(keep, 1_000) for v in doc["chunks"].values())
    # what batch 0 saved: its failure count and its largest errors
    e0 = laplace_errors(1_000, generator(np.random.SeedSequence(11), "accuracy"))
    assert doc["chunks"]["0/0"] == [int((e0 > 3.0).sum()), *np.sort(e0)[-min(keep, 1_000):]]

    resumed_trial = Interrupting()
    resumed = accuracy(resumed_trial, path)
    assert resumed_trial.calls == 11 - 4  # only the missing batches
    assert untimed(resumed) == untimed(full)
    again_trial = Interrupting()
    with ThreadPoolExecutor(2) as threads:  # complete checkpoint: nothing left to draw
        again = accuracy(again_trial, path, executor=threads)
    assert again_trial.calls == 0 and untimed(again) == untimed(full)


def test_interrupt_on_an_executor_keeps_the_finished_batches(monkeypatch, tmp_path):
    monkeypatch.setattr(accuracy_module, "BATCH", 1_000)
    path = tmp_path / "acc.json"
    with ThreadPoolExecutor(2) as threads, pytest.raises(_Stop):
        accuracy(Interrupting(stop=6), path, executor=threads)
    saved = len(json.loads(path.read_text(encoding="utf-8"))["chunks"])
    assert 1 <= saved <= 10
    assert untimed(accuracy(Interrupting(), path)) == untimed(accuracy(Interrupting()))


def test_accuracy_checkpoint_of_other_arguments_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(accuracy_module, "BATCH", 1_000)
    path = tmp_path / "acc.json"
    accuracy(laplace_errors, path)
    with pytest.raises(InvalidArgument, match=r"accuracy check with other arguments "
                                              r"\(differs in alpha \(file 3, now 2\)\)"):
        accuracy(laplace_errors, path, alpha=2.0)
    with pytest.raises(InvalidArgument, match=r"differs in function"):
        accuracy(Interrupting(), path)
    audit_path = tmp_path / "audit.json"
    audit(lambda d, size, rng: rng.laplace(float(sum(d)), 1.0, size), [1.0], [0.0],
          PureDP(1.0), samples=2_000, checkpoint=audit_path)
    with pytest.raises(InvalidArgument, match="not a dpcheck accuracy check checkpoint"):
        accuracy(laplace_errors, audit_path)
    with pytest.raises(InvalidArgument, match="not a dpcheck audit checkpoint"):
        audit(lambda d, size, rng: rng.laplace(float(sum(d)), 1.0, size), [1.0], [0.0],
              PureDP(1.0), samples=2_000, checkpoint=path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["chunks"]["0/0"] = [-1, 0.5]
    doc["digest"] = content_digest(doc)  # a consistent digest: the structure check speaks
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidArgument, match="'chunks' must map chunk names"):
        accuracy(laplace_errors, path)
    with pytest.raises(InvalidArgument, match="checkpoint="):
        accuracy(laplace_errors, 3)


def test_infinite_errors_survive_the_checkpoint(monkeypatch, tmp_path):
    monkeypatch.setattr(accuracy_module, "BATCH", 100)

    def sometimes_infinite(size, rng):
        out = rng.random(size)
        out[rng.random(size) < 0.2] = np.inf
        return out

    path = tmp_path / "acc.json"
    first = check_accuracy(sometimes_infinite, alpha=0.5, beta=0.1, trials=1_000, seed=2,
                           checkpoint=path)
    again = check_accuracy(sometimes_infinite, alpha=0.5, beta=0.1, trials=1_000, seed=2,
                           checkpoint=path)
    assert first.error_quantile == np.inf and untimed(first) == untimed(again)


# ------------------------------------------------------------------ find_counterexample

def leaky_laplace(data, size, rng):
    """Laplace with scale 1/2 claimed ε = 1 (true ε = 2)."""
    return float(np.sum(data)) + rng.laplace(0.0, 0.5, size)


def search(**kw):
    return find_counterexample(leaky_laplace, PureDP(1.0), pairs=[([1.0], [0.0])],
                               samples=60_000, explore_samples=2_000, seed=5, **kw)


def test_interrupted_search_resumes_its_confirming_audit(monkeypatch, tmp_path):
    monkeypatch.setattr(CONFIRM, "CHUNK", 5_000)
    path = tmp_path / "search.json"
    full = search()
    assert full.found
    confirm_seed = full.audit.seed
    real = CONFIRM.count_chunk
    drawn: list[tuple[int, int]] = []  # chunks of the confirming audit (not the exploration's)

    def confirming(task) -> bool:
        seq = task[3]
        return {"entropy": seq.entropy, "spawn_key": list(seq.spawn_key)} == confirm_seed

    def stop_after_3(*task):
        if confirming(task):
            if len(drawn) == 3:
                raise _Stop
            drawn.append((task[4], task[5]))
        return real(*task)

    monkeypatch.setattr(CONFIRM, "count_chunk", stop_after_3)
    with pytest.raises(_Stop):
        search(checkpoint=path)
    assert len(json.loads(path.read_text(encoding="utf-8"))["chunks"]) == 3

    drawn.clear()

    def counting(*task):
        if confirming(task):
            drawn.append((task[4], task[5]))
        return real(*task)

    monkeypatch.setattr(CONFIRM, "count_chunk", counting)
    resumed = search(checkpoint=path)
    total = sum(-(-n // 5_000) for n in (full.audit.witness.bound.n_p,
                                        full.audit.witness.bound.n_q))
    assert len(drawn) == total - 3 and (0, 0) not in drawn
    assert resumed.found and untimed(resumed.audit) == untimed(full.audit)
    assert resumed.pair == full.pair


def test_search_checkpoint_must_be_a_path():
    with pytest.raises(InvalidArgument, match=r"checkpoint=3 must be a file path or None"):
        search(checkpoint=3)
