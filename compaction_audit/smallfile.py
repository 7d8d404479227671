"""Read a small file the tool takes whole (a configuration file, a baseline), bounded.

A trace goes through the streaming line reader (:mod:`compaction_audit.io.lines`); a
configuration file or a baseline is decoded whole (TOML, JSON), so it is read here with
a byte limit: ``--baseline /dev/zero`` or a 10 GB ``pyproject.toml`` must be a one-line
error, exit 2, not a MemoryError (issue 11, class 4, fresh pass F7).  What the path is
is checked first, with :func:`os.stat` (which, unlike Python 3.11's ``Path.is_file``,
is caught here for every ``OSError``: a name component over 255 bytes raises
``ENAMETOOLONG``, a link loop ``ELOOP``; fresh pass F1):

- a directory is refused (``is a directory``);
- a device or socket is refused (``/dev/zero`` never ends, a terminal waits);
- a FIFO is read only where ``fifo_ok`` (``--baseline <(git show main:b.json)``), still
  within the byte limit; the configuration file must be a regular file.
"""

from __future__ import annotations

import os
import stat

from compaction_audit.errors import UsageError

MAX_CONFIG_BYTES = 4 << 20
"""Largest configuration file (``compaction-audit.toml``, ``pyproject.toml``): 4 MiB."""

MAX_BASELINE_BYTES = 256 << 20
"""Largest baseline file: 256 MiB (about 800,000 findings at 300 bytes each)."""

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def kind_of(mode: int) -> str | None:
    """None for a regular file, else what ``mode`` is (``"a directory"``, ``"a FIFO"``)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_readable(path: str, label: str, fifo_ok: bool = False) -> None:
    """Raise :class:`UsageError` (``LABEL: cannot read: No such file or directory``,
    ``LABEL: is a directory``,
    ``LABEL: is a character device, not a regular file``, ``LABEL: cannot read: File
    name too long``) unless ``path`` is a regular file (or a FIFO, when ``fifo_ok``)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"{label}: cannot read: {reason}") from None
    kind = kind_of(mode)
    if kind == "a directory":
        raise UsageError(f"{label}: is a directory")
    if kind is not None and not (fifo_ok and kind == "a FIFO"):
        raise UsageError(f"{label}: is {kind}, not a regular file")



def odd_file(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when a name is there but no regular file can be read through
    it (``"a FIFO"``, ``"a directory"``, ``"a link to nothing"``, ``"a name that
    cannot be looked up (...)"``); None when nothing is there or it is a regular file.
    For a companion an adapter looks for by name: one that is there but cannot be
    read is not one that is absent (adv62: a Cline messages file beside a dangling
    ``.compaction.json`` link passed as "no compaction")."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return f"a name that cannot be looked up ({getattr(exc, 'strerror', None) or exc})"
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:
        if stat.S_ISLNK(link.st_mode) and isinstance(exc, FileNotFoundError):
            return "a link to nothing"
        return f"a name that cannot be followed ({getattr(exc, 'strerror', None) or exc})"
    return kind_of(mode)


def regular_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a regular file (symbolic links followed); False for
    anything else and for a path that cannot be stat'ed at all (a name over 255 bytes,
    a link loop: Python 3.11's ``Path.is_file`` raises on ``ENAMETOOLONG``).  What an
    adapter may open for a file it reads beside its input (a Cline messages file,
    Gemini's telemetry): a FIFO would block the open until a writer comes, a device
    such as ``/dev/zero`` never ends (issue 11, classes 4 and 6)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def unpacked(data: bytes, label: str, limit: int, ratio: int | None = None,
             ratio_from: int = 0) -> bytes:
    """``data`` decompressed when it starts as gzip or zstd data does (a skippable
    zstd frame included), else as it is, through the readers a compressed log is read
    with (:mod:`compaction_audit.io.lines`: every member and frame, skippable frames
    and zero padding passed over, data cut short an error); at most ``limit`` bytes
    once decompressed, and (``ratio``) at most ``ratio`` times ``data``'s size once past
    ``ratio_from`` bytes.  :class:`UsageError` naming ``label`` past either bound or for
    data that does not decompress: a baseline written to ``baseline.json.gz`` is
    compressed (adv56) and read back (adv57: a second member was left out; adv58: a
    ``pzstd`` file, which opens with a skippable frame, was bad JSON); a 22 KB
    ``.zst`` of one entry repeated to 250 MiB took 1.9 GB to decode (adv86 #1)."""
    import io

    import zstandard

    from compaction_audit.io import lines

    kind = lines.compression_of(data[:4])
    if not kind:
        return data
    name = "gzip" if kind == "gz" else "zstd"
    cap = limit if ratio is None else min(limit, max(ratio_from, ratio * len(data)))
    try:
        out = lines.decompressed(io.BytesIO(data), kind).read(cap + 1)
    except EOFError:
        raise UsageError(f"{label}: the {name} data is cut short") from None
    except (OSError, zstandard.ZstdError) as exc:
        why = str(exc)
        if "truncated" in why.lower():
            raise UsageError(f"{label}: the {name} data is cut short") from None
        raise UsageError(f"{label}: bad {name} data: {why}") from None
    if len(out) > limit:
        raise UsageError(f"{label}: larger than {limit:,} bytes decompressed; refusing to "
                         "read it whole")
    if len(out) > cap:
        raise UsageError(f"{label}: the {name} data expands more than {ratio}x "
                         f"({len(data):,} bytes); refusing to read it whole")
    return out


def read_bounded(path: str, label: str, limit: int, fifo_ok: bool = False) -> bytes:
    """The bytes of ``path``, at most ``limit``.  Raises :class:`UsageError` naming
    ``label`` for what :func:`check_readable` refuses, a failed read, or a file longer
    than ``limit`` (``LABEL: larger than N bytes``)."""
    check_readable(path, label, fifo_ok)
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"{label}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise UsageError(f"{label}: larger than {limit} bytes; refusing to read it whole")
    return data
