"""Reducing ``retained`` on its bytes (io/retained_bytes.py) gives the decoding helper's
messages exactly as decoding every list whole does, on every shape of list: separators
with or without spaces, the same pair written with other bytes (escapes, number forms),
ids holding the separators, pairs listed twice, nested or repeated keys, nulls, booleans,
integer ids, every salience changing, rounds without ``retained``, bad lines."""

from __future__ import annotations

import json
import marshal
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from compaction_audit.errors import LogError
from compaction_audit.io import parallel, reduce
from compaction_audit.io.lines import decode_lines, iter_lines
from compaction_audit.io.native import read_lines_strict, read_native, read_records
from compaction_audit.io.retained_bytes import RetainedBytes
from compaction_audit.model import Session
from compaction_audit.series import build_series
from compaction_audit.simulate.scale import write_scale_session
from tests.logs import ROOT


def _messages(path: Path, differ: RetainedBytes | None, start: int = 0,
              stop: int = -1) -> list[Any]:
    frames: list[bytes] = []
    reduce.reduce_lines(str(path), frames.append, start, stop, batch_bytes=1 << 12,
                     differ=differ)
    return [m for frame in frames for m in marshal.loads(frame[8:])]


def _same(path: Path, start: int = 0, stop: int = -1) -> RetainedBytes:
    differ = RetainedBytes()
    assert _messages(path, differ, start, stop) == _messages(path, None, start, stop)
    return differ


def _pair(item: str, salience: Any, rng: random.Random, forms: bool) -> str:
    text = json.dumps(item)
    if forms and rng.random() < 0.05:  # the same id with an escape: other bytes
        text = f'"\\u{ord(item[0]):04x}' + json.dumps(item)[2:]
    if salience is None or type(salience) is bool:
        value = json.dumps(salience)
    elif forms and rng.random() < 0.05 and type(salience) is float:
        value = rng.choice([repr(salience) + "0", f"{salience:.6e}"])
    else:
        value = repr(salience)
    return f"[{text},{value}]"


def _body(pairs: list[str], sep: str) -> str:
    """The list's text: ``[[`` pairs joined by ``sep`` ``]]``."""
    return "[[" + sep.join(p[1:-1] for p in pairs) + "]]"


def _session(path: Path, seed: int, rounds: int = 40, size: int = 60, *,
             spaced: bool = False, forms: bool = False, churn: float = 0.0,
             hostile: bool = False) -> None:
    """A stream of round lines whose ``retained`` changes a little each round (or all
    of it, with ``churn``); ``hostile`` mixes in every unusual shape."""
    rng = random.Random(seed)
    names = [f"span-{i:05d}" for i in range(size)]
    if hostile:
        names[3], names[7], names[11] = "a],[b", "x3],[y", "tail]]"
    ws: list[list[Any]] = [[n, round(rng.random(), 4)] for n in names]
    ws[1][1], ws[2][1] = None, 1  # from the first round: a null and an integer
    fresh = size
    sep = "], [" if spaced else "],["
    lines = ['{"type":"session","schema":"compaction-audit/1"}']
    for r in range(rounds):
        for _ in range(rng.randint(0, 4)):
            if len(ws) > 5:
                ws.pop(rng.randrange(len(ws)))
        for _ in range(rng.randint(0, 4)):
            ws.append([f"span-{fresh:05d}", round(rng.random(), 4)])
            fresh += 1
        for pair in ws:
            if rng.random() < churn:
                pair[1] = round(rng.random(), 4)
        if rng.random() < 0.1:
            rng.choice(ws)[1] = rng.choice([None, 1, 0.0, -0.0, 2.5])
        pairs = [_pair(i, s, rng, forms) for i, s in ws]
        extra = ""
        if hostile:
            kind = rng.randrange(15)
            if kind == 0:
                pairs.append(pairs[rng.randrange(len(pairs))])  # a pair listed twice
            elif kind == 1:
                pairs.append(f"[{json.dumps(ws[0][0])},0.123]")  # an id listed twice
            elif kind == 2:
                pairs[rng.randrange(len(pairs))] = '["span-00001",true]'
            elif kind == 3:
                pairs[rng.randrange(len(pairs))] = "[12345,0.5]"  # an integer id
            elif kind == 4:
                extra = '"compaction":{"retained":[["nested",1]]},'
            elif kind == 5:  # a repeated key: the last one counts
                lines.append(f'{{"type":"round","round":{r},"retained":{_body(pairs, sep)},'
                             '"retained":[]}')
                continue
            elif kind == 6:
                lines.append(f'{{"type":"round","round":{r}}}')  # no retained
                continue
            elif kind == 7:
                lines.append(f'{{"type":"round","round":{r},"retained":[')  # bad JSON
                continue
            elif kind == 8:
                lines.append(f'{{"type":"note","retained":{_body(pairs, sep)}}}')
                continue
            elif kind == 9:
                pairs[rng.randrange(len(pairs))] = '["", 0.5]'
            elif kind == 10:
                pairs[-1] = pairs[-1][:-1] + ",7]"  # three elements
            elif kind == 12:  # a whole piece (pairs up to one ending in 3) listed twice
                ends = [k for k, p in enumerate(pairs[:-1]) if p.endswith("3]")]
                if len(ends) >= 2:
                    pairs[ends[1] + 1:ends[1] + 1] = pairs[ends[0] + 1:ends[1] + 1]
            elif kind == 11:
                pairs = [*pairs[:1], '["span-99999",1e308]', '["span-99998",1e308]']
        space = " " if spaced else ""
        lines.append(f'{{"type":"round","round":{r},{extra}"retained":{space}'
                     f'{_body(pairs, sep)}}}')
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("spaced", [False, True])
def test_a_list_changing_a_little_is_reduced_on_its_bytes(tmp_path: Path,
                                                         spaced: bool) -> None:
    path = tmp_path / "steady.jsonl"
    _session(path, 1, spaced=spaced)
    differ = _same(path)
    assert differ.reduced >= 30  # the byte path did the work, not the general one


