"""One module per command; ``compaction_audit.cli`` registers them."""
