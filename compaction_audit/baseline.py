"""Baselines: record today's findings so that a gate fails only on new ones.

A finding's fingerprint is the SHA-256 of (trace key, rule code, key) where the trace
key is the trace's path as given, normalized and relative to the working directory
(``sample_logs/a.jsonl``), and the key is ``entity:ID`` for a finding about one item,
else ``episode:K``: the K-th run of consecutive rounds (0-based) in which that rule
fired in that trace.  No line number and no float enters it, so re-recording a trace
or nudging a threshold does not churn the baseline; every finding of one episode
shares its fingerprint.

A finding about a fold that lost discriminators also records what it lost, as
``facts``: the first 16 hex digits of the SHA-256 of each ``lost:<kind>:<text>`` unit
(:func:`compaction_audit.diff.lost_keys`).  Such a finding is in the baseline only
while what it loses is among those facts: a fold of the baseline that now loses one
more fact is new (ux5 F3: the fold's id alone hid a newly lost negation, exit 0).  A
fold finding about an item an adapter named by its line (``line-16``) with no entry of
its fingerprint is the entry of another such key of the same rule and trace whose facts
hold all of its own (:func:`_moved_folds`: usertest47 #1); a finding about what a
summary states with no entry of its fingerprint is the entry of another summary of the
same rule and trace that states all its claims (:func:`_moved_claims`).  An
entry also records the trace's session id (``session``, when the log has one): a
baseline of one session never hides the findings of another session written to the
same path (adv22a F3: a job auditing ``logs/latest.jsonl``, a new session each run, had
245 to 318 findings of unrelated sessions hidden).  An ``episode:K`` entry records the
episode's first and last round (``rounds``): a finding of that key is the entry's only
while its episode overlaps those rounds, so a new episode before a fixed one (which
takes index 0 while the fixed one frees its index) is new, and the entry stale (adv22a
F3, "related").  An entry without ``facts``, ``session`` or ``rounds`` (a baseline
written before they were recorded) matches on the fingerprint alone.

The file also records the methods of the rebuilt cosine its traces were audited with
(``cosine``: "wordllama l2_supercat 256-d" with the ``[embed]`` extra, else "lexical
TF-IDF"): the rules that read that cosine fire elsewhere under the other method, and an
audit against a baseline made with another says so (:func:`cosine_mismatch`;
usertest61 B1: a baseline made without the extra failed a run with it, with no word).

The file (JSON, sorted, one entry per fingerprint)::

    {"baseline_format": 1, "tool": "compaction-audit", "cosine"?: [method, ...],
     "findings": [{"fingerprint", "trace", "code", "rule", "key", "facts"?,
                   "session"?, "rounds"?: [first, last]}, ...]}
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compaction_audit.diff import FoldLosses

import orjson

from compaction_audit.errors import UsageError
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import clip_tree, json_safe, printable
from compaction_audit.rules.base import Finding
from compaction_audit.smallfile import MAX_BASELINE_BYTES, read_bounded, unpacked

BASELINE_FORMAT = 1
FACT_DIGITS = 16
"""Hex digits of a lost fact's digest in an entry's ``facts`` (64 bits: two facts of
one fold share a digest with odds of about one in 10^19 per pair)."""


@dataclass(frozen=True, order=True)
class Entry:
    """One baselined finding (episode or entity) of one trace; ``facts``: the digests
    of what a fold finding lost (sorted, see the module docstring), None for any other
    finding or an entry that did not record them; ``session``: the trace's session id;
    ``rounds``: an episode's first and last round numbers.  Equality and order ignore
    those three."""

    trace: str
    code: str
    key: str
    rule: str
    fingerprint: str
    facts: tuple[str, ...] | None = field(default=None, compare=False)
    session: str | None = field(default=None, compare=False)
    rounds: tuple[int, int] | None = field(default=None, compare=False)

    def holds(self, facts: tuple[str, ...] | None, session: str | None = None,
              rounds: tuple[int, int] | None = None) -> bool:
        """Whether a finding of this fingerprint, in a trace of ``session``, that lost
        ``facts``, in an episode over ``rounds`` (first, last), is this entry: the same
        session (when both are known), each fact among :attr:`facts` and the rounds
        overlapping :attr:`rounds` (each always when either side is None)."""
        if self.session is not None and session is not None and self.session != session:
            return False
        if self.rounds is not None and rounds is not None and (
                rounds[1] < self.rounds[0] or rounds[0] > self.rounds[1]):
            return False
        return self.facts is None or facts is None or set(facts) <= set(self.facts)


def trace_key(path: str) -> str:
    """``path`` normalized with ``/``, relative to the working directory when under it.
    A path with a ``..`` component is resolved first: ``link/../t.jsonl`` is beside
    the folder ``link`` names, not ``t.jsonl``, and normalizing it by its letters made
    the baseline of one file apply to another (adv19a F5).  An object storage URL is
    kept as given: its key is no path (``s3://b/a/../x.jsonl`` and ``s3://b/x.jsonl``
    are two objects, and the scheme's ``//`` lost a slash; adv66 #5)."""
    from compaction_audit.io.remote import is_url

    if path == "-" or is_url(path):
        return path
    if ".." in path.replace(os.sep, "/").split("/"):
        path = os.path.realpath(path)
    if os.path.isabs(path):
        with contextlib.suppress(ValueError):  # another drive (Windows)
            path = os.path.relpath(path)
        if path.startswith(".."):
            path = os.path.abspath(path)
    return os.path.normpath(path).replace(os.sep, "/")


_SHA256 = re.compile(r"[0-9a-f]{64}")
"""A fingerprint as :func:`fingerprint` writes it."""


def fingerprint(trace: str, code: str, key: str) -> str:
    """SHA-256 (hex) of the trace key, the rule code and the finding key (UTF-8; the
    undecodable bytes of a file name hash as themselves)."""
    return hashlib.sha256(f"{trace}\0{code}\0{key}".encode("utf-8", "surrogateescape")
                          ).hexdigest()


_ESCAPED_RE = re.compile(r"\\x([89a-f][0-9a-f])|\\u(d[89a-f][0-9a-f]{2})")
"""A byte of a file name that was not UTF-8, as :func:`~compaction_audit.report.safe.
unsurrogate` writes it (``\\xff``; ``\\udcff``)."""


def _of_another_file(fp: str, e: Entry, own: str) -> bool:
    """Whether the entry ``e`` (fingerprint ``fp``), listed under the trace key ``own``
    as written, is provably of another file: its fingerprint is not of ``own`` but of
    ``e.trace`` as written (a file named with the four characters ``\\xff``) or with
    its escapes read back as the undecodable bytes they stand for, either way round
    (adv104 #4).  An entry of neither (a hand-made one) stays the trace's, as before."""
    if fp == fingerprint(own, e.code, e.key) or "\\" not in e.trace:
        return False
    raw = _ESCAPED_RE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)) if m.group(1)
                          else chr(int(m.group(2), 16)), e.trace)
    return any(name != own and fp == fingerprint(name, e.code, e.key)
               for name in {raw, e.trace})


