"""``compaction-audit trace LOG QUERY``: the lineage of a discriminator, span or summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

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
from compaction_audit.report.terminal_text import (
    LIST_LIMIT,
    MIN_WRAP,
    Hang,
    block,
    capped,
    line,
    more_line,
    rest_after,
)

if TYPE_CHECKING:  # the tracer (Polars, the recall modules) loads when the command runs
    from compaction_audit.trace import Node

MIN_QUOTE = 24
"""Fewest columns a label's quote keeps beside its head; with fewer left there it takes
a line of its own (:func:`fit`)."""


class TreeView:
    """The tree, one node per entry under guides of ours (``├── ``, ``│   ``), so no
    untrusted text starts a line: each node's ids and our words are shown whole,
    wrapped to the width under the guides and 4 more spaces (:func:`fit`), only its
    quote (``Node.cut`` on) is cut with ``…`` to fit, unless ``full`` is a number of
    characters (``--full``: the quote is wrapped under the guides too, as the ids are,
    and cut with ``…`` at that many characters).  Each node's children are capped at
    :data:`LIST_LIMIT` unless ``show_all`` ("N more (--all)")."""

    def __init__(self, root: Node, show_all: bool, full: int | None = None) -> None:
        self.root, self.show_all, self.full = root, show_all, full

    def _lines(self, console: Console, prefix: str, cont: str, node: Node,
               width: int) -> list[Text]:
        style = "bold red" if node.data.get("result") == "lost" or \
            node.data.get("fate") == "lost" else ""
        if node.cut is None:
            return fit(console, width, prefix, cont, Text(printable(node.label), style))
        head = Text(printable(node.label[:node.cut]), style)
        quote = Text(printable(node.label[node.cut:]))
        if self.full is not None:  # wrapped under the guides, as the ids are
            quote.truncate(self.full, overflow="ellipsis")
            return fit(console, width, prefix, cont, Text.assemble(head, quote))
        return fit(console, width, prefix, cont, head, quote)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        # the head wraps under spaces: a tree bar there, above its note, drew the note
        # into the tree (ux5 F9)
        yield from self._lines(console, "", "    ", self.root, width)
        if note := self.root.data.get("note"):
            yield Hang(Text("note: "), Text(printable(note)), 0)
        stack: list[tuple[str, Node | str, bool]] = []

        def push(prefix: str, children: list[Node]) -> None:
            shown, hidden = capped(children, self.show_all, LIST_LIMIT)
            items: list[Node | str] = [*shown, *([_more(children[len(shown):])]
                                                 if hidden else [])]
            for k in reversed(range(len(items))):
                stack.append((prefix, items[k], k == len(items) - 1))

        push("", self.root.children)
        while stack:
            prefix, node, last = stack.pop()
            guide = prefix + ("└── " if last else "├── ")
            if isinstance(node, str):
                yield Text(guide + node, style="dim")
                continue
            below = prefix + ("    " if last else "│   ")
            yield from self._lines(console, guide, below + ("│   " if node.children else
                                                            "    "), node, width)
            push(below, node.children)


def _more(hidden: list[Node]) -> str:
    """The line under a level cut at :data:`LIST_LIMIT`: how many more nodes there
    are, those the tree left out past its node budget included (a node standing for
    them counts as their number), and how many of them ``--all`` lists when it cannot
    list every one (adv58: "1986 more (--all)" stood for 4,986, and ``--all`` showed
    1,986 of them)."""
    listed = sum("not_shown" not in n.data for n in hidden)
    total = sum(int(n.data["not_shown"]) if "not_shown" in n.data else 1 for n in hidden)
    if total == listed:
        return f"... {total:,} more (--all)"
    return f"... {total:,} more (--all lists {listed:,} of them)"


def _summaries(root: Node, show_all: bool, full: bool) -> list[RenderableType]:
    """The summaries the tree names, each once: one line each, or whole with
    ``full`` (wrapped under an indent of ours)."""
    items = list(root.summaries.items())
    if not items:
        return []
    from compaction_audit.report.lines import line_at
    from compaction_audit.trace import FULL_LIMIT

    out: list[RenderableType] = [Text(f"summaries ({len(items)})")]
    shown, hidden = capped(items, show_all, LIST_LIMIT)
    for sid, s in shown:
        where = (f"{printable(sid)} (depth {s['depth']}, round {s['round']}, "
                 f"{line_at(s['line'], s.get('line_file'))}")
        if s["text"] is None:
            out.append(_Cut(where + "): no text"))
        elif full:
            out.append(_Cut(where + f"; {s['chars']:,} chars):"))
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


def fit(console: Console, width: int, first: str, cont: str, head: Text,
        quote: Text | None = None) -> list[Text]:
    """``first`` then ``head`` (ids and our words, shown whole) wrapped to ``width``,
    each continuation line under ``cont`` (spaces or guides of ours, never column 0),
    then ``quote`` cut with ``…`` to fit: beside the head's last line when at least
    :data:`MIN_QUOTE` columns are left there, else on a line of its own."""
    head = head.copy()
    head.no_wrap, head.overflow = False, "fold"
    wrapped = list(head.wrap(console, max(width - len(first), MIN_WRAP), overflow="fold"))
    lines = wrapped[:1] or [Text("")]
    rest = rest_after(head, lines[0]) if wrapped else Text("")
    if rest.plain:
        lines += list(rest.wrap(console, max(width - len(cont), MIN_WRAP), overflow="fold"))
    out = [line(first if i == 0 else cont, part) for i, part in enumerate(lines)]
    if quote is not None:
        room = width - out[-1].cell_len
        if quote.cell_len > room and room < MIN_QUOTE:
            out.append(line(cont))
            room = width - len(cont)
        quote = quote.copy()
        quote.truncate(max(room, MIN_QUOTE), overflow="ellipsis")
        out[-1].append_text(quote)
    for text in out:
        text.rstrip()
        text.end = "\n"
    return out


class _Cut:
    """A summary's line: ``head`` (ours and its id, whole, wrapped) then ``tail`` cut
    with ``…`` to the width (:func:`fit`); when the cut hides part of it, ``cut_head``
    (which says ``--full``) replaces ``head``."""

    def __init__(self, head: str, tail: str | None = None, cut_head: str = "") -> None:
        self.head, self.tail, self.cut_head = head, tail, cut_head

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if self.tail is None:
            yield from fit(console, width, "  ", "      ", Text(self.head))
            return
        out = fit(console, width, "  ", "      ", Text(self.head), Text(self.tail))
        if not out[-1].plain.endswith(self.tail):
            out = fit(console, width, "  ", "      ", Text(self.cut_head), Text(self.tail))
        yield from out


def trace_command(
    log: Annotated[str, typer.Argument(metavar="LOG", help="The log to read ('-' for stdin).")],
    query: Annotated[str, typer.Argument(
        metavar="QUERY",
        help="A discriminator as the text states it (45000, v4.2.1, lib2==1.2.0, "
             "read_timeout_ms=45000), a span id or a summary id; another "
             "word is searched for in span texts (at most 1,000 characters).  A query "
             "that starts with '-' goes after '--': trace LOG -- --force.")],
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help=FORMAT_HELP)]
    = TextOrJson.text,
    json: Annotated[bool, typer.Option("--json", hidden=True,
                                       help="Write the tree as JSON.")] = False,
    full: Annotated[bool, typer.Option(
        "--full", help="Show each summary whole (else its first line, cut), and each "
                       "node's quote wrapped, not cut to the width (a string of log text "
                       "is still cut at 1,024 characters; --format json has it all).")
    ] = False,
    show_all: Annotated[bool, typer.Option(
        "--all", help=f"List every node (else {LIST_LIMIT} per level, in JSON too), "
                      f"every summary the tree names (else {LIST_LIMIT}; in JSON those "
                      "the nodes shown name) and, in JSON, every fact a fold also "
                      f"dropped (else {LIST_LIMIT})."
    )] = False,
    lenient: Annotated[bool, typer.Option("--lenient", help="Skip bad records.")] = False,
) -> None:
    """Trace a discriminator, span or summary through the folds and evictions.

    The first line counts the spans by fate ("5 spans: 2 lost, 3 in context").  For a
    discriminator: one node per span that holds it, with its fate, each fold that
    carried it, and the fold or eviction that lost it (or flipped a rule; or, where a
    later message of the person reversed the rule, lifted it), with rounds and lines; a query
    that is not a discriminator says what it was reduced to, and spans that hold the
    query only as words of their text (as written, in that order) are listed too.
    For a summary: its provenance tree with each leaf's state (retained, offloaded,
    evicted at round N).
    The summaries named are listed once at the end, cut to one line, and a node's
    quote is cut to the width (--full: summaries whole, quotes wrapped).
    Exit 0, or 2 when the log is bad or nothing matches QUERY.
    """
    from compaction_audit.runtime import addrspace
    from compaction_audit.runtime.startup import loading

    with loading():  # the reader and the tracer (compaction_audit.runtime.startup)
        import compaction_audit.api
        import compaction_audit.trace  # noqa: F401

    try:
        from compaction_audit.outfile import refuse_same_stdout

        refuse_same_stdout([log])
    except AuditError as exc:
        fail(str(exc))
    args = (log, query, json or fmt is TextOrJson.json, full, show_all, lenient)
    error = _show(*args) if addrspace.address_space_limit() is None else _show_apart(*args)
    if error is not None:
        fail(str(error))


def _show_apart(log: str, *args: Any) -> AuditError | None:
    """:func:`_show` in a spawned child that has the whole address-space limit, as an
    audit is (:mod:`compaction_audit.runtime.isolated`): the log was read in this process,
    where orjson faulted decoding a 63 MB one-line Cline file (SIGSEGV, no line; adv24
    F2).  A child that died is the log's out of memory line."""
    from compaction_audit.errors import LogError
    from compaction_audit.runtime import addrspace, isolated

    try:
        return isolated.call_in_child(_show, log, *args, path=log)
    except isolated.ChildDied as died:
        if isolated.ran_out(died):
            return addrspace.out_of_memory(log)
        return LogError(log, 0, f"the process tracing this log ended without a result "
                        f"({died})")


def _show(log: str, query: str, as_json: bool, full: bool, show_all: bool,
          lenient: bool) -> AuditError | None:
    """Read ``log``, trace ``query`` and write the tree to standard output (JSON with
    ``as_json``); the error that stopped it, if any."""
    from compaction_audit.api import load
    from compaction_audit.trace import FULL_LIMIT, trace

    try:
        session, _ = load(log, lenient)
        root = trace(session, query, full)
    except AuditError as exc:
        return exc
    if as_json:
        tree = clip_tree(root.to_dict(None if show_all else LIST_LIMIT),
                         FULL_LIMIT if full else 1024)
        write_bytes(json_safe(orjson.dumps(tree, option=orjson.OPT_INDENT_2) + b"\n"),
                    None, JSON)
        return None
    console = console_for()
    console.print(TreeView(root, show_all, FULL_LIMIT if full else None), crop=False)
    # a Group renders each line() unwrapped (console.print of a bare Text would wrap it)
    console.print(Group(*_summaries(root, show_all, full)), crop=False)
    return None
