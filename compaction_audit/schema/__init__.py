"""The JSON Schema of the ``compaction-audit/1`` record format, shipped as package data."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one log line, as a dict."""
    text = resources.files(__package__).joinpath("compaction-audit-1.schema.json").read_text()
    data: dict[str, Any] = json.loads(text)
    return data
