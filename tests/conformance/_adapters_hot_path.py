"""Hot path (OpenClaw 2026.3.13): transcript repair, history limit, context pruning."""

from __future__ import annotations

from typing import Any

from . import _api
from ._harness import CLOCK_MS, adapter, json_equal, to_json, undefined_or_value


def transcript(messages: list[Any]) -> Any:
    """The input as a Transcript, so "returned its input" can be checked by identity."""
    return _api.Transcript.from_list(messages)


@adapter("repair_tool_use_result_pairing")
def repair_tool_use_result_pairing(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    report = _api.repair_tool_pairing(given, now_ms=CLOCK_MS)
    return {
        "messages": report.messages.to_list(),
        "added": report.added.to_list(),
        "droppedDuplicateCount": report.dropped_duplicate_count,
        "droppedOrphanCount": report.dropped_orphan_count,
        "moved": report.moved,
        "unchanged": report.messages is given,
    }


@adapter("repair_tool_call_inputs")
def repair_tool_call_inputs(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    report = _api.repair_tool_call_inputs(given, allowed_tool_names=params.get("allowedToolNames"))
    return {
        "messages": report.messages.to_list(),
        "droppedToolCalls": report.dropped_tool_calls,
        "droppedAssistantMessages": report.dropped_assistant_messages,
        "unchanged": report.messages is given,
    }


@adapter("limit_history_turns")
def limit_history_turns(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    out = _api.limit_history_turns(given, params.get("limit"))
    return {"messages": out.to_list(), "unchanged": out is given}


@adapter("get_history_limit_from_session_key")
def get_history_limit_from_session_key(inp: Any, params: Any) -> Any:
    value = _api.history_limit_for_session_key(params.get("sessionKey"), params.get("config"))
    return undefined_or_value(value)


@adapter("compute_effective_settings")
def compute_effective_settings(inp: Any, params: Any) -> Any:
    settings = _api.PruningSettings.from_config(inp["raw"])
    return {"settings": None if settings is None else settings.to_dict()}


@adapter("prune_context_messages")
def prune_context_messages(inp: Any, params: Any) -> Any:
    messages = inp["messages"]
    given = transcript(messages)
    model = params.get("model")
    if "contextWindowTokensOverride" in params:
        window = params["contextWindowTokensOverride"]
    else:
        window = model.get("contextWindow") if isinstance(model, dict) else None
    out = _api.prune_context(given, params["settings"], context_window_tokens=window)
    result = out.to_list()
    replaced = {
        str(i): after
        for i, (before, after) in enumerate(zip(messages, result, strict=False))
        if not json_equal(before, to_json(after))
    }
    return {"unchanged": out is given, "length": len(result), "replaced": replaced}
