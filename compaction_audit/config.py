"""Configuration: defaults <- config file <- command line, with the source of each value.

The file is ``compaction-audit.toml`` (keys at the top level) or the
``[tool.compaction-audit]`` table of ``pyproject.toml``, found by walking up from the
working directory (the first directory holding either wins; in one directory
``compaction-audit.toml`` wins over ``pyproject.toml``, and a ``pyproject.toml`` without
the table is passed over; so is a file owned by another user, see :func:`find_config`),
or named with ``--config``.  Keys (kebab-case; the
snake_case spelling of a threshold is accepted too): every threshold of
:class:`~compaction_audit.settings.Settings`, ``fail-on``, ``select``, ``ignore``,
``extend-select`` (rule code, code prefix, name or ``ALL``), a ``severity`` table
(rule code or name -> ``error`` | ``warning`` | ``info``) and ``suppress``, an array
of tables silencing single items (:mod:`compaction_audit.suppress`).  Unknown keys
and bad values raise :class:`UsageError` naming the file.

Rule selection is layered like ruff's: starting from every rule, each layer (file,
then command line) decides for the rules its selectors match; a layer's ``select``
first empties the set.  Within a layer the most specific selector matching a rule
wins (a code or name over a longer prefix over a shorter one over ``ALL``; ``ignore``
wins a tie), so ``ignore = ["ALL"]`` with ``extend-select = ["CA104"]`` runs CA104.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from compaction_audit.errors import UsageError
from compaction_audit.report.model import FAIL_ON
from compaction_audit.rules import RULES, Rule, Severity
from compaction_audit.settings import Settings
from compaction_audit.smallfile import MAX_CONFIG_BYTES, check_readable, read_bounded, regular_file
from compaction_audit.suppress import Suppression, parse

CONFIG_FILE = "compaction-audit.toml"
PYPROJECT = "pyproject.toml"
TOOL_TABLE = "compaction-audit"
DEFAULT_FAIL_ON = "error"
SELECTION_KEYS = ("select", "ignore", "extend-select")
THRESHOLDS = tuple(f.name.replace("_", "-") for f in fields(Settings))
KEYS = (*THRESHOLDS, "fail-on", *SELECTION_KEYS, "severity", "suppress")


@dataclass(frozen=True)
class Layer:
    """The options one source sets: a config file or the command line.

    ``values``: thresholds by snake_case name (validated); ``select`` is None when the
    layer does not set it; ``severity`` maps rule name -> severity.
    """

    source: str
    values: dict[str, Any] = field(default_factory=dict)
    fail_on: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    suppress: tuple[Suppression, ...] = ()


@dataclass(frozen=True)
class Effective:
    """The effective options of a run and where each came from.

    ``rules`` are instances ordered by code; ``severity`` overrides by rule name;
    ``values`` and ``sources`` map each key of :data:`KEYS` (``severity.NAME`` for each
    override) to its effective value and to where it came from (``default``, the
    file as shown, or ``command line``); ``ignore`` and ``extend-select`` accumulate
    over the layers.
    """

    settings: Settings
    fail_on: str
    rules: list[Rule]
    severity: dict[str, Severity]
    config_path: Path | None
    values: dict[str, Any]
    sources: dict[str, str]
    suppressions: tuple[Suppression, ...] = ()


def display_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` (default: the working directory) when under it."""
    base = (cwd or Path.cwd()).resolve()
    resolved = path.resolve()
    return str(resolved.relative_to(base)) if resolved.is_relative_to(base) else str(resolved)


