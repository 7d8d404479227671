"""``compaction-audit trace LOG QUERY``: the lineage of a discriminator, span or summary."""

from __future__ import annotations

from typing import Annotated

import orjson
import typer
from rich.tree import Tree

from compaction_audit.commands.common import (
    FORMAT_HELP,
    TextOrJson,
    console_for,
    fail,
    write_bytes,
)
from compaction_audit.errors import AuditError
from compaction_audit.report.safe import JSON, clip_tree, json_safe
from compaction_audit.report.terminal import t
from compaction_audit.trace import Node


def _tree(node: Node, tree: Tree | None = None) -> Tree:
    style = "bold red" if node.data.get("result") == "lost" else ""
    label = t(node.label, style)  # cut with an ellipsis, never wrapped: --json has it all
    branch = Tree(label) if tree is None else tree.add(label)
    for child in node.children:
        _tree(child, branch)
    return branch


def trace_command(
    log: Annotated[str, typer.Argument(help="The log to read ('-' for stdin).")],
    query: Annotated[str, typer.Argument(
        help="A discriminator (45000, --force, v4.2.1), a span id or a summary id.")],
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help=FORMAT_HELP)]
    = TextOrJson.text,
    json: Annotated[bool, typer.Option("--json", hidden=True,
                                       help="Write the tree as JSON.")] = False,
    lenient: Annotated[bool, typer.Option("--lenient", help="Skip bad records.")] = False,
) -> None:
    """Trace a discriminator, span or summary through the folds and evictions.

    For a discriminator: the span that introduced it, each fold that carried it, and
    the fold or eviction that lost it, with rounds and lines.  For a summary: its
    provenance tree with each leaf's state (retained, offloaded, evicted at round N).
    Exit 0, or 2 when the log is bad or nothing matches QUERY.
    """
    from compaction_audit.api import load
    from compaction_audit.trace import trace

    try:
        session, _ = load(log, lenient)
        root = trace(session, query)
    except AuditError as exc:
        fail(str(exc))
    if json or fmt is TextOrJson.json:
        write_bytes(json_safe(orjson.dumps(clip_tree(root.to_dict()),
                                           option=orjson.OPT_INDENT_2) + b"\n"), None, JSON)
        return
    console = console_for()
    console.print(_tree(root), crop=False)
