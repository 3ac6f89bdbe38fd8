"""The names ``clawctx`` exported before the stage subpackages, now deprecated at the top level.

Until 0.3 ``clawctx.<name>`` still resolves each of them (``clawctx.__getattr__``), with a
``DeprecationWarning`` that names the new home: the stage subpackage whose ``__all__`` holds it.
This module is the only list of them; the new home is looked up, never restated.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Final

__all__ = ["MOVED", "REMOVED_IN", "STAGES", "new_home"]

#: The release that drops the top-level aliases.
REMOVED_IN: Final = "0.3"

#: The stage subpackages, in pipeline order.
STAGES: Final = ("clawctx.history", "clawctx.prompt", "clawctx.runtime", "clawctx.engine")

#: Every name the top level exported before 0.2 that now lives only in a stage subpackage.
#: A frozen historical record, kept as words so it does not restate the stages' ``__all__``.
MOVED: Final[frozenset[str]] = frozenset(
    """
    filter_heartbeat_pairs strip_heartbeat_token detach_orphaned_trailing_user
    LineChange PairingReport SkippedLine ToolCallInputsReport
    ABORT_HINT AGENT_INTERNAL_EVENT_SOURCES AGENT_INTERNAL_EVENT_STATUSES
    AGENT_INTERNAL_EVENT_TYPE_TASK_COMPLETION ANNOUNCE_NO_OUTPUT AgentInternalEvent
    AgentInternalEventSource AgentInternalEventStatus AgentTaskCompletionEvent AnnounceDelivery
    AssembleResult BARE_SESSION_RESET_PROMPT BootstrapResult CACHE_TTL_CUSTOM_TYPES
    COLLECT_TITLE_ANNOUNCES COLLECT_TITLE_MESSAGES CRON_EVENT_EMPTY_PROMPT
    CRON_EVENT_EMPTY_PROMPT_INTERNAL ChatType CompactResult CompactResultDetails
    CompactionTarget ContextEngineFactory ContextEngineInfo ContextEngineNotRegisteredError
    ContextFile ContextHookEvent CutPoint DEFAULT_BOOTSTRAP_MAX_CHARS
    DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS DEFAULT_CONTEXT_ENGINE_ID DEFAULT_HEARTBEAT_ACK_MAX_CHARS
    DEFAULT_HEARTBEAT_PROMPT DEFAULT_IMAGE_MAX_BYTES DEFAULT_IMAGE_MAX_DIMENSION_PX
    DEFAULT_INBOUND_DEBOUNCE_MS DEFAULT_MAX_SYSTEM_EVENTS DEFAULT_MESSAGE_CHANNEL_OPTIONS
    DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR DEFAULT_QUEUE_CAP DEFAULT_QUEUE_DEBOUNCE_MS
    DEFAULT_QUEUE_DROP DEFAULT_QUEUE_MODE DedupeCache EMPTY_BODY_REPLY EXEC_EVENT_PROMPT
    ElevatedLevel EnqueueResult HEARTBEAT_TASK_PROMPT_ACK HEARTBEAT_TASK_PROMPT_PREFIX
    HEARTBEAT_TOKEN HEARTBEAT_TRANSCRIPT_PROMPT HOOK_NAMES HeartbeatMark HeartbeatPruneReport
    HookContext HookError HookHandler HookName IDENTITY_LINE IMAGE_EXTENSIONS
    INBOUND_DEDUPE_MAX_KEYS INBOUND_DEDUPE_TTL_MS INPUT_PROVENANCE_KINDS INTERNAL_CONTEXT_BEGIN
    INTERNAL_CONTEXT_BEGIN_ESCAPED INTERNAL_CONTEXT_END INTERNAL_CONTEXT_END_ESCAPED
    INTERNAL_RUNTIME_CONTEXT_NOTICE INTER_SESSION_EXPLANATION INTER_SESSION_HEADER ImageBlockRef
    ImageContent ImageLimits ImageRef InboundDedupe InboundHistoryEntry IngestBatchResult
    IngestResult InputProvenance InputProvenanceKind LEGACY_INTERNAL_CONTEXT_HEADER
    MAX_BOOTSTRAP_FILE_BYTES MAX_IMAGE_BYTES MEDIA_REPLY_HINT MEDIA_WITHOUT_CAPTION_BODY
    MEMORY_BOOTSTRAP_FILE_NAMES MIN_BOOTSTRAP_FILE_BUDGET_CHARS MediaUnderstandingAttachment
    MediaUnderstandingDecision MediaUnderstandingOutput MessageRoute
    NEXT_TURN_RUNTIME_CONTEXT_HEADER OPTIONAL_CONTEXT_ENGINE_METHODS OrphanedUserReport
    OverflowSummaryDelivery OwnerDisplay PROMPT_IMAGES_LABEL PromptBuildEvent
    PromptBuildHookResult PromptImagesResult PromptMode QUEUE_SUMMARY_LINE_LIMIT QueueDedupeMode
    QueueDirective QueueDropPolicy QueueMode RECENT_MESSAGE_IDS_MAX_KEYS
    RECENT_MESSAGE_IDS_TTL_MS RUNTIME_CONTEXT_CUSTOM_TYPE RUNTIME_EVENT_HEADER
    RUNTIME_EVENT_PLACEHOLDER_PROMPT ReactionGuidance RuntimeInfo SILENT_REPLY_TOKEN
    SUBAGENT_BOOTSTRAP_ALLOWLIST SUMMARIZATION_PROMPT SUMMARIZATION_SYSTEM_PROMPT SandboxInfo
    Skill StripResult SubagentEndReason SubagentOutcome SubagentSpawnPreparation SubmitResult
    SystemEvent SystemEventSnapshot SystemPromptSection TOOL_ORDER
    TURN_PREFIX_SUMMARIZATION_PROMPT ThinkLevel TranscriptRewriteResult TrimmedBootstrapContent
    TurnOutcome UNTRUSTED_CHILD_RESULT_BEGIN UNTRUSTED_CHILD_RESULT_END UNTRUSTED_CONTEXT_HEADER
    UPDATE_SUMMARIZATION_PROMPT WORKSPACE_BOOTSTRAP_FILE_NAMES WorkspaceBootstrapFile
    annotate_inter_session_messages annotate_inter_session_prompt_text append_untrusted_context
    apply_abort_hint apply_input_provenance_to_user_message apply_media_note
    apply_prompt_build_hook_result apply_system_prompt_modifiers assemble_with_engine
    bootstrap_with_engine build_announce_reply_instruction build_bootstrap_context_files
    build_collect_prompt build_compaction_prompt build_cron_event_prompt build_exec_event_prompt
    build_extra_system_prompt build_inbound_extra_system_prompt build_inbound_meta_system_prompt
    build_inbound_user_context_prefix build_inter_session_prefix build_media_note
    build_overflow_summary build_queue_summary_line build_queued_body build_runtime_line
    build_stats_line build_status_label build_subagent_announce_message
    build_subagent_system_prompt build_thread_note choose_announce_delivery compact_session
    compact_system_event decode_image_base64 dedupe_tool_call_ids detect_image_references
    downgrade_openai_reasoning drop_delivery_mirror_messages drop_duplicate_tool_results
    drop_thinking_blocks escape_internal_context_delimiters estimate_messages_tokens
    estimate_pruning_chars estimate_string_chars extract_think_level
    filter_runtime_context_messages find_cut_point find_image_blocks
    format_acp_task_completion_events format_agent_internal_events_for_prompt
    format_duration_short format_owner_ids format_skills_for_prompt
    format_system_event_timestamp format_task_completion_event format_token_count
    format_tool_lines get_context_engine_factory has_internal_runtime_context
    heartbeat_prompt_from_config history_images_label image_limits_from_config image_tokens
    inject_history_images_into_messages is_bare_session_reset is_cache_ttl_eligible
    is_heartbeat_content_effectively_empty is_silent_reply_prefix_text is_silent_reply_text
    is_subagent_session_key is_tool_prunable is_valid_tool_call_id list_context_engine_ids
    load_image_ref load_workspace_skills mark_heartbeat_transcript model_supports_images
    normalize_chat_type normalize_input_provenance normalize_queue_drop_policy
    normalize_queue_mode normalize_think_level normalize_usage parse_queue_directive
    parse_skill_front_matter prepend_system_events prepend_system_prompt_addition
    probe_base64_image provenance_of_message provider_family prune_heartbeat_transcript
    record_turn_with_engine replace_content_blocks resolve_announce_task_label resolve_base_body
    resolve_context_engine_async resolve_heartbeat_prompt resolve_inbound_debounce_ms
    resolve_prompt_build_hook_result resolve_prompt_build_hook_result_sync resolve_prompt_mode
    resolve_sender_label runtime_context_keep_mask sanitize_for_prompt_literal
    sanitize_google_turn_ordering sanitize_image_block sanitize_message_blocks
    sanitize_tool_call_id sanitize_tool_call_ids sanitize_tool_use_result_pairing
    serialize_conversation should_suppress_prompt_persistence sniff_image_mime_type
    strip_dangling_tool_calls strip_internal_runtime_context strip_silent_token
    strip_thought_signatures strip_tool_result_details trim_bootstrap_content
    unregister_context_engine usage_tokens utf16_length validate_anthropic_turns
    validate_gemini_turns zero_stale_usage
    """.split()  # noqa: SIM905
)


@cache
def new_home(name: str) -> str | None:
    """The stage subpackage a deprecated top-level name moved to, or ``None``."""
    if name not in MOVED:
        return None
    for stage in STAGES:
        if name in importlib.import_module(stage).__all__:
            return stage
    raise AssertionError(f"deprecated name {name} is in no stage's __all__")
