"""What a rule is, what it produces, and the registry that holds every rule.

A rule is one small class registered with :func:`register`: a stable ``code``, a
kebab-case ``name``, a default :class:`Severity`, the settings it reads, and a
docstring in three parts (what it checks, why it matters, what to do) plus an
``example``.  ``evaluate`` returns a Polars frame with one row per round that fired;
the engine turns rows into :class:`Finding` objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar, TypeVar

import polars as pl

from compaction_audit.conditions import Condition, conditions
from compaction_audit.cosine import Rebuilt
from compaction_audit.limits import Limit
from compaction_audit.model import Session
from compaction_audit.series import Series
from compaction_audit.settings import Settings


class Severity(StrEnum):
    """Finding severities, ordered: info < warning < error."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """0 for info, 1 for warning, 2 for error."""
        return ("info", "warning", "error").index(self.value)


@dataclass
class Finding:
    """One rule firing at one round.

    ``values`` holds the numbers that made it fire (JSON-able); ``entity`` names the
    item the finding is about when there is one (a summary id, a span id), so findings
    have a stable identity across runs: (``code``, ``entity`` or ``round``).
    ``line_file`` names the file ``line`` is a line of when it is not the trace itself
    (the round's ``line_file``, :data:`~compaction_audit.model.ROUND_SCHEMA`).
    """

    rule: str
    code: str
    severity: Severity
    round: int
    line: int
    message: str
    action: str
    values: dict[str, Any] = field(default_factory=dict)
    entity: str | None = None
    line_file: str | None = None


@dataclass
class Context:
    """What a rule may read: the session, its series, the settings and the rebuilt
    cosine (:class:`~compaction_audit.cosine.Rebuilt`; None when not computed).

    Shared, expensive intermediate results are cached properties so that rules which
    need the same thing compute it once.
    """

    session: Session
    series: Series
    settings: Settings
    cache: dict[str, Any] = field(default_factory=dict)
    rebuilt: Rebuilt | None = None
    limits: list[Limit] = field(default_factory=list)
    """Checks of the rules that stopped at their cap (issue 11, class 5); the report
    shows each (:attr:`~compaction_audit.report.model.SessionReport.limits`)."""

    @cached_property
    def conditions(self) -> list[Condition]:
        """The three conditions of validity of inversion for this session
        (:func:`compaction_audit.conditions.conditions`; seed 000)."""
        return conditions(self.session, self.series, self.settings, self.cosine)

    @cached_property
    def cosine(self) -> str | None:
        """The salience column that salience rules read (issue 16): the logged
        ``query_cosine_retained`` when the log records salience (a known value at some
        round), unless it can be compared (known at a round and ``window`` rounds
        before) at fewer than half the rounds the rebuilt cosine can (usertest38 #1: a
        log writing ``retained`` every other round left the inversion rule unjudged
        at 43 of 44 rounds, and no onset, without a word); else
        ``query_cosine_rebuilt`` when the auditor rebuilt one, else None.  Why the
        rebuilt one is read where salience is logged: :attr:`cosine_why`."""
        return self._cosine[0]

    @cached_property
    def cosine_why(self) -> str | None:
        """Why the salience rules read the rebuilt cosine of a log that records
        salience, e.g. ``the logged salience can be compared at 0 of 43 rounds, the
        rebuilt cosine at 43``; None otherwise."""
        return self._cosine[1]

    @cached_property
    def _cosine(self) -> tuple[str | None, str | None]:
        f = self.series.frame
        rebuilt = ("query_cosine_rebuilt" in f.columns
                   and f["query_cosine_rebuilt"].is_not_null().any())
        if f["has_retained"].any() and f["query_cosine_retained"].is_not_null().any():
            if not rebuilt:
                return "query_cosine_retained", None
            w = self.settings.window
            logged, made = f.select(
                (pl.col(c).is_not_null() & pl.col(c).shift(w).is_not_null()).sum()
                for c in ("query_cosine_retained", "query_cosine_rebuilt")).row(0)
            if 2 * logged >= made:
                return "query_cosine_retained", None
            return "query_cosine_rebuilt", (
                f"the logged salience can be compared at {logged:,} of "
                f"{max(f.height - w, 0):,} rounds, the rebuilt cosine at {made:,}")
        return ("query_cosine_rebuilt" if rebuilt else None), None

    @cached_property
    def frame(self) -> pl.DataFrame:
        """The series with ``*_before`` columns (the value ``window`` rounds earlier),
        and ``query_cosine``/``query_cosine_before``: the column :attr:`cosine` names
        (null when None)."""
        w = self.settings.window
        frame = self.series.frame
        if "query_cosine_rebuilt" not in frame.columns:
            frame = frame.with_columns(pl.lit(None, pl.Float64).alias("query_cosine_rebuilt"))
        used = pl.col(self.cosine) if self.cosine else pl.lit(None, pl.Float64)
        return frame.with_columns(
            pl.col("distinct_source_spans").shift(w).alias("distinct_source_spans_before"),
            pl.col("query_cosine_retained").shift(w).alias("query_cosine_retained_before"),
            pl.col("query_cosine_rebuilt").shift(w).alias("query_cosine_rebuilt_before"),
            pl.col("has_retained").shift(w).alias("has_retained_before"),
            used.alias("query_cosine"),
            used.shift(w).alias("query_cosine_before"),
        )

    @cached_property
    def start_spans(self) -> int:
        """``start_spans`` from the session record, else ``distinct_source_spans`` at
        the first round (0 for an empty log)."""
        if self.session.header.start_spans is not None:
            return self.session.header.start_spans
        col = self.series.frame["distinct_source_spans"]
        return int(col[0]) if len(col) else 0


@dataclass
class Outcome:
    """What a rule returns: the rows that fired and the rounds it could not judge.

    ``fired`` has at least ``ri``; other columns become the finding's values (and
    ``entity``/``message`` when present).  ``not_evaluated`` maps a reason to a count
    of rounds.  ``judged`` is the number of rounds the rule judged, where the rule
    counts it exactly (None: every round not in ``not_evaluated``; the reasons'
    rounds may overlap, so their sum can exceed the rounds not judged).  ``of`` maps a
    reason to the rounds its count is a share of, where the rule looks at some rounds
    only (the rounds with a fold: :mod:`compaction_audit.rules.textless`); a reason not
    there is a share of every round.
    """

    fired: pl.DataFrame
    not_evaluated: dict[str, int] = field(default_factory=dict)
    judged: int | None = None
    of: dict[str, int] = field(default_factory=dict)


class Rule:
    """Base of every rule.  Subclasses set the class attributes and ``evaluate``."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    severity_note: ClassVar[str] = ""
    """Where a finding's severity differs from :attr:`severity` by what it found ("error
    for a rule, identifier, number or version"); empty when it never does.  ``rules``
    and docs/rules.md print it beside the default (usertest56 #9: the list said
    "warning" of a rule whose findings are errors for numbers)."""
    summary: ClassVar[str]
    action: ClassVar[str]
    product_action: ClassVar[str | None] = None
    """What to do instead of :attr:`action` when the trace is an agent product's log (a
    Claude Code, Codex or Cline session read by an adapter: it records compactions),
    whose user cannot offload, evict or record accounting (ux7); None: ``action``."""
    example: ClassVar[str]
    product_actions: ClassVar[dict[str, str]] = {}
    """:attr:`product_action` as it reads for one product, by ``source_format``
    (``claude-code``, ``codex``...): advice naming another product's command or file is
    noise in a Cline report (usertest5); a product not named here gets
    :attr:`product_action`."""
    settings: ClassVar[tuple[str, ...]] = ()
    family: ClassVar[str] = "boundary"
    reads_salience: ClassVar[bool] = False
    """True for rules that compare salience (they say which cosine series they used)."""
    reads_recall: ClassVar[bool] = False
    """True for rules that read the recall analysis (``rules.recallctx.recall_of``): the
    engine evaluates them after the others, so that the text helper process has the
    longest time to do the analysis's text work (issue 14); it changes no result."""
    episodic: ClassVar[bool] = True
    """False for a rule whose findings each name an act of their own to undo (a rule of
    the person's broken by a call, one stated reversed): each finding is an episode of
    its own in every format, where a rule's findings are otherwise one episode per run
    of consecutive rounds (usertest63 #4: three calls that broke three lost rules at one
    round were one SARIF result, JUnit failure and annotation naming the first)."""
    judges: ClassVar[str] = "rounds"
    """What the rule judges, one of :data:`compaction_audit.rules.applies.JUDGES`
    (``rounds``, ``summaries``, ``folds``, ``logged``): a trace with none of it is not
    applicable to the rule, a note and never a silent pass (issue 11, class 2)."""

    def cosine_used(self, ctx: Context) -> str | None:
        """The series this rule read its salience from (None: no salience read, or none
        available); reports print it (issue 16)."""
        return ctx.cosine if self.reads_salience else None

    def evaluate(self, ctx: Context) -> Outcome:
        """Return the rows at which the rule fires."""
        raise NotImplementedError

    def message(self, values: dict[str, Any], ctx: Context) -> str:
        """A one-line message for one fired row (values as returned by evaluate)."""
        raise NotImplementedError


