"""clawctx: context management for LLM agent runtimes.

Reads, repairs and writes pi-coding-agent / OpenClaw session transcripts (JSONL) and builds the
context an agent sends to a model. The hot path runs in Rust (``clawctx._core``); Python gets
handles (``Session``, ``Transcript``) and builds dicts only when asked.
"""

from __future__ import annotations

from clawctx._core import (
    CURRENT_SESSION_VERSION,
    ClawctxError,
    LineChange,
    RepairError,
    RepairReport,
    Session,
    SessionContext,
    SessionFormatError,
    SessionLockError,
    SkippedLine,
    Transcript,
    __version__,
    convert_to_llm,
    estimate_tokens,
    repair_session_file,
)
from clawctx.context import build_session_context
from clawctx.demo import demo_session_path

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ClawctxError",
    "LineChange",
    "RepairError",
    "RepairReport",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLockError",
    "SkippedLine",
    "Transcript",
    "__version__",
    "build_session_context",
    "convert_to_llm",
    "demo_session_path",
    "estimate_tokens",
    "repair_session_file",
]
