"""One compaction in words: its kind, its sizes and quotient, and its lost facts
counted (what the text, Markdown and HTML reports print on a compaction's line)."""

from __future__ import annotations

from typing import Any


def lost_suppressed(compaction: dict[str, Any]) -> int:
    """The lost facts of ``compaction`` that ``[[suppress]]`` entries took out of its
    ``lost`` list (:mod:`compaction_audit.suppress`), 0 for none: counted wherever the
    list is counted, so a suppressed fact is never a kept one (usertest14: "1
    compaction lost 0 fact(s)" of a compaction that lost 9, all suppressed)."""
    n = compaction.get("lost_suppressed")
    return n if type(n) is int and n > 0 else 0


def lost_phrase(compaction: dict[str, Any]) -> str:
    """``"214 lost"``, or ``"9 lost, 8 suppressed"`` where suppressions took facts out
    of the compaction's list (the lost count includes them)."""
    shown = len(compaction.get("lost") or [])
    hidden = lost_suppressed(compaction)
    return f"{shown + hidden} lost" + (f", {hidden} suppressed" if hidden else "")


def low_tiers_phrase(items: list[dict[str, Any]], grouped: bool = False) -> str:
    """The low tiers of ranked lost facts counted by name, ``"33 other prose, 49 tool
    output, 94 finished work"`` (tiers of :data:`~compaction_audit.recall.ranking.
    LOW_TIERS` with at least one fact; "" for none): what the text, Markdown and HTML
    reports count instead of listing; ``grouped``: thousands separated (HTML)."""
    from compaction_audit.recall.ranking import LOW_TIERS, TIER_NAMES

    tiers = [d.get("tier") for d in items]
    return ", ".join(f"{n:,} {TIER_NAMES[t]}" if grouped else f"{n} {TIER_NAMES[t]}"
                     for t in sorted(LOW_TIERS) if (n := tiers.count(t)))


def compaction_kind(c: dict[str, Any]) -> str:
    """``kind`` with what an adapter adds: the product's strategy, the messages it
    removed, and whether the compaction was inferred (issue 15), e.g.
    ``compact (basic, 22 removed)``; ``compaction`` when the log names no kind (adv60:
    the text report printed an empty kind before ", trigger")."""
    extra = [str(c["strategy"])] if c.get("strategy") else []
    if isinstance(c.get("messages_removed"), int):
        extra.append(f"{c['messages_removed']} removed")
    if c.get("inferred"):
        extra.append("inferred")
    kind = str(c.get("kind") or "compaction")
    return f"{kind} ({', '.join(extra)})" if extra else kind


