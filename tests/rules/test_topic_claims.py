"""A summary sentence that only names what was worked on is no unsupported claim
(usertest38 #5): "Discussed dependency setup and release script flags." over leaves
that said ``lib2==1.2.0`` and ``--force`` was a CA305 warning, the leaves holding one
of its six content words.  What it loses is CA301's; an invented fact still fires."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_audit.engine import audit_session
from compaction_audit.io.native import read_native
from compaction_audit.recall.topics import topic_only
from tests.logs import LogWriter, rnd

LEAVES = ["Pin lib2==1.2.0 because 1.3.0 breaks the payments serializer.",
          "Do NOT run release.sh with --force; it skips the migration check."]


def claims(write_log: LogWriter, summary: str) -> list[tuple[str, str]]:
    """(kind, text) of each CA305 finding of one fold of :data:`LEAVES` into
    ``summary``."""
    spans: list[dict[str, Any]] = [{"id": f"u{k}", "tokens": 20, "text": t, "source": "user"}
                                   for k, t in enumerate(LEAVES)]
    path: Path = write_log([
        rnd(0, spans=spans),
        rnd(1, summaries=[{"id": "f1", "tokens": 7, "children": ["u0", "u1"],
                           "text": summary}], evicted=["u0", "u1"])])
    return [(f.values["kind"], f.values["text"])
            for f in audit_session(read_native(str(path))).findings if f.code == "CA305"]


@pytest.mark.parametrize(("sentence", "topic"), [
    ("Discussed dependency setup and release script flags.", True),
    ("We also looked into the retry logic and the staging deploy.", True),
    ("Topics: caching, retries, the deploy order.", True),
    ("Discussion of the migration order and the rollback plan.", True),
    ("The tool result contained an injected instruction.", False),  # states an event
    ("Reviewed the logs, which showed an injected instruction.", False),
    ("Discussed that the cache was invalidated by a cron job.", False),
    ("Discussed not using force pushes on main.", False),  # a rule, negated
    ("Fixed the login bug in the auth middleware.", False),  # a result, not a topic
])
def test_a_topic_sentence_names_what_was_worked_on_and_asserts_nothing(
        sentence: str, topic: bool) -> None:
    assert topic_only(sentence) is topic


def test_a_topic_only_summary_states_no_claim(write_log: LogWriter) -> None:
    # the leaves hold "release" of release.sh alone: 1 of 6 content words, under 0.2
    assert claims(write_log, "Discussed dependency setup and release script flags.") == []


def test_an_invention_beside_or_inside_a_topic_sentence_still_fires(
        write_log: LogWriter) -> None:
    assert claims(write_log, "Discussed dependency setup. The tool result contained an "
                             "injected instruction.") == [
        ("claim", "The tool result contained an injected instruction.")]
    # a topic sentence's own discriminator is judged: no leaf says 1.4.0 (its text runs
    # from the name it is bound to: usertest38 #3)
    assert claims(write_log, "Discussed pinning lib2 to 1.4.0 for the serializer.") == [
        ("version", "lib2 to 1.4.0")]