@pytest.mark.parametrize("seed", range(12))
def test_other_bytes_for_the_same_pairs_give_the_same_messages(tmp_path: Path,
                                                               seed: int) -> None:
    path = tmp_path / "forms.jsonl"
    _session(path, seed, forms=True, spaced=seed % 2 == 1)
    assert _same(path).reduced > 0


@pytest.mark.parametrize("seed", range(24))
def test_hostile_lists_give_the_same_messages(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "hostile.jsonl"
    _session(path, seed, rounds=60, hostile=True, forms=seed % 3 == 0)
    _same(path)
    # and from a line in the middle, as the second helper reads
    raw = path.read_bytes()
    middle = raw.index(b"\n", len(raw) // 2) + 1
    _same(path, middle)
    _same(path, 0, middle)


def test_every_salience_changing_is_left_to_the_general_path(tmp_path: Path) -> None:
    path = tmp_path / "churn.jsonl"
    _session(path, 5, rounds=30, size=400, churn=1.0)
    assert _same(path).reduced == 0


def test_a_list_that_is_not_the_records_own_is_never_taken(tmp_path: Path) -> None:
    differ = RetainedBytes()
    line = b'{"type":"round","compaction":{"retained":[["a",1]]},"round":1}\n'
    assert differ.cut(line) is None  # nested: the record itself has no retained
    cut = differ.cut(b'{"type":"round","retained": [["a",1], ["b",null]],"x":[2]}\n')
    assert cut == ({"type": "round", "x": [2]}, b'"a",1], ["b",null')
    # a later field ending in ]]: the cut is a candidate, whose pairs do not parse
    cut = differ.cut(b'{"type":"round","retained":[["a",1]],"x":[[2]]}\n')
    assert cut == ({"type": "round"}, b'"a",1]],"x":[[2')
    steady = '{"type":"round","round":%d,"retained":[["a",1],["b",%d]]}'
    odd = ['{"type":"round","round":3,"retained":[["a",1],["b",2]],"x":[["c",3]]}',
           '{"type":"round","round":5,"compaction":{"retained":[["a",1]]}}',
           '{"type":"round","round":7,"compaction":{"retained":[["a",1],["b",2]]},'
           '"retained":[["b",2]]}']
    lines = [steady % (r, r) for r in (0, 1, 2)] + odd[:1] + [steady % (4, 4)] + odd[1:2]
    lines += [steady % (6, 6), *odd[2:], steady % (8, 8), steady % (9, 9)]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines) + "\n")
    messages = _messages(path, None)
    # on their bytes: rounds 1, 2 and 6; round 3 (its cut ends in x) and round 7 (its
    # first "retained" is nested) are decoded whole, and each costs a round of waiting
    assert _same(path).reduced == 3
    kinds = {m[0]: m[1] for m in messages}
    assert [kinds[n] for n in (4, 6, 8)] == [reduce.MSG_REDUCED, reduce.MSG_RECORD,
                                              reduce.MSG_REDUCED]


def test_the_scale_generator_is_read_alike_with_and_without_helpers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "scale.jsonl"
    write_scale_session(path, rounds=60, working_set=400, seed=3, texts=False)
    assert _same(path).reduced >= 50
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1 << 62)
    plain = read_native(str(path))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    helped = read_native(str(path))
    for table in ("rounds", "items", "edges", "events", "salience", "membership"):
        assert getattr(helped, table).equals(getattr(plain, table)), table


