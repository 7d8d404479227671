"""Claude Code ``attachment`` lines: what the product adds to the context beside a
person's message.

Each turn Claude Code computes attachments and sends some of them to the model with
the prompt; the transcript writes each as a line ``{"type": "attachment",
"attachment": {"type": ...}}``.  Most are the product's own reminders (plan mode, todo
lists, hook statuses, tool listings, token counts): harness, as ``isMeta`` lines are,
and not read.  Four carry what the model reads as a document, and a fifth a person's
words (adv134 #1: an @-mentioned file's values were never audited, and a compaction
that dropped them passed the gate, where the same file read by the ``Read`` tool
failed it):

* ``file`` (an @-mentioned file): Claude Code sends it as a ``Read`` call and its
  result, so its text (``content.file.content``) is a ``tool_result:Read`` span; an
  image is an image of that span; a notebook, a PDF or a shape not known is not read
  and counted (:data:`UNREAD`), never dropped in silence;
* ``directory`` and ``new_directory``: sent as an ``ls`` by ``Bash``: their
  ``content`` is a ``tool_result:Bash`` span;
* ``edited_text_file`` (a file changed outside the agent): its ``snippet`` (the
  changed lines, ``cat -n``) is a ``tool_result:Read`` span, and
  ``selected_lines_in_ide`` (lines a person selected in the IDE) its ``content``
  (usertest70 #2; the IDE extension's inline ``<ide_selection>`` block is read the same
  way: :data:`~compaction_audit.io.harness.IDE_SELECTION`);
* ``queued_command``: a message the person typed while the agent worked, delivered in
  the turn (the caller reads it as a queued message).

Standard library only.
"""

from __future__ import annotations

from typing import Any

READ = "tool_result:Read"
BASH = "tool_result:Bash"

UNREAD = "of an attachment whose content this reader does not read ({}): not read"
"""The reason counted for an attachment of a reading type whose content has another
shape (a notebook, a PDF, a field missing): the verdict says it."""


def document(attachment: dict[str, Any]) -> tuple[str, str, int] | str | None:
    """What the model read of ``attachment`` as a document: ``(source, text,
    images)``; a string, the reason it is not read (its type is one this module reads,
    its content is not of a shape it knows); None for an attachment that is no
    document (the product's reminders, a queued message)."""
    kind = attachment.get("type")
    if kind == "file":
        content = attachment.get("content")
        form = content.get("type") if isinstance(content, dict) else None
        if form == "text":
            file = content.get("file") if isinstance(content, dict) else None
            text = file.get("content") if isinstance(file, dict) else None
            if isinstance(text, str):
                return READ, text, 0
        elif form == "image":
            return READ, "", 1
        return UNREAD.format(f"file, {form if isinstance(form, str) else 'no type'}")
    if kind in ("directory", "new_directory"):
        text = attachment.get("content")
        return (BASH, text, 0) if isinstance(text, str) else UNREAD.format(kind)
    if kind == "selected_lines_in_ide":  # the lines a person selected in the IDE
        text = attachment.get("content")
        return (READ, text, 0) if isinstance(text, str) else UNREAD.format(kind)
    if kind == "edited_text_file":
        text = attachment.get("snippet")
        if text is None:  # a change named without its lines: nothing read
            return None
        return (READ, text, 0) if isinstance(text, str) else UNREAD.format(kind)
    return None


def queued_prompt(attachment: dict[str, Any]) -> str | None:
    """The text of a ``queued_command`` attachment a person typed: its ``prompt`` (a
    string, or text blocks joined by newlines); None for another attachment, for one
    the product queued (``origin`` not a person's, a ``task-notification``), or with no
    text."""
    if attachment.get("type") != "queued_command":
        return None
    origin = attachment.get("origin")
    if (isinstance(origin, dict) and origin.get("kind") not in (None, "human")) \
            or attachment.get("commandMode") == "task-notification":
        return None
    prompt = attachment.get("prompt")
    if isinstance(prompt, list):
        prompt = "\n".join(b["text"] for b in prompt
                           if isinstance(b, dict) and isinstance(b.get("text"), str))
    return prompt if isinstance(prompt, str) and prompt.strip() else None
