"""Connecting ``--engine ray`` to its cluster: bounded in time, quiet on stderr
(issue 11, ninth adversarial pass, F3).

``ray.init`` alone retries an unreachable cluster for ever, and Ray's core worker and
gRPC write their own log lines straight to file descriptor 2 from C++ (the address
given included, every few seconds), bypassing every writer of ours.  So:

- the address is checked first (:func:`check_address`): ``auto``, ``local``,
  ``HOST:PORT`` or ``ray://HOST:PORT`` with a host name, IPv4 or bracketed IPv6
  address and a port 1-65535; anything else is a usage error before Ray sees it;
- a ``HOST:PORT`` address gets one TCP connection first (:data:`PROBE_TIMEOUT`): a
  closed port, an unknown host or a host that does not answer is an error at once;
- ``ray.init`` runs in a helper thread that the command waits for at most
  :func:`connect_timeout` seconds (:data:`CONNECT_TIMEOUT`, or the environment
  variable :data:`TIMEOUT_ENV`); the wait can be stopped by SIGINT/SIGTERM like any
  other phase of the command;
- while it runs, file descriptor 2 points at a temporary file (:class:`NativeStderr`)
  and ``sys.stderr`` at a copy of the real one, so what Ray and gRPC write natively is
  kept off the user's stderr, while our own lines (the error, the stop line) still
  reach it.  When the wait ends by the timeout or a signal the redirection stays for
  the rest of the process (the thread still inside Ray keeps logging until it ends);
- once connected, the error messages of the cluster that Ray's driver prints from a
  thread of its own (a worker that died: "A worker died or was killed ...") go to
  stderr as one escaped line each (:func:`cluster_messages_to_stderr`), never to
  standard output, where they came before the report (adv16b F5).

Every failure is a :class:`UsageError`: one line naming the address, exit 2.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any

from compaction_audit.errors import UsageError
from compaction_audit.runtime import waits
from compaction_audit.runtime.envtime import env_seconds

CONNECT_TIMEOUT = 60.0
"""Seconds ``ray.init`` may take to connect to (or start) a cluster before the run
ends with exit 2; :data:`TIMEOUT_ENV` overrides it."""

TIMEOUT_ENV = "COMPACTION_AUDIT_RAY_CONNECT_TIMEOUT"
"""Environment variable: the connect timeout in seconds (a positive number)."""

PROBE_TIMEOUT = 5.0
"""Seconds allowed for the TCP connection that tests a ``HOST:PORT`` address first
(never more than the connect timeout)."""

_HOST = r"\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?"
_ADDRESS = re.compile(rf"(ray://)?({_HOST}):([0-9]{{1,5}})")
WORDS = ("auto", "local")
"""The addresses that are words, not ``HOST:PORT``."""


def check_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address (brackets of
    an IPv6 host removed), None for ``auto`` and ``local``.  Raises
    :class:`UsageError` for anything else (the text is escaped by the writer)."""
    if address in WORDS:
        return None
    match = _ADDRESS.fullmatch(address)
    if match is None or not 1 <= int(match.group(3)) <= 65535:
        raise UsageError(f"--ray-address {address}: expected auto, local, HOST:PORT or "
                         "ray://HOST:PORT (a host name or IP address and a port 1-65535)")
    return match.group(2).strip("[]"), int(match.group(3))


def connect_timeout() -> float:
    """:data:`TIMEOUT_ENV` as seconds, else :data:`CONNECT_TIMEOUT`.  Raises
    :class:`UsageError` when it is set to something else than a positive number."""
    return env_seconds(TIMEOUT_ENV, CONNECT_TIMEOUT)


