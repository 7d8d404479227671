"""The rebuilt cosine (issue 16): query choice, both embeddings, the per-round series,
the logged-salience table and CA204 salience-disagreement.

Embeddings are checked by orderings on small hand-made texts, not exact floats.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from compaction_audit.api import audit
from compaction_audit.cosine import embed, rebuild
from compaction_audit.cosine.query import task_query
from compaction_audit.io.native import read_native
from compaction_audit.settings import Settings
from tests.logs import CORPUS, SAMPLES, dump, rnd, session

QUERY = "fix the unicode bug in the tokenizer of the parser"
CLOSE = "the parser tokenizer crashes on unicode input: a bug to fix"
NEAR = "unicode handling in the tokenizer"
FAR = "lunch menu: soup, bread and a green salad"


def _ordering(values: list[float | None]) -> None:
    close, near, far, blank = values
    assert close is not None and near is not None and far is not None
    assert close > far and near > far
    assert blank is None


def test_lexical_fallback_orders_by_shared_words() -> None:
    values = embed.cosines([CLOSE, NEAR, FAR, "   "], QUERY, embed.LEXICAL_NAME)
    _ordering(values)
    assert values[2] == 0.0  # no word in common
    assert embed.lexical_cosines(["anything"], "...") == [None]  # a query with no word


def needs_model() -> None:
    """Skip unless the ``[embed]`` extra is installed (what the auditor itself checks)."""
    if embed.load_model() is None:
        pytest.skip("the [embed] extra (wordllama) is not installed")


def test_model_orders_by_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedding model reached for the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    embed.forget_model()  # load again, with the network closed
    needs_model()
    monkeypatch.delenv(embed.ENV, raising=False)
    assert embed.method() == embed.MODEL_NAME
    _ordering(embed.cosines([CLOSE, NEAR, FAR, ""], QUERY))
    # a paraphrase with no shared word: the model sees it, the lexical method cannot
    para = "the code that splits text into tokens breaks on non-ascii characters"
    model = embed.cosines([para, FAR], QUERY, embed.MODEL_NAME)
    assert model[0] is not None and model[1] is not None and model[0] > model[1]


def test_environment_forces_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.ENV, "lexical")
    assert embed.method() == embed.LEXICAL_NAME


def _items_log(tmp_path: Path, header: dict[str, Any] | None,
               prompts: list[tuple[str, str]]) -> Path:
    spans = [{"id": f"p{i}", "tokens": 5, "text": text, "source": source}
             for i, (source, text) in enumerate(prompts)]
    spans.append({"id": "w", "tokens": 5, "text": "wrote the parser fix", "source": "tool"})
    records: list[Any] = [] if header is None else [session(**header)]
    records.append(rnd(1, spans=spans))
    return dump(records, tmp_path / "q.jsonl")


def test_query_is_task_query_else_the_persons_prompts(tmp_path: Path) -> None:
    given = read_native(str(_items_log(tmp_path, {"task_query": "do X"}, [("user", "do Y")])))
    assert (task_query(given).text, task_query(given).origin) == ("do X", "task_query")
    prompts = read_native(str(_items_log(tmp_path, None, [
        ("user", "<environment_context>\n  <cwd>/srv</cwd>\n</environment_context>"),
        ("user", "fix the parser"), ("user:meta", "<command output>"),
        ("user", "also add a test")])))
    q = task_query(prompts)
    assert (q.text, q.origin, q.prompts) == ("fix the parser\nalso add a test", "prompts", 2)
    assert "1 later prompt" in q.describe()
    none = read_native(str(_items_log(tmp_path, None, [("tool", "ran ls")])))
    assert task_query(none).origin == "none"
    assert rebuild(none).reason == "no task query"
    assert rebuild(none).series["query_cosine_rebuilt"].null_count() == 1


def _ranked_log(tmp_path: Path, agree: bool, rounds: int = 4) -> Path:
    """Six spans from on-topic to off-topic; the logged salience agrees with that order
    or reverses it, the same every round."""
    texts = [QUERY, CLOSE, NEAR, "the parser", "a green salad", FAR]
    spans = [{"id": f"s{i}", "tokens": 10, "text": t} for i, t in enumerate(texts)]
    order = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    sal = order if agree else order[::-1]
    retained = [[f"s{i}", v] for i, v in enumerate(sal)]
    records: list[Any] = [session(task_query=QUERY), rnd(1, spans=spans, retained=retained)]
    records += [rnd(t, retained=retained) for t in range(2, rounds + 1)]
    return dump(records, tmp_path / f"ranked-{agree}.jsonl")


@pytest.mark.parametrize("method", ["lexical", "auto"])
def test_salience_disagreement_fires_when_the_scorer_reverses_relevance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    monkeypatch.setenv(embed.ENV, method)
    bad = audit(str(_ranked_log(tmp_path, agree=False)))
    fired = [f for f in bad.findings if f.code == "CA204"]
    # disagreement on every round; three judged rounds make the first finding
    assert [f.round for f in fired] == [3, 4]
    assert fired[0].values["rank_correlation"] < 0
    assert fired[0].values["items_ranked"] == 6
    good = audit(str(_ranked_log(tmp_path, agree=True)))
    assert not [f for f in good.findings if f.code == "CA204"]
    assert good.cosine["used_by"]["salience-disagreement"] == (
        "logged salience vs query_cosine_rebuilt")


def test_salience_disagreement_needs_sustained_rounds(tmp_path: Path) -> None:
    short = audit(str(_ranked_log(tmp_path, agree=False, rounds=2)))
    assert not [f for f in short.findings if f.code == "CA204"]


def test_logged_salience_is_kept_when_it_changes(tmp_path: Path) -> None:
    spans = [{"id": "a", "tokens": 1}, {"id": "b", "tokens": 1}]
    path = dump([rnd(1, spans=spans, retained=[["a", 0.5], ["b", 0.2]]),
                 rnd(2, retained=[["a", 0.5], ["b", 0.3]]),
                 rnd(3),  # no retained: nothing known
                 rnd(4, retained=[["a", 0.5], ["b", 0.3]])], tmp_path / "s.jsonl")
    rows = read_native(str(path)).salience.sort("ri", "id").rows()
    assert rows == [("a", 0, 0.5), ("b", 0, 0.2), ("b", 1, 0.3), ("a", 3, 0.5), ("b", 3, 0.3)]


def test_rebuilt_series_is_the_working_set_mean(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.ENV, "lexical")
    path = dump([session(task_query=QUERY),
                 rnd(1, spans=[{"id": "a", "tokens": 1, "text": CLOSE},
                               {"id": "n", "tokens": 1}]),
                 rnd(2, spans=[{"id": "b", "tokens": 1, "text": FAR}]),
                 rnd(3, evicted=["a"])], tmp_path / "m.jsonl")
    s = read_native(str(path))
    r = rebuild(s)
    cos = dict(r.items.rows())
    assert set(cos) == {"a", "b"}  # the span without text has no cosine
    series = r.series["query_cosine_rebuilt"].to_list()
    assert series[0] == pytest.approx(cos["a"])
    assert series[1] == pytest.approx((cos["a"] + cos["b"]) / 2)
    assert series[2] == pytest.approx(cos["b"])
    assert series[0] > series[1] > series[2]


def test_survivability_sample_fires_salience_disagreement() -> None:
    r = audit(str(SAMPLES / "survivability-scorer.jsonl"))
    fired = [f for f in r.findings if f.code == "CA204"]
    assert len(fired) >= 3
    assert any(f.values["favoured_summaries"] for f in fired)
    assert "favours" in next(f.message for f in fired if f.values["favoured_summaries"])


def test_delta_sample_gets_its_verdict_from_the_rebuilt_series() -> None:
    r = audit(str(SAMPLES / "delta-text.jsonl"))
    assert r.series["query_cosine_retained"].null_count() == r.n_rounds
    assert r.series["query_cosine_rebuilt"].null_count() == 0
    assert r.cosine["used_by"]["salience-inversion"] == "query_cosine_rebuilt"
    assert r.onsets["inversion_boundary"] is not None
    inv = next(f for f in r.findings if f.code == "CA101")
    assert "query_cosine_rebuilt" in inv.values and "query_cosine_rebuilt" in inv.message
    # the session record declares the scorer (depth_penalty 0) even without retained
    assert r.conditions[1].status == "holds"
    assert r.conditions[1].detail.startswith("scorer.depth_penalty = 0; the inversion "
                                             "signature is read on query_cosine_rebuilt")
    assert "inversion boundary" in r.verdict()


def test_existing_samples_read_the_logged_series() -> None:
    for name in ("research-decay", "research-no-decay", "research-provenance"):
        r = audit(str(SAMPLES / f"{name}.jsonl"))
        assert r.cosine["used_by"]["salience-inversion"] == "query_cosine_retained"
        assert r.series["query_cosine_rebuilt"].null_count() == 0


def test_both_series_in_every_format_that_shows_series() -> None:
    from rich.console import Console

    from compaction_audit.report.formats import RenderOptions
    from compaction_audit.report.json_report import render_json
    from compaction_audit.report.junit import render_junit
    from compaction_audit.report.markdown import render_markdown
    from compaction_audit.report.model import Report
    from compaction_audit.report.sarif import render_sarif
    from compaction_audit.report.terminal import report_renderable

    report = Report([audit(str(SAMPLES / "survivability-scorer.jsonl"))])
    doc = render_json(report, single=True)
    assert b'"query_cosine_rebuilt"' in doc and b'"query_cosine_retained"' in doc
    assert b'"used_by"' in doc
    console = Console(record=True, width=200)
    console.print(report_renderable(report))
    text = console.export_text()
    # the sample logs salience: both salience rules read the logged series
    assert "query_cosine_rebuilt" in text
    assert ("salience-inversion and compaction-drift read query_cosine_retained"
            in " ".join(text.split()))  # the header wraps under its indent
    markdown = render_markdown(report, RenderOptions(single=True))
    assert b"Cosine:" in markdown and b"query\\_cosine\\_rebuilt" in markdown
    junit = render_junit(report, RenderOptions(single=True))
    assert b'<property name="cosine" value="query_cosine_rebuilt by' in junit
    sarif = orjson.loads(render_sarif(report, RenderOptions(single=True)))
    series = {r["ruleId"]: r["properties"].get("salienceSeries")
              for r in sarif["runs"][0]["results"]}
    assert series["CA101"] == "query_cosine_retained"
    assert series["CA204"] == "logged salience vs query_cosine_rebuilt"
    assert series["CA201"] is None


def test_claude_code_session_has_a_rebuilt_series() -> None:
    path = CORPUS / "claude-code" / "spotter-auto-compact.jsonl"
    if not path.exists():
        pytest.skip("corpus absent")
    r = audit(str(path))
    assert r.cosine["query"] == "prompts"
    assert "rebuilt cosine" in r.conditions[1].detail
    assert r.series["query_cosine_rebuilt"].null_count() == 0
    assert pl.Series(r.series["query_cosine_rebuilt"]).is_between(-1, 1).all()


def test_pooling_in_small_chunks_gives_the_same_vectors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    needs_model()
    texts = [CLOSE * 20, FAR, NEAR]
    whole = embed.embed(texts)
    monkeypatch.setattr(embed, "CHUNK_ROWS", 3)  # every text straddles chunks
    assert embed.embed(texts) == pytest.approx(whole, abs=1e-5)


def test_pooled_sums_are_the_plain_per_text_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """_pool against a per-token loop in float64, on seeded random vectors: texts of 0
    to 40 tokens (empty ones among them), ids repeating, one batch; equal bit for bit
    (both add in token order).  With chunks of 7 rows, texts straddle chunks: equal
    within float32 rounding of the sums."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(16)
    table = rng.standard_normal((50, 8)).astype(np.float32)
    lengths = rng.integers(0, 41, size=30)
    lengths[[0, 7, 29]] = 0
    owner = np.repeat(np.arange(30), lengths)
    ids = rng.integers(0, 50, size=len(owner))
    naive = np.zeros((30, 8))
    for k in range(len(ids)):
        naive[owner[k]] += table[ids[k]].astype(np.float64)
    pooled = embed._pool(table, ids, owner, 30)
    assert pooled.dtype == np.float64 and pooled.shape == (30, 8)
    assert np.array_equal(pooled, naive)
    assert not pooled[[0, 7, 29]].any()
    monkeypatch.setattr(embed, "CHUNK_ROWS", 7)
    assert embed._pool(table, ids, owner, 30) == pytest.approx(naive, rel=1e-6, abs=1e-6)


