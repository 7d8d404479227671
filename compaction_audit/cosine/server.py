"""The embedding helper process: the model loaded and the texts embedded beside the audit
(issue 16, point 4; issue 14, item 4).

Loading the model costs about 0.13 s of CPU (importing numpy, parsing the tokenizer's
1.8 MB of JSON), both holding the GIL: in a thread of the audit's own process it can
only interleave with the reading, which holds the GIL too, and on a log under 1 MB it
was a quarter of the audit.  A helper process loads it on the other core while the
audit reads the log, then embeds the distinct texts the rebuild sends it and returns
their cosines.  It runs :func:`compaction_audit.cosine.embed.load_model` and
``embed._local_cosines``, the code the audit runs without it, on the same texts: the
same floats (sent back by :mod:`marshal`, which keeps every bit).

The helper imports :mod:`~compaction_audit.cosine.embed` (with
:mod:`~compaction_audit.cosine.pieces` and :mod:`compaction_audit.errors`) under empty
package modules (:data:`BOOT`), so neither package's ``__init__`` and no Polars is
loaded there.  Messages both ways are :mod:`compaction_audit.runtime.frames` messages
(a length, a CRC-32 and a marshal body), each a tuple whose first item is its tag:

- helper -> audit, once loaded: ``("ready", status, detail)``, status ``model`` (loaded),
  ``none`` (not installed) or ``error`` (``detail``: the error's first line);
- audit -> helper: ``("c", texts, query)``; helper -> audit: ``("v", cosines)``, one
  float or None per text (``embed._local_cosines``);
- end of input (the audit closed the pipe, or ended) ends the helper.

:class:`Helper` is the audit's side.  Whatever the helper does not deliver (it failed
to start, died, sent something else, or is later than :data:`READY_SECONDS` /
:func:`result_seconds`) the audit does itself, in process, as without a helper: a
helper can make the audit faster, never change or stop it.  It ends with the audit
(:func:`compaction_audit.runtime.childproc.prelude`: Ctrl-C ignored, SIGKILL when the thread
that started it ends) and when its input closes.

Standard library only (the CLI may start it before the auditor's modules load).
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import time
from typing import IO, Any

from compaction_audit.runtime.frames import Chain, receive, send

ENV = "COMPACTION_AUDIT_EMBED"
"""The environment variable choosing the embedding (``compaction_audit.cosine.embed``)."""
READY_SECONDS = 10.0
"""How long the audit waits for the helper's load (about 0.15 s of CPU; 0.2 to 0.7 s
of wall time seen on 2 busy cores), and the base of :func:`result_seconds`."""
SECONDS_PER_CHAR = 5e-6
"""Allowance per character of text for the helper's answer, above
:data:`READY_SECONDS`: 0.2 MB/s, where it embeds 3 MB/s or more."""

BOOT = (
    "import gc, sys, types\n"
    "gc.disable()\n"
    "sys.path[:] = sys.argv[3:]\n"
    "for name, path in (('compaction_audit', sys.argv[1]),\n"
    "                   ('compaction_audit.cosine', sys.argv[2])):\n"
    "    pkg = types.ModuleType(name)\n"
    "    pkg.__path__ = [path]\n"
    "    sys.modules[name] = pkg\n"
    "try:\n"
    "    from compaction_audit.cosine import server\n"
    "    server.main()\n"
    "except Exception:\n"
    "    sys.exit(1)\n"
)
"""The helper's ``python -S -c`` program after the prelude; arguments: the folder
of the ``compaction_audit`` package, the ``cosine`` folder, then the audit's own
``sys.path``.  Without the ``site`` module (``-S``) the interpreter starts in about 10
ms of CPU instead of 27 (issue 14, item 4); numpy and tokenizers are found on the
audit's path, which holds what ``site`` added to it.  It fails quietly (exit 1, no
traceback): the audit then does the work itself."""


def wanted() -> bool:
    """True when a helper process can load the model beside this one: POSIX pipes, a
    second CPU for this process, not a worker process of ``audit_paths`` (each loads
    the model once for all its traces), the environment not forcing the lexical
    method (:data:`ENV`), and wordllama installed (found without importing it)."""
    cores = getattr(os, "sched_getaffinity", None)
    try:
        n = len(cores(0)) if cores is not None else os.cpu_count() or 1
    except OSError:
        n = os.cpu_count() or 1
    mp = sys.modules.get("multiprocessing")
    if (os.name != "posix" or n < 2 or (mp is not None and mp.parent_process() is not None)
            or (os.environ.get(ENV, "auto").strip().lower() or "auto") not in ("auto", "model")):
        return False
    try:
        import importlib.util

        return importlib.util.find_spec("wordllama") is not None
    except (ImportError, ValueError):
        return False


PEEK_BYTES = 1 << 16
"""Bytes of a log's start that :func:`texted_file` looks at."""

