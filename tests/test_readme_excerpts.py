"""The README's output excerpts are the tool's current output (issue 13, section 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_excerpts_are_current() -> None:
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_excerpts.py"),
                            "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_the_trace_example_names_a_token_of_its_sample() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- excerpt: trace sample_logs/handwritten.jsonl 45000 -->" in text
    assert "45000" in (ROOT / "sample_logs" / "handwritten.jsonl").read_text()
    # every sparkline in an excerpt has at most the 36 marks the tool draws
    marks = [line.split()[1] for line in text.splitlines()
             if line.startswith("  raw_ratio ") or line.startswith("raw_ratio ")]
    assert marks and all(len(m) <= 36 for m in marks)
