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
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .errors import InvalidArgument

__all__ = ["main", "build_parser", "load_mechanism", "parse_claim", "parse_neighbour",
           "parse_json_arg", "ProgressBar"]

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
    if not callable(getattr(obj, "sample", None)) and not callable(obj):
        raise InvalidArgument(f"{spec!r} is not a mechanism: it must be callable as "
                              "mechanism(data, size, rng) or have .sample(data, size, rng)")
    return obj


class ProgressBar:
    """A text progress bar for :func:`dpcheck.audit`'s ``progress`` callback (throttled)."""

    def __init__(self, stream: TextIO, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream, self.width, self.interval = stream, width, interval
        self._last = -float("inf")
        self._open = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < self.interval:
            return
        self._last = now
        frac = min(1.0, done / total) if total else 1.0
        fill = int(frac * self.width)
        self.stream.write(f"\r[{'#' * fill}{'-' * (self.width - fill)}] {frac:6.1%}  "
                          f"{done:,}/{total:,} outputs")
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

def _cmd_audit(args: argparse.Namespace) -> int:
    from .audit import audit
    from .report.model import atomic_write_text, dumps

    mechanism = load_mechanism(args.mechanism)
    d = parse_json_arg(args.data, "--data")
    d_prime = parse_json_arg(args.data_prime, "--data-prime")
    claim = parse_claim(args.claim)
    relation = parse_neighbour(args.neighbour)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr) if show else None
    executor = _executor(args)
    try:
        result = audit(mechanism, d, d_prime, claim, samples=args.samples, alpha=args.alpha,
                       seed=args.seed, relation=relation, progress=bar, executor=executor)
    finally:
        if bar is not None:
            bar.close()
        if executor is not None:
            executor.close() if hasattr(executor, "close") else executor.shutdown()
    text = dumps(result.to_dict())
    print(text.rstrip() if args.json else result.summary())
    if args.out:
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out, text)
        except OSError as exc:
            raise InvalidArgument(f"--out={args.out!r}: cannot write: {exc}") from exc
    return 1 if result.violation else 0


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
    from .report import render
    from .report.model import load_run, resolve_run

    document = load_run(args.path)
    for path in render(document, resolve_run(args.path).parent, args.formats):
        print(path)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .report import compare, load_run

    print(compare(load_run(args.a), load_run(args.b)), end="")
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    from .catalog import STATUSES, coverage, load_catalog

    path = Path(args.catalog)
    if not path.is_file():
        raise InvalidArgument(f"catalog {str(path)!r} does not exist (run from the repository "
                              "root or pass --catalog PATH)")
    entries = load_catalog(path)
    cov = coverage(entries)
    totals = {s: sum(c[s] for c in cov.values()) for s in STATUSES}
    if args.json:
        print(json.dumps({"path": str(path), "results": len(entries), "coverage": cov,
                          "totals": totals}, indent=2))
        return 0
    head = ["paper", *STATUSES, "total"]
    rows = [[p, *(str(c[s]) for s in STATUSES), str(sum(c.values()))] for p, c in cov.items()]
    rows.append(["total", *(str(totals[s]) for s in STATUSES), str(len(entries))])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"Claims catalogue {path}: {len(entries)} results")
    for row in [head, *rows]:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
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
                   help="pure:EPS (ε-DP) or approx:EPS,DELTA ((ε, δ)-DP)")
    a.add_argument("--samples", type=int, default=1_000_000, metavar="N",
                   help="outputs drawn per dataset (default: 1000000)")
    a.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance level: bounds hold with probability ≥ 1 − A (default 0.05)")
    a.add_argument("--seed", type=int, default=0, metavar="S",
                   help="random seed; same seed, same result (default 0)")
    a.add_argument("--neighbour", default=None, metavar="REL",
                   help="check that D and D′ are neighbours: add_remove, replace, "
                        "user_level:K[:replace|add_remove] or none (default: no check)")
    a.add_argument("--workers", type=int, default=None, metavar="N",
                   help="draw the confirmation samples on N local worker processes")
    a.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="draw them on a Dask cluster (scheduler address, e.g. tcp://host:8786)")
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
    rc = rsub.add_parser("compare", help="print what changed between two runs (Markdown)",
                         description="Compare run A (before) with run B (after): tests added/"
                                     "removed, verdict and ε-lower-bound changes, new/closed "
                                     "violations, catalogue coverage.")
    rc.add_argument("a", metavar="A", help="run directory or audit.json (before)")
    rc.add_argument("b", metavar="B", help="run directory or audit.json (after)")
    rc.set_defaults(handler=_cmd_compare)
    r.set_defaults(handler=None, parser=r)

    c = sub.add_parser("claims", help="coverage of the claims catalogue per paper and status",
                       description="Print how many results of each paper are tested, errata, "
                                   "asymptotic, not executable or planned.",
                       epilog="example:\n  dpcheck claims --catalog properties/catalog.toml\n",
                       formatter_class=raw)
    c.add_argument("--catalog", default=str(Path("properties") / "catalog.toml"), metavar="PATH",
                   help="catalogue file (default: properties/catalog.toml)")
    c.add_argument("--json", action="store_true", help="print the coverage as JSON")
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
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpcheck: interrupted", file=sys.stderr)
        return 130
