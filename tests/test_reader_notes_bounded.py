"""Reader notes: said once each at a cost linear in their number, and shown capped in
every format, all with --all (issue 11, class 5 and output bounds; adv9 F9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.io.documents import Conversion
from compaction_audit.report.html import data

RUNNER = CliRunner()


class Counted(str):
    """A note that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def comparisons(n: int) -> tuple[int, list[str]]:
    """Equality tests made to say ``n`` distinct notes (each twice), and the notes kept."""
    conv = Conversion("x")
    Counted.compared = 0
    for i in range(n):
        conv.note(Counted(f"role r{i:06d} not seen before"))
    for i in range(n):
        conv.note(Counted(f"role r{i:06d} not seen before"))
    return Counted.compared, list(conv.notes)


def test_notes_are_deduplicated_in_linear_work() -> None:
    small, kept = comparisons(500)
    big, kept_big = comparisons(1000)
    # a list scan makes n*(n-1)/2 tests for the first pass alone (124,750 and 499,500);
    # a hash lookup tests only the second saying of each note (and hash collisions)
    assert small <= 2 * 500 and big <= 2 * 1000
    assert kept == [f"role r{i:06d} not seen before" for i in range(500)]
    assert len(kept_big) == 1000


def cline_with_roles(tmp_path: Path, n: int) -> Path:
    said = [{"type": "text", "text": "Use port 8080."}]
    messages = [{"id": "u", "role": "user", "content": said}]
    messages += [{"id": f"m{i}", "role": f"odd{i:04d}", "content": "x"} for i in range(n)]
    path = tmp_path / "roles.messages.json"
    path.write_text(json.dumps({"version": 1, "sessionId": "roles", "messages": messages}))
    return path


def note_lines(text: str) -> list[str]:
    return re.findall(r"^  note: 1 message of a message role this reader does not know "
                      r"\('odd\d+'\)", text, flags=re.M)


def test_terminal_shows_twenty_notes_and_counts_the_rest(tmp_path: Path) -> None:
    path = str(cline_with_roles(tmp_path, 25))
    out = RUNNER.invoke(app, ["audit", path], env={"COLUMNS": "200"}).output
    assert len(note_lines(out)) == 20
    assert "... 5 more reader notes (--all)" in out
    out = RUNNER.invoke(app, ["audit", path, "--all"], env={"COLUMNS": "200"}).output
    assert len(note_lines(out)) == 25 and "more reader notes" not in out
    few = str(cline_with_roles(tmp_path, 20))
    out = RUNNER.invoke(app, ["audit", few], env={"COLUMNS": "200"}).output
    assert len(note_lines(out)) == 20 and "more reader notes" not in out


def test_html_shows_max_rows_notes_and_counts_the_rest(tmp_path: Path) -> None:
    path = str(cline_with_roles(tmp_path, data.MAX_ROWS + 3))
    page = tmp_path / "r.html"
    RUNNER.invoke(app, ["audit", path, "--format", "html", "-o", str(page)])
    text = page.read_text()
    assert text.count("<li>note: 1 message of a message role this reader does not know "
                      "(&#x27;odd") == data.MAX_ROWS
    assert "... and 3 more reader note(s)" in text


def test_json_caps_the_notes_unless_all(tmp_path: Path) -> None:
    path = str(cline_with_roles(tmp_path, 300))
    capped = json.loads(RUNNER.invoke(app, ["audit", path, "-f", "json"]).output)
    every = json.loads(RUNNER.invoke(app, ["audit", path, "-f", "json", "--all"]).output)
    assert len(every["session"]["extra"]["reader_notes"]) == 300
    assert len(capped["session"]["extra"]["reader_notes"]) < 300
