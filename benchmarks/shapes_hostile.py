"""Valid traces of hostile shapes, and the time and memory the audit takes on them.

Issue 11, item 5 ("No superlinear work on valid input") lists shapes that made the
audit quadratic or worse.  Each generator below writes one of them, at a size ``n``:

============  ==========================================================================
shape         what ``n`` is
============  ==========================================================================
fold-chain    native: one span, then ``n`` rounds each folding the previous summary
              into a new one (a single-child chain of depth ``n``)
cc-compacts   Claude Code: ``n`` turns, each followed by a ``/compact`` (boundary and
              summary line), so each summary folds the previous one
cc-summary-claims Claude Code: one turn, then a ``/compact`` whose summary states ``n``
              facts (a version pin and a name each) that no message said
kept-beside   native, product compactions: ``n`` spans kept throughout, then ``n``
              summaries each stating two rules no span says
codex-repeat  Codex: ``n`` copies of the same user message line (same id, same text),
              then a compaction whose replacement history holds the ``n`` of them
long-id       native: an ungrounded summary whose id is ``n`` bytes long
path-token    native: a span holding a path of ``n`` bytes, folded
summary-path  native: a span folded into a summary holding a path of ``n`` bytes
long-camel    native: a span that is one camelCase token of ``n`` characters, folded
nested-numbers native: 250 nested numbers lost, beside a span of a run of ``n`` ones
nested-objects native: 118 lost rules with nested objects, then a tool call of ``n`` dots
ungrounded    native: ``n`` summaries whose only leaf is evicted at once, then ``n``
              more rounds with them still in the working set (n x n ungrounded pairs)
growing-delta native, delta mode: ``n`` rounds each adding one span, nothing evicted
              (the working set only grows)
cc-preserved  Claude Code: ``n`` turns, each followed by a ``compact_boundary`` whose
              ``preservedSegment`` runs from the first message to the latest (the
              whole working set is kept at every compaction)
oh-range      OpenHands: ``n`` user messages, each followed by a condensation whose
              range ``start .. end`` forgets only that message
oh-below      OpenHands: ``n`` observations with large ids (they stay live), then ``n``
              times an observation with a small id and a condensation whose range
              forgets only that id (each id lands below every live one)
codex-compacts Codex: ``n`` user turns, each followed by a ``compacted`` line without
              ``replacement_history`` (Codex then keeps the recent user turns)
text-chain    native: ``n`` rounds, each adding 100 spans of text (a path, a version
              pin, a port, a rule) and a summary with text over them and the previous
              summary (a single chain of depth ``n``: about 25 KB per round)
version-chain native: a span of ``n`` versions joined by ``+`` and ending in ``_``
              (``1.2.3+1.2.3+...``), folded: the version suffix was tried to the end of
              the chain from each version (16,000: 68 s; adv89 #2)
pin-mentions  native: ``n`` names pinned to one version and folded away, then ``n``
              rounds each adding a span that states the version alone (K x M holder
              rows; 4,000: 44 s, 5.4 GB; adv88 #1)
question-names native: one person's span asking "Which of mod_0 ... mod_n did we pin?"
              above ``4n`` words of prose, folded (one search of the text per name:
              32,000 took 37 s; adv88 #3)
sequential-ids native: one person's span of ``n`` sequential ids (``k_0 ... k_n``),
              folded (230,000: 130 s; adv116 P1)
rule-lists    native: one person's span of ``n`` rules of five flags each, folded,
              then one tool call using every flag (16,000: 4 minutes; adv116 P2)
wrapped-negation native: one person's rule soft-wrapped over ``n`` lines of "we must
              not", then "use --force", folded (20,000: 112-190 s; adv128 #1)
open-heredocs native: a folded rule "Never use --force", then one Bash call of ``n``
              unclosed ``cat <<EOF`` lines and a ``git push --force`` (24,000:
              88-128 s; adv128 #2)
============  ==========================================================================

Usage (from the repository root, with the project installed)::

    python benchmarks/shapes_hostile.py write fold-chain 3000 /tmp/chain.jsonl
    python benchmarks/shapes_hostile.py bench --sizes fold-chain=1000,2000,4000

``bench`` writes each trace to a temporary directory and runs
``python -m compaction_audit audit FILE -f json -o OUT`` (``--format`` to change the
format) in a subprocess, and prints
one line per run: shape, n, file size, wall seconds, peak RSS (``os.wait4``), exit
code and the JSON report's size.  ``--timeout`` (default 120 s) stops a run that
takes too long (it is reported as ``timeout``).  The figures are in
``docs/performance.md`` ("Hostile shapes").
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson


def _native(records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield {"type": "session", "schema": "compaction-audit/1", "eviction": "on-overflow"}
    yield from records


def fold_chain(n: int) -> Iterator[dict[str, Any]]:
    """One span, then ``n`` single-child folds, each of the previous summary."""
    def rounds() -> Iterator[dict[str, Any]]:
        yield {"type": "round", "round": 0, "spans": [{"id": "s0", "tokens": 10}]}
        prev = "s0"
        for i in range(1, n + 1):
            fold = f"f{i}"
            yield {"type": "round", "round": i,
                   "summaries": [{"id": fold, "tokens": 10, "children": [prev]}],
                   "evicted": [prev]}
            prev = fold
    return _native(rounds())


def cc_compacts(n: int) -> Iterator[dict[str, Any]]:
    """A Claude Code transcript of ``n`` turns, each followed by a ``/compact``."""
    sid = "5e55a0de-0000-4000-8000-00000000cc01"
    prev = None
    for i in range(n):
        user, reply, bound, summ = (f"u{i}", f"a{i}", f"b{i}", f"s{i}")
        yield {"type": "user", "uuid": user, "parentUuid": prev, "sessionId": sid,
               "message": {"role": "user", "content": f"Step {i}: set retries to {i}."}}
        yield {"type": "assistant", "uuid": reply, "parentUuid": user, "sessionId": sid,
               "message": {"id": f"msg{i}", "role": "assistant", "content": [
                   {"type": "text", "text": f"Retries set to {i}."}],
                   "usage": {"input_tokens": 100, "output_tokens": 5}}}
        yield {"type": "system", "subtype": "compact_boundary", "uuid": bound,
               "logicalParentUuid": reply, "sessionId": sid,
               "compactMetadata": {"trigger": "manual", "preTokens": 1000}}
        yield {"type": "user", "uuid": summ, "parentUuid": bound, "sessionId": sid,
               "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
               "message": {"role": "user", "content": f"Summary: retries now {i}."}}
        prev = summ


def cc_summary_claims(n: int) -> Iterator[dict[str, Any]]:
    """A Claude Code transcript of one turn, then a ``/compact`` whose summary states
    ``n`` facts no message said ("item 7 pinned to v3.7.0 as build_7"): each a claim
    (the ids are uuids, as Claude Code's: longer than the 12 bytes Polars keeps inline)."""
    sid = "5e55a0de-0000-4000-8000-00000000cc02"
    u0, a0, b0, s0 = (f"5e55a0de-0000-4000-8000-0000000000{k}" for k in ("u0", "a0", "b0", "s0"))
    yield {"type": "user", "uuid": u0, "parentUuid": None, "sessionId": sid,
           "message": {"role": "user", "content": "Pin the build tools."}}
    yield {"type": "assistant", "uuid": a0, "parentUuid": u0, "sessionId": sid,
           "message": {"id": "msg0", "role": "assistant", "content": [
               {"type": "text", "text": "Pinned."}],
               "usage": {"input_tokens": 100, "output_tokens": 5}}}
    yield {"type": "system", "subtype": "compact_boundary", "uuid": b0,
           "logicalParentUuid": a0, "sessionId": sid,
           "compactMetadata": {"trigger": "manual", "preTokens": 1000}}
    facts = " ".join(f"Item {i} pinned to v3.{i % 100}.{i % 7} as build_{i}." for i in range(n))
    yield {"type": "user", "uuid": s0, "parentUuid": b0, "sessionId": sid,
           "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
           "message": {"role": "user", "content": f"Summary: {facts}"}}


def kept_beside(n: int) -> Iterator[dict[str, Any]]:
    """Native, each round a product's compaction (a ``compaction`` record): ``n`` spans
    kept from round 0 on, then ``n`` rounds each folding one new span into a summary
    whose two rules no span says (n x n (summary, kept span) pairs)."""
    def rounds() -> Iterator[dict[str, Any]]:
        yield {"type": "round", "round": 0, "spans": [
            {"id": f"k{j}", "tokens": 5, "text": f"Note {j} on widget{j}.", "source": "user"}
            for j in range(n)]}
        for i in range(1, n + 1):
            rules = " ".join(f"Never restart worker{i}x{c} before {c}:30." for c in range(2))
            yield {"type": "round", "round": i,
                   "spans": [{"id": f"n{i}", "tokens": 3, "text": f"step {i} done"}],
                   "summaries": [{"id": f"s{i}", "tokens": 4, "children": [f"n{i}"],
                                  "text": rules}],
                   "offloaded": [f"n{i}"], "compaction": {"kind": "auto"}}
    return _native(rounds())


def codex_repeat(n: int) -> Iterator[dict[str, Any]]:
    """A Codex rollout of ``n`` copies of one user message line, then a compaction
    whose replacement history carries them all over (as Codex keeps user messages)."""
    yield {"timestamp": "t", "type": "session_meta", "payload": {"id": "codex-rep"}}
    message = {"type": "message", "role": "user", "id": "msg_same",
               "content": [{"type": "input_text", "text": "Keep the pool at 8 workers."}]}
    for _ in range(n):
        yield {"timestamp": "t", "type": "response_item", "payload": message}
    yield {"timestamp": "t", "type": "compacted", "payload": {
        "message": "Summary: the pool stays at 8 workers.",
        "replacement_history": [message] * n}}


def long_id(n: int) -> Iterator[dict[str, Any]]:
    """A summary whose id is ``n`` bytes; it evicts its only leaf, so it is ungrounded
    and every report names it."""
    big = "x" * n
    return _native(iter([
        {"type": "round", "round": 0, "spans": [{"id": "s0", "tokens": 10}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": big, "tokens": 5, "children": ["s0"]}], "evicted": ["s0"]},
        {"type": "round", "round": 2},
    ]))


def long_word(n: int) -> Iterator[dict[str, Any]]:
    """A span holding a quantity and one word of ``n`` letters, folded into a summary
    that is that word alone: the text patterns must not rescan it from each position."""
    word = "A" * n
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "s", "tokens": 1, "text": f"45000 {word}"}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "m", "tokens": 1, "children": ["s"], "text": word}], "evicted": ["s"]},
    ]))


