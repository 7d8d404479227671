"""The OpenHands adapter: condensation events name exactly what they forgot (synthetic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit import api
from compaction_audit.cli import app
from compaction_audit.errors import LogError
from compaction_audit.io import openhands
from compaction_audit.io.detect import detect_format
from tests.foreign import (
    FIXTURES,
    all_spans,
    compaction_rounds,
    run_adapter,
    strict_then_lenient,
    without_lines,
    working_set,
)

TRAJECTORY = FIXTURES / "openhands" / "condensation.json"


def events() -> list[dict[str, Any]]:
    return list(json.loads(TRAJECTORY.read_text()))


def test_a_range_condensation_folds_exactly_the_events_it_names() -> None:
    out = run_adapter(openhands.records, TRAJECTORY)
    assert out[0][1]["budget_tokens"] == 128000  # llm_metrics context_window
    (line, rnd), _ = compaction_rounds(out)
    assert line == 129  # event 7 opens on line 129 of the indented list
    folded = ["2.thought", "2", "3", "4", "5", "6"]  # event 5's thought is empty
    assert rnd["summaries"][0]["children"] == folded and rnd["evicted"] == folded
    info = rnd["compaction"]
    assert (info["trigger"], info["kind"], info["messages_removed"]) == ("auto", "compact", 5)
    # per_turn_token at the condensation, then at the next call
    assert (info["tokens_before"], info["tokens_after"]) == (96000, 7000)


def test_a_listed_condensation_without_summary_only_forgets() -> None:
    out = run_adapter(openhands.records, TRAJECTORY)
    _, (_line, rnd) = compaction_rounds(out)
    assert "summaries" not in rnd and rnd["evicted"] == ["9", "10"]
    info = rnd["compaction"]
    assert (info["kind"], info["trigger"]) == ("forget", "requested")  # after a request
    assert working_set(out) == ["0", "1", "7", "8", "13"]


def test_sources_of_events() -> None:
    spans = all_spans(run_adapter(openhands.records, TRAJECTORY))
    assert {k: spans[k]["source"] for k in ("0", "1", "2", "3", "4", "13")} == {
        "0": "harness:meta", "1": "user", "2": "tool_call:run", "3": "tool_result:run",
        "4": "assistant", "13": "assistant"}
    assert "14" not in spans  # a state change is bookkeeping
    # a call's thought is the model's text; its flags (is_input: false) are not facts
    assert spans["2"]["text"] == "cat config/db.yaml"
    assert (spans["2.thought"]["source"], spans["2.thought"]["text"]) == (
        "assistant", "First I read the database settings.")


def test_the_summary_is_checked_against_its_exact_children() -> None:
    (first, _second) = api.audit(str(TRAJECTORY)).compactions
    lost = {d["text"] for d in first["lost"]}
    assert "max_connections: 180" in lost  # read in event 3, not in the summary
    assert "pg16-main.internal" not in lost  # the summary restates it


def test_events_one_per_line_read_the_same(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events()))
    assert detect_format(str(path)) == "openhands"
    as_lines = run_adapter(openhands.records, path)
    as_list = run_adapter(openhands.records, TRAJECTORY)
    assert without_lines(as_lines) == without_lines(as_list)
    assert [line for line, _ in compaction_rounds(as_lines)] == [8, 13]


@pytest.mark.parametrize("start, end, first", [(2, 10**15, []), (0, 2**63 - 1, ["0", "1"]),
                                               (1, 6, ["1"])])
def test_a_range_counts_the_events_it_took_not_its_width(
        tmp_path: Path, start: int, end: int, first: list[str]) -> None:
    # 0 .. 2^63-1 was messages_removed 2^63, which no report could write (adv14 F10)
    evs = events()
    evs[7]["args"].update(forgotten_events_start_id=start, forgotten_events_end_id=end)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(evs))
    (_, rnd), _ = compaction_rounds(run_adapter(openhands.records, path))
    assert rnd["evicted"] == [*first, "2.thought", "2", "3", "4", "5", "6"]  # seen before
    assert rnd["compaction"]["messages_removed"] == len(first) + 5  # events 2 .. 6
    result = CliRunner().invoke(app, ["audit", "-f", "json", str(path)])
    assert result.exit_code == 1, result.output  # a failing trace's report, not exit 2


@pytest.mark.parametrize("start, end, field", [
    (-2**63, 2**63 - 1, "start"), (-1, 6, "start"), (2, 2**63, "end"),
    (-10**30, 10**30, "start"), (2, 10**30, "end")])
def test_an_event_id_outside_0_to_int64_is_a_file_line_error(
        tmp_path: Path, start: int, end: int, field: str) -> None:
    # -10^30 .. 10^30 said "expected integers start <= end" (orjson reads them as floats)
    evs = events()
    evs[7]["args"].update(forgotten_events_start_id=start, forgotten_events_end_id=end)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    error, _out, skipped = strict_then_lenient(openhands.records, path)
    assert error == (f"{path}:8: event id out of range (0 .. 2^63-1) "
                     f"(args.forgotten_events_{field}_id)")
    assert skipped == [8]


def test_bad_event_is_a_file_line_error_or_a_counted_skip(tmp_path: Path) -> None:
    evs = events()
    evs[7]["args"]["forgotten_events_end_id"] = 1  # before the start: no range
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    error, out, skipped = strict_then_lenient(openhands.records, path)
    assert error == f"{path}:8: expected integers start <= end (args.forgotten_events_start_id)"
    assert skipped == [8] and len(compaction_rounds(out)) == 1


SDK_EVENTS = FIXTURES / "openhands" / "sdk-events.jsonl"


def test_sdk_events_are_read_in_the_same_terms() -> None:
    assert detect_format(str(SDK_EVENTS)) == "openhands"
    out = run_adapter(openhands.records, SDK_EVENTS)
    spans = all_spans(out)
    assert {k: spans[k]["source"] for k in spans} == {
        "e0": "harness:meta", "e1": "user", "e2.thought": "assistant",
        "e2": "tool_call:terminal", "e3": "tool_result:terminal", "e7": "assistant"}
    assert spans["e2"]["text"] == "grep -rn -- '--out' src"  # the action, not its kind
    (line, rnd), = compaction_rounds(out)
    assert line == 7
    assert rnd["summaries"][0]["children"] == ["e2.thought", "e2", "e3"]
    assert rnd["compaction"]["trigger"] == "requested"  # a request without a reason


def test_sdk_request_reason_and_unknown_kinds(tmp_path: Path) -> None:
    evs = [json.loads(line) for line in SDK_EVENTS.read_text().splitlines()]
    evs[5]["reason"] = "context_limit"
    evs[4]["kind"] = "SomeFutureEvent"
    path = tmp_path / "sdk.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    out = run_adapter(openhands.records, path)
    (_, rnd), = compaction_rounds(out)
    assert rnd["compaction"]["trigger"] == "auto"
    # counted as not read, not only noted (adv29 F4)
    assert out[0][1]["reader_notes"] == [
        "1 event of an SDK event kind this reader does not know ('SomeFutureEvent'): "
        "not read"]
    assert out[0][1]["lines_not_read"] == 1


def test_a_renamed_condensation_is_counted_not_read_not_a_tool_call(tmp_path: Path) -> None:
    """adv29 F4: the condensation actions renamed ``Condensation`` became
    ``tool_call:Condensation`` spans, the forgotten events were never folded, and the
    failing trajectory passed with no word.  An action whose name folds to a known one
    (letter case, punctuation), or an unknown action carrying a condensation's args,
    is counted as not read; other unknown actions are still tool calls."""
    evs = events()
    named = [e for e in evs if e.get("action") == "condensation"]
    assert len(named) == 2
    for e in named:
        e["action"] = "Condensation"
    evs.append({"id": 90, "source": "agent", "action": "forget_things",
                "args": {"forgotten_event_ids": [1, 2], "summary": "x"}})
    evs.append({"id": 91, "source": "agent", "action": "deploy_tool",
                "args": {"summary": "a tool may well take a summary"}})
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(evs, indent=1))
    out = run_adapter(openhands.records, path)
    assert compaction_rounds(out) == []
    assert out[0][1]["lines_not_read"] == 3
    assert out[0][1]["reader_notes"] == [
        "2 events of an action name this reader does not know ('Condensation'): not read",
        "1 event of an action (with a condensation's args) this reader does not know "
        "('forget_things'): not read"]
    assert all_spans(out)["91"]["source"] == "tool_call:deploy_tool"
    assert api.audit(str(path)).verdict().startswith("PASS (3 lines not read")
    for fixture in (TRAJECTORY, SDK_EVENTS):
        assert "lines_not_read" not in run_adapter(openhands.records, fixture)[0][1]


def test_a_condensation_that_forgets_nothing_it_can_find_is_not_checked(
        tmp_path: Path) -> None:
    """adv31 N5: with the forgotten-event fields renamed (``dropped_*``), or ids that
    name no event of the log (+1000), both condensations were read as forgetting
    nothing and the failing trajectory was a plain PASS.  Each is now a compaction that
    could not be checked, and the renamed fields are noted; ids of which only some are
    in the log are noted."""
    renamed = events()
    for e in renamed:
        if e.get("action") == "condensation":
            e["args"] = {k.replace("forgotten", "dropped"): v for k, v in e["args"].items()}
    unknown = events()
    for e in unknown:
        args = e.get("args") or {}
        if e.get("action") == "condensation":
            for key in ("forgotten_events_start_id", "forgotten_events_end_id"):
                if args[key] is not None:
                    args[key] += 1000
            if args["forgotten_event_ids"] is not None:
                args["forgotten_event_ids"] = [i + 1000 for i in args["forgotten_event_ids"]]
    for evs, why, notes in (
            (renamed, "the condensation names no event it forgot", 3),
            (unknown, "the condensation names no event it forgot", 0)):
        path = tmp_path / "t.json"
        path.write_text(json.dumps(evs, indent=1))
        out = run_adapter(openhands.records, path)
        first, second = compaction_rounds(out)
        assert first[1]["compaction"]["unchecked"] == why  # a range takes known ids only
        assert second[1]["compaction"]["unchecked"] == (
            "the condensation names no event it forgot" if evs is renamed
            else "the events the condensation forgot are not in the log before it")
        assert len(out[0][1].get("reader_notes", [])) == notes
        assert "2 compactions could not be checked" in api.audit(str(path)).verdict()
    partial = events()
    partial[12]["args"]["forgotten_event_ids"] = [9, 10, 1009]
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(partial, indent=1))
    out = run_adapter(openhands.records, path)
    assert out[0][1]["reader_notes"] == [
        "a condensation names forgotten events that are not in the log before it: what "
        "they held is not checked"]
    assert all("unchecked" not in rnd["compaction"] for _, rnd in compaction_rounds(out))
    for fixture in (TRAJECTORY, SDK_EVENTS):
        assert all("unchecked" not in rnd["compaction"]
                   for _, rnd in compaction_rounds(run_adapter(openhands.records, fixture)))


@pytest.mark.parametrize(("ids", "removed", "why"), [
    ([9, 10], 2, None),  # the fixture: a run and its output, both in the context
    ([9, 10, 99], 2, None),  # 99: no event of the log (a note), not counted
    ([0], 1, None),  # the system prompt: a span (harness text, never a fact) folded
    ([14], 0, "log"),  # a state change after it: not in the log before it
    ([12], 0, "hold"),  # the condensation itself
    ([10, 14], 1, None),  # 14 comes later: not counted
    ([99], 0, "log"),
])
def test_a_listed_condensation_counts_what_it_folded(
        tmp_path: Path, ids: list[int], removed: int, why: str | None) -> None:
    """adv65 #2, #3: a list naming only events with no span in the context (a state
    change, the condensation itself) folded nothing and was a checked compaction that
    lost nothing; ``messages_removed`` counted the ids named (4 for [1, 2, 3, 99])."""
    evs = events()
    evs[12]["args"]["forgotten_event_ids"] = ids
    path = tmp_path / "t.json"
    path.write_text(json.dumps(evs, indent=1))
    second = compaction_rounds(run_adapter(openhands.records, path))[1][1]["compaction"]
    assert second["messages_removed"] == removed
    assert second.get("unchecked") == {
        None: None,
        "hold": "the events the condensation forgot hold nothing in the context (no span "
                "of them is there)",
        "log": "the events the condensation forgot are not in the log before it"}[why]


@pytest.mark.parametrize("bad", [[1.5], [True], [[1]], [2.0], [-1], [""]])
def test_a_listed_id_that_is_no_event_id_is_an_error(tmp_path: Path, bad: list[Any]) -> None:
    """adv65 #5: 1.5, true and [1] were read as ids of no event, and 2.0 as no id 2."""
    evs = events()
    evs[12]["args"]["forgotten_event_ids"] = bad
    path = tmp_path / "t.json"
    path.write_text(json.dumps(evs, indent=1))
    with pytest.raises(LogError) as err:
        run_adapter(openhands.records, path)
    assert str(err.value).endswith(": expected a list of event ids (integers >= 0 or "
                                   "strings) ([12].args.forgotten_event_ids)")


