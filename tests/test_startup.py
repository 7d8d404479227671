"""Start-up: each command imports only what it needs (issue 14, item 4), and a Ctrl-C at
any moment of start-up ends with one line and exit 130, for ``python -m
compaction_audit`` as for the console script (issue 11).

Every check runs in a fresh interpreter (``sys.modules`` of the test process is not
the command's).  Times are measured in ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.logs import ROOT, SAMPLES

HEAVY = ("polars", "numpy", "pydantic", "tokenizers", "safetensors", "wordllama", "altair",
         "vl_convert", "selenium", "multiprocessing", "concurrent.futures",
         "compaction_audit.io.detect", "compaction_audit.io.native", "compaction_audit.engine",
         "compaction_audit.report.model", "compaction_audit.simulate", "compaction_audit.trace")
"""What no command needs before it runs: the auditor, its readers and the extras."""

CONSOLE_SCRIPT = """\
import re
import sys
from compaction_audit.__main__ import run
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(run())
"""
"""The wrapper pip writes for the ``compaction-audit`` entry point."""


def _env(*extra: Path) -> dict[str, str]:
    paths = [str(p) for p in (*extra, ROOT)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _python(code: str, *extra: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(*extra),
                          capture_output=True, text=True, timeout=120)


def _loaded_after(argv: list[str]) -> list[str]:
    """The :data:`HEAVY` modules loaded once the command ``argv`` (run in-process by
    the console script's entry point) has finished."""
    code = (f"import sys\nsys.argv = {['compaction-audit', *argv]!r}\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")
    done = _python(code)
    return done.stderr.strip().split()


def _run_then(argv: list[str], after: str) -> subprocess.CompletedProcess[str]:
    """Run the command ``argv`` (without the program name) in a fresh interpreter through
    the console script's entry point, then the code ``after`` there."""
    return _python(f"import sys\nsys.argv = {['compaction-audit', *argv]!r}\n"
                   "from compaction_audit.__main__ import run\n"
                   f"try:\n    run()\nexcept SystemExit:\n    pass\n{after}")


def test_the_command_line_loads_without_the_auditor() -> None:
    code = ("import sys\nimport compaction_audit.cli\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []


def test_version_loads_neither_typer_nor_the_auditor() -> None:
    code = ("import sys\nsys.argv = ['compaction-audit', '--version']\n"
            "from compaction_audit.__main__ import run\nrun()\n"
            "print(sorted(m for m in ('typer', 'rich', 'click', 'compaction_audit.cli', "
            "*" + repr(HEAVY) + ") if m in sys.modules))")
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "compaction-audit 0.1.0\n[]\n"


def test_version_through_typer_prints_the_same_line() -> None:
    """``--version`` with other arguments is typer's eager option, same output."""
    done = subprocess.run([sys.executable, "-m", "compaction_audit", "--version", "rules"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "compaction-audit 0.1.0\n")


@pytest.mark.parametrize("args", ["--version", "--version rules"])
def test_version_with_stdout_closed_is_one_line_and_exit_2(args: str) -> None:
    """As every command with stdout closed (tests/test_stdout_errors.py): the line it
    was asked for could not be written; through typer it was an internal error."""
    done = subprocess.run(["sh", "-c", f"'{sys.executable}' -m compaction_audit {args} >&-"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (
        2, "compaction-audit: standard output: cannot write: Bad file descriptor\n")


def test_help_loads_no_auditor() -> None:
    assert _loaded_after(["--help"]) == []
    # typer 0.29 built a pydantic adapter per option, help included; no longer
    # (startup.light_coercion: tests/test_startup_coercion.py)
    assert _loaded_after(["audit", "--help"]) == []


@pytest.mark.parametrize("argv", [["rules"], ["rules", "CA101"], ["rules", "--markdown"],
                                  ["rules", "no-such-rule"]])
def test_rules_loads_no_rule_module_nor_polars(argv: list[str]) -> None:
    """``rules`` reads the generated catalog (``rulecatalog.py``); the rule modules
    import Polars and the recall analysis (0.3-0.4 s of CPU; issue 14, item 4)."""
    done = _run_then(argv, f"print([m for m in ('compaction_audit.rules', *{HEAVY!r}) "
                           "if m in sys.modules], file=sys.stderr)\n")
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert done.stdout or "unknown rule" in done.stderr


def test_an_audit_loads_no_extra_it_does_not_use(tmp_path: Path) -> None:
    loaded = _loaded_after(["audit", str(SAMPLES / "handwritten.jsonl"), "-f", "json",
                            "-o", str(tmp_path / "report.json")])
    assert "polars" in loaded  # the check sees what an audit imports
    assert (tmp_path / "report.json").stat().st_size > 0
    for name in ("wordllama", "altair", "vl_convert", "selenium", "compaction_audit.simulate",
                 "compaction_audit.trace"):
        assert name not in loaded


def test_an_audit_of_one_trace_without_a_config_file_loads_no_pool_nor_toml(
        tmp_path: Path) -> None:
    """multiprocessing and tomllib (about 15 ms of start-up, issue 14 item 4) load when
    a pool starts or a configuration file is read, not for every audit."""
    argv = ["compaction-audit", "audit", "--isolated", str(SAMPLES / "faithfulness.jsonl"),
            "-o", str(tmp_path / "out.txt")]
    code = (f"import sys\nsys.argv = {argv!r}\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('polars', 'multiprocessing', 'tomllib') "
            "if m in sys.modules), file=sys.stderr)\n")
    done = _python(code)
    assert done.stderr.strip().splitlines()[-1] == "['polars']"
    assert (tmp_path / "out.txt").stat().st_size > 0


def test_an_audit_of_a_line_format_loads_no_document_adapter(tmp_path: Path) -> None:
    """The Cline and opencode adapters (with sqlite3) and Cline's folder module load for
    a file of theirs only: about 12 ms of every audit's start (issue 14, item 4), with
    ``-o`` too (the check of the adapters' companion files)."""
    lazy = ("compaction_audit.io.cline", "compaction_audit.io.cline_folder",
            "compaction_audit.io.opencode", "compaction_audit.io.sqlite_store", "sqlite3")
    argv = ["audit", "--isolated",
            str(ROOT / "tests" / "fixtures" / "adapters" / "claude-session.jsonl"),
            "-o", str(tmp_path / "out.txt")]
    done = _run_then(argv, f"print(sorted(m for m in {lazy!r} if m in sys.modules), "
                           "'compaction_audit.io.claude_code' in sys.modules, file=sys.stderr)\n")
    assert done.stderr.strip().splitlines()[-1] == "[] True"
    assert "claude-session.jsonl" in (tmp_path / "out.txt").read_text()


def test_a_text_report_loads_no_emoji_table(tmp_path: Path) -> None:
    """The consoles replace no ``:name:`` emoji codes: rich loaded its table of 3,600
    names for that on the first plain string of a report (issue 14, item 4)."""
    argv = ["audit", "--isolated", str(SAMPLES / "faithfulness.jsonl"),
            "-o", str(tmp_path / "out.txt")]
    done = _run_then(argv, "print('rich._emoji_codes' in sys.modules, file=sys.stderr)\n"
                           "from compaction_audit.commands.common import console_for\n"
                           "console_for().print('a :smile: b', markup=False)\n")
    assert done.stderr.strip().splitlines()[-1] == "False"
    assert done.stdout.endswith("a :smile: b\n")
    assert "faithfulness.jsonl" in (tmp_path / "out.txt").read_text()


def test_each_adapter_is_found_by_its_format_name() -> None:
    import importlib

    from compaction_audit.io import detect

    for fmt, module in detect.ADAPTER_MODULES.items():
        adapter = importlib.import_module(f"compaction_audit.io.{module}")
        assert fmt == adapter.SOURCE_FORMAT
        assert detect.ADAPTERS[fmt] is adapter.records
    assert set(detect.TOLERANT) <= set(detect.ADAPTERS)
    assert sorted(detect.document_sniffers()) == sorted(detect.TOLERANT)


def test_an_audit_does_not_load_what_polars_imports_for_iceberg_only() -> None:
    """Polars imports importlib.metadata (with email, zipfile, csv) for its Iceberg
    reader, and hashlib and socket; the command defers them (startup.DEFERRED): loaded
    on first use only (a path option, coerced by typer through pydantic, uses the
    first)."""
    argv = ["compaction-audit", "audit", "--isolated", str(SAMPLES / "faithfulness.jsonl")]
    code = (f"import sys\nsys.argv = {argv!r}\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "meta = sys.modules['importlib.metadata']\n"
            "print(type(meta).__name__, 'email' in sys.modules, file=sys.stderr)\n"
            "print(type(sys.modules['hashlib']).__name__, "
            "type(sys.modules['socket']).__name__, file=sys.stderr)\n"
            "import hashlib\n"
            "print(hashlib.sha256(b'').hexdigest()[:8], "
            "type(sys.modules['hashlib']).__name__, file=sys.stderr)\n"
            "import importlib.metadata\n"
            "from importlib.metadata import version\n"
            "print(version('polars') == importlib.metadata.version('polars'), "
            "type(sys.modules['importlib.metadata']).__name__, file=sys.stderr)\n")
    done = _python(code)
    assert done.stderr.strip().splitlines()[-4:] == ["_Deferred False", "_Deferred _Deferred",
                                                     "e3b0c442 module", "True module"]
    assert "faithfulness.jsonl" in done.stdout


def test_a_deferred_module_loads_on_first_use_and_is_left_alone_when_loaded() -> None:
    code = ("import sys\nfrom compaction_audit.runtime import startup\n"
            "assert startup.defer('os') is False\n"  # loaded already: left alone
            "assert startup.defer('no_such_module_anywhere') is False\n"
            "assert startup.defer('xml.dom.minidom') is False\n"  # parent not loaded
            "assert startup.defer('tomllib') is True\n"
            "import tomllib\n"
            "assert type(sys.modules['tomllib']).__name__ == '_Deferred'\n"
            "print(tomllib.loads('a = 1'), type(sys.modules['tomllib']).__name__)\n")
    done = _python(code)
    assert done.stdout.strip() == "{'a': 1} module", done.stderr
    # a submodule imported first loads once, and the real package then uses it
    code = ("import sys\nfrom compaction_audit.runtime import startup\n"
            "assert startup.defer('tomllib') is True\n"
            "import tomllib._parser as parser\n"
            "print(type(sys.modules['tomllib']).__name__)\n"
            "import tomllib\n"
            "print(tomllib.loads('a = 1'), tomllib.loads is parser.loads)\n")
    done = _python(code)
    assert done.stdout.split("\n")[:2] == ["_Deferred", "{'a': 1} True"], done.stderr


def test_an_audit_of_a_session_without_text_loads_no_model(tmp_path: Path) -> None:
    from compaction_audit.simulate.scale import write_scale_session

    log = tmp_path / "no-text.jsonl"
    write_scale_session(log, rounds=12, working_set=30, texts=False)
    loaded = _loaded_after(["audit", str(log), "-o", str(tmp_path / "out.txt")])
    assert "polars" in loaded
    assert [m for m in ("numpy", "tokenizers", "safetensors") if m in loaded] == []
    assert "not computed: no span or summary carries a text" in \
        (tmp_path / "out.txt").read_text()


# -- Ctrl-C during start-up ----------------------------------------------------------

SITECUSTOMIZE = """\
import os
import signal
import sys


class _CtrlCAt:
    \"\"\"Sends this process SIGINT when {target!r} is first imported: the handler then
    runs inside the import machinery, as a real Ctrl-C at that moment would, and inside
    code run by ``exec`` of a string, as while a dataclass is being created (on Python
    3.11 an interrupt passing through it makes ``python -m`` end killed by SIGINT).\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == {target!r}:
            sys.meta_path.remove(self)
            exec("os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(1000): pass",
                 {{"os": os, "signal": signal}})
        return None


sys.meta_path.insert(0, _CtrlCAt())
"""

STARTUP_MOMENTS = ("compaction_audit.__main__", "compaction_audit.runtime.stopline", "typer",
                   "rich.console", "compaction_audit.cli", "compaction_audit.commands.audit",
                   "compaction_audit.api", "polars", "compaction_audit.engine", "orjson")
"""Imports of the start of ``audit``, in the order they happen: before the package's
``__main__`` runs, while typer loads, while the auditor loads."""


def _ctrl_c_at(tmp_path: Path, target: str, launcher: str) -> subprocess.CompletedProcess[str]:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE.format(target=target))
    args = ["audit", str(SAMPLES / "handwritten.jsonl"), "-o", str(tmp_path / "out.txt")]
    if launcher == "console script":
        script = tmp_path / "compaction-audit"
        script.write_text(CONSOLE_SCRIPT)
        command = [sys.executable, str(script), *args]
    else:
        command = [sys.executable, "-m", "compaction_audit", *args]
    return subprocess.run(command, cwd=tmp_path, env=_env(hook), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("launcher", ["python -m", "console script"])
@pytest.mark.parametrize("target", STARTUP_MOMENTS)
def test_ctrl_c_at_any_moment_of_start_up_ends_with_one_line(
        tmp_path: Path, target: str, launcher: str) -> None:
    done = _ctrl_c_at(tmp_path, target, launcher)
    assert (done.returncode, done.stderr) == (130, "compaction-audit: interrupted\n")
    assert done.stdout == ""
    assert not (tmp_path / "out.txt").exists()


def test_a_program_that_imports_the_package_keeps_its_ctrl_c() -> None:
    done = _python("import signal\nimport compaction_audit\n"
                   "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n")
    assert done.returncode == 0, done.stderr


# -- the collector while modules load -------------------------------------------------

def test_loading_pauses_the_collector_then_freezes_what_loaded_in_the_command() -> None:
    code = ("import gc\nfrom compaction_audit.runtime import startup\n"
            "with startup.loading():\n    assert gc.isenabled()\n"  # not the command yet
            "assert gc.get_freeze_count() == 0\n"
            "startup.as_command()\n"
            "with startup.loading():\n    assert not gc.isenabled()\n    import decimal\n"
            "assert gc.isenabled() and gc.get_freeze_count() > 0\n"
            "gc.unfreeze()\ngc.disable()\n"
            "with startup.loading():\n    pass\n"  # off stays off, nothing frozen
            "assert not gc.isenabled() and gc.get_freeze_count() == 0\n"
            "print('ok')\n")
    done = _python(code)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


def test_an_audit_in_the_command_runs_no_full_collection_while_it_loads(
        tmp_path: Path) -> None:
    """A full collection in the middle of the imports of ``audit`` took 72 ms and freed
    nothing; with the collector paused while the modules load, none runs there."""
    code = ("import gc, sys\nfull = []\n"
            "gc.callbacks.append(lambda phase, info: full.append(1) if phase == 'start' "
            "and info['generation'] == 2 else None)\n"
            f"sys.argv = ['compaction-audit', 'audit', {str(SAMPLES / 'handwritten.jsonl')!r},"
            f" '-o', {str(tmp_path / 'out.txt')!r}]\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(len(full), 'compaction_audit.engine' in sys.modules, file=sys.stderr)\n")
    done = _python(code)
    assert done.stderr.split() == ["0", "True"]


def _collections_in_audit(tmp_path: Path, traces: list[str]) -> str:
    """Collections of any generation from the audit's start to the command's end."""
    code = ("import gc, sys\nruns = []\n"
            "from compaction_audit import api\nreal = api.audit_paths\n"
            "def counted(*a, **k):\n"
            "    gc.callbacks.append(lambda phase, info: runs.append(1) "
            "if phase == 'start' else None)\n"
            "    return real(*a, **k)\n"
            "api.audit_paths = counted\n"
            f"sys.argv = ['compaction-audit', 'audit', *{traces!r}, '--jobs', '1',"
            f" '-o', {str(tmp_path / 'out.txt')!r}]\n"
            "from compaction_audit.__main__ import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "print(len(runs) > 0, gc.isenabled(), file=sys.stderr)\n")
    return _python(code).stderr


def test_an_audit_of_one_trace_in_the_command_leaves_the_collector_off(
        tmp_path: Path) -> None:
    """Switching the collector back on after each paused stage made the next allocation
    scan everything the stage built (0.12-0.15 s on the grid's 254 MB text cell)."""
    one = [str(SAMPLES / "handwritten.jsonl")]
    assert _collections_in_audit(tmp_path, one).split() == ["False", "False"]


def test_an_audit_of_several_traces_in_one_process_keeps_the_collector(
        tmp_path: Path) -> None:
    two = [str(SAMPLES / "handwritten.jsonl"), str(SAMPLES / "handwritten.jsonl")]
    (tmp_path / "copy.jsonl").write_bytes((SAMPLES / "handwritten.jsonl").read_bytes())
    two[1] = str(tmp_path / "copy.jsonl")
    assert _collections_in_audit(tmp_path, two).split() == ["True", "True"]
