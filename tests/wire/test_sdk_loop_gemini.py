"""Gemini through the real ``google-genai`` SDK (issue 28, items 1 and 4): its objects
(``GenerateContentResponse`` chunks and bodies) read by ``parse_response`` as the wire events
are, and the loop for real: two turns with a tool call over an ``httpx.MockTransport``
replaying Gemini SSE; the second request carries the first turn, the session file is valid
after."""

from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.history import Session
from clawctx.wire import read_response, validate_request_body

from ._sdk_loop import TOOLS, demo_pipeline, tool_result
from .test_parse_response import CASES, CLOCK_MS, _ids

genai = pytest.importorskip("google.genai", reason="the google-genai SDK (test extra)")
httpx = pytest.importorskip("httpx", reason="google-genai's HTTP client")

GEMINI = [c for c in CASES if c["input"]["api"] in ("google-generative-ai", "google-vertex")]
MODEL = clawctx.ModelSpec(
    "google", "google-generative-ai", "gemini-2.5-pro", context_window=1_048_576
)
#: A thought signature as Gemini sends them (standard base64, padded).
SIGNATURE = base64.b64encode(b"gemini thought signature").decode()


SIGNATURE_KEYS = ("thoughtSignature", "textSignature", "thinkingSignature")


def _base64_signatures(value: Any) -> Any:
    """``value`` with every signature text replaced by its base64 form. The recording's
    signatures are seeded random text, not always base64, which the Python SDK's bytes field
    refuses; Gemini's own signatures are base64, which it reads and writes back unchanged."""
    if isinstance(value, list):
        return [_base64_signatures(v) for v in value]
    if isinstance(value, dict):
        return {
            key: base64.b64encode(v.encode()).decode()
            if key in SIGNATURE_KEYS and isinstance(v, str) and v
            else _base64_signatures(v)
            for key, v in value.items()
        }
    return value


@pytest.mark.parametrize("case", GEMINI, ids=_ids(GEMINI))
def test_sdk_chunk_objects_read_as_the_wire_events(case: dict[str, Any]) -> None:
    from google.genai import types
    from pydantic import ValidationError

    inp = case["input"]
    events = _base64_signatures(inp["events"])
    try:
        with warnings.catch_warnings():
            # The SDK warns about a finish reason outside its enum and keeps it as text.
            warnings.simplefilter("ignore", UserWarning)
            chunks = [types.GenerateContentResponse.model_validate(e) for e in events]
    except ValidationError as exc:  # the unknown_events scenario's extra fields
        pytest.skip(f"the SDK's types refuse these chunks: {exc.errors()[0]['msg']}")
    parsed = read_response(inp["model"], chunks, now_ms=CLOCK_MS)
    assert parsed.message == _base64_signatures(case["expected"]["message"])
    assert parsed.events == case["expected"]["events"]


def test_a_generate_content_body_reads_as_its_stream() -> None:
    from google.genai import types

    stream = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Reading "}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "it."},
                            {
                                "functionCall": {"name": "read", "args": {"path": "a.txt"}},
                                "thoughtSignature": SIGNATURE,
                            },
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 120,
                "candidatesTokenCount": 30,
                "cachedContentTokenCount": 100,
                "totalTokenCount": 150,
            },
        },
    ]
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Reading it."},
                        stream[1]["candidates"][0]["content"]["parts"][1],
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": stream[1]["usageMetadata"],
    }
    model = {
        "id": "gemini-2.5-pro",
        "api": "google-generative-ai",
        "provider": "google",
        "cost": {"input": 1.25, "output": 10, "cacheRead": 0.31, "cacheWrite": 0},
    }
    from_body = clawctx.parse_response(model, body, now_ms=CLOCK_MS)
    assert from_body == clawctx.parse_response(model, stream, now_ms=CLOCK_MS)
    sdk_body = types.GenerateContentResponse.model_validate(body)
    assert from_body == clawctx.parse_response(model, sdk_body, now_ms=CLOCK_MS)
    assert from_body["content"] == [
        {"type": "text", "text": "Reading it."},
        {
            "type": "toolCall",
            "id": f"read_{CLOCK_MS}_1",
            "name": "read",
            "arguments": {"path": "a.txt"},
            "thoughtSignature": SIGNATURE,
        },
    ]
    # The Gemini API counts cached tokens inside the prompt and pi-ai keeps them there.
    assert from_body["usage"]["input"] == 120 and from_body["usage"]["cacheRead"] == 100
    assert from_body["stopReason"] == "toolUse"
    # Cloud Code Assist wraps the same body; pi-ai takes the cached tokens out of its input.
    cli = {**model, "api": "google-gemini-cli", "provider": "google-gemini-cli"}
    wrapped = clawctx.parse_response(cli, {"response": body, "traceId": "t1"}, now_ms=CLOCK_MS)
    assert wrapped["usage"]["input"] == 20 and wrapped["content"] == from_body["content"]


def _sse(chunks: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode()


def _chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-pro"}
    if finish:
        candidate["finishReason"] = finish
        chunk["usageMetadata"] = {
            "promptTokenCount": 900,
            "candidatesTokenCount": 40,
            "thoughtsTokenCount": 12,
            "totalTokenCount": 952,
        }
    return chunk


class GeminiReplay:
    """Gemini's ``streamGenerateContent`` endpoint, replayed; request bodies kept."""

    def __init__(self, replies: list[bytes]) -> None:
        self.replies = replies
        self.sent: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Any:
        assert request.url.path.endswith("/models/gemini-2.5-pro:streamGenerateContent")
        assert request.url.params.get("alt") == "sse"
        self.sent.append(json.loads(request.content))
        reply = self.replies[len(self.sent) - 1]
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=reply)


