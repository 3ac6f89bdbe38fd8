"""``clawctx.parse_response`` against the replies pi-ai 0.58.3 read
(``../shared/conformance-response/``): every case through the public API, fed as wire events,
SSE text, bytes, lines and SDK objects, plus non-streaming bodies and bad replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.wire import RESPONSE_APIS, ResponseParseError, read_response

REPO = Path(__file__).resolve().parents[2]
CASES_DIR = REPO.parent / "shared" / "conformance-response"
if not CASES_DIR.is_dir():  # a git worktree: the main checkout's sibling
    CASES_DIR = Path("/work/shared/conformance-response")
CLOCK_MS = 1767225600000


def _cases(api: str) -> list[dict[str, Any]]:
    path = CASES_DIR / f"{api}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


CASES = [case for api in RESPONSE_APIS for case in _cases(api)]
pytestmark = pytest.mark.skipif(not CASES, reason=f"no response cases in {CASES_DIR}")


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cases]


#: The APIs whose harness framed each event as ``event: <type>`` + ``data:`` (the README's
#: transport table); the others sent ``data:`` lines only.
NAMED_FRAMES = {
    "anthropic-messages",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
}


def _sse(api: str, events: list[dict[str, Any]]) -> str:
    """The SSE text the recording harness served for ``events`` (README: framing per API)."""
    frames = []
    for event in events:
        data = json.dumps(event, ensure_ascii=False)
        if api in NAMED_FRAMES:
            frames.append(f"event: {event.get('type')}\ndata: {data}\n\n")
        else:
            frames.append(f"data: {data}\n\n")
    return "".join(frames)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_wire_events(case: dict[str, Any]) -> None:
    inp = case["input"]
    opts = inp["options"]
    parsed = read_response(inp["model"], inp["events"], now_ms=CLOCK_MS, options=opts)
    assert parsed.message == case["expected"]["message"]
    assert parsed.events == case["expected"]["events"]
    got = clawctx.parse_response(inp["model"], inp["events"], now_ms=CLOCK_MS, options=opts)
    assert got == parsed.message


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_sse_text_bytes_and_lines(case: dict[str, Any]) -> None:
    inp = case["input"]
    text = _sse(inp["api"], inp["events"])
    expected = case["expected"]["message"]
    opts = inp["options"]

    def parse(reply: Any) -> dict[str, Any]:
        return clawctx.parse_response(inp["model"], reply, now_ms=CLOCK_MS, options=opts)

    assert parse(text) == expected
    assert parse(text.encode()) == expected
    lines = text.split("\n")
    assert parse(iter(lines)) == expected
    crlf = text.replace("\n", "\r\n").encode()
    parsed = read_response(inp["model"], crlf, now_ms=CLOCK_MS, options=opts)
    assert parsed.events == case["expected"]["events"]


def _anthropic_sdk_events(events: list[dict[str, Any]]) -> list[Any]:
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    known = {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
    # The SDK's Stream yields only these (ping and unknown names dropped; see the README).
    return [adapter.validate_python(e) for e in events if e.get("type") in known]


ANTHROPIC = [c for c in CASES if c["input"]["api"] == "anthropic-messages"]


@pytest.mark.parametrize("case", ANTHROPIC, ids=_ids(ANTHROPIC))
def test_anthropic_sdk_objects(case: dict[str, Any]) -> None:
    inp = case["input"]
    if any(e.get("type") == "error" for e in inp["events"]):
        pytest.skip("the Python SDK raises on an error event before yielding it")
    sdk_events = _anthropic_sdk_events(inp["events"])
    got = clawctx.parse_response(inp["model"], sdk_events, now_ms=CLOCK_MS)
    assert got == case["expected"]["message"]


def _anthropic_body(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming ``Message`` the stream describes."""
    body: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    json_parts: dict[int, str] = {}
    for e in events:
        t = e["type"]
        if t == "message_start":
            body = json.loads(json.dumps(e["message"]))
        elif t == "content_block_start":
            blocks[e["index"]] = dict(e["content_block"])
        elif t == "content_block_delta":
            d, b = e["delta"], blocks[e["index"]]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                b["signature"] = b.get("signature", "") + d["signature"]
            elif d["type"] == "input_json_delta":
                json_parts[e["index"]] = json_parts.get(e["index"], "") + d["partial_json"]
        elif t == "message_delta":
            body["stop_reason"] = e["delta"]["stop_reason"]
            for k, v in e["usage"].items():
                if v is not None:
                    body["usage"][k] = v
    for i, text in json_parts.items():
        blocks[i]["input"] = json.loads(text)
    body["content"] = [blocks[i] for i in sorted(blocks)]
    return body


BODY_SCENARIOS = {
    "plain_text",
    "multi_text",
    "thinking_signature",
    "redacted_thinking",
    "one_tool",
    "several_tools",
    "tool_split_escapes",
    "max_tokens",
    "cache_usage",
    "text_then_tool",
}
ANTHROPIC_BODIES = [c for c in ANTHROPIC if c["id"].split("/")[2] in BODY_SCENARIOS]


@pytest.mark.parametrize("case", ANTHROPIC_BODIES, ids=_ids(ANTHROPIC_BODIES))
def test_anthropic_body_gives_the_stream_message(case: dict[str, Any]) -> None:
    from anthropic.types import Message

    inp = case["input"]
    body = _anthropic_body(inp["events"])
    expected = case["expected"]["message"]
    assert clawctx.parse_response(inp["model"], body, now_ms=CLOCK_MS) == expected
    sdk_message = Message.model_validate(body)
    assert clawctx.parse_response(inp["model"], sdk_message, now_ms=CLOCK_MS) == expected


# --- bad replies (issue 28 item 5) -------------------------------------------------------


