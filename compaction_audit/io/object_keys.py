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
character XML 1.0 cannot carry arrives intact).  It lists every S3 prefix when botocore
is installed (:func:`compaction_audit.io.remote.list_objects`): obstore strips a key's
leading or trailing ``/`` without failing, so only a lister that sees keys exactly can
name such an object by its key.  Its requests keep the store's time budget
(:data:`~compaction_audit.io.remote.TIMEOUT_ENV`): each waits at most that long to
connect and for an answer, and a failed one is retried only within it; the listing
as a whole ends within :func:`listing_seconds` and at :data:`MAX_LISTED_KEYS` keys
(issue 11, adv14 F4, F5).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from compaction_audit.errors import UsageError
from compaction_audit.runtime import waits

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DOT_SEGMENT = re.compile(r"(?:^|/)\.{1,2}(?:/|$)")

BOTOCORE_EXTRA = "pip install 'compaction-audit[cloud]' (it installs botocore)"
"""What to run when botocore is missing."""

CONNECT_SECONDS = 5
READ_SECONDS = 30
"""botocore's timeouts per request, in seconds: those obstore's client uses, or the
retry budget when it is shorter (:func:`_client`)."""

MAX_LISTED_KEYS = 1_000_000
"""Keys one prefix may list (about 1,000 requests and 200 MB of ``(key, size)``);
past it the listing fails (:class:`ListingTooLong`): an endpoint that answers every
page as truncated, with a fresh token, was listed forever (adv14 F5)."""

_STARTED = "compaction_audit_started"
"""Key of a request's botocore context: ``time.monotonic()`` of its first attempt."""


class RetryBudgetSpent(Exception):
    """A request failed and its retry budget is spent: no more attempts."""


class ListingTooLong(Exception):
    """A listing past :data:`MAX_LISTED_KEYS` keys or :func:`listing_seconds`."""


def listing_seconds(budget: float) -> float:
    """Seconds within which a whole listing must end, for a store budget of ``budget``
    seconds: the budget and one request's wait for an answer (``min(READ_SECONDS,
    budget)``), the longest one request takes when its retries keep the budget.
    botocore's read timeout is per socket read, so an answer trickled one byte at a
    time never ends without it (adv14 F4)."""
    return budget + min(READ_SECONDS, budget)


def too_many_keys() -> ListingTooLong:
    """The error of a listing past :data:`MAX_LISTED_KEYS` keys."""
    return ListingTooLong(f"more than {MAX_LISTED_KEYS:,} keys under this prefix "
                          "(MAX_LISTED_KEYS): list a narrower prefix")


def too_slow(seconds: float, listed: int) -> ListingTooLong:
    """The error of a listing not done within ``seconds`` (:func:`listing_seconds`),
    ``listed`` keys so far."""
    return ListingTooLong(f"not done within {seconds:g} s ({listed:,} keys listed; the "
                          "store's budget is set by COMPACTION_AUDIT_STORE_TIMEOUT): list "
                          "a narrower prefix")


def bounded(batches: Iterable[Sequence[Any]], listed: list[int], started: float,
            seconds: float) -> Iterator[Sequence[Any]]:
    """``batches`` (obstore's listing pages) as they come, counting their keys in
    ``listed[0]`` (shared by every listing of one URL, begun at ``started``,
    ``time.monotonic()``); raises :class:`ListingTooLong` past
    :data:`MAX_LISTED_KEYS` keys or ``seconds`` since ``started``.  Each page is
    fetched in a daemon thread (obstore's stream hands over no empty page, so
    endless empty pages are one call that never returns), left behind when the time
    is up (:func:`~compaction_audit.runtime.waits.call`)."""
    pages = iter(batches)
    end = object()
    while True:
        done, value = waits.call(lambda: next(pages, end),
                                 max(0.0, seconds - (time.monotonic() - started)),
                                 "listing-page")
        if not done:
            raise too_slow(seconds, listed[0])
        if value is end:
            return
        listed[0] += len(value)
        if listed[0] > MAX_LISTED_KEYS:
            raise too_many_keys()
        yield value


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