def finding_keys(findings: list[Finding]) -> list[str]:
    """The key of each finding (same order): ``entity:ID`` or ``episode:K``.

    Episodes are counted per rule over the findings in round order: a finding starts a
    new episode unless the rule's previous finding was at the same or the previous
    round number.
    """
    keys: list[str] = [""] * len(findings)
    state: dict[str, tuple[int, int]] = {}  # code -> (episode index, last round)
    order = sorted(range(len(findings)), key=lambda i: findings[i].round)
    for i in order:
        f = findings[i]
        if f.entity is not None:
            keys[i] = f"entity:{f.entity}"
            continue
        index, prev = state.get(f.code, (-1, -2))
        if f.round not in (prev, prev + 1):
            index += 1
        state[f.code] = (index, f.round)
        keys[i] = f"episode:{index}"
    return keys


def _digest(unit: str) -> str:
    return hashlib.sha256(unit.encode("utf-8", "surrogatepass")).hexdigest()[:FACT_DIGITS]


def session_key(s: SessionReport) -> str | None:
    """The session id of ``s`` as a baseline file holds it (clipped: a 2,000-character
    id was stored clipped and never matched again: adv24 F6); None without one."""
    return clip_tree(s.header.session_id) if isinstance(s.header.session_id, str) else None


def grown_findings(s: SessionReport) -> dict[int, dict[str, Any]]:
    """``id(finding)`` -> its ``grown`` record (:func:`apply`) for each finding of ``s``
    that a baseline holds but that now loses facts the baseline does not: what the
    SARIF ``baselineState`` "updated" and the annotations' "now loses ..." are about;
    empty without a baseline."""
    info = s.extra.get("baseline")
    grown = {(g.get("code"), g.get("key")): g for g in (info or {}).get("grown") or ()
             if isinstance(g, dict)} if isinstance(info, dict) else {}
    if not grown:
        return {}
    return {id(f): grown[(f.code, e.key)] for f, e in session_entries(s)
            if (f.code, e.key) in grown}