def path_token(n: int) -> Iterator[dict[str, Any]]:
    """A span holding one path of ``n`` bytes (``/ab/ab/...``) and a span with a port,
    folded into a short summary: the path group, repeated per segment, kept a
    regular-expression state per segment, 390 bytes of memory per byte (an 8 KB
    ``.gz`` took 3.3 GB; adv22b F9)."""
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "a", "tokens": 100, "text": "see " + "/ab" * (n // 3)},
            {"id": "b", "tokens": 10, "text": "Set port 9090 in /etc/x.conf."}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "f", "tokens": 10, "children": ["a", "b"], "text": "Work went on."}],
         "evicted": ["a", "b"]},
    ]))


def summary_path(n: int) -> Iterator[dict[str, Any]]:
    """A span with a port and a file, folded into a summary that holds one path of
    ``n`` bytes (``/a/a/...``): the summary's index kept the part after each "/" of
    it as a string of its own, quadratic in the path (160 KB: 6.4 GB, 12 s; adv82)."""
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "a", "tokens": 10, "text": "Set port 9090 in /etc/x.conf."}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "f", "tokens": 10, "children": ["a"], "text": "see /" + "a/" * (n // 2)}],
         "evicted": ["a"]},
    ]))


def long_camel(n: int) -> Iterator[dict[str, Any]]:
    """A span that is one camelCase token of ``n`` characters (``CamelCaseCamel...``),
    folded: the lost token was looked for in the spans as one needle, and Polars'
    Aho-Corasick automaton for one long periodic needle takes time that grows with its
    square (30,000 characters: 2 s per search; adv82)."""
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "a", "tokens": 10, "text": ("CamelCase" * (n // 9 + 1))[:n]}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "f", "tokens": 10, "children": ["a"], "text": "ok, done."}],
         "evicted": ["a"]},
    ]))


