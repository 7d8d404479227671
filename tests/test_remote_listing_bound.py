"""An S3 listing is bounded in time and in keys (issue 11, adv14 F4, F5).

botocore's read timeout is per socket read: an endpoint that trickles its
ListObjectsV2 answer one byte at a time was waited for forever (F4), and one that
answers every page as truncated with a fresh continuation token was listed forever,
every key kept in memory (F5).  Against a hostile endpoint on 127.0.0.1 (a thread of
this process) and moto's S3 server (tests/s3server.py); skips without botocore."""

from __future__ import annotations

import http.server
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from compaction_audit.errors import UsageError
from compaction_audit.io import object_keys, remote
from tests.gate_app import run
from tests.hostile_store import serve, within
from tests.s3server import S3, s3_server

pytest.importorskip("botocore", reason="botocore is not installed (the [cloud] extra)")
pytest.importorskip("obstore", reason="obstore is not installed (the [cloud] extra)")


def _page(keys: int) -> bytes:
    """A ListObjectsV2 page of ``keys`` keys, truncated, with a fresh token."""
    token = uuid.uuid4().hex
    contents = "".join(f"<Contents><Key>p/{token}-{i}.jsonl</Key><Size>10</Size>"
                       "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>"
                       for i in range(keys))
    return ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.'
            'amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p/</Prefix>'
            f"<KeyCount>{keys}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true"
            f"</IsTruncated><NextContinuationToken>{token}</NextContinuationToken>"
            f"{contents}</ListBucketResult>").encode()


class _Hostile(http.server.BaseHTTPRequestHandler):
    """``trickle``: a page one byte every 0.2 s (each read well within the 1 s read
    timeout; 40 s for the page); ``endless``: 1,000 keys a page, always truncated;
    ``empty``: no key a page, always truncated."""

    protocol_version = "HTTP/1.1"
    mode = "endless"

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = _page(0 if self.mode == "empty" else 1000)
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            if self.mode != "trickle":
                self.wfile.write(body)
                return
            for byte in body[:200]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:  # the client gave up
            pass


@pytest.fixture(params=["trickle", "endless", "empty"])
def hostile(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[str]:
    handler = type("Handler", (_Hostile,), {"mode": request.param})
    for _ in serve(handler, monkeypatch):
        yield request.param


def test_a_listing_ends_within_its_budget(hostile: str) -> None:
    """Budget 1 s: the listing gives up after 2 s (``listing_seconds``), whatever the
    endpoint; old code: never ended (trickle: each read within the read timeout;
    endless, empty: a fresh token each page).  The cap is out of reach here."""
    started = time.monotonic()
    error = within(15, lambda: remote.list_objects("s3://b/p/"))
    took = time.monotonic() - started
    assert isinstance(error, UsageError), error
    assert str(error).startswith("s3://b/p/: cannot list: not done within 2 s ("), error
    assert str(error).endswith(" keys listed; the store's budget is set by "
                               "COMPACTION_AUDIT_STORE_TIMEOUT): list a narrower prefix")
    assert 1.9 < took < 10, took
    if hostile != "endless":
        assert "(0 keys listed" in str(error)


def test_a_listing_stops_at_its_key_cap(hostile: str, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """With the cap at 2,500 keys, the endless listing stops at the third page of
    1,000: one line, exit 2 (old code: listed forever, 197 MB and growing)."""
    if hostile != "endless":
        pytest.skip("only the endless endpoint lists keys")
    monkeypatch.setattr(object_keys, "MAX_LISTED_KEYS", 2500)
    monkeypatch.setenv(remote.TIMEOUT_ENV, "20")
    result = within(15, lambda: run("audit", "s3://b/p/", "-q", "-j", "1"))
    assert result.exit_code == 2, result.stdout
    assert (result.stdout + result.stderr).strip().splitlines() == [
        "compaction-audit: s3://b/p/: cannot list: more than 2,500 keys under this prefix "
        "(MAX_LISTED_KEYS): list a narrower prefix"]


def test_the_obstore_listing_is_bounded_alike(hostile: str, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """Without botocore obstore lists (so it does ``gs://`` and ``az://``): the same
    cap on keys, and the same time checked between pages (its own request timeout
    bounds one page); old code: listed forever."""
    if hostile == "trickle":
        pytest.skip("obstore's request timeout bounds one page (AWS_TIMEOUT)")
    monkeypatch.setitem(sys.modules, "botocore.session", None)  # import raises ImportError
    monkeypatch.setattr(object_keys, "MAX_LISTED_KEYS", 2500)
    error = within(15, lambda: remote.list_objects("s3://b/p/"))
    assert isinstance(error, UsageError), error
    assert str(error) == (
        "s3://b/p/: cannot list: more than 2,500 keys under this prefix (MAX_LISTED_KEYS): "
        "list a narrower prefix" if hostile == "endless" else
        "s3://b/p/: cannot list: not done within 2 s (0 keys listed; the store's budget is "
        "set by COMPACTION_AUDIT_STORE_TIMEOUT): list a narrower prefix")


@pytest.fixture(scope="module")
def s3() -> Iterator[S3]:
    """Bucket ``many``: three objects under ``runs/``."""
    with s3_server() as server:
        server.bucket("many")
        for name in ("a", "b", "c"):
            server.client.put_object(Bucket="many", Key=f"runs/{name}.jsonl", Body=b"{}\n")
        yield server


def test_a_real_store_is_capped_alike(s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bucket with more keys under the prefix than the cap (2 here, 1,000,000 by
    default) fails the same way, before any trace is read."""
    monkeypatch.setattr(object_keys, "MAX_LISTED_KEYS", 2)
    with pytest.raises(UsageError, match=r"^s3://many/runs/: cannot list: more than 2 keys "
                                         r"under this prefix \(MAX_LISTED_KEYS\)"):
        remote.list_objects("s3://many/runs/")
    monkeypatch.setattr(object_keys, "MAX_LISTED_KEYS", 3)
    assert [u for u, _ in remote.list_objects("s3://many/runs/")] == [
        "s3://many/runs/a.jsonl", "s3://many/runs/b.jsonl", "s3://many/runs/c.jsonl"]
