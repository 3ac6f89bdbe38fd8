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


# --- the Responses family (openai-responses, azure-openai-responses, openai-codex-responses) --

RESPONSES_APIS = ("openai-responses", "azure-openai-responses", "openai-codex-responses")
RESPONSES = [c for c in CASES if c["input"]["api"] in RESPONSES_APIS]


def _signatures_as_json(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with each ``thinkingSignature`` parsed: pydantic models dump their fields in
    declaration order, not the wire's, so an SDK object's reasoning item serializes with
    another key order (the same object; docs/guide/compatibility.md, deviation D-RESP-1)."""
    out: dict[str, Any] = json.loads(json.dumps(message))
    for block in out["content"]:
        if "thinkingSignature" in block:
            block["thinkingSignature"] = json.loads(block["thinkingSignature"])
    return out


def _responses_sdk_events(events: list[dict[str, Any]]) -> list[Any]:
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    # The SDK's Stream builds its events with construct_type (no validation), as here.
    return [construct_type(type_=ResponseStreamEvent, value=e) for e in events]


@pytest.mark.parametrize("case", RESPONSES, ids=_ids(RESPONSES))
def test_responses_sdk_objects(case: dict[str, Any]) -> None:
    pytest.importorskip("openai", reason="the openai SDK builds the event objects")
    inp = case["input"]
    sdk_events = _responses_sdk_events(inp["events"])
    got = clawctx.parse_response(inp["model"], sdk_events, now_ms=CLOCK_MS, options=inp["options"])
    expected = case["expected"]["message"]
    assert _signatures_as_json(got) == _signatures_as_json(expected)
    if not any("thinkingSignature" in b for b in expected["content"]):
        assert got == expected


def _responses_body(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The non-streaming ``Response`` the stream describes (None when it has no end)."""
    items = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    ends = [e for e in events if e["type"] in ("response.completed", "response.incomplete")]
    if not ends:
        return None
    body: dict[str, Any] = json.loads(json.dumps(ends[0]["response"]))
    body["output"] = items
    return body


RESPONSES_BODIES = [
    c
    for c in RESPONSES
    if _responses_body(c["input"]["events"]) is not None
    # unknown_events: the body holds only the output items; the stream's unknown events
    # are not part of a Response.
    and "/unknown_events/" not in c["id"]
]


@pytest.mark.parametrize("case", RESPONSES_BODIES, ids=_ids(RESPONSES_BODIES))
def test_responses_body_gives_the_stream_message(case: dict[str, Any]) -> None:
    inp = case["input"]
    body = _responses_body(inp["events"])
    assert body is not None
    expected = case["expected"]["message"]
    got = clawctx.parse_response(inp["model"], body, now_ms=CLOCK_MS, options=inp["options"])
    assert got == expected
    openai = pytest.importorskip("openai", reason="the openai SDK builds the Response")
    sdk_body = openai.types.responses.Response.construct(**body)
    got = clawctx.parse_response(inp["model"], sdk_body, now_ms=CLOCK_MS, options=inp["options"])
    assert _signatures_as_json(got) == _signatures_as_json(expected)


def _responses_model(api: str = "openai-responses") -> dict[str, Any]:
    return _model(api)


def _responses_events(api: str = "openai-responses") -> list[dict[str, Any]]:
    case = next(c for c in RESPONSES if c["id"] == f"{api}/stream/plain_text/000")
    events: list[dict[str, Any]] = case["input"]["events"]
    return events


@pytest.mark.parametrize("api", RESPONSES_APIS)
def test_responses_cut_stream_fails_safely(api: str) -> None:
    events = _responses_events(api)
    cut = [e for e in events if e["type"] != "response.completed"]
    exact = read_response(_responses_model(api), cut, now_ms=CLOCK_MS, safe=False)
    assert exact.message["stopReason"] == "stop" and exact.events[-1] == "done"
    safe = read_response(_responses_model(api), cut, now_ms=CLOCK_MS)
    assert safe.message["stopReason"] == "error"
    assert "response.completed" in safe.message["errorMessage"]
    assert safe.message["content"] == exact.message["content"]
    # A stream torn inside its last frame: the frame is dropped, the rest kept.
    torn = _sse(api, cut) + 'event: response.completed\ndata: {"type":"response.comp'
    assert clawctx.parse_response(_responses_model(api), torn, now_ms=CLOCK_MS) == safe.message


def test_responses_error_events() -> None:
    head = _responses_events()[:5]
    model = _responses_model()
    err = {"type": "error", "code": "server_error", "message": "boom", "param": None}
    msg = clawctx.parse_response(model, [*head, err], now_ms=CLOCK_MS)
    assert msg["errorMessage"] == "Error Code server_error: boom"
    assert msg["content"][0]["text"] == head[4]["delta"]
    failed: dict[str, Any] = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": None,
            "incomplete_details": {"reason": "content_filter"},
        },
    }
    assert (
        clawctx.parse_response(model, [*head, failed], now_ms=CLOCK_MS)["errorMessage"]
        == "incomplete: content_filter"
    )
    # The openai SDK throws an APIError on a chunk with a top-level `error`.
    quota = {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota"}}
    msg = clawctx.parse_response(model, [*head, quota], now_ms=CLOCK_MS)
    assert msg["errorMessage"] == "You exceeded your current quota"
    codex = _responses_model("openai-codex-responses")
    codex_head = _responses_events("openai-codex-responses")[:5]
    msg = clawctx.parse_response(codex, [*codex_head, err], now_ms=CLOCK_MS)
    assert msg["errorMessage"] == "Codex error: boom"


def test_responses_bad_replies() -> None:
    model = _responses_model()
    head = _sse("openai-responses", _responses_events()[:3])
    with pytest.raises(ResponseParseError, match="not valid JSON at event 3"):
        clawctx.parse_response(model, head + "event: response.output_text.delta\ndata: {x\n\n")
    anthropic_event = {"type": "message_start", "message": {"id": "m", "usage": {}}}
    with pytest.raises(ResponseParseError, match="anthropic-messages"):
        clawctx.parse_response(model, [anthropic_event], now_ms=CLOCK_MS)
    with pytest.raises(ResponseParseError, match="Response"):
        clawctx.parse_response(model, {"object": "list"}, now_ms=CLOCK_MS)
    # An unknown event type between blocks is skipped, as pi-ai's loop skips it.
    events = [dict(e) for e in _responses_events()]
    events.insert(3, {"type": "response.mystery.delta", "delta": "x"})
    plain = clawctx.parse_response(model, _responses_events(), now_ms=CLOCK_MS)
    assert clawctx.parse_response(model, events, now_ms=CLOCK_MS) == plain
    # A status outside pi-ai's map throws; codex normalizes it away ("stop").
    events[-1] = json.loads(json.dumps(events[-1]))
    events[-1]["response"]["status"] = "paused"
    msg = clawctx.parse_response(model, events, now_ms=CLOCK_MS)
    assert msg["errorMessage"] == "Unhandled stop reason: paused"


def test_responses_deviations_are_pinned() -> None:
    """The deviations from pi-ai listed in docs/guide/compatibility.md ("Provider replies")."""
    codex = _responses_model("openai-codex-responses")
    events = [json.loads(json.dumps(e)) for e in _responses_events("openai-codex-responses")]
    # codex pushes `done` for a "cancelled"/"failed" status (pi-ai's codex stream skips the
    # stopReason check); clawctx never returns a finished message with stopReason "error".
    events[-1]["response"]["status"] = "cancelled"
    parsed = read_response(codex, events, now_ms=CLOCK_MS)
    assert parsed.events[-1] == "error"
    assert parsed.message["errorMessage"] == "An unknown error occurred"
    # codex's parseSSE skips a data frame that is not JSON; clawctx refuses the reply.
    text = _sse("openai-codex-responses", events[:3]) + "data: {oops\n\n"
    with pytest.raises(ResponseParseError, match="not valid JSON"):
        clawctx.parse_response(codex, text, now_ms=CLOCK_MS)


def _mock_openai(api: str, text: str, *, is_async: bool = False) -> Any:
    """The real openai client over an httpx MockTransport serving ``text`` as the SSE reply."""
    openai = pytest.importorskip("openai", reason="the openai SDK streams the reply")
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})

    base = "https://api.example.test/v1"
    if is_async:
        async_http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        return openai.AsyncOpenAI(api_key="x", base_url=base, http_client=async_http)
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return openai.OpenAI(api_key="x", base_url=base, http_client=http)


