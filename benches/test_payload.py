"""Request payload building on a 50,000-message transcript (issue 16 target: >= 20x the
plain-Python converter of the same rules).

clawctx: ``build_request_payload`` for an Anthropic model over a ``Transcript`` whose assistant
turns come from another provider (so thinking becomes text and every tool-call id is
normalised), written to JSON bytes with ``to_json()``.
Reference: the same rules in plain Python (pi-ai's ``transformMessages``, Anthropic
``convertMessages`` and the cache breakpoint) over already-parsed dicts, then ``json.dumps``.
Both produce the same body (checked in the smoke run too).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

from clawctx.history import Transcript
from clawctx.wire import build_request_payload

MESSAGES = 50_000 if os.environ.get("CLAWCTX_BENCH_FULL") == "1" else 5_000
MODEL: dict[str, Any] = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "maxTokens": 64000,
}
SYSTEM = "You are a coding agent. Be concise."


def make_messages(n: int) -> list[dict[str, Any]]:
    """User → assistant (thinking, text, call; from OpenAI Responses) → tool result, repeated."""
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < n:
        out.append(
            {"role": "user", "content": f"Step {i}: run the tests in pkg{i}.", "timestamp": i}
        )
        call_id = f"call_{i}|fc_{i:08x}+/="
        out.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"I should run pytest for pkg{i}."},
                    {"type": "text", "text": f"Running the tests of pkg{i} now."},
                    {
                        "type": "toolCall",
                        "id": call_id,
                        "name": "bash",
                        "arguments": {"command": f"pytest pkg{i} -q", "timeout": 120},
                    },
                ],
                "api": "openai-responses",
                "provider": "openai",
                "model": "gpt-5",
                "stopReason": "toolUse",
                "timestamp": i,
            }
        )
        out.append(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "bash",
                "content": [{"type": "text", "text": f"{i} passed in 0.{i % 10}s\n" * 4}],
                "isError": False,
                "timestamp": i,
            }
        )
        i += 1
    return out[:n]


_NOT_ID = re.compile(r"[^a-zA-Z0-9_-]")


def reference_payload(messages: list[dict[str, Any]]) -> bytes:
    """The Anthropic body in plain Python, for assistant turns all from another model."""
    id_map: dict[str, str] = {}
    params: list[dict[str, Any]] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = msg["role"]
        if role == "user":
            if msg["content"].strip():
                params.append({"role": "user", "content": msg["content"]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            for b in msg["content"]:
                if b["type"] == "thinking" and b["thinking"].strip():
                    blocks.append({"type": "text", "text": b["thinking"]})
                elif b["type"] == "text" and b["text"].strip():
                    blocks.append({"type": "text", "text": b["text"]})
                elif b["type"] == "toolCall":
                    new_id = _NOT_ID.sub("_", b["id"])[:64]
                    id_map[b["id"]] = new_id
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": new_id,
                            "name": b["name"],
                            "input": b["arguments"],
                        }
                    )
            if blocks:
                params.append({"role": "assistant", "content": blocks})
        else:
            results = []
            while i < len(messages) and messages[i]["role"] == "toolResult":
                r = messages[i]
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": id_map.get(r["toolCallId"], r["toolCallId"]),
                        "content": "\n".join(c["text"] for c in r["content"]),
                        "is_error": r["isError"],
                    }
                )
                i += 1
            i -= 1
            params.append({"role": "user", "content": results})
        i += 1
    last = params[-1]
    if last["role"] == "user":
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    body = {
        "model": MODEL["id"],
        "messages": params,
        "max_tokens": MODEL["maxTokens"] // 3,
        "stream": True,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def messages() -> list[dict[str, Any]]:
    return make_messages(MESSAGES)


@pytest.fixture(scope="module")
def transcript(messages: list[dict[str, Any]]) -> Transcript:
    return Transcript(messages)


def clawctx_payload(transcript: Transcript) -> bytes:
    context = {"system_prompt": SYSTEM, "messages": transcript}
    # safe=False: the reference is pi-ai's converter, invalid requests included (the bench's
    # generated history repeats tool-call ids, which the default guard would rename).
    return build_request_payload(MODEL, context, now_ms=0, safe=False).to_json()


def test_same_body(messages: list[dict[str, Any]], transcript: Transcript) -> None:
    assert json.loads(clawctx_payload(transcript)) == json.loads(reference_payload(messages))


def test_clawctx_payload(benchmark: Any, transcript: Transcript) -> None:
    benchmark.group = f"payload {MESSAGES} messages"
    benchmark.extra_info.update(impl="clawctx", messages=MESSAGES)
    out = benchmark(clawctx_payload, transcript)
    assert out.startswith(b'{"model"')


def test_reference_payload(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    benchmark.group = f"payload {MESSAGES} messages"
    benchmark.extra_info.update(impl="reference", messages=MESSAGES)
    out = benchmark(reference_payload, messages)
    assert out.startswith(b'{"model"')
