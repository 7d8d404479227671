"""Lossy recall (seed 002, issue 10): which discriminators a fold dropped, and whether it
mattered.

One module per concern:

* :mod:`~compaction_audit.recall.spantypes`: the content type of a span (prose, spec,
  code, tool output, harness) and the text cleaning done before any scan;
* :mod:`~compaction_audit.recall.kinds`: the taxonomy (kinds, severity rank);
* :mod:`~compaction_audit.recall.extract`: token discriminators and extraction by span
  type;
* :mod:`~compaction_audit.recall.bindings`: a value bound to a name (``lib2==1.2.0``),
  :mod:`~compaction_audit.recall.factkeys`: a fact's key in the analysis's frames;
* :mod:`~compaction_audit.recall.clauses`: clause discriminators and requirement units;
* :mod:`~compaction_audit.recall.fences`: fenced code blocks, which say nothing;
  :mod:`~compaction_audit.recall.wholetoken`: a fact stated as a whole token;
* :mod:`~compaction_audit.recall.survival`: whether a summary still states a
  discriminator; :mod:`~compaction_audit.recall.paraphrase`: the paraphrase classes
  word overlap misses (complementary scope, resolved state, check name);
* :mod:`~compaction_audit.recall.analysis`: the per-session analysis in Polars: fold
  checks, recall debt, the lost table (loss judged at the fold), the recall floor;
* :mod:`~compaction_audit.recall.harm`: a later action that reused a lost value;
* :mod:`~compaction_audit.recall.ruledout`: ruled-out findings, a clause kind;
* :mod:`~compaction_audit.recall.flips`, :mod:`~compaction_audit.recall.claims`,
  :mod:`~compaction_audit.recall.stale`, :mod:`~compaction_audit.recall.violations`:
  what a summary flips, adds or repeats, and a later action against a lost rule
  (issue 12), with :mod:`~compaction_audit.recall.forbids` (what a rule forbids),
  :mod:`~compaction_audit.recall.callwords` (where a call runs it),
  :mod:`~compaction_audit.recall.permitted` (acts the person allowed) and
  :mod:`~compaction_audit.recall.unpinned` (a lost pin's package installed);
* :mod:`~compaction_audit.recall.sections`: the report sections built from it.

This package imports nothing on its own, so a helper process can load ``extract`` and
``survival`` (and the standard-library modules they import) without Polars.
"""
