"""A fold finding of the baseline that now loses more facts is new (ux5 F3).

A fold finding's fingerprint is its fold id; the baseline also records the digests of
what the fold lost, and the finding stays baselined only while what it loses is among
them.  Each log: round 0 brings the spans, round 1 folds them into summary ``F1``,
whose text keeps none of their discriminators, and evicts them (CA301, error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.gate_app import run
from tests.logs import SAMPLES, dump, rnd, session

NEGATION = "Do NOT enable `--force` on the prod migration."
TIMEOUT = "Raised read_timeout_ms from 30000 to 45000 on staging."
RAISED = "read_timeout_ms from 30000 to 45000"
"""TIMEOUT's value bound to its name (usertest72 #3)."""


def fold_log(path: Path, *texts: str, session_id: str = "facts", fold: str = "F1") -> Path:
    ids = [f"s{i}" for i in range(len(texts))]
    records: list[dict[str, Any]] = [
        session(session_id=session_id),
        rnd(0, spans=[{"id": i, "tokens": 20, "text": t, "source": "user"}
                      for i, t in zip(ids, texts, strict=True)]),
        rnd(1, summaries=[{"id": fold, "tokens": 5, "children": ids,
                           "text": "Guidance was noted."}], evicted=ids)]
    return dump(records, path)


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A baseline of the fold that loses NEGATION's facts (three: the flag, the
    negation and the scope ``prod``)."""
    monkeypatch.chdir(tmp_path)
    fold_log(tmp_path / "t.jsonl", NEGATION)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    return tmp_path / "b.json"


def test_the_baseline_records_the_digests_of_what_a_fold_lost(base: Path) -> None:
    [ca301] = [e for e in json.loads(base.read_text())["findings"] if e["code"] == "CA301"]
    assert ca301["key"] == "entity:F1"
    assert len(ca301["facts"]) == 3 and all(len(d) == 16 for d in ca301["facts"])
    assert ca301["facts"] == sorted(ca301["facts"])


def test_the_same_loss_is_baselined(base: Path) -> None:
    result = run("audit", "t.jsonl", "--baseline", str(base), "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert [f["code"] for f in doc["findings"]] == []
    assert doc["baseline"]["grown"] == []


def test_a_fold_that_loses_one_more_fact_is_new(base: Path) -> None:
    fold_log(base.parent / "t.jsonl", NEGATION, TIMEOUT)  # F1 also loses four more
    result = run("audit", "t.jsonl", "--baseline", str(base), "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert [f["code"] for f in doc["findings"]] == ["CA301"]
    # the first three new facts are named (usertest14), in the lost list's order
    assert doc["baseline"]["grown"] == [{
        "code": "CA301", "rule": "silent-discriminating-fold", "key": "entity:F1",
        "new_facts": 4, "new": [{"kind": "scope", "text": "staging"},
                                {"kind": "quantity", "text": "30000"},
                                {"kind": "quantity", "text": RAISED}], "verb": "loses"}]
    text = run("audit", "t.jsonl", "--baseline", str(base)).stdout
    assert ("baseline entry t.jsonl CA301 silent-discriminating-fold entity:F1 now loses "
            f"4 more fact(s) (scope 'staging', quantity '30000', quantity '{RAISED}' and 1 "
            "more): reported as new") in " ".join(text.split())
    # and the header's baseline line, on the first screen, names them too (usertest29
    # #6: it named only the finding's key)
    assert (f"baseline 4 finding(s) in {base}, not shown; 1 finding(s) of it now name more "
            "facts, shown as new: CA301 entity:F1 now loses 4 more fact(s) (scope "
            f"'staging', quantity '30000', quantity '{RAISED}' and 1 more)") in " ".join(
                text.split())
    sarif = json.loads(run("audit", "t.jsonl", "--baseline", str(base), "-f", "sarif").stdout)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "CA301"]
    new = ("Baselined, now loses 4 more fact(s) (scope 'staging', quantity '30000', "
           "quantity 'read_timeout_ms from 30000 to 45000' and 1 more): fold F1 silently dropped")
    assert result["baselineState"] == "updated"
    assert result["message"]["text"].startswith(new)
    # the annotation a CI user sees says what is new first (usertest16 #6)
    github = run("audit", "t.jsonl", "--baseline", str(base), "-f", "github").stdout
    [error] = [x for x in github.splitlines() if x.startswith("::error")]
    assert error.split("::")[2].startswith(new)
    junit = run("audit", "t.jsonl", "--baseline", str(base), "-f", "junit").stdout
    assert f"error: {new}" in junit  # and the test report (usertest17)
    # a finding the baseline does not hold says nothing of it
    fresh = run("audit", "t.jsonl", "-f", "github").stdout
    assert "Baselined" not in fresh and "::error " in fresh


def test_a_fold_that_loses_fewer_facts_stays_baselined(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fold_log(tmp_path / "t.jsonl", NEGATION, TIMEOUT)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    fold_log(tmp_path / "t.jsonl", NEGATION)
    assert run("audit", "t.jsonl", "--baseline", "b.json").exit_code == 0


def test_an_entry_without_facts_matches_on_its_fingerprint(base: Path) -> None:
    """A baseline written before facts were recorded keeps its meaning."""
    doc = json.loads(base.read_text())
    for e in doc["findings"]:
        e.pop("facts", None)
    base.write_text(json.dumps(doc))
    fold_log(base.parent / "t.jsonl", NEGATION, TIMEOUT)
    assert run("audit", "t.jsonl", "--baseline", str(base)).exit_code == 0


def test_facts_that_are_not_a_list_of_strings_are_a_usage_error(base: Path) -> None:
    doc = json.loads(base.read_text())
    doc["findings"][0]["facts"] = [1]
    base.write_text(json.dumps(doc))
    result = run("audit", "t.jsonl", "--baseline", str(base))
    assert result.exit_code == 2
    assert "findings[0].facts must be a list of strings" in result.stderr


def test_a_baseline_of_another_session_at_the_same_path_is_not_applied(base: Path) -> None:
    """adv22a F3: a job auditing one path, a new session each run, had the findings of
    unrelated sessions hidden by a baseline of an old one."""
    [ca301] = [e for e in json.loads(base.read_text())["findings"] if e["code"] == "CA301"]
    assert ca301["session"] == "facts"
    fold_log(base.parent / "t.jsonl", NEGATION, session_id="next-run")
    result = run("audit", "t.jsonl", "--baseline", str(base), "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert "CA301" in [f["code"] for f in doc["findings"]]
    assert doc["baseline"]["other_session"] == ["facts"]
    assert doc["baseline"]["suppressed"] == 0
    text = run("audit", "t.jsonl", "--baseline", str(base)).stdout
    assert ("baseline entries for t.jsonl are of session facts, not of this trace's "
            "session next-run: not applied") in text
    # the verdict alone says it on stderr (usertest71 #4: -q and --statistics failed
    # with every finding new and no word of why)
    for flag in ("-q", "--statistics"):
        quiet = run("audit", "t.jsonl", "--baseline", str(base), flag)
        assert quiet.exit_code == 1
        assert quiet.stderr.startswith(
            "compaction-audit: baseline entries for t.jsonl are of session facts, not "
            "of this trace's "
            "session next-run: not applied"), quiet.stderr
    for e in (doc := json.loads(base.read_text()))["findings"]:  # a baseline without
        e.pop("session", None)  # sessions keeps its meaning
    base.write_text(json.dumps(doc))
    assert run("audit", "t.jsonl", "--baseline", str(base)).exit_code == 0


def test_another_session_s_entries_are_not_stale_even_when_no_finding_matches(
        base: Path) -> None:
    """A CI engineer's test: another session at the path whose findings share no
    fingerprint with the baseline read as "baseline entry no longer occurs" (the
    findings fixed) and never said the baseline was of another session."""
    dump([session(session_id="next-run"), rnd(0, spans=[{"id": "a", "tokens": 5}])],
         base.parent / "t.jsonl")
    doc = json.loads(run("audit", "t.jsonl", "--baseline", str(base), "--format",
                         "json").stdout)
    assert (doc["baseline"]["stale"], doc["baseline"]["other_session"]) == ([], ["facts"])
    text = run("audit", "t.jsonl", "--baseline", str(base)).stdout
    assert "no longer occurs" not in text
    assert ("baseline entries for t.jsonl are of session facts, not of this trace's "
            "session next-run: not applied") in text


@pytest.mark.parametrize(("facts", "merged"), [
    ([["a"], ["b"], ["a", "c"]], ["a", "b", "c"]),
    ([["a"], None, ["c"]], None),
])
def test_entries_of_one_fingerprint_are_merged_once(tmp_path: Path, facts: list[Any],
                                                    merged: list[str] | None) -> None:
    """A baseline may repeat a fingerprint; its facts are joined (adv23 F1: pairwise
    merging made 20,000 such entries cost 77 s)."""
    from compaction_audit.baseline import load

    entry = {"trace": "t.jsonl", "code": "CA301", "key": "entity:F1",
             "rule": "silent-discriminating-fold", "fingerprint": "f" * 64}
    doc = {"baseline_format": 1, "findings": [
        {**entry, **({} if f is None else {"facts": f})} for f in facts]}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    [got] = load(tmp_path / "b.json").values()
    assert got.facts == (None if merged is None else tuple(merged))


def test_a_long_session_id_still_matches_its_own_baseline(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """adv24 F6: the baseline stores a session id over 1,024 characters clipped (with a
    digest), and compared it with the whole id: the baseline of this very trace never
    applied (every finding new)."""
    monkeypatch.chdir(tmp_path)
    fold_log(tmp_path / "t.jsonl", NEGATION, session_id="S" * 2000)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    result = run("audit", "t.jsonl", "--baseline", "b.json", "--format", "json")
    doc = json.loads(result.stdout)
    assert (result.exit_code, doc["findings"]) == (0, [])
    assert "other_session" not in doc["baseline"]
    fold_log(tmp_path / "t.jsonl", NEGATION, session_id="S" * 1999 + "T")
    other = json.loads(run("audit", "t.jsonl", "--baseline", "b.json", "--format",
                           "json").stdout)
    assert other["findings"] and other["baseline"]["other_session"]


def test_a_new_claim_in_a_summary_with_a_baselined_claim_is_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv27 F1: entity findings about what a summary states (CA305 claims, CA304
    flips) were keyed by the summary alone, so the baseline of one claim hid every later
    claim of that summary, whatever its severity, and ``diff --fail-on-new`` too."""
    import json

    from compaction_audit.api import audit_paths
    from compaction_audit.baseline import apply, entries
    from compaction_audit.diff import diff_reports
    from tests.logs import SAMPLES

    monkeypatch.chdir(tmp_path)
    Path("t.jsonl").write_text((SAMPLES / "faithfulness.jsonl").read_text())
    before = audit_paths(["t.jsonl"], jobs=1)
    held = {e.fingerprint: e for e in entries(before)}
    records = [json.loads(x) for x in Path("t.jsonl").read_text().splitlines()]
    c2 = records[4]["summaries"][0]
    assert c2["id"] == "c2" and "which is still open." in c2["text"]
    c2["text"] = c2["text"].replace("which is still open.", "which is still open. Payment "
                                    "token PAYTOK-88231 was rotated.")
    Path("t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    after = audit_paths(["t.jsonl"], jobs=1)
    claims = [f for f in after.sessions[0].findings if f.code == "CA305"]
    assert sorted(f.values["text"] for f in claims) == ["INC-0042", "PAYTOK-88231"]
    kept = apply(after, held, "b.json")
    assert [(f.code, f.values.get("text")) for f in kept.sessions[0].findings] == [
        ("CA305", "PAYTOK-88231")]
    grown = kept.sessions[0].extra["baseline"]["grown"]
    assert [(g["code"], g["new_facts"], g["verb"]) for g in grown] == [("CA305", 1, "states")]
    d = diff_reports(before.sessions[0], after.sessions[0])
    assert [(x.code, x.key) for x in d.by_status("new")] == [
        ("CA305", "claim:identifier:PAYTOK-88231")]  # by what it states (usertest17)


def _claims_log(path: Path, extra: list[str]) -> Path:
    """A summary stating 25 invented ticket ids (CA305 lists 20 per summary), and
    ``extra`` sentences."""
    import json

    claims = [f"Ticket INC-{1000 + i} blocks the release." for i in range(25)] + extra
    records = [
        {"type": "session", "schema": "compaction-audit/1", "session_id": "claims",
         "eviction": "on-overflow", "task_query": "Ship the orders release"},
        {"type": "round", "round": 0, "spans": [
            {"id": "u1", "tokens": 40, "text": "Ship the orders release today.",
             "source": "user"},
            {"id": "a1", "tokens": 40, "text": "Looked at the orders table.",
             "source": "assistant"}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "c1", "tokens": 60, "children": ["u1", "a1"],
             "text": "The user wants the orders release shipped. " + " ".join(claims)}],
         "evicted": ["u1", "a1"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_new_claim_past_the_listed_ones_is_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv28 F4: the digests were taken from the findings, and a summary's claims past
    the 20 listed have none: a 26th invented claim passed a baseline and diff --fail-on-new,
    exit 0.  The 20th finding carries a digest of the rest (``more_digest``)."""
    from compaction_audit.api import audit_paths
    from compaction_audit.baseline import apply, entries
    from compaction_audit.diff import diff_reports

    monkeypatch.chdir(tmp_path)
    before = audit_paths([str(_claims_log(Path("t.jsonl"), []))], jobs=1)
    claims = [f for f in before.sessions[0].findings if f.code == "CA305"]
    assert len(claims) == 20 and claims[-1].values["more_in_summary"] == 5
    assert isinstance(claims[-1].values["more_digest"], str)
    assert all(f.values["more_digest"] is None for f in claims[:-1])
    held = {e.fingerprint: e for e in entries(before)}
    same = audit_paths([str(_claims_log(Path("t.jsonl"), []))], jobs=1)
    assert apply(same, held, "b.json").sessions[0].findings == []  # re-run: all held
    after = audit_paths([str(_claims_log(Path("t.jsonl"),
                                         ["Ticket INC-9999 must never be closed."]))], jobs=1)
    kept = apply(after, held, "b.json").sessions[0].findings
    assert [(f.code, f.values["more_in_summary"]) for f in kept] == [("CA305", 6)]
    d = diff_reports(before.sessions[0], after.sessions[0])
    assert [x.code for x in d.by_status("new")] == ["CA305"]


def test_a_baseline_joining_two_sessions_of_one_trace_is_refused(base: Path) -> None:
    """adv37: two runs' baselines joined into one file merged by fingerprint: session
    A's entry took session B's lost facts, and a session-A trace that lost B's facts
    passed (exit 0)."""
    doc = json.loads(base.read_text())
    other = [{**e, "session": "next-run"} for e in doc["findings"]]
    joined = base.parent / "joined.json"
    joined.write_text(json.dumps({**doc, "findings": doc["findings"] + other}))
    result = run("audit", "t.jsonl", "--baseline", str(joined))
    assert result.exit_code == 2
    assert result.stderr == (
        f"compaction-audit: baseline '{joined}': the entries for trace 't.jsonl' are of two "
        "sessions ('facts' and 'next-run'): a baseline holds one run of each trace; make "
        "it again with 'compaction-audit baseline create'\n")


@pytest.mark.parametrize("bad", [5, "abc", "F" * 64, "f" * 63])
def test_a_fingerprint_not_written_by_the_tool_is_refused(tmp_path: Path, bad: Any) -> None:
    """adv56: a fingerprint 5 was read as "5", matched nothing, and the finding it
    stood for counted as new with no word."""
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"baseline_format": 1, "findings": [
        {"trace": "t.jsonl", "code": "CA301", "key": "entity:F",
         "rule": "silent-discriminating-fold", "fingerprint": bad}]}))
    from compaction_audit.baseline import load
    from compaction_audit.errors import UsageError

    with pytest.raises(UsageError, match=r"findings\[0\]\.fingerprint must be a SHA-256 in "
                                         r"lowercase hex \(64 digits\)"):
        load(path)


@pytest.mark.parametrize(("change", "message"), [
    ({"trace": 5}, r"findings\[0\] needs trace, code, key, rule and fingerprint; trace, "
                   r"code, key and rule strings$"),
    ({"code": "CA999"}, r"findings\[0\]: code 'CA999' is no rule of this version$"),
    # shown as printable writes it, once (adv69 #4: a repr doubled its backslashes)
    ({"rule": "x\u001b]0;t\u0007"}, r"findings\[0\]: rule 'x\\x1b\]0;t\\x07' is not "
                                    r"CA301's name \('silent-discriminating-fold'\)$"),
    ({"rounds": [5, 1]}, r"findings\[0\]\.rounds must be \[first, last\], two whole "
                         r"numbers, 0 <= first <= last$")])
def test_a_hand_edited_entry_is_checked_field_by_field(tmp_path: Path, change: dict[str, Any],
                                                        message: str) -> None:
    """adv62: an integer trace, an unknown code, a rule not the code's and reversed
    rounds were accepted; such an entry matched nothing and was never stale."""
    from compaction_audit.baseline import fingerprint, load
    from compaction_audit.errors import UsageError

    entry = {"trace": "t.jsonl", "code": "CA301", "key": "entity:F",
             "rule": "silent-discriminating-fold",
             "fingerprint": fingerprint("t.jsonl", "CA301", "entity:F"), "rounds": [1, 1]}
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"baseline_format": 1, "findings": [entry]}))
    assert len(load(path)) == 1
    path.write_text(json.dumps({"baseline_format": 1, "findings": [{**entry, **change}]}))
    with pytest.raises(UsageError, match=message):
        load(path)


def test_an_entry_that_says_another_finding_than_its_fingerprint_is_refused(
        base: Path) -> None:
    """adv63: an entry edited to read "CA204 ... elsewhere" kept the fingerprint of
    CA301 entity:F1 and held that error back, exit 0; a reviewer of the baseline's
    diff saw a harmless entry."""
    doc = json.loads(base.read_text())
    [entry] = [e for e in doc["findings"] if e["code"] == "CA301"]
    entry.update(code="CA204", rule="salience-disagreement", trace="elsewhere/other.jsonl")
    base.write_text(json.dumps(doc))
    result = run("audit", "t.jsonl", "--baseline", str(base))
    assert result.exit_code == 2
    assert result.stderr == (
        f"compaction-audit: baseline {str(base)!r}: the entry with the fingerprint of "
        "CA301 silent-discriminating-fold entity:F1 in 't.jsonl' says CA204 "
        "salience-disagreement entity:F1 in 'elsewhere/other.jsonl': edited by hand? make "
        "the baseline again ('compaction-audit baseline create')\n")


def codex_log(path: Path, *texts: str, pad: int = 0) -> Path:
    """A Codex rollout: ``pad`` reasoning lines, the person's ``texts``, then a local
    compaction whose summary keeps none of them (the adapter names it by its line)."""
    def line(kind: str, payload: dict[str, Any]) -> bytes:
        return orjson.dumps({"timestamp": "t", "type": kind, "payload": payload}) + b"\n"
    out = [line("session_meta", {"id": "facts"})]
    out += [line("response_item", {"type": "reasoning", "summary": [],
                                   "encrypted_content": "x"})] * pad
    out += [line("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": t}]})
            for t in texts]
    out.append(line("compacted", {"message": "Guidance was noted.", "replacement_history": [
        {"type": "message", "role": "user",  # the summary, as Codex carries it
         "content": [{"type": "input_text", "text": "Guidance was noted."}]}]}))
    path.write_bytes(b"".join(out))
    return path


def test_the_same_fold_under_another_id_is_baselined(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest47 #1: a product's adapter names a compaction's summary by its line, so a
    line added above it made the same fold's finding new and its entry stale."""
    monkeypatch.chdir(tmp_path)
    codex_log(tmp_path / "t.jsonl", NEGATION)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    [key] = {e["key"] for e in json.loads((tmp_path / "b.json").read_text())["findings"]
             if e["code"] == "CA301"}
    codex_log(tmp_path / "t.jsonl", NEGATION, pad=2)
    result = run("audit", "t.jsonl", "--baseline", "b.json", "--format", "json")
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert [f["code"] for f in doc["findings"]] == []
    assert doc["baseline"]["stale"] == [] and doc["baseline"]["grown"] == []
    # the same fold with more facts lost, under another id: the entry grown, still a
    # failure, the entry not stale (usertest53 #3: it read as fixed, the fold as new)
    codex_log(tmp_path / "t.jsonl", NEGATION, TIMEOUT, pad=2)
    result = run("audit", "t.jsonl", "--baseline", "b.json", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert "CA301" in [f["code"] for f in doc["findings"]]
    # (CA105's entry is stale: with the second text the raw tokens outweigh the summary)
    assert [e["code"] for e in doc["baseline"]["stale"]] == ["CA105"]
    [grown] = doc["baseline"]["grown"]
    assert grown["code"] == "CA301" and grown["key"] != key
    new = {u["text"] for u in grown["new"]}
    assert new <= {"read_timeout_ms", "30000", "45000", RAISED, "staging", TIMEOUT.rstrip(".")}
    assert grown["new_facts"] >= len(new) >= 3  # TIMEOUT's, none of NEGATION's
    text = run("audit", "t.jsonl", "--baseline", "b.json").stdout
    assert "now loses" in text and "no longer occurs" not in text


def test_moved_folds_look_at_a_bounded_number_of_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv138 #5: every moved fold read every free entry (2,000 x 16,000 took 34 s);
    entries are looked up by the facts they hold, at most MOVE_CHECKS of them, and a
    fold past the bound is reported as new, never hidden."""
    from compaction_audit.baseline import moves

    monkeypatch.chdir(tmp_path)
    codex_log(tmp_path / "t.jsonl", NEGATION)
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    codex_log(tmp_path / "t.jsonl", NEGATION, pad=2)  # the same fold, another line
    assert run("audit", "t.jsonl", "--baseline", "b.json").exit_code == 0
    monkeypatch.setattr(moves, "MOVE_CHECKS", 0)
    held = run("audit", "t.jsonl", "--baseline", "b.json", "--format", "json")
    assert held.exit_code == 1  # not matched: new, as with no baseline
    assert "CA301" in [f["code"] for f in json.loads(held.stdout)["findings"]]


def test_a_fold_named_by_the_log_is_never_matched_by_its_facts(base: Path,
                                                               tmp_path: Path) -> None:
    """usertest48 #1: the baseline's fold F1 is fixed and another fold, named by the log
    (F2), loses the same rule: that is a new loss, and F1's entry is stale."""
    fold_log(tmp_path / "t.jsonl", NEGATION, fold="F2")
    result = run("audit", "t.jsonl", "--baseline", str(base), "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert "CA301" in [f["code"] for f in doc["findings"]]
    assert [e["key"] for e in doc["baseline"]["stale"]] == ["entity:F1"]


def test_a_native_fold_named_like_a_line_is_never_matched_by_its_facts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv97 #2: a native log may name its own fold "line-5"; only an adapter names
    items by their lines.  The baseline's fold line-5 is fixed and a new fold line-9
    loses the same rule: a new loss (exit 1), line-5's entry stale."""
    monkeypatch.chdir(tmp_path)
    fold_log(tmp_path / "t.jsonl", NEGATION, fold="line-5")
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    fold_log(tmp_path / "t.jsonl", NEGATION, fold="line-9")
    result = run("audit", "t.jsonl", "--baseline", "b.json", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert "CA301" in [f["code"] for f in doc["findings"]]
    assert "entity:line-5" in [e["key"] for e in doc["baseline"]["stale"]]


def test_a_claim_another_summary_now_states_first_is_still_the_baseline_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest63 #1: the baseline keyed a claim (CA305) or flip (CA304) by its summary:
    the trace re-recorded without its last summary ``c2`` reported the accepted ticket
    INC-0042, now stated by ``c1``, as a new error and c2's entry as gone, while ``diff``
    of the same two logs called it persisting.  A claim c1 states that the baseline
    does not hold is still new."""
    from compaction_audit.api import audit_paths
    from compaction_audit.baseline import apply, entries

    monkeypatch.chdir(tmp_path)
    lines = (SAMPLES / "faithfulness.jsonl").read_text().splitlines(keepends=True)
    Path("t.jsonl").write_text("".join(lines))
    before = audit_paths(["t.jsonl"], jobs=1)
    held = {e.fingerprint: e for e in entries(before)}
    assert {(e.code, e.key) for e in held.values() if e.code in ("CA304", "CA305")} == {
        ("CA304", "entity:c1"), ("CA305", "entity:c2")}
    Path("t.jsonl").write_text("".join(lines[:4]))  # without round 3, c2's
    after = audit_paths(["t.jsonl"], jobs=1)
    assert sorted((f.code, f.entity) for f in after.sessions[0].findings
                  if f.code in ("CA304", "CA305")) == [("CA304", "c1"), ("CA305", "c1")]
    kept = apply(after, held, "b.json").sessions[0]
    assert kept.findings == []
    assert not [e for e in kept.extra["baseline"]["stale"] if e["code"] in ("CA304", "CA305")]
    # c1 also states a ticket the baseline never held: that claim alone is new
    records = [json.loads(x) for x in lines[:4]]
    c1 = records[2]["summaries"][0]
    c1["text"] = c1["text"].replace("ticket INC-0042.", "ticket INC-0042. Payment token "
                                    "PAYTOK-88231 was rotated.")
    Path("t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    grown = apply(audit_paths(["t.jsonl"], jobs=1), held, "b.json").sessions[0]
    assert [(f.code, f.values.get("text")) for f in grown.findings] == [
        ("CA305", "PAYTOK-88231")]
    assert [(g["code"], g["new_facts"]) for g in grown.extra["baseline"]["grown"]] == [
        ("CA305", 1)]


def _own_words_log(path: Path, summary: str) -> Path:
    """A person's pool size kept by summary C in words of its own, then D keeping the
    size and dropping those words: D loses nothing."""
    return dump([session(session_id="own"),
                 rnd(0, spans=[{"id": "u1", "tokens": 20, "text": "Set the pool size to 64.",
                                "source": "user"}]),
                 rnd(1, summaries=[{"id": "C", "tokens": 5, "children": ["u1"],
                                    "text": summary}], evicted=["u1"]),
                 rnd(2, summaries=[{"id": "D", "tokens": 5, "children": ["C"],
                                    "text": "Pool size is 64."}], evicted=["C"])], path)


def test_a_fold_that_drops_more_words_only_a_summary_states_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest71 #6: the baseline said "now loses 1 more fact" of a fold whose own
    finding said it "lost nothing"."""
    monkeypatch.chdir(tmp_path)
    _own_words_log(tmp_path / "t.jsonl", "Pool size is 64, per runbook-77.")
    assert run("baseline", "create", "t.jsonl", "-o", "b.json").exit_code == 0
    _own_words_log(tmp_path / "t.jsonl", "Pool size is 64, per runbook-77 and OPS-5.")
    out = run("audit", "t.jsonl", "--baseline", "b.json", "--fail-on", "never").stdout
    text = " ".join(out.split())  # lines wrapped at the terminal's width
    assert ("baseline entry t.jsonl CA301 silent-discriminating-fold entity:D now drops 1 "
            "more fact(s) (identifier 'OPS-5'), none lost: reported as new") in text
    assert ("fold D dropped, but lost nothing: C: identifier 'runbook-77' (only a summary "
            "states it, no raw span), identifier 'OPS-5' (only a summary states it, no raw "
            "span)") in text