_early: list[Helper] = []


def texted_file(paths: list[str]) -> bool:
    """True when ``paths`` is one regular file (plain or ``.gz``) whose first
    :data:`PEEK_BYTES` hold a ``"text"`` key: a trace that looks as if it carries
    texts, for the helpers the command starts before its imports.  Never raises."""
    import stat

    if len(paths) != 1:
        return False
    try:
        if not stat.S_ISREG(os.stat(paths[0]).st_mode):
            return False
        with open(paths[0], "rb") as handle:
            head = handle.read(PEEK_BYTES)
        if head[:2] == b"\x1f\x8b":  # gzip, by its bytes (any name: T.JSONL.GZ)
            head = _gunzip_head(head)
        return b'"text"' in head
    except Exception:  # the reader reports a bad file, not this hint
        return False


def _gunzip_head(data: bytes) -> bytes:
    """What the members that start in ``data`` (a ``.gz`` file's first bytes) give, up
    to :data:`PEEK_BYTES`: bounded by the bytes given, where ``gzip.open(...).read(n)``
    read on through every empty member until n bytes came out, 10 MB of them taking
    20 s before the audit began (adv27 F6)."""
    import zlib

    out = b""
    while data and len(out) < PEEK_BYTES:
        obj = zlib.decompressobj(31)
        out += obj.decompress(data, PEEK_BYTES - len(out))
        if not obj.eof:
            break
        data = obj.unused_data.lstrip(b"\0")
    return out


def start_early(paths: list[str]) -> bool:
    """Start a helper before the auditor's modules load, when the command will audit
    one trace in this process that looks as if it carries texts (:func:`texted_file`)
    and :func:`wanted`.  :func:`take_early` hands it to the embedding.  A hint
    only: results never depend on it (an unused helper ends with the command).  Never
    raises; returns True when a helper was started."""
    import atexit

    if len(paths) != 1 or _early or not wanted() or not texted_file(paths):
        return False
    helper = Helper.start()
    if helper is None:
        return False
    _early.append(helper)
    atexit.register(helper.close)
    return True


def take_early() -> Helper | None:
    """The helper :func:`start_early` started, once (then None)."""
    return _early.pop() if _early else None


def result_seconds(texts: list[str]) -> float:
    """How long the audit waits for the cosines of ``texts`` (see :data:`SECONDS_PER_CHAR`)."""
    return READY_SECONDS + SECONDS_PER_CHAR * sum(map(len, texts))


def main(fd: int = 0, out: IO[bytes] | None = None) -> None:
    """The helper: load the model, say so, then answer each request until the end of
    input (module docstring)."""
    from compaction_audit.cosine import embed

    stream = out if out is not None else sys.stdout.buffer
    inbox, outbox = Chain(), Chain()  # each direction's running CRC (runtime.frames)
    try:
        loaded = embed.load_model()
    except Exception as exc:  # the audit loads it again, and reports the error there
        send(stream, ("ready", "error", str(exc).splitlines()[0] if str(exc) else ""),
             outbox)
        return
    send(stream, ("ready", "model" if loaded is not None else "none", ""), outbox)
    if loaded is None:
        return
    while True:
        message = receive(fd, inbox)
        if message is None or message[0] != "c":
            return
        _, texts, query = message
        send(stream, ("v", embed._local_cosines(texts, query)), outbox)