def _tokens(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "unknown"


SCALE_NOTE = "estimated from the log's text, not the product's count"
"""What a compaction's quotient adds when its sizes are an adapter's estimates beside
the product's own count of the context (one can exceed the other: usertest23 #7)."""


def compaction_sizes(c: dict[str, Any]) -> str:
    """The sizes of one compaction in words, e.g. ``context 231,900 -> 14,120 tokens;
    summary 61 tokens for 98 folded (1.6x)``: the product's own measure of the prompt
    before and after (``tokens_before``, ``tokens_after``), then the summary beside what
    it folded on the audit's one scale, and their quotient ``compression_ratio``
    (docs/adapters.md, "In the report"; "(the last call's input)" after the first where
    ``tokens_before_from`` says so); "about the same size" from 0.95 to 1.05 ("1.0x
    longer" for 100 tokens over 97: adv47), and below, where the summary is the longer,
    "the summary is 3.9 times the size of what it folded" ("0.26x" read as a ratio of
    something else: usertest7).  An adapter's sizes (``sizes: "estimated"``, UTF-8 bytes
    / 4) read "summary about 3,642 tokens for about 96,757 folded", beside the
    product's measured context (usertest12), the quotient then says they are on two
    scales (:data:`SCALE_NOTE`).  A compaction that made no summary
    (``summary_id`` null: a microcompact, a forgetting condenser) reads "no summary:
    evicted, not folded"."""
    size, ratio, opaque = c.get("summary_tokens"), c.get("compression_ratio"), c.get("opaque")
    about = "about " if c.get("sizes") == "estimated" else ""  # an adapter's estimates
    last_call = (" (the last call's input)" if c.get("tokens_before_from") == "last call"
                 and c.get("tokens_before") is not None else "")  # (usertest64 N4)
    context = (f"context {_tokens(c.get('tokens_before'))}{last_call} -> "
               f"{_tokens(c.get('tokens_after'))} tokens")
    if "summary_id" in c and c["summary_id"] is None and not opaque:  # a microcompact's
        return f"{context}; no summary: evicted, not folded"  # (usertest19 #1: it read
    # "summary 0 tokens, ratio unknown")
    if size is None:  # "opaque" only for a summary the product encrypted (adv60)
        summary = ("summary not in the log" if opaque and c.get("unchecked")
                   else "summary opaque" if opaque else "summary size not recorded")
    elif opaque:  # the adapter's proxy (a Codex blob's length), not a measure: ux5 F12
        summary = (f"summary about {_tokens(size)} tokens, an estimate from the size of its "
                   "encrypted content (opaque)")  # usertest29 #3: read as made up
    else:
        summary = f"summary {about}{_tokens(size)} tokens"
    folded = c.get("folded_tokens")
    if isinstance(folded, int) and not opaque:
        summary += f" for {about}{_tokens(folded)} folded"
    quotient = ("ratio unknown" if not isinstance(ratio, (int, float)) else
                "(about the same size)" if 0.95 <= ratio < 1.05 else
                f"(the summary is {1 / ratio:,.1f} times the size of what it folded)"
                if ratio < 1 else f"({ratio:,.1f}x)")
    if (about and isinstance(folded, int) and isinstance(c.get("tokens_before"), int)
            and quotient.endswith(")")):  # usertest23 #7, usertest24 #2: "context 12,238
        # -> ...; ... for about 13,173 folded", "context 231,900 ...; for about 98
        # folded": the estimates are on another scale than the product's count
        quotient = f"{quotient[:-1]}; {SCALE_NOTE})"
    return f"{context}; {summary}{',' if quotient == 'ratio unknown' else ''} {quotient}"


def split_lost(items: list[dict[str, Any]], limit: int
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """(listed, named above, left out above) of a compaction's lost items in tier
    order: the first ``limit`` of the top tiers, less each value or identifier whose
    text a clause of the same span listed above states (ux7: "do NOT run the prod
    migration 0047 with --force" says ``prod``, ``--force`` and ``migration 0047``); the
    values left out so (each text once), and how many items that left out (those past
    ``limit`` are neither).  What the text and Markdown reports list
    (:func:`~compaction_audit.report.terminal_lost.listed`)."""
    from compaction_audit.recall.ranking import LOW_TIERS, VALUE_KINDS
    from compaction_audit.recall.wholetoken import states

    out: list[dict[str, Any]] = []
    above: list[dict[str, Any]] = []
    left = 0
    clauses: dict[tuple[Any, ...], list[str]] = {}  # span -> its listed clauses, lowercased
    for d in items:
        if d.get("tier") in LOW_TIERS:
            continue
        where = (d.get("span"), d.get("span_line"), d.get("span_file"))
        text = str(d.get("text") or "").casefold()
        if d.get("kind") in VALUE_KINDS:
            if text and any(states(clause, text) for clause in clauses.get(where, ())):
                left += 1
                if all(str(a.get("text") or "").casefold() != text for a in above):
                    above.append(d)  # each value once
                continue
        else:
            clauses.setdefault(where, []).append(text)
        if len(out) == limit:
            break
        out.append(d)
    return out, above, left


NAMED_ABOVE = 5
"""Values named on the "N more that matter, within the clauses above" line at most."""
