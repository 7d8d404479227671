"""typer's coercion of plain values without pydantic (issue 14, item 4:
:func:`compaction_audit.runtime.startup.light_coercion`): on every parameter of every command,
for plain and bad values, the value or the error is typer's own; an audit given
plain options loads no pydantic.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from enum import Enum
from typing import Any

import pytest

from compaction_audit import cli
from compaction_audit.runtime import startup
from tests.logs import ROOT, SAMPLES

core = pytest.importorskip("typer.core")
if not hasattr(core, "build_runtime_param"):
    pytest.skip("this typer coerces without pydantic", allow_module_level=True)
from typer import _coercion  # noqa: E402
from typer.main import get_command  # noqa: E402


def _parameters() -> list[tuple[Any, Any]]:
    """(command, parameter) for every typer parameter of the app's command tree."""
    out, stack = [], [get_command(cli.app)]
    while stack:
        command = stack.pop()
        out += [(command, p) for p in command.params if isinstance(p, core._TyperParameter)]
        stack += list(getattr(command, "commands", {}).values())
    return out


PLAIN = [None, "", "x", "a b", "3", "-1", "1.5", "abc", "text", "json", "JSON", "error",
         "info", "local", "ray", "-", str(SAMPLES / "handwritten.jsonl"), "/nonexistent/x",
         ("a", "b"), ["one"], [], ("3",), True, False, 3, b"bytes"]


def _values(parameter: Any) -> list[Any]:
    annotation = parameter.type_descriptor.annotation
    extra: list[Any] = []
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        extra = [*annotation, *(m.value for m in annotation),
                 *(str(m.value).upper() for m in annotation)]
    return PLAIN + extra


def _outcome(build: Any, command: Any, parameter: Any, value: Any) -> tuple[Any, ...]:
    ctx = command.context_class(command, info_name=command.name)
    try:
        got = build(parameter.type_descriptor).coerce(value, param=parameter, ctx=ctx)
    except Exception as exc:  # the error typer would show
        return ("error", type(exc).__name__, str(exc))
    return ("value", type(got), got)


def test_installed_once_by_the_command_line() -> None:
    assert getattr(core.build_runtime_param, "light", False)  # cli's import did it
    before = core.build_runtime_param
    assert startup.light_coercion() and core.build_runtime_param is before


def test_every_parameter_gets_what_typer_gives() -> None:
    parameters = _parameters()
    assert len(parameters) > 40  # the whole tree, not one command
    checked = 0
    for command, parameter in parameters:
        for value in _values(parameter):
            light = _outcome(core.build_runtime_param, command, parameter, value)
            typer_own = _outcome(_coercion.build_runtime_param, command, parameter, value)
            assert light == typer_own, (command.name, parameter.name, value)
            checked += 1
    assert checked > 1000


def _descriptor(command_name: str, parameter_name: str) -> tuple[Any, Any]:
    for command, parameter in _parameters():
        if command.name == command_name and parameter.name == parameter_name:
            return command, parameter
    raise AssertionError(f"no parameter {parameter_name} in {command_name}")


@pytest.mark.parametrize(("name", "value"), [
    ("paths", ["a.jsonl", "b.jsonl"]), ("fmt", "json"), ("output", None), ("window", None),
    ("output", "out.json"), ("window", "3")])  # window: text, converted as --set's are
def test_plain_values_build_no_adapter(name: str, value: Any) -> None:
    command, parameter = _descriptor("audit", name)
    runtime = core.build_runtime_param(parameter.type_descriptor)
    ctx = command.context_class(command, info_name=command.name)
    runtime.coerce(value, param=parameter, ctx=ctx)
    assert runtime.real == []  # answered without typer's adapter


@pytest.mark.parametrize(("name", "value"), [("fmt", "bogus"), ("jobs", "3")])
def test_other_values_go_to_typers_adapter(name: str, value: Any) -> None:
    command, parameter = _descriptor("audit", name)
    runtime = core.build_runtime_param(parameter.type_descriptor)
    ctx = command.context_class(command, info_name=command.name)
    with contextlib.suppress(Exception):  # a bad choice's error: typer's, checked above
        runtime.coerce(value, param=parameter, ctx=ctx)
    assert len(runtime.real) == 1


@pytest.mark.parametrize("output", [[], ["-o", "-"]])
def test_an_audit_with_plain_options_loads_no_pydantic(output: list[str]) -> None:
    """``-o FILE`` too: its parser is called as typer's adapter would call it (typer's
    adapter cost 0.1-0.15 s of CPU: pydantic, ``importlib.metadata``)."""
    code = ("import sys\nsys.argv = ['compaction-audit', 'audit', '-f', 'json', '--quiet', "
            f"*{output!r}, {str(SAMPLES / 'handwritten.jsonl')!r}]\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print('pydantic' in sys.modules, 'polars' in sys.modules, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    # --quiet applies to the text format only: typer parsed every option, we refused
    assert "--quiet and --statistics apply to --format text" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False True"


@pytest.mark.parametrize("columns", ["\u00b9\u00b2", "\u0663\u0660", "80", "9" * 4301])
def test_a_terminal_size_of_other_digits_is_ignored(columns: str) -> None:
    """adv94 #4: ``COLUMNS=¹²`` (digits to ``str.isdigit()``, not to ``int()``) stopped
    every text command with "internal error: ValueError" in rich; ``LINES`` too."""
    done = subprocess.run(
        [sys.executable, "-m", "compaction_audit", "audit", "-q",
         str(SAMPLES / "handwritten.jsonl")], cwd=ROOT, capture_output=True, text=True,
        timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": columns,
                          "LINES": columns})
    assert "internal error" not in done.stderr
    assert done.returncode in (0, 1) and done.stdout.strip(), done.stderr
