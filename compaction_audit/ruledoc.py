"""Every rule's documentation, from one source: the rule class's docstring and attributes.

``compaction-audit rules``, the SARIF driver's rule descriptors and ``docs/rules.md``
all read :func:`rule_doc`; the docstring's paragraphs starting "What it checks:",
"Why it matters:" and "Known problems:" are its prose parts (after ruff's rule docs:
what it does, why it is bad, known problems), ``example`` and ``action`` the other two.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compaction_audit.errors import UsageError
from compaction_audit.settings import Settings

if TYPE_CHECKING:
    from compaction_audit.rules import Rule

DOCS_URL = "docs/rules.md"
"""Where the generated rules reference lives in the repository."""


@dataclass(frozen=True)
class RuleDoc:
    """One rule's documentation: identity, default severity and the five prose parts.

    ``known`` is where the rule is wrong or blind (its false positives and negatives);
    ``settings`` pairs each setting the rule reads with its default value; ``judges``
    names the input it judges (a trace without it is not applicable to the rule).
    """

    code: str
    name: str
    severity: str
    family: str
    summary: str
    what: str
    why: str
    known: str
    example: str
    action: str
    settings: tuple[tuple[str, object], ...]
    judges: str = "rounds"
    """What the rule judges (:attr:`compaction_audit.rules.base.Rule.judges`)."""
    severity_note: str = ""
    """Where a finding's severity differs from the default
    (:attr:`compaction_audit.rules.base.Rule.severity_note`)."""

    def severities(self) -> str:
        """The default severity, with where it differs: "warning; error for a rule,
        identifier, number or version"."""
        return self.severity + (f"; {self.severity_note}" if self.severity_note else "")


_ROLE = re.compile(r":(?:mod|func|class|meth|data|attr):`~?([^`]+)`")
"""A Sphinx cross-reference (``:mod:`~a.b```): users read its target as code."""


_LABELS = {"What it checks:": "what", "Why it matters:": "why", "Known problems:": "known"}
"""A docstring paragraph's label and the part of :class:`RuleDoc` it starts."""


def _paragraphs(doc: str | None) -> list[str]:
    text = inspect.cleandoc(doc or "").replace("``", "`")  # reST literals -> Markdown
    text = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def rule_doc(cls: type[Rule]) -> RuleDoc:
    """The documentation of rule class ``cls``.

    Paragraphs of the docstring labelled "What it checks:" / "Why it matters:" /
    "Known problems:" fill ``what`` / ``why`` / ``known`` (label removed); unlabelled
    paragraphs join ``what``.
    """
    parts: dict[str, list[str]] = {name: [] for name in _LABELS.values()}
    for para in _paragraphs(cls.__doc__):
        label = next((label for label in _LABELS if para.startswith(label)), "What it checks:")
        parts[_LABELS[label]].append(para.removeprefix(label).strip())
    defaults = Settings()
    settings = tuple((s, getattr(defaults, s)) for s in cls.settings if hasattr(defaults, s))
    return RuleDoc(code=cls.code, name=cls.name, severity=cls.severity.value,
                   severity_note=cls.severity_note,
                   family=cls.family, summary=cls.summary, what=_sentence(parts["what"]),
                   why=_sentence(parts["why"]), known=_sentence(parts["known"]),
                   example=cls.example, action=cls.action + (
                       f"; in an agent product's log (Claude Code, Codex, Cline): "
                       f"{cls.product_action}" if cls.product_action else "") + (
                       " (the report names the product's own: "
                       + "; ".join(f"{p}: {a.rsplit('(', 1)[-1].rstrip(')')}"
                                   for p, a in cls.product_actions.items()) + ")"
                       if cls.product_actions else ""),
                   settings=settings, judges=cls.judges)


def _sentence(parts: list[str]) -> str:
    text = " ".join(parts)
    return text[:1].upper() + text[1:]


def all_docs() -> list[RuleDoc]:
    """The documentation of every registered rule, ordered by code, from
    :mod:`compaction_audit.rulecatalog`: ``compaction-audit rules`` loads no rule
    module, hence no Polars (issue 14, item 4).  The catalog is written from the
    classes by ``scripts/gen_rules_doc.py``; ``tests/test_rules_doc.py`` checks it
    equals :func:`class_docs`."""
    from compaction_audit.rulecatalog import DOCS

    return [RuleDoc(*fields) for fields in DOCS]


def class_docs() -> list[RuleDoc]:
    """The documentation of every registered rule, ordered by code, read from the rule
    classes (which import Polars)."""
    from compaction_audit.rules import RULES

    return [rule_doc(cls) for _, cls in sorted(RULES.items())]


CATALOG_HEADER = (
    '"""Every rule\'s documentation (:class:`compaction_audit.ruledoc.RuleDoc` fields, by\n'
    'code), for ``compaction-audit rules`` without the rule modules and Polars.\n\n'
    'Generated by scripts/gen_rules_doc.py from the rule classes; do not edit by hand.\n'
    '"""\n\nfrom typing import Any\n\nDOCS: tuple[tuple[Any, ...], ...] = (\n')


