"""Shipped product fixtures (tests/fixtures/adapters) with one field edited: the
adapters' wrong-type tests (adv44, adv46) edit real output rather than write their own."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from tests.logs import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "adapters"
GEMINI = FIXTURES / "gemini-cli" / "compression.jsonl"


def gemini_records() -> list[Any]:
    """The records of the Gemini CLI fixture, one per line."""
    return [json.loads(line) for line in GEMINI.read_text(encoding="utf-8").splitlines()]


def edited_gemini(tmp_path: Path, at: int, edit: Callable[[Any], Any]) -> Path:
    """The Gemini CLI fixture with ``edit`` applied to the record of line ``at + 1``."""
    records = gemini_records()
    edit(records[at])
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def wrong_type_is_named(tmp_path: Path, name: str, edit: Callable[[Any, Any], str],
                        value: Any, message: str) -> None:
    """Edit the fixture document ``name`` (its folder's other JSON files beside it: a
    Cline file reads its companions) with ``edit(doc, value)``, which returns the field
    it set; reading it must raise ``message (... field)``.  With ``edit(doc, None)``
    (null: not given) it must read as before."""
    source = FIXTURES / name
    for other in source.parent.glob("*.json"):
        shutil.copy(other, tmp_path / other.name)
    path = tmp_path / source.name
    for given in (value, None):
        doc = json.loads(source.read_text(encoding="utf-8"))
        field = edit(doc, given)
        path.write_text(json.dumps(doc), encoding="utf-8")
        if given is None:
            api.load(str(path))
            continue
        with pytest.raises(LogError, match=rf"{re.escape(message)} \(.*{re.escape(field)}\)"):
            api.load(str(path))
