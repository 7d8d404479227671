"""HTML fragments shared by the audit and diff pages: tables, the round panel, the
rules reference.  Every value from a log goes through :func:`~.page.esc`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from compaction_audit.recall.ranking import LOW_TIERS
from compaction_audit.report.compaction_text import (
    compaction_kind,
    compaction_sizes,
    lost_phrase,
    low_tiers_phrase,
)
from compaction_audit.report.html.data import (
    MAX_ROWS,
    MAX_SUMMARY_CHARS,
    Episode,
    clip,
    rule_anchor,
)
from compaction_audit.report.html.page import esc
from compaction_audit.report.lines import fact_line, line_at
from compaction_audit.report.model import SessionReport
from compaction_audit.rules import RULES
from compaction_audit.rules.base import fmt


def cell(value: object, num: bool = False) -> str:
    """One ``<td>``; numbers formatted as in the terminal, right-aligned."""
    text = fmt(value) if isinstance(value, int | float) or value is None else str(value)
    return f'<td class="num">{esc(text)}</td>' if num else f"<td>{esc(text)}</td>"


def html_table(head: Sequence[str], rows: Iterable[str], caption: str = "") -> str:
    """A table from headings and prebuilt ``<tr>`` rows (one ``<td`` per heading, their
    text escaped), each cell labelled with its heading (``data-label``): on a narrow
    screen the page stacks a row's cells, each under its label (usertest16 #7: at 390 px
    the line a fact was stated at was off-screen, right of the table)."""
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    heads = "".join(f"<th>{esc(h)}</th>" for h in head)
    labels = [f'<td data-label="{esc(h)}"' for h in head]
    body = "".join(_labelled(r, labels) for r in rows)
    return (f'<table class="stack">{cap}<thead><tr>{heads}</tr></thead><tbody>{body}'
            "</tbody></table>")


def _labelled(row: str, labels: list[str]) -> str:
    """``row`` with its n-th ``<td`` given the n-th label (escaped text holds no ``<``,
    so every ``<td`` is a cell; a row with more cells than labels keeps the rest bare)."""
    parts = row.split("<td")
    return parts[0] + "".join((labels[i] if i < len(labels) else "<td") + part
                              for i, part in enumerate(parts[1:]))


def own(text: str) -> str:
    """This tool's own words (a rule's documentation) for an HTML element: escaped,
    never cut (:func:`esc` cuts log text at ``MAX_TEXT``: usertest24 #2, CA303's
    documentation ended "at anot...[1061 chars, sha256 ...]")."""
    return esc(text, limit=max(len(text), 1))


def more(n: int, what: str = "row", lister: str = "--format json --all") -> str:
    """The "N more" note under a capped list (empty when nothing was cut), naming the
    options that list every one: the JSON reports of ``audit`` and ``diff`` are bounded
    unless ``--all`` (docs/ci.md, "Output size"; docs/diff.md)."""
    if n <= 0:
        return ""
    return f'<p class="dim">... and {n} more {what}(s) ({lister} lists every one)</p>'


def round_panel(section_id: str) -> str:
    """The sticky panel that shows a round's values and findings, with a round box."""
    return (f'<div class="panel" id="{section_id}-panel">'
            f'<form id="{section_id}-form"><label>Round <input type="number" '
            f'id="{section_id}-round" aria-label="round number"></label> '
            f'<button type="submit">Show</button></form> '
            f'<span class="dim">or point at a chart</span>'
            f'<div id="{section_id}-panel-body" aria-live="polite"></div></div>')


def rule_link(code: str, rule: str) -> str:
    """The code and name, linking to the rule's entry in the page's rules reference."""
    return f'<a href="#{esc(rule_anchor(code, rule))}">{esc(code)} {esc(rule)}</a>'


