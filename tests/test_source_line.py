"""Each span's own log line (items ``source_line``): adapters keep it, native logs keep
their round's line, and a lost fact shows it (issue 10, "stated at line N")."""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.errors import LogError
from compaction_audit.io.load import load_session
from compaction_audit.io.native import read_native
from tests.logs import LogWriter, rnd, session
from tests.recall.test_severity import assistant, boundary, user


def test_a_native_log_keeps_the_rounds_line_and_ignores_the_key(write_log: LogWriter
                                                                 ) -> None:
    # no source_format: source_line is an unknown extra key, kept and ignored (spec)
    path = write_log([session(), rnd(0, spans=[{"id": "s1", "tokens": 3, "source_line": 99},
                                               {"id": "s2", "tokens": 3, "source_line": "x"}])])
    items = read_native(str(path)).items
    assert items.select("id", "line", "source_line").rows() == [("s1", 2, 2), ("s2", 2, 2)]


def test_adapter_records_carry_the_spans_own_line(write_log: LogWriter) -> None:
    path = write_log([session(source_format="claude-code"),
                      rnd(0, spans=[{"id": "s1", "tokens": 3, "source_line": 7},
                                    {"id": "s2", "tokens": 3}])])
    items = read_native(str(path)).items
    assert items.select("id", "line", "source_line").rows() == [("s1", 2, 7), ("s2", 2, 2)]
    bad = write_log([session(source_format="claude-code"),
                     rnd(0, spans=[{"id": "s1", "tokens": 3, "source_line": 0}])], "bad.jsonl")
    with pytest.raises(LogError) as err:
        read_native(str(bad))
    assert err.value.line == 2 and err.value.field == "spans[0].source_line"


def test_a_lost_fact_shows_the_line_that_stated_it(write_log: LogWriter) -> None:
    # lines: 1 user, 2 assistant, 3 user, 4 boundary, 5 summary; round 0 opens at line 1
    path = write_log([user("u1", "Rename the flag to --dry-run."),
                      assistant("a1", "Renamed it; the flag must stay off in CI runs."),
                      user("u2", "Never force-push to the release branch."),
                      boundary("b1", "u2"),
                      user("s1", "Renamed the flag.", isCompactSummary=True)])
    sess, fmt = load_session(str(path))
    assert fmt == "claude-code"
    spans = sess.items.filter(sess.items["kind"] == "span")
    assert spans.select("id", "line", "source_line").rows() == [
        ("u1", 1, 1), ("a1", 1, 2), ("u2", 3, 3)]
    lost = {d["text"]: d for d in audit(str(path)).extra["lost_discriminators"]}
    assert lost["Never force-push to the release branch"]["span_line"] == 3
    # the assistant's reply: its own line 2, not its round's line 1
    [said] = [d for d in lost.values() if d["span"] == "a1" and d["kind"] == "constraint"]
    assert said["span_line"] == 2
