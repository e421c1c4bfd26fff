"""The ``dpcheck`` command line (also ``python -m dpcheck``).

Subcommands: ``audit`` (audit a mechanism named by import path), ``report render`` / ``report
compare`` (re-render or diff run reports) and ``claims`` (coverage of the claims catalogue).
Exit status: 0 success / no violation, 1 violation found, 2 invalid arguments.
The parser and :func:`main` are in :mod:`dpcheck.cli.main`, argument parsing in
:mod:`dpcheck.cli.arguments`, the subcommands in :mod:`dpcheck.cli.commands` and terminal
progress in :mod:`dpcheck.internal.progress`.
"""

from dpcheck.cli.arguments import (
                                   count_arg,
                                   load_mechanism,
                                   max_certifiable_epsilon,
                                   parse_claim,
                                   parse_json_arg,
                                   parse_neighbour,
)
from dpcheck.cli.commands import AUDIT_SCHEMA_VERSION, CLAIMS_SCHEMA_VERSION, audit_document
from dpcheck.cli.main import build_parser, main
from dpcheck.internal.progress import PhaseProgress, ProgressBar

__all__ = ["main", "build_parser", "load_mechanism", "parse_claim", "parse_neighbour",
           "parse_json_arg", "ProgressBar", "PhaseProgress", "audit_document", "count_arg",
           "max_certifiable_epsilon", "AUDIT_SCHEMA_VERSION", "CLAIMS_SCHEMA_VERSION"]
