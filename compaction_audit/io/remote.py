"""Traces in object storage: ``s3://``, ``gs://`` and ``az://`` URLs (issue 14, item 5).

Read through obstore (the optional extra ``[cloud]``: one 16 MB wheel, Rust's
``object_store`` underneath, for all three stores; fsspec with s3fs, gcsfs and adlfs
installs 126 MB in 55 distributions for the same three).  An object is opened as a
binary stream (:func:`open_url`) that :mod:`compaction_audit.io.lines` reads like a
file, so remote traces get the same line reader, decompression (``.gz``/``.zst``, by
suffix or magic bytes) and input limits (``max_line_bytes``, ``max_input_bytes``,
``max_decompression_ratio``) as local ones: there is no second reading path.

URLs: ``s3://BUCKET/KEY``, ``gs://BUCKET/KEY``, ``az://CONTAINER/KEY`` (the Azure
account from ``AZURE_STORAGE_ACCOUNT_NAME``).  Credentials, region and endpoint come
from the environment the way obstore reads it (``AWS_*``, ``GOOGLE_*``, ``AZURE_*``
variables, instance metadata); this module never reads, logs or forwards them.
A failed request is retried at most :data:`MAX_RETRIES` times within the retry
budget (:func:`retry_timeout`: :data:`RETRY_TIMEOUT`, or :data:`TIMEOUT_ENV`), so
unreachable storage is an error in seconds, not minutes; a store that did not answer
(:func:`unanswered`) is not asked again for one more budget: every request to it
meanwhile fails at once with that error (issue 11, ninth adversarial pass, F7: a URL
made two requests, each with the whole budget, and every URL paid again).  Each
request that reads an object (its HEAD, each read of its body) ends within
:func:`answer_seconds` or is given up as not answered (:class:`NoAnswer`): obstore's
own limit is per request and its retries, so an answer trickled one byte every 2 s
cost 30 s, 60 s with a retry, per object (adv16b F2).
Error messages are the first line of obstore's, cut to :data:`MESSAGE_CHARS`.
A key obstore cannot name as itself is never read (it would refuse it, or strip a
``/`` and read another object), an S3 prefix is listed through botocore, which
sees every key exactly (:mod:`compaction_audit.io.object_keys`), and a GCS or Azure
listing goes on past such a key (:mod:`compaction_audit.io.key_gaps`).
"""

from __future__ import annotations

import functools
import io
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import IO, TYPE_CHECKING, Any

from compaction_audit.errors import LogError, UsageError
from compaction_audit.io.object_keys import key_problem, listing_seconds, unnameable
from compaction_audit.runtime import waits
from compaction_audit.runtime.envtime import env_seconds

if TYPE_CHECKING:
    from compaction_audit.io.key_gaps import Gap, LostFolder

SCHEMES = ("s3", "gs", "az")
"""URL schemes read from object storage."""

CLOUD_EXTRA = "pip install 'compaction-audit[cloud]'"
"""What to run when obstore is missing."""

BUFFER_BYTES = 8 << 20
"""Bytes fetched per ranged GET while reading an object (a few requests per second
at the first-byte latency of object stores; 8 MiB of memory per open trace)."""

MAX_RETRIES = 5
RETRY_TIMEOUT = timedelta(seconds=60)
"""Retries of a failed request (connection refused, 5xx, timeout), and the time
within which they start (obstore's defaults: 10 and 3 minutes; its client's own: 5 s
to connect, 30 s per request, so a request that does not answer is given up at most
30 s after the budget; one that reads an object, besides, after :func:`answer_seconds`
whatever the environment sets).  Client options are left to the environment (passing any
would replace those obstore reads from it, e.g. ``AWS_ALLOW_HTTP``; obstore reads the
request timeout from ``AWS_TIMEOUT``, ``GOOGLE_TIMEOUT``, ``AZURE_TIMEOUT``)."""

TIMEOUT_ENV = "COMPACTION_AUDIT_STORE_TIMEOUT"
"""Environment variable: the retry budget in seconds (a positive number)."""

MESSAGE_CHARS = 300

_unanswered: dict[int, tuple[Any, str, float]] = {}
"""Stores that did not answer (by ``id``): the store, the first error, and until when
(``time.monotonic``; one retry budget after that error) requests to it fail at once."""


def is_url(path: str) -> bool:
    """True when ``path`` is an object storage URL (``s3://``, ``gs://``, ``az://``; the
    scheme in any case, as RFC 3986 section 3.1 has it: ``S3://b/k`` is not the local
    path ``S3:/b/k``)."""
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


