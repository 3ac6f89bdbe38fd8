"""Facade replies and queues (OpenClaw 2026.3.13): think levels, heartbeat and silent tokens,
queue modes, directives, collect prompts."""

from __future__ import annotations

from typing import Any

from . import _api
from ._harness import adapter, undefined_or_value


@adapter("normalize_think_level")
def normalize_think_level(inp: Any, params: Any) -> Any:
    return undefined_or_value(_api.normalize_think_level(inp["raw"]))


@adapter("strip_heartbeat_token")
def strip_heartbeat_token(inp: Any, params: Any) -> Any:
    opts = params.get("opts")
    if opts is None:
        result = _api.strip_heartbeat_token(inp["raw"])
    else:
        kwargs: dict[str, Any] = {}
        if "mode" in opts:
            kwargs["mode"] = opts["mode"]
        if "maxAckChars" in opts:
            kwargs["max_ack_chars"] = opts["maxAckChars"]
        result = _api.strip_heartbeat_token(inp["raw"], **kwargs)
    return {"shouldSkip": result.should_skip, "text": result.text, "didStrip": result.did_strip}


@adapter("is_heartbeat_content_effectively_empty")
def is_heartbeat_content_effectively_empty(inp: Any, params: Any) -> Any:
    return {"value": _api.is_heartbeat_content_effectively_empty(inp["content"])}


def _token(params: Any) -> dict[str, Any]:
    return {"token": params["token"]} if "token" in params else {}


@adapter("is_silent_reply_text")
def is_silent_reply_text(inp: Any, params: Any) -> Any:
    return {"value": _api.is_silent_reply_text(inp["text"], **_token(params))}


@adapter("is_silent_reply_prefix_text")
def is_silent_reply_prefix_text(inp: Any, params: Any) -> Any:
    return {"value": _api.is_silent_reply_prefix_text(inp["text"], **_token(params))}


@adapter("strip_silent_token")
def strip_silent_token(inp: Any, params: Any) -> Any:
    return {"text": _api.strip_silent_token(inp["text"], **_token(params))}


@adapter("normalize_queue_mode")
def normalize_queue_mode(inp: Any, params: Any) -> Any:
    return undefined_or_value(_api.normalize_queue_mode(inp["raw"]))


@adapter("normalize_queue_drop_policy")
def normalize_queue_drop_policy(inp: Any, params: Any) -> Any:
    return undefined_or_value(_api.normalize_queue_drop_policy(inp["raw"]))


@adapter("extract_queue_directive")
def extract_queue_directive(inp: Any, params: Any) -> Any:
    directive, cleaned = _api.parse_queue_directive(inp["body"])
    out: dict[str, Any] = {
        "cleaned": cleaned,
        "queueReset": bool(directive and directive.reset),
        "hasDirective": directive is not None,
        "hasOptions": bool(directive and directive.has_options),
    }
    if directive is not None:
        for key, value in (
            ("queueMode", directive.mode),
            ("rawMode", directive.raw_mode),
            ("debounceMs", directive.debounce_ms),
            ("cap", directive.cap),
            ("dropPolicy", directive.drop),
            ("rawDebounce", directive.raw_debounce),
            ("rawCap", directive.raw_cap),
            ("rawDrop", directive.raw_drop),
        ):
            if value is not None:
                out[key] = value
    return out


@adapter("collect_prompt")
def collect_prompt(inp: Any, params: Any) -> Any:
    summary = (
        _api.build_overflow_summary(
            inp["droppedCount"],
            inp["summaryLines"],
            noun=inp["noun"],
            drop_policy=inp["dropPolicy"],
        )
        or None
    )
    text = _api.build_collect_prompt(inp["prompts"], title=inp["title"], overflow_summary=summary)
    return {"summary": summary, "text": text}


@adapter("queue_summary_line")
def queue_summary_line(inp: Any, params: Any) -> Any:
    if "limit" in params:
        return {"text": _api.build_queue_summary_line(inp["text"], params["limit"])}
    return {"text": _api.build_queue_summary_line(inp["text"])}
