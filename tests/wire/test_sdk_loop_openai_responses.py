"""The loop for real over the OpenAI Responses API (issue 28, item 4): the real ``openai`` SDK's
``client.responses.create(**body)`` over an ``httpx.MockTransport`` replaying Responses SSE,
two turns with a function call; the second request carries the first turn's input items, the
reply's items and the call's output, and the session file is valid after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session
from clawctx.wire import validate_request_body

from ._sdk_loop import TOOLS, Replay, demo_pipeline, tool_result

openai = pytest.importorskip("openai", reason="the openai SDK (test extra)")

MODEL = clawctx.ModelSpec("openai", "openai-responses", "gpt-5", context_window=272_000)


def _sse(events: list[dict[str, Any]]) -> bytes:
    out = []
    for seq, event in enumerate(events):
        out.append(
            f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': seq})}\n\n"
        )
    return "".join(out).encode()


def _response(
    status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "model": "gpt-5",
        "output": output,
        "usage": usage,
    }


def _reply_with_call() -> bytes:
    message = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Let me read the notes.", "annotations": []}],
    }
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_A1",
        "name": "read",
        "arguments": '{"path": "notes.md"}',
        "status": "completed",
    }
    usage = {
        "input_tokens": 900,
        "output_tokens": 40,
        "total_tokens": 940,
        "input_tokens_details": {"cached_tokens": 0},
    }
    return _sse(
        [
            {"type": "response.created", "response": _response("in_progress", [], None)},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**message, "status": "in_progress", "content": []},
            },
            {
                "type": "response.content_part.added",
                "output_index": 0,
                "item_id": "msg_1",
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "item_id": "msg_1",
                "content_index": 0,
                "delta": "Let me read ",
                "logprobs": [],
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "item_id": "msg_1",
                "content_index": 0,
                "delta": "the notes.",
                "logprobs": [],
            },
            {"type": "response.output_item.done", "output_index": 0, "item": message},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {**call, "arguments": "", "status": "in_progress"},
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 1,
                "item_id": "fc_1",
                "delta": '{"path": ',
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 1,
                "item_id": "fc_1",
                "delta": '"notes.md"}',
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 1,
                "item_id": "fc_1",
                "arguments": call["arguments"],
            },
            {"type": "response.output_item.done", "output_index": 1, "item": call},
            {
                "type": "response.completed",
                "response": _response("completed", [message, call], usage),
            },
        ]
    )


def _reply_text() -> bytes:
    message = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Ship on Friday.", "annotations": []}],
    }
    usage = {"input_tokens": 1000, "output_tokens": 5, "total_tokens": 1005}
    return _sse(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**message, "status": "in_progress", "content": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "item_id": "msg_2",
                "content_index": 0,
                "delta": "Ship on Friday.",
                "logprobs": [],
            },
            {"type": "response.output_item.done", "output_index": 0, "item": message},
            {"type": "response.completed", "response": _response("completed", [message], usage)},
        ]
    )


def test_two_turns_with_a_function_call_through_the_real_sdk(tmp_path: Path) -> None:
    replies = [_reply_with_call(), _reply_text()]
    replay = Replay(openai, "/responses", replies)
    client = openai.OpenAI(
        api_key="test-key", base_url="https://api.openai.test/v1", http_client=replay.http_client()
    )
    pipeline, session, path = demo_pipeline(tmp_path, MODEL)
    sent = replay.sent

    first = pipeline.prepare(session, clawctx.PromptRequest(text="What do the notes say?"))
    stream = client.responses.create(**first.request_payload(tools=TOOLS))
    reply = clawctx.parse_response(MODEL, stream)
    call = reply["content"][-1]
    assert call["type"] == "toolCall" and call["id"] == "call_A1|fc_1"
    assert call["arguments"] == {"path": "notes.md"}
    assert reply["stopReason"] == "toolUse" and reply["usage"]["input"] == 900
    result = tool_result(call["id"], "Ship on Friday.", reply["timestamp"])
    assert len(pipeline.record_turn(session, first, [reply, result])) == 3

    second = pipeline.prepare(session, clawctx.PromptRequest(text="When do we ship?"))
    stream = client.responses.create(**second.request_payload(tools=TOOLS))
    pipeline.record_turn(session, second, [stream])  # the SDK stream, read by record_turn

    assert len(sent) == 2
    for body in sent:
        assert validate_request_body(body, "openai-responses") == []
    one, two = sent[0]["input"], sent[1]["input"]
    assert two[: len(one)] == one  # the first turn's items, byte for byte
    added = two[len(one) :]
    calls = [item for item in added if item.get("type") == "function_call"]
    outputs = [item for item in added if item.get("type") == "function_call_output"]
    assert len(calls) == 1 and calls[0]["name"] == "read"
    assert json.loads(calls[0]["arguments"]) == {"path": "notes.md"}
    assert outputs == [
        {
            "type": "function_call_output",
            "call_id": calls[0]["call_id"],
            "output": "Ship on Friday.",
        }
    ]
    texts = [
        item for item in added if item.get("type") == "message" and item.get("role") == "assistant"
    ]
    assert texts and texts[0]["content"][0]["text"] == "Let me read the notes."
    reopened = Session.open(path, read_only=True)
    assert reopened.skipped_lines == []
    last = reopened.context().messages.to_list()[-1]
    assert last["content"][0]["text"] == "Ship on Friday." and last["stopReason"] == "stop"
    assert clawctx.doctor(path, providers=["openai"]).ok