_BUCKET = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
"""A bucket or container name as S3, Cloud Storage and Azure spell them (letters,
digits, ``.``, ``-``, ``_``; the services' own length rules are theirs to enforce)."""


def shown_url(url: str) -> str:
    """``url`` with any user information before the bucket (``user:password@``)
    replaced by ``***@``: a URL is echoed in errors and reports.  A secret may hold
    ``/`` (AWS secret keys often do: adv54), so when what comes before the first ``/``
    after the scheme has a ``:`` or an ``@``, or is empty (``s3:///KEY:SECRET@b``:
    adv55), everything up to the last ``@`` is user information (all of that part when
    there is no ``@``).  Any number of slashes after the scheme (a shell or a path
    library makes ``s3:/``)."""
    match = _SCHEME.match(url)
    if match is None:
        return url
    return _masked(*match.groups())


def _masked(lead: str, rest: str) -> str:
    """``lead`` (a scheme and its slashes) and ``rest`` with the user information of
    ``rest`` replaced by ``***@`` (see :func:`shown_url`)."""
    head, slash, tail = rest.partition("/")
    if not (":" in head or "@" in head or (not head and "@" in rest)):
        return lead + rest
    at = rest.rfind("@")
    return f"{lead}***@{rest[at + 1:]}" if at >= 0 else f"{lead}***{slash}{tail}"


_SCHEME = re.compile(r"(?is)^((?:s3|gs|az):/+)(.*)$")
"""An object storage scheme with its slashes (one or more), and the rest."""


_OTHER_SCHEME = re.compile(r"(?is)^(([a-z][a-z0-9+.-]+):/+)(.*)$")
"""A URL of any scheme of two characters or more (``C:/`` is a Windows path)."""


def other_url(path: str) -> tuple[str, str] | None:
    """``(scheme, shown)`` when ``path`` is a URL of a scheme this tool does not read
    (``https://``, ``file://``, ``ftp://``: not object storage), ``shown`` with its
    user information masked as :func:`shown_url` masks it; else None.  Such a URL was
    read as a local path and echoed whole, a token in it included (adv81 #4)."""
    match = _OTHER_SCHEME.match(path)
    if match is None or match.group(2).lower() in SCHEMES:
        return None
    lead, scheme = match.group(1), match.group(2)
    if lead.endswith(":/"):  # a path made of the URL has one slash: shown as typed
        lead = f"{scheme}:///" if scheme.lower() == "file" else f"{scheme}://"
    return scheme.lower(), _masked(lead, match.group(3))


def shown_any(path: str) -> str:
    """``path`` as errors show it: an object storage URL as :func:`shown_url`, another
    URL as :func:`other_url`, a path as it is."""
    other = other_url(path)
    return shown_url(path) if other is None else other[1]


def url_like(text: str) -> bool:
    """``text`` starts with an object storage scheme and a slash (``s3:/``, which a
    path made of ``s3://``, counts): never a local path to echo or write."""
    return _SCHEME.match(text) is not None


def split_url(url: str) -> tuple[str, str, str]:
    """``(scheme, bucket, key)`` of ``url``; the key may be empty (the bucket's root).
    Raises :class:`UsageError` for a URL without a bucket, or whose bucket is not a
    name: user information, a port, a query, a fragment or a space before the first
    ``/`` was dropped by the storage client, which read another bucket under the name
    given, and a password in it was printed in every report (adv53)."""
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower()
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise UsageError(f"{shown_url(url)}: no bucket in the URL "
                         f"(expected {scheme}://BUCKET/KEY)")
    if not _BUCKET.fullmatch(bucket):
        shown = shown_url(url)
        why = ("credentials go in the environment, never in the URL"
               if shown != url and "@" in rest else "letters, digits, '.', '-' and '_' only")
        raise UsageError(f"{shown}: not a bucket name before the first '/' ({why})")
    return scheme, bucket, key


def message(exc: BaseException) -> str:
    """The first line of an obstore error, bounded (the rest is a Rust debug dump)."""
    text = str(exc).strip().split("\n", 1)[0].strip() or type(exc).__name__
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


def _obstore() -> Any:
    try:
        import obstore
    except ImportError:
        raise UsageError(f"object storage URLs need: {CLOUD_EXTRA}") from None
    return obstore


def retry_timeout() -> timedelta:
    """:data:`TIMEOUT_ENV` in seconds, else :data:`RETRY_TIMEOUT`.  Raises
    :class:`UsageError` when it is set to something else than a positive number."""
    return timedelta(seconds=env_seconds(TIMEOUT_ENV, RETRY_TIMEOUT.total_seconds()))


