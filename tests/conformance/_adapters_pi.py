"""pi-mono coding-agent (83378aad): session context, token estimates, compaction, convertToLlm."""

from __future__ import annotations

from typing import Any

from . import _api
from ._harness import adapter


def context_json(ctx: Any) -> dict[str, Any]:
    return {
        "messages": ctx.messages.to_list(),
        "thinkingLevel": ctx.thinking_level,
        "model": ctx.model,
    }


@adapter("pi_build_session_context")
def pi_build_session_context(inp: Any, params: Any) -> Any:
    if "leafId" in params:
        ctx = _api.build_session_context(inp["entries"], params["leafId"])
    else:
        ctx = _api.build_session_context(inp["entries"])
    return context_json(ctx)


@adapter("pi_estimate_tokens")
def pi_estimate_tokens(inp: Any, params: Any) -> Any:
    return {"tokens": _api.estimate_tokens(inp["message"])}


@adapter("pi_estimate_context_tokens")
def pi_estimate_context_tokens(inp: Any, params: Any) -> Any:
    result = _api.estimate_context_tokens(_api.Transcript.from_list(inp["messages"]))
    return {
        "tokens": result.tokens,
        "usageTokens": result.usage_tokens,
        "trailingTokens": result.trailing_tokens,
        "lastUsageIndex": result.last_usage_index,
    }


@adapter("pi_find_cut_point")
def pi_find_cut_point(inp: Any, params: Any) -> Any:
    cut = _api.find_cut_point(
        inp["entries"], params["startIndex"], params["endIndex"], params["keepRecentTokens"]
    )
    return {
        "firstKeptEntryIndex": cut.first_kept_entry_index,
        "turnStartIndex": cut.turn_start_index,
        "isSplitTurn": cut.is_split_turn,
    }


@adapter("pi_should_compact")
def pi_should_compact(inp: Any, params: Any) -> Any:
    settings = params["settings"]
    value = _api.should_compact(
        params["contextTokens"],
        params["contextWindow"],
        _api.CompactionSettings(
            enabled=settings["enabled"],
            reserve_tokens=settings["reserveTokens"],
            keep_recent_tokens=settings["keepRecentTokens"],
        ),
    )
    return {"shouldCompact": value}


@adapter("pi_convert_to_llm")
def pi_convert_to_llm(inp: Any, params: Any) -> Any:
    return {"messages": _api.convert_to_llm(_api.Transcript.from_list(inp["messages"])).to_list()}
