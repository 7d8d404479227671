"""Survival rules of issue 10, point 3, both ways."""

from __future__ import annotations

from compaction_audit.recall.extract import Discriminator, Kind, extract
from compaction_audit.recall.survival import dropped, survives


def one(text: str, kind: Kind, span_type: str = "prose") -> Discriminator:
    hits = [d for d in extract(text, span_type) if d.kind is kind]
    assert len(hits) == 1, hits
    return hits[0]


def test_clause_survives_in_one_sentence_with_the_same_polarity_whatever_its_marker() -> None:
    d = one("The service must degrade gracefully under load.", Kind.CONSTRAINT)
    assert survives(d, "Design: graceful degradation of the service under load.")
    assert not survives(d, "The service degrades. Load tests ran gracefully.")  # two sentences
    neg = one("Concurrent close operations should not crash the page.", Kind.NEGATION)
    assert survives(neg, "Concurrent close operations never crash the page.")
    assert not survives(neg, "Concurrent close operations crash the page.")  # flipped
    assert not survives(neg, "The page was closed.")


def test_requirement_unit_survives_by_its_words() -> None:
    spec = "Edge cases:\n- Already-closed annotations must remain unchanged.\n"
    d = one(spec, Kind.REQUIREMENT, "spec")
    assert survives(d, "Closing leaves already-closed annotations unchanged; tests pass.")
    assert not survives(d, "Closing works; all open annotations get closed.")


def test_bounds_causes_and_orders_still_need_their_marker() -> None:
    d = one("Keep at most 3 replicas.", Kind.CONSTRAINT)
    assert not survives(d, "Keep at least 3 replicas.")
    order = one("Restart the db before the backup.", Kind.ORDERING)
    assert not survives(order, "db restarted")


def test_module_and_file_name_are_one_identifier() -> None:
    mod = one("Added Spotter.Transcripts.AnnotationMessageRef today", Kind.IDENTIFIER)
    assert survives(mod, "Created annotation_message_ref.ex (new resource).")
    assert not survives(mod, "Created annotation.ex.")
    path = one("Edited lib/spotter/transcripts/annotation_message_ref.ex", Kind.IDENTIFIER)
    assert survives(path, "The AnnotationMessageRef resource was added.")


def test_migration_module_and_timestamped_file() -> None:
    d = one("wrote priv/repo/migrations/20260211205820_add_state_to_annotations.exs",
            Kind.IDENTIFIER)
    assert survives(d, "Migration Spotter.Repo.Migrations.AddStateToAnnotations adds state.")
    assert not survives(d, "Migration Spotter.Repo.Migrations.AddSourceToAnnotations.")


def test_version_admitted_by_a_kept_requirement() -> None:
    d = one("resolved jason 1.7.0 from the lock file", Kind.VERSION)
    assert survives(d, "deps: {:jason, \"~> 1.7\"}")
    assert survives(d, "needs jason >= 1.6")
    assert not survives(d, "deps: {:jason, \"~> 1.8\"}")
    assert not survives(d, "needs jason ^2.0")


def test_units_convert() -> None:
    d = one("the hook times out after 45 s", Kind.QUANTITY)
    assert survives(d, "timeout 45000 ms")
    assert survives(d, "timeout 45 seconds")
    assert not survives(d, "timeout 4500 ms")
    size = one("cap uploads at 2 MB", Kind.QUANTITY)
    assert survives(size, "uploads are capped at 2000 kb")


def test_code_span_identifier_matches_as_a_raw_substring() -> None:
    d = one("emit `hookSpecificOutput.additionalContext` on success", Kind.IDENTIFIER)
    assert survives(d, "outputs hookSpecificOutput.additionalContext JSON")
    assert survives(d, "outputs `hookSpecificOutput.additionalContext`")
    assert not survives(d, "outputs hookSpecificOutput.additionalContextual")
    # adv51: a token that goes on after "-" or "." is another token; a full stop is not
    flag = one("Do not pass `--force` here", Kind.IDENTIFIER)
    assert not survives(flag, "kubectl was run without --force-conflicts")
    assert survives(flag, "It ran with --force.")
    item = one("Close `gqc.5` today", Kind.IDENTIFIER)
    assert not survives(item, "Opened gqc.5.1 for review.")
    assert survives(item, "Closed gqc.5. Then more.")
    # adv52: a compound still states the token it is built on
    assert survives(item, "The gqc.5-specific test passes.")
    assert survives(one("Port it to `node.js` first", Kind.IDENTIFIER),
                    "Rewrote the Node.js-based service.")
    assert survives(one("Use `python3.11` here", Kind.IDENTIFIER),
                    "pinned the python3.11-slim image")


def test_dropped_reads_the_span_type() -> None:
    output = "     1→Do not retry.\n     2→timeout_ms: 45000\n"
    # the key's identifier stays at this level: the analysis keeps it only when prose used it
    assert {d.norm for d in dropped(output, "nothing", "tool_output")} == {"45000",
                                                                            "timeout_ms"}
    assert dropped(output, "nothing", "harness") == []


