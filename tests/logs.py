"""Helpers for writing small logs in tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def spans(*pairs: tuple[str, int]) -> list[dict[str, Any]]:
    """Span objects from (id, tokens) pairs."""
    return [{"id": i, "tokens": t} for i, t in pairs]
