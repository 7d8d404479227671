"""Claude Code lines the adapter does not read, or reads despite an odd uuid (issue 11,
adv9 F5): a few such lines never silently discard the rest of the transcript, and every
line left out is counted in the session record and said in the verdict."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import claude_code
from compaction_audit.io.native import read_records

FIXTURE = Path(__file__).parent / "fixtures" / "adapters" / "claude-session.jsonl"
STRAY = orjson.dumps({"isSidechain": True, "type": "user", "uuid": "side-1", "sessionId": "s",
                      "message": {"role": "user", "content": "Subagent: list the files."}})


def lines() -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in FIXTURE.read_bytes().splitlines()]


def write(path: Path, objs: list[dict[str, Any]]) -> str:
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return str(path)


def convert(path: str) -> list[tuple[int, dict[str, Any]]]:
    out = list(claude_code.records(path))
    read_records(out, path)
    return out


def shape(out: list[tuple[int, dict[str, Any]]]) -> list[Any]:
    """Rounds as (round, span ids, compaction or None), line numbers left out (a span
    without a uuid is named after its line, which moves with a line added)."""
    return [(r["round"], [re.sub(r"^line-\d+", "line-N", s["id"]) for s in r["spans"]],
             r.get("compaction"))
            for _, r in out[1:]]


def audit(path: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["audit", path, "-q"])
    return result.exit_code, result.output.strip()


def test_a_sidechain_line_first_does_not_hide_the_main_thread(tmp_path: Path) -> None:
    objs = lines()
    path = write(tmp_path / "side.jsonl", [objs[0], orjson.loads(STRAY), *objs[1:]])
    out = convert(path)
    assert shape(out) == shape(convert(str(FIXTURE)))
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [
        "1 line of a subagent (isSidechain) in a main transcript: not read"]
    code, verdict = audit(path)
    assert code == 1
    # 1 error: the second compaction's fold (CA301); recall-floor leaves the spans a
    # product's compaction folded to CA301, and provenance-floor is not judged at a
    # summary of a product's summary (usertest68 #1)
    assert verdict.startswith("FAIL (1 line not read, see the notes): 1 error(s)")
    assert audit(str(FIXTURE))[1].startswith("FAIL: 1 error(s)")
    # JSON says it at the top level, beside compactions_not_checked, as docs/ci.md and
    # diff's JSON do (usertest29 #2: only session.extra had it)
    for trace, n in ((path, 1), (str(FIXTURE), 0)):
        doc = orjson.loads(CliRunner().invoke(app, ["audit", trace, "--format", "json"]).output)
        assert (doc["lines_not_read"], doc["compactions_not_checked"]) == (n, 0)


def test_a_file_of_sidechain_lines_only_is_read_as_its_own_thread(tmp_path: Path) -> None:
    objs = [dict(o, isSidechain=True) if o.get("type") in ("user", "assistant", "system")
            else o for o in lines()]
    out = convert(write(tmp_path / "agent.jsonl", objs))
    assert shape(out) == shape(convert(str(FIXTURE)))
    assert "lines_not_read" not in out[0][1] and "reader_notes" not in out[0][1]


def test_a_held_sidechain_line_names_its_own_line_in_an_error(tmp_path: Path) -> None:
    bad = {"isSidechain": True, "type": "user", "uuid": "b", "message": {"content": 7}}
    path = write(tmp_path / "agent.jsonl", [orjson.loads(STRAY), {"type": "progress"}, bad,
                                            {"type": "progress"}])
    with pytest.raises(LogError) as info:
        list(claude_code.records(path))
    assert (info.value.line, info.value.field) == (3, "message.content")


def test_compaction_lines_reusing_an_earlier_uuid_are_still_read(tmp_path: Path) -> None:
    objs = lines()
    first = next(o["uuid"] for o in objs if o.get("type") == "user")
    changed = [dict(o, uuid=first) if o.get("subtype") == "compact_boundary"
               or o.get("isCompactSummary") else o for o in objs]
    path = write(tmp_path / "dup.jsonl", changed)
    out = convert(path)
    assert len([r for _, r in out[1:] if "compaction" in r]) == 2
    assert "lines_not_read" not in out[0][1]
    assert out[0][1]["reader_notes"] == [
        "4 lines reusing the uuid of an earlier line of another kind: read as new lines",
        # the lines that named the compaction lines' own uuids (usertest76 F5)
        "4 lines name a parent line (parentUuid) that is not in the file, the first at "
        "line 19: lines may be missing before them"]
    assert audit(path)[0] == 1


def test_history_written_twice_is_read_once_and_said(tmp_path: Path) -> None:
    objs = lines()
    again = [o for o in objs if o.get("type") == "user" and not o.get("isCompactSummary")]
    out = convert(write(tmp_path / "twice.jsonl", [*objs, *again]))
    assert shape(out) == shape(convert(str(FIXTURE)))
    assert out[0][1]["reader_notes"] == [
        f"{len(again)} lines repeating an earlier line's uuid (history written twice): "
        "read once"]


def test_lines_shown_only_in_the_transcript_are_counted(tmp_path: Path) -> None:
    objs = [dict(o, isVisibleInTranscriptOnly=True)
            if o.get("type") == "user" and not o.get("isCompactSummary") else o
            for o in lines()]
    hidden = sum(1 for o in objs if o.get("isVisibleInTranscriptOnly")
                 and not o.get("isCompactSummary"))
    path = write(tmp_path / "vis.jsonl", objs)
    out = convert(path)
    assert out[0][1]["lines_not_read"] == hidden
    code, verdict = audit(path)
    assert code == 0
    assert verdict.startswith(f"PASS ({hidden} lines not read, see the notes): 0 error(s)")


def test_lines_of_a_type_not_known_are_counted_not_dropped(tmp_path: Path) -> None:
    """adv27 F2: a compaction's two lines with their ``type`` renamed ('system2',
    'user2') were dropped without a word, and the failing transcript passed, exit 0."""
    objs = lines()
    renamed = [dict(o, type=o["type"] + "2") if o.get("subtype") == "compact_boundary"
               or o.get("isCompactSummary") is True else o for o in objs]
    assert sum(o is not p for o, p in zip(renamed, objs, strict=True)) == 4  # 2 compactions
    path = write(tmp_path / "renamed.jsonl", [*renamed, {"type": "progress", "uuid": "p"}])
    out = convert(path)
    assert out[0][1]["lines_not_read"] == 4  # the bookkeeping 'progress' line is no news
    assert sorted(out[0][1]["reader_notes"]) == [
        "2 lines of a type this reader does not know ('system2'): not read",
        "2 lines of a type this reader does not know ('user2'): not read"]
    assert audit(path)[1].startswith("PASS (4 lines not read, see the notes): ")


def test_a_compaction_given_a_bookkeeping_type_is_counted(tmp_path: Path) -> None:
    """adv28 F6: the compaction's lines given the type 'progress' were ignored as
    bookkeeping, and the failing transcript passed without a word.  A bookkeeping
    line that carries a message or a compaction is counted as not read; a list as a
    type is a type not known, not 'unhashable type' (adv28 F8)."""
    objs = lines()
    renamed = [dict(o, type="progress") if o.get("subtype") == "compact_boundary"
               or o.get("isCompactSummary") is True else o for o in objs]
    path = write(tmp_path / "renamed.jsonl", [*renamed, {"type": ["system"], "uuid": "x"}])
    out = convert(path)
    assert out[0][1]["lines_not_read"] == 5
    assert sorted(out[0][1]["reader_notes"]) == [
        "1 line of a type this reader does not know (['system']): not read",
        "4 lines of the bookkeeping type 'progress' but carrying a message or a "
        "compaction: not read"]


@pytest.mark.parametrize("logical_parent", ["c-a6", "not-in-this-file"])
def test_history_with_its_compaction_written_twice_is_read_once(
        tmp_path: Path, logical_parent: str) -> None:
    """The first compaction's history (lines 2-19, the boundary and summary with it)
    written again after the end: each line is read once, the compactions are unchanged;
    also when the boundary's logical parent is not in the file (after a resume).  The
    compaction's two lines read once are counted as not read (adv31 N1: which copy is
    the compaction cannot always be told)."""
    objs = [dict(o, logicalParentUuid=logical_parent) if o.get("uuid") == "c-b1" else o
            for o in lines()]
    again = [o for o in objs[1:19] if o.get("type") in ("user", "assistant", "system")]
    out = convert(write(tmp_path / "twice.jsonl", [*objs, *again]))
    assert shape(out) == shape(convert(write(tmp_path / "once.jsonl", objs)))
    assert len([r for _, r in out[1:] if "compaction" in r]) == 2
    assert out[0][1]["lines_not_read"] == 2
    assert out[0][1]["reader_notes"] == [
        f"2 lines {claude_code.REPEATED_COMPACTION}",
        "13 lines repeating an earlier line's uuid (history written twice): read once"]


def _second_compaction_first(change: dict[str, Any]) -> list[dict[str, Any]]:
    """The fixture with a copy of its second compaction's two lines (same uuids) put
    first, the summary's message replaced by ``change`` when given."""
    objs = lines()
    boundary, summary = objs[25], objs[26]
    assert (boundary.get("subtype"), summary.get("isCompactSummary")) == (
        "compact_boundary", True)
    return [boundary, dict(summary, **change), *objs]


