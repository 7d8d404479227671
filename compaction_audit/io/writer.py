"""Write ``compaction-audit/1`` logs from an agent's compaction loop, checked as written.

A :class:`LogWriter` builds each record, encodes it, decodes the bytes again and feeds
them to the same :class:`~compaction_audit.io.native.SessionBuilder` the reader uses:
a record that the auditor would reject raises :class:`LogError` and is *not* written,
and the writer stays usable.  So a file written here always reads back cleanly::

    with LogWriter("run.jsonl.gz") as log:
        log.session(budget_tokens=8000, max_depth=3, eviction="continuous")
        log.round(0, spans=[Span("s1", 120, text="...")], retained={"s1": 0.7})

Units: every ``tokens`` and ``budget_tokens`` is a token count (int >= 0, budgets
> 0); salience is the scorer's number (float, or None when unknown).  The guide is
``docs/writing-logs.md``; the format is ``docs/log-format.md``.
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import TracebackType
from typing import IO, Any, Protocol, Self

import orjson
import zstandard

from compaction_audit.errors import LogError
from compaction_audit.io.native import SessionBuilder
from compaction_audit.model import SCHEMA_ID
from compaction_audit.outfile import open_output
from compaction_audit.report.safe import safe_json

__all__ = ["LogWriter", "Span", "Summary", "write_log"]

_DUMPS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE


@dataclass(frozen=True, slots=True)
class Span:
    """A raw (leaf) span that entered the context this round.

    ``id``: unique in the session across spans and summaries.  ``tokens``: its size
    in tokens (int >= 0).  ``salience_class``: ``"discriminating"`` or ``"narrative"``,
    your own classification.  ``source``: free-form origin (message id; a tool call is
    ``tool_call:NAME``, a tool's output ``tool_result:NAME``).  ``role``: who wrote it,
    ``"user"`` (a person), ``"assistant"``, ``"tool"`` (a tool's output) or
    ``"system"`` (text the harness injected); it decides how ``source`` is read
    (docs/log-format.md).  Fields left None are not written.
    """

    id: str
    tokens: int
    text: str | None = None
    salience_class: str | None = None
    source: str | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary created this round: a fold of ``children`` (ids defined earlier).

    ``tokens``: its own size in tokens.  ``depth``: optional, checked against the
    derived depth (1 + deepest child; raw spans are 0).  ``accounting``: a string or
    a mapping saying what precision the fold gave up (an accounted fold is not silent).
    """

    id: str
    tokens: int
    children: Sequence[str]
    text: str | None = None
    depth: int | None = None
    accounting: str | Mapping[str, Any] | None = None


class _Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> object: ...

    def close(self) -> None: ...


Target = str | os.PathLike[str] | IO[bytes]
"""A path (``.gz`` / ``.zst`` suffix compresses; ``-`` is stdout) or a binary file."""


def _open(target: Target) -> tuple[_Sink, str, bool]:
    """The sink, its display name, and whether the writer owns (closes) it."""
    if not isinstance(target, str | os.PathLike):
        name = getattr(target, "name", None)
        return target, name if isinstance(name, str) else "<stream>", False
    name = os.fspath(target)
    if name == "-":
        return sys.stdout.buffer, name, False
    lower = name.lower()  # R.JSONL.GZ too, as the report writers (adv68 #4)
    try:
        raw = open_output(name)  # closed by LogWriter.close
    except OSError as exc:
        raise LogError(name, 0, f"cannot open for writing: {exc.strerror or exc}") from None
    if lower.endswith(".gz"):
        return _Gzip(raw), name, True
    if lower.endswith(".zst"):
        return zstandard.ZstdCompressor().stream_writer(raw, closefd=True), name, True
    return raw, name, True


class _Gzip(gzip.GzipFile):
    """A gzip stream over ``raw`` with no file name and no time stamp in its header,
    so that the same records are the same bytes (usertest20 #3: ``simulate -o
    x.jsonl.gz`` twice differed, and the header named the temporary file), which
    closes ``raw`` when it closes."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(filename="", mode="wb", fileobj=raw, mtime=0)
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def _plain(value: Any) -> Any:
    """A span or summary (dataclass, mapping or anything else) as a JSON-able value."""
    if isinstance(value, Span | Summary):
        out = {f.name: getattr(value, f.name) for f in fields(value)}
        return {k: dict(v) if isinstance(v, Mapping) else v
                for k, v in out.items() if v is not None}
    return dict(value) if isinstance(value, Mapping) else value


def _seq(values: Any, convert: Callable[[Any], Any] = lambda v: v) -> Any:
    """A list from an iterable; anything else (a string, a mapping, a number) is passed
    on as is, for the record check to name the field."""
    if not isinstance(values, Iterable) or isinstance(values, str | bytes | Mapping):
        return values
    return [convert(v) for v in values]


def _pair(element: Any) -> Any:
    if isinstance(element, str | int) and not isinstance(element, bool):
        return [element, None]
    return list(element) if isinstance(element, tuple | list) else element


def _retained(value: Any) -> Any:
    """``retained`` in pair form: ``[[id, salience], ...]``."""
    if isinstance(value, Mapping):
        return [[k, v] for k, v in value.items()]
    return _seq(value, _pair)


class LogWriter:
    """Write a ``compaction-audit/1`` log, validating every record before writing it.

    ``target`` is a path (``.gz`` / ``.zst`` by suffix compress; ``-`` is stdout) or
    an open binary file object (written as is, flushed but not closed on close).  Use
    it as a context manager, or call :meth:`close`.  Invalid records raise
    :class:`LogError` (``FILE:LINE: message (field)``, LINE being the line it would
    have had) and are not written; the writer's state is untouched, so you may go on.
    Line numbers count the lines this writer wrote, from 1.  A write that fails raises
    :class:`LogError` (``cannot write: ...``), but for a closed pipe, which raises
    :class:`BrokenPipeError` for the caller to end quietly (``| head``).
    """

    def __init__(self, target: Target) -> None:
        self._sink, self.path, self._owned = _open(target)
        self._builder = SessionBuilder(self.path)
        self.lines = 0
        """Lines written so far."""
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def working_set(self) -> frozenset[str]:
        """Ids in the working set after the last round written (as the auditor sees it)."""
        return self._builder.working_set

    def session(self, *, session_id: str | None = None, budget_tokens: int | None = None,
                max_depth: int | None = None, eviction: str | None = None,
                scorer: Mapping[str, Any] | None = None, recall_floor: int | None = None,
                start_spans: int | None = None, task_query: str | None = None,
                **extra: Any) -> None:
        """Write the session record (optional; if written, it must be the first record).

        ``budget_tokens``: the working set's token budget (> 0).  ``max_depth``: the
        summarizer's hierarchy cap (>= 1).  ``eviction``: ``"continuous"`` (every
        round) or ``"on-overflow"`` (only at hard overflow).  ``scorer``: free-form;
        ``depth_penalty`` > 0 means the scorer penalizes summary depth.
        ``recall_floor``: references an open task needs to a discriminating span.
        ``start_spans``: source spans at the start.  ``task_query``: what the scorer
        compares against.  ``None`` fields are left out; ``extra`` keys are written
        as extension fields.
        """
        known = {"session_id": session_id, "budget_tokens": budget_tokens,
                 "max_depth": max_depth, "eviction": eviction,
                 "scorer": None if scorer is None else dict(scorer),
                 "recall_floor": recall_floor, "start_spans": start_spans,
                 "task_query": task_query}
        record = {"type": "session", "schema": SCHEMA_ID,
                  **{k: v for k, v in known.items() if v is not None}}
        self.write({**record, **_extension(extra, record)})

    def round(self, number: int, *, spans: Iterable[Span | Mapping[str, Any]] = (),
              summaries: Iterable[Summary | Mapping[str, Any]] = (),
              evicted: Iterable[str] = (), offloaded: Iterable[str] = (),
              retained: Mapping[str, float | None] | Iterable[Any] | None = None,
              budget_tokens: int | None = None, logged: Mapping[str, Any] | None = None,
              **extra: Any) -> None:
        """Write one compaction round; ``number`` must be larger than the last one.

        ``spans``: raw spans that arrived (:class:`Span` or dicts).  ``summaries``:
        folds created (:class:`Summary` or dicts; children defined earlier, or earlier
        in this list).  ``evicted``: ids gone for good.  ``offloaded``: ids moved to a
        store you can still read back.  ``retained``: the working set after eviction
        with salience, as ``{id: salience}``, ``(id, salience)`` pairs or bare ids
        (salience unknown); ``None`` leaves it out (the auditor then derives it: the
        previous set + new items - evicted - offloaded), while an empty mapping means
        an empty working set.  ``budget_tokens``: this round's budget in tokens, if it
        differs from the session's.  ``logged``: your own aggregates, cross-checked by
        the auditor.  ``extra``: extension fields (e.g. ``compaction={...}``).
        """
        record: dict[str, Any] = {"type": "round", "round": number}
        if budget_tokens is not None:
            record["budget_tokens"] = budget_tokens
        for key, values in (("spans", spans), ("summaries", summaries)):
            items = _seq(values, _plain)
            if items != []:
                record[key] = items
        for key, ids in (("evicted", evicted), ("offloaded", offloaded)):
            listed = _seq(ids)
            if listed != []:
                record[key] = listed
        if retained is not None:
            record["retained"] = _retained(retained)
        if logged is not None:
            record["logged"] = _plain(logged)
        self.write({**record, **_extension(extra, record)})

    def write(self, record: Mapping[str, Any]) -> int:
        """Validate and write one already-built record (a dict); returns its line number.

        Non-finite floats are written as ``null`` (JSON has no NaN), which is also
        what gets validated.  Text is written so that no CI runner or terminal acts
        on it (:func:`~compaction_audit.report.safe.safe_json`: invisible characters
        as ``\\uXXXX``, ``##[`` as ``\\u0023#[``); it decodes to the same string.
        After an I/O error (:class:`LogError` "cannot write") the file is in an
        unknown state: close the writer.
        """
        if self._closed:
            raise ValueError("write to a closed LogWriter")
        line = self.lines + 1
        try:
            data = safe_json(orjson.dumps(_plain(record), option=_DUMPS))
        except orjson.JSONEncodeError as exc:
            raise LogError(self.path, line, f"cannot encode as JSON: {exc}") from None
        self._builder.add(line, orjson.loads(data))
        try:
            self._sink.write(data)
        except BrokenPipeError:  # the reader went away (| head): the caller's to end quietly
            raise
        except OSError as exc:
            raise LogError(self.path, line, f"cannot write: {exc.strerror or exc}") from None
        self.lines = line
        return line

    def close(self) -> None:
        """Flush, and close the file when the writer opened it.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._owned:
                self._sink.close()
            else:
                self._sink.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise LogError(self.path, 0, f"cannot write: {exc.strerror or exc}") from None


def _extension(extra: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Extension fields; they may not replace a field the record already has."""
    clash = sorted(extra.keys() & (record.keys() | {"type", "round", "schema"}))
    if clash:
        raise TypeError(f"extension field {clash[0]!r} would replace a field of the record")
    return extra


def write_log(target: Target, records: Iterable[Mapping[str, Any]]) -> int:
    """Write already-built dict records (``{"type": "round", ...}``), validated as by
    :class:`LogWriter`; returns the number of lines written.

    Raises :class:`LogError` at the first invalid record; the lines before it are
    written.
    """
    with LogWriter(target) as log:
        for record in records:
            log.write(record)
        return log.lines
