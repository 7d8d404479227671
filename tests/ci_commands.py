"""A checker for tests: what a CI runner would execute, or a terminal would hide, in an
output.  It applies the runners' rules, written here from their documentation and
parsers, independently of compaction_audit.report.safe:

- GitHub Actions reads a step's stdout and stderr line by line (a line ends at LF, CR
  or CRLF), trims leading whitespace (any Unicode white space), and runs a line that
  then starts with ``::`` and has a second ``::`` as a workflow command (``::error
  title=x::msg``, ``::stop-commands::token``, ``::add-mask::v``).  The legacy form
  ``##[name ...]`` is recognised anywhere in a line (``##[add-mask]``,
  ``##[set-output name=x;]``).
- Azure Pipelines runs ``##vso[area.action ...]`` anywhere in a line and formats
  ``##[group]``/``##[error]``; TeamCity runs ``##teamcity[...]`` service messages.
- GitLab's collapsible sections (``section_start:TS:NAME`` then CR and ESC[0K) and any
  terminal control need raw ESC or CR.

:func:`commands` lists the offending lines; :func:`hidden` lists invisible or control
characters that reorder or hide text in a terminal or a web log view.
"""

from __future__ import annotations

import re
import unicodedata

LINE_ENDS = re.compile(r"\r\n|\r|\n")
LEGACY = re.compile(r"##(?:vso|teamcity)?\[", re.IGNORECASE)
OWN = re.compile(r"::(?:error|warning|notice)(?: [^:\r\n]*)?::[^\r\n]*")
"""A line of the ``github`` format: one of its three annotation commands, properties
free of ``:`` (they are %-escaped), the message to the end of the line."""
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
"""Unicode categories a terminal or a web log view draws as nothing, or acts on:
controls, format characters (zero-width, joiners, bidi, tags), surrogates, private
use, line and paragraph separators."""
INVISIBLE_OTHERS = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164"
                              "\ufdd0-\ufdef\ufe00-\ufe0f\uffa0\ufff0-\ufff8"
                              "\U000e0000-\U000e0fff]")
"""Invisible characters of other categories: the combining grapheme joiner, the
Hangul fillers, the Khmer inherent vowels, variation selectors, unassigned default
ignorable code points (U+2065, U+FFF0-FFF8, tags), and the
non-characters U+FDD0-FDEF (those ending in FFFE/FFFF are tested apart)."""


def lines(output: str) -> list[str]:
    """``output`` split as the runner splits it."""
    return LINE_ENDS.split(output)


def commands(output: str, own: bool = False) -> list[str]:
    """The lines of ``output`` a CI runner would execute as a command.  ``own``: the
    output is the ``github`` format, whose annotation lines (see :data:`OWN`) are
    meant to run; any other ``::`` line is still reported."""
    found = []
    for line in lines(output):
        head = line.lstrip()
        command = head.startswith("::") and "::" in head[2:]
        if (command and not (own and OWN.fullmatch(head))) or LEGACY.search(line):
            found.append(line)
    return found


def hidden(output: str) -> list[str]:
    """Control and invisible characters in ``output`` (tab and LF excepted), as
    ``U+XXXX``: ESC (terminal escapes, GitLab section markers), CR (a line end to the
    runner), C1, every format character (bidi controls and marks, zero-width space,
    joiners, word joiner, soft hyphen, BOM, tags), U+2028/2029, lone surrogates (a
    name's undecodable bytes), private use, non-characters, variation selectors and
    the other characters of :data:`INVISIBLE_OTHERS` (by Unicode category, from
    :mod:`unicodedata`, not from the project's own list)."""
    found = set()
    for c in output:
        code = ord(c)
        if c in "\t\n" or (32 <= code < 127):
            continue
        if (unicodedata.category(c) in HIDDEN_CATEGORIES or INVISIBLE_OTHERS.match(c)
                or code & 0xFFFE == 0xFFFE):
            found.add(f"U+{code:04X}")
    return sorted(found)


def clean(output: str, own: bool = False) -> list[str]:
    """Everything wrong with ``output``: :func:`commands` and :func:`hidden`."""
    return commands(output, own) + hidden(output)
