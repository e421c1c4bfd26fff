"""The executor of the pytest plugin: ``--dpcheck-workers N`` and ``--dpcheck-scheduler ADDRESS``.

With ``--dpcheck-workers N`` the ``dp_audit``, ``dp_search`` and ``dp_accuracy`` fixtures draw
their chunks on a ``ProcessPoolExecutor`` of N spawned processes; with
``--dpcheck-scheduler ADDRESS`` on a Dask cluster through a ``distributed.Client``. One executor
per pytest process, created on first use and closed when the session ends; under xdist every
worker process has its own pool, or its own client to the same scheduler. Results are those of
the local run bit for bit (design §4 rule 5), so records, replay commands and the family α are
unchanged.

What cannot travel runs in the test's process (same result): on a process pool, work that does
not pickle or that refers to functions or classes defined in test files (``test_*.py``,
``*_test.py``, ``conftest.py``), which pytest's import modes do not make importable in spawned
processes. On Dask the test module is pickled by value (cloudpickle), so functions defined in
it travel; mechanisms from installed packages must be installed on the cluster's workers.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcheck.errors import InvalidArgument, WorkerLost

__all__: list[str] = []


@dataclass
class PluginExecutor:
    """The lazily created executor of one pytest process (``None`` options: no executor)."""

    workers: int | None = None
    scheduler: str | None = None
    _executor: Any = None
    _by_value: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.workers is not None or bool(self.scheduler)

    def get(self) -> Any:
        """The executor, created on first use."""
        if self._executor is None:
            if self.scheduler:
                try:
                    from distributed import Client
                except ImportError as exc:  # pragma: no cover - dask is in the dev extra
                    raise InvalidArgument("--dpcheck-scheduler needs dask[distributed] (pip "
                                          "install 'dpcheck[dask]')") from exc
                try:
                    self._executor = Client(self.scheduler)
                except (OSError, ValueError, TypeError) as exc:
                    raise InvalidArgument(
                        f"--dpcheck-scheduler={self.scheduler!r}: {exc}") from exc
            else:
                from concurrent.futures import ProcessPoolExecutor

                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._executor

    def for_work(self, module: types.ModuleType | None, *work: Any) -> Any:
        """The executor to pass for ``work`` (the objects that must travel), or ``None`` to run
        in this process (see the module docstring)."""
        if not self.enabled:
            return None
        if self.scheduler:
            name = getattr(module, "__name__", None)
            if name is not None and name not in self._by_value:
                import cloudpickle

                with contextlib.suppress(ValueError):  # e.g. not in sys.modules
                    cloudpickle.register_pickle_by_value(module)
                self._by_value += (name,)
            return self.get()
        return self.get() if _travels(work) else None

    def lost(self) -> None:
        """Forget a broken process pool (a new one is created on next use)."""
        if self._executor is not None and not self.scheduler:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def close(self) -> None:
        """Close the executor (end of the session)."""
        ex, self._executor = self._executor, None
        if ex is None:
            return
        with contextlib.suppress(Exception):  # best effort at exit
            if hasattr(ex, "close"):
                ex.close()
            else:
                ex.shutdown(wait=True, cancel_futures=True)


def _is_test_file(module: str | None) -> bool:
    mod = sys.modules.get(module or "")
    name = Path(getattr(mod, "__file__", None) or "").name
    return name == "conftest.py" or (name.endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py")))


class _Spy(pickle.Pickler):
    """A pickler that notes the modules of the functions and classes it pickles by name."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.modules: set[str] = set()

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
            self.modules.add(getattr(obj, "__module__", None) or "")
        elif not isinstance(obj, types.ModuleType):
            self.modules.add(getattr(type(obj), "__module__", None) or "")
        return NotImplemented


def _travels(work: tuple[Any, ...]) -> bool:
    """Whether ``work`` pickles and refers to no test-file module (process pools)."""
    import io

    spy = _Spy(io.BytesIO())
    try:
        spy.dump(work)
    except Exception:  # noqa: BLE001 - unpicklable: runs locally
        return False
    return not any(_is_test_file(m) for m in spy.modules)


def run(state: PluginExecutor, module: types.ModuleType | None, call: Any, work: tuple[Any, ...],
        kwargs: dict[str, Any]) -> Any:
    """``call(executor=...)`` with the plugin's executor for ``work`` unless the test passed its
    own ``executor``; a broken process pool is replaced for the next call."""
    if "executor" in kwargs or not state.enabled:
        return call(**kwargs)
    executor = state.for_work(module, *work)
    try:
        return call(executor=executor, **kwargs)
    except WorkerLost:
        state.lost()
        raise
