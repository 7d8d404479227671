"""A log whose reader opens the files beside it, from object storage (adv53): a Cline
folder under an s3:// prefix passed green, its messages file read alone ("no
compaction in this log"), where the same folder on disk fails.  From a URL such a log
is an unreadable trace: one line, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

from compaction_audit.io.companions import COMPANIONS
from compaction_audit.io.load import BESIDE
from tests.gate_app import run
from tests.s3server import s3_server

CLINE = Path(__file__).parent / "fixtures" / "adapters" / "cline"


def test_only_formats_that_read_beside_their_log_are_refused() -> None:
    assert set(BESIDE) <= set(COMPANIONS)


def test_a_cline_folder_under_a_prefix_is_not_a_pass(tmp_path: Path) -> None:
    folder = tmp_path / "cline"
    shutil.copytree(CLINE, folder)
    local = run("audit", str(folder), "-q")
    assert local.exit_code != 0  # the folder on disk
    with s3_server() as s3:
        s3.bucket("fleet")
        s3.upload(folder, "fleet", "cline/")
        remote = run("audit", "s3://fleet/cline/", "-q")
    assert remote.exit_code == 2
    said = remote.stdout + remote.stderr  # its one trace unreadable: on stderr (adv84)
    assert ("compaction-audit: s3://fleet/cline/session.messages.json: a Cline log is "
            "read with the files beside it (session.json, .messages.json, .compaction.json), which "
            "object storage does not give: copy the folder and audit it locally") in said
    assert "PASS" not in said
