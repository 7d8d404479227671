"""An S3 listing names each object by its real key, and its botocore requests keep
the store's time budget (issue 11, class 6).

obstore strips a key's leading or trailing ``/``: a lone ``/x.jsonl`` (with no
``x.jsonl`` beside it) or an object ``m.jsonl/`` holding data was listed as
``x.jsonl`` / ``m.jsonl`` and reported as "no such object" under that name, not the
real key.  And the botocore listing (every key exactly) waited 30 s per request and 6
attempts whatever ``COMPACTION_AUDIT_STORE_TIMEOUT`` said.

Against moto's S3 server on 127.0.0.1 (tests/s3server.py); skips without moto or
obstore."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server

LEADING = ("error: s3://lone//x.jsonl: cannot open: its key has a leading '/', which "
           "obstore cannot read as this object (rename it)")
TRAILING = ("error: s3://mark/runs/m.jsonl/: cannot open: its key has a trailing '/', "
            "which obstore cannot read as this object (rename it)")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """Bucket ``lone``: only ``/x.jsonl``.  Bucket ``mark``: ``runs/ok.jsonl`` (clean),
    ``runs/m.jsonl/`` holding a drift trace, and ``runs/empty.jsonl/``, an empty
    folder marker (a "directory", no trace)."""
    tmp = tmp_path_factory.mktemp("listing")
    clean = dump(clean_records(), tmp / "clean.jsonl").read_bytes()
    drift = dump(drift_records(), tmp / "drift.jsonl").read_bytes()
    with s3_server() as server:
        server.bucket("lone")
        server.client.put_object(Bucket="lone", Key="/x.jsonl", Body=drift)
        server.bucket("mark")
        for key, body in [("runs/ok.jsonl", clean), ("runs/m.jsonl/", drift),
                          ("runs/empty.jsonl/", b"")]:
            server.client.put_object(Bucket="mark", Key=key, Body=body)
        yield server


def test_a_lone_key_with_a_leading_slash_is_named_by_its_key(s3: S3) -> None:
    result = run("audit", "s3://lone/", "-q", "-j", "1")
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""  # its one trace unreadable: the error on stderr (adv84)
    assert result.stderr.splitlines() == [  # old: s3://lone/x.jsonl: no such object
        LEADING.replace("error: ", "compaction-audit: ", 1)]


@pytest.mark.parametrize("url", ["s3://mark/runs/", "s3://mark/runs/*.jsonl",
                                 "s3://mark/**/*.jsonl"])
def test_an_object_named_like_a_folder_is_named_by_its_key(s3: S3, url: str) -> None:
    """``m.jsonl/`` holds data: an object obstore cannot read, reported under its key;
    the empty marker ``empty.jsonl/`` is a folder, not reported."""
    result = run("audit", url, "-q", "-j", "1")
    assert result.exit_code == 2, result.stderr
    assert result.stdout.splitlines() == [
        "s3://mark/runs/ok.jsonl: PASS: 0 error(s), 0 warning(s), 0 info; this loop can "
        "drift but not invert",
        TRAILING, "exit 2: 2 trace(s), 0 reach --fail-on error, 1 unreadable"]


def test_without_botocore_the_stripped_key_reads_no_other_object(
        s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit left without botocore (docs/security.md): obstore lists the key as
    ``x.jsonl``, an object that does not exist; it fails, never passes."""
    monkeypatch.setitem(sys.modules, "botocore.session", None)  # import raises ImportError
    result = run("audit", "s3://lone/", "-q", "-j", "1")
    assert result.exit_code == 2, result.stderr
    assert result.stdout == ""  # its one trace unreadable: the error on stderr (adv84)
    assert result.stderr.splitlines() == ["compaction-audit: s3://lone/x.jsonl: cannot "
                                          "open: no such object"]


@contextmanager
def _silent_store(budget: str) -> Iterator[dict[str, str]]:
    """The environment of an S3 endpoint on 127.0.0.1 that accepts connections (in the
    kernel's queue) and never answers, with a retry budget of ``budget`` seconds."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        yield {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
               "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true",
               "AWS_EC2_METADATA_DISABLED": "true", "COMPACTION_AUDIT_STORE_TIMEOUT": budget}


SILENT_LISTING = """
import sys, time
from compaction_audit.io.object_keys import list_s3_keys
start = time.monotonic()
try:
    list_s3_keys("b", "runs/", 5)
except Exception as exc:
    print(f"{time.monotonic() - start:.1f} {type(exc).__name__}")
"""


def test_the_botocore_listing_keeps_the_store_timeout(tmp_path: Path) -> None:
    """An endpoint that accepts the connection and never answers: with a budget of
    1 s the listing gives up in seconds (old code: 30 s per attempt, 6 attempts; the
    bound leaves room for importing botocore on a loaded machine)."""
    pytest.importorskip("botocore")
    with _silent_store("1") as store_env:
        env = {**os.environ, **store_env, "PYTHONPATH": str(Path(__file__).parents[1])}
        started = time.monotonic()
        try:
            out = subprocess.run([sys.executable, "-c", SILENT_LISTING], env=env, timeout=25,
                                 capture_output=True, text=True, cwd=tmp_path).stdout
        except subprocess.TimeoutExpired:
            out = f"{time.monotonic() - started:.0f} (still waiting)"
    seconds, _, error = out.strip().partition(" ")
    assert error == "ReadTimeoutError" and float(seconds) < 12, out  # old: 25 s and still waiting


def test_a_listing_without_answer_marks_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The botocore listing that got no answer counts as the store's silence: the next
    request to that bucket fails at once with its error, as after obstore's."""
    pytest.importorskip("botocore")
    from compaction_audit.errors import LogError, UsageError
    from compaction_audit.io import remote

    with _silent_store("0.5") as store_env:
        for key, value in store_env.items():
            monkeypatch.setenv(key, value)
        remote.store_for.cache_clear()
        remote._unanswered.clear()
        try:
            with pytest.raises(UsageError, match=r"^s3://b/runs/: cannot list: Read timeout "
                                                 r"on endpoint URL"):
                remote.list_objects("s3://b/runs/")
            started = time.monotonic()
            with pytest.raises(LogError, match=r"^s3://b/x.jsonl: cannot open: the store did "
                                               r"not answer: Read timeout on endpoint URL"):
                remote.open_url("s3://b/x.jsonl")
            assert time.monotonic() - started < 0.5
        finally:
            remote.store_for.cache_clear()
            remote._unanswered.clear()


def test_an_answer_whose_dump_names_the_budget_is_an_answer() -> None:
    """obstore's ``Debug source`` dump names ``retry_timeout`` whatever the error: a 403
    (as a HEAD of a name past a bad GCS key can get) is an answer, not silence."""
    from compaction_audit.io import remote

    answer = Exception("The operation lacked the necessary privileges to complete for path "
                       "k: Server returned non-2xx status code: 403 Forbidden: \n\nDebug "
                       "source:\nPermissionDenied { retry_timeout: 60s }")
    assert not remote.unanswered(answer)
    assert remote.unanswered(Exception("Error performing HEAD in 4s, max_retries: 5, "
                                       "retry_timeout: 3s - HTTP error: error sending "
                                       "request\n\nDebug source:\n..."))
