"""Lines of the parts inside a JSON document's elements (a message's content parts):
a fact stated in a part names the line that holds it, not the line of its message's
"{" (ux6)."""

from __future__ import annotations

from pathlib import Path

from compaction_audit.io.documents import read_document

DOC = """{
  "messages": [
    {
      "id": "m1",
      "tags": [{"x": 1}, {"y": 2}],
      "content": [
        {
          "type": "text",
          "text": "Keep the timeout at 45000 ms."
        },
        {
          "type": "tool_use",
          "name": "editor",
          "input": {
            "path": "a.py",
            "lines": [{"n": 1}]
          }
        },
        {"type": "image"}
      ]
    },
    {
      "id": "m2",
      "content": "a string content"
    }
  ]
}
"""


def test_each_part_names_the_line_of_its_text(tmp_path: Path) -> None:
    path = tmp_path / "s.messages.json"
    path.write_text(DOC)
    doc = read_document(str(path), None)
    assert doc.line_of("messages", 0) == 3
    lines = DOC.splitlines()
    # the "text" key of part 0, the "input" key of part 1, the "{" of part 2
    assert [doc.part_line("messages", 0, "content", j) for j in range(3)] == [9, 14, 19]
    assert "45000 ms" in lines[9 - 1]
    # another array of the same message keeps its own parts; nested arrays are no parts
    assert [doc.part_line("messages", 0, "tags", j) for j in range(2)] == [5, 5]
    assert doc.part_line("messages", 0, "content", 3) is None
    # a string content has no part lines: the message's line is kept by the adapter
    assert doc.part_line("messages", 1, "content", 0) is None
    assert doc.line_of("messages", 1) == 22
