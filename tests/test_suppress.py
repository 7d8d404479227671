"""Suppressions in the configuration: by rule and discriminator pattern, or by fold id,
with a note for an entry that matched nothing (issue 13, section 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.cli import app
from tests.logs import dump
from tests.test_github_format import fold_records


@pytest.fixture
def folds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four folds, F1.0 F1.1 at round 1 and F2.0 F2.1 at round 2; fold F{r}.{k} drops
    the negation 'Do not restart worker {r}{k} on Fridays' and the quantity '{r}{k}':
    CA301 fires once per fold."""
    monkeypatch.chdir(tmp_path)
    return dump(fold_records(2, 2), tmp_path / "f.jsonl")


def audit(path: Path, config: str, *args: str) -> Any:
    Path("compaction-audit.toml").write_text(config)
    return CliRunner().invoke(app, ["audit", str(path), "-f", "json", *args])


def ca301(result: Any) -> list[str]:
    """The folds CA301 names, over its episodes (one per run of rounds)."""
    return [e for f in json.loads(result.stdout)["findings"] if f["code"] == "CA301"
            for e in f["entities"]]


def test_no_suppression_every_fold_fires(folds: Path) -> None:
    assert ca301(audit(folds, "")) == ["F1.0", "F1.1", "F2.0", "F2.1"]


def test_by_rule_and_discriminator_every_named_fact_must_be_covered(folds: Path) -> None:
    # the negation alone: each fold also dropped its quantity, so all still fire
    one = audit(folds, '[[suppress]]\nrule = "CA301"\ndiscriminator = "*worker 1? on*"\n')
    assert ca301(one) == ["F1.0", "F1.1", "F2.0", "F2.1"]
    assert one.stderr == ""  # it matched texts: not stale
    both = audit(folds, '[[suppress]]\nrule = "CA301"\ndiscriminator = "*worker 1? on*"\n'
                        '[[suppress]]\nrule = "silent-discriminating-fold"\n'
                        'discriminator = "1?"\n')
    assert ca301(both) == ["F2.0", "F2.1"]
    doc = json.loads(both.stdout)
    lost = [d["text"] for d in doc["lost_discriminators"]]
    assert sorted(lost) == ["20", "21", "Do not restart worker 20 on Fridays",
                            "Do not restart worker 21 on Fridays"]
    assert doc["suppressions"] == {"findings": 2}


def test_by_fold_id_and_the_pattern_is_case_sensitive(folds: Path) -> None:
    by_fold = audit(folds, '[[suppress]]\nfold = "F2.1"\nreason = "judged harmless"\n')
    assert ca301(by_fold) == ["F1.0", "F1.1", "F2.0"]
    other_rule = audit(folds, '[[suppress]]\nfold = "F2.1"\nrule = "CA302"\n')
    assert ca301(other_rule) == ["F1.0", "F1.1", "F2.0", "F2.1"]
    upper = audit(folds, '[[suppress]]\nrule = "CA301"\ndiscriminator = "*WORKER*"\n')
    assert len(ca301(upper)) == 4


def test_an_entry_that_matched_nothing_is_named_on_stderr(folds: Path) -> None:
    result = audit(folds, '[[suppress]]\nfold = "F9.9"\n[[suppress]]\nfold = "F1.0"\n')
    assert ca301(result) == ["F1.1", "F2.0", "F2.1"]
    assert result.stderr == ("compaction-audit: compaction-audit.toml suppress[0] "
                             "(fold 'F9.9') matched nothing in this run\n")
    assert result.exit_code == 1


def test_many_entries_that_matched_nothing_are_one_screen(folds: Path) -> None:
    """adv14: 60,000 unmatched entries printed 60,000 lines; 20 are named, then counted."""
    config = "".join(f'[[suppress]]\nfold = "F9.{i}"\n' for i in range(23))
    lines = audit(folds, config).stderr.splitlines()
    assert len(lines) == 21
    assert lines[19] == ("compaction-audit: compaction-audit.toml suppress[19] (fold 'F9.19') "
                         "matched nothing in this run")
    assert lines[20] == ("compaction-audit: ... and 3 more suppress entries matched nothing in "
                         "this run")


