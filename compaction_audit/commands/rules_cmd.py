"""``compaction-audit rules [CODE-OR-NAME]``: the rules reference, from the rule classes."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from compaction_audit.commands.common import console_for, fail
from compaction_audit.errors import UsageError


def rules_command(
    rule: Annotated[str | None, typer.Argument(
        metavar="CODE-OR-NAME", help="A rule code (CA101) or name (salience-inversion): "
        "print its documentation.", show_default=False)] = None,
    markdown: Annotated[bool, typer.Option(
        "--markdown", help="Print Markdown: the whole reference (docs/rules.md is this "
        "output), or the one rule's section.")] = False,
) -> None:
    """List every rule (code, name, default severity, summary), or document one: its
    summary, what it checks, why it matters, its known problems, an example and what
    to do.  A severity marked * varies with what a finding holds; 'rules CODE' says
    how."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from compaction_audit.report.terminal_text import ByWidth, Trimmed, hang, hanging
    from compaction_audit.ruledoc import (
        all_docs,
        doc_parts,
        find_rule,
        rule_markdown,
        rules_markdown,
    )

    if rule is None:
        if markdown:
            sys.stdout.write(rules_markdown())
            return
        docs = all_docs()

        def table() -> Table:
            varies = any(d.severity_note for d in docs)
            tab = Table("code", "name", "severity", "summary", caption=(
                "* varies with what a finding holds: compaction-audit rules CODE"
                if varies else None), caption_justify="left")
            for d in docs:
                tab.add_row(d.code, d.name, d.severity + ("*" if d.severity_note else ""),
                            d.summary)
            return tab

        def listing() -> Group:
            return Group(*(hang(Text(f"{d.code} {d.name} ({d.severities()}): ", style="bold"),
                                d.summary, indent=0) for d in docs))

        console_for().print(ByWidth(table, listing))
        return
    try:
        doc = find_rule(rule)
    except UsageError as exc:
        fail(str(exc))
    if markdown:
        sys.stdout.write(rule_markdown(doc, level=1))
        return
    settings = ", ".join(f"{name}={value}" for name, value in doc.settings) or "none"
    console = console_for()
    console.print(Text(f"{doc.code} {doc.name}", style="bold"))
    console.print(Trimmed(Text(doc.summary)))  # the line the list and README give it
    console.print(hanging(f"default severity: {doc.severities()}", indent=18))
    # its own line, not glued to a long severity (usertest72), wrapped under its indent
    # (adv141 #6: "sustain=1" at column 0)
    console.print(hanging(f"family: {doc.family}    judges: {doc.judges}", indent=8))
    console.print(hanging(f"settings: {settings}", indent=10))
    for title, body in doc_parts(doc):
        console.print()
        console.print(Text(title, style="bold"))
        console.print(Trimmed(Text(body)))  # wrapped lines without trailing spaces (ux7)