def test_a_bad_method_is_a_one_line_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from compaction_audit.cli import app

    monkeypatch.setenv(embed.ENV, "magic")
    result = CliRunner().invoke(app, ["audit", str(SAMPLES / "handwritten.jsonl")])
    assert result.exit_code == 2
    assert "COMPACTION_AUDIT_EMBED must be one of auto, model, lexical" in result.output
    assert "Traceback" not in result.output


def test_two_compactions_judge_the_signature_on_the_rebuilt_series() -> None:
    """A product session compacted twice: the second summary folds the first (depth 2),
    so the inversion signature is evaluated, on the rebuilt cosine; the conditions
    still say why the loop cannot invert (compaction on overflow, not continuous)."""
    from compaction_audit.conditions import can_invert

    path = Path(__file__).parent / "fixtures" / "adapters" / "claude-session.jsonl"
    r = audit(str(path))
    assert len(r.compactions) == 2 and r.series["summary_depth_max"].max() == 2
    assert r.cosine["used_by"]["salience-inversion"] == "query_cosine_rebuilt"
    assert r.cosine["inversion_signature"] == "query_cosine_rebuilt"
    assert r.series["query_cosine_rebuilt"].null_count() == 0
    depth, scorer, eviction = r.conditions
    assert (depth.status, scorer.status, eviction.status) == ("holds", "unknown", "fails")
    assert "query_cosine_rebuilt" in scorer.detail
    assert not can_invert(r.conditions)
    # a product's log: the verdict says what its compactions lost, not that it cannot
    # invert (ux7); the conditions above still say why it cannot.  One error: the fold's
    # (CA301); provenance-floor is not judged at a product's summary of a summary
    # (usertest68 #1)
    assert r.verdict() == ("FAIL: 1 error(s), 0 warning(s), 1 info; 2 compactions lost 2 "
                           "fact(s), 1 that matters")


