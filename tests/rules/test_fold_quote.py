"""A fold's finding quotes a lost fact as the span it names words it (usertest70 #4):
after two compactions the fact reached the second fold through the first summary,
whose words ("breaks the COPY path") were quoted as the person's line 1 ("breaks our
COPY path")."""

from __future__ import annotations

from pathlib import Path

import orjson

from compaction_audit import api
from tests.test_adapters_claude_code import boundary, reply, summary_line, user_line

PROMPT = ("Ship the ledger service. Do NOT run the backfill on prod-us-2; pin "
          "asyncpg==0.29.0 because 0.30 breaks our COPY path.")


def test_the_quote_is_the_stating_lines_words(tmp_path: Path) -> None:
    lines = [user_line("u1", PROMPT), reply("a1", "Starting."), boundary("b1", "a1"),
             summary_line("s1", "Summary: ship the ledger service. Do NOT run the backfill "
                                "on prod-us-2. Pin asyncpg==0.29.0 because 0.30 breaks the "
                                "COPY path."),
             user_line("u2", "Continue with the ship."), reply("a2", "Step two done."),
             boundary("b2", "a2"), summary_line("s2", "Summary: ship the ledger service."),
             user_line("u3", "Go on.")]
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    (finding,) = [f for f in api.audit(str(path)).findings if f.code == "CA301"]
    assert "'because 0.30 breaks our COPY path' (line 1)" in finding.message
    assert "breaks the COPY path" not in finding.message
