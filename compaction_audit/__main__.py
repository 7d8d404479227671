"""``python -m compaction_audit`` and the ``compaction-audit`` command.

Ctrl-C at any moment of start-up ends with one line and exit 130, never a traceback:
the package's ``__init__`` installs a handler that exits (it is the first of our code
that runs, for the console script and for ``python -m``, where ``runpy`` imports the
package before this module); :func:`run` then makes a Ctrl-C write its line and raise
:class:`KeyboardInterrupt` (:func:`compaction_audit.runtime.stopline.announce_interrupts`),
imports the command line inside a ``try``, and ends a stopped run with
:func:`compaction_audit.runtime.stopline.exit_now`.

``compaction-audit --version`` alone is answered here, before typer and the commands
load (issue 14, item 4: import only what the command needs).
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the idiom that spares loading typing at start-up
    import io
    import typing

    from _typeshed import ReadableBuffer


def run() -> None:
    """Run the command line; a run stopped by a signal ends with its exit status."""
    from compaction_audit.runtime import stopline

    if sys.stdout is None:  # started with stdout closed (>&-), before stderr: fd 1
        sys.stdout = _closed_stdout()
    elif type(getattr(sys.stdout, "buffer", None)).__name__ == "FileIO":
        sys.stdout = _buffered(sys.stdout)
    # a stream that cannot encode all of the log's text (PYTHONIOENCODING=cp1252, a
    # Windows runner's pipe) shows it escaped, as stderr does: it was "internal error:
    # UnicodeEncodeError" (adv22a F1)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:  # noqa: SIM105 - contextlib need not be loaded at start-up
            reconfigure(errors="backslashreplace")
        except (OSError, ValueError):
            pass
    _sane_terminal_size()
    if sys.stderr is None:  # started with stderr closed (2>&-): Python leaves it None
        import os  # loaded at interpreter start

        # the exit codes stay what they are with a writable stderr (an error line
        # written to None was an internal error, exit 1); the lines go nowhere.  The
        # new descriptor is the lowest free one, 2 itself, so helpers inherit it
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    try:
        _run()
    except SystemExit:
        if stopline.stopped():
            stopline.exit_now(stopline.status())
        raise


def _sane_terminal_size() -> None:
    """Drop ``COLUMNS`` and ``LINES`` from this process's environment when they are not
    at most five ASCII digits: rich reads them with ``str.isdigit()``, which takes "¹²", then
    ``int()``, which refuses it (adv94 #4: every text command stopped with an internal
    error).  Such a value says nothing a console can use."""
    import os  # loaded at interpreter start

    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name)
        if value is not None and not (value.isascii() and value.isdigit()
                                      and len(value) <= 5):
            del os.environ[name]  # 4,301 digits: int() refuses them too (adv96 #2)


def _buffered(stream: "typing.TextIO") -> "io.TextIOWrapper":
    """Unbuffered standard output (``PYTHONUNBUFFERED``, ``python -u``) is a text
    layer over the raw file, whose ``write`` may take part of the data: the text layer
    drops the rest, so a pipe whose reader stopped after 64 KiB got a report cut short
    and the command exit 0 (usertest12).  The same stream with a buffer between, which
    writes all of it or raises (a closed pipe: :class:`BrokenPipeError`), flushed at
    each line and each write, as unbuffered output is.  Every write to standard
    output (the text reports, JSON, ``convert -o -``) goes through it."""
    import io

    buffered = io.BufferedWriter(stream.buffer)
    return io.TextIOWrapper(buffered, encoding=stream.encoding, errors=stream.errors,
                            line_buffering=True, write_through=True)


def _closed_stdout() -> "io.TextIOWrapper":
    """A ``sys.stdout`` for a process started with file descriptor 1 closed: the
    descriptor is taken by ``/dev/null`` (a file opened later would get it, and
    helpers inherit it), and the first write fails with ``EBADF``, so a command that
    has a report to print says ``standard output: cannot write: Bad file descriptor``,
    exit 2, as for a full disk, where it was an "internal error: AttributeError"
    (adv16 F2); later writes go nowhere.  A command writing to ``-o FILE`` only is
    not affected."""
    import errno
    import io
    import os

    class Closed(io.RawIOBase):
        failed = False

        def __init__(self, fd: int) -> None:
            super().__init__()
            self.fd = fd

        def writable(self) -> bool:
            return True

        def fileno(self) -> int:
            return self.fd

        def write(self, data: "ReadableBuffer", /) -> int:
            if not Closed.failed:
                Closed.failed = True
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))
            return memoryview(data).nbytes

    raw = Closed(os.open(os.devnull, os.O_WRONLY))  # the lowest free descriptor: 1
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8",
                            errors="backslashreplace")


def _run() -> None:
    from compaction_audit.runtime import stopline

    try:
        stopline.announce_interrupts()
        if sys.argv[1:] == ["--version"]:  # what the typer option prints, without typer
            from compaction_audit import __version__

            try:
                sys.stdout.write(f"compaction-audit {__version__}\n")
                sys.stdout.flush()
            except OSError as exc:  # > /dev/full, >&-, | true
                import os  # loaded at interpreter start

                # nothing left for the exit's flush, which failed again: exit 120 and
                # "Exception ignored" (adv61)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                if isinstance(exc, BrokenPipeError):  # the reader went away: quietly
                    sys.exit(141)
                sys.stderr.write(f"compaction-audit: standard output: cannot write: "
                                 f"{exc.strerror or exc}\n")
                sys.exit(2)
            return
        from compaction_audit.runtime import addrspace, startup

        addrspace.cap_arenas()  # before Polars' threads and ours start
        short = addrspace.too_little_for(sys.argv[1:])
        if short:  # before Polars is loaded: under it, Polars cannot load (adv22b F7)
            sys.stderr.write(f"compaction-audit: {short}\n")
            sys.exit(2)
        if addrspace.polars_may_not_load():  # convert imports Polars and needs none of
            import warnings  # its binary: its raw two-line warning said nothing (adv23)

            warnings.filterwarnings("ignore", "Polars binary is missing")
        startup.as_command()
        with startup.loading():
            from compaction_audit.cli import main
    except KeyboardInterrupt as exc:
        sys.exit(stopline.stop_status(exc))
    main()


if __name__ == "__main__":
    run()
