"""The text work of the recall analysis, shared with a helper process (issue 14).

The recall analysis (:mod:`compaction_audit.recall.analysis`) extracts the
discriminators of every distinct text it reads (:mod:`~compaction_audit.recall.extract`)
and checks, for every distinct (child or leaf text, summary text) pair it compares,
which of them survive (:mod:`~compaction_audit.recall.survival`).  Both are pure
functions of their texts, so where they run does not change a result.

:class:`TextJobs` lists the texts as soon as the session is read
(:meth:`TextJobs.start`, called by the engine before the rebuilt cosine and the
series) and, on a large session, starts a helper process (:data:`_TEXT_BOOT`) that
extracts them from the first onwards, a chunk of :data:`STEP` texts at a time, while
this process does the rest of the audit.  When the analysis needs them
(:meth:`TextJobs.extract_into`) this process extracts from the last text backwards
until it meets the helper: the split follows how far each got, not a fixed share.
The survival checks are then split by summary text (:meth:`TextJobs.survive_into`):
about half of the checks, whole summaries at a time, go to the helper, so that no
summary's comparison index (``survival._index``) is built in both processes.

The helper imports only :mod:`~compaction_audit.recall.extract` and
:mod:`~compaction_audit.recall.survival` (standard library, no Polars); it ends with
this process (:func:`compaction_audit.childproc.prelude`) and when its input is closed.
Whatever it fails to deliver is done here.
"""

from __future__ import annotations

import contextlib
import marshal
import multiprocessing
import os
import subprocess
import sys
import threading
from typing import IO, Any

import polars as pl

from compaction_audit.childproc import prelude
from compaction_audit.model import Session
from compaction_audit.recall import extract as ext
from compaction_audit.recall import survival as surv
from compaction_audit.recall.prefilter import MAY_HOLD

PARALLEL_MIN_JOBS = 4000
"""Distinct texts from which the text work is shared with a helper process; below it,
starting the process costs more than it saves."""

STEP = 64
"""Texts per chunk: the helper sends its extractions this many at a time, and checks
between chunks whether this process has taken over the rest (about 7 ms of work)."""

TextKey = tuple[str, str]
"""(text, span type): what extraction reads (:func:`compaction_audit.recall.extract.extract`)."""

Survived = dict[tuple[TextKey, str], tuple[bool, ...]]
"""((child text, type), summary text) -> ``surv.survives`` of each of the child's
discriminators; a fold of raw spans checks the same pairs as the occurrence table,
computed once."""

_Encoded = tuple[tuple[str, str, str, int, int, int], ...]


class Extracted(dict[TextKey, tuple[ext.Discriminator, ...]]):
    """Discriminators per distinct (text, span type), each extracted once per analysis.

    :func:`compaction_audit.recall.extract.extract` keeps an LRU cache of 4,096 texts;
    a long session has far more distinct span texts than that, and both the fold checks
    and the occurrence table read every span's, so the analysis keeps its own table.
    """

    def __missing__(self, key: TextKey) -> tuple[ext.Discriminator, ...]:
        found = self[key] = tuple(ext.extract(*key))
        return found


