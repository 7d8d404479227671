"""An optional field written ``null`` is read as absent, in every record (docs/
log-format.md), and the shipped JSON Schema says so too (adv131 #5: a round's ``spans:
null`` was an input error, exit 2, and the schema refused the nulls the reader took).

Each case: the schema accepts the log with the field ``null``, and the audit of that log
equals the audit of the log without the field (series and findings)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compaction_audit import api
from compaction_audit.errors import LogError
from tests.logs import dump

SCHEMA = json.loads((Path(__file__).parents[1] / "compaction_audit" / "schema"
                     / "compaction-audit-1.schema.json").read_text())

LOG: list[dict[str, Any]] = [
    {"type": "session", "schema": "compaction-audit/1", "session_id": "s-1",
     "budget_tokens": 1000, "max_depth": 3, "eviction": "continuous",
     "scorer": {"depth_penalty": 0.1, "recency_decay": 0.05}, "recall_floor": 1,
     "start_spans": 2,
     "task_query": "rename the flag"},
    {"type": "round", "round": 0, "budget_tokens": 1000,
     "spans": [{"id": "a", "tokens": 10, "text": "Rename --color to --colour.",
                "salience_class": "discriminating", "source": "user", "role": "user"},
               {"id": "b", "tokens": 10}],
     "retained": [["a", 0.5], ["b", 0.4]],
     "logged": {"raw_ratio": 1.0, "distinct_source_spans": 2, "query_cosine_retained": 0.45,
                "summary_depth_max": 0}},
    {"type": "round", "round": 1,
     "summaries": [{"id": "m", "tokens": 5, "children": ["a"], "text": "Flag renamed.",
                    "depth": 1, "accounting": "the flag's old name"}],
     "spans": [{"id": "c", "tokens": 10}], "evicted": ["a"], "offloaded": [],
     "compaction": {"summary_id": "m", "kind": "compact"},
     "retained": [["m", 0.5], ["b", 0.4], ["c", 0.3]]},
    {"type": "round", "round": 2, "evicted": [], "offloaded": ["c"], "summaries": []},
]
REQUIRED = {"type", "schema", "round", "id", "tokens", "children"}


def _places() -> list[tuple[int, str, str]]:
    """(record index, path to the object: "", "spans.0", "summaries.0", "logged" or
    "scorer", key): every optional key of every object of :data:`LOG`."""
    out = []
    for i, rec in enumerate(LOG):
        out += [(i, "", k) for k in rec if k not in REQUIRED]
        for field in ("spans", "summaries"):
            for k in (rec.get(field) or [{}])[0]:
                if k not in REQUIRED:
                    out.append((i, f"{field}.0", k))
        for field in ("logged", "scorer"):  # nested objects (adv132 #6)
            out += [(i, field, k) for k in rec.get(field) or {}]
    return out


def _edited(i: int, where: str, key: str, null: bool) -> list[dict[str, Any]]:
    log = copy.deepcopy(LOG)
    target = log[i]
    if "." in where:
        field, index = where.split(".")
        target = target[field][int(index)]
    elif where:
        target = target[where]
    if null:
        target[key] = None
    else:
        del target[key]
    return log


def _audited(tmp_path: Path, log: list[dict[str, Any]], name: str) -> Any:
    """The series and findings, or the input error (without the file's name: a log
    without round 0's spans names ids never defined, either way)."""
    path = dump(log, tmp_path / name)
    try:
        report = api.audit(str(path))
    except LogError as exc:
        return exc.line, exc.message, exc.field
    return report.series.to_dicts(), [(f.code, f.round, f.message) for f in report.findings]


@pytest.mark.parametrize(("i", "where", "key"), _places(),
                         ids=[f"{i}:{w or 'record'}:{k}" for i, w, k in _places()])
def test_null_reads_as_absent(tmp_path: Path, i: int, where: str, key: str) -> None:
    null = _edited(i, where, key, True)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert all(validator.is_valid(rec) for rec in null), key
    assert _audited(tmp_path, null, "null.jsonl") == \
        _audited(tmp_path, _edited(i, where, key, False), "absent.jsonl")


def test_the_places_cover_every_kind_of_record() -> None:
    keys = {k for _, _, k in _places()}
    assert {"session_id", "task_query", "spans", "summaries", "evicted", "offloaded",
            "retained", "logged", "text", "salience_class", "role", "depth",
            "accounting", "raw_ratio", "summary_depth_max", "recency_decay",
            "compaction"} <= keys
