"""Where a Claude Code transcript's conversation goes back to an earlier message.

Claude Code's transcript is append-only and tree-shaped: each line names the line it
follows in ``parentUuid``.  ``/rewind`` (Esc Esc) writes no line of its own: the next
line names the message before the one rewound to as its parent, and every line after
that message stays in the file, no longer in the conversation (Claude Code rebuilds the
conversation by walking ``parentUuid`` back from the newest line).  Read in file order,
the turns a person took back stayed in the context and a later compaction "lost" their
facts: a rule the person withdrew became an error (usertest69; the same class as Codex's
``thread_rolled_back`` and Gemini CLI's ``$rewindTo``, usertest68 #2, #4).

:class:`Branches` finds these re-parentings as the file is read, in O(1) per line
(a rewind costs what it drops, and the new branch's own lines it walks).  Fail-safe by
design, since a rewind read where there was none would take facts out of the context
with no summary and hide their loss:

* Only a person's turn places a rewind (the reader, ``claude_code``): a line of the
  product's that forks may be followed by a prompt that continues the old branch
  (adv135 #1).
* Only a line's parent *resolved to a conversation message* (a person's turn, an
  assistant line, a tool result) counts: lines that are not (``progress``, ``system``
  hooks such as ``stop_hook_summary``, attachments, the product's text in the user
  role) pass their parent on.  Parallel tool calls' results name the ``tool_use`` line
  they answer, and a stop hook's line forks from the message before the reply; neither
  skips a person's turn, and only skipping one is a rewind.
* The message resolved to must still be in the context since the last compaction (a
  rewind across a compaction, to a message folded, is not placed: the lines stay read
  in file order, as before).
* A line whose parent is absent from the file, or missing, places nothing.  A chain
  ending at a line with a null parent places something only when it is the chain the
  conversation's first message hangs from (a rewind to the first prompt), and a null
  parent itself only when the first message's is null too (the same: Claude Code reads
  a null parent as a root, so the lines before it are out of the conversation) and the
  message before the line names its parent (a file that writes every parent null, as
  a converter may, is no tree), both before the first compaction.
"""

from __future__ import annotations

PATH_MAX = 1_000
"""The most lines :meth:`Branches.path` walks (a hostile chain of bookkeeping lines)."""


class Branches:
    """The conversation's anchors in the context, to place a line's parent.

    ``anchor`` maps each line's ``uuid`` to what it hangs from: a conversation message
    (a person's turn, an assistant line, a tool result) is its own anchor; another line
    inherits its parent's anchor; a line with an explicit null parent is its own (a
    root).  ``pos`` maps the
    anchors still in the context to the number of working-set entries made before
    anything after them (:attr:`~compaction_audit.io.tokens.RoundAssembler.entered`).
    ``turns`` are the entry numbers at which the person's turns in the context began.
    """

    NULL = ""
    """The anchor of a null parent (no uuid is empty: the reader refuses one)."""

    def __init__(self) -> None:
        self.anchor: dict[str, str] = {}
        self.parent: dict[str, str] = {}  # a line that is no message -> its parent
        self.where: dict[str, int] = {}  # such a line that may hold items -> its line
        self.pos: dict[str, int] = {}
        self.order: list[tuple[int, str]] = []  # pos's entries in the order they came
        self.turns: list[int] = []
        self.started = False  # a conversation message has been read
        self.linked = False  # the last one read names a parent
        self.rewinds = 0
        self.dropped = 0

    def link(self, uuid: str, parent: str | None, has_parent: bool,
             line: int | None = None) -> None:
        """A line that is no conversation message (bookkeeping, a ``system`` line not a
        compaction, a line not sent to the model): it hangs from its parent's anchor,
        or is a root when ``parentUuid`` is written null (``has_parent`` and no
        ``parent``).  ``line``: its line number, for a line that may hold items (an
        attachment, the product's text in the user role), kept for :meth:`path`."""
        if line is not None:
            self.where[uuid] = line
        if parent is not None:
            self.parent[uuid] = parent
            found = self.anchor.get(parent)
            if found is not None:
                self.anchor[uuid] = found
        elif has_parent:
            self.anchor[uuid] = uuid

    def rewound_to(self, parent: str | None, has_parent: bool) -> int | None:
        """The entry number a line with ``parent`` (``has_parent``: the field is
        written, null or not) goes back to when it skips one of the person's turns in
        the context (a rewind), else None."""
        if not self.turns:
            return None
        found = self.anchor.get(parent) if parent is not None else (
            self.NULL if has_parent and self.linked else None)
        start = self.pos.get(found) if found is not None else None
        if start is None or self.turns[-1] < start:
            return None
        return start

    def path(self, parent: str) -> list[str] | None:
        """The lines that are no message from ``parent`` up to the message it hangs
        from (``parent`` first): the new branch's own lines before a rewound prompt (a
        file attached, a command run after the rewind), which stay in the context.  None
        past :data:`PATH_MAX` of them: the new branch is not known, and the caller cuts
        nothing (adv136 #8: an attachment farther up was cut, a loss hidden)."""
        found: list[str] = []
        at: str | None = parent
        while at is not None and at in self.parent:
            if len(found) == PATH_MAX:
                return None
            found.append(at)
            at = self.parent[at]
        return found

    def cut(self, start: int, dropped: int) -> None:
        """Forget the anchors and turns at entry ``start`` and after (a rewind there
        took ``dropped`` items out of the context)."""
        while self.turns and self.turns[-1] >= start:
            self.turns.pop()
        while self.order and self.order[-1][0] > start:
            self.pos.pop(self.order.pop()[1], None)
        self.rewinds += 1
        self.dropped += dropped

    def message(self, uuid: str, parent: str | None, has_parent: bool, before: int,
                after: int) -> None:
        """A conversation message read (``before``/``after``: entry numbers around it).
        The first one also places the root its parent chain ends at, if any, before
        it (:data:`NULL` for a null parent)."""
        if not self.started:
            self.started = True
            root = self.anchor.get(parent) if parent is not None else (
                self.NULL if has_parent else None)
            if root is not None:
                self._place(root, before)
        self.anchor[uuid] = uuid
        self.linked = parent is not None
        self._place(uuid, after)

    def turn(self, entered: int) -> None:
        """A person's turn began at entry number ``entered``."""
        self.turns.append(entered)

    def compacted(self, uuids: list[str], entered: int) -> None:
        """A compaction: what came before is folded, so no anchor before it is placed
        any more; its own lines (boundary, summary) are anchors after it."""
        self.pos.clear()
        self.order.clear()
        self.turns.clear()
        self.started = True
        for uuid in uuids:
            self.anchor[uuid] = uuid
            self._place(uuid, entered)

    def _place(self, uuid: str, entered: int) -> None:
        self.pos[uuid] = entered
        self.order.append((entered, uuid))
