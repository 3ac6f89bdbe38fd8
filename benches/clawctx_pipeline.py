"""The per-request pipeline with clawctx: the same steps and parameters as
``reference_pipeline.run_pipeline``.

    Session.open(path, read_only=True).context().messages
    → sanitize_tool_use_result_pairing(now_ms=0) → limit_history_turns(N) → token_counts()
    → prune_context(PruningSettings.from_config({"mode": "cache-ttl"}), context_window_tokens=W)
    → to_json()

``run_pipeline_from_end`` gets the same messages from ``read_leaf_context(path).messages``,
which reads the file backwards only as far as the leaf's context reaches.
"""

from __future__ import annotations

import os
from typing import Any

import clawctx

try:  # run as part of the benches package, or as a script from benches/
    from benches.reference_pipeline import CONTEXT_WINDOW_TOKENS, HISTORY_TURNS, NOW_MS
except ImportError:  # pragma: no cover
    from reference_pipeline import CONTEXT_WINDOW_TOKENS, HISTORY_TURNS, NOW_MS  # type: ignore[no-redef]

SETTINGS = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})


def run_messages(
    messages: clawctx.Transcript,
    *,
    history_turns: int | None = HISTORY_TURNS,
    context_window_tokens: float | None = CONTEXT_WINDOW_TOKENS,
    settings: Any = SETTINGS,
) -> tuple[bytes, Any]:
    """Everything after the context is built: ``(serialized messages, token counts)``."""
    messages = clawctx.history.sanitize_tool_use_result_pairing(messages, now_ms=NOW_MS)
    messages = clawctx.limit_history_turns(messages, history_turns)
    tokens = messages.token_counts()
    messages = clawctx.prune_context(
        messages, settings, context_window_tokens=context_window_tokens
    )
    return messages.to_json(), tokens


def run_pipeline(
    path: str | os.PathLike[str],
    *,
    history_turns: int | None = HISTORY_TURNS,
    context_window_tokens: float | None = CONTEXT_WINDOW_TOKENS,
    settings: Any = SETTINGS,
) -> tuple[bytes, Any]:
    """File → serialized messages for one model request."""
    session = clawctx.Session.open(path, read_only=True)
    return run_messages(
        session.context().messages,
        history_turns=history_turns,
        context_window_tokens=context_window_tokens,
        settings=settings,
    )


def open_context(path: str | os.PathLike[str]) -> clawctx.Transcript:
    """Cold open + context."""
    return clawctx.Session.open(path, read_only=True).context().messages


def run_pipeline_from_end(
    path: str | os.PathLike[str],
    *,
    history_turns: int | None = HISTORY_TURNS,
    context_window_tokens: float | None = CONTEXT_WINDOW_TOKENS,
    settings: Any = SETTINGS,
) -> tuple[bytes, Any]:
    """File → serialized messages, reading the file from its end (``read_leaf_context``)."""
    return run_messages(
        clawctx.read_leaf_context(path).messages,
        history_turns=history_turns,
        context_window_tokens=context_window_tokens,
        settings=settings,
    )


def open_context_from_end(path: str | os.PathLike[str]) -> clawctx.Transcript:
    """The leaf's context read from the end of the file."""
    return clawctx.read_leaf_context(path).messages
