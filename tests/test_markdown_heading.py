"""The Markdown heading names the traces that failed the gate beside a gap it notes,
which alone read as the failure's cause (usertest61 C3: "FAIL (1 compaction could not
be checked)" over traces that failed with errors)."""

from __future__ import annotations

import shutil
from pathlib import Path

from compaction_audit import api
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.markdown import render_markdown
from tests.gate_app import drift_records
from tests.logs import dump

REMOTE = Path(__file__).parent / "fixtures" / "adapters" / "codex-remote.jsonl"


def _heading(paths: list[Path], fail_on: str) -> str:
    report = api.audit_paths([str(p) for p in paths], jobs=1)
    return render_markdown(report, RenderOptions(fail_on=fail_on)).decode().splitlines()[0]


def test_a_failing_trace_beside_a_gap_is_said(tmp_path: Path) -> None:
    drift = dump(drift_records(), tmp_path / "drift.jsonl")  # CA201 errors
    remote = Path(shutil.copy(REMOTE, tmp_path / "remote.jsonl"))  # opaque: not checked
    assert _heading([drift, remote], "error") == (
        "## compaction-audit: FAIL (1 failing --fail-on error; 1 compaction could not be "
        "checked)")
    # passing, the gap is the only note; failing without a gap, no note
    assert _heading([remote], "error") == (
        "## compaction-audit: PASS (1 compaction could not be checked)")
    assert _heading([drift], "error") == "## compaction-audit: FAIL"
