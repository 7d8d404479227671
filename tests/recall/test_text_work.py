"""The text work of the recall analysis done once per distinct text, pair and
discriminator (issue 14): the same rows as one visit per edge, span and closure pair."""

from __future__ import annotations

import io
import marshal
import os
import subprocess
import sys
import time
from typing import Any

import polars as pl
import pytest

from compaction_audit.io.native import read_native
from compaction_audit.recall import analysis, texthelper, textwork
from compaction_audit.recall.analysis import occurrences
from compaction_audit.recall.extract import extract
from compaction_audit.recall.survival import check as surv  # survives' home
from compaction_audit.runtime import frames
from compaction_audit.series import build_series
from tests.logs import LogWriter, rnd


def test_survival_is_checked_once_per_discriminator_and_summary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    d1, d2 = extract("Set the timeout to 45000 ms on prod.")  # a quantity and a scope
    calls: list[tuple[str, str]] = []
    real = surv.survives

    def counted(d: Any, text: str) -> bool:
        calls.append((d.norm, text))
        return real(d, text)

    monkeypatch.setattr(surv, "survives", counted)
    out = textwork.survival_flags([((d1, d2), "timeout 45000 ms"), ((d1,), "timeout 45000 ms"),
                                   ((d1,), "a timeout"), ((), "a timeout")])
    assert out == [(True, False), (True,), (False,), ()]
    assert calls == [("45000 ms", "timeout 45000 ms"), ("prod", "timeout 45000 ms"),
                     ("45000 ms", "a timeout")]


T0 = ("Set the timeout to 45000 ms on prod.", "prose")  # 45000 ms, prod
T1 = ("Raised the limit to 300 rps.", "prose")  # 300 rps
T2 = ("Moved on to the next topic.", "prose")  # nothing
S1, S2 = "Timeout set to 45000 ms.", "The limit is 300 rps on prod."


def _jobs(texts: list[textwork.TextKey], helper: Any) -> textwork.TextJobs:
    frame = pl.DataFrame({"text": [t for t, _ in texts], "stype": [k for _, k in texts]})
    return textwork.TextJobs(frame, texts, [], helper)


def _unpacked(chunks: list[tuple[int, bytes]]) -> list[list[Any]]:
    """A helper's chunks as it sent them: unpacked, each from where the last ended."""
    starts = [0]
    for _, packed in chunks:
        starts.append(starts[-1] + len(texthelper.unpack(packed)))
    assert [at for at, _ in chunks] == starts[:-1]
    return [texthelper.unpack(packed) for _, packed in chunks]


def _wait(helper: Any, done: int) -> None:
    deadline = time.monotonic() + 60
    while helper.done < done:
        assert time.monotonic() < deadline, "the helper sent nothing"
        time.sleep(0.01)


def test_the_helper_starts_from_the_text_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 2)
    assert textwork._Helper.start([T0]) is None  # one text: done here
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 1)
    helper = textwork._Helper.start([T0])
    if helper is None:  # one CPU, or inside a worker process: done here instead
        return
    _wait(helper, 1)
    helper.close()
    assert _unpacked(helper.chunks) == [[(("quantity", "45000 ms", "45000 ms", 19, 27, 1),
                                          ("scope", "prod", "prod", 31, 35, 1))]]


def test_the_early_helper_is_taken_whatever_the_text_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.recall import textearly

    if not textearly.wanted():
        pytest.skip("no early helper with one CPU")
    monkeypatch.setattr(textearly, "_early", [])
    monkeypatch.setattr(textearly, "idle_core", lambda: True)
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 4000)
    assert textearly.start_early() is True
    assert textearly.start_early() is False  # one at a time
    process = textearly._early[0]
    helper = textwork._Helper.start([T0, T1])  # 2 texts, far under PARALLEL_MIN_JOBS
    assert helper is not None and helper.process is process
    assert textearly.take_early() is None  # taken once
    _wait(helper, 2)
    helper.close()
    assert _unpacked(helper.chunks) == [[E0, E1]]  # one chunk of up to EARLY_STEP texts


