"""``--format github``: one annotation per episode, at most 10 of a kind per file with
a summary annotation for the rest, and the Markdown report in the job summary (issue
13, section 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import dump, rnd, session

SAMPLE_A = Path(__file__).parent.parent / "sample_logs" / "research-decay.jsonl"


def fold_records(n_rounds: int, folds_per_round: int) -> list[dict[str, Any]]:
    """At each round 1..n, ``folds_per_round`` summaries each folding one span whose
    negation they drop: CA301 fires per fold, on consecutive rounds."""
    records: list[dict[str, Any]] = [session(session_id="folds", budget_tokens=100_000,
                                             max_depth=3)]
    records.append(rnd(0, spans=[{"id": f"x{r}.{k}", "tokens": 20,
                                  "text": f"Do not restart worker {r}{k} on Fridays."}
                                 for r in range(1, n_rounds + 1)
                                 for k in range(folds_per_round)]))
    for r in range(1, n_rounds + 1):
        ids = [f"x{r}.{k}" for k in range(folds_per_round)]
        records.append(rnd(r, summaries=[{"id": f"F{r}.{k}", "tokens": 5, "children": [i],
                                          "text": "Looked at the workers."}
                                         for k, i in enumerate(ids)], evicted=ids))
    return records


def annotations(out: str, kind: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(f"::{kind} ")]


def test_one_annotation_per_episode_not_per_fold(tmp_path: Path) -> None:
    path = dump(fold_records(3, 4), tmp_path / "f.jsonl")  # 12 folds over rounds 1-3
    out = CliRunner().invoke(app, ["audit", str(path), "-f", "github"]).stdout
    ca301 = [ln for ln in out.splitlines() if "CA301" in ln]
    assert len(ca301) == 1
    assert "title=CA301 silent-discriminating-fold (rounds 1-3%2C 12 findings)" in ca301[0]


def test_sample_a_caps_each_kind_at_ten_and_every_rule_shows() -> None:
    out = CliRunner().invoke(app, ["audit", str(SAMPLE_A), "-f", "github"]).stdout
    errors, warnings = annotations(out, "error"), annotations(out, "warning")
    assert len(errors) == 10 and len(warnings) <= 10
    titles = [re.search(r"title=(CA\d+)", ln) for ln in errors[:-1]]
    # every error rule of sample (a) has its first episode before any second one
    codes = [m.group(1) for m in titles if m]
    assert codes[:5] == ["CA101", "CA103", "CA201", "CA301", "CA303"]
    rest = errors[-1]
    # 6 CA101 + 1 CA103 + 1 CA201 + 8 CA301 + 1 CA303 error episodes = 17: 9 shown,
    # the first of each rule, then CA101's and CA301's second and third
    assert rest.endswith("title=8 more error episode(s)::8 more error episode(s) in this "
                         "trace: CA101 x3, CA301 x5; the job summary and the text, JSON or "
                         "SARIF reports list them")
    assert any("CA104" in ln for ln in warnings) and any("CA302" in ln for ln in warnings)


def test_markdown_report_appended_to_the_job_summary(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    path = dump(fold_records(1, 1), tmp_path / "f.jsonl")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    result = CliRunner().invoke(app, ["audit", str(path), "-f", "github"], env=env)
    assert result.exit_code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n## compaction-audit: FAIL")  # appended
    assert "CA301" in text
    plain = CliRunner().invoke(app, ["audit", str(path), "-f", "json"], env=env)
    assert plain.exit_code == 1 and summary.read_text() == text  # github format only


def test_job_summary_that_is_an_input_is_left_alone(tmp_path: Path) -> None:
    path = dump(fold_records(1, 1), tmp_path / "f.jsonl")
    before = path.read_bytes()
    env = {"GITHUB_STEP_SUMMARY": str(path)}
    result = CliRunner().invoke(app, ["audit", str(path), "-f", "github"], env=env)
    assert result.exit_code == 1 and path.read_bytes() == before
    assert "GITHUB_STEP_SUMMARY" in result.stderr and "refusing" in result.stderr


def test_a_run_of_many_traces_shares_each_kind_s_ten_slots(tmp_path: Path) -> None:
    # GitHub shows 10 annotations of a kind per step, not per trace: 12 failing traces
    # each get their worst episode in turn, and the tenth slot counts the rest (a
    # per-trace cap gave the first traces every slot: a CI engineer's test)
    folder = tmp_path / "traces"
    folder.mkdir()
    for k in range(12):
        dump(fold_records(3, 2), folder / f"t{k:02d}.jsonl")
    out = CliRunner().invoke(app, ["audit", str(folder), "-f", "github"]).stdout
    errors = annotations(out, "error")
    assert len(errors) == 10
    files = [re.search(r"file=[^,]*/(t\d+)\.jsonl", ln) for ln in errors[:-1]]
    assert [m.group(1) for m in files if m] == [f"t{k:02d}" for k in range(9)]
    # each trace has 3 error episodes (CA201, CA301, CA303, in that order): 36; the 9
    # shown are the CA201 of t00-t08, the rest 3 CA201, 12 CA301 and 12 CA303
    assert all("title=CA201 " in ln for ln in errors[:-1])
    assert errors[-1].endswith(
        "::27 more error episode(s) in 12 traces: CA201 x3, CA301 x12, CA303 x12; the job "
        "summary and the text, JSON or SARIF reports list them")
    # of 12 traces: no file, no line (usertest17 #9: it sat on t09's first round, a
    # finding there to a pull request's reader)
    assert errors[-1].startswith("::error title=27 more error episode(s)::")
    # the failing traces no slot was left for are named, plainly (adv37)
    lines = out.splitlines()
    assert lines[-2] == (
        f"not annotated (GitHub shows 10 of each kind per step): 3 failing trace(s): "
        f"{folder}/t09.jsonl, {folder}/t10.jsonl, {folder}/t11.jsonl; the job summary "
        "lists every one")


def test_skipped_records_share_the_warning_slots(tmp_path: Path) -> None:
    # --lenient: each trace's skipped records were 10 more warnings of its own (adv37:
    # 48 warnings for four traces)
    folder = tmp_path / "traces"
    folder.mkdir()
    for k in range(4):
        path = dump(fold_records(3, 2), folder / f"t{k}.jsonl")
        with path.open("a") as out:
            out.write("{bad\n" * 12)
    out = CliRunner().invoke(app, ["audit", str(folder), "-f", "github", "--lenient"]).stdout
    warnings = annotations(out, "warning")
    assert len(warnings) == 10
    # 4 drift episodes and 48 skipped records; in turns: the 4 episodes, the 4 traces'
    # first skipped records, t0's second: 9 shown, 43 skipped records counted
    assert sum("title=CA104 " in ln for ln in warnings) == 4
    assert sum("title=skipped record" in ln for ln in warnings) == 5
    assert warnings[-1].endswith(
        "::43 more warning annotation(s) in 4 traces: skipped record x43; the job summary "
        "and the text, JSON or SARIF reports list them")


def _codex(*items: tuple[str, str]) -> str:
    """A Codex rollout in our own words: ``items`` as (role, text) messages, and a
    compaction whose summary drops the first (``("compact", summary)``)."""
    lines: list[dict[str, Any]] = [{"timestamp": "t", "type": "session_meta",
                                    "payload": {"id": "answers", "cwd": "/srv"}}]
    for role, text in items:
        if role == "compact":
            lines += [{"timestamp": "t", "type": "compacted", "payload": {"message": text}},
                      {"timestamp": "t", "type": "event_msg",
                       "payload": {"type": "context_compacted"}}]
            continue
        kind = "input_text" if role == "user" else "output_text"
        lines.append({"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
    return "".join(json.dumps(x) + "\n" for x in lines)


def test_an_answer_from_the_summary_is_a_notice_at_its_line(tmp_path: Path) -> None:
    """usertest75 F8: the annotations pointed at the compaction only, never at the
    answer the verdict names ("answered from the summary (line 6)")."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(_codex(("user", "Tune the nightly export."),  # the reply's fact is
                           ("assistant", "Set batch_size to 750 for the export."),  # lost
                           ("compact", "Summary: tuned the nightly export."),
                           ("user", "What batch_size did we set for the export?"),
                           ("assistant", "It is 500.")))
    out = CliRunner().invoke(app, ["audit", str(path), "-f", "github"]).stdout
    notes = [n for n in annotations(out, "notice") if "title=answered from the summary" in n]
    assert notes == [
        f"::notice file={path},line=7,title=answered from the summary::answered from the "
        "summary without reading it again: quantity 'batch_size to 750' and 1 more lost "
        "fact(s), lost at the compaction at line 4, asked again at line 6; check this "
        "answer against the fact"], out
    calm = tmp_path / "calm.jsonl"  # the answer reads the fact again first: no notice
    calm.write_text(_codex(("user", "Tune the nightly export."),
                           ("assistant", "Set batch_size to 750 for the export."),
                           ("compact", "Summary: tuned the nightly export."),
                           ("user", "Tell me a joke about exports.")))
    quiet = CliRunner().invoke(app, ["audit", str(calm), "-f", "github"]).stdout
    assert "answered from the summary" not in quiet, quiet


def test_answers_left_out_are_not_said_to_be_in_sarif(tmp_path: Path) -> None:
    """adv145 F6: with more answers from the summary than notice slots, the summary
    annotation said "the text, JSON or SARIF reports list them"; SARIF holds none."""
    items: list[tuple[str, str]] = [("user", "Tune the nightly export.")]
    items += [("assistant", f"Set knob_{k} to {700 + k} for the export.") for k in range(12)]
    items.append(("compact", "Summary: tuned the nightly export."))
    for k in range(12):
        items += [("user", f"What was knob_{k} set to?"), ("assistant", "I do not recall.")]
    path = tmp_path / "rollout.jsonl"
    path.write_text(_codex(*items))
    out = CliRunner().invoke(app, ["audit", str(path), "-f", "github"]).stdout
    notes = annotations(out, "notice")
    assert sum("title=answered from the summary" in n for n in notes) == 9
    assert notes[-1].endswith("answered from the summary x3; the text, JSON or Markdown "
                              "reports list them"), notes[-1]
