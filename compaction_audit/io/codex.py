"""OpenAI Codex CLI rollouts -> ``compaction-audit/1`` records.

Reads ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (lines
``{"timestamp", "type", "payload"}``).  The mapping is described in
``docs/adapters.md``; in short: a round per real user turn and per ``compacted``
line, a raw span per message, tool call and tool output, and at each compaction one
summary folding every working-set item that the replacement history did not keep.
``token_count`` events give the compaction's before/after sizes and the budget.
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from compaction_audit.errors import LogError
from compaction_audit.io import codex_truncated as truncated
from compaction_audit.io import harness
from compaction_audit.io.codex_types import BOOKKEEPING_EVENTS, BOOKKEEPING_ITEMS
from compaction_audit.io.tokens import (
    IMAGE_TOKENS,
    RoundAssembler,
    count_problem,
    estimate_bytes,
    estimate_tokens,
    feed,
    lines_phrase,
    session_record,
    tool_input_text,
    tool_output_text,
    unknown_type_note,
)
from compaction_audit.recall.literals import Literals

SOURCE_FORMAT = "codex"

_LINE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context",
                         "compacted"})
_CALLS = {"function_call": "arguments", "custom_tool_call": "input",
          "local_shell_call": "action", "web_search_call": "action"}
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_OPAQUE_ITEMS = frozenset({"compaction", "compaction_summary", "context_compaction"})
ROLES = frozenset({"user", "assistant", "developer", "system"})
"""The message roles a rollout writes: a person (or text Codex injects in the user
role), the model, and the product's instructions; a message of any other role is
counted as not read (:meth:`_Converter.role`)."""
_COUNT_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")
"""The counts of a ``token_count`` usage that are all 0 in an event that measured nothing."""

SUMMARY_PREFIX = harness.CODEX_SUMMARY_PREFIX
"""How Codex opens the user message that carries a local compaction's summary."""

CARRIER_SEARCH_MAX_NODES = 500_000
"""The largest automaton (nodes: distinct prefixes, at most one per character) of the
replacement-history user messages that match no working-set span, looked for inside one
compaction's message: about 240 bytes a node, 120 MB.  Past it the rollout is an error,
exit 2.  Codex carries over about :data:`KEEP_USER_TOKENS` of user messages (80,000
bytes), and those match spans."""

_U32_MAX = 2**32 - 1
"""The largest ``num_turns`` codex-rs writes (a u32)."""
KEEP_USER_TOKENS = 20_000
"""Without ``replacement_history`` Codex rebuilds the context from the most recent
user messages up to about this many tokens; the adapter keeps the same ones."""


def sniff(first_objects: list[dict[str, Any]]) -> bool:
    """True when these first decoded lines look like a Codex rollout."""
    return any(isinstance(obj.get("type"), str) and obj["type"] in _LINE_TYPES
               and isinstance(obj.get("payload"), dict) for obj in first_objects)


