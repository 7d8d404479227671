"""The rules reference: ``rules``, ``rules CODE``, and docs/rules.md kept in step."""

from __future__ import annotations

import subprocess
import sys

import pytest

from compaction_audit.ruledoc import (
    all_docs,
    catalog_source,
    class_docs,
    find_rule,
    rule_doc,
    rules_markdown,
)
from compaction_audit.rules import RULES
from tests.gate_app import run
from tests.logs import ROOT

DOC = ROOT / "docs" / "rules.md"


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    assert DOC.read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is out of date: run python scripts/gen_rules_doc.py")
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rules_doc.py"),
                            "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_the_catalog_that_rules_reads_is_generated_from_the_rule_classes() -> None:
    """``compaction-audit rules`` reads ``rulecatalog.py``, not the rule classes (which
    load Polars: issue 14, item 4); it must say what the classes say."""
    assert all_docs() == class_docs(), (
        "compaction_audit/rulecatalog.py is out of date: run python scripts/gen_rules_doc.py")
    catalog = ROOT / "compaction_audit" / "rulecatalog.py"
    assert catalog.read_text(encoding="utf-8") == catalog_source(class_docs())
    assert [d.code for d in all_docs()] == sorted(RULES)


@pytest.mark.parametrize("text", ["a  b", " lead", "trail ", "x " * 60, "é\n" + "word " * 40,
                                  "\"quotes' and \\"])
def test_a_catalog_string_reads_back_the_same(text: str) -> None:
    doc = class_docs()[0]
    fields = dict(doc.__dict__, summary=text, settings=(("a", 1.5),) * 12)
    source = catalog_source([type(doc)(**fields)])
    namespace: dict[str, object] = {}
    exec(compile(source, "rulecatalog", "exec"), namespace)
    assert namespace["DOCS"] == ((*fields.values(),),)
    assert max(len(line) for line in source.splitlines()) <= 100


def test_every_registered_rule_is_documented_in_five_parts() -> None:
    text = rules_markdown()
    for code, cls in RULES.items():
        doc = rule_doc(cls)
        assert doc.what and doc.why and doc.known and doc.example and doc.action, code
        assert f"## {code} {cls.name}\n" in text
        assert f"| {doc.severities()} | {cls.summary} |" in text


def test_rule_doc_parts_come_from_the_docstring() -> None:
    doc = find_rule("CA104")
    assert doc.name == "compaction-drift" and doc.severity == "warning"
    assert doc.what.startswith("`raw_ratio` < `raw_ratio_floor` at a round where")
    assert doc.why.startswith('Seed 000 ("Decision Boundary"): a low raw share alone')
    assert doc.known.startswith("A low raw share is also what a faithful condensation")
    assert "Not judged at a product's compaction round" in doc.what  # unlabelled: what
    assert ("raw_ratio_floor", 0.25) in doc.settings
    assert find_rule("compaction-drift") == doc == find_rule("ca104")


def test_rules_lists_every_rule() -> None:
    result = run("rules")
    assert result.exit_code == 0
    for d in all_docs():
        assert d.code in result.stdout and d.name in result.stdout
    assert "salience-inversion" in result.stdout and "error" in result.stdout


@pytest.mark.parametrize("key", ["CA101", "salience-inversion", "ca101"])
def test_rules_code_prints_the_documentation(key: str) -> None:
    result = run("rules", key)
    assert result.exit_code == 0
    out = result.stdout
    titles = ("What it checks", "Why it matters", "Known problems", "Example", "What to do")
    assert [out.index(f"\n{t}\n") for t in titles] == sorted(out.index(f"\n{t}\n")
                                                              for t in titles)
    assert "CA101 salience-inversion" in out and "default severity: error" in out
    assert out.splitlines()[1] == ("raw_ratio under the floor while reachable spans fall "
                                   "and salience rises")
    assert "halt compaction and rehydrate" in out
    assert "distinct_source_spans 88 -> 81" in out


def test_rules_markdown_option_is_the_reference() -> None:
    assert run("rules", "--markdown").stdout == rules_markdown()
    one = run("rules", "CA201", "--markdown").stdout
    assert one.startswith("# CA201 ungrounded-summary\n\nA retained summary has no reachable "
                          "leaf span.\n\nDefault severity: **error**.")
    assert "\n**Known problems.** Grounding is reachability, not support" in one


def test_unknown_rule_is_a_usage_error() -> None:
    result = run("rules", "CA999")
    assert result.exit_code == 2
    assert "unknown rule 'CA999'" in result.stderr


def test_a_rule_s_family_is_a_line_of_its_own() -> None:
    """usertest72: the family, what it judges and its settings followed a long severity
    on its last wrapped line ("...stopped at its limit    family: recall"); adv141 #6:
    the settings wrapped to column 0, or "settings:" ended a line alone."""
    lines = run("rules", "CA301").stdout.splitlines()
    assert lines[2].startswith("default severity: error; a warning where")
    at = lines.index("family: recall    judges: folds")
    assert "family" not in " ".join(lines[2:at]) and lines[at + 1] == "settings: none"
    lines = run("rules", "CA203").stdout.splitlines()
    at = lines.index("family: provenance    judges: logged")
    assert lines[at + 1] == "settings: logged_tolerance=0.01"


def test_the_rules_reference_names_no_internal_test_report() -> None:
    """usertest73 #10: ``rules CA301`` (and docs/rules.md, the HTML report's Rules
    section) cited "usertest71 #3" and "adv139 #4", the team's own test reports, which
    mean nothing to a user; the rule's sources (the seeds, the issues) stay."""
    import re

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert not re.findall(r"\b(?:usertest|adv)\d+", text)
    for d in all_docs():
        out = run("rules", d.code).output
        assert not re.findall(r"\b(?:usertest|adv)\d+", out), d.code
