"""The bounded JSON report leaves out a dropped fact's ``key`` where it is its
``kind:norm``; ``--all`` keeps it (issue 14, section 3: the grid's 0.4 MB text cell's
report went over a tenth of the trace, 40,586 bytes for 403,282)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction_audit.report.bounded import without_derived_keys
from tests.gate_app import run
from tests.logs import SAMPLES


def test_only_a_key_that_is_kind_and_norm_goes() -> None:
    fact = {"kind": "version", "text": "v4.2.1", "norm": "4.2.1", "key": "version:4.2.1"}
    other = {"kind": "version", "norm": "4.2.1", "key": "entity:F1"}
    value = {"children": [{"dropped": [fact, other]}], "key": "episode:0"}
    assert without_derived_keys(value) == {
        "children": [{"dropped": [{"kind": "version", "text": "v4.2.1", "norm": "4.2.1"},
                                  other]}], "key": "episode:0"}
    assert fact["key"] == "version:4.2.1"  # the input is not changed


def dropped(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for f in doc["findings"] if f["code"] == "CA301"
            for c in f["values"]["children"] for d in c.get("dropped", [])]


def test_the_report_leaves_it_out_and_all_keeps_it(tmp_path: Path) -> None:
    trace = str(SAMPLES / "handwritten.jsonl")
    bounded = dropped(json.loads(run("audit", trace, "-f", "json", "--isolated").stdout))
    everything = dropped(json.loads(run("audit", trace, "-f", "json", "--isolated",
                                        "--all").stdout))
    # a value bound to a name keys its name too (usertest38 #3: version:1.2.0@lib2):
    # that key is no join of kind and norm, and stays
    assert bounded and all("key" not in d or d["key"].startswith(f"{d['kind']}:{d['norm']}@")
                           for d in bounded)
    assert any("@" in d.get("key", "") for d in bounded)  # read_timeout_ms to 45000
    assert everything and all(d["key"] == f"{d['kind']}:{d['norm']}"
                              or d["key"].startswith(f"{d['kind']}:{d['norm']}@")
                              for d in everything)
    assert [{k: v for k, v in d.items() if k != "key" or "@" in v}
            for d in everything][:len(bounded)] == bounded
