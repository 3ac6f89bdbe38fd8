"""All transcript operations over a 50,000-message transcript, against the time Python needs to
merely parse its messages (json.loads, and orjson for a faster floor).

Run: python -m pytest benches/test_transcript_ops.py --benchmark-enable --benchmark-columns=min,median,rounds
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

import clawctx
from conftest import fixture_messages

MESSAGES = 50_000


@pytest.fixture(scope="module")
def message_texts() -> list[str]:
    """50,000 real messages (the fixture's, repeated with tool-call ids made unique)."""
    base = fixture_messages()
    texts = []
    round_ = 0
    while len(texts) < MESSAGES:
        for message in base:
            if len(texts) == MESSAGES:
                break
            text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
            texts.append(text.replace('"toolu_', f'"r{round_}_toolu_'))
        round_ += 1
    return texts


@pytest.fixture(scope="module")
def transcript(message_texts: list[str]) -> clawctx.Transcript:
    return clawctx.Transcript.from_json("[" + ",".join(message_texts) + "]")


SETTINGS = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})


def all_operations(t: clawctx.Transcript) -> Any:
    t = clawctx.sanitize_tool_call_inputs(t)
    t = clawctx.sanitize_tool_use_result_pairing(t, now_ms=0)
    t = clawctx.limit_history_turns(t, 1000)
    counts = t.token_counts()
    context = clawctx.estimate_context_tokens(t)
    assert SETTINGS is not None
    t = clawctx.prune_context(t, SETTINGS, context_window_tokens=200_000)
    return t, counts, context


def test_clawctx_all_operations(benchmark: Any, transcript: clawctx.Transcript) -> None:
    t, counts, _ = benchmark(all_operations, transcript)
    assert len(counts) <= MESSAGES and len(t) > 0


def test_floor_json_loads_each_message(benchmark: Any, message_texts: list[str]) -> None:
    out = benchmark(lambda: [json.loads(m) for m in message_texts])
    assert len(out) == MESSAGES


def test_floor_orjson_loads_each_message(benchmark: Any, message_texts: list[str]) -> None:
    out = benchmark(lambda: [orjson.loads(m) for m in message_texts])
    assert len(out) == MESSAGES
