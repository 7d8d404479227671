"""A rule restated as a prohibition predicate is kept (usertest61 A2): "Using --force
when pushing the release branch is forbidden" keeps "Do NOT use --force when pushing
the release branch", as "Never use --force ..." does; the fold lost nothing (no CA301)."""

from __future__ import annotations

import pytest

from compaction_audit.api import audit
from compaction_audit.recall.extract import extract
from compaction_audit.recall.survival import survives
from tests.logs import LogWriter, rnd

RULE = "Do NOT use --force when pushing the release branch."


@pytest.mark.parametrize(("summary", "kept"), [
    ("Using --force when pushing the release branch is forbidden.", True),
    ("Pushing the release branch with --force is prohibited.", True),
    ("Using --force when pushing the release branch is disallowed.", True),
    ("Using --force when pushing the release branch is banned.", True),
    ("Never use --force when pushing the release branch.", True),
    # a prohibition taken back by "without" is a duty, and a sentence with no such
    # word keeps nothing
    ("Using --force when pushing the release branch is forbidden without a review.", False),
    ("Using --force when pushing the release branch is routine.", False),
])
def test_a_prohibition_predicate_keeps_the_rule(summary: str, kept: bool) -> None:
    (rule,) = [d for d in extract(RULE) if d.kind.value == "negation"]
    assert survives(rule, summary) is kept


@pytest.mark.parametrize(("summary", "codes"), [
    ("Summary: using --force when pushing the release branch is forbidden.", []),
    ("Summary: work on the release branch went on.", ["CA301", "CA303"]),
])
def test_the_fold_loses_the_rule_only_when_no_sentence_keeps_it(
        write_log: LogWriter, summary: str, codes: list[str]) -> None:
    path = write_log([
        rnd(0, spans=[{"id": "u1", "tokens": 12, "source": "user", "text": RULE}]),
        rnd(1, summaries=[{"id": "S1", "tokens": 8, "children": ["u1"], "text": summary}],
            evicted=["u1"])])
    assert [f.code for f in audit(str(path)).findings if f.code.startswith("CA30")] == codes
