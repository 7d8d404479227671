"""Issue 11, fresh adversarial pass: hostile paths, deep trees, files read whole,
numeric options, free-form objects, unsupported compressions.  Each bad input is a
one-line error naming the file or option, exit 2, never an internal error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gate_app import drift_records, run
from tests.logs import dump

LONG = "a" * 300  # one path component over NAME_MAX (255 bytes): ENAMETOOLONG


def _usage_error(result: Any, *words: str) -> str:
    """The one stderr line of a clean exit 2 that holds every word."""
    err = result.stderr
    assert result.exit_code == 2, (result.exit_code, err, result.exception)
    assert "internal error" not in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)
    return err


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "t.jsonl"
    dump(drift_records(), path)
    return path


# F1: a path component over 255 bytes (and other unstat'able paths)

def test_config_with_a_name_too_long_is_a_clean_error(trace: Path) -> None:
    _usage_error(run("audit", "--config", LONG, str(trace)), "config file", "too long")


def test_config_that_is_a_directory_says_so(trace: Path, tmp_path: Path) -> None:
    (tmp_path / "cfgdir").mkdir()
    _usage_error(run("audit", "--config", "cfgdir", str(trace)), "cfgdir", "is a directory")


def test_config_that_is_a_device_says_so(trace: Path) -> None:
    _usage_error(run("audit", "--config", "/dev/null", str(trace)), "/dev/null",
                 "character device")


@pytest.mark.parametrize("pattern", [f"{LONG}/*.jsonl", f"{LONG}/**", f"{LONG}/**/*.jsonl",
                                     f"x/{LONG}[ab]/*.jsonl"])
def test_pattern_under_a_name_too_long_matches_nothing(trace: Path, pattern: str) -> None:
    _usage_error(run("audit", pattern), "no trace file matches")


def test_plain_path_too_long_is_an_unreadable_trace(trace: Path) -> None:
    _usage_error(run("audit", LONG), "too long")


def _manifest(tmp_path: Path, messages_path: str, session_id: str) -> Path:
    fixture = Path(__file__).parent / "fixtures" / "adapters" / "cline" / "session.json"
    doc = json.loads(fixture.read_text())
    doc.update(messages_path=messages_path, session_id=session_id)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(("messages_path", "session_id"), [
    (LONG, "s1"), (".", "s2"), ("/", "s3"), ("", "s4"), ("x", "a/b"), ("x", LONG)])
def test_cline_manifest_with_a_hostile_messages_path_is_a_clean_error(
        trace: Path, tmp_path: Path, messages_path: str, session_id: str) -> None:
    path = _manifest(tmp_path, messages_path, session_id)
    _usage_error(run("audit", str(path)), "m.json:1", "messages file is not found")


# F10: discovery over a deep tree is iterative

@pytest.fixture
def deep_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """deep/a/a/.../a (1,500 levels, past Python's recursion limit) holding t.jsonl, and
    a hidden directory and a symlink to a directory at the bottom that are not searched."""
    monkeypatch.chdir(tmp_path)
    rel = "deep"
    Path(rel).mkdir()
    for _ in range(1500):  # Path.mkdir(parents=True) recurses too
        rel += "/a"
        Path(rel).mkdir()
    dump(drift_records(), Path(rel) / "t.jsonl")
    (Path(rel) / ".hidden").mkdir()
    dump(drift_records(), Path(rel) / ".hidden" / "h.jsonl")
    (Path(rel) / "loop").symlink_to(Path("deep").resolve(), target_is_directory=True)
    yield rel + "/t.jsonl"
    # pytest's clean-up (shutil.rmtree) recurses once per level: empty the tree first
    for name in ("t.jsonl", ".hidden/h.jsonl", "loop"):
        (Path(rel) / name).unlink()
    (Path(rel) / ".hidden").rmdir()
    while rel != "deep":
        Path(rel).rmdir()
        rel = rel.rsplit("/", 1)[0]


@pytest.mark.parametrize("arg", ["deep", "deep/**", "deep/**/*.jsonl", "deep/a/**/t.jsonl"])
def test_a_tree_1500_deep_is_searched_without_recursion(deep_tree: str, arg: str) -> None:
    from compaction_audit.discover import find_traces

    found = find_traces([arg])
    assert found.traces == [deep_tree]
    assert found.skipped == [] and found.unreadable == []


def test_a_tree_1500_deep_audits(deep_tree: str, tmp_path: Path) -> None:
    """In a process of its own: the test runner's stack and recursion limit differ."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    for arg in ("deep", "deep/**"):
        done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", arg, "-q"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env=env)
        assert done.returncode == 1, done.stderr  # drift_records fails the gate
        assert "internal error" not in done.stderr


# F7: files read whole (baseline, configuration) are bounded and must be files

@pytest.mark.parametrize(("target", "words"), [
    ("/dev/zero", ("/dev/zero", "character device")),
    (".", ("baseline", "is a directory")),
    (LONG, ("baseline", "too long")),
    ("missing.json", ("baseline", "missing.json"))])
def test_baseline_that_is_no_file_is_refused(trace: Path, target: str,
                                             words: tuple[str, ...]) -> None:
    _usage_error(run("audit", str(trace), "--baseline", target, "-q"), *words)


def test_baseline_larger_than_the_limit_is_refused(trace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit import baseline

    monkeypatch.setattr(baseline.file, "MAX_BASELINE_BYTES", 100)
    path = tmp_path / "b.json"
    path.write_bytes(b'{"baseline_format": 1, "findings": []}' + b" " * 62)  # 100 bytes
    assert run("audit", str(trace), "--baseline", str(path), "-q").exit_code == 1
    path.write_bytes(path.read_bytes() + b" ")  # 101
    _usage_error(run("audit", str(trace), "--baseline", str(path), "-q"), "b.json",
                 "larger than 100 bytes")


def test_config_larger_than_the_limit_is_refused(trace: Path, tmp_path: Path) -> None:
    from compaction_audit.smallfile import MAX_CONFIG_BYTES

    path = tmp_path / "big.toml"
    with path.open("wb") as fh:  # sparse: no disk spent
        fh.truncate(MAX_CONFIG_BYTES + 1)
    _usage_error(run("audit", "--config", str(path), str(trace)), "big.toml",
                 f"larger than {MAX_CONFIG_BYTES} bytes")


# F8: every numeric option of simulate is bounded, and the error names the option

HUGE = "99999999999999999999999"


@pytest.mark.parametrize(("option", "value", "field"), [
    ("--seed", HUGE, "seed"), ("--seed", "-" + HUGE, "seed"),
    ("--rounds", HUGE, "rounds"), ("--rounds", "100001", "rounds"),
    ("--budget", HUGE, "budget_tokens"), ("--budget", str(10**12 + 1), "budget_tokens"),
    ("--max-depth", HUGE, "max_depth"), ("--spans-per-round", HUGE, "spans_per_round"),
    ("--store-retention", "inf", "store_retention_rounds"),
    ("--store-retention", "-inf", "store_retention_rounds"),
    ("--store-retention", "nan", "store_retention_rounds"),
    ("--store-retention", "1e308", "store_retention_rounds"),
    ("--recency-decay", "inf", "recency_decay"), ("--recency-decay", "nan", "recency_decay")])
def test_simulate_option_out_of_range_names_the_option(tmp_path: Path, option: str,
                                                       value: str, field: str) -> None:
    out = tmp_path / "s.jsonl"
    result = run("simulate", "-o", str(out), option, value)
    err = result.stderr
    assert result.exit_code == 2, (err, result.exception)
    assert f"Invalid value for {option}: {field}: value" in err and "out of range" in err
    assert "--output" not in err and "internal error" not in err
    assert not out.exists()


def test_simulate_bounds_the_spans_of_a_run(tmp_path: Path) -> None:
    """adv56: 3,000 rounds of 10,000 spans (each option in range) ran for minutes with
    memory growing 8 MB a round: rounds x spans per round is at most 2,000,000."""
    out = tmp_path / "s.jsonl"
    result = run("simulate", "-o", str(out), "--rounds", "201", "--spans-per-round",
                 "10000")
    assert result.exit_code == 2 and not out.exists()
    assert ("Invalid value for --spans-per-round: spans_per_round: value 10000 is out of "
            "range for 201 rounds (rounds x spans per round at most 2,000,000)") \
        in " ".join(result.stderr.split())
    from dataclasses import replace

    from compaction_audit.simulate.params import PRESETS
    replace(PRESETS["research-decay"], rounds=200, spans_per_round=10_000).validate()


def test_simulate_bounds_the_working_set_a_run_writes(tmp_path: Path) -> None:
    """adv57: under a budget that holds everything, each round lists every span so far:
    2,000 rounds of 1,000 spans would write about 40 GB."""
    out = tmp_path / "s.jsonl"
    result = run("simulate", "-o", str(out), "--rounds", "2000", "--spans-per-round", "1000",
                 "--budget", str(10**12))
    assert result.exit_code == 2 and not out.exists()
    assert ("Invalid value for --budget: budget_tokens: value 1000000000000 is out of range "
            "for 2,000 rounds of 1,000 spans (a working set of up to 2,000,275 items written "
            "each round; at most 50,000,000 in a run)") in " ".join(result.stderr.split())
    from dataclasses import replace

    from compaction_audit.simulate.params import MAX_RETAINED, PRESETS
    for preset in PRESETS.values():  # every preset runs to --rounds' own bound
        longest = replace(preset, rounds=100_000)
        longest.validate()
        assert longest.rounds * longest.working_set_bound() <= MAX_RETAINED


def test_simulate_bounds_are_inclusive(tmp_path: Path) -> None:
    from compaction_audit.simulate.params import PRESETS

    out = tmp_path / "s.jsonl"
    seed = str(2**53 - 1)
    result = run("simulate", "-o", str(out), "--rounds", "2", "--seed", seed,
                 "--store-retention", "1000000000", "--budget", str(10**12))
    assert result.exit_code == 0, result.stderr
    first = json.loads(out.read_text().splitlines()[0])
    assert first["budget_tokens"] == 10**12
    assert PRESETS["research-decay"].rounds == 40  # presets untouched


# minor: unsupported compressions are named, from a file or standard input

def _compressed(kind: str, data: bytes) -> bytes:
    import bz2
    import lzma

    return bz2.compress(data) if kind == "bzip2" else lzma.compress(data)


@pytest.mark.parametrize("kind", ["bzip2", "xz"])
@pytest.mark.parametrize("suffix", [".jsonl.bz2", ".jsonl.xz", ".jsonl", ""])
def test_unsupported_compression_is_named(trace: Path, tmp_path: Path, kind: str,
                                          suffix: str) -> None:
    data = _compressed(kind, trace.read_bytes())
    path = tmp_path / f"c{suffix}"
    path.write_bytes(data)
    message = f"{kind}-compressed input is not supported (gzip and zstd are)"
    _usage_error(run("audit", str(path), "-q"), f"{path}: {message}")
    if suffix == "":  # standard input in a process of its own (a real, peekable stdin)
        root = Path(__file__).resolve().parent.parent
        done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit", "-", "-q"],
                              input=data, capture_output=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(root)})
        assert done.returncode == 2
        assert done.stderr.decode() == f"compaction-audit: -: {message}; decompress it first\n"


