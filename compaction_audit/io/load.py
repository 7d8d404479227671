"""Read any supported log into a :class:`~compaction_audit.model.Session`.

The format is detected from the first lines (:mod:`compaction_audit.io.detect`) unless
forced; adapters convert foreign logs to ``compaction-audit/1`` records, which go
through the same :class:`~compaction_audit.io.native.SessionBuilder` checks as native
logs, so every rule, report, diff and gate works on them.
"""

from __future__ import annotations

from compaction_audit.errors import InputLimit, LogError, SkipList, UsageError
from compaction_audit.io.detect import ADAPTERS, TOLERANT, Format, peek_format
from compaction_audit.io.lines import (
    DEFAULT_LIMITS,
    Limits,
    decode_lines,
    reads_once,
    valid_json_lines,
)
from compaction_audit.io.native import read_lines_strict, read_native, read_records
from compaction_audit.io.remote import is_url, shown_url
from compaction_audit.model import Session
from compaction_audit.runtime import addrspace

FORMATS = ("native", "claude-code", "codex", "cline", "gemini-cli", "opencode", "openhands")


BESIDE = {"cline": ("Cline", "session.json, .messages.json, .compaction.json")}
"""The formats whose log means another thing without the files beside it, and which:
from a URL such a log is an unreadable trace, never a silent pass on half the session
(adv53: a Cline messages file alone is "no compaction in this log").  The other
formats with companions (:data:`~compaction_audit.io.companions.COMPANIONS`) read
alone as they do locally without them: a Gemini CLI recording without its
``telemetry.log`` (token counts unknown, adv54), an opencode export (a store is a
database file, which a URL does not open)."""


def load_session(path: str, lenient: bool = False, source: str | None = None,
                 limits: Limits = DEFAULT_LIMITS) -> tuple[Session, str]:
    """Read ``path`` in its detected format (or ``source`` when given).

    Input that can be read only once (``-``, a FIFO, ``/dev/stdin``: see
    :func:`~compaction_audit.io.lines.reads_once`), and an object in storage (each
    open is a HEAD and a ranged GET, each waiting out a store that does not answer),
    is opened once: the lines read to detect the format are the start of the lines
    read.
    Returns the session and the format name.  Raises :class:`LogError` for unreadable
    or malformed input (and input beyond ``limits``) and :class:`UsageError` for an
    unknown ``source``.
    """
    if source is not None and source not in FORMATS:
        raise UsageError(f"unknown format {source!r} (known: {', '.join(FORMATS)})")
    if source == "native" and path != "-":
        addrspace.check(path, "native")  # before Polars can abort (adv15 F4)
        return read_native(path, lenient, limits), "native"
    fmt: Format
    read_errors: list[LogError] = []
    try:
        detected, lines = peek_format(path, limits, read_errors if lenient else None,
                                      checked=True)
    except LogError as exc:
        if not lenient or reads_once(path) or isinstance(exc, InputLimit):
            raise  # a limit is not "nothing recognizable" (adv32 A3)
        addrspace.check(path, "native")
        return read_native(path, lenient, limits), "native"  # nothing recognizable: skip it all
    fmt = detected if source is None else source  # type: ignore[assignment]
    if fmt in BESIDE and is_url(path):
        # read alone, a Cline messages file is a pass with "no compaction" (adv53)
        name, files = BESIDE[fmt]
        raise LogError(shown_url(path), 0, f"a {name} log is read with the files beside it "
                       f"({files}), which object storage does not give: copy the folder "
                       "and audit it locally")
    # checked once the format is known, with its figure: a check before it took every
    # trace for native, so a Claude Code transcript was first said to need 735 MiB,
    # then, the limit raised to that, 851 (ux5 F2); the lines read to detect it are
    # a few, without Polars
    addrspace.check(path, fmt)
    if fmt == "native":
        if not reads_once(path) and not is_url(path):  # a local file: read again, in
            close = getattr(lines, "close", None)      # parallel when large
            if close is not None:
                close()
            return read_native(path, lenient, limits), "native"
        if not lenient:  # an object is not fetched twice (adv16b F2)
            return read_lines_strict(path, lines), "native"
        skipped: list[LogError] = SkipList()
        session = read_records(decode_lines(path, lines, lenient, skipped), path, lenient,
                               skipped)
        session.skipped = sorted(skipped + read_errors + session.skipped, key=lambda e: e.line)
        return session, "native"
    dropped: list[LogError] = SkipList()
    if fmt in TOLERANT:  # malformed elements are skipped by the adapter when lenient
        records = ADAPTERS[fmt](path, lines, dropped if lenient else None)  # type: ignore[call-arg]
    elif lenient:  # a line that is not JSON is skipped here, for every such adapter
        records = ADAPTERS[fmt](path, valid_json_lines(path, lines, dropped))
    else:
        records = ADAPTERS[fmt](path, lines)
    session = read_records(records, path, lenient)
    session.skipped = sorted(dropped + read_errors + session.skipped, key=lambda e: e.line)
    return session, fmt
