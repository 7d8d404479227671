"""Reports of a tree, kept to compare with another tree's: a check that a performance
change leaves every report byte-identical (issue 14, item 4).

Usage (from the repository root)::

    python benchmarks/same_reports.py save DIR        # this tree's reports into DIR
    python benchmarks/same_reports.py compare DIR_A DIR_B

``save`` runs ``python -m compaction_audit audit INPUT`` in a fresh interpreter for each
input, twice: ``--format json --all`` and the text report (``COLUMNS=100``), and keeps
standard output, standard error and the exit status of each run in DIR (the tree's
own files named relative to it, so that two copies of the project compare).  The inputs:
the sample logs (``sample_logs/*``), the adapters' test fixtures
(``tests/fixtures/adapters``: every file but the READMEs, and the Cline folder) and
every trace of the corpus (``../shared/corpus``, when present: its Claude Code and
Codex files, the Cline messages file and folder).  ``compare`` lists the files that
differ and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def inputs() -> list[Path]:
    """Every input :func:`save` audits, in a fixed order."""
    found = sorted((ROOT / "sample_logs").iterdir())
    fixtures = ROOT / "tests" / "fixtures" / "adapters"
    found += sorted(p for p in fixtures.rglob("*") if p.is_file()
                    and p.name not in ("README.md", "LICENSE"))
    found.append(fixtures / "cline")
    if CORPUS.is_dir():
        for sub in ("claude-code", "codex", "cline"):
            found += sorted(p for p in (CORPUS / sub).iterdir()
                            if p.is_file() and p.name != "LICENSE")
        found.append(CORPUS / "cline")
    return found


def _name(path: Path) -> str:
    """A file name for ``path``'s outputs: its path with separators replaced."""
    try:
        rel = path.relative_to(ROOT)
    except ValueError:
        rel = Path("corpus") / path.relative_to(CORPUS)
    return str(rel).replace(os.sep, "__")


def _shown(path: Path) -> str:
    """``path`` as given to the command: relative to the tree when inside it, so that
    two trees (or copies) give the same reports."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def save(out: Path) -> None:
    """Audit every input in both formats; keep stdout, stderr and the exit status."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    for path in inputs():
        for label, extra in (("json", ["--format", "json", "--all"]), ("text", [])):
            done = subprocess.run([sys.executable, "-m", "compaction_audit", "audit",
                                   _shown(path), *extra], cwd=ROOT, env=env,
                                  capture_output=True, check=False)
            stem = out / f"{_name(path)}.{label}"
            stem.with_suffix(stem.suffix + ".out").write_bytes(done.stdout)
            stem.with_suffix(stem.suffix + ".err").write_bytes(done.stderr)
            stem.with_suffix(stem.suffix + ".rc").write_text(f"{done.returncode}\n")
            print(f"{done.returncode} {hashlib.sha256(done.stdout).hexdigest()[:12]} "
                  f"{label:4} {path}", flush=True)


def compare(a: Path, b: Path) -> int:
    """Print the files that differ between ``a`` and ``b``; 1 when one does."""
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = [n for n in names if not (a / n).is_file() or not (b / n).is_file()
           or (a / n).read_bytes() != (b / n).read_bytes()]
    for n in bad:
        print(f"differs: {n}")
    print(f"{len(names) - len(bad)} of {len(names)} files identical")
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("save").add_argument("dir", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    opts = parser.parse_args()
    if opts.cmd == "save":
        save(opts.dir)
    else:
        sys.exit(compare(opts.a, opts.b))


if __name__ == "__main__":
    main()
