"""``validate_for_provider`` checks Anthropic's prompt-cache breakpoints (issue 31, item 6): at
most 4 ``cache_control`` markers per request, and a ``1h`` one never after a ``5m`` one in
prefix order (tools, system, messages)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawctx.history import Transcript, validate_for_provider

SHORT = {"type": "ephemeral"}
FIVE = {"type": "ephemeral", "ttl": "5m"}
LONG = {"type": "ephemeral", "ttl": "1h"}


def _user(text: str, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache is not None:
        block["cache_control"] = cache
    return {"role": "user", "content": [block], "timestamp": 1}


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "stopReason": "stop",
    }


def _tool(name: str, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "input_schema": {"type": "object"}}
    if cache is not None:
        tool["cache_control"] = cache
    return tool


def _check(messages: list[dict[str, Any]], **kwargs: Any) -> list[tuple[int, str, str]]:
    found = validate_for_provider(
        messages, provider="anthropic", model_api="anthropic-messages", **kwargs
    )
    return [(v.index, v.rule, v.detail.split(":")[0]) for v in found]


def test_four_breakpoints_are_accepted_and_the_fifth_is_reported() -> None:
    messages = [
        _user("a", SHORT),
        _assistant("b"),
        _user("c", SHORT),
        _assistant("d"),
        _user("e", SHORT),
    ]
    tools = [_tool("read"), _tool("exec", SHORT)]
    assert _check(messages, tools=tools) == []
    system = [{"type": "text", "text": "sys", "cache_control": SHORT}]
    assert _check(messages, tools=tools, system=system) == [
        (4, "too-many-cache-breakpoints", "messages[4].content[0]")
    ]
    # Without the tools and system the messages alone are within the limit.
    assert _check(messages) == []


def test_markers_nested_in_tool_results_count() -> None:
    result = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "cache_control": SHORT,
                "content": [{"type": "text", "text": "x", "cache_control": SHORT}],
            }
        ],
    }
    tools = [_tool("a", SHORT), _tool("b", SHORT), _tool("c", SHORT)]
    found = _check([_user("go"), result], tools=tools)
    assert found == [(1, "too-many-cache-breakpoints", "messages[1].content[0].content[0]")]


@pytest.mark.parametrize("short", [SHORT, FIVE])
def test_a_longer_ttl_after_a_shorter_one_is_reported(short: dict[str, Any]) -> None:
    tools = [_tool("read", short)]
    system = [{"type": "text", "text": "sys", "cache_control": LONG}]
    assert _check([_user("hi")], tools=tools, system=system) == [
        (0, "cache-ttl-order", "system[0]")
    ]
    late = [_user("a", short), _assistant("b"), _user("c", LONG)]
    assert _check(late) == [(2, "cache-ttl-order", "messages[2].content[0]")]


def test_longer_ttls_first_are_accepted() -> None:
    tools = [_tool("read", LONG)]
    system = [{"type": "text", "text": "sys", "cache_control": LONG}]
    messages = [_user("a", FIVE), _assistant("b"), _user("c", SHORT)]
    assert _check(messages, tools=tools, system=system) == []


def test_an_unknown_ttl_is_reported() -> None:
    found = _check([_user("a", {"type": "ephemeral", "ttl": "2h"})])
    assert found == [(0, "invalid-cache-ttl", "messages[0].content[0]")]


def test_a_transcript_is_checked_from_its_stored_bytes() -> None:
    messages = [_user(str(n), SHORT) for n in range(5)]
    transcript = Transcript.from_json(json.dumps(messages))
    found = validate_for_provider(transcript, provider="anthropic", model_api="anthropic-messages")
    assert [v.rule for v in found] == ["too-many-cache-breakpoints"]


def test_other_providers_have_no_cache_control_rules() -> None:
    messages = [_user(str(n), SHORT) for n in range(6)]
    assert validate_for_provider(messages, provider="openai", model_api="openai-responses") == []


def test_a_built_anthropic_body_passes_the_check() -> None:
    from clawctx.wire import build_request_payload

    model = {
        "id": "claude-x",
        "name": "x",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": "https://api.anthropic.com",
        "reasoning": False,
        "input": ["text"],
        "maxTokens": 8000,
    }
    body = build_request_payload(
        model, {"system_prompt": "sys", "messages": [_user("hi")]}, {"cacheRetention": "long"}
    ).to_dict()
    assert (
        validate_for_provider(
            body["messages"],
            provider="anthropic",
            model_api="anthropic-messages",
            system=body["system"],
        )
        == []
    )
