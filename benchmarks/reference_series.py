"""Reference implementation of the per-round series of a ``compaction-audit/1`` log.

This is the plain, obvious version: the standard ``json`` module and loops over
items, written the way a reader of the research notes would first write it.  It
serves two purposes:

* the "pure Python" baseline of the benchmarks, and
* an independent oracle that the Polars implementation (``compaction_audit.series``)
  is tested against.

Clarity and exactness matter more than speed here.  Only a plain ``.jsonl`` path is
read, and nothing is validated beyond what the computation needs.

Every quantity follows ``log-format.md`` ("Derived quantities"):

``working set``
    the ``retained`` list of the round (object form ``{"id", "salience"}`` or pair
    form ``[id, salience]``); when ``retained`` is omitted, the previous working set
    plus this round's new spans and summaries, minus ``evicted`` and ``offloaded``
    (salience is then unknown for the whole round).  Integer ids are read as their
    decimal strings.
``depth``
    0 for a raw span, ``1 + max(depth of children)`` for a summary.
``resolvable at round t``
    a raw span that is in the working set at t, or that was offloaded at or before t
    and not evicted since.  An item that leaves the working set without being listed
    in ``evicted`` or ``offloaded`` (a *silent drop*) is not resolvable.  An item
    listed in both ``offloaded`` and ``evicted`` of one round ends evicted.
``reachable leaves``
    resolvable raw spans that are in ``leaves(x)`` for some ``x`` in the working set.
``rounds_at_max_depth``
    consecutive rounds ending at t at which ``summary_depth_max`` equals the cap:
    the session's ``max_depth``, else the largest depth of any summary in the session
    (the spec's "largest depth seen in the whole session"); 0 at every round when that
    cap is 0 (the session has no summary).

Usage::

    python benchmarks/reference_series.py LOG.jsonl   # one JSON object per round
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _id(value: Any) -> str:
    """Return an id as a string: an int id is read as its decimal string."""
    return str(value)


def _read_records(path: str) -> list[dict[str, Any]]:
    """Return the JSON objects of a plain ``.jsonl`` file, skipping blank lines."""
    records: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                records.append(json.loads(line))
    return records


def _retained_entries(retained: list[Any]) -> list[tuple[str, float | None]]:
    """Return ``(id, salience)`` for each entry of a ``retained`` list, in either form."""
    entries: list[tuple[str, float | None]] = []
    for entry in retained:
        if isinstance(entry, dict):
            item_id = _id(entry["id"])
            salience = entry.get("salience")
        else:
            item_id = _id(entry[0])
            salience = entry[1] if len(entry) > 1 else None
        entries.append((item_id, None if salience is None else float(salience)))
    return entries


def reference_series(path: str) -> list[dict[str, Any]]:
    """Compute the derived per-round quantities of the log at ``path``.

    Returns one dict per ``round`` record, in file order, with the keys ``round``,
    ``raw_tokens`` and ``summary_tokens`` (token sums over the working set),
    ``raw_ratio`` (0.0 when the working set holds no tokens), ``summary_to_raw``
    (None when ``raw_tokens`` is 0), ``summary_depth_max`` (0 without summaries),
    ``rounds_at_max_depth`` (rounds), ``distinct_source_spans`` (number of reachable
    leaves), ``query_cosine_retained`` (mean known salience, None when no salience
    is known) and ``ungrounded_summaries`` (number of summaries in the working set
    with no reachable leaf).
    """
    records = _read_records(path)

    session_cap: int | None = None
    for record in records:
        if record.get("type") == "session" and record.get("max_depth") is not None:
            session_cap = int(record["max_depth"])

    # Definitions, filled as rounds are read (children are defined earlier).
    tokens: dict[str, int] = {}
    is_summary: dict[str, bool] = {}
    depth: dict[str, int] = {}
    leaves: dict[str, set[str]] = {}

    working_set: dict[str, float | None] = {}  # id -> salience, in log order
    in_store: set[str] = set()  # offloaded and not evicted since
    rows: list[dict[str, Any]] = []
    rounds = [record for record in records if record.get("type") == "round"]

    for record in rounds:
        # Definitions first: this round's summaries may fold its own new spans.
        new_ids: list[str] = []
        for span in record.get("spans") or []:
            span_id = _id(span["id"])
            new_ids.append(span_id)
            tokens[span_id] = int(span["tokens"])
            is_summary[span_id] = False
            depth[span_id] = 0
            leaves[span_id] = {span_id}
        for summary in record.get("summaries") or []:
            summary_id = _id(summary["id"])
            new_ids.append(summary_id)
            children = [_id(child) for child in summary["children"]]
            tokens[summary_id] = int(summary["tokens"])
            is_summary[summary_id] = True
            depth[summary_id] = 1 + max(depth[child] for child in children)
            summary_leaves: set[str] = set()
            for child in children:
                summary_leaves.update(leaves[child])
            leaves[summary_id] = summary_leaves
        evicted = [_id(item) for item in record.get("evicted") or []]
        offloaded = [_id(item) for item in record.get("offloaded") or []]

        # The working set after this round's eviction pass, with saliences.
        new_working_set: dict[str, float | None] = {}
        if record.get("retained") is not None:
            for item_id, value in _retained_entries(record["retained"]):
                new_working_set[item_id] = value
        else:
            # Salience is unknown for the whole round.
            removed = set(evicted) | set(offloaded)
            for item_id in list(working_set) + new_ids:
                if item_id not in removed:
                    new_working_set[item_id] = None

        # The external store: offloaded items join it, evicted items leave it for
        # good.  Items that left the working set without being listed (silent drops)
        # never join it, so they are not resolvable.
        for item_id in offloaded:
            in_store.add(item_id)
        for item_id in evicted:
            in_store.discard(item_id)
        working_set = new_working_set

        raw_tokens = 0
        summary_tokens = 0
        depth_max = 0
        for item_id in working_set:
            if is_summary[item_id]:
                summary_tokens += tokens[item_id]
                if depth[item_id] > depth_max:
                    depth_max = depth[item_id]
            else:
                raw_tokens += tokens[item_id]

        reachable: set[str] = set()
        ungrounded = 0
        for item_id in working_set:
            grounded = False
            for leaf in leaves[item_id]:
                # resolvable: in the working set, or offloaded and not evicted since
                if leaf in working_set or leaf in in_store:
                    reachable.add(leaf)
                    grounded = True
            if is_summary[item_id] and not grounded:
                ungrounded += 1

        known = [value for value in working_set.values() if value is not None]
        query_cosine = sum(known) / len(known) if known else None

        total = raw_tokens + summary_tokens

        rows.append(
            {
                "round": int(record["round"]),
                "raw_tokens": raw_tokens,
                "summary_tokens": summary_tokens,
                "raw_ratio": 0.0 if total == 0 else raw_tokens / total,
                "summary_to_raw": None if raw_tokens == 0 else summary_tokens / raw_tokens,
                "summary_depth_max": depth_max,
                "rounds_at_max_depth": 0,  # filled below, once the cap is known
                "distinct_source_spans": len(reachable),
                "query_cosine_retained": query_cosine,
                "ungrounded_summaries": ungrounded,
            }
        )

    # The cap: the session's max_depth, else the largest depth seen in the whole
    # session (any summary written, retained or not).  A session without summaries has
    # cap 0 and never counts.
    if session_cap is not None:
        cap = session_cap
    else:
        cap = 0
        for item_depth in depth.values():
            if item_depth > cap:
                cap = item_depth
    rounds_at_cap = 0
    for row in rows:
        if cap > 0 and row["summary_depth_max"] == cap:
            rounds_at_cap += 1
        else:
            rounds_at_cap = 0
        row["rounds_at_max_depth"] = rounds_at_cap
    return rows


def main(argv: list[str]) -> int:
    """Print the series of the log named in ``argv`` as JSON lines."""
    if len(argv) != 1:
        print("usage: python benchmarks/reference_series.py LOG.jsonl", file=sys.stderr)
        return 2
    for row in reference_series(argv[0]):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
