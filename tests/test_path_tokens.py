"""Paths are found in one pass with no state kept per segment (adv22b F9: the path
patterns repeated a group per segment with backtracking, and one 1 MiB token
``/ab/ab/...`` cost about 400 bytes of memory per byte; an 8 KB ``.gz`` took 3.3 GB).
The patterns are possessive where that changes nothing, and the relative path's
middle segments are those followed by another ``/``.  The values below are what the
patterns find, checked by hand; the memory is measured by
``benchmarks/shapes_hostile.py`` (shape ``path-token``)."""

from __future__ import annotations

import pytest

from compaction_audit.recall.extract import extract


@pytest.mark.parametrize(("text", "paths"), [
    ("see /etc/app/config.yaml now", ["/etc/app/config.yaml"]),
    ("open src/app/main.py.", ["src/app/main.py"]),
    ("dir a/b/c here", ["a/b/c"]),
    ("path /ab/cd/ and more", ["/ab/cd/"]),
    ("kv/app/nas-02 moved", ["kv/app/nas-02"]),
    ("src/x.test.ts ok", ["src/x.test.ts"]),
    ("a/b.py-x/c.js", ["a/b.py-x/c.js"]),
    ("a/b.py-x/c", ["a/b.py-x/c"]),  # was "a/b.py": the whole path now, as a bare one
    ("~/notes/todo.md", ["~/notes/todo.md"]),
    ("/usr/lib/", ["/usr/lib/"]),
    ("foo/bar", []),  # one slash, no extension: not a path
    ("x /a/b/c/d/e/f/g/h.txt y", ["/a/b/c/d/e/f/g/h.txt"]),
    ("a/b/c.d.e.tar.gz", ["a/b/c.d.e.tar.gz"]),
    ("a.b/c.d/e.txt", ["a.b/c.d/e.txt"]),
])
def test_paths_found(text: str, paths: list[str]) -> None:
    assert [d.text for d in extract(text) if d.kind.value == "identifier"] == paths


@pytest.mark.parametrize("token", ["/ab" * 20_000, "ab/" * 20_000 + "x.py",
                                   "a" + "/bc" * 20_000])
def test_a_long_path_is_one_token(token: str) -> None:
    """Each shape once: one identifier, the whole run."""
    found = [d.text for d in extract(f"see {token} now") if d.kind.value == "identifier"]
    assert found == [token]
