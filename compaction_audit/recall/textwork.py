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
summary's comparison index (``survival.index._index``) is built in both processes.

The helper imports only :mod:`~compaction_audit.recall.extract` and
:mod:`~compaction_audit.recall.survival` (standard library, no Polars; started with
``-S``: :func:`~compaction_audit.recall.textearly.command`); on a small session it is
the one the ``audit`` command started before its imports, at a lower priority
(:mod:`~compaction_audit.recall.textearly`), else it starts here; it ends with
this process (:func:`compaction_audit.runtime.childproc.prelude`) and when its input is closed.
Whatever it fails to deliver is done here.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from bisect import bisect_right
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import polars as pl

from compaction_audit.model import Session
from compaction_audit.plans import collect
from compaction_audit.recall import extract as ext
from compaction_audit.recall import textearly
from compaction_audit.recall import texthelper as th
from compaction_audit.recall.prefilter import MAY_HOLD
from compaction_audit.recall.survclass import Classes
from compaction_audit.recall.survival import check as surv  # where tests patch survives
from compaction_audit.runtime import frames
from compaction_audit.runtime.childproc import in_worker_process
from compaction_audit.series import Series

PARALLEL_MIN_JOBS = 4000
"""Distinct texts from which the text work is shared with a helper process; below it,
starting the process costs more than it saves."""

SURVIVAL_MAX_CHECKS = th.SURVIVAL_MAX_CHECKS
"""The clause classes compared with summaries above their leaves' own folds, per session
(:data:`compaction_audit.recall.texthelper.SURVIVAL_MAX_CHECKS`; read here at
:meth:`TextJobs.plan`, which also sends it to the helper)."""

SURVIVAL_MAX_PAIRS = th.SURVIVAL_MAX_PAIRS
"""The (discriminator, summary) pairs of those leaves looked up, per session
(:data:`compaction_audit.recall.texthelper.SURVIVAL_MAX_PAIRS`; read and sent as
:data:`SURVIVAL_MAX_CHECKS`)."""

STEP = textearly.STEP
"""Texts per chunk: the helper sends its extractions this many at a time, and checks
between chunks whether this process has taken over the rest (about 7 ms of work)."""

TextKey = tuple[str, str]
"""(text, span type): what extraction reads (:func:`compaction_audit.recall.extract.extract`)."""

Survived = dict[tuple[TextKey, str], tuple[bool, ...]]
"""((child text, type), summary text) -> ``surv.survives`` of each of the child's
discriminators; a fold of raw spans checks the same pairs as the occurrence table,
computed once."""


class Extracted(dict[TextKey, tuple[ext.Discriminator, ...]]):
    """Discriminators per distinct (text, span type), each extracted once per analysis.

    :func:`compaction_audit.recall.extract.extract` keeps an LRU cache of 4,096 texts;
    a long session has far more distinct span texts than that, and both the fold checks
    and the occurrence table read every span's, so the analysis keeps its own table.
    """

    def __missing__(self, key: TextKey) -> tuple[ext.Discriminator, ...]:
        found = self[key] = tuple(ext.extract(*key))
        return found


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