def answer_seconds() -> float:
    """Seconds a request that reads an object (a HEAD, one read of its body: one
    ranged GET of :data:`BUFFER_BYTES`, or the end of one and the start of the next)
    may take, its retries included: the retry budget and one request's wait
    (:func:`~compaction_audit.io.object_keys.listing_seconds`: 2 x the budget, at
    most the budget + 30 s), as a whole listing."""
    return listing_seconds(retry_timeout().total_seconds())


class NoAnswer(Exception):
    """A request not done within :func:`answer_seconds` (left behind, in its thread)."""


def unanswered(exc: BaseException) -> bool:
    """True when ``exc`` says the store did not answer: no connection or no response
    (obstore: "error sending request"; botocore, listing S3: its ``ConnectionError``
    or ``HTTPClientError``, such as a connect or read timeout), a response whose body
    stalled, trickled past obstore's request timeout or was cut (obstore's reader: an
    ``OSError``, "request or response body error"), a request not done in time
    (:class:`NoAnswer`), or the retry budget spent ("retry_timeout"); not for an
    answer such as no such object (obstore's ``FileNotFoundError``, whose text can name
    the retry budget), no permission, and not for a request not made (:func:`_ask`)."""
    if isinstance(exc, NoAnswer) or any(
            c.__module__ == "botocore.exceptions" and c.__name__ in _BOTOCORE_UNANSWERED
            for c in type(exc).__mro__):
        return True
    if isinstance(exc, _NotAsked):
        return False
    text = str(exc).split("Debug source:", 1)[0]  # the dump names retry_timeout always
    return "error sending request" in text or "response body error" in text or (
        not isinstance(exc, OSError) and "retry_timeout" in text)


_BOTOCORE_UNANSWERED = frozenset({"ConnectionError", "HTTPClientError"})
"""botocore's bases of the errors of a request that got no answer."""


class _NotAsked(OSError):
    """A request not made: its store did not answer within the last retry budget."""


def _ask(store: Any, call: Any, timed: bool = False) -> Any:
    """``call()``, a request to ``store``; an ``OSError`` at once, with the first
    error, when ``store`` did not answer within the last retry budget.  ``timed``:
    run it in a thread, given up after :func:`answer_seconds` (:class:`NoAnswer`)."""
    seen = _unanswered.get(id(store))
    if seen is not None and time.monotonic() < seen[2]:
        raise _NotAsked(f"the store did not answer: {seen[1]}")
    try:
        if not timed:
            return call()
        seconds = answer_seconds()
        done, value = waits.call(call, seconds, "store-request")
        if not done:
            raise NoAnswer(f"no answer within {seconds:g} s (the store's budget is set "
                           f"by {TIMEOUT_ENV})")
        return value
    except Exception as exc:
        _note(store, exc)
        raise


def _note(store: Any, exc: BaseException) -> None:
    """Remember ``store`` as not answering, for one retry budget, when ``exc`` says so
    (the store is kept in the entry: its ``id`` is not reused meanwhile)."""
    if unanswered(exc):
        until = time.monotonic() + retry_timeout().total_seconds()
        _unanswered[id(store)] = (store, message(exc), until)


@functools.lru_cache(maxsize=64)
def store_for(scheme: str, bucket: str) -> Any:
    """The obstore store of one bucket (cached per process).  Raises
    :class:`UsageError` when obstore is not installed or the store cannot be
    configured from the environment."""
    _obstore()
    from obstore.store import from_url

    try:
        return from_url(f"{scheme}://{bucket}", retry_config={
            "max_retries": MAX_RETRIES, "retry_timeout": retry_timeout()})
    except UsageError:
        raise
    except Exception as exc:  # obstore raises its own hierarchy and ValueError
        raise UsageError(f"{scheme}://{bucket}: cannot use this store: {message(exc)}"
                         ) from None


def _invalid_key(exc: BaseException) -> bool:
    """True when ``exc`` is obstore failing a listing page on a key it cannot parse
    (``InvalidPathError``: "Encountered object with invalid path")."""
    return type(exc).__name__ == "InvalidPathError"


