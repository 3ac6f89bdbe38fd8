"""Per-message columns (`message_columns`) and the per-session scan records."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from clawctx.history import Transcript, message_columns

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "héllo 😀", "timestamp": 1000},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "ok"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {}},
        ],
        "stopReason": "toolUse",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "usage": {"input": 10, "output": 5, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 17},
    },
    {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "isError": True,
        "content": [
            {"type": "text", "text": "boom"},
            {"type": "image", "data": "x", "mimeType": "image/png"},
        ],
        "timestamp": 3000,
    },
    {"role": "toolResult", "toolCallId": "c2", "toolName": "bash", "content": "", "timestamp": 4},
    {"role": "assistant", "content": [], "stopReason": "error", "timestamp": 5},
]


def test_message_columns_exactly() -> None:
    transcript = Transcript.from_list(MESSAGES)
    c = message_columns(transcript)
    assert c["index"].tolist() == [0, 1, 2, 3, 4]
    assert c["role"] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert c["tool_name"] == [None, "read,bash", "read", "bash", None]
    # UTF-16 units: the emoji is a surrogate pair.
    assert c["text_chars"].tolist() == [8, 2, 4, 0, 0]
    assert c["thinking_chars"].tolist() == [0, 3, 0, 0, 0]
    assert c["tool_calls"].tolist() == [0, 2, 0, 0, 0]
    assert c["has_image"].tolist() == [False, False, True, False, False]
    assert c["is_error"].tolist() == [False, False, True, False, True]
    assert c["estimated_tokens"].tolist() == transcript.token_counts().tolist()
    ts = c["timestamp_ms"].tolist()
    assert ts[0] == 1000 and ts[1] == 1_767_225_600_000 and ts[2:] == [3000, 4, 5]
    assert c["usage_input"][1] == 10 and c["usage_output"][1] == 5
    assert c["usage_cache_read"][1] == 2 and c["usage_cache_write"][1] == 0
    assert c["usage_total"][1] == 17
    for key in ("usage_input", "usage_output", "usage_total"):
        assert [math.isnan(v) for v in c[key].tolist()] == [True, False, True, True, True]
    assert {k: v.dtype for k, v in c.items() if isinstance(v, np.ndarray)} == {
        "index": np.int64,
        "text_chars": np.int64,
        "thinking_chars": np.int64,
        "estimated_tokens": np.int64,
        "tool_calls": np.int64,
        "has_image": np.bool_,
        "is_error": np.bool_,
        "timestamp_ms": np.float64,
        "usage_input": np.float64,
        "usage_output": np.float64,
        "usage_cache_read": np.float64,
        "usage_cache_write": np.float64,
        "usage_total": np.float64,
    }


def test_message_columns_of_a_list_and_of_nothing() -> None:
    assert (
        message_columns(MESSAGES)["tool_name"]
        == message_columns(Transcript.from_list(MESSAGES))["tool_name"]
    )
    empty = message_columns([])
    assert empty["role"] == [] and len(empty["usage_total"]) == 0
    with pytest.raises(TypeError):
        message_columns([1, 2])
