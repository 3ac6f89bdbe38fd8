"""A byte-stable prefix (issue 31, item 4): across consecutive turns of the default pipeline —
with inbound metadata, system events, images, a changing clock, hooks that add context, tool
calls — the system prompt, the tools and every message of the previous request are sent again
byte for byte (cache markers aside), for every payload API; when a compaction, a reset, a
prune, a branch switch or an edited workspace file breaks the prefix, ``PreparedRequest.
changes`` names it (stage ``"cache"``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clawctx
from clawctx.engine.cache_prefix import CACHE_BREAK_CAUSES, CachePrefixTracker
from clawctx.engine.hooks import HookRunner
from clawctx.history import Session
from clawctx.prompt.prompt_images import ImageContent
from clawctx.prompt.system_events import SystemEventQueue
from tests._broken_sessions import SMALL_USAGE

# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

MODELS = {
    "anthropic": clawctx.ModelSpec(
        "anthropic",
        "anthropic-messages",
        "claude-sonnet-4-5",
        input=("text", "image"),
        context_window=200_000,
    ),
    "openai-responses": clawctx.ModelSpec(
        "openai", "openai-responses", "gpt-5", input=("text", "image"), context_window=400_000
    ),
    "openai-completions": clawctx.ModelSpec(
        "openai", "openai-completions", "gpt-4o", input=("text", "image"), context_window=128_000
    ),
    "google": clawctx.ModelSpec(
        "google",
        "google-generative-ai",
        "gemini-2.5-pro",
        input=("text", "image"),
        context_window=1_000_000,
    ),
}
TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
START_MS = 1_780_000_000_000


def _without_cache_markers(body: dict[str, Any]) -> dict[str, Any]:
    """The body as a prompt cache compares it: ``cache_control`` markers left out, and the one
    text block pi-ai makes of the newest user message to carry its marker (anthropic.ts) read
    as the string it was."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    out: dict[str, Any] = clean(body)
    for message in out.get("messages", []):
        content = message.get("content")
        if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
            message["content"] = content[0]["text"]
    return out


def _conversation(body: dict[str, Any]) -> tuple[str, list[Any]]:
    for key in ("messages", "input", "contents"):
        if key in body:
            return key, body[key]
    raise AssertionError(f"no conversation in {sorted(body)}")


def _assert_extends(previous: dict[str, Any], body: dict[str, Any]) -> None:
    key, sent = _conversation(previous)
    _, now = _conversation(body)
    assert now[: len(sent)] == sent, f"{key} of the previous request are not sent again"
    for field in body:
        if field != key:
            assert json.dumps(body[field]) == json.dumps(previous.get(field)), field


class _Loop:
    """A runtime on one session: a pipeline with hooks, system events and a clock."""

    def __init__(self, tmp_path: Path, model: clawctx.ModelSpec, **pipeline: Any) -> None:
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        (self.workspace / "AGENTS.md").write_text("Be brief.\n")
        self.clock = START_MS
        self.events = SystemEventQueue()
        self.hooks = HookRunner()
        self.weather = 0
        self.hooks.register(
            "before_prompt_build",
            lambda event, ctx: {"prependContext": f"Weather: {self.weather}C"},
        )
        self.model = model
        self.pipeline = clawctx.ContextPipeline(
            model=model,
            workspace_dir=self.workspace,
            hooks=self.hooks,
            system_events=self.events,
            now_ms=lambda: self.clock,
            system_prompt=clawctx.SystemPromptParams(
                workspace_dir=str(self.workspace), tool_names=("read",)
            ),
            **pipeline,
        )
        self.path = tmp_path / "session.jsonl"
        self.session = Session.create(self.path, cwd=str(self.workspace))
        self.turn = 0

    def prepare(
        self, *, images: bool = False, chat_type: str = "direct"
    ) -> tuple[clawctx.PreparedRequest, dict[str, Any]]:
        inbound = {
            "sender_name": f"Ann {self.turn}",
            "chat_type": chat_type,
            "group_subject": "Launch",
            "message_sid": f"m{self.turn}",
        }
        request = clawctx.PromptRequest(
            text=f"question {self.turn}",
            inbound=inbound,
            images=[ImageContent(PNG, "image/png")] if images else [],
            session_key="agent:main:chat",
        )
        prepared = self.pipeline.prepare(self.session, request)
        return prepared, _without_cache_markers(prepared.request_payload(tools=TOOLS))

    def reply(self, prepared: clawctx.PreparedRequest, *, tool_call: bool = False) -> None:
        usage = dict(SMALL_USAGE)
        model = {"api": self.model.api, "provider": self.model.provider, "model": self.model.id}
        messages: list[dict[str, Any]] = []
        if tool_call:
            call_id = f"call_{self.turn}"
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": call_id,
                            "name": "read",
                            "arguments": {"path": "notes.md"},
                        }
                    ],
                    **model,
                    "usage": usage,
                    "stopReason": "toolUse",
                    "timestamp": self.clock + 500,
                }
            )
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": "read",
                    "content": [{"type": "text", "text": "notes " * 40}],
                    "isError": False,
                    "timestamp": self.clock + 600,
                }
            )
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {self.turn}"}],
                **model,
                "usage": usage,
                "stopReason": "stop",
                "timestamp": self.clock + 1000,
            }
        )
        self.pipeline.record_turn(self.session, prepared, messages)
        self.turn += 1


def _cache_changes(prepared: clawctx.PreparedRequest) -> list[str]:
    return [change.detail for change in prepared.changes if change.stage == "cache"]


