"""A baseline file: written by :func:`dumps`, read and checked by :func:`load`
(the format: :mod:`compaction_audit.baseline`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from compaction_audit.baseline.entry import BASELINE_FORMAT, Entry, merged
from compaction_audit.errors import UsageError
from compaction_audit.report.model import Report
from compaction_audit.report.safe import clip_tree, json_safe, printable
from compaction_audit.smallfile import MAX_BASELINE_BYTES, read_bounded, unpacked

_SHA256 = re.compile(r"[0-9a-f]{64}")
"""A fingerprint as :func:`fingerprint` writes it."""


class Loaded(dict[str, Entry]):
    """:func:`load`'s entries (fingerprint -> entry) and ``cosine``: the methods of the
    rebuilt cosine the baseline was made with (None when the file does not say)."""

    cosine: tuple[str, ...] | None = None


def cosine_methods(report: Report) -> list[str]:
    """The methods of the rebuilt cosine ``report``'s traces were audited with, sorted
    (none where no trace needed it)."""
    return sorted({m for s in report.sessions if isinstance(m := s.cosine.get("method"), str)})


def cosine_mismatch(baseline: Loaded, report: Report, source: str) -> str | None:
    """One line saying that ``baseline`` (from file ``source``) was made with another
    method of the rebuilt cosine than ``report``'s traces were audited with, None when
    it was not, or one of them does not say."""
    made = baseline.cosine
    now = cosine_methods(report)
    if not made or not now or set(made) == set(now):
        return None
    return (f"baseline {source}: made with the rebuilt cosine of {', '.join(made)}, this run "
            f"used {', '.join(now)}: the findings that read it (salience-inversion, "
            "compaction-drift, salience-disagreement) may differ from the baseline's; make "
            "and use a baseline with the same extras installed ('[embed]' or none: "
            "docs/ci.md)")


def dumps(items: list[Entry], cosine: Sequence[str] | None = None) -> bytes:
    """The baseline file's bytes (see the module docstring); ``cosine``: the methods of
    the rebuilt cosine the findings were made with (:func:`cosine_methods`)."""
    doc = {"baseline_format": BASELINE_FORMAT, "tool": "compaction-audit",
           **({"cosine": list(cosine)} if cosine else {}),
           "findings": [{"fingerprint": e.fingerprint, "trace": e.trace, "code": e.code,
                         "rule": e.rule, "key": e.key,
                         **({} if e.facts is None else {"facts": list(e.facts)}),
                         **({} if e.session is None else {"session": e.session}),
                         **({} if e.rounds is None else {"rounds": list(e.rounds)})}
                        for e in merged(items)]}
    # traces and keys are shown escaped and bounded; matching uses the fingerprint
    return json_safe(orjson.dumps(clip_tree(doc), option=orjson.OPT_INDENT_2) + b"\n")


def load(path: Path) -> Loaded:
    """Read a baseline file: fingerprint -> entry.  Raises :class:`UsageError` for a
    missing, unreadable or malformed file, a directory or device, or one over
    :data:`~compaction_audit.smallfile.MAX_BASELINE_BYTES` (a FIFO is read, bounded:
    ``--baseline <(git show main:baseline.json)``; issue 11, fresh pass F7), and for
    one this process has not the memory to read.

    Under an address-space limit (``ulimit -v``) the file is decoded in a spawned
    child (:func:`~compaction_audit.runtime.isolated.call_in_child`): orjson faults (SIGSEGV)
    when it cannot allocate a decoded string, which ended the command with no line at
    all on a valid 72 MB baseline under 1.5 GiB (issue 11, class 5, adv25 N5); a
    child that dies so is the baseline's one out-of-memory line, exit 2."""
    from compaction_audit.runtime import addrspace, isolated

    if addrspace.address_space_limit() is None:
        return _load(path)
    try:
        read = isolated.call_in_child(_load_or_error, path, path=str(path))
    except isolated.ChildDied as died:
        if isolated.ran_out(died):
            raise UsageError(f"baseline {str(path)!r}: out of memory: reading it needs "
                             f"more than {addrspace.limit_phrase()}") from None
        raise UsageError(f"baseline {str(path)!r}: the process reading it ended "
                         f"without a result ({died})") from None
    if isinstance(read, UsageError):  # the file's own fault, said as without a limit
        raise read  # (adv26 E1: every one was "ended without a result (exit status 1)")
    return read


def _load_or_error(path: Path) -> Loaded | UsageError:
    """:func:`_load`, its :class:`UsageError` returned (the child's result)."""
    try:
        return _load(path)
    except UsageError as exc:
        return exc


BYTES_PER_VALUE = 16
"""Fewest bytes per JSON value (counted by its commas) a baseline of more than
:data:`DENSE_FROM` bytes may have.  One ``baseline create`` writes has a value per 40
bytes (a value per 30 or more, written compactly: each entry holds a 64-digit
fingerprint, its trace, code, key and rule), and decoding costs about 60 bytes of
memory per value: a 65 KB ``.gz`` of 64 MiB of ``{},`` took 3.8 GB and 26 s before
its first field error (adv72 #2)."""


MAX_RATIO = 50
"""How many times a ``.gz`` or ``.zst`` baseline may expand (past :data:`DENSE_FROM`):
``baseline create``'s output compresses about 6 times (each entry's 64-digit
fingerprint does not compress), so 50 is margin, while the traces' 1,000 let a 262
KB file (its ratio bought with a skippable frame) decode to 250 MiB, 1.9 GB of memory
(adv87 #2)."""


DENSE_FROM = 1 << 20
"""Size (bytes, decompressed) from which :data:`BYTES_PER_VALUE` is checked."""


