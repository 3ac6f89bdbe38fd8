"""``PreparedRequest.build_payload``: the pipeline's request body with the HTTP headers
provider-side context management needs, and ``promptCacheKey=True`` taken from the session id
(issue 31, items 1 and 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.prompt.system_prompt import SystemPromptParams
from conftest import write_jsonl

NOW = 1_767_225_600_000


def _prepare(tmp_path: Path, model: ModelSpec) -> Any:
    header = {
        "type": "session",
        "version": 3,
        "id": "sess-42",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/tmp",
    }
    path = write_jsonl(tmp_path / "s.jsonl", [header])
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    params = SystemPromptParams(workspace_dir=str(workspace), tool_names=("read",))
    pipeline = ContextPipeline(
        model=model, workspace_dir=workspace, system_prompt=params, now_ms=lambda: NOW
    )
    return pipeline.prepare(path, PromptRequest(text="hello"))


def test_auto_context_management_comes_with_its_beta_header(tmp_path: Path) -> None:
    model = ModelSpec("anthropic", "anthropic-messages", "claude-x", context_window=300_000)
    prepared = _prepare(tmp_path, model)
    payload = prepared.build_payload({"contextManagement": "auto"})
    assert payload.headers == {"anthropic-beta": "context-management-2025-06-27"}
    edit = payload.to_dict()["context_management"]["edits"][0]
    assert edit["trigger"] == {"type": "input_tokens", "value": 90_000}
    assert edit["clear_at_least"] == {"type": "input_tokens", "value": 15_000}
    # request_payload is the same body as a dict; without the option nothing is added.
    assert prepared.request_payload({"contextManagement": "auto"}) == payload.to_dict()
    assert "context_management" not in prepared.request_payload()
    assert prepared.build_payload().headers == {}


def test_prompt_cache_key_true_uses_the_session_id(tmp_path: Path) -> None:
    model = ModelSpec("openai", "openai-responses", "gpt-5", context_window=400_000)
    prepared = _prepare(tmp_path, model)
    assert prepared.session_id == "sess-42"
    body = prepared.request_payload({"promptCacheKey": True})
    assert body["prompt_cache_key"] == "sess-42"
    assert prepared.request_payload({"promptCacheKey": "other"})["prompt_cache_key"] == "other"
    assert "prompt_cache_key" not in prepared.request_payload()


def test_prompt_cache_key_true_without_a_session_id_is_refused(tmp_path: Path) -> None:
    import dataclasses

    model = ModelSpec("openai", "openai-responses", "gpt-5")
    prepared = dataclasses.replace(_prepare(tmp_path, model), session_id=None)
    with pytest.raises(ValueError, match="session id"):
        prepared.build_payload({"promptCacheKey": True})
