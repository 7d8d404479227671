"""Object keys obstore cannot name, and an S3 listing that still sees every key
(issue 11, class 6, adv10 F8).

obstore (Rust's ``object_store`` underneath) parses each key of a listing page as a
path, and one key it rejects fails the whole page: ``Encountered object with invalid
path``, with no way past it (its ``offset`` must itself be a valid path, and the good
keys of the failing page are lost with it).  One object written under a prefix could
so keep every trace there from being audited.  :func:`key_problem` states the rules
(measured against obstore 0.12 in ``tests/test_remote_keys.py``);
:func:`list_s3_keys` lists an S3 prefix through botocore, AWS's own request layer
(signing, the credential chain, pagination; ``ListObjectsV2`` with
``encoding-type=url``, which botocore asks for and decodes, so that a key with a
character XML 1.0 cannot carry arrives intact).  It is only used when obstore's
listing fails that way (:func:`compaction_audit.io.remote.list_objects`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from compaction_audit.errors import UsageError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DOT_SEGMENT = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")

BOTOCORE_EXTRA = "pip install 'compaction-audit[cloud]' (it installs botocore)"
"""What to run when botocore is missing."""

CONNECT_SECONDS = 5
READ_SECONDS = 30
"""botocore's timeouts per request, in seconds: those obstore's client uses."""


def key_problem(key: str) -> str | None:
    """Why obstore cannot read the object named ``key`` as itself, or None.  The rules
    of ``object_store``'s ``Path::parse`` (object_store 0.12, ``src/path/mod.rs`` and
    ``parts.rs``): an ASCII control character (U+0000-U+001F, U+007F), a ``.`` or
    ``..`` segment and an empty segment are rejected; a leading or trailing ``/`` is
    stripped, so such a key would name another object.  The empty key (a bucket's
    root) is no object and has no problem here."""
    if not key:
        return None
    if _CONTROL.search(key):
        return "a control character"
    if key.startswith("/"):
        return "a leading '/'"
    if key.endswith("/"):
        return "a trailing '/'"
    if "//" in key:
        return "an empty segment ('//')"
    if _DOT_SEGMENT.search(key):
        return "a '.' or '..' segment"
    return None


def unnameable(problem: str) -> str:
    """The message for a key with ``problem`` (:func:`key_problem`): the key itself is
    in the URL the message is reported under, escaped there."""
    return f"its key has {problem}, which obstore cannot read as this object (rename it)"


def _truthy(name: str) -> bool:
    """An environment variable set to true the way object_store reads it."""
    return os.environ.get(name, "").strip().lower() in ("true", "1", "yes", "on")


def _client(max_retries: int) -> Any:
    """A botocore S3 client set up from the variables obstore reads: the endpoint
    (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT``), the region (``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, else us-east-1), ``AWS_SKIP_SIGNATURE``,
    ``AWS_VIRTUAL_HOSTED_STYLE_REQUEST`` (path-style requests otherwise, as obstore
    makes); ``max_retries`` retries of a failed request.  Credentials are botocore's
    own chain (the ``AWS_*`` variables, web identity, container and instance
    metadata): never read here."""
    try:
        import botocore.session
        from botocore import UNSIGNED
        from botocore.config import Config
    except ImportError:
        raise UsageError(f"listing this prefix needs botocore: {BOTOCORE_EXTRA}") from None
    env = os.environ
    config = Config(
        connect_timeout=CONNECT_SECONDS, read_timeout=READ_SECONDS,
        retries={"total_max_attempts": max_retries + 1, "mode": "standard"},
        s3={"addressing_style": "virtual" if _truthy("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")
            else "path"},
        **({"signature_version": UNSIGNED} if _truthy("AWS_SKIP_SIGNATURE") else {}))
    session = botocore.session.get_session()
    return session.create_client(
        "s3", endpoint_url=env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT") or None,
        region_name=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        config=config)


def list_s3_keys(bucket: str, prefix: str, max_retries: int) -> list[tuple[str, int]]:
    """``(key, size in bytes)`` of every object of ``bucket`` whose key starts with
    ``prefix``, keys exactly as stored, in the store's order; a failed request is
    retried ``max_retries`` times.  Raises :class:`UsageError` when botocore is
    missing; botocore's own errors propagate."""
    client = _client(max_retries)
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [(str(item["Key"]), int(item["Size"]))
            for page in pages for item in page.get("Contents", ())]
