"""Regenerate the output excerpts in README.md from the tool itself (issue 13,
section 4: the README's excerpts must be the current output).

Each excerpt is a ```text block right after a marker comment naming its command::

    <!-- excerpt: audit sample_logs/research-decay.jsonl | head 30, glance, verdict -->

The audit excerpt is the report at 100 columns (trailing spaces removed): its first 30
lines, "...", the "Series at a glance" block, "...", the verdict.  A trace excerpt
(``<!-- excerpt: trace LOG QUERY -->``) is the whole tree at 100 columns.

Usage: ``python scripts/readme_excerpts.py`` rewrites README.md; ``--check`` exits 1
when an excerpt is out of date (tests/test_readme_excerpts.py runs it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- excerpt: (?P<spec>[^>]*?) -->\n```text\n)(?P<body>.*?)(\n```)",
                   re.DOTALL)


def run(*args: str) -> list[str]:
    """The tool's stdout at 100 columns, as lines without trailing spaces."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)
    out = done.stdout
    if not out:
        raise SystemExit(f"compaction-audit {' '.join(args)} printed nothing: "
                         f"{done.stderr.strip() or 'is compaction_audit installed?'}")
    return [line.rstrip() for line in out.rstrip("\n").splitlines()]


def excerpt(spec: str) -> str:
    """The text of the excerpt ``spec`` names."""
    command = spec.split(" | ")[0].split()
    lines = run(*command)
    if command[0] != "audit":
        return "\n".join(lines)
    glance = next(i for i, line in enumerate(lines) if line.startswith("Series at a glance"))
    end = lines.index("", glance)
    return "\n".join([*lines[:30], "...", *lines[glance:end], "...", lines[-1]])


def main(argv: list[str]) -> int:
    """Rewrite (or with ``--check`` compare) the README's excerpts."""
    text = README.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + excerpt(m.group("spec")) + m.group(4), text)
    if "--check" in argv:
        if new != text:
            sys.stderr.write("README.md excerpts are out of date: run "
                             "python scripts/readme_excerpts.py\n")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
