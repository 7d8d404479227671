"""The command line: a thin typer app that registers one module per command.

Exit codes (every command that gates): 0 nothing reaches ``--fail-on``; 1 a finding
does; 2 usage or input error (one line on stderr, never a traceback); 141 standard
output's reader went away (``| head``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from compaction_audit import __version__
from compaction_audit.commands.audit import audit_command, thresholds_command
from compaction_audit.commands.baseline_cmd import baseline_app
from compaction_audit.commands.common import interruptible, say, stdout_errors
from compaction_audit.commands.config_cmd import config_app
from compaction_audit.commands.convert import convert_command
from compaction_audit.commands.diff import diff_command
from compaction_audit.commands.rules_cmd import rules_command
from compaction_audit.commands.simulate import simulate_command
from compaction_audit.commands.trace import trace_command
from compaction_audit.runtime.startup import light_coercion

light_coercion()  # typer's coercion of plain values without pydantic (issue 14, item 4)


def _new_app() -> typer.Typer:
    """The root app, with no command yet (:func:`_register`)."""
    new = typer.Typer(add_completion=False, no_args_is_help=True,
                      pretty_exceptions_enable=False, rich_markup_mode=None,
                      help="Audit the compaction logs of long-running LLM agents for "
                           "salience inversion and folds that drop discriminators.")
    new.callback()(root)
    return new


def _version(value: bool) -> None:
    if value:
        with stdout_errors(sys.stdout):  # > /dev/full, >&-: one line, exit 2
            typer.echo(f"compaction-audit {__version__}")
        raise typer.Exit(0)


def root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Audit the compaction logs of long-running LLM agents.

    Exit codes: 0 no finding reaches --fail-on, 1 one does, 2 usage or input error,
    141 standard output closed by its reader (| head).
    """


COMMANDS: dict[str, Callable[..., Any] | typer.Typer] = {
    "audit": audit_command,
    "thresholds": thresholds_command,
    "diff": diff_command,
    "trace": trace_command,
    "convert": convert_command,
    "rules": rules_command,
    "simulate": simulate_command,
    "config": config_app,
    "baseline": baseline_app,
}
"""Every command and command group, in the order of ``--help``."""


def _register(target: typer.Typer, name: str) -> None:
    command = COMMANDS[name]
    if isinstance(command, typer.Typer):
        target.add_typer(command, name=name)
    else:
        target.command(name)(interruptible(command))


app = _new_app()
for _name in COMMANDS:
    _register(app, _name)


def app_for(args: list[str]) -> typer.Typer:
    """The app that runs the command line ``args``: when its first argument names a
    command, an app of that command alone, else :data:`app` (issue 14, item 4).

    typer turns every registered command into a click command (signatures, help
    texts, parameter types) each time the app runs: 25 ms of CPU for the nine,
    5 ms for ``audit`` alone (best of 5, 2026-12-01).  An app of the root callback and
    one command parses, runs, prints help and usage errors for that command as the
    whole app does (``tests/test_startup_apps.py`` compares them); anything else (no
    command, ``--help``, ``--version``, a misspelt command) goes to the whole app.
    """
    if not args or args[0] not in COMMANDS:
        return app
    one = _new_app()
    _register(one, args[0])
    return one


