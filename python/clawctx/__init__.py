"""clawctx: context management for LLM agent runtimes.

Reads, repairs and writes pi-coding-agent / OpenClaw session transcripts (JSONL) and builds the
context an agent sends to a model. The hot path runs in Rust (``clawctx._core``); Python gets
handles (``Session``, ``Transcript``) and builds dicts only when asked.
"""

from __future__ import annotations

from clawctx._core import (
    CURRENT_SESSION_VERSION,
    ClawctxError,
    ContextTokens,
    LineChange,
    PairingReport,
    PruningSettings,
    RepairError,
    RepairReport,
    Session,
    SessionContext,
    SessionFormatError,
    SessionLockError,
    SkippedLine,
    ToolCallInputsReport,
    Transcript,
    __version__,
    convert_to_llm,
    estimate_context_tokens,
    estimate_messages_tokens,
    estimate_pruning_chars,
    estimate_string_chars,
    estimate_tokens,
    history_limit_for_session_key,
    is_tool_prunable,
    limit_history_turns,
    prune_context,
    repair_session_file,
    repair_tool_call_inputs,
    repair_tool_pairing,
    sanitize_tool_call_inputs,
    sanitize_tool_use_result_pairing,
    usage_tokens,
)
from clawctx.context import build_session_context
from clawctx.demo import demo_session_path
from clawctx.pruning import CACHE_TTL_CUSTOM_TYPES, CacheTtlPruner, is_cache_ttl_eligible

__all__ = [
    "CACHE_TTL_CUSTOM_TYPES",
    "CURRENT_SESSION_VERSION",
    "CacheTtlPruner",
    "ClawctxError",
    "ContextTokens",
    "LineChange",
    "PairingReport",
    "PruningSettings",
    "RepairError",
    "RepairReport",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLockError",
    "SkippedLine",
    "ToolCallInputsReport",
    "Transcript",
    "__version__",
    "build_session_context",
    "convert_to_llm",
    "demo_session_path",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_pruning_chars",
    "estimate_string_chars",
    "estimate_tokens",
    "history_limit_for_session_key",
    "is_cache_ttl_eligible",
    "is_tool_prunable",
    "limit_history_turns",
    "prune_context",
    "repair_session_file",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "sanitize_tool_call_inputs",
    "sanitize_tool_use_result_pairing",
    "usage_tokens",
]
