"""Issue 33, session-stage items: N2 (repair of a line too deep for the readers), N3 (what the
readers return is accepted back), N4 (a huge `lock_timeout`), N5 (user callbacks run outside
the session lock), N7 (an empty file is started in place), F3 (a deep line written by another
tool) and the panic hook. Anything that could hang or crash runs in a child process with a
time limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import clawctx
from clawctx import (
    Session,
    Transcript,
    estimate_tokens,
    repair_session_file,
    sanitize_session_history,
)
from clawctx.history import mark_heartbeat_transcript

#: The readers (serde_json) stop at the 128th nested container; a line may nest 127 levels.
MAX_RECORD_DEPTH = 127
HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/tmp",
}


def _nested(levels: int) -> Any:
    """A JSON value of exactly `levels` nested lists (an empty list is one level)."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _depth(value: Any) -> int:
    """Nesting levels of lists and dicts, iteratively (the values here are too deep for the
    recursion of `json`-like helpers on small stacks)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def _tool_result(details_levels: int) -> dict[str, Any]:
    """A tool result whose `details` nest `details_levels` levels: the message nests one more."""
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "t",
        "content": [{"type": "text", "text": "ok"}],
        "details": _nested(details_levels),
        "isError": False,
        "timestamp": 1,
    }


def _message_line(entry_id: str, parent: str | None, message: dict[str, Any]) -> str:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }
    return json.dumps(entry, separators=(",", ":"))


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _write_session(path: Path, lines: list[str]) -> Path:
    path.write_text(
        "\n".join([json.dumps(HEADER, separators=(",", ":")), *lines]) + "\n", encoding="utf-8"
    )
    return path


def _run_child(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter that imports this checkout's clawctx."""
    env = dict(os.environ)
    package_root = str(Path(clawctx.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child process did not finish within {timeout} s (a hang)")


# ---- F3 / N2: a line nested too deep for the readers -----------------------------------------


def _deep_session(tmp_path: Path) -> tuple[Path, str]:
    """A session whose second message line nests 131 levels (details 128): pi can write it."""
    deep = _message_line("b", "a", _tool_result(128))
    assert _depth(json.loads(deep)) > MAX_RECORD_DEPTH
    path = _write_session(
        tmp_path / "deep.jsonl",
        [_message_line("a", None, _user("hi")), deep, _message_line("c", "a", _user("after"))],
    )
    return path, deep


def test_a_line_too_deep_for_the_readers_is_skipped_at_open_and_every_read_works(
    tmp_path: Path,
) -> None:
    path, _ = _deep_session(tmp_path)
    session = Session.open(path)
    # Before: no skipped line, and entries()/get_entry/branch_path/context raised every time.
    assert [(s.line, s.action, s.records) for s in session.skipped_lines] == [(3, "skipped", 0)]
    assert "nested deeper than 127" in session.skipped_lines[0].reason
    assert [e["id"] for e in session.entries()] == ["a", "c"]
    assert session.get_entry("b") is None
    assert [e["id"] for e in session.branch_path()] == ["a", "c"]
    assert [m["content"] for m in session.context().messages.to_list()] == ["hi", "after"]
    # A lazy open reads the same lines.
    lazy = Session.open(path, lazy=True)
    assert [m["content"] for m in lazy.context().messages.to_list()] == ["hi", "after"]


def test_repair_removes_a_line_too_deep_once_with_a_backup_and_then_has_nothing_to_do(
    tmp_path: Path,
) -> None:
    path, deep = _deep_session(tmp_path)
    before = path.read_bytes()
    first = repair_session_file(path)
    # Before: `repaired` with a backup, and the file left byte-identical (on every run).
    assert first.repaired
    assert first.dropped_line_numbers == [3]
    assert path.read_bytes() != before
    assert deep.encode() not in path.read_bytes()
    assert first.backup_path is not None
    assert first.backup_path.read_bytes() == before
    second = repair_session_file(path)
    assert not second.repaired
    assert second.backup_path is None
    assert [e["id"] for e in Session.open(path).entries()] == ["a", "c"]


# ---- N3: what the readers return is accepted back ----------------------------------------------


def test_the_deepest_message_a_file_can_hold_is_read_and_accepted_back(tmp_path: Path) -> None:
    # details 125 levels: message 126, line 127 (the most a reader parses).
    call = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "t", "arguments": {}}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "stopReason": "toolUse",
        "timestamp": 1,
    }
    line = _message_line("b", "a", _tool_result(125))
    assert _depth(json.loads(line)) == MAX_RECORD_DEPTH
    path = _write_session(tmp_path / "s.jsonl", [_message_line("a", None, call), line])
    session = Session.open(path)
    assert session.skipped_lines == []
    messages = session.context().messages.to_list()
    deep = messages[1]
    assert _depth(deep) == MAX_RECORD_DEPTH - 1
    # Before: each of these raised "nested deeper than 100 levels".
    transcript = Transcript.from_list(messages)
    assert transcript.to_list() == messages
    assert estimate_tokens(deep) > 0
    # (The sanitizer strips tool-result `details`, as OpenClaw does; it no longer refuses them.)
    assert sanitize_session_history(messages).to_list()[1]["toolCallId"] == "c1"
    new_id = session.append_message(deep)
    reopened = Session.open(path)
    assert reopened.skipped_lines == []
    assert reopened.get_entry(new_id)["message"] == deep  # type: ignore[index]


