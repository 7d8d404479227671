"""The program of the text helper process (:mod:`compaction_audit.recall.textwork`).

Standard library only, with :mod:`~compaction_audit.recall.extract` and
:mod:`~compaction_audit.recall.survival`: the helper loads these modules under empty
package modules, so that neither package's ``__init__`` (and with it Polars) is
imported (:data:`BOOT`).

Messages both ways are :mod:`compaction_audit.runtime.frames` messages (a length, a
CRC-32 and a :mod:`marshal` body), each a tuple whose first item is its tag.  The
helper reads the texts (a list of ``(text, span type)``), then works through two
queues, front to back, while the auditor works through them back to front:

1. extraction: it sends ``("x", n, packed)`` for each chunk of ``n`` (at most ``step``)
   texts, in order: ``packed`` is the chunk's discriminators per text, each as
   ``(kind, text, norm, start, end, line)`` (:func:`encode`), as one marshal body
   (:func:`pack`), which the auditor keeps as it is until it reads them;
2. survival, once it has the groups: ``("g", flags)`` per group, in order: for each
   child of the group, ``surv.survives`` of each of its discriminators in the group's
   summary text.

Between two chunks or groups it reads what the auditor sent, if anything:
``("g", groups, direct, cap, pairs)``, the survival groups (``(summary text, [child
text index, ...])``; ``direct``: per group, how many of its children come first as the
summary's own children, the rest are leaves below them; ``cap``, ``pairs``:
:data:`SURVIVAL_MAX_CHECKS`, :data:`SURVIVAL_MAX_PAIRS`), checked up to their cut
(:func:`survival_cut`) one class of discriminators at a time
(:class:`~compaction_audit.recall.survclass.Classes`);
``("k", k, given)``, the auditor has extracted the texts from index ``k`` on (the
helper stops extracting there; ``given``: the discriminators of those that are
children in a group, by index); ``("s",)``, stop.  End of input stops it too.
A summary text that is also one of its texts (a summary folded again) is indexed for
survival with the discriminators it already has (:func:`~compaction_audit.recall.extract.share`).
"""

from __future__ import annotations

import marshal
import select
import sys
from collections.abc import Callable
from itertools import chain
from typing import IO, Any

from compaction_audit.recall import extract as ext
from compaction_audit.recall import survival as surv
from compaction_audit.recall.survclass import UNASKED, Classes
from compaction_audit.recall.survival import check  # where tests patch survives
from compaction_audit.runtime.frames import Chain, receive, send

Encoded = tuple[tuple[str, str, str, int, int, int], ...]

BOOT = (
    "import gc, sys, types\n"
    "gc.disable()\n"
    "for name, path in (('compaction_audit', sys.argv[1]),\n"
    "                   ('compaction_audit.recall', sys.argv[2])):\n"
    "    pkg = types.ModuleType(name)\n"
    "    pkg.__path__ = [path]\n"
    "    sys.modules[name] = pkg\n"
    "try:\n"
    "    from compaction_audit.recall import texthelper\n"
    "    texthelper.main(int(sys.argv[3]))\n"
    "except Exception:\n"
    "    sys.exit(1)\n"
)
"""The helper's ``python -c`` program after the prelude; arguments: the folder holding
the ``compaction_audit`` package, the ``recall`` folder, the chunk size.  It fails
quietly (exit 1, no traceback): the auditor does whatever it did not deliver."""

_KIND_OF = {kind.value: kind for kind in ext.Kind}


def encode(found: tuple[ext.Discriminator, ...]) -> Encoded:
    """Discriminators as marshal-able tuples ``(kind, text, norm, start, end, line)``."""
    return tuple((x.kind.value, x.text, x.norm, x.start, x.end, x.line) for x in found)


def decode(encoded: Encoded) -> tuple[ext.Discriminator, ...]:
    """The inverse of :func:`encode`."""
    make, kind_of = ext.Discriminator, _KIND_OF
    return tuple([make(kind_of[k], t, n, a, b, ln) for k, t, n, a, b, ln in encoded])


