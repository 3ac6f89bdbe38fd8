"""ContextPipeline is safe by default: a broken session gives a request the provider accepts,
each repair is named in ``PreparedRequest.changes``, a valid session gives exactly the recorded
release's request, and ``compat=`` reproduces the recorded release. Also: ``ModelSpec`` refuses
unknown APIs and misspelt providers, and a context over the model's window is flagged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.history import request_issues
from clawctx.prompt.system_prompt import SystemPromptParams
from conftest import write_jsonl

NOW = 1_767_225_600_000
RELEASE = "openclaw-2026.3.13"
MODELS = {
    "anthropic": ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    "openai-responses": ModelSpec("openai", "openai-responses", "gpt-5"),
    "openai-completions": ModelSpec("openai", "openai-completions", "gpt-4o"),
    "google": ModelSpec("google", "google-generative-ai", "gemini-2.5-pro"),
    "mistral": ModelSpec("mistral", "mistral-conversations", "mistral-large-latest"),
}


def _session(tmp_path: Path, messages: list[dict[str, Any]], name: str = "s.jsonl") -> Path:
    entries: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/tmp",
        }
    ]
    parent = None
    for i, message in enumerate(messages):
        entry_id = f"e{i:07d}"
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": message,
            }
        )
        parent = entry_id
    return write_jsonl(tmp_path / name, entries)


def _pipeline(tmp_path: Path, model: ModelSpec, **kwargs: Any) -> ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    params = SystemPromptParams(workspace_dir=str(workspace), tool_names=("read",))
    return ContextPipeline(
        model=model, workspace_dir=workspace, system_prompt=params, now_ms=lambda: NOW, **kwargs
    )


def _call(call_id: str, stop: str = "toolUse", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "stopReason": stop,
        "timestamp": NOW,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}],
        **extra,
    }


def _result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "isError": False,
        "content": [{"type": "text", "text": text}],
        "timestamp": NOW,
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": NOW}


# Repeated ids, an aborted turn whose call was answered, a result after a user message.
BROKEN = [
    _user("start"),
    _call("toolu_1"),
    _result("toolu_1"),
    _user("again"),
    _call("toolu_1"),
    _result("toolu_1", "second"),
    _call("toolu_2", stop="aborted"),
    _result("toolu_2"),
    _user("then"),
    _call("toolu_3"),
    _user("interrupting"),
    _result("toolu_3", "late"),
]


def _issues(messages: Any, model: ModelSpec) -> list[tuple[int, str]]:
    found = request_issues(
        messages, provider=model.provider, model_api=model.api, model_id=model.id
    )
    return [(v.index, v.rule) for v in found]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_broken_session_gives_a_valid_request_and_names_the_repairs(
    tmp_path: Path, name: str
) -> None:
    model = MODELS[name]
    path = _session(tmp_path, BROKEN)
    prepared = _pipeline(tmp_path, model).prepare(path, PromptRequest(text="next"))
    assert _issues(prepared.llm_messages(), model) == []
    assert prepared.request_payload()
    guard_notes = [c.detail for c in prepared.changes if c.stage == "request_guard"]
    with clawctx.compat(RELEASE):
        release = _pipeline(tmp_path, model).prepare(path, PromptRequest(text="next"))
    assert not [c for c in release.changes if c.stage == "request_guard"]
    if _issues(release.llm_messages(), model) == []:
        # Google's turn validation already makes this one valid: the same request is sent.
        assert name == "google"
        assert guard_notes == []
        assert prepared.request_payload() == release.request_payload()
    else:
        assert guard_notes, prepared.report()
        # Nothing said is lost: every tool output is still sent.
        texts = [
            m["content"][0]["text"]
            for m in prepared.messages.to_list()
            if m["role"] == "toolResult" and isinstance(m.get("content"), list) and m["content"]
        ]
        assert {"ok", "second", "late"} <= set(texts)
    explicit = _pipeline(tmp_path, model, compat=RELEASE).prepare(path, PromptRequest(text="next"))
    assert explicit.compat == RELEASE
    assert explicit.request_payload() == release.request_payload()
    assert explicit.llm_messages() == release.llm_messages()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_valid_session_gives_the_recorded_release_request(tmp_path: Path, name: str) -> None:
    model = MODELS[name]
    valid = [
        _user("start"),
        _call("toolu_1"),
        _result("toolu_1"),
        _user("more"),
        _call("toolu_2"),
        _result("toolu_2"),
    ]
    path = _session(tmp_path, valid)
    prepared = _pipeline(tmp_path, model).prepare(path, PromptRequest(text="next"))
    release = _pipeline(tmp_path, model, compat=RELEASE).prepare(path, PromptRequest(text="next"))
    assert prepared.request_payload() == release.request_payload()
    assert not [c for c in prepared.changes if c.stage == "request_guard"]


def test_the_demo_session_is_sent_as_the_recorded_release_sends_it(tmp_path: Path) -> None:
    model = MODELS["anthropic"]
    pipeline = ContextPipeline(
        model=model, workspace_dir=clawctx.demo_workspace_path(), now_ms=lambda: NOW, read_only=True
    )
    request = PromptRequest(text="What changed?")
    prepared = pipeline.prepare(clawctx.demo_session_path(), request)
    with clawctx.compat(RELEASE):
        release = pipeline.prepare(clawctx.demo_session_path(), request)
    assert prepared.request_payload() == release.request_payload()


def test_a_context_over_the_window_is_flagged(tmp_path: Path) -> None:
    model = ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5", context_window=1000)
    path = _session(tmp_path, [_user("x" * 8000)])
    prepared = _pipeline(tmp_path, model).prepare(path, PromptRequest(text="next"))
    budget = [c.detail for c in prepared.changes if c.stage == "budget"]
    assert len(budget) == 1 and "1,000-token context window" in budget[0]
    roomy = ModelSpec(
        "anthropic", "anthropic-messages", "claude-sonnet-4-5", context_window=200_000
    )
    prepared = _pipeline(tmp_path, roomy).prepare(path, PromptRequest(text="next"))
    assert not [c for c in prepared.changes if c.stage == "budget"]


def test_model_spec_refuses_an_unknown_api_and_a_misspelt_provider() -> None:
    with pytest.raises(ValueError, match="known APIs: anthropic-messages"):
        ModelSpec("anthropic", "anthropic-msgs", "claude-sonnet-4-5")
    with pytest.raises(ValueError, match="did you mean 'anthropic'"):
        ModelSpec("antropic", "anthropic-messages", "claude-sonnet-4-5")
    # A provider of one's own (an OpenAI-compatible endpoint) is accepted.
    assert ModelSpec("my-gateway", "openai-completions", "m").provider == "my-gateway"
