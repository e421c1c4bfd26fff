"""The ``dpcheck`` command line (also ``python -m dpcheck``): the parser and ``main``.

Subcommands: ``audit`` (audit a mechanism named by import path), ``report render`` / ``report
compare`` (re-render or diff run reports) and ``claims`` (coverage of the claims catalogue).
Exit status: 0 success / no violation, 1 violation found or gate failed, 2 invalid arguments or
unreadable input, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from dpcheck.cli.arguments import samples_arg
from dpcheck.cli.commands import _cmd_audit, _cmd_claims, _cmd_compare, _cmd_render
from dpcheck.errors import InvalidArgument


def _flags(message: str) -> str:
    """A library message in the command's words: ``samples=`` → ``--samples=`` etc."""
    for name, flag in (("samples", "--samples"), ("alpha", "--alpha"), ("seed", "--seed"),
                       ("stop_within", "--stop-within")):
        message = re.sub(rf"(?<![-\w]){name}=", f"{flag}=", message)
    message = message.replace("needs sequential=True", "needs --sequential")
    for name in ("epsilon", "delta"):
        message = re.sub(rf"(?<![-\w]){name}=", f"--claim: {name}=", message)
    return message


class _Parser(argparse.ArgumentParser):
    """One-line usage errors (exit 2) that point at ``--help``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# --------------------------------------------------------------------------- argument parsing

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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpcheck`` command."""
    from dpcheck.internal.version import __version__

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
    a.add_argument("--samples", type=samples_arg, default=1_000_000, metavar="N",
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
    a.add_argument("--sequential", action=argparse.BooleanOptionalAction, default=False,
                   help="stop at a pilot audit (1%% or 9%% of --samples) that already refutes "
                        "the claim; --samples is then an upper limit (default: off)")
    a.add_argument("--stop-within", type=float, default=None, metavar="EPS",
                   help="with --sequential: also stop at a pilot whose bound is within EPS of "
                        "what the whole budget would certify, when that would not refute the "
                        "claim either (default: off)")
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
    rc.add_argument("--fail-on", default=None, metavar="LIST",
                    help="exit 1 when B has changes of these kinds (comma-separated): violation "
                         "(new unexpected violations), missed (expected violations now missed), "
                         "failure (tests newly failing, or B incomplete), regression (ε lower "
                         "bounds or failure rates up beyond seed-to-seed noise), any, none "
                         "(default: violation,missed,failure)")
    rc.add_argument("--strict", action="store_true",
                    help="also exit 1 when the runs' settings differ (seed, alpha, scale, "
                         "dpcheck version; always shown as warnings)")
    rc.add_argument("--summary", action="store_true",
                    help="print a one-screen summary instead of the full comparison")
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


#: Exit status of an internal error (a bug of dpcheck, as pytest's 3): never 1, which means
#: "violation found" / "gate failed".
INTERNAL_ERROR = 3


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 1 violation found or gate
    failed, 2 bad arguments or unreadable input, 3 internal error, 130 interrupted)."""
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
    except OSError as exc:  # a file that cannot be read or written: the input's fault
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"dpcheck {args.command}: error:{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug of dpcheck: one line, distinct status
        print(f"dpcheck {args.command}: internal error: {type(exc).__name__}: {exc} (please "
              "report it; rerun with python -X dev -m dpcheck ... for the traceback)",
              file=sys.stderr)
        if os.environ.get("DPCHECK_TRACEBACK"):
            raise
        return INTERNAL_ERROR