def test_an_early_helper_with_no_text_to_do_is_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.recall import textearly

    if not textearly.wanted():
        pytest.skip("no early helper with one CPU")
    monkeypatch.setattr(textearly, "_early", [])
    monkeypatch.setattr(textearly, "idle_core", lambda: True)
    assert textearly.start_early() is True
    process = textearly._early[0]
    assert textwork._Helper.start([]) is None
    assert process.poll() is not None and textearly.take_early() is None


def test_the_command_starts_the_early_helper_for_one_file_with_texts(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.recall import textearly
    from compaction_audit.runtime import startup

    if not textearly.wanted():
        pytest.skip("no early helper with one CPU")
    monkeypatch.setattr(textearly, "_early", [])
    monkeypatch.setattr(textearly, "idle_core", lambda: True)
    texted, bare = tmp_path / "t.jsonl", tmp_path / "b.jsonl"
    texted.write_text('{"type": "span", "text": "x"}\n')
    bare.write_text('{"type": "round"}\n')
    assert startup.text_early([str(texted)]) is False  # not the command's own process
    monkeypatch.setattr(startup, "_command", [True])
    assert startup.text_early([str(bare)]) is False
    assert startup.text_early([str(texted), str(texted)]) is False  # several traces
    assert startup.text_early([str(texted)]) is True
    process = textearly.take_early()
    assert process is not None
    textearly.end(process)


def test_no_early_helper_on_a_busy_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.recall import textearly

    monkeypatch.setattr(textearly, "_early", [])
    monkeypatch.setattr(textearly, "_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.0, 9.0, 9.0))
    assert textearly.idle_core()
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 0.0, 0.0))
    assert not textearly.idle_core()
    assert textearly.start_early() is False and textearly._early == []


def test_helpers_start_with_safe_path_no_site_and_the_early_one_lower() -> None:
    from compaction_audit.recall import textearly

    line = textearly.command(os.getpid(), 16, textearly.NICE)
    assert line[1:3] == ["-P", "-S"] and line[3] == "-c"
    assert f"_os.nice({textearly.NICE})" in line[4] and line[-1] == "16"
    assert "_os.nice" not in textearly.command(os.getpid(), textwork.STEP)[4]


E0 = (("quantity", "45000 ms", "45000 ms", 19, 27, 1), ("scope", "prod", "prod", 31, 35, 1))
E1 = (("quantity", "300 rps", "300 rps", 20, 27, 1),)


class _Stub:
    """A helper that has sent ``chunks`` and ``groups``, recording what it is sent."""

    def __init__(self, chunks: list[Any], groups: list[Any]) -> None:
        self.groups, self.posted = groups, list[Any]()
        self.chunks: list[tuple[int, bytes]] = []  # as the helper's reader keeps them
        self.done = 0
        for chunk in chunks:
            self.chunks.append((self.done, marshal.dumps(chunk)))
            self.done += len(chunk)

    def post(self, message: Any) -> None:
        self.posted.append(message)

    def close(self) -> None:
        self.posted.append("closed")


def test_group_flags_checks_each_discriminator_once_per_summary(
        monkeypatch: pytest.MonkeyPatch) -> None:
    d1, d2 = extract(T0[0])
    calls: list[str] = []
    real = surv.survives

    def counted(d: Any, text: str) -> bool:
        calls.append(d.norm)
        return real(d, text)

    monkeypatch.setattr(surv, "survives", counted)
    assert texthelper.group_flags(S1, [(d1, d2), (d1,), ()]) == [(True, False), (True,), ()]
    # "prod" is no word of S1 nor anything else it offers a scope: not compared
    assert calls == ["45000 ms"]
    assert texthelper.group_flags(S2, [(d1, d2), (d2,)]) == [(False, True), (True,)]
    assert calls == ["45000 ms", "prod"]  # 45000 is not in S2 either


