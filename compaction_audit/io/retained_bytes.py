"""Reduce a round's pair-form ``retained`` list against the previous round's on its bytes.

A full-mode log repeats the whole working set in every round (``"retained":
[["span-000013",0.0623],...]``): at 20,000 items, decoding those pairs to Python
objects, hashing the ids and comparing the sets cost four to eight times the parse
floor (issue 14).  Round after round the list is mostly the same text: an
``[id, salience]`` pair that did not change is written with the same bytes.
:class:`RetainedBytes` therefore compares the raw text of consecutive lists and decodes
only what differs:

* the list is cut out of the line (:meth:`RetainedBytes.cut`); the rest of the record
  is decoded with ``retained`` replaced by a random token, which must come back as the
  record's top-level ``retained`` (a key nested elsewhere, a duplicate key or a
  malformed line all fail this, and the caller decodes the line whole);
* the list's text is split at ``],[`` into pairs, and the pairs are grouped into pieces
  at the content-defined boundaries ``3],[`` (about one pair in ten ends with the
  digit 3): a piece that appeared in the previous round holds the same pairs, so
  only the pieces that changed are split into pairs and compared, and only the pairs
  that changed are decoded, each with orjson (``[`` + pair + ``]``), which validates
  it as a JSON array of a non-empty string and a number or null;
* the sum of the saliences is recomputed in list order over cached values, the same
  additions as ``float(sum(values))`` over the decoded list.

Why it is exact: a line is the rest of the record with the token replaced by the
list's text; the list's text is the concatenation of its pairs, each of which parsed
alone as a two-element JSON array, so the list is a valid JSON array of those pairs
and the line a valid record with that ``retained``.  A pair with the same bytes as
one of the previous round has the same id and salience.  Ids are unique: the pairs
that did not change have distinct ids (the previous round's), the new pairs are
checked among themselves and against the ids that stayed.  Whatever falls outside
these cases (object form, integer ids, whitespace between pairs other than ``, ``,
an id holding ``],[``, a pair listed twice, most pairs changed) returns None, and
the caller takes the general path (:func:`~compaction_audit.io.records.retained_pairs`),
so the result never depends on which path ran.

This module imports only the standard library and orjson: the decoding helper
processes load it by file path (:mod:`compaction_audit.io.parallel`).
"""

from __future__ import annotations

import os
from itertools import chain, compress
from typing import Any

import orjson

_KEY = b'"retained":'
_SALIENCE_TYPES = frozenset({int, float, type(None)})
_ABSENT = object()
_MARK = b"3"
"""The last byte of a pair that ends a piece (content-defined, so that a pair entering
or leaving changes only the piece around it)."""
_CHURN = 2
"""A round whose changed pieces exceed 1/_CHURN of its pieces is left to the general
path (every salience rescored each round, say): decoding nearly every pair one by one
costs more than decoding the list whole."""
_MAX_BACKOFF = 64


