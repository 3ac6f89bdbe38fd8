"""Type stubs of the native module ``clawctx._core`` (checked with ``mypy.stubtest``).

The extension registers each stage's functions and classes in a submodule named after its core
stage (``clawctx._core.session``, ...), stubbed beside this file (``session.pyi``, ...), and
keeps every name an attribute of ``clawctx._core`` too: import them from here (or from the
stage subpackages of ``clawctx`` that re-export them). The errors stay in this module.
"""

from .compaction import (
    CompactionPreparation as CompactionPreparation,
)
from .compaction import (
    CompactionSettings as CompactionSettings,
)
from .compaction import (
    CutPoint as CutPoint,
)
from .compaction import (
    SummaryRequest as SummaryRequest,
)
from .compaction import (
    _compaction_texts as _compaction_texts,
)
from .compaction import (
    build_compaction_prompt as build_compaction_prompt,
)
from .compaction import (
    find_cut_point as find_cut_point,
)
from .compaction import (
    prepare_compaction as prepare_compaction,
)
from .compaction import (
    serialize_conversation as serialize_conversation,
)
from .compaction import (
    should_compact as should_compact,
)
from .foreign import (
    ImportedTranscript as ImportedTranscript,
)
from .foreign import (
    detect_transcript_format_bytes as detect_transcript_format_bytes,
)
from .foreign import (
    read_transcript_bytes as read_transcript_bytes,
)
from .foreign import (
    read_transcript_file as read_transcript_file,
)
from .hygiene import (
    ImageBlockRef as ImageBlockRef,
)
from .hygiene import (
    StripResult as StripResult,
)
from .hygiene import (
    TranscriptPolicy as TranscriptPolicy,
)
from .hygiene import (
    Violation as Violation,
)
from .hygiene import (
    _cache_breakpoint_issues as _cache_breakpoint_issues,
)
from .hygiene import (
    annotate_inter_session_messages as annotate_inter_session_messages,
)
from .hygiene import (
    decode_image_base64 as decode_image_base64,
)
from .hygiene import (
    dedupe_tool_call_ids as dedupe_tool_call_ids,
)
from .hygiene import (
    downgrade_openai_function_call_pairs as downgrade_openai_function_call_pairs,
)
from .hygiene import (
    downgrade_openai_reasoning as downgrade_openai_reasoning,
)
from .hygiene import (
    drop_delivery_mirror_messages as drop_delivery_mirror_messages,
)
from .hygiene import (
    drop_duplicate_tool_results as drop_duplicate_tool_results,
)
from .hygiene import (
    drop_foreign_compaction_blocks as drop_foreign_compaction_blocks,
)
from .hygiene import (
    drop_thinking_blocks as drop_thinking_blocks,
)
from .hygiene import (
    filter_heartbeat_pairs as filter_heartbeat_pairs,
)
from .hygiene import (
    find_image_blocks as find_image_blocks,
)
from .hygiene import (
    guard_request as guard_request,
)
from .hygiene import (
    is_valid_tool_call_id as is_valid_tool_call_id,
)
from .hygiene import (
    normalize_usage as normalize_usage,
)
from .hygiene import (
    probe_base64_image as probe_base64_image,
)
from .hygiene import (
    provider_family as provider_family,
)
from .hygiene import (
    replace_content_blocks as replace_content_blocks,
)
from .hygiene import (
    request_issues as request_issues,
)
from .hygiene import (
    resolve_transcript_policy as resolve_transcript_policy,
)
from .hygiene import (
    sanitize_google_turn_ordering as sanitize_google_turn_ordering,
)
from .hygiene import (
    sanitize_message_blocks as sanitize_message_blocks,
)
from .hygiene import (
    sanitize_tool_call_id as sanitize_tool_call_id,
)
from .hygiene import (
    sanitize_tool_call_ids as sanitize_tool_call_ids,
)
from .hygiene import (
    strip_dangling_tool_calls as strip_dangling_tool_calls,
)
from .hygiene import (
    strip_heartbeat_token as strip_heartbeat_token,
)
from .hygiene import (
    strip_thought_signatures as strip_thought_signatures,
)
from .hygiene import (
    strip_tool_result_details as strip_tool_result_details,
)
from .hygiene import (
    validate_anthropic_turns as validate_anthropic_turns,
)
from .hygiene import (
    validate_for_provider as validate_for_provider,
)
from .hygiene import (
    validate_gemini_turns as validate_gemini_turns,
)
from .hygiene import (
    zero_stale_usage as zero_stale_usage,
)
from .payload import (
    _build_request_payload as _build_request_payload,
)
from .payload import (
    _cache_diff as _cache_diff,
)
from .payload import (
    _CacheDiffChain as _CacheDiffChain,
)
from .payload import (
    _RequestPayload as _RequestPayload,
)
from .payload import (
    _transform_messages as _transform_messages,
)
from .response import (
    _parse_response as _parse_response,
)
from .response import (
    _response_apis as _response_apis,
)
from .response import (
    _ResponseReader as _ResponseReader,
)
from .session import (
    CURRENT_SESSION_VERSION as CURRENT_SESSION_VERSION,
)
from .session import (
    HeartbeatMark as HeartbeatMark,
)
from .session import (
    HeartbeatPruneReport as HeartbeatPruneReport,
)
from .session import (
    LeafContext as LeafContext,
)
from .session import (
    LineChange as LineChange,
)
from .session import (
    RefreshReport as RefreshReport,
)
from .session import (
    RepairReport as RepairReport,
)
from .session import (
    ScanStream as ScanStream,
)
from .session import (
    Session as Session,
)
from .session import (
    SessionContext as SessionContext,
)
from .session import (
    SessionSummary as SessionSummary,
)
from .session import (
    SkippedLine as SkippedLine,
)
from .session import (
    _read_leaf_context_lines as _read_leaf_context_lines,
)
from .session import (
    build_session_context as build_session_context,
)
from .session import (
    mark_heartbeat_transcript as mark_heartbeat_transcript,
)
from .session import (
    prune_heartbeat_transcript as prune_heartbeat_transcript,
)
from .session import (
    read_leaf_context as read_leaf_context,
)
from .session import (
    repair_session_bytes as repair_session_bytes,
)
from .session import (
    repair_session_file as repair_session_file,
)
from .session import (
    scan_sessions as scan_sessions,
)
from .session import (
    scan_stream as scan_stream,
)
from .session import (
    summarize_session_bytes as summarize_session_bytes,
)
from .session import (
    summarize_session_lines as summarize_session_lines,
)
from .token_count import (
    _token_feature_names as _token_feature_names,
)
from .token_count import (
    _token_features as _token_features,
)
from .token_count import (
    _token_vocabulary as _token_vocabulary,
)
from .token_count import (
    count_message_tokens as count_message_tokens,
)
from .token_count import (
    count_tokens as count_tokens,
)
from .token_count import (
    image_tokens as image_tokens,
)
from .transcript import (
    _TOOL_CALL_TYPES as _TOOL_CALL_TYPES,
)
from .transcript import (
    ContextTokens as ContextTokens,
)
from .transcript import (
    PairingReport as PairingReport,
)
from .transcript import (
    PruningSettings as PruningSettings,
)
from .transcript import (
    ToolCallInputsReport as ToolCallInputsReport,
)
from .transcript import (
    Transcript as Transcript,
)
from .transcript import (
    _budget_units as _budget_units,
)
from .transcript import (
    compaction_boundary as compaction_boundary,
)
from .transcript import (
    compaction_send_view as compaction_send_view,
)
from .transcript import (
    convert_to_llm as convert_to_llm,
)
from .transcript import (
    estimate_context_tokens as estimate_context_tokens,
)
from .transcript import (
    estimate_messages_tokens as estimate_messages_tokens,
)
from .transcript import (
    estimate_pruning_chars as estimate_pruning_chars,
)
from .transcript import (
    estimate_string_chars as estimate_string_chars,
)
from .transcript import (
    estimate_tokens as estimate_tokens,
)
from .transcript import (
    history_limit_for_session_key as history_limit_for_session_key,
)
from .transcript import (
    is_tool_prunable as is_tool_prunable,
)
from .transcript import (
    limit_history_turns as limit_history_turns,
)
from .transcript import (
    message_columns as message_columns,
)
from .transcript import (
    prune_context as prune_context,
)
from .transcript import (
    repair_tool_call_inputs as repair_tool_call_inputs,
)
from .transcript import (
    repair_tool_pairing as repair_tool_pairing,
)
from .transcript import (
    sanitize_tool_call_inputs as sanitize_tool_call_inputs,
)
from .transcript import (
    sanitize_tool_use_result_pairing as sanitize_tool_use_result_pairing,
)
from .transcript import (
    usage_tokens as usage_tokens,
)

