"""The Markdown report, for a pull-request comment (GitHub-flavoured Markdown).

A heading with the gate's result, the summary table across traces, then one
collapsible section per trace with its findings grouped into episodes (a rule firing
on consecutive rounds is one row naming the rounds and lines), errors first, then
warnings, then info (within a severity by rule code, then round).  Log text is escaped
by :func:`md`: control characters made visible, HTML and Markdown punctuation
neutralized, ``@`` and ``#`` written as entities so that no one is mentioned and no
issue is linked.
"""

from __future__ import annotations

import re

from compaction_audit.recall.ranking import LOW_TIERS
from compaction_audit.report.advice import episode_advice
from compaction_audit.report.compaction_text import (
    NAMED_ABOVE,
    lost_suppressed,
    low_tiers_phrase,
    split_lost,
)
from compaction_audit.report.formats import RenderOptions
from compaction_audit.report.gaps import total_phrases
from compaction_audit.report.lines import asked_where, fact_line, line_at
from compaction_audit.report.model import Report, SessionReport
from compaction_audit.report.safe import printable
from compaction_audit.report.summary import (
    baseline_info,
    ends,
    episodes,
    gate_line,
    said,
    stale_lines,
    worst_first,
    worst_rows,
)

MAX_ROWS = 50
"""Episodes listed per trace; the rest are counted (a comment has a size limit)."""

MAX_CHARS = 60_000
"""Longest Markdown report (UTF-16 code units, the newline included): below GitHub's
65,536 characters for a pull-request comment; :func:`fit` cuts a longer one and says
so.  Counted in UTF-16 units, as a browser counts a string's length: a character past
U+FFFF (an emoji) is two, so 60,000 code points of them were 120,000 (adv35)."""


JOB_SUMMARY_CHARS = 340_000
"""Longest Markdown report appended to a GitHub Actions job summary (UTF-16 code units):
GitHub takes 1 MiB a step, and 340,000 units are at most 1,020,000 bytes of UTF-8 (three
bytes a unit, four a pair).  usertest47 #4: the job summary was cut at the pull-request
comment's 60,000 and said "cut to fit a pull-request comment"."""


def _units(line: str) -> int:
    """The length of ``line`` and its newline in UTF-16 code units."""
    return len(line.encode("utf-16-le", "surrogatepass")) // 2 + 1

_PUNCT = re.compile(r"([\\`*_{}\[\]()|~!+\-.])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "@": "&#64;", "#": "&#35;",
             "$": "&#36;"}


def _split(s: str) -> str:
    """``s`` (escaped) with an empty HTML comment after each ``&#64;`` and ``&#35;``,
    which GitHub shows as nothing: its Markdown decodes an entity before it links an
    e-mail address (``admin&#64;evil.example`` was a ``mailto:`` link: adv138 #6), and
    mentions and issue references are read from the rendered text; the comment splits
    the text there.  A ``&`` of the text itself is ``&amp;``, so no entity of the text
    is matched.  So too within ``GH-123`` (an issue reference) and a run of 7 to 40 hex
    digits that holds a digit and a letter (a commit's hash), which GitHub links from
    the text as well (adv139 #9)."""
    s = s.replace("&#64;", "&#64;<!-- -->").replace("&#35;", "&#35;<!-- -->")
    return _HASHLIKE.sub(r"\1<!-- -->\2", _GH_REF.sub(r"\1<!-- -->", s))


_GH_REF = re.compile(r"(?i)\b(GH)(?=\\-\d)")
_HASHLIKE = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])"
                       r"([0-9a-fA-F]{3})([0-9a-fA-F]{4,37})\b")


_COLON = re.compile(r":(?=[\w/])")
"""A colon that opens an emoji code (``:smile:``) or a URL (``https://``)."""


def md(text: object) -> str:
    """Untrusted text as inert one-line Markdown (safe inside a table cell)."""
    s = printable(text)
    s = "".join(_ENTITIES.get(c, c) for c in s)
    return _split(_COLON.sub("&#58;", _PUNCT.sub(r"\\\1", s)))


_HTML_ENTITIES = {**_ENTITIES, '"': "&quot;", "'": "&#39;"}


