"""The Codex rollout payload types the Codex reader knows without reading them.

A ``response_item`` payload or an ``event_msg`` whose ``type`` is neither read by
:mod:`compaction_audit.io.codex` nor listed here is counted as not read (adv29 F5: the
messages retyped ``Message`` made a failing rollout pass without a word).  The lists
come from openai/codex's protocol: ``ResponseItem`` in ``codex-rs/protocol/src/models.rs``
and ``EventMsg`` in ``codex-rs/protocol/src/protocol.rs`` (serde ``snake_case`` tags),
and the rollout policy that persists them (``codex-rs/core/src/rollout/policy.rs``).
"""

from __future__ import annotations

BOOKKEEPING_ITEMS = frozenset({
    "reasoning",  # the model's reasoning (summary, encrypted content): no stated fact
    "ghost_snapshot",  # a git snapshot for /undo, never sent as context text
    "image_generation_call", "tool_search_call", "tool_search_output",
})
"""``response_item`` payload types Codex writes that hold no span for the audit.  The
compaction items (``compaction``, ``context_compaction``, ...) are not here: outside a
``compacted`` line's replacement history they are counted as not read."""

BOOKKEEPING_EVENTS = frozenset({
    # copies of response items, and the model's reasoning
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "agent_message_delta", "agent_reasoning_delta",
    "agent_reasoning_raw_content_delta", "agent_message_content_delta",
    "reasoning_content_delta", "reasoning_raw_content_delta", "raw_response_item",
    "item_started", "item_completed", "plan_update", "plan_delta",
    # turn and session life cycle
    "task_complete", "turn_started", "turn_complete", "turn_aborted",
    "session_configured", "thread_settings_applied", "thread_name_updated",
    "shutdown_complete", "entered_review_mode", "exited_review_mode",
    "undo_started", "undo_completed",
    "error", "warning", "stream_error", "background_event", "deprecation_notice",
    "model_reroute",
    # tool progress (the call and its output are response items)
    "exec_command_begin", "exec_command_output_delta", "exec_command_end",
    "terminal_interaction", "exec_approval_request", "apply_patch_approval_request",
    "patch_apply_begin", "patch_apply_end", "turn_diff", "mcp_tool_call_begin",
    "mcp_tool_call_end", "mcp_startup_update", "mcp_startup_complete",
    "mcp_list_tools_response", "web_search_begin", "web_search_end",
    "view_image_tool_call", "request_user_input", "elicitation_request",
    "get_history_entry_response", "list_custom_prompts_response",
    "list_skills_response",
})
"""``event_msg`` types Codex writes that the reader does not need: copies of what the
response items hold, and UI progress.  ``token_count``, ``task_started``,
``context_compacted`` and ``thread_rolled_back`` are read."""