@pytest.mark.parametrize("summary", ["", "  \n", None])
def test_a_summarizing_condensation_with_its_summary_emptied_is_judged(
        tmp_path: Path, summary: str | None) -> None:
    """adv33 B3: the fixture's first condensation (summary_offset 2) with its summary
    emptied, blank or null was read as a forget, which no rule judges: a failing
    trajectory passed, exit 0 even with --fail-on warning.  It is a fold into an empty
    summary: the facts of the events it forgot are lost (CA301)."""
    evs = events()
    first = next(e for e in evs if e.get("action") == "condensation")
    assert first["args"]["summary_offset"] == 2
    first["args"]["summary"] = summary
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(evs, indent=2))
    (_line, rnd), _ = compaction_rounds(run_adapter(openhands.records, path))
    assert rnd["compaction"]["kind"] == "compact"
    assert rnd["summaries"][0]["children"] == ["2.thought", "2", "3", "4", "5", "6"]
    assert rnd["summaries"][0]["tokens"] == (1 if summary == "  \n" else 0)
    result = CliRunner().invoke(app, ["audit", str(path), "-q", "--fail-on", "warning"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("WARN: 0 error(s), 1 warning(s), 0 info; 2 compactions "
                                    "lost 2 fact(s)")


@pytest.mark.parametrize(("edit", "field"), [
    # adv46: each error named another field, or none ("unhashable type: 'dict'")
    (lambda e: e.__setitem__("action", {"x": 1}), "action"),
    (lambda e: e["args"].__setitem__("forgotten_events_end_id", "6"),
     "args.forgotten_events_end_id"),
    # adv48: an id of -2 or 2.5 took an event out of a forgotten range, a source 7 or a
    # null action made a person's message another's, with no word
    (lambda e: e.__setitem__("id", -2), "id"), (lambda e: e.__setitem__("id", 2.5), "id"),
    (lambda e: e.__setitem__("id", "2"), "id"),
    (lambda e: e.__setitem__("source", 7), "source"),
    (lambda e: e.__setitem__("action", None), "action"),
])
def test_an_event_field_of_a_wrong_type_is_named(tmp_path: Path, edit: Any, field: str
                                                 ) -> None:
    evs = events()
    edit(evs[7])
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    with pytest.raises(LogError) as err:
        list(openhands.records(str(path)))
    assert (err.value.line, err.value.field) == (8, field)


@pytest.mark.parametrize(("at", "name", "value"), [
    (1, "kind", 5),
    # adv48: a null observation was read as an empty result: PASS became FAIL
    (3, "observation", None), (3, "observation", "done")])
def test_an_sdk_event_field_of_a_wrong_type_is_named(tmp_path: Path, at: int, name: str,
                                                     value: Any) -> None:
    lines = SDK_EVENTS.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[at])
    event[name] = value
    lines[at] = json.dumps(event)
    path = tmp_path / "sdk.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(LogError) as err:
        list(openhands.records(str(path)))
    assert (err.value.line, err.value.field) == (at + 1, name)


def test_an_event_source_not_known_is_noted(tmp_path: Path) -> None:
    evs = events()
    evs[1]["source"] = "User"
    path = tmp_path / "user.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    notes = run_adapter(openhands.records, path)[0][1]["reader_notes"]
    assert "an event source this reader does not know ('User'): read as no person's" in notes


@pytest.mark.parametrize(("change", "error"), [
    (lambda e: e.update(llm_metrics=5), "expected an object ([2].llm_metrics)"),
    (lambda e: e["llm_metrics"].update(accumulated_token_usage=5),
     "expected an object ([2].llm_metrics.accumulated_token_usage)"),
    (lambda e: None, None),
])
def test_metrics_of_the_wrong_type_are_an_error(tmp_path: Path, change: Any,
                                                error: str | None) -> None:
    """adv65 #5: an llm_metrics (or its accumulated_token_usage) of 5 was ignored, the
    budget and the context sizes left unknown with no word."""
    evs = events()
    change(evs[2])
    path = tmp_path / "t.json"
    path.write_text(json.dumps(evs, indent=1))
    if error is None:
        assert run_adapter(openhands.records, path)[0][1]["budget_tokens"] == 128000
        return
    with pytest.raises(LogError) as err:
        run_adapter(openhands.records, path)
    assert str(err.value).endswith(error)


def test_a_turn_above_the_window_and_a_bad_summary_offset(tmp_path: Path) -> None:
    """adv65 #5: a per_turn_token of 500,000 in a 128,000-token window was the
    compaction's context size; a summary_offset of "x" made a summarizing condenser."""
    evs = events()
    evs[7]["llm_metrics"]["accumulated_token_usage"]["per_turn_token"] = 500_000
    path = tmp_path / "t.json"
    path.write_text(json.dumps(evs, indent=1))
    out = run_adapter(openhands.records, path)
    first = compaction_rounds(out)[0][1]["compaction"]
    assert first["tokens_before"] == 6300  # the turn before (event 5's), not 500,000
    assert "a per_turn_token above the context window: not read as the context's size" \
        in out[0][1]["reader_notes"]
    evs = events()
    evs[7]["args"]["summary_offset"] = "x"
    path.write_text(json.dumps(evs, indent=1))
    with pytest.raises(LogError) as err:
        run_adapter(openhands.records, path)
    assert str(err.value).endswith("expected an integer >= 0 ([7].args.summary_offset)")


def test_a_repeated_event_id_is_a_file_line_error(tmp_path: Path) -> None:
    """adv73: the observation of event 2 given the user message's id 1 took it out of
    the condensation's range 2..6, and its facts stayed "in context" without a word."""
    evs = events()
    evs[3]["id"] = 1
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    error, _out, skipped = strict_then_lenient(openhands.records, path)
    assert error == (f"{path}:4: event id '1' repeated (first at line 2): event ids are "
                     "unique (id)")
    assert skipped == [4]


@pytest.mark.parametrize("name", ["condensation", "Condensation", "condensation_request"])
def test_a_condensation_written_as_an_observation_is_counted_not_read(
        tmp_path: Path, name: str) -> None:
    """adv73: a condensation under the key ``observation`` was read as bookkeeping or a
    tool's output: nothing folded, and the trajectory passed."""
    evs = events()
    evs[7].pop("action")
    evs[7]["observation"] = name
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in evs))
    out = run_adapter(openhands.records, path)
    assert out[0][1]["lines_not_read"] == 1
    assert out[0][1]["reader_notes"] == [
        f"1 event of an observation (a condensation is an action) this reader does not "
        f"know ({name!r}): not read"]
    other = events()
    other[3]["extras"] = {"forgotten_event_ids": [1]}  # an observation with its fields
    path.write_text("".join(json.dumps(e) + "\n" for e in other))
    assert run_adapter(openhands.records, path)[0][1]["lines_not_read"] == 1
