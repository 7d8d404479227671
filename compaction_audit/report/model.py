"""The report model: the one thing every renderer reads.

:class:`SessionReport` is one audited trace; :class:`Report` is a whole run (one or
more traces, plus traces that could not be read).  The core builds these and never
prints; renderers turn them into text, JSON and the other formats.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from compaction_audit.conditions import Condition, can_invert
from compaction_audit.errors import LogError
from compaction_audit.limits import Limit
from compaction_audit.model import SessionHeader
from compaction_audit.report.compaction_text import lost_suppressed
from compaction_audit.report.lines import fact_line, line_at
from compaction_audit.report.safe import printable
from compaction_audit.rules.base import RULES, Finding, Severity
from compaction_audit.settings import Settings

UNCHECKED = {"opaque": "opaque summary", "redacted": "redacted summary"}
"""A compaction's ``not_checked_reason`` in words (an adapter's own reason as it is)."""

JUDGE_FOLDS = ("recall", "faithfulness")
"""Rule families that judge what a fold lost or what its summary claims: they judged
nothing in a trace none of whose compactions could be checked."""

NONE_CHECKED = "not applicable: no compaction of this trace could be checked"
"""Why a rule of :data:`JUDGE_FOLDS` judged nothing in such a trace."""

FAIL_ON = ("error", "warning", "info", "never")
"""Accepted ``--fail-on`` values: the lowest severity that fails, or never."""


@dataclass
class NotEvaluated:
    """A rule that could not judge ``rounds`` rounds, and why; ``of``: the rounds the
    rule looks at, where it looks at some only (the rounds with a fold), None for every
    round.  ``diff`` compares ``rounds`` over ``of`` between two runs; no report
    format writes ``of``."""

    rule: str
    code: str
    reason: str
    rounds: int
    of: int | None = None


@dataclass
class SessionReport:
    """One audited trace.

    ``series`` is the per-round frame (see :mod:`compaction_audit.series`);
    ``findings`` are ordered by round then rule code; ``onsets`` as returned by
    :func:`compaction_audit.onset.onsets`; ``compactions`` the adapters' per-compaction
    facts; ``skipped`` the records lenient mode skipped, ``dependent`` the references
    it dropped because they name what a skipped record defined (a trace with either is
    at least a warning: :meth:`worst`); ``extra`` holds sections added
    by optional analyses (keyed by section name, JSON-able); ``cosine`` says how the
    rebuilt cosine was made and which series each salience rule read
    (:func:`compaction_audit.engine.cosine_section`); ``limits`` the checks that
    stopped early at their cap, and where (issue 11, class 5: every format shows them).
    """

    path: str
    header: SessionHeader
    settings: Settings
    series: pl.DataFrame
    findings: list[Finding]
    conditions: list[Condition]
    onsets: dict[str, Any]
    not_evaluated: list[NotEvaluated] = field(default_factory=list)
    skipped: list[LogError] = field(default_factory=list)
    dependent: list[LogError] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    source_format: str = "native"
    cosine: dict[str, Any] = field(default_factory=dict)
    limits: list[Limit] = field(default_factory=list)
    rules_run: list[str] = field(default_factory=list)
    """Codes of the rules the audit ran (the selection)."""
    unjudged: dict[str, str] = field(default_factory=dict)
    """The rules of :attr:`rules_run` that judged no round, code -> why (the engine's
    :func:`~compaction_audit.engine.run_rules`); see :meth:`unjudged_rules`."""
    held_back: list[Finding] = field(default_factory=list)
    """The findings a baseline held back (``audit --baseline``): not in :attr:`findings`,
    so no gate counts them; SARIF lists them as unchanged (usertest61 B3)."""
    task: str | None = None
    """What names the run's task, whitespace collapsed: the ``task_query``, else the
    person's first prompt (:attr:`compaction_audit.cosine.query.TaskQuery.task`); None
    without one.  ``diff`` compares it (not written in any report: log text)."""

    def unjudged_rules(self) -> dict[str, str]:
        """Rules that judged nothing in this trace, code -> why, each without a
        finding: :attr:`unjudged`, plus the rules that judge what a fold lost or
        claims (families :data:`JUDGE_FOLDS`) when no compaction of the trace could be
        checked (:meth:`none_checked`, ux5 F4).  JUnit skips their cases; when every
        rule run is here the verdict says so (:meth:`judged_nothing`)."""
        found = {f.code for f in self.findings}
        out = {code: why for code, why in self.unjudged.items() if code not in found}
        if self.none_checked():
            for code in self.rules_run:
                cls = RULES.get(code)
                if cls is not None and cls.family in JUDGE_FOLDS and code not in found:
                    out.setdefault(code, NONE_CHECKED)
        return out

    def unjudged_reasons(self) -> dict[str, str]:
        """:meth:`unjudged_rules` with every reason of a rule that had several:
        ``"judged none of the 2 round(s): the first round has no earlier round to
        compare with (1 round); no work follows ... (1 round)"`` (usertest75 #9: JUnit's
        skip gave the reason of most rounds alone, where the text report gives both)."""
        out = self.unjudged_rules()
        for code in out:
            notes = [n for n in self.not_evaluated
                     if n.code == code and not n.reason.startswith("not applicable")]
            if len(notes) > 1:
                out[code] = (f"judged none of the {self.n_rounds} round(s): " + "; ".join(
                    f"{n.reason} ({n.rounds} round{'s' if n.rounds != 1 else ''})"
                    for n in notes))
        return out

    def rule_notes(self, salience_named: bool = False) -> list[str]:
        """One line per rule and reason it could not judge rounds ("CA101
        salience-inversion: not evaluated at 1 of 5 round(s): ..."), and one per
        reason the trace is not applicable to rules, naming them all ("CA201
        ungrounded-summary, CA305 unsupported-summary-claim: not applicable: no summary
        in this trace").  ``salience_named`` leaves out the salience rules' "not
        applicable" lines (a header that already says no salience is recorded).  A rule
        that judged no round for several reasons has a line that says so after
        theirs."""
        lines: list[str] = []
        grouped: dict[str, list[str]] = {}
        reasons = Counter(n.code for n in self.not_evaluated
                          if not n.reason.startswith("not applicable"))
        left = reasons.copy()
        for n in self.not_evaluated:
            if not n.reason.startswith("not applicable"):
                lines.append(f"{n.code} {n.rule}: not evaluated at {n.rounds} of "
                             f"{self.n_rounds} round(s): {n.reason}")
                left[n.code] -= 1
                if not left[n.code] and reasons[n.code] > 1 and n.code in self.unjudged:
                    # several reasons and no round judged, said in one line (usertest73
                    # #11: two lines of "1 of 2 round(s)", neither saying 0 of 2)
                    lines.append(f"{n.code} {n.rule}: judged none of the {self.n_rounds} "
                                 "round(s), for the reasons above")
            elif not (salience_named and "salience" in n.reason):
                if n.reason not in grouped:
                    lines.append(n.reason)  # the place of the group's line
                grouped.setdefault(n.reason, []).append(f"{n.code} {n.rule}")
        return [f"{', '.join(grouped[x])}: {x}" if x in grouped else x for x in lines]

    def lenient_phrase(self) -> str:
        """What ``--lenient`` left out: ``"1 bad record(s) skipped and 4 dependent
        reject(s) (--lenient)"``, without a count of 0 ("and 0 dependent reject(s)"
        was noise, ux7)."""
        parts = [f"{n} {what}" for n, what in (
            (len(self.skipped), "bad record(s) skipped"),
            (len(self.dependent), "dependent reject(s)")) if n]
        return " and ".join(parts) + " (--lenient)"

    def judged_nothing(self) -> bool:
        """True when rules ran, none fired, and each judged no round of the trace
        (:meth:`unjudged_rules`): a selection such as ``select = ["CA204"]`` on a log
        without salience (adv22a F2), or ``["CA203"]`` on a product's transcript, which
        logs no aggregate (adv23 F4), passed as if checked."""
        if not self.rules_run or self.findings or not self.n_rounds:
            return False
        unjudged = self.unjudged_rules()
        return all(code in unjudged for code in self.rules_run)

    def cosine_line(self) -> str:
        """One line for reports: the rebuilt cosine's method and query, and the series
        each salience rule read (issue 16: every report says which one)."""
        c = self.cosine
        if not c:
            return ""
        if c.get("method"):
            made = (f"query_cosine_rebuilt by {c['method']} against {c['query_detail']} "
                    f"({_count(c['items'], 'item')}, "
                    f"{_count(c['distinct_texts'], 'distinct text')})")
        else:
            made = f"query_cosine_rebuilt not computed: {c.get('reason')}"
        by_series: dict[str, list[str]] = {}
        for rule, series in c.get("used_by", {}).items():
            by_series.setdefault(series or "", []).append(rule)
        why = f" ({c['rebuilt_because']})" if c.get("rebuilt_because") else ""
        used = "; ".join(f"{' and '.join(rules)} read {series}"
                         + (why if series == c.get("inversion_signature") else "")
                         if series else f"{' and '.join(rules)}: no salience to read"
                         for series, rules in by_series.items())
        return made + (f"; {used}" if used else "")

    def signature_series(self) -> str:
        """The cosine series the inversion onset reads: ``query_cosine_retained`` (the
        logged salience) or ``query_cosine_rebuilt`` (the auditor's, where the log
        records none; ``cosine.inversion_signature``, issue 16).  The verdict and
        ``diff`` say when it is the rebuilt one (usertest41 #1, #2)."""
        return str((self.cosine or {}).get("inversion_signature") or "query_cosine_retained")

    @property
    def n_rounds(self) -> int:
        """Number of round records audited."""
        return self.series.height

    @property
    def line_files(self) -> bool:
        """True when the round lines of this trace are lines of several files (a Cline
        compaction file or manifest given: the series' ``line_file`` is set); every
        format then names the file of each line it shows, and the JSON report writes
        ``line_file`` beside each ``line`` (docs/ci.md).  False for a trace read from
        one file: the reports are then those of before ``line_file`` existed."""
        col = self.series.get_column("line_file", default=None)
        return col is not None and col.null_count() < len(col)

    def file_of_round(self, number: int | None) -> str | None:
        """The ``line_file`` of round ``number`` (None: unknown, or the trace itself)."""
        if number is None or not self.line_files:
            return None
        rows = self.series.filter(pl.col("round") == number)["line_file"]
        return rows[0] if len(rows) else None

    def line_of_round(self, number: object, esc: Callable[[object], str] = printable
                      ) -> str:
        """``" (line 19)"`` (``" (line 7 of FILE)"``): the line of round record
        ``number``, where an adapter opens a round at the person's turn that asked
        again; "" for a round the series does not hold."""
        if not isinstance(number, int):
            return ""
        rows = self.series.filter(pl.col("round") == number)["line"]
        if not len(rows) or rows[0] is None:
            return ""
        return f" ({line_at(rows[0], self.file_of_round(number), esc)})"

    def counts(self) -> dict[str, int]:
        """Findings per severity (every severity present, zeros included)."""
        c = Counter(f.severity.value for f in self.findings)
        return {s.value: c.get(s.value, 0) for s in Severity}

    def worst(self) -> Severity | None:
        """The highest severity among the findings, or None; at least ``warning`` when
        records were skipped (issue 11: a trace with skipped records never passes
        silently)."""
        severities = [f.severity for f in self.findings]
        if self.skipped or self.dependent:
            severities.append(Severity.WARNING)
        return max(severities, key=lambda s: s.rank) if severities else None

    def fails(self, fail_on: str) -> bool:
        """True when a finding reaches ``fail_on`` (one of :data:`FAIL_ON`).  A trace
        not fully checked (compactions that could not be checked, lines not read,
        lines that may be missing, checks stopped at their cap) counts as a warning for
        the gate, as ``--lenient`` skips do: ``--fail-on warning`` (or ``info``) fails
        it, the default ``error`` does not.  Without this no gate setting could fail a
        trace whose compaction was hidden from its reader (adv32 A4), or one padded
        until a check stopped before its finding (adv103 #1); the verdict keeps its
        head and says what was not checked."""
        worst = self.worst()
        if (self.compactions_not_checked() or self.lines_not_read() or self.limits
                or self.parents_missing()) and (
                worst is None or worst.rank < Severity.WARNING.rank):
            worst = Severity.WARNING
        return fails(worst, fail_on)

    def compactions_not_checked(self) -> int:
        """Compactions whose loss could not be checked: ``lost_checked`` false (an opaque
        encrypted summary, a redacted one), plus the compaction files an adapter found
        beside the input and did not read (``compaction_files_unread`` of the session
        record: a Cline messages file with several compaction files beside it)."""
        return (sum(1 for c in self.compactions if c.get("lost_checked") is False)
                + unread_count(self.header.extra))

    def lines_not_read(self) -> int:
        """Lines of the trace its adapter did not read (``lines_not_read`` of the
        session record, explained in its reader notes; 0 when it read every line):
        issue 11, adv9 F5, adv27 F2."""
        n = self.header.extra.get("lines_not_read")
        return n if type(n) is int and n > 0 else 0

    def parents_missing(self) -> int:
        """Lines of the trace naming a parent line the file does not hold
        (``parents_missing`` of the session record, the Claude Code reader's:
        :mod:`compaction_audit.io.claude_parents`; 0 for none): lines may be missing
        before them, such as a deleted compaction's (usertest76 F5)."""
        n = self.header.extra.get("parents_missing")
        return n if type(n) is int and n > 0 else 0

    def missing_phrase(self) -> str:
        """:meth:`parents_missing` in words, "" for none: "line 1,256 names a parent not
        in the file: lines may be missing", "3 lines name a parent not in the file, the
        first line 1,256: lines may be missing"."""
        n = self.parents_missing()
        if not n:
            return ""
        first = self.header.extra.get("parents_missing_line")
        known = type(first) is int and first > 0
        if n == 1:
            who = f"line {first:,} names" if known else "1 line names"
            return f"{who} a parent not in the file: lines may be missing"
        at = f", the first line {first:,}" if known else ""
        return f"{n:,} lines name a parent not in the file{at}: lines may be missing"

    def none_checked(self) -> bool:
        """True when the trace has compactions and not one of them could be checked
        (:meth:`compactions_not_checked`): the rules that judge what a fold lost or
        claims had nothing to judge, which is no pass (ux5 F4)."""
        checked = sum(1 for c in self.compactions if c.get("lost_checked") is not False)
        return checked == 0 and self.compactions_not_checked() > 0

    def converted_from(self) -> str | None:
        """The product's file this converted trace names its lines in (``compaction-audit
        convert``: a native log whose session record names a ``source_format``): its file
        name (``span_line_file``: the log converted, or for a Cline manifest its
        messages file), or "the <product> log"; None for a log read as written."""
        extra = self.header.extra
        product = extra.get("source_format")
        if self.source_format != "native" or product in (None, "native"):
            return None
        name = extra.get("span_line_file")
        return str(name)[:200] if isinstance(name, str) and name else f"the {product} log"

    def _beside(self) -> str:
        """Where the compaction files an adapter did not read are: beside the trace, or
        beside the product log a converted trace came from (usertest26b #7: the advice
        to audit the files beside it could not be followed from the converted file)."""
        source = self.converted_from()
        return ("beside it" if source is None
                else f"beside {source} (where this trace was converted from)")

    def unchecked_phrase(self) -> str:
        """What the audit of this trace could not cover, for the header of the text and
        HTML reports ("" for nothing): the compactions whose loss could not be checked,
        with why, the lines an adapter did not read and the lines that may be missing
        (the verdict's
        :meth:`incomplete_note`; checks stopped at a limit have their own "limit"
        lines)."""
        parts = []
        n = self.compactions_not_checked()
        if n:
            why = Counter(UNCHECKED.get(reason, reason) for c in self.compactions
                          if c.get("lost_checked") is False
                          for reason in [str(c.get("not_checked_reason") or "no summary text")])
            reasons = [f"{k} ({v})" if v > 1 else k for k, v in why.items()]
            unread = unread_count(self.header.extra)
            if unread:
                # what to do, on the first screen (usertest29 #12: a PASS over a
                # messages file whose compactions fail when the folder is audited)
                reasons.append(f"{unread} compaction file{'s' if unread > 1 else ''} "
                               f"{self._beside()} not read (audit the folder, or each "
                               "file by name, to check them)")
            parts.append(f"{n} compaction{'s' if n > 1 else ''} could not be checked: "
                         + ", ".join(reasons))
        not_read = self.lines_not_read()
        if not_read:
            parts.append(f"{not_read:,} line{'s' if not_read > 1 else ''} not read "
                         "(see the notes)")
        if missing := self.missing_phrase():
            parts.append(missing)
        return "; ".join(parts)

    def unchecked(self) -> list[tuple[str, str | None, int]]:
        """Each compaction whose loss could not be checked, as ``(message, line_file,
        line)``, for the formats that annotate it (``github`` notices, SARIF
        notifications, a skipped JUnit case: never a pass in disguise, docs/ci.md): an
        opaque or redacted summary at its compaction's line ("compaction at round 1
        could not be checked: opaque summary"; an adapter's own reason, e.g. "no
        messages file", as it is), then the compaction files an adapter found beside
        the input and did not read, as one entry of no line (0) naming the first five."""
        out = []
        for c in self.compactions:
            if c.get("lost_checked") is False:
                reason = str(c.get("not_checked_reason") or "no summary text")
                out.append((f"compaction at round {c.get('round')} could not be checked: "
                            f"{UNCHECKED.get(reason, reason)}", c.get("line_file"),
                            c.get("line") or 1))
        unread = unread_count(self.header.extra)
        if unread:
            from compaction_audit.io.cline_folder import names_note

            names = self.header.extra.get("compaction_files_unread")
            named = names_note([str(n) for n in names], unread) if isinstance(
                names, list) else ""
            beside = "beside the trace" if self.converted_from() is None else self._beside()
            out.append((f"{_count(unread, 'compaction file')} {beside} not read, "
                        f"so not checked{': ' + named if named else ''}; audit each by "
                        "name (or the folder)", None, 0))
        return out

    def incomplete_note(self) -> str:
        """What the verdict could not cover, as a "; ..." suffix ("" for nothing): the
        compactions that could not be checked (issue 10, point 8), the lines an adapter
        did not read (``lines_not_read`` of the session record, explained in its reader
        notes: issue 11, adv9 F5), the lines that may be missing
        (:meth:`missing_phrase`) and the checks that stopped at their cap (issue 11,
        class 5: a capped check never passes silently), e.g. "; 1 compaction could not
        be checked; 1 check stopped at its limit"; first, when no rule of the selection
        could judge the trace (:meth:`judged_nothing`)."""
        note = "; no selected rule could judge this trace" if self.judged_nothing() else ""
        unchecked = self.compactions_not_checked()
        if unchecked:
            note += (f"; {unchecked} compaction{'s' if unchecked > 1 else ''} could not "
                     "be checked")
        not_read = self.lines_not_read()  # issue 11, adv9 F5
        if not_read:
            note += f"; {_count(not_read, 'line')} not read, see the notes"
        if missing := self.missing_phrase():  # usertest76 F5
            note += f"; {missing}"
        if self.limits:
            n = len(self.limits)
            note += (f"; {n} check{'s' if n > 1 else ''} stopped at "
                     f"{'their' if n > 1 else 'its'} limit")
        return note

    def suppressed(self) -> int:
        """Findings the configuration's ``[[suppress]]`` entries silenced in this trace
        (:mod:`compaction_audit.suppress`); said in the verdict and the gate line, since
        a fold suppressed by its id holds for every trace, and a log chooses its own
        ids (adv31 N6: only the JSON report said it)."""
        info = self.extra.get("suppressions")
        return int(info.get("findings", 0)) if isinstance(info, dict) else 0

    def drift_only(self) -> bool:
        """Whether the trace reached an inversion onset or boundary while a condition of
        inversion fails: its rounds read as drift, in the verdict, the summary tables and
        ``diff`` (usertest63 #2, adv121 #5)."""
        return (any(self.onsets.get(k) is not None
                    for k in ("inversion_onset", "inversion_boundary"))
                and not can_invert(self.conditions))

    def baselined(self) -> int:
        """Findings of this trace the ``--baseline`` file held back
        (:mod:`compaction_audit.baseline`); said in the verdict, so that ``-q``
        says a PASS is a PASS over a baseline (usertest9)."""
        info = self.extra.get("baseline")
        n = info.get("suppressed", 0) if isinstance(info, dict) else 0
        return n if type(n) is int and n > 0 else 0

    def verdict_head(self) -> str:
        """FAIL (an error), WARN (a warning, or skipped records: see :meth:`worst`) or
        PASS."""
        worst = self.worst()
        if worst is not None and worst.rank >= Severity.ERROR.rank:
            return "FAIL"
        return "WARN" if worst is not None and worst.rank >= Severity.WARNING.rank else "PASS"

    def verdict(self) -> str:
        """A one-line verdict in plain words: the head word, what could not be checked
        in parentheses (issue 10, point 8: "PASS (1 compaction could not be checked):
        ..."; see :meth:`incomplete_note`), then the counts and the onsets."""
        c = self.counts()
        note = self.incomplete_note()
        head = self.verdict_head() + (f" ({note.removeprefix('; ')})" if note else "")
        held = ([f"{n} suppressed by [[suppress]]"] if (n := self.suppressed()) else []) + (
            [f"{b} in the baseline"] if (b := self.baselined()) else [])  # one bracket
        parts = [f"{c['error']} error(s), {c['warning']} warning(s), {c['info']} info"
                 + (f" ({', '.join(held)})" if held else "")]  # (usertest59 #7)
        if self.skipped or self.dependent:
            parts.append(self.lenient_phrase())
        if (said := self._onsets_said()) is not None:
            parts.append(said)
        elif self.compactions and (loss := self.compaction_loss()):
            parts.append(loss)  # an agent product's log: what its compactions lost (ux7)
        elif (self.source_format != "native" and not self.compactions
              and not self.compactions_not_checked()):
            # an agent product's log that never compacted: why it passes, in its terms
            # (a Cline messages file beside its compaction files read a PASS of "this
            # loop can drift but not invert": a CI engineer's test); and where this run
            # audits its compaction files as their own traces, so (usertest8: "no
            # compaction in this log" of a session that compacted twice)
            audited = self.header.extra.get("compaction_files_audited")
            parts.append(
                f"no compaction in this file; its {_count(audited, 'compaction file')} "
                "audited in this run as traces of their own" if type(audited) is int
                and audited > 0 else "no compaction in this log")
        elif not can_invert(self.conditions):
            parts.append("this loop can drift but not invert")
        return f"{head}: " + "; ".join(parts)

    def _onsets_said(self) -> str | None:
        """The verdict's words for the inversion onset and boundary (spec rules.md,
        "Onsets"), None when neither was reached; where a condition of inversion fails
        (:meth:`drift_only`) they lead with "this loop can drift but not invert"."""
        o = self.onsets
        cosine = ("(on query_cosine_rebuilt, the auditor's cosine)"
                  # the spec reads the logged salience; the auditor's own cosine stands
                  # in where the log lacks it (issue 16), and the first line says so
                  # (usertest41 #1: a delta-mode onset read as a logged-salience one)
                  if self.signature_series() == "query_cosine_rebuilt" else "")
        # the onset (spec rules.md, "Onsets") is what diff compares: say it by that name
        onset, boundary = o.get("inversion_onset"), o.get("inversion_boundary")
        if self.drift_only():
            # where a condition of validity fails (seed 000) the signature is not read
            # as an inversion: the verdict says so first, then the rounds diff compares
            # (usertest63 #2: "inversion boundary crossed at round 3 (but a condition of
            # inversion fails)" beside a header saying "drift only")
            rounds = (f"inversion onset and boundary at round {boundary}" if onset == boundary
                      else f"inversion onset at round {onset} and boundary at round "
                      f"{boundary}" if onset is not None and boundary is not None
                      else f"inversion boundary at round {boundary}" if boundary is not None
                      else f"inversion onset at round {onset}")
            absent = ("no inversion onset" if onset is None
                      else "the signature; no boundary" if boundary is None else "")
            aside = "; ".join(filter(None, (absent, cosine.strip("()"))))
            return ("this loop can drift but not invert (a condition of inversion fails): "
                    f"{rounds} read as drift" + (f" ({aside})" if aside else ""))
        if boundary is not None:  # both named, also at one round (usertest49 #5: the
            return (  # onset diff compares was said nowhere in the text)
                f"inversion onset and boundary at round {boundary}" if onset == boundary
                else (f"inversion onset at round {onset}, " if onset is not None
                      # spec rules.md, "Onsets": a session with no onset says so
                      # (usertest56 #8: the boundary alone read as if the onset were
                      # unknown)
                      else "no inversion onset, ")
                + f"inversion boundary crossed at round {boundary}"
                + (f" {cosine}" if cosine else ""))
        if onset is not None:
            return (f"inversion onset at round {onset} (the signature; no boundary)"
                    + (f" {cosine}" if cosine else ""))
        return None

    def compaction_loss(self) -> str:
        """What the checked compactions of an agent product's log lost, for the verdict:
        ``"1 compaction lost 210 fact(s), 81 that matter"`` (tiers 1-4 of
        :mod:`compaction_audit.recall.ranking`, the facts the report lists first); ""
        when no compaction could be checked.  For such a log the question is what
        compaction lost, not inversion, which it cannot show (ux7: its verdict said
        "this loop can drift but not invert" and never how much was lost)."""
        from compaction_audit.recall.ranking import LOW_TIERS

        checked = [c for c in self.compactions if c.get("lost_checked") is not False]
        if not checked:
            return ""
        lost = [d for c in checked for d in (c.get("lost") or []) if isinstance(d, dict)]
        matter = sum(1 for d in lost if d.get("tier") not in LOW_TIERS)
        hidden = sum(lost_suppressed(c) for c in checked)
        n = len(checked)
        return (f"{n} compaction{'s' if n > 1 else ''} lost {len(lost) + hidden} fact(s)"
                + (f", {matter} that matter{'s' if matter == 1 else ''}" if lost else "")
                + answered_phrase(lost) + broken_phrase(self.findings)
                + (f", {hidden} suppressed by [[suppress]]" if hidden else ""))


ANSWER_LINES = 3
"""Lines of answers from the summary the verdict names at most."""


def answered_phrase(lost: list[dict[str, Any]]) -> str:
    """", 2 of them answered from the summary (line 22)": the lost facts a person asked for
    again that the assistant then answered without reading them again (an answer from
    the summary: the harm the loss did), with the lines of those answers (at most
    :data:`ANSWER_LINES`); "" for none (usertest72: the line that matters most was
    under the list, the verdict counted it with the trivia)."""
    answers = [d for d in lost if d.get("answered_line") is not None]
    if not answers:
        return ""
    said = _named(fact_line(d["answered_line"], d.get("answered_file")) for d in answers)
    return f", {len(answers)} of them answered from the summary ({said})"


def _named(places: Iterable[str]) -> str:
    """The distinct ``places`` in order, at most :data:`ANSWER_LINES` of them named:
    ``"line 1, line 2, line 3 and 1 more"``."""
    distinct = list(dict.fromkeys(places))
    more = len(distinct) - ANSWER_LINES
    return ", ".join(distinct[:ANSWER_LINES]) + (f" and {more} more" if more > 0 else "")


def broken_phrase(findings: list[Finding]) -> str:
    """", 1 lost rule broken by a later action (line 24)": the rules a fold lost that a
    later action then broke (CA307 lost-rule-violated), with where each action was (its
    ``violated_at`` line, else its round; at most :data:`ANSWER_LINES`); "" for none.
    The worst harm a loss did belongs in the verdict beside the answers from the
    summary (usertest75 #6: a destructive command the lost rule forbade was in the
    findings only)."""
    broken = [f for f in findings if f.code == "CA307"]
    if not broken:
        return ""
    said = _named(printable(f.values.get("violated_at")
                            or f"round {f.values.get('violated_round', f.round)}")
                  for f in broken)
    n = len(broken)
    return f", {n} lost rule{'s' if n > 1 else ''} broken by a later action ({said})"


def fails(worst: Severity | None, fail_on: str) -> bool:
    """True when ``worst`` is at or above ``fail_on``."""
    if fail_on == "never" or worst is None:
        return False
    return worst.rank >= Severity(fail_on).rank


@dataclass
class Report:
    """A whole audit run: the traces audited and the ones that could not be read;
    ``config``: the configuration file used, as shown (None: none)."""

    sessions: list[SessionReport]
    errors: list[LogError] = field(default_factory=list)
    config: str | None = None

    def exit_code(self, fail_on: str) -> int:
        """0: nothing reaches ``fail_on``; 1: a finding does; 2: a trace was unreadable."""
        if self.errors:
            return 2
        return 1 if any(s.fails(fail_on) for s in self.sessions) else 0


def unread_count(extra: dict[str, Any]) -> int:
    """How many compaction files ``compaction_files_unread`` of a session record counts:
    its ``compaction_files_unread_truncated`` ``total`` when the list names only the
    first few (a Cline note lists at most five), else the list's length."""
    cut = extra.get("compaction_files_unread_truncated")
    if isinstance(cut, dict) and type(cut.get("total")) is int:
        return int(cut["total"])
    unread = extra.get("compaction_files_unread")
    return len(unread) if isinstance(unread, list) else 0


def settle_unread(sessions: list[SessionReport]) -> None:
    """Drop from each trace's ``compaction_files_unread`` (the compaction files an
    adapter found beside it and did not read: a Cline messages file with several) the
    files this same run audits as traces of their own, in place, with a reader note
    naming them: auditing the folder checks every compaction, and the trace must not
    say "could not be checked" of them.  A file is matched by its real path (a name
    the adapter escaped, not UTF-8, stays unread).  The folder's files are taken from
    the adapter's index of the folder (:func:`compaction_audit.io.cline_folder.settle`),
    split once per session: n messages files beside n compaction files of one session
    cost n, not n x n (issue 11, class 5, adv13 F1); the list and the note name the
    first five.  The Cline adapter's folder module loads only when a trace has such
    files (issue 14, item 4)."""
    audited = {os.path.realpath(s.path) for s in sessions if "://" not in s.path}
    memo: dict[int, Any] = {}
    for s in sessions:
        extra = s.header.extra
        unread = extra.get("compaction_files_unread")
        if not isinstance(unread, list) or not unread or "://" in s.path:
            continue
        from compaction_audit.io.cline_folder import names_note, settle, unread_note, unread_of

        settled = settle(s.path, s.header.session_id, audited, memo)
        if settled is None or not settled.checked:
            continue
        extra["compaction_files_unread"] = settled.left_names
        extra["compaction_files_audited"] = settled.checked  # the verdict says so
        extra.pop("compaction_files_unread_truncated", None)
        if settled.left > len(settled.left_names):
            extra["compaction_files_unread_truncated"] = {
                "truncated": True, "shown": len(settled.left_names), "total": settled.left}
        notes = extra.get("reader_notes")
        many = settled.checked > 1
        left, orphan = settled.left, settled.orphan
        extra["reader_notes"] = [  # the reader's note of the files not read, restated
            *(unread_note(left, here, settled.left_names, orphan)  # for those still not
              if (here := unread_of(note)) else note  # read, or left out (ux7: it said
              for note in (notes if isinstance(notes, list) else [])  # "audit each by
              if settled.left or not unread_of(note)),  # name" of files audited here)
            f"audited in this run as {'traces' if many else 'a trace'} of "
            f"{'their' if many else 'its'} own: "
            f"{names_note(settled.checked_names, settled.checked)}"]


def session_named(h: SessionHeader) -> str:
    """The session line's name: its ``session_id``, else whether there was a session
    record at all (usertest41 #8: a record without ``session_id``, whose ``max_depth``
    the audit read, was shown as "no session record"); of a product's log (an adapter's
    record), that the log names none."""
    if h.session_id is not None:
        return h.session_id
    if "source_format" in h.extra:  # an adapter's record: the product's log names none
        return "(no session id in the log)"
    return "(no session_id in the session record)" if h.present else "(no session record)"


def reader_notes(r: SessionReport) -> list[str]:
    """What the adapter said about the input (``reader_notes`` of the session record,
    e.g. "opencode format version 2.0.0 not seen before; read as 1.x"; issue 15)."""
    notes = r.header.extra.get("reader_notes")
    if not isinstance(notes, list):
        return []
    if r.converted_from() is None:
        return [str(n) for n in notes]
    product = r.header.extra.get("source_format")  # said of that log and its folder
    return [f"{n} (said when the {product} log was read, before its conversion to this "
            "trace)" for n in notes]


def _count(n: int, noun: str) -> str:
    """``1 item``, ``2 items``: a count with its noun in the right number."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
