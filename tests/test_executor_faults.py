"""Faults, checkpoints and progress of parallel audits (issue 14 part 3; design §4 rule 5).

* A Dask worker process killed (SIGKILL) mid-audit costs only its chunks: the scheduler redraws
  them on another worker from the same seeds and the result equals the local one bit for bit.
* A process-pool worker that dies breaks the pool (``BrokenProcessPool``): the audit raises
  :class:`~dpcheck.WorkerLost` naming it, and with ``checkpoint=`` a rerun on a new pool resumes
  and gives the local result.
* ``checkpoint=PATH``: an audit interrupted after k chunks resumes drawing only the missing
  chunks; checkpoints of other arguments or other selections are refused.
* A mechanism that raises, returns NaN or the wrong number of outputs on a worker (process pool,
  Dask worker process) gives the same one-line error as locally.
* ``progress`` counts the chunks finished on all workers, in completion order, up to the total.

The mechanisms live in a module written to a temporary directory put on ``sys.path`` before the
pools are spawned (spawned processes import it by name); they sleep only outside the pytest
process, so that audits on workers last a few seconds while the local reference runs are fast.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import textwrap
import types
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from dpcheck import InvalidArgument, PureDP, WorkerLost, audit
from dpcheck.core.audit import exploration_size
from dpcheck.core.checkpoint import content_digest
from dpcheck.core.results import untimed as untimed_record

AUDIT_MODULE = sys.modules["dpcheck.core.confirm"]  # CHUNK and count_chunk live there
CHUNK = 5_000
SAMPLES = 60_000  # 6 000 explored, Poisson(≈53 300) confirmed per side: 11 chunks per side
SPAWN = multiprocessing.get_context("spawn")

MECHANISMS = """
import os
import time

import numpy as np

PARENT = {parent}


def slow_laplace(data, size, rng):
    if os.getpid() != PARENT:
        time.sleep(0.15)
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def fails_on_large_draws(data, size, rng):
    if size > 2_000:
        raise ValueError("confirmation chunk too large for this test")
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def fails_differently(data, size, rng):  # each chunk (own stream) has its own message
    if size > 2_000:
        raise ValueError(f"chunk starting with {{rng.random():.12f}}")
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def nan_on_large_draws(data, size, rng):
    out = float(np.sum(data)) + rng.laplace(0.0, 1.0, size)
    if size > 2_000:
        out[3] = np.nan
    return out


def short_on_large_draws(data, size, rng):
    out = float(np.sum(data)) + rng.laplace(0.0, 1.0, size)
    return out[:-1] if size > 2_000 else out
"""


@pytest.fixture(scope="module")
def mechs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fault_mechs")
    (directory / "dpcheck_fault_mechs.py").write_text(
        textwrap.dedent(MECHANISMS.format(parent=os.getpid())), encoding="utf-8")
    sys.path.insert(0, str(directory))
    import dpcheck_fault_mechs

    yield dpcheck_fault_mechs
    sys.path.remove(str(directory))
    sys.modules.pop("dpcheck_fault_mechs", None)


@pytest.fixture(scope="module")
def dask_processes(mechs):
    """A LocalCluster of two worker processes (spawned after ``mechs`` is importable)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(AUDIT_MODULE, "CHUNK", CHUNK)


def untimed(result):
    return untimed_record(result.to_dict())


def run(mechanism, **kw):
    return audit(mechanism, [1.0], [0.0], PureDP(0.5), samples=SAMPLES, seed=3, **kw)