def _dense_enough(data: bytes, label: str) -> None:
    """Raise :class:`UsageError` when ``data`` (a baseline's bytes) holds more JSON
    values than one per :data:`BYTES_PER_VALUE` bytes, before decoding it."""
    if len(data) < DENSE_FROM:
        return
    values = data.count(b",") + 1
    if values * BYTES_PER_VALUE > len(data):
        raise UsageError(f"{label}: {values:,} JSON values in {len(data):,} bytes, more "
                         f"than one per {BYTES_PER_VALUE} bytes: not a baseline as "
                         "'baseline create' writes it (a value per 30 bytes or more); "
                         "refusing to decode it")


def _load(path: Path) -> Loaded:
    """:func:`load`'s work, in this process."""
    from compaction_audit.io.jsonerrors import encoding_error, not_out_of_memory, not_utf8

    label = f"baseline {str(path)!r}"
    if str(path) == "-":  # adv58: it said "cannot read: No such file or directory"
        raise UsageError(f"{label}: a baseline is read from a file, not standard input")
    data = unpacked(read_bounded(str(path), label, MAX_BASELINE_BYTES, fifo_ok=True), label,
                    MAX_BASELINE_BYTES, MAX_RATIO, DENSE_FROM)
    _dense_enough(data, label)
    try:
        doc: Any = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        not_out_of_memory(exc.msg)  # no memory to parse: never "bad JSON" (adv25 N5)
        why = encoding_error(data) or (
            not_utf8(data) if "not valid UTF-8" in exc.msg else None) or exc.msg
        raise UsageError(f"baseline {str(path)!r}: bad JSON: {why}") from None
    version = doc.get("baseline_format") if isinstance(doc, dict) else None
    if type(version) is not int or version != BASELINE_FORMAT:  # not true, not 1.0 (adv49)
        raise UsageError(f"baseline {str(path)!r}: not a compaction-audit baseline "
                         f"(baseline_format {BASELINE_FORMAT} expected)")
    items = doc.get("findings", [])
    if not isinstance(items, list):
        raise UsageError(f"baseline {str(path)!r}: findings must be a list")
    cosine = doc.get("cosine")
    if cosine is not None and not (isinstance(cosine, list)
                                   and all(isinstance(m, str) for m in cosine)):
        raise UsageError(f"baseline {str(path)!r}: cosine must be a list of strings")
    from compaction_audit.rules import RULES

    names = {rule.code: rule.name for rule in RULES.values()}
    read: list[Entry] = []
    for i, item in enumerate(items):
        try:  # text or a number each (str() of a 1,000-deep list raised RecursionError)
            values = [item[k] for k in ("trace", "code", "key", "rule", "fingerprint")]
            if not all(type(v) is str for v in values[:4]):  # adv62: "trace": 5 was "5"
                raise TypeError
            trace, code, key, rule, fp = *values[:4], str(values[4])  # fp: checked below
            entry = Entry(trace, code, key, rule, fp)
        except (KeyError, TypeError):
            raise UsageError(f"baseline {str(path)!r}: findings[{i}] needs trace, code, "
                             "key, rule and fingerprint; trace, code, key and rule "
                             "strings") from None
        if names.get(code) != rule:  # adv62: CA999, or a rule that is not the code's
            raise UsageError(f"baseline {str(path)!r}: findings[{i}]: "
                             + (f"code '{printable(code)}' is no rule of this version"
                                if code not in names else
                                f"rule '{printable(rule)}' is not {code}'s name "
                                f"({names[code]!r})"))
        if type(item["fingerprint"]) is not str or not _SHA256.fullmatch(fp):
            # adv56: a fingerprint 5 matched nothing, and its finding counted as new
            raise UsageError(f"baseline {str(path)!r}: findings[{i}].fingerprint must be "
                             "a SHA-256 in lowercase hex (64 digits), as 'baseline create' "
                             "writes it")
        facts = item.get("facts")
        if facts is not None:
            if not isinstance(facts, list) or not all(isinstance(d, str) for d in facts):
                raise UsageError(f"baseline {str(path)!r}: findings[{i}].facts must be a "
                                 "list of strings")
            entry = replace(entry, facts=tuple(facts))
        session = item.get("session")
        if session is not None:
            if not isinstance(session, str):
                raise UsageError(f"baseline {str(path)!r}: findings[{i}].session must be "
                                 "a string")
            entry = replace(entry, session=session)
        rounds = item.get("rounds")
        if rounds is not None:
            if not (isinstance(rounds, list) and len(rounds) == 2
                    and all(type(r) is int for r in rounds) and 0 <= rounds[0] <= rounds[1]):
                raise UsageError(f"baseline {str(path)!r}: findings[{i}].rounds must be "
                                 "[first, last], two whole numbers, 0 <= first <= last")
            entry = replace(entry, rounds=(rounds[0], rounds[1]))
        read.append(entry)
    _one_session_per_trace(read, path)
    out = Loaded((e.fingerprint, e) for e in merged(read))
    out.cosine = tuple(cosine) if cosine else None
    return out


def _one_session_per_trace(read: list[Entry], path: Path) -> None:
    """Raise :class:`UsageError` when the entries of one trace path record two sessions:
    two runs' baselines joined into one file.  Merged by fingerprint (which leaves the
    session out), one session's entry took the other's facts and hid its new losses
    (adv37: a failing trace passed, exit 0)."""
    seen: dict[str, str] = {}
    for e in read:
        if e.session is None:
            continue
        first = seen.setdefault(e.trace, e.session)
        if first != e.session:
            raise UsageError(
                f"baseline {str(path)!r}: the entries for trace {e.trace!r} are of two "
                f"sessions ({first!r} and {e.session!r}): a baseline holds one run of each "
                "trace; make it again with 'compaction-audit baseline create'")
