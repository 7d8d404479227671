"""The HTML report in a real browser (issue 13, section 1): headless Chromium from the
system's packages, driven by Selenium through the matching chromedriver.

Each page is opened from ``file://`` with Chromium's own network activity turned off;
a test fails on any console message at warning level or above (a Content-Security-
Policy violation is one) and on any request other than the page itself.  ``.ci/run``
installs ``chromium`` and ``chromium-driver``; without them the tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from compaction_audit.api import audit
from compaction_audit.cli import app
from compaction_audit.diff import diff_reports, split_onsets
from tests.foreign import FIXTURES
from tests.logs import SAMPLES, LogWriter, dump, rnd, session

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
SHOTS = os.environ.get("CA_SCREENSHOTS")
"""A folder to copy the screenshots to as well (they are always saved in tmp_path)."""

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--window-size=1200,1800")

HOSTILE = '</script><img src="http://127.0.0.1:9/leak.png" onerror="alert(1)">'
"""Log text that would fetch (and run script) if the page did not escape it."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("no browser: install the system packages chromium and chromium-driver "
                    "(.ci/run does: apt-get install -y chromium chromium-driver)")
    opts = Options()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def write_html(tmp_path: Path, *args: str, name: str = "report.html") -> Path:
    out = tmp_path / name
    result = CliRunner().invoke(app, [*args, "--format", "html", "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return out


def open_page(driver: Any, path: Path) -> dict[str, int]:
    """Open ``path``, wait for every chart, assert a clean console and no request but
    the page; returns the number of drawn marks per chart."""
    driver.get_log("browser")
    driver.get_log("performance")
    url = path.resolve().as_uri()
    driver.get(url)
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.body.getAttribute('data-ready')") != "yes":
        assert time.monotonic() < deadline, "the charts never finished drawing"
        time.sleep(0.1)
    marks: dict[str, int] = driver.execute_script("""
        var out = {};
        Object.keys(window.caViews).forEach(function (id) {
          var n = 0;
          (function walk(node) {
            if (!node || !node.items) return;
            if (node.marktype && node.marktype !== 'group') n += node.items.length;
            node.items.forEach(walk);
          })(window.caViews[id].scenegraph().root);
          out[id] = n;
        });
        return out;""")
    console = [e for e in driver.get_log("browser") if e["level"] in ("WARNING", "SEVERE")]
    assert console == []
    events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    requested = [m["params"]["request"]["url"] for m in events
                 if m["method"] == "Network.requestWillBeSent"]
    assert requested == [url]
    return marks


@contextmanager
def window(driver: Any, width: int, height: int = 1400) -> Iterator[None]:
    """The browser's window at ``width`` x ``height`` px, back to 1200 x 1800 after."""
    driver.set_window_size(width, height)
    try:
        yield
    finally:
        driver.set_window_size(1200, 1800)


def chart_ids(driver: Any) -> list[str]:
    ids: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll('div.chart')).map(e => e.id)")
    return ids


def shoot(driver: Any, tmp_path: Path, name: str) -> Path:
    shot = tmp_path / f"{name}.png"
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(SHOTS) / shot.name)
    return shot


def select_round(driver: Any, section: str, number: int) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, f"{section}-round")
    box.clear()
    box.send_keys(str(number), Keys.ENTER)
    panel = driver.find_element(By.ID, f"{section}-panel-body")
    assert panel.get_attribute("data-round") == str(number)
    text: str = panel.text
    return text


def test_audit_page_draws_every_chart_and_shows_a_rounds_findings(
        browser: Any, tmp_path: Path) -> None:
    page = write_html(tmp_path, "audit", str(SAMPLES / "research-decay.jsonl"))
    marks = open_page(browser, page)
    assert sorted(marks) == sorted(chart_ids(browser)) == ["s0-debt", "s0-series"]
    assert all(n > 0 for n in marks.values()), marks
    # 40 rounds x 6 quantities drawn as lines + points, and three boundary markers each
    assert marks["s0-series"] >= 40 * 6
    text = select_round(browser, "s0", 1)
    assert "CA101" not in text and "CA302 topic-only-fold" in text
    # round 16: the salience-inversion episode of rounds 16-19 and the inversion boundary
    text = select_round(browser, "s0", 16)
    assert "Round 16 (line 17)" in text
    assert "CA101 salience-inversion" in text and "rounds 16-19" in text
    # the findings' rule codes link to the rule's entry in the page
    href = browser.execute_script(
        "return document.querySelector('#s0-panel-body a').getAttribute('href')")
    assert browser.execute_script(f"return !!document.getElementById('{href[1:]}')")
    shoot(browser, tmp_path, "audit-research-decay")