_TEXT_BOOT = (
    "import gc, marshal, os, select, sys, types\n"
    "gc.disable()\n"
    "for name, path in (('compaction_audit', sys.argv[1]),\n"
    "                   ('compaction_audit.recall', sys.argv[2])):\n"
    "    pkg = types.ModuleType(name)\n"
    "    pkg.__path__ = [path]\n"
    "    sys.modules[name] = pkg\n"
    "from compaction_audit.recall import extract as ext, survival as surv\n"
    "step = int(sys.argv[3])\n"
    "def read(n):\n"
    "    parts = []\n"
    "    while n:\n"
    "        part = os.read(0, n)\n"
    "        if not part:\n"
    "            sys.exit(0)\n"
    "        parts.append(part)\n"
    "        n -= len(part)\n"
    "    return b''.join(parts)\n"
    "def receive():\n"
    "    return marshal.loads(read(int.from_bytes(read(8), 'little')))\n"
    "def send(tag, obj):\n"
    "    data = marshal.dumps((tag, obj))\n"
    "    sys.stdout.buffer.write(len(data).to_bytes(8, 'little') + data)\n"
    "    sys.stdout.buffer.flush()\n"
    "texts = receive()\n"
    "found = []\n"
    "while len(found) < len(texts) and not select.select([0], [], [], 0)[0]:\n"
    "    chunk = [tuple(ext.extract(*t)) for t in texts[len(found):len(found) + step]]\n"
    "    found.extend(chunk)\n"
    "    send('x', [tuple((x.kind.value, x.text, x.norm, x.start, x.end, x.line)\n"
    "                     for x in ds) for ds in chunk])\n"
    "pairs, given = receive()\n"
    "kind = {k.value: k for k in ext.Kind}\n"
    "given = {at: tuple(ext.Discriminator(kind[k], t, n, a, b, ln)\n"
    "                   for k, t, n, a, b, ln in enc) for at, enc in given.items()}\n"
    "memo = {}\n"
    "def check(x, s):\n"
    "    key = (x.kind, x.text, x.norm, s)\n"
    "    kept = memo.get(key)\n"
    "    if kept is None:\n"
    "        kept = memo[key] = surv.survives(x, s)\n"
    "    return kept\n"
    "send('s', [tuple([check(x, s) for x in (found[c] if c < len(found) else given[c])])\n"
    "           for c, s in pairs])\n"
)
"""The helper: :mod:`~compaction_audit.recall.extract` and
:mod:`~compaction_audit.recall.survival` loaded under empty package modules, so that
neither package's ``__init__`` (and with it Polars) is imported.  Messages both ways
are an 8-byte little-endian length and a :mod:`marshal` body.  It reads the texts
(``(text, span type)`` pairs) and sends ``('x', discriminators)`` for each chunk of
:data:`STEP` of them, in order, each discriminator as ``(kind, text, norm, start, end,
line)``, until it has done them all or its input becomes readable.  Then it reads
``(pairs, given)``: pairs ``(child index, summary text)`` and the discriminators of the
children it did not extract (by index), and sends ``('s', flags)``: ``surv.survives``
of each of the child's discriminators in the summary text, per pair.  End of input
ends it quietly."""

_KIND_OF = {kind.value: kind for kind in ext.Kind}


def _decode(encoded: _Encoded) -> tuple[ext.Discriminator, ...]:
    make, kind_of = ext.Discriminator, _KIND_OF
    return tuple([make(kind_of[k], t, n, a, b, ln) for k, t, n, a, b, ln in encoded])


def _encode(found: tuple[ext.Discriminator, ...]) -> _Encoded:
    return tuple((x.kind.value, x.text, x.norm, x.start, x.end, x.line) for x in found)


def survival_flags(pairs: list[tuple[tuple[ext.Discriminator, ...], str]]
                   ) -> list[tuple[bool, ...]]:
    """``surv.survives(d, text)`` for each ``d`` of each ``(ds, text)`` pair, computed
    once per distinct (kind, text, norm, summary text): survival reads nothing else of
    a discriminator, and the same fact (a clause, a name) recurs in many spans."""
    survives = surv.survives
    memo: dict[tuple[ext.Kind, str, str, str], bool] = {}
    out = []
    for ds, text in pairs:
        flags = []
        for d in ds:
            key = (d.kind, d.text, d.norm, text)
            kept = memo.get(key)
            if kept is None:
                kept = memo[key] = survives(d, text)
            flags.append(kept)
        out.append(tuple(flags))
    return out


def _send(stream: IO[bytes], obj: Any) -> None:
    data = marshal.dumps(obj)
    stream.write(len(data).to_bytes(8, "little") + data)
    stream.flush()


