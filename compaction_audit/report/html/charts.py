"""The HTML report's charts as Vega-Lite specs, built with Altair (the ``[html]`` extra).

Every chart that plots rounds carries the point selection :data:`PICK` (the round
nearest the pointer); the page listens to it to show that round's values and findings.
Names are given explicitly (parameters, views) so that the same report gives the same
spec, byte for byte: Altair would otherwise number them per process.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import altair as alt

PICK = "pick"
"""The selection parameter holding the round under the pointer: ``{"round": [n]}``."""
POINTS = "points"
"""The name of a chart's data rows in its spec's ``datasets``."""
MARKS = "marks"
"""The name of its boundary markers there."""
WIDTH = 720
PANEL_HEIGHT = 80

MARKER_COLORS = {"inversion onset": "#d55e00", "inversion boundary": "#cc79a7",
                 "depth pin": "#009e73", "compaction": "#7f7f7f",
                 "baseline onset": "#1f77b4", "candidate onset": "#ff7f0e"}
"""One colour per kind of boundary marker (dashed vertical rules): the first three
from the Okabe-Ito palette (vermillion, reddish purple, bluish green), told apart
with any colour vision; a run's onset in its run's colour (the diff)."""
MARKER_DASHES = {"inversion onset": [8, 4], "inversion boundary": [6, 2, 2, 2],
                 "depth pin": [2, 3], "compaction": [4, 4],
                 "baseline onset": [8, 4], "candidate onset": [8, 4]}
"""One dash per kind as well (long dashes, dash-dot, dots, even dashes): two markers
at adjacent rounds (research-decay's boundary at 16 and depth pin at 17) differ in
pattern, not in a shade of red alone."""


def _pick() -> Any:
    return alt.selection_point(name=PICK, fields=["round"], on="pointerover", nearest=True,
                               clear="pointerout", empty=False)


FEW_ROUNDS = 20
"""Up to this many rounds, every round gets a tick (else Vega may tick at halves)."""


def _x(points: list[dict[str, Any]], title: str = "round") -> Any:
    rounds = sorted({p["round"] for p in points})
    axis = alt.Axis(format="d", tickMinStep=1)
    if len(rounds) <= FEW_ROUNDS:
        axis = alt.Axis(format="d", tickMinStep=1, values=rounds)
    return alt.X("round:Q", title=title, axis=axis)


UNIT_SERIES = ("raw_ratio",)
"""Shares drawn on an axis from 0 to 1 rather than their min to max: a fall of
raw_ratio from 1.000 to 0.890 is a small step, not a crash to the bottom, and its floor
is in view (the text report's sparkline of raw_ratio is fixed at 0-1 too).  A value
outside widens the axis to it: nothing is cut off.  The cosines keep their min to max,
as in the text report: the rise of salience is half the inversion signature, and on
0-1 a rise from 0.45 to 0.60 was 12 pixels."""


def _known(points: list[dict[str, Any]], quantity: str) -> list[float]:
    """The known values of ``quantity`` among ``points`` (long rows: quantity, value)."""
    return [p["value"] for p in points if p["quantity"] == quantity and p["value"] is not None]


def y_domain(points: list[dict[str, Any]], quantity: str) -> list[float] | None:
    """The y axis of ``quantity``'s panel: ``[0, 1]`` for a :data:`UNIT_SERIES`,
    widened to any known value outside it; None (min to max) for the others."""
    if quantity not in UNIT_SERIES:
        return None
    values = _known(points, quantity)
    return [min([0.0, *values]), max([1.0, *values])]


def counts(points: list[dict[str, Any]], quantity: str) -> bool:
    """Whether every known value of ``quantity`` is a whole number (and one is known)."""
    values = _known(points, quantity)
    return bool(values) and all(float(v).is_integer() for v in values)


COUNT_TICKS = 10
"""A count whose values span at most this many units ticks at each whole number."""


def _shape(points: list[dict[str, Any]], quantity: str) -> Literal["step-after", "linear"]:
    """How a panel's line joins its rounds: a step at the round where a count
    (:func:`counts`) changes (``step-after``: a round's value holds until the next
    round's), a straight line between the rounds of another series."""
    return "step-after" if counts(points, quantity) else "linear"


def _count_axis(points: list[dict[str, Any]], quantity: str) -> Any:
    """The y axis of a count (:func:`counts`): a tick at each whole number of a short
    range (Vega's ``tickMinStep`` alone still ticked 0.5 between 0 and 1), whole
    numbers at least one apart over a longer one; Vega's default for another series."""
    if not counts(points, quantity):
        return alt.Undefined
    values = [int(v) for v in _known(points, quantity)]
    lo, hi = min(values), max(values)
    if hi - lo <= COUNT_TICKS:
        return alt.Axis(values=list(range(lo, hi + 1)), format="d")
    return alt.Axis(tickMinStep=1, format="d")


def _marker_layer(marks: list[dict[str, Any]]) -> Any:
    kinds = [k for k in MARKER_COLORS if any(m["kind"] == k for m in marks)]
    # one legend for both channels (same field and title), each entry a stroke long
    # enough to show its dashes
    legend = alt.Legend(symbolType="stroke", symbolSize=500, symbolStrokeWidth=2)
    return (alt.Chart(alt.NamedData(name=MARKS))
            .mark_rule(strokeWidth=2)
            .encode(x=alt.X("round:Q"),
                    stroke=alt.Stroke("kind:N", title="marker", legend=legend,
                                      scale=alt.Scale(domain=kinds,
                                                      range=[MARKER_COLORS[k] for k in kinds])),
                    strokeDash=alt.StrokeDash(
                        "kind:N", title="marker", legend=legend,
                        scale=alt.Scale(domain=kinds, range=[MARKER_DASHES[k] for k in kinds])),
                    tooltip=[alt.Tooltip("label:N", title="marker")]))


FLOOR_COLOR = "#333333"
"""The floor's line and label: near black, solid and horizontal, unlike the coloured
dashed markers."""


def floor_label(value: float) -> str:
    """The floor line's label: ``floor 0.25``."""
    return f"floor {value:g}"


def _floor_layers(value: float) -> list[Any]:
    """A horizontal line at ``value`` across the panel, labelled at its left end (the
    left: a phone draws the panel narrower, and the label stays in it).  Unnamed: Altair
    would list a named layer among the views of the panel's selection."""
    one = alt.InlineData(values=[{}])  # one line, not one per point of the panel's data
    y = alt.YDatum(value, type="quantitative")
    rule = (alt.Chart(one).mark_rule(color=FLOOR_COLOR, strokeWidth=1)
            .encode(y=y))
    label = (alt.Chart(one).mark_text(text=floor_label(value), align="left",
                                      baseline="bottom", dx=3, dy=-2, fontSize=10,
                                      color=FLOOR_COLOR)
             .encode(x=alt.value(0), y=y))
    return [rule, label]


def _round_panels(points: list[dict[str, Any]], quantities: list[str],
                  marks: list[dict[str, Any]], group: str, color: Any | None,
                  name: str, floors: dict[str, float] | None = None) -> Any:
    """One small line chart per quantity (rows of ``points`` whose ``quantity`` is it),
    sharing the x axis, each with the markers, the hovered round's rule and PICK;
    ``floors``: a labelled horizontal line on the panel of each quantity named."""
    pick = _pick()
    data = alt.NamedData(name=POINTS)
    views = []
    for i, q in enumerate(quantities):
        base = (alt.Chart(data).transform_filter(alt.datum.quantity == q)
                .encode(x=_x(points, "round" if i == len(quantities) - 1 else "")))
        domain = y_domain(points, q)
        scale = (alt.Scale(zero=False) if domain is None
                 else alt.Scale(domain=domain, nice=False))
        # a count (spans, a depth, rounds) ticks at whole numbers only (usertest37 #8:
        # summary_depth_max ticked 0.5 on a session of depth 0 to 1)
        axis = _count_axis(points, q)
        enc: dict[str, Any] = {"y": alt.Y("value:Q", title=q, scale=scale, axis=axis)}
        if color is not None:
            enc["color"] = color
        tip = [alt.Tooltip("round:Q", title="round"), alt.Tooltip("round_end:Q", title="to"),
               alt.Tooltip("line:Q", title="line"),
               *([alt.Tooltip(f"{group}:N", title="run")] if group != "quantity" else []),
               alt.Tooltip("value:Q", title=q, format=".4~g")]
        # a count changes at a round, it does not ramp between two (usertest73 #8: the
        # recall debt and the depth seemed to climb over the round before their jump)
        line = base.mark_line(strokeWidth=1.5, interpolate=_shape(points, q)).encode(**enc)
        dots = (base.mark_point(size=30, filled=True).encode(
                    **enc, opacity=alt.condition(pick, alt.value(1), alt.value(0)),
                    tooltip=tip).add_params(pick))
        # the floor first, under the series: a value at the floor is drawn over it
        layers = [*(_floor_layers(floors[q]) if floors and q in floors else []), line, dots]
        if marks:
            layers.append(_marker_layer(marks))
        views.append(alt.layer(*layers).properties(width=WIDTH, height=PANEL_HEIGHT,
                                                   name=f"{name}_{i}"))
    with warnings.catch_warnings():
        # one PICK shared by every panel is what we mean: Altair merges it, and says so
        warnings.filterwarnings("ignore", "Automatically deduplicated selection parameter")
        return alt.vconcat(*views, spacing=6).resolve_scale(x="shared")


def series_chart(points: list[dict[str, Any]], quantities: list[str],
                 marks: list[dict[str, Any]], floor: float | None = None
                 ) -> dict[str, Any]:
    """The per-round series of one trace, one panel per quantity, with the boundaries
    marked (``marks``: ``{round, kind, label}``) and ``raw_ratio``'s floor (the
    setting ``raw_ratio_floor``: under it is the inversion boundary) drawn across
    its panel."""
    chart = _round_panels(points, quantities, marks, "quantity", None, "series",
                          None if floor is None else {"raw_ratio": floor})
    return _spec(chart, points, marks)


TOTAL = "recall_debt"
"""The debt that is the sum of the others: dashed, and drawn over them."""
TOTAL_DASH = [6, 3]


def debt_chart(points: list[dict[str, Any]], marks: list[dict[str, Any]]
               ) -> dict[str, Any]:
    """Recall debt over rounds, a step at the round where it changes: one line per debt
    column (``quantity``; a line named for several, ``recall_debt = recall_debt_fold``,
    where they are equal: see :func:`~compaction_audit.report.html.data.same_lines`),
    one panel.  The total (:data:`TOTAL`) is dashed and drawn last, its legend entry
    saying so: where it runs a few units above a part (a handful lost by eviction
    beside hundreds by folds), the part shows through."""
    pick = _pick()
    data = alt.NamedData(name=POINTS)
    labels = sorted({p["quantity"] for p in points})
    base = alt.Chart(data).encode(x=_x(points))
    # a line named for two series ("recall_debt = recall_debt_fold") whole, not cut
    # at Vega's 160 px (a phone's box holds it: the legend goes below the plot)
    legend = alt.Legend(labelLimit=280, symbolType="stroke", symbolSize=500,
                        symbolStrokeWidth=2,
                        labelExpr=f"datum.label === '{TOTAL}' ? '{TOTAL} (total, dashed)'"
                                  " : datum.label",
                        # the total's entry dashed as its line is (note 31: it was solid)
                        symbolDash=alt.ExprRef(
                            f"datum.value === '{TOTAL}' ? {TOTAL_DASH} : []"))
    color = alt.Color("quantity:N", title="series", legend=legend,
                      scale=alt.Scale(domain=labels))
    tip = [alt.Tooltip("round:Q"), alt.Tooltip("line:Q"), alt.Tooltip("quantity:N"),
           alt.Tooltip("value:Q", format=".4~g")]
    y = alt.Y("value:Q", title="recall debt")
    # each layer of lines only where it has one: a layer of no points makes Vega
    # warn of an infinite extent
    parts = ([base.transform_filter(alt.datum.quantity != TOTAL)
              .mark_line(strokeWidth=2, interpolate="step-after").encode(y=y, color=color)]
             if any(q != TOTAL for q in labels) else [])
    total = ([base.transform_filter(alt.datum.quantity == TOTAL)
              .mark_line(strokeWidth=2, strokeDash=TOTAL_DASH, interpolate="step-after")
              .encode(y=y, color=color)]
             if TOTAL in labels else [])
    layers = [*parts, *total,
              base.mark_point(size=30, filled=True).encode(
                  y="value:Q", color=color, tooltip=tip,
                  opacity=alt.condition(pick, alt.value(1), alt.value(0))).add_params(pick)]
    if marks:
        layers.append(_marker_layer(marks))
    chart = alt.layer(*layers).properties(width=WIDTH, height=160, name="debt")
    return _spec(chart, points, marks)


def compaction_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens before and after each compaction (``rows``: ``{round, line, when,
    tokens}``), a rule from one to the other."""
    data = alt.NamedData(name=POINTS)
    pick = _pick()
    # told apart by shape as well as by colour, from the Okabe-Ito palette as the
    # markers are (usertest73 #9: red and green alone)
    color = alt.Color("when:N", title="tokens", sort=["before", "after"],
                      scale=alt.Scale(domain=["before", "after"],
                                      range=["#d55e00", "#0072b2"]))
    shape = alt.Shape("when:N", title="tokens", sort=["before", "after"],
                      scale=alt.Scale(domain=["before", "after"],
                                      range=["circle", "triangle-down"]))
    x = alt.X("round:O", title="compaction at round",
              axis=alt.Axis(labelOverlap=True, labelAngle=0))
    span = (alt.Chart(data).transform_pivot("when", value="tokens", groupby=["round", "line"])
            .mark_rule(color="#999").encode(x=x, y="before:Q", y2="after:Q"))
    dots = (alt.Chart(data).mark_point(filled=True, size=60)
            .encode(x=x, y=alt.Y("tokens:Q", title="tokens in context"), color=color,
                    shape=shape,
                    tooltip=[alt.Tooltip("round:Q"), alt.Tooltip("line:Q"),
                             alt.Tooltip("when:N"), alt.Tooltip("tokens:Q", format=",")])
            .add_params(pick))
    chart = alt.layer(span, dots).properties(width=WIDTH, height=160, name="compactions")
    return _spec(chart, rows, [])


def diff_chart(points: list[dict[str, Any]], quantities: list[str],
               marks: list[dict[str, Any]], floor: float | None = None
               ) -> dict[str, Any]:
    """Both runs overlaid per quantity (``run``: baseline or candidate), both
    inversion onsets marked, ``raw_ratio``'s floor drawn (as :func:`series_chart`)."""
    color = alt.Color("run:N", title="run", sort=["baseline", "candidate"],
                      scale=alt.Scale(domain=["baseline", "candidate"],
                                      range=["#1f77b4", "#ff7f0e"]))
    chart = _round_panels(points, quantities, marks, "run", color, "diff",
                          None if floor is None else {"raw_ratio": floor})
    return _spec(chart, points, marks)


def _spec(chart: Any, points: list[dict[str, Any]], marks: list[dict[str, Any]]
          ) -> dict[str, Any]:
    """The chart's Vega-Lite spec with its data as the top-level ``datasets``
    :data:`POINTS` and :data:`MARKS`.  The data is added after Altair has written the
    spec: Altair deep-copies inline values once per view it combines, which for
    1,000 points in six panels took most of a minute."""
    spec: dict[str, Any] = chart.configure_view(stroke=None).to_dict()
    # beside any Altair wrote (the floor line's one empty row)
    spec["datasets"] = {**spec.get("datasets", {}), POINTS: points, MARKS: marks}
    return spec
