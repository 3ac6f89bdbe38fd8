"""The tool call ids and tool result ids of plain message dicts, as ``clawctx inspect`` and
``clawctx doctor`` pair them (read-only helpers shared by ``history.inspect`` and
``engine.diagnose``).

Layer: ``clawctx.history`` (imports only ``clawctx._core``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clawctx import _core


def tool_call_ids(message: dict[str, Any]) -> list[str]:
    """The non-empty ids of the tool calls in an assistant message's content, in order (pi's
    ``toolCall`` and the provider-shaped block types); ``[]`` for any other message."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [
        block["id"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in _core._TOOL_CALL_TYPES
        and isinstance(block.get("id"), str)
        and block["id"]
    ]


def tool_result_id(message: dict[str, Any]) -> str | None:
    """The call id a tool result answers (``toolCallId``, or the older ``toolUseId``), or
    ``None`` when it has none."""
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tool_ids(messages: Iterable[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """``(calls, results)``: the tool call ids of the assistant messages and the call ids the
    ``toolResult`` messages answer, each in message order."""
    calls: list[str] = []
    results: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            calls.extend(tool_call_ids(message))
        elif role == "toolResult":
            result_id = tool_result_id(message)
            if result_id is not None:
                results.append(result_id)
    return calls, results
