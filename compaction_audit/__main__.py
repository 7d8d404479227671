"""``python -m compaction_audit`` and the ``compaction-audit`` command.

Ctrl-C at any moment of start-up ends with one line and exit 130, never a traceback:
the package's ``__init__`` installs a handler that exits (it is the first of our code
that runs, for the console script and for ``python -m``, where ``runpy`` imports the
package before this module); :func:`run` then makes a Ctrl-C write its line and raise
:class:`KeyboardInterrupt` (:func:`compaction_audit.stopline.announce_interrupts`),
imports the command line inside a ``try``, and ends a stopped run with
:func:`compaction_audit.stopline.exit_now`.

``compaction-audit --version`` alone is answered here, before typer and the commands
load (issue 14, item 4: import only what the command needs).
"""

import sys


def run() -> None:
    """Run the command line; a run stopped by a signal ends with its exit status."""
    from compaction_audit import stopline

    if sys.stderr is None:  # started with stderr closed (2>&-): Python leaves it None
        import os  # loaded at interpreter start

        # the exit codes stay what they are with a writable stderr (an error line
        # written to None was an internal error, exit 1); the lines go nowhere.  The
        # new descriptor is the lowest free one, 2 itself, so helpers inherit it
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    try:
        _run()
    except SystemExit as stop:
        if stopline.stopped():
            stopline.exit_now(stop.code if isinstance(stop.code, int) else stopline.STOPPED)
        raise


def _run() -> None:
    from compaction_audit import stopline

    try:
        stopline.announce_interrupts()
        if sys.argv[1:] == ["--version"]:  # what the typer option prints, without typer
            from compaction_audit import __version__

            if sys.stdout is not None:  # stdout closed: nothing, as typer.echo does
                sys.stdout.write(f"compaction-audit {__version__}\n")
                sys.stdout.flush()
            return
        from compaction_audit import addrspace, startup

        addrspace.cap_arenas()  # before Polars' threads and ours start
        startup.as_command()
        with startup.loading():
            from compaction_audit.cli import main
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, stopline.Terminated) else 2
        stopline.say_stopped(signum)
        sys.exit(128 + signum)
    main()


if __name__ == "__main__":
    run()