def list_objects(url: str, gaps: list[Gap | LostFolder] | None = None
                 ) -> list[tuple[str, int]]:
    """``(url, size in bytes)`` of every object whose key starts with the key of
    ``url`` (a prefix ending in ``/``, or empty), in the store's order (lexicographic
    for S3, GCS and Azure).  An ``s3://`` prefix is listed through botocore
    (:func:`~compaction_audit.io.object_keys.list_s3_keys`), which sees every key
    exactly: obstore strips a leading or trailing ``/`` (a lone ``/x.jsonl`` came back
    as ``x.jsonl``, an object that exists under no such key) and fails a whole page on
    a key it cannot parse; the keys obstore cannot read are then reported by the
    caller (:func:`~compaction_audit.io.object_keys.key_problem`).  Without botocore,
    and for ``gs://`` and ``az://``, obstore lists (keys as it parses them); a
    ``gs://`` listing goes on past each key it fails on, an ``az://`` one that fails
    on such a key is done again folder by folder, and what they could not see is
    appended to ``gaps`` (:mod:`compaction_audit.io.key_gaps`).  Raises
    :class:`UsageError` (one line) when the store cannot be listed: unreachable, no
    such bucket, no permission, such a key under an ``s3://`` prefix without
    botocore, more than :data:`~compaction_audit.io.object_keys.MAX_LISTED_KEYS` keys,
    not done within :func:`~compaction_audit.io.object_keys.listing_seconds`."""
    from compaction_audit.io.object_keys import botocore_missing

    scheme, bucket, key = split_url(url)
    try:
        _obstore()
    except UsageError as exc:  # adv81 #6: a prefix's error did not name it
        raise UsageError(f"{shown_url(url)}: cannot list: {exc}") from None
    found = None if scheme == "s3" and not botocore_missing() else _obstore_list(
        url, [] if gaps is None else gaps)
    if found is None or (scheme == "s3" and len({k for k, _ in found}) < len(found)):
        from compaction_audit.io.object_keys import list_s3_keys

        store = store_for(scheme, bucket)  # whose silence the other requests keep
        try:
            found = _ask(store, lambda: list_s3_keys(bucket, key, MAX_RETRIES))
        except UsageError:
            raise
        except Exception as exc:  # botocore's hierarchy
            raise UsageError(f"{url}: cannot list: {message(exc)}") from None
    return [(f"{scheme}://{bucket}/{k}", size) for k, size in found]


def _obstore_list(url: str, gaps: list[Gap | LostFolder]) -> list[tuple[str, int]] | None:
    """``(key, size)`` of the objects under ``url`` as obstore lists them (past the
    keys it cannot parse for ``gs://``, folder by folder for ``az://`` when such a key
    fails the listing; what could not be seen appended to ``gaps``), or None for
    an ``s3://`` prefix that obstore cannot list for a key it cannot parse.  Raises
    :class:`UsageError` when the listing fails otherwise."""
    from compaction_audit.io.key_gaps import list_by_folder, list_past_bad_keys
    from compaction_audit.io.object_keys import bounded, listing_seconds

    scheme, bucket, key = split_url(url)
    store = store_for(scheme, bucket)
    obstore = _obstore()

    listed, started = [0], time.monotonic()
    seconds = listing_seconds(retry_timeout().total_seconds())

    def listing(offset: str | None) -> Any:  # its requests are made as it is iterated
        return bounded(_ask(store, lambda: store.list(
            key or None, offset=offset, chunk_size=1000)), listed, started, seconds)

    try:
        if scheme == "gs":
            found, seen = list_past_bad_keys(
                listing, lambda name: object_size(f"{scheme}://{bucket}/{name}"),
                _invalid_key)
            gaps += seen
            return found
        try:
            return [(meta["path"], int(meta["size"])) for batch in listing(None)
                    for meta in batch]
        except Exception as exc:
            if not (_invalid_key(exc) and scheme == "az"):
                raise

        def level(folder: str | None) -> Any:
            """One folder's listing, under the bounds of the flat one (its deadline,
            :data:`MAX_LISTED_KEYS` counted across folders; adv15 F3)."""
            got: list[Any] = []

            def page() -> Iterator[Any]:
                got.append(_ask(store, lambda: obstore.list_with_delimiter(store, folder)))
                yield got[0]["objects"]

            for _ in bounded(page(), listed, started, seconds):
                pass
            return got[0]

        found, lost = list_by_folder(level, key.rstrip("/") or None, _invalid_key)
        gaps += lost
        return found
    except Exception as exc:  # obstore's errors have no common base with OSError
        _note(store, exc)
        if not (_invalid_key(exc) and scheme == "s3"):
            raise UsageError(f"{url}: cannot list: {message(exc)}") from None
        return None


