"""A force-push spelled short, read as ``--force`` for the rules a call breaks (CA307,
adv108 #5), and a long flag written with one dash read with two (adv124 #10).

A lost "Do NOT use --force when pushing" names its object ``--force``; the call ``git
push -f origin main`` (or ``git push origin +main``) force-pushes spelled short, and
was no violation.  :func:`with_long_flags` appends ``--force`` to such a call's text
before the rule objects are looked for in it; the call's own text is what reports
quote.  Only ``git push`` and npm (whose ``-f`` is ``--force`` in every command: adv125
o02) are read so (:data:`FORCE_PUSH_RE`, :data:`NPM_FORCE_RE`): a lost rule's object is a
flag without the command it was said of, and short flags of other commands are everywhere
(``rm -rf`` in nearly every session would break every lost "--force" rule; ``-f`` is
``--filter`` in ``docker ps -f``, ``--fetch`` in ``git remote add -f``: adv110 #7, #8,
#10).  The push must be the command itself: ``git``, its options (``-C repo``), then
``push``, not words of a commit message (adv110 #9).  Polars expressions only: one
``str.contains`` over all calls.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from compaction_audit.recall.callwords import SEARCHES

_COMMAND_START = (r"(?:^|[;&|(\"']\s*|\n\s*)(?:sudo\s+)?"
                  r"(?:[A-Za-z_][A-Za-z0-9_]*=[^\s;&|]*\s+)*")
"""Where a command starts (a quote too: bash -c "git push -f"), then sudo and VAR=value
prefixes: what :data:`FORCE_PUSH_RE` and :data:`NPM_FORCE_RE` read before the program."""
FORCE_PUSH_RE: Final[str] = (
    # git after a command start (a quote too: bash -c "git push -f"), sudo and
    # VAR=value prefixes, its options (-C repo, --git-dir=x), push, then among the same
    # command's words on its line (no quote, no $( ), no # comment) -f alone or in a
    # cluster (-fu), or a +refspec (adv111 #6, #7, #9, #10)
    _COMMAND_START + r"git"
    r"(?:[ \t]+-[A-Za-z-]+(?:=[^\s;&|]+|[ \t]+[^\s\-;&|#][^\s;&|]*)?)*[ \t]+push\b"
    r"(?:[ \t]+[^\s;&|$`\"'#]+)*?[ \t]+(?:-[A-Za-z]*f[A-Za-z]*|\+[^\s;&|]+)"
    r"(?:[\s;&|)\"']|$)")
"""A force-push spelled short, as a regex over a call's text (Rust ``regex``)."""

_WORD = r"[^\s;&|$`\"'#]"
NPM_FORCE_RE: Final[str] = (
    # npm, whose -f is --force in every command (npm install -f, npm audit fix -f:
    # adv125 o02), then its words up to -f, none of them a bare "--", after which -f
    # is the script's (eslint's --format, mocha's --fgrep: adv127 #3); pnpm's -f is
    # --filter and yarn has none
    _COMMAND_START + r"npm"
    rf"(?:[ \t]+(?:[^\s;&|$`\"'#-]{_WORD}*|-[^\s;&|$`\"'#-]{_WORD}*|--{_WORD}+))*?"
    r"[ \t]+-f(?:[\s;&|)\"']|$)")
"""npm's ``-f`` (:data:`FORCE_PUSH_RE`'s counterpart), but in ``npm exec`` and
``npm x`` (:data:`_NPM_EXEC_RE`), which pass it to the tool they run."""
_NPM_EXEC_RE = r"(?:^|[\s;&|(])npm[ \t]+(?:exec|x)(?:[ \t]|$)"


SINGLE_DASH_RE: Final[str] = r"(?:^|[\s\"'])-([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+)(?:[\s=\"']|$)"
"""A long flag written with one dash, as Go's flag package and terraform take them
(``-auto-approve``, ``-var-file=x``): hyphenated words only, so a cluster of short
flags (``-rf``) or ``find -delete`` is none (adv124 #10)."""


def with_long_flags(text: pl.Expr) -> pl.Expr:
    """``text`` with a newline and ``--force`` appended where it force-pushes spelled
    short (:data:`FORCE_PUSH_RE`) or gives npm its ``-f`` (:data:`NPM_FORCE_RE`), and
    ``--NAME`` for each long flag written with one dash (:data:`SINGLE_DASH_RE`); a
    String expression of the same length."""
    npm_f = text.str.contains(NPM_FORCE_RE) & ~text.str.contains(_NPM_EXEC_RE)
    forced = pl.when(text.str.contains(FORCE_PUSH_RE) | npm_f).then(
        text + "\n--force").otherwise(text)
    # a flag in quoted text (a commit message) or a search is none (adv125 #9)
    single = (text.str.replace_all(r"'[^']*'|\"[^\"]*\"", " ")  # nor a search's pattern
              .str.replace_all(rf"\b(?:{'|'.join(SEARCHES)})\b[^;&|\n]*", " ")
              .str.extract_all(SINGLE_DASH_RE))
    return pl.when(single.list.len() > 0).then(
        forced + single.list.eval(pl.element().str.replace(r"^[\s\"']*-", "\n--")
                                  .str.replace(r"[\s=\"']$", "")).list.join("")
    ).otherwise(forced)
