"""Where a tool call runs a command's words, not only holds them (adv123 #1).

lost-rule-violated (CA307) finds a forbidden object in a later call's text.  For a rule
on running something ("never use --force", "do not run `make deploy`"), two kinds of
text hold the object without running it:

* a quoted argument that is text: a search pattern (``grep -rn -- '--force'
  scripts/``, ``rg``, ``git grep``, ``git log --grep``), a commit or tag message
  (``git commit -am 'stop using --force'``), text printed or written to a file
  (``echo 'Never commit with --no-verify' >> CONTRIBUTING.md``).  Any other quoted
  string may be a command a program runs (``bash -lc '...'``, ``psql -c 'DROP TABLE
  ...'``, ``ssh HOST '...'``) and is read, and so is a double-quoted command
  substitution (``"$(...)"``);
* a call of a tool that runs no command (:data:`EDIT_TOOLS`): a file edit (Claude
  Code's Edit, MultiEdit, NotebookEdit; Codex's apply_patch; Cline's replace_in_file;
  an editor's str_replace_editor, edit_file: an Edit that removes ``--force`` from a
  script held it as its old text), a search or read (Grep, Glob, Read), a to-do list, a
  web request.  A whole file written (Write, write_to_file,
  create_file) holds what will run: a script or Makefile written with the command is
  read, and the finding says the call wrote it; a document written (``.md``, ``.txt``,
  README, CLAUDE.md: adv125 #7) is not.

A rule on writing ("never add a `Co-Authored-By:` trailer") is broken by such text,
so :func:`runs` is applied to the matches of run objects only.
"""

from __future__ import annotations

import re

import polars as pl

from compaction_audit.recall.heredocs import replace_heredocs

__all__ = ["EDIT_TOOLS", "SEARCHES", "WRITE_TOOLS", "refusals", "runs", "unquoted"]

EDIT_TOOLS = (r"(?i)^(?:tool_call|tool_use|function_call):(?:edit|multiedit|notebookedit"
              r"|apply_patch|replace_in_file|str_replace_editor|edit_file|grep|glob|read|ls"
              r"|todowrite|todoread|websearch|webfetch|notebookread|read_file"
              r"|list_files|search_files|view_file|codebase_search)$")
"""The source of a call that runs no command: a file edit (its text holds the old
text with the new), a search, a read, a to-do list, a web request (a Polars regex;
adv124 #6: Grep and TodoWrite "ran" --force).  A sub-agent's task runs what it asks
(adv125 #2)."""
WRITE_TOOLS = r"(?i)^(?:tool_call|tool_use|function_call):(?:write|write_to_file|create_file)$"
"""The source of a call that writes a whole file: a script or a Makefile holding the
command, run later (adv124 #4: a release script written with --force, then run, was
no longer seen); such a call "wrote" the object (a Polars regex)."""

_QUOTED_RE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
"""A quoted string of a shell command."""
_SUBSTITUTION_RE = re.compile(r"\$\(|`")
"""A command substitution, which a shell runs inside double quotes (``"$(git push
--force)"``)."""
SEARCHES = ("grep", "egrep", "fgrep", "rg", "ag", "ack")
"""Commands that search text: their arguments are patterns, never run."""
_SEARCH = "|".join(SEARCHES)
_DATA_COMMANDS = frozenset({"echo", "printf", *SEARCHES})
"""Commands whose quoted arguments are text, not a command: printed, or searched for."""
_DATA_OPTIONS = ("-m", "-am", "--message", "--grep", "--body", "--title", "--notes")
"""Options whose quoted value is text (a commit or tag message, a log search, a pull
request's body or title)."""
_LEADERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec"})
"""Words that run the command after them."""


_PIPED_TO_SHELL_RE = re.compile(
    r"[^;&\n|]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:\S*/)?(?:(?:ba|z|da|k)?sh|ssh|at|crontab|xargs"
    r"|python3?|node|perl|ruby|psql|mysql|sqlite3)\b")
