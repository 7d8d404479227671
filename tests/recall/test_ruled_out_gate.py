"""The ruled-out scan's gate (``ruledout._GATE_RE``): passes every text a form matches,
and not the texts that only hold one of the forms' words inside another word (issue 14:
"because" held "cause", so most prose ran both scans for nothing)."""

from __future__ import annotations

import pytest

from compaction_audit.recall import ruledout
from compaction_audit.recall.kinds import Discriminator


@pytest.mark.parametrize("text", [
    "we ruled out dns and tls.",
    "ruling out the proxy layer.",
    "the cache was ruled out",
    "the cache is not the cause",
    "the db isn't the root culprit.",
    "the cache layer is fine after all.",
    "redis looks ok",
    "the queue is okay, the db is not involved",
    "the lb is not at fault; moving on",
    "the worker's healthy",
])
def test_every_form_passes_the_gate(text: str) -> None:
    found: list[Discriminator] = []
    ruledout.scan_ruled_out(text, found)
    assert found  # a form of the module docstring, with a subject or an object
    assert ruledout._GATE_RE.search(text.lower())


@pytest.mark.parametrize("text", [
    "raised read_timeout_ms to 12500 on staging because p95 latency hit 542 ms.",
    "max_batch_tokens=82000 broke the build",
    "the rule-out list; the outage reasons were finer-grained",
])
def test_a_word_inside_another_does_not_pass(text: str) -> None:
    assert ruledout._GATE_RE.search(text) is None
    found: list[Discriminator] = []
    ruledout.scan_ruled_out(text, found)
    assert found == []