EARLY = "repeating the uuid of an earlier copy that came before its parent line"
OTHER = "reusing the uuid of an earlier line with other content or parents"


@pytest.mark.parametrize(("change", "notes"), [
    ({}, [f"2 lines {EARLY}: read as new lines"]),
    ({"message": {"role": "user", "content": "Summary: nothing happened yet."}},
     [f"1 line {EARLY}: read as new lines", f"1 line {OTHER}: read as new lines"]),
])
def test_a_compaction_copied_to_the_top_does_not_hide_the_real_one(
        tmp_path: Path, change: dict[str, Any], notes: list[str]) -> None:
    """adv29 F1: a harmless copy of a compaction's lines with the same uuids, put first,
    made the real (lossy) compaction read as history written twice and skipped: the
    transcript passed.  Now both are read: three compactions, the real loss kept."""
    path = write(tmp_path / "copy.jsonl", _second_compaction_first(change))
    out = convert(path)
    assert len([r for _, r in out[1:] if "compaction" in r]) == 3
    assert out[0][1]["reader_notes"] == notes
    code, verdict = audit(path)
    assert (code, verdict) == (
        1, "FAIL: 1 error(s), 0 warning(s), 1 info; 3 compactions lost 2 fact(s), "
        "1 that matters")


@pytest.mark.parametrize("logical_parent", [None, "not-in-this-file"])
def test_a_copy_first_of_a_compaction_without_parents_is_said(
        tmp_path: Path, logical_parent: str | None) -> None:
    """adv31 N1: with the boundary's logical parent null, or absent from the file, an
    identical copy of the compaction put first was read as the compaction and the real
    one skipped as history written twice, in a note only: a plain PASS.  Which is the
    copy cannot be told; the lines read once are counted, and the verdict says so."""
    objs = [dict(o, logicalParentUuid=logical_parent) if o.get("uuid") == "c-b2" else o
            for o in lines()]
    boundary, summary = objs[25], objs[26]
    path = write(tmp_path / "copy.jsonl", [boundary, summary, *objs])
    out = convert(path)
    assert out[0][1]["lines_not_read"] == 2
    code, verdict = audit(path)
    assert code == 0
    assert verdict.startswith("PASS (2 lines not read, see the notes): ")


