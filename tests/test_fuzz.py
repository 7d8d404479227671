"""Fuzzing the command line's contract (issue 11): native records, the Claude Code and
Codex adapters, and configuration files.

For every generated input, ``compaction-audit audit`` must exit 0, 1 or 2; on 2 print
exactly one line on standard error; never raise (no traceback); and take time and
memory bounded by the input's size (loosely: a generous wall-clock bound per example
and on the growth of the peak resident memory).  A separate test asserts that no
output carries a CI workflow command; it waits for the neutralization of sec-output.

The short budget runs with ``python -m pytest``; a longer one on demand::

    FUZZ_EXAMPLES=5000 python -m pytest -q tests/test_fuzz.py

(the number of examples per target; the long run is randomized, the short one is
derandomized so that CI is reproducible).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import zstandard
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.config import KEYS
from tests import ci_commands
from tests.logs import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "adapters"
SAMPLE = ROOT / "sample_logs" / "handwritten.jsonl"
LONG = "FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
FORMATS = ("text", "json", "github", "markdown", "junit", "sarif")

FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not LONG,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.large_base_example])

# -- the contract ------------------------------------------------------------------------
SECONDS_PER_EXAMPLE = 20.0
"""Wall-clock bound of one audit of a generated input (at most a few KB): generous, for
a shared machine; a superlinear path or a hang takes far longer."""
RSS_GROWTH_MB = 300
"""Bound of the growth of the peak resident memory during one example (MB), plus 1 KB
per input byte."""
def injected(text: str, own: bool = False) -> bool:
    """True when ``text`` holds a line a CI runner would execute (the independent
    checker :mod:`tests.ci_commands`: ``::name`` at a line start after whitespace,
    ``##[name]`` anywhere, Azure's and TeamCity's forms).  ``own``: ``text`` is the
    ``github`` format, whose own annotation lines are meant to run; with every
    ``::`` line flagged, the long fuzz run failed on the first github draw with a
    finding (adv17 F1)."""
    return bool(ci_commands.commands(text, own))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(args: list[str], size: int) -> tuple[int, str, str]:
    """Run the CLI in this process and check the contract; returns (code, out, err)."""
    before, start = _peak_mb(), time.monotonic()
    result = CliRunner().invoke(app, args)
    elapsed = time.monotonic() - start
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: raised {result.exception!r}")
    code, out, err = result.exit_code, result.stdout, result.stderr
    assert code in (0, 1, 2), (args, code, err)
    assert "Traceback" not in out + err
    assert "internal error" not in err, err
    if code == 2:
        assert err.startswith("compaction-audit: ") and err.count("\n") == 1, err
    assert elapsed < SECONDS_PER_EXAMPLE, (args, elapsed)
    assert _peak_mb() - before < RSS_GROWTH_MB + size / 1024, (args, _peak_mb() - before)
    return code, out, err


# -- values ------------------------------------------------------------------------------
HOSTILE = ["::error::x", "  ::stop-commands::tok", "##[add-mask]secret", "\x1b[31m", "\u202e",
           "\u2028", "\ufeff", "\r", "\x00", "a\nb"]
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12) \
    | st.sampled_from(HOSTILE)
IDS = st.sampled_from(["a", "b", "c", "s1", "f1", "f2", 7, ""]) | TEXT
SCALAR = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
          | st.floats(allow_nan=True, allow_infinity=True) | TEXT)
JSONISH = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
TOKENS = st.integers(-5, 2000) | st.sampled_from([0, 10**12, 10**12 + 1, 2**63]) | SCALAR
SALIENCE = st.floats(allow_nan=False, allow_infinity=False, min_value=-2, max_value=2) \
    | st.none() | SCALAR


def _opt(**fields: Any) -> Any:
    return fields


SPAN = st.fixed_dictionaries({"id": IDS, "tokens": TOKENS}, optional=_opt(
    text=TEXT, salience_class=st.sampled_from(["discriminating", "narrative"]) | SCALAR,
    source=JSONISH))
SUMMARY = st.fixed_dictionaries(
    {"id": IDS, "tokens": TOKENS, "children": st.lists(IDS, max_size=4) | SCALAR},
    optional=_opt(depth=st.integers(0, 4) | SCALAR, text=TEXT, accounting=JSONISH))
RETAINED = st.lists(st.tuples(IDS, SALIENCE).map(list)
                    | st.fixed_dictionaries({"id": IDS}, optional=_opt(salience=SALIENCE)),
                    max_size=6)
ROUND = st.fixed_dictionaries(
    {"type": st.just("round"), "round": st.integers(-1, 40) | SCALAR},
    optional=_opt(spans=st.lists(SPAN, max_size=4) | SCALAR,
                  summaries=st.lists(SUMMARY, max_size=3) | SCALAR,
                  retained=RETAINED | SCALAR, evicted=st.lists(IDS, max_size=3) | SCALAR,
                  offloaded=st.lists(IDS, max_size=3) | SCALAR,
                  budget_tokens=TOKENS, compaction=JSONISH,
                  logged=st.dictionaries(st.sampled_from(
                      ["raw_ratio", "query_cosine_retained", "distinct_source_spans",
                       "summary_depth_max"]), SCALAR, max_size=4) | SCALAR))
SESSION = st.fixed_dictionaries(
    {"type": st.just("session"), "schema": st.just("compaction-audit/1") | SCALAR},
    optional=_opt(session_id=IDS, budget_tokens=TOKENS, max_depth=st.integers(0, 5) | SCALAR,
                  eviction=st.sampled_from(["continuous", "on-overflow"]) | SCALAR,
                  scorer=JSONISH, recall_floor=st.integers(-1, 5) | SCALAR,
                  start_spans=st.integers(-1, 50) | SCALAR, task_query=TEXT))
VALID = [
    {"type": "session", "schema": "compaction-audit/1", "budget_tokens": 100, "max_depth": 3},
    {"type": "round", "round": 0, "spans": [{"id": "a", "tokens": 10}, {"id": "b", "tokens": 5},
                                            {"id": "c", "tokens": 7}],
     "retained": [["a", 0.5], ["b", 0.4], ["c", 0.1]]},
    {"type": "round", "round": 1, "summaries": [{"id": "f1", "tokens": 3,
                                                 "children": ["a", "b"]}],
     "retained": [["f1", 0.9], ["c", 0.1]], "offloaded": ["a", "b"]},
]
RECORD = ROUND | SESSION | st.sampled_from(VALID) | JSONISH


@st.composite
def framed(draw: st.DrawFn, lines: list[bytes]) -> tuple[bytes, str]:
    """``lines`` joined with a drawn line ending, maybe damaged, and a file suffix."""
    end = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    data = b"".join(line + end + draw(st.sampled_from([b"", b"", b"\n\n \t\n"]))
                    for line in lines)
    damage = draw(st.sampled_from(["none", "none", "truncate", "flip", "bom", "nul"]))
    if damage == "truncate" and data:
        data = data[:draw(st.integers(0, len(data) - 1))]
    elif damage == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
    elif damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "nul":
        data = data + b"\x00" * draw(st.integers(1, 64))
    suffix = draw(st.sampled_from([".jsonl", ".jsonl", ".jsonl", ".jsonl.gz", ".jsonl.zst"]))
    if suffix == ".jsonl.gz":
        data = gzip.compress(data)
    elif suffix == ".jsonl.zst":
        data = zstandard.ZstdCompressor().compress(data)
    if suffix != ".jsonl" and draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]  # a cut compressed stream
    return data, suffix


def _dump(value: Any, ascii_only: bool) -> bytes:
    """One JSON line (non-ASCII escaped or not: the reader must take both)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def native_logs(draw: st.DrawFn) -> tuple[bytes, str]:
    records = draw(st.lists(RECORD, max_size=8))
    if draw(st.booleans()):
        records = VALID + records
    ascii_only = draw(st.booleans())
    return draw(framed([_dump(r, ascii_only) for r in records]))


def _audit(tmp: Path, data: bytes, suffix: str, extra: list[str]) -> tuple[int, str, str]:
    path = tmp / f"trace{suffix}"
    path.write_bytes(data)
    return run(["audit", str(path), "--isolated", *extra], len(data))


OPTIONS = st.tuples(st.sampled_from(FORMATS), st.booleans())


def _options(opts: tuple[str, bool]) -> list[str]:
    fmt, lenient = opts
    return ["-f", fmt, *(["--lenient"] if lenient else [])]


@FUZZ
@given(log=native_logs(), opts=OPTIONS)
def test_fuzz_native_records(log: tuple[bytes, str], opts: tuple[str, bool]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _audit(Path(tmp), *log, _options(opts))


# -- adapters ----------------------------------------------------------------------------
ADAPTER_FILES = sorted(FIXTURES.glob("*.jsonl"))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) into a decoded JSON value."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


@st.composite
def mutated_fixture(draw: st.DrawFn) -> tuple[bytes, str]:
    source = draw(st.sampled_from(ADAPTER_FILES))
    records: list[Any] = [json.loads(line) for line in source.read_text().splitlines()
                          if line.strip()]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(records) - 1))
        action = draw(st.sampled_from(["set", "set", "delete", "drop", "duplicate", "swap"]))
        if action in ("set", "delete"):
            path = draw(st.sampled_from(_paths(records[i])))
            if not path:
                records[i] = draw(JSONISH)
                continue
            parent = records[i]
            for key in path[:-1]:
                parent = parent[key]
            if action == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(JSONISH | st.sampled_from(HOSTILE))
        elif action == "drop" and len(records) > 1:
            del records[i]
        elif action == "duplicate":
            records.insert(i, records[i])
        elif action == "swap":
            j = draw(st.integers(0, len(records) - 1))
            records[i], records[j] = records[j], records[i]
    ascii_only = draw(st.booleans())
    return draw(framed([_dump(r, ascii_only) for r in records]))