RULES: dict[str, type[Rule]] = {}
R = TypeVar("R", bound=type[Rule])


def episodic(code: str) -> bool:
    """:attr:`Rule.episodic` of the rule with ``code`` (true for a code not registered)."""
    rule = RULES.get(code)
    return rule is None or rule.episodic


def register(cls: R) -> R:
    """Class decorator: add a rule to :data:`RULES` by code (codes and names unique)."""
    if cls.code in RULES or any(r.name == cls.name for r in RULES.values()):
        raise ValueError(f"duplicate rule {cls.code} {cls.name}")
    RULES[cls.code] = cls
    return cls


def product_fold_rounds(session: Session) -> list[int]:
    """Sorted round indices (``ri``) of a product's compactions: an adapter's
    ``compaction`` record with a summary (Claude Code, Codex, Cline; docs/adapters.md).
    Empty for a native log, which records folds, not compactions."""
    return sorted({int(c["ri"]) for c in session.compactions
                   if c.get("summary_id") is not None and c.get("ri") is not None})


ROUNDING = 1e-12
"""Differences at or below this share of a value (and of 1) are the rounding of
floating-point sums, not a rise or a fall: a mean salience of 0.2 over 5 spans and over
4 (1.0/5, 0.8/4) summed in file order is 0.19999999999999998 and 0.2, and the
salience "rose" into an error-level CA101 (adv78 #2).  A sum of n values is off by at
most about n x 1.1e-16 of its size, so this covers thousands of spans a round; a
billionth was too wide for large saliences (adv79: 3e9 -> 3e9 + 2 was no rise)."""