def n_chunks(result):
    """Confirmation chunks of both sides (sizes are Poisson: read them off the result)."""
    sizes = (result.witness.bound.n_p, result.witness.bound.n_q)
    return sum(-(-n // CHUNK) for n in sizes)


def test_killed_dask_worker_costs_only_its_chunks(mechs, dask_processes, small_chunks):
    client = dask_processes
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    killed = {}

    calls = []

    def kill_busiest(done, total, phase=""):  # after the first finished chunk: SIGKILL
        if phase != "confirm":  # exploration and selection are reported too
            return
        calls.append(done)
        if killed:
            return
        processing = client.processing()
        addr = max(processing, key=lambda a: len(processing[a]))
        killed.update(addr=addr, pid=pids[addr], chunks=len(processing[addr]))
        os.kill(pids[addr], signal.SIGKILL)

    distributed_result = run(mechs.slow_laplace, executor=client, progress=kill_busiest)
    local = run(mechs.slow_laplace)
    assert killed["chunks"] >= 1  # chunks that were on the killed worker, redrawn elsewhere
    assert untimed(distributed_result) == untimed(local)
    assert n_chunks(local) == 22
    assert len(calls) == 22 and calls[-1] == 2 * SAMPLES  # each chunk counted once
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the worker
    assert killed["pid"] not in client.run(os.getpid).values()


def test_dead_process_pool_worker_is_a_named_error_and_the_checkpoint_resumes(
        mechs, small_chunks, tmp_path):
    path = tmp_path / "audit.ckpt.json"
    pool = ProcessPoolExecutor(2, mp_context=SPAWN)
    killed = []

    def kill_one(done, total, phase=""):
        if not killed and phase == "confirm":
            killed.append(next(iter(pool._processes)))
            os.kill(killed[0], signal.SIGKILL)

    try:
        with pytest.raises(WorkerLost, match=r"BrokenProcessPool.*create a new pool.*checkpoint"):
            run(mechs.slow_laplace, executor=pool, progress=kill_one, checkpoint=path)
    finally:
        pool.shutdown(cancel_futures=True)
    saved = json.loads(path.read_text(encoding="utf-8"))["chunks"]
    assert 1 <= len(saved) < 22
    with ProcessPoolExecutor(2, mp_context=SPAWN) as fresh:
        resumed = run(mechs.slow_laplace, executor=fresh, checkpoint=path)
    assert untimed(resumed) == untimed(run(mechs.slow_laplace))


class _Stop(KeyboardInterrupt):
    pass


def test_interrupted_audit_resumes_from_its_checkpoint(mechs, small_chunks, tmp_path,
                                                       monkeypatch):
    path = tmp_path / "ckpt.json"
    full = run(mechs.slow_laplace)
    total = n_chunks(full)
    seen = []

    def stop_after_5(done, total_outputs, phase=""):
        if phase != "confirm":
            return
        seen.append(done)
        if len(seen) == 5:
            raise _Stop

    with pytest.raises(_Stop):
        run(mechs.slow_laplace, progress=stop_after_5, checkpoint=path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(doc["chunks"]) == sorted(f"0/{i}" for i in range(5))
    assert doc["events"] == [f"{w.event.describe()} ({w.direction})" for w in full.confirmed]
    assert doc["fingerprint"]["chunk"] == CHUNK and doc["fingerprint"]["samples"] == SAMPLES

    drawn = []
    real = AUDIT_MODULE.count_chunk

    def counting(*task):
        drawn.append((task[4], task[5]))
        return real(*task)

    monkeypatch.setattr(AUDIT_MODULE, "count_chunk", counting)
    resumed = run(mechs.slow_laplace, checkpoint=path)
    assert untimed(resumed) == untimed(full)
    assert len(drawn) == total - 5 and (0, 0) not in drawn  # only the missing chunks
    drawn.clear()
    with ThreadPoolExecutor(2) as threads:  # complete checkpoint: nothing left to draw
        again = run(mechs.slow_laplace, checkpoint=path, executor=threads)
    assert untimed(again) == untimed(full) and drawn == []


def test_interrupt_on_an_executor_keeps_the_finished_chunks(mechs, small_chunks, tmp_path):
    path = tmp_path / "ckpt.json"
    calls = []

    def stop_after_3(done, total, phase=""):
        if phase != "confirm":
            return
        calls.append(done)
        if len(calls) == 3:
            raise _Stop

    with ThreadPoolExecutor(2) as threads, pytest.raises(_Stop):
        run(mechs.slow_laplace, progress=stop_after_3, checkpoint=path, executor=threads)
    assert len(json.loads(path.read_text(encoding="utf-8"))["chunks"]) == 3
    assert untimed(run(mechs.slow_laplace, checkpoint=path)) == untimed(run(mechs.slow_laplace))


def test_checkpoint_of_other_arguments_or_selection_is_refused(mechs, small_chunks, tmp_path):
    path = tmp_path / "ckpt.json"
    run(mechs.slow_laplace, checkpoint=path)
    with pytest.raises(InvalidArgument, match=r"other arguments \(differs in seed\)"):
        audit(mechs.slow_laplace, [1.0], [0.0], PureDP(0.5), samples=SAMPLES, seed=4,
              checkpoint=path)
    with pytest.raises(InvalidArgument, match=r"differs in claim, pair_sha256"):
        audit(mechs.slow_laplace, [2.0], [0.0], PureDP(0.7), samples=SAMPLES, seed=3,
              checkpoint=path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["selection"] = "0" * 64  # as if exploration had selected other events
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidArgument, match="was edited or corrupted"):  # digest
        run(mechs.slow_laplace, checkpoint=path)
    doc["digest"] = content_digest(doc)  # a consistent file: the selection check speaks
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidArgument, match="not determined by its seed"):
        run(mechs.slow_laplace, checkpoint=path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="cannot be read"):
        run(mechs.slow_laplace, checkpoint=path)
    with pytest.raises(InvalidArgument, match="checkpoint="):
        run(mechs.slow_laplace, checkpoint=3)


@pytest.mark.parametrize("name, message", [
    ("fails_on_large_draws", "mechanism raised ValueError: confirmation chunk too large"),
    ("fails_differently", "mechanism raised ValueError: chunk starting with 0."),
    ("nan_on_large_draws", "mechanism returned NaN"),
    ("short_on_large_draws", "it must return exactly"),
])
def test_worker_errors_read_as_the_local_error(mechs, dask_processes, monkeypatch, name,
                                               message):
    """The error is that of the first failing chunk in the local order (chunks of 5 000: four
    per side), whichever worker fails first."""
    monkeypatch.setattr(AUDIT_MODULE, "CHUNK", CHUNK)
    mechanism = getattr(mechs, name)
    messages = []
    with ProcessPoolExecutor(2, mp_context=SPAWN) as pool, ThreadPoolExecutor(3) as threads:
        for executor in (None, threads, pool, dask_processes):
            with pytest.raises(InvalidArgument) as info:
                audit(mechanism, [1.0], [0.0], PureDP(1.0), samples=20_000, seed=0,
                      executor=executor)
            messages.append(str(info.value))
    assert message in messages[0] and "\n" not in messages[0]
    assert messages == [messages[0]] * 4


def test_progress_counts_chunks_finished_on_all_workers(mechs, dask_processes, small_chunks):
    explore = 2 * exploration_size(SAMPLES)
    reference = None
    with ThreadPoolExecutor(3) as threads:
        for executor in (None, threads, dask_processes):
            every: list[tuple[int, int, str]] = []
            result = run(mechs.slow_laplace, executor=executor,
                         progress=lambda done, total, phase, every=every: every.append(
                             (done, total, phase)))
            reference = reference or untimed(result)
            assert untimed(result) == reference
            assert [p for _, _, p in every[:4]] == ["explore"] * 3 + ["select"]
            calls = [(d, t) for d, t, p in every if p == "confirm"]
            assert len(calls) == n_chunks(result) == 22  # one call per finished chunk
            assert all(total == 2 * SAMPLES for _, total in calls)
            done = [d for d, _ in calls]
            assert done == sorted(done) and explore < done[0] and done[-1] == 2 * SAMPLES


def test_work_the_workers_cannot_import_is_a_named_error(dask_processes):
    """A mechanism whose module exists only in this process: a one-line error naming the
    module, the process pool stays usable and Dask does not wait forever for the task."""
    module = types.ModuleType("dpcheck_only_here")
    exec("import numpy as np\n\ndef noise(data, size, rng):\n"  # noqa: S102 - test fixture
         "    return rng.laplace(0.0, 1.0, size)\n", module.__dict__)
    sys.modules[module.__name__] = module
    try:
        with ProcessPoolExecutor(1, mp_context=SPAWN) as pool:
            for executor in (pool, dask_processes):
                with pytest.raises(InvalidArgument, match=r"a worker could not load the sampling "
                                   r"work \(ModuleNotFoundError: No module named "
                                   r"'dpcheck_only_here'\).*importable on the workers"):
                    audit(module.noise, [1.0], [0.0], PureDP(1.0), samples=5_000, seed=0,
                          executor=executor)
            assert pool.submit(abs, -2).result() == 2
    finally:
        del sys.modules[module.__name__]


def test_cli_checkpoint_resumes_an_interrupted_audit(mechs, small_chunks, tmp_path, monkeypatch,
                                                     capsys):
    from dpcheck.cli import main

    path = tmp_path / "cli.ckpt.json"
    argv = ["audit", "dpcheck_fault_mechs:slow_laplace", "--data", "[1.0]", "--data-prime",
            "[0.0]", "--claim", "pure:0.5", "--samples", str(SAMPLES), "--seed", "3", "--json"]
    assert main(argv) == 1  # float64 `sum + noise` leaks: a violation, exit status 1
    full = json.loads(capsys.readouterr().out)
    real = AUDIT_MODULE.count_chunk
    calls = []

    def interrupted(*task):
        calls.append(task[5])
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*task)

    monkeypatch.setattr(AUDIT_MODULE, "count_chunk", interrupted)
    assert main([*argv, "--checkpoint", str(path)]) == 130
    err = capsys.readouterr().err
    assert f"finished chunks are saved in {path}: rerun the same command to resume" in err
    assert len(json.loads(path.read_text(encoding="utf-8"))["chunks"]) == 3
    monkeypatch.setattr(AUDIT_MODULE, "count_chunk", real)
    # resumed on a process pool, with the progress bar: it ends at the total of both sides
    assert main([*argv, "--checkpoint", str(path), "--workers", "2", "--progress"]) == 1
    out, err = capsys.readouterr()
    resumed = json.loads(out)
    assert f"{2 * SAMPLES:,}/{2 * SAMPLES:,} outputs sampled" in err
    assert untimed_record(resumed) == untimed_record(full)
    assert main([*argv[:-2], "4", "--json", "--checkpoint", str(path)]) == 2
    assert "other arguments (differs in seed)" in capsys.readouterr().err


def test_thread_pools_take_unpicklable_work(small_chunks):
    """Threads share the process: nothing is pickled, so closures work as locally."""
    scale = 1.0

    def closure(data, size, rng):
        return float(sum(data)) + rng.laplace(0.0, scale, size)

    with ThreadPoolExecutor(2) as threads:
        assert untimed(run(closure, executor=threads)) == untimed(run(closure))


def test_mechanism_name_has_no_memory_address() -> None:
    """Report names are the same in every process: reprs lose their ``at 0x...`` addresses
    (an object holding a lambda used to get a new name in each worker and each run)."""
    from dpcheck.mechanism import mechanism_name

    class Holder:
        def __init__(self) -> None:
            self.score = lambda q: q

        def __repr__(self) -> str:
            return f"Holder(score={self.score!r})"

    name = mechanism_name(Holder())
    assert "0x" not in name and name.startswith("Holder(score=<function")
    assert "0x" not in mechanism_name(object())
