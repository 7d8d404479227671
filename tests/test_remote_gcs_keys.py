"""A ``gs://`` prefix holding a key obstore cannot parse (issue 11, class 6): the whole
listing used to fail (``cannot list: Encountered object with invalid path``, exit 2, no
trace audited).  Now the listing goes on past each such key (``start-after``), each
is one unreadable trace naming its key (escaped) and the range of keys its failing
page kept from view, exit 2, and every trace listed is audited.

GCS is listed through its XML API, which is S3's ListObjectsV2: moto's S3 server on
127.0.0.1 stands in for it (``gcs_base_url`` of a service-account file, OAuth off,
objects public-read so that the unsigned GETs are answered).  Skips without moto or
obstore."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction_audit.io.key_gaps import bad_key, next_nameable
from compaction_audit.io.object_keys import key_problem
from tests import ci_commands
from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server

KEYS = ["runs/a.jsonl", "runs/c\x1b]0;t\x07.jsonl", "runs/m/drift.jsonl",
        "runs/n/../e.jsonl", "runs/x/drift.jsonl", "runs/y/clean.jsonl"]


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    tmp = tmp_path_factory.mktemp("gcs")
    clean = dump(clean_records(), tmp / "clean.jsonl").read_bytes()
    drift = dump(drift_records(), tmp / "drift.jsonl").read_bytes()
    account = tmp / "account.json"
    with s3_server() as s3:
        account.write_text(json.dumps({"gcs_base_url": s3.endpoint, "disable_oauth": True,
                                       "client_email": "", "private_key": "",
                                       "private_key_id": ""}))
        s3.bucket("gcs")
        for key in KEYS:
            s3.client.put_object(Bucket="gcs", Key=key, ACL="public-read",
                                 Body=drift if "drift" in key else clean)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GOOGLE_SERVICE_ACCOUNT", str(account))
            from compaction_audit.io.remote import store_for

            store_for.cache_clear()
            yield s3
            store_for.cache_clear()


def test_good_traces_past_a_bad_key_are_audited(gcs: S3) -> None:
    result = run("audit", "gs://gcs/runs/", "-q", "-j", "1")
    assert result.exit_code == 2, result.stderr  # old: the listing failed, nothing audited
    assert result.stdout.splitlines() == [
        "gs://gcs/runs/x/drift.jsonl: FAIL: 4 error(s), 1 warning(s), 1 info",
        "gs://gcs/runs/y/clean.jsonl: PASS: 0 error(s), 0 warning(s), 0 info; this loop can "
        "drift but not invert",
        "error: gs://gcs/runs/c\\x1b]0;t\\x07.jsonl: cannot open: its key has a control "
        "character, which obstore cannot read as this object (rename it); obstore's listing "
        "failed on it, so no key before 'runs/c ' was listed",
        "error: gs://gcs/runs/n/../e.jsonl: cannot open: its key has a '.' or '..' segment, "
        "which obstore cannot read as this object (rename it); obstore's listing failed on "
        "it, so no key after 'runs/c ' and before 'runs/n/..0' was listed",
        "exit 2: 4 trace(s), 1 reach --fail-on error, 2 unreadable"]
    assert ci_commands.clean(result.stdout) == []


def test_a_bad_key_without_a_trace_suffix_still_fails_the_run(gcs: S3) -> None:
    """Its failing page may have held traces: the run cannot pass."""
    gcs.client.put_object(Bucket="gcs", Key="only/a.jsonl", ACL="public-read", Body=b"{}")
    gcs.client.put_object(Bucket="gcs", Key="only/notes\x01", ACL="public-read", Body=b"")
    result = run("audit", "gs://gcs/only/", "-q", "-j", "1")
    assert result.exit_code == 2
    assert result.stdout == ""  # its one trace unreadable: the error on stderr (adv84)
    assert result.stderr.splitlines() == [
        "compaction-audit: gs://gcs/only/notes\\x01: cannot open: its key has a control character, "
        "which obstore cannot read as this object (rename it); obstore's listing failed on "
        "it, so no key before 'only/notes ' was listed"]


def test_a_key_with_a_cr_says_it_may_have_been_read_as_lf(gcs: S3) -> None:
    """XML reads a CR (and a CR LF) in a key as LF, end-of-line handling, before
    obstore sees it: the line names the key as read, and says so (adv16b F4; old code:
    the name of a key that does not exist, without a word).  moto's server cannot
    store a key with CR LF."""
    gcs.client.put_object(Bucket="gcs", Key="cr/x\r::stop-commands::t.jsonl",
                          ACL="public-read", Body=b"{}")
    result = run("audit", "gs://gcs/cr/", "-q", "-j", "1")
    assert result.exit_code == 2
    assert result.stdout == ""  # its one trace unreadable: the error on stderr (adv84)
    assert result.stderr.splitlines() == [
        "compaction-audit: gs://gcs/cr/x\\n::stop-commands::t.jsonl: cannot open: its key has a "
        "control character, which obstore cannot read as this object (rename it); "
        "obstore's listing failed on it, so no key before 'cr/x ' was listed; its name is "
        "as obstore's XML parser read it, which turns a CR or CR LF into LF: the stored "
        "key may hold \\r or \\r\\n where \\n is shown"]
    assert ci_commands.clean(result.stderr) == []


def test_the_key_is_read_back_from_obstores_error() -> None:
    text = ('Encountered object with invalid path: Error parsing Path "a/b": ...\n\n'
            'Debug source:\nInvalidPath {\n    source: BadSegment {\n        path: '
            '"runs/q\\"\\\\\\n\\u{1}\\u{7f}x",\n')
    assert bad_key(Exception(text)) == 'runs/q"\\\n\x01\x7fx'
    assert bad_key(Exception("no debug source")) is None


def test_next_nameable_is_the_first_name_after_a_key() -> None:
    assert [next_nameable(k) for k in ["runs/c\x01.jsonl", "runs/a/../e", "runs//x",
                                       "runs/x/", "runs/..", "a\x7f", "."]] == [
        "runs/c ", "runs/a/..0", "runs/0", "runs/x/ ", "runs/.. ", "a\x80", ". "]
    alphabet = ["\x01", " ", ".", "/", "a"]
    names = sorted({"".join(p) for n in range(1, 5) for p in itertools.product(alphabet, repeat=n)})
    nameable = [s for s in names if key_problem(s) is None]
    for key in names:
        after = next_nameable(key)
        assert after is not None and after > key and key_problem(after) is None, key
        assert not [s for s in nameable if key < s < after], key  # nothing nameable skipped


def test_the_bad_keys_in_json(gcs: S3) -> None:
    result = run("audit", "gs://gcs/runs/", "-f", "json", "-j", "1")
    assert "\x1b" not in result.stdout  # written as \u001b
    doc = json.loads(result.stdout)
    assert [e["path"] for e in doc["errors"]] == ["gs://gcs/runs/c\x1b]0;t\x07.jsonl",
                                                  "gs://gcs/runs/n/../e.jsonl"]
    assert doc["summary"]["unreadable"] == 2


def test_a_listing_without_offsets_goes_folder_by_folder(
        gcs: S3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The way an ``az://`` listing goes on (Azure's list API takes no start key): when
    the flat listing fails, each folder is listed alone and a bad key fails only its
    own folder.  The store here is the GCS one on moto, named ``az://`` (no Azure
    emulator in the test environment): the same obstore calls, ``list_with_delimiter``
    per folder and its ``InvalidPathError``."""
    from compaction_audit.io import remote

    clean = dump(clean_records(), tmp_path / "c.jsonl").read_bytes()
    for key in ["deep/a/x.jsonl", "deep/b/bad\x01.jsonl", "deep/b/y.jsonl", "deep/c/z.jsonl",
                "deep/top.jsonl"]:
        gcs.client.put_object(Bucket="gcs", Key=key, ACL="public-read", Body=clean)
    real = remote.store_for
    monkeypatch.setattr(remote, "store_for", lambda scheme, bucket: real("gs", bucket))
    result = run("audit", "az://gcs/deep/", "-q", "-j", "1")
    assert result.exit_code == 2, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines[:3]] == [
        "az://gcs/deep/a/x.jsonl", "az://gcs/deep/c/z.jsonl", "az://gcs/deep/top.jsonl"]
    assert lines[3:] == [
        "error: az://gcs/deep/b/bad\\x01.jsonl: cannot open: its key has a control "
        "character, which obstore cannot read as this object (rename it); obstore's "
        "listing of the folder 'deep/b/' failed on it, so no key in that folder was listed",
        "exit 2: 4 trace(s), 0 reach --fail-on error, 1 unreadable"]


