"""Building blocks of the terminal reports: untrusted text as literal rich ``Text``,
lines that are never wrapped, text wrapped under a hanging indent of our own, and
renderables that become lists on a narrow terminal (issue 13, section 2).

Untrusted text never starts a physical line at column 0 (issue 11; docs/security.md,
"Layout"): it is either on a line that starts with our own words (:func:`line`, one
physical line however long, printed with ``crop=False``), in a table cell cut with an
ellipsis (:func:`t`), or wrapped under an indent of at least :data:`MIN_INDENT` spaces
of ours (:func:`hang`, :func:`block`).  The stream layer
(:func:`~compaction_audit.report.safe.neutralize`) still breaks a continuation line
that a runner would trim and run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.text import Text

from compaction_audit.report.safe import MAX_TEXT, printable

MIN_INDENT = 2
"""Fewest spaces of ours before any wrapped continuation line."""

WIDE = 100
"""Columns from which tables are drawn; below it they become lists (80 columns:
issue 13, section 2)."""

LIST_LIMIT = 15
"""Items any terminal list shows before "N more (--all)" (the first screen)."""


def t(text: object, style: str = "") -> Text:
    """Untrusted text as a literal rich Text (escapes made visible, no markup), never
    wrapped: cut with an ellipsis where it does not fit (a table cell)."""
    return Text(printable(text), style=style, no_wrap=True, overflow="ellipsis")


def w(text: object, style: str = "", limit: int = MAX_TEXT) -> Text:
    """Untrusted text as a literal rich Text that may wrap (at spaces; a word wider
    than the column is folded), at most ``limit`` characters (a prefix, its length and
    a hash past that: :func:`~compaction_audit.report.safe.printable`).  Only ever
    placed under :func:`hang` or :func:`block`."""
    return Text(printable(text, limit=limit), style=style, overflow="fold")


def line(*parts: str | Text | tuple[str, str]) -> Text:
    """One output line assembled from ``parts`` (as :meth:`Text.assemble`) that is
    never wrapped nor cut: it runs past the width (print with ``crop=False``)."""
    text = Text.assemble(*parts)
    text.no_wrap, text.overflow = True, "ignore"
    return text


class Hang:
    """``head`` then ``body`` wrapped beside it, every continuation line under the
    body's first character; each physical line starts with ``indent`` spaces of ours
    and carries no trailing spaces.  Built by :func:`hang` and :func:`block`."""

    def __init__(self, head: Text, body: Text, indent: int) -> None:
        self.head, self.body, self.indent = head, body, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lead = self.indent + self.head.cell_len
        beside = options.max_width - lead
        if self.head.cell_len and (beside < MIN_WRAP or (
                beside < min(lead, NARROW_BODY) and self.body.cell_len > beside)):
            # a head too wide for the body beside it (a long file name at 60 columns:
            # lines of 67, usertest13; or narrower than its head: NARROW_BODY): the
            # head on a line of its own (wrapped, if it must, under the indent), the
            # body under it, four columns in
            head = Text(" " * self.indent)
            head.append_text(self.head.copy())
            head.rstrip()
            yield Hanging(head, self.indent + 2)
            yield from Hang(Text(""), self.body, self.indent + 4).__rich_console__(
                console, options)
            return
        room = max(options.max_width - lead, MIN_WRAP)
        lines = list(self.body.wrap(console, room, overflow="fold")) or [Text("")]
        for i, part in enumerate(lines):
            out = Text(" " * self.indent)
            out.append_text(self.head if i == 0 else Text(" " * self.head.cell_len))
            out.append_text(part)
            out.rstrip()
            out.no_wrap, out.overflow, out.end = True, "ignore", "\n"
            yield out


MIN_WRAP = 20
"""Fewest columns the wrapped part of a :class:`Hang` gets beside its head: else the
body goes under the head."""
NARROW_BODY = 40
"""A body that would wrap in a column narrower than this and than its head goes under
the head too (a column of 33 beside 47 of a Cline file's name at 80 columns read as a
thin strip: usertest36 #7); one that fits stays beside it."""


def hang(head: str | Text, *body: str | Text | tuple[str, str], indent: int = MIN_INDENT
         ) -> RenderableType:
    """``head`` (our own words, never wrapped) then ``body`` wrapped beside it: every
    continuation line starts under the body's first character, so at ``indent`` +
    the head's width (:class:`Hang`).  ``body`` parts are assembled as
    :meth:`Text.assemble` (wrap untrusted text with :func:`w` first)."""
    head_text = head if isinstance(head, Text) else Text(head)
    return Hang(head_text, Text.assemble(*body), max(indent, MIN_INDENT))


def block(*body: str | Text | tuple[str, str], indent: int = 4) -> RenderableType:
    """``body`` wrapped, every line (the first included) indented by ``indent``."""
    return Hang(Text(""), Text.assemble(*body), max(indent, MIN_INDENT))


def rest_after(text: Text, first: Text) -> Text:
    """What follows the wrapped line ``first`` in ``text``, leading spaces dropped."""
    rest = text[len(first.plain):]
    return rest[len(rest.plain) - len(rest.plain.lstrip(" ")):]


class Hanging:
    """``body`` from column 0 (it starts with our own words), wrapped to the width with
    every continuation line under ``indent`` spaces of ours (a verdict line)."""

    def __init__(self, body: Text, indent: int = MIN_INDENT) -> None:
        self.body, self.indent = body.copy(), max(indent, MIN_INDENT)
        self.body.no_wrap, self.body.overflow = False, "fold"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        first = list(self.body.wrap(console, max(options.max_width, MIN_WRAP),
                                    overflow="fold"))[:1] or [Text("")]
        head = first[0]
        rest = rest_after(self.body, head)
        head.rstrip()
        head.no_wrap, head.overflow, head.end = True, "ignore", "\n"
        yield head
        if rest.plain:
            yield from Hang(Text(""), rest, self.indent).__rich_console__(console, options)


def hanging(*body: str | Text | tuple[str, str], indent: int = MIN_INDENT) -> RenderableType:
    """``body`` (starting with our words) wrapped to the width, continuation lines
    under ``indent`` spaces (:class:`Hanging`)."""
    return Hanging(Text.assemble(*body), indent)


class Trimmed:
    """``body`` with the white space that ends each of its lines left out: a table or
    grid pads every cell to its column's width, so each line of a chart or a table
    ended in spaces, up to the width (ux6).  Nothing else changes: no line is cut or
    wrapped here."""

    def __init__(self, body: RenderableType) -> None:
        self.body = body

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segments in Segment.split_lines(console.render(self.body, options)):
            while segments and not segments[-1].control and not segments[-1].text.strip():
                segments.pop()
            if segments and not segments[-1].control:
                last = segments[-1]
                segments[-1] = Segment(last.text.rstrip(), last.style)
            yield from segments
            yield Segment.line()


class ByWidth:
    """A table on a wide console, a list below :data:`WIDE` columns: the choice is
    made when the console renders it, from the width it offers; either without the
    spaces that end its lines (:class:`Trimmed`)."""

    def __init__(self, wide: Callable[[], RenderableType],
                 narrow: Callable[[], RenderableType], min_width: int = WIDE) -> None:
        self.wide, self.narrow, self.min_width = wide, narrow, min_width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Trimmed(self.wide() if options.max_width >= self.min_width else self.narrow())


def more_line(hidden: int, what: str = "more", indent: int = MIN_INDENT) -> RenderableType:
    """``... N more (--all)``, the cap under every list, wrapped under ``indent``
    (:func:`note_line`)."""
    return note_line(f"... {hidden} {what} (--all)", indent=indent)


def note_line(words: str, style: str = "dim", indent: int = MIN_INDENT) -> RenderableType:
    """A line of our own words under a list (``not listed: ...``), every line of it,
    wrapped ones too, indented by ``indent`` (usertest12: a plain indented line
    wrapped back to column 0 at 80 columns)."""
    return block((words, style), indent=indent)


def heading(words: str) -> RenderableType:
    """A section's bold heading (our words): starts at column 0, wraps under two
    spaces on a narrow terminal instead of back to column 0."""
    return hanging((words, "bold"), indent=MIN_INDENT)


def capped(items: list[Any], show_all: bool, limit: int = LIST_LIMIT) -> tuple[list[Any], int]:
    """The first ``limit`` of ``items`` (all with ``show_all``) and how many were left."""
    if show_all or len(items) <= limit:
        return items, 0
    return items[:limit], len(items) - limit


def group(parts: Iterable[RenderableType | None]) -> Group:
    """A rich Group of the parts that are not None."""
    return Group(*(p for p in parts if p is not None))