@FUZZ
@given(log=mutated_fixture(), opts=OPTIONS)
def test_fuzz_adapters(log: tuple[bytes, str], opts: tuple[str, bool]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _audit(Path(tmp), *log, _options(opts))


# -- configuration files -----------------------------------------------------------------
def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


TOML_SCALAR = (st.booleans() | st.integers(-(2**64), 2**64) | st.floats() | TEXT
               | st.sampled_from(["error", "warning", "info", "never", "ALL", "CA1", "CA101",
                                  "salience-inversion", "CA9"]))
TOML_VALUE = st.recursive(TOML_SCALAR, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.sampled_from(["a", "CA101", "x"]), inner,
                                            max_size=2), max_leaves=6)


@st.composite
def config_files(draw: st.DrawFn) -> tuple[str, bytes]:
    keys = st.sampled_from([*KEYS, *(k.replace("-", "_") for k in KEYS)]) | TEXT
    table = draw(st.dictionaries(keys, TOML_VALUE, max_size=5))
    body = "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in table.items())
    name = draw(st.sampled_from(["compaction-audit.toml", "pyproject.toml"]))
    if name == "pyproject.toml":
        body = draw(st.sampled_from(["[tool.compaction-audit]\n", "[tool]\n", ""])) + body
    depth = draw(st.sampled_from([0, 0, 3, 5000]))
    if depth:  # a valid but deeply nested array, maybe in an unrelated table
        where = draw(st.sampled_from(["", "[other]\n"]))
        body += f"{where}deep = {'[' * depth}{']' * depth}\n"
    data = body.encode("utf-8", "surrogatepass")
    if draw(st.booleans()) and data:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"[", b"\x00", b"\xff", b"= =", b"[[a]]",
                                                 b"[" * 600, b"\r"])) + data[at:]
    return name, data