def test_a_name_listed_twice_is_audited_once_and_reported_once(gcs: S3,
                                                                tmp_path: Path) -> None:
    """``dup/x.jsonl/`` (holding data) is listed by obstore as ``dup/x.jsonl``, beside
    the real one: one is audited, the other cannot be read, and the run says so."""
    drift = dump(drift_records(), tmp_path / "d.jsonl").read_bytes()
    clean = dump(clean_records(), tmp_path / "c.jsonl").read_bytes()
    gcs.client.put_object(Bucket="gcs", Key="dup/x.jsonl", ACL="public-read", Body=clean)
    gcs.client.put_object(Bucket="gcs", Key="dup/x.jsonl/", ACL="public-read", Body=drift)
    result = run("audit", "gs://gcs/dup/", "-q", "-j", "1")
    assert result.exit_code == 2  # old: exit 0, the drift object never read, not a word
    assert result.stdout.splitlines() == [
        "gs://gcs/dup/x.jsonl: PASS: 0 error(s), 0 warning(s), 0 info; this loop can drift "
        "but not invert",
        "error: gs://gcs/dup/x.jsonl: cannot open: listed twice: obstore strips a leading or "
        "trailing '/' from another key, which it names so (that object is not read)",
        "exit 2: 2 trace(s), 0 reach --fail-on error, 1 unreadable"]


def test_the_folder_by_folder_listing_keeps_the_key_cap(
        gcs: S3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """adv15 F3: the folder-by-folder listing (an ``az://`` prefix past a bad key) had
    no key cap nor deadline; it now counts keys with the flat listing's."""
    from compaction_audit.io import object_keys, remote

    clean = dump(clean_records(), tmp_path / "c.jsonl").read_bytes()
    for key in ["deep/a/x.jsonl", "deep/b/bad\x01.jsonl", "deep/b/y.jsonl",
                "deep/c/z.jsonl", "deep/c/w.jsonl"]:
        gcs.client.put_object(Bucket="gcs", Key=key, ACL="public-read", Body=clean)
    real = remote.store_for
    monkeypatch.setattr(remote, "store_for", lambda scheme, bucket: real("gs", bucket))
    monkeypatch.setattr(object_keys, "MAX_LISTED_KEYS", 2)
    result = run("audit", "az://gcs/deep/", "-q", "-j", "1")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(
        "compaction-audit: az://gcs/deep/: cannot list: more than 2 keys under this prefix")
