"""Ruled-out findings: negative facts a debugging session established (issue 12, point 6).

"Ruled out DNS and TLS", "the cache is not the cause", "the database is fine": each
closes a path.  A summary that drops one invites the agent to walk it again, so these
are a discriminator kind (``ruled-out``, ranked with negations,
:data:`~compaction_audit.recall.kinds.KIND_RANK`).  Forms, over one sentence:

* ``rule(d) out X`` / ``ruling out X``: X is the object (the words after it);
* ``X was/were/has been ruled out``, ``X is/was not the cause`` (or culprit, issue,
  problem, bottleneck, reason; ``isn't`` too), ``X is/looks/seems fine`` (or ok,
  healthy, unrelated, not related, not involved, not at fault): X is the subject, at
  most three content words on the left within the sentence.

A subject that is only a pronoun ("it is fine", "everything is fine") is no finding,
and neither is a permission: an action (a gerund with its object: "deleting the
backups", "deleting prod-db-7 backups", "pushing to main", "using --force") that
"is/are fine" (or ok, okay) grants the action, it closes no path (usertest57 #4,
usertest59 #1: a person's "Deleting the prod-db-7 backups is fine now" was listed as a
lost ruled-out finding).  A gerund naming a part ("the caching layer is fine", "logging
config is fine", "networking is fine", "underlying disk is fine"), a report
("restarting the pod was fine", "... looks fine") and a sentence that places the fault
elsewhere ("restarting the pod is fine, the crash comes from the proxy") stay findings
(:func:`_permits`).
``norm`` is ``"ruled <content words>"``.  Standard library only.
"""

from __future__ import annotations

import re

from compaction_audit.recall.clauses import content_words
from compaction_audit.recall.kinds import Discriminator, Kind

__all__ = ["scan_ruled_out"]

_BE = r"(?:is|are|was|were|looks?|seems?|'s)"
_OBJECT_RE = re.compile(r"\brul(?:e|ed|ing)\s+out\s+(?!(?:of|that|whether|if)\b)")
_SUBJECT_RE = re.compile(
    rf"\b(?:(?:was|were|has\s+been|have\s+been|is|are)\s+ruled\s+out"
    rf"|{_BE}\s+(?:not|n't)\s+(?:the\s+|a\s+)?(?:root\s+)?"
    rf"(?:cause|culprit|issue|problem|bottleneck|reason)"
    rf"|(?:isn't|aren't|wasn't|weren't)\s+(?:the\s+|a\s+)?(?:root\s+)?"
    rf"(?:cause|culprit|issue|problem|bottleneck|reason)"
    rf"|{_BE}\s+(?:fine|ok|okay|healthy|unrelated|not\s+related|not\s+involved"
    rf"|not\s+at\s+fault))(?![\w-])")
_END_RE = re.compile(r"[.;!?:](?!\S)|\n|\bbut\b|\bwhich\b|\bso\b")
_START_RE = re.compile(r"[.;!?:](?!\S)|[\n,]|\b(?:but|so|because|since|then|while|when|if)\b")
"""Where the object ends and the subject starts: a sentence's or clause's mark (a
point, colon or semicolon only before a space or the end, so that "4.2.1",
"db.replica" or "host:5432" is one word), a line break or a conjunction."""
_PRONOUNS = frozenset({"everything", "something", "nothing", "things", "which", "what",
                       "who", "rest", "both", "else", "now", "still", "fine", "not"})
_MAX_WORDS = 6
_GRANTED_RE = re.compile(r"(?:is|are|'s)\s+(?:fine|ok|okay)")
"""The present-tense forms that read as a permission after an action's subject."""
_ACTION_RE = re.compile(r"(?P<verb>[a-z][a-z-]*ing)\s+(?P<next>[^\s.,;:!?]+)")
"""A gerund opening the subject and the word after it: an action ("deleting the",
"pushing to", "using --force", "bumping 4.2", "deleting backups", "rebooting node-3",
"force-pushing to main"), unless the gerund names a part of the system
(:data:`_PART_GERUNDS`: "logging config", "caching layer"); a gerund alone ("caching is
fine") is a part too."""
_PART_GERUNDS = frozenset({
    "logging", "caching", "networking", "routing", "pooling", "batching", "scheduling",
    "monitoring", "billing", "indexing", "rendering", "streaming", "tracing", "hashing",
    "sharding", "threading", "locking", "polling", "buffering", "padding", "spacing",
    "styling", "sizing", "theming", "loading", "parsing", "encoding", "pricing",
    "rate-limiting", "load-balancing", "string", "thing", "ring", "spring", "ceiling",
    "setting", "settings", "building", "listing", "mapping", "binding", "heading",
    "offering", "warning", "morning", "evening", "timing", "wiring", "tooling",
    "housekeeping", "bookkeeping", "messaging", "queueing", "queuing", "paging"})