__all__ = [
    "CURRENT_SESSION_VERSION",
    "_TOOL_CALL_TYPES",
    "ClawctxError",
    "CompactionPreparation",
    "CompactionSettings",
    "ContextTokens",
    "CutPoint",
    "HeartbeatMark",
    "HeartbeatPruneReport",
    "ImageBlockRef",
    "ImportedTranscript",
    "InternalError",
    "LeafContext",
    "LineChange",
    "NotASessionFileError",
    "PairingReport",
    "PruningSettings",
    "RefreshReport",
    "RepairError",
    "RepairReport",
    "ScanStream",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLockError",
    "SessionSummary",
    "SkippedLine",
    "StripResult",
    "SummaryRequest",
    "ToolCallInputsReport",
    "Transcript",
    "TranscriptPolicy",
    "Violation",
    "_CacheDiffChain",
    "_RequestPayload",
    "_ResponseReader",
    "__version__",
    "_budget_units",
    "_build_request_payload",
    "_cache_breakpoint_issues",
    "_cache_diff",
    "_compaction_texts",
    "_panic_for_tests",
    "_parse_response",
    "_read_leaf_context_lines",
    "_response_apis",
    "_token_feature_names",
    "_token_features",
    "_token_vocabulary",
    "_transform_messages",
    "annotate_inter_session_messages",
    "build_compaction_prompt",
    "build_session_context",
    "compaction_boundary",
    "compaction_send_view",
    "convert_to_llm",
    "count_message_tokens",
    "count_tokens",
    "decode_image_base64",
    "dedupe_tool_call_ids",
    "detect_transcript_format_bytes",
    "downgrade_openai_function_call_pairs",
    "downgrade_openai_reasoning",
    "drop_delivery_mirror_messages",
    "drop_duplicate_tool_results",
    "drop_foreign_compaction_blocks",
    "drop_thinking_blocks",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_pruning_chars",
    "estimate_string_chars",
    "estimate_tokens",
    "filter_heartbeat_pairs",
    "find_cut_point",
    "find_image_blocks",
    "guard_request",
    "history_limit_for_session_key",
    "image_tokens",
    "is_tool_prunable",
    "is_valid_tool_call_id",
    "limit_history_turns",
    "mark_heartbeat_transcript",
    "message_columns",
    "normalize_usage",
    "prepare_compaction",
    "probe_base64_image",
    "provider_family",
    "prune_context",
    "prune_heartbeat_transcript",
    "read_leaf_context",
    "read_transcript_bytes",
    "read_transcript_file",
    "repair_session_bytes",
    "repair_session_file",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "replace_content_blocks",
    "request_issues",
    "resolve_transcript_policy",
    "sanitize_google_turn_ordering",
    "sanitize_message_blocks",
    "sanitize_tool_call_id",
    "sanitize_tool_call_ids",
    "sanitize_tool_call_inputs",
    "sanitize_tool_use_result_pairing",
    "scan_sessions",
    "scan_stream",
    "serialize_conversation",
    "should_compact",
    "strip_dangling_tool_calls",
    "strip_heartbeat_token",
    "strip_thought_signatures",
    "strip_tool_result_details",
    "summarize_session_bytes",
    "summarize_session_lines",
    "usage_tokens",
    "validate_anthropic_turns",
    "validate_for_provider",
    "validate_gemini_turns",
    "zero_stale_usage",
]

__version__: str

class ClawctxError(Exception):
    """Base class of every clawctx error."""

class SessionFormatError(ClawctxError):
    """The file is not a usable session file."""

    path: str
    line: int
    reason: str

class NotASessionFileError(SessionFormatError):
    """The path is a FIFO, device, directory or socket, not a regular file (refused unread)."""

class SessionLockError(ClawctxError):
    """The advisory lock on a session file could not be taken in time."""

class RepairError(ClawctxError):
    """Rewriting a damaged session file failed; the original is untouched."""

class InternalError(ClawctxError):
    """A bug in clawctx: a native call panicked; the message holds the panic's text.

    ``location`` (``file:line:column``) and ``backtrace`` hold what the panic hook recorded
    (nothing is printed to stderr); ``None`` when the panic was raised on another thread.
    """

    location: str | None
    backtrace: str | None

def _panic_for_tests(message: str) -> None:
    """Panics with `message`: the only way to check from Python that a panic reaches the caller
    as `InternalError` (nothing else in the API is meant to panic).
    """