def test_pointing_at_a_chart_selects_a_round(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page = write_html(tmp_path, "audit", str(SAMPLES / "research-decay.jsonl"))
    open_page(browser, page)
    chart = browser.find_element(By.CSS_SELECTOR, "#s0-series svg")
    browser.execute_script("arguments[0].scrollIntoView()", chart)
    # inside the first panel (raw_ratio), whatever the number of panels below it
    top = -chart.size["height"] // 2 + 50
    ActionChains(browser).move_to_element_with_offset(chart, 0, top).perform()
    panel = browser.find_element(By.ID, "s0-panel-body")
    deadline = time.monotonic() + 5
    while not panel.get_attribute("data-round") and time.monotonic() < deadline:
        time.sleep(0.1)
    picked = panel.get_attribute("data-round")
    assert picked is not None and int(picked) in range(1, 41)
    # round n of the sample is on line n + 1; every round of it has findings
    assert panel.text.startswith(f"Round {picked} (line {int(picked) + 1})\n")
    assert "finding episode(s) here" in panel.text


def test_diff_page_overlays_both_runs(browser: Any, tmp_path: Path) -> None:
    page = write_html(tmp_path, "diff", str(SAMPLES / "research-decay.jsonl"),
                      str(SAMPLES / "research-no-decay.jsonl"), name="diff.html")
    marks = open_page(browser, page)
    assert list(marks) == ["d0-series"] and marks["d0-series"] >= 40 * 2 * 4
    text = select_round(browser, "d0", 8)
    assert text.startswith("Round 8\n")
    # one line per unit and side whose rounds span round 8, new units first
    d = diff_reports(audit(str(SAMPLES / "research-decay.jsonl")),
                     audit(str(SAMPLES / "research-no-decay.jsonl")))
    spanning = [(f.status, side) for f in d.findings
                for side, occ in (("baseline", f.baseline), ("candidate", f.candidate))
                if occ is not None and occ.first_round <= 8 <= occ.last_round]
    assert f"{len(spanning)} finding unit(s) spanning this round" in text
    first_new = next(s for s in ("new", "resolved", "persisting") if (s, "baseline") in
                     spanning or (s, "candidate") in spanning)
    listed = re.split(r"this round(?: \(first 50 shown\))?:\n", text)[1].splitlines()
    assert f" {first_new} " in listed[0]
    # ux7: the onsets name each rule by code, and the rules that fired in neither run
    # are one line, as in the text report, not rows of "none -> none"
    onsets = browser.execute_script(
        "const h = [...document.querySelectorAll('h2')].find("
        "  e => e.textContent.startsWith('Onsets'));"
        "const t = h.nextElementSibling;"
        "return [[...t.querySelectorAll('tr')].map(r => r.innerText),"
        "        t.nextElementSibling.innerText];")
    rows, neither = onsets
    assert "first CA101 salience-inversion\tround 16 -> none\tdisappeared" in rows
    assert not any("none -> none" in r for r in rows)
    shown, codes = split_onsets(d)
    assert neither == "In neither run: " + " ".join(codes) and codes
    assert len(rows) == 1 + len(shown)  # the header row, then one per onset shown
    shoot(browser, tmp_path, "diff-research")


def test_hostile_log_text_stays_text(browser: Any, tmp_path: Path,
                                     write_log: LogWriter) -> None:
    """A span and a fold whose texts are HTML that would load an image and run script:
    shown literally, nothing requested, no console error."""
    path = write_log([
        session(session_id=HOSTILE),
        rnd(0, spans=[{"id": "u1", "tokens": 20, "source": "user",
                       "text": f"Do NOT enable --force on prod {HOSTILE}"}]),
        rnd(1, summaries=[{"id": "F" + HOSTILE, "tokens": 5, "children": ["u1"],
                           "text": "Guidance noted."}], evicted=["u1"])])
    page = write_html(tmp_path, "audit", str(path))
    open_page(browser, page)
    body = browser.execute_script("return document.body.innerText")
    assert HOSTILE in body
    assert browser.execute_script("return document.images.length") == 0
    shoot(browser, tmp_path, "hostile")


def test_one_long_word_of_log_text_does_not_widen_the_tables(
        browser: Any, tmp_path: Path, write_log: LogWriter) -> None:
    """adv60: a 3,000-character word (a base64 blob, a minified line) in an id and the
    texts made the session and findings tables 9,000 px wide and the action column
    unreachable without scrolling; the page now offers a break every 40 characters of
    such a run, and the copied text is the same."""
    word = "A" * 3000
    path = write_log([
        rnd(0, spans=[{"id": "s" + word, "tokens": 20, "source": "user",
                       "text": f"Do NOT enable --force on prod {word}"}]),
        rnd(1, summaries=[{"id": "m" + word, "tokens": 5, "children": ["s" + word],
                           "text": "Guidance noted " + word}], evicted=["s" + word])])
    page = write_html(tmp_path, "audit", str(path))
    open_page(browser, page)
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('table')).slice(0, 2)"
        ".map(t => [t.scrollWidth, t.parentElement.clientWidth])")
    assert len(widths) == 2 and all(table <= box for table, box in widths), widths
    action = browser.execute_script(
        "var th = Array.from(document.querySelectorAll('th'))"
        ".find(x => x.textContent === 'action'); return th.getBoundingClientRect().right")
    assert action <= browser.execute_script("return window.innerWidth")
    assert "A" * 200 in browser.execute_script("return document.body.innerText")