def test_an_append_never_writes_a_line_the_readers_would_skip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.create(path, cwd="/tmp")
    before = path.read_bytes()
    too_deep = _tool_result(126)  # message 127 levels: its line would nest 128
    with pytest.raises(ValueError, match="deeper than 127 levels"):
        session.append_message(too_deep)
    with pytest.raises(ValueError, match="deeper than 127 levels"):
        session.append_custom_entry("c", _nested(127))
    assert path.read_bytes() == before
    assert len(session) == 0
    # One level less is written, and read back.
    session.append_custom_entry("c", _nested(126))
    assert Session.open(path).skipped_lines == []


# ---- N4: a huge lock_timeout --------------------------------------------------------------------


def test_a_huge_lock_timeout_waits_as_long_as_any_and_is_no_panic(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    # Before: InternalError "cannot convert float seconds to Duration" from each of these.
    session = Session.create(path, cwd="/tmp", lock_timeout=1e20)
    session.append_message(_user("x"))
    assert len(Session.open(path, lock_timeout=1e300)) == 1
    assert not repair_session_file(path, lock_timeout=1e20).repaired
    mark_heartbeat_transcript(path, lock_timeout=1e20)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_a_lock_timeout_that_is_no_duration_is_a_value_error(tmp_path: Path, bad: float) -> None:
    path = tmp_path / "s.jsonl"
    Session.create(path, cwd="/tmp")
    with pytest.raises(ValueError, match="lock_timeout"):
        Session.open(path, lock_timeout=bad)
    with pytest.raises(ValueError, match="lock_timeout"):
        repair_session_file(path, lock_timeout=bad)
    with pytest.raises(ValueError, match="lock_timeout"):
        mark_heartbeat_transcript(path, lock_timeout=bad)


# ---- N5: callbacks run outside the session lock ------------------------------------------------

_DEADLOCK_PRELUDE = """
import threading, uuid, sys
from clawctx import Session
path = sys.argv[1] if len(sys.argv) > 1 else None
def user(text):
    return {"role": "user", "content": text, "timestamp": 1}
"""


@pytest.mark.parametrize("callback", ["id_factory", "now_ms"])
def test_a_callback_that_takes_an_application_lock_does_not_deadlock_a_reader(
    tmp_path: Path, callback: str
) -> None:
    # Thread B appends; its callback waits for the application lock L, which thread A holds
    # while it reads the same session. Before: B held the session lock in the callback, so A
    # waited for B and B for A, for good.
    result = _run_child(
        _DEADLOCK_PRELUDE
        + f"""
app_lock = threading.Lock()
in_callback = threading.Event()
def factory():
    in_callback.set()
    with app_lock:
        return uuid.uuid4().hex[:8]
def clock():
    in_callback.set()
    with app_lock:
        return 1_767_225_600_000
kwargs = {{"id_factory": factory}} if {callback!r} == "id_factory" else {{"now_ms": clock}}
session = Session.in_memory(cwd="/tmp", **kwargs)
in_callback.clear()
def reader():
    with app_lock:
        assert in_callback.wait(20), "the appender never reached its callback"
        session.branch_path()
        len(session.entries())
a = threading.Thread(target=reader, daemon=True)
b = threading.Thread(target=lambda: session.append_message(user("x")), daemon=True)
a.start(); b.start(); a.join(30); b.join(30)
assert not a.is_alive() and not b.is_alive(), "deadlock"
assert len(session) == 1
print("ok")
""",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_two_sessions_whose_callbacks_read_each_other_do_not_deadlock() -> None:
    result = _run_child(
        _DEADLOCK_PRELUDE
        + """
both_inside = threading.Barrier(2, timeout=20)
sessions = {}
def factory_for(other):
    def factory():
        both_inside.wait()
        sessions[other].entries()
        return uuid.uuid4().hex[:8]
    return factory
sessions["a"] = Session.in_memory(cwd="/tmp", id_factory=factory_for("b"))
sessions["b"] = Session.in_memory(cwd="/tmp", id_factory=factory_for("a"))
threads = [
    threading.Thread(target=lambda n=n: sessions[n].append_message(user(n)), daemon=True)
    for n in "ab"
]
for t in threads: t.start()
for t in threads: t.join(30)
assert not any(t.is_alive() for t in threads), "deadlock"
assert len(sessions["a"]) == 1 and len(sessions["b"]) == 1
print("ok")
""",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_a_factory_id_already_taken_is_drawn_again() -> None:
    drawn = iter(["aaaaaaaa", "aaaaaaaa", "", "bbbbbbbb"])
    session = Session.in_memory(cwd="/tmp", id_factory=lambda: next(drawn))
    assert session.append_message(_user("1")) == "aaaaaaaa"
    assert session.append_message(_user("2")) == "bbbbbbbb"


# ---- N7: an empty file is started in place ------------------------------------------------------


def test_an_empty_file_is_started_in_place_so_a_hard_link_stays_one_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    link = tmp_path / "link.jsonl"
    os.link(path, link)
    inode = path.stat().st_ino
    session = Session.open(path, session_id="fresh", cwd="/w")
    session.append_message(_user("x"))
    # Before: the file was replaced (temp file + rename), the link kept the old empty inode.
    assert path.stat().st_ino == inode
    assert link.read_bytes() == path.read_bytes()
    header, entry = (json.loads(line) for line in path.read_text().splitlines())
    assert (header["type"], header["id"], header["cwd"]) == ("session", "fresh", "/w")
    assert entry["message"]["content"] == "x"


def test_a_blank_file_is_started_in_place_with_the_header_first(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"  \n\r\n\t")
    inode = path.stat().st_ino
    session = Session.open(path)
    session.append_message(_user("x"))
    assert path.stat().st_ino == inode
    lines = path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session", "message"]
    assert len(Session.open(path)) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_an_empty_file_in_a_read_only_directory_can_be_started(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.jsonl"
    path.write_bytes(b"")
    folder.chmod(0o555)
    try:
        session = Session.open(path)
        session.append_message(_user("x"))
    finally:
        folder.chmod(0o755)
    assert len(Session.open(path)) == 1


# ---- Coverage: a panic is recorded, not printed -------------------------------------------------


def test_a_panic_is_recorded_on_the_internal_error_and_nothing_is_printed() -> None:
    result = _run_child(
        """
from clawctx._core import InternalError, _panic_for_tests
try:
    _panic_for_tests("the panic text")
except InternalError as e:
    assert "the panic text" in str(e), str(e)
    assert e.location is not None and "errors.rs" in e.location, e.location
    assert e.location in str(e)
    assert isinstance(e.backtrace, str) and e.backtrace, e.backtrace
    print("ok")
""",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
    # Before: "thread '<unnamed>' panicked at ..." and a backtrace hint on stderr.
    assert result.stderr == ""