def probe(host: str, port: int, timeout: float) -> str | None:
    """Why a TCP connection to ``host:port`` fails within ``timeout`` seconds (the
    system's words), or None when it opens."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


class NativeStderr:
    """File descriptor 2 pointed at a temporary file while ``sys.stderr`` writes to a
    copy of the real one (:meth:`start`); :meth:`stop` puts both back."""

    def __init__(self) -> None:
        self.saved = -1
        self.sink: IO[bytes] | None = None
        self.stderr: Any = None

    def start(self) -> None:
        """Redirect (see the class docstring)."""
        self.stderr = sys.stderr
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.stderr.flush()
        self.saved = os.dup(2)
        self.sink = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        encoding = getattr(self.stderr, "encoding", None) or "utf-8"
        sys.stderr = open(os.dup(self.saved), "w", encoding=encoding,  # noqa: SIM115
                          errors="backslashreplace", buffering=1)
        os.dup2(self.sink.fileno(), 2)

    def stop(self) -> None:
        """Put file descriptor 2 and ``sys.stderr`` back; drop what was caught."""
        if self.sink is None:
            return
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        ours, sys.stderr = sys.stderr, self.stderr
        ours.close()
        self.sink.close()
        self.sink = None


_held: list[threading.Event] = []
"""One event per thread that ran a ``ray.init`` and is kept alive (:func:`bounded`)."""


def release() -> None:
    """Let the threads kept alive by :func:`bounded` end: call it once the cluster is
    no longer used (after ``ray.shutdown()``)."""
    while _held:
        _held.pop().set()


def bounded(call: Callable[[], Any], timeout: float) -> bool:
    """Run ``call`` in a daemon thread, wait for it at most ``timeout`` seconds.
    True when it returned in time; re-raises what it raised; False when it is still
    running (the thread is left to Ray: the caller ends the run).

    A thread whose ``call`` returned is kept alive until :func:`release`: Ray starts
    its local cluster's processes (GCS, raylet, ...) with ``PR_SET_PDEATHSIG``, which
    on Linux fires when the *thread* that started them ends, so a thread that ended
    after ``ray.init`` killed the cluster it had just started: every local run then
    ended 60 s later with Ray's own fatal line and exit 1 (issue 11, adv10 F4)."""
    outcome: list[BaseException | None] = []
    finished = threading.Event()
    hold = threading.Event()

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the waiting thread
            outcome.append(exc)
            finished.set()
            return
        _held.append(hold)
        outcome.append(None)
        finished.set()
        hold.wait()  # the processes it started live as long as this thread

    thread = threading.Thread(target=run, name="ray-connect", daemon=True)
    thread.start()
    waits.event(finished, timeout)  # in slices: a signal may land on Ray's threads
    if not outcome:
        return False
    if outcome[0] is not None:
        raise outcome[0]
    return True


def init_quietly(init: Callable[[], Any], address: str | None, timeout: float,
                 first_line: Callable[[BaseException], str]) -> None:
    """``init()`` (a ``ray.init`` call for ``address``; None: a local cluster started
    here) bounded by ``timeout`` seconds, with Ray's native stderr caught.  Raises
    :class:`UsageError` naming the address when it fails or does not end in time."""
    where = "start a local Ray" if address is None else \
        f"connect to the Ray cluster at {address}"
    target = check_address(address) if address is not None else None
    if target is not None:
        why = probe(*target, timeout=min(PROBE_TIMEOUT, timeout))
        if why is not None:
            raise UsageError(f"cannot {where}: {why}")
    capture = NativeStderr()
    capture.start()
    done = False  # Ray is done (returned or raised): the redirection can end
    try:
        done = bounded(init, timeout)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        done = True
        raise UsageError(f"cannot {where}: {_our_option(_with_causes(exc, first_line))}"
                         ) from None
    finally:  # a timeout or a signal: the thread may still log; the run is ending
        if done:
            capture.stop()
    if not done:
        raise UsageError(f"cannot {where}: no connection within {timeout:g} s "
                         f"(the limit: {TIMEOUT_ENV})")


CAUSES_SHOWN = 2
"""Causes of a Ray connection error its message names (its ``__cause__`` chain)."""


