"""clawctx: context management for LLM agent runtimes.

Reads, repairs and writes pi-coding-agent / OpenClaw session transcripts (JSONL) and builds the
context an agent sends to a model. The hot path runs in Rust (``clawctx._core``); Python gets
handles (``Session``, ``Transcript``) and builds dicts only when asked.

The package follows the pipeline, one subpackage per stage (each may import only from the
stages below it):

- ``clawctx.history``: the session file and its transcript: repair, token counts, pruning,
  provider hygiene, heartbeats, images, compaction;
- ``clawctx.wire``: provider request payloads, byte-compatible with pi-ai's;
- ``clawctx.prompt``: the system prompt, workspace files and skills, the prompt body of an
  inbound message, system events, untrusted-text escaping, prompt images;
- ``clawctx.runtime``: the per-session lane, follow-up queues, announces, reply tokens;
- ``clawctx.engine``: hooks, context engines, provenance, internal events and
  ``ContextPipeline``, which runs the whole per-request order.

This top level holds what a user reaches for first; every stage's ``__all__`` lists all its
public names (constants, provider-specific passes, building blocks). The other names this module
used to export still resolve here until 0.3, with a ``DeprecationWarning`` that names their new
home (see ``clawctx._deprecation``).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from clawctx import engine, history, interop, prompt, runtime, wire
from clawctx._core import (
    __version__,
)
from clawctx._deprecation import MOVED, REMOVED_IN, new_home
from clawctx.demo import (
    demo_session_path,
    demo_workspace_path,
)
from clawctx.engine import (
    ContextEngine,
    ContextPipeline,
    HookRunner,
    LegacyContextEngine,
    ModelSpec,
    PipelineChange,
    PreparedRequest,
    PromptRequest,
    doctor,
    register_context_engine,
    resolve_context_engine,
)
from clawctx.history import (
    CURRENT_SESSION_VERSION,
    CacheTtlPruner,
    ClawctxError,
    CompactionPreparation,
    CompactionResult,
    CompactionSettings,
    ContextTokens,
    HeartbeatTranscriptGuard,
    LeafContext,
    PruningSettings,
    RefreshReport,
    RepairError,
    RepairReport,
    Session,
    SessionContext,
    SessionFormatError,
    SessionLockError,
    SessionSummary,
    SummaryRequest,
    Transcript,
    TranscriptPolicy,
    Violation,
    build_session_context,
    compat,
    convert_to_llm,
    count_message_tokens,
    count_tokens,
    detach_orphaned_trailing_user,
    detect_transcript_format,
    estimate_context_tokens,
    estimate_tokens,
    history_limit_for_session_key,
    import_transcript,
    limit_history_turns,
    open_store,
    prepare_compaction,
    prune_context,
    read_leaf_context,
    repair_session_file,
    repair_tool_call_inputs,
    repair_tool_pairing,
    resolve_transcript_policy,
    sanitize_images,
    sanitize_session_history,
    sanitize_tool_call_inputs,
    scan_sessions,
    scan_table,
    should_compact,
    validate_for_provider,
)
from clawctx.interop import fit_to_budget
from clawctx.prompt import (
    OPENCLAW_LAYOUT,
    InboundContext,
    PromptBody,
    SystemEventQueue,
    SystemPromptLayout,
    SystemPromptParams,
    build_prompt_body,
    build_system_prompt,
    detect_and_load_prompt_images,
    load_workspace_bootstrap_files,
    neutralize_untrusted_text,
)
from clawctx.runtime import (
    FollowupQueue,
    QueuedMessage,
    QueueSettings,
    SessionLane,
    TurnRequest,
    resolve_queue_settings,
)
from clawctx.wire import build_request_payload, parse_response, transform_messages

# `clawctx.cache_diff` as the issue names it; listed in `clawctx.wire.__all__` (the top level's
# `__all__` is capped at 90 names, tests/project/test_layout.py).
from clawctx.wire import cache_diff as cache_diff

__all__ = [
    "CURRENT_SESSION_VERSION",
    "OPENCLAW_LAYOUT",
    "CacheTtlPruner",
    "ClawctxError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextEngine",
    "ContextPipeline",
    "ContextTokens",
    "FollowupQueue",
    "HeartbeatTranscriptGuard",
    "HookRunner",
    "InboundContext",
    "LeafContext",
    "LegacyContextEngine",
    "ModelSpec",
    "PipelineChange",
    "PreparedRequest",
    "PromptBody",
    "PromptRequest",
    "PruningSettings",
    "QueueSettings",
    "QueuedMessage",
    "RefreshReport",
    "RepairError",
    "RepairReport",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLane",
    "SessionLockError",
    "SessionSummary",
    "SummaryRequest",
    "SystemEventQueue",
    "SystemPromptLayout",
    "SystemPromptParams",
    "Transcript",
    "TranscriptPolicy",
    "TurnRequest",
    "Violation",
    "__version__",
    "build_prompt_body",
    "build_request_payload",
    "build_session_context",
    "build_system_prompt",
    "compat",
    "convert_to_llm",
    "count_message_tokens",
    "count_tokens",
    "demo_session_path",
    "demo_workspace_path",
    "detach_orphaned_trailing_user",
    "detect_and_load_prompt_images",
    "detect_transcript_format",
    "doctor",
    "engine",
    "estimate_context_tokens",
    "estimate_tokens",
    "fit_to_budget",
    "history",
    "history_limit_for_session_key",
    "import_transcript",
    "interop",
    "limit_history_turns",
    "load_workspace_bootstrap_files",
    "neutralize_untrusted_text",
    "open_store",
    "parse_response",
    "prepare_compaction",
    "prompt",
    "prune_context",
    "read_leaf_context",
    "register_context_engine",
    "repair_session_file",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "resolve_context_engine",
    "resolve_queue_settings",
    "resolve_transcript_policy",
    "runtime",
    "sanitize_images",
    "sanitize_session_history",
    "sanitize_tool_call_inputs",
    "scan_sessions",
    "scan_table",
    "should_compact",
    "transform_messages",
    "validate_for_provider",
    "wire",
]


def __getattr__(name: str) -> Any:
    """The names moved to a stage subpackage, with a ``DeprecationWarning`` (until 0.3)."""
    stage = new_home(name)
    if stage is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"clawctx.{name} is deprecated; import it from {stage} (removed in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(stage), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *MOVED})
