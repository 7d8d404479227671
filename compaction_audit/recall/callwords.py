"""Where a tool call runs a command's words, not only holds them (adv123 #1).

lost-rule-violated (CA307) finds a forbidden object in a later call's text.  For a rule
on running something ("never use --force", "do not run `make deploy`"), two kinds of
text hold the object without running it:

* a quoted argument of another program: a search pattern (``grep -rn -- '--force'
  scripts/``), a commit message (``git commit -am 'stop using --force'``), text
  written to a file (``echo 'Never commit with --no-verify' >> CONTRIBUTING.md``).  A
  quoted string a shell runs is not data: after a shell's or an interpreter's ``-c``
  (``bash -c '...'``, ``bash -lc``, ``python3 -c``; not ``grep -c``), ``eval``,
  ``watch``, ``xargs`` or ``ssh HOST``, or a double-quoted command substitution
  (``"$(...)"``), it is read;
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

_QUOTED_RE = re.compile(
    r"(?P<lead>(?:^|(?<=[\s;&|(/]))(?:(?:(?:ba|z|da|k|fi)?sh|su|python3?|node|perl|ruby)"
    r"(?:\s+-\S+)*?\s+-[A-Za-z]*c|eval|watch(?:\s+-\S+)*|xargs(?:\s+-\S+)*"
    r"|ssh(?:\s+-\S+)*\s+[^\s'\"]+)\s+)?(?P<q>'[^']*'|\"(?:[^\"\\]|\\.)*\")")
"""A quoted string, with the words before it that make a shell run it: a shell's or an
interpreter's ``-c`` (``bash -c``, ``bash -lc``, ``sh -ec``, ``python3 -c``; not
``grep -c``), ``eval``, ``watch``, ``xargs``, ``ssh HOST``."""
_SUBSTITUTION_RE = re.compile(r"\$\(|`")
"""A command substitution, which a shell runs inside double quotes (``"$(git push
--force)"``)."""


def _unquoted(text: str) -> str:
    """``text`` with each quoted string that is data (not run: :data:`_QUOTED_RE`; a
    double-quoted one holding a command substitution runs) written as one space."""
    def data(m: re.Match[str]) -> str:
        q = m.group("q")
        runs = m.group("lead") or (q[0] == '"' and _SUBSTITUTION_RE.search(q))
        return m.group(0) if runs else " "
    return _QUOTED_RE.sub(data, text)


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