def botocore_missing() -> bool:
    """True when botocore cannot be imported (the ``[cloud]`` extra installs it)."""
    try:
        import botocore.session  # noqa: F401
    except ImportError:
        return True
    return False


def _client(max_retries: int, budget: float) -> Any:
    """A botocore S3 client set up from the variables obstore reads: the endpoint
    (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT``), the region (``AWS_REGION``,
    ``AWS_DEFAULT_REGION``, else us-east-1), ``AWS_SKIP_SIGNATURE``,
    ``AWS_VIRTUAL_HOSTED_STYLE_REQUEST`` (path-style requests otherwise, as obstore
    makes); ``max_retries`` retries of a failed request, started within ``budget``
    seconds of its first attempt (obstore's ``retry_timeout``; :func:`_bound_retries`),
    each attempt waiting at most :data:`CONNECT_SECONDS` to connect and
    :data:`READ_SECONDS` for an answer, or ``budget`` when shorter.  Credentials are
    botocore's own chain (the ``AWS_*`` variables, web identity, container and
    instance metadata): never read here."""
    try:
        import botocore.session
        from botocore import UNSIGNED
        from botocore.config import Config
    except ImportError:
        raise UsageError(f"listing this prefix needs botocore: {BOTOCORE_EXTRA}") from None
    env = os.environ
    config = Config(
        connect_timeout=min(CONNECT_SECONDS, budget), read_timeout=min(READ_SECONDS, budget),
        retries={"total_max_attempts": max_retries + 1, "mode": "standard"},
        s3={"addressing_style": "virtual" if _truthy("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")
            else "path"},
        **({"signature_version": UNSIGNED} if _truthy("AWS_SKIP_SIGNATURE") else {}))
    session = botocore.session.get_session()
    client = session.create_client(
        "s3", endpoint_url=env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT") or None,
        region_name=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        config=config)
    _bound_retries(client, budget)
    return client


def _bound_retries(client: Any, budget: float) -> None:
    """Make ``client`` retry a failed request only within ``budget`` seconds of its
    first attempt.  botocore has no such budget: a handler of the request's
    ``before-call`` event notes when it starts, and one of ``needs-retry`` (run
    before botocore's own, being more specific) raises :class:`RetryBudgetSpent`
    once the budget is spent and the attempt failed (no answer, or a 5xx or 429
    answer), so botocore makes no further attempt."""

    def started(context: dict[str, Any], **_: Any) -> None:
        context[_STARTED] = time.monotonic()

    def needs_retry(request_dict: dict[str, Any], response: Any = None,
                    caught_exception: BaseException | None = None, **_: Any) -> None:
        status = None if response is None else response[0].status_code
        failed = caught_exception is not None or (status is not None and (
            status >= 500 or status == 429))
        began = request_dict.get("context", {}).get(_STARTED)
        if failed and began is not None and time.monotonic() - began >= budget:
            if caught_exception is not None:
                raise caught_exception
            raise RetryBudgetSpent(f"HTTP {status} after {budget:g} s of retries")

    events = client.meta.events
    events.register("before-call.s3.ListObjectsV2", started)
    events.register("needs-retry.s3.ListObjectsV2", needs_retry)


def list_s3_keys(bucket: str, prefix: str, max_retries: int,
                 budget: float | None = None) -> list[tuple[str, int]]:
    """``(key, size in bytes)`` of every object of ``bucket`` whose key starts with
    ``prefix``, keys exactly as stored, in the store's order; a failed request is
    retried ``max_retries`` times within ``budget`` seconds (:func:`_client`; None:
    the store's budget, :func:`~compaction_audit.io.remote.retry_timeout`); the
    listing ends within :func:`listing_seconds` (:func:`bounded`).
    Raises :class:`UsageError` when botocore is missing or the budget is set wrong,
    :class:`ListingTooLong` past that time or :data:`MAX_LISTED_KEYS` keys;
    botocore's own errors propagate."""
    if budget is None:
        from compaction_audit.io.remote import retry_timeout

        budget = retry_timeout().total_seconds()
    client = _client(max_retries, budget)
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [(str(item["Key"]), int(item["Size"]))
            for batch in bounded((page.get("Contents", ()) for page in pages), [0],
                                 time.monotonic(), listing_seconds(budget))
            for item in batch]
