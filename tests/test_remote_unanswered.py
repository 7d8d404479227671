"""A store that does not answer (issue 11, ninth adversarial pass, F7): one retry
budget per store, not two per URL; the budget configurable; one line per trace,
exit 2.  Runs against a local socket that accepts connections and never answers, and
a closed port; skips without obstore."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from compaction_audit.errors import LogError, UsageError
from compaction_audit.io import remote
from tests.gate_app import run

pytest.importorskip("obstore", reason="obstore is not installed (the [cloud] extra)")

ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
       "AWS_EC2_METADATA_DISABLED": "true",
       "AWS_TIMEOUT": "1s",  # obstore's per-request timeout (its default: 30 s)
       remote.TIMEOUT_ENV: "0.3"}


class Silent:
    """A TCP server on 127.0.0.1 that accepts connections, counts them, never answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.accepted: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                self.accepted.append(self.sock.accept()[0])
            except TimeoutError:
                continue

    def count(self, least: int) -> int:
        """Connections accepted so far, once at least ``least`` (or after 3 s): the
        accept loop may not have taken one the kernel queued yet."""
        end = time.monotonic() + 3
        while len(self.accepted) < least and time.monotonic() < end:
            time.sleep(0.02)
        return len(self.accepted)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.fixture
def store_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    remote.store_for.cache_clear()
    remote._unanswered.clear()
    yield monkeypatch
    remote.store_for.cache_clear()
    remote._unanswered.clear()


@pytest.fixture
def silent(store_env: pytest.MonkeyPatch) -> Iterator[Silent]:
    server = Silent()
    store_env.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.port}")
    yield server
    server.close()


def test_retry_budget_default_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(remote.TIMEOUT_ENV, raising=False)
    assert remote.retry_timeout() == timedelta(seconds=60)
    monkeypatch.setenv(remote.TIMEOUT_ENV, "2.5")
    assert remote.retry_timeout() == timedelta(seconds=2.5)
    for bad in ("0", "-3", "soon", "nan"):
        monkeypatch.setenv(remote.TIMEOUT_ENV, bad)
        with pytest.raises(UsageError, match=remote.TIMEOUT_ENV):
            remote.retry_timeout()


def test_what_counts_as_not_answering() -> None:
    assert remote.unanswered(Exception(
        "Generic S3 error: Error performing HEAD http://h/b/k in 4s, after 1 retries, "
        "max_retries: 5, retry_timeout: 3s  - HTTP error: error sending request"))
    assert remote.unanswered(Exception("HTTP error: error sending request"))
    assert not remote.unanswered(FileNotFoundError("Object at location k not found"))
    assert not remote.unanswered(Exception("Client error with status 403 Forbidden"))


def test_a_silent_store_is_asked_once_for_all_its_urls(silent: Silent) -> None:
    # before: two requests per URL (format detection, then the read), each with the
    # whole budget: six or more connections, three budgets and more
    urls = [f"s3://bucket/{name}.jsonl" for name in "abc"]
    result = run("audit", *urls, "-j", "1", "-q")
    assert result.exit_code == 2
    assert silent.count(1) == 1
    lines = result.stdout.splitlines()
    assert [line.split(": cannot open: ")[0] for line in lines[:3]] == \
        [f"error: {url}" for url in urls]
    # the first URL's open gives up after 2 x the budget (adv16b F2), the others at once
    why = "no answer within 0.6 s (the store's budget is set by COMPACTION_AUDIT_STORE_TIMEOUT)"
    assert lines[0].endswith(f": cannot open: {why}")
    assert all(line.endswith(f": the store did not answer: {why}") for line in lines[1:3])
    assert lines[3] == "exit 2: 3 trace(s), 0 reach --fail-on error, 3 unreadable"


def test_the_store_is_asked_again_after_one_budget(silent: Silent) -> None:
    assert remote.object_size("s3://bucket/a.jsonl") is None
    assert silent.count(1) == 1
    with pytest.raises(LogError, match="the store did not answer: "):
        remote.open_url("s3://bucket/b.jsonl")
    assert silent.count(1) == 1  # failed at once, nothing asked
    time.sleep(0.4)  # the budget (0.3 s) has passed since the first error
    with pytest.raises(LogError, match=r"cannot open: no answer within 0\.6 s"):
        remote.open_url("s3://bucket/b.jsonl")  # 2 x the budget (adv16b F2)
    assert silent.count(2) == 2


def test_a_closed_port_marks_the_store_too(store_env: pytest.MonkeyPatch) -> None:
    from compaction_audit.io.object_keys import botocore_missing

    botocore_missing()  # its first import (1 s and more under load) outlasted the mark
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    store_env.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    assert remote.object_size("s3://bucket/a.jsonl") is None
    with pytest.raises(LogError) as caught:
        remote.open_url("s3://bucket/a.jsonl")
    # the mark's reason is the refused connection, or, on a loaded machine where the
    # first request outlasted the store's budget, that budget (CI, 2026-12-02)
    said = str(caught.value)
    assert said.startswith("s3://bucket/a.jsonl: cannot open: the store did not answer: ")
    assert said.split(": the store did not answer: ")[1].startswith(
        ("Generic S3 error", "no answer within 0.6 s")), said
    # the listing finds the mark, or, when the load made the steps above outlast the
    # budget (the mark is kept that long), asks again and is refused again (a
    # Quickstart run beside CI, 2026-12-02)
    with pytest.raises(UsageError, match=r"cannot list: (?:the store did not answer"
                                         r"|Could not connect)"):
        list(remote.list_objects("s3://bucket/runs/"))
