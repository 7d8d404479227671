"""A configuration file found by the upward search is used only when its owner is the
user running the command, root, or the owner of the working directory (issue 11,
class 2, adv11 F3).  The search climbs through directories other users may write: a
``compaction-audit.toml`` with ``fail-on = "never"`` dropped into a shared parent
(``/tmp``) made every failing gate run below it exit 0.

Giving a file to another user needs root: without it these tests skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compaction_audit.config import find_config
from tests.gate_app import drift_records, run
from tests.logs import dump

OTHER_UID = 65534  # nobody
CHECKOUT_UID = 1001  # the CI user of a container job run as root

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a file to another user needs root")


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``shared/`` writable by everyone (sticky, like /tmp) holding a config that never
    fails, owned by another user; the working directory is ``shared/job`` (ours), with
    the drift trace (fail-on error: exit 1)."""
    shared = tmp_path / "shared"
    (shared / "job").mkdir(parents=True)
    shared.chmod(0o1777)
    planted = shared / "compaction-audit.toml"
    planted.write_text('fail-on = "never"\n')
    os.chown(planted, OTHER_UID, OTHER_UID)
    dump(drift_records(), shared / "job" / "drift.jsonl")
    monkeypatch.chdir(shared / "job")
    return shared


def test_a_file_planted_by_another_user_is_not_used(shared: Path) -> None:
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 1, result.stdout
    assert "config     none" in result.stdout
    planted = shared / "compaction-audit.toml"
    assert (f"compaction-audit: ignoring {planted}: owned by uid {OTHER_UID}, not by you "
            f"or root; pass --config {planted} to use it") in result.stderr


def test_the_planted_pyproject_is_not_even_parsed(shared: Path) -> None:
    (shared / "compaction-audit.toml").unlink()
    pyproject = shared / "pyproject.toml"
    pyproject.write_text("[tool.compaction-audit\n")  # bad TOML: exit 2 if it were read
    os.chown(pyproject, OTHER_UID, OTHER_UID)
    passed: list[str] = []
    assert find_config(shared / "job", passed) is None
    assert passed == [f"ignoring {pyproject}: owned by uid {OTHER_UID}, not by you or "
                      f"root; pass --config {pyproject} to use it"]
    assert run("audit", "drift.jsonl").exit_code == 1


def test_named_with_config_it_is_used(shared: Path) -> None:
    result = run("audit", "drift.jsonl", "--config", str(shared / "compaction-audit.toml"))
    assert result.exit_code == 0
    assert "ignoring" not in result.stderr


def test_a_file_of_root_is_used(shared: Path) -> None:
    os.chown(shared / "compaction-audit.toml", 0, 0)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 0
    assert "ignoring" not in result.stderr


