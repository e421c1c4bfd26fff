"""The report document: schema version, validation, loading, atomic writes, shared formatting.

A run document (built by the pytest plugin, see ``shared/design.md`` §8) is a JSON-safe dict::

    {"schema_version": 2, "run_id": ..., "created": ..., "root_seed": ..., "alpha_family": ...,
     "n_claim_tests": ..., "alpha_per_test": ..., "scale": ..., "command": ...,
     "environment": {...}, "tests": [...], "records": [...], "holm": [...],
     "catalog": {...} | None, "kill_matrix": [...], "summary": {...}}

The JSON Schema is ``dpcheck/schemas/run.schema.json`` (:func:`dpcheck.report.strict_json.load_schema`).
Version 2 (this one) is strict JSON (non-finite numbers are the strings ``"inf"``, ``"-inf"``,
``"nan"``) and calls a record that found no violation ``not-refuted`` (version 1 said ``holds``,
which reads like a proof); version-1 files still load (upgraded in memory).

``audit.json`` is the single source of truth; Markdown and HTML are rendered from it. Every file is
written atomically (a temporary file in the same directory, then :func:`os.replace`), so an
interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dpcheck.errors import InvalidArgument
from dpcheck.report.strict_json import decode, encode

__all__ = [
    "SCHEMA_VERSION", "FORMATS", "FORMAT_FILES", "VERDICTS", "dumps", "validate", "load_run", "resolve_run",
    "atomic_write_bytes", "atomic_write_text", "point_latest",
]

#: Version of the run-document layout; bump when a field changes meaning.
SCHEMA_VERSION = 2
JSON_NAME, MD_NAME, HTML_NAME, FIGURES_DIR = "audit.json", "audit.md", "audit.html", "figures"
#: The report formats and the file each writes: the one table that
#: :func:`dpcheck.report.write_run`, ``dpcheck report render --formats`` and the plugin's
#: ``--dpcheck-formats`` read (``md`` also writes ``summary.md`` and, with ``html``, the figures).
FORMAT_FILES: dict[str, str] = {"json": JSON_NAME, "md": MD_NAME, "html": HTML_NAME}
#: Output formats of :func:`dpcheck.report.write_run`, in writing order.
FORMATS = tuple(FORMAT_FILES)

#: verdict -> (label for people, colour, section). Sections: 0 problems, 1 expected, 2 the rest.
VERDICTS: dict[str, tuple[str, str, int]] = {
    "violation": ("VIOLATION", "#d62728", 0),
    "missed-violation": ("MISSED violation (expected, not found)", "#9467bd", 0),
    "expected-violation": ("expected violation (caught)", "#ff7f0e", 1),
    "erratum-confirmed": ("erratum confirmed", "#8c564b", 1),
    "not-refuted": ("not refuted (no violation found)", "#2ca02c", 2),
    "measurement": ("measurement", "#7f7f7f", 2),
}
SECTIONS = ("Violations and missed violations", "Expected violations and confirmed errata",
            "Other records")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


# --------------------------------------------------------------------------- JSON and validation

def dumps(document: Mapping[str, Any]) -> str:
    """The document as strict JSON text (non-finite floats as ``"inf"``/``"-inf"``/``"nan"``
    strings, numpy values converted; see :mod:`dpcheck.report.strict_json`)."""
    try:
        return json.dumps(encode(document), indent=1, allow_nan=False, ensure_ascii=False) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"document is not JSON-serialisable: {exc}") from exc


#: Verdict words of older schema versions -> today's.
_OLD_VERDICTS = {"holds": "not-refuted"}


def _upgrade(document: dict[str, Any]) -> dict[str, Any]:
    """Today's words in an older (or in-memory, plugin-built) document; records are copied."""
    records = document.get("records")
    if isinstance(records, list) and any(
            isinstance(r, Mapping) and r.get("verdict") in _OLD_VERDICTS for r in records):
        document["records"] = [
            {**r, "verdict": _OLD_VERDICTS[r["verdict"]]}
            if isinstance(r, Mapping) and r.get("verdict") in _OLD_VERDICTS else r
            for r in records]
    document["schema_version"] = SCHEMA_VERSION
    return document