def session_entries(s: SessionReport) -> list[tuple[Finding, Entry]]:
    """Each finding of ``s`` with its baseline entry (with the digests of what it
    lost, for a finding about a fold, or of the claim or flip it is about, for one
    about what a summary states: :func:`~compaction_audit.diff.stated_units`)."""
    from compaction_audit.diff import fold_lost_units, lost_keys, stated_units

    trace = trace_key(s.path)
    session = session_key(s)
    by_fold = fold_lost_units(s)
    keys = finding_keys(s.findings)
    spans: dict[tuple[str, str], tuple[int, int]] = {}  # an episode's first, last round
    for f, key in zip(s.findings, keys, strict=True):
        if key.startswith("episode:"):
            first, last = spans.get((f.code, key), (f.round, f.round))
            spans[(f.code, key)] = (min(first, f.round), max(last, f.round))
    out = []
    for f, key in zip(s.findings, keys, strict=True):
        stated = stated_units(f)  # a claim or flip of a summary (adv27 F1)
        units = lost_keys(f, by_fold) or stated
        facts = tuple(sorted({_digest(u) for u in units})) \
            if "children" in f.values or stated else None
        out.append((f, Entry(trace, f.code, key, f.rule, fingerprint(trace, f.code, key),
                             facts, session, spans.get((f.code, key)))))
    return out


NEW_NAMED = 3
"""New facts a grown entry names (``grown[].new``); ``new_facts`` counts them all."""
NEW_TEXT = 120
"""Characters of a new fact's text a grown entry keeps (log text: bounded)."""


def _new_units(f: Finding, by_fold: FoldLosses, b: Entry) -> list[dict[str, str]]:
    """The first :data:`NEW_NAMED` facts (``{"kind", "text"}``, ``text`` cut to
    :data:`NEW_TEXT` characters) that ``f`` loses or states and the baseline entry
    ``b`` does not hold: which fact made a baselined fold finding new (usertest14: "now
    loses 1 more fact(s)" sent a reviewer through 214 facts to find it).  A unit
    standing for the facts past a finding's list (``more:``) is ``{"kind": "more",
    "text": ""}``."""
    from compaction_audit.diff import lost_keys, stated_units

    held = set(b.facts or ())
    out = []
    for unit in lost_keys(f, by_fold) or stated_units(f):
        if _digest(unit) in held:
            continue
        head, _, rest = unit.partition(":")
        kind, _, text = rest.partition(":") if head != "more" else ("more", "", "")
        out.append({"kind": kind, "text": text[:NEW_TEXT]})
        if len(out) == NEW_NAMED:
            break
    return out


def _merged(items: list[Entry]) -> list[Entry]:
    """``items`` with one entry per fingerprint (the first), sorted: the facts of
    entries that share it are joined, and their rounds spanned (None when one of them
    has none).  One pass with a set per fingerprint: merging pairwise made 20,000
    entries of one fingerprint in a hostile baseline cost 77 s (adv23 F1)."""
    first: dict[str, Entry] = {}
    facts: dict[str, set[str] | None] = {}
    rounds: dict[str, tuple[int, int] | None] = {}
    for e in items:
        fp = e.fingerprint
        if fp not in first:
            first[fp] = e
            facts[fp] = None if e.facts is None else set(e.facts)
            rounds[fp] = e.rounds
            continue
        have = facts[fp]
        if have is None or e.facts is None:
            facts[fp] = None
        else:
            have.update(e.facts)
        span = rounds[fp]
        rounds[fp] = (None if span is None or e.rounds is None else
                      (min(span[0], e.rounds[0]), max(span[1], e.rounds[1])))
    return sorted(replace(e, facts=None if (f := facts[fp]) is None else tuple(sorted(f)),
                          rounds=rounds[fp])
                  for fp, e in first.items())


def entries(report: Report) -> list[Entry]:
    """The distinct baseline entries of every finding in ``report``, sorted."""
    return _merged([e for s in report.sessions for _, e in session_entries(s)])


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
                        for e in _merged(items)]}
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
    out = Loaded((e.fingerprint, e) for e in _merged(read))
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


