"""The one line a stopped run writes (issue 11, item 7), the SIGINT and SIGTERM
handlers that write it as the signal arrives, and the exit that ends a stopped command.

Nothing here runs Python code of another module at import (``sys`` and ``os`` are
loaded before any program, ``_signal`` is built in): every command imports it at
start-up.  The handler of the first moments is installed by the package's
``__init__`` (:func:`stop_at_start`).
"""

from __future__ import annotations

import _signal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the idiom that spares loading typing at start-up
    from collections.abc import Callable
    from types import FrameType

STOPPED = 130
"""Exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it)."""

class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (in a command, or while a worker pool ran); ``signum`` is the
    signal number.

    A :class:`KeyboardInterrupt` so that it unwinds like Ctrl-C (``except Exception``
    does not swallow it) and ends the command with ``128 + signum`` (143)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


_said: list[int] = []
"""The signal whose stop line was written (:func:`say_stopped` writes it once)."""


def say_stopped(signum: int = _signal.SIGINT) -> None:
    """Write ``compaction-audit: interrupted`` (SIGINT) or ``... terminated by signal
    N`` to stderr, once per process, whichever handler sees the signal first."""
    if _said:
        return
    what = "interrupted" if signum == _signal.SIGINT else f"terminated by signal {signum}"
    _said.append(signum)
    _write(f"compaction-audit: {what}\n")


def stopped() -> bool:
    """True once the stop line was written: the run is ending on a signal."""
    return bool(_said)


def status() -> int:
    """The exit status of a stopped run: 128 + the signal its line named (130 for
    Ctrl-C, 143 for SIGTERM), :data:`STOPPED` when none was named yet.  Whoever
    catches the ``KeyboardInterrupt`` last (typer while it parses, Ray's core worker,
    which turns whatever a handler raised into a plain ``KeyboardInterrupt``), the
    status agrees with the line: a SIGTERM once ended with exit 130 (adv16b F3)."""
    return 128 + _said[0] if _said else STOPPED


def exit_now(code: int) -> None:
    """Flush the streams and end the process with ``code`` at once (``os._exit``).

    The end of a stopped command (:func:`compaction_audit.__main__.run`): on Python
    3.11 a ``KeyboardInterrupt`` that passed through ``exec`` of a string (every
    dataclass and named tuple being created while a module loads) marks the
    interpreter, which then kills itself with SIGINT at exit whatever status was
    asked for; a caller would see "killed by signal 2", not 130.
    """
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib need not be loaded at start-up
            stream.flush()
        except Exception:
            pass
    os._exit(code)


def _write(text: str) -> None:
    try:  # a closed stderr: still stop, no traceback
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:
        pass


def _on_sigint(_signum: int, _frame: FrameType | None) -> None:
    say_stopped()
    raise KeyboardInterrupt


def stop_status(exc: KeyboardInterrupt) -> int:
    """Write the stop line for ``exc`` (:class:`Terminated`: its signal, else
    SIGINT) unless one was written, and return the run's exit status
    (:func:`status`): what every command's last catch of an interrupt does."""
    say_stopped(exc.signum if isinstance(exc, Terminated) else _signal.SIGINT)
    return status()


def on_sigterm(signum: int, _frame: FrameType | None) -> None:
    """The SIGTERM handler: write the line, raise :class:`Terminated`."""
    say_stopped(signum)
    raise Terminated(signum)


def stop_at_start(_signum: int, _frame: FrameType | None) -> None:
    """The SIGINT handler of the first moments of ``python -m compaction_audit`` and of
    the console script, while the package and its ``__main__`` load and nothing of
    ours could catch a ``KeyboardInterrupt`` (``runpy`` would print its traceback;
    issue 11): write the line and exit :data:`STOPPED`."""
    say_stopped()
    raise SystemExit(STOPPED)


def _install(signum: int, handler: Callable[[int, FrameType | None], None]) -> None:
    try:  # noqa: SIM105 - not the main thread: signals are not ours to handle
        _signal.signal(signum, handler)
    except ValueError:
        pass


def announce_interrupts() -> None:
    """From now on a Ctrl-C writes its one line as it arrives, then unwinds as usual:
    typer turns a ``KeyboardInterrupt`` raised while it parses the arguments into a
    silent exit 130, before any handler of ours runs (issue 11, item 7).  SIGTERM the
    same way, as :class:`Terminated` (exit 143), in every phase of the command, not
    only while a worker pool runs: a single large trace decoded by helper processes
    (:mod:`compaction_audit.io.parallel`) ended killed, with no line (issue 11, third
    pass, F6).  SIGHUP too, unless it is ignored (``nohup``): it ended the run with
    no line and multiprocessing's warning of leaked semaphores (adv19b O1)."""
    _install(_signal.SIGINT, _on_sigint)
    _install(_signal.SIGTERM, on_sigterm)
    hangup = getattr(_signal, "SIGHUP", None)  # a closed terminal, a CI job cancelled:
    if hangup is not None and _signal.getsignal(hangup) == _signal.SIG_DFL:  # as SIGTERM,
        _install(hangup, on_sigterm)  # exit 129 (not under nohup: ignored there)
