"""Where lines of a Claude Code transcript may be missing: a line naming a parent that
the file does not hold.

Claude Code writes every line's ``parentUuid``, the line it follows, into the same file
(the conversation is the chain from the newest line back: docs/adapters.md).  A writer
who deletes a compaction's two lines, the ``compact_boundary`` and its summary, leaves
no compaction to judge, and the audit passed; yet the next line still names the deleted
summary as its parent (usertest76 F5).  :class:`MissingParents` counts such lines, so
the trace is not fully checked ("lines may be missing"), a gap that fails
``--fail-on warning`` as lines not read do (docs/ci.md).

Fail-safe against the files Claude Code itself writes:

* A parent that comes *later* in the file is no gap (a copy put before its history:
  adv29 F1): only a parent no line of the whole file has as its ``uuid`` counts.
* Until the file's own chain has begun (a line naming a parent the file held before
  it), a parent from elsewhere is expected: a resumed or forked session's first lines
  may name the last message of the file it continues.  So lines cut from the *start*
  of a file cannot be told from a resume, and are not said.
* ``logicalParentUuid`` is not read: the compaction's logical parent is often absent
  (after a resume; the corpus README), and the boundary's own ``parentUuid`` is null.
"""

from __future__ import annotations


class MissingParents:
    """The lines whose ``parentUuid`` names no line of the file.

    Fed every line in file order (:meth:`see`), before the line's own ``uuid`` is added
    to the set of uuids seen; :meth:`found` is read at the end of the file.  Memory: one
    entry per distinct parent not yet seen when it was named.
    """

    def __init__(self) -> None:
        self.started = False  # a line has named a parent the file held before it
        self.unseen: dict[str, list[int]] = {}  # parent -> [first line naming it, lines]

    def see(self, line: int, parent: object, seen: set[str]) -> None:
        """A line (number ``line``, 1-based) whose ``parentUuid`` is ``parent`` (any
        value: only a string names a parent), read when the uuids in ``seen`` came
        before it."""
        if not isinstance(parent, str):
            return
        if parent in seen:
            self.started = True
        elif self.started:
            entry = self.unseen.setdefault(parent, [line, 0])
            entry[1] += 1

    def found(self, seen: set[str]) -> tuple[int, int] | None:
        """``(lines, first line)``: how many lines name a parent that no line of the
        file (every uuid in ``seen``) has, and the first of them; None for none."""
        gone = [entry for parent, entry in self.unseen.items() if parent not in seen]
        if not gone:
            return None
        return sum(n for _, n in gone), min(first for first, _ in gone)


def note(lines: int, first: int) -> str:
    """The reader note for :meth:`MissingParents.found`: "1 line names a parent line
    (parentUuid) that is not in the file, at line 1,256: lines may be missing before
    it"."""
    if lines == 1:
        return (f"1 line names a parent line (parentUuid) that is not in the file, at "
                f"line {first:,}: lines may be missing before it")
    return (f"{lines:,} lines name a parent line (parentUuid) that is not in the file, "
            f"the first at line {first:,}: lines may be missing before them")
