"""The rebuilt cosine: each item's cosine to the task query, computed from its text.

Issue 16.  The logged salience (``query_cosine_retained``) is the agent's own number;
this package measures relevance independently of the agent, from the texts of spans
and summaries, so that a log without a scorer still gets a cosine series and a scorer
that ranks by survivability instead of relevance can be caught (CA204).

- :mod:`.query`: which text is the task query (``task_query``, else the person's
  prompts in an agent product's session);
- :mod:`.embed`: the two ways to embed: the wordllama model shipped inside its wheel
  (the ``[embed]`` extra, never the network), else a TF-IDF cosine in Polars;
- :mod:`.columns`: the model's cosines computed on columns in the audit's own process
  (each distinct piece of text embedded once; the same floats as the per-text loop);
- :mod:`.rebuild`: per-item cosines and the per-round ``query_cosine_rebuilt``.
"""

from compaction_audit.cosine.rebuild import Rebuilt, rebuild

__all__ = ["Rebuilt", "rebuild"]