def _model(api: str = "anthropic-messages") -> dict[str, Any]:
    case = next(c for c in CASES if c["input"]["api"] == api)
    model: dict[str, Any] = case["input"]["model"]
    return model


def _plain_events() -> list[dict[str, Any]]:
    case = next(c for c in ANTHROPIC if "/plain_text/" in c["id"])
    events: list[dict[str, Any]] = case["input"]["events"]
    return events


def test_reply_for_another_api_is_refused() -> None:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
    }
    with pytest.raises(ResponseParseError, match="openai-completions"):
        clawctx.parse_response(_model(), [chunk], now_ms=CLOCK_MS)
    gemini = {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}
    with pytest.raises(ResponseParseError, match="google"):
        clawctx.parse_response(_model(), f"data: {json.dumps(gemini)}\n\n", now_ms=CLOCK_MS)
    assert issubclass(ResponseParseError, clawctx.ClawctxError)


def test_truncated_stream_keeps_what_arrived() -> None:
    events = _plain_events()
    # Cut after two deltas: no block stop, no message_delta; the SDK ends the stream as is
    # (pi-ai 0.58.3, read with safe=False); safe by default it is a failed reply.
    cut = events[:4]
    parsed = read_response(_model(), cut, now_ms=CLOCK_MS, safe=False)
    assert parsed.message["stopReason"] == "stop"
    assert (
        parsed.message["content"][0]["text"]
        == events[2]["delta"]["text"] + events[3]["delta"]["text"]
    )
    assert parsed.events[-1] == "done"
    # Cut inside the last SSE frame: that frame never arrived (the SDK decoder drops it).
    text = _sse("anthropic-messages", events[:4])
    torn = text + 'event: content_block_delta\ndata: {"type":"content_block_delta","ind'
    assert clawctx.parse_response(_model(), torn, now_ms=CLOCK_MS, safe=False) == parsed.message
    safe = read_response(_model(), torn, now_ms=CLOCK_MS)
    assert safe.message["stopReason"] == "error" and safe.events[-1] == "error"
    assert safe.message["content"] == parsed.message["content"]


def test_stream_without_message_start_is_pi_ais_error() -> None:
    events = _plain_events()[1:]
    msg = clawctx.parse_response(_model(), events, now_ms=CLOCK_MS)
    assert msg["stopReason"] == "error"
    assert msg["errorMessage"] == (
        'Unexpected event order, got content_block_start before "message_start"'
    )


def test_error_event_mid_stream() -> None:
    events = _plain_events()[:3] + [
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    ]
    msg = clawctx.parse_response(_model(), events, now_ms=CLOCK_MS)
    assert msg["stopReason"] == "error"
    assert msg["errorMessage"] == (
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    )
    assert msg["content"] == [{"type": "text", "text": events[2]["delta"]["text"]}]


def test_non_json_data_line_is_a_typed_error() -> None:
    head = _sse("anthropic-messages", _plain_events()[:2])
    text = head + "event: content_block_delta\ndata: nope\n\n"
    with pytest.raises(ResponseParseError, match="not valid JSON at event 2"):
        clawctx.parse_response(_model(), text, now_ms=CLOCK_MS)
    # The SDK never parses what it drops: a `ping` (or an unknown event name) with junk data
    # is skipped, as `@anthropic-ai/sdk`'s `Stream` skips it.
    pinged = head + "event: ping\ndata: nope\n\n" + _sse("anthropic-messages", _plain_events()[2:])
    assert clawctx.parse_response(_model(), pinged, now_ms=CLOCK_MS) == clawctx.parse_response(
        _model(), _plain_events(), now_ms=CLOCK_MS
    )
    with pytest.raises(ResponseParseError, match="not valid JSON"):
        clawctx.parse_response(_model(), text, now_ms=CLOCK_MS)
    with pytest.raises(ResponseParseError):
        clawctx.parse_response(_model(), b"{not json", now_ms=CLOCK_MS)


def test_unknown_stop_reason_and_unknown_events() -> None:
    events = [dict(e) for e in _plain_events()]
    events.insert(2, {"type": "content_block_mystery", "index": 0})
    events.insert(2, {"type": "content_block_delta", "index": 0, "delta": {"type": "odd"}})
    parsed = read_response(_model(), events, now_ms=CLOCK_MS)
    assert parsed.message["stopReason"] == "stop"
    events[-2] = {"type": "message_delta", "delta": {"stop_reason": "eos"}, "usage": {}}
    msg = clawctx.parse_response(_model(), events, now_ms=CLOCK_MS)
    assert msg["errorMessage"] == "Unhandled stop reason: eos"


def test_unsupported_api_and_bad_shapes() -> None:
    model = dict(_model(), api="bedrock-converse-stream")
    with pytest.raises(ResponseParseError, match="bedrock"):
        clawctx.parse_response(model, [], now_ms=CLOCK_MS)
    with pytest.raises(ResponseParseError, match="Message"):
        clawctx.parse_response(_model(), {"type": "completion"}, now_ms=CLOCK_MS)
    with pytest.raises(TypeError):
        clawctx.parse_response(_model(), 42, now_ms=CLOCK_MS)
    with pytest.raises(TypeError):
        clawctx.parse_response(_model(), ["event: x", {"type": "ping"}], now_ms=CLOCK_MS)


def test_async_variant() -> None:
    import asyncio

    from clawctx.wire import aparse_response

    case = ANTHROPIC[0]

    async def lines() -> Any:
        for line in _sse("anthropic-messages", case["input"]["events"]).split("\n"):
            yield line

    got = asyncio.run(aparse_response(case["input"]["model"], lines(), now_ms=CLOCK_MS))
    assert got == case["expected"]["message"]