def _edits() -> dict[str, Any]:
    """One change to round 30 of a scale session (or to every round), by name."""

    def respell(o: dict[str, Any]) -> None:  # the same values, other bytes
        o["retained"] = [[i, s] for i, s in o["retained"]]
        o["retained"][5][1] = float(o["retained"][5][1] or 0)

    def duplicate(o: dict[str, Any]) -> None:
        o["retained"].append(o["retained"][0])

    def twice(o: dict[str, Any]) -> None:
        o["retained"].append([o["retained"][0][0], 0.5])

    def unknown(o: dict[str, Any]) -> None:
        o["retained"].append(["never-defined", 0.5])

    def boolean(o: dict[str, Any]) -> None:
        o["retained"][3][1] = True

    def clash(o: dict[str, Any]) -> None:
        o["evicted"] = [*o.get("evicted", []), o["retained"][0][0]]

    def null(o: dict[str, Any]) -> None:
        o["retained"][-1][1] = None

    def dropped(o: dict[str, Any]) -> None:  # leaves without an event: later an error
        del o["retained"][7]

    def delta(o: dict[str, Any]) -> None:  # no list: the next round is decoded whole
        del o["retained"]

    def huge(o: dict[str, Any]) -> None:
        o["retained"][0][1] = o["retained"][1][1] = 1e308

    return {"none": None, "respell": respell, "duplicate": duplicate, "twice": twice,
            "unknown": unknown, "boolean": boolean, "clash": clash, "null": null,
            "dropped": dropped, "delta": delta, "huge": huge}


@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("edit", list(_edits()))
def test_the_plain_reader_reduces_alike(tmp_path: Path, edit: str, spaced: bool) -> None:
    """read_native without helpers (strict) against decoding every line whole."""
    source = tmp_path / "scale.jsonl"
    write_scale_session(source, rounds=45, working_set=300, seed=7, texts=False)
    lines = source.read_bytes().splitlines(keepends=True)
    change = _edits()[edit]
    rounds = [i for i, line in enumerate(lines) if b'"type":"round"' in line]
    for i in rounds:
        obj = orjson.loads(lines[i])
        if change is not None and i == rounds[30]:
            change(obj)
        lines[i] = (json.dumps(obj).encode() if spaced else orjson.dumps(obj)) + b"\n"
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"".join(lines))

    def whole() -> Session | str:
        try:
            return read_records(decode_lines(str(path), iter_lines(str(path)), False, []),
                                str(path))
        except LogError as exc:
            return str(exc)

    def reduced() -> Session | str:
        try:
            return read_lines_strict(str(path), iter_lines(str(path)))
        except LogError as exc:
            return str(exc)

    plain, ours = whole(), reduced()
    if isinstance(plain, str):  # the same first error, word for word
        assert ours == plain
        assert edit not in {"none", "respell", "null", "delta"}
        return
    assert isinstance(ours, Session)
    for table in ("rounds", "items", "edges", "events", "salience", "membership"):
        assert getattr(ours, table).equals(getattr(plain, table)), table
    assert build_series(ours).frame.equals(build_series(plain).frame)


_REPORT = """
import sys
from compaction_audit.io import parallel
parallel.PARALLEL_MIN_BYTES = 0 if sys.argv[2] == "helpers" else 1 << 62
import orjson
from compaction_audit.api import audit
from compaction_audit.io.native import read_native
rows = read_native(sys.argv[1]).membership.rows()
values = [f.values["rank_correlation"] for f in audit(sys.argv[1]).findings
          if "rank_correlation" in (f.values or {})]
sys.stdout.buffer.write(orjson.dumps([rows, values]))
"""


def test_membership_and_what_sums_over_it_ignore_the_hash_seed_and_reader(
        tmp_path: Path) -> None:
    """Membership intervals close in set order; the reader sorts them, so CA204's rank
    correlation (floats summed in row order) does not move in its last bits with
    PYTHONHASHSEED or the reading path (it did: three seeds, three values)."""
    path = tmp_path / "texts.jsonl"
    write_scale_session(path, rounds=60, working_set=300, seed=4, texts=True)
    outputs = set()
    for seed, mode in (("1", "plain"), ("2", "plain"), ("3", "helpers")):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _REPORT, str(path), mode], cwd=ROOT,
                              env=env, capture_output=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    rows, values = orjson.loads(outputs.pop())
    assert len(rows) > 300 and len(values) > 10