class Helper:
    """The audit's side of one helper process (module docstring).  Not thread-safe: the
    caller holds a lock."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.status: str | None = None
        """None until the helper says it is ready; then its status, or ``dead``."""
        self._pending: tuple[list[str], str, threading.Thread] | None = None
        self._inbox, self._outbox = Chain(), Chain()  # each direction's running CRC

    @classmethod
    def start(cls) -> Helper | None:
        """A helper loading the model; None when it cannot start (no pipes, no
        process)."""
        from compaction_audit.runtime.childproc import prelude, python_command

        here = os.path.dirname(os.path.abspath(__file__))
        try:
            process = subprocess.Popen(
                [*python_command("-S"), "-c", prelude(os.getpid()) + BOOT,
                 os.path.dirname(here), here, *sys.path],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except (OSError, ValueError):
            return None
        return cls(process)

    def ready(self, timeout: float | None = None) -> bool:
        """True when the helper has the model loaded; waits for it at most ``timeout``
        seconds (default :data:`READY_SECONDS`).  False (and the helper is ended) when
        it has not, cannot, or failed."""
        if self.status is None:
            message = self._receive(READY_SECONDS if timeout is None else timeout)
            ok = isinstance(message, tuple) and len(message) == 3 and message[0] == "ready"
            self.status = message[1] if ok else "dead"
            if self.status != "model":
                self.close()
        return self.status == "model"

    def request(self, texts: list[str], query: str) -> None:
        """Send the helper ``texts`` and ``query`` now (it embeds them as soon as it is
        loaded), without waiting: :meth:`cosines` on the same arguments collects the
        answer.  Nothing when a request is pending or the helper has failed."""
        stream = self.process.stdin
        if self._pending is not None or self.status not in (None, "model") or stream is None:
            return
        # written by a thread: a helper that stopped reading cannot block the audit
        writer = threading.Thread(target=self._write, args=(stream, ("c", texts, query),
                                                            self._outbox),
                                  daemon=True)
        writer.start()
        self._pending = (texts, query, writer)

    def waiting(self) -> bool:
        """True while a request is pending and nothing of its answer has arrived yet:
        the audit may do other work meanwhile (issue 14, item 4).  Never blocks, but
        reads the helper's ``ready`` message when that is what has arrived (as
        :meth:`ready` would); False once the answer has begun, or the helper failed."""
        stream = self.process.stdout
        if self._pending is None or self.status not in (None, "model") or stream is None:
            return False
        try:
            fd = stream.fileno()
            if not select.select([fd], [], [], 0)[0]:
                return True
            if self.status is None:  # what arrived is the load's message (or the end)
                return self.ready() and not select.select([fd], [], [], 0)[0]
        except (OSError, ValueError):
            return False
        return False

    def cosines(self, texts: list[str], query: str) -> list[float | None] | None:
        """The helper's ``embed._local_cosines(texts, query)`` (asked for now, or by
        :meth:`request`); None (and the helper is ended) when it is not ready, dies,
        answers something else or is later than :data:`READY_SECONDS` for its load and
        :func:`result_seconds` for the answer."""
        pending = self._pending
        if (pending is not None and (pending[0] != texts or pending[1] != query)
                and self._answer() is None):  # another request's answer: read, then ask
            return None
        self.request(texts, query)
        return self._answer()

    def _answer(self) -> list[float | None] | None:
        if self._pending is None:
            return None
        texts, _, writer = self._pending
        self._pending = None
        got = None
        if self.ready():
            message = self._receive(result_seconds(texts))
            got = message[1] if (isinstance(message, tuple) and len(message) == 2
                                 and message[0] == "v") else None
            if not isinstance(got, list) or len(got) != len(texts) or not all(
                    v is None or type(v) is float for v in got):
                got = None
                self.close()
        writer.join()  # done: its message was read, or the helper was ended
        return got

    @staticmethod
    def _write(stream: IO[bytes], message: Any, chain: Chain) -> None:
        with contextlib.suppress(OSError, ValueError):  # the helper died, or was ended
            send(stream, message, chain)

    def _receive(self, seconds: float) -> Any:
        stream = self.process.stdout
        if stream is None:
            return None
        try:
            return receive(stream.fileno(), self._inbox, time.monotonic() + seconds)
        except (OSError, ValueError, EOFError, TypeError):
            return None

    def close(self) -> None:
        """End the helper (idempotent): the process is killed and its pipes closed."""
        if self.process.poll() is None:  # first: a write blocked on its full pipe ends
            self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError, ValueError):
                self.process.stdin.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
        if self.status in (None, "model"):
            self.status = "dead"
