"""Parallel reading: decode the lines of a large plain file in a helper process.

The reader of large plain files (:func:`compaction_audit.io.native.read_native`, through
:mod:`compaction_audit.io.parallel`) starts helper processes that run
:func:`reduce_lines` on a byte range each and send framed batches of messages
(``MSG_*``) back; a round whose ``retained`` list parses is sent reduced to what
entered and left the working set.  The helper loads this module by file path
(:data:`compaction_audit.io.parallel._BOOT`); it imports the field checks of
:mod:`compaction_audit.io.records`, :mod:`compaction_audit.runtime.frames`, the standard
library and orjson, nothing of the audit.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import re
from collections.abc import Callable
from typing import Any

import orjson

from compaction_audit.io.jsonerrors import json_error
from compaction_audit.io.records import FieldError, changed_saliences, retained, retained_pairs
from compaction_audit.io.surrogates import NOT_SURROGATES, loads_lone_surrogates
from compaction_audit.runtime.frames import Chain

MSG_BAD_JSON = 0
"""``(line, MSG_BAD_JSON, message)``: the line is not JSON (message as the reader's)."""
MSG_RECORD = 1
"""``(line, MSG_RECORD, record)``: the decoded record, to be checked as usual."""
MSG_REDUCED = 2
"""``(line, MSG_REDUCED, record_without_retained, previous_line, entering, leaving,
salience_sum, salience_known, offset, length, changed)``: a round whose ``retained`` ids,
compared with those of the round at ``previous_line`` (0: the empty working set before
the first round), gained ``entering`` and lost ``leaving``; ``offset``/``length`` locate
the raw line in the file, for when the reader needs it whole; ``changed`` lists the
``(id, salience)`` pairs not in that previous round's ``retained`` (entering, or with
a new salience)."""
MSG_READ_ERROR = 3
"""``(line, MSG_READ_ERROR, message)``: the file could not be read further."""
MSG_END = 4
"""``(lines, MSG_END)``: the last message; ``lines`` physical lines were read."""
LAST_FRAME = 1 << 31
"""Set in the length of the frame that holds ``MSG_END``."""


_NON_BLANK = re.compile(rb"\S")


def _skip_blank_run(handle: Any, most: int) -> tuple[int, int]:
    """Read past the blank bytes ahead in ``handle`` (at most ``most``; -1: no limit)
    a buffer at a time, up to the start of the next line holding a non-blank byte;
    returns ``(bytes, newlines)`` read.  A gigabyte of blank lines costs no per-line
    work (issue 11, item 4)."""
    total = lines = 0
    while most < 0 or total < most:
        ahead = handle.peek(1 << 16)
        if not ahead:
            break
        found = _NON_BLANK.search(ahead)
        cut = len(ahead) if found is None else ahead.rfind(b"\n", 0, found.start()) + 1
        if most >= 0:
            cut = min(cut, most - total)
        if cut <= 0:
            break
        lines += ahead.count(b"\n", 0, cut)
        handle.read(cut)
        total += cut
        if found is not None:
            break
    return total, lines


def reduce_lines(path: str, write: Callable[[bytes], Any], start: int = 0, stop: int = -1,
                 batch_bytes: int = 1 << 18, max_line: int = -1, differ: Any = None) -> None:
    """Decode the non-blank lines of the plain file ``path`` and write framed batches.

    Reads the lines that start at byte offsets ``start`` (a line start) up to ``stop``
    (exclusive; -1: the end of the file).  Line numbers count from 1 at ``start``.
    Each batch is a 4-byte little-endian length, the chained CRC-32 of the body (a
    :class:`compaction_audit.runtime.frames.Chain`: a batch lost whole makes the next
    one's differ) and a :mod:`marshal` list of messages
    (``MSG_*``) as the body; the last one ends with ``MSG_END`` and has ``LAST_FRAME`` set in its
    length.  A round record with a pair-form
    ``retained`` list that :func:`retained_pairs` accepts becomes ``MSG_REDUCED``
    against the previous round of this range whose ``retained`` parsed (:func:`retained`
    decides when the fast path does not; the first such round of a range that does not
    start the file is sent whole); everything else is sent whole.  The receiver uses a
    reduction only if its working set is that of the reduction's previous line.
    A line longer than ``max_line`` bytes (-1: no limit) ends the stream with
    ``MSG_READ_ERROR`` before more of it is read.

    ``differ``: a :class:`~compaction_audit.io.retained_bytes.RetainedBytes` (None: do
    without).  A round line it reduces against the previous round on its bytes is sent
    as ``MSG_REDUCED`` without being decoded whole, with the same fields as the
    general path would give (issue 14: a 20,000-item list per round is decoded only
    where it changed).
    """
    gc.disable()
    prev_line, prev_ids = (0, set[str]()) if start == 0 else (-1, set[str]())
    prev_table: dict[str, Any] = {}
    pending: list[Any] = []
    chain = Chain()
    size = 0

    def flush(last: bool = False) -> None:
        nonlocal pending, size
        data = marshal.dumps(pending)
        write((len(data) | (LAST_FRAME if last else 0)).to_bytes(4, "little")
              + chain.seal(data) + data)
        pending, size = [], 0

    number = 0
    offset = start
    try:
        with open(path, "rb", buffering=1 << 16) as handle:
            handle.seek(start)
            readline = handle.readline
            limit = max_line + 1 if max_line >= 0 else -1
            while offset != stop:
                raw = readline(limit)
                if not raw:
                    break
                number += 1
                here = offset
                offset += len(raw)
                if len(raw) == limit and not raw.endswith(b"\n"):
                    pending.append((number, MSG_READ_ERROR,
                                    f"line longer than {max_line} bytes (max_line_bytes)"))
                    break
                if not raw.strip():
                    skipped, lines = _skip_blank_run(handle, stop - offset if stop >= 0 else -1)
                    offset += skipped
                    number += lines
                    continue
                reduced = differ.reduce(raw) if differ is not None and differ.ready else None
                if reduced is not None:
                    obj, entering, leaving, total, count, changed = reduced
                    pending.append((number, MSG_REDUCED, obj, prev_line, entering, leaving,
                                    total, count, here, len(raw), changed))
                    prev_line, prev_ids, prev_table = number, differ.ids, differ.table
                    size += len(raw) >> 4
                    if size >= batch_bytes:
                        flush()
                    continue
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    obj = loads_lone_surrogates(raw, exc)  # adv67 #6: a lone "\ud83d"
                    if obj is NOT_SURROGATES:
                        pending.append((number, MSG_BAD_JSON,
                                        json_error(raw, exc.msg, exc.pos)))
                        size += len(raw) + 64  # its message: a file of bad lines is sent
                        if size >= batch_bytes:  # in batches too, and the reader stops
                            flush()  # early
                        continue
                if type(obj) is dict and obj.get("type") == "round" and "retained" in obj:
                    value = obj["retained"]
                    fast = retained_pairs(value, prev_ids) if prev_line >= 0 else None
                    if fast is not None:
                        ids, entering, total, count, table = fast
                        del obj["retained"]
                        changed = changed_saliences(table, prev_table)
                        pending.append((number, MSG_REDUCED, obj, prev_line, entering,
                                        prev_ids - ids, total, count, here, len(raw),
                                        changed))
                        prev_line, prev_ids, prev_table = number, ids, table
                        if differ is not None:
                            differ.reset(raw, ids, table, value)
                        size += len(raw) >> 4
                    else:
                        with contextlib.suppress(FieldError):  # then the round is rejected
                            prev_table = retained(value)
                            prev_line, prev_ids = number, set(prev_table)
                            if differ is not None:
                                differ.reset(raw, prev_ids, prev_table, value)
                        pending.append((number, MSG_RECORD, obj))
                        size += len(raw)
                else:
                    pending.append((number, MSG_RECORD, obj))
                    size += len(raw)
                if size >= batch_bytes:
                    flush()
    except OSError as exc:
        pending.append((number + 1, MSG_READ_ERROR, f"cannot read: {exc}"))
    pending.append((number, MSG_END))
    flush(last=True)
