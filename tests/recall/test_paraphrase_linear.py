"""The paraphrase checks read a summary once, not once per lost clause (issue 11,
class 5): ``kept_by_complement`` and ``kept_as_resolved`` stemmed every word of every
positive sentence of the summary per clause, so n lost descriptions against a summary
of n sentences naming their objects cost n x n (2,000: 9.6 s, 4,000: 43 s end to end).

The work is counted (stems computed), never timed; a seeded comparison with the old
code (kept here) checks the answers are the same.
"""

from __future__ import annotations

import random
import re

from compaction_audit.recall import paraphrase as p
from compaction_audit.recall.clauses import NEGATION_WORDS
from compaction_audit.recall.survival import stem


def _old_complement(text: str, summary_low: str, stem: p.Stem) -> bool:
    low = text.lower()
    if not p._PRESERVED_RE.search(low):
        return False
    tokens = re.findall(r"[a-z][a-z_]*", low)
    wanted = [(other, stem(tokens[i + 1])) for i, w in enumerate(tokens[:-1])
              if (other := p._COMPLEMENTS.get(w)) and len(tokens[i + 1]) > 2]
    if not wanted:
        return False
    changing = p._stems(p._CHANGING, stem)
    for words in p._positive_sentences(summary_low):
        stems = [stem(w) for w in words]
        for i, w in enumerate(words[1:-1], 1):
            if (any(w in others and stems[i + 1] == obj for others, obj in wanted)
                    and changing.intersection(stems[:i])):
                return True
    return False


def _old_resolved(text: str, negative: bool, summary_low: str, stem: p.Stem) -> bool:
    if not negative:
        return False
    words = p._state_words(text)
    if words is None:
        return False

    def norm(w: str) -> str:
        s = stem(w)
        return p._SAME_ACT.get(s, s)

    need = {norm(w) for w in words if w not in NEGATION_WORDS}
    if len(need) < 2:
        return False
    allowed = 1 if len(need) >= 4 else 0
    resolving = p._stems(p._RESOLVING, stem)
    for cand in p._positive_sentences(summary_low):
        stems = {norm(w) for w in cand}
        if resolving & stems and len(need - stems) <= allowed:
            return True
    return False


def _stems_made(n: int) -> tuple[int, int]:
    """Stems computed by n clauses of each kind against a summary of n sentences that
    name every clause's objects and keep none (a fresh stemmer: no cache shared)."""
    calls = [0]

    def counting(word: str) -> str:
        calls[0] += 1
        return stem(word)

    moved = " ".join(f"migrated old rows{i} today." for i in range(n))
    assert not any(p.kept_by_complement(f"existing rows{i} must not be modified", moved,
                                        counting) for i in range(n))
    complement, calls[0] = calls[0], 0
    shown = " ".join(f"we added the flash{i} banner{i} page." for i in range(n))
    assert not any(p.kept_as_resolved(f"the layout doesn't render flash{i} banner{i}",
                                      True, shown, counting) for i in range(n))
    return complement, calls[0]


def test_the_summary_is_stemmed_once_not_once_per_clause() -> None:
    (c1, r1), (c2, r2) = _stems_made(300), _stems_made(600)
    # before: 4x for 2x (every clause stemmed every sentence: 360,000 at 600)
    assert c2 <= 2.2 * c1 and r2 <= 2.2 * r1
    assert c2 < 20 * 600 and r2 < 20 * 600


def test_kept_in_other_words_still() -> None:
    assert p.kept_by_complement("already-closed annotations must remain unchanged",
                                "the script closes all open annotations.", stem)
    assert not p.kept_by_complement("already-closed annotations must remain unchanged",
                                    "the script shows all open annotations.", stem)
    assert p.kept_as_resolved("the root layout doesn't render flash messages", True,
                              "we added a flash message display.", stem)
    assert not p.kept_as_resolved("the root layout doesn't render flash messages", True,
                                  "the flash message display is not there.", stem)


_WORDS = ["close", "closes", "open", "closed", "new", "existing", "rows", "rows2",
          "migrate", "migrated", "added", "add", "flash", "banner", "display", "render",
          "shows", "not", "the", "page", "layout", "message", "messages", "old", "x"]


def test_same_answers_as_the_old_checks() -> None:
    rng = random.Random(11)

    def text(k: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, k)))

    for _ in range(1500):
        summary = ". ".join(text(8) for _ in range(rng.randint(1, 6))).lower() + "."
        keep = text(3) + " must not be modified " + text(3)
        assert p.kept_by_complement(keep, summary, stem) == _old_complement(keep, summary,
                                                                            stem)
        state = "the layout doesn't " + text(6)
        assert (p.kept_as_resolved(state, True, summary, stem)
                == _old_resolved(state, True, summary, stem)), (state, summary)
