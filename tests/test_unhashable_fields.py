"""A field a reader compares with known values may be any JSON value: an object or a
list was hashed, and "internal error: TypeError: unhashable type" ended the whole
run, the other traces unreported (adv22a F4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.documents import version_note
from tests.foreign import FIXTURES
from tests.logs import SAMPLES

CLINE = FIXTURES / "cline"


@pytest.mark.parametrize(("version", "note"), [
    ("1", None),
    (1, None),
    ({}, "Cline format version {} not seen before; read as version 1"),
    ([1, 2], "Cline format version [1, 2] not seen before; read as version 1"),
    ("2", "Cline format version 2 not seen before; read as version 1"),
])
def test_a_version_of_any_json_value_is_a_note_or_none(version: object,
                                                       note: str | None) -> None:
    assert version_note("Cline", version, ("1", 1), "version 1") == note


def test_a_marker_kind_that_is_an_object_is_the_file_s_line(tmp_path: Path) -> None:
    for name in ("session.messages.json", "basic.compaction.json"):
        shutil.copy(CLINE / name, tmp_path / name)
    doc = json.loads((tmp_path / "basic.compaction.json").read_text())
    doc["messages"][0].setdefault("metadata", {})["kind"] = {"x": 1}
    (tmp_path / "basic.compaction.json").write_text(json.dumps(doc))
    other = str(SAMPLES / "handwritten.jsonl")
    result = CliRunner().invoke(app, ["audit", "-q", "--jobs", "1",
                                      str(tmp_path / "basic.compaction.json"), other])
    assert result.exit_code == 2
    assert (f"{tmp_path / 'basic.compaction.json'}:1: expected a string, got dict "
            "(messages[0].metadata.kind)") in result.output
    assert "internal error" not in result.output
    assert f"{other}: FAIL" in result.output  # the other trace is still reported

