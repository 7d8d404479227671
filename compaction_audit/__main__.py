"""``python -m compaction_audit``: the same as the ``compaction-audit`` command."""

from compaction_audit.cli import main

main()
