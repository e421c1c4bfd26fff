"""pytest plugin (entry point ``dpcheck``): seeds, the family α, claim markers, fixtures, report.

Seeds
    One root seed per run: ``--dpcheck-seed`` (default 0), ``last`` (the previous run's, from
    pytest's cache key ``dpcheck/seed``) or ``random``. The controller resolves it and hands it
    to xdist workers (``workerinput["dpcheck_seed"]``). A test's stream is
    ``child(SeedSequence(root), "test", nodeid)`` (stable hash of the node id), its i-th audit
    uses ``child(test, "audit", i)`` and its i-th accuracy check ``child(test, "accuracy", i)``,
    so results depend neither on test order nor on the worker that runs the test.

Error control
    The *family* is the set of selected tests (after ``-k``/``-m``) that carry
    ``@pytest.mark.claim`` or request ``dp_audit``/``dp_accuracy``; ``m`` is its size (identical
    on every xdist worker, since all workers collect the same tests). Each test gets
    ``α_test = α_family / m`` (Bonferroni) and the i-th statistical call of a test
    (``dp_audit`` or ``dp_accuracy``, counted together, 1-based) runs at
    ``α_i = α_test · 6/(π² i²)``; since Σ 6/(π² i²) = 1 this spends at most ``α_test`` however
    many calls a test makes. Hence, with probability ≥ 1 − α_family, no true
    claim of the run is refuted. Each record carries its ``alpha``; the report adds Holm-adjusted
    p-values over all audits (pass/fail follows the Bonferroni rule above). The replay command
    of a record runs the test alone with ``--dpcheck-alpha`` = its ``α_test``, which reproduces
    its records exactly.

Expected violations
    ``claim(expect="violation")`` (a buggy variant) or ``expect="erratum"`` (a printed statement
    that is false): the fixtures do not raise, and the test fails unless at least one of its
    statistical calls found a violation, or it recorded a deterministic counterexample it had
    verified itself (``dp_counterexample``, for combinatorial errata; no α involved). A
    violation is never declared on exploration samples alone (:func:`dpcheck.audit` confirms on
    fresh samples).

Records travel as JSON-safe attributes of the test reports (``report.dpcheck_records``), so the
controller gathers them identically with or without xdist; only the controller writes (the seed
cache and the report of ``--dpcheck-report``).
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from dpcheck.catalog import DEFAULT_PATH, load_catalog, missing_mutants, missing_tests
from dpcheck.errors import InvalidArgument
from dpcheck.plugin import options
from dpcheck.plugin import records as rec
from dpcheck.plugin.controller import Controller
from dpcheck.plugin.fixtures import (
    _dpcheck_recorder,
    dp_accuracy,
    dp_sensitivity,
    dp_audit,
    dp_check,
    dp_counterexample,
    dp_record,
    dp_rng,
    dp_search,
    dp_seed,
)
from dpcheck.plugin.state import (
    _ALL_FIXTURES,
    _ITEM,
    _STATE,
    _in_family,
    _info,
    _ItemData,
    _marker_problems,
    _State,
    _state,
)
from dpcheck.plugin.workers import PluginExecutor
from dpcheck.report.model import FORMATS

#: fixtures defined in :mod:`dpcheck.plugin.fixtures`, re-exported so that pytest registers them
FIXTURES = (_dpcheck_recorder, dp_accuracy, dp_audit, dp_check, dp_counterexample, dp_record,
            dp_rng, dp_search, dp_seed, dp_sensitivity)


# ----------------------------------------------------------------------------- options

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpcheck", "dpcheck (differential-privacy claims)")
    group.addoption("--dpcheck-seed", type=options.seed_arg, default=0, metavar="INT|last|random",
                    help="root seed of all dpcheck streams (default 0; 'last' = previous run's)")
    group.addoption("--dpcheck-alpha", type=options.alpha_arg, default=0.01, metavar="FLOAT",
                    help="family-wise error level over all claim tests (default 0.01)")
    group.addoption("--dpcheck-scale", type=options.scale_arg, default=1.0, metavar="FLOAT",
                    help="multiply the samples/trials tests ask for (0.1 quick, 10 thorough)")
    group.addoption("--dpcheck-sequential", type=options.on_off_arg, default=True,
                    metavar="on|off",
                    help="dp_audit stops at a pilot that already refutes the claim (samples are "
                         "an upper limit; same family alpha). Default on; off = fixed budgets")
    group.addoption("--dpcheck-report", default=None, metavar="DIR|none",
                    help="report directory (default: the dpcheck_report ini value, else "
                         "<rootdir>/reports; 'none' = no report)")
    group.addoption("--dpcheck-keep", type=int, default=None, metavar="N",
                    help="keep the N newest runs in the report directory, delete older ones "
                         "(default: the dpcheck_keep ini value, else 5)")
    parser.addini("dpcheck_report", "dpcheck report directory relative to the rootdir, or "
                  "'none' to write no report (default reports)", default="reports")
    parser.addini("dpcheck_keep", "runs kept in the dpcheck report directory (default 5)",
                  default="5")
    group.addoption("--dpcheck-formats", type=options.formats_arg, default=FORMATS,
                    metavar="json,md,html", help="report formats (default all three)")
    group.addoption("--dpcheck-catalog", default=None, metavar="PATH",
                    help=f"claims catalogue (default <rootdir>/{DEFAULT_PATH.as_posix()})")
    group.addoption("--dpcheck-workers", type=int, default=None, metavar="N",
                    help="draw audit/accuracy chunks on a pool of N processes (per pytest "
                    "process; same results)")
    group.addoption("--dpcheck-scheduler", default=None, metavar="ADDRESS",
                    help="draw audit/accuracy chunks on a Dask cluster (scheduler address, e.g. "
                    "tcp://host:8786; one client per pytest process; same results)")



def _resolve_seed(config: pytest.Config, worker: bool) -> tuple[int, str]:
    if worker and "dpcheck_seed" in config.workerinput:
        return int(config.workerinput["dpcheck_seed"]), ""
    value = config.getoption("dpcheck_seed")
    if value == "random":
        return secrets.randbelow(2**32), " (random)"
    if value == "last":
        cache = getattr(config, "cache", None)
        if cache is None:
            raise pytest.UsageError("--dpcheck-seed=last needs pytest's cache "
                                    "(remove -p no:cacheprovider)")
        prev = cache.get("dpcheck/seed", None)
        if isinstance(prev, int) and not isinstance(prev, bool) and prev >= 0:
            return prev, " (last)"
        return 0, " (last: no previous run, using 0)"
    return int(value), ""


class _XdistHooks:
    """Controller-side xdist hooks (registered only when xdist is loaded)."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["dpcheck_seed"] = self.state.root_seed
        self.state.nodes.add(str(node.gateway.id))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "claim(paper=None, ref=None, kind='privacy', expect='holds'): ties the test "
        "to a paper result of the claims catalogue; expect='violation' (buggy variant) or "
        "'erratum' (false printed statement) makes the test pass only if a violation is found")
    config.addinivalue_line(
        "markers", "mutant(name): this case runs the claim test's body on a deliberately broken "
        "variant NAME (listed in the catalogue entry's mutants); it passes only if the claim is "
        "found violated (a dpcheck violation, or an AssertionError of the test body)")
    worker = hasattr(config, "workerinput")
    workers, scheduler = config.getoption("dpcheck_workers"), config.getoption("dpcheck_scheduler")
    if workers is not None and workers < 1:
        raise pytest.UsageError(f"--dpcheck-workers={workers} must be >= 1")
    if workers is not None and scheduler:
        raise pytest.UsageError("--dpcheck-workers and --dpcheck-scheduler exclude each other")
    seed, note = _resolve_seed(config, worker)
    here = config.invocation_params.dir
    report = config.getoption("dpcheck_report")
    if report is None:  # the ini value, relative to the rootdir
        ini = str(config.getini("dpcheck_report") or "reports").strip()
        report = "none" if ini.lower() == "none" else str(config.rootpath / ini)
    keep = config.getoption("dpcheck_keep")
    if keep is None:
        try:
            keep = int(str(config.getini("dpcheck_keep")).strip())
        except ValueError as exc:
            raise pytest.UsageError(f"dpcheck_keep={config.getini('dpcheck_keep')!r} (ini) must "
                                    "be an integer >= 1") from exc
    if keep < 1:
        raise pytest.UsageError(f"--dpcheck-keep={keep} must be >= 1")
    catalog = config.getoption("dpcheck_catalog")
    config.stash[_STATE] = _State(
        root_seed=seed, seed_note=note, alpha_family=config.getoption("dpcheck_alpha"),
        scale=config.getoption("dpcheck_scale"),
        sequential=config.getoption("dpcheck_sequential"),
        report_dir=None if report.strip().lower() == "none" else here / report, keep=keep,
        formats=config.getoption("dpcheck_formats"),
        catalog_path=config.rootpath / DEFAULT_PATH if catalog is None else here / catalog,
        catalog_explicit=catalog is not None, worker=worker,
        executor=PluginExecutor(workers, scheduler))
    if worker:
        return
    config.pluginmanager.register(Controller(config, config.stash[_STATE]),
                                  "dpcheck-controller")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(config.stash[_STATE]), "dpcheck-xdist-hooks")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.executor.close()


