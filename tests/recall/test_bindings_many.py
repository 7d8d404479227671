"""Many names bound to one value, and many children binding one name (adv88).

adv88 #1: K names pinned to one value (``n0==1.2.0`` ... ) and M spans stating 1.2.0
alone made K x M holder rows (each bare mention holds each pin); 4,000 of each took 44 s
and 5.4 GB.  adv88 #2: a fold of K children pinning lib2 compared each child's value
with every child's (K x K) before reporting the fold's other value (CA304).  The
findings stay those worked out by hand below; the work grows as the log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from compaction_audit.api import audit
from compaction_audit.recall import factkeys
from compaction_audit.recall.analysis import run as recall_run
from compaction_audit.recall.extract import Discriminator, extract
from compaction_audit.recall.survival import bindings as sbindings
from compaction_audit.report.json_report import render_json
from compaction_audit.report.model import Report
from tests.conftest import LogWriter
from tests.logs import rnd
from tests.workcount import lines_run


def _pins(k: int, mentions: list[dict[str, Any]], later: list[dict[str, Any]] | None = None,
          summary: str = "Pinned some libraries.") -> list[dict[str, Any]]:
    """Round 0: ``b0`` ... pin n0, n1, ... to 1.2.0 (a person's words) beside
    ``mentions``; round 1 folds the pins into ``f1`` (``summary``) and evicts them;
    round 2: ``later`` spans."""
    pins = [{"id": f"b{i}", "tokens": 5, "source": "user", "text": f"Pin n{i}==1.2.0"}
            for i in range(k)]
    records = [rnd(0, spans=pins + mentions),
               rnd(1, summaries=[{"id": "f1", "tokens": 5, "children": [p["id"] for p in pins],
                                  "text": summary}], evicted=[p["id"] for p in pins])]
    if later is not None:
        records.append(rnd(2, spans=later))
    return records


def _lost(path: Path) -> dict[str, dict[str, Any]]:
    """The lost discriminators of the log at ``path``, by text."""
    doc = orjson.loads(render_json(Report([audit(str(path))], []), single=True))
    return {d["text"]: d for d in doc["lost_discriminators"]}


def _user(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 5, "source": source, "text": text}


def test_bare_mentions_hold_every_pin_of_their_value(write_log: LogWriter) -> None:
    # u0 and u1 state 1.2.0 alone and bind n0, n1, n2 to nothing: each pin stays held
    lost = _lost(write_log(_pins(3, [_user("u0", "We use 1.2.0 now."),
                                     _user("u1", "Still on 1.2.0 here.")])))
    assert [t for t in lost if "==" in t] == []


def test_a_span_binding_the_name_elsewhere_holds_the_other_pins(write_log: LogWriter) -> None:
    # u0 binds n1 to 1.3.0 and states 1.2.0 alone: it holds n0's and n2's pins, not n1's
    lost = _lost(write_log(_pins(3, [_user("u0", "Use n1==1.3.0 now; 1.2.0 broke it.")])))
    assert sorted(t for t in lost if "==" in t) == ["n1==1.2.0"]
    assert lost["n1==1.2.0"]["span"] == "b1"


def test_the_first_document_stating_the_value_alone_reads_each_pin_again(
        write_log: LogWriter) -> None:
    # nothing holds the pins at the fold; in round 2, t0 (a tool's output) binds n1 to
    # 1.3.0 and states 1.2.0, then t1 and t2 state 1.2.0 alone: t0 reads n0's and n2's
    # pins again, t1 (the first of the other two by line) n1's; a person's u9 re-reads
    # nothing
    later = [_user("u9", "We use 1.2.0 now."),
             _user("t0", "n1==1.3.0 installed; 1.2.0 removed.", "tool:shell"),
             _user("t1", "Using 1.2.0 here.", "tool:shell"),
             _user("t2", "Using 1.2.0 here.", "tool:shell")]
    lost = _lost(write_log(_pins(3, [], later)))
    assert sorted(t for t in lost if "==" in t) == ["n0==1.2.0", "n1==1.2.0", "n2==1.2.0"]
    assert {t: lost[t]["reread_span"] for t in lost if "==" in t} == {
        "n0==1.2.0": "t0", "n1==1.2.0": "t1", "n2==1.2.0": "t0"}


def _fold(children: list[str], summary: str) -> list[dict[str, Any]]:
    kids = [_user(f"c{i}", text) for i, text in enumerate(children)]
    return [rnd(0, spans=kids),
            rnd(1, summaries=[{"id": "f1", "tokens": 5, "children": [k["id"] for k in kids],
                               "text": summary}], evicted=[k["id"] for k in kids])]


def _flips(result: Any) -> list[str]:
    """``child text`` of each value the fold states with another value (CA304)."""
    return [f"{flip['child']} {flip['text']}" for f in result.findings if f.code == "CA304"
            for flip in f.values["flipped"]]


def test_each_child_pin_a_fold_states_with_another_value_is_flipped(
        write_log: LogWriter) -> None:
    result = audit(str(write_log(_fold(["Pin lib2==1.2.0"] * 4, "Pin lib2==1.3.0."))))
    [finding] = [f for f in result.findings if f.code == "CA304"]
    assert finding.message.startswith(
        "fold f1 flipped version 'lib2==1.2.0' of c0 is stated with another value: "
        "'Pin lib2==1.3.0.'; version 'lib2==1.2.0' of c1 ")
    assert [(flip["child"], flip["sentence"]) for flip in finding.values["flipped"]] == [
        (f"c{i}", "Pin lib2==1.3.0.") for i in range(4)]


@pytest.mark.parametrize(("children", "summary", "flipped"), [
    # a child sets lib2 to 1.3.0 itself: the fold kept that one, no change of its own
    (["Pin lib2==1.2.0"] * 3 + ["Pin lib2==1.3.0 after the revert."], "Pin lib2==1.3.0.",
     []),
    (["Pin lib2==1.2.0"] * 3, "Pin lib2==1.2.0 still.", []),  # kept
    # a child's requirement admits the fold's 1.3.0 (>=1.3): no change; >=1.4 does not
    (["Pin lib2==1.2.0"] * 2 + ["Require lib2>=1.3 here"], "Pin lib2==1.3.0.", []),
    (["Pin lib2==1.2.0"] * 2 + ["Require lib2>=1.4 here"], "Pin lib2==1.3.0.",
     ["c0 lib2==1.2.0", "c1 lib2==1.2.0", "c2 lib2>=1.4"]),
    # quantities: the same measure in another unit is the same value (30000 ms, 30 s)
    (["Set timeout_ms=45000 here"] * 2 + ["Set timeout_ms=30000 ms later"],
     "Set timeout_ms=30 s.", []),
    (["Set timeout_ms=45000 here"] * 3, "Set timeout_ms=30 s.",
     ["c0 timeout_ms=45000", "c1 timeout_ms=45000", "c2 timeout_ms=45000"]),
])
def test_a_fold_of_many_children_binding_one_name(
        write_log: LogWriter, children: list[str], summary: str, flipped: list[str]) -> None:
    assert _flips(audit(str(write_log(_fold(children, summary))))) == flipped


VALUES = ["lib2==1.2.0", "lib2==1.3.0", "lib2>=1.3", "lib2~=1.2", "lib2 >= 2.0",
          "lib2==1.3.0rc1", "lib2==1.2.0.post1",  # adv88 #4: admitted by no requirement
          "timeout_ms=45000", "timeout_ms=45 s", "timeout_ms=30000", "timeout_ms=30 s",
          "port=8080", "ENV=prod", "ENV=staging"]


def _bound(text: str) -> Discriminator:
    return next(d for d in extract(text, "spec") if d.text == text)


@pytest.mark.parametrize("query", VALUES)
def test_the_index_of_values_answers_as_comparing_each(query: str) -> None:
    d = _bound(query)
    for n in range(len(VALUES) + 1):
        values = [t for t in map(_bound, VALUES[:n]) if t.kind is d.kind]
        assert sbindings._Values(values).has(d) == any(
            sbindings._same_value(d, t) for t in values), (query, n)


def _pin_rows(write_log: LogWriter, n: int) -> int:
    """Rows of the holder tables of a log of n pins of n names to 1.2.0 and n spans
    stating it alone (adv88 #1's reproducer, small)."""
    mentions = [_user(f"u{j}", "we use 1.2.0 now") for j in range(n)]
    return _holder_rows(write_log(_pins(n, mentions), name=f"pins{n}.jsonl"))


def _holder_rows(path: Path) -> int:
    """Rows of the holder tables the audit of ``path`` built."""
    rows = []
    real = recall_run.with_unbound_holders

    def counted(*args: Any, **kwargs: Any) -> pl.DataFrame:
        out = real(*args, **kwargs)
        rows.append(out.height)
        return out
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(recall_run, "with_unbound_holders", counted)
        audit(str(path))
    assert rows and factkeys.with_unbound_holders is real
    return sum(rows)


def test_holder_rows_grow_as_the_pins_and_mentions(write_log: LogWriter) -> None:
    # n pins and n mentions: the occurrences (3n: each pin, its name as an identifier,
    # each mention); 1.2.0 is bound to more than 16 names, so no mention holds a pin
    # (one row per (pin, mention) was 3n + n x n)
    one, two = _pin_rows(write_log, 40), _pin_rows(write_log, 80)
    assert one == 3 * 40 and two == 3 * 80, (one, two)


@pytest.mark.parametrize(("k", "pins_lost"), [(factkeys.MAX_NAMES_PER_VALUE, 0),
                                              (factkeys.MAX_NAMES_PER_VALUE + 1, 17)])
def test_a_value_bound_to_more_names_than_the_cap_is_held_by_no_bare_mention(
        write_log: LogWriter, k: int, pins_lost: int) -> None:
    # 16 names pinned to 1.2.0: "We use 1.2.0 now." holds each pin; 17: none of them
    path = write_log(_pins(k, [_user("u0", "We use 1.2.0 now.")]))
    doc = orjson.loads(render_json(Report([audit(str(path))], []), single=True,
                                   show_all=True))
    assert len([d for d in doc["lost_discriminators"] if "==" in d["text"]]) == pins_lost


def _spread_rows(write_log: LogWriter, m: int) -> int:
    """Holder rows of 16 pins folded away, then m rounds each adding a span stating
    1.2.0 alone (each its own life, so no two share a row)."""
    records = _pins(factkeys.MAX_NAMES_PER_VALUE, [])
    records += [rnd(2 + j, spans=[_user(f"u{j}", "we use 1.2.0 now")]) for j in range(m)]
    return _holder_rows(write_log(records, name=f"spread{m}.jsonl"))


def test_holder_rows_of_mentions_in_many_rounds_grow_as_the_mentions(
        write_log: LogWriter) -> None:
    # 32 occurrences of the pins and their names, m of the mentions, and each mention
    # holds the 16 pins: 32 + 17m; past the cap it would hold none (4,000 names and
    # 4,000 mentions, each in its own round, made 16 million rows: adv88 #1)
    assert [_spread_rows(write_log, m) for m in (20, 40)] == [32 + 17 * 20, 32 + 17 * 40]


def _flip_work(write_log: LogWriter, k: int) -> int:
    """Lines run in the survival bindings module while auditing a fold of k children
    pinning lib2 to 1.2.0 into "Pin lib2==1.3.0." (adv88 #2's reproducer, small)."""
    path = write_log(_fold(["Pin lib2==1.2.0"] * k, "Pin lib2==1.3.0. " + "It went on. " * 20),
                     name=f"flip{k}.jsonl")
    for cached in ("summary_bindings", "_held", "_body"):  # each summary read afresh
        if hasattr(sbindings, cached):
            getattr(sbindings, cached).cache_clear()
    result, lines = lines_run(sbindings, lambda: audit(str(path)))
    [finding] = [f for f in result.findings if f.code == "CA304"]
    assert len(finding.values["flipped"]) + finding.values.get("flipped_more", 0) == k
    return lines


def test_flip_work_grows_as_the_children(write_log: LogWriter) -> None:
    # each child's value is tested against the fold's values (a set) and the fold's
    # answer made once: twice the children, about twice the lines, never four times
    one, two = _flip_work(write_log, 60), _flip_work(write_log, 120)
    assert one > 0 and two <= 2.2 * one, (one, two)


@pytest.mark.parametrize(("k", "label"), [
    (factkeys.MAX_NAMES_PER_VALUE, "discriminator 'n3==1.2.0': 2 spans: 1 lost, 1 in context"),
    (factkeys.MAX_NAMES_PER_VALUE + 1, "discriminator 'n3==1.2.0': 1 span: 1 lost"),
])
def test_trace_counts_a_bare_mention_as_the_audit_does(
        write_log: LogWriter, k: int, label: str) -> None:
    # past the cap a span stating 1.2.0 alone holds no pin, in the trace as in the audit
    from compaction_audit.io.native import read_native
    from compaction_audit.trace import trace

    path = write_log(_pins(k, [_user("u0", "We use 1.2.0 now.")]))
    assert trace(read_native(str(path)), "n3==1.2.0").label.startswith(label)


def test_a_fold_of_a_thousand_children_counts_them_with_separators(
        write_log: LogWriter, tmp_path: Path) -> None:
    # usertest42 G: "4000 lost facts" beside "4,001 items" on one screen
    path = write_log(_fold([f"Set port_{i} to {8000 + i} now." for i in range(1000)],
                           "Ports were set."))
    [ca301] = [f for f in audit(str(path)).findings if f.code == "CA301"]
    assert ca301.message.startswith("fold f1 silently dropped: 2,000 lost facts from "
                                    "1,000 of its children, first "), ca301.message
