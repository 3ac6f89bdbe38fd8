"""History-level properties over arbitrary (broken) histories: the pairing repair and
``sanitize_session_history`` are idempotent, for every provider and errored-assistant policy,
with the recorded release's passes (``safe=False``), the safe default, and clawctx's
``provider_safe`` and ``validate_turns`` passes; and by default (and with those two on) the
result is valid for the provider (``validate_for_provider`` finds nothing).

The generator (``histories`` in ``tests/_broken_sessions.py``) covers what real stored
histories hold when they go wrong: messages without a role or with an unknown one, tool calls
and results with odd ids and names (``""``, blanks, pipes, overlong), aborted and errored
assistants with empty content, images, thinking blocks with and without signatures, custom,
bash and summary messages.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, note

from clawctx.history import (
    repair_tool_pairing,
    sanitize_session_history,
    validate_for_provider,
)
from tests._broken_sessions import PROPERTY_SETTINGS, histories

Msg = dict[str, Any]

# Provider / model API pairs, one per transcript policy and validation family.
PROVIDERS: dict[str, Msg] = {
    "anthropic": {"provider": "anthropic", "model_api": "anthropic-messages"},
    "bedrock": {"provider": "amazon-bedrock", "model_api": "bedrock-converse-stream"},
    "openai-responses": {"provider": "openai", "model_api": "openai-responses"},
    "openai-completions": {"provider": "openai", "model_api": "openai-completions"},
    "google": {"provider": "google", "model_api": "google-generative-ai"},
    "gemini-cli": {"provider": "google-gemini-cli", "model_api": "google-gemini-cli"},
    "mistral": {"provider": "mistral", "model_api": "openai-completions"},
    "openrouter": {"provider": "openrouter", "model_api": "openai-completions"},
    "none": {"provider": None, "model_api": None},
}
ERRORED_POLICIES = [None, "preserve", "drop"]


#: ``sanitize_session_history`` options: the recorded release exactly, the safe default, and
#: the default with every clawctx safety pass on.
MODES: dict[str, Msg] = {
    "release": {"safe": False},
    "default": {},
    "provider_safe": {"provider_safe": True, "validate_turns": True},
}


def _sanitize(messages: Any, name: str, mode: str) -> Any:
    return sanitize_session_history(messages, now_ms=0, **MODES[mode], **PROVIDERS[name])


@pytest.mark.parametrize("policy", ERRORED_POLICIES)
@PROPERTY_SETTINGS
@given(messages=histories())
def test_repair_tool_pairing_is_idempotent(policy: str | None, messages: list[Msg]) -> None:
    once = repair_tool_pairing(messages, now_ms=0, errored_assistant_result_policy=policy).messages
    twice = repair_tool_pairing(once, now_ms=0, errored_assistant_result_policy=policy).messages
    note(f"once: {once.to_list()}")
    assert twice.to_list() == once.to_list()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@PROPERTY_SETTINGS
@given(messages=histories())
def test_sanitize_session_history_is_idempotent(
    provider: str, mode: str, messages: list[Msg]
) -> None:
    once = _sanitize(messages, provider, mode)
    twice = _sanitize(once, provider, mode)
    note(f"once: {once.to_list()}")
    assert twice.to_list() == once.to_list()


@pytest.mark.parametrize("mode", ["default", "provider_safe"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@PROPERTY_SETTINGS
@given(messages=histories())
def test_sanitized_history_is_valid_for_its_provider(
    provider: str, mode: str, messages: list[Msg]
) -> None:
    out = _sanitize(messages, provider, mode)
    note(f"sanitized: {out.to_list()}")
    found = validate_for_provider(out, **PROVIDERS[provider])
    assert [(v.index, v.rule, v.detail) for v in found] == []


# ---- the cases the properties found, kept as examples ----------------------------------------

MISSING = (
    "[openclaw] missing tool result in session history; "
    "inserted synthetic error result for transcript repair."
)


@pytest.mark.parametrize(("call_name", "first"), [("", ""), (" exec ", " exec ")])
@pytest.mark.parametrize("policy", ERRORED_POLICIES)
def test_synthetic_result_keeps_its_upstream_name_on_the_second_pass(
    call_name: str, first: str, policy: str | None
) -> None:
    # Upstream's makeMissingToolResult writes the call's raw name; its next pass would rename
    # the result ("unknown", "exec"). The first pass stays upstream's, the second is a no-op.
    history: list[Msg] = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": call_name, "arguments": {}}],
            "stopReason": "toolUse",
        },
    ]
    once = repair_tool_pairing(history, now_ms=0, errored_assistant_result_policy=policy)
    assert once.messages.to_list()[2]["toolName"] == first
    twice = repair_tool_pairing(once.messages, now_ms=0, errored_assistant_result_policy=policy)
    assert twice.messages.to_list() == once.messages.to_list()
    assert twice.moved is False and len(twice.added) == 0


@pytest.mark.parametrize(("tool_name", "expected"), [("", "unknown"), (" exec ", "exec")])
def test_a_real_result_with_the_same_name_is_still_normalized(
    tool_name: str, expected: str
) -> None:
    # Only the exact synthetic shape is left alone; a real result is renamed as upstream does.
    history: list[Msg] = [
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": tool_name, "arguments": {}}],
            "stopReason": "toolUse",
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": tool_name,
            "content": [{"type": "text", "text": "real output"}],
            "isError": True,
        },
    ]
    out = repair_tool_pairing(history, now_ms=0).messages.to_list()
    assert out[1]["toolName"] == expected


def test_merged_turns_keep_string_content() -> None:
    # Upstream's validateAnthropicTurns / validateGeminiTurns count a string content as empty
    # when merging, deleting it; clawctx keeps it as a text block (a conformance deviation).
    users: list[Msg] = [
        {"role": "user", "content": "first"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
        {"role": "user", "content": "  "},
    ]
    out = sanitize_session_history(
        users, now_ms=0, validate_turns=True, provider="anthropic", model_api="anthropic-messages"
    ).to_list()
    assert out == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]
    assistants: list[Msg] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "one", "stopReason": "stop"},
        {"role": "assistant", "content": [{"type": "text", "text": "two"}], "stopReason": "stop"},
    ]
    out = sanitize_session_history(
        assistants,
        now_ms=0,
        validate_turns=True,
        provider="google",
        model_api="google-generative-ai",
    ).to_list()
    assert [b["text"] for b in out[1]["content"]] == ["one", "two"]


def test_synthetic_result_for_a_repeated_call_id_is_stable() -> None:
    # Found by the property: the synthetic result takes the first call's name, the rename
    # fallback the last one's; the second pass must still recognise the synthetic result.
    history: list[Msg] = [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "call_1", "name": " exec ", "arguments": {}},
                {"type": "toolCall", "id": "call_1", "arguments": {}},
            ],
        }
    ]
    once = repair_tool_pairing(history, now_ms=0).messages
    assert once.to_list()[1]["toolName"] == " exec "
    assert repair_tool_pairing(once, now_ms=0).messages.to_list() == once.to_list()


#: Histories hypothesis found where one round of the ``provider_safe`` passes was not a fixed
#: point: turn validation merged an errored blank assistant into the next turn and left a blank
#: text block (Google, Gemini CLI, Mistral), and the request guard left out an errored turn
#: between two user turns, which turn validation merges only on a second pass (Bedrock).
UNSETTLED: list[tuple[str, list[Msg]]] = [
    (
        provider,
        [
            {"role": "assistant", "content": [{"type": "text", "text": ""}], "stopReason": "error"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "hi"}],
                "stopReason": "stop",
            },
        ],
    )
    for provider in ("google", "gemini-cli", "mistral")
] + [
    (
        "bedrock",
        [
            {"role": "user", "content": ""},
            {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [], "stopReason": "error"},
            {"role": "user", "content": "hi"},
        ],
    )
]


@pytest.mark.parametrize(("provider", "messages"), UNSETTLED)
def test_provider_safe_settles_in_one_call(provider: str, messages: list[Msg]) -> None:
    once = _sanitize(messages, provider, "provider_safe")
    assert _sanitize(once, provider, "provider_safe").to_list() == once.to_list()
    assert not validate_for_provider(once, **PROVIDERS[provider])
    texts = [
        block.get("text")
        for message in once.to_list()
        for block in (message["content"] if isinstance(message["content"], list) else [])
    ]
    assert "" not in texts