def records(path: str, lines: Iterable[tuple[int, bytes]] | None = None
            ) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rollout as ``(source_line, record)`` pairs, session record first; the same
    contract as :func:`compaction_audit.io.claude_code.records`."""
    from compaction_audit.io.detect import line_checker  # detect imports this module

    conv = _Converter(path)
    first = feed(path, lines, conv.handle, line_checker(path, SOURCE_FORMAT))
    rounds = conv.asm.finish()
    record = session_record(SOURCE_FORMAT, conv.session_id, conv.budget)
    notes = [f"{lines_phrase(n)} {why}" for why, n in conv.not_read.items()]
    if conv.turns_rolled_back:
        notes.append(f"{conv.turns_rolled_back:,} user turn(s) rolled back (thread_rolled_back): "
                     "out of the context with what followed them, no summary, not judged "
                     "as lost")
    if notes:  # counted, as the Claude Code reader counts its (adv27 F2)
        record["reader_notes"] = notes
    if conv.not_read:
        record["lines_not_read"] = sum(conv.not_read.values())
    yield first or 1, record
    yield from rounds


class _Converter:
    """The state machine behind :func:`records`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.asm = RoundAssembler()
        self.session_id: str | None = None
        self.budget: int | None = None
        self.call_names: dict[str, str] = {}
        self.keys: dict[str, tuple[str, ...]] = {}
        # the working set in two parts, each in entry order (issue 11, class 5, adv9 F8):
        # the user turns (id, estimated tokens, entry number) with their token total,
        # and every other id -> its entry number
        self.turns: deque[tuple[str, int, int]] = deque()
        self.turn_tokens = 0
        self.others: dict[str, int] = {}
        self.entered = 0
        self.last_total: int | None = None
        self.last_seen: tuple[Any, ...] | None = None
        self.awaiting_after: list[dict[str, Any]] = []
        self.not_read: Counter[str] = Counter()  # why -> lines (a type not known)
        self.turns_rolled_back = 0  # user turns thread_rolled_back events took out
        # every user-role message and compaction summary, in entry order (id, entry): the
        # turns a rollback counts (:meth:`rolled_back`); pruned to the working set there
        self.boundaries: list[tuple[str | None, int, bool]] = []  # (id, entry, Codex's?)
        # a compacted line not yet paired with its context_compacted event, and no
        # rollout item since it: the only line an event may pair with (adv29 F6)
        self.unpaired_compacted = False

    def fail(self, line: int, message: str, where: str) -> LogError:
        """A :class:`LogError` for this file."""
        return LogError(self.path, line, message, where)

    def handle(self, line: int, obj: dict[str, Any]) -> None:
        """Apply one decoded rollout line; a line of a type not known is counted in
        :attr:`not_read` (a ``compacted`` line renamed made a failing rollout pass
        without a word: adv27 F2), and so is an ``event_msg`` of a type neither read
        nor in :data:`~compaction_audit.io.codex_types.BOOKKEEPING_EVENTS` (adv29 F5).

        A ``context_compacted`` event pairs with the ``compacted`` line before it only
        when nothing but events lies between them (Codex writes the event right after
        the line) and that line is not paired yet; any other event is a compaction
        that could not be checked (adv29 F6: a line whose own event was removed paid
        for a later event with no line)."""
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in _LINE_TYPES:
            self.not_read[unknown_type_note(kind)] += 1
            return
        payload = obj.get("payload")
        if type(payload) is not dict:
            raise self.fail(line, "expected an object", "payload")
        if kind != "event_msg":
            self.unpaired_compacted = kind == "compacted"
        if kind == "session_meta":
            sid = payload.get("id")
            if sid is not None and not isinstance(sid, str):  # was "no session record"
                raise self.fail(line, "expected a string", "payload.id")  # (adv64 #5)
            if self.session_id is None and sid is not None:
                self.session_id = sid
        elif kind == "response_item":
            self.item(line, payload)
        elif kind == "compacted":
            self.compacted(line, payload)
        elif kind == "event_msg":
            self.event(line, payload)

    def event(self, line: int, p: dict[str, Any]) -> None:
        """An ``event_msg``: a compaction's event, a token count, a turn's start (the
        context window), known bookkeeping, or a type not known (counted)."""
        kind = p.get("type")
        if kind == "context_compacted":
            if not self.unpaired_compacted:
                self.lost_compaction(line)
            self.unpaired_compacted = False
        elif kind == "token_count":
            self.token_count(line, p)
        elif kind == "task_started":
            self.window(line, p.get("model_context_window"), "payload.model_context_window")
        elif kind == "thread_rolled_back":
            self.rolled_back(line, p.get("num_turns"))
        elif not isinstance(kind, str) or kind not in BOOKKEEPING_EVENTS:
            self.not_read[unknown_type_note(kind, "an event_msg type")] += 1

    # -- items -----------------------------------------------------------------------
    def item(self, line: int, p: dict[str, Any]) -> None:
        """A ``response_item``: a message, a tool call or a tool output become spans;
        a payload type neither read nor in
        :data:`~compaction_audit.io.codex_types.BOOKKEEPING_ITEMS` is counted as not
        read (adv29 F5)."""
        kind = p.get("type")
        if kind == "message":
            role = self.role(line, p, "payload.role")
            if role is None:
                return
            text, images = self.message_text(line, p.get("content"), "payload.content")
            source = harness.codex_message_source(role, text)
            human = source == harness.USER and bool(text.strip())
            if human:
                self.asm.turn(line)
            if text.strip() or images:
                base = p["id"] if isinstance(p.get("id"), str) else f"line-{line}"
                span = self.asm.span(line, base, source, text,
                                     estimate_tokens(text) + images * IMAGE_TOKENS)
                self.keys[span["id"]] = ("message", role, text)
                self.enter(span["id"], estimate_tokens(text) if human else None)
                if role == "user" or _inter_agent(text):  # an injected one is none to Codex
                    self.boundaries.append((span["id"], self.entered,
                                            role != "user" or source == harness.USER))
            elif role == "user":  # an empty user message is a turn to Codex: where the
                self.boundaries.append((None, self.entered + 1, True))  # next item enters
        elif isinstance(kind, str) and (kind in _CALLS or kind in _OUTPUTS):  # adv67 #5:
            key, source, text, size = self.tool_item(line, kind, p)  # a [] raised
            base = key[1] if key[0] == "call" else f"{key[1]}:output"
            span = self.asm.span(line, base, source, text, size)
            self.keys[span["id"]] = key
            self.enter(span["id"], None)
        elif not isinstance(kind, str) or kind not in BOOKKEEPING_ITEMS:
            self.not_read[unknown_type_note(kind, "a response_item payload type")] += 1
            # an item this reader does not know may be a turn to Codex (agent_message,
            # an inter-agent communication): counted as one, a rollback cuts no earlier
            self.boundaries.append((None, self.entered + 1, True))

    def role(self, line: int, message: dict[str, Any], where: str) -> str | None:
        """A message's ``role`` (:data:`ROLES`); None, counted as not read, for a role
        this reader does not know (as the Cline reader does, docs/adapters.md "Reader
        robustness": a role ``"User"`` or ``"root"`` was read as a source of its own and
        took a person's requirements out of "typed by a person", adv42).  Raises
        :class:`LogError` at ``where`` when it is missing or not a string."""
        role = message.get("role")
        if not isinstance(role, str):
            raise self.fail(line, "missing field" if role is None else "expected a string",
                            where)
        if role not in ROLES:
            self.not_read[unknown_type_note(role, "a message role")] += 1
            return None
        return role

    def enter(self, item: str, human_tokens: int | None) -> None:
        """Note that ``item`` entered the working set: a user turn of ``human_tokens``
        estimated tokens, or (None) any other item."""
        self.entered += 1
        if human_tokens is None:
            self.others[item] = self.entered
        else:
            self.turns.append((item, human_tokens, self.entered))
            self.turn_tokens += human_tokens

    def tool_item(self, line: int, kind: str, p: dict[str, Any]
                  ) -> tuple[tuple[str, str], str, str, int]:
        """A tool call or output: its match key, source, text and estimated size."""
        call_id = self.call_id(line, p)
        if kind in _CALLS:
            raw_name = p.get("name")
            name = raw_name if isinstance(raw_name, str) else kind.removesuffix("_call")
            self.call_names.setdefault(call_id, name)
            body = p.get(_CALLS[kind])
            raw = body if isinstance(body, str) else orjson.dumps(body).decode()
            return (("call", call_id), f"tool_call:{name}", tool_input_text(body),
                    estimate_tokens(raw))
        text, images = _output_text(p.get("output"))
        name = self.call_names.get(call_id, "unknown")
        return (("output", call_id), f"tool_result:{name}", text,
                estimate_tokens(text) + images * IMAGE_TOKENS)

    def call_id(self, line: int, p: dict[str, Any]) -> str:
        """The item's ``call_id`` (or ``id``), else the line address."""
        for key in ("call_id", "id"):  # [] or {} was read as absent (adv64 #5)
            value = p.get(key)
            if value is not None and not isinstance(value, str):
                raise self.fail(line, "expected a string", f"payload.{key}")
            if value:
                return str(value)
        return f"line-{line}"

    def message_text(self, line: int, content: Any, where: str) -> tuple[str, int]:
        """A message's text parts joined by newlines, and its number of images."""
        if isinstance(content, str):
            return content, 0
        if type(content) is not list:
            raise self.fail(line, "expected a list", where)
        texts: list[str] = []
        images = 0
        for i, part in enumerate(content):
            if type(part) is not dict:
                raise self.fail(line, "expected an object", f"{where}[{i}]")
            if part.get("type") in ("input_image", "image"):
                images += 1
            elif "text" in part:
                if not isinstance(part["text"], str):
                    raise self.fail(line, "expected a string", f"{where}[{i}].text")
                texts.append(part["text"])
        return "\n".join(texts), images

    # -- token counts ----------------------------------------------------------------
    def token_count(self, line: int, p: dict[str, Any]) -> None:
        """A ``token_count`` event: ``last_token_usage.total_tokens`` is the context size
        (:class:`LogError` when ``info`` is there but no object, or has no
        ``last_token_usage`` object with a ``total_tokens`` count).

        Skipped (issue 10, point 7): an event whose input, cached and output counts are
        all 0 (Codex writes one around a compaction), an event without a positive
        total, a total above the context window (no context holds more than its
        window: not a token count), and a repeat of the previous event.
        """
        info = p.get("info")
        if info is None:  # Codex writes null before the first call's usage
            return
        if type(info) is not dict:  # adv46: a "200000" left tokens_before unknown
            raise self.fail(line, "expected an object", "payload.info")
        self.window(line, info.get("model_context_window"),
                    "payload.info.model_context_window")
        last, cumulative = info.get("last_token_usage"), info.get("total_token_usage")
        # adv64 #3, adv67 #4: a "5", a null or no usage (or total) was skipped, and the
        # compaction's tokens_before came from an older event with no word; Codex's
        # TokenUsageInfo always has both (neither is optional)
        if type(last) is not dict:
            raise self.fail(line, "missing field" if "last_token_usage" not in info
                            else "expected an object", "payload.info.last_token_usage")
        for key in (*_COUNT_KEYS, "total_tokens"):
            problem = count_problem(last.get(key))
            if problem is not None:
                raise self.fail(line, problem, f"payload.info.last_token_usage.{key}")
        total = last.get("total_tokens")
        if total is None:
            raise self.fail(line, "missing field" if "total_tokens" not in last
                            else "expected an integer >= 0",
                            "payload.info.last_token_usage.total_tokens")
        if not any(last.get(key) for key in _COUNT_KEYS) and any(
                key in last for key in _COUNT_KEYS):
            return
        if not total or (self.budget is not None and total > self.budget):
            return
        seen = (total, orjson.dumps(cumulative))
        if seen == self.last_seen:
            return
        self.last_seen = seen
        self.last_total = total
        for pending in self.awaiting_after:
            pending["tokens_after"] = total
        self.awaiting_after.clear()

    def window(self, line: int, value: Any, where: str) -> None:
        """Take the first positive ``model_context_window`` as the session budget.
        Raises :class:`LogError` at ``where`` for a value that is neither null nor a
        whole number >= 0 (a string ``"258400"`` left the budget unknown with no word:
        adv42; a -1 let a later window stand in: adv46)."""
        problem = count_problem(value)
        if problem is not None:
            raise self.fail(line, problem, where)
        if self.budget is None and value is not None and value > 0:
            self.budget = value

    def keep(self, kept: Callable[[str, int], bool]) -> None:
        """Keep in :attr:`turns` and :attr:`others` the items ``kept(id, entry number)``
        says stay in the working set (their order, and the turns' token total)."""
        self.turns = deque(turn for turn in self.turns if kept(turn[0], turn[2]))
        self.turn_tokens = sum(size for _, size, _ in self.turns)
        self.others = {item: n for item, n in self.others.items() if kept(item, n)}

    def rolled_back(self, line: int, turns: Any) -> None:
        """A ``thread_rolled_back`` event: Codex takes the last ``num_turns`` user turns
        out of the context, each with everything after it (codex-rs
        ``drop_last_n_user_turns``: the history is cut at the n-th user message from the
        end, or at the first when n is past their number; 0 changes nothing; a user
        message is any user-role message Codex did not inject, an image alone or a
        compaction's summary too).  Those
        items leave the working set with no summary (usertest68 #2: a turn the user
        rolled back was folded by the next compaction and read as a person's lost
        rule).  Raises :class:`LogError` when ``num_turns`` is not a whole number from 0
        to 4,294,967,295 (codex-rs writes a u32; a larger one is read as a float by the
        JSON decoder: adv134 said "of 0 or more" of 10^30)."""
        if type(turns) is not int or not 0 <= turns <= _U32_MAX:
            raise self.fail(line, f"expected a whole number from 0 to {_U32_MAX:,}"
                            if turns is not None else "missing field", "payload.num_turns")
        working = self.asm.working
        live = [b for b in self.boundaries if b[0] is None or b[0] in working]
        first = next((n for item, n, _ in live if item is not None), None)
        # a place with no item (an empty message, an item not read) before the first
        # boundary still in the context is from before a compaction's cut: not counted
        self.boundaries = [b for b in live
                           if b[0] is not None or (first is not None and b[1] > first)]
        if turns == 0 or not self.boundaries:
            return
        # the n-th boundary from the end: every user-role message and summary counts
        # (codex-rs is_user_turn_boundary counts an image-only message and the summary;
        # adv132 #1: counting typed turns only cut one turn early and hid a loss), and
        # counting one Codex does not (an injected message) cuts later: a fact kept too
        # long is a loss said, one dropped too early a loss hidden
        cut = self.boundaries[-min(turns, len(self.boundaries))][1]
        real = next((n for _, n, codex in self.boundaries if codex), None)
        if real is not None:  # never before Codex's first turn: an injected message
            cut = max(cut, real)  # before it is none (adv133)
        self.turns_rolled_back += min(turns, len(self.boundaries))
        gone = sorted([(n, item) for item, _, n in self.turns if n >= cut]
                      + [(n, item) for item, n in self.others.items() if n >= cut])
        self.boundaries = [b for b in self.boundaries if b[1] < cut]
        self.keep(lambda item, n: n < cut)
        self.asm.drop(line, [item for _, item in gone])  # in entry order

    # -- compaction ------------------------------------------------------------------
    def lost_compaction(self, line: int) -> None:
        """A ``context_compacted`` event with no ``compacted`` line before it: Codex
        says a compaction happened, but its summary is not in the rollout.  Recorded
        as a compaction that could not be checked, never a silent pass (adv28 F6: the
        ``compacted`` line removed, or renamed ``event_msg``, made a failing rollout a
        plain PASS)."""
        info = {"trigger": None, "tokens_before": self.last_total, "tokens_after": None,
                "opaque": False, "kind": "compact",
                "unchecked": "the rollout records the compaction's event but not its "
                             "compacted line"}
        self.asm.compaction(line, fold=[], fallback_children=[], base_id=f"line-{line}",
                            text=None, tokens=0, info=info)
        self.awaiting_after.append(info)

    def compacted(self, line: int, p: dict[str, Any]) -> None:
        """A ``compacted`` line: a summary folds what the replacement history dropped."""
        message = p.get("message")
        if message is not None and not isinstance(message, str):
            raise self.fail(line, "expected a string", "payload.message")
        history = p.get("replacement_history")
        if history is not None and type(history) is not list:
            raise self.fail(line, "expected a list", "payload.replacement_history")
        copies: list[str] = []
        if history is not None:
            kept, carriers, copies, secret, extra = self.match(line, history, message or "")
            keep = set(kept)
            fold = [item for item in self.asm.working if item not in keep]
        else:
            fold = self.recent_user_messages()
            carriers, secret, extra = [], None, []
            kept = [] if fold else [item for item, _, _ in self.turns]
        # an encrypted item is the summary the model will read: whatever ``message``
        # says, the compaction's content is opaque and not checkable (issue 10, point 7)
        text = None if secret is not None else \
            _summary_read(message or "", carriers, history is not None)
        if text is not None:
            tokens = estimate_tokens(text)  # the copies are spans of their own: not here
            if copies:  # what the model reads of messages Codex cut (usertest61 A1)
                text = "\n\n".join([text, *copies]).strip()
        else:
            tokens = estimate_bytes(len(secret) * 3 // 4) if secret else 0
        info = {"trigger": None, "tokens_before": self.last_total, "tokens_after": None,
                "opaque": text is None, "kind": "compact"}
        summary_id = self.asm.compaction(line, fold=fold, fallback_children=kept,
                                         base_id=f"line-{line}", text=text, tokens=tokens,
                                         info=info)
        if history is not None:  # what it dropped: as many as it folded, or kept
            working = self.asm.working
            self.keep(lambda item, n: item in working)
        self.enter(summary_id, None)
        self.boundaries.append((summary_id, self.entered, True))  # a user message to Codex
        for i, source, body, size in extra:
            item = str(self.asm.span(line, f"line-{line}.{i}", source, body, size)["id"])
            self.enter(item, None)
            if not source.startswith(("tool_", "assistant")):  # a user-role message: a
                self.boundaries.append((item, self.entered, source == harness.USER))
        self.awaiting_after.append(info)

    def match(self, line: int, history: list[Any], message: str
              ) -> tuple[list[str], list[tuple[str, bool]], list[str], str | None,
                         list[tuple[int, str, str, int]]]:
        """Sort the replacement history: kept spans, summary carriers, user messages
        Codex cut short (:func:`~compaction_audit.io.codex_truncated.is_copy`), opaque
        blob, new items.

        Each item is matched with the earliest working-set span of the same key not
        matched yet (one queue per key: linear in history plus working set, however
        many items repeat; issue 11, item 5)."""
        kept: list[str] = []
        carriers: list[tuple[str, bool]] = []  # each with whether it lies inside the message
        secret: str | None = None
        extra: list[tuple[int, str, str, int]] = []
        waiting: dict[tuple[str, ...], deque[str]] = {}  # key -> unmatched ids, in order
        unmatched: list[tuple[int, str, str, int, bool]] = []  # i, source, body, size, user
        copies: list[str] = []
        for span_id in self.asm.working:
            waiting.setdefault(self.keys.get(span_id, ("",)), deque()).append(span_id)
        for i, item in enumerate(history):
            where = f"payload.replacement_history[{i}]"
            if type(item) is not dict:
                raise self.fail(line, "expected an object", where)
            kind = item.get("type")
            if not isinstance(kind, str):  # a [] or {} is no type (adv67 #5: TypeError)
                self.not_read[unknown_type_note(kind, "a replacement_history item "
                                                      "type")] += 1
                continue
            if kind in _OPAQUE_ITEMS:
                blob = item.get("encrypted_content")
                if isinstance(blob, str):
                    secret = blob
                elif "encrypted_content" in item:  # 12345, {} or null was read as a
                    # summary of about 0 tokens, exit 0 (adv84)
                    raise self.fail(line, "expected a string", f"{where}.encrypted_content")
                else:
                    secret = secret or ""
                continue
            if kind == "message":
                role = self.role(line, item, f"{where}.role")
                if role is None:
                    continue
                body, images = self.message_text(line, item.get("content"), f"{where}.content")
                key: tuple[str, ...] = ("message", role, body)
                source = harness.codex_message_source(role, body)
                size = estimate_tokens(body) + images * IMAGE_TOKENS
            elif kind in _CALLS or kind in _OUTPUTS:
                key, source, body, size = self.tool_item(line, kind, item)
            else:  # counted, as a response_item of that type is (adv46: a "Message"
                # was dropped with no word, and the items it kept counted as folded)
                if kind not in BOOKKEEPING_ITEMS:
                    self.not_read[unknown_type_note(kind, "a replacement_history item "
                                                          "type")] += 1
                continue
            queue = waiting.get(key)
            if queue:
                kept.append(queue.popleft())
            else:
                unmatched.append((i, source, body, size, key[:2] == ("message", "user")))
        carries = _Carriers(message, [body for *_, body, _, user in unmatched if user])
        if carries.too_large:
            raise self.fail(line, "replacement history too large to search: its unmatched "
                            "user messages need more than "
                            f"{CARRIER_SEARCH_MAX_NODES:,} automaton nodes to be looked for "
                            "in the compaction message; see docs/performance.md (limits)",
                            "payload.replacement_history")
        for i, source, body, size, user in unmatched:
            if user and carries(body):
                carriers.append((body, carries.inside_message(body)))
                continue
            if user and truncated.is_copy(body):  # judged with the summary too (usertest61
                body = truncated.without_marks(body)  # A1), and a span of its own; its
                copies.append(body)  # marks are no fact of either (adv115 #1: folded at
            extra.append((i, source, body, size))  # the next compaction, lost)
        return kept, carriers, copies, secret, extra

    def recent_user_messages(self) -> list[str]:
        """What a compaction without a replacement folds, in working-set order: every
        item but the most recent user turns that fit in :data:`KEEP_USER_TOKENS` (the
        ones Codex keeps when it rebuilds the context), which stay in :attr:`turns`.

        Walking back from the end, the first turn larger than what is left of the
        budget stops the walk: the kept turns are the longest run of the latest turns
        whose sizes sum to at most the budget, so the older turns are dropped from the
        front until the total fits.  Only what is folded is visited, never the kept
        turns, each turn's size estimated once when it entered (issue 11, class 5: a
        walk of every kept turn at each compaction was C x N, adv9 F8)."""
        dropped: list[tuple[int, str]] = []
        while self.turn_tokens > KEEP_USER_TOKENS:
            item, size, entered = self.turns.popleft()
            self.turn_tokens -= size
            dropped.append((entered, item))
        others = [(entered, item) for item, entered in self.others.items()]
        self.others = {}
        return [item for _, item in heapq.merge(dropped, others)]


class _Carriers:
    """Which replacement-history user messages carry a compaction's ``message`` (see
    :func:`_is_carrier`), for many messages at once: the texts that might lie inside
    the message are found in one pass over it (:class:`Literals`), not one search of
    the whole message per text (K x M; issue 11, class 5, adv9 F1).  Same answers as
    :func:`_is_carrier`."""

    DIRECT = 8
    """Up to this many candidate texts, Python's own ``in`` is cheaper than an automaton."""

    def __init__(self, message: str, texts: list[str]) -> None:
        self.m = message.strip()
        inside = [t for t in (text.strip() for text in texts)
                  if _SUBSTRING_MIN <= len(t) <= len(self.m)]
        self.inside: set[str] | None = None
        self.too_large = False
        if len(inside) > self.DIRECT:
            try:
                literals = Literals(inside, CARRIER_SEARCH_MAX_NODES)
            except OverflowError:
                self.too_large = True
            else:
                self.inside = literals.found_in(self.m)

    def __call__(self, text: str) -> bool:
        t, m = text.strip(), self.m
        if self.inside is None or len(t) > len(m) or len(t) < _SUBSTRING_MIN:
            return _is_carrier(text, m)
        if t.startswith(SUMMARY_PREFIX) or (m and t == m):
            return True
        return bool(m) and t in self.inside

    def inside_message(self, text: str) -> bool:
        """Whether carrier ``text`` lies inside the message, a shorter text of
        :data:`_SUBSTRING_MIN` characters or more: read from the automaton's set where it
        ran, else one search, of at most :data:`DIRECT` such texts (adv114 #2: a search
        per carrier was K x M)."""
        t, m = text.strip(), self.m
        if not _SUBSTRING_MIN <= len(t) < len(m):
            return False
        return t in self.inside if self.inside is not None else t in m


_SUBSTRING_MIN = 32
"""The shortest text (and message) that counts as carrying the other inside it."""


def _summary_read(message: str, carriers: list[tuple[str, bool]], replaced: bool
                  ) -> str | None:
    """The summary text a local compaction is judged by: the copy the model reads
    decides (adv112 #1, adv113 #4).  ``carriers``: the replacement-history user messages
    that carry the summary (:class:`_Carriers`), in order, each with whether it lies
    inside the message (:meth:`_Carriers.inside_message`); ``replaced``: whether the
    line has a replacement history at all.  None: opaque (no text at all).

    - No carrier in a replacement history: the model read no copy of the message, so
      the fold is judged by an empty summary ("", everything it folded is lost); with
      an empty message too, the compaction is opaque, as before.  No replacement history
      (an older rollout): the message.
    - A carrier that holds the message: the message (Codex writes the carrier as the
      message, word for word), or the first carrier when the message is empty.
    - Carriers that each lie inside the message (shorter texts), or that state a
      summary of their own besides Codex's prefix: those carriers, one per line, since
      the rest of the message never reached the model ("Summary: X." carried,
      "Summary: X. Do NOT use --force." written).
    - Carriers that hold Codex's prefix and next to nothing else (an abbreviated log:
      "Another language model started to solve this problem ... (summary)"): the
      message.
    """
    m = message.strip()
    if not carriers:
        return "" if replaced and m else (message or None)
    if not m or any(len(c) >= len(m) and m in c for c, _ in carriers):
        return message or carriers[0][0]
    if all(inside or _own_summary(c) for c, inside in carriers):
        return "\n".join(c for c, _ in carriers)
    return message


def _inter_agent(text: str) -> bool:
    """Whether an assistant message's text is an instruction between agents, a turn to
    Codex (codex-rs ``InterAgentInstruction``: "author: ...\nrecipient: ...";
    ``InterAgentCommunication``: a JSON object with author and recipient)."""
    t = text.lstrip()
    if t.startswith("author: "):
        return "\nrecipient: " in t
    return t.startswith("{") and '"recipient"' in t and '"author"' in t


_OWN_MIN = 16
"""Fewest letters and digits a carrier states besides Codex's prefix to be a summary of
its own, not an abbreviation (:func:`_own_summary`)."""


def _own_summary(carrier: str) -> bool:
    """Whether ``carrier`` states a summary besides Codex's prefix: :data:`_OWN_MIN`
    letters or digits after the prefix's line (after the prefix, for one line), the
    word "summary" aside."""
    t = carrier.strip()
    if t.startswith(SUMMARY_PREFIX):
        t = t.partition("\n")[2] if "\n" in t else t[len(SUMMARY_PREFIX):]
    t = t.lower().replace("summary", "")
    return sum(ch.isalnum() for ch in t) >= _OWN_MIN


def _is_carrier(text: str, message: str) -> bool:
    """True when a replacement-history user message carries the compaction's summary."""
    t, m = text.strip(), message.strip()
    if t.startswith(SUMMARY_PREFIX) or (m and t == m):
        return True
    return bool(m) and min(len(t), len(m)) >= _SUBSTRING_MIN and (t in m or m in t)


def _output_text(output: Any) -> tuple[str, int]:
    """A tool output's text: a string, ``{"content": ...}``, or a list of content items."""
    if isinstance(output, dict) and "content" in output:
        output = output["content"]
    return tool_output_text(output, ("input_image", "image"))
