"""The compaction-loop simulator: determinism, valid logs, and the calibrated presets.

The preset properties are checked with the independent pure-Python reference series
(``benchmarks/reference_series.py``), not with the package's own series code.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
import typer
from typer.testing import CliRunner

from compaction_audit.commands.simulate import Preset, simulate_command
from compaction_audit.simulate import PRESETS, SimParams, scale_params, simulate, write_session

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

from reference_series import reference_series  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"

RAW_RATIO_FLOOR = 0.25  # seed 000, "Decision Boundary"
SPAN_FLOOR_FRACTION = 0.20  # seed 000, SPAN_FLOOR_FRACTION
MAX_DEPTH_PIN_ROUNDS = 5  # seed 000, MAX_DEPTH_PIN_ROUNDS
SUSTAIN_ONSET = 3  # rules.md, inversion onset


# --------------------------------------------------------------------------- helpers


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def preset_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("presets")
    paths = {}
    for name, params in PRESETS.items():
        paths[name] = folder / f"{name}.jsonl"
        write_session(params, paths[name])
    return paths


@pytest.fixture(scope="module")
def series(preset_logs: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    return {name: reference_series(str(path)) for name, path in preset_logs.items()}


def _fell(rows: list[dict[str, Any]], i: int) -> bool:
    return bool(rows[i]["distinct_source_spans"] < rows[i - 1]["distinct_source_spans"])


def _rose(rows: list[dict[str, Any]], i: int) -> bool:
    now, before = rows[i]["query_cosine_retained"], rows[i - 1]["query_cosine_retained"]
    return now is not None and before is not None and now > before


def inversion_rounds(rows: list[dict[str, Any]]) -> list[int]:
    """Rounds at which the salience-inversion condition holds (rules.md)."""
    return [
        rows[i]["round"]
        for i in range(1, len(rows))
        if rows[i]["summary_depth_max"] >= 2
        and rows[i]["raw_ratio"] < RAW_RATIO_FLOOR
        and _fell(rows, i)
        and _rose(rows, i)
    ]


def inversion_onset(rows: list[dict[str, Any]]) -> int | None:
    """First round of the first run of SUSTAIN_ONSET rounds with the inversion
    signature (depth >= 2, spans falling, salience rising), or None."""
    run = 0
    for i in range(1, len(rows)):
        signature = rows[i]["summary_depth_max"] >= 2 and _fell(rows, i) and _rose(rows, i)
        run = run + 1 if signature else 0
        if run == SUSTAIN_ONSET:
            return int(rows[i - SUSTAIN_ONSET + 1]["round"])
    return None


def span_floor(rows: list[dict[str, Any]]) -> int:
    return max(1, math.floor(SPAN_FLOOR_FRACTION * int(rows[0]["distinct_source_spans"])))


def check_valid(records: list[dict[str, Any]], *, accounted: bool = False) -> None:
    """Assert that ``records`` form a valid, drop-free compaction-audit/1 session."""
    assert records[0]["type"] == "session"
    assert records[0]["schema"] == "compaction-audit/1"
    depth: dict[str, int] = {}
    ws: set[str] = set()
    store: set[str] = set()
    last_round = -1
    for record in records[1:]:
        assert record["type"] == "round"
        assert record["round"] > last_round
        last_round = record["round"]
        new: list[str] = []
        for span in record["spans"]:
            assert span["id"] not in depth, f"duplicate id {span['id']}"
            assert isinstance(span["tokens"], int) and span["tokens"] >= 0
            assert span["text"] and span["salience_class"] in ("discriminating", "narrative")
            depth[span["id"]] = 0
            new.append(span["id"])
        for summary in record["summaries"]:
            assert summary["id"] not in depth, f"duplicate id {summary['id']}"
            assert summary["children"] and all(c in depth for c in summary["children"])
            assert summary["depth"] == 1 + max(depth[c] for c in summary["children"])
            assert isinstance(summary["tokens"], int) and summary["tokens"] >= 0
            assert summary["text"]
            if accounted:
                assert summary["accounting"]
            depth[summary["id"]] = summary["depth"]
            new.append(summary["id"])
        retained = [entry[0] for entry in record["retained"]]
        assert all(len(entry) == 2 for entry in record["retained"])
        assert all(round(entry[1], 4) == entry[1] for entry in record["retained"])
        assert len(set(retained)) == len(retained)
        assert all(item in depth for item in retained)
        evicted, offloaded = set(record["evicted"]), set(record["offloaded"])
        assert not (evicted | offloaded) & set(retained)
        assert not evicted & offloaded
        before = ws | set(new)
        assert offloaded <= before
        assert evicted <= before | store
        # No silent drop: whatever left the working set is listed.
        assert before - set(retained) <= evicted | offloaded
        store = (store | offloaded) - evicted
        ws = set(retained)


# --------------------------------------------------------------------------- API


def test_presets_are_the_named_runs() -> None:
    assert list(PRESETS) == ["research-decay", "research-no-decay", "research-provenance",
                             "survivability-scorer", "delta-text"]
    assert [p.value for p in Preset] == list(PRESETS)
    decay, no_decay, provenance = list(PRESETS.values())[:3]
    assert (decay.rounds, decay.budget_tokens, decay.max_depth) == (40, 180_000, 3)
    assert decay.recency_decay > 0 and not decay.enforce_provenance
    assert replace(no_decay, recency_decay=decay.recency_decay, session_id="x") == replace(
        decay, session_id="x"
    )
    assert no_decay.recency_decay == 0
    assert provenance.enforce_provenance and provenance.max_depth == 2


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    params = replace(PRESETS["research-decay"], rounds=12)
    write_session(params, tmp_path / "a.jsonl")
    write_session(params, tmp_path / "b.jsonl")
    write_session(replace(params, seed=params.seed + 1), tmp_path / "c.jsonl")
    a = (tmp_path / "a.jsonl").read_bytes()
    assert a == (tmp_path / "b.jsonl").read_bytes()
    assert a != (tmp_path / "c.jsonl").read_bytes()
    assert a.endswith(b"\n") and a.count(b"\n") == 13


def test_session_record() -> None:
    record = next(iter(simulate(PRESETS["research-decay"])))
    assert record == {
        "type": "session",
        "schema": "compaction-audit/1",
        "session_id": "research-decay",
        "budget_tokens": 180_000,
        "max_depth": 3,
        "eviction": "continuous",
        "scorer": {"kind": "embedding-cosine", "recency_decay": 0.045, "depth_penalty": 0},
        "task_query": PRESETS["research-decay"].task_query,
        "recall_floor": 1,
        "simulator": {"seed": 30, "enforce_provenance": False},
    }


@pytest.mark.parametrize(
    "change",
    [
        {"rounds": 0},
        {"budget_tokens": 0},
        {"max_depth": 0},
        {"recency_decay": -0.1},
        {"recency_decay": math.nan},
        {"fanout": 1},
        {"compression": (0.5, 1.0)},
        {"topic_relevance": (0.5,)},
    ],
)
def test_parameters_out_of_range_raise(change: dict[str, Any]) -> None:
    params = replace(SimParams(), **change)
    with pytest.raises(ValueError, match=next(iter(change))):
        list(simulate(params))


def test_scale_params_run_and_stay_valid() -> None:
    params = scale_params(rounds=6, working_set=400)
    assert params.budget_tokens == 400_000 and not params.texts and not params.log_aggregates
    records = list(simulate(params))
    assert len(records) == 7
    ids = [span["id"] for r in records[1:] for span in r["spans"]]
    assert len(ids) == len(set(ids))
    assert all("logged" not in r for r in records[1:])


# --------------------------------------------------------------------------- validity


WITH_RETAINED = [name for name, p in PRESETS.items() if not p.delta_mode]


@pytest.mark.parametrize("name", WITH_RETAINED)
def test_preset_logs_are_valid(name: str, preset_logs: dict[str, Path]) -> None:
    path = preset_logs[name]
    assert path.stat().st_size < 2_000_000
    check_valid(_records(path), accounted=PRESETS[name].enforce_provenance)


@pytest.mark.parametrize("name", list(PRESETS))
def test_committed_samples_match_the_presets(name: str, preset_logs: dict[str, Path]) -> None:
    assert (SAMPLES / f"{name}.jsonl").read_bytes() == preset_logs[name].read_bytes()


def test_delta_mode_is_the_same_run_without_retained(tmp_path: Path) -> None:
    """delta-text is research-decay's loop with ``retained`` (and the logged salience
    aggregate) left out: every other byte of every record is the same."""
    full = tmp_path / "full.jsonl"
    write_session(replace(PRESETS["delta-text"], delta_mode=False), full)
    delta = _records(SAMPLES / "delta-text.jsonl")
    for whole, short in zip(_records(full), delta, strict=True):
        assert "retained" not in short
        whole.pop("retained", None)
        if "logged" in whole:
            whole["logged"]["query_cosine_retained"] = None
        assert whole == short


@pytest.mark.parametrize("name", WITH_RETAINED)
def test_logged_aggregates_are_mostly_correct(
    name: str, preset_logs: dict[str, Path], series: dict[str, list[dict[str, Any]]]
) -> None:
    rounds = _records(preset_logs[name])[1:]
    exact_raw_ratio = 0
    for record, row in zip(rounds, series[name], strict=True):
        logged = record["logged"]
        assert logged["distinct_source_spans"] == row["distinct_source_spans"]
        assert logged["summary_depth_max"] == row["summary_depth_max"]
        assert logged["query_cosine_retained"] == pytest.approx(
            row["query_cosine_retained"], abs=1e-4
        )
        exact_raw_ratio += abs(logged["raw_ratio"] - row["raw_ratio"]) < 1e-4
    assert exact_raw_ratio >= 0.85 * len(rounds)


# --------------------------------------------------------------------------- (a) (b) (c)


def test_decay_run_crosses_the_inversion_boundary(series: dict[str, list[dict[str, Any]]]) -> None:
    rows = series["research-decay"]
    assert inversion_rounds(rows), "salience inversion never holds"
    # Depth 3 (the cap) by about round 12, then pinned for more than 5 rounds.
    first_cap = next(r["round"] for r in rows if r["summary_depth_max"] == 3)
    assert first_cap <= 14
    assert max(r["rounds_at_max_depth"] for r in rows) > MAX_DEPTH_PIN_ROUNDS
    # Provenance degrades: below the span floor, or some summary ungrounded late.
    late_ungrounded = any(r["ungrounded_summaries"] > 0 for r in rows[len(rows) // 2 :])
    below_floor = any(r["distinct_source_spans"] < span_floor(rows) for r in rows)
    assert late_ungrounded or below_floor
    # The seed 000 shape: raw_ratio falls a long way while retained salience rises.
    assert rows[0]["raw_ratio"] > 0.6 and min(r["raw_ratio"] for r in rows) < 0.12
    assert rows[-1]["distinct_source_spans"] < 0.5 * rows[0]["distinct_source_spans"]
    assert max(r["query_cosine_retained"] for r in rows) > rows[0]["query_cosine_retained"] + 0.1


def test_removing_the_decay_delays_the_onset(series: dict[str, list[dict[str, Any]]]) -> None:
    onset_decay = inversion_onset(series["research-decay"])
    onset_no_decay = inversion_onset(series["research-no-decay"])
    assert onset_decay is not None
    assert onset_no_decay is None or onset_no_decay > onset_decay


def test_provenance_run_stays_grounded(series: dict[str, list[dict[str, Any]]]) -> None:
    rows = series["research-provenance"]
    assert inversion_rounds(rows) == []
    assert min(r["raw_ratio"] for r in rows) >= RAW_RATIO_FLOOR
    assert all(r["ungrounded_summaries"] == 0 for r in rows)
    assert min(r["distinct_source_spans"] for r in rows) >= span_floor(rows)
    assert max(r["summary_depth_max"] for r in rows) == 2
    assert max(r["rounds_at_max_depth"] for r in rows) <= MAX_DEPTH_PIN_ROUNDS


def test_provenance_costs_token_pressure(preset_logs: dict[str, Path]) -> None:
    def offloads_per_round(name: str) -> float:
        rounds = _records(preset_logs[name])[2:]
        return float(sum(len(r["offloaded"]) for r in rounds) / len(rounds))

    def fill(name: str) -> float:
        rows = reference_series(str(preset_logs[name]))[1:]
        used = [int(r["raw_tokens"]) + int(r["summary_tokens"]) for r in rows]
        return sum(used) / len(used) / PRESETS[name].budget_tokens

    assert offloads_per_round("research-provenance") > 2 * offloads_per_round("research-decay")
    assert fill("research-provenance") > fill("research-decay")


def test_provenance_folds_keep_children_resolvable(preset_logs: dict[str, Path]) -> None:
    for record in _records(preset_logs["research-provenance"])[1:]:
        for summary in record["summaries"]:
            assert set(summary["children"]) <= set(record["offloaded"])


# --------------------------------------------------------------------------- command


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command("simulate")(simulate_command)

    @app.command("other")
    def other() -> None:  # a second command keeps "simulate" a subcommand
        """Nothing."""

    return app


def test_command_writes_the_preset(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    result = CliRunner().invoke(
        _app(), ["simulate", "-o", str(out), "--preset", "research-no-decay", "--rounds", "5"]
    )
    assert result.exit_code == 0, result.output
    write_session(replace(PRESETS["research-no-decay"], rounds=5), tmp_path / "ref.jsonl")
    head, *rounds = out.read_bytes().splitlines()
    ref_head, *ref_rounds = (tmp_path / "ref.jsonl").read_bytes().splitlines()
    assert rounds == ref_rounds
    # the session record says how the run was made: its own id, the parameters set
    # over the preset's (usertest17 #5: every run was session "research-no-decay")
    session = json.loads(head)
    assert session["simulator"] == {"seed": 30, "enforce_provenance": False,
                                    "overrides": {"rounds": 5}}
    assert re.fullmatch(r"research-no-decay-[0-9a-f]{8}", session["session_id"])
    assert {k: v for k, v in session.items() if k not in ("simulator", "session_id")} == {
        k: v for k, v in json.loads(ref_head).items() if k not in ("simulator", "session_id")}


def test_each_parameter_set_is_a_session_of_its_own(tmp_path: Path) -> None:
    def session(*args: str) -> dict[str, Any]:
        out = tmp_path / "s.jsonl"
        assert CliRunner().invoke(_app(), ["simulate", "-o", str(out), *args]).exit_code == 0
        return dict(json.loads(out.read_bytes().splitlines()[0]))

    same = session("--rounds", "10")
    assert session("--rounds", "10") == same
    assert session("--rounds", "10", "--seed", "7")["session_id"] != same["session_id"]
    # the preset as it is (a value equal to the preset's changes nothing): its own name
    assert session("--rounds", "40")["session_id"] == "research-decay"
    assert "overrides" not in session()["simulator"]


def test_the_closing_line_names_the_options_given(tmp_path: Path) -> None:
    """usertest62 D2: two runs of other settings printed the same line."""
    def line(*args: str) -> str:
        out = tmp_path / "s.jsonl"
        result = CliRunner().invoke(_app(), ["simulate", "-o", str(out), "--rounds", "5",
                                             *args])
        assert result.exit_code == 0, result.output
        return result.stderr.strip()

    assert line() == f"compaction-audit: simulated 5 rounds (research-decay, seed 30): " \
                     f"6 records -> {tmp_path / 's.jsonl'}"
    assert line("--recency-decay", "0.09", "--no-enforce-provenance", "--budget", "120000") \
        == (f"compaction-audit: simulated 5 rounds (research-decay, seed 30, --budget "
            f"120000, --recency-decay 0.09, --no-enforce-provenance): 6 records -> "
            f"{tmp_path / 's.jsonl'}")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--budget", "0"], "--budget"),
        (["--rounds", "-1"], "--rounds"),
        (["--recency-decay", "-1"], "--recency-decay"),
        (["--preset", "nope"], "--preset"),
        (["--max-depth", "zero"], "--max-depth"),
    ],
)
def test_command_rejects_bad_values(tmp_path: Path, args: list[str], option: str) -> None:
    result = CliRunner().invoke(_app(), ["simulate", "-o", str(tmp_path / "x.jsonl"), *args])
    assert result.exit_code == 2
    assert option in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.jsonl").exists()


def test_command_reports_an_unwritable_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(_app(), ["simulate", "-o", str(tmp_path / "no" / "x.jsonl")])
    assert result.exit_code == 2
    assert "--output" in result.output and "Traceback" not in result.output