def test_a_missing_round_says_so(browser: Any, tmp_path: Path) -> None:
    log = dump([session(), rnd(5, spans=[{"id": "a", "tokens": 3}])], tmp_path / "one.jsonl")
    page = write_html(tmp_path, "audit", str(log))
    open_page(browser, page)
    assert "No round 2 in this trace." in select_round(browser, "s0", 2)


@pytest.mark.parametrize(("command", "width"), [
    (["audit", str(SAMPLES / "research-decay.jsonl")], 700),
    (["diff", str(SAMPLES / "research-decay.jsonl"), str(SAMPLES / "research-no-decay.jsonl")],
     700),
    (["audit", "CLINE"], 390),
])
def test_a_narrow_window_never_scrolls_the_page_sideways(
        browser: Any, tmp_path: Path, command: list[str], width: int) -> None:
    """At 700 px the 720 px charts (vega-embed's box is an inline-block that grows to
    its chart) made the whole page scroll sideways (ux4 F10); a chart now scrolls
    inside its own box.  At 390 px (a phone) a trace's path in its heading ran off the
    page, which scrolled sideways (usertest15)."""
    if command[-1] == "CLINE":  # a long path: the heading must wrap, not widen the page
        folder = tmp_path / "recordedsessions" / "cline"
        folder.mkdir(parents=True)
        for name in ("session.messages.json", "basic.compaction.json"):
            shutil.copy(FIXTURES / "cline" / name, folder)
        command = [*command[:-1], str(folder / "basic.compaction.json")]
    page = write_html(tmp_path, *command)
    browser.set_window_size(width, 1400)
    try:
        open_page(browser, page)
        inner, scroll = browser.execute_script(
            "return [document.documentElement.clientWidth,"
            " document.documentElement.scrollWidth]")
        assert scroll <= inner
        widest = browser.execute_script(
            "return Math.max(...Array.from(document.querySelectorAll('div.chart'))"
            ".map(e => e.getBoundingClientRect().right))")
        assert widest <= inner
    finally:
        browser.set_window_size(1200, 1800)