"""Printed text piped into a shell, which runs it (``echo '...' | sh``)."""


def _is_data(text: str, at: int, end: int) -> bool:
    """Whether the quoted string from ``at`` to ``end`` in ``text`` is text a program
    prints, searches for or records (:data:`_DATA_COMMANDS`, :data:`_DATA_OPTIONS`),
    read in the command segment it is in (after the last ``;``, ``&``, ``|``, ``(`` or
    line end), and not printed into a shell (:data:`_PIPED_TO_SHELL_RE`).  Anything
    else quoted may be run (``bash -c``, ``psql -c``, ``ssh HOST``)."""
    start = max(text.rfind(c, 0, at) for c in ";&|(\n") + 1
    words = text[start:at].split()
    if words and (words[-1] in _DATA_OPTIONS
                  or words[-1].startswith(("--message=", "--grep="))):
        return True
    while words and ("=" in words[0] or words[0] in _LEADERS):
        words = words[1:]
    first = words[0].rsplit("/", 1)[-1] if words else ""
    if _PIPED_TO_SHELL_RE.match(text, end):  # printed or found, then run (adv125 #6)
        return False
    return first in _DATA_COMMANDS or (first == "git" and words[1:2] == ["grep"])


_DOCUMENT_RE = re.compile(r"(?i)(?:\.(?:md|markdown|txt|rst|adoc|org)|\b(?:README|CONTRIBUTING"
                          r"|CHANGELOG|NOTES|LICENSE))\b")
"""A document a here-document is written to (its text is read, never run)."""
_MESSAGE_HEAD_RE = re.compile(
    r"\bgit\s+(?:commit|tag)\b.*\s-F\s|\bgh\s+\w+\s+\w+.*--body-file"
    r"|(?:^|\s)(?:-a?m|--message|--body|--title|-F)[\s=]+\"?\$\(\s*cat\s+<<")
"""A here-document read as a commit, tag or pull request message (``git commit -F -``,
and Claude Code's ``git commit -m "$(cat <<'EOF' ...)"``: adv125 #13)."""
_SEARCHES_RE = re.compile(r"(?m)(?:^|(?<=[;&|(]))[ \t]*(?:sudo[ \t]+)?(?:\S*/)?"
                          rf"(?:{_SEARCH}|git[ \t]+grep)\b[^;&|\n]*(?![^\n;&]*\|)"
                          r"|--grep=\S+")
"""A search with its arguments, quoted or not (``grep -- --force``, ``git log
--grep=--force``: adv124 #6), its output piped nowhere.  A text edit (``sed``) is read:
it may write the command into a script the call runs (adv125 #1)."""


def unquoted(text: str) -> str:
    """``text`` with what is data written as one space: the body of a here-document
    ``cat`` or ``tee`` writes to a document, not piped (adv124 #5: "Never commit with
    --no-verify" documented in CONTRIBUTING.md "ran" it; adv125 #1: one piped into
    ``sh`` or written to a script runs), or a commit message read from it, each quoted
    string that is data (:func:`_is_data`; a double-quoted one holding a command
    substitution runs), then searches with their arguments (:data:`_SEARCHES_RE`)."""
    def heredoc(head: str, tag: str, whole: str) -> str:
        start = max(head.rfind(c, 0, head.find("<<")) for c in ";&|(") + 1
        words = head[start:].split()
        document = (bool(words) and words[0].rsplit("/", 1)[-1] in ("cat", "tee")
                    and "|" not in head[start:] and bool(_DOCUMENT_RE.search(head)))
        message = _MESSAGE_HEAD_RE.search(head) is not None
        return f"{head}\n \n{tag}" if document or message else whole

    def blank(m: re.Match[str]) -> str:
        q = m.group(0)
        runs = q[0] == '"' and _SUBSTITUTION_RE.search(q)
        return " " if not runs and _is_data(out, m.start(), m.end()) else q

    out = replace_heredocs(text, heredoc)  # one pass (adv128 #2: a regex, quadratic)
    out = _QUOTED_RE.sub(blank, out)
    return _SEARCHES_RE.sub(" ", out)