def test_two_turns_with_a_tool_call_through_the_real_sdk(tmp_path: Path) -> None:
    from google.genai import types

    replies = [
        _sse(
            [
                _chunk([{"text": "Let me think.", "thought": True, "thoughtSignature": SIGNATURE}]),
                _chunk([{"text": "Let me read "}]),
                _chunk([{"text": "the notes first."}]),
                _chunk(
                    [
                        {
                            "functionCall": {"name": "read", "args": {"path": "notes.md"}},
                            "thoughtSignature": SIGNATURE,
                        }
                    ],
                    "STOP",
                ),
            ]
        ),
        _sse([_chunk([{"text": "Ship on "}]), _chunk([{"text": "Friday."}], "STOP")]),
    ]
    replay = GeminiReplay(replies)
    client = genai.Client(
        api_key="test-key",
        http_options=types.HttpOptions(
            base_url="https://gemini.test",
            httpx_client=httpx.Client(transport=httpx.MockTransport(replay)),
        ),
    )
    pipeline, session, path = demo_pipeline(tmp_path, MODEL)

    def call(body: dict[str, Any]) -> Any:
        # pi-ai's request is `GenerateContentParameters`: the SDK call's own arguments.
        return client.models.generate_content_stream(
            model=body["model"], contents=body["contents"], config=body.get("config")
        )

    first = pipeline.prepare(session, clawctx.PromptRequest(text="What do the notes say?"))
    reply = clawctx.parse_response(MODEL, call(first.request_payload(tools=TOOLS)))
    assert reply["content"][0] == {
        "type": "thinking",
        "thinking": "Let me think.",
        "thinkingSignature": SIGNATURE,
    }
    assert reply["content"][1] == {"type": "text", "text": "Let me read the notes first."}
    call_block = reply["content"][2]
    assert call_block["name"] == "read" and call_block["arguments"] == {"path": "notes.md"}
    assert call_block["thoughtSignature"] == SIGNATURE
    # Gemini sent no call id: pi-ai names it `<name>_<Date.now()>_<n>`.
    assert call_block["id"] == f"read_{reply['timestamp']}_1"
    assert reply["stopReason"] == "toolUse"
    assert reply["usage"]["input"] == 900 and reply["usage"]["output"] == 52
    result = tool_result(call_block["id"], "Ship on Friday.", reply["timestamp"])
    assert len(pipeline.record_turn(session, first, [reply, result])) == 3

    second = pipeline.prepare(session, clawctx.PromptRequest(text="When do we ship?"))
    # record_turn reads the SDK's chunk iterator itself (parse_response with the model).
    ids = pipeline.record_turn(session, second, [call(second.request_payload(tools=TOOLS))])
    assert len(ids) == 2

    assert len(replay.sent) == 2
    one, two = replay.sent[0]["contents"], replay.sent[1]["contents"]
    for body in replay.sent:
        assert validate_request_body({"contents": body["contents"]}, "google-generative-ai") == []
    # The first turn byte for byte, then the reply and the result as pi-ai sends them back to
    # the same model: thinking and the call keep their signatures.
    assert two[: len(one)] == one
    assert two[len(one)] == {
        "role": "model",
        "parts": [
            {"text": "Let me think.", "thought": True, "thoughtSignature": SIGNATURE},
            {"text": "Let me read the notes first."},
            {
                "functionCall": {"name": "read", "args": {"path": "notes.md"}},
                "thoughtSignature": SIGNATURE,
            },
        ],
    }
    assert two[len(one) + 1]["parts"][0]["functionResponse"]["name"] == "read"
    assert two[len(one) + 1]["parts"][0]["functionResponse"]["response"] == {
        "output": "Ship on Friday."
    }
    assert two[-1] == {"role": "user", "parts": [{"text": "When do we ship?"}]}

    reopened = Session.open(path, read_only=True)
    assert reopened.skipped_lines == []
    last = reopened.context().messages.to_list()[-1]
    assert last["content"] == [{"type": "text", "text": "Ship on Friday."}]
    assert last["stopReason"] == "stop" and last["api"] == "google-generative-ai"
    assert clawctx.doctor(path, providers=["google"]).ok


def test_a_gemini_stream_cut_before_its_finish_reason_fails_safely() -> None:
    model = {"id": "gemini-2.5-pro", "api": "google-generative-ai", "provider": "google"}
    cut = [_chunk([{"functionCall": {"name": "read"}}])]
    safe = clawctx.parse_response(model, cut, now_ms=CLOCK_MS)
    assert safe["stopReason"] == "error" and "finishReason" in safe["errorMessage"]
    # pi-ai 0.58.3 ends such a stream as finished (`stop`: only a finish reason makes it
    # `toolUse`), so a runtime would not even run the call.
    recorded = clawctx.parse_response(model, cut, now_ms=CLOCK_MS, safe=False)
    assert recorded["stopReason"] == "stop" and "errorMessage" not in recorded
    # A reply in another API's shape is refused, and so is a bare chunk for Cloud Code Assist
    # (whose stream wraps every chunk in an envelope).
    with pytest.raises(clawctx.wire.ResponseParseError, match="anthropic-messages"):
        clawctx.parse_response(model, [{"type": "message_start", "message": {}}])
    cli = {**model, "api": "google-gemini-cli"}
    with pytest.raises(clawctx.wire.ResponseParseError, match="google-generative-ai"):
        clawctx.parse_response(cli, cut)
    # A data line that is not JSON: the SDK loop's reader refuses it.
    with pytest.raises(clawctx.wire.ResponseParseError, match="not valid JSON"):
        clawctx.parse_response(model, "data: {oops\n\n")
