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
"""States that close an item (``--status closed``); any other state opens it again
(``in_progress``, ``"In Progress"``, ``in_review``)."""

_Q = "\x00"  # a quoted string or a here-document, read as one opaque word
_QUOTED_RE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_HEREDOC_RE = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1")
_SPLIT_RE = re.compile(r"&&|\|\||[;|\n(){}]")
_WORD_RE = re.compile(r"[\w.-]{1,64}")
_NOT_TRACKERS = frozenset({
    "echo", "printf", "print", "git", "cat", "tee", "grep", "rg", "sed", "awk", "test",
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "case", "esac",
    "let", "we", "i", "will", "can", "now", "next", "run", "and", "or", "to", "please"})
"""Programs and words that start a command but close no work item: printing and
text tools, git (whose ``checkout -b close X`` names a branch), shell keywords, and
the words prose starts with ("Let me close X", "We can now close X")."""
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "pwsh", "powershell",
                     "cmd"})
"""Programs whose script argument (:data:`_SCRIPT_FLAG`) an argument list's lines hold
(read by its lines; any other argument list only as one command)."""
_SCRIPT_FLAG = re.compile(r"(?i)-[a-z]*c|-command|/c")
"""The flag before a shell's script: ``-c``, ``-lc``, ``-Command``, ``/c``."""
ARGV_TOOLS = r"(?i):(?:shell|local_shell|container\.exec)$"
"""Calls whose text is an argument list, one argument per line (Codex's ``shell`` tool
writes ``{"command": ["bd", "close", "PROJ-7"], "workdir": ...}``); every other shell
tool's text is a script (Claude Code's ``Bash``, Codex's ``exec_command``, Gemini's
``run_shell_command``, Cline's ``execute_command``)."""
_COMMENT_RE = re.compile(r"(?:^|(?<=[ \t]))#.*$", re.MULTILINE)
_PREFIX = (r"^(?:\w+=\S*[ \t]+)*(?:\./)?[A-Za-z@][\w./@-]*"
           rf"(?:[ \t]+(?:[\w./@-]+|{_Q})){{0,3}}?[ \t]+")
_ITEMS = rf"{WORK_ITEM}(?:(?:[ \t]*,[ \t]*|[ \t]+){WORK_ITEM})*"
_FLAG = rf"(?:-\S+(?:[ \t]+(?!{WORK_ITEM})[^\s-]\S*)?|{_Q})"
"""A flag, with the value after it (``--reason shipped``), or a quoted value."""
_TAIL = rf"(?:[ \t]+(?:{_FLAG}|\d*[<>]&?\S*|/\S*))*[ \t]*$"
"""After the items: flags, redirections, a path (a Codex call's working folder, which
its argument list ends with) and quoted values; nothing else."""
_CLOSE_RE = re.compile(
    rf"{_PREFIX}(?:close|resolve|complete|finish|done)"
    rf"((?:[ \t]+{_FLAG})*[ \t]+{_ITEMS}){_TAIL}", re.IGNORECASE)
_UPDATE_RE = re.compile(
    rf"{_PREFIX}(?:re-?open|update|edit|set|move|transition)"
    rf"((?:[ \t]+{_FLAG})*[ \t]+{_ITEMS})((?:[ \t]+\S+)*)[ \t]*$", re.IGNORECASE)
_STATE_RE = re.compile(rf"(?:--status|--state|-s)(?:=|[ \t]+)([\w-]+|{_Q})")
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
    return _COMMENT_RE.sub("", _QUOTED_RE.sub(_opaque, "\n".join(kept)))


def _opaque(quoted: re.Match[str]) -> str:
    """A quoted string as one word: its text when it is one plain word (``"closed"``,
    ``'in_progress'``: a value a command reads), else the opaque word."""
    inner = quoted.group(0)[1:-1]
    return f" {inner} " if _WORD_RE.fullmatch(inner) else f" {_Q} "


def commands(text: str, argv: bool = False) -> list[str]:
    """The shell commands of a call's text (see the module's doc), stripped: each line
    and each part of one between ``&&``, ``;``, ``|``... is a command, and when the
    first line is one word, also the lines joined (``bd\\nclose\\nPROJ-7``).

    ``argv``: the call is an argument list written one argument per line (Codex's
    ``shell`` tool, :data:`ARGV_TOOLS`): the lines joined are the one command, or for a
    shell's script (``["bash", "-lc", "bd close PROJ-7"]``, ``["pwsh", "-Command",
    S]``, ``["cmd", "/c", S]``) the script's lines are the commands; no other argument
    is read as a command (adv43: the lines of ``["echo", "bd close X"]`` closed X; a
    script of another tool whose first line is one word, ``date``, is a script: adv44)."""
    rows = [row.strip() for row in text.split("\n") if row.strip()]
    one_word = len(rows) > 1 and not any(c in rows[0] for c in " \t")
    joined = " ".join(_unquoted(row) for row in rows)[:LINE_CAP] if one_word else ""
    if argv and one_word:
        program = rows[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
        shell = program in _SHELLS and _SCRIPT_FLAG.fullmatch(rows[1]) is not None
        script = _unquoted("\n".join(rows[2:])) if shell else joined
    else:
        script = _unquoted(text) + ("\n" + joined if joined else "")
    return [part.strip() for part in _SPLIT_RE.split(script) if part.strip()]


def closings(parts: list[str]) -> list[tuple[str, bool]]:
    """(item, closes) for each work item a command closes (``True``: ``bd close X``,
    ``bd update X --status closed``) or opens again (``False``: ``bd reopen X``,
    ``--status in_progress``), in the commands' order; ``--dry-run`` and ``--help``
    change nothing."""
    out: list[tuple[str, bool]] = []
    for command in parts:
        words = command.split()
        program = next((w for w in words if "=" not in w), "").rsplit("/", 1)[-1]
        if _NOT_RUN_RE.search(command) or program.lower() in _NOT_TRACKERS:
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
        closes = (False if verb in ("reopen", "re-open")
                  else None if state is None
                  else state.group(1).lower() in CLOSED_STATES)  # any other state opens
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
    at = 0
    while at < len(rows):  # one pass: a message's lines are not read again
        row = rows[at][:LINE_CAP]
        match = _COMMIT_RE.search(row)
        if (not match or _COMMIT_RE.search(_QUOTED_RE.sub(_Q, row)) is None
                or _NOT_RUN_RE.search(row[match.end():])):
            at += 1
            continue
        end = at
        heredoc = _HEREDOC_RE.search(row, match.end())
        quote = None if heredoc else re.search(r"['\"]", row[match.end():])
        if heredoc:
            while end + 1 < len(rows) and rows[end + 1].strip() != heredoc.group(2):
                end += 1
            end = min(end + 1, len(rows) - 1)
        elif quote and quote.group(0) not in row[match.end() + quote.end():]:
            while end + 1 < len(rows) and quote.group(0) not in rows[end + 1]:
                end += 1
            end = min(end + 1, len(rows) - 1)
        out += range(at + 1, end + 2)
        at = end + 1
    return out


def item_tokens(text: str) -> list[str]:
    """The work items named anywhere in ``text`` (lines read to :data:`LINE_CAP`)."""
    return [item for row in text.split("\n") for item in ITEM_RE.findall(row[:LINE_CAP])]