_MAY_HOLD_DATA = rf"['\"]|<<|\b(?:{_SEARCH})\b|--grep="
"""A call text that may hold data (:func:`unquoted`), a Polars regex: the others are
read whole."""


def runs(hits: pl.DataFrame, pattern: dict[int, re.Pattern[str]]) -> pl.DataFrame:
    """The ``hits`` (``ord``, ``pid``, ``text``, ``source``) of a run object whose call
    runs it: not a file-editing tool's (:data:`EDIT_TOOLS`), and the object's pattern
    (``pattern[pid]``) found outside the call's data (:func:`unquoted`).  Hits of
    other objects pass.  Python reads only the run objects' hits in texts that may hold
    data (:data:`_MAY_HOLD_DATA`)."""
    run = pl.col("pid").is_in(list(pattern))
    source = pl.col("source").fill_null("")
    edits = run & (source.str.contains(EDIT_TOOLS)
                   | (source.str.contains(WRITE_TOOLS)  # a document written: read, not run
                      & pl.col("text").str.split("\n").list.first().str.contains(
                          _DOCUMENT_RE.pattern)))
    kept = hits.filter(~edits)
    quoted = kept.filter(run & pl.col("text").str.contains(_MAY_HOLD_DATA))
    if not quoted.height:
        return kept
    data = [(o, p) for o, p, text in quoted.select("ord", "pid", "text").iter_rows()
            if not pattern[p].search(unquoted(text))]
    if not data:
        return kept
    drop = pl.DataFrame(data, schema={"ord": hits.schema["ord"], "pid": hits.schema["pid"]},
                        orient="row")
    return kept.join(drop, on=["ord", "pid"], how="anti")


REFUSALS = (
    (r"^The user doesn't want to proceed with this tool use",
     "the person rejected it at the permission prompt"),
    (r"^The user doesn't want to take this action right now", "the person cancelled it"),
    (r"^Permission to use \S+.* has been denied", "permission was denied"),
    (r"^PreToolUse:\S+ hook error:.*\b(?:[Bb]lock(?:ed|s)?|[Dd]enied|not allowed|[Ff]orbidden"
     r"|[Rr]efus\w*|[Rr]eject\w*)\b", "a hook blocked it"),
    (r"^exec command rejected by user", "the person rejected it"),
)
"""How a product's result of a call that did not run begins (Claude Code: the
permission prompt's reject and cancel, a permission denied, a PreToolUse hook that
blocks it; Codex: a command the person rejected; adv123 #9, adv124 #8, adv125 #11),
and what the finding says of it (Polars regexes)."""


def refusals(calls: pl.DataFrame, items: pl.DataFrame) -> pl.Expr:
    """Per call of ``calls`` (``id``), why it did not run, null when it ran: its result
    (the item ``<id>:result`` or ``<id>:output``, as the Claude Code and Codex adapters
    name it) begins as one of :data:`REFUSALS`.  Returns an expression to evaluate on
    ``calls``."""
    ids = pl.concat([calls["id"] + ":result", calls["id"] + ":output"])
    results = items.filter(pl.col("id").is_in(ids.implode()) & pl.col("text").is_not_null())
    if not results.height:
        return pl.lit(None, pl.String)
    text = pl.col("text")
    reason = pl.lit(None, pl.String)
    for pattern, said in reversed(REFUSALS):
        reason = pl.when(text.str.contains(pattern)).then(pl.lit(said)).otherwise(reason)
    table = results.select(pl.col("id").str.replace(r":(?:result|output)$", ""),
                           reason.alias("why"))
    lookup = dict(table.filter(pl.col("why").is_not_null()).iter_rows())
    if not lookup:
        return pl.lit(None, pl.String)
    return pl.col("id").replace_strict(list(lookup), list(lookup.values()), default=None,
                                       return_dtype=pl.String)
