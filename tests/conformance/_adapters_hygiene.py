"""Provider hygiene (OpenClaw 2026.3.13): sanitizeSessionHistory and its passes, the policy."""

from __future__ import annotations

from typing import Any

from . import _api
from ._adapters_hot_path import transcript
from ._harness import CLOCK_MS, adapter, captured_logs, short_ids


def session_with_entries(session_id: str, entries: list[dict[str, Any]]) -> Any:
    """An in-memory session whose ``getEntries()`` holds the case's custom entries."""
    session = _api.Session.in_memory(
        session_id=session_id, cwd="<cwd>", now_ms=CLOCK_MS, id_factory=short_ids()
    )
    for entry in entries:
        if entry.get("type") != "custom":
            raise NotImplementedError(f"session entry of type {entry.get('type')!r}")
        session.append_custom_entry(entry["customType"], entry.get("data"))
    return session


def appended_since(session: Any, count: int) -> list[dict[str, Any]]:
    out = []
    for entry in session.entries()[count:]:
        if entry.get("type") != "custom":
            raise AssertionError(f"clawctx appended a non-custom entry: {entry}")
        out.append({"customType": entry["customType"], "data": entry.get("data")})
    return out


@adapter("sanitize_session_history")
def sanitize_session_history(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    session = session_with_entries(params["sessionId"], params["sessionEntries"])
    before = len(session.entries())
    with captured_logs() as logs:
        out = _api.sanitize_session_history(
            given,
            provider=params.get("provider"),
            model_api=params.get("modelApi"),
            model_id=params.get("modelId"),
            allowed_tool_names=params.get("allowedToolNames"),
            session=session,
            session_id=params["sessionId"],
            now_ms=CLOCK_MS,
        )
    return {
        "messages": out.to_list(),
        "unchanged": out is given,
        "appended": appended_since(session, before),
        "warnings": [log["message"] for log in logs if log["level"] == "warn"],
    }


@adapter("apply_google_turn_ordering_fix")
def apply_google_turn_ordering_fix(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    session = session_with_entries(params["sessionId"], params["sessionEntries"])
    before = len(session.entries())
    with captured_logs() as logs:
        out = _api.apply_google_turn_ordering_fix(
            given,
            model_api=params.get("modelApi"),
            session=session,
            session_id=params["sessionId"],
            now_ms=CLOCK_MS,
        )
    return {
        "messages": out.messages.to_list(),
        "didPrepend": out.did_prepend,
        "unchanged": out.messages is given,
        "appended": appended_since(session, before),
        "warnings": [log["message"] for log in logs if log["level"] == "warn"],
    }


@adapter("resolve_transcript_policy")
def resolve_transcript_policy(inp: Any, params: Any) -> Any:
    args = inp["params"]
    policy = _api.resolve_transcript_policy(
        provider=args.get("provider"), model_api=args.get("modelApi"), model_id=args.get("modelId")
    )
    # None is clawctx's "not set", which JSON.stringify leaves out (undefined).
    return {"policy": {k: v for k, v in policy.to_dict().items() if v is not None}}


@adapter("annotate_inter_session")
def annotate_inter_session(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    out = _api.annotate_inter_session_messages(given)
    return {"messages": out.to_list(), "unchanged": out is given}


@adapter("validate_anthropic_turns")
def validate_anthropic_turns(inp: Any, params: Any) -> Any:
    return {"messages": _api.validate_anthropic_turns(transcript(inp["messages"])).to_list()}


@adapter("validate_gemini_turns")
def validate_gemini_turns(inp: Any, params: Any) -> Any:
    return {"messages": _api.validate_gemini_turns(transcript(inp["messages"])).to_list()}


@adapter("strip_tool_result_details")
def strip_tool_result_details(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    out = _api.strip_tool_result_details(given)
    return {"messages": out.to_list(), "unchanged": out is given}


@adapter("downgrade_openai_reasoning_blocks")
def downgrade_openai_reasoning_blocks(inp: Any, params: Any) -> Any:
    given = transcript(inp["messages"])
    out = _api.downgrade_openai_reasoning(given)
    return {"messages": out.to_list(), "unchanged": out is given}