def _html(text: object) -> str:
    """Untrusted text inside an HTML element of the Markdown (a ``<summary>``): each
    character replaced once (adv49: ``html.escape`` then ``#`` -> ``&#35;`` escaped the
    ``#`` of ``&#x27;`` again, and a file name ``bob's`` showed ``&#x27;``), emoji codes
    and URLs broken as :func:`md` breaks them."""
    s = "".join(_HTML_ENTITIES.get(c, c) for c in printable(text))
    return _split(_COLON.sub("&#58;", s))


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def summary_table(report: Report, fail_on: str | None = None) -> list[str]:
    """The summary across traces as Markdown table lines, the worst verdicts first
    (:func:`~compaction_audit.report.summary.worst_rows`)."""
    rows = worst_rows(report, fail_on)
    with_baseline = any(r.baselined is not None for r in rows)
    extra = ["baselined", "stale"] if with_baseline else []
    head = ["trace", "rounds", "errors", "warnings", "info", *extra, "inversion onset",
            "inversion boundary", "verdict"]
    lines = ["| " + " | ".join(head) + " |",
             "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for r in rows:
        counts = [r.rounds, r.errors, r.warnings, r.info,
                  *((r.baselined, r.stale) if with_baseline else ()), r.onset, r.boundary]
        verdict = f"**{r.verdict}**" + (f" {md(r.detail)}" if r.detail else "")
        lines.append(f"| {md(r.trace)} | " + " | ".join(_num(c) for c in counts)
                     + f" | {verdict} |")
    return lines


LOST_ROWS = 15
"""Lost facts listed per compaction (the top tiers; the low tiers are counted)."""


def lost_lines(s: SessionReport, show_all: bool = False) -> list[str]:
    """What each compaction lost, facts that matter first: the top tiers (1-4) as a
    list of at most :data:`LOST_ROWS` (every item with ``show_all``), the low tiers
    counted; an unchecked compaction says so."""
    out: list[str] = []
    for c in s.compactions:
        if c.get("lost_checked") is False:
            where = line_at(c["line"], c.get("line_file"), md)
            out += [f"Compaction at round {c['round']} ({where}): could not be "
                    f"checked ({md(c.get('not_checked_reason') or 'no summary text')}).", ""]
            continue
        lost = c.get("lost") or []
        hidden = lost_suppressed(c)
        if not lost and not hidden:
            continue
        top = [d for d in lost if d.get("tier") not in LOW_TIERS]
        # as the text report: a clause's own values are named under the list, not
        # listed again (usertest72: "prod", "--force" and "migration 0047" were three
        # more lines after "do NOT run the prod migration 0047 with --force")
        shown, above, left = (lost, [], 0) if show_all else split_lost(lost, LOST_ROWS)
        said = f"{len(lost) + hidden} fact(s)"
        if not lost:  # every one suppressed
            said += md(", all suppressed by [[suppress]]")
        else:
            said += md(f" ({hidden} suppressed by [[suppress]])") if hidden else ""
            said += ", those that matter first:" if top else ", none that matter:"
        out.append(f"Lost at the compaction of round {c['round']} "
                   f"({line_at(c['line'], c.get('line_file'), md)}): {said}")
        out.append("")
        for d in shown:
            where = (f", {fact_line(d['span_line'], d.get('span_file'), md)}"
                     if d.get("span_line") is not None else "")
            again = (f", asked again at round {d['asked_again_round']}"
                     f"{asked_where(d, s, md)}"
                     if d.get("asked_again") else "")
            if d.get("answered_line") is not None:  # as the text report says it
                answer = fact_line(d["answered_line"], d.get("answered_file"), md)
                again += f", answered at {answer} without reading it again"
            if d.get("reread_line") is not None:
                again += f", read again at {fact_line(d['reread_line'], d.get('reread_file'), md)}"
            tier = d.get("tier_name") or ""
            kind = "" if tier.endswith(d["kind"]) else f"{md(d['kind'])} "  # not twice
            out.append(f"- {md(tier)}: {kind}"
                       f"{_code(d['text'])} ({md(d.get('source') or '?')}{where}{again})")
        if not show_all:
            if above:
                named = ", ".join(_code(d["text"]) for d in above[:NAMED_ABOVE])
                more = f" and {len(above) - NAMED_ABOVE} more" if len(above) > NAMED_ABOVE else ""
                out.append(f"- {left} more that matter{'s' if left == 1 else ''}, within the "
                           f"clauses above: {named}{more}")
            if len(top) > len(shown) + left:
                out.append(rf"- {len(top) - len(shown) - left} more (\-\-all)")
            low = low_tiers_phrase(lost)
            if low:
                out.append(rf"- not listed: {md(low)} (\-\-all lists them)")
        out.append("")
    return out


def _lines(first: int, first_file: str | None, last: int, last_file: str | None) -> str:
    """The lines column of an episode: ``7``, ``7\u201312``, and with the file each is
    in when it is not the trace (``line_file``, escaped): ``7 of X``, ``712 of A \u2013
    7 of B``."""
    a = f"{first} of {md(first_file)}" if first_file and first_file != last_file else str(first)
    if first == last and first_file == last_file:
        return a + (f" of {md(last_file)}" if last_file else "")
    return f"{a}\u2013{last}" + (f" of {md(last_file)}" if last_file else "")


def _code(text: object) -> str:
    """Untrusted text as a whole code span: printable, one line, at most 200
    characters, its backticks kept as the log has them (a lost fact is quoted, not
    reworded): the fence is one backtick longer than the text's longest run of them,
    with a space inside it when the text starts or ends with a backtick or a space
    (CommonMark, "Code spans": one such space is stripped on each side)."""
    body = printable(text)[:200]  # one line: printable writes a newline as two characters
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if not body or body[:1] in "` " or body[-1:] in "` " else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def session_section(s: SessionReport, open_: bool, show_all: bool = False) -> list[str]:
    """One trace: a collapsible block with its findings as episodes and their actions,
    then what each compaction lost (:func:`lost_lines`)."""
    lines = [f"<details{' open' if open_ else ''}><summary>{_html(s.path)}: "
             f"{_html(s.verdict())}</summary>", ""]
    info = baseline_info(s)
    if info and info["suppressed"] and not s.findings:  # nothing new: no lists
        return [*lines, f"All {info['suppressed']} finding(s) are in the baseline: nothing "
                "new.", "", "</details>", ""]
    lines += lost_lines(s, show_all)
    if s.cosine:
        lines += [f"Cosine: {md(s.cosine_line())}", ""]
    if s.skipped:
        lines += [f"{len(s.skipped)} bad record(s) skipped (--lenient): "
                  + "; ".join(md(str(e)) for e in s.skipped[:10])
                  + (" ..." if len(s.skipped) > 10 else ""), ""]
    lines += [f"Limit: {md(x.message())}" for x in s.limits] + ([""] if s.limits else [])
    if info and info["suppressed"]:
        lines += [f"{info['suppressed']} baselined finding(s) not shown.", ""]
    runs = worst_first(list(episodes(s.findings)))  # errors first, then by rule and round
    if not runs:
        lines += ["No findings.", "", "</details>", ""]
        return lines
    lines += ["| severity | rule | rounds | lines | message |", "|---|---|---|---|---|"]
    for run in runs[:MAX_ROWS]:
        first, last = ends(run)
        rounds = (str(first.round) if first.round == last.round
                  else f"{first.round}\u2013{last.round}")
        where = _lines(first.line, first.line_file, last.line, last.line_file)
        if len(run) > 1:  # the findings the verdict counts (ux5 F8)
            rounds += f" ({len(run)} findings)"
        sev = max((f.severity for f in run), key=lambda v: v.rank)
        advice = episode_advice(first, last)  # the summary to rehydrate, as a line
        message = md(said(first, sev)) + (f"<br>{md(advice)}" if advice else "")
        lines.append(f"| {sev.value} | {first.code} {md(first.rule)} | {rounds} | "
                     f"{where} | {message} |")
    if len(runs) > MAX_ROWS:
        lines.append(f"\n{len(runs) - MAX_ROWS} more episode(s) not shown.")
    lines.append("")
    actions = {run[0].code: (run[0].rule, run[0].action) for run in runs}  # table order
    lines += [f"- **{code} {md(rule)}**: {md(action)}"
              for code, (rule, action) in actions.items()]
    lines += ["", "</details>", ""]
    return lines


def heading_word(report: Report, failing: bool) -> str:
    """The Markdown heading's word: ERROR when a trace was unreadable (exit 2, an input
    error, not a finding: usertest23 #5), else FAIL or PASS as the gate decided."""
    return "ERROR" if report.errors else "FAIL" if failing else "PASS"


def render_markdown(report: Report, opts: RenderOptions) -> bytes:
    """The report as a Markdown document (UTF-8 bytes, newline-terminated)."""
    failing = report.exit_code(opts.fail_on) != 0
    capped = sum(len(s.limits) for s in report.sessions)
    failing_traces = sum(s.fails(opts.fail_on) for s in report.sessions)
    gaps = total_phrases(report.sessions) + (  # adv29 F2
        [f"{capped} check(s) stopped at a limit"] if capped else [])
    notes = ([f"{len(report.errors)} unreadable"] if report.errors else []) + (
        # under ERROR the traces that failed the gate are said too (usertest24 #4), and
        # beside a gap, which read as the failure's cause (usertest61 C3: "FAIL (1
        # compaction could not be checked)" over 8 traces with errors)
        [f"{failing_traces} failing --fail-on {opts.fail_on}"]
        if failing_traces and (report.errors or gaps) else []) + gaps
    note = f" ({'; '.join(notes)})" if notes else ""
    # the gate's line is our words and numbers only: written as it is, so that it
    # reads the same in a CI log as rendered (ux5 F11: "1 trace\(s\), 1 reach \-\-fail\-on")
    lines = [f"## compaction-audit: {heading_word(report, failing)}{note}", "",
             gate_line(report, opts.fail_on), ""]
    if report.config is not None:  # a checkout's fail-on = "never" is said (adv24 F5)
        lines += [f"config: {md(report.config)}", ""]
    lines += summary_table(report, opts.fail_on)
    lines.append("")
    stale = stale_lines(report, opts.show_all)
    lines += [f"- {md(line)}" for line in stale] + ([""] if stale else [])
    if not opts.summary_only:
        single = len(report.sessions) == 1
        for s in report.sessions:
            lines += session_section(s, open_=single or s.fails(opts.fail_on),
                                     show_all=opts.show_all)
    cut = (fit(lines, JOB_SUMMARY_CHARS, "the job summary") if opts.job_summary
           else fit(lines))
    return ("\n".join(cut).rstrip("\n") + "\n").encode("utf-8")


def fit(lines: list[str], limit: int = MAX_CHARS, place: str = "a pull-request comment"
        ) -> list[str]:
    """``lines`` when they total at most ``limit`` UTF-16 code units (with newlines,
    :func:`_units`), else
    the first ones that leave room for a note, a ``</details>`` closing a cut section,
    and the note: how many summary rows and trace sections were left out and where the
    full report is.
    """
    total = sum(map(_units, lines))
    if total <= limit:
        return lines
    budget, used, inside = limit - 1_000, 0, False
    kept: list[str] = []
    for line in lines:
        if used + (size := _units(line)) > budget:
            break
        kept.append(line)
        used += size
        inside = line.startswith("<details") or (inside and line != "</details>")
    rest = lines[len(kept):]
    first = next((i for i, line in enumerate(rest) if line.startswith("<details")), len(rest))
    parts = []
    if not any(line.startswith("<details") for line in kept):  # cut in the summary table
        parts.append(f"{sum(line.startswith('| ') for line in rest[:first])} summary row(s) "
                     "(passing traces last)")
    parts.append(f"{sum(line.startswith('<details') for line in rest)} trace section(s)")
    if inside:
        kept += ["", "(cut here)", "", "</details>"]
        parts.append("the end of the section cut above")
    what = "; ".join(parts)
    kept += ["", f"**Report cut to fit {place}** ({limit:,} of {total:,} "
             f"characters). Not shown: {what}. The full report is the job's artifact: "
             "write it with `--format json -o FILE` (or sarif, junit) and upload FILE."]
    return kept
