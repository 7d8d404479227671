"""``python -m compaction_audit``: the same as the ``compaction-audit`` command."""

import sys

try:
    from compaction_audit.cli import main
except KeyboardInterrupt:  # Ctrl-C while the modules load: no traceback
    sys.exit(130)

main()
