"""Lenient reading without cascades (issue 11, item 2).

Under ``--lenient`` a record that is bad in itself is skipped; before this module,
every later record that named an id the skipped record defined was rejected too
("never defined"), so one bad key could skip 39 rounds of 40.  :class:`LenientFeed`
keeps the skip to the bad record:

* The ids a skipped record would have defined (its ``spans[].id`` and
  ``summaries[].id`` that are not defined already) are **quarantined**: unknown, not
  an error.  A line that is not JSON (or a record whose lists cannot be read) may
  have defined anything: after it, every id that is not defined is treated as
  quarantined.
* A later reference to a quarantined id is a **dependent reject**: that reference is
  dropped and reported separately (``Session.dependent``), and the rest of the
  record is checked and applied as usual.  A reference is an element of
  ``retained``, ``evicted`` or ``offloaded``; a summary with a quarantined child is
  dropped whole (its depth and provenance are unknown) and its id is quarantined in
  turn.  If the record is then bad in itself it is skipped, and its dependent
  rejects are not reported (the skip says it all).
* What a skipped round may have changed in the working set is settled by the next
  round with a ``retained`` list: ids it leaves out without an event are
  quarantined (:meth:`LenientFeed._settle`), and until then an ``offloaded`` id
  that is only in the store is a dependent reject (the skipped round may have
  brought it back: :meth:`LenientFeed._brought_back`).
* Only records bad in themselves count as skipped.

Why this rule: it is the least lossy one that never invents state.  What a skipped
record defined is unknown, so nothing may be built on it; everything else in a
later record was checked against known state and is kept.  Its limit: what the
skipped record would have removed from the working set is still there, so the next
round that does not list it shows it as leaving without an event (a silent drop).
A trace with skipped records never passes silently: the verdict says so and it
counts as at least a warning (see docs/ci.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from compaction_audit.errors import LogError, MixedFormats, SkipList, TooDamaged

if TYPE_CHECKING:
    from compaction_audit.io.native import SessionBuilder


class LenientFeed:
    """Feed records to a :class:`SessionBuilder` in lenient mode (see the module doc).

    ``skipped``: the :class:`LogError` of each record bad in itself (and each line that
    is not JSON, given to :meth:`bad_line`); ``dependent``: the dependent rejects, one
    :class:`LogError` per dropped summary and per list (``retained``, ``evicted``,
    ``offloaded``) and skipped record its dropped references come from.  Never raises
    :class:`LogError` from :meth:`add`.  Once something is quarantined every later
    record is copied and scanned in Python (and the helper processes' reductions are
    not used): lenient reading of a damaged log is slower, never wrong.
    """

    def __init__(self, builder: SessionBuilder) -> None:
        self.builder = builder
        self.skipped: list[LogError] = SkipList()  # bounded: MAX_SKIPPED
        self.dependent: list[LogError] = SkipList("dependent rejects")  # bounded too
        self._origin: dict[str, int] = {}  # quarantined id -> line of the skipped record
        self._opaque = 0  # first skipped line whose ids are unknown (0: none)
        self._record_lines: set[int] = set()  # lines of skipped records read as objects
        self._uncertain: tuple[int, frozenset[str]] | None = None  # see _settle

    @property
    def clean(self) -> bool:
        """True while nothing is quarantined (records go to the builder unchanged)."""
        return not self._origin and not self._opaque and self._uncertain is None

    def bad_line(self, err: LogError) -> None:
        """A line that is not a record at all: skipped, and its ids are unknown."""
        self.skipped.append(err)
        self.unreadable(err.line)

    def unreadable(self, line: int) -> None:
        """Line ``line`` (skipped by the caller) may have defined any id, and may have
        been a round that removed items from the working set."""
        self._opaque = self._opaque or line
        if self._uncertain is None:
            self._uncertain = (line, self.builder.working_set)

    def add(self, line: int, obj: Any) -> None:
        """Check and apply one decoded record, skipping it if it is bad in itself."""
        dropped: list[LogError] = []
        try:
            if not self.clean and type(obj) is dict:
                obj = self._strip(line, obj, dropped)
                self._settle(obj)
            self.builder.add(line, obj)
        except (MixedFormats, TooDamaged):  # not a bad record: the file is not one log
            raise
        except LogError as exc:
            self.skipped.append(exc)
            self._quarantine(line, obj)
            return
        if _settles(obj):
            self._uncertain = None
        self.dependent.extend(dropped)

    def _settle(self, obj: dict[str, Any]) -> None:
        """Quarantine the ids a skipped round may have removed.

        A skipped round may have evicted or offloaded part of the working set; the
        next round that lists its ``retained`` ids and leaves out one of those, without
        evicting or offloading it, may be right (the skipped round removed it) or not:
        the id leaves the working set without an event and is quarantined, instead of
        being read as a silent drop (which would make it unresolvable, and a later
        eviction of it from the store an error).  Only a round with a ``retained`` list
        settles this: rounds without one (delta mode) and other records in between
        leave it pending, since they cannot tell what left (adv25 O1: a delta round
        right after the skipped one settled nothing, the next full round read the ids
        the skipped round had offloaded as silent drops, and each later eviction of
        them from the store was one more skipped record).
        """
        if self._uncertain is None or not _settles(obj):
            return
        origin, candidates = self._uncertain
        retained = obj["retained"]
        named = {_as_id(_element_id(v)) for v in retained}
        for key in ("evicted", "offloaded"):
            values = obj.get(key)
            if type(values) is list:
                named |= {_as_id(v) for v in values}
        leaving = candidates - named
        if leaving:
            self.builder.forget(set(leaving))
            for item in leaving:
                self._origin.setdefault(item, origin)

    # -- quarantine --------------------------------------------------------------------
    def _quarantine(self, line: int, obj: Any) -> None:
        self._record_lines.add(line)
        if self._uncertain is None and not (type(obj) is dict
                                            and obj.get("type") == "session"):
            # any record but a session's may have been a round: a bad or missing
            # "type" cascaded as a skipped round did before (adv28 F2)
            self._uncertain = (line, self.builder.working_set)
        ids = _defined(obj)
        if ids is None or any(self.builder.defines(item) for item in ids):
            # an element whose id cannot be read, or that names an id defined before
            # (a duplicate: its own id is unknown), may have defined anything (adv28)
            self._opaque = self._opaque or line
            if ids is None:
                return
        for item in ids:
            if not self.builder.defines(item):
                self._origin.setdefault(item, line)

    def _source(self, item: Any, own: set[str]) -> int | None:
        """The line of the skipped record ``item`` comes from (None: not quarantined)."""
        key = _as_id(item)
        if key is None or key in own:
            return None
        if self.builder.defines(key):
            return self._origin.get(key) if self.builder.forgotten(key) else None
        return self._origin.get(key) or self._opaque or None

    def _brought_back(self, item: Any) -> int | None:
        """The line of the skipped round that may have brought ``item`` (an id in the
        store, not in the working set) back into the working set, while that round
        is not settled (:meth:`_settle`), else None.

        A rehydration is a store id listed in ``retained``; when the round listing it
        is skipped, a later ``offloaded`` naming it may be right, and is a dependent
        reject, not an error of the record (adv25 O1: it was "offloaded id is not in
        the working set", one more skipped record)."""
        if self._uncertain is None:
            return None
        key = _as_id(item)
        if key is None or not self.builder.stored(key) or self.builder.in_working_set(key):
            return None
        return self._uncertain[0]

    def _why(self, origin: int) -> str:
        if origin == self._opaque and origin not in self._record_lines:
            return f"not defined; the unreadable line {origin} may have defined them"
        return f"defined by the skipped record at line {origin}"

    def _strip(self, line: int, obj: dict[str, Any], dropped: list[LogError]
               ) -> dict[str, Any]:
        """``obj`` without its references to quarantined ids (a shallow copy)."""
        path = self.builder.path
        out = dict(obj)
        own = {k for k in (_as_id(s.get("id")) for s in _dicts(obj.get("spans"))) if k}
        summaries = obj.get("summaries")
        if type(summaries) is list:
            kept = []
            for j, fold in enumerate(summaries):
                hit = None
                if type(fold) is dict and type(fold.get("children")) is list:
                    hit = next(((k, c, src) for k, c in enumerate(fold["children"])
                                if (src := self._source(c, own)) is not None), None)
                fid = _as_id(fold.get("id")) if type(fold) is dict else None
                if hit is None:
                    kept.append(fold)
                    if fid:
                        own.add(fid)
                    continue
                k, child, origin = hit
                _check_own_fields(path, line, fold, j)  # bad in itself: skipped (adv28 F1)
                if fid and not self.builder.defines(fid):
                    self._origin.setdefault(fid, origin)
                dropped.append(LogError(path, line, f"summary {fid!r} dropped (dependent "
                                        f"reject): its child {_as_id(child)!r} is "
                                        f"{self._why(origin)}", f"summaries[{j}].children[{k}]"))
            out["summaries"] = kept
        named: dict[str, str] = {}  # quarantined id -> the list that names it
        for key in ("evicted", "offloaded", "retained"):
            values = obj.get(key)
            if type(values) is list:
                ident = _element_id if key == "retained" else _as_id
                out[key], gone = self._keep(values, key, ident, own, line, dropped)
                for item in gone:
                    if item in named:  # an error of the record itself, as the builder's
                        raise LogError(path, line, f"id {item!r} is both {named[item]} and "
                                       f"{key} (it is quarantined)", key)
                    named[item] = key
        return out

    def _keep(self, values: list[Any], key: str, ident: Any, own: set[str], line: int,
              dropped: list[LogError]) -> tuple[list[Any], list[str]]:
        """``values`` without the elements naming a quarantined id; one dependent
        reject per skipped record they come from, and the ids dropped.  A list naming
        an id twice is kept whole: the builder rejects it for that ("listed twice")."""
        kept = []
        hits: dict[tuple[int, bool], list[tuple[int, str]]] = {}
        for i, value in enumerate(values):
            item = ident(value)
            origin, back = self._source(item, own), False
            if origin is None and key == "offloaded":
                origin = self._brought_back(item)
                back = origin is not None
            if origin is None:
                kept.append(value)
            else:
                hits.setdefault((origin, back), []).append((i, str(_as_id(item))))
        if not hits:
            return values, []
        ids = [_as_id(ident(v)) for v in values]
        if len(set(ids)) != len(ids):
            return values, []
        for (origin, back), found in hits.items():
            i = found[0][0]
            where = f"{key}[{i}].id" if type(values[i]) is dict else f"{key}[{i}]"
            names = ", ".join(repr(name) for _, name in found[:3])
            more = f" and {len(found) - 3} more" if len(found) > 3 else ""
            dropped.append(LogError(self.builder.path, line, (
                f"{len(found)} reference(s) dropped from {key} (dependent reject): "
                f"{names}{more}, " + (f"in the store: the skipped round at line {origin} "
                                      "may have brought them back" if back
                                      else self._why(origin))), where))
        return kept, [name for found in hits.values() for _, name in found]


def _check_own_fields(path: str, line: int, fold: Any, j: int) -> None:
    """Raise the :class:`LogError` of summary ``j`` of the record at ``line`` when it is
    bad in itself (a field of the wrong type, no children, a negative depth...), its
    children's ids aside: such a record is skipped, not reported as a dependent
    reject for a quarantined child (adv28 F1: two bad records counted as one)."""
    from compaction_audit.io import records as rec

    try:  # the fields' own shapes: whether the children are defined is not asked
        s = rec.summary(fold, f"summaries[{j}]")
    except rec.FieldError as exc:
        raise LogError(path, line, exc.message, exc.field) from None
    if s.id in s.children:  # itself as its child: a cycle, whatever else is unknown
        k = s.children.index(s.id)
        raise LogError(path, line, f"provenance cycle through {s.id!r}",
                       f"summaries[{j}].children[{k}]")


def _settles(obj: Any) -> bool:
    """True for a round record with a ``retained`` list: the working set it names
    settles what a skipped round before it may have removed."""
    return (type(obj) is dict and obj.get("type") == "round"
            and type(obj.get("retained")) is list)


def _as_id(value: Any) -> str | None:
    """An id as the reader reads it (a non-empty string, or an int), else None."""
    if type(value) is str:
        return value or None
    if type(value) is int:
        return str(value)
    return None


def _element_id(element: Any) -> Any:
    if type(element) is list and element:
        return element[0]
    if type(element) is dict:
        return element.get("id")
    return None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if type(v) is dict] if type(value) is list else []


def _defined(obj: Any) -> set[str] | None:
    """The ids ``obj`` would define, or None when that cannot be told (not an object,
    ``spans``/``summaries`` present but not lists, or an element of them without a
    readable id)."""
    if type(obj) is not dict:
        return None
    ids: set[str] = set()
    for key in ("spans", "summaries"):
        value = obj.get(key)
        if value is not None and type(value) is not list:
            return None
        for element in value or ():  # an element whose id cannot be read may have
            item = _as_id(element.get("id")) if type(element) is dict else None
            if item is None or item in ids:  # defined anything (adv28 F3: `"id": null`
                return None  # made every later reference to that span a skipped
            ids.add(item)  # record; a repeated id hides the element's own)
    return ids