def nested_numbers(n: int) -> Iterator[dict[str, Any]]:
    """250 spans stating nested numbers (``1111``, ``11111``, ... 253 digits), all
    folded and lost, beside a span holding a run of ``n`` ones: the search for the
    lost facts in the other spans listed every number at every position of the run
    (250 x ``n`` hits, 7.6 GB at ``n`` = 200,000; adv83)."""
    facts = [{"id": f"f{k}", "tokens": 5, "text": f"Set limit to {'1' * (4 + k)} now.",
              "source": "user"} for k in range(250)]
    return _native(iter([
        {"type": "round", "round": 0, "spans": [*facts, {
            "id": "big", "tokens": 10, "text": "Note " + "1" * n + " end.", "source": "user"}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "m", "tokens": 10, "children": [f["id"] for f in facts],
             "text": "ok, done."}], "evicted": [f["id"] for f in facts]},
    ]))


def nested_objects(n: int) -> Iterator[dict[str, Any]]:
    """118 lost rules whose objects are nested runs of dots (``Do not run `..` ...``),
    then a tool call of ``n`` dots: the search for the rules' objects in the calls
    listed every object at every position (3.8 GB at ``n`` = 160,000; adv83)."""
    words = [a + b for a in "abcdefghijklmnopqrstuvwxyz" for b in "xyz"]  # distinct words
    facts = [{"id": f"f{k}", "tokens": 5, "source": "user",
              "text": f"Do not run `{'.' * (k + 2)}` word{words[k % 78]}{k} here."}
             for k in range(118)]
    return _native(iter([
        {"type": "round", "round": 0, "spans": facts},
        {"type": "round", "round": 1, "summaries": [
            {"id": "m", "tokens": 10, "children": [f["id"] for f in facts],
             "text": "ok, done."}], "evicted": [f["id"] for f in facts],
         "spans": [{"id": "call", "tokens": 10, "text": "." * n, "source": "tool_call:Bash"}]},
    ]))