def test_a_plain_trace_starting_like_bzip2_text_is_not_taken_for_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"BZhx\n")  # no block size digit: bad JSON, not bzip2
    err = _usage_error(run("audit", str(path), "-q"), "t.jsonl:1")
    assert "bzip2" not in err


# F11: free-form objects from the log are bounded in the JSON report

def _bigdict_trace(path: Path, n: int) -> None:
    big = {f"k{i}": f"v{i}" for i in range(n)}
    dump([
        {"type": "session", "schema": "compaction-audit/1", "session_id": "x",
         "scorer": big, "extra_big": big},
        {"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 10}]},
        {"type": "round", "round": 1, "spans": [{"id": "b", "tokens": 10}],
         "compaction": {**big, "meta": big}},  # a key of the log's own (trigger is a word)
    ], path)


def test_cap_keys_by_hand() -> None:
    from compaction_audit.report.bounded import cap_keys

    note = {"truncated": True, "shown": 2, "total": 4, "keys_omitted": 2}
    four = {"a": 1, "b": 2, "c": 3, "d": 4}
    assert cap_keys({"x": four, "y": {"a": 1, "b": 2}}, cap=2) == {
        "x": {"a": 1, "b": 2}, "x_truncated": note, "y": {"a": 1, "b": 2}}
    assert cap_keys([four], cap=2) == [{"a": 1, "b": 2, "_truncated": note}]
    kept = cap_keys({**four, "round": 7}, cap=2, keep=frozenset({"round"}))
    assert kept == {"a": 1, "b": 2, "round": 7, "_truncated": {
        "truncated": True, "shown": 3, "total": 5, "keys_omitted": 2}}
    assert cap_keys({"x": {"y": four}}, cap=2) == {  # nested: the note beside it
        "x": {"y": {"a": 1, "b": 2}, "y_truncated": note}}
    assert cap_keys({"a": 1, "b": 2}, cap=2) == {"a": 1, "b": 2}  # at the cap: kept


def test_json_report_caps_free_form_objects(tmp_path: Path) -> None:
    from compaction_audit.report.bounded import KEYS_CAP

    path = tmp_path / "big.jsonl"
    _bigdict_trace(path, 5000)
    result = run("audit", str(path), "-f", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert len(result.stdout) < 20_000  # was > 400 KB
    doc = json.loads(result.stdout)
    note = {"truncated": True, "shown": KEYS_CAP, "total": 5000, "keys_omitted": 5000 - KEYS_CAP}
    session = doc["session"]
    assert list(session["scorer"]) == [f"k{i}" for i in range(KEYS_CAP)]
    assert session["scorer_truncated"] == note
    assert session["extra"]["extra_big_truncated"] == note
    (comp,) = doc["compactions"]
    assert comp["round"] == 1 and comp["lost_checked"] is not None  # our keys kept
    # 5,001 keys from the log (k0..k4999, meta): 20 kept, the auditor's own all kept
    assert comp["_truncated"]["keys_omitted"] == 5001 - KEYS_CAP
    assert "meta" not in comp  # it is key 5001: past the cap
    every = json.loads(run("audit", str(path), "-f", "json", "--all").stdout)
    assert len(every["session"]["scorer"]) == 5000 and "scorer_truncated" not in every["session"]
    assert len(every["compactions"][0]["meta"]) == 5000
