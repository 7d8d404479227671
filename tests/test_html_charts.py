"""The HTML report's chart specs, read from the page's data block: the axes of the
ratios, the floor of raw_ratio, the recall-debt series, the boundary markers (a
tester's report: a fall of raw_ratio from 1.000 to 0.890 drawn as a crash, no floor
line, a legend of three debt series over two lines, two markers told apart by a shade
of red)."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl
from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.html import charts, data
from tests.html_text import unlabelled
from tests.logs import SAMPLES, LogWriter, held_fact_records, rnd, session, spans


def chart_specs(*args: str) -> dict[str, Any]:
    """The chart specs of the first section of ``audit --format html ARGS``, by id."""
    result = CliRunner().invoke(app, ["audit", *args, "--format", "html"])
    assert result.exit_code in (0, 1), result.output
    m = re.search(r'<script type="application/json" id="ca-data">(.*?)</script>',
                  result.stdout, re.S)
    assert m is not None
    specs: dict[str, Any] = json.loads(m.group(1))["sections"][0]["charts"]
    return specs


def panel(spec: dict[str, Any], quantity: str) -> dict[str, Any]:
    """The view of ``spec`` (a vconcat of panels) that draws ``quantity``."""
    mine = [{"filter": f"(datum.quantity === '{quantity}')"}]
    (view,) = [v for v in spec["vconcat"] if any(la.get("transform") == mine
                                                  for la in v["layer"])]
    return view


def y_scale(view: dict[str, Any]) -> Any:
    (line,) = [la for la in view["layer"] if la["mark"]["type"] == "line"]
    return line["encoding"]["y"].get("scale")


FALL = [session(), rnd(0, spans=spans(("a", 90), ("b", 10))),
        rnd(1, summaries=[{"id": "F", "tokens": 10, "children": ["b"]}], evicted=["b"])]
"""raw_ratio 1.0 then 0.9 (90 raw tokens beside a 10-token summary)."""


def test_raw_ratio_is_drawn_from_0_to_1(write_log: LogWriter) -> None:
    """A fall from 1.0 to 0.9 is a small step on the 0-1 axis, as in the text report's
    sparkline, not a fall from the top of the panel to its bottom (the axis ran
    0.88-1.00 on a Claude Code session); the other series keep their min to max."""
    series = chart_specs(str(write_log(FALL)))["s0-series"]
    assert y_scale(panel(series, "raw_ratio")) == {"domain": [0.0, 1.0], "nice": False}
    assert y_scale(panel(series, "distinct_source_spans")) == {"zero": False}


def test_a_share_is_drawn_from_0_to_1_unless_a_value_lies_outside() -> None:
    def rows(quantity: str, *values: float | None) -> list[dict[str, Any]]:
        return [{"quantity": quantity, "value": v} for v in values]

    assert charts.y_domain(rows("raw_ratio", 0.19, 0.28, None), "raw_ratio") == [0.0, 1.0]
    # a value outside (a log's own rounding, say): the axis widens to it
    assert charts.y_domain(rows("raw_ratio", 0.4, 1.3), "raw_ratio") == [0.0, 1.3]
    assert charts.y_domain(rows("raw_ratio", -0.2, 0.5), "raw_ratio") == [-0.2, 1.0]
    assert charts.y_domain(rows("raw_ratio"), "raw_ratio") == [0.0, 1.0]
    # the cosines keep their min to max, as the text report's sparklines: the rise of
    # salience is half the inversion signature
    assert charts.y_domain(rows("query_cosine_rebuilt", 0.45, 0.6),
                           "query_cosine_rebuilt") is None
    assert charts.y_domain(rows("distinct_source_spans", 5.0), "distinct_source_spans") is None


def layers_of(view: dict[str, Any], mark: str) -> list[dict[str, Any]]:
    return [la for la in view["layer"] if la["mark"]["type"] == mark]


def test_raw_ratio_s_panel_draws_the_floor_the_settings_give(write_log: LogWriter) -> None:
    """The inversion boundary is raw_ratio under raw_ratio_floor: a labelled line at
    the floor of the report's settings (0.25 by default, 0.2 with --set), on the
    raw_ratio panel alone, under the series (the sample's axis ticked only 0.5)."""
    log = str(write_log(FALL))
    for args, floor, label in (([], 0.25, "floor 0.25"),
                               (["--set", "raw_ratio_floor=0.2"], 0.2, "floor 0.2")):
        series = chart_specs(log, *args)["s0-series"]
        raw = panel(series, "raw_ratio")
        (rule,) = [la for la in layers_of(raw, "rule") if "y" in la["encoding"]]
        (text,) = layers_of(raw, "text")
        assert rule["encoding"] == {"y": {"datum": floor, "type": "quantitative"}}
        assert series["datasets"][rule["data"]["name"]] == [{}]  # one line, not one a point
        assert text["mark"]["text"] == label and text["encoding"]["y"]["datum"] == floor
        assert raw["layer"].index(rule) < raw["layer"].index(layers_of(raw, "line")[0])
        others = [v for v in series["vconcat"] if v is not raw]
        assert not any(layers_of(v, "text") for v in others)
        assert not any(la["encoding"].get("y", {}).get("datum") for v in others
                       for la in v["layer"])


def test_the_diff_draws_the_floor_on_raw_ratio(write_log: LogWriter) -> None:
    log = str(write_log(FALL))
    result = CliRunner().invoke(app, ["diff", log, log, "--format", "html"])
    assert result.exit_code in (0, 1), result.output
    m = re.search(r'id="ca-data">(.*?)</script>', result.stdout, re.S)
    assert m is not None
    spec = json.loads(m.group(1))["sections"][0]["charts"]["d0-series"]
    (text,) = layers_of(panel(spec, "raw_ratio"), "text")
    assert text["mark"]["text"] == "floor 0.25"


def test_series_equal_at_every_point_are_one_line() -> None:
    frame = pl.DataFrame({"recall_debt": [0, 3, None, 5], "recall_debt_fold": [0, 3, None, 5],
                          "recall_debt_eviction": [0, 0, None, 0],
                          "other": [0, 3, 4, 5]})  # known where the others are not
    cols = ["recall_debt", "recall_debt_fold", "recall_debt_eviction", "other"]
    groups = data.same_lines(frame, cols)
    assert groups == [["recall_debt", "recall_debt_fold"], ["recall_debt_eviction"], ["other"]]
    points = frame.with_columns(round=pl.Series([1, 2, 3, 4]), round_end=pl.Series([1, 2, 3, 4]),
                                line=pl.Series([2, 3, 4, 5]))
    rows = data.merged_points(points, groups)
    assert [(r["round"], r["quantity"], r["value"]) for r in rows if r["round"] == 2] == [
        (2, "recall_debt = recall_debt_fold", 3.0), (2, "recall_debt_eviction", 0.0),
        (2, "other", 3.0)]
    all_zero = pl.DataFrame({c: [0, 0] for c in cols[:3]})
    assert data.same_lines(all_zero, cols[:3]) == [cols[:3]]


def test_recall_debt_equal_to_its_fold_part_is_one_line_named_for_both(
        write_log: LogWriter) -> None:
    """Two facts lost by the fold, none by eviction: recall_debt is recall_debt_fold at
    every round and was drawn under it, a legend of three series over two lines
    (tester #3)."""
    log = str(write_log([session(), *held_fact_records()]))
    debt = chart_specs(log)["s0-debt"]
    drawn = debt["datasets"]["points"]
    assert [(p["round"], p["quantity"], p["value"]) for p in drawn] == [
        (0, "recall_debt = recall_debt_fold", 0.0), (1, "recall_debt = recall_debt_fold", 2.0),
        (0, "recall_debt_eviction", 0.0), (1, "recall_debt_eviction", 0.0)]
    page = unlabelled(CliRunner().invoke(app, ["audit", log, "--format", "html"]).stdout)
    assert ("below a compaction's lost count. recall_debt and recall_debt_fold are equal "
            "at every round: one line, named for both.</p>") in page


def test_the_total_debt_is_dashed_over_its_parts() -> None:
    """On the sample, recall_debt runs 0 to 3 above recall_debt_fold (of 659): drawn
    solid under it, it could not be seen; dashed and drawn after the parts, both show,
    and its legend entry says it is the dashed total."""
    debt = chart_specs(str(SAMPLES / "research-decay.jsonl"))["s0-debt"]
    parts, total = [la for la in debt["layer"] if la["mark"]["type"] == "line"]
    assert parts["transform"] == [{"filter": "(datum.quantity !== 'recall_debt')"}]
    assert total["transform"] == [{"filter": "(datum.quantity === 'recall_debt')"}]
    assert "strokeDash" not in parts["mark"] and total["mark"]["strokeDash"] == [6, 3]
    color = total["encoding"]["color"]
    assert color == parts["encoding"]["color"]
    # note 31: the legend drew the total's entry solid
    assert color["legend"]["symbolDash"] == {
        "expr": "datum.value === 'recall_debt' ? [6, 3] : []"}
    assert color["scale"] == {"domain": ["recall_debt", "recall_debt_eviction",
                                         "recall_debt_fold"]}
    assert color["legend"]["labelExpr"] == (
        "datum.label === 'recall_debt' ? 'recall_debt (total, dashed)' : datum.label")


def test_each_kind_of_marker_has_a_colour_and_a_dash_of_its_own() -> None:
    """Tester #4: the inversion onset (#d62728) and the depth pin (#8c564b) were two
    reds with the same dashes."""
    series = chart_specs(str(SAMPLES / "research-decay.jsonl"))["s0-series"]
    (rules,) = [la for la in series["vconcat"][0]["layer"]
                if la["mark"]["type"] == "rule" and la["data"] == {"name": "marks"}]
    kinds = ["inversion onset", "inversion boundary", "depth pin"]
    assert rules["encoding"]["stroke"]["scale"] == {
        "domain": kinds, "range": ["#d55e00", "#cc79a7", "#009e73"]}
    assert rules["encoding"]["strokeDash"]["scale"] == {
        "domain": kinds, "range": [[8, 4], [6, 2, 2, 2], [2, 3]]}
    own = ["inversion onset", "inversion boundary", "depth pin", "compaction"]
    assert len({charts.MARKER_COLORS[k] for k in own}) == len(own)
    assert len({tuple(charts.MARKER_DASHES[k]) for k in own}) == len(own)


def test_a_count_ticks_at_whole_numbers() -> None:
    """usertest37 #8: summary_depth_max (0 to 1) and ungrounded_summaries ticked 0.5."""
    def rows(quantity: str, *values: float | None) -> list[dict[str, Any]]:
        return [{"quantity": quantity, "value": v} for v in values]

    assert charts.counts(rows("summary_depth_max", 0, 1, None), "summary_depth_max")
    assert not charts.counts(rows("raw_ratio", 1.0, 0.5), "raw_ratio")
    assert not charts.counts(rows("raw_ratio", None), "raw_ratio")


def test_a_short_count_ticks_at_each_whole_number(write_log: LogWriter) -> None:
    series = chart_specs(str(write_log(FALL)))["s0-series"]
    (line,) = [la for la in panel(series, "summary_depth_max")["layer"]
               if la["mark"]["type"] == "line"]
    assert line["encoding"]["y"]["axis"] == {"format": "d", "values": [0, 1]}
    (ratio,) = [la for la in panel(series, "raw_ratio")["layer"] if la["mark"]["type"] == "line"]
    assert "axis" not in ratio["encoding"]["y"]