def test_salience_disagreement_judges_long_sessions_at_a_stride(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_audit.rules import salience

    monkeypatch.setenv(embed.ENV, "lexical")
    monkeypatch.setattr(salience, "MAX_ITEM_ROUNDS", 12)  # 8 rounds x 6 items: stride 4
    r = audit(str(_ranked_log(tmp_path, agree=False, rounds=8)))
    notes = {n.reason: n.rounds for n in r.not_evaluated if n.code == "CA204"}
    assert notes == {"rounds without retained (no logged salience) or not on the judging "
                     "stride (1 round in 4)": 6}
    # the stride is a check stopped at its cap (adv104 #8: a note alone, no limit, so a
    # gate at --fail-on warning passed a log padded past it)
    [limit] = r.limits
    assert (limit.check, limit.cap, limit.round, limit.left) == (
        "salience-disagreement", 12, 2, 6)
    assert limit.at == "the first round off the judging stride (1 round in 4)"
    assert r.fails("warning")
    # judged: rounds 1 and 5, two in a row is not the three disagreement_rounds
    assert not [f for f in r.findings if f.code == "CA204"]
    r2 = audit(str(_ranked_log(tmp_path, agree=False, rounds=8)),
               settings=Settings().with_values({"disagreement_rounds": 2}))
    assert [f.round for f in r2.findings if f.code == "CA204"] == [5]


def test_rebuilt_sums_are_added_in_one_fixed_order() -> None:
    """Issue 11, class 8 (fresh pass, F9): a Polars group-by summed a round's cosines on
    several threads, so their last bits changed from run to run.  The sums must be the
    sequential sum of the changes sorted by (round, value), whatever the row order:
    computed here by hand, in plain Python, on enough rows for Polars to use threads."""
    import random

    from compaction_audit.cosine.rebuild import _cosine_sums

    rng = random.Random(7)
    n, rows = 50, 60_000
    starts = [rng.randrange(0, n) for _ in range(rows)]
    spans = [(s, min(n + 3, s + rng.randrange(1, 20)),
              rng.uniform(-1, 1) * 10 ** rng.randrange(-3, 3)) for s in starts]
    changes = sorted([(s, c) for s, _, c in spans] + [(e, -c) for _, e, c in spans if e < n])
    expected, running, k = [], 0.0, 0
    for ri in range(n):
        while k < len(changes) and changes[k][0] == ri:
            running += changes[k][1]
            k += 1
        expected.append(running)
    for order in range(3):
        shuffled = spans[:]
        random.Random(order).shuffle(shuffled)
        members = pl.DataFrame(shuffled, schema={"start": pl.Int64, "end": pl.Int64,
                                                 "cosine": pl.Float64}, orient="row")
        got = _cosine_sums(members, n)
        assert got["ri"].to_list() == list(range(n))
        assert got["sum"].to_list() == expected  # equal floats, bit for bit


def test_lexical_sums_are_added_in_term_order() -> None:
    """The lexical fallback's norms and dot products (issue 11, class 8): each doc's
    values are summed in term order, bit for bit as a plain Python loop does, whatever
    the row order; a threaded group-by gave different last bits from run to run."""
    import random

    from compaction_audit.cosine.embed import _ordered_sums

    rng = random.Random(11)
    rows = [(rng.randrange(0, 40), f"t{k:06d}", rng.uniform(0, 1) * 10 ** rng.randrange(-4, 4))
            for k in range(80_000)]
    expected: dict[int, float] = {}
    for doc, _, value in sorted(rows):
        expected[doc] = expected.get(doc, 0.0) + value
    rng.shuffle(rows)
    frame = pl.DataFrame(rows, schema={"doc": pl.Int64, "term": pl.String, "v": pl.Float64},
                         orient="row")
    got = _ordered_sums(frame, pl.col("v"), "sum")
    assert dict(zip(got["doc"].to_list(), got["sum"].to_list(), strict=True)) == expected


def test_rank_correlation_does_not_depend_on_the_order_items_are_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CA204's Spearman value is the same floats whatever order the log lists the
    working set in (issue 11, class 8: a join's row order varies with Polars' threads,
    and the correlation's sums changed in their last digits from run to run)."""
    import random

    monkeypatch.setenv(embed.ENV, "lexical")
    words = ["parser", "config", "token", "budget", "salad", "river", "window", "query"]
    rng = random.Random(3)
    spans = [{"id": f"s{i:03d}", "tokens": 5,
              "text": " ".join(rng.choice(words) for _ in range(6))} for i in range(300)]
    query = {"parser", "config", "token", "budget"}  # salience against relevance
    sal = {s["id"]: rng.random() - sum(w in query for w in str(s["text"]).split())
           for s in spans}
    values = []
    for order in range(3):
        listed = spans[:]
        random.Random(order).shuffle(listed)
        retained = [[s["id"], sal[s["id"]]] for s in listed]
        records: list[Any] = [session(task_query="parser config token budget"),
                              rnd(1, spans=listed, retained=retained)]
        records += [rnd(t, retained=retained) for t in range(2, 6)]
        report = audit(str(dump(records, tmp_path / f"order{order}.jsonl")))
        fired = [f.values["rank_correlation"] for f in report.findings if f.code == "CA204"]
        values.append(fired)
    assert values[0] and values[0] == values[1] == values[2]


def _retained_left_out(tmp_path: Path, rounds: range | None) -> Path:
    """research-decay (rounds 1 to 40, ``retained`` at each) with ``retained`` left out
    at ``rounds`` (every round when None): the working set is the same, rebuilt by
    the reader, and so is the rebuilt cosine; the logged salience is unknown there."""
    records = [orjson.loads(line) for line in
               (SAMPLES / "research-decay.jsonl").read_bytes().splitlines()]
    for r in records[1:]:
        if rounds is None or r["round"] in rounds:
            del r["retained"]
    return dump(records, tmp_path / "mixed.jsonl")


def test_salience_logged_at_too_few_rounds_to_compare_reads_the_rebuilt_cosine(
        tmp_path: Path) -> None:
    """usertest38 #1: ``retained`` every other round left the inversion rule unjudged at
    all but one round, with no onset and no word in the verdict.  The logged salience
    is read where it can be compared (known at a round and the round before) at least
    at half the rounds the rebuilt cosine can; below, the rebuilt cosine, as if none
    were logged, and the cosine line says why.  39 comparisons (rounds 2 to 40); a
    block of m rounds without ``retained`` costs m + 1 of them."""
    every_other = audit(str(_retained_left_out(tmp_path, range(1, 41, 2))))
    none = audit(str(_retained_left_out(tmp_path, None)))
    assert every_other.cosine["used_by"]["salience-inversion"] == "query_cosine_rebuilt"
    assert every_other.cosine["rebuilt_because"] == (
        "the logged salience can be compared at 0 of 39 rounds, the rebuilt cosine at 39")
    assert ("salience-inversion and compaction-drift read query_cosine_rebuilt (the logged "
            "salience can be compared at 0 of 39 rounds, the rebuilt cosine at 39)"
            ) in every_other.cosine_line()
    assert every_other.onsets == none.onsets and every_other.onsets["inversion_onset"] == 8
    assert ([(f.code, f.round) for f in every_other.findings if f.code == "CA101"]
            == [(f.code, f.round) for f in none.findings if f.code == "CA101"] != [])
    twenty = audit(str(_retained_left_out(tmp_path, range(10, 28))))  # 20 of 39: logged
    assert twenty.cosine["used_by"]["salience-inversion"] == "query_cosine_retained"
    assert "rebuilt_because" not in twenty.cosine
    nineteen = audit(str(_retained_left_out(tmp_path, range(10, 29))))  # 19: rebuilt
    assert nineteen.cosine["rebuilt_because"] == (
        "the logged salience can be compared at 19 of 39 rounds, the rebuilt cosine at 39")
