"""Traces in object storage (issue 14, item 5): URL discovery, reading through the same
bounded line reader as files, the fleet's plan, and the one-line errors.

The S3 tests run against moto's server on 127.0.0.1 (tests/s3server.py) and skip,
saying why, without moto or obstore."""

from __future__ import annotations

import gzip
import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard

from compaction_audit.discover import find_traces, names_one_file
from compaction_audit.discover_urls import is_prefix, matches, names_one_object
from compaction_audit.fleet.plan import BASE_MEMORY, largest_first, memory_needed
from compaction_audit.fleet.ray_engine import size_class
from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server

SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")


@pytest.mark.parametrize(("pattern", "key", "selected"), [
    ("runs/*.jsonl", "runs/a.jsonl", True),
    ("runs/*.jsonl", "runs/x/a.jsonl", False),  # * stays within a segment
    ("runs/**/*.jsonl", "runs/a.jsonl", True),  # ** is zero segments too
    ("runs/**/*.jsonl", "runs/x/y/a.jsonl", True),
    ("runs/**/*.jsonl", "runs/.x/a.jsonl", False),  # ** never enters a hidden segment
    ("runs/.x/*.jsonl", "runs/.x/a.jsonl", True),  # unless the pattern names it
    ("runs/*", "runs/.a.jsonl", False),  # * does not match a hidden name
    ("runs/*", "runs/notes.txt", True),  # a whole match is kept whatever its suffix
    ("runs/*", "runs/x/a.jsonl.gz", True),  # a matched "directory" is searched
    ("runs/*", "runs/x/notes.txt", False),  # ... for traces only
    ("runs/*", "runs/x/.h/a.jsonl", False),  # ... skipping hidden directories
    ("runs/2026-0[1-3]/*.jsonl", "runs/2026-02/a.jsonl", True),
    ("runs/2026-0[1-3]/*.jsonl", "runs/2026-04/a.jsonl", False),
    ("r?ns/a.jsonl", "runs/a.jsonl", True),
])
def test_key_patterns_follow_the_local_rules(pattern: str, key: str, selected: bool) -> None:
    assert matches(pattern, key, SUFFIXES) is selected


def test_what_a_url_names() -> None:
    assert is_prefix("s3://b/runs/") and is_prefix("s3://b") and is_prefix("gs://b/")
    assert not is_prefix("s3://b/runs") and not is_prefix("s3://b/runs/*.jsonl")
    assert names_one_object("az://c/runs/a.jsonl") and not names_one_object("s3://b/r/")
    assert names_one_file(["s3://b/runs/a.jsonl"])
    assert not names_one_file(["s3://b/runs/"])
    assert not names_one_file(["s3://b/runs/*.jsonl"])


def test_a_scheme_in_capitals_is_still_a_url() -> None:
    # RFC 3986: schemes are case-insensitive; S3://b/k was read as the local S3:/b/k
    from compaction_audit.io.remote import is_url, split_url
    assert is_url("S3://b/runs/a.jsonl") and is_url("Gs://b/a.jsonl")
    assert split_url("AZ://c/runs/a.jsonl") == ("az", "c", "runs/a.jsonl")
    assert names_one_file(["S3://b/runs/a.jsonl"]) and is_prefix("S3://b/runs/")
    assert not is_url("s4://b/a.jsonl") and not is_url("S3:/b/a.jsonl")


def test_memory_asked_follows_the_size() -> None:
    mib = 1 << 20
    assert memory_needed("a.jsonl", 1000) == BASE_MEMORY  # the least a worker asks
    assert memory_needed("a.jsonl", 32 * mib) == BASE_MEMORY  # 256 MiB + 8 x 32 MiB
    assert memory_needed("a.jsonl", 32 * mib + 1) == BASE_MEMORY + 8
    assert memory_needed("a.jsonl.gz", 10 * mib) == 256 * mib + 800 * mib  # 10x compressed
    assert memory_needed("s3://b/a.jsonl", -1) == BASE_MEMORY  # unknown size
    assert size_class(BASE_MEMORY) == BASE_MEMORY
    assert size_class(BASE_MEMORY + 1) == 2 * BASE_MEMORY
    assert size_class(5 * BASE_MEMORY) == 8 * BASE_MEMORY
    assert size_class(5 * BASE_MEMORY, largest_node=3 * BASE_MEMORY) == 3 * BASE_MEMORY
    sizes = {"a": 10, "b": 30, "c": 10, "d": 20}
    assert largest_first(["a", "b", "c", "d", "e"], sizes) == [1, 3, 0, 2, 4]


