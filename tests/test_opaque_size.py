"""An opaque summary's size is the adapter's estimate (for a Codex remote compaction,
from the encrypted item's length), and the report says so (ux5 F12: "summary 5
tokens (opaque)" read as a measure)."""

from __future__ import annotations

from compaction_audit.report.model import compaction_sizes


def test_an_opaque_summary_s_size_is_called_an_estimate() -> None:
    opaque = {"tokens_before": 180_500, "tokens_after": 38_300, "summary_tokens": 5,
              "opaque": True, "compression_ratio": None, "folded_tokens": 40}
    assert compaction_sizes(opaque) == ("context 180,500 -> 38,300 tokens; summary about 5 "
                                        "tokens, an estimate (opaque), ratio unknown")
    known = {**opaque, "opaque": False, "compression_ratio": 8.0}
    assert compaction_sizes(known) == ("context 180,500 -> 38,300 tokens; summary 5 tokens "
                                       "for 40 folded (8.0x)")