def test_diff_units_leave_the_message_room_and_say_a_fold_once(
        browser: Any, tmp_path: Path, write_log: LogWriter) -> None:
    """usertest11: a unit named by a long lost requirement took the table's width and
    the message column read one word per line; every fact of one fold repeated the
    fold's message."""
    facts = ["Review list refreshes and no longer includes closed annotations at all",
             "Concurrent close operations should not crash the review page ever again"]
    spans = [{"id": f"u{k}", "tokens": 20, "source": "user",
              "text": f"Requirement: {text}."} for k, text in enumerate(facts)]
    base = write_log([session(), rnd(0, spans=spans)], name="base.jsonl")
    cand = write_log([session(), rnd(0, spans=spans),
                      rnd(1, summaries=[{"id": "F", "tokens": 5, "children": ["u0", "u1"],
                                         "text": "Worked on reviews."}],
                          evicted=["u0", "u1"])], name="cand.jsonl")
    page = write_html(tmp_path, "diff", str(base), str(cand), name="diff.html")
    open_page(browser, page)
    cells = browser.execute_script(
        "return [...document.querySelectorAll('td.unit')].map(u => {"
        "  const m = u.parentElement.querySelector('td.msg');"
        "  return [u.innerText, Math.round(u.getBoundingClientRect().width),"
        "          Math.round(m.getBoundingClientRect().width), m.innerText]; })")
    lost = [c for c in cells if c[0].startswith("lost:")]
    assert sorted(c[0] for c in lost) == [f"lost:negation:{f}" for f in sorted(facts)]
    assert all(unit >= 200 and msg >= 250 for _, unit, msg, _ in lost), cells
    assert lost[0][3].startswith("fold F silently dropped") and lost[1][3] == "(as above)"


def test_on_a_phone_each_lost_fact_shows_every_field_under_its_label(
        browser: Any, tmp_path: Path) -> None:
    """usertest16 #7: at 390 px the lost-facts table showed kind, text and tier; the
    line the fact was stated at, "asked again" and "read again at line" were right of
    the screen.  Below 600 px a row's cells stack, each under its heading."""
    page = write_html(tmp_path, "audit", str(SAMPLES / "handwritten.jsonl"))
    browser.set_window_size(390, 1400)
    try:
        open_page(browser, page)
        inner, cells = browser.execute_script(
            "const t = [...document.querySelectorAll('table.stack')].find("
            "  x => x.querySelector('th') && x.querySelector('th').innerText === 'kind');"
            "const row = t.querySelector('tbody tr');"
            "return [document.documentElement.clientWidth, [...row.querySelectorAll('td')]"
            "  .map(c => [c.dataset.label, getComputedStyle(c, '::before').content,"
            "             Math.round(c.getBoundingClientRect().right)])]")
        labels = [c[0] for c in cells]
        assert labels[:2] == ["kind", "discriminator"] and "stated at line" in labels
        assert all(content == f'"{label}: "' for label, content, _ in cells)
        assert all(right <= inner for _, _, right in cells), (inner, cells)
        browser.set_window_size(1200, 1800)  # a wide window: the table, its headings
        open_page(browser, page)
        shown = browser.execute_script(
            "const t = document.querySelector('table.stack');"
            "return [getComputedStyle(t.querySelector('thead')).display,"
            "        getComputedStyle(t.querySelector('td'), '::before').content]")
        assert shown == ["table-header-group", "none"]
    finally:
        browser.set_window_size(1200, 1800)


