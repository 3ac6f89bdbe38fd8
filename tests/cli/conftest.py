"""Helpers for the command-line tests: crafted pi sessions and the CLI run in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawctx.cli import main

HEADER = {
    "type": "session",
    "version": 3,
    "id": "5a1e0000-0000-4000-8000-000000000001",
    "timestamp": "2026-03-14T09:00:00.000Z",
    "cwd": "/tmp/project",
}


def text(role: str, value: str) -> dict[str, Any]:
    """A user or assistant message with one text block."""
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": value}]}
    if role == "assistant":
        message.update(api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5")
        message.update(stopReason="stop", timestamp=1773478800000)
    else:
        message["timestamp"] = 1773478800000
    return message


def call(*ids: str) -> dict[str, Any]:
    """An assistant message calling ``read`` once per id."""
    message = text("assistant", "reading")
    message["content"] += [
        {"type": "toolCall", "id": i, "name": "read", "arguments": {"path": "a.txt"}} for i in ids
    ]
    message["stopReason"] = "toolUse"
    return message


def result(call_id: str) -> dict[str, Any]:
    """The ``read`` tool's result for ``call_id``."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": "file contents"}],
        "isError": False,
        "timestamp": 1773478800000,
    }


def session_lines(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Header plus one message entry per message, each the child of the one before."""
    lines: list[dict[str, Any]] = [HEADER]
    parent = None
    for n, message in enumerate(messages, 1):
        entry_id = f"{n:08x}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-03-14T09:00:00.000Z",
                "message": message,
            }
        )
        parent = entry_id
    return lines


def write_session(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Writes ``lines`` as compact JSONL (as pi does)."""
    path.write_text(
        "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines), encoding="utf-8"
    )
    return path


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Runs ``clawctx ARGS`` in-process: (exit status, stdout, stderr), with colour off."""

    def run(*args: str) -> tuple[int, str, str]:
        try:
            status = main(list(args))
        except SystemExit as exit_:
            status = int(exit_.code or 0)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