def test_this_process_takes_the_texts_after_those_the_helper_sent() -> None:
    # the helper has sent T0 only, with a made-up result: T0's discriminators are taken
    # from it, T1 and T2 are extracted here (from the last one back); the helper is
    # told to stop at 1 and given T1's, which a group it may check holds
    made_up = (("quantity", "7 ms", "7 ms", 0, 4, 1),)
    helper = _Stub([[made_up]], [])
    jobs = _jobs([T0, T1, T2], helper)
    jobs.groups = [(S2, [1, 0])]
    extracted = textwork.Extracted()
    jobs.extract_into(extracted)
    assert jobs._own_from == 1
    assert [(d.kind.value, d.norm) for d in extracted[T0]] == [("quantity", "7 ms")]
    assert [(d.kind.value, d.norm) for d in extracted[T1]] == [("quantity", "300 rps")]
    assert extracted[T2] == ()
    assert helper.posted == [("k", 1, {1: E1})]


def test_texts_extracted_while_waiting_are_taken_and_not_extracted_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # busy twice: T2 and T1 are extracted while waiting (from the last back), then T0
    # by extract_into, each once; the result is extract's own
    jobs = _jobs([T0, T1, T2], None)
    answers = iter([True, True, False])
    assert jobs.extract_while(lambda: next(answers)) == 2
    assert jobs.extract_while(lambda: False) == 0
    calls: list[str] = []
    real = textwork.ext.extract

    def counted(text: str, stype: str = "prose") -> Any:
        calls.append(text)
        return real(text, stype)

    monkeypatch.setattr(textwork.ext, "extract", counted)
    extracted = textwork.Extracted()
    jobs.extract_into(extracted)
    assert calls == [T0[0]]
    assert {t: [d.norm for d in ds] for t, ds in extracted.items()} == {
        T0: ["45000 ms", "prod"], T1: ["300 rps"], T2: []}
    assert jobs._own_from == 0


def test_extraction_while_waiting_stops_where_the_helper_is() -> None:
    # the helper has sent T0 and T1: at most T2 is extracted while waiting, and the
    # helper is told that this process took the texts from 2 on
    made_up = (("quantity", "7 ms", "7 ms", 0, 4, 1),)
    helper = _Stub([[made_up, ()]], [])
    jobs = _jobs([T0, T1, T2], helper)
    jobs.groups = [(S2, [2])]
    assert jobs.extract_while(lambda: True) == 1
    extracted = textwork.Extracted()
    jobs.extract_into(extracted)
    assert jobs._own_from == 2
    assert [d.norm for d in extracted[T0]] == ["7 ms"] and extracted[T2] == ()
    assert helper.posted == [("k", 2, {2: ()})]


def test_this_process_checks_the_groups_after_those_the_helper_sent() -> None:
    # the helper has sent the flags of the first group (made up: none survives); the
    # second is checked here
    helper = _Stub([], [[(False, False)]])
    jobs = _jobs([T0, T1], helper)
    jobs.groups = [(S1, [0]), (S2, [1, 0])]
    extracted = textwork.Extracted({T0: texthelper.decode(E0), T1: texthelper.decode(E1)})
    survived: textwork.Survived = {}
    jobs.survive_into(extracted, survived)
    assert survived == {(T0, S1): (False, False), (T1, S2): (True,), (T0, S2): (False, True)}
    assert helper.posted == [("s",), "closed"] and jobs.helper is None


def test_the_helper_program_stops_where_it_is_told(tmp_path: Any) -> None:
    # everything is sent before it starts: it reads the groups and the stop at text 2
    # (with T2's discriminators, none) before its first chunk, extracts T0 and T1, then
    # checks both groups
    messages = [[T0, T1, T2], ("g", [(S1, [0]), (S2, [1, 2, 0])]), ("k", 2, {2: ()})]
    assert _helper_run(messages, 1) == [("x", [E0]), ("x", [E1]), ("g", [(True, False)]),
                                        ("g", [(True,), (), (False, True)])]


