"""Provider-side context management as request options (issue 31 items 1 and 3): Anthropic
``context_management`` edits with their beta headers, OpenAI Responses ``context_management``,
``prompt_cache_key`` and the ``/responses/compact`` body. Bodies are checked against the
installed SDKs' request types (pydantic ``TypeAdapter``) and sent once through the real clients
over ``httpx.MockTransport``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawctx.wire import (
    PayloadError,
    build_compact_request,
    build_request_payload,
)

from ._sdk import _materialize, _unknown_keys

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pydantic = pytest.importorskip("pydantic")

CLAUDE: dict[str, Any] = {
    # Not on the SDK's deprecated list (it warns for those, and warnings fail the tests).
    "id": "claude-sonnet-4-6",
    "name": "Claude Sonnet 4.6",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "maxTokens": 64000,
    "contextWindow": 200000,
}
GPT: dict[str, Any] = {
    "id": "gpt-5",
    "name": "GPT-5",
    "api": "openai-responses",
    "provider": "openai",
    "baseUrl": "https://api.openai.com/v1",
    "reasoning": True,
    "input": ["text"],
    "maxTokens": 128000,
    "contextWindow": 400000,
}
TOOLS = [
    {"name": "read", "description": "Read a file", "parameters": {"type": "object"}},
    {"name": "exec", "description": "Run a command", "parameters": {"type": "object"}},
]


def _history(model: dict[str, Any]) -> list[dict[str, Any]]:
    origin = {"api": model["api"], "provider": model["provider"], "model": model["id"]}
    return [
        {"role": "user", "content": "look at a.txt", "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "call_1", "name": "browser_open", "arguments": {}},
            ],
            "stopReason": "toolUse",
            **origin,
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "browser_open",
            "content": [{"type": "text", "text": "page"}],
            "isError": False,
        },
        {"role": "user", "content": "thanks", "timestamp": 2},
    ]


def _context(model: dict[str, Any]) -> dict[str, Any]:
    return {"system_prompt": "You are helpful.", "messages": _history(model), "tools": TOOLS}


def _validate(adapter_type: Any, body: dict[str, Any]) -> None:
    """The body validates under the SDK type and every key it holds is one the type knows."""
    adapter = pydantic.TypeAdapter(adapter_type)
    validated = _materialize(adapter.validate_python(body))
    allowed = {"temperature"}
    unknown = [k for k in _unknown_keys(body, validated) if k.rsplit(".", 1)[-1] not in allowed]
    # Message items are Iterables the adapter validates lazily: their keys are checked by the
    # payload suite; here the new top-level fields matter.
    assert not [k for k in unknown if not k.startswith(("$.messages", "$.input"))], unknown


def _anthropic_beta_type() -> Any:
    from anthropic.types.beta.message_create_params import MessageCreateParamsStreaming

    return MessageCreateParamsStreaming


def _edits(payload: Any) -> list[dict[str, Any]]:
    edits: list[dict[str, Any]] = payload.to_dict()["context_management"]["edits"]
    return edits


# --- Anthropic ---------------------------------------------------------------------------------


def test_without_the_option_the_body_is_unchanged_and_needs_no_header() -> None:
    plain = build_request_payload(CLAUDE, _context(CLAUDE), now_ms=0)
    assert plain.headers == {}
    assert "context_management" not in plain.to_dict()
    nulled = build_request_payload(CLAUDE, _context(CLAUDE), {"contextManagement": None}, now_ms=0)
    assert nulled.to_json() == plain.to_json()


@pytest.mark.parametrize(
    ("window", "trigger", "at_least"),
    [(200_000, 60_000, 12_500), (1_000_000, 300_000, 50_000), (100_000, 50_000, 12_500)],
)
def test_auto_derives_openclaw_server_pruning_from_the_context_window(
    window: int, trigger: int, at_least: int
) -> None:
    model = {**CLAUDE, "contextWindow": window}
    payload = build_request_payload(model, _context(CLAUDE), {"contextManagement": "auto"})
    assert _edits(payload) == [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": trigger},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": at_least},
            "exclude_tools": [],
            "clear_tool_inputs": False,
        }
    ]
    assert payload.headers == {"anthropic-beta": "context-management-2025-06-27"}
    _validate(_anthropic_beta_type(), payload.to_dict())


def test_auto_excludes_current_and_historical_tools_by_allow_and_deny_lists() -> None:
    denied = build_request_payload(
        CLAUDE,
        _context(CLAUDE),
        {"contextManagement": {"auto": True, "toolsDeny": ["EXEC"]}},
    )
    assert _edits(denied)[0]["exclude_tools"] == ["exec"]
    # Outside the allow list: the current `exec` and `browser_open` of the history.
    allowed = build_request_payload(
        CLAUDE,
        _context(CLAUDE),
        {"contextManagement": {"auto": True, "toolsAllow": ["read"]}},
    )
    assert _edits(allowed)[0]["exclude_tools"] == ["exec", "browser_open"]
    globbed = build_request_payload(
        CLAUDE,
        _context(CLAUDE),
        {"contextManagement": {"auto": True, "toolsDeny": ["browser*"]}},
    )
    assert _edits(globbed)[0]["exclude_tools"] == ["browser_open"]


def test_auto_needs_the_context_window() -> None:
    model = {k: v for k, v in CLAUDE.items() if k != "contextWindow"}
    with pytest.raises(PayloadError, match="contextWindow"):
        build_request_payload(model, _context(CLAUDE), {"contextManagement": "auto"})


def test_a_model_spec_carries_its_context_window() -> None:
    from clawctx.engine import ModelSpec

    spec = ModelSpec(
        provider="anthropic", api="anthropic-messages", id="claude-x", context_window=400_000
    )
    payload = build_request_payload(spec, _context(CLAUDE), {"contextManagement": "auto"})
    assert _edits(payload)[0]["trigger"]["value"] == 120_000


def test_explicit_settings_map_to_the_sdk_fields_in_the_required_order() -> None:
    options = {
        "contextManagement": {
            # Given in another order on purpose: the body orders them.
            "compact": {
                "trigger": 150_000,
                "instructions": "Keep file paths.",
                "pauseAfterCompaction": True,
            },
            "clearToolUses": {
                "trigger": {"type": "tool_uses", "value": 30},
                "keep": 5,
                "clearAtLeast": 20_000,
                "excludeTools": ["read"],
                "clearToolInputs": ["exec"],
            },
            "clearThinking": {"keep": 2},
        }
    }
    payload = build_request_payload(CLAUDE, _context(CLAUDE), options)
    assert _edits(payload) == [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "tool_uses", "value": 30},
            "keep": {"type": "tool_uses", "value": 5},
            "clear_at_least": {"type": "input_tokens", "value": 20_000},
            "exclude_tools": ["read"],
            "clear_tool_inputs": ["exec"],
        },
        {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": 150_000},
            "instructions": "Keep file paths.",
            "pause_after_compaction": True,
        },
    ]
    assert payload.headers == {"anthropic-beta": "context-management-2025-06-27,compact-2026-01-12"}
    _validate(_anthropic_beta_type(), payload.to_dict())
    from anthropic.types.beta import BetaContextManagementConfigParam

    _validate(BetaContextManagementConfigParam, payload.to_dict()["context_management"])


@pytest.mark.parametrize(
    ("setting", "edit", "beta"),
    [
        ({"clearToolUses": True}, {"type": "clear_tool_uses_20250919"}, "context-management"),
        (
            {"clearThinking": {"keep": "all"}},
            {"type": "clear_thinking_20251015", "keep": {"type": "all"}},
            "context-management",
        ),
        ({"compact": True}, {"type": "compact_20260112"}, "compact-2026-01-12"),
    ],
)
def test_each_edit_alone_takes_the_provider_defaults(
    setting: dict[str, Any], edit: dict[str, Any], beta: str
) -> None:
    payload = build_request_payload(CLAUDE, _context(CLAUDE), {"contextManagement": setting})
    assert _edits(payload) == [edit]
    assert payload.headers["anthropic-beta"].startswith(beta)
    assert "," not in payload.headers["anthropic-beta"]
    _validate(_anthropic_beta_type(), payload.to_dict())


def test_explicit_edits_pass_through_unchanged() -> None:
    edits = [{"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 1}}]
    payload = build_request_payload(
        CLAUDE, _context(CLAUDE), {"contextManagement": {"edits": edits}}
    )
    assert _edits(payload) == edits
    assert payload.headers == {"anthropic-beta": "context-management-2025-06-27"}


def test_beta_headers_merge_with_the_ones_model_and_options_ask_for() -> None:
    model = {**CLAUDE, "headers": {"anthropic-beta": "extended-cache-ttl-2025-04-11"}}
    options = {
        "contextManagement": {"compact": True, "clearToolUses": True},
        "headers": {"anthropic-beta": "context-management-2025-06-27, files-api-2025-04-14"},
    }
    payload = build_request_payload(model, _context(CLAUDE), options)
    assert payload.headers == {
        "anthropic-beta": "extended-cache-ttl-2025-04-11,context-management-2025-06-27,"
        "files-api-2025-04-14,compact-2026-01-12"
    }


def test_the_bytes_path_and_the_value_path_carry_the_same_edits() -> None:
    # A Transcript (stored bytes) and a list of dicts reach the two writers of the messages.
    from clawctx.history import Transcript

    options = {"contextManagement": "auto"}
    from_dicts = build_request_payload(CLAUDE, _context(CLAUDE), options, now_ms=0)
    transcript = Transcript.from_json(json.dumps(_history(CLAUDE)))
    context = {**_context(CLAUDE), "messages": transcript}
    from_bytes = build_request_payload(CLAUDE, context, options, now_ms=0)
    assert from_bytes.to_json() == from_dicts.to_json()
    assert from_bytes.headers == from_dicts.headers


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("manual", 'expected "auto"'),
        ({"clearToolUses": {"trigger": -5}}, "non-negative integer"),
        ({"clearToolUses": {"keep": 2.5}}, "non-negative integer"),
        ({"clearToolUses": {"keep": True}}, "non-negative integer"),
        ({"clearToolUses": {"trigger": {"type": "turns", "value": 3}}}, "trigger.type"),
        ({"clearToolUses": {"clear_at_least": 3}}, "unknown setting"),
        ({"clearThinking": {"keep": "most"}}, "clearThinking.keep"),
        ({"compact": {"instructions": "  "}}, "non-blank"),
        ({"compact": {"pauseAfterCompaction": "yes"}}, "bool"),
        ({"compact": 1}, "true or an object"),
        ({}, "no edit given"),
        ({"compactThreshold": 1000}, "OpenAI Responses"),
        ({"auto": True, "clearToolUses": True}, "either auto or clearToolUses"),
        ({"toolsDeny": ["exec"]}, "only apply to auto"),
        ({"auto": True, "toolsAllow": "read"}, "list of tool names"),
        ({"edits": "clear"}, "edits must be a list"),
    ],
)
def test_bad_option_values_raise_payload_error(option: Any, message: str) -> None:
    with pytest.raises(PayloadError, match=message):
        build_request_payload(CLAUDE, _context(CLAUDE), {"contextManagement": option})


def test_other_apis_refuse_the_options() -> None:
    completions = {**GPT, "api": "openai-completions"}
    with pytest.raises(PayloadError, match="not supported for api"):
        build_request_payload(completions, _context(GPT), {"contextManagement": "auto"})
    with pytest.raises(PayloadError, match="promptCacheKey"):
        build_request_payload(CLAUDE, _context(CLAUDE), {"promptCacheKey": "k"})


def test_anthropic_client_sends_the_body_and_the_beta_header() -> None:
    payload = build_request_payload(
        CLAUDE,
        _context(CLAUDE),
        {"contextManagement": {"auto": True, "toolsDeny": ["exec"], "compact": True}},
    )
    body = payload.to_dict()
    seen: list[Any] = []
    httpx = getattr(anthropic._base_client, "httpx2", None) or pytest.importorskip("httpx")
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": CLAUDE["id"],
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }

    def handler(request: Any) -> Any:
        seen.append(request)
        return httpx.Response(200, json=reply)

    client = anthropic.Anthropic(
        api_key="sk-test",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    sent = {**body, "stream": False}
    client.beta.messages.create(**sent, extra_headers=payload.headers)
    (request,) = seen
    assert request.url.path == "/v1/messages"
    assert json.loads(request.content) == sent
    assert request.headers["anthropic-beta"] == ("context-management-2025-06-27,compact-2026-01-12")


# --- OpenAI Responses --------------------------------------------------------------------------


def _responses_type() -> Any:
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    return ResponseCreateParamsStreaming


def test_compact_threshold_gives_the_compaction_entry() -> None:
    payload = build_request_payload(
        GPT, _context(GPT), {"contextManagement": {"compactThreshold": 200_000}}
    )
    body = payload.to_dict()
    assert body["context_management"] == [{"type": "compaction", "compact_threshold": 200_000}]
    assert payload.headers == {}
    _validate(_responses_type(), body)
    bare = build_request_payload(GPT, _context(GPT), {"contextManagement": {"compaction": True}})
    assert bare.to_dict()["context_management"] == [{"type": "compaction"}]


@pytest.mark.parametrize(
    "option",
    ["auto", {"compactThreshold": 0}, {"compactThreshold": "big"}, {"clearToolUses": True}, {}],
)
def test_bad_responses_options_raise(option: Any) -> None:
    with pytest.raises(PayloadError):
        build_request_payload(GPT, _context(GPT), {"contextManagement": option})


def test_prompt_cache_key_replaces_the_session_key_in_its_place() -> None:
    by_session = build_request_payload(GPT, _context(GPT), {"sessionId": "sess-1"}).to_dict()
    assert by_session["prompt_cache_key"] == "sess-1"
    explicit = build_request_payload(
        GPT, _context(GPT), {"sessionId": "sess-1", "promptCacheKey": "tenant-7"}
    ).to_dict()
    assert explicit["prompt_cache_key"] == "tenant-7"
    assert list(explicit) == list(by_session)
    added = build_request_payload(GPT, _context(GPT), {"promptCacheKey": "tenant-7"}).to_dict()
    assert added["prompt_cache_key"] == "tenant-7"
    _validate(_responses_type(), added)
    with pytest.raises(PayloadError, match="promptCacheKey"):
        build_request_payload(GPT, _context(GPT), {"promptCacheKey": ""})


def test_compact_request_body_holds_only_what_the_endpoint_takes() -> None:
    from openai.types.responses.response_compact_params import ResponseCompactParams

    options = {
        "sessionId": "sess-1",
        "previousResponseId": "resp_9",
        "contextManagement": {"compactThreshold": 1000},
        "serviceTier": "flex",
    }
    payload = build_compact_request(GPT, _context(GPT), options)
    body = payload.to_dict()
    create = build_request_payload(GPT, _context(GPT), options).to_dict()
    assert body["input"] == create["input"]
    assert body == {
        "model": "gpt-5",
        "input": create["input"],
        "prompt_cache_key": "sess-1",
        "service_tier": "flex",
        "previous_response_id": "resp_9",
    }
    adapter = pydantic.TypeAdapter(ResponseCompactParams)
    validated = _materialize(adapter.validate_python(body))
    assert not [k for k in _unknown_keys(body, validated) if not k.startswith("$.input")]
    codex = {**GPT, "api": "openai-codex-responses", "provider": "openai-codex"}
    codex_body = build_compact_request(codex, _context(GPT)).to_dict()
    assert codex_body["instructions"] == "You are helpful."
    with pytest.raises(PayloadError, match="OpenAI Responses endpoint"):
        build_compact_request(CLAUDE, _context(CLAUDE))
    with pytest.raises(PayloadError, match="previousResponseId"):
        build_compact_request(GPT, _context(GPT), {"previousResponseId": 5})


def _openai_client(seen: list[Any], reply: dict[str, Any]) -> Any:
    httpx = getattr(openai._base_client, "httpx2", None) or pytest.importorskip("httpx")

    def handler(request: Any) -> Any:
        seen.append(request)
        return httpx.Response(200, json=reply)

    return openai.OpenAI(
        api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )


def test_openai_client_sends_the_create_and_compact_bodies() -> None:
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 11,
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        "usage": usage,
    }
    seen: list[Any] = []
    client = _openai_client(seen, response)
    options = {"contextManagement": {"compactThreshold": 50_000}, "promptCacheKey": "k-1"}
    body = {**build_request_payload(GPT, _context(GPT), options).to_dict(), "stream": False}
    client.responses.create(**body)
    assert seen[-1].url.path == "/v1/responses"
    sent = json.loads(seen[-1].content)
    assert sent["context_management"] == [{"type": "compaction", "compact_threshold": 50_000}]
    assert sent["prompt_cache_key"] == "k-1"
    assert sent == body

    compacted = {
        "id": "cmp_1",
        "object": "response.compaction",
        "created_at": 1,
        "output": [{"type": "compaction", "id": "c1", "encrypted_content": "enc"}],
        "usage": usage,
    }
    seen.clear()
    client = _openai_client(seen, compacted)
    compact_body = build_compact_request(GPT, _context(GPT), {"sessionId": "s"}).to_dict()
    result = client.responses.compact(**compact_body)
    assert seen[-1].url.path == "/v1/responses/compact"
    assert json.loads(seen[-1].content) == compact_body
    assert result.output[0].type == "compaction"
