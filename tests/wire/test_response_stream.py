"""``clawctx.wire.ResponseStream``: pi-ai's events for a reply fed as it arrives (issue 28,
"an incremental form for streaming UIs ... with an async variant"). Whatever the chunking, the
final message and event types equal the recorded ones, the deltas add up to the blocks, and
each ``*_end`` event carries its block."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

import clawctx
from clawctx.wire import (
    RESPONSE_APIS,
    ResponseParseError,
    ResponseStream,
    aiter_response_events,
    iter_response_events,
    read_response,
)

from .test_parse_response import CASES, CLOCK_MS, _ids, _sse

pytestmark = pytest.mark.skipif(not CASES, reason="no response cases in shared/")

RESPONSES_FAMILY = {"openai-responses", "azure-openai-responses", "openai-codex-responses"}


def _check_events(case: dict[str, Any], events: list[dict[str, Any]]) -> None:
    expected = case["expected"]
    assert [e["type"] for e in events] == expected["events"]
    final = events[-1]
    message = expected["message"]
    if final["type"] == "done":
        assert final["message"] == message and final["reason"] == message["stopReason"]
    else:
        assert final["error"] == message and final["reason"] == "error"
    # The deltas of each block add up to what its *_end event carries.
    pieces: dict[tuple[str, int], str] = {}
    for event in events:
        kind = event["type"]
        if kind in ("text_delta", "thinking_delta"):
            key = (kind.removesuffix("_delta"), event["contentIndex"])
            pieces[key] = pieces.get(key, "") + event["delta"]
        elif kind in ("text_end", "thinking_end"):
            key = (kind.removesuffix("_end"), event["contentIndex"])
            block = message["content"][event["contentIndex"]]
            assert event["content"] == block[key[0]]
            got = pieces.get(key, "")
            if key[0] == "thinking" and block.get("redacted"):
                pass
            elif key[0] == "thinking" and case["input"]["api"] in RESPONSES_FAMILY:
                # openai-responses-shared.ts pushes a "\n\n" delta after each summary part,
                # then replaces the text with the parts joined by "\n\n" at thinking_end.
                assert got in (event["content"], event["content"] + "\n\n")
            else:
                assert got == event["content"]
        elif kind == "toolcall_end":
            assert event["toolCall"] == message["content"][event["contentIndex"]]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_events_fed_one_at_a_time(case: dict[str, Any]) -> None:
    inp = case["input"]
    stream = ResponseStream(inp["model"], now_ms=CLOCK_MS, options=inp.get("options"))
    events: list[dict[str, Any]] = []
    for wire in inp["events"]:
        events += stream.feed(wire)
        assert stream.partial["role"] == "assistant"
    events += stream.finish()
    _check_events(case, events)
    assert stream.message == case["expected"]["message"]
    assert stream.result.events == case["expected"]["events"]
    assert stream.finish() == []


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_sse_bytes_in_random_chunks(case: dict[str, Any]) -> None:
    inp = case["input"]
    raw = _sse(inp["api"], inp["events"]).replace("\n", "\r\n").encode()
    rng = random.Random(case["id"])
    chunks, at = [], 0
    while at < len(raw):
        size = rng.randint(1, 40)
        chunks.append(raw[at : at + size])
        at += size
    opts = inp.get("options")
    events = list(iter_response_events(inp["model"], chunks, now_ms=CLOCK_MS, options=opts))
    _check_events(case, events)


@pytest.mark.parametrize("case", CASES[:9], ids=_ids(CASES[:9]))
def test_async_variant(case: dict[str, Any]) -> None:
    inp = case["input"]
    lines = _sse(inp["api"], inp["events"]).split("\n")

    async def source() -> Any:
        for line in lines:
            await asyncio.sleep(0)
            yield line

    async def collect() -> list[dict[str, Any]]:
        opts = inp.get("options")
        replies = aiter_response_events(inp["model"], source(), now_ms=CLOCK_MS, options=opts)
        return [e async for e in replies]

    _check_events(case, asyncio.run(collect()))


def _model(api: str = "anthropic-messages") -> dict[str, Any]:
    for case in CASES:
        if case["input"]["api"] == api:
            return dict(case["input"]["model"])
    pytest.skip(f"no case for {api}")


def test_partial_message_grows_and_deltas_are_the_pieces() -> None:
    stream = ResponseStream(_model(), now_ms=CLOCK_MS)
    start = {
        "type": "message_start",
        "message": {"id": "m", "usage": {"input_tokens": 5, "output_tokens": 1}},
    }
    assert [e["type"] for e in stream.feed(start)] == ["start"]
    opened = stream.feed(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    assert opened == [{"type": "text_start", "contentIndex": 0}]
    for piece in ["Hel", "lo ", "wörld ✓"]:
        delta = {"type": "text_delta", "text": piece}
        got = stream.feed({"type": "content_block_delta", "index": 0, "delta": delta})
        assert got == [{"type": "text_delta", "contentIndex": 0, "delta": piece}]
    assert stream.partial["content"] == [{"type": "text", "text": "Hello wörld ✓"}]
    assert stream.partial["usage"]["input"] == 5
    ended = stream.feed({"type": "content_block_stop", "index": 0})
    assert ended == [{"type": "text_end", "contentIndex": 0, "content": "Hello wörld ✓"}]
    last = stream.finish()
    # No message_stop came: the stream was cut; the blocks so far are kept.
    assert [e["type"] for e in last] == ["error"]
    assert stream.message["content"] == [{"type": "text", "text": "Hello wörld ✓"}]
    assert "message_stop" in stream.message["errorMessage"]


def test_a_tool_calls_arguments_show_in_the_partial_message_as_they_arrive() -> None:
    stream = ResponseStream(_model(), now_ms=CLOCK_MS)
    stream.feed({"type": "message_start", "message": {"usage": {}}})
    block = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    stream.feed({"type": "content_block_start", "index": 0, "content_block": block})
    for piece in ['{"pa', 'th": "a.t', 'xt"}']:
        delta = {"type": "input_json_delta", "partial_json": piece}
        stream.feed({"type": "content_block_delta", "index": 0, "delta": delta})
        call = stream.partial["content"][0]
        assert call["type"] == "toolCall" and call["id"] == "toolu_1"
    assert stream.partial["content"][0]["arguments"] == {"path": "a.txt"}


def test_bad_replies_close_the_stream_with_a_typed_error() -> None:
    stream = ResponseStream(_model(), now_ms=CLOCK_MS)
    with pytest.raises(ResponseParseError, match="openai-completions"):
        stream.feed({"object": "chat.completion.chunk", "choices": []})
    with pytest.raises(ResponseParseError, match="closed"):
        stream.feed({"type": "message_start", "message": {}})
    broken = ResponseStream(_model(), now_ms=CLOCK_MS)
    broken.feed(b'event: message_start\ndata: {"type":"message_start","message":{}}\n\n')
    with pytest.raises(ResponseParseError, match="not valid JSON at event 1"):
        broken.feed(b"event: content_block_start\ndata: {oops\n\n")
    with pytest.raises(ResponseParseError, match="not UTF-8"):
        ResponseStream(_model(), now_ms=CLOCK_MS).feed(b"data: \xff\xfe\n\n")
    with pytest.raises(ResponseParseError, match="does not read replies"):
        ResponseStream({**_model(), "api": "bedrock-converse-stream"}, now_ms=CLOCK_MS)
    with pytest.raises(ResponseParseError, match="has not finished"):
        _ = ResponseStream(_model(), now_ms=CLOCK_MS).message
    with pytest.raises(TypeError):
        ResponseStream(_model(), now_ms=CLOCK_MS).feed(42)


def test_a_cut_stream_is_an_error_by_default_and_whole_under_compat() -> None:
    case = next(c for c in CASES if c["id"].startswith("anthropic-messages/stream/one_tool"))
    inp = case["input"]
    cut = _sse(inp["api"], inp["events"][:-3]).encode()
    cut = cut[: len(cut) - 7]  # inside the last frame too
    events = list(iter_response_events(inp["model"], [cut], now_ms=CLOCK_MS))
    assert events[-1]["type"] == "error"
    whole = read_response(inp["model"], cut, now_ms=CLOCK_MS)
    assert events[-1]["error"] == whole.message
    assert [e["type"] for e in events] == whole.events
    assert whole.message["stopReason"] == "error"
    assert "stream was cut" in whole.message["errorMessage"]
    # The tool call cut inside its arguments stays visible, marked unfinished.
    assert any(b["type"] == "toolCall" for b in whole.message["content"])
    # pi-ai 0.58.3 (the SDK's MessageStream) returns the cut stream as a finished reply.
    with clawctx.compat("openclaw-2026.3.13"):
        recorded = read_response(inp["model"], cut, now_ms=CLOCK_MS)
    assert recorded.events[-1] == "done"
    assert "errorMessage" not in recorded.message
    assert read_response(inp["model"], cut, now_ms=CLOCK_MS, safe=False) == recorded


def test_every_reader_is_reachable_incrementally() -> None:
    # Each API the batch reader knows is read by the incremental one too.
    for api in RESPONSE_APIS:
        if any(c["input"]["api"] == api for c in CASES):
            ResponseStream(_model(api), now_ms=CLOCK_MS).finish()
    assert json.dumps(list(RESPONSE_APIS))