def _tree(root: Path) -> None:
    """runs/{a,b/c} with plain, .gz and .zst traces, a hidden directory, a text file."""
    (root / "runs" / "a").mkdir(parents=True)
    (root / "runs" / "b" / "c").mkdir(parents=True)
    (root / "runs" / ".tmp").mkdir(parents=True)
    dump(drift_records(), root / "runs" / "a" / "drift.jsonl")
    plain = dump(clean_records(), root / "clean.jsonl").read_bytes()
    (root / "clean.jsonl").unlink()
    (root / "runs" / "a" / "clean.jsonl.gz").write_bytes(gzip.compress(plain, mtime=0))
    (root / "runs" / "b" / "c" / "clean.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(plain))
    dump(clean_records(), root / "runs" / ".tmp" / "hidden.jsonl")
    (root / "runs" / "notes.txt").write_text("not a trace\n")
    (root / "brackets").mkdir()  # a key named like a pattern (usertest74 F1)
    dump(clean_records(), root / "brackets" / "run[1].jsonl")
    dump(drift_records(), root / "brackets" / "run1.jsonl")  # which its brackets match
    (root / "big").mkdir()  # a 3 KB line on line 2
    long = dump([*clean_records()[:1], {"type": "note", "text": "x" * 3000},
                 *clean_records()[1:]], root / "big" / "long.jsonl").read_bytes()
    (root / "big" / "long.jsonl.gz").write_bytes(gzip.compress(long, mtime=0))
    (root / "big" / "long.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(long))


@pytest.fixture(scope="module")
def bucket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[S3, Path]]:
    """The tree of :func:`_tree` under ``s3__/traces`` (local) and ``s3://traces``:
    the same length, so reports compare byte for byte once the prefix is mapped."""
    root = tmp_path_factory.mktemp("remote")
    _tree(root / "s3__" / "traces")
    with s3_server() as s3:
        s3.bucket("traces")
        s3.upload(root / "s3__" / "traces", "traces")
        yield s3, root


def _local(root: Path, text: str) -> str:
    return text.replace("s3__/traces/", "s3://traces/")


@pytest.mark.parametrize("arg", ["runs/", "runs/*", "runs/**/*.jsonl*", "runs/a/drift.jsonl",
                                 "brackets/run[1].jsonl"])
def test_urls_select_what_the_same_local_paths_select(
        bucket: tuple[S3, Path], monkeypatch: pytest.MonkeyPatch, arg: str) -> None:
    _, root = bucket
    monkeypatch.chdir(root)
    local = find_traces(["s3__/traces/" + arg.rstrip("/")]).traces
    remote = find_traces(["s3://traces/" + arg])
    assert [_local(root, p) for p in local] == remote.traces
    assert remote.traces and not any(".tmp" in t for t in remote.traces)
    if arg.startswith("brackets/"):  # the key named by the pattern, and what it matches
        assert remote.traces == ["s3://traces/brackets/run[1].jsonl",  # as the local
                                 "s3://traces/brackets/run1.jsonl"]  # rule orders them
    # the hidden "directory" passed over is said, as a directory search says it
    # (adv27 F4: a failing trace there passed without a word)
    said = find_traces(["s3__/traces/" + arg.rstrip("/")]).hidden
    assert remote.hidden == [_local(root, p) for p in said]
    if arg in ("runs/", "runs/**/*.jsonl*"):
        assert remote.hidden == ["s3://traces/runs/.tmp"]
    if arg == "runs/*":
        assert "s3://traces/runs/notes.txt" in remote.traces
    if arg.startswith("runs/") and arg != "runs/a/drift.jsonl":  # listed: sizes known
        assert remote.sizes["s3://traces/runs/a/drift.jsonl"] == (
            root / "s3__/traces/runs/a/drift.jsonl").stat().st_size


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_remote_audit_equals_the_local_one(bucket: tuple[S3, Path],
                                             monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    _, root = bucket
    monkeypatch.chdir(root)
    local = run("audit", "s3__/traces/runs", "-f", fmt, "-j", "1")
    remote = run("audit", "s3://traces/runs/", "-f", fmt, "-j", "1")
    assert local.exit_code == remote.exit_code == 1  # drift.jsonl fails the gate
    assert _local(root, local.stdout) == remote.stdout
    if fmt == "json":
        doc = json.loads(remote.stdout)
        assert [s["path"] for s in doc["sessions"]] == [
            "s3://traces/runs/a/clean.jsonl.gz", "s3://traces/runs/a/drift.jsonl",
            "s3://traces/runs/b/c/clean.jsonl.zst"]


def test_the_input_limits_hold_for_objects(bucket: tuple[S3, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _, root = bucket
    monkeypatch.chdir(root)
    for name in ("big/long.jsonl", "big/long.jsonl.gz", "big/long.jsonl.zst"):
        for limit, says in (("max_line_bytes=2048", "2: line longer than 2048 bytes"),
                            ("max_input_bytes=1024", "2: input longer than 1024 bytes")):
            local = run("audit", f"s3__/traces/{name}", "--set", limit)
            remote = run("audit", f"s3://traces/{name}", "--set", limit)
            assert local.exit_code == remote.exit_code == 2
            assert remote.stderr.startswith(f"compaction-audit: s3://traces/{name}:{says}")
            assert _local(root, local.stderr) == remote.stderr


def test_a_missing_object_is_one_line(bucket: tuple[S3, Path]) -> None:
    result = run("audit", "s3://traces/runs/a")
    assert result.exit_code == 2
    assert result.stderr == ("compaction-audit: s3://traces/runs/a: cannot open: no such "
                             "object (a prefix? end the URL with '/' to audit the traces "
                             "under it)\n")
    result = run("audit", "s3://traces/nothing/")
    assert result.exit_code == 2
    assert result.stderr.startswith("compaction-audit: no trace files (*.jsonl, ")
    assert result.stderr.endswith(" under prefix 's3://traces/nothing/'\n")


def test_a_pattern_in_a_missing_bucket_is_one_line(bucket: tuple[S3, Path]) -> None:
    result = run("audit", "s3://no-such-bucket/runs/**/*.jsonl")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "compaction-audit: s3://no-such-bucket/runs/: cannot list: ")
    assert "NoSuchBucket" in result.stderr or "404" in result.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_storage_is_one_line_and_exit_2(bucket: tuple[S3, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.io.remote import store_for

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_closed_port()}")
    store_for.cache_clear()
    try:
        result = run("audit", "s3://traces/runs/")
    finally:
        store_for.cache_clear()
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("compaction-audit: s3://traces/runs/: cannot list: ")
    assert "AWS_SECRET" not in result.stderr and "testing" not in result.stderr


def test_missing_extras_are_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    result = run("audit", "sample_logs", "--engine", "ray")
    assert result.exit_code == 2
    assert result.stderr == ("compaction-audit: --engine ray needs: pip install "
                             "'compaction-audit[ray]'\n")
    monkeypatch.setitem(sys.modules, "obstore", None)
    result = run("audit", "gs://bucket/runs/")
    assert result.exit_code == 2  # adv81 #6: the prefix named, as an object's error is
    assert result.stderr == ("compaction-audit: gs://bucket/runs/: cannot list: object "
                             "storage URLs need: pip install 'compaction-audit[cloud]'\n")


@pytest.mark.parametrize(("arg", "shown", "scheme"), [
    ("https://ci-bot:ghp_TOKEN@example.invalid/run/x.jsonl",
     "https://***@example.invalid/run/x.jsonl", "https"),  # shown as typed (usertest33)
    ("file:///tmp/nowhere/x.jsonl", "file:///tmp/nowhere/x.jsonl", "file"),
])
def test_a_url_of_another_scheme_is_refused_with_its_password_masked(
        arg: str, shown: str, scheme: str) -> None:
    """adv81 #4: an https:// or file:// URL was read as a local path and echoed whole
    ("cannot open: No such file or directory"), a token in it included."""
    for args in (["audit", arg], ["trace", arg, "v1"], ["convert", arg, "-o", "-"]):
        result = run(*args)
        assert result.exit_code == 2, args
        assert "TOKEN" not in result.stderr
        where, _, said = result.stderr.partition(f": a {scheme}:// URL is not read")
        assert said == (": give a local file's path, or an s3://, gs:// or az:// URL\n")
        # audit gets the path with its "//" made one: shown as typed all the same
        assert where == f"compaction-audit: {shown}", args


def test_ray_address_needs_the_ray_engine() -> None:
    result = run("audit", "sample_logs", "--ray-address", "auto")
    assert result.exit_code == 2
    assert result.stderr == "compaction-audit: --ray-address applies to --engine ray\n"


def test_an_object_replaced_while_read_is_one_error(bucket: tuple[S3, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """adv66 #1: nothing pinned the version of an object read in 8 MiB ranges, so one
    replaced after its first range was audited as a trace spliced from two versions
    (exit 1, no word).  Each range now asks for the version its HEAD saw (If-Match)."""
    from compaction_audit.io import remote

    s3, _ = bucket
    monkeypatch.setattr(remote, "BUFFER_BYTES", 1024)  # several ranges of a small trace
    body = (Path(__file__).parent.parent / "sample_logs" / "handwritten.jsonl").read_bytes()
    s3.client.put_object(Bucket="traces", Key="swap/t.jsonl", Body=body)
    obstore = remote._obstore()
    real = obstore.get
    calls: list[int] = []

    def replaced_after_the_first(store: object, key: str, **kwargs: object) -> object:
        if calls == [1]:  # the second range: the object was replaced meanwhile
            s3.client.put_object(Bucket="traces", Key="swap/t.jsonl",
                                 Body=body.replace(b'"tokens": 4', b'"tokens": 9'))
        calls.append(1)
        return real(store, key, **kwargs)

    monkeypatch.setattr(obstore, "get", replaced_after_the_first)
    result = run("audit", "s3://traces/swap/t.jsonl")
    assert result.exit_code == 2
    assert "the object changed while it was read" in result.stderr
    assert result.stderr.count("\n") == 1
    monkeypatch.setattr(obstore, "get", real)  # unchanged: read whole, as before
    assert run("audit", "s3://traces/swap/t.jsonl", "-q").exit_code == 1
