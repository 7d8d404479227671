"""``compaction-audit config show``: the effective options and where each came from."""

from __future__ import annotations

from typing import Annotated

import typer

from compaction_audit.commands.audit import (
    ConfigOpt,
    ExtendSelectOpt,
    FailOnOpt,
    IgnoreOpt,
    IsolatedOpt,
    SelectOpt,
    SetOpt,
    SeverityOpt,
    SustainOpt,
    WindowOpt,
    effective_options,
)
from compaction_audit.commands.common import (
    FORMAT_HELP,
    TextOrJson,
    console_for,
    fail,
    write_bytes,
)
from compaction_audit.errors import AuditError
from compaction_audit.report.safe import JSON, clip_tree, json_safe, printable

config_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                          help="Inspect the configuration: the "
                         "tool.compaction-audit table of pyproject.toml, or "
                         "compaction-audit.toml.")


def _value(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value)


@config_app.command("show")
def config_show(
    config: ConfigOpt = None,
    isolated: IsolatedOpt = False,
    fail_on: FailOnOpt = None,
    window: WindowOpt = None,
    sustain: SustainOpt = None,
    set_: SetOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    extend_select: ExtendSelectOpt = None,
    severity: SeverityOpt = None,
    fmt: Annotated[TextOrJson, typer.Option("--format", "-f", help=FORMAT_HELP)]
    = TextOrJson.text,
    json_: Annotated[bool, typer.Option("--json", hidden=True,
                                        help="Print JSON instead of a table.")] = False,
) -> None:
    """Print every effective option (thresholds, fail-on, rule selection, severity
    overrides), its value and its source: default, the config file, or the command line
    (the same options as 'audit' may be given to preview their effect)."""
    from compaction_audit.config import display_path
    from compaction_audit.outfile import refuse_same_stdout

    try:
        eff = effective_options(config, isolated, fail_on, window, sustain, set_, select,
                                ignore, extend_select, severity)
        if eff.config_path is not None:  # 'config show >> pyproject.toml' (adv23)
            refuse_same_stdout([str(eff.config_path)])
    except AuditError as exc:
        fail(str(exc))
    path = display_path(eff.config_path) if eff.config_path is not None else None
    rules = [r.code for r in eff.rules]
    if json_ or fmt is TextOrJson.json:
        import orjson

        doc = {"config_file": path, "rules": rules,
               "options": [{"key": k, "value": v, "source": eff.sources[k]}
                           for k, v in eff.values.items()]}
        write_bytes(json_safe(orjson.dumps(clip_tree(doc), option=orjson.OPT_INDENT_2)
                              + b"\n"), None, JSON)
        return
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from compaction_audit.report.terminal_text import ByWidth, hang, hanging

    console = console_for()
    where = path or ("none (--isolated)" if isolated else "none found; defaults apply")
    console.print(Text(f"config file: {printable(where)}"), crop=False)
    console.print(hanging("rules run: ", ", ".join(rules) or "(none)", indent=11))
    rows = [(printable(key), printable(_value(value)), printable(eff.sources[key]))
            for key, value in eff.values.items()]
    widest = max((len(key) for key, _, _ in rows), default=3)
    source_width = min(max((len(src) for _, _, src in rows), default=6), 30)

    def table() -> Table:  # a key whole on one line (usertest34 #12, usertest35 #3)
        grid = Table()
        grid.add_column("key", no_wrap=True)
        grid.add_column("value", overflow="fold")
        grid.add_column("source", overflow="fold")
        for key, value, source in rows:
            grid.add_row(Text(key), Text(value), Text(source))
        return grid

    def listing() -> Group:  # too narrow for that: one entry per key, wrapped under it
        return Group(*(hang(f"{key}: ", value, ("  " + source, "dim"), indent=2)
                       for key, value, source in rows))

    # borders and padding 10, a value of 20 columns at least, the sources whole (up
    # to 30 columns: a longer one folds)
    console.print(ByWidth(table, listing, widest + 30 + source_width))
