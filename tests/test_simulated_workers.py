"""``benchmarks/simulated_workers.py``: the trace of an audit's executor calls and its replay on
``W`` simulated workers (issue 30 item 5's speedup figure rests on both)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest

from dpcheck.core.explore import EXPLORE_CHUNK

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "simulated_workers.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("simulated_workers", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sim = _module()


def _trace(tasks: int, seconds: float, client: float = 1.0) -> list[tuple[object, ...]]:
    trace: list[tuple[object, ...]] = [("client", client)]
    trace += [("submit", i, seconds, 0, 0) for i in range(tasks)]
    trace += [("wait", i) for i in range(tasks)]
    return trace + [("client", 0.5)]


@pytest.mark.parametrize(("workers", "expected"), [(1, 9.5), (2, 5.5), (3, 5.5), (4, 3.5),
                                                   (8, 3.5)])
def test_equal_tasks_take_ceil_tasks_over_workers_rounds(workers: int, expected: float) -> None:
    got = sim.replay(_trace(4, 2.0), workers)
    assert got["seconds"] == pytest.approx(expected)
    assert got["client_seconds"] == pytest.approx(1.5)
    assert got["worker_seconds"] == pytest.approx(8.0)


def test_latency_and_bytes_delay_each_task() -> None:
    trace = [("submit", 0, 1.0, 1000, 3000), ("wait", 0)]
    got = sim.replay(trace, 1, latency=0.25, bandwidth=1000.0)
    assert got["seconds"] == pytest.approx(0.25 + 1.0 + 1.0 + 3.0)


def test_client_work_between_submissions_overlaps_the_workers() -> None:
    # a task submitted before 3 s of client work is done by the time the client waits
    trace = [("submit", 0, 2.0, 0, 0), ("client", 3.0), ("wait", 0)]
    assert sim.replay(trace, 1)["seconds"] == pytest.approx(3.0)
    # waiting first serialises them
    trace = [("submit", 0, 2.0, 0, 0), ("wait", 0), ("client", 3.0)]
    assert sim.replay(trace, 1)["seconds"] == pytest.approx(5.0)


def test_replay_rejects_no_workers() -> None:
    with pytest.raises(ValueError, match="workers=0 must be >= 1"):
        sim.replay([], 0)


def test_a_traced_audit_is_the_serial_audit_and_its_trace_adds_up() -> None:
    n = 3 * EXPLORE_CHUNK  # several confirmation chunks per side
    serial, _, _ = sim.run("svt6", n, None)
    record, trace, cpu = sim.traced("svt6", n)
    assert record == serial
    submits = [e for e in trace if e[0] == "submit"]
    waits = {e[1] for e in trace if e[0] == "wait"}
    assert len(submits) >= 4 and waits == {e[1] for e in submits}
    one = sim.replay(trace, 1, bandwidth=math.inf)
    # one worker: never faster than either party's own work, never slower than both in turn
    # (the client's work between a submission and its wait overlaps the worker's)
    assert (max(one["client_seconds"], one["worker_seconds"]) <= one["seconds"]
            <= one["client_seconds"] + one["worker_seconds"] + 1e-9)
    assert one["seconds"] <= cpu * 1.05 + 0.05  # the trace accounts for the audit's CPU
    assert sim.replay(trace, 4, bandwidth=math.inf)["seconds"] < one["seconds"]
    # the executor module's as_completed is restored after tracing
    assert sim.executor_module._as_completed is sim._AS_COMPLETED
