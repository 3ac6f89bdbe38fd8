"""``clawctx.compat``: the recorded release on request, the safe default otherwise.

Each entry point that produces what is sent to a model gives, by default, a request the
provider accepts; under ``compat("openclaw-2026.3.13")`` it gives exactly what the recorded
release gives, invalid requests included; per-call ``safe=`` overrides both. The setting is a
context variable: per thread and per asyncio task.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import clawctx
from clawctx.history import current_compat, request_issues
from clawctx.interop import fit_to_budget, to_anthropic, to_openai_chat
from clawctx.wire import build_request_payload, transform_messages

RELEASE = "openclaw-2026.3.13"
NOW = 1_767_225_600_000
SONNET = {
    "id": "claude-sonnet-4-5",
    "name": "Claude Sonnet 4.5",
    "api": "anthropic-messages",
    "provider": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "reasoning": False,
    "input": ["text"],
    "maxTokens": 8192,
}
ANTHROPIC = {"provider": "anthropic", "model_api": "anthropic-messages"}


def _call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": "toolUse",
        "timestamp": NOW,
    }


def _result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": NOW,
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": NOW}


# The same id twice (pi#4570-like): the recorded release sends `toolu_1` twice.
REPEATED = [_user("a"), _call("toolu_1"), _result("toolu_1"), _user("b"), _call("toolu_1")]
REPEATED += [_result("toolu_1", "second"), _user("c")]


def _tool_use_ids(body: dict[str, Any]) -> list[str]:
    return [
        block["id"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


def test_an_unknown_release_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"openclaw-2026\.3\.13"), clawctx.compat("2026.3.13"):
        pass
    with pytest.raises(ValueError, match="known releases"):
        clawctx.ContextPipeline(
            model=clawctx.ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
            workspace_dir=clawctx.demo_workspace_path(),
            compat="openclaw-2026.1",
        )


def test_compat_is_scoped_and_nests() -> None:
    assert current_compat() is None
    with clawctx.compat(RELEASE):
        assert current_compat() == RELEASE
        with clawctx.compat(None):
            assert current_compat() is None
        assert current_compat() == RELEASE
    assert current_compat() is None

    @clawctx.compat(RELEASE)
    def decorated() -> str | None:
        return current_compat()

    assert decorated() == RELEASE
    assert current_compat() is None


def test_compat_holds_per_thread() -> None:
    seen: dict[str, str | None] = {}
    inside = threading.Event()
    release = threading.Event()

    def in_compat() -> None:
        with clawctx.compat(RELEASE):
            inside.set()
            release.wait(5)
            seen["compat thread"] = current_compat()

    def plain() -> None:
        inside.wait(5)
        seen["other thread"] = current_compat()
        release.set()

    threads = [threading.Thread(target=in_compat), threading.Thread(target=plain)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"compat thread": RELEASE, "other thread": None}


def test_compat_holds_per_asyncio_task() -> None:
    async def task(use: bool) -> list[str | None]:
        seen = []
        if use:
            with clawctx.compat(RELEASE):
                await asyncio.sleep(0)
                seen.append(current_compat())
                # A worker thread started from the task sees the task's setting.
                seen.append(await asyncio.to_thread(current_compat))
        else:
            await asyncio.sleep(0)
            seen.append(current_compat())
            await asyncio.sleep(0)
            seen.append(current_compat())
        return seen

    async def main() -> list[list[str | None]]:
        return list(await asyncio.gather(task(True), task(False)))

    assert asyncio.run(main()) == [[RELEASE, RELEASE], [None, None]]


def test_sanitize_session_history_default_is_valid_and_compat_is_the_release() -> None:
    recorded = clawctx.sanitize_session_history(REPEATED, **ANTHROPIC, now_ms=NOW)
    with clawctx.compat(RELEASE):
        release = clawctx.sanitize_session_history(REPEATED, **ANTHROPIC, now_ms=NOW)
    assert (
        clawctx.sanitize_session_history(REPEATED, **ANTHROPIC, now_ms=NOW, safe=False) == release
    )
    assert request_issues(release, **ANTHROPIC) != []
    assert clawctx.validate_for_provider(recorded, **ANTHROPIC) == []
    # Nothing is lost: both results are still there, each with its own call.
    texts = [m["content"][0]["text"] for m in recorded.to_list() if m["role"] == "toolResult"]
    assert texts == ["ok", "second"]
    # A per-call option still overrides the block.
    with clawctx.compat(RELEASE):
        forced = clawctx.sanitize_session_history(REPEATED, **ANTHROPIC, now_ms=NOW, safe=True)
    assert forced == recorded


def test_a_valid_history_is_the_same_with_or_without_compat() -> None:
    valid = [_user("a"), _call("toolu_1"), _result("toolu_1"), _user("b")]
    default = clawctx.sanitize_session_history(valid, **ANTHROPIC, now_ms=NOW)
    with clawctx.compat(RELEASE):
        release = clawctx.sanitize_session_history(valid, **ANTHROPIC, now_ms=NOW)
    assert default == release
    body = build_request_payload(SONNET, {"messages": valid}, now_ms=NOW)
    assert body.guard_changes == []
    with clawctx.compat(RELEASE):
        assert build_request_payload(SONNET, {"messages": valid}, now_ms=NOW).to_json() == (
            body.to_json()
        )


def test_build_request_payload_default_is_valid_and_says_what_changed() -> None:
    payload = build_request_payload(SONNET, {"messages": REPEATED}, now_ms=NOW)
    ids = _tool_use_ids(payload.to_dict())
    assert len(ids) == 2 and len(set(ids)) == 2
    assert dict(payload.guard_changes) == {"renamed_call_ids": 1}
    with clawctx.compat(RELEASE):
        release = build_request_payload(SONNET, {"messages": REPEATED}, now_ms=NOW)
    assert _tool_use_ids(release.to_dict()) == ["toolu_1", "toolu_1"]
    assert release.guard_changes == []


def test_transform_messages_default_is_valid() -> None:
    orphan = [_user("a"), _result("toolu_9"), _call("toolu_1"), _result("toolu_1")]
    out = transform_messages(orphan, SONNET, "anthropic", now_ms=NOW)
    assert [m["role"] for m in out] == ["user", "assistant", "toolResult"]
    with clawctx.compat(RELEASE):
        release = transform_messages(orphan, SONNET, "anthropic", now_ms=NOW)
    assert [m["role"] for m in release] == ["user", "toolResult", "assistant", "toolResult"]


def test_interop_converters_default_is_valid() -> None:
    _, messages = to_anthropic(clawctx.Transcript(REPEATED))
    assert len(set(_tool_use_ids({"messages": messages}))) == 2
    with clawctx.compat(RELEASE):
        _, release = to_anthropic(clawctx.Transcript(REPEATED))
    assert _tool_use_ids({"messages": release}) == ["toolu_1", "toolu_1"]
    # A late result (after a user message) moves up to its call in Chat too.
    late = [_user("a"), _call("call_1"), _user("b"), _result("call_1")]
    chat = to_openai_chat(late)
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "user"]
    assert [m["role"] for m in to_openai_chat(late, safe=False)] == [
        "user",
        "assistant",
        "user",
        "tool",
    ]


def test_fit_to_budget_default_keeps_a_valid_request() -> None:
    fit = fit_to_budget(REPEATED, 100_000)
    kept = fit.messages
    assert request_issues(kept, **ANTHROPIC) == []
    with clawctx.compat(RELEASE):
        release = fit_to_budget(REPEATED, 100_000).messages
    assert request_issues(release, **ANTHROPIC) != []