@pytest.mark.parametrize(("config", "message"), [
    ('suppress = "F1.0"\n', "suppress must be an array of tables"),
    ('[[suppress]]\nrule = "CA301"\n', "give either discriminator (with rule) or fold"),
    ('[[suppress]]\ndiscriminator = "x*"\n', "a discriminator pattern needs its rule"),
    # adv67 #2: a pattern of a rule that names no discriminator hid a fold's facts
    ('[[suppress]]\nrule = "CA101"\ndiscriminator = "*"\n',
     "suppress[0]: CA101 salience-inversion findings name no lost discriminator, so a "
     "discriminator pattern cannot match them (patterns are for CA301 "
     "silent-discriminating-fold, CA302 topic-only-fold); use ignore, or a baseline"),
    ('[[suppress]]\nrule = "recall-floor"\ndiscriminator = "x"\n',
     "CA303 recall-floor findings name no lost"),
    # usertest19 #6: a claim is no lost discriminator; a fold entry can match it
    ('[[suppress]]\nrule = "CA305"\ndiscriminator = "*"\n',
     "suppress[0]: CA305 unsupported-summary-claim findings are about what a summary "
     "states or an action, not the facts a fold lost, so a discriminator pattern cannot "
     "match them (patterns are for CA301 silent-discriminating-fold, CA302 "
     "topic-only-fold); use fold = ID"),
    ('[[suppress]]\nfold = "a"\ndiscriminator = "b"\nrule = "CA301"\n', "give either"),
    ('[[suppress]]\nrule = "CA999"\nfold = "a"\n', "unknown rule 'CA999'"),
    ('[[suppress]]\nfold = "a"\nfolds = "b"\n', "unknown key 'folds'"),
    ('[[suppress]]\nfold = ""\n', "values must be non-empty strings"),
    ('[[suppress]]\nrule = "CA301"\ndiscriminator = "' + "x" * 201 + '"\n',
     "discriminator pattern of 201 characters, more than 200 (MAX_PATTERN_CHARS)"),
])
def test_bad_entries_are_usage_errors(folds: Path, config: str, message: str) -> None:
    result = audit(folds, config)
    assert result.exit_code == 2
    assert message in result.stderr and "compaction-audit.toml" in result.stderr


def test_pyproject_table_and_baseline_create_use_them(folds: Path) -> None:
    Path("pyproject.toml").write_text('[tool.compaction-audit]\n'
                                      '[[tool.compaction-audit.suppress]]\nfold = "F1.0"\n')
    result = CliRunner().invoke(app, ["audit", str(folds), "-f", "json"])
    assert ca301(result) == ["F1.1", "F2.0", "F2.1"]
    out = Path("base.json")
    assert CliRunner().invoke(app, ["baseline", "create", str(folds), "-o", str(out)]
                              ).exit_code == 0
    keys = [e["key"] for e in json.loads(out.read_text())["findings"] if e["code"] == "CA301"]
    assert keys == ["entity:F1.1", "entity:F2.0", "entity:F2.1"]


def test_diff_applies_them_to_both_runs(folds: Path, tmp_path: Path) -> None:
    cand = dump(fold_records(3, 2), tmp_path / "g.jsonl")  # round 3 adds F3.0, F3.1
    Path("compaction-audit.toml").write_text('[[suppress]]\nfold = "F3.0"\n'
                                             '[[suppress]]\nfold = "F3.1"\n')
    result = CliRunner().invoke(app, ["diff", str(folds), str(cand), "-f", "json",
                                      "--fail-on-new", "error"])
    new = json.loads(result.stdout)["findings"]["new"]
    assert not any(u["code"] == "CA301" for u in new), new
    assert result.stderr == ""
    unsuppressed = CliRunner().invoke(app, ["diff", str(folds), str(cand), "-f", "json",
                                            "--isolated"])
    assert [u["code"] for u in json.loads(unsuppressed.stdout)["findings"]["new"]
            ].count("CA301") == 4  # units by lost fact: a negation and a number per fold


