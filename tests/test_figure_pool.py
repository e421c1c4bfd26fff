"""The report's figures are rendered on a process pool when there are many
(:func:`dpcheck.report.plotting.render_jobs`): same bytes, same order, progress for every one."""

from __future__ import annotations

import math

import pytest

from dpcheck.report import plotting
from dpcheck.report.plotting import POOL_MIN_JOBS, render_jobs


def test_pool_and_serial_give_the_same_results_in_order(monkeypatch):
    jobs = [(math.factorial, (k,)) for k in range(POOL_MIN_JOBS + 4)]
    seen: list[int] = []
    pooled = render_jobs(jobs, seen.append)
    assert pooled == [math.factorial(k) for k in range(POOL_MIN_JOBS + 4)]
    assert seen == list(range(1, len(jobs) + 1))
    monkeypatch.setenv(plotting.WORKERS_ENV, "1")
    assert plotting._workers(len(jobs)) == 1
    assert render_jobs(jobs) == pooled


def test_few_jobs_render_here():
    assert plotting._workers(POOL_MIN_JOBS - 1) == 1


def test_a_failing_job_raises():
    jobs = [(math.factorial, (k,)) for k in range(POOL_MIN_JOBS)] + [(math.factorial, (-1,))]
    with pytest.raises(ValueError):
        render_jobs(jobs)
