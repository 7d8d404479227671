"""Lossy recall (seed 002): which discriminators a fold dropped, and whether it mattered.

One module per concern:

* :mod:`~compaction_audit.recall.extract`: the discriminator taxonomy and extraction
  from a text (standard library only);
* :mod:`~compaction_audit.recall.survival`: whether a summary still states a
  discriminator (standard library only);
* :mod:`~compaction_audit.recall.analysis`: the per-session analysis in Polars: fold
  checks, recall debt, lost discriminators, the recall floor;
* :mod:`~compaction_audit.recall.sections`: the report sections built from it.

This package imports nothing on its own, so a helper process can load ``extract`` and
``survival`` without Polars.
"""
