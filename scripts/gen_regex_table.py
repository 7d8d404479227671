"""Regenerate ``compaction_audit/regexprograms.bin``, the regular expressions an audit
compiles, compiled ahead of time (:mod:`compaction_audit.regexcache`).

Usage: ``python scripts/gen_regex_table.py`` writes it; ``--check`` exits 1 when it
is out of date for this Python (tests/test_regex_table.py checks our own patterns).

It records every pattern compiled while the command runs in this process: ``--help``,
``audit --help``, ``rules``, and ``audit`` (text report and ``--format json --all``) of
each sample log and each adapter fixture, our patterns and those of typer, rich and
the standard library they load.  The programs are those of the Python that runs it:
run it with the Python of the project's environment.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compaction_audit import regexcache  # noqa: E402 - the package of this tree


def commands() -> list[list[str]]:
    """The command lines run while recording."""
    out = [["--help"], ["audit", "--help"], ["rules"]]
    fixtures = ROOT / "tests" / "fixtures" / "adapters"
    logs = sorted((ROOT / "sample_logs").iterdir())
    logs += sorted(p for p in fixtures.rglob("*") if p.is_file() and p.suffix != ".md")
    for log in logs:
        out += [["audit", str(log)], ["audit", str(log), "--format", "json", "--all"]]
    return out


def table() -> bytes:
    """Run :func:`commands` in this process, recording (:func:`regexcache.record`)."""
    found: dict[regexcache.Key, regexcache.Program] = {}
    with regexcache.record(found):
        from compaction_audit.cli import main

        for args in commands():
            sys.argv = ["compaction-audit", *args]
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()), \
                    contextlib.suppress(SystemExit):
                main()
    return regexcache.dump(found)


def run(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) the table; returns the exit code."""
    os.environ.setdefault("COLUMNS", "100")
    data = table()
    path = Path(regexcache.TABLE)
    if "--check" in argv:
        if not path.exists() or path.read_bytes() != data:
            sys.stderr.write(f"{path} is out of date: run python scripts/gen_regex_table.py\n")
            return 1
        return 0
    path.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