def pytest_report_header(config: pytest.Config) -> str:
    s = _state(config)
    return (f"dpcheck: seed={s.root_seed}{s.seed_note}, alpha_family={s.alpha_family:g}, "
            f"scale={s.scale:g}, sequential={'on' if s.sequential else 'off'}, "
            f"report={s.report_dir or 'none'}")


# ----------------------------------------------------------------------------- catalogue, markers

@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    state = _state(session.config)
    if not state.catalog_explicit and not state.catalog_path.is_file():
        return
    try:
        entries = load_catalog(state.catalog_path)
    except InvalidArgument as exc:
        raise pytest.UsageError(f"dpcheck catalogue: {exc}") from None
    missing = (missing_tests(entries, session.config.rootpath)
               + missing_mutants(entries, session.config.rootpath))
    if missing:
        raise pytest.UsageError(f"dpcheck catalogue {state.catalog_path}: tests named by the "
                                "catalogue do not exist:\n  " + "\n  ".join(missing))
    state.entries = entries



@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    state = _state(config)
    if state.worker:  # workers report problems as collection errors (see below)
        return
    problems = [p for item in items for p in _marker_problems(item, state)]
    if problems:
        raise pytest.UsageError("dpcheck: invalid claim marker(s):\n  " + "\n  ".join(problems))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    # On an xdist worker a UsageError becomes an INTERNALERROR that hides the message, so the
    # same checks fail the collector instead (shown as "ERROR collecting ...").
    report = yield
    state = collector.config.stash.get(_STATE, None)
    if state is None or not state.worker or not report.passed:
        return report
    problems = [p for node in report.result if isinstance(node, pytest.Item)
                for p in _marker_problems(node, state)]
    if problems:
        report.outcome = "failed"
        report.longrepr = "dpcheck: invalid claim marker(s):\n  " + "\n  ".join(problems)
        report.result = []
    return report


