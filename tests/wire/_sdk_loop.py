"""What the real-SDK loop tests share: an HTTP client for the SDK that replays recorded SSE
replies and records the request bodies, and a pipeline on a copy of the demo session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import clawctx
from clawctx.history import Session

#: The tool the loop's model calls.
TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


class Replay:
    """The network, replayed: each request's JSON body is kept in :attr:`sent` and answered
    with the next recorded SSE reply."""

    def __init__(self, sdk: ModuleType, path_suffix: str, replies: list[bytes]) -> None:
        # The HTTP library the installed SDK takes: `httpx2` in anthropic 2.x / openai 3.x.
        self.httpx: Any = getattr(sdk._base_client, "httpx2", None) or pytest.importorskip("httpx")
        self.path_suffix = path_suffix
        self.replies = replies
        self.sent: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Any:
        assert request.url.path.endswith(self.path_suffix)
        self.sent.append(json.loads(request.content))
        reply = self.replies[len(self.sent) - 1]
        return self.httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=reply
        )

    def http_client(self) -> Any:
        return self.httpx.Client(transport=self.httpx.MockTransport(self))


def demo_pipeline(
    tmp_path: Path, model: clawctx.ModelSpec
) -> tuple[clawctx.ContextPipeline, Session, Path]:
    """A pipeline for ``model`` on a copy of the demo session, with the ``read`` tool named."""
    path = tmp_path / "session.jsonl"
    shutil.copyfile(clawctx.demo_session_path(), path)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    pipeline = clawctx.ContextPipeline(
        model=model,
        workspace_dir=workspace,
        system_prompt=clawctx.SystemPromptParams(
            workspace_dir=str(workspace), tool_names=("read",)
        ),
    )
    return pipeline, Session.open(path), path


def tool_result(call_id: str, text: str, after_ms: int) -> dict[str, Any]:
    """pi's result of the ``read`` call."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": after_ms + 5,
    }
