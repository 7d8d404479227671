"""``compaction-audit trace LOG QUERY``: the lineage of a discriminator, span or summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from compaction_audit.commands.common import (
    FORMAT_HELP,
    TextOrJson,
    console_for,
    fail,
    write_bytes,
)
from compaction_audit.errors import AuditError
from compaction_audit.report.safe import JSON, clip_tree, json_safe, printable
from compaction_audit.report.terminal_text import LIST_LIMIT, block, capped, line, more_line

if TYPE_CHECKING:  # the tracer (Polars, the recall modules) loads when the command runs
    from compaction_audit.trace import Node

MIN_QUOTE = 24
"""Fewest columns a label's quote keeps when the line is cut to the width."""


class TreeView:
    """The tree, one line per node under guides of ours (``├── ``, ``│   ``), so no
    untrusted text starts a line: each node's ids and our words are shown whole (the
    line may run past the width), only its quote (``Node.cut`` on) is cut with ``…``
    to fit.  Each node's children are capped at :data:`LIST_LIMIT` unless ``show_all``
    ("N more (--all)")."""

    def __init__(self, root: Node, show_all: bool) -> None:
        self.root, self.show_all = root, show_all

    def _line(self, prefix: str, node: Node, width: int) -> Text:
        style = "bold red" if node.data.get("result") == "lost" or \
            node.data.get("fate") == "lost" else ""
        label = printable(node.label)
        if node.cut is None:
            return line(prefix, (label, style))
        head = printable(node.label[:node.cut])
        quote = Text(printable(node.label[node.cut:]))
        room = max(width - len(prefix) - len(head), MIN_QUOTE)
        quote.truncate(room, overflow="ellipsis")
        return line(prefix, (head, style), quote)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield self._line("", self.root, width)
        if note := self.root.data.get("note"):
            yield line("note: ", printable(note))
        stack: list[tuple[str, Node | int, bool]] = []

        def push(prefix: str, children: list[Node]) -> None:
            shown, hidden = capped(children, self.show_all, LIST_LIMIT)
            items: list[Node | int] = [*shown, *([hidden] if hidden else [])]
            for k in reversed(range(len(items))):
                stack.append((prefix, items[k], k == len(items) - 1))

        push("", self.root.children)
        while stack:
            prefix, node, last = stack.pop()
            guide = prefix + ("└── " if last else "├── ")
            if isinstance(node, int):
                yield Text(guide + f"... {node} more (--all)", style="dim")
                continue
            yield self._line(guide, node, width)
            push(prefix + ("    " if last else "│   "), node.children)


def _summaries(root: Node, show_all: bool, full: bool) -> list[RenderableType]:
    """The summaries the tree names, each once: one line each, or whole with
    ``full`` (wrapped under an indent of ours)."""
    items = list(root.summaries.items())
    if not items:
        return []
    from compaction_audit.trace import FULL_LIMIT

    out: list[RenderableType] = [Text(f"summaries ({len(items)})")]
    shown, hidden = capped(items, show_all, LIST_LIMIT)
    for sid, s in shown:
        where = (f"  {printable(sid)} (depth {s['depth']}, round {s['round']}, "
                 f"line {s['line']}")
        if s["text"] is None:
            out.append(line(where + "): no text"))
        elif full:
            out.append(line(where + f"; {s['chars']:,} chars):"))
            out.append(block(Text(printable(s["text"], newlines=True, limit=FULL_LIMIT),
                                  overflow="fold"), indent=4))
        else:
            whole = s["chars"] == len(s["text"])
            out.append(_Cut(where + f"; {s['chars']:,} chars{'' if whole else ', --full'}): ",
                            printable(s["text"]),
                            where + f"; {s['chars']:,} chars, --full): "))
    if hidden:
        out.append(more_line(hidden))
    return out


class _Cut:
    """``head`` (ours, whole) then ``tail`` cut with ``…`` to the width; when the cut
    hides part of it, ``cut_head`` (which says ``--full``) replaces ``head``."""

    def __init__(self, head: str, tail: str, cut_head: str) -> None:
        self.head, self.tail, self.cut_head = head, tail, cut_head

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        tail = Text(self.tail)
        head = self.head
        if tail.cell_len > options.max_width - len(head):
            head = self.cut_head
        tail.truncate(max(options.max_width - len(head), MIN_QUOTE), overflow="ellipsis")
        yield line(head, tail)


def trace_command(
    log: Annotated[str, typer.Argument(metavar="LOG", help="The log to read ('-' for stdin).")],
    query: Annotated[str, typer.Argument(
        metavar="QUERY",
        help="A discriminator (45000, --force, v4.2.1), a span id or a summary id; "
             "another word is searched for in span texts.")],
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help=FORMAT_HELP)]
    = TextOrJson.text,
    json: Annotated[bool, typer.Option("--json", hidden=True,
                                       help="Write the tree as JSON.")] = False,
    full: Annotated[bool, typer.Option(
        "--full", help="Show each summary whole (else its first line, cut).")] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help=f"List every node (else {LIST_LIMIT} per level, in JSON too)."
    )] = False,
    lenient: Annotated[bool, typer.Option("--lenient", help="Skip bad records.")] = False,
) -> None:
    """Trace a discriminator, span or summary through the folds and evictions.

    The first line counts the spans by fate ("5 spans: 2 lost, 3 in context").  For a
    discriminator: one node per span that holds it, with its fate, each fold that
    carried it, and the fold or eviction that lost it, with rounds and lines; a query
    that is not a discriminator says what it was reduced to.  For a summary: its
    provenance tree with each leaf's state (retained, offloaded, evicted at round N).
    The summaries named are listed once at the end, cut to one line (--full: whole).
    Exit 0, or 2 when the log is bad or nothing matches QUERY.
    """
    from compaction_audit.startup import loading

    with loading():  # the reader and the tracer (compaction_audit.startup)
        from compaction_audit.api import load
        from compaction_audit.trace import FULL_LIMIT, trace

    try:
        session, _ = load(log, lenient)
        root = trace(session, query, full)
    except AuditError as exc:
        fail(str(exc))
    if json or fmt is TextOrJson.json:
        tree = clip_tree(root.to_dict(None if show_all else LIST_LIMIT),
                         FULL_LIMIT if full else 1024)
        write_bytes(json_safe(orjson.dumps(tree, option=orjson.OPT_INDENT_2) + b"\n"),
                    None, JSON)
        return
    console = console_for()
    console.print(TreeView(root, show_all), crop=False)
    # a Group renders each line() unwrapped (console.print of a bare Text would wrap it)
    console.print(Group(*_summaries(root, show_all, full)), crop=False)
