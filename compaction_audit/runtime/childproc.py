"""The first lines of every helper process started with ``python -c`` (issue 11, third
pass, F6): the helper never outlives the command and never prints a traceback when
the command stops.

Pool workers get the same from :func:`compaction_audit.runtime.procs.worker_pool`; helpers
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

Every helper also starts with :func:`python_command` (``-P``), and the spawn pool's
workers with :func:`safe_path_env`: ``python -c`` puts the current directory first on
``sys.path``, and the prelude imports ``signal`` and ``ctypes`` (multiprocessing's own
``-c`` programs import ``multiprocessing``) before anything else, so a ``signal.py`` in
the directory the command runs in (in CI, the checkout of the repository under
review) ran as code in every helper (issue 11, class 7, adv10 F1).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator

SAFE_PATH_ENV = "PYTHONSAFEPATH"
"""Python 3.11's environment variable for ``-P``: no potentially unsafe path (the
current directory for ``-c`` and ``-m``, the script's folder) is put on ``sys.path``."""


def python_command(*flags: str) -> list[str]:
    """The start of a helper's command line: this interpreter, ``-P`` (see
    :data:`SAFE_PATH_ENV`), then ``flags``; the caller appends ``-c`` and its program."""
    return [sys.executable, "-P", *flags]


QUIET_TRACKER = "ignore::UserWarning:multiprocessing.resource_tracker"
"""A ``PYTHONWARNINGS`` entry: multiprocessing's resource tracker, which outlives a
command killed with SIGKILL (a CI runner's last word, the OOM killer), then warns of
"leaked semaphore objects" in two raw lines on the command's standard error (adv22b
F6); the semaphores are the pool's, and the tracker frees them all the same."""


@contextlib.contextmanager
def safe_path_env() -> Iterator[None]:
    """:data:`SAFE_PATH_ENV` set in this process's environment for the block, and
    :data:`QUIET_TRACKER` added to ``PYTHONWARNINGS``, each as it was after it: the
    interpreters multiprocessing starts meanwhile (spawn workers, its resource
    tracker; their command lines are its own) inherit them."""
    warnings = os.environ.get("PYTHONWARNINGS")
    before = {SAFE_PATH_ENV: os.environ.get(SAFE_PATH_ENV), "PYTHONWARNINGS": warnings}
    os.environ[SAFE_PATH_ENV] = "1"
    os.environ["PYTHONWARNINGS"] = f"{warnings},{QUIET_TRACKER}" if warnings else QUIET_TRACKER
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def in_worker_process() -> bool:
    """True inside a worker process of a multiprocessing pool (``audit_paths``' spawn
    workers), which has ``multiprocessing`` loaded; a process that has not loaded it
    is not one, and does not load it to ask (about 7 ms of an audit's start-up)."""
    mp = sys.modules.get("multiprocessing")
    return mp is not None and mp.parent_process() is not None


def reap(processes: Iterable[subprocess.Popen[bytes]]) -> None:
    """End each helper: killed if still running, waited for (no zombie left), its
    stdout pipe closed.  Safe on a process that has already ended."""
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


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
