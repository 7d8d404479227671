"""``python -m compaction_audit`` and the ``compaction-audit`` command.

:func:`run` is the console script's entry point: it first makes a Ctrl-C write its one
line as it arrives (:func:`compaction_audit.stopline.announce_interrupts`), then imports
the command line inside a ``try``, so a Ctrl-C while the modules load ends with that
line and exit 130, not a traceback (the package's ``__init__`` imports nothing heavy).
"""

import sys


def run() -> None:
    """Load :mod:`compaction_audit.cli` and run it; Ctrl-C while loading exits 130."""
    try:
        from compaction_audit import stopline

        stopline.announce_interrupts()
        from compaction_audit.cli import main
    except KeyboardInterrupt:
        if "compaction_audit.stopline" in sys.modules:
            sys.modules["compaction_audit.stopline"].say_stopped()
        else:
            sys.stderr.write("compaction-audit: interrupted\n")
        sys.exit(130)
    main()


if __name__ == "__main__":
    run()
