"""No helper process imports a module from the current directory (issue 11, class 7,
adv10 F1).

``python -c`` puts the current directory first on ``sys.path``; every helper the
command starts is such a process, and its first lines import ``signal`` and
``ctypes``.  In CI the current directory is the checkout under review, so a
``signal.py`` there ran as code in each helper.  Each test runs one kind of helper
from a folder holding such modules, which leave a file behind when imported.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compaction_audit.cosine import server
from compaction_audit.io import parallel
from compaction_audit.recall import textwork
from compaction_audit.runtime import childproc, procs

REPO = Path(__file__).resolve().parent.parent

_PLANT = (
    "import os\n"
    "open(os.path.join(os.path.dirname(os.path.abspath(__file__)),\n"
    "                  'imported-' + __name__ + '-' + str(os.getpid())), 'w').close()\n"
)
"""The start of each planted module: it marks that it was imported, and by whom."""


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory for the test: a folder with a ``signal.py`` (it then
    offers the real module's functions, so a helper that imports it still runs) and a
    ``ctypes.py`` (it fails as the prelude expects of a missing libc)."""
    (tmp_path / "signal.py").write_text(_PLANT + "from _signal import *\n")
    (tmp_path / "ctypes.py").write_text(_PLANT + "raise OSError('planted')\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _imported(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("imported-"))


def test_command_line_has_safe_path() -> None:
    assert childproc.python_command("-S")[1:] == ["-P", "-S"]


def test_text_helper(planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textwork, "PARALLEL_MIN_JOBS", 1)
    if (os.cpu_count() or 1) < 2:
        pytest.skip("the text helper needs two CPUs")
    helper = textwork._Helper.start([("Set the port to 8080 in /etc/app.conf.", "tool")])
    assert helper is not None
    helper.post(("s",))
    helper.process.wait(timeout=60)  # it read the texts and the stop: its start ran
    helper.close()
    assert _imported(planted) == []


def test_early_text_helper(planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.recall import textearly

    if not textearly.wanted():
        pytest.skip("the text helper needs two CPUs")
    monkeypatch.setattr(textearly, "_early", [])
    monkeypatch.setattr(textearly, "idle_core", lambda: True)
    assert textearly.start_early() is True
    helper = textwork._Helper.start([("Set the port to 8080 in /etc/app.conf.", "tool")])
    assert helper is not None
    helper.post(("s",))
    helper.process.wait(timeout=60)  # it read the texts and the stop: its start ran
    helper.close()
    assert _imported(planted) == []


def test_embedding_helper(planted: Path) -> None:
    helper = server.Helper.start()
    assert helper is not None
    try:
        helper.ready(timeout=60)  # answered (model, none or error) or died: started
        helper.process.poll()
    finally:
        helper.close()
    assert _imported(planted) == []


def test_decoding_helpers(planted: Path) -> None:
    session = parallel.read_parallel(str(REPO / "sample_logs" / "handwritten.jsonl"), False)
    assert session.rounds.height > 0
    assert _imported(planted) == []


def test_pool_workers(planted: Path) -> None:
    before = os.environ.get(childproc.SAFE_PATH_ENV)
    with procs.worker_pool(2) as pool:
        pids = {f.result(timeout=120) for f in procs.submit_all(pool, os.getpid, [(), ()])}
    assert pids and os.getpid() not in pids
    assert _imported(planted) == []
    assert os.environ.get(childproc.SAFE_PATH_ENV) == before  # as it was


def test_a_decoding_helper_that_fails_prints_nothing_and_the_file_is_read_alone(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """adv20: the helper's standard error was ours, so an exception in it printed a
    raw traceback; its failure is HelperFailed, and the caller reads alone."""
    from compaction_audit.io.native import read_native

    monkeypatch.setattr(parallel, "_BOOT", "raise RuntimeError('helper broke')\n")
    path = str(REPO / "sample_logs" / "handwritten.jsonl")
    with pytest.raises(parallel.HelperFailed):
        parallel.read_parallel(path, False)
    assert capfd.readouterr().err == ""
    alone = read_native(path)
    monkeypatch.setattr(parallel, "wanted", lambda _path: True)
    assert read_native(path).rounds.equals(alone.rounds)  # tried the helpers, then alone
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("before", [None, "error::DeprecationWarning"])
def test_the_resource_tracker_is_started_quiet(monkeypatch: pytest.MonkeyPatch,
                                               before: str | None) -> None:
    """adv22b F6: multiprocessing's resource tracker outlives a command killed with
    SIGKILL and printed two raw lines of "leaked semaphore objects"; the processes
    started in the block get an ignore entry for it, and the variable is restored."""
    if before is None:
        monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    else:
        monkeypatch.setenv("PYTHONWARNINGS", before)
    with childproc.safe_path_env():
        inside = os.environ["PYTHONWARNINGS"]
    assert inside == (childproc.QUIET_TRACKER if before is None
                      else f"{before},{childproc.QUIET_TRACKER}")
    assert os.environ.get("PYTHONWARNINGS") == before
