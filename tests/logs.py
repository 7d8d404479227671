"""Helpers for writing small logs in tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from compaction_audit.errors import LogError

if TYPE_CHECKING:
    from compaction_audit.model import Session

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"
AGENT_FOLDERS = ("claude-code", "codex")
"""Corpus folders of agent logs in JSONL (``labels/`` holds hand labels, not logs)."""


def corpus_logs() -> list[Path]:
    """The corpus's agent logs in JSONL, sorted; empty when the corpus is absent."""
    return sorted(p for folder in AGENT_FOLDERS for p in (CORPUS / folder).glob("*.jsonl"))

LogWriter = Callable[..., Path]


def dump(records: list[Any], path: Path) -> Path:
    """Write records (dicts, or raw strings written as-is) one per line."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def session(**fields: Any) -> dict[str, Any]:
    """A session record with the schema set."""
    return {"type": "session", "schema": "compaction-audit/1", **fields}


def rnd(number: int, **fields: Any) -> dict[str, Any]:
    """A round record."""
    return {"type": "round", "round": number, **fields}


def held_fact_records() -> list[dict[str, Any]]:
    """Round 0: ``u`` (a person's rule), ``t`` (a tool's line naming read_timeout_ms and
    45000), ``k`` (the assistant restating 45000); round 1 folds ``u`` and ``t`` into
    ``F``, whose text keeps none of it: 45000 is dropped but still held by ``k``."""
    return [
        rnd(0, spans=[{"id": "u", "tokens": 20, "source": "user",
                       "text": "Keep the retry limit at 7."},
                      {"id": "t", "tokens": 20, "source": "tool:shell",
                       "text": "Raised read_timeout_ms to 45000."},
                      {"id": "k", "tokens": 20, "source": "assistant",
                       "text": "The timeout stays at 45000."}]),
        rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u", "t"],
                           "text": "Worked on the deploy."}], evicted=["u", "t"])]


def spans(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    """Span objects from (id, tokens) pairs."""
    return [{"id": i, "tokens": t} for i, t in pairs]


def assert_log_error(records: Callable[[str], Iterable[Any]], path: Path, data: bytes,
                     line: int, message: str) -> None:
    """Write ``data`` to ``path``, read it with an adapter's ``records`` and check that
    it raises a :class:`LogError` at ``line`` (1-based) whose text holds ``message``."""
    path.write_bytes(data)
    with pytest.raises(LogError) as info:
        list(records(str(path)))
    assert info.value.line == line
    assert message in str(info.value)


def analyse_alone_and_helped(session: Session,
                             monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The recall analysis of ``session`` done in this process alone and with the text
    helper process (``PARALLEL_MIN_JOBS`` set out of reach, then to 0), after checking
    that their folds, debt, lost and floor tables are equal; returns (alone, helped)."""
    from compaction_audit.recall import analysis as recall
    from compaction_audit.recall import textwork
    from compaction_audit.series import build_series

    series = build_series(session)
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 1 << 62)
    alone = recall.analyse(session, series)
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 0)
    helped = recall.analyse(session, series)
    for table in ("folds", "debt", "lost", "floor"):
        assert getattr(helped, table).equals(getattr(alone, table)), table
    return alone, helped