@pytest.mark.parametrize("command", [
    ["audit", str(SAMPLES / "research-decay.jsonl")],
    ["diff", str(SAMPLES / "research-decay.jsonl"), str(SAMPLES / "research-no-decay.jsonl")],
])
def test_on_a_phone_every_chart_is_drawn_whole_with_its_legend(
        browser: Any, tmp_path: Path, command: list[str]) -> None:
    """usertest18 #11: at 390 px the 720 px charts scrolled inside their boxes, cut off
    at the right with the diff's baseline/candidate legend; each is now drawn at the
    box's width, legends below the plot, and pointing at it still picks a round."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    page = write_html(tmp_path, *command)
    with window(browser, 390):
        open_page(browser, page)
        boxes = browser.execute_script(
            "return Array.from(document.querySelectorAll('div.chart')).map(function (d) {"
            "  var s = d.querySelector('svg').getBoundingClientRect();"
            "  var b = d.getBoundingClientRect();"
            "  var legend = Array.from(d.querySelectorAll('.role-legend text'))"
            "    .map(function (t) { var r = t.getBoundingClientRect();"
            "      return [t.textContent, r.right]; });"
            "  return [d.id, s.width, b.left + d.clientLeft + d.clientWidth, s.right, legend];"
            "})")
        assert boxes
        for cid, width, inner_right, svg_right, legend in boxes:
            assert width < 390 and svg_right <= inner_right + 0.5, cid
            assert all(right <= inner_right for _, right in legend), (cid, legend)
        if command[0] == "diff":
            (legend,) = [b[4] for b in boxes]
            assert {"baseline", "candidate"} <= {text for text, _ in legend}
        shoot(browser, tmp_path, f"phone-{command[0]}")
        # pointing at the tenth dot of the first panel picks its round (round 10: the
        # sample's rounds are 1..40), as on a desktop
        section = "d0" if command[0] == "diff" else "s0"
        dot = browser.find_elements(By.CSS_SELECTOR,
                                    f"#{section}-series svg .mark-symbol path")[9]
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", dot)
        ActionChains(browser).move_to_element(dot).perform()
        panel = browser.find_element(By.ID, f"{section}-panel-body")
        deadline = time.monotonic() + 5
        while not panel.get_attribute("data-round") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert panel.get_attribute("data-round") == "10"


def test_on_a_phone_an_empty_cell_shows_no_label(browser: Any, tmp_path: Path) -> None:
    """usertest18 #9: the traces table of a several-trace page showed "note:" and
    nothing after it for each trace without a note, at 390 px."""
    page = write_html(tmp_path, "audit", str(SAMPLES / "handwritten.jsonl"),
                      str(SAMPLES / "research-decay.jsonl"))
    with window(browser, 390):
        open_page(browser, page)
        shown = browser.execute_script(
            "return Array.from(document.querySelectorAll('table.stack td'))"
            ".filter(function (td) { return td.checkVisibility(); })"
            ".map(function (td) { return td.textContent; })")
        assert shown and all(text.strip() for text in shown)
        empty = browser.execute_script(
            "return document.querySelectorAll('table.stack td:empty').length")
        assert empty > 0  # the page has empty cells: hidden, not shown as a bare label


def test_the_round_panel_shows_a_mean_whole(browser: Any, tmp_path: Path) -> None:
    """adv69 #1: the panel trimmed the zeros of "1400" (1399.5 to 4 digits) as if
    after a decimal point: a bucket mean of 1399.5 showed as 14, 2129.5 as 213."""
    open_page(browser, write_html(tmp_path, "audit", str(SAMPLES / "handwritten.jsonl")))
    shown = browser.execute_script(
        "return [1399.5, 2129.5, 1000.4, 12000.5, 0.5, 0.12345, 2.5, 100.25, 7, null]"
        ".map(window.caFormat)")
    assert shown == ["1399.5", "2129.5", "1000.4", "12000.5", "0.5", "0.1235", "2.5",
                     "100.3", "7", "unknown"]


def test_a_round_past_the_end_of_a_long_trace_is_none(browser: Any, tmp_path: Path) -> None:
    """adv70 #4: on a trace of more than 1,000 rounds (the panel reads bucket means) a
    round past the last one showed the last round's values and findings."""
    trace = tmp_path / "long.jsonl"
    made = CliRunner().invoke(app, ["simulate", "--rounds", "1050", "--spans-per-round", "2",
                                    "-o", str(trace)])
    assert made.exit_code == 0, made.output
    open_page(browser, write_html(tmp_path, "audit", str(trace)))
    assert select_round(browser, "s0", 1600) == "No round 1600 in this trace."
    assert select_round(browser, "s0", 1050).startswith("Round")