@FUZZ
@given(config=config_files(), fmt=st.sampled_from(FORMATS))
def test_fuzz_config_files(config: tuple[str, bytes], fmt: str) -> None:
    name, data = config
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        run(["audit", str(SAMPLE), "--config", str(path), "-f", fmt], len(data))


# -- workflow commands -------------------------------------------------------------------
@st.composite
def hostile_logs(draw: st.DrawFn) -> tuple[bytes, str]:
    """The valid log with its ids and texts drawn from hostile strings, maybe followed
    by a bad record whose type is one."""
    names = draw(st.lists(st.sampled_from(HOSTILE) | TEXT, min_size=4, max_size=4,
                          unique=True).filter(lambda ids: "" not in ids))
    rename = dict(zip(["a", "b", "c", "f1"], names, strict=True))
    text = json.dumps(VALID)
    for old, new in rename.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    records = json.loads(text)
    for record in records[1:]:
        for item in record.get("spans", []) + record.get("summaries", []):
            item["text"] = draw(st.sampled_from(HOSTILE) | TEXT)
    records[0]["session_id"] = draw(st.sampled_from(HOSTILE))
    if draw(st.booleans()):
        records.append({"type": draw(st.sampled_from(HOSTILE))})
    return draw(framed([_dump(r, draw(st.booleans())) for r in records]))


@settings(FUZZ, max_examples=max(5, EXAMPLES // 5), phases=[Phase.explicit, Phase.generate])
@given(log=hostile_logs(), opts=OPTIONS)
@example(log=(b'{"type": "##[add-mask]secret"}\n', ".jsonl"), opts=("text", False))
def test_fuzz_no_output_carries_a_workflow_command(log: tuple[bytes, str],
                                                   opts: tuple[str, bool]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _, out, err = _audit(Path(tmp), *log, _options(opts))
    assert not injected(out, own=opts[0] == "github"), out
    assert not injected(err), err


def test_the_injection_checker_applies_the_runners_two_rules() -> None:
    assert injected("::error::x")
    assert injected("ok\n   ::set-output name=a::b")
    assert injected("text ##[add-mask]secret")
    assert not injected("a ::error::x")
    assert not injected('  "::error"')
    assert not injected("## [not a command]")
    ours = "::warning file=t.jsonl,line=7,title=skipped record::skipped: bad JSON"
    assert injected(ours) and not injected(ours, own=True)
    assert injected(ours + "\n::stop-commands::tok", own=True)
