"""``validate_request_body`` checks an Anthropic body's prompt-cache breakpoints (issue 31,
item 6): at most 4 ``cache_control`` markers, a ``1h`` one never after a ``5m`` one in prefix
order (tools, system, messages)."""

from __future__ import annotations

from typing import Any

from clawctx.wire import validate_request_body

SHORT = {"type": "ephemeral"}
LONG = {"type": "ephemeral", "ttl": "1h"}


def _body(tools: list[Any], system: list[Any], texts: list[Any]) -> dict[str, Any]:
    messages = []
    for n, cache in enumerate(texts):
        block: dict[str, Any] = {"type": "text", "text": f"t{n}"}
        if cache is not None:
            block["cache_control"] = cache
        messages.append({"role": "user" if n % 2 == 0 else "assistant", "content": [block]})
    return {
        "model": "claude-x",
        "max_tokens": 10,
        "tools": [
            {
                "name": f"t{i}",
                "input_schema": {"type": "object"},
                **({"cache_control": c} if c else {}),
            }
            for i, c in enumerate(tools)
        ],
        "system": [
            {"type": "text", "text": "s", **({"cache_control": c} if c else {})} for c in system
        ],
        "messages": messages,
    }


def _rules(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v.path, v.rule) for v in validate_request_body(body, "anthropic-messages")]


def test_four_breakpoints_pass_and_the_fifth_fails() -> None:
    assert _rules(_body([SHORT], [SHORT], [SHORT, None, SHORT])) == []
    assert _rules(_body([SHORT], [SHORT], [SHORT, SHORT, SHORT])) == [
        ("messages[2].content[0]", "too-many-cache-breakpoints")
    ]


def test_a_long_ttl_after_a_short_one_fails() -> None:
    assert _rules(_body([LONG], [LONG], [SHORT])) == []
    assert _rules(_body([SHORT], [LONG], [None])) == [("system[0]", "cache-ttl-order")]
    assert _rules(_body([], [], [{"type": "ephemeral", "ttl": "5m"}, LONG])) == [
        ("messages[1].content[0]", "cache-ttl-order")
    ]
    assert _rules(_body([], [], [{"type": "ephemeral", "ttl": "10m"}])) == [
        ("messages[0].content[0]", "invalid-cache-ttl")
    ]
