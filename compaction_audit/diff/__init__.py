"""Compare two audited runs: onsets, the aligned series, and findings (``diff``).

Pure: takes two :class:`SessionReport` objects and returns a :class:`RunDiff`; the
renderers (:mod:`compaction_audit.report.diff_render`) and the command print it.

- Onsets (spec rules.md, "Onsets"): inversion onset, inversion boundary, the round at
  which summary tokens first exceed raw tokens, and the first round of every rule, side
  by side, with the delta in rounds and a verdict word (:data:`VERDICTS`).  None (no
  onset) counts as later than any round.  Seed 000, "What Was Observed": removing the
  recency decay moved the inversion onset from round 12 to round 19 ("later", +7).
- Series: the quantities of :data:`SERIES_COLUMNS` (plus any ``recall_debt*`` column)
  joined on the round number (full join: a round missing on one side is null there).
- Findings: grouped into comparable units with a stable identity, see
  :func:`finding_units`, and classified new / resolved / persisting.
"""

from compaction_audit.diff.findings import (
    STATUSES,
    FindingDelta,
    compare_findings,
    status_heading,
)
from compaction_audit.diff.gates import (
    NEW_GATE,
    ONSET_GATE,
    failed_gates,
    failed_heading,
    gate,
    gated_headline,
    gates_named,
)
from compaction_audit.diff.numbering import candidate_end, rounds_apart
from compaction_audit.diff.onsets import (
    ONSET_KEYS,
    VERDICTS,
    OnsetDelta,
    compare_onsets,
    describe,
    onset_label,
    split_onsets,
    verdict,
)
from compaction_audit.diff.run import RunDiff, diff_reports
from compaction_audit.diff.series import FLOAT_TOLERANCE, SERIES_COLUMNS, align_series, quantities
from compaction_audit.diff.units import (
    STALE_CODE,
    FoldLosses,
    Occurrence,
    finding_units,
    fold_lost_units,
    lost_keys,
    stated_units,
)

__all__ = [
    "FLOAT_TOLERANCE",
    "NEW_GATE",
    "ONSET_GATE",
    "ONSET_KEYS",
    "SERIES_COLUMNS",
    "STALE_CODE",
    "STATUSES",
    "VERDICTS",
    "FindingDelta",
    "FoldLosses",
    "Occurrence",
    "OnsetDelta",
    "RunDiff",
    "align_series",
    "candidate_end",
    "compare_findings",
    "compare_onsets",
    "describe",
    "diff_reports",
    "failed_gates",
    "failed_heading",
    "finding_units",
    "fold_lost_units",
    "gate",
    "gated_headline",
    "gates_named",
    "lost_keys",
    "onset_label",
    "quantities",
    "rounds_apart",
    "split_onsets",
    "stated_units",
    "status_heading",
    "verdict",
]
