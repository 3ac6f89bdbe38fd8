"""OpenAI Chat Completions through the real ``openai`` SDK (issue 28, items 1 and 4): its
objects (``ChatCompletionChunk`` events, ``ChatCompletion`` bodies, the SDK's ``Stream``) read
by ``parse_response`` as the wire events are, and the loop for real: two turns with a tool
call over an ``httpx.MockTransport`` replaying Chat Completions SSE; the second request carries
the first turn, the session file is valid after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session, sanitize_tool_call_id
from clawctx.wire import read_response, validate_request_body

from ._sdk_loop import TOOLS, Replay, demo_pipeline, tool_result
from .test_parse_response import CASES, CLOCK_MS, _ids

openai = pytest.importorskip("openai", reason="the openai SDK (test extra)")

CHAT = [c for c in CASES if c["input"]["api"] == "openai-completions"]
MODEL = clawctx.ModelSpec("openai", "openai-completions", "gpt-4o", context_window=128_000)


@pytest.mark.parametrize("case", CHAT, ids=_ids(CHAT))
def test_sdk_chunk_objects_read_as_the_wire_events(case: dict[str, Any]) -> None:
    from openai.types.chat import ChatCompletionChunk

    inp = case["input"]
    if any("error" in e for e in inp["events"]):
        pytest.skip("the SDK's Stream raises on an error chunk before yielding it")
    from pydantic import ValidationError

    try:
        chunks = [ChatCompletionChunk.model_validate(e) for e in inp["events"]]
    except ValidationError as exc:  # e.g. a finish_reason outside the SDK's Literal
        pytest.skip(f"the SDK's types refuse these chunks: {exc.errors()[0]['msg']}")
    parsed = read_response(inp["model"], chunks, now_ms=CLOCK_MS)
    assert parsed.message == case["expected"]["message"]
    assert parsed.events == case["expected"]["events"]


def test_a_chat_completion_body_reads_as_its_stream() -> None:
    from openai.types.chat import ChatCompletion

    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "Reading it.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    }
    model = {
        "id": "gpt-4o",
        "api": "openai-completions",
        "provider": "openai",
        "cost": {"input": 2.5, "output": 10, "cacheRead": 1.25, "cacheWrite": 0},
    }
    stream = [
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": "Reading it."}}],
        },
        {
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, **body["choices"][0]["message"]["tool_calls"][0]}
                        ]
                    },
                }
            ],
        },
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
            "usage": body["usage"],
        },
    ]
    from_body = clawctx.parse_response(model, body, now_ms=CLOCK_MS)
    assert from_body == clawctx.parse_response(model, stream, now_ms=CLOCK_MS)
    assert from_body == clawctx.parse_response(
        model, ChatCompletion.model_validate(body), now_ms=CLOCK_MS
    )
    assert from_body["content"] == [
        {"type": "text", "text": "Reading it."},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.txt"}},
    ]
    assert from_body["usage"]["input"] == 20 and from_body["usage"]["cacheRead"] == 100
    assert from_body["stopReason"] == "toolUse"


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o",
        "choices": [choice],
        **extra,
    }


def test_two_turns_with_a_tool_call_through_the_real_sdk(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
    replies = [
        _sse(
            [
                _chunk({"role": "assistant", "content": "Let me read "}),
                _chunk({"content": "the notes first."}),
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_A1",
                                "type": "function",
                                "function": {"name": "read", "arguments": '{"path": '},
                            }
                        ]
                    }
                ),
                _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"notes.md"}'}}]}),
                _chunk({}, "tool_calls"),
                {**_chunk({}), "choices": [], "usage": usage},
            ]
        ),
        _sse([_chunk({"content": "Ship on Friday."}), _chunk({}, "stop", usage=usage)]),
    ]
    replay = Replay(openai, "/chat/completions", replies)
    client = openai.OpenAI(
        api_key="test-key", base_url="https://api.openai.test/v1", http_client=replay.http_client()
    )
    pipeline, session, path = demo_pipeline(tmp_path, MODEL)
    sent = replay.sent

    first = pipeline.prepare(session, clawctx.PromptRequest(text="What do the notes say?"))
    stream = client.chat.completions.create(**first.request_payload(tools=TOOLS))
    reply = clawctx.parse_response(MODEL, stream)
    assert reply["content"] == [
        {"type": "text", "text": "Let me read the notes first."},
        {"type": "toolCall", "id": "call_A1", "name": "read", "arguments": {"path": "notes.md"}},
    ]
    assert reply["stopReason"] == "toolUse" and reply["usage"]["input"] == 900
    result = tool_result("call_A1", "Ship on Friday.", reply["timestamp"])
    assert len(pipeline.record_turn(session, first, [reply, result])) == 3

    second = pipeline.prepare(session, clawctx.PromptRequest(text="When do we ship?"))
    stream = client.chat.completions.create(**second.request_payload(tools=TOOLS))
    pipeline.record_turn(session, second, [stream])  # the SDK stream, read by record_turn

    assert len(sent) == 2
    for body in sent:
        assert validate_request_body(body, "openai-completions") == []
    one, two = sent[0]["messages"], sent[1]["messages"]
    # The first turn byte for byte, then the reply and the result as pi-ai sends them, the
    # call id through OpenClaw 2026.3.13's strict sanitizer (letters and digits).
    sent_id = sanitize_tool_call_id("call_A1", "strict")
    assert two[: len(one)] == one
    assert two[len(one)] == {
        "role": "assistant",
        "content": "Let me read the notes first.",
        "tool_calls": [
            {
                "id": sent_id,
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"notes.md"}'},
            }
        ],
    }
    assert two[len(one) + 1] == {
        "role": "tool",
        "content": "Ship on Friday.",
        "tool_call_id": sent_id,
    }
    reopened = Session.open(path, read_only=True)
    assert reopened.skipped_lines == []
    last = reopened.context().messages.to_list()[-1]
    assert last["content"] == [{"type": "text", "text": "Ship on Friday."}]
    assert clawctx.doctor(path, providers=["openai"]).ok


def test_a_chat_stream_cut_before_its_finish_reason_fails_safely() -> None:
    model = {"id": "gpt-4o", "api": "openai-completions", "provider": "openai"}
    cut = [_chunk({"content": "Half an ans"})]
    safe = clawctx.parse_response(model, cut, now_ms=CLOCK_MS)
    assert safe["stopReason"] == "error" and "finish_reason" in safe["errorMessage"]
    assert safe["content"] == [{"type": "text", "text": "Half an ans"}]
    # pi-ai 0.58.3 (the SDK's Stream) ends such a stream as finished.
    recorded = clawctx.parse_response(model, cut, now_ms=CLOCK_MS, safe=False)
    assert recorded["stopReason"] == "stop" and "errorMessage" not in recorded
    # An error chunk: the SDK's APIError message, with OpenRouter's raw upstream detail.
    error = {
        "error": {
            "message": "Provider returned error",
            "code": 502,
            "metadata": {"raw": "upstream timeout"},
        }
    }
    failed = clawctx.parse_response(model, [_chunk({"content": "x"}), error], now_ms=CLOCK_MS)
    assert failed["errorMessage"] == "Provider returned error\nupstream timeout"
    # Another API's reply is refused as such.
    with pytest.raises(clawctx.wire.ResponseParseError, match="anthropic-messages"):
        clawctx.parse_response(model, [{"type": "message_start", "message": {}}])


def test_nothing_after_done_is_read_as_the_openai_sdk_stops_there() -> None:
    model = {"id": "gpt-4o", "api": "openai-completions", "provider": "openai"}
    reply = _sse([_chunk({"content": "Done."}, "stop")]) + _sse([_chunk({"content": " More"})])
    # The SDK's `Stream` breaks out of its loop at `data: [DONE]`: the late chunk is not seen.
    stream = openai.Stream(
        cast_to=object,
        response=Replay(openai, "", [reply]).httpx.Response(200, content=reply),
        client=openai.OpenAI(api_key="x", base_url="https://api.openai.test/v1"),
    )
    assert len(list(stream)) == 1
    message = clawctx.parse_response(model, reply, now_ms=CLOCK_MS)
    assert message["content"] == [{"type": "text", "text": "Done."}]
    assert message["stopReason"] == "stop"