def test_a_long_requirement_survives_by_its_head() -> None:
    spec = ("Definition of Done:\n"
            "- Flash reports accurate closure count for both non-empty and empty cases.\n")
    d = one(spec, Kind.REQUIREMENT, "spec")
    assert survives(d, "Added a flash display that reports the closure count.")
    assert not survives(d, "Tests cover both the non-empty and the empty case.")  # tail only
    assert not survives(d, "The flash never reports a closure count.")  # flipped
    short = one("Edge cases:\n- Token expires by its TTL.\n", Kind.REQUIREMENT, "spec")
    assert not survives(short, "The token is checked.")  # 1 of 3: no head rule for short ones


def test_a_head_of_the_summarys_topic_words_alone_keeps_nothing() -> None:
    """usertest11: "Project with zero open annotations still injects minimal context
    header" was kept by "Shows open annotations across all sessions in a project", in a
    summary about project reviews: its head shared only words of the summary's topic."""
    d = one("Edge cases:\n- Project with zero open annotations still injects minimal "
            "context header.\n", Kind.REQUIREMENT, "spec")
    said = "Shows open annotations across all sessions in a project."
    topic = ["The project page lists open annotations.", "Open annotations close in bulk.",
             "Each project keeps its annotations open.", "A project review shows open "
             "annotations."]  # project, open, annot: in 5 sentences with `said`
    assert survives(d, said)  # a short summary: those words are no topic of it
    assert not survives(d, " ".join([*topic, said]))
    assert survives(d, " ".join([*topic[:2], said]))  # in 3 sentences: not yet a topic
    # one head word the summary says rarely is enough: "zero"
    assert survives(d, " ".join([*topic, "Projects with zero open annotations work."]))


def test_an_elided_identifier_survives_by_its_parts_in_order() -> None:
    """usertest8: `ALTER TABLE ... modify` was listed lost beside a summary saying
    "used ALTER TABLE MODIFY"; an ellipsis stands for left-out text."""
    d = one("The migration uses `ALTER TABLE ... modify` here", Kind.IDENTIFIER)
    assert d.norm == "alter table ... modify"
    assert survives(d, "It used ALTER TABLE MODIFY, which SQLite rejects.")
    assert survives(d, "It ran ALTER TABLE users MODIFY once.")
    assert not survives(d, "It used MODIFY ... ALTER TABLE.")  # out of order
    assert not survives(d, "It used ALTER TABLE ADD.")  # a part missing
    call = one("Call `render(…)` first", Kind.IDENTIFIER)
    assert survives(call, "render() is called first") and not survives(call, "render is")
    # adv50: each part whole (not inside a longer word), and parts that carry something
    for child, summary in [("Run `make ... install`.", "Do not make the uninstall script."),
                           ("Use `foo...bar` instead.", "foo was removed; use the sidebar."),
                           ("Use `a ... b` there.", "A plan was made and will be built."),
                           ("Run `(…)` now.", "Ran the tests (all green)."),
                           ("Use `z ... q` order.", "Zoe asked a question."),
                           ("Call `x...` first.", "x-ray the box.")]:
        assert not survives(one(child, Kind.IDENTIFIER), summary), child
    assert survives(one("Run `make ... install`.", Kind.IDENTIFIER), "ran make; install")


def test_an_id_is_not_kept_by_the_same_tail_under_another_prefix() -> None:
    """adv51: a rule that kept a work item by its id less the project prefix
    (spotter-gqc.5 by "gqc.5") also kept a lost version pin by another project's
    (myapp-v2.3.1 by "otherapp-v2.3.1") and one project's item by another's; reverted.
    An id survives as written."""
    for child, summary in [
            ("Always deploy with image myapp-v2.3.1 for the payment service.",
             "Deployed otherapp-v2.3.1 for the search service."),
            ("Pin django-v4.2 in the requirements file.", "Upgraded numpy to v4.2."),
            ("Work item other-gqc.5 remains blocked.", "Closed spotter-gqc.5."),
            ("Keep spotter-gqc.5 open until review.", "Opened gqc.5.1 for review.")]:
        kept = [d.text for d in extract(child, "prose")
                if d.kind is Kind.IDENTIFIER and survives(d, summary)]
        assert kept == [], (child, kept)


def test_a_path_survives_by_its_file_name_not_by_any_last_part() -> None:
    """adv52: a pull request's URL was kept by "Fixed 412 failing tests" (its last part
    "412" is a word of the summary), a folder `src/main` by "main is green"."""
    link = one("Review https://github.com/acme/api/pull/412 first", Kind.LINK)
    assert not survives(link, "Fixed 412 failing tests.")
    assert survives(link, "Reviewed https://github.com/acme/api/pull/412.")
    assert not survives(one("Run `src/main` now", Kind.IDENTIFIER), "main is green.")
    assert survives(one("Edit /srv/app/config/staging.toml now", Kind.IDENTIFIER),
                    "staging.toml was edited")


def test_a_file_is_not_kept_by_its_name_with_another_extension() -> None:
    """adv52: the module key (one form for a module and its file) kept `config.yaml` by
    "config.json"; a module still keeps its file."""
    for child, summary in [("Edit `config.yaml` now", "Edited config.json."),
                           ("Edit `settings.py` now", "updated settings.json"),
                           ("Edit `schema.sql` now", "changed schema.prisma")]:
        assert not survives(one(child, Kind.IDENTIFIER), summary), child
    assert survives(one("Edit `config.yaml` now", Kind.IDENTIFIER), "Edited config.yaml.")
    assert survives(one("Add `annotation_message_ref.ex` now", Kind.IDENTIFIER),
                    "Added Spotter.Transcripts.AnnotationMessageRef")
