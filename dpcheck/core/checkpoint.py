"""Checkpoints of an audit's confirmation counts: interrupt a long audit, rerun it, resume.

``audit(..., checkpoint=PATH)`` saves, after every finished confirmation chunk, the event
counts of all chunks finished so far to ``PATH`` (JSON, written to a temporary file and moved
into place with :func:`os.replace`, so a crash never leaves half a file). Rerunning the same
audit with the same ``checkpoint`` draws only the chunks missing from it; since every chunk has
its own seed (:func:`dpcheck.core.executor.chunk_generator`) and counts add up, the result is the
same bit for bit as that of an uninterrupted run.

The file carries a *fingerprint* of everything that fixes the chunks — mechanism name, claim,
samples, alpha, seed, chunk size, the other audit parameters and a SHA-256 of the pickled pair
— and a checkpoint written for other arguments is refused. Exploration is not saved: it is
redrawn (same seed, same outputs) and the events it selects, with the confirmation sizes, must
equal those saved, otherwise the mechanism's outputs are not determined by its seed and the
saved counts are refused too.

The file also carries a *digest*: the SHA-256 of its canonical JSON content. A checkpoint whose
content does not match its digest — a count edited by hand, a truncated or corrupted copy — is
refused with a one-line error, never reused; so is a count larger than its chunk's number of
outputs, or a chunk that the audit would never draw. (The digest guards against accidents, not
against someone who recomputes it.)

File format (``format = "dpcheck-audit-checkpoint"``, ``version = 2``)::

    {"format": ..., "version": 2, "fingerprint": {...}, "selection": "<sha256>",
     "events": ["<event> (<direction>)", ...], "sizes": [n_d, n_d_prime],
     "chunks": {"<side>/<index>": [count per event, ...], ...}, "digest": "<sha256>"}

:func:`dpcheck.check_accuracy` (``checkpoint=PATH``) saves its batches the same way
(:class:`AccuracyCheckpoint`, ``format = "dpcheck-accuracy-checkpoint"``): chunk ``"0/<i>"``
is ``[failures, e_1, …, e_m]``, the failure count of batch ``i`` and its ``m`` largest errors
(as many as the reported error quantile can need; :mod:`dpcheck.core.accuracy`), with no selection.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpcheck.errors import InvalidArgument

__all__ = ["AccuracyCheckpoint", "Checkpoint", "fingerprint", "fingerprint_call"]

FORMAT = "dpcheck-audit-checkpoint"
VERSION = 2


def _digest(obj: Any) -> str:
    """SHA-256 of ``obj`` pickled (protocol 4), or of its ``repr`` if it cannot be pickled."""
    try:
        data = pickle.dumps(obj, protocol=4)
    except Exception:  # noqa: BLE001 - unpicklable data: its repr stands in
        data = repr(obj).encode()
    return hashlib.sha256(data).hexdigest()


def content_digest(doc: dict[str, Any]) -> str:
    """SHA-256 of a checkpoint document's canonical JSON (sorted keys, no ``digest`` field)."""
    body = {k: v for k, v in doc.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stable_name(mechanism: Any) -> str:
    """A name of ``mechanism`` that is the same in every process (no memory addresses)."""
    name = getattr(mechanism, "__qualname__", None)
    if isinstance(name, str):
        return f"{getattr(mechanism, '__module__', '')}.{name}"
    text = repr(mechanism)
    if " at 0x" in text:
        kind = type(mechanism)
        return f"{kind.__module__}.{kind.__qualname__}"
    return text


def fingerprint(mechanism: Any, d: Any, d_prime: Any, claim: Any, **params: Any) -> dict[str, Any]:
    """The fingerprint a checkpoint must match: mechanism name, claim, the pair's digest and
    the audit parameters ``params`` (samples, alpha, seed, chunk size, ...), JSON-safe."""
    return {"mechanism": stable_name(mechanism), "claim": claim.to_dict(),
            "pair_sha256": _digest((d, d_prime)),
            **{k: v for k, v in sorted(params.items())}}


def fingerprint_call(fn: Any, **params: Any) -> dict[str, Any]:
    """The fingerprint of a checkpointed call of ``fn`` (no datasets): its stable name and the
    call's parameters, JSON-safe."""
    return {"function": stable_name(fn), **{k: v for k, v in sorted(params.items())}}


@dataclass
class Checkpoint:
    """The saved chunk counts of one audit (see the module docstring)."""

    path: Path
    fingerprint: dict[str, Any]
    chunks: dict[str, list[int]] = field(default_factory=dict)
    selection: str | None = None
    events: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    #: The ``format`` field of the file, and what the file holds (for error messages).
    FORMAT = FORMAT
    WHAT = "audit"

    @staticmethod
    def valid_chunk(value: Any) -> bool:
        """Whether ``value`` is a saved chunk: event counts (non-negative integers)."""
        return isinstance(value, list) and all(isinstance(c, int) and c >= 0 for c in value)

    @classmethod
    def open(cls, path: str | os.PathLike[str], fingerprint: dict[str, Any]) -> Checkpoint:
        """The checkpoint at ``path`` (empty if there is no file yet); raises
        :class:`InvalidArgument` if the file is unreadable or was written for other arguments."""
        if not isinstance(path, (str, os.PathLike)) or not str(path):
            raise InvalidArgument(f"checkpoint={path!r} must be a file path or None")
        p = Path(path)
        fp = json.loads(json.dumps(fingerprint))  # as it reads back from the file
        if not p.exists():
            return cls(p, fp)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidArgument(f"checkpoint={str(p)!r} cannot be read: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != cls.FORMAT \
                or doc.get("version") != VERSION:
            raise InvalidArgument(f"checkpoint={str(p)!r} is not a dpcheck {cls.WHAT} "
                                  f"checkpoint (format {cls.FORMAT!r} version {VERSION}); "
                                  "delete it to start over")
        if doc.get("digest") != content_digest(doc):
            raise InvalidArgument(f"checkpoint={str(p)!r} was edited or corrupted (its content "
                                  "does not match its digest): refusing to reuse its counts; "
                                  "delete it to start over")
        if doc.get("fingerprint") != fp:
            old = doc.get("fingerprint") if isinstance(doc.get("fingerprint"), dict) else {}
            diff = sorted(k for k in set(old) | set(fp) if old.get(k) != fp.get(k))
            raise InvalidArgument(
                f"checkpoint={str(p)!r} was written by {'an' if cls.WHAT[0] in 'aeiou' else 'a'} "
                f"{cls.WHAT} with other arguments (differs in "
                f"{', '.join(_differs(k, old.get(k), fp.get(k)) for k in diff)}): rerun with "
                "the same arguments, or use another path")
        chunks = doc.get("chunks")
        if not isinstance(chunks, dict) or not all(cls.valid_chunk(v) for v in chunks.values()):
            raise InvalidArgument(f"checkpoint={str(p)!r}: 'chunks' must map chunk names to "
                                  f"lists of {'counts' if cls is Checkpoint else 'numbers'}")
        return cls(p, fp, dict(chunks), doc.get("selection"), list(doc.get("events", [])),
                   list(doc.get("sizes", [])))

    def bind(self, selection: Any, events: list[str], sizes: tuple[int, int]) -> None:
        """Tie the checkpoint to the explored selection (chosen events and confirmation sizes);
        a saved checkpoint must have been written for the same selection."""
        digest = _digest(selection)
        if self.selection is not None and (self.selection != digest
                                           or self.sizes != list(sizes)):
            raise InvalidArgument(
                f"checkpoint={str(self.path)!r} was written for the same arguments but the "
                f"exploration now selects other events ({'; '.join(events)}; saved: "
                f"{'; '.join(self.events)}): the mechanism's outputs are not determined by its "
                "seed (global random state or nondeterministic code?); delete the checkpoint "
                "to start over")
        self.selection, self.events, self.sizes = digest, list(events), list(sizes)

    @staticmethod
    def key(side: int, index: int) -> str:
        return f"{side}/{index}"

    def get(self, side: int, index: int, n_events: int,
            size: int | None = None) -> list[int] | None:
        """The saved counts of chunk ``index`` of side ``side``, or ``None``. ``size``: the
        chunk's number of outputs; a saved count above it is refused."""
        counts = self.chunks.get(self.key(side, index))
        if counts is not None and len(counts) != n_events:
            raise InvalidArgument(f"checkpoint={str(self.path)!r}: chunk {self.key(side, index)} "
                                  f"has {len(counts)} counts for {n_events} events")
        if counts is not None and size is not None and any(c > size for c in counts):
            raise InvalidArgument(f"checkpoint={str(self.path)!r}: chunk {self.key(side, index)} "
                                  f"counts {max(counts)} outputs of {size}: refusing to reuse "
                                  "it; delete the checkpoint to start over")
        return counts

    def check_chunks(self, n_chunks: tuple[int, int]) -> None:
        """Refuse saved chunks the audit would never draw (side or index out of range)."""
        for name in self.chunks:
            side, _, index = name.partition("/")
            if not (side.isdigit() and index.isdigit() and int(side) < len(n_chunks)
                    and int(index) < n_chunks[int(side)]):
                raise InvalidArgument(f"checkpoint={str(self.path)!r} holds chunk {name!r}, "
                                      "which this audit never draws: refusing to reuse it")

    def record(self, side: int, index: int, counts: list[Any]) -> None:
        """Add a finished chunk and save the file atomically."""
        self.chunks[self.key(side, index)] = [
            c if isinstance(c, float) else int(c) for c in counts]
        self.save()

    def save(self) -> None:
        """Write the checkpoint (temporary file in the same directory, then ``os.replace``)."""
        doc = {"format": self.FORMAT, "version": VERSION, "fingerprint": self.fingerprint,
               "selection": self.selection, "events": self.events, "sizes": self.sizes,
               "chunks": dict(sorted(self.chunks.items(), key=lambda kv: tuple(
                   int(x) for x in kv[0].split("/"))))}
        doc["digest"] = content_digest(doc)
        text = json.dumps(doc, indent=1)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.path)
            except BaseException:
                with _suppress():
                    os.unlink(tmp)
                raise
        except OSError as exc:
            raise InvalidArgument(f"checkpoint={str(self.path)!r} cannot be written: {exc}") from exc


class AccuracyCheckpoint(Checkpoint):
    """The saved batches of one :func:`dpcheck.check_accuracy` run: chunk ``"0/<i>"`` is
    ``[failures, e_1, …, e_m]`` (see the module docstring)."""

    FORMAT = "dpcheck-accuracy-checkpoint"
    WHAT = "accuracy check"

    @staticmethod
    def valid_chunk(value: Any) -> bool:
        """``[failures, errors...]``: a non-negative integer, then reals (no NaN; Python's
        ``json`` writes and reads infinite errors as ``Infinity``)."""
        return (isinstance(value, list) and bool(value) and isinstance(value[0], int)
                and value[0] >= 0 and all(isinstance(e, (int, float)) and e == e
                                          for e in value[1:]))


def _differs(key: str, saved: Any, now: Any) -> str:
    """``key``, with both values when they are short scalars (a sequential audit's final stage
    is checkpointed at 87.5 % of its alpha: ``alpha (file 0.04375, now 0.05)`` says so)."""
    shown = [f"{v:.6g}" if isinstance(v, float) else repr(v) for v in (saved, now)]
    if all(v is None or isinstance(v, (bool, int, float, str)) for v in (saved, now)) \
            and max(map(len, shown)) <= 40:
        return f"{key} (file {shown[0]}, now {shown[1]})"
    return key


def _suppress() -> Any:
    import contextlib

    return contextlib.suppress(OSError)
