"""The bundled demo session and workspace."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import clawctx
from clawctx.prompt.workspace import WORKSPACE_BOOTSTRAP_FILE_NAMES


def test_demo_workspace_is_complete() -> None:
    # Every bootstrap file OpenClaw looks for exists, so the demo prompt shows no "[MISSING]".
    workspace = clawctx.demo_workspace_path()
    for name in WORKSPACE_BOOTSTRAP_FILE_NAMES:
        assert (workspace / name).is_file(), name
        assert (workspace / name).read_text(encoding="utf-8").strip()
    assert (workspace / "skills" / "release-notes" / "SKILL.md").is_file()


def test_demo_session_opens_cleanly() -> None:
    session = clawctx.Session.open(clawctx.demo_session_path(), read_only=True)
    assert session.skipped_lines == []
    assert session.context().thinking_level == "medium"


def test_compact_with_nothing_to_summarize_does_not_call_the_summarizer(tmp_path: Path) -> None:
    # The demo's leaf path starts with a compaction and everything after it is kept: there is
    # nothing to summarize.
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(clawctx.demo_session_path(), path)
    session = clawctx.Session.open(path)
    preparation = clawctx.prepare_compaction(session, clawctx.CompactionSettings())
    assert preparation is not None and len(preparation.messages_to_summarize) == 0
    before = path.read_bytes()
    calls: list[object] = []

    def summarize(request: object) -> str:
        calls.append(request)
        return "summary"

    assert session.compact(summarize) is None
    assert calls == [] and path.read_bytes() == before

    async def summarize_async(request: object) -> str:
        calls.append(request)
        return "summary"

    assert asyncio.run(session.compact(summarize_async)) is None
    assert calls == [] and path.read_bytes() == before


def test_compact_still_summarizes_when_there_is_history(tmp_path: Path) -> None:
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/", now_ms=0)
    for turn in range(6):
        session.append_message({"role": "user", "content": "q" * 4000, "timestamp": turn})
        session.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a" * 4000}],
                "stopReason": "stop",
                "timestamp": turn,
            }
        )
    settings = clawctx.CompactionSettings(reserve_tokens=100, keep_recent_tokens=1500)
    result = session.compact(lambda request: "the summary", settings)
    assert result is not None and result.summary.startswith("the summary")
