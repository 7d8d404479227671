"""Baseline entries of traces that no longer exist (usertest67 #7: a deleted trace's
entries were neither named by ``audit --baseline`` nor dropped by ``baseline prune``).

A trace is gone only when it lies under a folder or prefix given, was not audited, and
does not exist (:mod:`compaction_audit.baseline.gone`); each condition is tested here
both ways, on a local folder and on moto's S3 server (tests/s3server.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from compaction_audit.baseline.gone import GONE_NAMED, gone_line
from tests.gate_app import clean_records, drift_records, run
from tests.logs import dump
from tests.s3server import S3, s3_server


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``traces/drift.jsonl`` and ``traces/day2/drift.jsonl`` (3 entries each: CA104,
    CA105, CA201) and ``traces/clean.jsonl`` (none), baselined in ``b.json``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces" / "day2").mkdir(parents=True)
    dump(clean_records(), tmp_path / "traces" / "clean.jsonl")
    dump(drift_records(), tmp_path / "traces" / "drift.jsonl")
    dump(drift_records(), tmp_path / "traces" / "day2" / "drift.jsonl")
    made = run("baseline", "create", "traces", "-o", "b.json", "-j", "1")
    assert made.exit_code == 0, made.stderr
    return tmp_path


def _traces(path: str) -> list[str]:
    return sorted({e["trace"] for e in json.loads(Path(path).read_text())["findings"]})


def _nothing_gone(baseline: str, path: str, out: str) -> list[str]:
    """The traces of the baseline ``prune`` writes to ``out`` for ``path``, after
    checking that neither it nor ``audit --baseline`` calls a trace gone."""
    audit = run("audit", path, "--baseline", baseline, "-q", "-j", "1")
    assert "no longer exist" not in audit.stderr
    pruned = run("baseline", "prune", baseline, path, "-o", out, "-j", "1")
    assert pruned.exit_code == 0, pruned.stderr
    assert "no longer exist" not in pruned.stderr
    return _traces(out)


def test_a_deleted_trace_is_named_by_audit_and_dropped_by_prune(fleet: Path) -> None:
    (fleet / "traces" / "day2" / "drift.jsonl").unlink()
    audit = run("audit", "traces", "--baseline", "b.json", "-q", "-j", "1")
    assert audit.exit_code == 0, audit.stderr  # said, not failed: nothing new
    assert ("compaction-audit: baseline b.json: 3 entries of 1 trace(s) that no longer "
            "exist (traces/day2/drift.jsonl): 'baseline prune' drops them\n") in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "-j", "1")
    assert pruned.exit_code == 0, pruned.stderr
    assert pruned.stderr == (
        "compaction-audit: baseline p.json: 3 of 6 entries dropped (no longer occur; 3 of "
        "1 trace(s) that no longer exist), 3 kept\n")
    assert _traces("p.json") == ["traces/drift.jsonl"]


def test_every_trace_present_says_nothing(fleet: Path) -> None:
    audit = run("audit", "traces", "--baseline", "b.json", "-q", "-j", "1")
    assert "no longer exist" not in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "-j", "1")
    assert pruned.stderr == ("compaction-audit: baseline p.json: 0 of 6 entries dropped (no "
                             "longer occur), 6 kept\n")


def test_a_trace_not_under_a_folder_given_is_kept(fleet: Path) -> None:
    """Files named one by one (or a pattern): the baseline's other traces were not asked
    about, deleted or not (a fleet's baseline applied to one day's traces)."""
    (fleet / "traces" / "day2" / "drift.jsonl").unlink()
    audit = run("audit", "traces/drift.jsonl", "--baseline", "b.json", "-q")
    assert "no longer exist" not in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces/drift.jsonl", "traces/clean.jsonl",
                 "-o", "p.json")
    assert pruned.exit_code == 0, pruned.stderr
    assert _traces("p.json") == ["traces/day2/drift.jsonl", "traces/drift.jsonl"]
    # a folder beside it is no folder it lies under
    beside = run("baseline", "prune", "b.json", "traces/day", "-o", "q.json")
    assert beside.exit_code == 2  # no such path: a usage error, nothing written
    assert not Path("q.json").exists()


def test_an_excluded_trace_exists(fleet: Path) -> None:
    audit = run("audit", "traces", "--exclude", "day2", "--baseline", "b.json", "-q")
    assert "no longer exist" not in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces", "--exclude", "day2", "-o", "p.json")
    assert pruned.exit_code == 0, pruned.stderr  # not audited, but there: kept
    assert _traces("p.json") == ["traces/day2/drift.jsonl", "traces/drift.jsonl"]


def test_the_working_directory_given_as_dot_asks_about_nothing(fleet: Path) -> None:
    """Every relative entry is under '.', looked up where the command runs: a baseline
    made in another directory had all its entries "gone" (adv132 #3, adv133 #2).  The
    folder is named instead."""
    (fleet / "traces" / "drift.jsonl").unlink()
    assert _nothing_gone("b.json", ".", "p.json") == ["traces/day2/drift.jsonl",
                                                      "traces/drift.jsonl"]
    named = run("baseline", "prune", "b.json", "traces", "-o", "q.json", "-j", "1")
    assert named.exit_code == 0, named.stderr
    assert _traces("q.json") == ["traces/day2/drift.jsonl"]


def test_every_baselined_trace_gone_is_named(fleet: Path) -> None:
    """adv133 #3: a fleet whose baselined traces all expired, a new one beside them."""
    (fleet / "traces" / "drift.jsonl").unlink()
    (fleet / "traces" / "day2" / "drift.jsonl").unlink()
    audit = run("audit", "traces", "--baseline", "b.json", "-q", "-j", "1")
    assert "6 entries of 2 trace(s) that no longer exist" in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "-j", "1")
    assert _traces("p.json") == []
    assert pruned.exit_code == 0