def test_at_most_max_suppressions_entries(folds: Path) -> None:
    """adv19b F3: every covered fact is compared with every pattern of its rule, so
    4,000 entries added 45 s to a 0.34 MB trace; a configuration holds at most 1,000."""
    entry = '[[suppress]]\nrule = "CA301"\ndiscriminator = "zz{}*"\n'
    longest = audit(folds, entry.format("y" * 197))  # 200 characters: allowed
    assert longest.exit_code == 1 and "matched nothing in this run" in longest.stderr
    at_cap = "".join(entry.format(i) for i in range(998)) + (
        '[[suppress]]\nrule = "CA301"\ndiscriminator = "Do not restart worker 1*"\n'
        '[[suppress]]\nrule = "CA301"\ndiscriminator = "1?"\n')
    result = audit(folds, at_cap)
    assert result.exit_code == 1  # F2.0 and F2.1 still fire; 998 entries matched nothing
    assert ca301(result) == ["F2.0", "F2.1"]
    over = audit(folds, at_cap + entry.format("x"))
    assert over.exit_code == 2
    assert over.stderr == ("compaction-audit: compaction-audit.toml: suppress has 1,001 "
                           "entries, more than 1,000 (MAX_SUPPRESSIONS)\n")


def test_a_pattern_is_matched_as_fnmatchcase_would(folds: Path) -> None:
    """The patterns run as compiled expressions joined per rule, not fnmatchcase per
    pair: the same globs, whole-text, case-sensitive, ``[...]`` sets and ``?``."""
    from fnmatch import fnmatchcase

    from compaction_audit.suppress import Patterns, Suppression

    globs = ["Do not*", "do not*", "*worker 1?*", "*[12]0 on*", "Do not restart", "*\n*"]
    patterns = Patterns(tuple(Suppression(f"s[{i}]", "CA301", g) for i, g in
                              enumerate(globs)))
    for text in ["Do not restart worker 10 on Fridays", "do not x", "Do not restart",
                 "worker 2", "a\nb", ""]:
        assert patterns.hits("CA301", text) == {
            i for i, g in enumerate(globs) if fnmatchcase(text, g)}, text
        assert patterns.hits("CA302", text) == set()


