"""A force-push spelled short breaks the rule of ``--force`` (adv108 #5): a lost "Do NOT
use --force when pushing" is broken by ``git push -f`` and by ``git push origin +main``.
Only ``git push`` is read so (adv110 #7-#10): ``rm -rf``, ``docker ps -f``, ``git remote
add -f`` and a commit message naming ``push -f`` break nothing."""

from __future__ import annotations

import polars as pl
import pytest

from compaction_audit.recall.flagalias import with_long_flags
from tests.recall.test_violations import _found, _tables

FORCE = "Do NOT use --force when pushing."


@pytest.mark.parametrize("text", [
    "git push -f origin main",
    "git -C repo push -fu origin main",
    "git -c core.x=y push origin +main:main",
    "git push origin +main",
    "cd repo && git push -f",
    "sudo git push -f",
    "GIT_SSH_COMMAND=x git push -f",  # adv111 #9, #10
    "bash -c \"git push -f\"",
    "git --git-dir=.git push -f",
    "git push origin main -f",
    # adv125 o02: npm's -f is --force in every command
    "npm audit fix -f", "cd web && npm install -f", "npm i -f left-pad",
])
def test_a_force_push_spelled_short_gains_its_long_form(text: str) -> None:
    assert pl.select(with_long_flags(pl.lit(text))).item() == f"{text}\n--force"


@pytest.mark.parametrize("text", [
    "git push origin main", "git push -u origin main", "git push --force-with-lease",
    "git commit -m \"Fix push -f handling\"", "git remote add -f upstream https://x",
    "rm -rf build/", "docker rm $(docker ps -aqf status=exited)", "tail -f app.log",
    "git clean -fd", "git branch -D old", "pip uninstall -y requests",
    # adv111 #6, #7: a later line of the call, a comment
    "git push origin main\nrm -rf build", "git push\ndocker ps -f name=web",
    "git push origin main # then: git tag -f v1",
    # pnpm's -f is --filter; npm's -ws or a -f inside a word is none
    "pnpm -f web build", "npm run build -- -fast", "npm ci -ws", "npm install left-pad",
    # adv127 #3: after "--" or in npm exec, -f is the script's or the tool's
    "npm run lint -- -f json", "npm test -- -f 'checkout flow'",
    "npm exec eslint -- src -f stylish", "npm x eslint src -f stylish",
])
def test_no_long_form_where_it_is_no_force_push(text: str) -> None:
    assert pl.select(with_long_flags(pl.lit(text))).item() == text


@pytest.mark.parametrize(("call", "broken"), [
    ("git push -f origin main", True),
    ("git push origin +main", True),
    ("git push origin main", False),
    ("rm -rf build/", False),
    ("git commit -m \"drop push -f from deploy.sh\"", False),
])
def test_a_force_push_spelled_short_breaks_the_rule(call: str, broken: bool) -> None:
    found = _found(*_tables([("u1", FORCE, 1)], [("t1", 2, 4, call)]))
    assert found == ([(2, "u1", "command", "--force", "t1", 2)] if broken else [])


@pytest.mark.parametrize(("call", "fires"), [
    # adv124 #10: terraform's (and Go's) long flags take one dash
    ("terraform apply -auto-approve", True),
    ("terraform apply -var-file=prod.tfvars -auto-approve", True),
    ("terraform apply --auto-approve", True),
    ("terraform apply", False),
    # only hyphenated words: a cluster of short flags or find's -delete is no long flag
    ("rm -rf build", False),
    # adv125 #9: in a commit message it is no flag
    ("git commit -m 'stop using -auto-approve'", False),
    ("grep -rn -- -auto-approve .github/workflows/", False),
])
def test_a_long_flag_written_with_one_dash_is_the_flag(call: str, fires: bool) -> None:
    rule = "Never run terraform apply with --auto-approve against prod."
    assert bool(_found(*_tables([("u1", rule, 1)], [("t1", 2, 4, call)]))) is fires
