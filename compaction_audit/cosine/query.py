"""Which text is the task query the rebuilt cosine compares items with (issue 16).

1. ``task_query`` from the session record, when the log has one (the spec's field;
   the simulator and agents writing ``compaction-audit/1`` set it).
2. Otherwise, for an agent product's session (Claude Code, Codex, Cline: the adapters
   record each message a person typed as a span with ``source`` "user"; a native log
   says so by ``source`` "user" or "user:...", or by ``role`` "user"): the person's
   first prompt followed by every later prompt, in order.  The first prompt states the
   task; later prompts restate or redirect it ("now also handle X"), and one query for
   the whole session keeps every item's cosine a single number.  Messages the product
   injects in the person's name (``user:meta``: command output, reminders) are not
   prompts and are left out, and so is a "user" message that is one tagged block
   (:data:`INJECTED`, as Codex writes its ``<environment_context>``).  Each prompt is
   cut to :data:`PROMPT_CHARS` characters
   and the query to :data:`QUERY_CHARS`, so a pasted log does not become the task.
3. Otherwise there is no query and no rebuilt cosine.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from compaction_audit.model import Session
from compaction_audit.recall.ranking import person_source

PROMPT_CHARS = 2_000
"""Characters kept of each prompt."""
QUERY_CHARS = 8_000
"""Characters kept of the whole query."""
INJECTED = r"(?s)^\s*<[A-Za-z_][\w-]*>.*</[A-Za-z_][\w-]*>\s*$"
"""A message that is one tagged block, ``<tag> ... </tag>``: context a product sends in
the person's name (Codex's ``<environment_context>``, ``<user_instructions>``), not a
prompt the person typed."""


@dataclass(frozen=True)
class TaskQuery:
    """The query text and where it came from.

    ``origin`` is "task_query" (the session record), "prompts" (the person's prompts:
    ``prompts`` of them) or "none" (``text`` is None).
    """

    text: str | None
    origin: str
    prompts: int = 0
    task: str | None = None
    """What names the task: the ``task_query``, else the person's first prompt (the
    later prompts steer the run; two runs of one task share the first)."""

    def task_words(self) -> str | None:
        """:attr:`task` with its whitespace collapsed (None without one), for ``diff``
        to tell two runs of different tasks apart: the texts compared, not a digest (a
        checksum of them could be made to collide: adv77 #3)."""
        return None if self.task is None else " ".join(self.task.split())

    def describe(self) -> str:
        """One line for reports: where the query came from."""
        if self.origin == "task_query":
            return "task_query of the session record"
        if self.origin == "prompts":
            later = self.prompts - 1
            return ("the person's first prompt" + (f" and {later:,} later prompt(s)"
                                                   if later else ""))
        return "no task query (no task_query, no prompt)"


def task_query(session: Session) -> TaskQuery:
    """The task query of ``session`` (see the module docstring for the choice)."""
    given = session.header.task_query
    if given is not None and given.strip():
        return TaskQuery(given[:QUERY_CHARS], "task_query", task=given)
    prompts = (
        session.items
        .filter((pl.col("kind") == "span") & person_source(pl.col("source"))
                & pl.col("text").is_not_null() & (pl.col("text").str.strip_chars() != "")
                & ~pl.col("text").str.contains(INJECTED))
        .sort("ri", "line")
        .select(pl.col("text").str.slice(0, PROMPT_CHARS))["text"]
        .to_list()
    )
    if not prompts:
        return TaskQuery(None, "none")
    return TaskQuery("\n".join(prompts)[:QUERY_CHARS], "prompts", len(prompts), prompts[0])
