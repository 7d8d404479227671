"""The HTML report's chart specs, read from the page's data block: the axes of the
ratios, the floor of raw_ratio, the recall-debt series, the boundary markers (a
tester's report: a fall of raw_ratio from 1.000 to 0.890 drawn as a crash, no floor
line, a legend of three debt series over two lines, two markers told apart by a shade
of red)."""

from __future__ import annotations

import json
import re
from typing import Any

from typer.testing import CliRunner

from compaction_audit.cli import app
from compaction_audit.report.html import charts
from tests.logs import LogWriter, rnd, session, spans


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


def test_a_cosine_is_drawn_from_0_to_1_unless_a_value_lies_outside() -> None:
    def rows(*values: float | None) -> list[dict[str, Any]]:
        return [{"quantity": "query_cosine_rebuilt", "value": v} for v in values]

    assert charts.y_domain(rows(0.19, 0.28, None), "query_cosine_rebuilt") == [0.0, 1.0]
    # a logged salience above 1, a negative cosine: the axis widens to them
    assert charts.y_domain(rows(0.4, 1.3), "query_cosine_rebuilt") == [0.0, 1.3]
    assert charts.y_domain(rows(-0.2, 0.5), "query_cosine_rebuilt") == [-0.2, 1.0]
    assert charts.y_domain(rows(), "query_cosine_rebuilt") == [0.0, 1.0]
    assert charts.y_domain(rows(5.0), "distinct_source_spans") is None


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