"""Gerunds and -ing nouns that name a part of a system or a thing: "logging config is
fine", "caching in the API layer is fine", "routing to the backend is fine" are
diagnoses (adv107 #1), "deleting backups is fine" a permission; before an article or a
pronoun (:data:`_DETERMINERS`) they are acts ("caching the tokens is fine")."""
_ING_ADJECTIVES = frozenset({
    "existing", "underlying", "incoming", "outgoing", "landing", "signing", "pending",
    "remaining", "upcoming", "ongoing", "staging", "working", "matching", "surrounding",
    "corresponding", "following", "leading", "trailing", "missing", "testing"})
"""-ing words that name a thing before a noun ("underlying disk is fine", "staging
cluster is fine": adv105 #3) and are acts before an article, a pronoun or a preposition
("testing against prod is fine", "staging the changes is fine", "working on main is
fine": adv106 #3)."""
_DETERMINERS = frozenset({
    "the", "a", "an", "this", "that", "these", "those", "them", "it", "all", "any",
    "every", "our", "my", "your", "their", "its"})
_PREPOSITIONS = frozenset({
    "to", "into", "onto", "from", "with", "without", "over", "on", "against", "in", "for",
    "at", "by", "off", "up", "down", "out", "through"})
_GATE_RE = re.compile(r"\s(?:out|cause|culprit|issue|problem|bottleneck|reason|fine|ok|okay"
                      r"|healthy|unrelated|related|involved|fault)(?![\w-])")
"""The last word of every form above, whole and after a space (as :data:`_OBJECT_RE`
and :data:`_SUBJECT_RE` have it: each match holds one): most texts have none.  Was
each word as a substring, which every "because" ("cause"), "tokens" or "broke" ("ok")
passed: on the 254 MB 10,000 x 2,000 full-text grid cell (issue 14) 19,934 of 25,676
texts then ran both scans (about 6 us each) for no finding; this gate passes 6."""


def _subject(low: str, at: int) -> tuple[int, list[str]]:
    """Start and content words of the subject left of ``at`` (same sentence part)."""
    lo = max(0, at - 80)
    start = lo
    for m in _START_RE.finditer(low, lo, at):
        start = m.end()
    words = [w for w in content_words(low[start:at], 20) if w not in _PRONOUNS]
    while start < at and low[start].isspace():
        start += 1
    return start, words[-3:]


_ELSEWHERE_RE = re.compile(
    r"[^\n]{0,160}?\belsewhere\b"
    r"|[^.!?\n]{0,160}?\bthe\s+(?:real\s+|root\s+|actual\s+)?(?:(?:problem|issue|bug|crash"
    r"|leak|lag|error|failure|regression|slowdown|bottleneck)\s+(?:is|was|lies|comes|came"
    r"|turned\s+out\s+to\s+be|seems\s+to\s+be|must\s+be)\s+(?:in|within|with|from|at"
    r"|somewhere|caused|due|upstream|downstream|the\s+(?!same\b))\b"
    r"|(?:cause|culprit)\s+(?:is|was|lies"
    r"|turned\s+out\s+to\s+be|seems\s+to\s+be|must\s+be)\b)")
"""What follows a diagnosis: "elsewhere" (in its sentence or the next), or, in its
sentence (past a comma or semicolon), a fault placed ("the crash comes from the proxy",
"the culprit turned out to be DNS", "the root cause is the proxy": adv104 #3, adv105 #3,
adv106 #5), which no permission says; "the issue is resolved", "the error was
transient", and a fault in a later sentence ("The error is the same as before") place
nothing (adv105 #4, adv106 #4)."""


def _permits(low: str, start: int, end: int) -> bool:
    """Whether the subject at ``start`` of ``low`` is an action (:data:`_ACTION_RE`): a
    gerund that names no part, with an object or a preposition after it, and the
    sentence after ``end`` (the predicate's end) puts no fault elsewhere."""
    m = _ACTION_RE.match(low, start)
    if m is None or _ELSEWHERE_RE.match(low, end) is not None:
        return False
    verb, after = m.group("verb"), m.group("next")
    if verb in _PART_GERUNDS:
        return after in _DETERMINERS
    if verb in _ING_ADJECTIVES:
        return after in _DETERMINERS or after in _PREPOSITIONS
    return True


def scan_ruled_out(text: str, out: list[Discriminator]) -> None:
    """Append the ruled-out findings of ``text`` (module docstring) to ``out``."""
    low = text.lower()
    if not _GATE_RE.search(low):
        return
    for m in _OBJECT_RE.finditer(low):
        stop = _END_RE.search(low, m.end(), m.end() + 160)
        end = stop.start() if stop else min(len(low), m.end() + 160)
        words = [w for w in content_words(low[m.end():end], _MAX_WORDS)
                 if w not in _PRONOUNS]
        if words:
            out.append(Discriminator(Kind.RULED_OUT, text[m.start():end].strip(),
                                     "ruled " + " ".join(words), m.start(), end))
    for m in _SUBJECT_RE.finditer(low):
        start, words = _subject(low, m.start())
        if _GRANTED_RE.fullmatch(low, m.start(), m.end()) and _permits(low, start, m.end()):
            continue  # a permission (module docstring)
        if words:
            out.append(Discriminator(Kind.RULED_OUT, text[start:m.end()],
                                     "ruled " + " ".join(words), start, m.end()))