def test_the_checkout_owners_file_is_used_by_root(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A container job runs as root in a checkout owned by the CI user: its own config
    (in the working directory or above it, in the checkout) is used."""
    checkout = tmp_path / "repo"
    (checkout / "sub").mkdir(parents=True)
    config = checkout / "compaction-audit.toml"
    config.write_text('fail-on = "never"\n')
    for path in (checkout, checkout / "sub", config):
        os.chown(path, CHECKOUT_UID, CHECKOUT_UID)
    dump(drift_records(), checkout / "sub" / "drift.jsonl")
    assert find_config(checkout) == config
    assert find_config(checkout / "sub") == config
    monkeypatch.chdir(checkout / "sub")
    assert run("audit", "drift.jsonl").exit_code == 0


@pytest.mark.parametrize("owner", [0, None])  # root's, or ours (None: left as made)
def test_a_file_every_user_may_write_is_not_used(shared: Path, owner: int | None) -> None:
    """Owned by root or by us but writable by every user (mode 0666): anyone could have
    written ``fail-on = "never"`` into it, as into a file they own (adv12 F2)."""
    planted = shared / "compaction-audit.toml"
    if owner is not None:
        os.chown(planted, owner, owner)
    else:
        os.chown(planted, os.geteuid(), os.getegid())
    planted.chmod(0o666)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 1, result.stdout
    assert "config     none" in result.stdout
    assert (f"compaction-audit: ignoring {planted}: writable by every user (mode 0666); "
            f"pass --config {planted} to use it") in result.stderr
    planted.chmod(0o644)
    assert run("audit", "drift.jsonl").exit_code == 0  # the same file, not writable: used



@pytest.mark.parametrize("plant", ["mode-000", "link-to-unreadable"])
def test_another_users_unreadable_file_is_passed_over_not_an_error(
        plant: str, shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user's config in a shared parent that the runner may not open (mode
    000, or a link of theirs to a file only root reads): every run below it ended
    ``cannot read: Permission denied``, exit 2 (adv16b F1).  Passed over with its
    line, as a readable file of theirs is.  Root opens anything, so the refusal a
    user meets is made here (``os.open`` of that name fails with EACCES)."""
    import errno

    from compaction_audit import config

    planted = shared / "compaction-audit.toml"
    if plant == "link-to-unreadable":
        secret = shared.parent / "secret"
        planted.rename(secret)
        secret.chmod(0o600)
        planted.symlink_to(secret)
        os.chown(planted, OTHER_UID, OTHER_UID, follow_symlinks=False)
        os.chown(secret, 0, 0)
    real_open = os.open

    def refusing(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path) == planted:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(config.os, "open", refusing)
    passed: list[str] = []
    assert find_config(shared / "job", passed) is None
    assert passed == [f"ignoring {planted}: owned by uid {OTHER_UID}, not by you or "
                      f"root; pass --config {planted} to use it"]
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 1, result.stderr


def test_our_own_unreadable_file_is_still_an_error(
        shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from compaction_audit import config

    planted = shared / "compaction-audit.toml"
    os.chown(planted, 0, 0)

    def refusing(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(config.os, "open", refusing)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 2
    assert result.stderr == f"compaction-audit: {planted}: cannot read: Permission denied\n"


# adv29 F7: a found name that is no regular file -------------------------------------
def _no_regular_file(where: Path, kind: str) -> None:
    """``where/compaction-audit.toml`` as a dangling link, a directory or a FIFO."""
    path = where / "compaction-audit.toml"
    if kind == "dangling link":
        path.symlink_to(where / "unmounted" / "shared.toml")
    elif kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)


@pytest.mark.parametrize(("kind", "why"), [
    ("dangling link", " (a symbolic link to '{job}/unmounted/shared.toml'): cannot read: "
                      "No such file or directory"),
    ("directory", ": is a directory"),
    ("FIFO", ": is a FIFO, not a regular file"),
])
def test_our_project_config_that_is_no_file_is_an_error(shared: Path, kind: str,
                                                        why: str) -> None:
    """Passed over without a word, it let the parent's ``fail-on = "never"`` (here
    another user's, so passed over too) or the defaults apply: now exit 2, one line."""
    job = shared / "job"
    _no_regular_file(job, kind)
    result = run("audit", "drift.jsonl")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"compaction-audit: {job}/compaction-audit.toml"
                             f"{why.format(job=job)}\n")


def test_another_users_name_that_is_no_file_is_passed_over(shared: Path) -> None:
    """Another user's directory named so in the shared parent cannot stop every run
    below it: passed over with a line, as their unreadable file is."""
    (shared / "compaction-audit.toml").unlink()
    _no_regular_file(shared, "directory")
    os.chown(shared / "compaction-audit.toml", OTHER_UID, OTHER_UID)
    result = run("audit", "drift.jsonl")
    assert result.exit_code == 1, result.stdout
    assert (f"compaction-audit: ignoring {shared}/compaction-audit.toml: owned by uid "
            f"{OTHER_UID}, not by you or root") in result.stderr
