"""Object keys obstore cannot read (issue 11, class 6, adv10 F8): one such key under a
prefix made the whole listing fail, so no trace there was audited.  Now every
well-formed trace is audited and each such key is an unreadable trace, named escaped,
counted, exit 2 (docs/ci.md, "Exit codes"); no key reads another object.

Against moto's S3 server on 127.0.0.1 (tests/s3server.py); skips without moto or
obstore."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from compaction_audit.io.object_keys import key_problem
from tests import ci_commands
from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server

HOSTILE = {  # key -> what key_problem says
    "runs/a/../clean.jsonl": "a '.' or '..' segment",  # would resolve to runs/clean.jsonl
    "runs/./x.jsonl": "a '.' or '..' segment",
    "runs/..": "a '.' or '..' segment",  # no trace name: not selected
    "runs/c\x01.jsonl": "a control character",
    "runs/e\x1b]0;title\x07.jsonl": "a control character",
    "runs/g\r::error title=x::y.jsonl": "a control character",
    "runs/h\x7f.jsonl": "a control character",
    "runs//empty.jsonl": "an empty segment ('//')",
    "runs/marker.jsonl/": "a trailing '/'",  # holds data: an object, not a folder marker
}
BAD = sorted(k for k in HOSTILE if k.endswith((".jsonl", ".jsonl/")))  # selected, unreadable
GOOD = ["runs/%2e%2e/drift.jsonl", "runs/clean.jsonl", "runs/z/drift.jsonl"]


def test_the_rules_are_obstores() -> None:
    """key_problem is None exactly for the keys obstore lists back unchanged."""
    from obstore.store import MemoryStore

    store = MemoryStore()
    keys = [f"a/b{chr(c)}c.jsonl" for c in range(0x100)] + [
        "/x", "x/", "a//b", ".", "..", "a/./b", "a/../b", "./a", "a/..", "...", "a/.../b",
        ".a/b", "a/.b", "%2e%2e/x", "a\\b", "a/b#c?d", "\u2028x", "a/\u0085"]
    for key in keys:
        try:
            store.put(key, b"x")
        except ValueError:
            listed = None
        else:
            listed = [m["path"] for m in store.list().collect()]
            store.delete(listed[0])
        assert (key_problem(key) is None) == (listed == [key]), (key, listed)
    assert [key_problem(k) for k in HOSTILE] == list(HOSTILE.values())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """Bucket ``keys``: GOOD traces (clean or drift, so a read of the wrong object
    shows) and every HOSTILE key (holding a clean trace); bucket ``root``: ``x.jsonl``
    and ``/x.jsonl``, which obstore lists as the same path."""
    tmp = tmp_path_factory.mktemp("keys")
    clean = dump(clean_records(), tmp / "clean.jsonl").read_bytes()
    drift = dump(drift_records(), tmp / "drift.jsonl").read_bytes()
    with s3_server() as s3:
        s3.bucket("keys")
        for key in [*GOOD, *HOSTILE]:
            s3.client.put_object(Bucket="keys", Key=key,
                                 Body=drift if "drift" in key else clean)
        s3.bucket("root")
        s3.client.put_object(Bucket="root", Key="x.jsonl", Body=clean)
        s3.client.put_object(Bucket="root", Key="/x.jsonl", Body=drift)
        yield s3


def _stored(s3: S3, bucket: str) -> list[str]:
    return [o["Key"] for o in s3.client.list_objects_v2(Bucket=bucket)["Contents"]]


@pytest.mark.parametrize("url", ["s3://keys/runs/", "s3://keys/runs/**/*.jsonl"])
def test_good_traces_are_audited_and_bad_keys_reported(hostile: S3, url: str) -> None:
    assert sorted(_stored(hostile, "keys")) == sorted([*GOOD, *HOSTILE])  # as written
    result = run("audit", url, "-f", "json", "-j", "1")
    assert result.exit_code == 2, result.stderr  # unreadable traces: exit 2, not 1
    doc = json.loads(result.stdout)
    assert [s["path"] for s in doc["sessions"]] == [f"s3://keys/{k}" for k in GOOD]
    assert [s["verdict"].split(":")[0] for s in doc["sessions"]] == ["FAIL", "PASS", "FAIL"]
    assert [e["path"] for e in doc["errors"]] == [f"s3://keys/{k}" for k in BAD]
    assert [e["message"] for e in doc["errors"]] == [
        f"cannot open: its key has {HOSTILE[k]}, which obstore cannot read as this "
        "object (rename it)" for k in BAD]
    assert doc["summary"]["traces"] == len(GOOD) + len(BAD)
    assert doc["summary"]["unreadable"] == len(BAD) == 8


def test_bad_keys_are_one_escaped_line_each(hostile: S3) -> None:
    result = run("audit", "s3://keys/runs/", "-q", "-j", "1")
    assert result.exit_code == 2
    out = result.stdout.splitlines()
    errors = [line for line in out if line.startswith("error: ")]
    assert errors[:2] == [  # sorted by key: '.' before '/'
        "error: s3://keys/runs/./x.jsonl: cannot open: its key has a '.' or '..' segment, "
        "which obstore cannot read as this object (rename it)",
        "error: s3://keys/runs//empty.jsonl: cannot open: its key has an empty segment "
        "('//'), which obstore cannot read as this object (rename it)"]
    assert [e.split(": cannot open")[0] for e in errors[2:]] == [
        "error: s3://keys/runs/a/../clean.jsonl", "error: s3://keys/runs/c\\x01.jsonl",
        "error: s3://keys/runs/e\\x1b]0;title\\x07.jsonl",
        "error: s3://keys/runs/g\\x0d::error title=x::y.jsonl",  # CR escaped: no line start
        "error: s3://keys/runs/h\\x7f.jsonl", "error: s3://keys/runs/marker.jsonl/"]
    assert out[-1] == "exit 2: 11 trace(s), 2 reach --fail-on error, 8 unreadable"
    assert ci_commands.clean(result.stdout) == []
    assert ci_commands.clean(result.stderr) == []


def test_a_key_never_reads_another_object(hostile: S3) -> None:
    # 'a/../clean.jsonl' is refused, not read as 'clean.jsonl'; '%2e%2e' is no '..'
    for url, says in [("s3://keys/runs/a/../clean.jsonl", "a '.' or '..' segment"),
                      ("s3://root//x.jsonl", "a leading '/'")]:
        result = run("audit", url)
        assert result.exit_code == 2
        assert result.stderr == (f"compaction-audit: {url}: cannot open: its key has "
                                 f"{says}, which obstore cannot read as this object "
                                 "(rename it)\n")
    result = run("audit", "s3://keys/runs/%2e%2e/drift.jsonl", "-q")
    assert result.exit_code == 1  # its own content (drift), not a clean trace


def test_a_key_obstore_would_strip_is_reported(hostile: S3) -> None:
    # obstore lists '/x.jsonl' as 'x.jsonl': the drift trace was never audited
    assert sorted(_stored(hostile, "root")) == ["/x.jsonl", "x.jsonl"]
    result = run("audit", "s3://root/", "-q", "-j", "1")
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [
        "s3://root/x.jsonl: PASS: 0 error(s), 0 warning(s), 0 info; this loop can drift "
        "but not invert",
        "error: s3://root//x.jsonl: cannot open: its key has a leading '/', which obstore "
        "cannot read as this object (rename it)",
        "exit 2: 2 trace(s), 0 reach --fail-on error, 1 unreadable"]


def test_without_botocore_the_listing_error_is_one_line(
        hostile: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore.session", None)  # import raises ImportError
    result = run("audit", "s3://keys/runs/")
    assert result.exit_code == 2
    assert result.stderr == ("compaction-audit: listing this prefix needs botocore: pip "
                             "install 'compaction-audit[cloud]' (it installs botocore)\n")