def _helper_run(messages: list[Any], step: int) -> list[Any]:
    """What the helper program sends when it is sent ``messages`` before it starts."""
    read, write = os.pipe()
    out = io.BytesIO()
    sent, got_chain = frames.Chain(), frames.Chain()  # each direction's running CRC
    with os.fdopen(write, "wb") as sink:  # kept open: the end of input would stop it
        for m in messages:
            frames.send(sink, m, sent)
        texthelper.main(step, read, out)
    os.close(read)
    got, stream = [], io.BytesIO(out.getvalue())
    while (message := frames.read(stream, got_chain)) is not None:
        if message[0] == "x":  # ("x", n, packed): the chunk unpacked
            assert message[1] == len(texthelper.unpack(message[2]))
            message = ("x", texthelper.unpack(message[2]))
        got.append(message)
    return got


def test_the_helper_checks_a_cut_group_against_its_own_children_only() -> None:
    # S2 folds T1 and has T0 (2 discriminators, no clause) below: 2 pairs cover it, 1
    # cuts it; no clause class to compare, so a cap of 0 comparisons does not
    # (issue 11, class 5; texthelper.survival_cut)
    groups = [(S2, [1, 0])]
    for pairs, flags in ((2, [(True,), (False, True)]), (1, [(True,)])):
        got = _helper_run([[T0, T1], ("g", groups, [1], 0, pairs)], 8)
        assert [f for tag, f in got if tag == "g"] == [flags]


def test_the_helper_does_all_the_work_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 1)
    monkeypatch.setattr(textwork, "STEP", 1)
    texts = [T0, T1, T2]
    helper = textwork._Helper.start(texts)
    if helper is None:
        return
    jobs = _jobs(texts, helper)
    jobs.groups = [(S1, [0]), (S2, [1, 0])]
    helper.post(("g", jobs.groups))
    deadline = time.monotonic() + 60
    while helper.done < 3 or len(helper.groups) < 2:
        assert time.monotonic() < deadline, "the helper did not finish"
        time.sleep(0.01)

    def not_here(*args: Any) -> Any:
        raise AssertionError("done here, not by the helper")

    monkeypatch.setattr(textwork.ext, "extract", not_here)
    monkeypatch.setattr(textwork.th, "group_flags", not_here)
    extracted = textwork.Extracted()
    jobs.extract_into(extracted)
    assert jobs._own_from == 3  # none extracted here
    assert {t: texthelper.encode(extracted[t]) for t in texts} == {T0: E0, T1: E1, T2: ()}
    survived: textwork.Survived = {}
    jobs.survive_into(extracted, survived)
    assert survived == {(T0, S1): (True, False), (T1, S2): (True,), (T0, S2): (False, True)}
    assert jobs.helper is None  # closed


def test_a_helper_that_died_leaves_its_work_to_this_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 1)
    helper = textwork._Helper.start([T0, T1])
    if helper is None:
        return
    helper.process.kill()
    helper.process.wait()
    jobs = _jobs([T0, T1], helper)
    jobs.groups = [(S1, [0]), (S2, [1])]
    extracted = textwork.Extracted()
    jobs.extract_into(extracted)
    survived: textwork.Survived = {}
    jobs.survive_into(extracted, survived)
    assert survived == {(T0, S1): (True, False), (T1, S2): (True,)}


def span(i: str, text: str) -> dict[str, object]:
    return {"id": i, "tokens": 20, "text": text, "source": "assistant"}


SAME = "Set the timeout to 45000 ms on prod."