RESPONSES_STREAMED = [c for c in RESPONSES if c["input"]["events"]]


@pytest.mark.parametrize("case", RESPONSES_STREAMED, ids=_ids(RESPONSES_STREAMED))
def test_responses_sdk_stream_and_async_stream(case: dict[str, Any]) -> None:
    import asyncio

    from clawctx.wire import aparse_response

    inp = case["input"]
    if any(e.get("type") == "error" for e in inp["events"]):
        pytest.skip("the Python SDK raises on an `event: error` frame before yielding it")
    text = _sse(inp["api"], inp["events"])
    expected = _signatures_as_json(case["expected"]["message"])
    client = _mock_openai(inp["api"], text)
    stream = client.responses.create(model="gpt-5", input="Hello", stream=True)
    got = clawctx.parse_response(inp["model"], stream, now_ms=CLOCK_MS, options=inp["options"])
    assert _signatures_as_json(got) == expected

    async def read() -> dict[str, Any]:
        aclient = _mock_openai(inp["api"], text, is_async=True)
        astream = await aclient.responses.create(model="gpt-5", input="Hello", stream=True)
        return await aparse_response(inp["model"], astream, now_ms=CLOCK_MS, options=inp["options"])

    assert _signatures_as_json(asyncio.run(read())) == expected