def number_summary(n: int) -> Iterator[dict[str, Any]]:
    """A span with a quantity folded into a summary that is one sentence of ``n``
    numbers: each number is a claim, all in one sentence."""
    sentence = " ".join(str(i) for i in range(n))
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "s", "tokens": 1, "text": "timeout 45000 ms"}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "m", "tokens": 1, "children": ["s"], "text": sentence}], "evicted": ["s"]},
    ]))


def ungrounded(n: int) -> Iterator[dict[str, Any]]:
    """``n`` summaries made ungrounded at once, then ``n`` quiet rounds."""
    def rounds() -> Iterator[dict[str, Any]]:
        yield {"type": "round", "round": 0,
               "spans": [{"id": f"s{i}", "tokens": 1} for i in range(n)]}
        yield {"type": "round", "round": 1,
               "summaries": [{"id": f"f{i}", "tokens": 1, "children": [f"s{i}"]}
                             for i in range(n)],
               "evicted": [f"s{i}" for i in range(n)]}
        for r in range(2, n + 2):
            yield {"type": "round", "round": r}
    return _native(rounds())


def growing_delta(n: int) -> Iterator[dict[str, Any]]:
    """Delta mode, ``n`` rounds each adding one span with a short text; nothing leaves."""
    return _native({"type": "round", "round": i, "spans": [
        {"id": f"s{i}", "tokens": 5, "text": f"step {i}: port {1000 + i}"}]}
        for i in range(n))


