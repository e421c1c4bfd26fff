"""The plugin's executor options: ``--dpcheck-workers N`` (process pool) and
``--dpcheck-scheduler ADDRESS`` (Dask client), one per pytest process, created lazily and closed
at session end. The records of a generated suite must equal those of the run without an
executor (seconds aside), and the chunks must really have been drawn on other processes (the
helpers note the pid of every process that calls them)."""

import json
import os
from pathlib import Path

import pytest

from dpcheck.core.results import untimed

try:  # imported before any pytester run: pytester's in-process runs restore sys.modules, and
    # modules first imported inside a test (distributed's dependencies) would be half removed
    import distributed
except ImportError:  # pragma: no cover - dask is in the dev extra
    distributed = None

pytest_plugins = ["pytester"]

INI = """
[pytest]
filterwarnings = error
addopts = --strict-markers -p no:randomly -p no:hypothesispytest
"""

# Importable by spawned pool processes (pytester's rootdir is on sys.path); uploaded to the
# Dask workers with Client.upload_file.
HELPERS = '''
import os
from pathlib import Path

import numpy as np

PIDS = Path({pids!r})


def _note():
    PIDS.mkdir(exist_ok=True)
    (PIDS / str(os.getpid())).touch()


def laplace(data, size, rng):  # noise snapped to 2**-20: exact sums, private in float64
    _note()
    return np.sum(data) + np.round(rng.laplace(0.0, 1.0, size) * 2.0**20) / 2.0**20


def uniform_error(size, rng):
    _note()
    return rng.random(size)
'''

SUITE = '''
import numpy as np
import pytest

import dpcheck
from exec_helpers import laplace, uniform_error


def local_laplace(data, size, rng):  # defined in a test file: a process pool runs it locally
    return np.sum(data) + np.round(rng.laplace(0.0, 2.0, size) * 2.0**20) / 2.0**20


@pytest.mark.claim(paper="900", ref="Theorem 1")
def test_audit(dp_audit):
    dp_audit(laplace, [1, 0, 1], [1, 0], dpcheck.PureDP(1.0), samples=20_000)


@pytest.mark.claim(paper="900", ref="Theorem 2", kind="utility")
def test_accuracy(dp_accuracy):
    dp_accuracy(uniform_error, alpha=0.9, beta=0.2, trials=3_000)


@pytest.mark.claim(paper="900", ref="Theorem 3")
def test_local_mechanism(dp_audit):
    dp_audit(local_laplace, [1, 0, 1], [1, 0], dpcheck.PureDP(0.5), samples=20_000)
'''


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(exec_helpers=HELPERS.format(pids=str(pytester.path / "pids")),
                        test_suite=SUITE)
    return pytester


def records(pytester: pytest.Pytester, name: str, *args: str, subprocess: bool = False
            ) -> list[dict]:
    """Run the suite with ``args`` (report under ``name``) and return its untimed records."""
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    result = runner("-p", "no:cacheprovider", "--dpcheck-report", name, *args)
    result.assert_outcomes(passed=3)
    (doc,) = [json.loads(p.read_text(encoding="utf-8"))
              for p in (pytester.path / name).glob("*/audit.json") if not p.parent.is_symlink()]
    return [dict(r, result=untimed(r["result"])) for r in doc["records"]]


def pids(pytester: pytest.Pytester) -> set[int]:
    """Processes that ran the helpers since the last call (then forgets them)."""
    directory = pytester.path / "pids"
    found = {int(p.name) for p in directory.iterdir()} if directory.exists() else set()
    for p in directory.glob("*"):
        p.unlink()
    return found


def test_workers_option_gives_the_local_records(suite):
    local = records(suite, "local")
    assert pids(suite) == {os.getpid()}
    assert len(local) == 3 and not any(r["result"]["violation"] for r in local)
    pooled = records(suite, "pool", "--dpcheck-workers", "2")
    assert pooled == local
    assert pids(suite) - {os.getpid()}  # chunks were drawn in the pool's processes


def test_scheduler_option_gives_the_local_records_also_under_xdist(suite):
    if distributed is None:  # pragma: no cover
        pytest.skip("needs dask[distributed]")
    local = records(suite, "local")
    pids(suite)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        client.upload_file(str(suite.path / "exec_helpers.py"))
        worker_pids = set(client.run(os.getpid).values())
        on_dask = records(suite, "dask", "--dpcheck-scheduler", cluster.scheduler_address)
        assert on_dask == local
        assert pids(suite) & worker_pids
        on_dask_xdist = records(suite, "xdist", "-n", "2", "--dpcheck-scheduler",
                                cluster.scheduler_address, subprocess=True)  # one client each
        assert on_dask_xdist == local
        assert pids(suite) & worker_pids


def test_bad_executor_options_are_usage_errors(suite):
    result = suite.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none",
                             "--dpcheck-workers", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--dpcheck-workers=0 must be >= 1*"])
    result = suite.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none",
                             "--dpcheck-workers", "2", "--dpcheck-scheduler", "tcp://x:1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*exclude each other*"])


def test_executor_is_created_lazily_and_closed(suite, monkeypatch):
    from dpcheck.plugin.workers import PluginExecutor

    made = []
    closed = []
    real_get, real_close = PluginExecutor.get, PluginExecutor.close
    monkeypatch.setattr(PluginExecutor, "get", lambda self: made.append(1) or real_get(self))
    monkeypatch.setattr(PluginExecutor, "close",
                        lambda self: closed.append(self._executor) or real_close(self))
    suite.makepyfile(test_suite="def test_nothing_statistical():\n    pass\n")
    result = suite.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none",
                             "--dpcheck-workers", "2")
    result.assert_outcomes(passed=1)
    assert made == [] and closed == [None]  # no dpcheck call: no pool was started
    Path(suite.path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    result = suite.runpytest("-p", "no:cacheprovider", "--dpcheck-report", "none",
                             "--dpcheck-workers", "2")
    result.assert_outcomes(passed=3)
    assert len(closed) == 2 and closed[1] is not None and closed[1]._shutdown_thread
