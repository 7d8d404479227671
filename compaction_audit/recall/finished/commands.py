"""What a tool call's shell commands close, open again, or commit
(:mod:`compaction_audit.recall.finished`).

A call's text is read as a shell script: quoted strings, here-document bodies and
comments are data, not commands (``echo "ready to close PROJ-7"``, ``cat > NOTES.md
<<'EOF'``, ``# done``), and each line or part of one between ``&&``, ``||``, ``;``,
``|`` and parentheses or braces is a command.  A
command closes its items only when it is a command through to its end: a program, up
to three words or flags, the verb, flags, the items, then only flags, redirections and
quoted values (``bd close PROJ-7 2>&1``; prose that goes on after the item, "close
PROJ-7 once retries are capped", is no command).
"""

from __future__ import annotations

import re

__all__ = ["WORK_ITEM", "closings", "commands", "commit_lines", "item_tokens"]

WORK_ITEM = (r"(?<![\w.\-/])[A-Za-z][A-Za-z0-9_]*"
             r"(?:(?:-[A-Za-z0-9_]+)+(?:\.[0-9]+)*|(?:\.[0-9]+)+)(?![\w/]|[.\-]\w)")
"""A work item's id: a word joined to more by hyphens (``spotter-gqc``, ``PROJ-123``)
or dotted numbers (``gqc.5``), not inside a longer token, not followed by more of a
path or file name (``app-main.ts``, ``src/x``)."""

ITEM_RE = re.compile(WORK_ITEM)
LINE_CAP = 2_000
"""Characters of a line read for work items: an id is short, and the patterns stay
linear in the text (a line of 128 KB is read in its first 2,000)."""

CLOSED_STATES = frozenset({"closed", "close", "done", "resolved", "completed", "complete",
                           "finished"})
OPEN_STATES = frozenset({"open", "opened", "reopened", "in_progress", "in-progress",
                         "todo", "started", "backlog", "blocked"})

_Q = "\x00"  # a quoted string or a here-document, read as one opaque word
_QUOTED_RE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_HEREDOC_RE = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1")
_SPLIT_RE = re.compile(r"&&|\|\||[;|\n(){}]")
_COMMENT_RE = re.compile(r"(?:^|(?<=[ \t]))#.*$", re.MULTILINE)
_PREFIX = (r"^(?:\w+=\S*[ \t]+)*(?:\./)?[A-Za-z@][\w./@-]*"
           rf"(?:[ \t]+(?:[\w./@-]+|{_Q})){{0,3}}?[ \t]+")
_ITEMS = rf"{WORK_ITEM}(?:(?:[ \t]*,[ \t]*|[ \t]+){WORK_ITEM})*"
_TAIL = rf"(?:[ \t]+(?:-\S+|\d*[<>]&?\S*|/\S*|{_Q}))*[ \t]*$"
"""After the items: flags, redirections, a path (a Codex call's working folder, which
its argument list ends with) and quoted values; nothing else."""
_CLOSE_RE = re.compile(
    rf"{_PREFIX}(?:close|resolve|complete|finish|done)"
    rf"((?:[ \t]+(?:-\S+|{_Q}))*[ \t]+{_ITEMS}){_TAIL}", re.IGNORECASE)
_UPDATE_RE = re.compile(
    rf"{_PREFIX}(?:re-?open|update|edit|set|move|transition)"
    rf"((?:[ \t]+(?:-\S+|{_Q}))*[ \t]+{_ITEMS})((?:[ \t]+\S+)*)[ \t]*$", re.IGNORECASE)
_STATE_RE = re.compile(r"(?:--status|--state|-s)(?:=|[ \t]+)([\w-]+)")
_NOT_RUN_RE = re.compile(r"(?:^|[ \t])(?:--dry-run|--help|-h)(?=[ \t=]|$)")
_COMMIT_RE = re.compile(r"(?:^|&&|\|\||[;|(])[ \t]*(?:\w+=\S*[ \t]+)*"
                        r"git(?:[ \t]+-\S+(?:[ \t]+[^-\s]\S*)?)*[ \t]+commit\b")