def cc_preserved(n: int) -> Iterator[dict[str, Any]]:
    """A Claude Code transcript of ``n`` turns, each followed by a ``compact_boundary``
    that preserves everything from the first message to the latest."""
    sid = "5e55a0de-0000-4000-8000-00000000cc02"
    for i in range(n):
        yield {"type": "user", "uuid": f"u{i}", "parentUuid": None, "sessionId": sid,
               "message": {"role": "user", "content": f"Step {i}: set port {1000 + i}."}}
        yield {"type": "system", "subtype": "compact_boundary", "uuid": f"b{i}",
               "sessionId": sid, "content": "Conversation compacted",
               "compactMetadata": {"trigger": "auto", "preTokens": 1000,
                                   "preservedSegment": {"headUuid": "u0",
                                                        "tailUuid": f"u{i}"}}}


def oh_range(n: int) -> Iterator[dict[str, Any]]:
    """OpenHands events: ``n`` user messages, each forgotten by the condensation after it,
    given as the range ``forgotten_events_start_id .. forgotten_events_end_id``."""
    for i in range(n):
        yield {"id": 2 * i, "source": "user", "action": "message",
               "args": {"content": f"Step {i}: keep port {1000 + i}."}}
        yield {"id": 2 * i + 1, "source": "agent", "action": "condensation",
               "args": {"forgotten_events_start_id": 2 * i,
                        "forgotten_events_end_id": 2 * i, "summary": f"Summary {i}."}}


def oh_below(n: int) -> Iterator[dict[str, Any]]:
    """OpenHands events: ``n`` observations with ids from 10^7 that stay live, then ``n``
    times an observation with the small id ``i`` and a range condensation of ``i .. i``
    (issue 11, adv14 F3)."""
    yield {"id": 0, "source": "user", "action": "message", "args": {"content": "Start."}}
    for i in range(n):
        yield {"id": 10**7 + i, "source": "environment", "observation": "run",
               "content": f"out {i}", "cause": 0}
    for i in range(1, n + 1):
        yield {"id": i, "source": "environment", "observation": "run",
               "content": f"small {i}", "cause": 0}
        yield {"id": 2 * 10**7 + i, "source": "agent", "action": "condensation",
               "args": {"forgotten_events_start_id": i, "forgotten_events_end_id": i}}


def codex_compacts(n: int) -> Iterator[dict[str, Any]]:
    """A Codex rollout of ``n`` user turns, each followed by a message-only compaction."""
    yield {"timestamp": "t", "type": "session_meta", "payload": {"id": "codex-cmp"}}
    for i in range(n):
        yield {"timestamp": "t", "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": f"Step {i}: keep port {1000 + i}."}]}}
        yield {"timestamp": "t", "type": "compacted", "payload": {"message": f"Summary {i}."}}


TEXT_CHAIN_SPANS = 100
"""New spans per round of ``text-chain``."""


def fact_text(i: int, j: int) -> str:
    """The text of span ``j`` of round ``i`` of ``text-chain``: a path, a version pin, a
    port, a rule with its cause and a test name (8 discriminators)."""
    return (f"Edited src/pkg{i}/mod{j}.py to pin requests=={i}.{j}.1 and serve on "
            f"port {10000 + 100 * i + j}. Never deploy table_{i}_{j} without a backup "
            f"because the nightly job reads it; checked with pytest -k test_{i}_{j}.")


def text_chain(n: int) -> Iterator[dict[str, Any]]:
    """``n`` rounds, each of :data:`TEXT_CHAIN_SPANS` new spans with discriminators and
    a summary over them and the previous summary; the summary restates the first
    span's facts and one of the previous round's (issue 11, class 5, adv10 F6)."""
    def rounds() -> Iterator[dict[str, Any]]:
        prev: str | None = None
        for i in range(n):
            spans = [{"id": f"r{i}s{j}", "tokens": 40, "text": fact_text(i, j)}
                     for j in range(TEXT_CHAIN_SPANS)]
            before = f" Before: {fact_text(i - 1, 1)}" if i else ""
            text = f"Round {i}: {fact_text(i, 0)}{before}"
            children = [*(s["id"] for s in spans), *([prev] if prev else [])]
            fold = f"f{i}"
            yield {"type": "round", "round": i, "spans": spans,
                   "summaries": [{"id": fold, "tokens": 60, "text": text,
                                  "children": children}],
                   "evicted": children}
            prev = fold
    return _native(rounds())


