"""The scale generator writes valid logs whose series matches the reference series."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchmarks.reference_series import reference_series
from compaction_audit.errors import LogError
from compaction_audit.io import parallel
from compaction_audit.io.native import read_native
from compaction_audit.model import Session
from compaction_audit.series import build_series
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import analyse_alone_and_helped


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "tiny.jsonl"
    write_scale_session(path, rounds=30, working_set=50, seed=1)
    return path


def test_tiny_session_reads_strictly(tiny: Path) -> None:
    session = read_native(str(tiny))  # strict: raises on any input error
    assert session.n_rounds == 30
    assert session.skipped == []
    assert session.header.max_depth == 3
    # the working set holds 50 items at every round after the first
    records = [orjson.loads(line) for line in tiny.read_bytes().splitlines()]
    rounds = [r for r in records if r["type"] == "round"]
    assert all(len(r["retained"]) == 50 for r in rounds)
    assert all(type(pair) is list and len(pair) == 2 for r in rounds for pair in r["retained"])
    # the shape the benchmark relies on: arrivals, folds of summaries, eviction, offloads
    summaries = [s for r in rounds for s in r["summaries"]]
    assert {s["depth"] for s in summaries} >= {1, 2}
    assert sum(len(r["evicted"]) for r in rounds) > 0
    assert sum(len(r["offloaded"]) for r in rounds) > 0
    assert any(s.get("text") for r in rounds for s in r["spans"])


def test_tiny_series_matches_reference(tiny: Path) -> None:
    ours = build_series(read_native(str(tiny))).frame.to_dicts()
    ref = reference_series(str(tiny))
    assert len(ours) == len(ref) == 30
    for mine, theirs in zip(ours, ref, strict=True):
        for column, expected in theirs.items():
            got = mine[column]
            if isinstance(expected, float) and got is not None:
                assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12), column
            else:
                assert got == expected, (theirs["round"], column)


def test_deterministic_and_texts_optional(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    write_scale_session(a, 12, 20, seed=5)
    write_scale_session(b, 12, 20, seed=5)
    write_scale_session(c, 12, 20, seed=5, texts=False)
    assert a.read_bytes() == b.read_bytes()
    assert b'"text"' not in c.read_bytes()
    assert read_native(str(c)).n_rounds == 12


def test_delta_mode_rebuilds_the_same_working_set(tmp_path: Path) -> None:
    full, delta = tmp_path / "full.jsonl", tmp_path / "delta.jsonl"
    # delta mode cannot say that an offloaded item is retained again: no rehydration
    write_scale_session(full, 200, 30, seed=3, rehydrate=False)
    write_scale_session(delta, 200, 30, seed=3, retained=False)
    assert b'"retained"' not in delta.read_bytes()
    a, b = build_series(read_native(str(full))), build_series(read_native(str(delta)))
    # the working set is fully determined by arrivals, folds, evictions and offloads
    for column in ("items", "raw_ratio", "distinct_source_spans", "summary_depth_max"):
        assert a.frame[column].to_list() == b.frame[column].to_list(), column


def test_rejects_bad_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_scale_session(tmp_path / "x.jsonl", 0, 50)
    with pytest.raises(ValueError):
        write_scale_session(tmp_path / "x.jsonl", 5, 3)


def _mutations(path: Path) -> list[bytes]:
    """The tiny session's lines with a mix of malformed and unusual records."""
    lines = path.read_bytes().splitlines(keepends=True)
    rounds = [i for i, line in enumerate(lines) if b'"type":"round"' in line]

    def edit(i: int, change: Callable[[dict[str, Any]], None]) -> None:
        obj = orjson.loads(lines[i])
        change(obj)
        lines[i] = orjson.dumps(obj) + b"\n"

    def object_form(o: dict[str, Any]) -> None:
        o["retained"] = [{"id": i, "salience": s} for i, s in o["retained"]]

    def bool_salience(o: dict[str, Any]) -> None:
        o["retained"][0][1] = True

    def duplicate(o: dict[str, Any]) -> None:
        o["retained"].append(o["retained"][0])

    def unknown(o: dict[str, Any]) -> None:
        o["retained"].append(["never-defined", 0.5])

    def delta(o: dict[str, Any]) -> None:
        del o["retained"]

    def null_salience(o: dict[str, Any]) -> None:
        o["retained"][-1][1] = None

    def clash(o: dict[str, Any]) -> None:
        o["evicted"] = [*o["evicted"], o["retained"][0][0]]

    for k, change in enumerate((object_form, bool_salience, duplicate, unknown, delta,
                                null_salience, clash)):
        edit(rounds[3 + 3 * k], change)
    lines[rounds[25]] = b'{"type": "round", "round": \n'  # bad JSON
    lines.insert(rounds[27], b"\n")  # a blank line shifts the line numbers
    lines[-1] = lines[-1][:-20]  # truncated last line
    return lines


@pytest.mark.parametrize("lenient", [True, False])
def test_helper_process_reads_like_the_plain_reader(
        tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lenient: bool) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join(_mutations(tiny)))

    def read() -> Session | str:
        try:
            return read_native(str(path), lenient=lenient)
        except LogError as exc:
            return str(exc)

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 62)
    plain = read()
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    assert parallel.wanted(str(path))
    helper = read()
    if isinstance(plain, str):
        assert not lenient
        assert helper == plain
        return
    assert isinstance(helper, Session)
    assert [str(e) for e in helper.skipped] == [str(e) for e in plain.skipped]
    assert [str(e) for e in helper.dependent] == [str(e) for e in plain.dependent]
    # lenient: only the records bad in themselves are skipped (no cascade, issue 11):
    # a boolean salience, an id listed twice, an id never defined, an id evicted and
    # retained, the bad JSON line and the truncated last line
    assert [e.line for e in plain.skipped] == [8, 11, 14, 23, 27, 32]
    assert len(plain.dependent) >= 7
    for table in ("rounds", "items", "edges", "events"):
        assert getattr(helper, table).equals(getattr(plain, table)), table
    key = ["id", "start", "end"]
    assert helper.membership.sort(key).equals(plain.membership.sort(key))
    # the logged saliences the helper sends as changed pairs are the plain reader's
    assert helper.salience.sort("ri", "id").equals(plain.salience.sort("ri", "id"))
    assert plain.salience.height > 0
    ours = build_series(helper).frame
    assert ours.equals(build_series(plain).frame)


def test_text_helper_gives_the_same_recall_analysis(
        tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alone, helped = analyse_alone_and_helped(read_native(str(tiny)), monkeypatch)
    assert helped.disagreements == alone.disagreements
    assert alone.folds["dropped"].list.len().sum() > 0
