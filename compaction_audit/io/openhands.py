"""OpenHands event streams -> ``compaction-audit/1`` records.

Reads a trajectory (a JSON list of events, as OpenHands saves or exports it) or events
one per line.  An event is an action ``{id, source, action, args, ...}`` or an
observation ``{id, source, observation, content, extras, cause}``; the events of the
OpenHands SDK (V1, ``{kind, id, source, ...}``, one JSON file each: join them one per
line) are first put in that shape (:func:`from_sdk`).

A condensation is an action ``{"action": "condensation", "args": {forgotten_event_ids
| forgotten_events_start_id .. forgotten_events_end_id, summary, summary_offset}}``.
It names exactly the events it forgot, so the adapter folds exactly those (the
provenance is the product's own, not reconstructed): with a ``summary`` (a string,
even empty, or a ``summary_offset``) they become the summary's children; without
either they are only evicted (``kind: "forget"``).
A ``condensation_request`` before it makes the trigger ``requested`` (an SDK request
with ``reason`` ``manual``: ``manual``; ``context_limit``: ``auto``), else ``auto``.
A condensation that names no forgotten event, none that is in the log before it, or
only events with no span in the context, is a compaction that could not be checked
(:meth:`_Converter.unresolved`).

Spans: a user ``message`` opens a round (source ``user``); agent messages, ``think``
and ``finish`` are ``assistant``; the ``system`` prompt and ``recall`` observations are
``harness:meta``; any other action is ``tool_call:<action>`` (its ``args`` values but
flags; its ``thought`` is an ``assistant`` span) and any other observation
``tool_result:<observation>``.  State changes and ``null`` events are bookkeeping.
Tokens are estimated; ``llm_metrics.accumulated_token_usage`` gives the budget
(``context_window``) and the last call's size (``per_turn_token``) for ``tokens_before``.

Not read, and counted (``lines_not_read``, a reader note: adv29 F4, the condensation
actions renamed ``Condensation`` became tool calls and a failing trajectory passed):
an SDK event of a ``kind`` not in :data:`SDK_KINDS`; an action or observation whose
name is not one the reader knows but equals one once letter case and punctuation are
set aside (:func:`_folded`); and an action the reader does not know whose ``args``
carry a condensation's fields (:data:`CONDENSATION_ARGS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from compaction_audit.errors import LogError
from compaction_audit.io.documents import (
    Conversion,
    Elements,
    as_object,
    chain_head,
    read_document,
    text_of,
)
from compaction_audit.io.event_ranges import EventRanges
from compaction_audit.io.harness import META
from compaction_audit.io.lines import iter_lines
from compaction_audit.io.tokens import (
    check_counts,
    decode_object,
    estimate_tokens,
    tool_input_text,
    unknown_type_note,
)

SOURCE_FORMAT = "openhands"

BOOKKEEPING = frozenset({"change_agent_state", "agent_state_changed", "null",
                         "condensation_request", "user_rejected", "message_metadata"})
ASSISTANT_ACTIONS = {"message": "content", "think": "thought", "finish": "final_thought"}
HARNESS = frozenset({"system", "recall"})
REQUEST_REASONS = {"manual": "manual", "context_limit": "auto"}
"""An SDK ``CondensationRequest.reason`` -> the trigger."""

CONDENSATION = "condensation"
KNOWN_NAMES = frozenset({*BOOKKEEPING, *ASSISTANT_ACTIONS, *HARNESS, CONDENSATION})
"""The action and observation names the reader treats by name; any other is a tool."""
CONDENSATION_ARGS = frozenset({"forgotten_event_ids", "forgotten_events_start_id",
                               "forgotten_events_end_id", "summary_offset"})
"""``args`` fields only a condensation carries (OpenHands' ``CondensationAction``)."""
CONDENSATION_KEYS = frozenset({*CONDENSATION_ARGS, "summary"})
"""Every ``args`` field of OpenHands' ``CondensationAction``; another is noted."""


SOURCES = frozenset({"user", "agent", "environment"})
"""The sources of OpenHands events (V0 and the SDK's): a person, the model, the tools
and the runtime."""
SDK_KINDS = frozenset({"MessageEvent", "ActionEvent", "ObservationEvent", "SystemPromptEvent",
                       "UserRejectObservation", "AgentErrorEvent", "Condensation",
                       "CondensationRequest", "CondensationSummaryEvent",
                       "ConversationStateUpdateEvent", "PauseEvent", "TokenEvent",
                       "LLMCompletionLogEvent", "ConversationErrorEvent"})
"""``kind`` values of the OpenHands SDK (V1) events this adapter was written against."""


def _folded(name: str) -> str:
    """``name`` without letter case and punctuation: ``"Condensation"``,
    ``"CONDENSATION"`` and ``"condensation-request"`` fold to the same as the names
    OpenHands writes (``"condensation"``, ``"condensation_request"``)."""
    return re.sub(r"[\W_]+", "", name.casefold())


_FOLDED_KNOWN = frozenset(_folded(name) for name in KNOWN_NAMES)
_FOLDED_CONDENSATIONS = frozenset(_folded(name) for name in (CONDENSATION, "condensation_request"))
"""The names an observation may not have: OpenHands writes these as actions (adv73)."""


def _is_event(obj: Any) -> bool:
    """A V0 action or observation, or a V1 (SDK) event with a ``kind``."""
    return isinstance(obj, dict) and "id" in obj and (
        (("action" in obj or "observation" in obj) and "kind" not in obj)
        or (isinstance(obj.get("kind"), str) and "source" in obj))


def _missing(obj: Any, where: str) -> str:
    """The field that keeps ``obj`` from being an event (:func:`_is_event`), under
    ``where``: the object itself, ``id``, ``kind`` (not a string), ``source`` (an SDK
    event without one) or ``action`` (adv46: a ``kind`` of 5 was reported as ``id``)."""
    at = f"{where}.".lstrip(".")
    if not isinstance(obj, dict):
        return where
    if "id" not in obj:
        return f"{at}id"
    if "kind" in obj:
        return f"{at}kind" if not isinstance(obj["kind"], str) else f"{at}source"
    return f"{at}action"


def from_sdk(event: dict[str, Any]) -> dict[str, Any]:
    """A V1 (software-agent-sdk) event in the V0 shape the converter reads.

    ``MessageEvent`` -> ``message``; ``SystemPromptEvent`` -> ``system``;
    ``ActionEvent`` -> an action named by ``tool_name`` (``action`` fields as ``args``,
    ``thought`` text as the thought); ``ObservationEvent``, ``UserRejectObservation``,
    ``AgentErrorEvent`` -> an observation named by ``tool_name``; ``Condensation`` ->
    ``condensation`` (``forgotten_event_ids``, ``summary``); ``CondensationRequest`` ->
    ``condensation_request``; a summary event already in the log -> ``recall``-like
    harness text; anything else -> bookkeeping.
    """
    kind = event["kind"]
    base = {"id": event["id"], "source": event.get("source")}
    if kind == "MessageEvent":
        msg = as_object(event.get("llm_message"))
        return {**base, "action": "message", "args": {"content": text_of(msg.get("content"))}}
    if kind == "SystemPromptEvent":
        return {**base, "action": "system", "args": {"content": text_of(
            as_object(event.get("system_prompt")).get("text"))}}
    if kind == "ActionEvent":
        args = {k: v for k, v in as_object(event.get("action")).items() if k != "kind"}
        return {**base, "action": str(event.get("tool_name") or "tool"),
                "args": {**args, "thought": text_of(event.get("thought"))}}
    if kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
        obs = as_object(event.get("observation"))
        body = obs.get("content", obs.get("output")) if obs else \
            event.get("error", event.get("rejection_reason"))
        return {**base, "observation": str(event.get("tool_name") or "tool"),
                "content": text_of(body)}
    if kind == "Condensation":
        return {**base, "action": "condensation", "args": {
            "forgotten_event_ids": event.get("forgotten_event_ids") or [],
            "summary": event.get("summary")}}
    if kind == "CondensationRequest":
        return {**base, "action": "condensation_request",
                "args": {"reason": event.get("reason")}}
    if kind == "CondensationSummaryEvent":
        return {**base, "observation": "recall", "content": text_of(event.get("summary"))}
    return {**base, "action": "null"}


def _known_event(obj: Any) -> bool:
    return _is_event(obj) and "source" in obj and obj.get("kind", "MessageEvent") in SDK_KINDS


def sniff(first_objects: list[dict[str, Any]]) -> bool:
    """True when these first decoded lines are OpenHands events."""
    return any(_known_event(obj) for obj in first_objects)


def sniff_document(value: Any) -> bool:
    """True for a trajectory: a list whose first object is an event."""
    first = next((e for e in value if isinstance(e, dict)), None) \
        if isinstance(value, list) else None
    return first is not None and _known_event(first)


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None,
            skipped: list[LogError] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The events as ``(source_line, record)`` pairs, session record first.

    ``skipped`` None: a malformed event raises :class:`LogError` (``FILE:LINE``); a
    list: lenient, each malformed event is skipped and its error appended.
    """
    source = iter_lines(path) if lines is None else lines
    head = next(iter(source), None)
    conv = _Converter(path)
    el = Elements(path, skipped)
    if head is not None and head[1].lstrip()[:1] == b"[":
        doc = read_document(path, chain_head(head, source))
        if not isinstance(doc.value, list):
            raise LogError(path, 1, "expected a list of events")
        for i, event in enumerate(doc.value):
            el.run(doc.line_of(None, i), conv.event, doc.line_of(None, i), event, f"[{i}]")
    elif head is not None:
        from compaction_audit.io.detect import line_checker  # detect imports this module

        check = line_checker(path, SOURCE_FORMAT)
        mixed: list[LogError] = []  # raised even in lenient mode: two formats

        def event(n: int, r: bytes) -> None:
            obj = decode_object(path, n, r)
            mixed.extend(filter(None, [check(n, obj)]))
            if not mixed:
                conv.event(n, obj, "")

        for number, raw in chain_head(head, source):
            el.run(number, event, number, raw)
            if mixed:
                raise mixed[0]
    yield from conv.output(SOURCE_FORMAT, head[0] if head else 1)


class _Converter(Conversion):
    """The state machine behind :func:`records`."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.spans: dict[str, list[str]] = {}  # event id -> its spans not yet forgotten
        self.ranges = EventRanges()  # the numeric event ids a range may still name
        self.requested: str | None = None  # the trigger a condensation request named
        self.seen: dict[str, str] = {}  # the id of every event read so far -> where

    def event(self, line: int, event: Any, where: str) -> None:
        """Apply one event."""
        if not _is_event(event):
            raise LogError(self.path, line, "expected an event object with 'id' and "
                           "'action' or 'observation'", _missing(event, where))
        sdk = "kind" in event
        if sdk:
            if event["kind"] not in SDK_KINDS:  # counted, not only noted (adv29 F4)
                self.unread(unknown_type_note(event["kind"], "an SDK event kind"), "event")
                return
            if event["kind"] == "ObservationEvent" and type(event.get("observation")) \
                    is not dict:  # adv48: a null read as an empty result, PASS to FAIL
                raise LogError(self.path, line, "expected an object",
                               f"{where}.observation".lstrip("."))
            event = from_sdk(event)
        else:
            for name in ("action", "observation"):  # adv46: an object was hashed
                if event.get(name) is not None and not isinstance(event[name], str):
                    raise LogError(self.path, line, "expected a string",
                                   f"{where}.{name}".lstrip("."))
            if event.get("action") is None and event.get("observation") is None:
                # adv48: a null action made a person's message no one's
                raise LogError(self.path, line, "expected a string",
                               f"{where}.action".lstrip("."))
        self.check_identity(line, event, where, sdk)
        self.metrics(line, event.get("llm_metrics"), where)
        eid = str(event["id"])
        if eid in self.seen:  # adv73: a condensation's range then left out the event
            raise LogError(self.path, line, f"event id {eid[:40]!r} repeated (first at "
                           f"{self.seen[eid]}): event ids are unique",
                           f"{where}.id".lstrip("."))
        self.seen[eid] = f"line {line}" + (f", {where.lstrip('.')}" if where else "")
        action, observation = event.get("action"), event.get("observation")
        kind = str(action if action is not None else observation)
        why = self.unknown(kind, action is not None, event.get("args"), event.get("extras"))
        if why is not None:
            self.unread(why, "event")
            return
        if kind in BOOKKEEPING:
            if kind == "condensation_request":
                reason = as_object(event.get("args")).get("reason")
                self.requested = REQUEST_REASONS.get(str(reason), "requested")
            return
        if action == CONDENSATION:
            self.condensation(line, event, where)
            return
        args = event.get("args")
        if action is not None and args is not None and type(args) is not dict:
            raise LogError(self.path, line, "expected an object", f"{where}.args".lstrip("."))
        args = args or {}
        user = event.get("source") == "user"
        if action == "message" and user:
            self.asm.turn(line)
            self.add(line, eid, "user", text_of(args.get("content")))
        elif kind in HARNESS:
            body = args.get("content") if action is not None else event.get("content")
            self.add(line, eid, META, text_of(body))
        elif action in ASSISTANT_ACTIONS:
            field = ASSISTANT_ACTIONS[str(action)]
            self.add(line, eid, "assistant", text_of(args.get(field) or event.get("message")))
        elif action is not None:
            # the thought is what the model wrote with the call; flags are the schema's
            self.add(line, eid, "assistant", text_of(args.get("thought")), ".thought")
            values = {k: v for k, v in args.items()
                      if k != "thought" and v is not None and not isinstance(v, bool)}
            self.add(line, eid, f"tool_call:{kind}", tool_input_text(values))
        else:
            self.add(line, eid, f"tool_result:{kind}", text_of(event.get("content")))

    @staticmethod
    def unknown(kind: str, is_action: bool, args: Any, extras: Any = None) -> str | None:
        """Why an event is not read (a reader note's reason), or None to read it: a
        name not known that folds to a known one (a renamed condensation), an action not
        known whose ``args`` carry a condensation's fields (adv29 F4: they became a
        ``tool_call`` span and the forgotten events were never folded), or an observation
        named as a condensation or carrying its fields in ``args`` or ``extras``
        (adv73: OpenHands writes a condensation as an action; as an observation it was
        read as bookkeeping or a tool's output, nothing was folded, and the trajectory
        passed)."""
        what = "an action" if is_action else "an observation"
        if not is_action and (
                _folded(kind) in _FOLDED_CONDENSATIONS
                or any(isinstance(v, dict) and not v.keys().isdisjoint(CONDENSATION_ARGS)
                       for v in (args, extras))):
            return unknown_type_note(kind, "an observation (a condensation is an action)")
        if kind in KNOWN_NAMES:
            return None
        if _folded(kind) in _FOLDED_KNOWN:
            return unknown_type_note(kind, f"{what} name")
        if is_action and isinstance(args, dict) and not args.keys().isdisjoint(
                CONDENSATION_ARGS):
            return unknown_type_note(kind, "an action (with a condensation's args)")
        return None

    def add(self, line: int, eid: str, source: str, text: str, suffix: str = "") -> None:
        """A span of event ``eid`` (id: the event id, plus ``suffix``), unless empty."""
        if text.strip():
            span = self.asm.span(line, eid + suffix, source, text)
            self.spans.setdefault(eid, []).append(str(span["id"]))
            self.ranges.add(eid)

    def check_identity(self, line: int, event: dict[str, Any], where: str, sdk: bool
                       ) -> None:
        """Raise :class:`LogError` for an event ``id`` that is not an integer >= 0 (V0,
        ``sdk`` false: its ids are stream positions) or, in the SDK's events, neither
        that nor a non-empty string, or a ``source`` that is neither null nor a string;
        note a source this reader does not know (:data:`SOURCES`): its event is read as
        no person's.  adv48: an id of -2 or 2.5 took an event out of a forgotten range,
        and a source 7 or "User" turned a person's message into the assistant's, each
        with no word."""
        eid, source = event["id"], event.get("source")
        if not (type(eid) is int and eid >= 0) and not (sdk and type(eid) is str and eid):
            raise LogError(self.path, line, "expected an integer >= 0" + (
                " or a non-empty string" if sdk else ""), f"{where}.id".lstrip("."))
        if source is not None and type(source) is not str:
            raise LogError(self.path, line, "expected a string", f"{where}.source".lstrip("."))
        if source is not None and source not in SOURCES:
            self.note(f"an event source this reader does not know ({source[:40]!r}): "
                      "read as no person's")

    def metrics(self, line: int, value: Any, where: str) -> None:
        """Budget and last call size from ``llm_metrics.accumulated_token_usage``;
        :class:`LogError` for either that is neither null nor an integer >= 0 (adv46: a
        ``per_turn_token`` of "96000" was dropped and the estimate stood in), and for
        an ``llm_metrics`` or ``accumulated_token_usage`` that is neither null nor an
        object (a 5 left the sizes unknown with no word: adv65 #5)."""
        at = f"{where}.llm_metrics".lstrip(".")
        if value is not None and type(value) is not dict:
            raise LogError(self.path, line, "expected an object", at)
        usage = value.get("accumulated_token_usage") if value is not None else None
        if usage is None:
            return
        if type(usage) is not dict:
            raise LogError(self.path, line, "expected an object",
                           f"{at}.accumulated_token_usage")
        check_counts(self.path, line, usage, ("context_window", "per_turn_token"),
                     f"{where}.llm_metrics.accumulated_token_usage.".lstrip("."))
        window, turn = usage.get("context_window"), usage.get("per_turn_token")
        if self.budget is None and type(window) is int and window > 0:
            self.budget = window
        if type(turn) is int and self.budget is not None and turn > self.budget:
            self.note("a per_turn_token above the context window: not read as the "
                      "context's size")  # no context holds more (as Codex: adv65 #5)
            turn = None
        self.measured(turn if type(turn) is int else None)

    def condensation(self, line: int, event: dict[str, Any], where: str) -> None:
        """Fold (or only evict) exactly the events the condensation names."""
        args = event.get("args")
        at = f"{where}.args".lstrip(".")
        if type(args) is not dict:
            raise LogError(self.path, line, "expected an object", at)
        forgotten = forgotten_ids(args, self.ranges, self.path, line, at)
        summary = args.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise LogError(self.path, line, "expected a string", f"{at}.summary")
        offset = args.get("summary_offset")  # a "x" or -5 made a summarizing condenser
        if offset is not None and not (type(offset) is int and offset >= 0):  # (adv65)
            raise LogError(self.path, line, "expected an integer >= 0",
                           f"{at}.summary_offset")
        # every span of a forgotten event leaves the working set here (folded, evicted
        # or gone before), so its list is dropped: an event id reused for n spans and
        # forgotten n times walked all n each time (issue 11, class 5, fresh pass, F6)
        fold, count = [], 0  # count: the events with a span folded here (adv65 #3:
        for eid in forgotten:  # ids not in the log, or of no span, were counted)
            held = [s for s in self.spans.pop(eid, []) if s in self.asm.working]
            fold += held
            count += bool(held)
        info: dict[str, Any] = {"trigger": self.requested or "auto",
                                "tokens_before": self.last_input, "tokens_after": None,
                                "opaque": False, "strategy": "condensation",
                                "messages_removed": count}
        why = self.unresolved(args, forgotten, fold)
        if why is not None:
            info["unchecked"] = why
        self.requested = None
        if summary is not None or args.get("summary_offset") is not None:
            # a summarizing condenser's: an empty or missing text is an empty summary,
            # judged as one (adv33 B3: it was a forget that no rule judges, a PASS)
            info["kind"] = "compact"
            self.asm.compaction(line, fold=fold, fallback_children=[],
                                base_id=f"{event['id']}", text=summary or "",
                                tokens=estimate_tokens(summary or ""), info=info)
        else:
            info["kind"] = "forget"
            self.asm.microcompact(line, fold, info)
        self.awaiting_after.append(info)


    def unresolved(self, args: dict[str, Any], forgotten: list[str], fold: list[str]
                   ) -> str | None:
        """Why a condensation's loss cannot be checked (its ``unchecked`` reason), or
        None: it names no forgotten event (no ``forgotten_event_ids`` and no range, as
        when those fields are renamed), or it folds nothing: not one of the events it
        names is an event of the log before it (ids from another stream, or a log cut
        before them), or those that are hold no span in the context (adv65 #2).
        Fields of ``args`` a ``CondensationAction`` does not have are noted,
        and ids named that no event of the log has are noted (adv31 N5: either way a
        condensation was read as one that forgot nothing, and a failing trajectory
        passed with no word)."""
        for key in args:
            if key not in CONDENSATION_KEYS:
                self.note(f"a condensation's args field {str(key)[:40]!r} is not one "
                          "this reader knows: ignored")
        if not forgotten and not fold:
            return "the condensation names no event it forgot"
        missing = sum(1 for eid in forgotten if eid not in self.seen)
        if missing and not fold and missing == len(forgotten):
            return "the events the condensation forgot are not in the log before it"
        if not fold:  # adv65 #2: a state change, the system prompt or itself named:
            return ("the events the condensation forgot hold nothing in the context "
                    "(no span of them is there)")  # it folded nothing, said checked
        if missing:
            self.note("a condensation names forgotten events that are not in the log "
                      "before it: what they held is not checked")
        return None


ID_MAX = 2**63 - 1
"""The largest event id a range may name.  OpenHands numbers the events of a stream
0, 1, 2, ... (-1 is its "no id yet"), in a 64-bit integer."""


def forgotten_ids(args: dict[str, Any], known: EventRanges, path: str, line: int,
                  at: str) -> list[str]:
    """The ids of events a condensation forgot: the explicit ``forgotten_event_ids``
    (integers >= 0, or an SDK event's strings; each id once), else the ``known`` ids in
    the inclusive range ``forgotten_events_start_id .. forgotten_events_end_id``, taken
    out of ``known`` (a
    range of width 2^63 over five events is five ids, never walked: adv14 F10).  An id
    outside ``0 .. 2^63-1`` (orjson reads an integer past 2^64 as a float), and a listed
    id that is no integer (``1.5``, ``true``, ``[1]`` were read as ids of no event, and
    ``2.0`` as no id 2: adv65 #5), are errors."""
    listed = args.get("forgotten_event_ids")
    if listed is not None:
        if type(listed) is not list or not all(
                (type(x) is int and 0 <= x <= ID_MAX) or (type(x) is str and x)
                for x in listed):  # an SDK event's id is a string
            raise LogError(path, line, "expected a list of event ids (integers >= 0 or "
                           "strings)", f"{at}.forgotten_event_ids")
        return list(dict.fromkeys(str(x) for x in listed))  # an id named twice is one
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if start is None and end is None:
        return []
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, (int, float)) and not -1 < value <= ID_MAX:
            raise LogError(path, line, "event id out of range (0 .. 2^63-1)",
                           f"{at}.forgotten_events_{name}_id")
    if type(start) is not int or type(end) is not int or end < start:
        name = "end" if type(start) is int and type(end) is not int else "start"
        raise LogError(path, line, "expected integers start <= end",  # the one not an
                       f"{at}.forgotten_events_{name}_id")  # integer (adv46), else start
    return known.take(start, end)