def _folded(text: str, summary: str = "Pinned.",
            after: tuple[dict[str, Any], ...] = ()) -> Iterator[dict[str, Any]]:
    """One span of ``text`` (a person's) folded into a short ``summary`` and evicted,
    then the rounds ``after``."""
    return _native(iter([
        {"type": "round", "round": 0, "spans": [
            {"id": "a", "tokens": 10, "text": text, "role": "user"}]},
        {"type": "round", "round": 1, "summaries": [
            {"id": "f", "tokens": 10, "children": ["a"], "text": summary}],
         "evicted": ["a"]},
        *after,
    ]))


def version_chain(n: int) -> Iterator[dict[str, Any]]:
    """A span of ``n`` versions joined by ``+`` and ending in ``_``, folded (adv89 #2)."""
    return _folded("1.2.3" + "+1.2.3" * n + "_")


def pin_mentions(n: int) -> Iterator[dict[str, Any]]:
    """``n`` names pinned to 1.2.0 and folded away, then ``n`` rounds each stating 1.2.0
    alone (adv88 #1)."""
    pins = [{"id": f"b{i}", "tokens": 1, "text": f"Pin n{i}==1.2.0", "role": "user"}
            for i in range(n)]
    return _native(iter([
        {"type": "round", "round": 0, "spans": pins},
        {"type": "round", "round": 1, "summaries": [
            {"id": "f", "tokens": 5, "children": [p["id"] for p in pins],
             "text": "Pinned some libraries."}], "evicted": [p["id"] for p in pins]},
        *({"type": "round", "round": 2 + j, "spans": [
            {"id": f"u{j}", "tokens": 1, "text": "we use 1.2.0 now", "role": "user"}]}
          for j in range(n)),
    ]))