def episodes_table(eps: list[Episode]) -> str:
    """Finding episodes: severity, rule (linked), rounds and lines, first message,
    action (once per run of one rule's episodes, as the text report says it once per
    rule); at most :data:`MAX_ROWS`."""
    if not eps:
        return '<p class="PASS">No findings.</p>'
    rows = []
    for i, e in enumerate(eps[:MAX_ROWS]):
        last = (f'<br><span class="dim">last: {esc(e.last_message)}</span>'
                if e.rounds > 1 and e.last_message != e.message else "")
        if e.advice:  # the summary to rehydrate, under the message (as in the terminal)
            last += f'<br>{esc(e.advice)}'
        said = i > 0 and (eps[i - 1].code, eps[i - 1].action) == (e.code, e.action)
        action = '<span class="dim">as above</span>' if said else esc(e.action)
        rows.append(f'<tr><td class="sev-{esc(e.severity)}">{esc(e.severity.upper())}</td>'
                    f"<td>{rule_link(e.code, e.rule)}</td><td>{esc(e.where())}</td>"
                    f"<td>{esc(e.message)}{last}</td><td>{action}</td></tr>")
    return (html_table(("severity", "rule", "where", "message", "action"), rows)
            + more(len(eps) - MAX_ROWS, "episode"))


def _tier(d: dict[str, Any], noted: bool = True) -> str:
    """The tier cell: its name, and the reason under it unless ``noted`` is False (the
    row above gave the same reason: usertest53 #8, "a requirement from spec text" on
    each of 15 rows); the reason is the cell's title either way."""
    name = d.get("tier_name") or d.get("tier")
    if name is None:
        return ""
    why = d.get("tier_why")
    if why == name:  # "typed by a person" twice in one cell said nothing more
        why = None
    title = f' title="{esc(why)}"' if why else ""
    note = f'<br><span class="dim">{esc(why)}</span>' if why and noted else ""
    return f"<td{title}>{esc(name)}{note}</td>"


def _noted(rows: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], bool]]:
    """Each row with whether its tier cell says the reason: the first of a table does,
    and each whose reason differs from the row above."""
    above = None
    for d in rows:
        why = (d.get("tier"), d.get("tier_why"))
        yield d, why != above
        above = why


LOST_SHOWN = 15
"""Lost facts shown at once per table; the rest (up to :data:`MAX_ROWS`) on demand."""


def _what(rest: list[dict[str, Any]]) -> str:
    """": 3 that matter, 11 other prose, 9 tool output" for ranked rows (each tier of
    LOW_TIERS by its name), "" for rows with no tier."""
    tiers = [d.get("tier") for d in rest]
    if not any(t is not None for t in tiers):
        return ""
    top = sum(1 for t in tiers if t is not None and t not in LOW_TIERS)
    parts = ([f"{top:,} that matter"] if top else []) + [low_tiers_phrase(rest, grouped=True)]
    return ": " + ", ".join(p for p in parts if p)


def _has(rows: list[dict[str, Any]], *keys: str) -> bool:
    return any(d.get(k) is not None for d in rows for k in keys)


