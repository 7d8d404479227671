"""The private folder a local Ray cluster keeps its session in, removed with the run.

Ray writes a session folder (logs, sockets, about 416 KB, directories mode 0777) under
``/tmp/ray`` by default and leaves it after ``ray.shutdown()``; its dashboard agent
and runtime-env agent, children of the raylet, notice the raylet is gone only by
polling and outlived the command by about 60 s after a SIGTERM (issue 11, class 7;
adv22b O1).  A local cluster this command starts gets its own root
(:func:`new_root`, passed as ``ray.init(_temp_dir=...)``); :func:`remove_root` stops
the processes still running from it and removes it.  A cluster at an address is not
this command's: its folders are left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time

PREFIX = "ca-ray-"
"""The root's name prefix, short: Ray's socket paths under it must stay within the
107 bytes a Unix socket name may have."""


MAX_ROOT = 45
"""Most characters of the root's path: Ray's longest socket name under it,
``/session_<date>_<time>_<micros>_<pid>/sockets/plasma_store`` (62 characters), must
fit the 107 bytes of a Unix socket name."""


def new_root() -> str:
    """A new empty private folder (mode 0700) for a local cluster's session; an
    absolute path, as ``ray.init(_temp_dir=...)`` needs.  It is made where Ray would
    put its own (``RAY_TMPDIR``, else ``TMPDIR`` on Linux, else ``/tmp``), or in
    ``/tmp`` when a path there would be longer than :data:`MAX_ROOT` (Ray's default
    folder there would fail the same way)."""
    parent = os.environ.get("RAY_TMPDIR") or (
        os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None) or "/tmp"
    if (len(os.path.abspath(parent)) + 1 + len(PREFIX) + 8 > MAX_ROOT
            and os.access("/tmp", os.W_OK)):
        parent = "/tmp"
    return os.path.abspath(tempfile.mkdtemp(prefix=PREFIX, dir=parent))


def remove_root(root: str) -> None:
    """SIGKILL the processes of this user whose command line names ``root`` or a path
    in it (the cluster's agents, after ``ray.shutdown()``; read from ``/proc``, nothing
    where it is missing), then remove ``root`` and everything under it.  Errors are
    ignored: the run is ending, and its result does not depend on them."""
    for _ in range(ROUNDS):  # a raylet may start a process, or write a file, meanwhile
        for pid in _processes_naming(root):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
        if not os.path.lexists(root) and not _processes_naming(root):
            return
        time.sleep(PAUSE)


ROUNDS = 20
PAUSE = 0.1
""":func:`remove_root` kills and removes again up to :data:`ROUNDS` times, :data:`PAUSE`
seconds apart, while a process of the cluster still runs or writes in the folder (a
SIGTERM while the cluster started left it behind on a loaded machine)."""


def _processes_naming(root: str) -> list[int]:
    """Ids of this user's processes (not this one) whose command line names ``root``
    or a path in it (``--temp-dir=ROOT``, ``--session-dir=ROOT/session_...``)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    needle, me, uid = os.fsencode(root), os.getpid(), os.getuid()
    found = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                if fh.read().rpartition(b")")[2].split()[:1] == [b"Z"]:
                    continue  # a zombie: it runs and writes no more
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                line = fh.read()
            if needle + b"/" in line or needle + b"\0" in line:  # the folder, or in it
                found.append(int(entry))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found
