"""Reading a streamed ~1 MB Anthropic reply back into pi's message (issue 28 target: >= 10x a
plain-Python accumulator of the same events).

The reply: raw SSE bytes as the API sends them, a thinking block, a long text block and a tool
call whose arguments arrive in pieces: about 12,000 deltas, 1 MB.
clawctx: ``parse_response`` (SSE split, JSON of every event, accumulation, usage, cost: Rust).
Reference: the same work in plain Python: split the frames, ``json.loads`` every ``data:``
line, accumulate the blocks as pi-ai does, parse the tool arguments at the block's end. Both
give the same message (checked below, in the smoke run too).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawctx import parse_response

MODEL: dict[str, Any] = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": True,
    "input": ["text", "image"],
    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    "contextWindow": 200000,
    "maxTokens": 64000,
}
NOW = 1767225600000


def make_reply(deltas: int = 4000) -> bytes:
    """SSE bytes: thinking, text and a tool call, ``deltas`` pieces each (~1 MB at 4,000)."""
    frames: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 52000, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
    ]
    frames[-1]["content_block"].update(thinking="", signature="")
    for i in range(deltas):
        piece = f"Considering step {i}: the cache key depends on the path. "
        frames.append(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
        )
    frames.append(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCkgIARAB" * 8},
        }
    )
    frames.append({"type": "content_block_stop", "index": 0})
    frames.append(
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}
    )
    for i in range(deltas):
        frames.append(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": f"Line {i} of the plan — ok ✓. "},
            }
        )
    frames.append({"type": "content_block_stop", "index": 1})
    tool = {"id": "toolu_bench", "name": "write", "input": {}, "type": "tool_use"}
    frames.append({"type": "content_block_start", "index": 2, "content_block": tool})
    args = json.dumps({"path": "notes.md", "content": 'x = "y"\n' * (deltas * 2)})
    step = max(1, len(args) // deltas)
    for at in range(0, len(args), step):
        frames.append(
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": args[at : at + step]},
            }
        )
    frames.append({"type": "content_block_stop", "index": 2})
    frames.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 9000},
        }
    )
    frames.append({"type": "message_stop"})
    text = "".join(
        f"event: {f['type']}\ndata: {json.dumps(f, ensure_ascii=False)}\n\n" for f in frames
    )
    return text.encode("utf-8")


def reference_read(reply: bytes) -> dict[str, Any]:
    """A plain-Python accumulator of the same events, with pi-ai's rules for these events."""
    cost = MODEL["cost"]
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    blocks: list[dict[str, Any]] = []
    parts: list[list[str]] = []
    open_at: dict[int, int] = {}
    stop = "stop"
    for frame in reply.decode("utf-8").split("\n\n"):
        data = None
        for line in frame.split("\n"):
            if line.startswith("data: "):
                data = line[6:]
        if data is None:
            continue
        event = json.loads(data)
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            at = open_at.get(event["index"])
            if at is None:
                continue
            dkind = delta["type"]
            if dkind == "text_delta":
                parts[at].append(delta["text"])
            elif dkind == "thinking_delta":
                parts[at].append(delta["thinking"])
            elif dkind == "input_json_delta":
                parts[at].append(delta["partial_json"])
            elif dkind == "signature_delta":
                blocks[at]["thinkingSignature"] += delta["signature"]
        elif kind == "content_block_start":
            cb = event["content_block"]
            if cb["type"] == "text":
                blocks.append({"type": "text", "text": ""})
            elif cb["type"] == "thinking":
                blocks.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
            elif cb["type"] == "tool_use":
                blocks.append(
                    {"type": "toolCall", "id": cb["id"], "name": cb["name"], "arguments": {}}
                )
            else:
                continue
            parts.append([])
            open_at[event["index"]] = len(blocks) - 1
        elif kind == "content_block_stop":
            at = open_at.pop(event["index"], None)
            if at is None:
                continue
            block, joined = blocks[at], "".join(parts[at])
            if block["type"] == "text":
                block["text"] = joined
            elif block["type"] == "thinking":
                block["thinking"] = joined
            else:
                block["arguments"] = json.loads(joined) if joined.strip() else {}
        elif kind == "message_start":
            u = event["message"]["usage"]
            usage["input"] = u.get("input_tokens") or 0
            usage["output"] = u.get("output_tokens") or 0
            usage["cacheRead"] = u.get("cache_read_input_tokens") or 0
            usage["cacheWrite"] = u.get("cache_creation_input_tokens") or 0
        elif kind == "message_delta":
            reason = event["delta"].get("stop_reason")
            if reason:
                stop = {"end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse"}[reason]
            for key, wire in (
                ("input", "input_tokens"),
                ("output", "output_tokens"),
                ("cacheRead", "cache_read_input_tokens"),
                ("cacheWrite", "cache_creation_input_tokens"),
            ):
                if event["usage"].get(wire) is not None:
                    usage[key] = event["usage"][wire]
    costs = {k: cost[k] / 1e6 * usage[k] for k in ("input", "output", "cacheRead", "cacheWrite")}
    costs["total"] = costs["input"] + costs["output"] + costs["cacheRead"] + costs["cacheWrite"]
    return {
        "role": "assistant",
        "content": blocks,
        "api": MODEL["api"],
        "provider": MODEL["provider"],
        "model": MODEL["id"],
        "usage": {**usage, "totalTokens": sum(usage.values()), "cost": costs},
        "stopReason": stop,
        "timestamp": NOW,
    }