def test_an_empty_round_box_empties_the_panel(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    log = dump([session(), rnd(5, spans=[{"id": "a", "tokens": 3}])], tmp_path / "one.jsonl")
    open_page(browser, write_html(tmp_path, "audit", str(log)))
    assert select_round(browser, "s0", 5).startswith("Round 5")
    box = browser.find_element(By.ID, "s0-round")
    box.clear()
    box.send_keys(Keys.ENTER)
    panel = browser.find_element(By.ID, "s0-panel-body")
    assert (panel.text, panel.get_attribute("data-round")) == ("", None)


def test_a_round_one_run_lacks_says_so_in_the_diff_panel(browser: Any,
                                                          tmp_path: Path) -> None:
    """usertest27 #6: a round the candidate does not have read "unknown" for each of
    its values, a claim that the value could not be known."""
    long = dump([session(), *(rnd(i, spans=[{"id": f"a{i}", "tokens": 3}]) for i in range(4))],
                tmp_path / "long.jsonl")
    short = dump([session(), *(rnd(i, spans=[{"id": f"a{i}", "tokens": 3}]) for i in range(2))],
                 tmp_path / "short.jsonl")
    open_page(browser, write_html(tmp_path, "diff", str(long), str(short), name="d.html"))
    text = select_round(browser, "d0", 3)
    assert "raw_ratio_candidate no such round" in text, text
    assert "raw_ratio_baseline 1" in text and "unknown" not in text
    assert "raw_ratio_candidate 1" in select_round(browser, "d0", 1)
    assert "No round 9 in either run." in select_round(browser, "d0", 9)  # usertest28 #6


FLAG_LINES = """
var out = [];
var walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
for (var node = walker.nextNode(); node; node = walker.nextNode()) {
  var at = node.data.indexOf(arguments[0]);
  if (at < 0) continue;
  var range = document.createRange();
  range.setStart(node, at);
  range.setEnd(node, at + arguments[0].length);
  var rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
  if (rects.length) out.push(new Set(rects.map(r => Math.round(r.top))).size);
}
return out;"""
"""The number of lines each visible occurrence of ``arguments[0]`` takes on the page."""


def test_a_flag_never_breaks_after_its_first_hyphen(browser: Any, tmp_path: Path) -> None:
    """usertest31 #4: a lost negation's cell read "with -" on one line and "-force" on
    the next at 1,280 px: the page keeps a word that starts with a hyphen whole."""
    page = write_html(tmp_path, "audit", str(SAMPLES / "handwritten.jsonl"))
    open_page(browser, page)
    seen = 0
    try:
        for width in range(320, 1300, 12):
            browser.set_window_size(width, 1400)
            lines = browser.execute_script(FLAG_LINES, "--force")
            assert lines and set(lines) == {1}, width
            seen += len(lines)
    finally:
        browser.set_window_size(1200, 1800)
    assert seen


PANEL_MARKS = """
var out = [], group = arguments[1] + '_group';
(function walk(node, inside) {
  if (!node) return;
  inside = inside || node.name === group;
  if (inside && node.role === 'mark' && node.marktype !== 'path')
    out.push([node.marktype, node.items.map(function (i) {
      return [Math.round(i.y * 100) / 100, i.text === undefined ? null : i.text]; })]);
  (node.items || []).forEach(function (item) {
    (item.items || []).forEach(function (child) { walk(child, inside); }); });
})(window.caViews[arguments[0]].scenegraph().root, false);
return out;"""
"""The marks drawn in the view ``arguments[1]`` of the chart ``arguments[0]``: their
type, and each item's y (px from the panel's top) and text."""


def test_the_floor_is_drawn_across_raw_ratio_where_the_setting_puts_it(
        browser: Any, tmp_path: Path, write_log: LogWriter) -> None:
    """Tester: the raw_ratio chart drew no floor, and its axis (0.88-1.00 on a Claude
    Code session) made a fall from 1.0 to 0.9 a crash.  The panel is 80 px high from
    0 to 1: raw_ratio 1.0 at y 0, 0.9 at y 8; the floor 0.25 at 80 x 0.75 = 60 px,
    the floor 0.2 (--set) at 80 x 0.8 = 64 px, labelled, both at 1,200 and 390 px."""
    log = write_log([session(), rnd(0, spans=[{"id": "a", "tokens": 90},
                                              {"id": "b", "tokens": 10}]),
                     rnd(1, summaries=[{"id": "F", "tokens": 10, "children": ["b"]}],
                         evicted=["b"])])
    for args, y, label in (((), 60, "floor 0.25"),
                           (("--set", "raw_ratio_floor=0.2"), 64, "floor 0.2")):
        page = write_html(tmp_path, "audit", str(log), *args)
        for width in (1200, 390):
            with window(browser, width):
                open_page(browser, page)
                marks = browser.execute_script(PANEL_MARKS, "s0-series", "series_0")
                assert marks == [["rule", [[y, None]]], ["text", [[y, label]]],
                                 ["line", [[0, None], [8, None]]],
                                 ["symbol", [[0, None], [8, None]]]], (width, marks)


DEBT_LINES = """
var box = document.getElementById(arguments[0]);
var legend = Array.from(box.querySelectorAll('.role-legend')).filter(function (l) {
  var t = l.querySelector('.role-legend-title text'); return t && t.textContent === 'series'; })[0];
return [Array.from(legend.querySelectorAll('.role-legend-label text')).map(function (t) {
          return t.textContent; }),
        Array.from(box.querySelectorAll('.mark-line path')).map(function (p) {
          return [p.getAttribute('stroke'), p.getAttribute('stroke-dasharray')]; }),
        Array.from(legend.querySelectorAll('.role-legend-symbol path')).map(function (p) {
          return p.getAttribute('stroke-dasharray'); })];"""
"""The labels of the ``series`` legend of the chart ``arguments[0]``, each of its
lines' colour and dashes, and the dashes of each legend entry's symbol."""

SOLID = {None, "", "1,0"}
"""The ``stroke-dasharray`` of a solid stroke as Vega writes it (none, an empty dash
list, or one unit on and none off)."""


def test_every_debt_series_in_the_legend_is_a_line_one_can_see(
        browser: Any, tmp_path: Path, write_log: LogWriter) -> None:
    """Tester #3: the legend listed recall_debt, recall_debt_eviction and
    recall_debt_fold; with nothing lost by eviction recall_debt was recall_debt_fold,
    drawn under it: two lines.  Now one line named for both, and where the total runs
    a little above a part (the sample) it is dashed, over it, and its legend entry
    says so."""
    from tests.logs import held_fact_records

    log = write_log([session(), *held_fact_records()])
    open_page(browser, write_html(tmp_path, "audit", str(log)))
    labels, lines, symbols = browser.execute_script(DEBT_LINES, "s0-debt")
    assert labels == ["recall_debt = recall_debt_fold", "recall_debt_eviction"]
    assert len(lines) == 2 and len({stroke for stroke, _ in lines}) == 2
    assert set(symbols) <= SOLID  # as the lines are
    open_page(browser, write_html(tmp_path, "audit", str(SAMPLES / "research-decay.jsonl")))
    labels, lines, symbols = browser.execute_script(DEBT_LINES, "s0-debt")
    assert labels == ["recall_debt (total, dashed)", "recall_debt_eviction",
                      "recall_debt_fold"]
    assert len(lines) == 3 and len({stroke for stroke, _ in lines}) == 3
    assert lines[-1][1] == "6,3"  # the total, drawn last: dashed over the fold's line
    assert [dash for _, dash in lines[:-1]] == [None, None]
    # note 31: the legend drew the total's symbol solid while its line was dashed
    assert symbols[0] == "6,3" and set(symbols[1:]) <= SOLID


MARKERS_DRAWN = """
var box = document.getElementById(arguments[0]), drawn = {};
(function walk(node) {
  if (!node) return;
  if (node.marktype === 'rule' && node.role === 'mark')
    node.items.forEach(function (i) {
      if (i.datum && i.datum.kind) drawn[i.datum.kind] = [i.datum.round, i.stroke,
                                                          (i.strokeDash || []).join(',')];
    });
  (node.items || []).forEach(function (item) { (item.items || []).forEach(walk); });
})(window.caViews[arguments[0]].scenegraph().root);
var legend = Array.from(box.querySelectorAll('.role-legend')).filter(function (l) {
  var t = l.querySelector('.role-legend-title text'); return t && t.textContent === 'marker'; })[0];
var labels = Array.from(legend.querySelectorAll('.role-legend-label text'));
var symbols = Array.from(legend.querySelectorAll('.role-legend-symbol path'));
return [drawn, labels.map(function (t, k) {
  return [t.textContent, symbols[k].getAttribute('stroke'),
          symbols[k].getAttribute('stroke-dasharray')]; })];"""
"""Each kind of marker drawn in the chart ``arguments[0]`` (its round, colour and
dashes) and the entries of its ``marker`` legend (label, colour, dashes)."""


def test_markers_at_adjacent_rounds_differ_in_colour_and_dashes(
        browser: Any, tmp_path: Path) -> None:
    """Tester #4: on the sample the inversion boundary (round 16) and the depth pin
    (round 17) were two dashed rules in a red and a brown-red, told apart by neither
    colour nor dash; each kind now has an Okabe-Ito colour and a dash of its own, and
    the legend shows each as drawn."""
    open_page(browser, write_html(tmp_path, "audit", str(SAMPLES / "research-decay.jsonl")))
    for chart in ("s0-series", "s0-debt"):
        drawn, legend = browser.execute_script(MARKERS_DRAWN, chart)
        assert drawn == {"inversion onset": [8, "#d55e00", "8,4"],
                         "inversion boundary": [16, "#cc79a7", "6,2,2,2"],
                         "depth pin": [17, "#009e73", "2,3"]}, chart
        assert legend == [[kind, *drawn[kind][1:]] for kind in
                          ("inversion onset", "inversion boundary", "depth pin")], chart
