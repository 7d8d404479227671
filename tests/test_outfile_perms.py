"""-o honours the output file's own write permission (issue 11, F6): a file the user
may not write is refused even in a folder where a rename could replace it, and a file
that may be written but not replaced (another user's, in a sticky folder like /tmp) is
written in place.

Root may write anything, so the checks are simulated (``os.access`` says no;
``os.replace`` fails with EPERM as in a sticky folder); when the tests run as root
and ``setpriv`` exists, :func:`test_as_another_user` also runs the real thing as
``nobody``."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gate_app import drift_records, run
from tests.logs import dump

OLD = b"old report\n"


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``o.txt``, an existing output beside the trace ``t.jsonl`` (audit exits 1)."""
    monkeypatch.chdir(tmp_path)
    dump(drift_records(), tmp_path / "t.jsonl")
    (tmp_path / "o.txt").write_bytes(OLD)
    return tmp_path / "o.txt"


def _deny_write(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    real, resolved = os.access, str(target.resolve())

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if os.path.realpath(path) == resolved and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def _sticky(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    real, resolved = os.replace, str(target.resolve())

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if os.path.realpath(dst) == resolved:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(src))
        real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize("command", [
    ["audit", "t.jsonl", "-o", "o.txt"],
    ["convert", "t.jsonl", "-o", "o.txt"],
    ["baseline", "create", "t.jsonl", "-o", "o.txt"],
    ["diff", "t.jsonl", "t.jsonl", "-o", "o.txt"],
])
def test_a_file_that_may_not_be_written_is_refused(
        out: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    _deny_write(monkeypatch, out)
    inode = out.stat().st_ino
    result = run(*command)
    assert (result.exit_code, result.stderr.splitlines()) == (
        2, ["compaction-audit: o.txt: cannot write: Permission denied"])
    assert (out.read_bytes(), out.stat().st_ino) == (OLD, inode)
    assert sorted(p.name for p in out.parent.iterdir()) == ["o.txt", "t.jsonl"]


def test_a_file_the_rename_may_not_replace_is_written_in_place(
        out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _sticky(monkeypatch, out)
    inode = out.stat().st_ino
    result = run("audit", "t.jsonl", "--format", "json", "-o", "o.txt")
    assert (result.exit_code, result.stderr) == (1, "")
    assert out.stat().st_ino == inode
    assert out.read_bytes().startswith(b"{") and b'"drift"' in out.read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["o.txt", "t.jsonl"]


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder under /tmp that ``nobody`` may enter (pytest's tmp_path is root's 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="ca-outperm-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0
                    or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run as another user")
def test_as_another_user(shared: Path) -> None:
    """As nobody: root's 0644 file in a 0777 folder is refused (the shell's ``>`` is);
    a shared 0666 file of root's in a 1777 folder is written in place (still root's)."""
    dump(drift_records(), shared / "t.jsonl")
    (shared / "t.jsonl").chmod(0o644)
    for name, mode in (("rw", 0o777), ("sticky", 0o1777)):
        (shared / name).mkdir()
        (shared / name).chmod(mode)
    (shared / "rw" / "f").write_bytes(OLD)
    (shared / "rw" / "f").chmod(0o644)
    (shared / "sticky" / "f").write_bytes(OLD)
    (shared / "sticky" / "f").chmod(0o666)
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}

    def audit(output: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
             "-m", "compaction_audit", "audit", "-q", "t.jsonl", "-o", output],
            cwd=shared, env=env, capture_output=True, text=True, timeout=120, check=False)

    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            sys.executable, "-c", "import compaction_audit"],
                           env=env, capture_output=True, timeout=60, check=False)
    if probe.returncode != 0:
        pytest.skip("nobody cannot import compaction_audit from this checkout")
    refused = audit("rw/f")
    assert (refused.returncode, refused.stderr.splitlines()) == (
        2, ["compaction-audit: rw/f: cannot write: Permission denied"])
    assert ((shared / "rw" / "f").read_bytes(), (shared / "rw" / "f").stat().st_uid) == (OLD, 0)
    written = audit("sticky/f")
    assert (written.returncode, written.stderr) == (1, "")
    st = (shared / "sticky" / "f").stat()
    assert (st.st_uid, oct(st.st_mode & 0o7777)) == (0, "0o666")
    assert (shared / "sticky" / "f").read_bytes() != OLD
    assert sorted(p.name for p in (shared / "sticky").iterdir()) == ["f"]


def test_an_interrupt_during_the_copy_into_a_hard_link_waits_for_the_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv15 F2: SIGINT between two chunks of the copy into a hard-linked output left
    the new head over the old tail.  Now the copy ends, then the interrupt is raised:
    both names hold the whole new report."""
    import signal

    from compaction_audit import outfile

    real, other = tmp_path / "out.json", tmp_path / "link.json"
    real.write_bytes(b"old " * 5000)
    os.link(real, other)
    new = tmp_path / "new.partial"
    new.write_bytes(b"new report " * 300)
    copy = shutil.copyfileobj

    def interrupted(src: Any, dst: Any, length: int = 0) -> None:
        dst.write(src.read(100))
        # the user presses Ctrl-C mid-copy; raised in this thread: os.kill let the
        # kernel pick another thread, which under load tripped it after the copy ended
        signal.raise_signal(signal.SIGINT)
        copy(src, dst, length)

    monkeypatch.setattr(shutil, "copyfileobj", interrupted)
    with pytest.raises(KeyboardInterrupt):
        outfile._commit(str(new), str(real))
    assert real.read_bytes() == other.read_bytes() == b"new report " * 300
