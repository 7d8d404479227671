"""The shipped JSON Schema accepts every sample line and rejects malformed records."""

from __future__ import annotations

import json

import jsonschema
import pytest

from compaction_audit.schema import record_schema
from tests.logs import SAMPLES

VALIDATOR = jsonschema.Draft202012Validator(record_schema())


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_samples_validate(path: object) -> None:
    with open(str(path), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                VALIDATOR.validate(json.loads(line))


@pytest.mark.parametrize("record", [
    {"type": "round", "round": -1},
    {"type": "round", "round": 1, "spans": [{"id": "a", "tokens": -3}]},
    {"type": "round", "round": 1, "summaries": [{"id": "a", "tokens": 1, "children": []}]},
    {"type": "round", "round": 1, "retained": [["a"]]},
    {"type": "session", "schema": "compaction-audit/2"},
    {"type": "checkpoint"},
])
def test_bad_records_rejected(record: dict[str, object]) -> None:
    assert not VALIDATOR.is_valid(record)