def pytest_collection_finish(session: pytest.Session) -> None:
    _state(session.config).m = sum(_in_family(item) for item in session.items)


# ----------------------------------------------------------------------------- fixtures


# ----------------------------------------------------------------------------- running

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    info = _info(item)
    try:
        result = yield
    except AssertionError as exc:
        data = item.stash.setdefault(_ITEM, _ItemData())
        if info["mutant"] is None or any(getattr(x, "violation", False) for x in data.results):
            raise
        # A mutant case without a statistical verdict: the claim's assertion failed on it.
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        data.results.append(_Caught(info["mutant"]))
        data.records.append({"nodeid": item.nodeid, "call": len(data.records) + 1,
                             "type": "counterexample", **info, "alpha": None,
                             "verdict": rec.verdict(info["expect"], True), "replay": "",
                             "result": {"name": f"assertion failed on mutant {info['mutant']}",
                                        "violation": True, "assertion": first}})
        return None
    if info["expect"] != "holds":
        data = item.stash.get(_ITEM, None)
        if not any(getattr(x, "violation", False) for x in (data.results if data else [])):
            what = f"mutant {info['mutant']!r} survived: " if info["mutant"] else ""
            pytest.fail(what + rec.missed_message(info, data.results if data else [],
                                                  data.records if data else []), pytrace=False)
    return result


class _Caught:
    """A mutant caught by a failed assertion of the claim test's body (no statistics)."""

    violation = True

    def __init__(self, mutant: str) -> None:
        self.mutant = mutant


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    data = item.stash.get(_ITEM, None)
    records = data.records if data else []
    if (records or item.get_closest_marker("claim") is not None
            or _ALL_FIXTURES.intersection(getattr(item, "fixturenames", ()))):
        report.dpcheck_test = {**_info(item), "n_claim_tests": _state(item.config).m}
        if call.when == "call":
            rec.finalise(records)
            report.dpcheck_records = records
            # JUnit XML <properties> (what record_property writes: junitxml reads them from the
            # teardown report, built from item.user_properties): claim, verdicts, bounds
            item.user_properties.extend(rec.junit_properties(_info(item), records))
            if records:
                report.sections.append(("dpcheck", rec.section_text(records)))
    return report


