"""The subcommands of ``dpcheck``: ``audit``, ``report render``, ``report compare``, ``claims``."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpcheck.cli.arguments import (
    _library_mechanism,
    load_mechanism,
    max_certifiable_epsilon,
    parse_json_arg,
    parse_neighbour,
)
from dpcheck.internal.progress import PhaseProgress, ProgressBar
from dpcheck.errors import InvalidArgument

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
    from dpcheck.core.audit import audit
    from dpcheck.report.model import atomic_write_text, dumps

    if args.out:
        _check_writable(Path(args.out), "--out")
    mechanism = load_mechanism(args.mechanism)
    d = parse_json_arg(args.data, "--data")
    d_prime = parse_json_arg(args.data_prime, "--data-prime")
    mechanism, claim = _library_mechanism(mechanism, args.claim)
    relation = parse_neighbour(args.neighbour)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr) if show else None
    executor = _executor(args)
    try:
        result = audit(mechanism, d, d_prime, claim, samples=args.samples, alpha=args.alpha,
                       seed=args.seed, relation=relation, progress=bar,
                       float_features=args.float_features, executor=executor,
                       checkpoint=args.checkpoint, sequential=args.sequential,
                       stop_within=args.stop_within)
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
    if not result.violation:  # a refutation needs no warning that it was hard to get
        _warn_small_budget(args, claim)
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


def _warn_small_budget(args: argparse.Namespace, claim: Any) -> None:
    """After a pass: warn when ``--samples`` was too small to refute the claim in practice.
    Heuristic: the largest certifiable bound (:func:`max_certifiable_epsilon`) is reached only
    by an output one side never produces; refuting a claim needs room above it, so warn unless
    the claim sits well below it."""
    if not (0.0 < args.alpha < 1.0 and math.isfinite(getattr(claim, "epsilon", math.inf))):
        return
    ceiling = max_certifiable_epsilon(args.samples, args.alpha)
    if args.samples < 10_000 or claim.epsilon >= (ceiling - 1.0) / 2.0:
        need = max(10_000, math.ceil(math.log(6.0 / args.alpha) * math.exp(2 * claim.epsilon
                                                                            + 1.0) / 0.9))
        print(f"dpcheck audit: warning: --samples {args.samples} can certify at most "
              f"epsilon_lower ~ {ceiling:.2f} at --alpha {args.alpha:g} (ln(0.9 n / ln(6/alpha)),"
              f" reached only when one dataset never produces the witness), too little to "
              f"refute epsilon={claim.epsilon:g} in practice; use --samples {need:.1e} or more",
              file=sys.stderr)


def _check_writable(path: Path, name: str) -> None:
    """Refuse an output path before the work, not after it: its folder must exist (or be
    creatable) and be writable."""
    folder = path.parent
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if path.is_dir():
        raise InvalidArgument(f"{name}={str(path)!r} is a directory; name a file")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise InvalidArgument(f"{name}={str(path)!r}: cannot write into {str(probe)!r}")


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
    from dpcheck.report import _formats, render
    from dpcheck.report.model import load_run, resolve_run

    document = load_run(args.path)
    _formats(args.formats)  # bad --formats: an error before anything is printed
    _check_writable(resolve_run(args.path).parent / "audit.md", "PATH")
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
    from dpcheck.report import load_run
    from dpcheck.report.compare import compare_runs, render_comparison, summary_text
    from dpcheck.report.strict_json import dumps_strict

    result = compare_runs(load_run(args.a), load_run(args.b), common_only=args.common_only,
                          fail_on=args.fail_on, strict=args.strict)
    if args.json:
        print(dumps_strict(result, indent=1))
    elif args.summary:
        print(summary_text(result), end="")
    else:
        print(render_comparison(result), end="")
    for warning in result["warnings"]:
        print(f"dpcheck report compare: warning: {warning}", file=sys.stderr)
    if result["failed"]:
        print("dpcheck report compare: FAIL: " + "; ".join(result["reasons"]), file=sys.stderr)
        return 1
    return 0


def _claims_document(entries: Sequence[Any], chosen: Sequence[Any], path: Path) -> dict[str, Any]:
    """The JSON of ``dpcheck claims --json`` (with or without ``--list``), schema
    ``dpcheck/schemas/claims.schema.json``: coverage of the whole catalogue, the chosen
    entries."""
    from dpcheck.catalog import STATUSES, coverage, mutant_coverage

    cov = coverage(entries)
    totals = {s: sum(c[s] for c in cov.values()) for s in STATUSES}
    return {"schema_version": CLAIMS_SCHEMA_VERSION, "path": str(path),
            "results": len(entries), "coverage": cov, "totals": totals,
            "mutant_coverage": mutant_coverage(entries),
            "claims": [e.to_dict() for e in chosen]}


def _list_claims(entries: Sequence[Any], path: Path, as_json: bool,
                 everything: Sequence[Any] = ()) -> int:
    """``dpcheck claims --list``: one line per catalogue entry with its tests and mutants."""
    if as_json:
        print(json.dumps(_claims_document(everything or entries, entries, path), indent=2))
        return 0
    print(f"{len(entries)} result(s) of {path}:")
    for e in entries:
        tests = ", ".join(e.tests) if e.tests else "no tests"
        mutants = f"; mutants: {', '.join(e.mutants)}" if getattr(e, "mutants", ()) else ""
        sharp = ""
        if e.slack is not None or e.detectable_overspend is not None:
            sharp = (f"; slack {_figure(e.slack)}, detectable overspend "
                     f"{_figure(e.detectable_overspend)}")
        print(f"  {e.paper}  {e.ref:<24} {e.kind:<14} {e.status:<14} {tests}{mutants}{sharp}")
        if e.status in ("planned", "not-executable", "erratum") and e.note:
            print(f"      note: {e.note}")
    return 0


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _cmd_claims(args: argparse.Namespace) -> int:
    from dpcheck.catalog import STATUSES, coverage, load_catalog, mutant_coverage

    path = Path(args.catalog)
    if not path.is_file():
        raise InvalidArgument(f"catalog {str(path)!r} does not exist (run from the repository "
                              "root or pass --catalog PATH)")
    entries = load_catalog(path)
    for name, allowed in (("status", STATUSES),):
        value = getattr(args, name)
        if value is not None and value not in allowed:
            raise InvalidArgument(f"--{name}={value!r} must be one of " + ", ".join(allowed))
    papers = sorted({e.paper for e in entries})
    if args.paper is not None and args.paper not in papers:  # a typo listed nothing, silently
        raise InvalidArgument(f"--paper={args.paper!r} must be one of " + ", ".join(papers))
    chosen = [e for e in entries if (args.status is None or e.status == args.status)
              and (args.paper is None or e.paper == args.paper)]
    if args.list:
        return _list_claims(chosen, path, args.json, entries)
    cov = coverage(entries)
    mut = mutant_coverage(entries)
    totals = {s: sum(c[s] for c in cov.values()) for s in STATUSES}
    if args.json:
        print(json.dumps(_claims_document(entries, entries, path), indent=2))
        return 0
    head = ["paper", *STATUSES, "total", "with mutants", "with slack", "min slack",
            "max overspend"]

    def with_mutants(row: dict[str, int]) -> str:
        return f"{row['with_mutants']}/{row['needing']}"

    def sharpness(chosen: list[Any]) -> list[str]:
        needing = [e for e in chosen if e.status in ("tested", "erratum")
                   and e.kind in ("privacy", "utility")]
        slacks = [e.slack for e in needing if e.slack is not None]
        overs = [e.detectable_overspend for e in needing if e.detectable_overspend is not None]
        return [f"{len(slacks)}/{len(needing)}", _figure(min(slacks) if slacks else None),
                _figure(max(overs) if overs else None)]

    rows = [[p, *(str(c[s]) for s in STATUSES), str(sum(c.values())), with_mutants(mut[p]),
             *sharpness([e for e in entries if e.paper == p])] for p, c in cov.items()]
    total_mut = {k: sum(r[k] for r in mut.values()) for k in ("with_mutants", "needing")}
    rows.append(["total", *(str(totals[s]) for s in STATUSES), str(len(entries)),
                 with_mutants(total_mut), *sharpness(list(entries))])
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(f"Claims catalogue {path}: {len(entries)} results")
    for row in [head, *rows]:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))
    print("with mutants: tested/erratum privacy and utility results whose catalogue entry names "
          "at least one mutant (a broken variant the same test body must catch; the report's "
          "kill matrix shows which were caught); slack: the reference's loss at the tested "
          "configuration / the asserted bound (utility: failure rate / beta); detectable "
          "overspend: the smallest budget error factor the test catches with power >= 0.9")
    return 0
