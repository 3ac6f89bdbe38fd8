"""The public payload API beyond the recorded cases: inputs (Transcript, list, ModelSpec),
the result object, errors, and ``PreparedRequest.request_payload``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import ClawctxError, Transcript
from clawctx.wire import PayloadError, RequestPayload, build_request_payload, transform_messages

from ._sdk import sdk_problems

SONNET: dict[str, Any] = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "maxTokens": 64000,
}
GPT: dict[str, Any] = {
    **SONNET,
    "id": "gpt-4o",
    "name": "GPT-4o",
    "api": "openai-responses",
    "provider": "openai",
    "baseUrl": "https://api.openai.com/v1",
    "reasoning": False,
}


def _assistant(content: list[dict[str, Any]], model: dict[str, Any] = SONNET) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": model["api"],
        "provider": model["provider"],
        "model": model["id"],
        "stopReason": "toolUse",
        "timestamp": 2,
    }


MESSAGES = [
    {"role": "user", "content": "list files", "timestamp": 1},
    _assistant(
        [
            {"type": "thinking", "thinking": "look around", "thinkingSignature": "sig"},
            {"type": "toolCall", "id": "call_1|fc_9", "name": "bash", "arguments": {"c": "ls"}},
        ],
        GPT,
    ),
    {
        "role": "toolResult",
        "toolCallId": "call_1|fc_9",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a.txt"}],
        "isError": False,
        "timestamp": 3,
    },
]


def test_transcript_and_list_inputs_give_the_same_body() -> None:
    ctx = {"system_prompt": "Be brief.", "messages": MESSAGES}
    from_list = build_request_payload(SONNET, ctx, now_ms=5).to_dict()
    from_transcript = build_request_payload(
        SONNET, {**ctx, "messages": Transcript(MESSAGES)}, now_ms=5
    ).to_dict()
    assert from_list == from_transcript
    # Replayed from another provider: thinking became text, the id was normalised for both
    # the call and its result, and the cache breakpoint sits on the last user block.
    assistant = from_list["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "look around"}
    assert assistant[1]["id"] == "call_1_fc_9"
    result = from_list["messages"][2]["content"][0]
    assert result["tool_use_id"] == "call_1_fc_9"
    assert result["cache_control"] == {"type": "ephemeral"}
    assert sdk_problems("anthropic-messages", from_list) == []


def test_to_json_is_the_same_body_as_bytes() -> None:
    other = {**GPT, "id": "gpt-4.1"}  # same provider, other model: thinking replayed as text
    payload = build_request_payload(other, {"messages": MESSAGES}, {"sessionId": "s1"})
    assert isinstance(payload, RequestPayload)
    assert payload.api == "openai-responses"
    call = payload.to_dict()["input"][2]
    assert call["type"] == "function_call" and call["call_id"] == "call_1" and "id" not in call
    raw = payload.to_json()
    assert isinstance(raw, bytes) and b" " not in raw[:20]
    assert json.loads(raw) == payload.to_dict()
    assert payload.to_dict()["prompt_cache_key"] == "s1"
    assert "RequestPayload" in repr(payload)


def test_agent_messages_go_through_convert_to_llm() -> None:
    bash = {
        "role": "bashExecution",
        "command": "ls",
        "output": "a.txt",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 4,
    }
    body = build_request_payload(SONNET, {"messages": [bash]}).to_dict()
    assert body["messages"][0]["role"] == "user"
    assert "ls" in json.dumps(body["messages"][0]["content"])


def test_lone_surrogates_are_removed_like_sanitize_surrogates() -> None:
    body = build_request_payload(
        SONNET, {"system_prompt": "a\ud800b", "messages": [{"role": "user", "content": "x\udc00y"}]}
    ).to_dict()
    assert body["system"][0]["text"] == "ab"
    assert body["messages"][0]["content"][0]["text"] == "xy"


def test_replayed_lone_surrogates_are_dropped_so_the_body_is_utf8() -> None:
    # The two payload deviations: pi-ai replays a thinking block's lone surrogate (in the
    # Responses reasoning item's summary, and in transformMessages' output) as it is.
    upstream_text = "\udc00 leading low"
    with pytest.raises(UnicodeEncodeError):
        json.dumps(upstream_text, ensure_ascii=False).encode("utf-8")
    signature = json.dumps(
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": upstream_text}],
            "encrypted_content": "gAAAA",
        }
    )
    thinking = {"type": "thinking", "thinking": upstream_text, "thinkingSignature": signature}
    replayed = _assistant([thinking, {"type": "text", "text": "done"}], GPT)
    context = {"messages": [{"role": "user", "content": "hi", "timestamp": 1}, replayed]}
    body = build_request_payload(GPT, context).to_json()
    decoded = json.loads(body.decode("utf-8"))
    reasoning = next(item for item in decoded["input"] if item.get("type") == "reasoning")
    assert reasoning["summary"][0]["text"] == " leading low"
    assert "\\udc00" not in body.decode("utf-8")

    sonnet_turn = _assistant([thinking, {"type": "text", "text": "done"}], SONNET)
    sonnet_turn["stopReason"] = "stop"
    # safe=False: a lone assistant turn would get a user turn in front by default.
    out = transform_messages([sonnet_turn], SONNET, safe=False)
    assert out[0]["content"][0]["thinking"] == " leading low"
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # raises if a surrogate survived


def test_where_pi_ai_throws_a_payload_error_is_raised() -> None:
    bad = _assistant([{"type": "thinking", "thinking": "t", "thinkingSignature": "nope"}], GPT)
    with pytest.raises(PayloadError, match="is not valid JSON") as info:
        build_request_payload(GPT, {"messages": [bad]})
    assert isinstance(info.value, ClawctxError) and isinstance(info.value, ValueError)


def test_unsupported_api_and_bad_input_are_typed_errors() -> None:
    with pytest.raises(PayloadError, match="unsupported api: bedrock-converse-stream"):
        build_request_payload({**SONNET, "api": "bedrock-converse-stream"}, {"messages": []})
    with pytest.raises(PayloadError, match="model"):
        build_request_payload({"name": "x"}, {"messages": []})
    with pytest.raises(TypeError):
        build_request_payload(SONNET, {"messages": "not a list"})
    with pytest.raises(PayloadError, match="normalizer"):
        transform_messages([], SONNET, "nope")


def test_model_spec_is_accepted() -> None:
    spec = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
    body = build_request_payload(spec, {"messages": [{"role": "user", "content": "hi"}]})
    # No maxTokens on a ModelSpec: pi-ai's 32000 cap, a third of it as Anthropic's default.
    assert body.to_dict()["max_tokens"] == 10666


def test_transform_messages_answers_orphaned_calls() -> None:
    call = _assistant([{"type": "toolCall", "id": "c|1", "name": "bash", "arguments": {}}])
    out = transform_messages(
        [call, {"role": "user", "content": "next", "timestamp": 9}], GPT, "anthropic", now_ms=7
    )
    assert [m["role"] for m in out] == ["assistant", "toolResult", "user"]
    assert out[0]["content"][0]["id"] == "c_1"
    assert out[1]["toolCallId"] == "c_1" and out[1]["timestamp"] == 7 and out[1]["isError"]


def test_prepared_request_payload_for_the_pipeline_model(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pipeline = clawctx.ContextPipeline(
        model=clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
        workspace_dir=workspace,
        system_prompt=clawctx.SystemPromptParams(workspace_dir=str(workspace)),
    )
    prepared = pipeline.prepare(
        clawctx.demo_session_path(), clawctx.PromptRequest(text="what next?")
    )
    body = prepared.request_payload()
    assert body["model"] == "claude-sonnet-4-5"
    assert body["system"][0]["text"] == prepared.system_prompt
    assert len(body["messages"]) >= 2
    last = body["messages"][-1]["content"][-1]
    assert last["text"].endswith("what next?") and last["cache_control"] == {"type": "ephemeral"}
    assert sdk_problems("anthropic-messages", body) == []
    with_tools = prepared.request_payload(
        {"maxTokens": 100},
        tools=[{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
    )
    assert with_tools["max_tokens"] == 100
    assert with_tools["tools"][0]["input_schema"] == {
        "type": "object",
        "properties": {},
        "required": [],
    }


def test_sdk_check_catches_unknown_keys_and_bad_values() -> None:
    from pydantic import ValidationError

    body = build_request_payload(SONNET, {"messages": [{"role": "user", "content": "hi"}]})
    good = body.to_dict()
    assert sdk_problems("anthropic-messages", good) == []
    assert sdk_problems("anthropic-messages", {**good, "bogus": 1}) == ["$.bogus"]
    bad_block = {**good, "messages": [{"role": "user", "content": [{"type": "nope"}]}]}
    with pytest.raises(ValidationError):
        sdk_problems("anthropic-messages", bad_block)
    gemini = {**SONNET, "id": "gemini-2.5-flash", "api": "google-generative-ai"}
    google = build_request_payload(gemini, {"messages": [{"role": "user", "content": "hi"}]})
    assert sdk_problems("google-generative-ai", google.to_dict()) == []
    with pytest.raises(ValidationError):
        sdk_problems("google-generative-ai", {**google.to_dict(), "bogus": 1})