def pruned(report: Report, baseline: dict[str, Entry]) -> list[Entry]:
    """The entries of ``baseline`` less those that no longer occur in ``report`` (a
    report :func:`apply` made with this baseline: its sessions' ``stale`` entries),
    each kept entry as it was: what ``baseline prune`` writes.  A finding the baseline
    does not hold, or a fold that now loses more facts, adds nothing: regenerating the
    baseline to drop a fixed finding accepted every new one with it (usertest17 #7)."""
    gone = {e["fingerprint"] for s in report.sessions
            for e in (s.extra.get("baseline") or {}).get("stale", ())}
    return [e for fp, e in baseline.items() if fp not in gone]


def _shown(e: Entry) -> dict[str, str]:
    """An entry as a report lists it: without its facts' digests, session and rounds."""
    return {k: v for k, v in asdict(e).items() if k not in ("facts", "session", "rounds")}


def _stale_shown(stale: list[Entry], pairs: list[tuple[Finding, Entry]],
                 kept: list[Finding]) -> list[dict[str, Any]]:
    """The stale entries as a report lists them (:func:`_shown`); an episode's entry
    of a rule that has an episode reported as new in the same trace also gets its
    ``rounds`` and ``new_rounds``, the first and last rounds of each such episode: the
    rule still fires, at rounds its entry does not hold (usertest38 #10: "no longer
    occurs" beside the new CA101 read as fixed)."""
    new = {id(f) for f in kept}
    moved: dict[str, set[tuple[int, int]]] = {}
    for f, e in pairs:
        if id(f) in new and e.key.startswith("episode:") and e.rounds is not None:
            moved.setdefault(e.code, set()).add(e.rounds)
    out = []
    for e in stale:
        shown: dict[str, Any] = _shown(e)
        if e.key.startswith("episode:") and e.code in moved:
            shown["rounds"] = None if e.rounds is None else list(e.rounds)
            shown["new_rounds"] = [list(r) for r in sorted(moved[e.code])]
        out.append(shown)
    return out


def _shifted_episodes(pairs: list[tuple[Finding, Entry]], kept: list[Finding],
                      mine: list[tuple[str, Entry]], held: set[str]) -> list[Finding]:
    """``kept`` without the findings of an episode whose number moved: an
    ``episode:K`` entry not matched by its fingerprint holds the episode of its rule
    and session whose rounds overlap its own (a new episode before it made it
    ``episode:K+1``), when that episode matched no entry.  Its fingerprint is added to
    ``held``: it still occurs, so it is not stale (usertest32 #4: "no longer occurs"
    was said of an episode still there, and ``prune`` dropped its entry)."""
    loose: dict[str, list[tuple[Finding, Entry]]] = {}
    for f, e in pairs:  # the findings of episodes that matched no entry, by rule
        if e.key.startswith("episode:") and e.fingerprint not in held:
            loose.setdefault(e.code, []).append((f, e))
    gone: set[int] = set()
    taken: set[str] = set()
    for fp, b in mine:
        if fp in held or not b.key.startswith("episode:") or b.rounds is None:
            continue
        for _, e in loose.get(b.code, ()):
            if e.key not in taken and b.holds(e.facts, e.session, e.rounds):
                taken.add(e.key)  # one entry per episode, its findings all
                held.add(fp)
                gone.update(id(g) for g, ge in loose[b.code] if ge.key == e.key)
                break
    return [f for f in kept if id(f) not in gone] if gone else kept


_LINE_NAMED = re.compile(r"entity:line-[0-9]+")
"""The key of a finding about an item an adapter named by its line (``line-16``: the
product's log gave it no id), the only keys :func:`_moved_folds` matches across, and
only in a trace an adapter read (a native log's ``line-5`` is an id it chose)."""


