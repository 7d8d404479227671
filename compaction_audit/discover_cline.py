"""Cline session files in discovery: a session is audited once.

A Cline session folder holds a manifest ``<id>.json``, ``<id>.messages.json`` and,
after a compaction, ``<id>.compaction.json`` (docs/adapters.md, "Cline 3.x").
:func:`manifest_name` and :func:`leads_to` tell a manifest beside its messages file
(a folder search names it as no news, a pattern leaves it out: the messages file is
audited), and :func:`unpaired` the compaction files no messages file reads (audited as
traces of their own).
"""

from __future__ import annotations

import os
import re

__all__ = ["MANIFEST_MAX", "leads_to", "manifest_name", "unpaired"]


def manifest_name(name: str, names: set[str]) -> bool:
    """True for a name that may be a Cline session's manifest ``<id>.json``:
    ``<id>.messages.json`` is among ``names`` (the directory's, or what a pattern
    matched).  By name only: :func:`leads_to` reads the file."""
    return name.endswith(".json") and name[:-len(".json")] + ".messages.json" in names


MANIFEST_MAX = 65536
"""Most bytes of a ``<id>.json`` read to tell whether it is a Cline manifest."""


def leads_to(path: str) -> bool:
    """True when ``path`` (``<id>.json``, a regular file of at most
    :data:`MANIFEST_MAX` bytes) is a Cline session manifest whose messages file is
    ``<id>.messages.json`` beside it: the file it names, or where it names none that
    exists (the reader then takes the folder's messages file of its session), one whose
    ``sessionId`` (in its first :data:`MANIFEST_MAX` bytes) is the manifest's
    ``session_id`` (:func:`~compaction_audit.io.cline_pair.manifest_names`)."""
    from compaction_audit.io.cline_pair import manifest_names

    try:
        if os.stat(path).st_size > MANIFEST_MAX:
            return False
    except OSError:
        return False
    messages = os.path.normpath(path[:-len(".json")] + ".messages.json")
    named = [os.path.normpath(n) for n in manifest_names(path)]
    found = next((n for n in named if os.path.isfile(n)), None)
    if found is not None or not named:
        return found == messages
    import orjson

    try:
        with open(path, "rb") as handle:
            sid = orjson.loads(handle.read()).get("session_id")
        with open(messages, "rb") as handle:
            head = handle.read(MANIFEST_MAX)
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return False
    said = _SESSION_ID_RE.search(head)
    return said is not None and isinstance(sid, str) and said.group(1).decode(
        "utf-8", "replace") == sid


_SESSION_ID_RE = re.compile(rb'"sessionId"\s*:\s*"([^"\\]*)"')
"""A Cline messages file's ``sessionId`` near its start (a string without escapes)."""


def unpaired(messages: list[str], compactions: list[str]) -> list[str]:
    """:func:`~compaction_audit.io.cline_pair.unpaired_compactions`; under an address-space
    limit in a spawned child with the whole limit, since it decodes the messages files
    whole (in the command's own process orjson faults on an allocation that fails,
    adv24 F2).  When that child dies every compaction file is audited on its own: none
    is left out (one a messages file reads is then audited twice)."""
    from compaction_audit import addrspace
    from compaction_audit.io.cline_pair import unpaired_compactions

    if not messages or addrspace.address_space_limit() is None:
        return unpaired_compactions(messages, compactions)
    from compaction_audit import isolated

    try:
        return isolated.call_in_child(unpaired_compactions, messages, compactions)
    except isolated.ChildDied:
        return compactions