def _lost_rows(rows: list[dict[str, Any]], head: list[str], row_html: Any) -> str:
    """The first :data:`LOST_SHOWN` rows of facts that matter (tiers 1-4, as the text
    report lists them: usertest9 saw other prose on the first screen of a page whose
    text report counts it), the next ones up to :data:`MAX_ROWS` behind a toggle that
    says what they are, and the count of the rest."""
    low = next((k for k, d in enumerate(rows) if d.get("tier") in LOW_TIERS), len(rows))
    first = min(LOST_SHOWN, low)
    shown = html_table(head, (row_html(*r) for r in _noted(rows[:first]))) if first else ""
    rest, extra = rows[first:], rows[first:MAX_ROWS]
    if extra:
        # "185 more (the page holds the first 200 of 210)" where the page holds only
        # some of the rest: "185 more" then "... and 10 more" read as two lists (ux6),
        # "185 more of 195" as a count of something else (the user test after ux7) and
        # "185 more (of 193: the page holds 200 rows)" was hard to parse (usertest5)
        # the count and its tiers are of all the rest, as the text report's (usertest12:
        # "185 more: ... 83 finished work" counted the rows the page held, where the text
        # report said 97), and where the page holds fewer, one note says so and who lists
        # them all (no "... and 14 more" under it: read as a second list, ux6)
        of = (f" (the page holds the first {MAX_ROWS:,} of {len(rows):,}; --format json "
              "--all lists every one)" if len(rows) > MAX_ROWS else "")
        # nothing shown before it: not "6 more" after nothing (adv51)
        count = (f"{len(rest):,} more{_what(rest)}" if first else
                 f"{len(rows):,} lost, none that matter{_what(rows)}")  # all (adv52)
        return shown + (f"<details><summary>{count}{of}</summary>"
                        + html_table(head, (row_html(*r) for r in _noted(extra)))
                        + "</details>")
    return shown + more(len(rows) - MAX_ROWS, "lost discriminator")


def _asked(d: dict[str, Any]) -> str:
    """When a person asked again, and where the assistant then answered without
    reading the fact again (``answered_line``: an answer from the summary)."""
    again = d.get("asked_again_round")
    if again is None:
        return "<td>no</td>"
    answered = fact_line(d.get("answered_line"), d.get("answered_file"), esc)
    note = (f'<br><span class="dim">answered at {answered} without reading it again'
            "</span>" if answered else "")
    return f'<td class="asked">round {esc(again)}{note}</td>'


def _line_cell(line: object, line_file: object) -> str:
    """A fact's line (stated, read again): ``660``, or ``FILE:660`` when the line is
    one of another file than the trace (as the text report says it), "unknown" when
    the report does not know it."""
    return cell(f"{line_file}:{fmt(line)}" if line is not None and line_file else line, True)


def _reread_cell(d: dict[str, Any]) -> str:
    """Where the context got a lost fact back; "no" when nothing read it again (a
    null ``reread_line`` is an answer, not an unknown)."""
    if d.get("reread_line") is None:
        return "<td>no</td>"
    return _line_cell(d["reread_line"], d.get("reread_file"))


def lost_table(lost: list[dict[str, Any]]) -> str:
    """The lost discriminators in the report model's order (most severe first): kind,
    text, tier when ranked, span and the line it was stated on (when the report gives
    ``span_line``), what dropped it, where it was gone, whether it was asked again."""
    if not lost:
        return ""
    tiered, lined = _has(lost, "tier_name", "tier"), _has(lost, "span_line")
    head = ["kind", "discriminator", *(["tier"] if tiered else []), "span",
            *(["stated at line"] if lined else []), "dropped by", "gone at round", "line",
            "asked again"]

    def row(d: dict[str, Any], noted: bool) -> str:
        by = f"fold {d['fold']}" if d.get("cause") == "fold" and d.get("fold") else "eviction"
        return ("<tr>" + cell(d.get("kind")) + f'<td class="mono">{esc(d.get("text"))}</td>'
                + ((_tier(d, noted) or "<td></td>") if tiered else "") + cell(d.get("span"))
                + (_line_cell(d.get("span_line"), d.get("span_file")) if lined else "")
                + cell(by)
                + cell(d.get("lost_round"), True) + cell(d.get("lost_line"), True)
                + _asked(d) + "</tr>")

    return _lost_rows(lost, head, row)


def compaction_lost(lost: list[dict[str, Any]]) -> str:
    """What one compaction's summary lost, facts that matter first (the report model's
    order), with where each was stated and where the context held it again."""
    if not lost:
        return ""
    tiered, lined = _has(lost, "tier_name", "tier"), _has(lost, "span_line")
    reread = _has(lost, "reread_line")
    head = ["kind", "discriminator", *(["tier"] if tiered else []), "source",
            *(["stated at line"] if lined else []), "asked again",
            *(["read again at line"] if reread else [])]

    def row(d: dict[str, Any], noted: bool) -> str:
        return ("<tr>" + cell(d.get("kind")) + f'<td class="mono">{esc(d.get("text"))}</td>'
                + ((_tier(d, noted) or "<td></td>") if tiered else "")
                + cell(d.get("source") or "?")
                + (_line_cell(d.get("span_line"), d.get("span_file")) if lined else "")
                + _asked(d) + (_reread_cell(d) if reread else "") + "</tr>")

    return _lost_rows(lost, head, row)


