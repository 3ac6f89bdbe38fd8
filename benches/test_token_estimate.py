"""(d) Token estimation (pi's chars/4 with UTF-16 lengths, pi-mono 0.58.3
`packages/coding-agent/src/core/compaction/compaction.ts`, ``estimateTokens``) of every message in the
session file, not only the context, so the input grows with the file.

clawctx: ``Transcript.token_counts()`` on a fresh transcript (each message scanned once in
Rust; the transcript is built from the messages' JSON in the untimed setup), and again on a
transcript whose per-message facts are already cached (what a refreshed session sees).
Reference: ``estimate_tokens`` over the messages as dicts (already parsed, which favours it).
Floor: ``orjson.loads`` of the messages' JSON.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import clawctx
from benches import reference_pipeline
from benches.conftest import measure
from benches.generate import GeneratedSession


@pytest.fixture(scope="module")
def messages_json(session: GeneratedSession) -> bytes:
    """Every message of the file as one JSON array."""
    parts = []
    with session.path.open("rb") as f:
        for line in f:
            entry = orjson.loads(line)
            if entry.get("type") == "message":
                parts.append(orjson.dumps(entry["message"]))
    return b"[" + b",".join(parts) + b"]"


def test_clawctx_cold(benchmark: Any, session: GeneratedSession, messages_json: bytes) -> None:
    holder: list[clawctx.Transcript] = []

    def fresh() -> None:
        holder[:] = [clawctx.Transcript.from_json(messages_json)]

    counts = measure(
        benchmark,
        "token estimate",
        "clawctx",
        session,
        lambda: holder[0].token_counts(),
        nbytes=len(messages_json),
        setup=fresh,
        rounds=10,
    )
    assert len(counts) == len(holder[0])


def test_clawctx_cached(benchmark: Any, session: GeneratedSession, messages_json: bytes) -> None:
    transcript = clawctx.Transcript.from_json(messages_json)
    transcript.token_counts()
    counts = measure(
        benchmark,
        "token estimate",
        "clawctx (facts cached)",
        session,
        transcript.token_counts,
        nbytes=len(messages_json),
    )
    assert len(counts) == len(transcript)


def test_reference(benchmark: Any, session: GeneratedSession, messages_json: bytes) -> None:
    messages = orjson.loads(messages_json)
    counts = measure(
        benchmark,
        "token estimate",
        "reference",
        session,
        lambda: [reference_pipeline.estimate_tokens(m) for m in messages],
        nbytes=len(messages_json),
    )
    assert counts == clawctx.Transcript.from_json(messages_json).token_counts().tolist()


def test_orjson_floor(benchmark: Any, session: GeneratedSession, messages_json: bytes) -> None:
    parsed = measure(
        benchmark,
        "token estimate",
        "orjson floor",
        session,
        orjson.loads,
        messages_json,
        nbytes=len(messages_json),
    )
    assert len(parsed) > 0