MICRO = Path(__file__).parent / "fixtures" / "adapters" / "claude-microcompact.jsonl"


def test_a_microcompact_copied_to_the_top_does_not_hide_the_real_one(
        tmp_path: Path) -> None:
    """adv30 (F5's class, survey): a copy of the microcompact boundary (same uuid) put
    first made the real one read as history written twice and skipped: the results it
    cleared stayed in the working set, so its 2 lost facts vanished.  Now both are
    read: the copy clears nothing (no result yet), the real one the same as alone."""
    objs = [orjson.loads(raw) for raw in MICRO.read_bytes().splitlines()]
    (at,) = [i for i, o in enumerate(objs) if o.get("subtype") == "microcompact_boundary"]
    out = convert(write(tmp_path / "copy.jsonl", [objs[at], *objs]))
    micro = [r for _, r in out[1:] if "compaction" in r]
    assert [r.get("evicted") for r in micro] == [None, ["toolu_k1:result", "toolu_k2:result"]]
    assert micro[1]["compaction"]["tokens_after"] == 60000  # 90,000 before, 30,000 saved
    assert out[0][1]["reader_notes"] == [f"1 line {EARLY}: read as new lines", UNSEEN]
    # the copy names results not in the context yet: it could not be checked (adv67 #3)
    assert micro[0]["compaction"]["unchecked"] == (
        "the tool results the microcompact cleared are not in the context before it")
    code, verdict = audit(str(tmp_path / "copy.jsonl"))
    assert (code, verdict) == (
        0, "PASS (1 compaction could not be checked): 0 error(s), 0 warning(s), 0 info; "
        "1 compaction lost 2 fact(s), 0 that matter")