def test_what_was_suppressed_is_said_where_ci_reads(folds: Path) -> None:
    """adv31 N6: a fold suppressed by its id holds for every trace, and a log chooses
    its ids; only the JSON report said a finding was silenced.  The verdict, the gate
    line, JUnit and SARIF say it now; with nothing suppressed they say nothing."""
    config = '[[suppress]]\nfold = "F2.1"\n'

    def audit(path: Path, config: str, *args: str) -> Any:  # this format, not JSON
        Path("compaction-audit.toml").write_text(config)
        return CliRunner().invoke(app, ["audit", str(path), *args])

    quiet = audit(folds, config, "-q")
    assert quiet.stdout.startswith(
        "FAIL: 7 error(s), 1 warning(s), 1 info (1 suppressed by [[suppress]]); ")
    github = audit(folds, config, "-f", "github").stdout.splitlines()[-1]
    assert github == ("exit 1: 1 trace(s), 1 reach --fail-on error, 1 finding(s) "
                      "suppressed by [[suppress]]")
    junit = audit(folds, config, "-f", "junit").stdout
    assert '<property name="suppressed" value="1 finding(s) suppressed by [[suppress]]" />' \
        in junit
    sarif = json.loads(audit(folds, config, "-f", "sarif").stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == [
        "1 finding(s) suppressed by \\[\\[suppress\\]\\] of the configuration"]
    for fmt in ("github", "junit", "sarif"):
        assert "suppressed by" not in audit(folds, "", "-f", fmt).stdout
    assert "suppressed by" not in audit(folds, "", "-q").stdout


def test_a_compaction_counts_the_lost_facts_it_no_longer_lists(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """usertest14: with every lost fact suppressed the verdict said "1 compaction lost
    0 fact(s)" of a compaction that lost 9.  The facts leave the list, not the count."""
    from tests.logs import rnd

    monkeypatch.chdir(tmp_path)

    def quiet(config: str) -> str:
        Path("compaction-audit.toml").write_text(config)
        return str(CliRunner().invoke(app, ["audit", str(trace), "-q"]).stdout)

    trace = dump([
        rnd(0, spans=[{"id": "a", "tokens": 40, "text": "Keep port 8080 open."},
                      {"id": "b", "tokens": 40, "text": "Do not use --force on prod."}]),
        rnd(1, summaries=[{"id": "S", "tokens": 5, "children": ["a", "b"],
                           "text": "Worked on the deploy."}], evicted=["a", "b"],
            compaction={"kind": "compact", "summary_id": "S", "summary_tokens": 5})],
        tmp_path / "n.jsonl")
    # lost: the two clauses (tier 4), prod, --force and 8080 (tier 5)
    assert quiet("").endswith(
        "; 1 compaction lost 5 fact(s), 2 that matter\n")
    some = '[[suppress]]\nrule = "CA301"\ndiscriminator = "*8080*"\n'
    assert quiet(some).endswith(
        "; 1 compaction lost 5 fact(s), 1 that matters, 2 suppressed by [[suppress]]\n")
    [c] = json.loads(audit(trace, some).stdout)["compactions"]
    assert (len(c["lost"]), c["lost_suppressed"]) == (3, 2)
    # adv68 #1: a pattern of a rule with no finding about the fold (CA302; the fold's
    # finding is CA301) hid every fact while the CA301 error fired, and "matched"
    other = '[[suppress]]\nrule = "CA302"\ndiscriminator = "*"\n'
    assert quiet(other) == ("FAIL: 1 error(s), 0 warning(s), 1 info; 1 compaction lost 5 "
                            "fact(s), 2 that matter\n")
    assert "suppress[0] (rule CA302, discriminator '*') matched nothing in this run" in (
        CliRunner().invoke(app, ["audit", str(trace), "-q"]).stderr)
    every = '[[suppress]]\nrule = "CA301"\ndiscriminator = "*"\n'
    assert quiet(every) == ("PASS: 0 error(s), 0 warning(s), 1 info (1 suppressed by "
                             "[[suppress]]); 1 compaction lost 5 fact(s), 5 suppressed by "
                             "[[suppress]]\n")
    Path("compaction-audit.toml").write_text(every)
    text = CliRunner().invoke(app, ["audit", str(trace)], env={"COLUMNS": "200"}).stdout
    assert "folded (16.0x); 5 lost, 5 suppressed\n" in text
    md = CliRunner().invoke(app, ["audit", str(trace), "-f", "markdown"]).stdout
    assert (r"Lost at the compaction of round 1 (line 2): 5 fact(s), all suppressed by "
            r"\[\[suppress\]\]") in md
    assert "lost_suppressed" not in audit(trace, "").stdout
    # a fold entry naming the compaction's summary hides its facts too (usertest15)
    assert quiet('[[suppress]]\nfold = "S"\n') == (
        "PASS: 0 error(s), 0 warning(s), 1 info (1 suppressed by [[suppress]]); 1 "
        "compaction lost 5 fact(s), 5 suppressed by [[suppress]]\n")
    assert quiet('[[suppress]]\nfold = "S"\nrule = "CA301"\n') == (
        "PASS: 0 error(s), 0 warning(s), 1 info (1 suppressed by [[suppress]]); 1 "
        "compaction lost 5 fact(s), 5 suppressed by [[suppress]]\n")
    # ... but an entry of a rule with no finding about the fold hides nothing and
    # matched nothing, while CA301 still fails the trace (usertest16 #1)
    Path("compaction-audit.toml").write_text('[[suppress]]\nfold = "S"\nrule = "CA304"\n')
    other = CliRunner().invoke(app, ["audit", str(trace), "-q"])
    assert other.stdout == ("FAIL: 1 error(s), 0 warning(s), 1 info; 1 compaction lost 5 "
                            "fact(s), 2 that matter\n")
    assert "suppress[0] (rule CA304, fold 'S') matched nothing in this run" in other.stderr
    # a rule whose findings are about rounds, not one fold, cannot be a fold entry's
    # (usertest18 #12: CA105, CA201 matched nothing whatever the id)
    Path("compaction-audit.toml").write_text('[[suppress]]\nfold = "S"\nrule = "CA201"\n')
    refused = CliRunner().invoke(app, ["audit", str(trace), "-q"])
    assert refused.exit_code == 2
    assert refused.stderr.endswith(
        "compaction-audit.toml: suppress[0]: CA201 ungrounded-summary findings are about "
        "rounds, not one fold, so a fold entry cannot match them (fold entries are for "
        "CA301, CA302, CA304, CA305, CA306, CA307); use ignore, or a baseline\n")


def test_a_fact_another_span_still_holds_need_not_be_covered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest20 #2: with a pattern for every lost fact the fold finding still fired,
    kept alive by a dropped fact another span still holds, which no report lists."""
    from tests.logs import held_fact_records

    monkeypatch.chdir(tmp_path)
    trace = dump(held_fact_records(), tmp_path / "held.jsonl")
    lost = ('[[suppress]]\nrule = "CA301"\ndiscriminator = "*retry limit*"\n'
            '[[suppress]]\nrule = "CA301"\ndiscriminator = "read_timeout_ms"\n')
    doc = json.loads(audit(trace, lost).stdout)
    assert (doc["suppressions"], ca301_codes(doc)) == ({"findings": 1}, [])
    one = '[[suppress]]\nrule = "CA301"\ndiscriminator = "read_timeout_ms"\n'
    assert ca301_codes(json.loads(audit(trace, one).stdout)) == ["CA301"]


def ca301_codes(doc: dict[str, Any]) -> list[str]:
    return [f["code"] for f in doc["findings"] if f["code"] == "CA301"]


def test_a_fold_finding_still_firing_names_the_facts_no_pattern_covers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """usertest21 #3, usertest22 #3: with patterns for all but one lost fact the finding
    led with the suppressed facts and never named the one that kept it firing."""
    from tests.logs import held_fact_records

    monkeypatch.chdir(tmp_path)
    trace = dump(held_fact_records(), tmp_path / "held.jsonl")
    one = '[[suppress]]\nrule = "CA301"\ndiscriminator = "read_timeout_ms"\n'
    [finding] = [f for f in json.loads(audit(trace, one).stdout)["findings"]
                 if f["code"] == "CA301"]
    assert finding["message"].endswith(
        "; not covered by [[suppress]]: 'Keep the retry limit at 7'")
    plain = [f for f in json.loads(audit(trace, "").stdout)["findings"] if f["code"] == "CA301"]
    assert "not covered" not in plain[0]["message"]


def test_suppressed_and_baselined_are_said_in_one_bracket(folds: Path) -> None:
    """usertest59 #7: the verdict read "... 0 info (1 suppressed by [[suppress]]) (4 in
    the baseline)"."""
    Path("compaction-audit.toml").write_text('[[suppress]]\nfold = "F1.0"\n')
    assert CliRunner().invoke(app, ["baseline", "create", str(folds), "-o", "b.json"]
                              ).exit_code == 0
    result = CliRunner().invoke(app, ["audit", str(folds), "--baseline", "b.json", "-q"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("PASS: 0 error(s), 0 warning(s), 0 info "
                                    "(1 suppressed by [[suppress]], ")
    assert " in the baseline); " in result.stdout