class Decoder:
    """:func:`decode` that makes one object per distinct encoded discriminator: texts
    of one trace repeat the same fact at the same place ("prod", a path, a flag), and
    each object is immutable.  On the 254 MB 10,000 x 2,000 full-text grid cell (issue
    14): 45,250 objects for 138,939 discriminators, half the decoding time and about
    16 MB less held by the analysis.  Holds what it made until dropped."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str, str, int, int, int], ext.Discriminator] = {}

    def __call__(self, encoded: Encoded) -> tuple[ext.Discriminator, ...]:
        made, make, kind_of = self._made, ext.Discriminator, _KIND_OF
        out = []
        for x in encoded:
            d = made.get(x)
            if d is None:
                k, t, n, a, b, ln = x
                d = made[x] = make(kind_of[k], t, n, a, b, ln)
            out.append(d)
        return tuple(out)


def pack(chunk: list[tuple[ext.Discriminator, ...]]) -> bytes:
    """The discriminators of a chunk of texts (one tuple per text) as one marshal body:
    the auditor holds each chunk as these bytes until it reads it (:func:`unpack`):
    about 6.6 MB for the 119,000 discriminators of the 254 MB 10,000 x 2,000 full-text
    grid cell (issue 14), where the decoded tuples took 25 MB of small objects for the
    whole audit."""
    return marshal.dumps([encode(ds) for ds in chunk])


def unpack(packed: bytes) -> list[Encoded]:
    """The inverse of :func:`pack`, encoded (:func:`decode` or :class:`Decoder` then)."""
    chunk: list[Encoded] = marshal.loads(packed)
    return chunk


SURVIVAL_MAX_CHECKS = 2_000_000
"""Most comparisons of a clause class (:class:`~compaction_audit.recall.survclass.Classes`)
with a summary above its leaf's own fold, per session (issue 11, class 5): each summary is
compared with every leaf of its closure, which a chain of folds makes quadratic in the log.
Clauses that differ only in words no summary holds are one class, so a chain of folds
over leaves stating the same kind of fact about their own objects stays far below it
(the ``text-chain`` of benchmarks/shapes_hostile.py at 98 folds, 2.4 MB: 9,700 such
comparisons, where it had 475,000 of single clauses and 3.8 million checks of single
discriminators).  A summary's own children are always checked.  About 12 µs per
comparison: 25 s of CPU at the cap, in two processes."""

SURVIVAL_MAX_PAIRS = 4_000_000
"""Most (discriminator, summary) pairs of leaves below a summary's own children looked up
per session: each is a lookup of its class's answer or a test of a token's anchors
(:func:`~compaction_audit.recall.survival.anchors`), and each fact a summary keeps is a
row of the (key, summary) table the recall analysis joins with the closure (recall debt,
fold losses, the recall floor): about 7 µs per pair over the audit where summaries keep
a clause of every leaf below them (the ``text-chain`` shape: 28 s of CPU at 3.8 million
pairs, 98 folds), where the survival checks alone took 12 µs per pair before the classes.
The 4.9 MB chain of 196 folds holds 15.3 million."""


def survival_cut(groups: list[tuple[str, list[int]]], direct: list[int] | None,
                 of: Callable[[int], tuple[ext.Discriminator, ...]], classes: Classes,
                 cap: int = SURVIVAL_MAX_CHECKS, pairs: int = SURVIVAL_MAX_PAIRS
                 ) -> tuple[int, bool]:
    """Index of the first group whose checks of leaves below its summary's children
    (``children[direct[g]:]``, each with its discriminators ``of(c)``) take the total of
    clause classes compared past ``cap``, or of discriminators past ``pairs``;
    ``len(groups)`` when none does or ``direct`` is None.  From it on, each group is
    checked against its summary's own children only (:func:`checked`).  Computed alike
    here and in the auditor (same groups, same extraction, same classes), so both
    check the same pairs.  Returns it and whether ``pairs`` (not ``cap``) stopped there."""
    if direct is None:
        return len(groups), False
    # a group compares at most as many clause classes as its deep children hold
    # discriminators: when all of them fit under both caps no group is cut, and no class
    # is computed for the cut (on the 254 MB 10,000 x 2,000 full-text grid cell the
    # classes of 55,000 discriminators were, in both processes)
    sizes: dict[int, int] = {}
    total = 0
    for (_, children), n in zip(groups, direct, strict=True):
        for c in children[n:]:
            size = sizes.get(c)
            if size is None:
                size = sizes[c] = len(of(c))
            total += size
    if total <= cap and total <= pairs:
        return len(groups), False
    left, left_pairs = cap, pairs
    clauses: dict[int, frozenset[int]] = {}
    for g, ((_, children), n) in enumerate(zip(groups, direct, strict=True)):
        deep = children[n:]
        for c in deep:
            if c not in clauses:
                clauses[c] = classes.clause_ids(of(c))
        left_pairs -= sum([sizes[c] for c in deep])
        left -= len(frozenset().union(*[clauses[c] for c in deep]))
        if left < 0 or left_pairs < 0:
            return g, left >= 0
    return len(groups), False


def checked(children: list[int], g: int, cut: int, direct: list[int] | None) -> list[int]:
    """The children of group ``g`` that are checked (:func:`survival_cut`)."""
    return children if direct is None or g < cut else children[:direct[g]]


def group_flags(summary: str, children: list[tuple[ext.Discriminator, ...]],
                classes: Classes | None = None) -> list[tuple[bool, ...]]:
    """``surv.survives(d, summary)`` of each discriminator of each child, computed once
    per class of ``classes`` (:class:`~compaction_audit.recall.survclass.Classes`; by
    default one per distinct (kind, text, norm): survival reads nothing else of a
    discriminator).  A token whose anchors the summary does not hold is not compared
    (:func:`~compaction_audit.recall.survival.anchors`)."""
    classes = classes if classes is not None else Classes(None)
    reps, nears, survives = classes.reps, classes.nears, check.survives
    ids = [classes.ids(ds) for ds in children]
    # each class once, in order of first appearance; the flags are then read at C speed
    memo = dict.fromkeys(chain.from_iterable(ids), False)
    vocabulary: frozenset[str] | None = None  # the summary's index: built on first need
    for c in memo:
        d = reps[c]
        near = nears[c]
        if near is UNASKED:
            near = classes.near(c)  # None for a clause: its checks read no vocabulary
        if near is not None:
            if vocabulary is None:
                vocabulary = surv.vocabulary(summary)
            if near.isdisjoint(vocabulary):
                continue
        memo[c] = survives(d, summary)
    get = memo.__getitem__
    return [tuple(map(get, i)) for i in ids]


def main(step: int, fd: int = 0, out: IO[bytes] | None = None) -> None:
    """Run the helper on input ``fd`` and output ``out`` (standard output)."""
    stream = out if out is not None else sys.stdout.buffer
    inbox, outbox = Chain(), Chain()  # each direction's running CRC (runtime.frames)
    texts = receive(fd, inbox)
    if texts is None:
        return
    state: dict[str, Any] = {"groups": None, "direct": None, "cap": SURVIVAL_MAX_CHECKS,
                             "pairs": SURVIVAL_MAX_PAIRS, "skip": len(texts), "given": {},
                             "stop": False}

    def poll(block: bool) -> None:
        while block or select.select([fd], [], [], 0)[0]:
            block = False
            message = receive(fd, inbox)
            if message is None or message[0] == "s":
                state["stop"] = True
                return
            if message[0] == "g":
                state["groups"] = message[1]
                if len(message) > 2:
                    state["direct"], state["cap"] = message[2], message[3]
                if len(message) > 4:
                    state["pairs"] = message[4]
            elif message[0] == "k":
                state["skip"] = message[1]
                state["given"].update({at: decode(enc) for at, enc in message[2].items()})

    found: list[tuple[ext.Discriminator, ...]] = []
    at = {t: i for i, t in enumerate(texts)}

    def known(text: str, stype: str) -> tuple[ext.Discriminator, ...] | None:
        i = at.get((text, stype))
        if i is None:
            return None
        return found[i] if i < len(found) else state["given"].get(i)

    ext.share(known)  # a summary that is also a text (folded again): not extracted twice
    try:
        _work(texts, step, found, state, poll, lambda m: send(stream, m, outbox))
    finally:
        ext.share(None)


def _work(texts: list[tuple[str, str]], step: int, found: list[tuple[ext.Discriminator, ...]],
          state: dict[str, Any], poll: Any, put: Callable[[Any], None]) -> None:
    """The two queues of :func:`main`: extraction into ``found``, then survival."""
    while True:
        poll(False)
        end = min(len(found) + step, state["skip"], len(texts))
        if state["stop"] or end <= len(found):
            break
        chunk = [tuple(ext.extract(*t)) for t in texts[len(found):end]]
        found.extend(chunk)
        put(("x", len(chunk), pack(chunk)))
    while state["groups"] is None and not state["stop"]:
        poll(True)
    given, groups, direct = state["given"], state["groups"] or [], state["direct"]

    def of(c: int) -> tuple[ext.Discriminator, ...]:
        return found[c] if c < len(found) else given[c]

    classes = Classes(summary for summary, _ in groups)
    cut, _ = survival_cut(groups, direct, of, classes, state["cap"], state["pairs"])
    for g, (summary, children) in enumerate(groups):
        poll(False)
        if state["stop"]:
            break
        put(("g", group_flags(summary, [of(c) for c in
                                                 checked(children, g, cut, direct)],
                                       classes)))
