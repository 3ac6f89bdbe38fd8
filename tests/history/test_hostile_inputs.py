"""Hostile inputs at the Python/JSON boundary: cyclic and deeply nested objects, and numbers
JavaScript reads as Infinity.

Before these fixes a cycle or ~20,000 levels of nesting killed the process (SIGSEGV), so those
reproducers run in a subprocess: a crash shows up as a return code, not as a dead test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.history import Session, Transcript, read_leaf_context
from clawctx.prompt.system_prompt import SystemPromptParams

NOW = 1_767_225_600_000
LIMIT = 127  # the documented nesting limit of every Python → JSON conversion
#: The deepest message or custom data an append writes: its line nests one level more, and a
#: line may nest 127 levels (issue 33, N3).
APPEND_LIMIT = LIMIT - 1

_PRELUDE = """
from clawctx.history import (
    Session, Transcript, count_tokens, estimate_tokens, sanitize_session_history,
)

def deep(n):
    v = "x"
    for _ in range(n):
        v = {"a": v}
    return v

def cyclic():
    d = {"type": "text"}
    d["self"] = d
    return d

def message(content):
    return {"role": "user", "content": content, "timestamp": 1}

CALLS = {
    "Transcript.from_list": lambda v: Transcript.from_list([message(v)]),
    "estimate_tokens": lambda v: estimate_tokens(message(v)),
    "count_tokens": lambda v: count_tokens([message(v)]),
    "sanitize_session_history": lambda v: sanitize_session_history([message(v)]),
    "Session.append_message": lambda v: Session.in_memory().append_message(message(v)),
    "Session.append_custom_entry": lambda v: Session.in_memory().append_custom_entry("t", v),
}
"""

CALLS = [
    "Transcript.from_list",
    "estimate_tokens",
    "count_tokens",
    "sanitize_session_history",
    "Session.append_message",
    "Session.append_custom_entry",
]


def _run(body: str) -> subprocess.CompletedProcess[str]:
    # The child imports the clawctx this test run imports (an installed wheel in CI, the
    # source tree in an editable install), never the bare source tree without its extension.
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root), "RUST_BACKTRACE": "0"}
    script = _PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize(
    ("value", "message"),
    [("cyclic()", "contains a reference cycle"), ("deep(20_000)", f"deeper than {LIMIT} levels")],
    ids=["cycle", "deep-20000"],
)
def test_cyclic_or_deep_input_raises_value_error_instead_of_crashing(
    call: str, value: str, message: str
) -> None:
    result = _run(
        f"""
        try:
            CALLS[{call!r}]({value})
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.startswith("ValueError:"), result.stdout + result.stderr[-2000:]
    assert message in result.stdout


def test_shared_non_cyclic_references_are_fine() -> None:
    block = {"type": "text", "text": "same"}
    transcript = Transcript.from_list([{"role": "user", "content": [block, block], "timestamp": 1}])
    assert transcript[0]["content"] == [block, block]


def test_other_containers_convert_as_before() -> None:
    message = {"role": "user", "content": ({"type": "text", "text": "t"},), "timestamp": 1}
    assert Transcript.from_list([message])[0]["content"] == [{"type": "text", "text": "t"}]
    with pytest.raises(TypeError, match="not JSON-serializable"):
        Transcript.from_list([{"role": "user", "content": object()}])
    with pytest.raises(TypeError, match="not JSON-serializable"):
        Transcript.from_list([{"role": "user", "content": {1: "x"}}])


def _nested(levels: int) -> dict[str, Any]:
    """A user message whose nesting (the message dict included) is exactly `levels`."""
    inner: Any = "leaf"
    for _ in range(levels - 3):
        inner = {"a": inner}
    return {
        "role": "user",
        "content": [{"type": "text", "text": "t", "x": inner}],
        "timestamp": NOW,
    }


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _pipeline(tmp_path: Path) -> ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return ContextPipeline(
        model=ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
        workspace_dir=workspace,
        system_prompt=SystemPromptParams(workspace_dir=str(workspace), tool_names=("read",)),
        now_ms=lambda: NOW,
        read_only=True,
    )


def test_an_append_at_the_depth_limit_reads_back_through_every_reader(tmp_path: Path) -> None:
    # Before: append_message took a message nested ~130 levels, and every reader below then
    # raised on every call (serde_json's recursion limit, 128).
    message = _nested(APPEND_LIMIT)
    assert _depth(message) == APPEND_LIMIT
    path = tmp_path / "s.jsonl"
    session = Session.create(path, cwd="/tmp")
    entry_id = session.append_message(message)
    custom_id = session.append_custom_entry("deep", message)

    reopened = Session.open(path)
    assert reopened.skipped_lines == []
    for s in (session, reopened):
        entries = s.entries()
        assert entries[-2]["message"] == message
        assert entries[-1]["data"] == message
        assert s.get_entry(entry_id)["message"] == message  # type: ignore[index]
        assert s.get_entry(custom_id)["data"] == message  # type: ignore[index]
        assert s.tree()[0]["entry"]["message"] == message
        assert s.context().messages.to_list() == [message]
    assert read_leaf_context(path).messages.to_list() == [message]
    prepared = _pipeline(tmp_path).prepare(path, PromptRequest(text="next"))
    assert prepared.messages[0]["content"][0]["x"] == message["content"][0]["x"]


def test_an_append_above_the_depth_limit_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.create(path, cwd="/tmp")
    session.append_message(_nested(3))
    before = path.read_bytes()
    for levels in (APPEND_LIMIT + 1, LIMIT + 1, 130):
        with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
            session.append_message(_nested(levels))
        with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
            session.append_custom_entry("deep", _nested(levels))
    assert path.read_bytes() == before
    assert len(session.entries()) == 1
    assert len(Session.open(path).entries()) == 1


def test_numbers_javascript_reads_as_infinity_are_read_as_null(tmp_path: Path) -> None:
    # JSON.parse reads 1e400 as Infinity and JSON.stringify writes it back as null; before,
    # every reader of such a line raised "number out of range".
    big = "1" + "0" * 400
    lines = [
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z",'
        '"cwd":"/tmp"}',
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi","timestamp":1767225600000}}',
        '{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"1e400"},'
        '{"type":"toolCall","id":"t1","name":"read","arguments":{"n":1e400,"m":-1E+400}}],'
        '"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",'
        '"usage":{"input":1e400,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},'
        '"stopReason":"toolUse","timestamp":1767225600000}}',
        '{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z",'
        '"message":{"role":"toolResult","toolCallId":"t1","toolName":"read",'
        '"content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1767225600000,'
        f'"details":{{"size":{big}}}}}}}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")

    session = Session.open(path)
    assert session.skipped_lines == []
    assistant = session.get_entry("b")["message"]  # type: ignore[index]
    assert assistant["content"][1]["arguments"] == {"n": None, "m": None}
    assert assistant["content"][0]["text"] == "1e400"
    assert assistant["usage"]["input"] is None
    assert session.entries()[-1]["message"]["details"] == {"size": None}
    assert len(session.tree()) == 1
    messages = session.context().messages.to_list()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[1]["content"][1]["arguments"] == {"n": None, "m": None}
    assert read_leaf_context(path).messages.to_list() == messages
    prepared = _pipeline(tmp_path).prepare(path, PromptRequest(text="next"))
    assert [m["role"] for m in prepared.messages] == ["user", "assistant", "toolResult"]
    transcript = Transcript.from_json(b'[{"role":"user","content":"x","n":1e400}]')
    assert transcript.to_list() == [{"role": "user", "content": "x", "n": None}]
