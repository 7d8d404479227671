"""The first lines of every helper process started with ``python -c`` (issue 11, third
pass, F6): the helper never outlives the command and never prints a traceback when
the command stops.

Pool workers get the same from :func:`compaction_audit.procs.worker_pool`; helpers
started by :class:`subprocess.Popen` (the decoding helpers of
:mod:`compaction_audit.io.parallel`, the text helper of
:mod:`compaction_audit.recall.analysis`) begin with :func:`prelude`:

* Ctrl-C is ignored: it reaches the whole process group, and the command handles it
  and kills its helpers (a helper would print a ``KeyboardInterrupt`` traceback);
* SIGPIPE has its default action: a write to a pipe the command no longer reads (it
  stopped, or died) ends the helper silently instead of raising ``BrokenPipeError``;
* on Linux the helper gets SIGKILL when the thread that started it ends
  (``prctl(PR_SET_PDEATHSIG)``, option 1 of <linux/prctl.h>), even when the command
  was killed with SIGKILL, and it ends at once if the command died before the signal
  was armed; elsewhere the closed pipe ends it on its next write.
"""

from __future__ import annotations

_PRELUDE = (
    "import os as _os, signal as _signal, sys as _sys\n"
    "_signal.signal(_signal.SIGINT, _signal.SIG_IGN)\n"
    "if hasattr(_signal, 'SIGPIPE'):\n"
    "    _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)\n"
    "if _sys.platform.startswith('linux'):\n"
    "    try:\n"
    "        import ctypes as _ctypes\n"
    "        _ctypes.CDLL(None).prctl(1, _signal.SIGKILL, 0, 0, 0)\n"
    "    except (OSError, AttributeError):\n"
    "        pass\n"
    "    if _os.getppid() != {parent}:\n"
    "        _os._exit(1)\n"
)


def prelude(parent: int) -> str:
    """Python source for the start of a helper's ``-c`` program, ``parent`` the pid of
    the process that starts it (``os.getpid()``); see the module docstring."""
    return _PRELUDE.format(parent=int(parent))
