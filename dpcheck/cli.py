"""The ``dpcheck`` command line (also ``python -m dpcheck``).

Subcommands: ``audit`` (audit a mechanism named by import path), ``report render`` / ``report
compare`` (re-render or diff run reports) and ``claims`` (coverage of the claims catalogue).
Exit status: 0 success / no violation, 1 violation found, 2 invalid arguments.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .errors import InvalidArgument

__all__ = ["main", "build_parser", "load_mechanism", "parse_claim", "parse_neighbour",
           "parse_json_arg", "ProgressBar", "PhaseProgress", "audit_document"]

_MAIN_EPILOG = """\
examples:
  dpcheck audit mechs.py:noisy_count --data '[1, 0, 1]' --data-prime '[1, 0]' --claim pure:1.0
  dpcheck report render reports/latest          # re-render audit.md / audit.html from audit.json
  dpcheck report compare reports/RUN_A reports/RUN_B
  dpcheck claims                                # coverage of properties/catalog.toml

Run 'dpcheck COMMAND --help' for the options of a command.
"""

_AUDIT_EPILOG = """\
MECHANISM is MODULE:NAME (e.g. mypkg.mechanisms:noisy_count) or path/to/file.py:NAME.
The current directory is importable, as with 'python -m'. NAME (dots allowed: mod:Class.attr)
must be one of
  - a function  mechanism(data, size, rng) -> numpy array of `size` outputs,
  - an object with .sample(data, size, rng) (and optionally .pmf(data) for exact analysis),
  - a class with those methods: it is instantiated with no arguments.
To audit a mechanism with parameters, create it in your module (mech = Laplace(scale=2.0)) and
name the instance: mymodule:mech.

--data and --data-prime are JSON text or @file.json; the mechanism receives the parsed JSON
(lists, numbers, strings, dicts), e.g. '[1, 0, 1]'.

examples:
  # mechs.py:  def noisy_count(data, size, rng): return sum(data) + rng.laplace(0, 1.0, size)
  dpcheck audit mechs.py:noisy_count --data '[1, 0, 1]' --data-prime '[1, 0]' --claim pure:1.0
  dpcheck audit mypkg.mech:noisy_count --data @d.json --data-prime @d2.json \\
      --claim approx:1.0,1e-5 --neighbour add_remove --samples 2000000 --seed 7 --out result.json

exit status: 0 no violation found (not a proof of privacy), 1 VIOLATION (the claim is refuted
at confidence 1 - alpha on this pair), 2 invalid arguments.
"""


def count_arg(text: str) -> int:
    """A sample count: ``1000000``, ``1_000_000``, ``1e6`` or ``2.5e5`` (a whole number ≥ 1)."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1 (e.g. 1000000, "
                                         "1_000_000 or 1e6)")
    return int(value)


def max_certifiable_epsilon(samples: int, alpha: float) -> float:
    """The largest ε lower bound ``samples`` outputs per side can certify at level ``alpha``:
    about ``ln(0.9·n / ln(6/α))`` (an event seen only on one side; 90 % of the samples confirm,
    Clopper–Pearson at α/6)."""
    return math.log(max(0.9 * samples / math.log(6.0 / alpha), 1.0))


def _flags(message: str) -> str:
    """A library message in the command's words: ``samples=`` → ``--samples=`` etc."""
    for name, flag in (("samples", "--samples"), ("alpha", "--alpha"), ("seed", "--seed")):
        message = re.sub(rf"(?<![-\w]){name}=", f"{flag}=", message)
    for name in ("epsilon", "delta"):
        message = re.sub(rf"(?<![-\w]){name}=", f"--claim: {name}=", message)
    return message


