"""Parallel and distributed sampling: the same seed gives the same result bit for bit whatever
runs the confirmation chunks (design §4 rule 5, wave-2 contract ``audit(..., executor=)``).

Chunks are fixed by sample count (``CHUNK`` is lowered here so that one small audit spans many
chunks per side); a process pool (spawn: nothing inherited but the pickled task) and a Dask
``LocalCluster`` must reproduce the local result exactly, errors raised on workers must read as
locally, and unpicklable work must be a named error.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import dpcheck
import dpcheck.core.confirm
from algorithms.mechanisms.noisy_sums import RepeatedLaplace
from algorithms.mechanisms.primitives import LaplaceSum
from dpcheck import InvalidArgument, PureDP, audit, check_accuracy, find_counterexample
from dpcheck.core.results import untimed

AUDIT_MODULE = sys.modules["dpcheck.core.confirm"]  # CHUNK and count_chunk live there
VECTOR = RepeatedLaplace(0.1, 5)  # true ε = 0.5; five columns: learned scores are fitted


@pytest.fixture(scope="module")
def process_pool():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            yield client


def _result(executor, monkeypatch, **kw):
    monkeypatch.setattr(AUDIT_MODULE, "CHUNK", 7_000)
    r = audit(VECTOR, [1.0], [0.0], PureDP(0.3), samples=120_000, seed=5, executor=executor,
              float_features=False, **kw)  # real-valued truth (float64 holes: float_features)
    return untimed(r.to_dict())


def test_same_result_on_threads_processes_and_dask(process_pool, dask_client, monkeypatch):
    local = _result(None, monkeypatch)
    assert local["violation"] and 0.3 < local["epsilon_lower"] <= 0.5
    assert any(f["name"] == "logit(output)" for f in local["features"]["features"])
    with ThreadPoolExecutor(3) as threads:
        assert _result(threads, monkeypatch) == local
    assert _result(process_pool, monkeypatch) == local
    assert _result(dask_client, monkeypatch) == local


def test_chunks_have_their_own_streams(monkeypatch):
    """Different chunking is a different (equally valid) draw: the chunk size is part of the
    procedure, the number of workers is not."""
    a = _result(None, monkeypatch)
    monkeypatch.setattr(AUDIT_MODULE, "CHUNK", 11_000)
    b = audit(VECTOR, [1.0], [0.0], PureDP(0.3), samples=120_000, seed=5).to_dict()
    assert a["witness"]["count_p"] != b["witness"]["count_p"]


def _fails_on_large_draws(data, size, rng):
    if size > 5_000:
        raise ValueError("confirmation chunk too large for this test")
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def test_worker_error_reads_as_the_local_error(dask_client):
    messages = []
    for executor in (None, ThreadPoolExecutor(2), dask_client):
        with pytest.raises(InvalidArgument) as info:
            audit(_fails_on_large_draws, [1.0], [0.0], PureDP(1.0), samples=20_000, seed=0,
                  executor=executor)
        messages.append(str(info.value))
    assert messages[0].startswith("mechanism raised ValueError: confirmation chunk too large")
    assert messages == [messages[0]] * 3


def test_unpicklable_work_on_a_process_pool_is_a_named_error(process_pool):
    def local_mechanism(data, size, rng):
        return rng.laplace(0.0, 1.0, size)

    with pytest.raises(InvalidArgument, match="picklable"):
        audit(local_mechanism, [1.0], [0.0], PureDP(1.0), samples=5_000, seed=0,
              executor=process_pool)


@pytest.mark.parametrize("bad", [object(), ThreadPoolExecutor, "client"])
def test_executor_must_submit(bad):
    with pytest.raises(InvalidArgument, match="executor="):
        audit(LaplaceSum(1.0), [1.0], [0.0], PureDP(1.0), samples=2_000, executor=bad)
    with pytest.raises(InvalidArgument, match="executor="):
        check_accuracy(lambda size, rng: rng.random(size), alpha=0.5, beta=0.5, trials=10,
                       executor=bad)


def _uniform_error(size, rng):
    return rng.random(size)


def test_accuracy_batches_are_executor_independent(dask_client):
    trials = 2 * dpcheck.core.accuracy.BATCH + 123
    kw = dict(alpha=0.9, beta=0.1, trials=trials, seed=2)
    local = check_accuracy(_uniform_error, **kw).to_dict()
    with ThreadPoolExecutor(2) as threads:
        for executor in (threads, dask_client):
            other = check_accuracy(_uniform_error, executor=executor, **kw).to_dict()
            for rec in (local, other):
                rec.pop("seconds", None)
            assert other == local
    assert abs(local["failure_rate"] - 0.1) < 0.01


def test_counterexample_search_confirms_on_the_executor():
    kw = dict(pairs=[([1.0], [0.0])], samples=20_000, explore_samples=2_000, seed=0)
    local = find_counterexample(LaplaceSum(0.5), PureDP(0.2), **kw)
    with ThreadPoolExecutor(2) as threads:
        other = find_counterexample(LaplaceSum(0.5), PureDP(0.2), executor=threads, **kw)
    assert local.found and other.found
    assert other.audit.epsilon_lower == local.audit.epsilon_lower


def test_cli_workers_flag_gives_the_local_result(tmp_path, monkeypatch, capsys):
    from dpcheck.cli import main

    (tmp_path / "dpcheck_exec_mechs.py").write_text(
        "def laplace_count(data, size, rng):\n"
        "    return sum(data) + rng.laplace(0.0, 2.0, size)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["audit", "dpcheck_exec_mechs:laplace_count", "--data", "[1.0]", "--data-prime",
            "[0.0]", "--claim", "pure:0.5", "--samples", "20000", "--json",
            "--no-float-features"]  # the real-valued truth; float64 `sum + noise` leaks
    code_local = main(argv)
    local = json.loads(capsys.readouterr().out)
    code_pool = main([*argv, "--workers", "2"])
    pooled = json.loads(capsys.readouterr().out)
    assert code_local == code_pool == 0 and untimed(pooled) == untimed(local)
    assert main([*argv, "--workers", "0"]) == 2
    assert "--workers=0 must be >= 1" in capsys.readouterr().err