def clawctx_read(reply: bytes) -> dict[str, Any]:
    return parse_response(MODEL, reply, now_ms=NOW)


@pytest.fixture(scope="module")
def reply() -> bytes:
    return make_reply()


def test_same_message(reply: bytes) -> None:
    assert clawctx_read(reply) == reference_read(reply)
    assert len(reply) > 900_000


def test_clawctx_response(benchmark: Any, reply: bytes) -> None:
    benchmark.group = "parse_response 1 MB reply"
    benchmark.extra_info.update(impl="clawctx", bytes=len(reply))
    benchmark(clawctx_read, reply)


def test_reference_response(benchmark: Any, reply: bytes) -> None:
    benchmark.group = "parse_response 1 MB reply"
    benchmark.extra_info.update(impl="reference", bytes=len(reply))
    benchmark(reference_read, reply)


# ---- instruction counts (a busy machine's wall clock is too noisy for a 10x check) --------

_COUNT_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[3])
from test_response import clawctx_read, make_reply, reference_read
impl, calls = sys.argv[1], int(sys.argv[2])
reply = make_reply()
read = {"clawctx": clawctx_read, "reference": reference_read}[impl]
for _ in range(calls):
    read(reply)
"""


def instructions_per_call(impl: str) -> float:
    """Instructions of one read of the reply by ``impl`` under callgrind: a run with three
    calls minus a run with one, halved (start-up, imports and first-call costs cancel)."""
    import os
    import re
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "count.py"
        script.write_text(_COUNT_SCRIPT, encoding="utf-8")
        counts = []
        for calls in (1, 3):
            result = subprocess.run(
                ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                + [sys.executable, str(script), impl, str(calls), str(here)],
                capture_output=True,
                text=True,
                env={**os.environ, "RAYON_NUM_THREADS": "1"},
                check=True,
            )
            found = re.search(r"Collected : (\d+)", result.stderr)
            if found is None:
                raise RuntimeError(f"no count from callgrind:\n{result.stderr[-2000:]}")
            counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / 2


if __name__ == "__main__":
    ours, theirs = instructions_per_call("clawctx"), instructions_per_call("reference")
    print(f"clawctx parse_response: {ours / 1e6:.1f} M instructions per read")
    print(f"plain-Python reference: {theirs / 1e6:.1f} M instructions per read")
    print(f"ratio: {theirs / ours:.1f}x")
