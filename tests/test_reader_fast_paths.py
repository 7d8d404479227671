"""The reader's column-at-a-time fast paths (issue 14) accept exactly what the
per-item checks accept, and leave the same tables.

Each generated log is read twice: as shipped, and with the fast paths turned off
(``span_columns`` always per span, ``_references_hold`` always False, so every
reference goes through the per-id loop).  Both must raise the same one-line error or
build equal tables.  The logs are random rounds over a small id space: new spans
(sometimes with a bad field), folds of earlier ids, and evictions and offloads drawn
from every kind of id (in the working set, in the store, gone, never defined).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import records as rec
from compaction_audit.io.native import SessionBuilder, read_native
from tests.logs import dump, rnd, session

_BAD_SPANS: list[dict[str, Any]] = [
    {"id": "", "tokens": 3}, {"id": "x", "tokens": -1}, {"id": "x", "tokens": True},
    {"id": "x", "tokens": 3, "salience_class": "loud"}, {"tokens": 3},
    {"id": "x", "tokens": 3, "text": 7}, {"id": 41, "tokens": 3},
    {"id": "x", "tokens": 3, "source": {"tool": "shell"}}, {"id": "x"},
    {"id": "x", "tokens": rec.MAX_TOKENS + 1},
    {"id": "x", "tokens": 3, "role": "User"}, {"id": "x", "tokens": 3, "role": 7},
]


def _log(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [session(session_id=f"fast-{seed}")]
    ws: list[str] = []
    store: list[str] = []
    seen: list[str] = []
    delta = rng.random() < 0.5
    n = 0
    for t in range(rng.randrange(2, 9)):
        spans: list[dict[str, Any]] = []
        for _ in range(rng.randrange(0, 5)):
            n += 1
            sid = f"s{n}"
            if rng.random() < 0.04:
                bad = dict(rng.choice(_BAD_SPANS))
                if bad.get("id") == "x":
                    bad["id"] = sid
                spans.append(bad)
            else:
                spans.append({"id": sid, "tokens": rng.randrange(0, 50),
                              "text": rng.choice([None, "a note"]),
                              "salience_class": rng.choice([None, "narrative"]),
                              "source": rng.choice([None, "user", "msg-1", "tool:shell"]),
                              "role": rng.choice([None, None, "user", "system", "tool",
                                                  "assistant"])})
            seen.append(sid)
        if rng.random() < 0.05 and seen:
            spans.append({"id": rng.choice(seen), "tokens": 1})  # a duplicate id
        # mostly valid references; now and then one from anywhere (gone, undefined)
        evicted = rng.sample(ws + store, min(len(ws + store), rng.randrange(0, 3)))
        offloaded = [i for i in rng.sample(ws, min(len(ws), rng.randrange(0, 3)))
                     if i not in evicted]
        if rng.random() < 0.15:
            rng.choice((evicted, offloaded)).append(rng.choice([*seen, *store, "ghost"]))
        summaries = []
        if len(ws) >= 2 and rng.random() < 0.4:
            n += 1
            children = rng.sample(ws, 2)
            if rng.random() < 0.3:  # a child new in this record, undefined, or itself
                children.append(rng.choice([*(s.get("id", "ghost") for s in spans),
                                            "ghost", f"f{n}"]))
            summaries.append({"id": f"f{n}", "tokens": 5, "children": children})
            if rng.random() < 0.2:  # a second fold over the first one
                n += 1
                summaries.append({"id": f"f{n}", "tokens": 2,
                                  "children": [summaries[-1]["id"], rng.choice(ws)]})
            offloaded += [c for c in children if c not in offloaded and c not in evicted]
        spans_ok = all(isinstance(s.get("id"), str) for s in spans)
        if not spans_ok:
            seen = [i for i in seen if i not in ws]
        new = [s["id"] for s in spans if isinstance(s.get("id"), str)]
        removed = set(evicted) | set(offloaded)
        ws = [i for i in ws + new + [f["id"] for f in summaries] if i not in removed]
        store = [i for i in store + offloaded if i not in evicted]
        extra: dict[str, Any] = {}
        if not delta:
            extra["retained"] = [[i, 0.5] for i in ws]
        out.append(rnd(t, spans=spans, summaries=summaries, evicted=evicted,
                       offloaded=offloaded, **extra))
    return out


def _read(path: Path) -> tuple[str, Any]:
    try:
        s = read_native(str(path))
    except LogError as exc:
        return "error", str(exc)
    tables = {name: getattr(s, name).sort(getattr(s, name).columns, nulls_last=True)
              .to_dicts() for name in ("items", "edges", "membership", "events", "salience")}
    return "ok", (tables, s.rounds.to_dicts())


@pytest.mark.parametrize("seed", range(150))
def test_fast_paths_match_the_per_item_checks(seed: int, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = dump(_log(seed), tmp_path / "t.jsonl")
    fast = _read(path)
    monkeypatch.setattr(rec, "_span_columns_fast", lambda value, lines: None)
    monkeypatch.setattr(SessionBuilder, "_references_hold", lambda self, *a: False)
    slow = _read(path)
    assert fast == slow


def test_the_generated_logs_reach_both_outcomes(tmp_path: Path) -> None:
    outcomes = {_read(dump(_log(seed), tmp_path / f"{seed}.jsonl"))[0] for seed in range(150)}
    assert outcomes == {"ok", "error"}