class _Helper:
    """The helper process (:mod:`~compaction_audit.recall.texthelper`), a thread that
    collects what it sends and one that writes to it.

    ``chunks``: its extractions so far, in text order, each as (index of its first
    text, its packed discriminators: :func:`~compaction_audit.recall.texthelper.unpack`),
    and ``done``: how many texts they cover; ``groups``: its survival flags so far, one
    list per group, in group order (both only grow).
    """

    def __init__(self, process: subprocess.Popen[bytes], texts: list[TextKey]) -> None:
        self.process = process
        self.chunks: list[tuple[int, bytes]] = []
        self.done = 0
        self.groups: list[list[tuple[bool, ...]]] = []
        self._writer: threading.Thread | None = None
        self._inbox, self._outbox = frames.Chain(), frames.Chain()  # running CRCs
        self.post(texts)  # the first message: the texts, a bare list
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def start(cls, texts: list[TextKey]) -> _Helper | None:
        """The helper extracting ``texts``: the one the command started early
        (:mod:`~compaction_audit.recall.textearly`) whatever their number, else a new
        one; None (do everything here) when there is no text, fewer than
        :data:`PARALLEL_MIN_JOBS` and no early helper, on one CPU, without POSIX pipes
        that ``select`` can watch, inside a worker process, or when it cannot start."""
        early = textearly.take_early()
        if early is not None:
            if texts and early.poll() is None:
                return cls(early, texts)
            textearly.end(early)
        if (len(texts) < PARALLEL_MIN_JOBS or (os.cpu_count() or 1) < 2 or os.name != "posix"
                or in_worker_process()):
            return None
        try:
            process = subprocess.Popen(textearly.command(os.getpid(), STEP),  # a failure
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # is
                                       stderr=subprocess.DEVNULL)  # its stream ending short
        except OSError:
            return None
        return cls(process, texts)

    def post(self, message: Any) -> None:
        """Send ``message`` in a thread, after the previous one (the pipe holds 64 KB
        and the helper reads between two chunks of work)."""
        if self._writer is not None:
            self._writer.join()
        self._writer = threading.Thread(target=self._write, args=(message,), daemon=True)
        self._writer.start()

    def _write(self, message: Any) -> None:
        stream = self.process.stdin
        if stream is None:
            return
        with contextlib.suppress(OSError, ValueError):  # the helper died, or was stopped
            frames.send(stream, message, self._outbox)

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
                while (message := frames.read(stream, self._inbox)) is not None:
                    if message[0] == "x":  # (Damaged, a ValueError: the helper failed)
                        _, n, packed = message
                        self.chunks.append((self.done, packed))  # read when needed
                        self.done += n
                    else:
                        self.groups.append(message[1])
        finally:
            # no one reads its output from here on: a helper still working would
            # block on the full pipe, and a message posted to it on its full input,
            # which close() waits for (adv146 F1: a damaged message hung the audit)
            with contextlib.suppress(OSError):
                self.process.kill()

    def close(self) -> None:
        """End the helper (if still running) and its threads."""
        if self._writer is not None:
            self._writer.join()
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()  # its input ends: it stops quietly
        if self.process.poll() is None:  # done or not, it has nothing more to give
            self.process.kill()
        self.process.wait()
        self._reader.join()
        if self.process.stdout is not None:
            self.process.stdout.close()


def job_texts(session: Session, items: pl.DataFrame
              ) -> tuple[pl.DataFrame, list[TextKey], list[TextKey]]:
    """``(frame, texts, empty)``: the distinct (text, span type) keys the analysis
    extracts (raw spans' texts and folded children's, each with its span type;
    ``items``: :func:`~compaction_audit.recall.analysis.typed_items`), folded summaries'
    texts first (the helper extracts them first: unsupported-summary-claim, which runs
    before the analysis, reads them through :meth:`TextJobs.lookup`), then in order of
    first occurrence, as a frame (``text``, ``stype``) and a list, and those known to
    hold no discriminator without extracting them: one vectorized pass
    (:data:`~compaction_audit.recall.prefilter.MAY_HOLD`) sets aside the texts the
    pattern does not match, and harness text is never read."""
    keyed, children = collect(  # plans.collect: a few queries, not one per step
        items.lazy().select("id", "kind", "text", "stype").filter(pl.col("text").is_not_null()),
        session.edges.lazy().select(pl.col("child").alias("id")).unique())
    folded = keyed.join(children, on="id").lazy()
    every = pl.concat([  # summaries first: CA305 reads them before the analysis
        folded.filter(pl.col("kind") == "summary").select("text", "stype"),
        keyed.lazy().filter(pl.col("kind") == "span").select("text", "stype"),
        folded.select("text", "stype"),
    ]).unique(maintain_order=True)
    maybe = pl.col("text").str.contains(MAY_HOLD) & (pl.col("stype") != "harness")
    distinct, empty = collect(every.filter(maybe), every.filter(~maybe))
    return (distinct,
            list(zip(distinct["text"].to_list(), distinct["stype"].to_list(), strict=True)),
            list(zip(empty["text"].to_list(), empty["stype"].to_list(), strict=True)))


