"""Lossy-recall analysis: what each fold surrendered, recall debt, the recall floor.

Seed 002 ("Core Distinction", "Operational Effect"): a fold that keeps the topic but
drops the discriminator debits the recall budget.  This module compares every child of
every fold with the fold's text (:mod:`compaction_audit.recall.extract`), then tracks
each discriminator seen in a raw span over the rounds: it stays *recoverable* while a
resolvable raw span holds it or a working-set summary's text still states it (spec
rules.md, "Discriminating spans and folds").

Python touches each distinct text once (extraction, after one Polars pass has set aside
the texts that cannot hold a discriminator: :mod:`compaction_audit.recall.prefilter`),
each distinct (child or leaf text, summary text) pair once and compares each class of
discriminators with a summary once (survival: :mod:`compaction_audit.recall.survclass`);
Polars joins the results back to the edges, spans and closure pairs.  All per-round
work is interval arithmetic in Polars, as for reachability.

One module per concern:

* :mod:`~compaction_audit.recall.analysis.model`: :class:`Recall`, the fold checks'
  schemas, the redaction share;
* :mod:`~compaction_audit.recall.analysis.items`: the session's items with their span
  types (:func:`typed_items`);
* :mod:`~compaction_audit.recall.analysis.folds`: the text work and the fold checks
  (:func:`fold_checks`);
* :mod:`~compaction_audit.recall.analysis.occurrences`: where each discriminator occurs,
  and the spans whose logged ``salience_class`` disagrees;
* :mod:`~compaction_audit.recall.analysis.restated`: raw spans that state a lost fact
  as a whole token in a form their own extraction does not take;
* :mod:`~compaction_audit.recall.analysis.intervals`: interval merging;
* :mod:`~compaction_audit.recall.analysis.losses`: the lost table, loss judged at the
  fold;
* :mod:`~compaction_audit.recall.analysis.floor`: the recall floor;
* :mod:`~compaction_audit.recall.analysis.run`: :func:`analyse`, the whole analysis (a
  test that replaces one of its steps patches it there).
"""

from compaction_audit.recall.analysis.folds import fold_checks
from compaction_audit.recall.analysis.items import typed_items
from compaction_audit.recall.analysis.model import (
    DROP_SCHEMA,
    FOLD_SCHEMA,
    REDACTED_SHARE,
    Recall,
    redacted_share,
)
from compaction_audit.recall.analysis.run import analyse

__all__ = ["DROP_SCHEMA", "FOLD_SCHEMA", "REDACTED_SHARE", "Recall", "analyse", "fold_checks",
           "redacted_share", "typed_items"]