class _Parser(argparse.ArgumentParser):
    """One-line usage errors (exit 2) that point at ``--help``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------- argument parsing

def parse_json_arg(text: str, name: str) -> Any:
    """JSON text, or ``@path`` to read the JSON from a file."""
    source = "JSON text"
    if text.startswith("@"):
        path = Path(text[1:])
        source = f"file {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidArgument(f"{name}: cannot read {source}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{name}: {source} is not valid JSON ({exc.msg} at line "
                              f"{exc.lineno}, column {exc.colno}); pass e.g. '[1, 0, 1]' or "
                              "@file.json") from exc


def parse_claim(text: str) -> Any:
    """``pure:EPS`` → :class:`PureDP`; ``approx:EPS,DELTA`` → :class:`ApproxDP`."""
    from .claims import ApproxDP, PureDP

    kind, _, params = text.partition(":")
    hint = f"--claim={text!r} must be pure:EPS or approx:EPS,DELTA (e.g. pure:1.0, approx:1,1e-5)"
    try:
        values = [float(v) for v in params.split(",")] if params else []
    except ValueError:
        raise InvalidArgument(hint) from None
    if kind == "pure" and len(values) == 1:
        return PureDP(values[0])
    if kind == "approx" and len(values) == 2:
        return ApproxDP(values[0], values[1])
    raise InvalidArgument(hint)


def parse_neighbour(text: str | None) -> Any:
    """``add_remove`` | ``replace`` | ``user_level:K[:MODE]`` | ``none`` → relation or None."""
    from .neighbours import AddRemove, Replace, UserLevel

    if text is None or text == "none":
        return None
    if text == "add_remove":
        return AddRemove()
    if text == "replace":
        return Replace()
    parts = text.split(":")
    if parts[0] == "user_level" and len(parts) in (2, 3):
        try:
            size = int(parts[1])
        except ValueError:
            raise InvalidArgument(f"--neighbour={text!r}: K={parts[1]!r} must be an integer "
                                  "(e.g. user_level:3)") from None
        return UserLevel(size, *(parts[2:]))
    raise InvalidArgument(f"--neighbour={text!r} must be add_remove, replace, none or "
                          "user_level:K[:replace|add_remove]")


def _import_module(module: str) -> Any:
    if module.endswith(".py"):
        path = Path(module)
        if not path.is_file():
            raise InvalidArgument(f"mechanism file {module!r} does not exist")
        spec = importlib.util.spec_from_file_location(f"_dpcheck_cli_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise InvalidArgument(f"cannot import {module!r} as a Python file")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    added = os.getcwd() not in sys.path
    if added:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    finally:
        if added and os.getcwd() in sys.path:
            sys.path.remove(os.getcwd())


def load_mechanism(spec: str) -> Any:
    """Import ``MODULE:NAME`` / ``file.py:NAME``; a class is instantiated with no arguments."""
    module, sep, name = spec.rpartition(":")
    if not sep or not module or not name:
        raise InvalidArgument(f"mechanism={spec!r} must be MODULE:NAME (e.g. "
                              "mypkg.mechanisms:noisy_count) or path/to/file.py:NAME")
    try:
        obj = _import_module(module)
    except InvalidArgument:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is a bad argument here
        raise InvalidArgument(f"cannot import module {module!r}: {type(exc).__name__}: "
                              f"{exc}") from exc
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InvalidArgument(f"module {module!r} has no attribute {name!r}") from None
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001
            raise InvalidArgument(
                f"class {name!r} could not be instantiated without arguments ({exc}); create an "
                f"instance in {module!r} (mech = {name}(...)) and name it instead") from exc
    if not callable(getattr(obj, "sample", None)) and not callable(obj) and not callable(
            getattr(obj, "randomise", None)):  # diffprivlib mechanism objects: _library_mechanism
        raise InvalidArgument(f"{spec!r} is not a mechanism: it must be callable as "
                              "mechanism(data, size, rng) or have .sample(data, size, rng)")
    return obj


class ProgressBar:
    """A text progress bar for :func:`dpcheck.audit`'s ``progress`` callback (throttled)."""

    def __init__(self, stream: TextIO, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream, self.width, self.interval = stream, width, interval
        self._last = -float("inf")
        self._open = False
        self._start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, done / total) if total else 1.0
        fill = int(frac * self.width)
        spent = now - self._start
        rate = done / spent if spent > 0 else 0.0
        eta = (f", ETA {(total - done) / rate:.0f} s" if rate > 0 and done < total
               else f", {spent:.1f} s")
        self.stream.write(f"\r[{'#' * fill}{'-' * (self.width - fill)}] {frac:6.1%}  "
                          f"{done:,}/{total:,} outputs sampled ({rate:,.0f}/s{eta})  ")
        self._open = done < total
        if not self._open:
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line if the bar was left unfinished (e.g. on an error)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


