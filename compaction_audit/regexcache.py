"""Regular expressions compiled ahead of time (issue 14, item 4): the programs of the
patterns an audit compiles, stored with the package and handed to the regex engine at
start-up instead of being compiled again by every process.

``re.compile`` parses a pattern and compiles it to a program in Python
(``re._parser``, ``re._compiler``), then hands the program to the C engine
(``_sre.compile``), which checks it and makes the pattern object.  The first two steps
took 40-50 ms of CPU of every ``audit`` (82 patterns of our modules, 126 with those of
typer, rich and the standard library they load; the largest, the token scanner of
:mod:`compaction_audit.recall.extract`, 12 ms) and as much again in the text helper
process; the last takes about 1 % of it.

:data:`TABLE` (``regexprograms.bin``, written by ``scripts/gen_regex_table.py`` from
the patterns an audit of the sample logs compiles, :func:`record`) holds, per
``(pattern type, pattern, flags)``, what ``_sre.compile`` was given.  :func:`preload`
makes those pattern objects and puts them in ``re``'s own cache, where every
``re.compile`` and ``re.sub`` of the same pattern and flags finds them: nothing else
changes, a pattern not in the table (a new or edited one) is compiled as before.  The
programs depend on the interpreter, so the table is used only by the Python it was
written with (:func:`interpreter`: implementation, version to the patch level and the
engine's magic number and code size); any other Python, a missing or damaged table,
or an interpreter whose ``re`` keeps no such cache compiles as before.  The engine
checks each program it is given (a damaged one is refused, not run).

Only in the command's own process and the text helper (:func:`compaction_audit.startup.as_command`,
:data:`compaction_audit.recall.texthelper.BOOT`).  Standard library only.
"""

from __future__ import annotations

import array
import marshal
import os
import re
import sys
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:  # loaded by the text helper: no typing, no contextlib at start
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regexprograms.bin")
"""The table of programs (module docstring): zlib-compressed :mod:`marshal` of
``(interpreter(), {(kind, pattern, flags): (flags, code, groups, groupindex,
indexgroup)})``, ``kind`` ``"s"`` (str) or ``"b"`` (bytes), ``code`` the program as
native unsigned integers of the engine's code size."""

Key = tuple[str, "str | bytes", int]
"""``(kind, pattern, flags)``: ``re``'s cache key, the pattern's type written ``"s"`` or ``"b"``."""
Program = tuple[int, bytes, int, "dict[str, int]", "tuple[str | None, ...]"]
"""What ``_sre.compile`` is given after the pattern: flags, code, groups, groupindex,
indexgroup (the code as bytes)."""


def interpreter() -> str:
    """What a program depends on: the implementation, the Python version (to the patch
    level) and the engine's magic number and code size."""
    import _sre

    return (f"{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}"
            f"-{_sre.MAGIC}-{_sre.CODESIZE}-{sys.maxunicode}")


def _code_type() -> str | None:
    """The :mod:`array` type code of the engine's code units, None when none fits."""
    import _sre

    for code in ("I", "L", "H"):
        if array.array(code).itemsize == _sre.CODESIZE:
            return code
    return None


def preload(path: str = TABLE) -> int:
    """Put the table's patterns in ``re``'s cache (module docstring); returns how many.
    Never raises: any failure leaves ``re`` as it is and returns 0."""
    try:
        import _sre

        cache = getattr(re, "_cache", None)
        limit = getattr(re, "_MAXCACHE", 0)
        typecode = _code_type()
        if type(cache) is not dict or typecode is None:
            return 0
        with open(path, "rb") as stream:
            made, table = marshal.loads(zlib.decompress(stream.read()))
        if made != interpreter():
            return 0
        done = 0
        for (kind, pattern, flags), (final, code, groups, groupindex, indexgroup) in table.items():
            key = (str if kind == "s" else bytes, pattern, flags)
            if key in cache:
                continue
            if len(cache) >= limit - 1:  # re drops its oldest entries past the limit
                break
            cache[key] = _sre.compile(pattern, final, array.array(typecode, code).tolist(),
                                      groups, groupindex, indexgroup)
            done += 1
        return done
    except Exception:  # an unusable table: compile as before
        return 0


def record(into: dict[Key, Program], where: Callable[[str], bool] | None = None
           ) -> AbstractContextManager[None]:
    """A context manager: while active, every pattern ``re`` compiles (not found in
    its cache, which is emptied first) is added to ``into``, under the key of ``re``'s
    cache, with what ``_sre.compile`` was given; with ``where``, only those compiled
    from a file for which ``where(filename)`` is true (the first caller outside
    ``re``)."""
    from contextlib import contextmanager

    return contextmanager(_recording)(into, where)


def _recording(into: dict[Key, Program], where: Callable[[str], bool] | None
               ) -> Iterator[None]:
    """:func:`record`'s generator."""
    import re._compiler as compiler  # re._compile calls compiler.compile(pattern, flags)

    real_compile, real_sre = compiler.compile, compiler._sre
    found_code = _code_type()
    assert found_code is not None
    typecode: str = found_code
    keys: list[Key | None] = []

    def compile_(pattern: Any, flags: int = 0) -> Any:
        frame = sys._getframe(1)
        inside = f"{os.sep}re{os.sep}"
        while frame.f_back is not None and inside in frame.f_code.co_filename:
            frame = frame.f_back
        wanted = isinstance(pattern, str | bytes) and (where is None
                                                       or where(frame.f_code.co_filename))
        keys.append(("s" if isinstance(pattern, str) else "b", pattern, int(flags))
                    if wanted else None)
        try:
            return real_compile(pattern, flags)
        finally:
            keys.pop()

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(real_sre, name)

        def compile(self, pattern: str | bytes, flags: int, code: list[int], groups: int,
                    groupindex: dict[str, int], indexgroup: tuple[str | None, ...]) -> Any:
            key = keys[-1] if keys else None
            if key is not None:
                into[key] = (int(flags), array.array(typecode, code).tobytes(), groups,
                             dict(groupindex), tuple(indexgroup))
            return real_sre.compile(pattern, flags, code, groups, groupindex, indexgroup)

    re.purge()
    compiler.compile, compiler._sre = compile_, Recording()
    try:
        yield
    finally:
        compiler.compile, compiler._sre = real_compile, real_sre


def dump(table: dict[Key, Program]) -> bytes:
    """The bytes of :data:`TABLE` for ``table`` (sorted: the same table, the same bytes)."""
    ordered = dict(sorted(table.items(), key=lambda kv: (kv[0][0], repr(kv[0][1]), kv[0][2])))
    return zlib.compress(marshal.dumps((interpreter(), ordered)), 9)
