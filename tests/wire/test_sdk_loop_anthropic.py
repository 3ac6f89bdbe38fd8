"""The loop, for real (issue 28, item 4), Anthropic: the real ``anthropic`` SDK over an
``httpx.MockTransport`` that replays provider-shaped SSE streams. Two turns with a tool call:
``prepare`` → ``request_payload`` → ``client.messages.create(**body)`` (a ``Stream``) →
``record_turn`` (the SDK stream read with ``parse_response``) → ``prepare`` again. The second
request carries the first turn as the provider saw it and replied, and the session file is
valid after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session, sanitize_tool_call_id
from clawctx.wire import validate_request_body

from ._sdk_loop import TOOLS, Replay, demo_pipeline, tool_result

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK (test extra)")

# The SDK warns about model ids it lists as deprecated (claude-sonnet-4-5 from 2026-11-30).
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

MODEL = clawctx.ModelSpec(
    "anthropic", "anthropic-messages", "claude-sonnet-4-5", context_window=200_000
)


def _sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _reply(blocks: list[dict[str, Any]], stop: str, msg_id: str) -> bytes:
    """The SSE stream Anthropic sends for ``blocks`` (text and tool_use), deltas split."""
    start = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 800},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            text = block["text"]
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    }
                )
        else:
            opened = {**block, "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": opened})
            arguments = json.dumps(block["input"])
            for piece in (arguments[:5], arguments[5:]):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
                )
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 42}}
    )
    events.append({"type": "message_stop"})
    return _sse(events)


def test_two_turns_with_a_tool_call_through_the_real_sdk(tmp_path: Path) -> None:
    replies = [
        _reply(
            [
                {"type": "text", "text": "Let me read the notes first."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "read",
                    "input": {"path": "notes.md"},
                },
            ],
            "tool_use",
            "msg_1",
        ),
        _reply([{"type": "text", "text": "The notes say: ship on Friday."}], "end_turn", "msg_2"),
    ]
    replay = Replay(anthropic, "/v1/messages", replies)
    client = anthropic.Anthropic(
        api_key="test-key", base_url="https://api.anthropic.test", http_client=replay.http_client()
    )
    pipeline, session, path = demo_pipeline(tmp_path, MODEL)
    sent = replay.sent

    # Turn 1: the model asks for a tool.
    first = pipeline.prepare(session, clawctx.PromptRequest(text="What do the notes say?"))
    stream = client.messages.create(**first.request_payload(tools=TOOLS))
    assert isinstance(stream, anthropic.Stream)
    reply = clawctx.parse_response(MODEL, stream)
    call = reply["content"][1]
    assert call == {
        "type": "toolCall",
        "id": "toolu_01A",
        "name": "read",
        "arguments": {"path": "notes.md"},
    }
    assert reply["stopReason"] == "toolUse"
    assert reply["usage"]["cacheRead"] == 800 and reply["usage"]["output"] == 42
    result = tool_result(call["id"], "Ship on Friday.", reply["timestamp"])
    ids = pipeline.record_turn(session, first, [reply, result])
    assert len(ids) == 3

    # Turn 2: the same session, the next prompt.
    second = pipeline.prepare(session, clawctx.PromptRequest(text="Thanks. When do we ship?"))
    stream = client.messages.create(**second.request_payload(tools=TOOLS))
    # record_turn reads the SDK stream itself (parse_response with the pipeline's model).
    pipeline.record_turn(session, second, [stream])

    assert len(sent) == 2
    for body in sent:
        assert validate_request_body(body, "anthropic-messages") == []

    def plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # pi-ai puts its cache breakpoint on the newest user message of every request, turning
        # a string content into one text block to carry it (anthropic.ts); without it the
        # message is sent as stored.
        out = []
        for message in messages:
            content = message["content"]
            if isinstance(content, list) and any("cache_control" in b for b in content):
                content = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
                if len(content) == 1 and content[0]["type"] == "text":
                    content = content[0]["text"]
            out.append({**message, "content": content})
        return out

    one, two = plain(sent[0]["messages"]), plain(sent[1]["messages"])
    # The first turn byte for byte: what the provider saw, then its reply and the result.
    assert two[: len(one)] == one
    # OpenClaw 2026.3.13 sends Anthropic tool-call ids through its strict sanitizer
    # (`sanitizeToolCallIds`, mode "strict": letters and digits), the same on every request.
    sent_id = sanitize_tool_call_id("toolu_01A", "strict")
    assert sent_id == "toolu01A"
    assert two[len(one)] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me read the notes first."},
            {"type": "tool_use", "id": sent_id, "name": "read", "input": {"path": "notes.md"}},
        ],
    }
    assert two[len(one) + 1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": sent_id,
        "content": "Ship on Friday.",
        "is_error": False,
    }
    assert two[-1] == {"role": "user", "content": "Thanks. When do we ship?"}

    # The session file is valid after: it opens clean, and doctor finds nothing to fix.
    reopened = Session.open(path, read_only=True)
    assert reopened.skipped_lines == []
    last = reopened.context().messages.to_list()[-1]
    assert last["role"] == "assistant" and last["content"][0]["text"].endswith("Friday.")
    assert last["stopReason"] == "stop"
    report = clawctx.doctor(path, providers=["anthropic"])
    assert report.ok, report.findings
