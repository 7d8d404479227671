"""A bucket that is not a name (adv53): user information, a port, a query, a fragment
or a space before the first '/' were dropped by the storage client, which read another
bucket under the name given, and a password in the URL was printed in every report.
Refused before any request, in one line that never shows the password."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction_audit.errors import UsageError
from compaction_audit.io.remote import shown_url, split_url
from tests.gate_app import run

SECRET = "s3cr3tP%40ss"


@pytest.mark.parametrize(("url", "why"), [
    (f"s3://AKIAEXAMPLE:{SECRET}@fleet/a/x.jsonl", "credentials go in the environment"),
    (f"s3://user:{SECRET}@fleet/a/", "credentials go in the environment"),
    ("s3://fleet:9999/x.jsonl", "letters, digits"),
    ("gs://fleet?x=1/x.jsonl", "letters, digits"),
    ("az://fleet#f/x.jsonl", "letters, digits"),
    ("s3://fleet /x.jsonl", "letters, digits"),
    ("s3://-fleet/x.jsonl", "letters, digits"),
])
def test_a_bucket_that_is_not_a_name_is_refused(url: str, why: str) -> None:
    with pytest.raises(UsageError) as info:
        split_url(url)
    assert why in str(info.value) and SECRET not in str(info.value)


@pytest.mark.parametrize("url", ["s3://b/k.jsonl", "gs://my.bucket_1/a/b", "az://c/",
                                 "S3://Legacy-Bucket/x"])
def test_a_bucket_name_is_read(url: str) -> None:
    assert split_url(url)[1] == url.split("/")[2]


def test_the_password_is_never_shown() -> None:
    assert shown_url(f"s3://u:{SECRET}@fleet/a/x.jsonl") == "s3://***@fleet/a/x.jsonl"
    assert shown_url("s3://a@b@fleet/k") == "s3://***@fleet/k"
    assert shown_url("s3://fleet/a@b.jsonl") == "s3://fleet/a@b.jsonl"  # a key's own @


@pytest.mark.parametrize("command", [["audit"], ["audit", "-f", "github"], ["trace"],
                                     ["baseline", "create"]])
def test_the_command_stops_in_one_line_without_the_password(
        command: list[str], tmp_path: Path) -> None:
    url = f"s3://AKIAEXAMPLE:{SECRET}@fleet/a/x.jsonl"
    extra = {"trace": ["45000"], "baseline": ["-o", str(tmp_path / "bl.json")]}.get(
        command[0], [])
    result = run(*command, url, *extra)
    assert result.exit_code == 2
    assert SECRET not in result.stderr + result.stdout
    assert result.stderr.count("\n") == 1 and "s3://***@fleet/a/x.jsonl" in result.stderr


def test_a_secret_with_a_slash_is_never_shown() -> None:
    # AWS secret keys often hold '/' (adv54): the first '/' is not where the bucket starts
    url = "s3://AKIA:wJalr/K7SECRET@bucket/k.jsonl"
    assert shown_url(url) == "s3://***@bucket/k.jsonl"
    assert shown_url("s3://AKIA:wJalr/K7/k.jsonl") == "s3://***/K7/k.jsonl"  # no '@' at all
    with pytest.raises(UsageError) as info:
        split_url(url)
    assert str(info.value) == ("s3://***@bucket/k.jsonl: not a bucket name before the first "
                               "'/' (credentials go in the environment, never in the URL)")


@pytest.mark.parametrize(("option", "does"), [
    ("-o", "-o/--output: s3://***@bucket/k: an object storage URL; this option writes a "
           "local file or standard output"),
    ("--baseline", "--config/--baseline: s3://***@bucket/k: an object storage URL; this "
                   "option reads a local file"),
    ("--config", "--config/--baseline: s3://***@bucket/k: an object storage URL; this "
                 "option reads a local file"),
])
def test_an_option_that_names_a_file_refuses_a_url(option: str, does: str) -> None:
    # as a path the URL was echoed whole: "cannot open for writing: no folder
    # .../s3:/KEY:SECRET@bucket" (adv54)
    result = run("audit", "t.jsonl", option, f"s3://AKIA:{SECRET}@bucket/k")
    assert (result.exit_code, result.stderr) == (2, f"compaction-audit: {does}\n")


def test_convert_names_the_url_not_its_output(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("convert", f"s3://AKIA:{SECRET}@bucket/k.jsonl", "-o", str(out))
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == ("compaction-audit: s3://***@bucket/k.jsonl: cannot open: not a "
                             "bucket name before the first '/' (credentials go in the "
                             "environment, never in the URL)\n")


@pytest.mark.parametrize(("args", "line"), [
    (["audit", f"s3:///KEY:{SECRET}@bucket/k"],
     "compaction-audit: s3:///***@bucket/k: no bucket in the URL (expected s3://BUCKET/KEY)"),
    (["audit", f"s3:/KEY:{SECRET}@bucket/k.jsonl"],
     "compaction-audit: s3:/***@bucket/k.jsonl: an object storage URL has two slashes "
     "after its scheme (s3://BUCKET/KEY)"),
    (["audit", "t.jsonl", "-o", f"s3:/KEY:{SECRET}@bucket/k"],
     "compaction-audit: -o/--output: s3:/***@bucket/k: an object storage URL; this option "
     "writes a local file or standard output"),
])
def test_a_url_with_too_many_or_too_few_slashes_is_masked(args: list[str], line: str
                                                          ) -> None:
    # adv55: "s3:///KEY:SECRET@bucket/k" and "s3:/..." printed the secret
    result = run(*args)
    assert (result.exit_code, result.stderr) == (2, line + "\n")