def _with_causes(exc: BaseException, first_line: Callable[[BaseException], str]) -> str:
    """``first_line(exc)``, then that of each cause it was raised from (at most
    :data:`CAUSES_SHOWN`, each once): Ray raises "Failed to connect to Ray cluster at
    HOST:PORT" from the error that says why, such as a cluster that asks for an
    authentication token (usertest74 F10: an address refused for want of a token read
    as a network failure)."""
    said = [first_line(exc)]
    cause = exc.__cause__
    while cause is not None and len(said) <= CAUSES_SHOWN:
        line = _raised(cause, first_line)
        if line and line not in said:
            said.append(line)
        cause = cause.__cause__
    return said[0] + "".join(f" (because: {line})" for line in said[1:])


_TRACEBACK = "Traceback (most recent call last):"


def _raised(exc: BaseException, first_line: Callable[[BaseException], str]) -> str:
    """``first_line(exc)``, or, where ``exc``'s message carries a formatted traceback
    (Ray's "Failed to connect to GCS. Last connection error: Traceback ..."), the
    words before it and the traceback's last line, the error it ends in (usertest74
    F10: the token Ray asked for was on that line)."""
    text = str(exc)
    if _TRACEBACK not in text:
        return first_line(exc)
    head, _, trace = text.partition(_TRACEBACK)
    last = next((ln.strip() for ln in reversed(trace.splitlines()) if ln.strip()), "")
    words = head.strip().splitlines()[0].strip() if head.strip() else ""
    return " ".join(x for x in (words, last) if x)[:300]


_RAY_FLAG_RE = re.compile(r"`?--address`?(?: flag)?")


def _our_option(message: str) -> str:
    """Ray's ``message`` with its own command-line flag (``--address``, of ``ray
    start``) named as this command's option, ``--ray-address`` (usertest67 #8: "set
    the `--address` flag or RAY_ADDRESS", an option the command does not have)."""
    return _RAY_FLAG_RE.sub("--ray-address", message)


def cluster_messages_to_stderr() -> None:
    """Make Ray's driver print the cluster's error messages for this job on stderr,
    the first line of each, escaped (:func:`_say_cluster_message`).  Its listener
    thread (``ray._private.worker.listen_error_messages``, started by every
    ``ray.init`` of a driver, ``log_to_driver`` or not) wrote them to ``sys.stdout``
    with a coloured ``(raylet)`` prefix: a ``-f json`` report there was no JSON any
    more, and raw ESC bytes reached the CI log (adv16b F5).  The listener looks the
    printer up by name at each message, so replacing it works before or after
    ``ray.init``.  Without Ray, or with a Ray that has no such printer, nothing."""
    try:
        from ray._private import worker as ray_worker
    except ImportError:
        return
    if hasattr(ray_worker, "print_to_stdstream"):
        ray_worker.print_to_stdstream = _say_cluster_message


RAY_LINE = 200
"""Characters of Ray's own message kept at most: its first sentence (a worker's death
is a paragraph of ids, PIDs and advice on one line, about 1,000 characters: adv53)."""


def _say_cluster_message(data: dict[str, Any], ignore_prefix: bool = False) -> None:
    """``compaction-audit: ray: FIRST SENTENCE`` on stderr for Ray's message ``data``
    (``lines``: the message's text; :data:`RAY_LINE` characters at most), made
    printable and neutralized like our own lines (the rest of a message: Ray's advice,
    ids and PIDs).  A closed stderr is ignored."""
    first = first_sentence("\n".join(str(line) for line in data.get("lines", ())))
    if first:
        say_ray(first)


def first_sentence(text: str) -> str:
    """The first sentence of the first line of ``text`` that is not blank, at most
    :data:`RAY_LINE` characters ("..." after a cut); "" for blank text."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    stop = first.find(". ")
    if 0 < stop < RAY_LINE:
        return first[:stop + 1]
    return first[:RAY_LINE] + "..." if len(first) > RAY_LINE else first


def say_ray(text: str) -> None:
    """``compaction-audit: ray: TEXT`` on stderr, made printable and neutralized; a
    closed stderr is ignored."""
    from compaction_audit.report.safe import neutralize, printable

    try:
        sys.stderr.write(neutralize(f"compaction-audit: ray: {printable(text)}\n"))
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