def _moved_folds(pairs: list[tuple[Finding, Entry]], mine: list[tuple[str, Entry]],
                 baseline: dict[str, Entry]) -> dict[int, Entry]:
    """``id(finding)`` -> the entry of this trace that a fold finding with no entry of
    its own fingerprint is: one of the same rule and session, keyed by another line-named
    item (:data:`_LINE_NAMED`, on both sides), that lost every fact this finding loses
    and that no finding of this run has by its fingerprint (the first such, by key),
    else one whose every fact this finding loses, and more (the entry, grown).
    Items named by the log itself are never matched so (usertest48 #1: a fixed fold's
    entry hid another fold of a native log that lost the same rule later).  A product's
    adapter names a compaction's summary by its line ("line-16"), so a line added above
    it gave the same fold a new key: its finding was new and its entry stale
    (usertest47 #1: Codex and Cline baselines failed after one more line of a
    re-recorded trace)."""
    taken = {e.fingerprint for _, e in pairs}
    free = sorted((b for fp, b in mine if fp not in taken and b.facts
                   and _LINE_NAMED.fullmatch(b.key)), key=lambda b: b.key)
    out: dict[int, Entry] = {}
    moving = [(f, e) for f, e in pairs if e.fingerprint not in baseline and e.facts
              and _LINE_NAMED.fullmatch(e.key)]
    # first the folds that lose nothing new, then those that lose every fact of an
    # entry and more (usertest53 #3: a line added above a fold that also lost one more
    # fact read as a fixed entry and a new finding; it is the entry, grown)
    for grown in (False, True):
        for f, e in moving:
            if id(f) in out:
                continue
            for b in free:
                if b.code == e.code and b.rule == e.rule and (
                        b.holds(None, e.session) and set(b.facts or ()) <= set(e.facts or ())
                        if grown else b.holds(e.facts, e.session)):
                    out[id(f)] = b
                    free.remove(b)
                    break
    return out


def _moved_claims(pairs: list[tuple[Finding, Entry]], mine: list[tuple[str, Entry]],
                  baseline: dict[str, Entry]) -> dict[int, Entry]:
    """``id(finding)`` -> the entry of this trace that the findings about what one
    summary states (unsupported claims, flipped rules: their facts are the claims',
    :func:`~compaction_audit.diff.stated_units`) with no entry of their own fingerprint
    are: one of the same rule and session, of another summary, that holds the most of
    the claims they state (the first such, by key) and that no finding of this run has
    by its fingerprint.  A claim it does not hold stays new, as in a summary of the
    baseline that states one more (:meth:`Entry.holds`, ``grown``).  Keyed by the
    summary alone, a claim the baseline accepted became new when another summary stated
    it first (a re-recorded trace without its last summary: usertest63 #1, where
    ``diff``, which keys a claim by what it states, called it persisting)."""
    from compaction_audit.diff import stated_units

    taken = {e.fingerprint for _, e in pairs}
    free = sorted((b for fp, b in mine if fp not in taken and b.facts
                   and b.key.startswith("entity:")), key=lambda b: b.key)
    groups: dict[str, list[tuple[Finding, Entry]]] = {}  # one summary's findings
    for f, e in pairs:
        if e.fingerprint not in baseline and e.facts and stated_units(f):
            groups.setdefault(e.fingerprint, []).append((f, e))
    out: dict[int, Entry] = {}
    for group in sorted(groups.values(), key=lambda g: g[0][1].key):
        code, rule, session = group[0][1].code, group[0][1].rule, group[0][1].session
        claims = {d for _, e in group for d in e.facts or ()}
        best = max((b for b in free if b.code == code and b.rule == rule
                    and b.holds(None, session)),
                   key=lambda b: len(claims.intersection(b.facts or ())), default=None)
        if best is not None and claims.intersection(best.facts or ()):
            out.update((id(f), best) for f, _ in group)
            free.remove(best)
    return out


