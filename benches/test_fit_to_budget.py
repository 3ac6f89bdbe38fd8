"""``fit_to_budget`` over every message of the session file: on a ``Transcript`` (units and
counts in Rust, the kept part as slices) and on the same history as OpenAI Chat messages
(converted to a transcript and back inside the timing), against LangChain's ``trim_messages``
with a chars/4 counter on the same Chat messages converted to LangChain (which may orphan a
tool message; it is timed, not checked).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import clawctx
from benches.conftest import measure
from benches.generate import GeneratedSession
from clawctx.interop import fit_to_budget, to_openai_chat

BUDGET = 100_000


@pytest.fixture(scope="module")
def transcript(session: GeneratedSession) -> clawctx.Transcript:
    messages = []
    with session.path.open("rb") as f:
        for line in f:
            entry = orjson.loads(line)
            if entry.get("type") == "message":
                messages.append(entry["message"])
    return clawctx.Transcript(messages)


def test_fit_transcript(
    benchmark: Any, session: GeneratedSession, transcript: clawctx.Transcript
) -> None:
    fit = measure(
        benchmark, "fit_to_budget", "clawctx Transcript", session, fit_to_budget, transcript, BUDGET
    )
    assert fit.tokens <= BUDGET and len(fit.messages) > 0


def test_fit_openai_chat(
    benchmark: Any, session: GeneratedSession, transcript: clawctx.Transcript
) -> None:
    chat = to_openai_chat(clawctx.convert_to_llm(transcript))
    fit = measure(
        benchmark, "fit_to_budget", "clawctx OpenAI Chat", session, fit_to_budget, chat, BUDGET
    )
    assert fit.tokens <= BUDGET and len(fit.messages) > 0


def test_langchain_trim_messages(
    benchmark: Any, session: GeneratedSession, transcript: clawctx.Transcript
) -> None:
    langchain = pytest.importorskip("langchain_core.messages")
    from clawctx.interop import to_langchain

    messages = to_langchain(clawctx.convert_to_llm(transcript))

    def count(batch: list[Any]) -> int:
        return sum(len(str(m.content)) // 4 for m in batch)

    kept = measure(
        benchmark,
        "fit_to_budget",
        "langchain trim_messages",
        session,
        lambda: langchain.trim_messages(messages, max_tokens=BUDGET, token_counter=count),
    )
    assert len(kept) > 0
