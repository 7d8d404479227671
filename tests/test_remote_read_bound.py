"""Reading an object keeps the store's budget (issue 11, class 4; adv16b F2).

An endpoint whose GET body trickled one byte every 2 s cost about 60 s per object
whatever ``COMPACTION_AUDIT_STORE_TIMEOUT`` said (obstore's 30 s request timeout,
twice: the embedding hint peeked at the object before the read; a native trace was
read a third time after its format was detected), and the store was not marked as
not answering, so every further object paid again.  Against an
endpoint on 127.0.0.1 (a thread of this process): honest HEAD, hostile GET; skips
without obstore."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from compaction_audit.io import remote
from tests.gate_app import run
from tests.hostile_store import serve, within

pytest.importorskip("obstore", reason="obstore is not installed (the [cloud] extra)")

DATA = (Path(__file__).parent.parent / "sample_logs" / "handwritten.jsonl").read_bytes()
"""The object every key names (a trace that FAILs: exit 1 when read whole)."""


class _Hostile(http.server.BaseHTTPRequestHandler):
    """HEAD answers the full size.  GET: ``ok`` the object; ``trickle`` its bytes one
    every 0.5 s; ``stall`` the headers, then nothing; ``head`` stalls HEAD itself
    before any header.  Each request is noted in ``seen`` ("HEAD /b/KEY", "GET ...")."""

    protocol_version = "HTTP/1.1"
    mode = "ok"
    seen: ClassVar[list[str]] = []
    stop = threading.Event()

    def log_message(self, *_: Any) -> None:
        pass

    def _headers(self, code: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(DATA)))
        self.send_header("ETag", '"abc"')
        self.send_header("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
        if code == 206:
            self.send_header("Content-Range", f"bytes 0-{len(DATA) - 1}/{len(DATA)}")
        self.end_headers()

    def do_HEAD(self) -> None:
        self.seen.append(f"HEAD {self.path}")
        if self.mode == "head":
            self.stop.wait(60)
            return
        self._headers(200)

    def do_GET(self) -> None:
        self.seen.append(f"GET {self.path}")
        self._headers(206 if self.headers.get("Range") else 200)
        try:
            if self.mode == "ok":
                self.wfile.write(DATA)
            elif self.mode == "trickle":
                for byte in DATA:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    if self.stop.wait(0.5):
                        return
            else:
                self.wfile.flush()
                self.stop.wait(60)
        except OSError:  # the client gave up
            pass


@pytest.fixture(params=["trickle", "stall", "head"])
def hostile(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[list[str]]:
    yield from _serve(request.param, monkeypatch)


@pytest.fixture
def honest(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    yield from _serve("ok", monkeypatch)


def _serve(mode: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Serve ``mode``, yielding the requests seen; ends what a handler still waits on."""
    handler = type("Handler", (_Hostile,), {"mode": mode, "seen": [],
                                            "stop": threading.Event()})
    try:
        for _ in serve(handler, monkeypatch):
            yield handler.seen
    finally:
        handler.stop.set()


def test_an_object_is_read_with_one_head_and_one_get(honest: list[str]) -> None:
    """Old code: two of each (the embedding hint peeked at the object first)."""
    result = run("audit", "s3://b/p/t.jsonl", "-q", "-j", "1")
    assert result.exit_code == 1, result.stdout  # the whole trace read: it FAILs
    assert honest == ["HEAD /b/p/t.jsonl", "GET /b/p/t.jsonl"]


def test_a_store_that_does_not_answer_an_object_costs_one_wait(hostile: list[str]
                                                                ) -> None:
    """Budget 1 s: the first object is given up after 2 s (``answer_seconds``), the
    store marked, the other two fail at once; one line each, exit 2.  Old code: 30 s
    (obstore's request timeout) per request, two per object, the store never marked
    for a trickled or stalled body (about 3 minutes here)."""
    urls = [f"s3://b/p/t{i}.jsonl" for i in range(3)]
    started = time.monotonic()
    result = within(15, lambda: run("audit", *urls, "-q", "-j", "1"))
    took = time.monotonic() - started
    assert result.exit_code == 2, result.stdout
    lines = result.stdout.splitlines()
    first = "cannot read" if "GET /b/p/t0.jsonl" in hostile else "cannot open"
    assert lines[0] == (f"error: {urls[0]}: {first}: no answer within 2 s (the store's "
                        "budget is set by COMPACTION_AUDIT_STORE_TIMEOUT)")
    assert lines[1:] == [
        f"error: {url}: cannot open: the store did not answer: no answer within 2 s "
        "(the store's budget is set by COMPACTION_AUDIT_STORE_TIMEOUT)" for url in urls[1:]
    ] + ["exit 2: 3 trace(s), 0 reach --fail-on error, 3 unreadable"]
    assert 1.9 < took < 10, took  # one wait of 2 s, then none
    assert hostile in (["HEAD /b/p/t0.jsonl"], ["HEAD /b/p/t0.jsonl", "GET /b/p/t0.jsonl"])


def test_a_body_error_marks_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """obstore's own request timeout (``AWS_TIMEOUT``, 0.5 s) ends a trickled body first
    when the budget is long: its "request or response body error" marks the store
    too (old code: each object paid the request timeout again)."""
    gen = _serve("trickle", monkeypatch)
    seen = next(gen)
    monkeypatch.setenv(remote.TIMEOUT_ENV, "20")
    monkeypatch.setenv("AWS_TIMEOUT", "500ms")
    try:
        result = within(15, lambda: run("audit", "s3://b/p/a.jsonl", "s3://b/p/b.jsonl",
                                         "-q", "-j", "1"))
    finally:
        next(gen, None)
    assert result.exit_code == 2, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("error: s3://b/p/a.jsonl: cannot read: Generic S3 error: ")
    assert lines[0].endswith("request or response body error")
    assert lines[1].startswith("error: s3://b/p/b.jsonl: cannot open: the store did not "
                               "answer: Generic S3 error: ")
    assert seen[0] == "HEAD /b/p/a.jsonl"  # then obstore's GET and its retries
    assert set(seen[1:]) == {"GET /b/p/a.jsonl"}, seen  # b is never asked


def test_what_counts_as_not_answering_a_read() -> None:
    assert remote.unanswered(OSError("Generic S3 error: HTTP error: request or response "
                                     "body error"))
    assert remote.unanswered(remote.NoAnswer("no answer within 2 s"))
    assert not remote.unanswered(remote._NotAsked("the store did not answer: error "
                                                  "sending request"))
    assert not remote.unanswered(FileNotFoundError("Object at location k not found: "
                                                   "retry_timeout: 60s"))
