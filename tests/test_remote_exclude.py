"""``--exclude`` leaves out what an object storage prefix or key pattern yields, as it
does for a directory or a glob (usertest67 #1: on ``s3://`` it matched nothing, so one
unreadable object could not be left out of a fleet's baseline).

Against moto's S3 server on 127.0.0.1 (tests/s3server.py); skips without moto or
obstore."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """Bucket ``fleet``: ``runs/day01/a.jsonl`` (clean), ``runs/day02/b.jsonl``
    (drift: fails), ``runs/day02/broken.jsonl`` (not JSON) and ``runs/keep/c.jsonl``
    (clean)."""
    tmp = tmp_path_factory.mktemp("exclude")
    clean = dump(clean_records(), tmp / "clean.jsonl").read_bytes()
    drift = dump(drift_records(), tmp / "drift.jsonl").read_bytes()
    with s3_server() as server:
        server.bucket("fleet")
        for key, body in [("runs/day01/a.jsonl", clean), ("runs/day02/b.jsonl", drift),
                          ("runs/day02/broken.jsonl", b"{not json\n"),
                          ("runs/keep/c.jsonl", clean)]:
            server.client.put_object(Bucket="fleet", Key=key, Body=body)
        yield server


def _audited(stdout: str) -> list[str]:
    """The traces ``-q`` gives a verdict line for (one line per trace: "URL: VERDICT")."""
    return sorted(line.split(": ", 1)[0] for line in stdout.splitlines()
                  if line.startswith("s3://"))


def test_a_name_pattern_leaves_out_what_a_prefix_yields(s3: S3) -> None:
    both = run("audit", "s3://fleet/runs/", "-q", "-j", "1")
    assert both.exit_code == 2  # the broken object
    result = run("audit", "s3://fleet/runs/", "--exclude", "broken.jsonl", "--exclude",
                 "day02", "-q", "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert _audited(result.stdout) == ["s3://fleet/runs/day01/a.jsonl",
                                       "s3://fleet/runs/keep/c.jsonl"]
    assert "matched no file" not in result.stderr


def test_the_prefix_own_names_are_not_matched(s3: S3) -> None:
    """``--exclude runs`` names the prefix searched, not what is below it: nothing is
    left out by it, and the option says it matched nothing (as for a directory)."""
    result = run("audit", "s3://fleet/runs/", "--exclude", "runs", "--exclude", "day02",
                 "-q", "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert _audited(result.stdout) == ["s3://fleet/runs/day01/a.jsonl",
                                       "s3://fleet/runs/keep/c.jsonl"]
    assert "--exclude 'runs' matched no file" in result.stderr


def test_a_bucket_named_alone_is_searched_as_its_root(s3: S3) -> None:
    """adv130 #5: ``s3://fleet`` (no "/") lists the bucket, but the patterns were not
    applied to it (read as one object named)."""
    result = run("audit", "s3://fleet", "--exclude", "broken.jsonl", "--exclude", "day02",
                 "-q", "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert _audited(result.stdout) == ["s3://fleet/runs/day01/a.jsonl",
                                       "s3://fleet/runs/keep/c.jsonl"]


def test_a_whole_url_pattern_and_a_key_pattern(s3: S3) -> None:
    result = run("audit", "s3://fleet/runs/*/*.jsonl", "--exclude", "s3://fleet/runs/day02/*",
                 "-q", "-j", "1")
    assert result.exit_code == 0, result.stderr
    assert _audited(result.stdout) == ["s3://fleet/runs/day01/a.jsonl",
                                       "s3://fleet/runs/keep/c.jsonl"]


def test_one_object_named_is_never_left_out(s3: S3) -> None:
    result = run("audit", "s3://fleet/runs/day01/a.jsonl", "--exclude", "a.jsonl", "-q")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("PASS: ")  # one trace: its verdict alone


def test_everything_left_out_is_a_usage_error(s3: S3) -> None:
    result = run("audit", "s3://fleet/runs/day01/", "--exclude", "*.jsonl", "-q")
    assert result.exit_code == 2
    assert "no trace files under 's3://fleet/runs/day01/' (1 left out by --exclude)" \
        in result.stderr


def test_a_prefix_names_the_objects_it_does_not_search(tmp_path_factory: pytest.TempPathFactory
                                                       ) -> None:
    """usertest67 #5: a local folder names its ``.json`` files (an opencode export, a
    Gemini CLI session) as not searched; a prefix named none.  A Cline manifest beside
    its messages file is left out as a folder leaves it out."""
    clean = dump(clean_records(), tmp_path_factory.mktemp("others") / "c.jsonl").read_bytes()
    with s3_server() as server:
        server.bucket("mixed")
        for key, body in [("d/run.jsonl", clean), ("d/export.json", b"{}"),
                          ("d/task.json", b"{}"), ("d/task.messages.json", b"[]"),
                          ("d/.cache/old.json", b"{}")]:
            server.client.put_object(Bucket="mixed", Key=key, Body=body)
        result = run("audit", "s3://mixed/d/", "-q", "-j", "1")
        assert "1 file not searched" in result.stderr, result.stderr
        assert "s3://mixed/d/export.json" in result.stderr
        assert "task.json" not in result.stderr.replace("task.messages.json", "")
        assert "old.json" not in result.stderr
        server.client.put_object(Bucket="mixed", Key="e/export.json", Body=b"{}")
        none = run("audit", "s3://mixed/e/", "-q")
        assert none.exit_code == 2
        assert none.stderr.startswith("compaction-audit: no trace files (")
        assert "under prefix 's3://mixed/e/' (1 file not searched (" in none.stderr
