"""The eviction condition says who set the eviction mode: a log that declares it, or
one of our adapters, which writes ``on-overflow`` for every product it reads (Claude
Code, Codex, Cline, ...: they compact when the context fills). Before, a Codex or Claude
Code session's report said "declared: eviction = on-overflow", a declaration the
product's log does not hold."""

from __future__ import annotations

from compaction_audit import api
from compaction_audit.settings import Settings
from tests.foreign import FIXTURES
from tests.logs import LogWriter, rnd, session

ONE_ROUND = [rnd(0, spans=[{"id": "a", "tokens": 5, "text": "Keep port 8080."}])]


def eviction(path: str) -> tuple[str, str]:
    cond = api.audit(path).conditions[2]
    assert cond.name == "eviction is continuous"
    return cond.status, cond.detail


def test_a_product_log_says_its_adapter_set_the_eviction() -> None:
    assert eviction(str(FIXTURES / "codex-local.jsonl")) == (
        "fails", "set by the codex adapter (the product compacts on an event: its context "
        "filling up, or a person asking): "
        "eviction = on-overflow (event-driven)")


def test_a_log_that_declares_its_eviction_is_said_to(write_log: LogWriter) -> None:
    path = write_log([session(eviction="on-overflow"), *ONE_ROUND])
    assert eviction(str(path)) == ("fails", "declared: eviction = on-overflow (event-driven)")
    path = write_log([session(eviction="continuous"), *ONE_ROUND], "cont.jsonl")
    assert eviction(str(path)) == ("holds", "declared: eviction = continuous")


def test_an_unknown_source_format_is_no_adapter(write_log: LogWriter) -> None:
    path = write_log([session(eviction="on-overflow", source_format="<b>x</b>"), *ONE_ROUND])
    assert eviction(str(path)) == ("fails", "declared: eviction = on-overflow (event-driven)")


def test_the_depth_condition_says_a_configured_min_depth(write_log: LogWriter) -> None:
    """adv103 #7, usertest59 #3: with min_depth set far above the log's depth the
    condition failed with the detail "deepest ...: depth 3" under the name's "depth >=
    2"; its name is the configured threshold's."""
    log = [rnd(0, spans=[{"id": "a", "tokens": 5, "text": "x"}, {"id": "b", "tokens": 5}]),
           rnd(1, summaries=[{"id": "m", "tokens": 2, "children": ["a", "b"]}],
               evicted=["a", "b"]),
           rnd(2, summaries=[{"id": "r", "tokens": 1, "children": ["m"]}], evicted=["m"])]
    path = str(write_log(log))
    depth = api.audit(path).conditions[0]
    assert (depth.name, depth.status, depth.detail) == (
        "re-summarization depth >= 2", "holds", "deepest summary in the working set: depth 2")
    depth = api.audit(path, Settings(min_depth=10_000_000)).conditions[0]
    assert (depth.name, depth.status, depth.detail) == (
        "re-summarization depth >= 10,000,000", "fails",
        "deepest summary in the working set: depth 2")