UNSEEN = ("1 line of a microcompact naming tool results that are not in the context "
          "before it (what they held is not checked)")


@pytest.mark.parametrize(("ids", "unchecked", "evicted"), [
    (None, "the microcompact names no tool result it cleared", None),
    ([], "the microcompact names no tool result it cleared", None),
    (["toolu_x", "toolu_y"], "the tool results the microcompact cleared are not in the "
     "context before it", None),
    # adv67 #5: an id twice was evicted twice ("unexpected record shape: KeyError")
    (["toolu_k1", "toolu_k1"], None, ["toolu_k1:result"]),
])
def test_a_microcompact_that_clears_nothing_known_could_not_be_checked(
        tmp_path: Path, ids: list[str] | None, unchecked: str | None,
        evicted: list[str] | None) -> None:
    """adv67 #3: a microcompact whose compactedToolIds were missing or named no result
    in the log was a checked compaction that lost 0 facts."""
    objs = [orjson.loads(raw) for raw in MICRO.read_bytes().splitlines()]
    (at,) = [i for i, o in enumerate(objs) if o.get("subtype") == "microcompact_boundary"]
    meta = dict(objs[at]["microcompactMetadata"])
    meta.pop("compactedToolIds")
    if ids is not None:
        meta["compactedToolIds"] = ids
    objs[at] = {**objs[at], "microcompactMetadata": meta}
    out = convert(write(tmp_path / "m.jsonl", objs))
    (micro,) = [r for _, r in out[1:] if "compaction" in r]
    assert micro["compaction"].get("unchecked") == unchecked
    assert micro.get("evicted") == evicted
    assert out[0][1].get("reader_notes", []) == []


