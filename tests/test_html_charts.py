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
    (view,) = [v for v in spec["vconcat"]
               if v["layer"][0]["transform"] == [{"filter": f"(datum.quantity === '{quantity}')"}]]
    return view


def y_scale(view: dict[str, Any]) -> Any:
    return view["layer"][0]["encoding"]["y"].get("scale")


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
