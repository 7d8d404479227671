"""Regenerate docs/rules.md from the rule classes (the same text as
``compaction-audit rules --markdown``).

Usage: ``python scripts/gen_rules_doc.py`` writes the file; ``--check`` exits 1 when
the file is out of date (tests/test_rules_doc.py runs the same comparison).
"""

from __future__ import annotations

import sys
from pathlib import Path

from compaction_audit.ruledoc import rules_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) docs/rules.md; returns the exit code."""
    text = rules_markdown()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            sys.stderr.write(f"{DOC} is out of date: run python scripts/gen_rules_doc.py\n")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
