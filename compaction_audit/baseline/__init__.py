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
hold all of its own (:func:`~compaction_audit.baseline.moves.moved_folds`: usertest47
#1); a finding about what a summary states with no entry of its fingerprint is the
entry of another summary of the same rule and trace that states its claims
(:func:`~compaction_audit.baseline.moves.moved_claims`).  The package: entries
(:mod:`.entry`), the file (:mod:`.file`), findings under another key (:mod:`.moves`),
and here the keys, fingerprints and :func:`apply`.  An entry also records the trace's
session id (``session``, when the log has one): a baseline of one session never hides
the findings of another session written to the same path (adv22a F3: a job auditing
``logs/latest.jsonl``, a new session each run, had 245 to 318 findings of unrelated
sessions hidden).  An ``episode:K`` entry records the
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
from bisect import bisect_left
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compaction_audit.diff import FoldLosses

from compaction_audit.baseline.entry import BASELINE_FORMAT, FACT_DIGITS, Entry, merged
from compaction_audit.baseline.file import (
    BYTES_PER_VALUE,
    DENSE_FROM,
    MAX_RATIO,
    Loaded,
    cosine_methods,
    cosine_mismatch,
    dumps,
    load,
)
from compaction_audit.baseline.moves import moved_claims, moved_folds, shifted_episodes
from compaction_audit.errors import UsageError
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import clip_tree, printable
from compaction_audit.rules.base import Finding

__all__ = ["BASELINE_FORMAT", "BYTES_PER_VALUE", "DENSE_FROM", "FACT_DIGITS", "MAX_RATIO",
           "NEW_NAMED", "NEW_TEXT", "Entry", "Loaded", "apply", "cosine_methods",
           "cosine_mismatch", "dumps", "entries", "finding_keys", "fingerprint",
           "grown_findings", "key_forms", "load", "pruned", "session_entries",
           "session_key", "trace_key"]


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


def key_forms(path: str) -> tuple[str, str]:
    """The trace key of ``path`` (:func:`trace_key`) and the same key as the baseline
    file writes it (clipped and made encodable: :func:`~compaction_audit.report.safe.
    clip_tree`); an entry names a trace by either."""
    key = trace_key(path)
    return key, clip_tree(key)


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


def _verb(f: Finding, by_fold: FoldLosses) -> str:
    """What a grown entry's finding does with its new facts: ``states`` (a summary's
    claim or flip), ``drops`` (a fold that lost nothing: its facts are those it dropped
    that a span still holds or only a summary states, ``held:`` units; usertest71 #6:
    "now loses 1 more fact" of a fold whose finding said it lost nothing), else
    ``loses``."""
    from compaction_audit.diff import lost_keys, stated_units

    if stated_units(f):
        return "states"
    units = lost_keys(f, by_fold)
    return "drops" if units and all(u.startswith("held:") for u in units) else "loses"


def entries(report: Report) -> list[Entry]:
    """The distinct baseline entries of every finding in ``report``, sorted."""
    return merged([e for s in report.sessions for _, e in session_entries(s)])


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
    occurs" beside the new CA101 read as fixed).  At most :data:`NEW_ROUNDS` such
    episodes per entry, those nearest its own rounds, with ``new_rounds_more`` counting
    the rest (adv138 #4: every stale entry held every new episode's rounds, 2,000 x
    2,000, and a 1.1 MB baseline took the audit from 104 MB to 787 MB)."""
    new = {id(f) for f in kept}
    moved_sets: dict[str, set[tuple[int, int]]] = {}
    for f, e in pairs:
        if id(f) in new and e.key.startswith("episode:") and e.rounds is not None:
            moved_sets.setdefault(e.code, set()).add(e.rounds)
    moved = {code: sorted(rounds) for code, rounds in moved_sets.items()}
    out = []
    for e in stale:
        shown: dict[str, Any] = _shown(e)
        if e.key.startswith("episode:") and e.code in moved:
            rounds = moved[e.code]
            shown["rounds"] = None if e.rounds is None else list(e.rounds)
            at = bisect_left(rounds, e.rounds or (0, 0))  # the nearest: a window there
            lo = max(0, min(at - NEW_ROUNDS // 2, len(rounds) - NEW_ROUNDS))
            shown["new_rounds"] = [list(r) for r in rounds[lo:lo + NEW_ROUNDS]]
            if len(rounds) > NEW_ROUNDS:
                shown["new_rounds_more"] = len(rounds) - NEW_ROUNDS
        out.append(shown)
    return out


NEW_ROUNDS = 10
"""Most new episodes of its rule a stale episode's entry names (:func:`_stale_shown`)."""


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
            for k in key_forms(s.path)}
    by_name: dict[str, set[str]] = {}
    by_trace: dict[str, list[tuple[str, Entry]]] = {}  # one pass: each trace looks up
    for fp, e in baseline.items():  # its own (adv19b F6: traces x entries)
        if e.trace not in keys:
            by_name.setdefault(e.trace.rsplit("/", 1)[-1], set()).add(e.trace)
        else:
            by_trace.setdefault(e.trace, []).append((fp, e))
    from compaction_audit.diff import fold_lost_units

    sessions = []
    for s in report.sessions:
        pairs = session_entries(s)
        kept, grown, other_session = [], [], set()
        by_fold: FoldLosses | None = None  # read when a finding grew
        held: set[str] = set()  # fingerprints a finding of this run is (stale if not)
        own, clipped = key_forms(s.path)
        shown = {own, clipped}  # as dumps wrote it
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
        moved = moved_claims(pairs, mine, baseline)
        if not native:
            moved.update(moved_folds(pairs, mine, baseline))
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
                              "verb": _verb(f, by_fold)})
        held.update(b.fingerprint for b in moved.values())
        sid = session_key(s)
        # an entry of another session at this path is not applied, not stale: it says
        # nothing of whether this session's findings were fixed (a CI engineer's test)
        other_session.update(str(e.session) for _, e in mine
                             if e.session is not None and sid is not None and e.session != sid)
        kept = shifted_episodes(pairs, kept, mine, held)
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
