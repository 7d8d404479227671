"""Regenerate docs/rules.md and ``compaction_audit/rulecatalog.py`` (what
``compaction-audit rules`` reads, without loading the rule modules) from the rule
classes; docs/rules.md is the same text as ``compaction-audit rules --markdown``.

Usage: ``python scripts/gen_rules_doc.py`` writes both files; ``--check`` exits 1 when
either is out of date (tests/test_rules_doc.py runs the same comparisons).
"""

from __future__ import annotations

import sys
from pathlib import Path

from compaction_audit.ruledoc import catalog_source, class_docs, rules_markdown

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
CATALOG = ROOT / "compaction_audit" / "rulecatalog.py"


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) docs/rules.md and the rule catalog; returns
    the exit code."""
    docs = class_docs()
    wanted = {CATALOG: catalog_source(docs), DOC: rules_markdown(docs)}
    if "--check" in argv:
        stale = [path for path, text in wanted.items()
                 if (path.read_text(encoding="utf-8") if path.exists() else "") != text]
        for path in stale:
            sys.stderr.write(f"{path} is out of date: run python scripts/gen_rules_doc.py\n")
        return 1 if stale else 0
    for path, text in wanted.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