def compactions_section(compactions: list[dict[str, Any]]) -> str:
    """Each compaction: a summary line, its full summary on demand, its lost facts."""
    parts = []
    for c in compactions[:MAX_ROWS]:
        lost = c.get("lost") or []
        where = line_at(fmt(c.get("line")), c.get("line_file"), str)
        head = (f"round {fmt(c.get('round'))} ({where}): "
                f"{compaction_kind(c)}, trigger {c.get('trigger') or 'unknown'}; "
                f"{compaction_sizes(c)}"
                + (f", {lost_phrase(c)}" if c.get("lost_checked", True) else
                   f", losses not checkable ({c.get('not_checked_reason') or 'no text'})"))
        text, cut = clip(c.get("summary_text"))
        summary = (f"<details><summary>Full summary ({len(text) + cut:,} characters)</summary>"
                   f"<pre>{esc(text, newlines=True, limit=MAX_SUMMARY_CHARS)}</pre>"
                   + (f'<p class="dim">... {cut:,} more characters cut</p>' if cut else "")
                   + "</details>") if text else '<p class="dim">No summary text in the log.</p>'
        lost_html = ("<p>What the summary lost, facts that matter first:</p>"
                     + compaction_lost(lost)) if lost else ""
        parts.append(f"<h3>{esc(head)}</h3>{summary}{lost_html}")
    return "".join(parts) + more(len(compactions) - MAX_ROWS, "compaction")


def rules_reference(codes: Iterable[str]) -> str:
    """The documentation of the rules with these codes, each under the anchor that
    docs/rules.md gives its heading, with its default severity said as such (a
    finding's own can differ: ``--severity``, or a rule that lowers it, as the
    recall rules do for a loss only in the low tiers)."""
    from compaction_audit.ruledoc import DOCS_URL, rule_doc

    parts = []
    for code in sorted(set(codes)):
        cls = RULES.get(code)
        if cls is None:
            continue
        d = rule_doc(cls)
        anchor = rule_anchor(d.code, d.name)
        parts.append(f'<h3 id="{esc(anchor)}">{esc(d.code)} {esc(d.name)} '
                     f'<span class="dim">(default severity: {esc(d.severity)})</span></h3>'
                     f"<p>{own(d.what)}</p><p><b>Why it matters:</b> {own(d.why)}</p>"
                     + (f"<p><b>Known problems:</b> {own(d.known)}</p>" if d.known else "") +
                     f"<p><b>Action:</b> {own(d.action)}</p>"
                     f'<p class="dim">{esc(DOCS_URL)}#{esc(anchor)}</p>')
    return "".join(parts)


def debt_unknown_note(r: SessionReport, whose: str = "") -> str:
    """" Unknown from round N: ..." (``whose``: "the candidate's recall debt is ...")
    when the recall debt of ``r`` is null from a round on
    (:func:`compaction_audit.recall.sections.debt_checked`), else ""; plain text, for
    :func:`~compaction_audit.report.html.page.esc`."""
    col = r.series.get_column("recall_debt", default=None)
    if col is None or col.null_count() == 0:
        return ""
    first = r.series["round"].filter(col.is_null())[0]
    said = f" {whose} recall debt is unknown" if whose else " Unknown"
    return (f"{said} from round {first}: the loss of a compaction there could not be "
            "checked (opaque, redacted, unread or with no summary text), so it is not "
            "counted (not 0).")