def main() -> None:
    """Entry point of the ``compaction-audit`` console script (no tracebacks).

    Exits with the command's code.  A usage error (an unknown command or option, a bad
    option value) is click's message made safe as every other line of ours is: its
    text echoes what was typed, which a CI job may take from a log or a branch name,
    so it goes through :func:`compaction_audit.report.safe.printable` and
    ``neutralize`` (issue 11, class 1), then exit 2.
    """
    from compaction_audit.runtime.cores import cap_polars_threads
    from compaction_audit.runtime.streams import stderr_named

    cap_polars_threads()  # before Polars loads: its pool is sized once

    if (named := stderr_named(sys.argv[1:])) is not None:
        say(f"standard error: is {named}, which this command reads; refusing to write "
            "onto it (redirect it elsewhere)")
        sys.exit(2)
    try:
        sys.exit(_invoke())
    except KeyboardInterrupt as exc:
        from compaction_audit.runtime.procs import exit_process
        from compaction_audit.runtime.stopline import stop_status

        exit_process(stop_status(exc))
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # a bug, not bad input; still no traceback for the user
        # (BaseException: a Rust panic inside Polars is pyo3's PanicException, which is
        # not an Exception; it printed a traceback and exited 1, a "finding" code)
        from compaction_audit.runtime import addrspace, stopline

        if stopline.stopped():  # a signal's exception, wrapped on the way (Python 3.11
            from compaction_audit.runtime.procs import exit_process  # wraps one raised in

            exit_process(stopline.status())  # __set_name__ in RuntimeError: adv22b F5)
        if addrspace.ran_out(exc):  # past a trace's audit (rendering a report): one line
            say(addrspace.out_of_memory_line())
            sys.exit(2)
        if os.environ.get("COMPACTION_AUDIT_DEBUG"):
            raise
        say(f"internal error: {type(exc).__name__}: {exc} "
            "(set COMPACTION_AUDIT_DEBUG=1 for a traceback)")
        sys.exit(2)


MAX_USAGE_LINES = 60
"""Lines of a usage error shown at most: the help of a command group (printed when it
is run without a command) is about 25; what was typed is on one line."""

_CLICK_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
"""click's base of usage errors, whether typer vendors click (0.29 on) or not."""


def _invoke() -> int:
    """Run the app without click's standalone handling; returns the exit code."""
    try:
        code = app_for(sys.argv[1:])(standalone_mode=False)
    except _CLICK_ERROR as exc:
        _show_usage_error(exc)
        return int(getattr(exc, "exit_code", 2))
    except typer.Abort:
        say("aborted")
        return 1
    except BrokenPipeError:  # stdout closed by its reader (| head)
        return _closed_pipe()
    except SystemExit as exc:  # typer's and rich's own handlers of it exit 1
        if exc.code == 1 and isinstance(exc.__context__, BrokenPipeError):
            return _closed_pipe()
        raise
    except OSError as exc:  # click's help or a message, written past our own handlers
        if not (_stdout_broken() or _from_echo(exc)):
            raise
        from compaction_audit.commands.common import discard_stdout

        discard_stdout()  # (adv61: '--help > /dev/full' was an internal error, exit 120)
        say(f"standard output: cannot write: {exc.strerror or exc}")
        return 2
    return code if isinstance(code, int) else 0