def validate(document: Any) -> dict[str, Any]:
    """Check the parts every renderer relies on; return the document (as a dict).

    Raises
    ------
    InvalidArgument
        If ``document`` is not a dict, has no or an unknown ``schema_version``, a missing or
        unsafe ``run_id`` (it becomes a directory name), or ``records``/``tests``/``holm`` that
        are not lists of dicts.
    """
    if not isinstance(document, Mapping):
        raise InvalidArgument(f"document={type(document).__name__} must be a dict")
    if "schema_version" not in document:
        raise InvalidArgument("document has no 'schema_version' (not a dpcheck run document)")
    version = document["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidArgument(f"schema_version={version!r} must be a positive integer")
    if version > SCHEMA_VERSION:
        raise InvalidArgument(f"schema_version={version} is newer than this dpcheck understands "
                              f"({SCHEMA_VERSION}); upgrade dpcheck")
    run_id = document.get("run_id")
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or ".." in run_id:
        raise InvalidArgument(f"run_id={run_id!r} must be a non-empty name of letters, digits "
                              "and ._+- (it names the run directory)")
    if not isinstance(document.get("records"), list):
        raise InvalidArgument(f"records={type(document.get('records')).__name__} must be a list")
    for key in ("records", "tests", "holm"):
        items = document.get(key) or []
        if not isinstance(items, list):
            raise InvalidArgument(f"{key} must be a list")
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise InvalidArgument(f"{key}[{i}]={item!r:.60} must be a dict")
    catalog = document.get("catalog")
    if catalog is not None and not isinstance(catalog, Mapping):
        raise InvalidArgument("catalog must be a dict or null")
    return _upgrade(dict(document))


def resolve_run(path: str | os.PathLike[str]) -> Path:
    """The ``audit.json`` named by ``path``: the file itself, a run directory, a reports
    directory (its ``latest`` run), or a ``latest`` link / text file."""
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidArgument(f"path={path!r} must be a path (a run directory, its "
                              "audit.json, or a reports directory)")
    p = Path(path)
    if p.is_dir():
        if (p / JSON_NAME).is_file():
            return p / JSON_NAME
        if (p / "latest").exists():
            return resolve_run(p / "latest")
        raise InvalidArgument(f"path={str(p)!r} is a directory without {JSON_NAME} or 'latest'")
    if p.is_file() and p.name == "latest":
        run = p.read_text(encoding="utf-8").strip()
        return resolve_run(p.parent / run)
    if not p.is_file():
        raise InvalidArgument(f"path={str(p)!r} does not exist")
    return p


def load_run(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a run document (``path``: run directory, ``audit.json`` or ``latest``)."""
    file = resolve_run(path)
    try:
        document = decode(json.loads(file.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"{file} is not valid JSON: {exc}") from exc
    return validate(document)


# --------------------------------------------------------------------------- atomic files

def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same directory and ``os.replace``.

    Readers see the old file or the complete new one, never a part; on any error the temporary
    file is removed and ``path`` is untouched. The file gets mode ``0666 & ~umask`` (0644 with
    the usual umask), like a file created by ``open``.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; reports are for everyone to read
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def point_latest(directory: Path, run_dir: Path) -> Path:
    """Point ``directory/latest`` at ``run_dir``: a relative symlink swapped in atomically, or,
    where symlinks are unavailable, a text file holding the run directory's name."""
    latest = directory / "latest"
    tmp = directory / f".latest.{os.getpid()}.tmp"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(run_dir.name, tmp, target_is_directory=True)
        os.replace(tmp, latest)
    except (OSError, NotImplementedError):
        if tmp.is_symlink():
            tmp.unlink()
        if latest.is_dir() and not latest.is_symlink():
            raise InvalidArgument(f"{latest} is a real directory; cannot point it at a run")
        atomic_write_text(latest, run_dir.name + "\n")
    return latest


# --------------------------------------------------------------------------- shared formatting

def num(x: Any, spec: str = ".4g") -> str:
    """A number for people: ``—`` for missing, ``∞`` for infinity."""
    if x is None:
        return "—"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return format(x, spec)


def count(x: Any) -> str:
    """An integer with thin-space thousands separators (``1 000 000``)."""
    return f"{x:,}".replace(",", " ") if isinstance(x, int) and not isinstance(x, bool) else num(x)


def truncate(text: Any, limit: int = 160) -> str:
    """``text`` (any value, JSON-dumped if not a string) cut to ``limit`` characters."""
    if not isinstance(text, str):
        try:
            text = json.dumps(encode(text), allow_nan=False)
        except (TypeError, ValueError):
            text = repr(text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def curve_evidence(result: Mapping[str, Any]) -> str | None:
    """What an audit of a curve claim found (``None`` for (ε, δ) claims): the confirmed box's
    margin against the claimed curve (> 0: outside, the claim is refuted) and the lower bounds
    on the claim's parameter (μ, ρ, ε(α))."""
    curve = result.get("curve")
    if not isinstance(curve, Mapping):
        return None
    margin = curve.get("margin")
    if isinstance(margin, (int, float)) and math.isfinite(margin):
        where = (f"margin {num(margin, '.3g')} outside the claimed curve (refutes it)"
                 if margin > 0 else f"the nearest box {num(-margin, '.3g')} inside the claimed "
                 "curve")
    else:
        where = "no confirmed box near the claimed curve"
    lower = curve.get("parameter_lower") or {}
    bounds = ", ".join(f"{k} ≥ {num(v, '.4g')}" for k, v in lower.items()
                       if isinstance(v, (int, float)))
    return where + (f"; {bounds}" if bounds else "")


def claim_text(claim: Any) -> str:
    """``1-DP`` or ``(1, 1e-05)-DP`` from a claim dict."""
    if not isinstance(claim, Mapping):
        return "—"
    eps, delta = claim.get("epsilon"), claim.get("delta") or 0.0
    kind = claim.get("kind")
    if kind == "approx":
        return f"({num(eps, 'g')}, {num(delta, 'g')})-DP"
    curves = {"gdp": lambda: f"{num(claim.get('mu'), 'g')}-GDP",
              "zcdp": lambda: f"{num(claim.get('rho'), 'g')}-zCDP",
              "rdp": lambda: f"({num(claim.get('alpha'), 'g')}, {num(eps, 'g')})-RDP",
              "f-dp": lambda: f"{claim.get('f')}-DP",
              "curve": lambda: f"{claim.get('name')} curve"}
    if kind in curves:
        return curves[kind]()
    return f"{num(eps, 'g')}-DP"


def test_name(nodeid: Any) -> str:
    """The part of a pytest node id after the file: ``Class::test_x[param]``."""
    text = str(nodeid or "?")
    return text.split("::", 1)[1] if "::" in text else text


def record_label(record: Mapping[str, Any], limit: int = 48) -> str:
    """Short row label: test name (and parameters) plus the call number. When too long, the
    function name is shortened first: the parameter id is what tells rows apart."""
    name = test_name(record.get("nodeid"))
    func, bracket, params = name.partition("[")
    if len(name) > limit and bracket:
        room = max(limit - len(params) - 1, 8)
        name = (func if len(func) <= room else func[: room - 1] + "…") + "[" + params
    return f"{truncate(name, limit)} · call {record.get('call', '?')}"


def verdict_label(verdict: Any) -> str:
    return VERDICTS.get(str(verdict), (str(verdict), "", 2))[0]


def verdict_colour(verdict: Any) -> str:
    return VERDICTS.get(str(verdict), ("", "#1f77b4", 2))[1]


def sides(direction: Any) -> tuple[str, str]:
    """``(numerator, denominator)`` datasets of a witness: ``("D", "D′")`` or the reverse."""
    return ("D", "D′") if direction == "d>d_prime" else ("D′", "D")


def event_text(witness: Mapping[str, Any]) -> str:
    """The event of a witness, e.g. ``0.26 < output <= 1.06`` (from its description); for a
    paired witness both events, ``output > 3} with S' = {output <= 0`` (read inside
    ``S = {…}``)."""
    desc = str(witness.get("description", ""))
    if desc.startswith("S = {") and "}: P[" in desc:
        return desc[5: desc.index("}: P[")]
    if desc.startswith("S = {") and "} (paired): " in desc:
        return desc[5: desc.index("} (paired): ")]
    return desc or "?"


def holm_map(document: Mapping[str, Any]) -> dict[tuple[str, int], float]:
    """``(nodeid, call) -> Holm-adjusted p-value``."""
    return {(str(h.get("nodeid")), h.get("call")): h.get("p_holm")
            for h in document.get("holm") or [] if h.get("p_holm") is not None}


def sectioned(records: Iterable[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Records split into :data:`SECTIONS` (problems, expected, rest), order kept within each."""
    out: list[list[Mapping[str, Any]]] = [[], [], []]
    for rec in records:
        out[VERDICTS.get(str(rec.get("verdict")), ("", "", 2))[2]].append(rec)
    return out


def shows_violation(record: Mapping[str, Any]) -> bool:
    """An audit record with a refuting witness (a region figure is drawn for it)."""
    result = record.get("result") or {}
    return (record.get("type") == "audit" and bool(result.get("violation"))
            and isinstance(result.get("witness"), Mapping))


def coverage_rows(catalog: Any) -> tuple[list[str], list[tuple[str, list[int]]]]:
    """Catalogue coverage as ``(statuses, [(paper, counts)])`` with a final ``total`` row."""
    cov = (catalog or {}).get("coverage") or {}
    from dpcheck.catalog import STATUSES

    statuses = list(STATUSES)
    for counts in cov.values():
        statuses += [s for s in counts if s not in statuses]
    rows = [(str(p), [int(c.get(s, 0)) for s in statuses]) for p, c in sorted(cov.items())]
    if rows:
        rows.append(("total", [sum(r[1][i] for r in rows) for i in range(len(statuses))]))
    return statuses, rows


def header_items(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Key/value lines of the report header."""
    d = document
    items = [("run id", str(d.get("run_id"))), ("created", str(d.get("created", "—"))),
             ("root seed", num(d.get("root_seed"), "d") if isinstance(d.get("root_seed"), int)
              else num(d.get("root_seed"))),
             ("family α", num(d.get("alpha_family"), "g")),
             ("claim tests", num(d.get("n_claim_tests"))),
             ("per-test α", num(d.get("alpha_per_test"), ".4g")),
             ("scale", num(d.get("scale"), "g")),
             *([("sequential audits", "on" if d["sequential"] else "off")]
               if isinstance(d.get("sequential"), bool) else []),
             ("command", str(d.get("command", "—")))]
    env = d.get("environment") or {}
    if isinstance(env, Mapping):
        items += [(f"env: {k}", str(v)) for k, v in env.items()]
    return items
