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
* a call of a file-editing tool (Claude Code's Edit, MultiEdit, Write, NotebookEdit;
  Codex's apply_patch; Cline's write_to_file, replace_in_file; an editor's
  str_replace_editor, create_file, edit_file): it runs nothing (an Edit that removes
  ``--force`` from a script held it as its old text).

A rule on writing ("never add a `Co-Authored-By:` trailer") is broken by such text,
so :func:`runs` is applied to the matches of run objects only.
"""

from __future__ import annotations

import re

import polars as pl

__all__ = ["EDIT_TOOLS", "runs"]

EDIT_TOOLS = (r"(?i)^(?:tool_call|tool_use|function_call):(?:edit|multiedit|write"
              r"|notebookedit|apply_patch|write_to_file|replace_in_file|str_replace_editor"
              r"|create_file|edit_file)$")
"""The source of a call that edits a file (a Polars regex)."""

_QUOTED_RE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
"""A quoted string of a shell command."""
_SUBSTITUTION_RE = re.compile(r"\$\(|`")
"""A command substitution, which a shell runs inside double quotes (``"$(git push
--force)"``)."""
_DATA_COMMANDS = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "ack"})
"""Commands whose quoted arguments are text, not a command: printed, or searched for."""
_DATA_OPTIONS = ("-m", "-am", "--message", "--grep")
"""Options whose quoted value is text (a commit or tag message, a log search)."""
_LEADERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec"})
"""Words that run the command after them."""


_PIPED_TO_SHELL_RE = re.compile(r"[^;&\n|]*\|\s*(?:\S*/)?(?:ba|z|da|k)?sh\b")
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
    if first in ("echo", "printf") and _PIPED_TO_SHELL_RE.match(text, end):
        return False
    return first in _DATA_COMMANDS or (first == "git" and words[1:2] == ["grep"])


def _unquoted(text: str) -> str:
    """``text`` with each quoted string that is data (:func:`_is_data`; a double-quoted
    one holding a command substitution runs) written as one space."""
    def blank(m: re.Match[str]) -> str:
        q = m.group(0)
        runs = q[0] == '"' and _SUBSTITUTION_RE.search(q)
        return " " if not runs and _is_data(text, m.start(), m.end()) else q
    return _QUOTED_RE.sub(blank, text)


def runs(hits: pl.DataFrame, pattern: dict[int, re.Pattern[str]]) -> pl.DataFrame:
    """The ``hits`` (``ord``, ``pid``, ``text``, ``source``) of a run object whose call
    runs it: not a file-editing tool's (:data:`EDIT_TOOLS`), and the object's pattern
    (``pattern[pid]``) found outside the call's quoted data.  Hits of other objects
    pass.  Python reads only the run objects' hits in texts holding a quote."""
    run = pl.col("pid").is_in(list(pattern))
    edits = run & pl.col("source").fill_null("").str.contains(EDIT_TOOLS)
    kept = hits.filter(~edits)
    quoted = kept.filter(run & pl.col("text").str.contains("['\"]"))
    if not quoted.height:
        return kept
    data = [(o, p) for o, p, text in quoted.select("ord", "pid", "text").iter_rows()
            if not pattern[p].search(_unquoted(text))]
    if not data:
        return kept
    drop = pl.DataFrame(data, schema={"ord": hits.schema["ord"], "pid": hits.schema["pid"]},
                        orient="row")
    return kept.join(drop, on=["ord", "pid"], how="anti")
