"""Survival: whether a discriminator found in a child span is still stated by a summary.

The comparison rules (normalized tokens, clause families, path file names, hash
prefixes) are documented in ``docs/discriminators.md``; extraction is
:mod:`compaction_audit.recall.extract`.  Pure standard library, so the analysis can run
it in a helper process without importing Polars.

One module per concern:

* :mod:`~compaction_audit.recall.survival.words`: stems, identifier-like keys, module
  keys, polarity;
* :mod:`~compaction_audit.recall.survival.postings`: word sets with an inverted index,
  the bounded memo;
* :mod:`~compaction_audit.recall.survival.anchors`: what a summary must hold for a token
  discriminator to survive (:func:`anchors`);
* :mod:`~compaction_audit.recall.survival.formats`: values a summary keeps in another
  spelling ("5pm", "issue 412", "March 15", "a 2-second timeout");
* :mod:`~compaction_audit.recall.survival.index`: what a summary offers for comparison
  (built once per summary text; :func:`vocabulary`);
* :mod:`~compaction_audit.recall.survival.bindings`: the names a summary binds its values
  to, and whether a value a child binds to a name survives them;
* :mod:`~compaction_audit.recall.survival.flips`: a summary rule that states a child's
  clause reversed;
* :mod:`~compaction_audit.recall.survival.check`: :func:`survives`, :func:`dropped`,
  :func:`flipped`, :func:`flip_sentence`.  Code that a test counts or replaces
  ``survives`` for reads it from that module (``check.survives``), where the test
  patches it.
"""

from compaction_audit.recall.survival.anchors import anchors
from compaction_audit.recall.survival.check import (
    SENTENCE_MAX,
    dropped,
    flip_sentence,
    flipped,
    survives,
)
from compaction_audit.recall.survival.index import vocabulary
from compaction_audit.recall.survival.words import negative, stem

__all__ = ["SENTENCE_MAX", "anchors", "dropped", "flip_sentence", "flipped", "negative",
           "stem", "survives", "vocabulary"]