def _read_toml(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """The TOML of ``data`` (the bytes read from ``path``), or of ``path`` read now,
    bounded, when ``data`` is None."""
    import tomllib  # here: a run without a configuration file does not load it

    if data is None:
        data = read_bounded(str(path), str(path), MAX_CONFIG_BYTES)  # never /dev/zero whole
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:  # the line, not Python's codec and byte offset
        line = data[:exc.start].count(b"\n") + 1
        raise UsageError(f"{path}: invalid TOML: not UTF-8 (byte 0x{data[exc.start]:02x} "
                         f"at line {line})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}{_toml_hint(data)}") from None
    except ValueError:  # tomllib lets int()'s own limit through (adv19a F3)
        raise UsageError(f"{path}: invalid TOML: an integer of more than "
                         f"{sys.get_int_max_str_digits():,} digits") from None
    except (RecursionError, MemoryError):  # tomllib recurses once per nesting level
        raise UsageError(f"{path}: invalid TOML: nested too deeply") from None


def _toml_hint(data: bytes) -> str:
    """What tomllib's message does not say of a file it rejected: a byte order mark
    at its start, or lines ended by a lone CR (adv26 E5: "Invalid statement (at line 1,
    column 1)")."""
    if data.startswith(b"\xef\xbb\xbf"):
        return " (the file starts with a byte order mark, which TOML does not allow)"
    if b"\r" in data and b"\n" not in data.replace(b"\r\n", b""):
        return " (lines end with a lone CR, classic Mac line endings: TOML needs LF)"
    return ""


def _toml_value(value: Any) -> str:
    """A TOML value in a message: a string or number as written, anything else (a
    date-time, an array, a table) named by its TOML type, not as Python's repr
    (adv26 E5: "got datetime.datetime(1979, 5, 27, ...)")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return repr(value)
    if hasattr(value, "isoformat"):  # datetime, date, time
        return ("a date-time" if hasattr(value, "hour") and hasattr(value, "year")
                else "a date" if hasattr(value, "year") else "a time")
    return ("an array" if isinstance(value, list) else "a table"
            if isinstance(value, dict) else "a value of another type")


def _table(path: Path, data: bytes | None = None) -> dict[str, Any] | None:
    """The options table of ``path`` (None for a pyproject.toml without one); ``data``:
    its bytes when already read (:func:`_read_toml`)."""
    data_ = _read_toml(path, data)
    if path.name != PYPROJECT:
        return data_
    tool = data_.get("tool", {})
    table = tool.get(TOOL_TABLE) if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.{TOOL_TABLE}] must be a table")
    return table


def _untrusted(link: os.stat_result, file: os.stat_result,
               trusted: frozenset[int]) -> str | None:
    """Why a file found by the search is not read, or None, from the status of its
    name (``link``: :func:`os.lstat`) and of the file opened (``file``: :func:`os.fstat`
    of the descriptor read next): an owner (of the link, then of the file it names)
    not in ``trusted`` (adv11 F3), or every user may write it (``o+w``: its owner is
    then no guarantee of what it says; adv12 F2).  Group write is allowed (a checkout
    made under umask 002)."""
    why = _stranger(link, file, trusted)
    if why is not None:
        return why
    if file.st_mode & stat.S_IWOTH:
        return f"writable by every user (mode {stat.S_IMODE(file.st_mode):04o})"
    return None


def _stranger(link: os.stat_result, file: os.stat_result,
              trusted: frozenset[int]) -> str | None:
    """``owned by uid N, ...`` when the name (``link``) or the file it names is owned
    by a user not in ``trusted``; else None."""
    for st in (link, file):
        if st.st_uid not in trusted:
            return f"owned by uid {st.st_uid}, not by you or root"
    return None


_CHANGED = "changed while it was being checked"
"""Why a found file is passed over when its name was swapped during the checks."""

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))
"""How a found file is opened: never as a controlling terminal, never blocking on a
FIFO put there after the checks (its status then says it is no regular file)."""


def _read_fd(fd: int, label: str, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd``; :class:`UsageError` naming ``label`` when
    there are more (the message of :func:`~compaction_audit.smallfile.read_bounded`)."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise UsageError(f"{label}: larger than {limit} bytes; refusing to read it whole")
    return b"".join(chunks)


def _open_found(path: Path, trusted: frozenset[int] | None) -> bytes | str | None:
    """The bytes of the file ``path`` found by the search (at most
    :data:`MAX_CONFIG_BYTES`), why it is passed over (a ``str``), or None when there is
    no such name (:func:`_not_regular` for a name that is no regular file).

    The file is opened once and everything is decided from that descriptor
    (:func:`os.fstat`: regular, owner, mode) and read from it, so a user who owns a
    directory on the path cannot swap the file between the checks and the read
    (adv12 F3).  A name that is no symlink is opened with ``O_NOFOLLOW``.  A symlink
    is followed (a config linked from a shared folder is common), its own owner
    checked too; it must name the same link before and after the open, and that
    link the very file opened, else the file is passed over (:data:`_CHANGED`).
    ``trusted`` None (no user ids on this system): no owner or mode check.  Raises
    :class:`UsageError` when the file cannot be read or is too large, unless it is
    another user's (:func:`_unopened_owner`: passed over)."""
    try:
        link = os.lstat(path)
    except OSError:
        return None
    is_link = stat.S_ISLNK(link.st_mode)
    if not (regular_file(path) if is_link else stat.S_ISREG(link.st_mode)):
        return _not_regular(path, link, trusted)  # decided before any open: no device opened
    flags = _OPEN_FLAGS | (0 if is_link else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink now, where a file was checked
            return _CHANGED
        why = _unopened_owner(path, link, trusted)
        if why is not None:  # another user's file we may not read: not ours to read
            return why
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        file = os.fstat(fd)
        if not stat.S_ISREG(file.st_mode):
            return _CHANGED
        if is_link:
            try:
                again, target = os.lstat(path), os.stat(path)
            except OSError:
                return _CHANGED
            if ((again.st_dev, again.st_ino) != (link.st_dev, link.st_ino)
                    or (target.st_dev, target.st_ino) != (file.st_dev, file.st_ino)):
                return _CHANGED
        why = None if trusted is None else _untrusted(link if is_link else file, file,
                                                      trusted)
        if why is not None:
            return why
        try:
            return _read_fd(fd, str(path), MAX_CONFIG_BYTES)
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _not_regular(path: Path, link: os.stat_result, trusted: frozenset[int] | None) -> str:
    """Why a found name that is no regular file (a dangling link, a directory, a FIFO,
    a device) is passed over; raises :class:`UsageError` when it is the user's own.

    Passed over silently, a project's ``compaction-audit.toml`` linked to an unmounted
    shared file let a parent folder's ``fail-on = "never"`` apply without a word
    (adv29 F7).  One of the user's own is an error (``PATH (a symbolic link to
    'TARGET'): cannot read: No such file or directory``, ``PATH: is a directory``,
    ``PATH: is a FIFO, not a regular file``); another user's (a directory named so
    in ``/tmp``) is passed over with a line, as their unreadable file is, so they
    cannot stop every run below it."""
    why = _unopened_owner(path, link, trusted)
    if why is not None:
        return why
    label = str(path)
    if stat.S_ISLNK(link.st_mode):
        with contextlib.suppress(OSError, ValueError):
            label = f"{path} (a symbolic link to {os.readlink(path)!r})"
    check_readable(str(path), label)
    return _CHANGED  # a regular file by now: it changed while it was being checked


def _unopened_owner(path: Path, link: os.stat_result,
                    trusted: frozenset[int] | None) -> str | None:
    """Why a found file that could not be opened is passed over, or None (its failure
    is then an error): its name or the file it names belongs to a user not in
    ``trusted``.  Another user's unreadable file in a shared parent (mode 000 in
    ``/tmp``, a link to ``/etc/shadow``) made every run below it exit 2 (adv16b F1);
    it is passed over as a readable one of theirs is."""
    if trusted is None:
        return None
    try:
        file = os.stat(path)
    except OSError:
        file = link
    return _stranger(link, file, trusted)


def _trusted_owners(here: Path) -> frozenset[int]:
    """Who may own a configuration file found by the search: the effective user, root,
    and the owner of the starting directory (a job run as root in a checkout owned by
    the CI user reads the checkout's file)."""
    owners = {os.geteuid(), 0}
    with contextlib.suppress(OSError):
        owners.add(os.stat(here).st_uid)
    return frozenset(owners)


def find_config(start: Path | None = None,
                passed: list[str] | None = None) -> Path | None:
    """The config file for ``start`` (default: the working directory), walking up to the
    file-system root; None when there is none (:func:`search_config`)."""
    found = search_config(start, passed)
    return None if found is None else found[0]


def search_config(start: Path | None = None, passed: list[str] | None = None
                  ) -> tuple[Path, bytes] | None:
    """The config file for ``start`` (default: the working directory), walking up to the
    file-system root, and the bytes read from it; None when there is none.

    A file owned by another user (not the effective user, not root, not the owner of
    ``start``) is passed over, unread, and its message appended to ``passed``: the
    search climbs through directories others may write (``/tmp``), and a
    ``compaction-audit.toml`` planted there with ``fail-on = "never"`` turned a failing
    gate into exit 0 for every job run below it (issue 11, adv11 F3).  So is a file
    every user may write (mode ``o+w``, whoever owns it: adv12 F2), and one swapped
    while it was checked (:func:`_open_found`: the bytes returned are those of the
    file checked, read from the same descriptor).  ``--config`` still reads any
    file."""
    here = (start or Path.cwd()).resolve()
    trusted = _trusted_owners(here) if hasattr(os, "geteuid") else None
    for directory in (here, *here.parents):
        for name in (CONFIG_FILE, PYPROJECT):
            path = directory / name
            got = _open_found(path, trusted)
            if isinstance(got, str):
                if passed is not None:
                    passed.append(f"ignoring {path}: {got}; pass --config {path} to use it")
                continue
            if got is not None and (name == CONFIG_FILE or _table(path, got) is not None):
                return path, got
    return None


def _selectors(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{path}: {key} must be a list of rule codes, prefixes or names")
    match_rules(value, f"{path}: {key}")
    return tuple(value)


def _suggest(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _hint(key: str, value: Any, path: Path) -> str:
    """What to do instead, for a ``[tool.compaction-audit]`` table copied from a
    pyproject.toml into a file of our own (usertest10); else ''."""
    if key == "tool" and path.name != PYPROJECT and isinstance(value, dict) \
            and TOOL_TABLE in value:
        return (f" (in {path.name} the keys go at the top level, without "
                f"[tool.{TOOL_TABLE}])")
    return ""


def read_config(path: Path, cwd: Path | None = None, data: bytes | None = None) -> Layer:
    """Read and validate the config file ``path`` (or ``data``, its bytes when already
    read) into a :class:`Layer`.

    Raises :class:`UsageError` for unreadable files, bad TOML, a pyproject.toml without
    ``[tool.compaction-audit]``, unknown keys and bad values.
    """
    table = _table(path, data)
    shown = display_path(path, cwd)
    if table is None:
        raise UsageError(f"{shown}: no [tool.{TOOL_TABLE}] table")
    where = f"{shown} [tool.{TOOL_TABLE}]" if path.name == PYPROJECT else shown
    values: dict[str, Any] = {}
    kw: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-") if raw_key.replace("_", "-") in THRESHOLDS else raw_key
        if key not in KEYS:
            raise UsageError(f"{where}: unknown key {raw_key!r}"
                             f"{_hint(raw_key, value, path) or _suggest(raw_key, KEYS)}")
        if key in THRESHOLDS:
            name = key.replace("-", "_")
            if name in values:
                raise UsageError(f"{where}: {key} is given twice")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"{where}: {key} must be a number, got {_toml_value(value)}")
            values[name] = value
        elif key == "fail-on":
            if value not in FAIL_ON:
                raise UsageError(f"{where}: fail-on must be one of {', '.join(FAIL_ON)}, "
                                 f"got {_toml_value(value)}")
            kw["fail_on"] = value
        elif key == "suppress":
            kw["suppress"] = parse(value, where)
        elif key == "severity":
            if not isinstance(value, dict):
                raise UsageError(f"{where}: severity must be a table of rule = level")
            kw["severity"] = severity_overrides(value.items(), f"{where}: severity")
        else:
            kw[key.replace("-", "_")] = _selectors(where, key, value)
    try:
        Settings().with_values(values)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return Layer(source=where, values=values, **kw)


def load_config(explicit: Path | None = None, isolated: bool = False,
                cwd: Path | None = None, passed: list[str] | None = None
                ) -> tuple[Layer | None, Path | None]:
    """The config layer and its path: ``explicit`` if given, else the file found from
    ``cwd`` (files of other users passed over, said in ``passed``: :func:`find_config`);
    ``(None, None)`` when ``isolated`` or when there is none.  Raises
    :class:`UsageError` (a named file that does not exist is an error)."""
    if isolated:
        return None, None
    if explicit is not None:
        check_readable(str(explicit), f"config file {str(explicit)!r}")
        return read_config(explicit, cwd), explicit
    found = search_config(cwd, passed)
    if found is None:
        return None, None
    return read_config(found[0], cwd, found[1]), found[0]


def match_rules(selectors: Iterable[str], where: str = "rule selector") -> set[str]:
    """The codes of the rules matched by ``selectors``: ``ALL``, a code, a code prefix
    (``CA1``) or a name.  Raises :class:`UsageError` for a selector matching none."""
    codes: set[str] = set()
    for sel in selectors:
        key = sel.strip()
        hit = {code for code, cls in RULES.items()
               if key.upper() == "ALL" or code.startswith(key.upper()) or cls.name == key}
        if not key or not hit:
            known = ", ".join(f"{c} {r.name}" for c, r in sorted(RULES.items()))
            raise UsageError(f"{where}: {sel!r} matches no rule (known: {known})")
        codes |= hit
    return codes


def _specificity(selector: str, code: str, name: str) -> int | None:
    """How specifically ``selector`` names rule ``code``/``name``: None when it does not
    match; 0 for ALL, the prefix length for a code prefix, 100 for the code or name."""
    key = selector.strip()
    if key == name or key.upper() == code:
        return 100
    if key.upper() == "ALL":
        return 0
    return len(key) if code.startswith(key.upper()) else None


def apply_selection(codes: set[str], layer: Layer) -> set[str]:
    """The rule codes selected after ``layer`` (see the module docstring)."""
    out = set() if layer.select is not None else set(codes)
    enable = [*(layer.select or ()), *layer.extend_select]
    for code, cls in RULES.items():
        best: tuple[int, bool] | None = None
        for selectors, enabled in ((enable, True), (layer.ignore, False)):
            for sel in selectors:
                spec = _specificity(sel, code, cls.name)
                if spec is not None and (best is None or spec > best[0]
                                         or (spec == best[0] and not enabled)):
                    best = (spec, enabled)
        if best is not None:
            (out.add if best[1] else out.discard)(code)
    return out


def severity_overrides(pairs: Iterable[tuple[str, Any]], where: str) -> dict[str, Severity]:
    """Validate (rule code or name, level) pairs into a map rule name -> severity.
    Raises :class:`UsageError` for an unknown rule, a bad level, and a rule given twice
    (by its code and its name, or twice on the command line: adv62, the last one won
    without a word)."""
    out: dict[str, Severity] = {}
    given: dict[str, str] = {}
    by_key = {**{c: r.name for c, r in RULES.items()}, **{r.name: r.name for r in RULES.values()}}
    for key, level in pairs:
        name = by_key.get(key.upper() if key.upper() in RULES else key)
        if name is None:
            raise UsageError(f"{where}: unknown rule {key!r}{_suggest(key, by_key)}")
        if name in given:
            raise UsageError(f"{where}: {name} is given twice ({given[name]!r} and {key!r})")
        given[name] = key
        if not isinstance(level, str) or level not in {s.value for s in Severity}:
            raise UsageError(f"{where}: {key} must be error, warning or info, got "
                             f"{_toml_value(level)}")
        out[name] = Severity(level)
    return out


def cli_layer(values: dict[str, Any], fail_on: str | None = None,
              select: Sequence[str] | None = None, ignore: Sequence[str] = (),
              extend_select: Sequence[str] = (), severity: Sequence[str] = ()) -> Layer:
    """The command line's layer.  Selector options may hold comma-separated lists;
    ``severity`` holds ``RULE=LEVEL`` strings.  Raises :class:`UsageError`."""

    def split(items: Sequence[str], option: str) -> tuple[str, ...]:
        out = tuple(s.strip() for item in items for s in item.split(",") if s.strip())
        match_rules(out, option)
        return out

    pairs = []
    for item in severity:
        rule, sep, level = item.partition("=")
        if not sep:
            raise UsageError(f"--severity expects RULE=LEVEL, got {item!r}")
        pairs.append((rule.strip(), level.strip()))
    Settings().with_values(values)
    return Layer(source="command line", values=dict(values), fail_on=fail_on,
                 select=None if select is None else split(select, "--select"),
                 ignore=split(ignore, "--ignore"),
                 extend_select=split(extend_select, "--extend-select"),
                 severity=severity_overrides(pairs, "--severity"))


def resolve(layers: Sequence[Layer], config_path: Path | None = None) -> Effective:
    """Apply ``layers`` in order (later wins) over the defaults."""
    sources = {key: "default" for key in KEYS if key not in ("severity", "suppress")}
    suppressions: list[Suppression] = []
    thresholds: dict[str, Any] = {}
    shown: dict[str, Any] = {"fail-on": DEFAULT_FAIL_ON, "select": ["ALL"], "ignore": [],
                             "extend-select": []}
    codes = set(RULES)
    severity: dict[str, Severity] = {}
    for layer in layers:
        for name, value in layer.values.items():
            thresholds[name] = value
            sources[name.replace("_", "-")] = layer.source
        if layer.fail_on is not None:
            shown["fail-on"], sources["fail-on"] = layer.fail_on, layer.source
        codes = apply_selection(codes, layer)
        if layer.select is not None:
            shown["select"], sources["select"] = list(layer.select), layer.source
        for key, items in (("extend-select", layer.extend_select), ("ignore", layer.ignore)):
            if items:
                shown[key], sources[key] = [*shown[key], *items], layer.source
        if layer.suppress:
            suppressions += layer.suppress
            shown["suppress"] = [f"{e.describe()}" + (f" ({e.reason})" if e.reason else "")
                                 for e in suppressions]
            sources["suppress"] = layer.source
        for name, sev in layer.severity.items():
            severity[name] = sev
            shown[f"severity.{name}"], sources[f"severity.{name}"] = sev.value, layer.source
    settings = Settings().with_values(thresholds)
    shown.update({f.name.replace("_", "-"): getattr(settings, f.name) for f in fields(Settings)})
    rules = [RULES[code]() for code in sorted(codes)]
    return Effective(settings, str(shown["fail-on"]), rules, severity, config_path, shown,
                     sources, tuple(suppressions))