# --------------------------------------------------------------------------- commands

def _library_mechanism(obj: Any, claim_text: str) -> tuple[Any, Any]:
    """Library objects as mechanisms (OpenDP measurement, diffprivlib mechanism object) and the
    claim: ``opendp:D_IN[,DELTA]`` reads it off the measurement's privacy map."""
    is_measurement = callable(getattr(obj, "map", None)) and hasattr(obj, "output_measure")
    if claim_text.startswith("opendp:"):
        if not is_measurement:
            raise InvalidArgument(f"--claim={claim_text!r} needs an OpenDP Measurement")
        from .integrations.opendp import opendp_claim

        d_in, _, delta = claim_text[len("opendp:"):].partition(",")
        claim = opendp_claim(obj, parse_json_arg(d_in, "--claim"),
                             delta=float(delta) if delta else None)
    else:
        claim = parse_claim(claim_text)
    if is_measurement:
        from .integrations.opendp import from_opendp

        return from_opendp(obj), claim
    if callable(getattr(obj, "randomise", None)):
        from .integrations.diffprivlib import from_diffprivlib

        return from_diffprivlib(obj), claim
    return obj, claim


#: ``schema_version`` of ``dpcheck audit --json`` (``dpcheck/schemas/audit-result.schema.json``).
AUDIT_SCHEMA_VERSION = 1
#: ``schema_version`` of ``dpcheck claims --json`` (``dpcheck/schemas/claims.schema.json``).
CLAIMS_SCHEMA_VERSION = 1


def audit_document(result: Any) -> dict[str, Any]:
    """The JSON document of ``dpcheck audit --json`` / ``--out``: ``schema_version``, a
    ``verdict`` word (``violation`` or ``not-refuted``: never read as a proof) and the result."""
    return {"schema_version": AUDIT_SCHEMA_VERSION,
            "verdict": "violation" if result.violation else "not-refuted", **result.to_dict()}


def _cmd_audit(args: argparse.Namespace) -> int:
    from .audit import audit
    from .report.model import atomic_write_text, dumps

    mechanism = load_mechanism(args.mechanism)
    d = parse_json_arg(args.data, "--data")
    d_prime = parse_json_arg(args.data_prime, "--data-prime")
    mechanism, claim = _library_mechanism(mechanism, args.claim)
    relation = parse_neighbour(args.neighbour)
    ok = 0.0 < args.alpha < 1.0 and math.isfinite(getattr(claim, "epsilon", math.inf))
    ceiling = max_certifiable_epsilon(args.samples, args.alpha) if ok else math.inf
    # Heuristic: the ceiling is reached only by an output one side never produces; refuting a
    # claim needs room above it, so warn unless the claim sits well below the ceiling.
    if ok and 2 <= args.samples and (args.samples < 10_000 or claim.epsilon >= (ceiling - 1.0) / 2.0):
        need = max(10_000, math.ceil(math.log(6.0 / args.alpha) * math.exp(2 * claim.epsilon
                                                                            + 1.0) / 0.9))
        print(f"dpcheck audit: warning: --samples {args.samples} can certify at most "
              f"epsilon_lower ~ {ceiling:.2f} at --alpha {args.alpha:g} (ln(0.9 n / ln(6/alpha)),"
              f" reached only when one dataset never produces the witness), too little to "
              f"refute epsilon={claim.epsilon:g} in practice; use --samples {need:.1e} or more",
              file=sys.stderr)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr) if show else None
    executor = _executor(args)
    try:
        result = audit(mechanism, d, d_prime, claim, samples=args.samples, alpha=args.alpha,
                       seed=args.seed, relation=relation, progress=bar,
                       float_features=args.float_features, executor=executor,
                       checkpoint=args.checkpoint)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        if args.checkpoint:
            print(f"dpcheck audit: interrupted; finished chunks are saved in {args.checkpoint}: "
                  "rerun the same command to resume", file=sys.stderr)
        raise
    finally:
        if bar is not None:
            bar.close()
        if executor is not None:
            executor.close() if hasattr(executor, "close") else executor.shutdown()
    text = dumps(audit_document(result))
    print(text.rstrip() if args.json else result.summary())
    if args.out:
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out, text)
        except OSError as exc:
            raise InvalidArgument(f"--out={args.out!r}: cannot write: {exc}") from exc
    return 1 if result.violation else 0