class RetainedBytes:
    """The state of one stream of round lines: the previous round's ``retained`` as
    pieces and pairs of raw bytes with their decoded ``(id, salience)``.

    Use: try :meth:`reduce` on each line once :attr:`ready`; on None decode the line
    whole, and after a round whose list the general path accepted call :meth:`reset`
    with it (a list nobody accepted changes nothing: the previous round stays).
    :attr:`ids` and :attr:`table` are then the previous round's ids and saliences.
    """

    def __init__(self) -> None:
        self._token = os.urandom(12).hex()
        self._valid = False
        self._backoff = 1
        self._skip = 0
        self._sep = b"],["
        self._pieces: set[bytes] = set()
        self._piece_values: dict[bytes, list[Any]] = {}  # a piece's saliences
        self._piece_pairs: dict[bytes, list[bytes]] = {}  # a piece's pairs
        self._pairs: dict[bytes, tuple[str, Any]] = {}
        self._tail: list[bytes] = []
        self._nulls = 0
        self._ids: set[str] = set()
        self._table: dict[str, Any] = {}
        self.reduced = 0
        """Rounds reduced on their bytes so far (for tests and benchmarks)."""

    @property
    def ready(self) -> bool:
        """True when :meth:`reduce` may be tried on the next round."""
        return self._valid

    def cut(self, raw: bytes) -> tuple[dict[str, Any], bytes] | None:
        """``(record without retained, the list's text between its outer brackets)``
        for a round line whose top-level ``retained`` is written ``"retained":[[...]]``,
        or None.  The text is a candidate that ends at the first ``]]`` after the
        key, or at the line's last ``]]`` when only ``}`` follows it (the list is
        usually the last field; a later field ending in ``]]`` gives a text whose
        pairs do not parse): :meth:`reduce` checks every pair it relies on."""
        at = raw.find(_KEY)
        if at < 0:
            return None
        start = at + len(_KEY)
        if raw[start:start + 1] == b" ":
            start += 1
        if raw[start:start + 2] != b"[[":
            return None
        end = raw.rfind(b"]]")  # the list is usually the record's last field
        if raw[end + 2:].strip() != b"}":
            end = raw.find(b"]]", start)  # either is exact: the pairs are checked
        if end < start:
            return None
        rest = b"".join((raw[:at], b'"retained":"', self._token.encode(), b'"', raw[end + 2:]))
        try:
            obj = orjson.loads(rest)
        except orjson.JSONDecodeError:
            return None
        if type(obj) is not dict or obj.get("type") != "round" or \
                obj.get("retained") != self._token:
            return None
        del obj["retained"]
        return obj, raw[start + 2:end]

    def reset(self, raw: bytes, ids: set[str], table: dict[str, Any],
              value: list[Any] | None = None) -> None:
        """Take the round line ``raw``, whose ``retained`` the general path decoded to
        ``value`` (the list) and ``table`` (``{id: salience}``, ids ``ids``), as the
        previous round.

        When the list's text is what ``orjson.dumps(value)`` writes (a log written by
        orjson), each pair's bytes are those of its element and nothing is decoded
        again; otherwise each pair is decoded alone.  After rounds that :meth:`reduce`
        could not handle, it is tried again only after 1, 2, 4, ... rounds (at most 64).
        """
        self._valid = False
        if self._skip > 0:
            self._skip -= 1
            return
        self._ids, self._table = ids, table
        cut = self.cut(raw)
        if cut is None:
            self._failed()
            return
        body = cut[1]
        if value is not None and self._primed(body, value):
            self._valid = True
            return
        self._sep = b"], [" if b"], [" in body and b"],[" not in body else b"],["
        self._pieces, self._piece_values, self._piece_pairs = set(), {}, {}
        self._pairs = {}
        self._tail, self._nulls = [], 0
        self._valid = True
        saved = self._ids, self._table
        self._ids, self._table = set(), {}
        done = self._diff(body, bootstrap=True)
        fresh = self._table
        self._ids, self._table = saved
        if done is None or done[0] != ids or fresh != table:
            self._valid = False
            self._failed()

    def _primed(self, body: bytes, value: list[Any]) -> bool:
        """Set the state from ``value`` when ``body`` is its orjson text and its
        elements are pairs as :meth:`_diff` accepts them: then the text has no
        whitespace, and when splitting at ``],[`` gives one part per element, no id
        holds ``],[`` and part ``i`` is element ``i``'s text."""
        if orjson.dumps(value) != b"[[" + body + b"]]":
            return False
        # the elements are what a decoded pair must be: [non-empty str, number or null]
        if set(map(type, value)) != {list} or set(map(len, value)) != {2}:
            return False
        items = [pair[0] for pair in value]
        values = [pair[1] for pair in value]
        if set(map(type, items)) != {str} or "" in items or len(set(items)) != len(items) \
                or not set(map(type, values)) <= _SALIENCE_TYPES:
            return False
        sep = b"],["
        chunks = body.split(sep)
        pieces = body.split(_MARK + sep)
        tail = pieces.pop().split(sep)
        if len(chunks) != len(value) or len(set(pieces)) != len(pieces):
            return False
        piece_values: dict[bytes, list[Any]] = {}
        piece_pairs: dict[bytes, list[bytes]] = {}
        at = 0
        for piece in pieces:
            n = piece.count(sep) + 1
            piece_values[piece] = values[at:at + n]
            piece_pairs[piece] = chunks[at:at + n]
            at += n
        if at + len(tail) != len(values):
            return False
        self._sep, self._pieces, self._piece_values = sep, set(pieces), piece_values
        self._piece_pairs = piece_pairs
        self._pairs = dict(zip(chunks, map(tuple, value), strict=True))
        self._tail, self._nulls = tail, values.count(None)
        return True

    def _failed(self) -> None:
        self._skip = self._backoff
        self._backoff = min(2 * self._backoff, _MAX_BACKOFF)

    def reduce(self, raw: bytes) -> tuple[dict[str, Any], set[str], set[str], float, int,
                                          list[tuple[str, Any]]] | None:
        """The round line ``raw`` against the previous round: ``(record without
        retained, entering ids, leaving ids, salience sum, known saliences, changed
        (id, salience) pairs in list order)`` as
        :func:`~compaction_audit.io.records.retained_pairs` and
        :func:`~compaction_audit.io.records.changed_saliences` give them; or None when
        the general path must decide (the state is then unchanged: it still holds the
        previous round)."""
        if not self._valid:
            return None
        cut = self.cut(raw)
        if cut is None:
            return None
        done = self._diff(cut[1], bootstrap=False)
        if done is None:
            self._failed()  # the next reset waits: this writer's lists may not suit
            return None
        self._backoff = 1
        self.reduced += 1
        _, entering, leaving, total, count, changed = done
        return cut[0], entering, leaving, total, count, changed

    @property
    def ids(self) -> set[str]:
        """The ids of the previous round's list (updated in place by :meth:`reduce`)."""
        return self._ids

    @property
    def table(self) -> dict[str, Any]:
        """``{id: salience}`` of the previous round's list (updated in place; a value
        equal to the new one is kept when only its text changed, ``1`` for ``1.0``)."""
        return self._table

    def _diff(self, body: bytes, bootstrap: bool
              ) -> tuple[set[str], set[str], set[str], float, int,
                         list[tuple[str, Any]]] | None:
        """Compare ``body`` (the pairs' text) with the previous round and, when every
        check holds, move the state to it.  Returns ``(ids, entering, leaving, sum,
        known, changed)`` (``ids`` only when ``bootstrap``, else an empty set)."""
        sep = self._sep
        mark = _MARK + sep
        pieces = body.split(mark)
        tail = pieces.pop().split(sep)
        current = set(pieces)
        if len(current) != len(pieces):
            return None  # a piece listed twice: a pair listed twice
        old_pieces = self._pieces
        plus_pieces = current.difference(old_pieces)
        if not bootstrap and len(plus_pieces) * _CHURN > len(pieces) + 8:
            return None
        minus_pieces = old_pieces.difference(current)
        # the pairs of the changed pieces and of the last (never cached) piece
        ordered = list(compress(pieces, map(plus_pieces.__contains__, pieces))) \
            if plus_pieces else []
        split = [(piece + _MARK).split(sep) for piece in ordered]
        new_list = [pair for parts in split for pair in parts]
        new_list.extend(tail)
        piece_pairs = self._piece_pairs
        old_list = [pair for piece in minus_pieces for pair in piece_pairs[piece]]
        old_list.extend(self._tail)
        new_set = set(new_list)
        if len(new_set) != len(new_list):
            return None
        old_set = set(old_list)
        plus = new_set - old_set
        minus = old_set - new_set
        pairs = self._pairs
        loads = orjson.loads
        decoded: list[tuple[bytes, str, Any]] = []
        for raw in new_list:
            if raw not in plus:
                continue
            try:
                pair = loads(b"[" + raw + b"]")
            except orjson.JSONDecodeError:
                return None
            if len(pair) != 2:
                return None
            item, salience = pair
            if type(item) is not str or not item or type(salience) not in _SALIENCE_TYPES:
                return None
            decoded.append((raw, item, salience))
        plus_ids = {d[1] for d in decoded}
        if len(plus_ids) != len(decoded):
            return None
        minus_ids = {pairs[raw][0] for raw in minus}
        entering = plus_ids - minus_ids
        if not entering.isdisjoint(self._ids):
            return None  # an id also in a pair that did not change
        leaving = minus_ids - plus_ids
        # every check passed: move the state to this round
        table = self._table
        changed = [(item, salience) for _, item, salience in decoded
                   if table.get(item, _ABSENT) != salience]
        nulls = self._nulls
        for raw in minus:
            if pairs.pop(raw)[1] is None:
                nulls -= 1
        for raw, item, salience in decoded:
            pairs[raw] = (item, salience)
            if salience is None:
                nulls += 1
        for item in leaving:
            del table[item]
        table.update(changed)
        ids = self._ids
        ids -= leaving
        ids |= entering
        values = self._piece_values
        for piece in minus_pieces:
            del values[piece], piece_pairs[piece]
        for piece, parts in zip(ordered, split, strict=True):
            values[piece] = [pairs[raw][1] for raw in parts]
            piece_pairs[piece] = parts
        self._pieces, self._tail, self._nulls = current, tail, nulls
        every = chain(chain.from_iterable(map(values.__getitem__, pieces)),
                      [pairs[raw][1] for raw in tail])
        if nulls:
            known = [v for v in every if v is not None]
            total, count = float(sum(known)), len(known)
        else:
            total, count = float(sum(every)), len(pairs)
        return (set(ids) if bootstrap else set()), entering, leaving, total, count, changed