"""``git commit`` where a command starts (a line, after ``&&``, ``;``, ``(``...)."""


def _unquoted(text: str) -> str:
    """``text`` with each here-document's body and each quoted string replaced by one
    opaque word (a here-document's first line keeps its command)."""
    rows = text.split("\n")
    kept: list[str] = []
    ending: str | None = None
    for row in rows:
        if ending is not None:
            if row.strip() == ending:
                ending = None
            continue
        heredoc = _HEREDOC_RE.search(row)
        if heredoc:
            ending = heredoc.group(2)
            row = row[:heredoc.start()] + f" {_Q}"
        kept.append(row[:LINE_CAP])
    return _COMMENT_RE.sub("", _QUOTED_RE.sub(f" {_Q} ", "\n".join(kept)))


def commands(text: str) -> list[str]:
    """The shell commands of a call's text (see the module's doc), stripped; when the
    first line is one word, also the lines joined as one argument list (a Codex
    ``["bd", "close", "PROJ-7"]``; ``["bash", "-lc", "bd close PROJ-7"]`` is read by
    its lines)."""
    rows = [row.strip() for row in text.split("\n") if row.strip()]
    script = _unquoted(text)
    if len(rows) > 1 and not any(c in rows[0] for c in " \t"):
        script += "\n" + " ".join(_unquoted(row) for row in rows)[:LINE_CAP]
    return [part.strip() for part in _SPLIT_RE.split(script) if part.strip()]


def closings(parts: list[str]) -> list[tuple[str, bool]]:
    """(item, closes) for each work item a command closes (``True``: ``bd close X``,
    ``bd update X --status closed``) or opens again (``False``: ``bd reopen X``,
    ``--status in_progress``), in the commands' order; ``--dry-run`` and ``--help``
    change nothing."""
    out: list[tuple[str, bool]] = []
    for command in parts:
        if _NOT_RUN_RE.search(command):
            continue
        closing = _CLOSE_RE.match(command)
        if closing:
            out += [(item, True) for item in ITEM_RE.findall(closing.group(1))]
            continue
        update = _UPDATE_RE.match(command)
        if not update:
            continue
        verb = command[:update.start(1)].split()[-1].lower()
        state = _STATE_RE.search(update.group(2) or "")
        value = state.group(1).lower() if state else ""
        closes = (False if verb in ("reopen", "re-open") or value in OPEN_STATES
                  else True if value in CLOSED_STATES else None)
        if closes is not None:
            out += [(item, closes) for item in ITEM_RE.findall(update.group(1))]
    return out


def commit_lines(text: str) -> list[int]:
    """The 1-based lines of ``text`` (a call's cleaned text) that hold the message of a
    ``git commit`` command: from the command's line to the end of its quoted message or
    here-document (``-m "..."``, ``-m "$(cat <<'EOF' ... EOF)"``); none for a
    ``--dry-run`` or a commit mentioned inside a string or a here-document."""
    out: list[int] = []
    rows = text.split("\n")
    for at, row in enumerate(rows):
        match = _COMMIT_RE.search(row[:LINE_CAP])
        if (not match or _COMMIT_RE.search(_QUOTED_RE.sub(_Q, row[:LINE_CAP])) is None
                or _NOT_RUN_RE.search(row[match.end():LINE_CAP])):
            continue
        end = at
        heredoc = _HEREDOC_RE.search(row, match.end())
        if heredoc:
            end = next((k for k in range(at + 1, len(rows))
                        if rows[k].strip() == heredoc.group(2)), len(rows) - 1)
        else:
            quote = re.search(r"['\"]", row[match.end():])
            if quote:
                mark = quote.group(0)
                start = match.end() + quote.end()
                rest = "\n".join(rows[at:])[start:]
                close = rest.find(mark)
                end = at + (rest.count("\n", 0, close) if close >= 0 else 0)
        out += range(at + 1, end + 2)
    return sorted(set(out))


def item_tokens(text: str) -> list[str]:
    """The work items named anywhere in ``text`` (lines read to :data:`LINE_CAP`)."""
    return [item for row in text.split("\n") for item in ITEM_RE.findall(row[:LINE_CAP])]