def catalog_source(docs: list[RuleDoc]) -> str:
    """The text of :mod:`compaction_audit.rulecatalog` for ``docs``: each field's
    ``repr``, strings cut at spaces into literals of at most 80 characters, long
    tuples one item a line."""
    out = [CATALOG_HEADER]
    for doc in docs:
        out.append("    (\n")
        for value in astuple_shallow(doc):
            out.append(f"        {_literal(value)},\n")
        out.append("    ),\n")
    out.append(")\n")
    return "".join(out)


def astuple_shallow(doc: RuleDoc) -> tuple[object, ...]:
    """The fields of ``doc`` in order (``dataclasses.astuple`` copies deeply)."""
    return tuple(getattr(doc, name) for name in RuleDoc.__dataclass_fields__)


def _literal(value: object) -> str:
    if len(repr(value)) <= 80:
        return repr(value)
    if isinstance(value, tuple):  # one item a line
        return "(" + "\n         ".join(f"{_literal(item)}," for item in value) + ")"
    if not isinstance(value, str):
        return repr(value)
    words = value.split(" ")
    pieces: list[str] = []
    piece = words[0]
    for word in words[1:]:
        if len(repr(f"{piece} {word}")) > 80:
            pieces.append(piece + " ")
            piece = word
        else:
            piece = f"{piece} {word}"
    pieces.append(piece)
    return "(" + "\n         ".join(repr(p) for p in pieces) + ")"


def find_rule(key: str) -> RuleDoc:
    """The rule whose code (any case) or name is ``key``; raises :class:`UsageError`."""
    for doc in all_docs():
        if key.upper() == doc.code or key.lower() == doc.name:
            return doc
    known = ", ".join(f"{d.code} {d.name}" for d in all_docs())
    raise UsageError(f"unknown rule {key!r} (known: {known})")


def help_text(doc: RuleDoc) -> str:
    """Plain-text help: what, why, known problems, example, what to do (SARIF
    ``help.text``)."""
    return "\n\n".join(f"{title}: {body}" for title, body in doc_parts(doc))


def doc_parts(doc: RuleDoc) -> list[tuple[str, str]]:
    """``(title, text)`` of each prose part in reading order; "Known problems" only
    when the rule states some."""
    parts = [("What it checks", doc.what), ("Why it matters", doc.why),
             ("Known problems", doc.known), ("Example", doc.example),
             ("What to do", doc.action)]
    return [(title, body) for title, body in parts if body]


JUDGES_WORDS = {
    "rounds": "every round",
    "summaries": "the summaries (not applicable to a trace without one)",
    "folds": "the folds (not applicable to a trace without one)",
    "logged": "the aggregates the agent logged itself, `logged` (not applicable to a "
              "trace that logs none: every product's transcript)",
}
"""How the rules reference says what a rule judges (:attr:`RuleDoc.judges`)."""


def rule_markdown(doc: RuleDoc, level: int = 2) -> str:
    """One rule's section in Markdown, headed ``CODE name`` at heading ``level``."""
    settings = ", ".join(f"`{name.replace('_', '-')}` (default {value})"
                         for name, value in doc.settings) or "none"
    return "\n".join([
        f"{'#' * level} {doc.code} {doc.name}", "", _sentence([doc.summary]) + ".", "",
        f"Default severity: **{doc.severity}**"
        + (f" ({doc.severity_note})" if doc.severity_note else "") + f". Family: {doc.family}. "
        f"Judges: {JUDGES_WORDS.get(doc.judges, doc.judges)}. Settings read: {settings}.", "",
        *(line for title, body in doc_parts(doc) for line in (f"**{title}.** {body}", "")),
    ])


def rules_markdown(docs: list[RuleDoc] | None = None) -> str:
    """The whole rules reference (``docs/rules.md``): an index table, then each rule
    of ``docs`` (default :func:`all_docs`)."""
    docs = all_docs() if docs is None else docs
    lines = [
        "# Rules reference", "",
        "<!-- Generated by scripts/gen_rules_doc.py (compaction-audit rules --markdown) "
        "from the rule classes; do not edit by hand. -->", "",
        "Select rules by code, code prefix or name (`select`, `ignore`, `extend-select` in "
        "the configuration, or the options of the same names); change a rule's severity "
        "in `[tool.compaction-audit.severity]` or with `--severity NAME=LEVEL`. "
        "See [configuration.md](configuration.md).", "",
        "| code | name | default severity | summary |", "|---|---|---|---|",
    ]
    lines += [f"| [{d.code}](#{d.code.lower()}-{d.name}) | {d.name} | {d.severities()} | "
              f"{d.summary} |" for d in docs]
    lines.append("")
    lines += [rule_markdown(d) for d in docs]
    return "\n".join(lines).rstrip("\n") + "\n"
