"""The configuration file found by the upward search is checked and read through one
open descriptor (issue 11, adv12 F3): its owner and mode used to be read by path and
the file then read by path again, so a user owning a directory on the path could swap
in a file saying ``fail-on = "never"`` between the check and the read.

The swap is made at the moment the file is opened (the last step of the old code's
path-based check-then-read, and of the new one-descriptor read), by wrapping both
``open`` and ``os.open``: a deterministic stand-in for a racing writer."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compaction_audit.config import load_config
from compaction_audit.errors import UsageError

NEVER = 'fail-on = "never"\n'


def _swap_at_open(monkeypatch: pytest.MonkeyPatch, path: Path,
                  swap: Callable[[], None]) -> list[bool]:
    """Run ``swap()`` once, just before ``path`` is first opened (by ``open`` or
    ``os.open``); the list returned holds True once it ran."""
    done: list[bool] = []
    real_open, real_os_open = builtins.open, os.open

    def maybe_swap(file: Any) -> None:
        if not done and isinstance(file, str | os.PathLike) and Path(file) == path:
            done.append(True)
            swap()

    def hooked_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        maybe_swap(file)
        return real_open(file, *args, **kwargs)

    def hooked_os_open(file: Any, *args: Any, **kwargs: Any) -> int:
        maybe_swap(file)
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", hooked_open)
    monkeypatch.setattr(os, "open", hooked_os_open)
    return done


def _loaded_fail_on(cwd: Path, passed: list[str]) -> tuple[str | None, Path | None]:
    layer, path = load_config(cwd=cwd, passed=passed)
    return (None if layer is None else layer.fail_on), path


def _assert_passed_over(monkeypatch: pytest.MonkeyPatch, config: Path,
                        swap: Callable[[], None], why: str) -> None:
    """With ``swap()`` made as ``config`` is opened, the search does not use what was
    swapped in (``fail-on = "never"``; the old code did) and says ``why``."""
    done = _swap_at_open(monkeypatch, config, swap)
    passed: list[str] = []
    fail_on, path = _loaded_fail_on(config.parent, passed)
    monkeypatch.undo()
    assert done == [True]
    assert fail_on != "never" and path != config  # old code: ("never", config)
    assert passed == [f"ignoring {config}: {why}; pass --config {config} to use it"]


def test_a_file_swapped_in_after_the_check_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked: ours, mode 0644, ``fail-on = "error"``.  Read: a file every user may
    write (mode 0666) saying ``never``, renamed over it in between."""
    config = tmp_path / "compaction-audit.toml"
    config.write_text('fail-on = "error"\n')
    planted = tmp_path / "planted"
    planted.write_text(NEVER)
    planted.chmod(0o666)
    _assert_passed_over(monkeypatch, config, lambda: os.replace(planted, config),
                        "writable by every user (mode 0666)")


def test_a_symlink_swapped_after_the_check_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symlinked config is followed (a file shared by several checkouts); the link
    replaced by another one between the check and the read (to a file of the same
    owner, mode 0644, saying ``never``) is seen: the file opened is not the one the
    link named when it was checked."""
    shared = tmp_path / "shared.toml"
    shared.write_text('fail-on = "warning"\n')
    other = tmp_path / "other.toml"
    other.write_text(NEVER)
    config = tmp_path / "compaction-audit.toml"
    config.symlink_to(shared)
    passed: list[str] = []
    assert _loaded_fail_on(tmp_path, passed) == ("warning", config)  # followed
    assert passed == []

    def relink() -> None:
        (tmp_path / "new-link").symlink_to(other)
        os.replace(tmp_path / "new-link", config)

    _assert_passed_over(monkeypatch, config, relink, "changed while it was being checked")


def test_a_found_file_is_read_bounded(tmp_path: Path) -> None:
    """Read from the descriptor, at most 4 MiB and one byte."""
    (tmp_path / "compaction-audit.toml").write_bytes(b"#" * (5 << 20) + b"\n")
    with pytest.raises(UsageError, match=r"compaction-audit.toml: larger than 4194304 "
                                         r"bytes; refusing to read it whole$"):
        load_config(cwd=tmp_path)