def test_a_chain_of_compactions_keeps_a_bounded_set_of_early_parents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv33 B1: each compaction line inherited its parent's whole set of parents not
    yet seen, so a chain of n boundaries, each naming a logical parent absent from the
    file, kept n^2/2 uuids (3.3 GB for 2.4 MB).  Each keeps its own first, then its
    ancestors', nearest first, at most EARLY_KEPT."""
    objs: list[dict[str, Any]] = [{"type": "user", "uuid": "u0", "parentUuid": None,
                                   "sessionId": "s", "message": {"role": "user",
                                                                 "content": "Start."}}]
    for k in range(100):
        objs.append({"type": "system", "subtype": "compact_boundary", "uuid": f"b{k}",
                     "parentUuid": objs[-1]["uuid"], "logicalParentUuid": f"ghost{k}",
                     "sessionId": "s", "compactMetadata": {"trigger": "auto",
                                                           "preTokens": 100}})
    made: list[Any] = []
    real = claude_code._Converter

    def keep(path: str) -> Any:
        made.append(real(path))
        return made[-1]

    monkeypatch.setattr(claude_code, "_Converter", keep)
    convert(write(tmp_path / "chain.jsonl", objs))
    early = made[0].early
    assert claude_code.EARLY_KEPT == 16
    assert early["b0"] == ("ghost0",)
    assert early["b1"] == ("ghost1", "ghost0")
    assert early["b99"] == tuple(f"ghost{k}" for k in range(99, 83, -1))
    assert max(map(len, early.values())) == 16


def test_a_content_block_of_a_type_not_known_is_counted(tmp_path: Path) -> None:
    """adv48: a person's text in a block typed "Text" left the audit with no word (an
    error became a warning); a block of a type the reader does not know is counted as
    not read, in a user line and in an assistant line."""
    objs = lines()
    user = next(i for i, o in enumerate(objs) if o.get("type") == "user"
                and isinstance(o["message"].get("content"), str))
    objs[user]["message"]["content"] = [{"type": "Text",
                                         "text": objs[user]["message"]["content"]}]
    reply = next(i for i, o in enumerate(objs) if o.get("type") == "assistant")
    objs[reply]["message"]["content"].append({"type": "container_upload", "file_id": "f"})
    out = convert(write(tmp_path / "blocks.jsonl", objs))
    assert out[0][1]["lines_not_read"] == 2
    assert out[0][1]["reader_notes"] == [
        "1 line of a content block type this reader does not know ('Text'): not read",
        "1 line of a content block type this reader does not know ('container_upload'): "
        "not read"]


def test_a_queue_operation_not_known_is_counted(tmp_path: Path) -> None:
    """adv48: an operation "Enqueue" dropped the person's queued turn with no word;
    Claude Code's own ``dequeue`` is not counted."""
    objs = lines()
    queued = [{"type": "queue-operation", "operation": "Enqueue", "content": "use port 8443"},
              {"type": "queue-operation", "operation": "dequeue"}]
    out = convert(write(tmp_path / "queue.jsonl", [objs[0], *queued, *objs[1:]]))
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [
        "1 line of a queue operation this reader does not know ('Enqueue'): not read"]


def test_a_microcompact_says_it_made_no_summary() -> None:
    """usertest19 #1: its compaction line read "summary 0 tokens, ratio unknown"."""
    out = CliRunner().invoke(app, ["audit", str(MICRO)], env={"COLUMNS": "200"}).stdout
    assert ("microcompact, trigger auto; context 90,000 -> 60,000 tokens; no summary: "
            "evicted, not folded; 2 lost\n") in out


def test_a_microcompact_trigger_of_a_wrong_type_names_its_own_field(tmp_path: Path) -> None:
    """adv71 #4: the error named compactMetadata.trigger, a field the line has not."""
    objs = [orjson.loads(raw) for raw in MICRO.read_bytes().splitlines()]
    (at,) = [i for i, o in enumerate(objs) if o.get("subtype") == "microcompact_boundary"]
    objs[at]["microcompactMetadata"]["trigger"] = {"a": 1}
    with pytest.raises(LogError) as err:
        convert(write(tmp_path / "m.jsonl", objs))
    assert (err.value.message, err.value.field) == (
        "expected a string", "microcompactMetadata.trigger")