def object_size(url: str) -> int | None:
    """The size of the object at ``url`` in bytes (one HEAD request), or None when it
    cannot be had (the reader then reports why)."""
    try:
        scheme, bucket, key = split_url(url)
        if key_problem(key):
            return None
        store = store_for(scheme, bucket)
        return int(_ask(store, lambda: store.head(key), timed=True)["size"])
    except Exception:  # any failure: the reader reports it, with its cause
        return None


def missing_object(url: str) -> bool:
    """True only when the store answers that there is no object at ``url`` (one HEAD
    request); False when it exists and on any other answer or failure (no answer, no
    permission, a key obstore cannot name, obstore missing): a caller that drops
    records of objects that no longer exist keeps them unless the store says so."""
    try:
        scheme, bucket, key = split_url(url)
        if key_problem(key):
            return False
        store = store_for(scheme, bucket)
        _ask(store, lambda: store.head(key), timed=True)
    except FileNotFoundError:
        return True
    except Exception:  # unknown: kept (see the docstring)
        return False
    return False


class _ObjectRaw(io.RawIOBase):
    """One version of an object, read by ranged GETs of at most :data:`BUFFER_BYTES`:
    each asks for the version the first HEAD saw (``If-Match`` its ETag, when the
    store gives one), so an object replaced while it is read is one error, "the
    object changed while it was read", never a trace spliced from two versions (adv66
    #1: a 16 MB object replaced after its first 8 MiB was audited as the first half
    of one and the second of the other, exit 1 with no word).  A failed request is an
    :class:`OSError`, which the line reader reports with its line."""

    def __init__(self, store: Any, key: str, size: int, e_tag: str | None) -> None:
        self._store, self._key, self._size, self._e_tag = store, key, size, e_tag
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        """At most :data:`BUFFER_BYTES`, one request, timed (:func:`_ask`)."""
        end = min(self._at + min(len(b), BUFFER_BYTES), self._size)
        if end <= self._at:
            return 0
        options: dict[str, Any] = {"range": (self._at, end)}
        if self._e_tag:
            options["if_match"] = self._e_tag
        obstore = _obstore()
        try:
            data = _ask(self._store, lambda: obstore.get(
                self._store, self._key, options=options).bytes(), timed=True)
        except Exception as exc:  # obstore's, ours: one line, an OSError for the reader
            if type(exc).__name__ in ("PreconditionError", "NotModifiedError"):
                raise OSError("the object changed while it was read (its ETag is not "
                              "the one it had when opened)") from None
            raise OSError(message(exc)) from None
        n = len(data)
        if n != end - self._at:  # a store without ETags, the object cut meanwhile
            raise OSError("the object changed while it was read (a range came back "
                          f"{n:,} bytes for {end - self._at:,})")
        memoryview(b).cast("B")[:n] = memoryview(data)
        self._at = end
        return n


def open_url(url: str) -> IO[bytes]:
    """Open the object at ``url`` as a buffered binary stream (``peek`` works, for
    the magic bytes).  Its size comes from a HEAD request made here, never from an
    earlier listing: an object rewritten since would be cut short silently.  Raises
    :class:`LogError` (line 0) when it cannot be opened: obstore missing, no such
    object (with a hint when the URL looks like a prefix), unreachable store, a key
    obstore cannot name as itself (:func:`~compaction_audit.io.object_keys.key_problem`:
    it would refuse it, or strip a ``/`` and read another object)."""
    try:
        scheme, bucket, key = split_url(url)
        problem = key_problem(key)
        if problem:
            raise LogError(url, 0, f"cannot open: {unnameable(problem)}")
        obstore = _obstore()
        store = store_for(scheme, bucket)
    except UsageError as exc:  # the URL as shown: never a password in it (adv53)
        shown = shown_url(url)
        said = str(exc).removeprefix(f"{shown}: ")  # the URL once (adv54)
        raise LogError(shown, 0, f"cannot open: {said}") from None
    try:
        meta = _ask(store, lambda: obstore.head(store, key), timed=True)
    except FileNotFoundError:
        hint = "" if "." in key.rsplit("/", 1)[-1] else \
            " (a prefix? end the URL with '/' to audit the traces under it)"
        raise LogError(url, 0, f"cannot open: no such object{hint}") from None
    except Exception as exc:
        raise LogError(url, 0, f"cannot open: {message(exc)}") from None
    raw = _ObjectRaw(store, key, int(meta["size"]), meta.get("e_tag"))
    return io.BufferedReader(raw, buffer_size=BUFFER_BYTES)  # one GET per 8 MiB
