"""Regular expressions compiled ahead of time (:mod:`compaction_audit.regexcache`, issue
14, item 4): the table holds our patterns' programs as this Python compiles them, the
command loads them instead of compiling, and an unusable table changes nothing.

Each check that needs a fresh ``re`` runs in a fresh interpreter.
"""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
import zlib

import pytest

from compaction_audit import regexcache
from tests.logs import ROOT

MODULES = ("compaction_audit.cli", "compaction_audit.api", "compaction_audit.engine",
           "compaction_audit.rules", "compaction_audit.report.formats",
           "compaction_audit.recall.texthelper", "compaction_audit.io.claude_code",
           "compaction_audit.io.codex", "compaction_audit.io.cline",
           "compaction_audit.io.gemini_cli", "compaction_audit.io.opencode",
           "compaction_audit.io.openhands")
"""Modules whose import compiles the patterns an audit needs."""


def _table() -> tuple[str, dict[regexcache.Key, regexcache.Program]]:
    with open(regexcache.TABLE, "rb") as stream:
        made, table = marshal.loads(zlib.decompress(stream.read()))
    return made, table


def _usable() -> dict[regexcache.Key, regexcache.Program]:
    """The table, when this Python wrote it (else the test is skipped)."""
    made, table = _table()
    if made != regexcache.interpreter():
        pytest.skip(f"table written by {made}, this is {regexcache.interpreter()}")
    return table


def _output(code: str) -> str:
    """Standard output of ``code`` run in a fresh interpreter (which must succeed)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_table_holds_our_patterns_as_this_python_compiles_them() -> None:
    table = _usable()
    code = ("import marshal, sys\n"
            "from compaction_audit import regexcache\n"
            "found = {}\n"
            "with regexcache.record(found, lambda f: 'compaction_audit' in f):\n"
            f"    for name in {MODULES!r}:\n"
            "        __import__(name)\n"
            "sys.stdout.write(marshal.dumps(found).hex())\n")
    ours = marshal.loads(bytes.fromhex(_output(code)))
    assert len(ours) > 50  # the recall modules alone compile more
    stale = [key for key, program in ours.items() if table.get(key) != program]
    assert not stale, f"{len(stale)} patterns not in the table or compiled differently " \
        f"(first: {stale[0][1]!r}): run python scripts/gen_regex_table.py"


def test_the_command_compiles_none_of_them() -> None:
    """After ``startup.as_command`` (what ``python -m compaction_audit`` runs), importing
    the auditor's text modules compiles none of our patterns: before the table, the
    token scanner alone took 12 ms of CPU of every audit."""
    _usable()
    code = ("import sys\n"
            "from compaction_audit import regexcache, startup\n"
            "startup.as_command()\n"
            "import re._compiler as c\n"
            "seen = []\n"
            "orig = c.compile\n"
            "c.compile = lambda p, f=0: (seen.append(p), orig(p, f))[1]\n"
            f"for name in {MODULES!r}:\n"
            "    __import__(name)\n"
            "from compaction_audit.recall import extract\n"
            "ours = [p for p in seen if p == extract._TOKEN_RE.pattern]\n"
            "print(len(seen), len(ours))\n")
    total, token = map(int, _output(code).split())
    assert token == 0
    assert total <= 5  # none of ours; a library's pattern made from runtime values may be


def test_preloaded_patterns_are_the_compiled_ones() -> None:
    """Each pattern :func:`preload` made equals a fresh compile: pattern, flags, groups,
    and what it finds."""
    table = _usable()
    code = ("import re\n"
            "from compaction_audit import regexcache\n"
            "n = regexcache.preload()\n"
            "from compaction_audit.recall import extract, spantypes\n"
            "tok = extract._TOKEN_RE\n"
            "key = (str, tok.pattern, 0)\n"
            "print(n, re._cache.get(key) is tok)\n")
    count, same = _output(code).split()
    assert int(count) == len(table) and same == "True"
    from compaction_audit.recall import extract

    fresh = re.compile(extract._TOKEN_RE.pattern + "(?#fresh)")  # not the cached object
    text = " Set timeout=45000 ms on prod, v4.2.1 (see src/app/main.py, `x_y`) #12"
    assert [m.span() for m in fresh.finditer(text)] == \
        [m.span() for m in extract._TOKEN_RE.finditer(text)]


@pytest.mark.parametrize("damage", ["truncated", "other-python", "missing"])
def test_an_unusable_table_changes_nothing(tmp_path, damage: str) -> None:
    path = tmp_path / "programs.bin"
    _, table = _table()
    if damage == "truncated":
        with open(regexcache.TABLE, "rb") as stream:
            path.write_bytes(stream.read()[:1000])
    elif damage == "other-python":
        path.write_bytes(zlib.compress(marshal.dumps(("cpython-0.0.0-0-4-1114111", table))))
    before = dict(re._cache)  # type: ignore[attr-defined]
    assert regexcache.preload(str(path)) == 0
    assert re._cache == before  # type: ignore[attr-defined]


def test_a_damaged_program_is_refused_not_run(tmp_path) -> None:
    """The engine checks each program: one with a broken code is not loaded; the others
    before it were, and none raises."""
    _usable()
    made = regexcache.interpreter()
    key = ("s", "(?P<x>a+)b(?#damaged)", 0)
    table = {key: (32, b"\xff" * 64, 1, {"x": 1}, (None, "x"))}
    path = tmp_path / "programs.bin"
    path.write_bytes(zlib.compress(marshal.dumps((made, table))))
    assert regexcache.preload(str(path)) == 0
    assert (str, key[1], 0) not in re._cache  # type: ignore[attr-defined]