class PhaseProgress:
    """``progress(phase, done, total)`` printer for long steps: phase, count, rate and ETA on
    one line of ``stream`` (rewritten in place on a terminal, one line per phase change and at
    most every ``interval`` seconds otherwise, so CI logs stay short)."""

    def __init__(self, stream: TextIO, prefix: str, *, interval: float = 2.0) -> None:
        self.stream, self.prefix, self.interval = stream, prefix, interval
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last, self._phase = -float("inf"), None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        changed = phase != self._phase
        if not changed and now - self._last < (0.2 if self.tty else self.interval):
            return
        self._last, self._phase = now, phase
        spent = now - self.start
        rate = done / spent if spent > 0 else 0.0
        eta = f", ETA {max(total - done, 0) / rate:.0f} s" if rate > 0 and done < total else ""
        line = (f"{self.prefix}: {phase}: {done}/{total} steps, {spent:.0f} s elapsed"
                f" ({rate:.2g}/s{eta})")
        self.stream.write(("\r" + line.ljust(100)) if self.tty else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self._phase is not None:
            self.stream.write("\n")
            self.stream.flush()


def _executor(args: argparse.Namespace) -> Any:
    """``--scheduler ADDRESS``: a Dask client; ``--workers N``: a local process pool."""
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError as exc:
            raise InvalidArgument("--scheduler needs dask[distributed] (pip install "
                                  "'dpcheck[dask]')") from exc
        try:
            return Client(args.scheduler)
        except (OSError, ValueError, TimeoutError) as exc:
            raise InvalidArgument(f"--scheduler={args.scheduler!r}: {exc}") from exc
    if args.workers is not None:
        if args.workers < 1:
            raise InvalidArgument(f"--workers={args.workers} must be >= 1")
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # spawn: workers import the mechanism by name (no fork of a threaded process)
        return ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn"))
    return None


def _cmd_render(args: argparse.Namespace) -> int:
    from .report import _formats, render
    from .report.model import load_run, resolve_run

    document = load_run(args.path)
    _formats(args.formats)  # bad --formats: an error before anything is printed
    n = len(document.get("records") or [])
    print(f"dpcheck report render: {n} records of run {document.get('run_id')}; drawing figures "
          "and writing audit.md, summary.md, audit.html", file=sys.stderr, flush=True)
    progress = PhaseProgress(sys.stderr, "dpcheck report render")
    try:
        written = render(document, resolve_run(args.path).parent, args.formats,
                         progress=progress)
    finally:
        progress.close()
    for path in written:
        print(path)
    print(f"dpcheck report render: done in {time.monotonic() - progress.start:.1f} s",
          file=sys.stderr)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .report import load_run
    from .report.compare import compare_runs, render_comparison
    from .report.strict_json import dumps_strict

    result = compare_runs(load_run(args.a), load_run(args.b), common_only=args.common_only,
                          fail_on=args.fail_on)
    if args.json:
        print(dumps_strict(result, indent=1))
    else:
        print(render_comparison(result), end="")
    if result["failed"]:
        print("dpcheck report compare: FAIL: " + "; ".join(result["reasons"]), file=sys.stderr)
        return 1
    return 0


def _list_claims(entries: Sequence[Any], path: Path, as_json: bool) -> int:
    """``dpcheck claims --list``: one line per catalogue entry with its tests and mutants."""
    if as_json:
        print(json.dumps({"schema_version": CLAIMS_SCHEMA_VERSION, "path": str(path),
                          "results": len(entries), "claims": [e.to_dict() for e in entries]},
                         indent=2))
        return 0
    print(f"{len(entries)} result(s) of {path}:")
    for e in entries:
        tests = ", ".join(e.tests) if e.tests else "no tests"
        mutants = f"; mutants: {', '.join(e.mutants)}" if getattr(e, "mutants", ()) else ""
        print(f"  {e.paper}  {e.ref:<24} {e.kind:<14} {e.status:<14} {tests}{mutants}")
        if e.status in ("planned", "not-executable", "erratum") and e.note:
            print(f"      note: {e.note}")
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    from .catalog import STATUSES, coverage, load_catalog, mutant_coverage

    path = Path(args.catalog)
    if not path.is_file():
        raise InvalidArgument(f"catalog {str(path)!r} does not exist (run from the repository "
                              "root or pass --catalog PATH)")
    entries = load_catalog(path)
    for name, allowed in (("status", STATUSES),):
        value = getattr(args, name)
        if value is not None and value not in allowed:
            raise InvalidArgument(f"--{name}={value!r} must be one of " + ", ".join(allowed))
    chosen = [e for e in entries if (args.status is None or e.status == args.status)
              and (args.paper is None or e.paper == args.paper)]
    if args.list:
        return _list_claims(chosen, path, args.json)
    cov = coverage(entries)
    mut = mutant_coverage(entries)
    totals = {s: sum(c[s] for c in cov.values()) for s in STATUSES}
    if args.json:
        print(json.dumps({"schema_version": CLAIMS_SCHEMA_VERSION, "path": str(path),
                          "results": len(entries), "coverage": cov,
                          "totals": totals, "mutant_coverage": mut,
                          "claims": [e.to_dict() for e in entries]}, indent=2))
        return 0
    head = ["paper", *STATUSES, "total", "with mutants"]

    def with_mutants(row: dict[str, int]) -> str:
        return f"{row['with_mutants']}/{row['needing']}"

    rows = [[p, *(str(c[s]) for s in STATUSES), str(sum(c.values())), with_mutants(mut[p])]
            for p, c in cov.items()]
    total_mut = {k: sum(r[k] for r in mut.values()) for k in ("with_mutants", "needing")}
    rows.append(["total", *(str(totals[s]) for s in STATUSES), str(len(entries)),
                 with_mutants(total_mut)])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"Claims catalogue {path}: {len(entries)} results")
    for row in [head, *rows]:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
    print("with mutants: tested/erratum privacy and utility results whose catalogue entry names "
          "at least one mutant (a broken variant the same test body must catch; the report's "
          "kill matrix shows which were caught)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpcheck`` command."""
    from . import __version__

    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="dpcheck", formatter_class=raw, epilog=_MAIN_EPILOG,
                     description="Empirical differential-privacy auditing: refute (ε, δ) claims "
                                 "with exact finite-sample statistics, and render audit reports.")
    parser.add_argument("--version", action="version", version=f"dpcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    a = sub.add_parser("audit", formatter_class=raw, epilog=_AUDIT_EPILOG,
                       help="audit a mechanism's privacy claim on one pair of datasets",
                       description="Sample MECHANISM on D and D′, and test the privacy claim.")
    a.add_argument("mechanism", metavar="MECHANISM", help="MODULE:NAME or path/to/file.py:NAME")
    a.add_argument("--data", required=True, metavar="JSON", help="dataset D (JSON or @file.json)")
    a.add_argument("--data-prime", required=True, metavar="JSON",
                   help="neighbouring dataset D′ (JSON or @file.json)")
    a.add_argument("--claim", required=True, metavar="CLAIM",
                   help="pure:EPS (ε-DP), approx:EPS,DELTA ((ε, δ)-DP) or, for an OpenDP "
                        "measurement, opendp:D_IN[,DELTA] (its privacy map at D_IN)")
    a.add_argument("--samples", type=count_arg, default=1_000_000, metavar="N",
                   help="outputs drawn per dataset: 1000000, 1_000_000 or 1e6 (default 1e6)")
    a.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance level: bounds hold with probability ≥ 1 − A (default 0.05)")
    a.add_argument("--seed", type=int, default=0, metavar="S",
                   help="random seed; same seed, same result (default 0)")
    a.add_argument("--neighbour", default=None, metavar="REL",
                   help="check that D and D′ are neighbours: add_remove, replace, "
                        "user_level:K[:replace|add_remove] or none (default: no check)")
    a.add_argument("--float-features", action=argparse.BooleanOptionalAction, default=True,
                   help="events on the float64 bits of scalar float outputs (default: on)")
    a.add_argument("--workers", type=int, default=None, metavar="N",
                   help="draw the confirmation samples on N local worker processes")
    a.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="draw them on a Dask cluster (scheduler address, e.g. tcp://host:8786)")
    a.add_argument("--checkpoint", default=None, metavar="FILE",
                   help="save the confirmation counts to FILE after every chunk; rerunning the "
                   "same command resumes from it (same result)")
    a.add_argument("--json", action="store_true", help="print the full result as JSON")
    a.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE (atomically)")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar on stderr (default: only when stderr is a terminal)")
    a.set_defaults(handler=_cmd_audit)

    r = sub.add_parser("report", formatter_class=raw, help="re-render or compare run reports",
                       description="Work with reports written by the pytest plugin "
                                   "(reports/<run-id>/audit.json).",
                       epilog="examples:\n  dpcheck report render reports/latest\n"
                              "  dpcheck report render reports/RUN --formats md\n"
                              "  dpcheck report compare reports/RUN_A reports/RUN_B\n")
    rsub = r.add_subparsers(dest="report_command", metavar="SUBCOMMAND")
    rr = rsub.add_parser("render", help="re-render audit.md / audit.html from audit.json",
                         description="Re-render the Markdown and HTML reports (and figures) of "
                                     "a run from its audit.json.")
    rr.add_argument("path", metavar="PATH",
                    help="run directory, its audit.json, or a reports directory (uses latest)")
    rr.add_argument("--formats", default="md,html", metavar="LIST",
                    help="comma-separated subset of md,html (default: md,html)")
    rr.set_defaults(handler=_cmd_render)
    rc = rsub.add_parser("compare", help="what changed between two runs; exit 1 on new "
                                         "violations (--fail-on)",
                         description="Compare run A (before) with run B (after): tests added/"
                                     "removed, verdict and ε-lower-bound changes, new/closed "
                                     "violations, catalogue coverage.")
    rc.add_argument("a", metavar="A", help="run directory or audit.json (before)")
    rc.add_argument("b", metavar="B", help="run directory or audit.json (after)")
    rc.add_argument("--fail-on", default="violation", metavar="LIST",
                    help="exit 1 when B has changes of these kinds (comma-separated): violation "
                         "(new unexpected violations), missed (expected violations now missed), "
                         "failure (tests newly failing), regression (ε lower bounds or failure "
                         "rates up beyond seed-to-seed noise), any, none (default: violation)")
    rc.add_argument("--common-only", action="store_true",
                    help="compare only tests and records present in both runs")
    rc.add_argument("--json", action="store_true",
                    help="print the comparison as JSON (schema dpcheck/schemas/"
                         "compare.schema.json)")
    rc.set_defaults(handler=_cmd_compare)
    r.set_defaults(handler=None, parser=r)

    c = sub.add_parser("claims", help="coverage of the claims catalogue per paper and status",
                       description="Print how many results of each paper are tested, errata, "
                                   "asymptotic, not executable or planned.",
                       epilog="examples:\n  dpcheck claims --catalog properties/catalog.toml\n"
                              "  dpcheck claims --list --status planned\n"
                              "  dpcheck claims --list --paper 001 --json\n",
                       formatter_class=raw)
    c.add_argument("--catalog", default=str(Path("properties") / "catalog.toml"), metavar="PATH",
                   help="catalogue file (default: properties/catalog.toml)")
    c.add_argument("--json", action="store_true", help="print the coverage (or, with --list, "
                   "the entries) as JSON")
    c.add_argument("--list", action="store_true",
                   help="list the results (paper, ref, kind, status, the tests covering them, "
                        "mutants, and the note of planned / not-executable / erratum results)")
    c.add_argument("--status", default=None, metavar="STATUS",
                   help="with --list: only this status (tested, erratum, asymptotic, "
                        "not-executable, planned)")
    c.add_argument("--paper", default=None, metavar="NNN", help="with --list: only this paper")
    c.set_defaults(handler=_cmd_claims)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1 = violation, 2 = bad arguments)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    handler = getattr(args, "handler", None)
    if handler is None:
        (getattr(args, "parser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except InvalidArgument as exc:
        name = f"dpcheck {args.command}".strip()
        text = _flags(str(exc)) if args.command == "audit" else str(exc)
        print(f"{name}: error: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dpcheck claims --list | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
