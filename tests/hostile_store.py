"""A hostile object store for tests: an HTTP handler class served on 127.0.0.1 by a
thread of this process, obstore and botocore pointed at it through the environment
(test credentials, plain HTTP, a store budget of 1 s), and a time limit for a call
that the old code never ended."""

from __future__ import annotations

import http.server
import socketserver
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from compaction_audit.io import remote

ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
       "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
       "AWS_EC2_METADATA_DISABLED": "true", remote.TIMEOUT_ENV: "1"}


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve(handler: type[http.server.BaseHTTPRequestHandler],
          monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Serve ``handler`` while the caller's fixture yields (``yield from``), with the
    store's caches cleared before and after."""
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}")
    remote.store_for.cache_clear()
    remote._unanswered.clear()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        remote.store_for.cache_clear()
        remote._unanswered.clear()


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception, failing the test when it takes longer than
    ``seconds`` (the call is left in a daemon thread)."""
    out: list[Any] = []

    def target() -> None:
        try:
            out.append(call())
        except BaseException as exc:
            out.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s"
    return out[0]