def test_a_text_repeated_under_two_folds_gives_each_edge_its_own_rows(
        write_log: LogWriter) -> None:
    # a and b hold the same text under folds with the same text; c another fold text
    log = [rnd(0, spans=[span("a", SAME), span("b", SAME), span("c", SAME)]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"],
                              "text": "Timeout set to 45000 ms."},
                             {"id": "G", "tokens": 5, "children": ["b"],
                              "text": "Timeout set to 45000 ms."},
                             {"id": "H", "tokens": 5, "children": ["c"],
                              "text": "Timeout changed on prod."}],
               evicted=["a", "b", "c"])]
    session = read_native(str(write_log(log)))
    result = analysis.analyse(session, build_series(session))
    rows = {(r["fold"], r["child"]): [d["text"] for d in r["dropped"]]
            for r in result.folds.iter_rows(named=True)}
    assert rows == {("F", "a"): ["prod"], ("G", "b"): ["prod"], ("H", "c"): ["45000 ms"]}
    occ, held, _ = occurrences._occurrences(session, build_series(session))
    assert sorted(occ.select("key", "id").rows()) == [
        ("quantity:45000 ms", "a"), ("quantity:45000 ms", "b"), ("quantity:45000 ms", "c"),
        ("scope:prod", "a"), ("scope:prod", "b"), ("scope:prod", "c")]
    assert sorted(held.rows()) == [("quantity:45000 ms", "F"), ("quantity:45000 ms", "G"),
                                   ("scope:prod", "H")]


def test_the_helper_program_stops_at_the_end_of_its_input() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "wb") as sink:
        frames.send(sink, [T0, T1], frames.Chain())
    out = io.BytesIO()
    texthelper.main(1, read, out)  # the input ended before its first chunk
    os.close(read)
    assert out.getvalue() == b""


def test_the_helper_fails_quietly_on_bad_input() -> None:
    # a length and CRC-32, then bytes that are no marshal data; or a body whose CRC-32
    # differs (damaged on the way): exit 1, nothing on stderr
    def crc(data: bytes) -> bytes:  # the first message's: a chain's first value
        return frames.Chain().seal(data)

    recall = os.path.dirname(textwork.ext.__file__)
    body = b"\xff\xff\xff\xff"
    sent = [crc(body) + body, crc(b"other") + marshal.dumps([])]  # []: no text, exit 0
    for framed in sent:
        proc = subprocess.run([sys.executable, "-c", texthelper.BOOT, os.path.dirname(recall),
                               recall, "1"], input=(len(framed) - 4).to_bytes(8, "little") + framed,
                              capture_output=True, timeout=60)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, b"", b"")


def test_extraction_reads_the_shared_table_first() -> None:
    # issue 14: texts the analysis (or its helper) extracted are not extracted again by
    # the survival indexes, asked-again and the faithfulness rules; a text the table
    # does not hold is extracted as before, and share(None) stops reading it
    from compaction_audit.recall import extract as ext
    made_up = texthelper.decode((("quantity", "7 ms", "7 ms", 0, 4, 1),))
    ext.extract_cached.cache_clear()
    ext.share(lambda text, stype: made_up if (text, stype) == T0 else None)
    try:
        assert ext.extract(*T0) == list(made_up)
        assert [d.norm for d in ext.extract(*T1)] == ["300 rps"]
        assert ext.extract(T0[0], "code") != list(made_up)  # another span type
    finally:
        ext.share(None)
        ext.extract_cached.cache_clear()
    assert [d.norm for d in ext.extract(*T0)] == ["45000 ms", "prod"]


def test_lookup_gives_what_the_helper_or_this_process_extracted() -> None:
    # the helper has sent T0 (made up) in one chunk and T1 in another; T2 not yet; T3
    # was set aside by the pre-filter (no discriminator); a text not listed is unknown
    t3 = ("Nothing at all here.", "prose")
    made_up = (("quantity", "7 ms", "7 ms", 0, 4, 1),)
    helper = _Stub([[made_up], [E1]], [])
    frame = pl.DataFrame({"text": [T0[0], T1[0], T2[0]], "stype": ["prose"] * 3})
    jobs = textwork.TextJobs(frame, [T0, T1, T2], [t3], helper)
    assert jobs.lookup(*T0) == texthelper.decode(made_up)
    assert jobs.lookup(*T1) == texthelper.decode(E1)
    assert jobs.lookup(*T2) is None and jobs.lookup("Other text.", "prose") is None
    assert jobs.lookup(*t3) == () and jobs.lookup(T0[0], "code") is None
    jobs.extract_into(textwork.Extracted())  # then from the analysis's table
    assert jobs.lookup(*T0) == texthelper.decode(made_up) and jobs.lookup(*T2) == ()
    assert jobs.lookup(*t3) == () and jobs.lookup("Other text.", "prose") is None
    jobs.narrow([T1[0], t3[0]])  # only these, read as prose, are kept
    assert jobs.lookup(*T1) == texthelper.decode(E1) and jobs.lookup(*t3) == ()
    assert jobs.lookup(*T0) is None and jobs.lookup(*T2) is None


