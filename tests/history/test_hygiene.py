"""Transcript hygiene (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/google.ts`,
``sanitizeSessionHistory``, and friends; images and heartbeat excluded).

Covers the policy table of `src/agents/transcript-policy.ts` (``resolveTranscriptPolicy``) with
its upstream examples, the cases of upstream's transcript-policy, validate-turns and
sanitize-session-history tests, every hygiene pass on its own with exact outputs, the session
writes ``sanitize_session_history`` performs, the orphaned-trailing-user repair of
`src/agents/pi-embedded-runner/run/attempt.ts` (``runEmbeddedAttempt``),
``validate_for_provider`` rule by rule, and a property
test: the runner's hot path (sanitize, limit, re-pair) yields transcripts each provider family
accepts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import clawctx
from clawctx import Transcript, TranscriptPolicy
from clawctx.history import detach_orphaned_trailing_user

Msg = dict[str, Any]

NOW = 1_767_225_600_000
MISSING_TEXT = (
    "[openclaw] missing tool result in session history; "
    "inserted synthetic error result for transcript repair."
)
ZERO_USAGE: Msg = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
FULL_USAGE: Msg = {
    "input": 120,
    "output": 30,
    "cacheRead": 7,
    "cacheWrite": 3,
    "totalTokens": 160,
    "cost": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "total": 10},
}
INTER = "[Inter-session message]"
BOOTSTRAP = "(session bootstrap)"
OMITTED = "[tool calls omitted]"


# ---- builders ---------------------------------------------------------------------------------


def txt(text: str) -> Msg:
    return {"type": "text", "text": text}


def img(data: str = "iVBORw0KGgo=") -> Msg:
    return {"type": "image", "data": data, "mimeType": "image/png"}


def tc(cid: str, name: str = "read", *, kind: str = "toolCall", **extra: Any) -> Msg:
    """A tool-call block with empty arguments (``input`` for ``toolUse``) unless given."""
    block: Msg = {"type": kind, "id": cid, "name": name}
    if "arguments" not in extra and "input" not in extra:
        block["input" if kind == "toolUse" else "arguments"] = {}
    block.update(extra)
    return block


def thinking(text: str = "hmm", **extra: Any) -> Msg:
    return {"type": "thinking", "thinking": text, **extra}


def u(content: Any = "hi", **extra: Any) -> Msg:
    return {"role": "user", "content": content, **extra}


def a(*blocks: Any, stop: str | None = None, **extra: Any) -> Msg:
    content: Any = list(blocks)
    if len(blocks) == 1 and isinstance(blocks[0], str):
        content = [txt(blocks[0])]
    msg: Msg = {"role": "assistant", "content": content}
    if stop is not None:
        msg["stopReason"] = stop
    msg.update(extra)
    return msg


def tr(cid: str, name: str = "read", text: str = "ok", **extra: Any) -> Msg:
    return {
        "role": "toolResult",
        "toolCallId": cid,
        "toolName": name,
        "content": [txt(text)],
        "isError": False,
        **extra,
    }


def summary(ts: Any, text: str = "earlier work") -> Msg:
    return {"role": "compactionSummary", "summary": text, "tokensBefore": 1000, "timestamp": ts}


def roles(messages: Any) -> list[Any]:
    return [m.get("role") for m in messages]


def as_list(messages: Any) -> list[Msg]:
    return messages.to_list() if isinstance(messages, Transcript) else list(messages)


def stringify(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def policy(
    provider: str | None = None, model_api: str | None = None, model_id: str | None = None
) -> TranscriptPolicy:
    return clawctx.resolve_transcript_policy(
        provider=provider, model_api=model_api, model_id=model_id
    )


def history(messages: Any, **kwargs: Any) -> list[Msg]:
    kwargs.setdefault("now_ms", NOW)
    return clawctx.sanitize_session_history(messages, **kwargs).to_list()


def sha9(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:9]


OPENAI = {"provider": "openai", "model_api": "openai-responses", "model_id": "gpt-5"}
ANTHROPIC = {
    "provider": "anthropic",
    "model_api": "anthropic-messages",
    "model_id": "claude-opus-4-5",
}
GOOGLE = {"provider": "google", "model_api": "google-generative-ai", "model_id": "gemini-2.0-flash"}
# OpenClaw 2026.3.13 applies the Mistral model-id hints (strict9 ids, full sanitize) only for
# the `mistral` provider (src/agents/provider-capabilities.ts); OpenRouter's devstral gets none.
DEVSTRAL = {
    "provider": "mistral",
    "model_api": "openai-responses",
    "model_id": "mistralai/devstral-2512:free",
}


# ---- 7.1 policy table: the upstream examples ----------------------------------------------------


def test_policy_anthropic_claude_uses_strict_ids() -> None:
    p = policy("anthropic", "anthropic-messages", "claude-opus-4-5")
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict"
    assert p.sanitize_mode == "full"
    assert p.validate_anthropic_turns is True
    assert p.allow_synthetic_tool_results is True
    assert p.validate_gemini_turns is False
    assert p.sanitize_thought_signatures is None


def test_policy_google_gemini_sanitizes_ids_and_thought_signatures() -> None:
    p = policy("google", "google-generative-ai", "gemini-2.0-flash")
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict"
    assert p.sanitize_thought_signatures == {"allowBase64Only": True, "includeCamelCase": True}


@pytest.mark.parametrize("model_api", [None, "openai-completions"])
def test_policy_mistral_uses_strict9(model_api: str | None) -> None:
    p = policy("mistral", model_api, "mistral-large-latest")
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict9"
    assert p.sanitize_mode == "full"


def test_policy_openai_gpt4o_sanitizes_no_ids() -> None:
    p = policy("openai", "openai", "gpt-4o")
    assert p.sanitize_tool_call_ids is False
    assert p.tool_call_id_mode is None


def test_policy_moonshot_kimi_openai_completions_validates_anthropic_turns() -> None:
    assert policy("moonshot", "openai-completions", "kimi-k2.5").validate_anthropic_turns is True


def test_policy_amazon_bedrock_converse_stream() -> None:
    p = policy("amazon-bedrock", "bedrock-converse-stream", "us.anthropic.claude-opus-4-6-v1")
    assert p.repair_tool_use_result_pairing is True
    assert p.validate_anthropic_turns is True
    assert p.allow_synthetic_tool_results is True
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict"
    assert p.sanitize_mode == "full"


def test_policy_openrouter_openai_model_does_not_validate_anthropic_turns() -> None:
    p = policy("openrouter", "openai-completions", "openai/gpt-4.1")
    assert p.validate_anthropic_turns is False


def test_policy_openrouter_minimax_uses_strict_ids() -> None:
    p = policy("openrouter", "openai-completions", "minimax/minimax-m2.5")
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict"


@pytest.mark.parametrize("provider", ["minimax", "minimax-cn"])
def test_policy_minimax_providers_sanitize_ids(provider: str) -> None:
    p = policy(provider, "openai-completions", "abab6.5s-chat")
    assert p.sanitize_tool_call_ids is True
    assert p.tool_call_id_mode == "strict"


def test_policy_openrouter_devstral_openai_responses_is_full_strict9() -> None:
    # Updated to OpenClaw 2026.3.13 (resolve_transcript_policy cases): the Mistral model-id
    # hints belong to the `mistral` provider's capabilities only, so OpenRouter's devstral
    # gets neither full sanitizing nor strict9 ids.
    p = policy("openrouter", "openai-responses", "mistralai/devstral-2512:free")
    assert p.sanitize_mode == "images-only"
    assert p.sanitize_tool_call_ids is False
    assert p.tool_call_id_mode is None


# ---- 7.1 policy table: full rows ---------------------------------------------------------------

BASE_DICT: Msg = {
    "sanitizeMode": "images-only",
    "sanitizeToolCallIds": False,
    "toolCallIdMode": None,
    "repairToolUseResultPairing": True,
    "preserveSignatures": False,
    "sanitizeThoughtSignatures": None,
    "sanitizeThinkingSignatures": False,
    "dropThinkingBlocks": False,
    "applyGoogleTurnOrdering": False,
    "validateGeminiTurns": False,
    "validateAnthropicTurns": False,
    "allowSyntheticToolResults": False,
}


@pytest.mark.parametrize(
    ("args", "changes"),
    [
        (("openai", "openai-responses", "gpt-5"), {}),
        ((None, "openai-responses", "gpt-5"), {}),
        # openai-completions always sanitizes ids (2026.3.13 requiresOpenAiCompatibleToolIdSanitization).
        (
            (None, "openai-completions", "gpt-4o"),
            {"sanitizeToolCallIds": True, "toolCallIdMode": "strict"},
        ),
        (("openai-codex", "openai-codex-responses", "gpt-5-codex"), {}),
        (
            ("anthropic", "anthropic-messages", "claude-opus-4-5"),
            {
                "sanitizeMode": "full",
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "preserveSignatures": True,
                "dropThinkingBlocks": True,
                "validateAnthropicTurns": True,
                "allowSyntheticToolResults": True,
            },
        ),
        (
            ("google", "google-generative-ai", "gemini-2.0-flash"),
            {
                "sanitizeMode": "full",
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "sanitizeThoughtSignatures": {"allowBase64Only": True, "includeCamelCase": True},
                "applyGoogleTurnOrdering": True,
                "validateGeminiTurns": True,
                "allowSyntheticToolResults": True,
            },
        ),
        (
            ("google-gemini-cli", "google-gemini-cli", "gemini-2.5-pro"),
            {
                "sanitizeMode": "full",
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "sanitizeThoughtSignatures": {"allowBase64Only": True, "includeCamelCase": True},
                "applyGoogleTurnOrdering": True,
                "validateGeminiTurns": True,
                "allowSyntheticToolResults": True,
            },
        ),
        (
            ("github-copilot", "openai-completions", "claude-sonnet-4.5"),
            {
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "dropThinkingBlocks": True,
                "applyGoogleTurnOrdering": True,
                "validateGeminiTurns": True,
                "validateAnthropicTurns": True,
            },
        ),
        (("github-copilot", "openai-responses", "gpt-4o"), {}),
        (
            ("openrouter", "openai-completions", "google/gemini-2.5-pro"),
            {
                "sanitizeMode": "full",
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "sanitizeThoughtSignatures": {"allowBase64Only": True, "includeCamelCase": True},
            },
        ),
        (
            ("mistral", "openai-completions", "mistral-large-latest"),
            {
                "sanitizeMode": "full",
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict9",
                "applyGoogleTurnOrdering": True,
                "validateGeminiTurns": True,
                "validateAnthropicTurns": True,
            },
        ),
        (
            ("moonshot", "openai-completions", "kimi-k2.5"),
            {
                "sanitizeToolCallIds": True,
                "toolCallIdMode": "strict",
                "applyGoogleTurnOrdering": True,
                "validateGeminiTurns": True,
                "validateAnthropicTurns": True,
            },
        ),
        (
            ("opencode", "openai-completions", "kimi-k2.5"),
            {"sanitizeToolCallIds": True, "toolCallIdMode": "strict"},
        ),
        (
            ("openai", "anthropic-messages", "gpt-5"),
            # isOpenAi wins wherever the table says ¬isOpenAi; toolCallIdMode and
            # preserveSignatures have no such guard.
            {"toolCallIdMode": "strict", "preserveSignatures": True},
        ),
    ],
)
def test_policy_table_rows(args: tuple[Any, Any, Any], changes: Msg) -> None:
    expected = {**BASE_DICT, **changes}
    assert policy(*args).to_dict() == expected


def test_policy_provider_is_normalized() -> None:
    # Updated to OpenClaw 2026.3.13: openai-completions sanitizes ids for every provider, and
    # the Mistral model-id hints apply to the `mistral` provider only.
    assert policy(" OpenAI ", "openai-completions", "gpt-5").to_dict() == {
        **BASE_DICT,
        "sanitizeToolCallIds": True,
        "toolCallIdMode": "strict",
    }
    assert policy("Anthropic", None, "Claude-X").tool_call_id_mode == "strict"
    assert policy("openrouter", "openai-completions", "MistralAI/Devstral").tool_call_id_mode == (
        "strict"
    )
    # modelId is matched lower-cased.
    assert policy("Mistral", None, "MistralAI/Devstral").tool_call_id_mode == "strict9"
    assert policy("Anthropic", None, "Claude-X").drop_thinking_blocks is True
    # Provider aliases are normalized (normalizeProviderId).
    assert policy("kimi-code", "anthropic-messages", "k2").preserve_signatures is False
    assert policy("bedrock", None, "x").validate_anthropic_turns is True


def test_transcript_policy_defaults() -> None:
    assert TranscriptPolicy().to_dict() == BASE_DICT
    assert policy("openai", "openai-responses", "gpt-5") == TranscriptPolicy()


def test_transcript_policy_construction_equals_resolved() -> None:
    built = TranscriptPolicy(
        sanitize_mode="full",
        sanitize_tool_call_ids=True,
        tool_call_id_mode="strict",
        preserve_signatures=True,
        drop_thinking_blocks=True,
        validate_anthropic_turns=True,
        allow_synthetic_tool_results=True,
    )
    assert built == policy("anthropic", "anthropic-messages", "claude-opus-4-5")
    assert built != TranscriptPolicy(sanitize_mode="full")
    assert built.sanitize_mode == "full"
    assert built.tool_call_id_mode == "strict"


def test_transcript_policy_all_fields_round_trip() -> None:
    p = TranscriptPolicy(
        sanitize_mode="full",
        sanitize_tool_call_ids=True,
        tool_call_id_mode="strict9",
        repair_tool_use_result_pairing=False,
        preserve_signatures=True,
        sanitize_thought_signatures={"allowBase64Only": True, "includeCamelCase": False},
        sanitize_thinking_signatures=True,
        drop_thinking_blocks=True,
        apply_google_turn_ordering=True,
        validate_gemini_turns=True,
        validate_anthropic_turns=True,
        allow_synthetic_tool_results=True,
    )
    assert p.to_dict() == {
        "sanitizeMode": "full",
        "sanitizeToolCallIds": True,
        "toolCallIdMode": "strict9",
        "repairToolUseResultPairing": False,
        "preserveSignatures": True,
        "sanitizeThoughtSignatures": {"allowBase64Only": True, "includeCamelCase": False},
        "sanitizeThinkingSignatures": True,
        "dropThinkingBlocks": True,
        "applyGoogleTurnOrdering": True,
        "validateGeminiTurns": True,
        "validateAnthropicTurns": True,
        "allowSyntheticToolResults": True,
    }
    assert p.sanitize_thought_signatures == {"allowBase64Only": True, "includeCamelCase": False}
    assert p.preserve_signatures is True
    assert p.repair_tool_use_result_pairing is False


@pytest.mark.parametrize(
    "kwargs", [{"sanitize_mode": "everything"}, {"tool_call_id_mode": "strict10"}]
)
def test_transcript_policy_rejects_unknown_modes(kwargs: Msg) -> None:
    with pytest.raises(ValueError):
        TranscriptPolicy(**kwargs)


# ---- validateGeminiTurns (src/agents/pi-embedded-helpers/turns.ts) ---------------------------


@pytest.mark.parametrize(
    "validate", [clawctx.history.validate_gemini_turns, clawctx.history.validate_anthropic_turns]
)
def test_validate_turns_empty_and_single(validate: Callable[..., Transcript]) -> None:
    assert validate([]).to_list() == []
    single = Transcript([u("hello")])
    assert validate(single) is single


def test_gemini_alternating_unchanged() -> None:
    t = Transcript([u("a"), a("b"), u("c"), a("d")])
    assert clawctx.history.validate_gemini_turns(t) is t


def test_gemini_merges_consecutive_assistants() -> None:
    out = clawctx.history.validate_gemini_turns(
        [u("q"), a("Part 1"), a("Part 2"), u("next")]
    ).to_list()
    assert roles(out) == ["user", "assistant", "user"]
    assert out[1]["content"] == [txt("Part 1"), txt("Part 2")]


def test_gemini_merge_takes_later_usage_and_stop_reason() -> None:
    first = a("one", usage={"input": 10, "output": 5})
    second = a("two", usage={"input": 10, "output": 10}, stopReason="end_turn")
    out = clawctx.history.validate_gemini_turns([first, second]).to_list()
    assert len(out) == 1
    assert out[0]["usage"] == {"input": 10, "output": 10}
    assert out[0]["stopReason"] == "end_turn"


def test_gemini_tool_result_between_assistants_prevents_merge() -> None:
    msgs = [u("q"), a(tc("t1", kind="toolUse")), tr("t1"), a("x"), a("y"), u("z")]
    out = clawctx.history.validate_gemini_turns(msgs).to_list()
    assert roles(out) == ["user", "assistant", "toolResult", "assistant", "user"]
    assert out[3]["content"] == [txt("x"), txt("y")]


def test_gemini_merge_fields_exact() -> None:
    earlier = a(
        "first", stop="toolUse", usage={"input": 1}, model="m1", timestamp=1, provider="google"
    )
    later = a(
        "second", stop="error", usage={"input": 2}, errorMessage="boom", model="m2", timestamp=2
    )
    out = clawctx.history.validate_gemini_turns([u("q"), earlier, later]).to_list()
    assert out[1] == {
        "role": "assistant",
        "content": [txt("first"), txt("second")],
        "stopReason": "error",
        "usage": {"input": 2},
        "model": "m1",
        "timestamp": 1,
        "provider": "google",
        "errorMessage": "boom",
    }


def test_gemini_merge_keeps_earlier_fields_the_later_lacks() -> None:
    earlier = a("first", stop="stop", usage={"input": 1}, errorMessage="old")
    later = {"role": "assistant", "content": [txt("second")]}
    out = clawctx.history.validate_gemini_turns([earlier, later]).to_list()
    assert out == [
        {
            "role": "assistant",
            "content": [txt("first"), txt("second")],
            "stopReason": "stop",
            "usage": {"input": 1},
            "errorMessage": "old",
        }
    ]


def test_gemini_merge_keeps_string_content_as_a_text_block() -> None:
    # Upstream counts a string content as empty and loses it; clawctx keeps it (a deviation,
    # tests/conformance/deviations.py).
    out = clawctx.history.validate_gemini_turns(
        [a(), {"role": "assistant", "content": "s"}, a("x")]
    )
    assert [m["content"] for m in out] == [[txt("s"), txt("x")]]


def test_gemini_merges_three_assistants_into_one() -> None:
    out = clawctx.history.validate_gemini_turns([u("q"), a("1"), a("2"), a("3")]).to_list()
    assert roles(out) == ["user", "assistant"]
    assert out[1]["content"] == [txt("1"), txt("2"), txt("3")]


# ---- validateAnthropicTurns (src/agents/pi-embedded-helpers/turns.ts) ------------------------


def test_anthropic_alternating_unchanged() -> None:
    t = Transcript([u("a"), a("b"), u("c"), a("d")])
    assert clawctx.history.validate_anthropic_turns(t) is t


def test_anthropic_merges_two_users() -> None:
    msgs = [u([txt("first")], timestamp=1000), u([txt("second")], timestamp=2000), a("ok")]
    out = clawctx.history.validate_anthropic_turns(msgs).to_list()
    assert out == [
        {"role": "user", "content": [txt("first"), txt("second")], "timestamp": 2000},
        a("ok"),
    ]


def test_anthropic_merges_three_users() -> None:
    msgs = [u([txt("1")], timestamp=1), u([txt("2")], timestamp=2), u([txt("3")], timestamp=3)]
    out = clawctx.history.validate_anthropic_turns(msgs).to_list()
    assert out == [{"role": "user", "content": [txt("1"), txt("2"), txt("3")], "timestamp": 3}]


def test_anthropic_merge_keeps_newer_metadata() -> None:
    older = u([txt("old")], timestamp=1000, attachments=["a.png"], channel="x", onlyOld=True)
    newer = u([txt("new")], timestamp=2000, attachments=["b.png"], channel="y", custom={"k": 1})
    out = clawctx.history.validate_anthropic_turns([older, newer]).to_list()
    # All fields but content come from the later message (the earlier's onlyOld is gone).
    assert out == [
        {
            "role": "user",
            "content": [txt("old"), txt("new")],
            "timestamp": 2000,
            "attachments": ["b.png"],
            "channel": "y",
            "custom": {"k": 1},
        }
    ]


def test_anthropic_merge_missing_later_timestamp_uses_earlier() -> None:
    out = clawctx.history.validate_anthropic_turns([u([txt("a")], timestamp=1000), u([txt("b")])])
    assert out.to_list() == [{"role": "user", "content": [txt("a"), txt("b")], "timestamp": 1000}]


def test_anthropic_merge_preserves_block_order_with_images() -> None:
    first = u([txt("look"), img("AAA1")], timestamp=1)
    second = u([img("BBB2"), txt("and this")], timestamp=2)
    out = clawctx.history.validate_anthropic_turns([first, second]).to_list()
    assert out[0]["content"] == [txt("look"), img("AAA1"), img("BBB2"), txt("and this")]


def test_anthropic_merge_keeps_string_content_as_a_text_block() -> None:
    # Upstream loses a string content here; clawctx keeps it (tests/conformance/deviations.py).
    out = clawctx.history.validate_anthropic_turns([u("lost one", timestamp=1), u([txt("kept")])])
    assert out.to_list() == [
        {"role": "user", "content": [txt("lost one"), txt("kept")], "timestamp": 1}
    ]
    out = clawctx.history.validate_anthropic_turns([u("a"), u("b")])
    assert out.to_list() == [{"role": "user", "content": [txt("a"), txt("b")]}]


def test_anthropic_does_not_merge_assistants() -> None:
    t = Transcript([u("q"), a("first"), a("second")])
    out = clawctx.history.validate_anthropic_turns(t)
    assert roles(out) == ["user", "assistant", "assistant"]
    assert out is t


def test_anthropic_errored_assistant_between_users() -> None:
    msgs = [
        u([txt("hello")]),
        a(stop="error", errorMessage="Overloaded"),
        u([txt("retry")]),
        u([txt("again")]),
    ]
    out = clawctx.history.validate_anthropic_turns(msgs).to_list()
    assert roles(out) == ["user", "assistant", "user"]
    assert out[2]["content"] == [txt("retry"), txt("again")]
    assert out[1] == msgs[1]


@pytest.mark.parametrize(
    "last",
    [a(), a(txt("   "), txt("")), a(thinking("only thinking")), a(thinking("t"), txt(" "))],
)
def test_anthropic_drops_trailing_empty_assistant(last: Msg) -> None:
    # Updated to OpenClaw 2026.3.13 (validate_anthropic_turns cases): upstream keeps trailing
    # empty assistants (dropping them is a later release's behaviour).
    out = clawctx.history.validate_anthropic_turns([u("q"), a("answer"), u("more"), last])
    assert out.to_list() == [u("q"), a("answer"), u("more"), last]


def test_anthropic_drops_all_trailing_empty_assistants_but_keeps_real_ones() -> None:
    # Updated to OpenClaw 2026.3.13: trailing empty assistants are kept as well.
    msgs = [u("q"), a("real"), a(" "), a(thinking())]
    out = clawctx.history.validate_anthropic_turns(msgs)
    assert out.to_list() == msgs


# ---- dangling tool calls (turns.ts, validateAnthropicTurns) ---------------------------------


def test_dangling_tool_use_removed_text_kept() -> None:
    msgs = [u("check"), a(tc("tool-1", kind="toolUse"), txt("I'll check that")), u("thanks")]
    out = clawctx.history.validate_anthropic_turns(msgs).to_list()
    assert out[1]["content"] == [txt("I'll check that")]
    assert out[0] == msgs[0]
    assert out[2] == msgs[2]


@pytest.mark.parametrize(
    "nested",
    [
        {"type": "toolResult", "toolUseId": "tool-1", "content": "done"},
        {"type": "toolResult", "toolCallId": "tool-1", "content": [txt("done")]},
        {"type": "tool", "toolCallId": "tool-1", "content": "done"},
    ],
)
def test_dangling_resolved_by_nested_result_in_user(nested: Msg) -> None:
    t = Transcript(
        [u("check"), a(tc("tool-1", kind="toolUse"), txt("I'll check that")), u([nested])]
    )
    assert clawctx.history.strip_dangling_tool_calls(t) is t
    # Updated to OpenClaw 2026.3.13 (stripDanglingAnthropicToolUses): only a `toolResult` block
    # with `toolUseId` answers a tool use in validate_anthropic_turns.
    out = clawctx.history.validate_anthropic_turns(t)
    if nested.get("type") == "toolResult" and "toolUseId" in nested:
        assert out is t
    else:
        assert out.to_list()[1]["content"] == [txt("I'll check that")]


def test_dangling_only_tool_use_becomes_omitted_text() -> None:
    out = clawctx.history.validate_anthropic_turns(
        [u("q"), a(tc("tool-1", kind="toolUse")), u("next")]
    )
    assert out.to_list()[1]["content"] == [{"type": "text", "text": "[tool calls omitted]"}]


@pytest.mark.parametrize("stop", ["aborted", "error"])
def test_dangling_errored_assistant_becomes_empty(stop: str) -> None:
    msgs = [u("q"), a(tc("tool-1"), stop=stop), u("next")]
    out = clawctx.history.strip_dangling_tool_calls(msgs)
    assert roles(out) == ["user", "assistant", "user"]
    assert out.to_list()[1]["content"] == []
    # Updated to OpenClaw 2026.3.13 (validate_anthropic_turns cases): upstream's validation
    # strips only `toolUse` blocks, so a `toolCall` stays.
    out = clawctx.history.validate_anthropic_turns(msgs)
    assert out.to_list()[1]["content"] == [tc("tool-1")]


def test_dangling_two_calls_none_resolved() -> None:
    msgs = [
        u("q"),
        a(tc("tool-1", kind="toolUse"), tc("tool-2", kind="toolUse"), txt("Done")),
        u("plain"),
    ]
    assert clawctx.history.validate_anthropic_turns(msgs).to_list()[1]["content"] == [txt("Done")]


def test_dangling_one_of_two_resolved() -> None:
    call1 = tc("tool-1", kind="toolUse")
    msgs = [
        u("q"),
        a(call1, tc("tool-2", kind="toolUse"), txt("Done")),
        u([{"type": "toolResult", "toolUseId": "tool-1", "content": "r"}]),
    ]
    assert clawctx.history.validate_anthropic_turns(msgs).to_list()[1]["content"] == [
        call1,
        txt("Done"),
    ]


def test_dangling_standalone_tool_result_resolves() -> None:
    call1 = tc("tool-1")
    msgs = [u("q"), a(call1, tc("tool-2")), tr("tool-1"), a("next"), u("more")]
    out = clawctx.history.strip_dangling_tool_calls(msgs).to_list()
    assert out[1]["content"] == [call1]
    assert out[2:] == msgs[2:]
    # Updated to OpenClaw 2026.3.13: validate_anthropic_turns only looks at a directly
    # following user message, so an assistant followed by a tool result is kept as it is.
    assert clawctx.history.validate_anthropic_turns(msgs).to_list() == msgs


def test_dangling_tool_use_id_result_resolves() -> None:
    t = Transcript(
        [u("q"), a(tc("tool-1")), {"role": "toolResult", "toolUseId": "tool-1", "content": []}]
    )
    assert clawctx.history.strip_dangling_tool_calls(t) is t


def test_dangling_result_after_next_assistant_does_not_resolve() -> None:
    msgs = [u("q"), a(tc("tool-1"), txt("x")), a("other"), tr("tool-1"), u("z")]
    out = clawctx.history.strip_dangling_tool_calls(msgs).to_list()
    assert out[1]["content"] == [txt("x")]


def test_dangling_tool_role_after_intermediate_user_resolves() -> None:
    t = Transcript(
        [
            u("q"),
            a(tc("tool-1")),
            u("intermediate"),
            {"role": "tool", "toolCallId": "tool-1", "content": "result"},
        ]
    )
    out = clawctx.history.validate_anthropic_turns(t)
    assert out is t


def test_validate_anthropic_turns_is_idempotent() -> None:
    msgs = [
        u([txt("a")], timestamp=1),
        u([txt("b")], timestamp=2),
        a(tc("tool-1"), tc("tool-2"), txt("Done")),
        tr("tool-1"),
        u("x"),
        a(tc("tool-3")),
        u("y"),
        u([txt("z")]),
        a(" "),
    ]
    once = clawctx.history.validate_anthropic_turns(clawctx.history.strip_dangling_tool_calls(msgs))
    twice = clawctx.history.validate_anthropic_turns(
        clawctx.history.strip_dangling_tool_calls(once)
    )
    assert twice is once
    assert twice.to_list() == once.to_list()
    # Updated to OpenClaw 2026.3.13: the trailing blank assistant is kept.
    assert roles(once) == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert once.to_list()[4]["content"] == [txt(OMITTED)]
    alone = clawctx.history.validate_anthropic_turns(msgs)
    assert clawctx.history.validate_anthropic_turns(alone) is alone


def test_validate_turns_string_assistant_content_does_not_throw() -> None:
    msgs = [u("q"), {"role": "assistant", "content": "plain string reply"}, u("more")]
    assert len(clawctx.history.validate_anthropic_turns(msgs)) == 3
    assert len(clawctx.history.validate_gemini_turns(msgs)) == 3
    assert len(clawctx.history.strip_dangling_tool_calls(msgs)) == 3


# ---- sanitizeSessionHistory (src/agents/pi-embedded-runner/google.ts) ------------------------


def _id_history(raw_id: str) -> list[Msg]:
    return [u("hi"), a(txt("   "), tc(raw_id)), tr(raw_id), a("done"), u("thanks")]


def test_history_openrouter_devstral_strict9_ids_and_full_mode() -> None:
    out = history(_id_history("call_abc|item:123"), **DEVSTRAL)
    assert roles(out) == ["user", "assistant", "toolResult", "assistant", "user"]
    assert out[1]["content"] == [tc("callabcit")]  # blank text dropped (full mode)
    assert out[2]["toolCallId"] == "callabcit"
    via_openrouter = history(
        _id_history("call_abc|item:123"), **{**DEVSTRAL, "provider": "openrouter"}
    )
    assert via_openrouter[2]["toolCallId"] == "call_abc|item:123"


def test_history_openrouter_devstral_short_id_is_hashed_to_nine() -> None:
    out = history(_id_history("c|1"), **DEVSTRAL)
    assert out[1]["content"] == [tc(sha9("c1"))]
    assert out[2]["toolCallId"] == sha9("c1")


def test_history_anthropic_strict_ids_and_full_mode() -> None:
    out = history(_id_history("call|item:123"), **ANTHROPIC)
    assert roles(out) == ["user", "assistant", "toolResult", "assistant", "user"]
    assert out[1]["content"] == [tc("callitem123")]
    assert out[2]["toolCallId"] == "callitem123"


def test_history_google_strict_ids() -> None:
    out = history(_id_history("call|item:123"), **GOOGLE)
    assert out[1]["content"] == [tc("callitem123")]
    assert out[2]["toolCallId"] == "callitem123"


def test_history_openai_responses_ids_untouched_and_images_only() -> None:
    out = history(_id_history("call|item:123"), **OPENAI)
    assert out[1]["content"] == [txt("   "), tc("call|item:123")]
    assert out[2]["toolCallId"] == "call|item:123"


def test_history_inter_session_marker() -> None:
    msg = u("forwarded", provenance={"kind": "inter_session", "sourceSessionKey": "agent:main:req"})
    out = history([msg, a("ok")], **OPENAI)
    assert "[Inter-session message]" in out[0]["content"]
    assert "sourceSession=agent:main:req" in out[0]["content"]
    assert out[0]["content"] == "[Inter-session message] sourceSession=agent:main:req\nforwarded"


def test_history_zeroes_usage_before_compaction_summary_by_index() -> None:
    msgs = [
        u("old", timestamp=1000),
        a("old answer", usage=copy.deepcopy(FULL_USAGE), timestamp=2000, stopReason="stop"),
        summary(3000),
        u("new", timestamp=4000),
        a("new answer", usage=copy.deepcopy(FULL_USAGE), timestamp=5000, stopReason="stop"),
    ]
    out = history(msgs, **OPENAI)
    assert out[1]["usage"] == ZERO_USAGE
    assert out[4]["usage"] == FULL_USAGE


def test_history_zeroes_usage_before_compaction_summary_by_timestamp() -> None:
    msgs = [
        summary("2026-01-01T00:00:10.000Z"),
        u("q", timestamp=NOW + 1_000),
        a("stale", usage=copy.deepcopy(FULL_USAGE), timestamp=NOW + 5_000),
        u("q2", timestamp=NOW + 11_000),
        a("fresh", usage=copy.deepcopy(FULL_USAGE), timestamp=NOW + 15_000),
    ]
    out = history(msgs, **OPENAI)
    assert out[2]["usage"] == ZERO_USAGE
    assert out[4]["usage"] == FULL_USAGE


def test_history_keeps_aborted_thinking_only_assistant_for_openai_responses() -> None:
    msgs = [
        u("hi"),
        a(thinking("reasoning...", thinkingSignature='{"id":"rs_1"}'), stop="aborted"),
    ]
    out = history(msgs, **OPENAI)
    assert roles(out) == ["user", "assistant"]
    assert out[1]["content"] == msgs[1]["content"]


def test_history_openai_responses_repairs_pairing() -> None:
    out = history([a(tc("call_1", "read"))], **OPENAI)
    assert roles(out) == ["assistant", "toolResult"]
    assert out[1] == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": MISSING_TEXT}],
        "isError": True,
        "timestamp": NOW,
    }


def test_history_drops_tool_call_without_arguments() -> None:
    call = {"type": "toolCall", "id": "call_1", "name": "read"}
    assert history([a(call), u("next")], **OPENAI) == [u("next")]


def test_history_drops_invalid_and_overlong_tool_names() -> None:
    msgs = [
        a(
            tc("call_1", 'toolu_01abc <|tool_call_argument_begin|> {"command"'),
            tc("call_2", "read_" + "x" * 80),
        ),
        u("next"),
    ]
    assert history(msgs, **OPENAI) == [u("next")]
    assert history(msgs, **ANTHROPIC) == [u("next")]


def test_history_allowlist_drops_unlisted_tool() -> None:
    assert history([a(tc("call_1", "write"))], allowed_tool_names=["read"], **OPENAI) == []


def test_history_delivery_mirror_dropped_only_for_anthropic() -> None:
    mirror = a("mirrored", provider="openclaw", model="delivery-mirror")
    msgs = [u("q"), a("real"), u("again"), mirror, u("more"), a("last")]
    # The drop is one of clawctx's provider_safe passes (OpenClaw 2026.3.13 has no such step).
    safe = history(msgs, provider_safe=True, validate_turns=True, **ANTHROPIC)
    assert roles(safe) == ["user", "assistant", "user", "assistant"]
    assert len(history(msgs, provider_safe=True, **OPENAI)) == 6
    assert len(history(msgs, **ANTHROPIC)) == 6


def test_history_copilot_claude_drops_thinking() -> None:
    msgs = [u("q"), a(thinking("deep"), txt("answer")), u("next")]
    out = history(
        msgs, provider="github-copilot", model_api="openai-completions", model_id="claude-sonnet-4"
    )
    assert out[1]["content"] == [txt("answer")]
    kept = history(
        msgs, provider="github-copilot", model_api="openai-completions", model_id="gpt-4o"
    )
    assert kept[1]["content"] == [thinking("deep"), txt("answer")]


def test_history_google_strips_non_base64_thought_signatures() -> None:
    good = "c2lnbmF0dXJl"
    msgs = [
        u("q"),
        a(tc("c1", thoughtSignature="not base64!"), tc("c2", thought_signature=good)),
        tr("c1"),
        tr("c2"),
        a("done"),
    ]
    out = history(msgs, **GOOGLE)
    assert out[1]["content"] == [tc("c1"), tc("c2", thought_signature=good)]


def test_history_strips_tool_result_details_and_normalizes_usage() -> None:
    msgs = [u("q"), a(tc("c1")), tr("c1", details={"diff": "x"}), a("done", usage={"input": 3})]
    out = history(msgs, **OPENAI)
    assert "details" not in out[2]
    assert out[1]["usage"] == ZERO_USAGE
    assert out[3]["usage"] == {
        "input": 3,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 3,
    }


# ---- 7.3 annotate_inter_session_messages -----------------------------------------------------


def inter(content: Any, **prov: Any) -> Msg:
    return u(content, provenance={"kind": "inter_session", **prov}, timestamp=5)


def test_inter_session_string_content() -> None:
    out = clawctx.history.annotate_inter_session_messages(
        [inter("hello", sourceSessionKey="agent:x")]
    )
    assert out.to_list() == [
        {
            "role": "user",
            "content": "[Inter-session message] sourceSession=agent:x\nhello",
            "provenance": {"kind": "inter_session", "sourceSessionKey": "agent:x"},
            "timestamp": 5,
        }
    ]


def test_inter_session_without_source_fields() -> None:
    out = clawctx.history.annotate_inter_session_messages([inter("hello")])
    assert out.to_list()[0]["content"] == "[Inter-session message]\nhello"


def test_inter_session_first_text_block_is_prefixed() -> None:
    msg = inter([img("AAA1"), txt("one"), txt("two")], sourceSessionKey="k")
    out = clawctx.history.annotate_inter_session_messages([msg]).to_list()
    assert out[0]["content"] == [
        img("AAA1"),
        txt("[Inter-session message] sourceSession=k\none"),
        txt("two"),
    ]


def test_inter_session_no_text_block_gets_prefix_block() -> None:
    out = clawctx.history.annotate_inter_session_messages(
        [inter([img("AAA1")], sourceSessionKey="k")]
    )
    assert out.to_list()[0]["content"] == [
        txt("[Inter-session message] sourceSession=k"),
        img("AAA1"),
    ]


@pytest.mark.parametrize(
    "content",
    [
        "[Inter-session message] sourceSession=k\nhello",
        "[Inter-session message]\nhello",
        [txt("[Inter-session message] sourceSession=k\nhello"), img("AAA1")],
    ],
)
def test_inter_session_already_prefixed_unchanged(content: Any) -> None:
    t = Transcript([inter(content, sourceSessionKey="k")])
    out = clawctx.history.annotate_inter_session_messages(t)
    if content == "[Inter-session message]\nhello":
        # Updated to OpenClaw 2026.3.13 (annotate_inter_session-031): only the exact prefix
        # (with its source fields) counts as already there.
        expected = "[Inter-session message] sourceSession=k\n[Inter-session message]\nhello"
        assert out.to_list()[0]["content"] == expected
    else:
        assert out is t


def test_inter_session_channel_and_tool() -> None:
    msg = inter(
        "ping",
        sourceSessionKey="agent:main:req",
        sourceChannel="telegram",
        sourceTool="sessions_send",
    )
    out = clawctx.history.annotate_inter_session_messages([msg]).to_list()
    assert out[0]["content"] == (
        "[Inter-session message] sourceSession=agent:main:req sourceChannel=telegram "
        "sourceTool=sessions_send\nping"
    )
    only_tool = clawctx.history.annotate_inter_session_messages(
        [inter("p", sourceTool="t")]
    ).to_list()
    assert only_tool[0]["content"] == "[Inter-session message] sourceTool=t\np"


def test_inter_session_only_user_inter_session_messages() -> None:
    t = Transcript(
        [
            u("hello", provenance={"kind": "direct", "sourceSessionKey": "k"}),
            a("reply", provenance={"kind": "inter_session"}),
            u("plain"),
        ]
    )
    assert clawctx.history.annotate_inter_session_messages(t) is t


# ---- drop_delivery_mirror_messages (later upstream; not in 2026.3.13) --------------------------


def test_drop_delivery_mirror_messages() -> None:
    mirror = a("m", provider="openclaw", model="delivery-mirror")
    other_model = a("k", provider="openclaw", model="gpt")
    other_provider = a("k", provider="anthropic", model="delivery-mirror")
    user_like = u("x", provider="openclaw", model="delivery-mirror")
    out = clawctx.history.drop_delivery_mirror_messages(
        [u("q"), mirror, other_model, other_provider, user_like]
    )
    assert out.to_list() == [u("q"), other_model, other_provider, user_like]
    t = Transcript([u("q"), other_model])
    assert clawctx.history.drop_delivery_mirror_messages(t) is t


# ---- 7.8 tool-call ids ------------------------------------------------------------------------


def ids_of(messages: Any) -> list[str]:
    found: list[str] = []
    for m in messages:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            found += [b["id"] for b in m["content"] if isinstance(b, dict) and "id" in b]
        for key in ("toolCallId", "toolUseId"):
            if key in m:
                found.append(m[key])
    return found


def test_ids_strict_valid_is_same_reference() -> None:
    t = Transcript([a(tc("call1")), tr("call1")])
    assert clawctx.history.sanitize_tool_call_ids(t, "strict", now_ms=NOW) is t


def test_ids_strict_pipe_and_colon_stripped_on_call_and_result() -> None:
    msgs = [u("q"), a(tc("call|item:123")), tr("call|item:123")]
    out = clawctx.history.sanitize_tool_call_ids(msgs, "strict", now_ms=NOW).to_list()
    assert out == [u("q"), a(tc("callitem123")), tr("callitem123")]


def test_ids_strict_distinct_for_colliding_ids() -> None:
    msgs = [a(tc("call_a|b"), tc("call_a:b")), tr("call_a|b"), tr("call_a:b")]
    out = clawctx.history.sanitize_tool_call_ids(msgs, "strict", now_ms=NOW).to_list()
    first, second, r1, r2 = ids_of(out)
    assert first != second
    assert (r1, r2) == (first, second)
    for cid in (first, second):
        assert clawctx.history.is_valid_tool_call_id(cid, "strict")
        assert "_" not in cid and "-" not in cid
    # makeUniqueToolId (src/agents/tool-call-id.ts): base, then base[:32] + sha256(raw)[:8].
    assert first == "callab"
    assert second == "callab" + hashlib.sha256(b"call_a:b").hexdigest()[:8]


def test_ids_strict_long_ids_distinct_and_at_most_40() -> None:
    one = "call_" + "a" * 60
    two = "call_" + "a" * 59 + "b"
    out = clawctx.history.sanitize_tool_call_ids([a(tc(one), tc(two)), tr(one), tr(two)], "strict")
    first, second, r1, r2 = ids_of(out)
    assert first != second
    assert (r1, r2) == (first, second)
    assert all(len(x) <= 40 and clawctx.history.is_valid_tool_call_id(x) for x in (first, second))
    assert first == "call" + "a" * 36
    assert second == ("call" + "a" * 36)[:32] + hashlib.sha256(two.encode()).hexdigest()[:8]


def test_ids_strict_whatsapp_login() -> None:
    raw = "whatsapp_login_1768799841527_1"
    out = clawctx.history.sanitize_tool_call_ids([a(tc(raw)), tr(raw)], "strict").to_list()
    assert ids_of(out) == ["whatsapplogin17687998415271"] * 2


def test_ids_strict9_distinct_length_nine_and_remapped() -> None:
    one, two = "call_abc|item:123", "call_abc|item:456"
    out = clawctx.history.sanitize_tool_call_ids([a(tc(one), tc(two)), tr(one), tr(two)], "strict9")
    first, second, r1, r2 = ids_of(out)
    assert first != second
    assert (r1, r2) == (first, second)
    for cid in (first, second):
        assert len(cid) == 9
        assert cid.isascii() and cid.isalnum()
        assert clawctx.history.is_valid_tool_call_id(cid, "strict9")
    assert first == "callabcit"
    assert second == sha9(two + ":0")


def test_ids_results_use_tool_use_id_too() -> None:
    msgs = [
        a(tc("id|1", kind="toolUse")),
        {"role": "toolResult", "toolUseId": "id|1", "content": []},
    ]
    out = clawctx.history.sanitize_tool_call_ids(msgs, "strict").to_list()
    assert out[0]["content"][0]["id"] == "id1"
    assert out[1]["toolUseId"] == "id1"


def test_ids_one_mapping_for_repeated_raw_id() -> None:
    msgs = [a(tc("x|1")), tr("x|1"), u("again"), a(tc("x|1")), tr("x|1")]
    out = clawctx.history.sanitize_tool_call_ids(msgs, "strict").to_list()
    assert ids_of(out) == ["x1"] * 4


def test_ids_other_messages_untouched() -> None:
    msgs = [u([{"type": "toolResult", "toolUseId": "a|b"}]), a(tc("ok1")), tr("ok1")]
    t = Transcript(msgs)
    assert clawctx.history.sanitize_tool_call_ids(t, "strict") is t


@pytest.mark.parametrize(
    ("raw", "mode", "expected"),
    [
        ("whatsapp_login_1768799841527_1", "strict", "whatsapplogin17687998415271"),
        ("call|item:123", "strict", "callitem123"),
        ("abc123", "strict", "abc123"),
        (None, "strict", "defaulttoolid"),
        ("", "strict", "defaulttoolid"),
        ("--|::", "strict", "sanitizedtoolid"),
        (None, "strict9", "defaultid"),
        ("", "strict9", "defaultid"),
        ("call_abc|item:123", "strict9", "callabcit"),
        ("abcdefghi", "strict9", "abcdefghi"),
        ("ab_c", "strict9", sha9("abc")),
        ("_-|", "strict9", sha9("sanitized")),
    ],
)
def test_sanitize_tool_call_id_vectors(raw: str | None, mode: str, expected: str) -> None:
    assert clawctx.history.sanitize_tool_call_id(raw, mode) == expected


def test_sanitize_tool_call_id_default_mode_is_strict() -> None:
    assert clawctx.history.sanitize_tool_call_id("a_b-c") == "abc"


@pytest.mark.parametrize(
    ("cid", "mode", "valid"),
    [
        ("abc123", "strict", True),
        ("abc-123", "strict", False),
        ("abc_123", "strict", False),
        ("", "strict", False),
        ("abcdef123", "strict9", True),
        ("abc", "strict9", False),
        ("abcdefghij", "strict9", False),
        ("abcdef_12", "strict9", False),
    ],
)
def test_is_valid_tool_call_id_vectors(cid: str, mode: str, valid: bool) -> None:
    assert clawctx.history.is_valid_tool_call_id(cid, mode) is valid


def test_tool_call_id_mode_rejects_unknown() -> None:
    with pytest.raises(ValueError):
        clawctx.history.sanitize_tool_call_id("x", "loose")
    with pytest.raises(ValueError):
        clawctx.history.sanitize_tool_call_ids([a(tc("x"))], "loose")


# ---- strip_thought_signatures (pi-embedded-helpers/bootstrap.ts: stripThoughtSignatures) ------


def test_thought_signatures_default_strips_msg_prefixed() -> None:
    msgs = [
        a(
            tc("c1", thought_signature="msg_abc"),
            tc("c2", thought_signature="keepme"),
            tc("c3", thoughtSignature="msg_camel"),
        )
    ]
    out = clawctx.history.strip_thought_signatures(msgs).to_list()
    assert out[0]["content"] == [
        tc("c1"),
        tc("c2", thought_signature="keepme"),
        tc("c3", thoughtSignature="msg_camel"),
    ]


def test_thought_signatures_default_leaves_other_roles() -> None:
    t = Transcript(
        [u([txt("x") | {"thought_signature": "msg_1"}]), a(tc("c1", thought_signature=7))]
    )
    assert clawctx.history.strip_thought_signatures(t) is t


def test_thought_signatures_base64_mode() -> None:
    msgs = [
        a(
            txt("a") | {"thought_signature": "c2lnbmF0dXJl"},
            txt("b") | {"thought_signature": "YQ=="},
            txt("c") | {"thought_signature": "YQ"},
            txt("d") | {"thought_signature": "not base64!"},
            txt("e") | {"thought_signature": "YR=="},
            txt("f") | {"thought_signature": ""},
            txt("g") | {"thought_signature": "c2ln-_8"},
            txt("h") | {"thoughtSignature": "not base64!"},
        )
    ]
    out = clawctx.history.strip_thought_signatures(msgs, allow_base64_only=True).to_list()
    assert out[0]["content"] == [
        txt("a") | {"thought_signature": "c2lnbmF0dXJl"},
        txt("b") | {"thought_signature": "YQ=="},
        txt("c") | {"thought_signature": "YQ"},
        txt("d"),
        txt("e"),
        txt("f"),
        txt("g") | {"thought_signature": "c2ln-_8"},
        txt("h") | {"thoughtSignature": "not base64!"},
    ]


def test_thought_signatures_camel_case() -> None:
    msgs = [
        a(
            tc("c1", thoughtSignature="not base64!"),
            tc("c2", thoughtSignature="c2lnbmF0dXJl"),
            tc("c3", thought_signature="@@"),
        )
    ]
    out = clawctx.history.strip_thought_signatures(
        msgs, allow_base64_only=True, include_camel_case=True
    )
    assert out.to_list()[0]["content"] == [
        tc("c1"),
        tc("c2", thoughtSignature="c2lnbmF0dXJl"),
        tc("c3"),
    ]
    only_camel = clawctx.history.strip_thought_signatures(
        [a(tc("c1", thoughtSignature="msg_1"), tc("c2", thoughtSignature="abc"))],
        include_camel_case=True,
    )
    assert only_camel.to_list()[0]["content"] == [tc("c1"), tc("c2", thoughtSignature="abc")]


# ---- 7.4 sanitize_message_blocks ---------------------------------------------------------------


def test_message_blocks_full_drops_blank_text() -> None:
    msgs = [u([txt(" ")]), a(txt("  \n"), txt("hi"), tc("c1")), a(txt("\t")), u("end")]
    out = clawctx.history.sanitize_message_blocks(msgs, sanitize_mode="full").to_list()
    assert out == [u([txt(" ")]), a(txt("hi"), tc("c1")), u("end")]


def test_message_blocks_images_only_keeps_blank_text() -> None:
    t = Transcript([u("q"), a(txt("  "), txt("hi")), a(txt(" "))])
    assert clawctx.history.sanitize_message_blocks(t, sanitize_mode="images-only") is t
    assert clawctx.history.sanitize_message_blocks(t) is t


@pytest.mark.parametrize("mode", ["full", "images-only"])
def test_message_blocks_errored_assistant_untouched(mode: str) -> None:
    t = Transcript([u("q"), a(txt(" "), stop="error", errorMessage="x"), a(stop="error")])
    assert clawctx.history.sanitize_message_blocks(t, sanitize_mode=mode) is t


def test_message_blocks_empty_assistant_dropped_in_full_mode() -> None:
    out = clawctx.history.sanitize_message_blocks([u("q"), a(), u("r")], sanitize_mode="full")
    assert out.to_list() == [u("q"), u("r")]


def test_message_blocks_aborted_assistant_is_sanitized() -> None:
    out = clawctx.history.sanitize_message_blocks(
        [a(txt(" "), thinking("t"), stop="aborted")], sanitize_mode="full"
    )
    assert out.to_list() == [a(thinking("t"), stop="aborted")]


@pytest.mark.parametrize("mode", ["full", "images-only"])
def test_message_blocks_tool_result_string_content_becomes_empty(mode: str) -> None:
    msgs = [
        a(tc("c1"), tc("c2")),
        {"role": "toolResult", "toolCallId": "c1", "content": "string output"},
        {"role": "toolResult", "toolCallId": "c2"},
        tr("c3", text=" "),
    ]
    out = clawctx.history.sanitize_message_blocks(msgs, sanitize_mode=mode).to_list()
    assert out == [
        msgs[0],
        {"role": "toolResult", "toolCallId": "c1", "content": []},
        {"role": "toolResult", "toolCallId": "c2", "content": []},
        msgs[3],
    ]


def test_message_blocks_strips_signatures_unless_preserved() -> None:
    msgs = [a(tc("c1", thought_signature="msg_1"), txt("x"))]
    # Updated to OpenClaw 2026.3.13 (images.ts): signatures are stripped in `full` mode only.
    out = clawctx.history.sanitize_message_blocks(msgs, sanitize_mode="full").to_list()
    assert out[0]["content"] == [tc("c1"), txt("x")]
    t = Transcript(msgs)
    assert clawctx.history.sanitize_message_blocks(t, preserve_signatures=True) is t
    assert clawctx.history.sanitize_message_blocks(t) is t
    full = clawctx.history.sanitize_message_blocks(
        t, sanitize_mode="full", preserve_signatures=True
    )
    assert full is t


def test_message_blocks_signature_options_passed_through() -> None:
    msgs = [
        a(
            tc("c1", thoughtSignature="bad!"),
            tc("c2", thought_signature="msg_abc"),
            tc("c3", thought_signature="msg_x"),
        )
    ]
    # Updated to OpenClaw 2026.3.13 (images.ts): signatures are stripped in `full` mode only.
    out = clawctx.history.sanitize_message_blocks(
        msgs,
        sanitize_mode="full",
        sanitize_thought_signatures={"allowBase64Only": True, "includeCamelCase": True},
    )
    # "msg_abc" is valid base64url (7 chars, zero trailing bits), so the base64 rule keeps it;
    # "msg_x" (5 chars) cannot be base64.
    assert out.to_list()[0]["content"] == [
        tc("c1"),
        tc("c2", thought_signature="msg_abc"),
        tc("c3"),
    ]


def test_message_blocks_preserved_signatures_keep_blank_text_with_thinking() -> None:
    keep = a(thinking("t", thinkingSignature="s"), txt(" "))
    drop = a(txt(" "), txt("x"))
    out = clawctx.history.sanitize_message_blocks(
        [keep, drop], sanitize_mode="full", preserve_signatures=True
    )
    # Updated to OpenClaw 2026.3.13 (images.ts): blank text goes even when signatures are
    # preserved (keeping it beside thinking is a later release's behaviour).
    assert out.to_list() == [a(thinking("t", thinkingSignature="s")), a(txt("x"))]


# ---- 7.7 drop_thinking_blocks ------------------------------------------------------------------


def test_drop_thinking_blocks() -> None:
    msgs = [
        u([thinking("user thinking is not touched")]),
        a(thinking("a"), txt("answer"), thinking("b")),
        a(thinking("only")),
        a("plain"),
    ]
    out = clawctx.history.drop_thinking_blocks(msgs).to_list()
    assert out == [msgs[0], a(txt("answer")), a(txt("")), a("plain")]


def test_drop_thinking_blocks_unchanged_is_same_reference() -> None:
    t = Transcript([u("q"), a(txt("thinking about it")), a(tc("c1"))])
    assert clawctx.history.drop_thinking_blocks(t) is t


# ---- strip_tool_result_details ---------------------------------------------------------------


def test_strip_tool_result_details() -> None:
    msgs = [
        a(tc("c1"), details={"keep": True}),
        tr("c1", details={"diff": "+x"}),
        tr("c2", details=None),
        tr("c3"),
    ]
    out = clawctx.history.strip_tool_result_details(msgs).to_list()
    assert out == [msgs[0], tr("c1"), tr("c2"), tr("c3")]
    t = Transcript([a(tc("c1"), details={"keep": True}), tr("c1")])
    assert clawctx.history.strip_tool_result_details(t) is t


# ---- 7.6 usage hygiene -------------------------------------------------------------------------


def test_zero_stale_usage_exact_snapshot_bytes() -> None:
    msgs = [a("old", usage=copy.deepcopy(FULL_USAGE)), summary(0), u("q")]
    out = clawctx.history.zero_stale_usage(msgs)
    assert out.to_list()[0] == a("old", usage=ZERO_USAGE)
    assert (
        b'"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,'
        b'"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
    ) in out.to_json()


def test_zero_stale_usage_uses_last_summary_and_timestamps() -> None:
    msgs = [
        a("1", usage={"input": 1}, timestamp=100),
        summary(150),
        a("2", usage={"input": 2}, timestamp=200),
        summary(300),
        a("3", usage={"input": 3}, timestamp=250),
        a("4", usage={"input": 4}, timestamp=300),
        a("5", usage={"input": 5}, timestamp=301),
        a("6", timestamp=10),
        u("u", usage={"input": 9}, timestamp=1),
    ]
    out = clawctx.history.zero_stale_usage(msgs).to_list()
    assert [m.get("usage") for m in out] == [
        ZERO_USAGE,
        None,
        ZERO_USAGE,
        None,
        ZERO_USAGE,
        ZERO_USAGE,
        {"input": 5},
        None,
        {"input": 9},
    ]


def test_zero_stale_usage_iso_summary_timestamp() -> None:
    msgs = [
        summary("2026-01-01T00:00:10.000Z"),
        a("at", usage={"input": 1}, timestamp=NOW + 10_000),
        a("after", usage={"input": 1}, timestamp=NOW + 10_001),
    ]
    out = clawctx.history.zero_stale_usage(msgs).to_list()
    assert out[1]["usage"] == ZERO_USAGE
    assert out[2]["usage"] == {"input": 1}


def test_zero_stale_usage_without_summary_is_same_reference() -> None:
    t = Transcript([u("q"), a("x", usage={"input": 1})])
    assert clawctx.history.zero_stale_usage(t) is t


def test_normalize_usage() -> None:
    msgs = [
        a("missing"),
        a("partial", usage={"input": 10, "output": 5}),
        a("total given", usage={"input": 1, "output": 1, "totalTokens": 99}),
        a("cost", usage={"input": 1, "cost": {"input": 0.5}, "extra": "kept"}),
        a("junk", usage={"input": "x", "output": None, "cacheRead": 2}),
        u("user", usage={"input": 1}),
    ]
    out = clawctx.history.normalize_usage(msgs).to_list()
    assert [m.get("usage") for m in out] == [
        ZERO_USAGE,
        {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 99},
        {
            "input": 1,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 1,
            # Updated to OpenClaw 2026.3.13 (google.ts ensureAssistantUsageSnapshots): the cost
            # total defaults to the sum, and the snapshot replaces the usage (no extra keys).
            "cost": {"input": 0.5, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
        },
        {"input": 0, "output": 0, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 2},
        {"input": 1},
    ]


def test_normalize_usage_complete_usage_is_same_reference() -> None:
    t = Transcript([u("q"), a("x", usage=copy.deepcopy(FULL_USAGE)), a("y", usage=ZERO_USAGE)])
    assert clawctx.history.normalize_usage(t) is t


# ---- 7.10 sanitize_google_turn_ordering --------------------------------------------------------


def test_google_turn_ordering_prepends_bootstrap() -> None:
    out = clawctx.history.sanitize_google_turn_ordering([a("hello"), u("q")], now_ms=NOW).to_list()
    assert out == [{"role": "user", "content": BOOTSTRAP, "timestamp": NOW}, a("hello"), u("q")]
    assert (
        stringify(out[0]) == b'{"role":"user","content":"(session bootstrap)","timestamp":%d}' % NOW
    )


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [u("q"), a("x")],
        [u(BOOTSTRAP), a("x")],
        [tr("c1"), a("x")],
        [summary(1), a("x")],
        [{"role": "custom", "customType": "note", "content": "c"}, a("x")],
    ],
)
def test_google_turn_ordering_unchanged(messages: list[Msg]) -> None:
    t = Transcript(messages)
    assert clawctx.history.sanitize_google_turn_ordering(t, now_ms=NOW) is t


# ---- downgrade_openai_reasoning (pi-embedded-helpers/openai.ts: downgradeOpenAIReasoningBlocks) -


def test_downgrade_reasoning_orphan_signature_removed() -> None:
    sig = '{"type":"reasoning","id":"rs_1"}'
    msgs = [
        a(thinking("t", thinkingSignature=sig)),
        a(txt("before"), thinking("t", thinkingSignature=sig)),
        a(thinking("t", thinkingSignature=sig), txt("")),
    ]
    out = clawctx.history.downgrade_openai_reasoning(msgs).to_list()
    # Updated to OpenClaw 2026.3.13 (openai.ts downgradeOpenAIReasoningBlocks): the unfollowed
    # reasoning block itself is dropped (and an assistant left empty with it); any following
    # non-thinking block, even blank text, keeps it.
    assert out == [a(txt("before")), msgs[2]]


def test_downgrade_reasoning_followed_signature_kept() -> None:
    sig = '{"type":"reasoning","id":"rs_1"}'
    t = Transcript(
        [
            a(thinking("t", thinkingSignature=sig), txt("answer")),
            a(thinking("t", thinkingSignature=sig), tc("c1")),
            a(thinking("t", thinkingSignature="")),
            a(thinking("t", thinkingSignature="s1")),
            a(thinking("t")),
        ]
    )
    assert clawctx.history.downgrade_openai_reasoning(t) is t
    # Updated to OpenClaw 2026.3.13: errored and aborted turns are not exempt.
    errored = [a(thinking("t", thinkingSignature=sig), stop=s) for s in ("aborted", "error")]
    assert clawctx.history.downgrade_openai_reasoning(errored).to_list() == []


def test_downgrade_reasoning_only_the_unfollowed_block() -> None:
    s1 = '{"type":"reasoning","id":"rs_1"}'
    s2 = '{"type":"reasoning.encrypted","id":"rs_2"}'
    msgs = [a(thinking("1", thinkingSignature=s1), txt("x"), thinking("2", thinkingSignature=s2))]
    out = clawctx.history.downgrade_openai_reasoning(msgs).to_list()
    # Updated to OpenClaw 2026.3.13: the unfollowed block is dropped, not just its signature.
    assert out[0]["content"] == [thinking("1", thinkingSignature=s1), txt("x")]


def test_history_openai_responses_downgrades_reasoning() -> None:
    # Updated to OpenClaw 2026.3.13: only a signature holding an OpenAI reasoning item counts,
    # and its unfollowed block is dropped.
    sig = '{"type":"reasoning","id":"rs_1"}'
    msgs = [
        u("q"),
        a(
            thinking("t", thinkingSignature=sig),
            txt("a"),
            thinking("u", thinkingSignature=sig),
            stop="stop",
        ),
        u("again"),
    ]
    assert history(msgs, safe=False, **OPENAI)[1]["content"] == [
        thinking("t", thinkingSignature=sig),
        txt("a"),
    ]
    completions = history(
        msgs, provider="openai", model_api="openai-completions", model_id="gpt-4o"
    )
    assert completions[1]["content"] == msgs[1]["content"]


def test_history_openai_responses_downgrades_function_call_pairs() -> None:
    sig = '{"type":"reasoning","id":"rs_1"}'
    paired = tc("call_1|fc_1")
    msgs = [
        u("q"),
        a(paired, stop="toolUse"),
        tr("call_1|fc_1"),
        a(thinking("t", thinkingSignature=sig), tc("call_2|fc_2"), stop="toolUse"),
        tr("call_2|fc_2"),
        u("again"),
    ]
    out = history(msgs, **OPENAI)
    assert out[1]["content"] == [tc("call_1")]
    assert out[2]["toolCallId"] == "call_1"
    # After a reasoning item the pair is replayable and kept.
    assert out[3]["content"][1] == tc("call_2|fc_2")
    assert out[4]["toolCallId"] == "call_2|fc_2"


# ---- sanitize_session_history with a session ---------------------------------------------------


def entries_of(session: clawctx.Session, custom_type: str) -> list[Msg]:
    return [
        e
        for e in session.entries()
        if e.get("type") == "custom" and e.get("customType") == custom_type
    ]


def make_session(ids: Callable[[], str], clock: Callable[[], int]) -> clawctx.Session:
    return clawctx.Session.in_memory(session_id="sess-1", cwd="/w", now_ms=clock, id_factory=ids)


def test_model_snapshot_appended_once_and_on_change(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    msgs = [u("q"), a("x")]
    clawctx.sanitize_session_history(msgs, session=s, now_ms=NOW, **ANTHROPIC)
    snaps = entries_of(s, "model-snapshot")
    assert [e["data"] for e in snaps] == [
        {
            "timestamp": NOW,
            "provider": "anthropic",
            "modelApi": "anthropic-messages",
            "modelId": "claude-opus-4-5",
        }
    ]
    clawctx.sanitize_session_history(msgs, session=s, now_ms=NOW + 1, **ANTHROPIC)
    assert len(entries_of(s, "model-snapshot")) == 1
    changed = {**ANTHROPIC, "model_id": "claude-sonnet-4-5"}
    clawctx.sanitize_session_history(msgs, session=s, now_ms=NOW + 2, **changed)
    snaps = entries_of(s, "model-snapshot")
    assert len(snaps) == 2
    assert snaps[1]["data"] == {
        "timestamp": NOW + 2,
        "provider": "anthropic",
        "modelApi": "anthropic-messages",
        "modelId": "claude-sonnet-4-5",
    }
    assert snaps[1]["parentId"] == snaps[0]["id"]
    # Compared with the newest snapshot only: switching back records again.
    clawctx.sanitize_session_history(msgs, session=s, now_ms=NOW + 3, **ANTHROPIC)
    assert len(entries_of(s, "model-snapshot")) == 3
    assert len(s.entries()) == 3


def test_model_snapshot_not_written_without_model_info(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    clawctx.sanitize_session_history([u("q"), a("x")], session=s, now_ms=NOW)
    assert s.entries() == []


def test_model_snapshot_missing_fields_compare_as_empty(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    clawctx.sanitize_session_history([u("q")], session=s, now_ms=NOW, provider="openai")
    clawctx.sanitize_session_history(
        [u("q")], session=s, now_ms=NOW, provider="openai", model_api="", model_id=""
    )
    assert len(entries_of(s, "model-snapshot")) == 1
    clawctx.sanitize_session_history(
        [u("q")], session=s, now_ms=NOW, provider="openai", model_id="gpt-5"
    )
    assert len(entries_of(s, "model-snapshot")) == 2


def test_model_snapshot_written_to_file(tmp_path: Path, ids: Callable[[], str]) -> None:
    path = tmp_path / "s.jsonl"
    s = clawctx.Session.create(
        path, cwd="/w", session_id="file-1", id_factory=ids, now_ms=lambda: 0
    )
    s.append_message(u("q", timestamp=1))
    s.append_message(a("x", timestamp=2, stopReason="stop"))
    before = path.read_text().splitlines()
    clawctx.sanitize_session_history([u("q"), a("x")], session=s, now_ms=NOW, **OPENAI)
    lines = path.read_text().splitlines()
    assert lines[: len(before)] == before
    assert len(lines) == len(before) + 1
    entry = json.loads(lines[-1])
    assert entry["type"] == "custom"
    assert entry["customType"] == "model-snapshot"
    assert entry["data"] == {
        "timestamp": NOW,
        "provider": "openai",
        "modelApi": "openai-responses",
        "modelId": "gpt-5",
    }


def test_google_bootstrap_marker_appended_once(
    ids: Callable[[], str], clock: Callable[[], int], caplog: pytest.LogCaptureFixture
) -> None:
    s = make_session(ids, clock)
    msgs = [a("hello there"), u("q")]
    with caplog.at_level(logging.WARNING, logger="clawctx"):
        out = history(msgs, session=s, **GOOGLE)
    assert out[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW}
    assert roles(out) == ["user", "assistant", "user"]
    markers = entries_of(s, "google-turn-ordering-bootstrap")
    assert [e["data"] for e in markers] == [{"timestamp": NOW}]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["google turn ordering fixup: prepended user bootstrap (sessionId=sess-1)"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="clawctx"):
        again = history(msgs, session=s, now_ms=NOW + 5, **{k: v for k, v in GOOGLE.items()})
    assert again[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW + 5}
    assert len(entries_of(s, "google-turn-ordering-bootstrap")) == 1
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


@pytest.mark.parametrize("model_api", ["google-generative-ai", "google-gemini-cli"])
def test_google_bootstrap_marker_not_written_when_history_starts_with_user(
    model_api: str, ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    out = history([u("q"), a("x")], session=s, provider="google", model_api=model_api, model_id="g")
    assert roles(out) == ["user", "assistant"]
    assert entries_of(s, "google-turn-ordering-bootstrap") == []
    out = history([a("x")], session=s, provider="google", model_api=model_api, model_id="g")
    assert roles(out) == ["user", "assistant"]
    assert len(entries_of(s, "google-turn-ordering-bootstrap")) == 1


def test_google_ordering_for_non_google_api_writes_no_marker(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    custom = TranscriptPolicy(apply_google_turn_ordering=True)
    out = history(
        [a("x")], policy=custom, session=s, provider="openrouter", model_api="openai-completions"
    )
    assert out[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW}
    assert entries_of(s, "google-turn-ordering-bootstrap") == []


def test_no_google_ordering_for_other_providers() -> None:
    assert roles(history([a("x"), u("q")], **OPENAI)) == ["assistant", "user"]


MESSY: list[Msg] = [
    u("fwd", provenance={"kind": "inter_session", "sourceSessionKey": "agent:main:req"}),
    a(
        txt(" "),
        thinking("t", thinkingSignature="s1"),
        tc("call|1", thought_signature="msg_1", thoughtSignature="@@"),
        tc("bad name", "bad name"),
        usage={"input": 5},
    ),
    {"role": "toolResult", "toolCallId": "call|1", "toolName": "read", "content": "str"},
    tr("orphan|9", details={"x": 1}),
    a("mirror", provider="openclaw", model="delivery-mirror"),
    summary(5),
    u([txt("a")]),
    u([txt("b")]),
    a(txt(" ")),
]


@pytest.mark.parametrize(
    "family",
    [
        OPENAI,
        ANTHROPIC,
        GOOGLE,
        DEVSTRAL,
        {"provider": "github-copilot", "model_api": "openai-completions", "model_id": "claude-x"},
    ],
)
def test_history_never_mutates_input(family: Msg) -> None:
    msgs = copy.deepcopy(MESSY)
    out = history(msgs, **family)
    assert msgs == MESSY
    assert out != MESSY


def test_history_input_transcript_unchanged_and_untouched_bytes_preserved() -> None:
    raw_user = b'{"role": "user", "content": "caf\\u00e9",   "timestamp": 1.0}'
    raw_done = (
        b'{ "role":"assistant","content":[{"type":"text","text":"ok"}],"stopReason":"stop",'
        + (b'"usage":' + stringify(FULL_USAGE) + b"}")
    )
    raw_fix = b'{"role":"assistant","content":[{"type":"text","text":"needs usage"}]}'
    t = Transcript.from_json(b"[" + raw_user + b"," + raw_done + b"," + raw_fix + b"]")
    before = t.to_json()
    out = clawctx.sanitize_session_history(t, now_ms=NOW, **OPENAI)
    assert t.to_json() == before
    data = out.to_json()
    assert data.startswith(b"[" + raw_user + b"," + raw_done + b",")
    assert out.to_list()[2]["usage"] == ZERO_USAGE


@pytest.mark.parametrize("family", [OPENAI, ANTHROPIC, GOOGLE])
def test_history_clean_transcript_is_same_object(family: Msg) -> None:
    t = Transcript(
        [
            u("q", timestamp=1),
            a(tc("c1"), usage=copy.deepcopy(FULL_USAGE), stopReason="toolUse"),
            tr("c1"),
            a("done", usage=copy.deepcopy(FULL_USAGE), stopReason="stop"),
        ]
    )
    assert clawctx.sanitize_session_history(t, now_ms=NOW, **family) is t


# ---- 7.12 detach_orphaned_trailing_user ----------------------------------------------------------


def test_detach_orphaned_user_moves_leaf_to_parent(
    ids: Callable[[], str], clock: Callable[[], int], caplog: pytest.LogCaptureFixture
) -> None:
    s = make_session(ids, clock)
    u1 = s.append_message(u("first", timestamp=1))
    a1 = s.append_message(a("answer", timestamp=2, stopReason="stop"))
    u2 = s.append_message(u("orphan", timestamp=3))
    with caplog.at_level(logging.WARNING, logger="clawctx"):
        report = detach_orphaned_trailing_user(s, run_id="run-7")
    assert report.detached is True
    assert report.entry_id == u2
    assert report.new_leaf_id == a1
    assert s.leaf_id == a1
    expected = "Removed orphaned user message to prevent consecutive user turns. runId=run-7 sessionId=sess-1"
    assert report.warning == expected
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [expected]
    assert report.messages is not None
    assert report.messages.to_list() == [
        u("first", timestamp=1),
        a("answer", timestamp=2, stopReason="stop"),
    ]
    assert s.get_entry(u2) is not None
    assert [e["id"] for e in s.entries()] == [u1, a1, u2]
    u3 = s.append_message(u("new prompt", timestamp=4))
    assert s.get_entry(u3)["parentId"] == a1
    assert sorted(e["id"] for e in s.children(a1)) == sorted([u2, u3])


def test_detach_orphaned_root_user_resets_leaf(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    u1 = s.append_message(u("only", timestamp=1))
    report = detach_orphaned_trailing_user(s, run_id="r")
    assert report.detached is True
    assert report.entry_id == u1
    assert report.new_leaf_id is None
    assert s.leaf_id is None
    assert report.messages is not None and report.messages.to_list() == []
    u2 = s.append_message(u("again", timestamp=2))
    assert s.get_entry(u2)["parentId"] is None
    assert len(s.entries()) == 2


def test_detach_orphaned_user_file_keeps_orphan(tmp_path: Path, ids: Callable[[], str]) -> None:
    path = tmp_path / "s.jsonl"
    s = clawctx.Session.create(
        path, cwd="/w", session_id="file-1", id_factory=ids, now_ms=lambda: 0
    )
    s.append_message(u("first", timestamp=1))
    a1 = s.append_message(a("answer", timestamp=2, stopReason="stop"))
    u2 = s.append_message(u("orphan", timestamp=3))
    before = path.read_bytes()
    report = detach_orphaned_trailing_user(s, run_id="r1")
    assert report.detached
    assert report.warning == (
        "Removed orphaned user message to prevent consecutive user turns. runId=r1 sessionId=file-1"
    )
    assert path.read_bytes() == before
    u3 = s.append_message(u("next", timestamp=4))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line.get("id") for line in lines[-2:]] == [u2, u3]
    assert lines[-1]["parentId"] == a1
    assert lines[-2]["parentId"] == a1
    reopened = clawctx.Session.open(path, read_only=True)
    assert roles(reopened.context().messages) == ["user", "assistant", "user"]
    assert reopened.context().messages.to_list()[-1]["content"] == "next"


@pytest.mark.parametrize("kind", ["assistant", "custom", "empty", "toolResult"])
def test_detach_non_user_leaf(kind: str, ids: Callable[[], str], clock: Callable[[], int]) -> None:
    s = make_session(ids, clock)
    if kind != "empty":
        s.append_message(u("q", timestamp=1))
    if kind == "assistant":
        s.append_message(a("x", stopReason="stop"))
    elif kind == "custom":
        s.append_custom_entry("note", {"x": 1})
    elif kind == "toolResult":
        s.append_message(a(tc("c1"), stopReason="toolUse"))
        s.append_message(tr("c1"))
    leaf = s.leaf_id
    report = detach_orphaned_trailing_user(s, run_id="r")
    assert report == clawctx.history.OrphanedUserReport(detached=False)
    assert report.warning is None and report.messages is None
    assert s.leaf_id == leaf


# ---- validate_for_provider ---------------------------------------------------------------------

FAMILY_ARGS: dict[str, Msg] = {
    "anthropic": {"provider": "anthropic", "model_api": "anthropic-messages"},
    "openai": {"provider": "openai", "model_api": "openai-responses"},
    "gemini": {"provider": "google", "model_api": "google-generative-ai"},
}


def violations(messages: Any, family: str) -> set[tuple[int, str]]:
    found = clawctx.validate_for_provider(messages, **FAMILY_ARGS[family])
    return {(v.index, v.rule) for v in found}


@pytest.mark.parametrize(
    ("kwargs", "family"),
    [
        ({"provider": "anthropic", "model_api": "anthropic-messages"}, "anthropic"),
        ({"provider": "amazon-bedrock", "model_api": "bedrock-converse-stream"}, "anthropic"),
        ({"provider": "anthropic"}, "anthropic"),
        ({"provider": "openai", "model_api": "openai-responses"}, "openai"),
        ({"model_api": "openai-completions"}, "openai"),
        ({"provider": "google", "model_api": "google-generative-ai"}, "gemini"),
        ({"model_api": "google-gemini-cli"}, "gemini"),
        ({"provider": "mistral"}, "other"),
    ],
)
def test_provider_family(kwargs: Msg, family: str) -> None:
    assert clawctx.history.provider_family(**kwargs) == family


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("anthropic", {(0, "first-turn-not-user")}),
        ("gemini", {(0, "first-turn-not-user")}),
        ("openai", set()),
    ],
)
def test_violation_first_turn_not_user(family: str, expected: set[tuple[int, str]]) -> None:
    assert violations([a("hello"), u("q")], family) == expected


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_violation_call_without_result(family: str) -> None:
    # Unanswered at the end of the request: nothing answers it.
    assert violations([u("q"), a(tc("c1"))], family) == {(1, "call-without-result")}
    # ... unless the prompt follows, which makes pi-ai send a synthetic result.
    found = clawctx.validate_for_provider(
        [u("q"), a(tc("c1"))], **FAMILY_ARGS[family], followed_by_user=True
    )
    assert found == []
    # pi-ai answers c2 with a synthetic result when the next assistant turn arrives.
    msgs = [u("q"), a(tc("c1"), tc("c2")), tr("c1"), a("x")]
    assert violations(msgs, family) == set()
    # A result after an intervening turn does not answer the call: it is an orphan.
    msgs = [u("q"), a(tc("c1")), u("other"), a("x"), tr("c1")]
    assert violations(msgs, family) == {(4, "result-without-call")}


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_violation_result_without_call(family: str) -> None:
    assert violations([u("q"), tr("cx")], family) == {(1, "result-without-call")}
    assert violations([u("q"), a(tc("c1")), tr("c1"), tr("c2")], family) == {
        (3, "result-without-call")
    }


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
@pytest.mark.parametrize("stop", ["error", "aborted"])
def test_violation_result_answering_skipped_assistant(family: str, stop: str) -> None:
    msgs = [u("q"), a(tc("c1"), stop=stop), tr("c1"), u("retry")]
    assert violations(msgs, family) == {(2, "result-without-call")}
    # Without the result the skipped turn is fine.
    assert violations([u("q"), a(tc("c1"), stop=stop), u("retry")], family) == set()


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_violation_duplicate_call_id(family: str) -> None:
    msgs = [u("q"), a(tc("c1")), tr("c1"), u("again"), a(tc("c1")), tr("c1")]
    assert violations(msgs, family) == {(4, "duplicate-call-id")}


def test_duplicate_call_id_is_checked_for_every_provider() -> None:
    # Mistral's id normaliser maps one id to one 9-character id, so the request repeats it.
    msgs = [u("q"), a(tc("c1")), tr("c1"), u("again"), a(tc("c1")), tr("c1")]
    found = clawctx.validate_for_provider(msgs, provider="mistral")
    assert [(v.index, v.rule) for v in found] == [(4, "duplicate-call-id")]


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_violation_duplicate_result(family: str) -> None:
    msgs = [u("q"), a(tc("c1")), tr("c1"), tr("c1")]
    assert violations(msgs, family) == {(3, "duplicate-result")}


@pytest.mark.parametrize(
    ("family", "expected"),
    [("anthropic", {(1, "invalid-call-id")}), ("openai", set()), ("gemini", set())],
)
def test_violation_invalid_call_id(family: str, expected: set[tuple[int, str]]) -> None:
    # The target model's own turn is sent with its id as it is ...
    own = {
        "provider": FAMILY_ARGS[family].get("provider"),
        "api": FAMILY_ARGS[family].get("model_api"),
    }
    msgs = [u("q"), {**a(tc("call|1")), **own}, tr("call|1")]
    assert violations(msgs, family) == expected
    # ... another model's turn has its ids normalised by pi-ai's Anthropic converter.
    assert violations([u("q"), a(tc("call|1")), tr("call|1")], family) == set()
    ok = [u("q"), a(tc("toolu_01-AbC")), tr("toolu_01-AbC")]
    assert violations(ok, family) == set()


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        ("gemini", {(0, "first-turn-not-user")}),
        ("anthropic", {(0, "first-turn-not-user")}),
        ("openai", set()),
    ],
)
def test_violation_function_call_first(family: str, expected: set[tuple[int, str]]) -> None:
    assert violations([a(tc("c1")), tr("c1"), a("done")], family) == expected


def test_violation_result_without_id_and_details() -> None:
    found = clawctx.validate_for_provider(
        [u("q"), a(tc("c1")), tr("c1"), {"role": "toolResult", "content": []}],
        provider="openai",
        model_api="openai-responses",
    )
    assert [(v.index, v.rule) for v in found] == [(3, "result-without-call")]
    found = clawctx.validate_for_provider([u("q"), a(tc("c1"))], provider="anthropic")
    assert "c1" in found[0].detail


@pytest.mark.parametrize("family", sorted(FAMILY_ARGS))
def test_clean_transcripts_have_no_violations(family: str) -> None:
    clean = [
        {"role": "custom", "customType": "note", "content": "ctx", "display": True},
        u("q"),
        a(tc("c1"), tc("c2", "exec")),
        tr("c2", "exec"),
        tr("c1"),
        a("done"),
        {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0},
        u("more"),
        a(tc("c3"), stop="error"),
        u("retry"),
        a(thinking("x"), txt("fine"), stop="aborted"),
        summary(1),
        a("last"),
    ]
    assert violations(clean, family) == set()
    assert violations([], family) == set()


# ---- property: the hot path yields transcripts every provider family accepts ----------------------

ID_POOL = ("call_1", "call_2", "call|a", "call:b", "toolu-01", "fc|x:y-1", "c3")
NAMES = ("read", "exec")
FAMILIES: dict[str, Msg] = {
    "anthropic": {
        "provider": "anthropic",
        "model_api": "anthropic-messages",
        "model_id": "claude-x",
    },
    "openai": {"provider": "openai", "model_api": "openai-responses", "model_id": "gpt-5"},
    "gemini": {"provider": "google", "model_api": "google-generative-ai", "model_id": "gemini-x"},
}


def _lead_block(kind: int) -> Msg:
    return [txt("answer"), txt("  "), thinking("considering")][kind]


def _assistant(lead: list[int], calls: list[tuple[str, str]], stop: str | None) -> Msg:
    blocks = [_lead_block(k) for k in lead] + [tc(cid, name) for cid, name in calls]
    return a(*blocks, stop=stop, usage={"input": 3, "output": 2})


def _result(cid: str, name: str, is_error: bool) -> Msg:
    return tr(cid, name, isError=is_error)


_calls = st.lists(st.tuples(st.sampled_from(ID_POOL), st.sampled_from(NAMES)), max_size=3)
_assistants = st.builds(
    _assistant,
    st.lists(st.integers(0, 2), max_size=2),
    _calls,
    st.sampled_from([None, "stop", "toolUse", "length", "error", "aborted"]),
)
_results = st.builds(_result, st.sampled_from(ID_POOL), st.sampled_from(NAMES), st.booleans())
_singles = st.one_of(
    st.sampled_from(["plain", "blocks"]).map(
        lambda k: u("hello") if k == "plain" else u([txt("hello")])
    ),
    _assistants,
    _results,
    st.just(0).map(
        lambda _: {"role": "custom", "customType": "note", "content": "c", "display": True}
    ),
    st.just(0).map(
        lambda _: {
            "role": "bashExecution",
            "command": "ls",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    ),
    st.just(0).map(lambda _: summary(0)),
)


@st.composite
def _exchange(draw: st.DrawFn) -> list[Msg]:
    """An assistant followed by results for some of its calls (maybe repeated, reordered)."""
    msg = draw(_assistants)
    calls = [(b["id"], b["name"]) for b in msg["content"] if b.get("type") == "toolCall"]
    answered = draw(st.lists(st.sampled_from(calls), max_size=len(calls) + 2)) if calls else []
    results = [_result(cid, name, False) for cid, name in answered]
    results += draw(st.lists(_results, max_size=1))
    results = draw(st.permutations(results))
    if results and draw(st.booleans()):
        # The same result stored twice in a row (a retried write).
        results.append(copy.deepcopy(results[-1]))
    return [msg, *results]


@st.composite
def _clean_exchange(draw: st.DrawFn) -> list[Msg]:
    """A well-formed turn (user, calls, their results in order, answer), sometimes with the
    last result stored twice."""
    ids = draw(st.lists(st.sampled_from(ID_POOL), min_size=1, max_size=3, unique=True))
    results = [tr(cid) for cid in ids]
    if draw(st.booleans()):
        results.append(copy.deepcopy(results[-1]))
    tail = [a("done", stop="stop")] if draw(st.booleans()) else []
    return [u("go"), a(*[tc(cid) for cid in ids], stop="toolUse"), *results, *tail]


@st.composite
def _histories(draw: st.DrawFn) -> list[Msg]:
    chunk = st.one_of(_singles.map(lambda m: [m]), _exchange(), _clean_exchange())
    chunks = draw(st.lists(chunk, max_size=8))
    messages = [m for chunk in chunks for m in chunk]
    return [{**m, "timestamp": 1000 * (i + 1)} for i, m in enumerate(messages)]


@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=150, deadline=None)
@given(messages=_histories(), limit=st.integers(1, 5))
def test_hot_path_output_is_valid_for_provider(
    family: str, messages: list[Msg], limit: int
) -> None:
    args = FAMILIES[family]
    # provider_safe and validate_turns: clawctx's passes for a transcript every provider
    # accepts (the default is OpenClaw 2026.3.13's sanitizeSessionHistory alone).
    out = clawctx.sanitize_session_history(
        messages, now_ms=0, provider_safe=True, validate_turns=True, **args
    )
    out = clawctx.limit_history_turns(out, limit)
    out = clawctx.history.sanitize_tool_use_result_pairing(out, now_ms=0)
    note(f"final transcript: {out.to_list()}")
    found = clawctx.validate_for_provider(
        out, provider=args["provider"], model_api=args["model_api"]
    )
    assert [(v.index, v.rule, v.detail) for v in found] == []


def test_session_writes_can_be_deferred_to_the_caller(tmp_path: Path) -> None:
    from clawctx import Session, sanitize_session_history

    session = Session.create(tmp_path / "s.jsonl", cwd="/tmp", now_ms=1)
    session.append_message({"role": "user", "content": "hi", "timestamp": 1})
    before = len(session)
    writes: list[Any] = []
    sanitize_session_history(
        session.context().messages,
        provider="anthropic",
        model_api="anthropic-messages",
        model_id="claude",
        session=session,
        pending_writes=writes,
    )
    assert len(session) == before and len(writes) == 1
    writes[0]()
    snapshot = session.latest_custom_entry(["model-snapshot"])
    assert snapshot is not None and snapshot["data"]["modelId"] == "claude"


# ---- applyGoogleTurnOrderingFix (OpenClaw 2026.3.13 src/agents/pi-embedded-runner/google.ts) --


@pytest.mark.parametrize("model_api", [None, "google-vertex", "Google-Generative-AI", "openai"])
def test_google_fix_acts_only_for_the_two_google_apis(
    model_api: str | None, ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    s = make_session(ids, clock)
    t = Transcript([a("x")])
    fix = clawctx.history.apply_google_turn_ordering_fix(t, model_api=model_api, session=s)
    assert fix.messages is t
    assert fix.did_prepend is False
    assert entries_of(s, "google-turn-ordering-bootstrap") == []


def test_google_fix_warns_and_marks_once_per_session(
    ids: Callable[[], str], clock: Callable[[], int], caplog: pytest.LogCaptureFixture
) -> None:
    s = make_session(ids, clock)
    with caplog.at_level(logging.WARNING, logger="clawctx"):
        first = clawctx.history.apply_google_turn_ordering_fix(
            [a("x")], model_api="google-gemini-cli", session=s, session_id="abc", now_ms=NOW
        )
        second = clawctx.history.apply_google_turn_ordering_fix(
            [a("y")], model_api="google-gemini-cli", session=s, session_id="abc", now_ms=NOW + 1
        )
    assert first.did_prepend and second.did_prepend
    assert first.messages.to_list()[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["google turn ordering fixup: prepended user bootstrap (sessionId=abc)"]
    assert [e["data"] for e in entries_of(s, "google-turn-ordering-bootstrap")] == [
        {"timestamp": NOW}
    ]


def test_google_fix_without_session_only_prepends() -> None:
    fix = clawctx.history.apply_google_turn_ordering_fix(
        [a("x")], model_api="google-generative-ai", now_ms=NOW
    )
    assert fix.did_prepend is True
    assert roles(fix.messages) == ["user", "assistant"]


# ---- provider_safe: clawctx's passes on top of OpenClaw 2026.3.13 -----------------------------


def test_provider_safe_passes_are_opt_in_under_the_recorded_release() -> None:
    msgs = [
        a("from a mirror"),
        u("q"),
        a(tc("call_1"), tc("call_1"), stop="toolUse"),
        tr("call_1"),
        tr("call_1"),
    ]
    with clawctx.compat("openclaw-2026.3.13"):
        plain = history(msgs, **ANTHROPIC)
    # Upstream: no bootstrap turn for Anthropic, repeated ids kept.
    assert roles(plain)[0] == "assistant"
    assert [b["id"] for b in plain[2]["content"]] == ["call1", "call1"]
    assert history(msgs, safe=False, **ANTHROPIC) == plain
    # The default repairs what upstream leaves invalid, with the same passes.
    default = history(msgs, **ANTHROPIC)
    assert default[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW}
    assert clawctx.validate_for_provider(default, provider="anthropic") == []
    safe = history(msgs, provider_safe=True, validate_turns=True, **ANTHROPIC)
    assert safe[0] == {"role": "user", "content": BOOTSTRAP, "timestamp": NOW}
    ids_ = [b["id"] for b in safe[3]["content"]]
    assert len(set(ids_)) == 2
    assert clawctx.validate_for_provider(safe, provider="anthropic") == []


def test_validate_turns_adds_the_runner_validation() -> None:
    msgs = [u([txt("a")]), u([txt("b")]), a("x")]
    assert roles(history(msgs, **ANTHROPIC)) == ["user", "user", "assistant"]
    merged = history(msgs, validate_turns=True, **ANTHROPIC)
    assert merged[0]["content"] == [txt("a"), txt("b")]


# ---- 2026.3.13 details the conformance cases pin ----------------------------------------------


def test_base64_signature_rule_follows_node_decoding() -> None:
    opts = {"allowBase64Only": True, "includeCamelCase": True}
    msgs = [
        a(
            tc("c1", thought_signature="c2ln bmF0dXJl"),  # whitespace is ignored
            tc("c2", thought_signature="sig3536"),  # trailing bits set: not canonical
            tc("c3", thought_signature=7),  # not a string: stripped
            tc("c4", thoughtSignature="YQ=="),
        )
    ]
    out = clawctx.history.sanitize_message_blocks(
        msgs, sanitize_mode="full", sanitize_thought_signatures=opts
    ).to_list()
    assert out[0]["content"] == [
        tc("c1", thought_signature="c2ln bmF0dXJl"),
        tc("c2"),
        tc("c3"),
        tc("c4", thoughtSignature="YQ=="),
    ]


def test_usage_snapshot_reads_provider_aliases_and_drops_other_keys() -> None:
    msgs = [
        a("x", usage={"prompt_tokens": 7, "completion_tokens": 3, "cached_tokens": 2, "n": 1}),
        a("y", usage={"input": -4, "output": 1}),
        a("z", usage="junk"),
    ]
    out = clawctx.history.normalize_usage(msgs).to_list()
    assert [m["usage"] for m in out] == [
        {"input": 7, "output": 3, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 12},
        {"input": 0, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1},
        ZERO_USAGE,
    ]


def test_empty_tool_call_ids_are_left_for_the_input_repair() -> None:
    msgs = [u("q"), a(tc(""), tc("call_1"), stop="toolUse"), tr("call_1")]
    out = clawctx.history.sanitize_tool_call_ids(msgs, "strict").to_list()
    assert [b["id"] for b in out[1]["content"]] == ["", "call1"]


def test_inter_session_prefix_trims_fields_and_skips_blank_ones() -> None:
    prov = {"kind": "inter_session", "sourceSessionKey": " ", "sourceChannel": " web "}
    out = clawctx.history.annotate_inter_session_messages([u("hi", provenance=prov)]).to_list()
    assert out[0]["content"] == "[Inter-session message] sourceChannel=web\nhi"
