"""Every format names the configuration file the run used (adv24 F5: a pull request's
``fail-on = "never"`` in pyproject.toml turned the job green, and only the text and
JSON reports named the file; github, Markdown, JUnit and SARIF said nothing)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.gate_app import run
from tests.logs import SAMPLES


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "handwritten.jsonl", tmp_path / "t.jsonl")
    (tmp_path / "pyproject.toml").write_text('[tool.compaction-audit]\nfail-on = "never"\n')
    return tmp_path


def test_every_ci_format_names_the_config(checkout: Path) -> None:
    github = run("audit", "t.jsonl", "-f", "github")
    assert github.exit_code == 0
    assert github.stdout.splitlines()[-2] == "config: pyproject.toml"
    markdown = run("audit", "t.jsonl", "-f", "markdown").stdout.splitlines()
    assert markdown[4] == r"config: pyproject\.toml"  # escaped as all file names are
    suite = ET.fromstring(run("audit", "t.jsonl", "-f", "junit").stdout).find("testsuite")
    assert suite is not None
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["config"] == \
        "pyproject.toml"
    sarif = json.loads(run("audit", "t.jsonl", "-f", "sarif").stdout)
    assert sarif["runs"][0]["invocations"][0]["properties"] == {"config": "pyproject.toml"}


def test_without_a_config_nothing_is_added(checkout: Path) -> None:
    github = run("audit", "t.jsonl", "-f", "github", "--isolated").stdout
    assert "config:" not in github
    assert "config:" not in run("audit", "t.jsonl", "-f", "markdown", "--isolated").stdout
    sarif = json.loads(run("audit", "t.jsonl", "-f", "sarif", "--isolated").stdout)
    assert "properties" not in sarif["runs"][0]["invocations"][0]


def test_a_config_in_a_folder_not_named_in_utf8_reaches_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adv25 N6: ``-f json`` ended in "internal error: TypeError ... surrogates not
    allowed" when the config's folder name was not UTF-8."""
    import os

    folder = os.path.join(os.fsencode(str(tmp_path)), b"cfg\xff")
    os.makedirs(os.path.join(folder, b"sub"))
    Path(os.fsdecode(os.path.join(folder, b"pyproject.toml"))).write_text(
        '[tool.compaction-audit]\nwindow = 2\n')
    monkeypatch.chdir(os.path.join(folder, b"sub"))  # the config is found above
    shutil.copy(SAMPLES / "handwritten.jsonl", "t.jsonl")
    for args in (["-f", "json"], ["-f", "sarif"]):
        out = run("audit", "t.jsonl", *args)
        assert out.exit_code == 1
        assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
        doc = json.loads(out.stdout)
        shown = doc["config"] if args[1] == "json" else \
            doc["runs"][0]["invocations"][0]["properties"]["config"]
        assert shown.endswith("/cfg\\xff/pyproject.toml")