def test_the_audit_shares_its_extraction_only_while_it_runs(
        monkeypatch: pytest.MonkeyPatch, write_log: LogWriter) -> None:
    from compaction_audit import engine
    from compaction_audit.recall import extract as ext
    seen: list[Any] = []
    real = engine.run_rules

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(list(ext._known))
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "run_rules", spy)
    session = read_native(str(write_log([rnd(0, spans=[span("a", T0[0])])])))
    engine.audit_session(session)
    assert len(seen) == 1 and len(seen[0]) == 1 and ext._known == []


def test_folded_summaries_texts_are_listed_first(write_log: LogWriter) -> None:
    # F is folded again into G: its text is listed before the spans' (the helper
    # extracts it first: unsupported-summary-claim reads it before the analysis)
    log = [rnd(0, spans=[span("a", T0[0]), span("b", T1[0])]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"], "text": S1}],
               evicted=["a"]),
           rnd(2, summaries=[{"id": "G", "tokens": 5, "children": ["F", "b"], "text": S2}],
               evicted=["F", "b"])]
    session = read_native(str(write_log(log)))
    _, texts, _ = textwork.job_texts(session, analysis.typed_items(session))
    assert texts == [(S1, "prose"), T0, T1]


def test_the_decoder_makes_one_object_per_distinct_discriminator() -> None:
    # T0 and a text stating the same 45000 ms at the same place: one object for both,
    # equal to what decode makes
    decoder = texthelper.Decoder()
    first, second = decoder(E0), decoder(E0[:1] + E1)
    assert first == texthelper.decode(E0) and second == texthelper.decode(E0[:1] + E1)
    assert second[0] is first[0] and second[1] is not first[1]


def test_the_analysis_reads_each_texts_discriminators_once(
        write_log: LogWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    # the fold checks (children's texts) and the occurrence table (spans' texts) share
    # the rows read from the discriminator objects (issue 14): a span that is a child
    # is read once, not once by each; a folded summary (F under G) is read too
    log = [rnd(0, spans=[span("a", SAME), span("b", "Use port 8443 on staging."),
                         span("c", "Pinned numpy==1.26.4 in the lock file.")]),
           rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["a"],
                              "text": "Timeout set to 45000 ms."}],
               evicted=["a"]),
           rnd(2, summaries=[{"id": "G", "tokens": 5, "children": ["F", "b"],
                              "text": "Timeout and port changed."}],
               evicted=["F", "b"])]
    session = read_native(str(write_log(log)))
    read: list[str] = []
    real = occurrences._discriminator_rows

    def counting(distinct: pl.DataFrame, *args: Any) -> pl.DataFrame:
        read.extend(distinct["text"].to_list())
        return real(distinct, *args)

    monkeypatch.setattr(occurrences, "_discriminator_rows", counting)
    result = analysis.analyse(session, build_series(session))
    assert sorted(read) == sorted([SAME, "Use port 8443 on staging.",
                                   "Pinned numpy==1.26.4 in the lock file.",
                                   "Timeout set to 45000 ms."])
    rows = {(r["fold"], r["child"]): [d["text"] for d in r["dropped"]]
            for r in result.folds.iter_rows(named=True)}
    assert rows == {("F", "a"): ["prod"], ("G", "F"): ["45000 ms"],
                    ("G", "b"): ["8443", "staging"]}