def test_the_line_names_a_few_and_counts_the_rest() -> None:
    gone = {f"t{i}.jsonl": i + 1 for i in range(GONE_NAMED + 2)}
    assert gone_line(gone, "b.json") == (
        "baseline b.json: 15 entries of 5 trace(s) that no longer exist (t0.jsonl, "
        "t1.jsonl, t2.jsonl and 2 more): 'baseline prune' drops them")
    assert gone_line({}, "b.json") is None


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    tmp = tmp_path_factory.mktemp("gone")
    drift = dump(drift_records(), tmp / "drift.jsonl").read_bytes()
    with s3_server() as server:
        server.bucket("fleet")
        for key in ("runs/a/drift.jsonl", "runs/b/drift.jsonl"):
            server.client.put_object(Bucket="fleet", Key=key, Body=drift)
        yield server


def test_an_object_deleted_from_a_prefix(s3: S3, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    made = run("baseline", "create", "s3://fleet/runs/", "-o", "b.json", "-j", "1")
    assert made.exit_code == 0, made.stderr
    s3.client.delete_object(Bucket="fleet", Key="runs/b/drift.jsonl")
    audit = run("audit", "s3://fleet/runs/", "--baseline", "b.json", "-q", "-j", "1")
    assert ("baseline b.json: 3 entries of 1 trace(s) that no longer exist "
            "(s3://fleet/runs/b/drift.jsonl)") in audit.stderr
    pruned = run("baseline", "prune", "b.json", "s3://fleet/runs/", "-o", "p.json", "-j", "1")
    assert pruned.exit_code == 0, pruned.stderr
    assert _traces("p.json") == ["s3://fleet/runs/a/drift.jsonl"]
    # the other prefix of the bucket is not asked about
    other = run("baseline", "prune", "b.json", "s3://fleet/runs/a/", "-o", "q.json")
    assert other.exit_code == 0, other.stderr
    assert _traces("q.json") == ["s3://fleet/runs/a/drift.jsonl",
                                 "s3://fleet/runs/b/drift.jsonl"]


class _Store:
    """A store whose HEAD raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def head(self, key: str) -> None:
        raise self.error


@pytest.mark.parametrize(("error", "missing"), [
    (FileNotFoundError("no such object"), True),
    (ConnectionError("error sending request"), False),
    (PermissionError("access denied"), False),
    (RuntimeError("anything else"), False),
])
def test_only_a_store_saying_no_such_object_makes_it_gone(
        error: Exception, missing: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that does not answer, or refuses, leaves the trace existing: prune never
    drops entries for a hiccup."""
    from compaction_audit.io import remote

    monkeypatch.setattr(remote, "store_for", lambda scheme, bucket: _Store(error))
    assert remote.missing_object("s3://fleet/runs/x.jsonl") is missing


def test_another_working_directory_calls_nothing_gone(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv132 #3: from inside traces/, '.' put every relative entry under it, looked up
    in the wrong place: all were "gone", and prune dropped them."""
    monkeypatch.chdir(fleet / "traces")
    assert _nothing_gone("../b.json", ".", "../p.json") == ["traces/day2/drift.jsonl",
                                                            "traces/drift.jsonl"]
    # a folder below named from there: its keys are not the baseline's
    below = run("baseline", "prune", "../b.json", "day2", "-o", "../q.json", "-j", "1")
    assert below.exit_code == 0, below.stderr
    assert _traces("../q.json") == ["traces/day2/drift.jsonl", "traces/drift.jsonl"]


def test_a_name_not_written_as_it_is_is_never_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv132 #2: a trace whose name has an undecodable byte, or whose path is past
    1,024 characters, is named escaped or clipped in the baseline; looked up so, it was
    "gone" in the very run that audited it, and prune dropped its entries."""
    monkeypatch.chdir(tmp_path)
    deep = Path("traces", *(["d" * 120] * 9))
    deep.mkdir(parents=True)
    dump(drift_records(), deep / "drift.jsonl")
    odd = os.path.join(b"traces", b"caf\xff.jsonl")
    Path(os.fsdecode(odd)).write_text(Path(deep / "drift.jsonl").read_text())
    made = run("baseline", "create", "traces", "-o", "b.json", "-j", "1")
    assert made.exit_code == 0, made.stderr
    names = _traces("b.json")
    assert len(names) == 2 and any("\\xff" in n for n in names) and any(
        "sha256" in n for n in names)  # written escaped and clipped
    audit = run("audit", "traces", "--baseline", "b.json", "-q", "-j", "1")
    assert audit.exit_code == 0, audit.stdout
    assert "no longer exist" not in audit.stderr
    pruned = run("baseline", "prune", "b.json", "traces", "-o", "p.json", "-j", "1")
    assert _traces("p.json") == names
    assert pruned.exit_code == 0


@pytest.mark.parametrize(("error", "missing"), [
    (FileNotFoundError(2, "No such file"), True), (NotADirectoryError(20, "Not a dir"), True),
    (PermissionError(13, "Permission denied"), False), (OSError(36, "Name too long"), False),
])
def test_a_folder_that_cannot_be_read_says_nothing(
        error: OSError, missing: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv132 #5: a trace under a folder without read permission was called gone."""
    from compaction_audit.baseline import gone

    def lstat(path: str) -> None:
        raise error

    monkeypatch.setattr(gone.os, "lstat", lstat)
    assert gone._no_file("traces/t.jsonl") is missing


def test_baseline_commands_take_the_engine_options(fleet: Path) -> None:
    """usertest67 #2: --engine and --ray-address, as 'audit' takes them."""
    for command in (["create", "traces"], ["prune", "b.json", "traces"]):
        result = run("baseline", *command, "-o", "x.json", "--ray-address", "auto")
        assert result.exit_code == 2
        assert "--ray-address applies to --engine ray" in result.stderr
        local = run("baseline", *command, "-o", "y.json", "--engine", "local", "-j", "1")
        assert local.exit_code == 0, local.stderr
    assert not Path("x.json").exists()