class _Helper:
    """The helper process (:data:`_TEXT_BOOT`) and a thread that collects what it sends.

    ``chunks``: its extractions so far, in text order; ``done``: how many texts they
    cover (only grows); ``flags``: its survival flags once sent.
    """

    def __init__(self, process: subprocess.Popen[bytes], texts: list[TextKey]) -> None:
        self.process = process
        self.chunks: list[list[_Encoded]] = []
        self.done = 0
        self.flags: list[tuple[bool, ...]] | None = None
        self.finished = threading.Event()
        self._writer = threading.Thread(target=self._write, args=(texts,), daemon=True)
        self._writer.start()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, texts: list[TextKey]) -> _Helper | None:
        """The helper extracting ``texts``; None (do everything here) when there are
        fewer than :data:`PARALLEL_MIN_JOBS`, on one CPU, without POSIX pipes that
        ``select`` can watch, inside a worker process, or when it cannot start."""
        if (len(texts) < PARALLEL_MIN_JOBS or (os.cpu_count() or 1) < 2 or os.name != "posix"
                or multiprocessing.parent_process() is not None):
            return None
        package = os.path.dirname(os.path.dirname(ext.__file__))
        try:
            process = subprocess.Popen([sys.executable, "-c", prelude(os.getpid()) + _TEXT_BOOT,
                                        package, os.path.dirname(ext.__file__), str(STEP)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError:
            return None
        return cls(process, texts)

    def _write(self, texts: list[TextKey]) -> None:
        """Send the texts (in a thread: the pipe holds 64 KB and the helper reads them
        only once it has imported its modules)."""
        assert self.process.stdin is not None
        with contextlib.suppress(OSError, ValueError):  # the helper died, or was stopped
            _send(self.process.stdin, texts)

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                head = stream.read(8)
                if len(head) < 8:
                    break
                tag, payload = marshal.loads(stream.read(int.from_bytes(head, "little")))
                if tag == "x":
                    self.chunks.append(payload)
                    self.done += len(payload)
                else:
                    self.flags = payload
                    break
        except (OSError, ValueError, EOFError, TypeError):
            pass
        finally:
            self.finished.set()

    def survive(self, pairs: list[tuple[int, str]], given: dict[int, _Encoded]) -> bool:
        """Send the survival checks ``(child index, summary text)``, with the
        discriminators of the children it has not extracted (``given``); False when
        the helper is gone."""
        self._writer.join()
        assert self.process.stdin is not None
        try:
            _send(self.process.stdin, (pairs, given))
        except (OSError, ValueError):
            return False
        return True

    def close(self) -> None:
        """End the helper (if still running) and its threads."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # its input ends: it stops quietly
        if self.process.poll() is None:  # done or not, it has nothing more to give
            self.process.kill()
        self.process.wait()
        self._reader.join()
        self._writer.join()
        if self.process.stdout is not None:
            self.process.stdout.close()


def job_texts(session: Session, items: pl.DataFrame
              ) -> tuple[pl.DataFrame, list[TextKey], list[TextKey]]:
    """``(frame, texts, empty)``: the distinct (text, span type) keys the analysis
    extracts (raw spans' texts and folded children's, each with its span type;
    ``items``: :func:`~compaction_audit.recall.analysis.typed_items`), in order of first
    occurrence, as a frame (``text``, ``stype``) and a list, and those known to hold no
    discriminator without extracting them: one vectorized pass
    (:data:`~compaction_audit.recall.prefilter.MAY_HOLD`) sets aside the texts the
    pattern does not match, and harness text is never read."""
    keyed = items.select("id", "kind", "text", "stype").filter(pl.col("text").is_not_null())
    children = session.edges.select(pl.col("child").alias("id")).unique()
    distinct = pl.concat([
        keyed.filter(pl.col("kind") == "span").select("text", "stype"),
        keyed.join(children, on="id").select("text", "stype"),
    ]).unique(maintain_order=True)
    maybe = pl.col("text").str.contains(MAY_HOLD) & (pl.col("stype") != "harness")
    empty = distinct.filter(~maybe)
    distinct = distinct.filter(maybe)
    return (distinct,
            list(zip(distinct["text"].to_list(), distinct["stype"].to_list(), strict=True)),
            list(zip(empty["text"].to_list(), empty["stype"].to_list(), strict=True)))


class TextJobs:
    """The analysis's texts (:func:`job_texts`) and the helper sharing their work.

    Use: :meth:`start` as soon as the session is read, :meth:`extract_into` and
    :meth:`survive_into` in the analysis, :meth:`close` in every case (it stops a
    helper still running).
    """

    def __init__(self, frame: pl.DataFrame, texts: list[TextKey], empty: list[TextKey],
                 helper: _Helper | None) -> None:
        self.frame = frame
        """``texts`` as a frame: ``text``, ``stype``."""
        self.texts = texts
        self.empty = empty
        self.helper = helper
        self._own_from = len(texts)
        """Texts from this index on were extracted here; those before by the helper."""

    @classmethod
    def start(cls, session: Session, items: pl.DataFrame) -> TextJobs:
        """List the texts and start the helper on them (see :class:`_Helper`)."""
        frame, texts, empty = job_texts(session, items)
        return cls(frame, texts, empty, _Helper.start(texts))

    def extract_into(self, extracted: Extracted) -> None:
        """Every text's discriminators into ``extracted``: from the last text back
        until this process meets the helper, the helper's before that (all here when
        there is no helper or it stops sending)."""
        extracted.update(dict.fromkeys(self.empty, ()))
        texts, helper = self.texts, self.helper
        hi = len(texts)
        while hi > (helper.done if helper is not None else 0):
            lo = max(hi - STEP, helper.done if helper is not None else 0)
            for t in texts[lo:hi]:
                if t not in extracted:
                    extracted[t] = tuple(ext.extract(*t))
            hi = lo
        self._own_from = hi
        if helper is None or hi == 0:
            return
        at = 0
        for chunk in list(helper.chunks):
            for encoded in chunk[:hi - at]:
                extracted[texts[at]] = _decode(encoded)
                at += 1
            if at >= hi:
                break

    def survive_into(self, keys: list[tuple[TextKey, str]], extracted: Extracted,
                     survived: Survived) -> None:
        """:func:`survival_flags` of each ``(child key, summary text)`` of ``keys`` into
        ``survived``: whole summaries, about half of the checks (a pair weighs one plus
        its child's discriminators), go to the helper (those it did not deliver are
        done here)."""
        helper = self.helper
        if helper is None or not keys:
            survived.update(zip(keys, survival_flags([(extracted[c], s) for c, s in keys]),
                                strict=True))
            return
        weight: dict[str, int] = {}
        for c, s in keys:
            weight[s] = weight.get(s, 0) + len(extracted[c]) + 1
        # the helper takes the summaries (in order) whose middle falls in the first
        # half of the checks
        total, taken, theirs = sum(weight.values()), 0, set()
        for s, w in weight.items():
            if 2 * taken + w > total:
                break
            theirs.add(s)
            taken += w
        helper_keys = [k for k in keys if k[1] in theirs]
        own_keys = [k for k in keys if k[1] not in theirs]
        index = {t: i for i, t in enumerate(self.texts)}
        sent = [(index[c], s) for c, s in helper_keys]
        given = {i: _encode(extracted[self.texts[i]]) for i, _ in sent if i >= self._own_from}
        ok = helper.survive(sent, given)
        survived.update(zip(own_keys, survival_flags([(extracted[c], s) for c, s in own_keys]),
                            strict=True))
        if ok:
            helper.finished.wait()
        flags = helper.flags if ok else None
        if flags is None or len(flags) != len(helper_keys):
            flags = survival_flags([(extracted[c], s) for c, s in helper_keys])
        survived.update(zip(helper_keys, flags, strict=True))
        self.close()

    def close(self) -> None:
        """Stop the helper, if any (idempotent)."""
        if self.helper is not None:
            self.helper.close()
            self.helper = None