TURN = st.fixed_dictionaries(
    {
        "clock_step_ms": st.integers(1, 10_000_000),
        "system_event": st.booleans(),
        "images": st.booleans(),
        "tool_call": st.booleans(),
        "weather": st.integers(-10, 40),
    }
)


@pytest.mark.parametrize("api", sorted(MODELS))
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=st.lists(TURN, min_size=2, max_size=5), chat_type=st.sampled_from(["direct", "group"]))
def test_consecutive_requests_extend_each_other(
    tmp_path_factory: pytest.TempPathFactory, api: str, turns: list[dict[str, Any]], chat_type: str
) -> None:
    loop = _Loop(tmp_path_factory.mktemp("loop"), MODELS[api])
    previous: dict[str, Any] | None = None
    for turn in turns:
        loop.clock += turn["clock_step_ms"]
        loop.weather = turn["weather"]
        if turn["system_event"]:
            loop.events.enqueue(f"Cron ran at turn {loop.turn}", session_key="agent:main:chat")
        prepared, body = loop.prepare(images=turn["images"], chat_type=chat_type)
        assert _cache_changes(prepared) == []
        if previous is not None:
            _assert_extends(previous, body)
        previous = body
        loop.reply(prepared, tool_call=turn["tool_call"])


def _two_turns(loop: _Loop) -> dict[str, Any]:
    for _ in range(2):
        prepared, body = loop.prepare()
        loop.reply(prepared, tool_call=True)
    return body


def test_a_compaction_is_named(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    _two_turns(loop)
    kept = loop.session.branch_path()[-2]["id"]
    loop.session.append_compaction("We discussed the launch.", kept, 1234)
    prepared, _ = loop.prepare()
    [detail] = _cache_changes(prepared)
    assert detail.startswith("compaction: ")
    # The request after it extends the compacted one again.
    loop.reply(prepared)
    assert _cache_changes(loop.prepare()[0]) == []


def test_a_reset_entry_is_named(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    _two_turns(loop)
    leaf = loop.session.leaf_id
    reset = {
        "type": "reset",
        "id": "reset0001",
        "parentId": leaf,
        "timestamp": "2026-06-01T00:00:00.000Z",
        "reason": "new",
    }
    with open(loop.path, "a", encoding="utf-8") as f:
        f.write(json.dumps(reset) + "\n")
    prepared, _ = loop.prepare()
    [detail] = _cache_changes(prepared)
    assert detail.startswith("reset: ")


def test_a_new_session_under_the_same_key_is_a_reset(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    _two_turns(loop)
    loop.session = Session.create(tmp_path / "next.jsonl", cwd=str(loop.workspace))
    [detail] = _cache_changes(loop.prepare()[0])
    assert detail.startswith("reset: the session key now names session")


def test_the_history_limit_is_named_as_a_prune(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"], history_limit=2)
    for _ in range(3):
        prepared, _ = loop.prepare()
        assert _cache_changes(prepared) == []
        loop.reply(prepared)
    # The fourth request keeps the last two of three stored user turns: the first is dropped.
    [detail] = _cache_changes(loop.prepare()[0])
    assert detail.startswith("prune: limit_history")


def test_a_branch_switch_is_named(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    _two_turns(loop)
    first_user = loop.session.branch_path()[0]["id"]
    loop.session.branch(first_user)
    [detail] = _cache_changes(loop.prepare()[0])
    assert detail.startswith("branch: ")


def test_an_edited_workspace_file_is_named(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    _two_turns(loop)
    (loop.workspace / "AGENTS.md").write_text("Be very brief.\n")
    [detail] = _cache_changes(loop.prepare()[0])
    assert detail.startswith("system prompt: changed at character ")


def test_other_tools_are_named(tmp_path: Path) -> None:
    loop = _Loop(tmp_path, MODELS["anthropic"])
    prepared, _ = loop.prepare()
    loop.reply(prepared)
    request = clawctx.PromptRequest(
        text="next", session_key="agent:main:chat", tools=[{**TOOLS[0], "description": "Read"}]
    )
    assert "tools: the tool definitions changed" in _cache_changes(
        loop.pipeline.prepare(loop.session, request)
    )


def test_causes_are_listed_and_the_tracker_is_bounded(tmp_path: Path) -> None:
    assert len(set(CACHE_BREAK_CAUSES)) == 7
    tracker = CachePrefixTracker(capacity=2)
    session = Session.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    for key in ("a", "b", "c"):
        tracker.check(
            key,
            session,
            system_prompt="s",
            tools=None,
            history=clawctx.Transcript(),
            prompt_message={"role": "user", "content": "x"},
            stages=[],
        )
    assert len(tracker._sent) == 2


def _naive_first_difference(old: Any, new: Any) -> int:
    for index in range(min(len(old), len(new))):
        if old[index] != new[index]:
            return index
    return min(len(old), len(new))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 3), max_size=12),
    st.lists(st.integers(0, 3), max_size=12),
    st.text(alphabet="ab\u00e9\U0001f600", max_size=30),
    st.text(alphabet="ab\u00e9\U0001f600", max_size=30),
)
def test_the_first_difference_is_the_first_differing_item(
    old: list[int], new: list[int], old_text: str, new_text: str
) -> None:
    from clawctx._core import Transcript
    from clawctx.engine.cache_prefix import _first_difference

    def transcript(values: list[int]) -> Transcript:
        return Transcript.from_list(
            [{"role": "user", "content": f"m{v}", "timestamp": 1} for v in values]
        )

    assert _first_difference(transcript(old), transcript(new)) == _naive_first_difference(old, new)
    assert _first_difference(old_text, new_text) == _naive_first_difference(old_text, new_text)
