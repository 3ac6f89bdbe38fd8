"""``record_turn`` whole and once (issue 28, item 2): every message is checked and converted
before the first byte is written, the turn goes out in one locked write
(``Session.append_messages``), a repeat of the same turn writes nothing and returns the ids
written the first time, and a write cut short by a crash is dropped by the next open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx.engine import TurnMessageError
from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
from clawctx.history import Session
from clawctx.prompt.system_prompt import SystemPromptParams
from conftest import write_jsonl

NOW = 1_767_225_600_000
MODEL = ModelSpec("anthropic", "anthropic-messages", "claude-sonnet-4-5", context_window=200_000)
HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/w",
}


def _assistant(text: str, *, calls: int = 0) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [
        {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": "a"}}
        for i in range(calls)
    ]
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": NOW,
    }


def _result(call: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": NOW,
    }


def _session_file(tmp_path: Path) -> Path:
    entries: list[dict[str, Any]] = [
        HEADER,
        {
            "type": "message",
            "id": "e1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": NOW},
        },
        {
            "type": "message",
            "id": "e2",
            "parentId": "e1",
            "timestamp": "2026-01-01T00:00:02.000Z",
            "message": _assistant("hello"),
        },
    ]
    return write_jsonl(tmp_path / "s.jsonl", entries)


def _pipeline(tmp_path: Path) -> ContextPipeline:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    params = SystemPromptParams(workspace_dir=str(workspace), tool_names=("read",))
    return ContextPipeline(
        model=MODEL, workspace_dir=workspace, system_prompt=params, now_ms=lambda: NOW
    )


def _turn() -> list[dict[str, Any]]:
    return [_assistant("reading", calls=1), _result("call_0", "file a"), _assistant("done")]


# ---- whole ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "toolResult", "toolCallId": "call_0", "content": [], "score": float("nan")},
        {"role": "toolResult", "toolCallId": "call_0", "content": [], "x": float("inf")},
        {"role": "toolResult", "toolCallId": "call_0", "content": [], "x": object()},
    ],
    ids=["nan", "inf", "object"],
)
def test_a_message_that_cannot_be_serialized_writes_nothing(
    tmp_path: Path, bad: dict[str, Any]
) -> None:
    # Before: the prompt and the first reply were in the file when the third message failed,
    # and a retry wrote them again.
    path = _session_file(tmp_path)
    pipeline = _pipeline(tmp_path)
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="read a"))
    before, leaf, count = path.read_bytes(), session.leaf_id, len(session)
    # Message 0 is the prompt.
    with pytest.raises((TypeError, ValueError), match="message 2 of the turn"):
        pipeline.record_turn(session, prepared, [_assistant("x", calls=1), bad, _assistant("y")])
    assert path.read_bytes() == before
    assert session.leaf_id == leaf and len(session) == count
    # The retry with a good message writes the turn once.
    ids = pipeline.record_turn(session, prepared, _turn())
    assert len(ids) == 4
    assert len(Session.open(path, read_only=True)) == count + 4


ANTHROPIC_BODY: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
    ],
    "stop_reason": "tool_use",
    "usage": {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 3},
}


def _sdk_message() -> Any:
    anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK (test extra)")
    return anthropic.types.Message.model_validate(ANTHROPIC_BODY)


@pytest.mark.parametrize("form", ["body", "sdk-message", "sdk-events"])
def test_a_provider_reply_is_recorded_as_parse_response_reads_it(tmp_path: Path, form: str) -> None:
    if form == "body":
        reply: Any = ANTHROPIC_BODY
    elif form == "sdk-message":
        reply = _sdk_message()
    else:  # what iterating the SDK's Stream yields: its events, as one list
        anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK (test extra)")
        from pydantic import TypeAdapter

        adapter: TypeAdapter[Any] = TypeAdapter(anthropic.types.RawMessageStreamEvent)
        start = {**ANTHROPIC_BODY, "content": [], "stop_reason": None}
        events = [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Reading it."},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"path": "a.txt"}'},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 7},
            },
            {"type": "message_stop"},
        ]
        reply = iter([adapter.validate_python(e) for e in events])
    path = _session_file(tmp_path)
    pipeline = _pipeline(tmp_path)
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="hello"))
    ids = pipeline.record_turn(session, prepared, [reply, _result("toolu_1", "file text")])
    assert len(ids) == 3
    written = Session.open(path, read_only=True).context().messages.to_list()[-2]
    expected = clawctx.parse_response(MODEL, ANTHROPIC_BODY, now_ms=written["timestamp"])
    assert written == expected
    assert written["content"][1] == {
        "type": "toolCall",
        "id": "toolu_1",
        "name": "read",
        "arguments": {"path": "a.txt"},
    }
    assert written["usage"]["cacheRead"] == 3 and written["stopReason"] == "toolUse"


@pytest.mark.parametrize(
    "reply, reason",
    [
        # A reply's content with its tool_use block, in no reply's shape.
        (
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "r"}]},
            "Message",
        ),
        # An OpenAI Chat completion body for an Anthropic model.
        (
            {
                "id": "c",
                "object": "chat.completion",
                "choices": [{"message": {"role": "assistant"}}],
            },
            "openai-completions",
        ),
    ],
    ids=["tool-use-block", "chat-completion"],
)
def test_a_reply_that_cannot_be_read_is_refused_and_nothing_is_written(
    tmp_path: Path, reply: dict[str, Any], reason: str
) -> None:
    path = _session_file(tmp_path)
    pipeline = _pipeline(tmp_path)
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="hello"))
    before = path.read_bytes()
    with pytest.raises(TurnMessageError, match=f"provider reply that cannot be read.*{reason}"):
        pipeline.record_turn(session, prepared, [_assistant("ok"), reply])
    assert path.read_bytes() == before


def test_other_non_pi_messages_are_refused(tmp_path: Path) -> None:
    session = Session.in_memory()
    pipeline = _pipeline(tmp_path)
    prepared = pipeline.prepare(session, PromptRequest(text="hello"))
    for bad, reason in (
        ({"role": "robot", "content": "x"}, "not a pi message"),
        ({"role": "toolResult", "content": []}, "toolCallId"),
        ({"role": "assistant", "content": "plain"}, "not a pi message"),
        ({"role": "compactionSummary", "summary": "s"}, "append_compaction"),
        ("text", "not a dict"),
    ):
        with pytest.raises(TurnMessageError, match=reason):
            pipeline.record_turn(session, prepared, [_assistant("ok"), bad])  # type: ignore[list-item]
    assert len(session) == 0


def test_one_write_for_the_whole_turn(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    session = Session.open(path)
    ids = session.append_messages([_result("c", "r"), _assistant("a"), _assistant("b")])
    entries = [json.loads(line) for line in path.read_text().splitlines()[3:]]
    assert [e["id"] for e in entries] == ids
    assert [e["parentId"] for e in entries] == ["e2", ids[0], ids[1]]
    # The mark that lets an open drop a turn cut short; pi ignores the field.
    assert [e["clawctxTurn"] for e in entries] == [
        {"part": 1, "of": 3},
        {"part": 2, "of": 3},
        {"part": 3, "of": 3},
    ]
    assert session.leaf_id == ids[-1]
    assert Session.open(path).context_messages().to_list()[-1]["content"][0]["text"] == "b"
    # A single message without a key is written as append_message writes it.
    (single,) = session.append_messages([_assistant("c")])
    assert "clawctxTurn" not in json.loads(path.read_text().splitlines()[-1])
    assert session.leaf_id == single


# ---- once ---------------------------------------------------------------------------------------


def test_the_same_prepared_request_twice_appends_once(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    pipeline = _pipeline(tmp_path)
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="read a"))
    first = pipeline.record_turn(session, prepared, _turn())
    size = path.stat().st_size
    second = pipeline.record_turn(session, prepared, _turn())
    assert second == first and len(first) == 4
    assert path.stat().st_size == size
    # Found again after a restart too: the key is in the file.
    reopened = Session.open(path)
    assert pipeline.record_turn(reopened, prepared, _turn()) == first
    assert path.stat().st_size == size
    (stored,) = [e for e in map(json.loads, path.read_text().splitlines()) if e["id"] == first[0]]
    assert stored["clawctxTurn"] == {"key": prepared.turn_key, "part": 1, "of": 4}
    # Another prepared request is another turn.
    other = pipeline.prepare(reopened, PromptRequest(text="again"))
    assert other.turn_key != prepared.turn_key
    assert len(pipeline.record_turn(reopened, other, [_assistant("ok")])) == 2


def test_an_explicit_turn_key_survives_a_restart_with_a_new_prepared_request(
    tmp_path: Path,
) -> None:
    path = _session_file(tmp_path)
    pipeline = _pipeline(tmp_path)
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="read a"))
    first = pipeline.record_turn(session, prepared, _turn(), turn_key="run-7")
    size = path.stat().st_size
    # A restarted runtime prepares again (its leaf is now the end of the turn) and retries.
    restarted = _pipeline(tmp_path)
    again = restarted.prepare(str(path), PromptRequest(text="read a"))
    lazy = Session.open(path, lazy=True)
    assert restarted.record_turn(lazy, again, _turn(), turn_key="run-7") == first
    assert path.stat().st_size == size
    assert lazy.find_turn("run-7") == first
    assert lazy.find_turn("run-8") is None


def test_a_duplicate_turn_does_not_reach_the_engine_again(tmp_path: Path) -> None:
    calls: list[int] = []

    class Engine(clawctx.LegacyContextEngine):
        async def after_turn(self, **kwargs: Any) -> None:
            calls.append(len(kwargs["messages"]))

    path = _session_file(tmp_path)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    pipeline = ContextPipeline(
        model=MODEL, workspace_dir=workspace, context_engine=Engine(), now_ms=lambda: NOW
    )
    session = Session.open(path)
    prepared = pipeline.prepare(session, PromptRequest(text="q"))
    pipeline.record_turn(session, prepared, [_assistant("a")])
    pipeline.record_turn(session, prepared, [_assistant("a")])
    assert calls == [4]


# ---- a write cut short ----------------------------------------------------------------------


def _turn_bytes(tmp_path: Path) -> tuple[bytes, bytes]:
    """The file before and after appending a 3-message turn."""
    path = _session_file(tmp_path / "model")
    before = path.read_bytes()
    Session.open(path).append_messages(_turn(), turn_key="k")
    return before, path.read_bytes()


def test_every_cut_of_the_turns_write_reads_as_none_or_whole(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    before, after = _turn_bytes(tmp_path)
    turn = after[len(before) :]
    path = tmp_path / "s.jsonl"
    line_ends = {i + 1 for i, b in enumerate(turn) if b == ord("\n")}
    for cut in sorted({0, 1, 2, *line_ends, *(e - 1 for e in line_ends), *range(0, len(turn), 97)}):
        cut_bytes = before + turn[:cut]
        # A last entry without its "\n" is read (as pi reads it).
        whole = cut >= len(turn) - 1
        # Read-only opens and lazy opens read around it; the file is untouched.
        for opener in (
            lambda: Session.open(path, read_only=True),
            lambda: Session.open(path, read_only=True, lazy=True),
        ):
            path.write_bytes(cut_bytes)
            session = opener()
            assert len(session.context_messages()) == (5 if whole else 2), cut
            assert path.read_bytes() == cut_bytes
        # A writable open (lazy or not) removes a turn cut after its first line.
        for lazy in (False, True):
            path.write_bytes(cut_bytes)
            session = Session.open(path, lazy=lazy)
            assert len(session.context_messages()) == (5 if whole else 2), cut
            first_entry_done = cut >= min(line_ends) - 1
            expected = before if first_entry_done and not whole else cut_bytes
            assert path.read_bytes() == expected, cut
            # The next turn lands cleanly after what is left.
            session.append_messages([_assistant("next")])
            assert (
                Session.open(path).context_messages().to_list()[-1]["content"][0]["text"] == "next"
            )


def test_refresh_does_not_read_a_turn_still_being_written(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    before, after = _turn_bytes(tmp_path)
    path = tmp_path / "s.jsonl"
    path.write_bytes(before)
    reader = Session.open(path, read_only=True)
    turn = after[len(before) :]
    second_line = turn.index(b"\n") + 1
    with path.open("ab") as f:
        f.write(turn[: second_line + 10])  # two lines and a bit: the writer is not done
    reader.refresh()
    assert len(reader) == 2
    with path.open("ab") as f:
        f.write(turn[second_line + 10 :])
    reader.refresh()
    assert len(reader) == 5


_KILLED_WRITER = """
import os, resource, signal, sys
from clawctx.history import Session
path, allowance = sys.argv[1], int(sys.argv[2])
session = Session.open(path)
big = "z" * 200_000
messages = [
    {"role": "user", "content": big, "timestamp": 1},
    {"role": "assistant", "content": [{"type": "text", "text": big}], "timestamp": 1},
    {"role": "user", "content": big, "timestamp": 1},
]
# SIGXFSZ gets its default action back (Python ignores it): the write that crosses the limit
# is cut short there and the process dies, the bytes before the limit in the file (a writer
# killed mid-write).
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + allowance, hard))
session.append_messages(messages, turn_key="k")
print("done", flush=True)
"""


def _child(body: str, *args: str) -> subprocess.Popen[str]:
    package_root = Path(clawctx.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(package_root), "RUST_BACKTRACE": "0"}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(body), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(signal, "SIGXFSZ"), reason="POSIX rlimits"
)
def test_a_writer_killed_mid_turn_leaves_none_after_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = 200_000 + 200  # about one line of the child's turn
    for allowance in (0, 5, line // 2, line + 300, 2 * line + 1000, 3 * line - 1000, 10 * line):
        _session_file(tmp_path)
        before = path.read_bytes()
        child = _child(_KILLED_WRITER, str(path), str(allowance))
        out, _ = child.communicate(timeout=60)
        whole = allowance == 10 * line
        assert (child.returncode == 0) == whole, (allowance, child.returncode)
        assert (out == "done\n") == whole
        if not whole:
            assert child.returncode == -signal.SIGXFSZ
            assert len(path.read_bytes()) == len(before) + allowance  # cut short there
        session = Session.open(path)
        assert len(session) == (5 if whole else 2), allowance
        if not whole and allowance > line:
            assert path.read_bytes() == before  # the cut-short turn is gone from the file


_APPENDING_TURNS = """
import sys
from clawctx.history import Session
session = Session.open(sys.argv[1])
print("ready", flush=True)
big = "q" * 3_000_000
i = 0
while True:
    session.append_messages(
        [{"role": "user", "content": big, "timestamp": i},
         {"role": "assistant", "content": [{"type": "text", "text": big}], "timestamp": i}],
        turn_key=f"t{i}",
    )
    i += 1
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_kill_9_during_turns_leaves_only_whole_turns(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    for delay in (0.05, 0.15, 0.3):
        child = _child(_APPENDING_TURNS, str(path))
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        session = Session.open(path)
        entries = session.entries()
        turns = entries[2:]
        assert len(turns) % 2 == 0, [e.get("clawctxTurn") for e in turns]
        for first, second in zip(turns[::2], turns[1::2], strict=True):
            assert first["clawctxTurn"]["part"] == 1 and second["clawctxTurn"]["part"] == 2
            assert second["parentId"] == first["id"]
        # Only a torn first line of a turn (never a whole entry of a partial turn) is left.
        assert len(session.skipped_lines) <= 1
