"""Generators of ``compaction-audit/1`` logs: the calibrated simulator and the scale writer.

* :mod:`.agent`: a seeded model of a hierarchical compaction loop (``simulate``,
  ``write_session``); it writes the committed ``sample_logs/`` (docs/simulator.md).
* :mod:`.params`: its knobs (:class:`SimParams`), presets and their sources.
* :mod:`.texts`: the topics and sentence templates of its span texts.
* :mod:`.scale`: a fast writer of gigabyte-sized logs of a fixed shape for the
  benchmarks and the scale tests (``write_scale_session``; docs/performance.md).
"""

from compaction_audit.simulate.agent import session_record, simulate, write_session
from compaction_audit.simulate.params import PRESETS, SimParams, param_names, scale_params

__all__ = ["PRESETS", "SimParams", "param_names", "scale_params", "session_record", "simulate",
           "write_session"]