def question_names(n: int) -> Iterator[dict[str, Any]]:
    """A person's question naming ``n`` identifiers above ``4n`` words, folded (adv88
    #3)."""
    names = " ".join(f"mod_{i}" for i in range(n))
    return _folded(f"Which of {names} did we pin? " + "lorem ipsum dolor " * (4 * n // 3))


def fact_dense(n: int) -> Iterator[dict[str, Any]]:
    """One person's span of ``n`` keyed values, each beside a path ("k7=v7.7.7
    /p7/f7.py": three discriminators in 25 bytes), folded into a short summary (adv94
    #3)."""
    return _folded(" ".join(f"k{i}=v{i}.{i}.{i} /p{i}/f{i}.py" for i in range(n)))


def sequential_ids(n: int) -> Iterator[dict[str, Any]]:
    """One person's span of ``n`` sequential ids (``k_0 k_1 ... k_n``: each a prefix of
    ten others), folded (adv116 P1: the automaton of their restatement search, built
    once from all of them, took 130 s at 230,000)."""
    return _folded("Keys: " + " ".join(f"k_{i}" for i in range(n)))


def rule_lists(n: int) -> Iterator[dict[str, Any]]:
    """One person's span of ``n`` rules of five objects each (``Do not use --a7 or --b7
    or ...``), folded, then one tool call using every object (adv116 P2: 16,000 rules,
    80,000 broken, took 4 minutes: the call read once per object, a query per
    finding)."""
    flags = [f"--{c}{i}" for i in range(n) for c in "abcde"]
    rules = " ".join(f"Do not use --a{i} or --b{i} or --c{i} or --d{i} or --e{i}."
                     for i in range(n))
    return _folded(rules, "Rules noted.", ({"type": "round", "round": 2, "spans": [
        {"id": "c", "tokens": 10, "text": "x " + " ".join(flags),
         "source": "tool_call:Bash"}]},))


def wrapped_negation(n: int) -> Iterator[dict[str, Any]]:
    """One person's rule soft-wrapped over ``n`` lines ending in a negation, folded
    (adv128 #1: the double-negation search read from each "not" to the rule's end)."""
    return _folded("we must not\n" * n + "use --force", "Rules noted.", ({
        "type": "round", "round": 2, "spans": [
            {"id": "c", "tokens": 10, "text": "git push --force origin main",
             "source": "tool_call:Bash"}]},))


def open_heredocs(n: int) -> Iterator[dict[str, Any]]:
    """A folded rule, then one Bash call of ``n`` here-documents none of which is
    closed (adv128 #2: each opener's body was searched to the end of the call)."""
    return _folded("Never use --force.", "Rules noted.", ({
        "type": "round", "round": 2, "spans": [
            {"id": "c", "tokens": 10, "text": "cat <<EOF\n" * n + "git push --force origin main",
             "source": "tool_call:Bash"}]},))


SHAPES: dict[str, Callable[[int], Iterator[dict[str, Any]]]] = {
    "fold-chain": fold_chain, "cc-compacts": cc_compacts,
    "cc-summary-claims": cc_summary_claims, "codex-repeat": codex_repeat,
    "long-id": long_id, "long-word": long_word, "path-token": path_token,
    "summary-path": summary_path, "long-camel": long_camel, "kept-beside": kept_beside,
    "nested-numbers": nested_numbers, "nested-objects": nested_objects,
    "number-summary": number_summary, "ungrounded": ungrounded,
    "growing-delta": growing_delta, "cc-preserved": cc_preserved, "oh-range": oh_range,
    "oh-below": oh_below, "codex-compacts": codex_compacts, "text-chain": text_chain,
    "version-chain": version_chain, "pin-mentions": pin_mentions,
    "question-names": question_names, "fact-dense": fact_dense,
    "sequential-ids": sequential_ids, "rule-lists": rule_lists,
    "wrapped-negation": wrapped_negation, "open-heredocs": open_heredocs,
}


def write(shape: str, n: int, path: str | Path) -> int:
    """Write the trace of ``shape`` at size ``n`` to ``path``; returns its size in bytes."""
    with open(path, "wb") as handle:
        for record in SHAPES[shape](n):
            handle.write(orjson.dumps(record) + b"\n")
    return os.path.getsize(path)


def bench_one(shape: str, n: int, workdir: Path, timeout: float,
              fmt: str = "json") -> dict[str, Any]:
    """Audit one generated trace in a subprocess: seconds, peak RSS, exit code, report."""
    trace = workdir / f"{shape}-{n}.jsonl"
    size = write(shape, n, trace)
    report = workdir / f"{shape}-{n}.{fmt}"
    cmd = [sys.executable, "-m", "compaction_audit", "audit", str(trace), "-f", fmt,
           "-o", str(report), "--isolated"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = t0 + timeout
    status: int | str = "timeout"
    rss_kb = 0
    while True:
        pid, raw, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status = os.waitstatus_to_exitcode(raw)
            rss_kb = usage.ru_maxrss
            break
        if time.perf_counter() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, raw, usage = os.wait4(proc.pid, 0)
            rss_kb = usage.ru_maxrss
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    out = {"shape": shape, "n": n, "format": fmt, "bytes": size, "seconds": round(seconds, 2),
           "peak_mb": round(rss_kb / 1024), "exit": status,
           "report_bytes": report.stat().st_size if report.exists() else None,
           "stderr": err.splitlines()[-1][:200] if err else ""}
    for path in (trace, report):
        path.unlink(missing_ok=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write one trace")
    w.add_argument("shape", choices=sorted(SHAPES))
    w.add_argument("n", type=int)
    w.add_argument("path")
    b = sub.add_parser("bench", help="audit traces of several shapes and sizes")
    b.add_argument("--sizes", required=True,
                   help="SHAPE=N,N,... separated by ';', e.g. 'fold-chain=1000,2000'")
    b.add_argument("--timeout", type=float, default=120.0)
    b.add_argument("--format", default="json", help="report format (default: json)")
    args = parser.parse_args(argv)
    if args.command == "write":
        print(write(args.shape, args.n, args.path))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.sizes.split(";"):
            shape, _, sizes = part.partition("=")
            for n in (int(s) for s in sizes.split(",")):
                result = bench_one(shape.strip(), n, Path(tmp), args.timeout, args.format)
                print(orjson.dumps(result).decode(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