def _beyond(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a`` exceeds ``b`` by more than :data:`ROUNDING` of their size."""
    return (a - b) > ROUNDING * pl.max_horizontal(a.abs(), b.abs(), pl.lit(1.0))


ROSE = _beyond(pl.col("query_cosine"), pl.col("query_cosine_before"))
"""The salience (``query_cosine``: logged, or rebuilt) rose against ``window`` rounds
back: seed 000's "salience metrics that improve" (CA101 and the inversion onset)."""
FELL = pl.col("distinct_source_spans") < pl.col("distinct_source_spans_before")
"""Reachable source spans fell (integers: no rounding) against ``window`` rounds back."""


def exceeds(value: pl.Expr, limit: float) -> pl.Expr:
    """``value`` is more than ``limit`` beyond its rounding (:data:`ROUNDING`): "differs
    by more than the tolerance" of a difference that is the tolerance up to float
    rounding (0.51 - 0.50 is 0.010000000000000009) is false (adv78 #3)."""
    return value > limit + ROUNDING * max(1.0, abs(limit))


def sustained(condition: pl.Expr, rounds: int) -> pl.Expr:
    """True where ``condition`` held (true, not null) on ``rounds`` consecutive rounds
    ending here, False elsewhere, never null: an alerting rule's ``for:`` (spec
    rules.md, ``sustain``).  The first ``rounds - 1`` rounds are False (a rolling sum
    is null there: adv142 #1, compaction-drift, which negates salience-inversion's
    result, read that null as "not drift" and fired ``rounds - 1`` rounds late)."""
    held = condition.fill_null(False).cast(pl.Int64)
    if rounds <= 1:
        return held == 1
    return (held.rolling_sum(window_size=rounds, min_samples=rounds) == rounds
            ).fill_null(False)


def ids_per_round(rows: pl.DataFrame, pairs: pl.DataFrame, name: str) -> pl.DataFrame:
    """``rows`` (one row per round ``ri``) with a list column ``name``: the ``id`` of
    each row of ``pairs`` (``ri``, ``id``) at that round, in ``id`` order; an empty list
    at a round with none.  Columns: those of ``rows``, then ``name``.

    The pairs are joined as plain rows and gathered after, never as one list per round:
    Polars (2.1) copies the list of a one-row frame into every row of a left join, so
    a list of 10,000 span ids joined onto 10,000 rounds asked for 8 GB and aborted the
    process (issue 11, class 5, fresh adversarial pass, F3).
    """
    return (rows.join(pairs.select("ri", pl.col("id").alias("_ids_per_round")),
                      on="ri", how="left")
            .sort("ri", "_ids_per_round", nulls_last=True)
            .group_by("ri", maintain_order=True)
            .agg(pl.all().exclude("_ids_per_round").first(),
                 pl.col("_ids_per_round").drop_nulls().alias(name)))


MessageFn = Callable[[dict[str, Any]], str]


EXPONENT_FROM = 1e15
"""The magnitude from which :func:`fmt` writes a number with an exponent."""


def fmt(value: Any) -> str:
    """Format a value for a message: ratios with 3 decimals, a number of 1e15 or more in
    magnitude in exponent form ("1.000e+308": adv94 #10 printed a logged raw_ratio
    1e308 as 309 digits), null as 'unknown'."""
    if value is None:
        return "unknown"
    if isinstance(value, float):
        return f"{value:.3e}" if abs(value) >= EXPONENT_FROM else f"{value:.3f}"
    if type(value) is int and abs(value) >= EXPONENT_FROM:  # a whole float read as an int
        return f"{value:.3e}"  # (usertest48 #4: CA203's 1e308 was 309 digits still)
    return str(value)


def fmt_below(value: Any, limit: float) -> str:
    """:func:`fmt` of ``value``, with as many more decimals (up to 12) as it takes for
    the number shown to be below ``limit`` when ``value`` is (adv131 #4: a raw_ratio of
    0.2499975 read "0.250 < 0.25")."""
    if isinstance(value, float) and value < limit and abs(value) < EXPONENT_FROM:
        for places in range(3, 13):
            shown = f"{value:.{places}f}"
            if float(shown) < limit:
                return shown
    return fmt(value)


def fmt_change(before: Any, after: Any) -> str:
    """``"0.562 -> 0.582"``: two values of one quantity as :func:`fmt` writes them, with
    as many more decimals (up to 12) as it takes to show that they differ (usertest41
    #8: a rise read "0.070 -> 0.070")."""
    if isinstance(before, float) and isinstance(after, float) and before != after:
        for places in range(3, 13):
            a, b = f"{before:.{places}f}", f"{after:.{places}f}"
            if a != b:
                return f"{a} -> {b}"
    return f"{fmt(before)} -> {fmt(after)}"
