"""A command's short flags read as their long forms, for the rules a call breaks
(CA307, adv108 #5).

A lost "Do NOT use --force when pushing" names its object ``--force``; the call ``git
push -f origin main`` does the same thing spelled short, and was no violation.  For a
few commands whose short flag has one meaning (:data:`ALIASES`: ``git push -f``,
``git push origin +main``, ``git clean -fd``, ``rm -rf``, ``docker rm -f``, ``pip
uninstall -y``, ...), :func:`with_long_flags` appends the long form to the call's text
before the rule objects are looked for in it; the call's own text is what reports
quote.  A short flag elsewhere (``tail -f``, ``kubectl apply -f``: a file) is left as
it is.  Polars expressions only: one ``str.contains`` per alias over all calls.
"""

from __future__ import annotations

from typing import Final

import polars as pl

_END = r"(?:[\s;&|)]|$)"
_ARGS = r"[^\n;&|]*?\s"  # the rest of the same command, up to the flag
_CLUSTER = r"-[A-Za-z]*{}[A-Za-z]*" + _END  # a short flag alone or in a cluster (-rf)

ALIASES: Final[tuple[tuple[str, str], ...]] = (
    # (regex of the command with its short form, the long form it means)
    (r"\bgit\s[^\n;&|]*?\bpush\b" + _ARGS + r"(?:" + _CLUSTER.format("f") + r"|\+\S)",
     "--force"),
    (r"\bgit\s[^\n;&|]*?\b(?:clean|checkout|switch|branch|tag|add|rm|mv)\b" + _ARGS
     + _CLUSTER.format("f"), "--force"),
    (r"\bgit\s[^\n;&|]*?\bbranch\b" + _ARGS + r"-D" + _END, "--delete --force"),
    (r"(?:^|[\s;&|(])(?:sudo\s+)?(?:rm|cp|mv|ln)\s+(?:-\S+\s+)*" + _CLUSTER.format("f"),
     "--force"),
    (r"(?:^|[\s;&|(])(?:sudo\s+)?(?:rm|cp)\s+(?:-\S+\s+)*" + _CLUSTER.format("[rR]"),
     "--recursive"),
    (r"\bdocker\s+(?:rm|rmi|(?:container|image|volume|network)\s+(?:rm|prune)"
     r"|system\s+prune|volume\s+prune|image\s+prune)\b" + _ARGS + _CLUSTER.format("f"),
     "--force"),
    (r"\b(?:pip3?|python3?\s+-m\s+pip)\s+uninstall\b" + _ARGS + _CLUSTER.format("y"),
     "--yes"),
    (r"\b(?:apt|apt-get|dnf|yum)\b" + _ARGS + _CLUSTER.format("y"), "--yes"),
)
"""Commands whose short flag means one long flag (a regex over the call's text, and
that long form)."""


def with_long_flags(text: pl.Expr) -> pl.Expr:
    """``text`` with, for each alias of :data:`ALIASES` it uses, a newline and the
    long form appended (a String expression of the same length)."""
    out = text
    for pattern, long in ALIASES:
        out = pl.when(text.str.contains(pattern)).then(out + f"\n{long}").otherwise(out)
    return out
