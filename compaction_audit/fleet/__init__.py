"""Audit a fleet of traces on a Ray cluster (``audit --engine ray``; issue 14, item 5).

- :mod:`~compaction_audit.fleet.plan`: how much memory a trace asks for, and the
  order (largest first); pure Python, no Ray.
- :mod:`~compaction_audit.fleet.worker`: the long-lived worker (a Ray actor) that
  imports the auditor once and audits one trace per call.
- :mod:`~compaction_audit.fleet.ray_engine`: connect to (or start) a cluster, run
  the workers, stream the results back into the :class:`Report` a local run builds.

Ray is the optional extra ``[ray]``; nothing here imports it until a run asks for it.
The design and its limits: docs/performance.md, "Fleet".
"""
