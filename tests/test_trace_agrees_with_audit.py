"""``trace`` and ``audit`` give one answer to "was this fact lost?" (usertest29 #1).

Two classes of query disagreed: a value a span states as a discriminator under a longer
text (``timeout_ms = 30000``, a quantity of norm 30000) that another span still holds
as ``30000``, which the audit counts as held; and a name of code or tool output (a
grep flag) that no prose states, which the audit never counts as a fact.
"""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from compaction_audit.api import audit
from compaction_audit.cli import app
from compaction_audit.io.native import read_native
from compaction_audit.trace import trace
from tests.logs import LogWriter, rnd


def span(i: str, text: str, source: str = "user") -> dict[str, Any]:
    return {"id": i, "tokens": 20, "text": text, "source": source}


def fold(children: list[str]) -> dict[str, Any]:
    return {"id": "F", "tokens": 5, "children": children, "text": "Tuned the service."}


def head(path: str, query: str) -> str:
    """The root label of ``trace PATH -- QUERY``, its wrapped lines joined."""
    result = CliRunner().invoke(app, ["trace", path, "--", query], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    end = next(k for k, ln in enumerate(lines) if ln.startswith(("├", "└", "note:")))
    return " ".join(ln.strip() for ln in lines[:end])


def lost(path: str, value: str) -> bool:
    """The audit reports a lost fact whose text holds ``value``."""
    return any(value in d["text"] for d in audit(path).extra.get("lost_discriminators") or [])


def test_a_value_held_in_another_form_is_still_held_in_both(write_log: LogWriter) -> None:
    records = [
        rnd(0, spans=[span("cmd", "cat svc.toml", "tool_call:Bash"),
                      span("out", "12:timeout_ms = 30000", "tool_result:Bash"),
                      span("k", "Keep the timeout at 30000 for now.")]),
        rnd(1, summaries=[fold(["cmd", "out"])], evicted=["cmd", "out"]),
    ]
    path = str(write_log(records))
    assert not lost(path, "30000")  # the audit: k still holds it
    # the trace follows every span stating the norm, k among them (it said "1 span:
    # 1 lost" before, naming no holder)
    assert head(path, "timeout_ms = 30000") == (
        "discriminator 'timeout_ms = 30000': 2 spans: 1 lost, 1 in context; "
        "still held by span k (user, round 0, line 1)")
    root = trace(read_native(path), "timeout_ms = 30000")
    assert [(n.data["span"], n.data["fate"]) for n in root.children] == [
        ("out", "lost"), ("k", "in context")]
    # without k the value is lost in both
    alone = str(write_log([rnd(0, spans=records[0]["spans"][:2]), records[1]], "alone.jsonl"))
    assert lost(alone, "30000")
    assert head(alone, "timeout_ms = 30000") == (
        "discriminator 'timeout_ms = 30000': 1 span: 1 lost")


def flag_log(write_log: LogWriter, said: list[dict[str, Any]], name: str) -> str:
    """A grep call (its ``-n`` flag) folded and evicted at round 1; ``said``: round 2's
    spans (the prose that may state the flag after the call is gone)."""
    records = [
        rnd(0, spans=[span("g", "grep -n port cfg/app.toml", "tool_call:Bash")]),
        rnd(1, summaries=[fold(["g"])], evicted=["g"]),
    ]
    if said:
        records.append(rnd(2, spans=said))
    return str(write_log(records, name))


def test_a_name_no_prose_states_is_no_lost_fact_in_either(write_log: LogWriter) -> None:
    path = flag_log(write_log, [], "flag.jsonl")
    assert not lost(path, "-n")
    assert head(path, "-n") == (
        "discriminator '-n': 1 span: 1 lost; the audit counts no lost fact in it: a name "
        "of code or tool output that no prose states")
    root = trace(read_native(path), "-n")
    assert root.children[0].data["counted"] is False
    assert root.children[0].children[0].label.startswith("dropped at fold F ")
    # prose stating the flag only after the call stopped being resolvable (round 2,
    # after its eviction at round 1) does not make it a fact either
    late = flag_log(write_log, [span("p", "Run grep -n again.")], "late.jsonl")
    assert not lost(late, "-n")
    assert head(late, "-n").endswith("that no prose states")


def test_a_name_prose_states_is_a_lost_fact_in_both(write_log: LogWriter) -> None:
    records = [
        rnd(0, spans=[span("p", "Always pass -n to grep."),
                      span("g", "grep -n port cfg/app.toml", "tool_call:Bash")]),
        rnd(1, summaries=[fold(["p", "g"])], evicted=["p", "g"]),
    ]
    path = str(write_log(records))
    assert lost(path, "-n")
    assert head(path, "-n") == "discriminator '-n': 2 spans: 2 lost"
    root = trace(read_native(path), "-n")
    assert all("counted" not in n.data for n in root.children)
    assert root.children[1].children[0].label.startswith("LOST at fold F ")


def test_a_value_of_another_kind_does_not_hold_it(write_log: LogWriter) -> None:
    """adv79 #3: the version v4.2 lost at a fold read "still held by" a load average of
    4.2, a quantity the audit keys apart (kind and norm)."""
    records = [
        rnd(0, spans=[span("s1", "Deploy pinned to v4.2 on staging."),
                      span("s2", "The load average was 4.2 this morning.", "assistant")]),
        rnd(1, summaries=[fold(["s1"])], evicted=["s1"]),
    ]
    path = str(write_log(records))
    assert lost(path, "v4.2")
    assert head(path, "v4.2") == "discriminator 'v4.2': 1 span: 1 lost"
    # the quantity is its own fact, still in context
    assert head(path, "4.2").startswith("discriminator '4.2': 1 span: 1 in context")


def test_a_span_evicted_in_the_round_it_came_is_not_counted_in_either(
        write_log: LogWriter) -> None:
    """usertest66 F3: a span evicted in the round it came was never in the context at a
    round's end, where the audit judges a loss: the audit counts none, and the trace,
    which said "1 lost", says why it does not either.  One born a round earlier is lost
    in both."""
    records = [
        rnd(0, spans=[span("a", "Set read_timeout_ms to 45000 on prod."),
                      span("k", "Looking at the dashboards.")]),
        rnd(1, spans=[span("b", "Pin numpy to 1.26.4 on prod.")], evicted=["a", "b"]),
    ]
    path = str(write_log(records))
    assert lost(path, "45000") and not lost(path, "1.26.4")
    assert head(path, "45000") == "discriminator '45000': 1 span: 1 lost"
    assert head(path, "1.26.4") == (
        "discriminator '1.26.4': 1 span: 1 lost; the audit counts no lost fact in it: "
        "evicted in the round it came, never in the context at a round's end")
    [node] = trace(read_native(path), "1.26.4").children
    assert (node.data["counted"], node.data["fleeting"]) == (False, True)
    assert "(evicted in the round it came: not counted)" in node.label
