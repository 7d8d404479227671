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

__all__ = ["MANIFEST_MAX", "leads_to", "manifest_name", "unpaired"]


def manifest_name(name: str, names: set[str]) -> bool:
    """True for a name that may be a Cline session's manifest ``<id>.json``:
    ``<id>.messages.json`` is among ``names`` (the directory's, or what a pattern
    matched).  By name only: :func:`leads_to` reads the file."""
    return name.endswith(".json") and name[:-len(".json")] + ".messages.json" in names


MANIFEST_MAX = 65536
"""Largest ``<id>.json`` read to tell whether it is a Cline manifest (bytes)."""


def leads_to(path: str) -> bool:
    """True when ``path`` (``<id>.json``, a regular file of at most
    :data:`MANIFEST_MAX` bytes) is a Cline session manifest whose messages file, as the
    reader finds it (:func:`~compaction_audit.io.cline_pair.manifest_target`), is
    ``<id>.messages.json`` beside it."""
    from compaction_audit.io.cline_pair import manifest_target

    try:
        if os.stat(path).st_size > MANIFEST_MAX:
            return False
    except OSError:
        return False
    found = manifest_target(path)
    messages = path[:-len(".json")] + ".messages.json"
    return found is not None and os.path.normpath(found) == os.path.normpath(messages)


def unpaired(messages: list[str], compactions: list[str]) -> list[str]:
    """:func:`~compaction_audit.io.cline_pair.unpaired_compactions`; under an address-space
    limit in a spawned child with the whole limit, since it decodes the messages files
    whole (in the command's own process orjson faults on an allocation that fails,
    adv24 F2).  When that child dies every compaction file is audited on its own: none
    is left out (one a messages file reads is then audited twice)."""
    from compaction_audit.io.cline_pair import unpaired_compactions
    from compaction_audit.runtime import addrspace

    if not messages or addrspace.address_space_limit() is None:
        return unpaired_compactions(messages, compactions)
    from compaction_audit.runtime import isolated

    try:
        return isolated.call_in_child(unpaired_compactions, messages, compactions)
    except isolated.ChildDied:
        return compactions
