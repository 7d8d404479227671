"""Exit codes do not depend on whether stderr can be written (issue 11, third pass):
``audit /nonexistent 2>&-`` exited 1 (an "internal error" writing its error line to a
None stderr) instead of 2."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys

import pytest
import typer

from tests.logs import ROOT, SAMPLES

CASES = [(["audit", "/nonexistent/t.jsonl"], 2), (["audit", "--format", "nope", "x"], 2),
         (["audit", str(SAMPLES / "handwritten.jsonl")], 1), (["rules"], 0)]


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes the descriptor")
@pytest.mark.parametrize(("args", "code"), CASES)
def test_the_exit_code_is_the_same_with_stderr_closed(args: list[str], code: int) -> None:
    command = shlex.join([sys.executable, "-m", "compaction_audit", *args])
    for redirect in ("2>/dev/null", "2>&-"):
        done = subprocess.run(["sh", "-c", f"exec {command} >/dev/null {redirect}"],
                              cwd=ROOT, timeout=120)
        assert done.returncode == code, redirect


def test_an_error_line_to_a_broken_stderr_still_exits_2(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.commands.common import fail

    broken = io.StringIO()
    broken.close()  # writes raise ValueError, as a closed stream does
    monkeypatch.setattr(sys, "stderr", broken)
    with pytest.raises(typer.Exit) as stop:
        fail("cannot read x")
    assert stop.value.exit_code == 2