def _from_echo(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside click's ``echo`` (its help, its messages)."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "echo" and "click" in code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _stdout_broken() -> bool:
    """Whether standard output cannot take what is buffered for it (the OSError at hand
    was one of its writes)."""
    try:
        sys.stdout.flush()
    except OSError:
        return True
    return False


def _closed_pipe() -> int:
    from compaction_audit.commands.common import discard_stdout

    discard_stdout()  # what is left to flush goes nowhere
    return CLOSED_PIPE


CLOSED_PIPE = 141
"""Exit code when standard output's reader went away (``| head``): 128 + SIGPIPE, what
a shell reports for a program the signal ended.  It was 1, which a gate reads as "a
finding reaches --fail-on" or "a diff gate failed" (usertest12: ``diff ... | head -1``
under ``set -o pipefail`` failed a gate nobody set), and whether the pipe closes before
the output is written depends on its size and timing."""


PROGRAM = "compaction-audit"
"""The name every error line of ours starts with (``commands.common.say``)."""


TRACE_VALUED = frozenset({"-f", "--format"})
"""``trace``'s options that take a value (the next word is no argument)."""


def _arguments(command: str) -> int:
    """How many words ``command`` was given on the command line that are no option
    and no known option's value (an unknown option's value counts: LOG, QUERY and it
    are told apart only by their places)."""
    args = sys.argv[sys.argv.index(command) + 1:] if command in sys.argv else []
    count, skip = 0, False
    for arg in args:
        if skip:
            skip = False
        elif arg in TRACE_VALUED:
            skip = True
        elif not arg.startswith("-") or arg == "-":
            count += 1
    return count


def usage_line(exc: Exception) -> tuple[str, str] | None:
    """The one line a usage error prints, in two parts: ``compaction-audit: <click's
    message>`` (the start of every error line of ours) and ``; see '<command> --help'``
    (the program's own help when click does not say which command: "Option '-j'
    requires an argument", adv54); None for a command group run without a command
    (click shows its help, which is not an error line).  The "Value error, " typer's
    pydantic coercion puts before a message is left out (usertest10: "Invalid value
    for '--fail-on': Value error, 'bogus' is not one of ...")."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        return None
    message = str(exc.format_message())  # type: ignore[attr-defined]  # a ClickException
    message = message.replace(": Value error, ", ": ").rstrip(".")
    ctx = getattr(exc, "ctx", None)
    named = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in COMMANDS else None
    where = (ctx.command_path if ctx is not None
             else f"{PROGRAM} {named}" if named else PROGRAM)  # '-j' with no value: adv55
    option = getattr(exc, "option_name", None)
    command = ctx.info_name if ctx is not None else named
    if type(exc).__name__ == "NoSuchOption" and option and ctx is not None \
            and ctx.parent is None and (later := _command_with(ctx, option)) is not None:
        # adv84: 'compaction-audit --format json audit LOG' said only "No such option"
        message += f" (options go after the command: {where} {later} {option} ...)"
    if message == "No such command 'explain'":  # ruff's word for it (usertest21 #10)
        message += "; 'rules CODE' explains a rule (compaction-audit rules CA301)"
    if type(exc).__name__ == "NoSuchOption" and command == "trace" and option \
            and _arguments("trace") < 2:
        # usertest14: `trace LOG --force` traced nothing and the hint named --format;
        # not when LOG and QUERY are given too (`trace LOG 45000 -o x`: adv67; `trace
        # LOG -o x 45000`: usertest20 #5)
        message += f"; a QUERY that starts with '-' goes after '--': trace LOG -- {option}"
    return f"{PROGRAM}: {message}", f"; see '{where} --help'"


def _command_with(ctx: Any, option: str) -> str | None:
    """The command named later on the command line (after an option given before it,
    to the program) when it has ``option``; else None.  A command's name right after
    ``option``, where that command reads a value for it, is the option's value, not the
    command (adv85 #4: '--format audit diff A B' named audit)."""
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        command = ctx.command.get_command(ctx, arg) if arg in COMMANDS else None
        param = None if command is None else next(
            (p for p in command.params if option in (*p.opts, *p.secondary_opts)), None)
        if param is None:
            continue
        if i and args[i - 1] == option and not getattr(param, "is_flag", False):
            continue  # the value of the option
        return str(arg)
    return None


def _show_usage_error(exc: Exception) -> None:
    """The usage error ``exc`` in one line (:func:`usage_line`; README, exit code 2: one
    line on stderr), or a group's help, safe for a terminal and a CI log."""
    import io

    from compaction_audit.report.safe import neutralize, printable  # MAX_TEXT per line

    parts = usage_line(exc)
    if parts is not None:  # each part bounded: a long value typed keeps the hint
        text = "".join(printable(part) for part in parts) + "\n"
    else:
        buffer = io.StringIO()
        exc.show(file=buffer)  # type: ignore[attr-defined]  # a ClickException
        lines = buffer.getvalue().rstrip("\n").split("\n")[:MAX_USAGE_LINES]  # bounded
        text = "".join(printable(line) + "\n" for line in lines)
    try:
        sys.stderr.write(neutralize(text))
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
