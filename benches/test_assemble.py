"""(f) The facade's whole request: ``ContextPipeline.prepare`` (prompt body, open, hygiene, turn
validation, history limit, pairing, context engine, system prompt with workspace files, hooks,
orphan check, prompt images, token estimate).

* cold: a path, opened read-only on every call — compare with (b), the hot-path pipeline alone;
* warm: an open session after another writer appended one turn — ``refresh()`` reads only the
  new bytes, then the same stages run (what a long-lived runtime pays per request);
* vision: the cold case for a model with image input, which also scans user messages for image
  references (OpenClaw 2026.3.13
  `src/agents/pi-embedded-runner/run/images.ts`, ``detectAndLoadPromptImages``), the one stage that turns messages into dicts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import clawctx
from benches.conftest import copy_session, measure
from benches.generate import GeneratedSession, TurnAppender

ROUNDS = 10
TEXT_MODEL = clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5")
VISION_MODEL = clawctx.ModelSpec(
    "anthropic", "anthropic-messages", "claude-sonnet-4-5", input=("text", "image")
)
REQUEST = clawctx.PromptRequest(text="Summarize where we are.", session_key="agent:main:main")


def _pipeline(tmp_path: Path, model: clawctx.ModelSpec) -> clawctx.ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    return clawctx.ContextPipeline(model=model, workspace_dir=workspace, read_only=True)


def test_assemble_cold(benchmark: Any, session: GeneratedSession, tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, TEXT_MODEL)

    def assemble() -> int:
        return pipeline.prepare(session.path, REQUEST).estimated_tokens

    tokens = measure(benchmark, "assemble (facade)", "clawctx cold", session, assemble)
    assert tokens > 0


def test_assemble_cold_vision(benchmark: Any, session: GeneratedSession, tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path, VISION_MODEL)

    def assemble() -> int:
        return pipeline.prepare(session.path, REQUEST).estimated_tokens

    tokens = measure(benchmark, "assemble (facade)", "clawctx cold, vision", session, assemble)
    assert tokens > 0


@pytest.mark.parametrize("entry", ["prepare", "aprepare"])
def test_assemble_warm(
    benchmark: Any, session: GeneratedSession, tmp_path: Path, entry: str
) -> None:
    """``prepare`` runs its native steps in place; ``aprepare``, awaited on an event loop,
    hands each to a worker thread so the loop keeps serving other tasks: the difference is
    what the hand-offs cost."""
    path = copy_session(session, tmp_path)
    opened = clawctx.Session.open(path, read_only=True)
    pipeline = _pipeline(tmp_path, TEXT_MODEL)
    pipeline.prepare(opened, REQUEST)
    appender = TurnAppender(path, session.leaf_id)

    def append_one_turn() -> None:
        appender.append_turn()

    def assemble() -> int:
        if entry == "aprepare":
            return asyncio.run(pipeline.aprepare(opened, REQUEST)).pre_prompt_message_count
        return pipeline.prepare(opened, REQUEST).pre_prompt_message_count

    impl = "clawctx refresh + assemble (facade)"
    if entry == "aprepare":
        impl = "clawctx refresh + aprepare on a loop (worker threads)"
    count = measure(
        benchmark,
        "refresh",
        impl,
        session,
        assemble,
        setup=append_one_turn,
        rounds=ROUNDS,
    )
    assert count > 0 and opened.leaf_id == appender.leaf_id
