"""What a person took back (a Claude Code rewind: :mod:`compaction_audit.takeback`)
is read as never said by the rules that read a person's other words: a grant taken
back permits nothing (CA307 lost-rule-violated, usertest69 #2), and a turn taken back
is no newer work a repeated summary failed to reach (CA306 stale-summary).  Each with
its control, the same transcript without the rewind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compaction_audit import api
from tests.test_adapters_claude_code import boundary, reply, summary_line, user_line
from tests.test_claude_rewind import after, chain, stop_hook, tool_use


def codes(tmp_path: Path, lines: list[dict[str, Any]]) -> set[str]:
    import orjson

    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(obj) + b"\n" for obj in lines))
    return {f.code for f in api.audit(str(path)).findings}


def push(uuid: str) -> dict[str, Any]:
    obj = tool_use(uuid, "call-push")
    obj["message"]["content"][0]["input"] = {"command": "git push --force origin feature/x"}
    return obj


GRANT = [user_line("u1", "Tidy the history of feature/x. Do NOT use --force when pushing, "
                         "because two teammates track feature/x."),
         reply("a1", "I will rebase feature/x."),
         boundary("b1", "a1"), summary_line("s1", "Summary: rebasing feature/x."),
         user_line("u2", "You can force push feature/x now."),
         reply("a2", "OK, I will force push feature/x."), stop_hook("h1")]


def test_a_grant_taken_back_permits_nothing(tmp_path: Path) -> None:
    rewound = chain(*GRANT, after("s1", user_line("u3", "Push the tidied branch.")),
                    push("t1"))
    assert "CA307" in codes(tmp_path, rewound)


def test_a_grant_in_the_context_permits_the_call(tmp_path: Path) -> None:
    kept = chain(*GRANT, user_line("u3", "Push the tidied branch."), push("t1"))
    assert "CA307" not in codes(tmp_path, kept)


SAME = ("Summary: the cache layer of the catalog service was added. The TTL is 300 "
        "seconds. The service was deployed to staging. Tests pass on main.")


def stale_session(rewind: bool) -> list[dict[str, Any]]:
    later = user_line("u3", "Use memcached for the cache instead.")
    return chain(
        user_line("u1", "Add a cache layer to the catalog service; TTL 300 seconds."),
        reply("a1", "Added it with a TTL of 300 seconds."),
        boundary("b1", "a1"), summary_line("s1", SAME),
        user_line("u2", "Use Redis 7.2.4 for the cache and do NOT enable AOF persistence."),
        reply("a2", "Redis 7.2.4 without AOF."), stop_hook("h1"),
        after("s1", later) if rewind else later,
        reply("a3", "Using memcached."),
        boundary("b2", "a3"), summary_line("s2", SAME + " Memcached is used."))


def test_a_turn_taken_back_is_no_newer_work(tmp_path: Path) -> None:
    assert "CA306" not in codes(tmp_path, stale_session(rewind=True))


def test_the_same_turn_kept_is_newer_work_no_summary_reached(tmp_path: Path) -> None:
    assert "CA306" in codes(tmp_path, stale_session(rewind=False))


def test_the_newer_spans_are_named_by_their_lines(tmp_path: Path) -> None:
    """usertest69: a product's span ids (uuids) say nothing to a reader; its line does."""
    import orjson

    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in stale_session(rewind=False)))
    (message,) = [f.message for f in api.audit(str(path)).findings if f.code == "CA306"]
    assert message.endswith("2 of 2 newer span(s) reach no summary (u2 (line 5), a2 (line 6))")



def test_a_native_loop_naming_its_own_format_takes_nothing_back(tmp_path: Path) -> None:
    """adv135 #3: a native log whose session record names a source_format of its own
    evicts under its budget: a person's pin evicted with no summary is lost by eviction,
    as in a log that names none (it was taken out of the lost list as a take-back)."""
    from tests.logs import dump, rnd, session

    pin = {"id": "u1", "tokens": 20, "source": "user",
           "text": "Pin psycopg==3.1.18 for the migration."}
    rounds = [rnd(0, spans=[pin]), rnd(1, spans=[{"id": "u2", "tokens": 5, "source": "user",
                                                  "text": "Go on."}], evicted=["u1"]),
              rnd(2, spans=[{"id": "a1", "tokens": 5, "source": "assistant", "text": "OK."}])]
    lost_by = {}
    for name in ("my-loop", None):
        head = session(source_format=name) if name else session()
        path = dump([head, *rounds], tmp_path / f"{name}.jsonl")
        report = api.audit(str(path))
        lost_by[name] = {(d["text"], d["cause"]) for d in report.extra["lost_discriminators"]}
    assert ("psycopg==3.1.18", "eviction") in lost_by[None]
    assert lost_by["my-loop"] == lost_by[None]