class TextJobs:
    """The analysis's texts (:func:`job_texts`), the survival checks it will make, and
    the helper sharing their work.

    Use: :meth:`start` as soon as the session is read, :meth:`plan` once the series
    is built, :meth:`extract_into` and :meth:`survive_into` in the analysis,
    :meth:`close` in every case (it stops a helper still running).
    """

    def __init__(self, frame: pl.DataFrame, texts: list[TextKey], empty: list[TextKey],
                 helper: _Helper | None) -> None:
        self.frame = frame
        """``texts`` as a frame: ``text``, ``stype``."""
        self.texts = texts
        self.empty = empty
        self.helper = helper
        self.groups: list[tuple[str, list[int]]] | None = None
        """The survival checks: (summary text, indices in ``texts`` of the children or
        leaves compared with it), each distinct pair once."""
        self.direct: list[int] | None = None
        """Per group, how many of its children (they come first) are its summary's own
        children (fold edges); the others are leaves below them (closure pairs)."""
        self.cut: int | None = None
        """The first group checked against its own children only
        (:func:`~compaction_audit.recall.texthelper.survival_cut`), once known."""
        self.by_pairs = False
        """Whether the cap on pairs (:data:`SURVIVAL_MAX_PAIRS`), not the one on clause
        comparisons, set :attr:`cut`."""
        self._own_from = len(texts)
        """Texts from this index on were extracted here; those before by the helper."""
        self._extracted: Extracted | None = None
        """Every text's discriminators, once :meth:`extract_into` has run."""
        self._at: dict[TextKey, int] | None = None
        """Index of each text in :attr:`texts` (-1: in :attr:`empty`), made on first
        :meth:`lookup`."""
        self._unpacked: tuple[int, list[th.Encoded]] = (-1, [])
        """The helper chunk :meth:`lookup` read last (its number, unpacked)."""
        self._decode = th.Decoder()
        self._early: dict[TextKey, tuple[ext.Discriminator, ...]] = {}
        """What :meth:`extract_while` extracted: the texts from :attr:`_back` on."""
        self._back = len(texts)

    @classmethod
    def start(cls, session: Session, items: pl.DataFrame) -> TextJobs:
        """List the texts and start the helper on them (see :class:`_Helper`)."""
        frame, texts, empty = job_texts(session, items)
        return cls(frame, texts, empty, _Helper.start(texts))

    def lookup(self, text: str, stype: str) -> tuple[ext.Discriminator, ...] | None:
        """The discriminators of ``(text, stype)`` if one of :attr:`texts` (or
        :attr:`empty`) and already extracted, here or by the helper; else None.  Given
        to :func:`compaction_audit.recall.extract.share` for the audit, so that other
        readers of the same texts do not extract them again."""
        key = (text, stype)
        if self._extracted is not None:
            return self._extracted.get(key)
        if (early := self._early.get(key)) is not None:  # by :meth:`extract_while`
            return early
        if self._at is None:
            self._at = dict.fromkeys(self.empty, -1)
            self._at.update((t, i) for i, t in enumerate(self.texts))
        at = self._at.get(key)
        if at is None:
            return None
        if at < 0:
            return ()
        helper = self.helper
        if helper is None or at >= helper.done:
            return None
        chunks = helper.chunks
        k = bisect_right(chunks, at, key=itemgetter(0)) - 1
        if self._unpacked[0] != k:  # summaries come first: read in order, a chunk each
            self._unpacked = (k, th.unpack(chunks[k][1]))
        return self._decode(self._unpacked[1][at - chunks[k][0]])

    def narrow(self, texts: list[str]) -> None:
        """Keep only the discriminators of ``texts`` read as prose (what a survival
        index of each reads): the analysis is done with the others."""
        known = self._extracted if self._extracted is not None else Extracted()
        self._extracted = Extracted({k: known[k] for t in texts
                                     if (k := (t, "prose")) in known})

    def plan(self, session: Session, items: pl.DataFrame, series: Series) -> None:
        """Make :attr:`groups` (once) and send them to the helper: each fold edge
        (child, fold text) and each closure pair (leaf, summary text) whose child has a
        text among :attr:`texts` and whose summary has a text."""
        if self.groups is not None:
            return
        self.groups = []
        if not self.texts:
            return
        # one plan for the numbered summary texts and one for the groups, collected
        # together (issue 14, fleet audits); every step is in a total order
        keyed = items.lazy().select("id", "text", "stype").filter(pl.col("text").is_not_null())
        summary_text = items.lazy().filter(pl.col("kind") == "summary").select(
            pl.col("id").alias("sid"), pl.col("text").alias("s")).filter(
            pl.col("s").is_not_null())
        # texts named by index in the pairs: a 100 KB summary over 2,500 leaves was
        # copied onto every pair (issue 11, class 5, the sixth adversarial pass's F1)
        child_at = (self.frame.lazy().with_row_index("_c")
                    .with_columns(pl.col("_c").cast(pl.Int64)))
        summary_plan = (summary_text.select("s").unique(maintain_order=True)
                        .with_row_index("_s").with_columns(pl.col("_s").cast(pl.Int64)))
        # each summary's own children first ("_deep" false), then the leaves below
        # them: past the cap only the first are checked (th.survival_cut)
        pairs = pl.concat([
            session.edges.lazy().select(pl.col("child").alias("id"),
                                        pl.col("parent").alias("sid"),
                                        pl.lit(False).alias("_deep")),
            series.closure.lazy().select(pl.col("leaf").alias("id"), pl.col("item").alias("sid"),
                                         pl.lit(True).alias("_deep")),
        ]).join(keyed.join(child_at, on=["text", "stype"]).select("id", "_c"),
                on="id"  # a child without one: nothing to check
                ).join(summary_text.join(summary_plan, on="s").select("sid", "_s"),
                       on="sid").group_by("_s", "_c").agg(pl.col("_deep").min()
                                                          ).sort("_s", "_deep", "_c")
        summary_at, grouped = collect(summary_plan, pairs.group_by(
            "_s", maintain_order=True).agg("_c", (~pl.col("_deep")).sum().alias("_direct")))
        summaries = summary_at["s"].to_list()
        self.groups = [(summaries[g], children) for g, children in
                       zip(grouped["_s"].to_list(), grouped["_c"].to_list(), strict=True)]
        self.direct = grouped["_direct"].to_list()
        if self.helper is not None:
            self.helper.post(("g", self.groups, self.direct, SURVIVAL_MAX_CHECKS,
                              SURVIVAL_MAX_PAIRS))

    def extract_while(self, busy: Callable[[], bool]) -> int:
        """Extract texts here, from the last back, while ``busy()`` says this process
        would otherwise wait (for the embedding helper's answer: issue 14, item 4),
        asking again after each text; :meth:`extract_into` takes them.  Returns how
        many texts were extracted."""
        texts, early, back = self.texts, self._early, self._back
        floor = self.helper.done if self.helper is not None else 0
        while back > floor and busy():
            back -= 1
            if texts[back] not in early:
                early[texts[back]] = tuple(ext.extract(*texts[back]))
        done, self._back = self._back - back, back
        return done

    def extract_into(self, extracted: Extracted) -> None:
        """Every text's discriminators into ``extracted``: from the last text back
        until this process meets the helper, the helper's before that (all here when
        there is no helper or it stops sending).  Tells the helper where they met."""
        extracted.update(dict.fromkeys(self.empty, ()))
        extracted.update(self._early)
        self._extracted = extracted
        texts, helper = self.texts, self.helper
        hi = self._back
        while hi > (helper.done if helper is not None else 0):
            lo = max(hi - STEP, helper.done if helper is not None else 0)
            for t in texts[lo:hi]:
                if t not in extracted:
                    extracted[t] = tuple(ext.extract(*t))
            hi = lo
        self._own_from = hi
        if helper is None:
            return
        if hi < len(texts):  # the helper stops there, and gets what it needs of the rest
            given = {c: th.encode(extracted[texts[c]]) for _, children in self.groups or ()
                     for c in children if c >= hi}
            helper.post(("k", hi, given))
        decode = self._decode
        for at, packed in list(helper.chunks):
            if at >= hi:  # extracted here: never read
                break
            for encoded in th.unpack(packed)[:hi - at]:
                extracted[texts[at]] = decode(encoded)
                at += 1
        self._decode = th.Decoder()  # what it made is held by ``extracted`` now
        self._unpacked = (-1, [])

    def survive_into(self, extracted: Extracted, survived: Survived) -> None:
        """The survival flags of every pair of :attr:`groups` into ``survived``: from
        the last group back until this process meets the helper, the helper's before
        that (all here when there is no helper or it stops sending)."""
        texts, helper, groups, direct = self.texts, self.helper, self.groups or [], self.direct
        classes = Classes(summary for summary, _ in groups)
        cut, self.by_pairs = th.survival_cut(groups, direct, lambda c: extracted[texts[c]],
                                             classes, SURVIVAL_MAX_CHECKS, SURVIVAL_MAX_PAIRS)
        self.cut = cut
        hi = len(groups)
        while hi > (len(helper.groups) if helper is not None else 0):
            hi -= 1
            summary, children = groups[hi]
            keys = [(texts[c], summary) for c in th.checked(children, hi, cut, direct)]
            survived.update(zip(keys, th.group_flags(summary, [extracted[k] for k, _ in keys],
                                                     classes), strict=True))
        self.close()
        if helper is None:
            return
        for g, ((summary, children), flags) in enumerate(zip(groups[:hi], helper.groups,
                                                             strict=False)):
            survived.update(zip([(texts[c], summary)
                                 for c in th.checked(children, g, cut, direct)], flags,
                                strict=True))

    def shallow(self) -> set[str]:
        """The summary texts checked against their own children only (the groups from
        :attr:`cut` on), after :meth:`survive_into`."""
        if self.cut is None or self.groups is None:
            return set()
        return {summary for summary, _ in self.groups[self.cut:]}

    def close(self) -> None:
        """Stop the helper, if any (idempotent)."""
        if self.helper is not None:
            self.helper.post(("s",))
            self.helper.close()
            self.helper = None