def apply(report: Report, baseline: dict[str, Entry], source: str = "") -> Report:
    """``report`` without the findings ``baseline`` holds.  Raises :class:`UsageError`
    when an entry with a finding's fingerprint names another trace, code, key or rule
    than that finding's (``source``: the file, for the message).

    Each session gets ``extra["baseline"] = {"file", "suppressed": count, "stale":
    [entry dicts (:func:`_stale_shown`)], "grown": [{"code", "rule", "key",
    "new_facts", "new", "verb"}], "other_session"?: [ids]}``: stale entries are
    those of this trace and its session, of a rule that ran, that no longer occur
    (an episode's entry too when no episode of its key overlaps its rounds: that
    episode is new); grown ones, the fold findings of the
    baseline that now lose facts it does not hold (:meth:`Entry.holds`), with how
    many: those findings are kept, as new;
    ``other_session``, the sessions of the entries recorded for another session at
    this path (not applied: the findings they match are kept, as new, and they are not
    stale).
    Entries of traces not in this run are neither used nor reported, except when a
    trace has no entry under its own path and entries of traces not in this run have
    its file name: those paths are listed under ``"other_path"`` (the same file named
    another way, absolute against relative, another working directory: docs/ci.md).
    """
    keys = {k for s in report.sessions
            for k in (trace_key(s.path), clip_tree(trace_key(s.path)))}
    by_name: dict[str, set[str]] = {}
    by_trace: dict[str, list[tuple[str, Entry]]] = {}  # one pass: each trace looks up
    for fp, e in baseline.items():  # its own (adv19b F6: traces x entries)
        if e.trace not in keys:
            by_name.setdefault(e.trace.rsplit("/", 1)[-1], set()).add(e.trace)
        else:
            by_trace.setdefault(e.trace, []).append((fp, e))
    from compaction_audit.diff import fold_lost_units, stated_units

    sessions = []
    for s in report.sessions:
        pairs = session_entries(s)
        kept, grown, other_session = [], [], set()
        by_fold: FoldLosses | None = None  # read when a finding grew
        held: set[str] = set()  # fingerprints a finding of this run is (stale if not)
        own = trace_key(s.path)
        shown = {own, clip_tree(own)}  # as dumps wrote it
        # not an entry whose fingerprint says it is of another file: the escaped name
        # of an undecodable one ("d/\xff.jsonl") is also the name of a file written
        # with those four characters (adv103 #5: its entries hid that file's moved
        # folds and shifted episodes)
        mine = [(fp, e) for name in shown for fp, e in by_trace.get(name, [])
                if not _of_another_file(fp, e, own)]
        # only an adapter names items by their lines (also in a log it converted); a
        # native log's "line-5" is its own id (adv97 #2: a new fold of a native log
        # named so matched a fixed one's entry)
        native = s.source_format == "native" and s.converted_from() is None
        moved = _moved_claims(pairs, mine, baseline)
        if not native:
            moved.update(_moved_folds(pairs, mine, baseline))
        for f, e in pairs:
            b = baseline.get(e.fingerprint)
            if b is not None and ((b.code, b.key, b.rule) != (e.code, e.key, e.rule)
                                  or b.trace not in (e.trace, clip_tree(e.trace))):
                raise UsageError(  # adv63: an entry that reads as another rule hid this
                    f"baseline {source!r}: the entry with the fingerprint of {e.code} "
                    f"{e.rule} {e.key} in '{printable(e.trace)}' says {printable(b.code)} "
                    f"{printable(b.rule)} {printable(b.key)} in '{printable(b.trace)}': "
                    "edited by hand? make the baseline again ('compaction-audit baseline "
                    "create')")
            b = b or moved.get(id(f))  # the same fold under a new key
            if b is None or not b.holds(e.facts, e.session, e.rounds):
                kept.append(f)
            if b is None:
                continue
            if b.holds(None, None, e.rounds):  # another session's: said, not stale
                held.add(e.fingerprint)
            if not b.holds(None, e.session):
                other_session.add(str(b.session))
            elif not b.holds(e.facts, e.session):
                if by_fold is None:
                    by_fold = fold_lost_units(s)
                grown.append({"code": e.code, "rule": e.rule, "key": e.key,
                              "new_facts": len(set(e.facts or ()) - set(b.facts or ())),
                              "new": _new_units(f, by_fold, b),
                              "verb": "states" if stated_units(f) else "loses"})
        held.update(b.fingerprint for b in moved.values())
        sid = session_key(s)
        # an entry of another session at this path is not applied, not stale: it says
        # nothing of whether this session's findings were fixed (a CI engineer's test)
        other_session.update(str(e.session) for _, e in mine
                             if e.session is not None and sid is not None and e.session != sid)
        kept = _shifted_episodes(pairs, kept, mine, held)
        # an entry of a rule that did not run (--select, --ignore) says nothing of
        # whether its finding was fixed (usertest18 #1)
        ran = set(s.rules_run)
        stale = sorted(e for fp, e in mine if fp not in held and e.code in ran
                       and (e.session is None or sid is None or e.session == sid))
        info: dict[str, object] = {"file": source, "suppressed": len(pairs) - len(kept),
                                   "stale": _stale_shown(stale, pairs, kept), "grown": grown}
        if other_session:  # the baseline is of another session at this path
            info["other_session"] = sorted(other_session)
        if not stale and len(kept) == len(pairs):  # nothing of the baseline under its path
            other = by_name.get(trace_key(s.path).rsplit("/", 1)[-1])
            if other:
                info["other_path"] = sorted(other)
        ids = {id(f) for f in kept}
        sessions.append(replace(s, findings=kept, extra={**s.extra, "baseline": info},
                                held_back=[f for f in s.findings if id(f) not in ids]))
    return replace(report, sessions=sessions, errors=list(report.errors))
