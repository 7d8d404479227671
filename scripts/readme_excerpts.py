"""Regenerate the output excerpts in README.md from the tool itself (issue 13,
section 4: the README's excerpts must be the current output).

Each excerpt is a ```text block right after a marker comment naming its command::

    <!-- excerpt: audit sample_logs/research-decay.jsonl | first rule, glance, verdict -->

The audit excerpt is the report at 100 columns: from its first line through the first
rule's findings, "...", the "Series at a glance" block, "...", the verdict; with
``compactions, verdict``, the header and the compactions, "...", the verdict.  ``in
DIR`` runs the command in DIR (relative to the repository); when DIR is absent (the
development corpus in a clean clone) the block is left as it is.  A trace excerpt
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


def verdict(lines: list[str]) -> list[str]:
    """The verdict: the report's last paragraph (wrapped under a hanging indent)."""
    return lines[len(lines) - lines[::-1].index(""):] if "" in lines else lines[-1:]


def run(*args: str, cwd: Path = ROOT) -> list[str]:
    """The tool's stdout at 100 columns (run in ``cwd``), as lines without trailing
    spaces; with the lexical cosine, which is what the Quickstart's ``pip install .``
    gives (the embedding model is the ``[embed]`` extra)."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1",
           "COMPACTION_AUDIT_EMBED": "lexical"}
    done = subprocess.run([sys.executable, "-m", "compaction_audit", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, check=False)
    out = done.stdout
    if not out:
        raise SystemExit(f"compaction-audit {' '.join(args)} printed nothing: "
                         f"{done.stderr.strip() or 'is compaction_audit installed?'}")
    return [line.rstrip() for line in out.rstrip("\n").splitlines()]


def excerpt(spec: str, current: str) -> str:
    """The text of the excerpt ``spec`` names; ``current`` (the block as it is) when
    the spec runs in a directory that is not there (``in ../shared/corpus/...``: the
    development corpus, absent from a clean clone)."""
    parts = spec.split(" | ")
    command = parts[0].split()
    where = next((p[3:] for p in parts[1:] if p.startswith("in ")), None)
    if where is not None and not (ROOT / where).is_dir():
        return current
    lines = run(*command, cwd=ROOT / where if where else ROOT)
    if command[0] != "audit":
        return "\n".join(lines)
    if "compactions, verdict" in parts:
        return "\n".join([*lines[:lines.index("Findings") - 1], "...", *verdict(lines)])
    heads = [i for i, line in enumerate(lines) if line.startswith(("ERROR ", "WARNING "))]
    first = heads[1] if len(heads) > 1 else len(lines) - 1  # through the first rule
    glance = next(i for i, line in enumerate(lines) if line.startswith("Series at a glance"))
    end = lines.index("", glance)
    return "\n".join([*lines[:first], "...", *lines[glance:end], "...", *verdict(lines)])


def main(argv: list[str]) -> int:
    """Rewrite (or with ``--check`` compare) the README's excerpts."""
    text = README.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + excerpt(m.group("spec"), m.group("body"))
                    + m.group(4), text)
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
