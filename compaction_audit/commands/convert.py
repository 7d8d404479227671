"""``compaction-audit convert IN -o OUT``: any supported log -> ``compaction-audit/1``."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any, NamedTuple

import typer

from compaction_audit.commands.common import fail, output_path, say, say_some, stdout_errors
from compaction_audit.errors import AuditError, LogError, UsageError

# The readers, adapters and writer (Polars among them) load when a conversion runs,
# not with the command line (issue 14, item 4).


class SourceFormat(StrEnum):
    """Input formats ``--from`` accepts."""

    native = "native"
    claude_code = "claude-code"
    codex = "codex"
    cline = "cline"
    gemini_cli = "gemini-cli"
    opencode = "opencode"
    openhands = "openhands"


def source_records(path: str, source: str | None = None
                   ) -> tuple[str, Iterator[tuple[int, Any]]]:
    """The format of ``path`` (detected unless ``source`` is given) and its
    ``(source_line, record)`` pairs in ``compaction-audit/1`` shape.

    Raises :class:`LogError` for unreadable, unrecognized or malformed input (lazily,
    while iterating, for errors past the first lines).
    """
    import orjson

    from compaction_audit.io.detect import ADAPTERS, peek_format
    from compaction_audit.io.jsonerrors import json_error
    from compaction_audit.io.lines import iter_lines
    from compaction_audit.io.load import FORMATS
    from compaction_audit.io.surrogates import loads

    fmt: str
    if source is None:
        fmt, lines = peek_format(path)
    else:
        if source not in FORMATS:
            raise UsageError(f"unknown format {source!r} (known: {', '.join(FORMATS)})")
        fmt, lines = source, iter_lines(path)
    if fmt != "native":
        return fmt, ADAPTERS[fmt](path, lines)

    def decoded() -> Iterator[tuple[int, Any]]:
        for number, raw in lines:
            try:
                yield number, loads(raw)  # a lone "\ud83d" as audit reads it (adv71 #2)
            except orjson.JSONDecodeError as exc:
                raise LogError(path, number, json_error(raw, exc.msg, exc.pos)) from None

    return fmt, decoded()


class Converted(NamedTuple):
    """What :func:`convert` did: the input ``format``, ``records`` and ``rounds`` written."""

    format: str
    records: int
    rounds: int


def convert(path: str, output: str, source: str | None = None,
            notes: list[str] | None = None) -> Converted:
    """Convert ``path`` to a ``compaction-audit/1`` log at ``output`` (``-``: stdout).
    ``notes``, when given, receives the notes the adapter wrote on the session record
    (``reader_notes``: what it did not read, e.g. a Cline compaction file left unread
    beside its messages file).

    Every record goes through :class:`~compaction_audit.io.writer.LogWriter`, so the
    output is checked by the reader's rules; an error names the *input* line the bad
    record stands for.  Output appears only when the whole input converted: it is
    written to a temporary file (next to ``output``), then renamed or copied to stdout;
    a device, FIFO or symlink target is written through, and an output that is the
    input is refused (:mod:`compaction_audit.outfile`).
    Raises :class:`LogError` (or :class:`UsageError` for an unknown ``source``, or an
    output that is the input, a directory, or not writable).
    """
    if output == "-":
        from compaction_audit.outfile import refuse_same_stdout

        refuse_same_stdout([path], source)  # '> t.jsonl' of t.jsonl: the shell emptied it already
        with tempfile.TemporaryFile() as tmp:
            done = _convert_bounded(path, tmp, output, source, notes)
            tmp.seek(0)
            with stdout_errors(sys.stdout):
                shutil.copyfileobj(tmp, sys.stdout.buffer)
                sys.stdout.buffer.flush()
        return done
    from compaction_audit.outfile import output_target, refuse_same_stderr

    refuse_same_stderr([path], source)  # a note or an error line appended onto the input
    with output_target(output, [path], source) as target:
        return _convert_bounded(path, target, output, source, notes)


def _convert_bounded(path: str, target: str | IO[bytes], output: str,
                     source: str | None, notes: list[str] | None) -> Converted:
    """:func:`_convert`; under an address-space limit in a spawned child that has the
    whole limit (:func:`compaction_audit.runtime.isolated.call_in_child`), as the audit of a
    trace is: orjson faults on an allocation that fails, and a valid 63 MB line read or
    written under ``ulimit -v`` ended ``convert`` with SIGSEGV and no line (adv24 F3).
    A child that dies so raises ``MemoryError`` (the command's out of memory line,
    exit 2); the output is then not written (``target``: the temporary file of
    :func:`~compaction_audit.outfile.output_target`, or the one for standard output,
    handed to the child as a descriptor)."""
    from compaction_audit.runtime import addrspace

    if addrspace.address_space_limit() is None:
        return _convert(path, target, output, source, notes)
    from compaction_audit.runtime import isolated

    sink = target if isinstance(target, str) else isolated.handed_over(target.fileno())
    try:
        got = isolated.call_in_child(_convert_apart, path, sink, output, source, path=path)
    except isolated.ChildDied as died:
        if isolated.ran_out(died):
            raise MemoryError from None
        raise RuntimeError(f"the process converting the log ended without a result "
                           f"({died})") from None
    if isinstance(got, AuditError):
        raise got
    done, said = got
    if notes is not None:
        notes += said
    return done


def _convert_apart(path: str, sink: str | int, output: str, source: str | None
                   ) -> tuple[Converted, list[str]] | AuditError:
    """The child's :func:`_convert` (``sink``: a path, or a descriptor of the parent's
    temporary file): the result and the notes, or the error to raise."""
    from compaction_audit.runtime import addrspace

    if addrspace.polars_may_not_load():  # as __main__ does: convert needs no Polars
        import warnings

        warnings.filterwarnings("ignore", "Polars binary is missing")
    notes: list[str] = []
    try:
        if isinstance(sink, int):
            with open(sink, "wb") as fh:
                done = _convert(path, fh, output, source, notes)
        else:
            done = _convert(path, sink, output, source, notes)
    except AuditError as exc:
        return exc
    return done, notes


def _convert(path: str, target: str | IO[bytes], output: str,
             source: str | None, notes: list[str] | None = None) -> Converted:
    from compaction_audit.io.records import LINE_FILE_KEY
    from compaction_audit.io.writer import LogWriter

    rounds = 0
    try:
        fmt, records = source_records(path, source)
        with LogWriter(target) as log:
            for line, record in records:
                if type(record) is not dict:  # a native log's line is read as written
                    # (adv103 #4: "5" or "[]" was an internal error, audit names it)
                    raise LogError(path, line, "a record must be a JSON object", "")
                if record.get("type") == "round":
                    # its line is now a line of the output: the source's file is stale
                    record.pop(LINE_FILE_KEY, None)
                elif record.get("type") == "session":
                    said = record.get("reader_notes")
                    if notes is not None and isinstance(said, list):
                        notes += [str(n) for n in said]
                    if fmt != "native":
                        _name_span_lines(record, path)
                try:
                    log.write(record)
                except LogError as exc:
                    raise LogError(path, line, exc.message, exc.field) from None
                rounds += record.get("type") == "round"
    except LogError as exc:
        from compaction_audit.io.remote import shown_any

        if exc.path in (path, shown_any(path)):  # an input URL is named as shown (adv54)
            raise
        raise LogError(output, exc.line, exc.message, exc.field) from None  # the writer's
    if not rounds:  # raised inside the output's context: nothing is written
        raise LogError(path, 0, f"no round found reading it as {fmt}{_looks_like(path, fmt)}: "
                       "nothing written")
    return Converted(fmt, log.lines, rounds)


def _name_span_lines(session: dict[str, Any], path: str) -> None:
    """Name the file the spans' lines count in on an adapter's ``session`` record: a
    span keeps the line of the log it was read from (``source_line``), which the
    output does not have, so its reports say ``spotter.jsonl:660``, not ``line 660`` of
    a 6-line file.  The input's name becomes ``span_line_file`` (when the adapter named
    none: the spans were read from the input) or ``span_line_file_except_in`` (the
    spans the adapter left to the input, a Cline compaction file given); nothing for
    standard input, which has no name (docs/adapters.md, "Each span keeps its line")."""
    from compaction_audit.report.safe import unsurrogate

    if path == "-":
        return
    name = unsurrogate(Path(path).name)
    if not isinstance(session.get("span_line_file"), str):
        session["span_line_file"] = name
        session.pop("span_line_file_except", None)
        session.pop("span_line_file_except_in", None)
    elif session.get("span_line_file_except") and \
            not isinstance(session.get("span_line_file_except_in"), str):
        session["span_line_file_except_in"] = name


def _looks_like(path: str, fmt: str) -> str:
    """``" (it looks like codex: try --from codex)"`` when detection names another
    format; "" for input read once (standard input, a FIFO) or when it agrees or
    cannot tell."""
    from compaction_audit.io.detect import peek_format
    from compaction_audit.io.lines import reads_once

    if reads_once(path):
        return ""
    try:
        detected, _ = peek_format(path)
    except AuditError:
        return ""
    return "" if detected == fmt else f" (it looks like {detected}: try --from {detected})"


def _is_dir(path: str) -> bool:
    """Whether ``path`` is a folder; False when it cannot be told (a name too long, a
    folder not searchable: opening it then says why, as for any file)."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def convert_command(
    input: Annotated[str, typer.Argument(
        metavar="IN", help="The log to convert ('-' for stdin).")],
    output: Annotated[Path, typer.Option(
        "-o", "--output", parser=output_path,
        help="Where to write (.gz/.zst compress; '-' is stdout).")],
    from_: Annotated[SourceFormat | None, typer.Option(
        "--from", help="Input format (default: detected from the first lines).")] = None,
) -> None:
    """Convert a Claude Code, Codex, Cline, Gemini CLI, opencode or OpenHands log to
    compaction-audit/1.

    The adapters rebuild the agent's context from the log: a round per real user turn
    and per compaction; a raw span per user message, assistant text, tool call and
    tool result (tokens measured where the log has usage, else estimated); at each
    compaction one summary folding what it replaced, which is evicted.  Each
    compaction round keeps its 'compaction' extension object (trigger, tokens before
    and after), so the converted file audits and reports like the original, with its
    own line numbers for rounds; a lost fact keeps the line it was stated at in IN,
    named 'IN:LINE'.  A native log is re-written (validated, blank lines dropped).
    The full mapping is in docs/adapters.md.  Exit 0, or 2 for bad input (nothing
    is written then).
    """
    notes: list[str] = []
    if input != "-" and _is_dir(input):  # audit reads folders; convert one log
        fail(f"{input}: is a folder: convert reads one log file (of a Cline task, its "
             "messages file); 'audit' takes folders")
    try:
        done = convert(input, str(output), None if from_ is None else from_.value, notes)
    except AuditError as exc:
        fail(str(exc))
    say(f"converted {input} ({done.format}): {done.rounds} rounds -> {output}")
    # what the adapter did not read is said here too, not only inside the output
    say_some([f"note: {n}" for n in notes], "notes (in the output's session record)")
