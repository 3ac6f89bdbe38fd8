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

# Every Session method that calls a `now_ms` or `id_factory` callback, and which of the two it
# calls (`save_migrated` stamps its backup and draws no id). `refresh` draws ids only for a
# reloaded file that needs migration, which the child sets up.
N5_CALLS = {
    "append_message": ("now_ms", "id_factory"),
    "append_messages": ("now_ms", "id_factory"),
    "append_thinking_level_change": ("now_ms", "id_factory"),
    "append_model_change": ("now_ms", "id_factory"),
    "append_compaction": ("now_ms", "id_factory"),
    "append_custom_entry": ("now_ms", "id_factory"),
    "append_custom_message": ("now_ms", "id_factory"),
    "append_label": ("now_ms", "id_factory"),
    "append_session_info": ("now_ms", "id_factory"),
    "branch_with_summary": ("now_ms", "id_factory"),
    "refresh": ("now_ms", "id_factory"),
    "save_migrated": ("now_ms",),
}

# Run in a child process: before the fix, both scenarios blocked their threads for good. A
# thread still alive after 20 s is reported as a deadlock and the child exits at once.
_N5_CHILD = r"""
import json, os, tempfile, threading, uuid
from clawctx import Session

TMP = tempfile.mkdtemp()
HEADER_V1 = {"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}

def user(text):
    return {"role": "user", "content": text, "timestamp": 1}

def write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))

def v1_file(path):
    old = {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z"}
    write(path, [HEADER_V1] + [dict(old, message=user(f"old {i}")) for i in range(3)])

ACTIONS = {
    "append_message": lambda s, t: s.append_message(user("new")),
    "append_messages": lambda s, t: s.append_messages([user("q"), user("r")]),
    "append_thinking_level_change": lambda s, t: s.append_thinking_level_change("high"),
    "append_model_change": lambda s, t: s.append_model_change("p", "m"),
    "append_compaction": lambda s, t: s.append_compaction("sum", t, 10),
    "append_custom_entry": lambda s, t: s.append_custom_entry("ext", {"k": 1}),
    "append_custom_message": lambda s, t: s.append_custom_message("ext", "hi", True),
    "append_label": lambda s, t: s.append_label(t, "mark"),
    "append_session_info": lambda s, t: s.append_session_info("name"),
    "branch_with_summary": lambda s, t: s.branch_with_summary(t, "sum"),
    "refresh": lambda s, t: s.refresh(),
    "save_migrated": lambda s, t: s.save_migrated(),
}

def make(name, hook):
    # A session whose CALLBACK calls hook() first, and the ENTRY call to make on it.
    if CALLBACK == "now_ms":
        kwargs = {"now_ms": lambda: (hook(), 1_767_225_600_000)[1]}
    else:
        kwargs = {"id_factory": lambda: (hook(), uuid.uuid4().hex[:8])[1]}
    path = os.path.join(TMP, name + ".jsonl")
    target = None
    if ENTRY == "refresh":
        write(path, [dict(HEADER_V1, version=3)])
        session = Session.open(path, **kwargs)
        v1_file(path)  # rewritten: refresh loads it in full and migrates it (ids drawn)
    elif ENTRY == "save_migrated":
        v1_file(path)
        session = Session.open(path, **kwargs)
    else:
        session = Session.create(path, cwd="/tmp", **kwargs)
        target = session.append_message(user("first"))
    return session, lambda: ACTIONS[ENTRY](session, target)

errors = []

def guarded(fn):
    def run():
        try:
            fn()
        except BaseException as e:
            errors.append(repr(e))
    return threading.Thread(target=run, daemon=True)

def finish(threads, scenario):
    for t in threads:
        t.join(20)
    if any(t.is_alive() for t in threads):
        print(f"deadlock: {scenario}", flush=True)
        os._exit(3)

# (a) The callback waits for an application lock held by a thread reading the same session.
app_lock = threading.Lock()
reader_has_lock = threading.Event()
in_callback = threading.Event()
armed = threading.Event()

def wait_for_app_lock():
    if armed.is_set():
        in_callback.set()
        with app_lock:
            pass

session, action = make("a", wait_for_app_lock)
armed.set()

def reader():
    with app_lock:
        reader_has_lock.set()
        assert in_callback.wait(20), "the callback was never called"
        session.branch_path(); session.entries(); len(session); session.leaf_id

a = guarded(reader)
a.start()
assert reader_has_lock.wait(20)
b = guarded(action)
b.start()
finish([a, b], "a callback waits for a lock that a reader of its session holds")

# (b) Two sessions whose callbacks read each other, both inside their callbacks at once.
both_inside = threading.Barrier(2, timeout=20)
sessions = {}
fired = []
armed_b = threading.Event()

def read_other(other):
    def hook():
        if armed_b.is_set() and other not in fired:
            fired.append(other)
            both_inside.wait()
            sessions[other].entries()
    return hook

sessions["x"], act_x = make("x", read_other("y"))
sessions["y"], act_y = make("y", read_other("x"))
armed_b.set()
threads = [guarded(act_x), guarded(act_y)]
for t in threads:
    t.start()
finish(threads, "two sessions whose callbacks read each other")
assert sorted(fired) == ["x", "y"], fired
assert not errors, errors
print("ok")
"""


@pytest.mark.parametrize(
    ("entry", "callback"),
    [(entry, callback) for entry, callbacks in N5_CALLS.items() for callback in callbacks],
)
def test_a_callback_that_waits_for_a_reader_or_reads_another_session_does_not_deadlock(
    entry: str, callback: str
) -> None:
    # (a) Thread B calls `entry`; its callback waits for the application lock L, which thread A
    # holds while it reads the same session. (b) Two sessions' callbacks read each other. Before
    # the fix `append_messages` and `refresh` (ids for a migration) called back with the session
    # lock held: A waited for B and B for A, for good.
    result = _run_child(f"ENTRY, CALLBACK = {entry!r}, {callback!r}\n" + _N5_CHILD, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "ok"


def test_every_session_method_with_a_callback_is_covered() -> None:
    # A new Session method that calls `now_ms` or `id_factory` must join N5_CALLS.
    appends = {name for name in dir(Session) if name.startswith("append_")}
    assert appends | {"branch_with_summary", "refresh", "save_migrated"} == set(N5_CALLS)


def test_a_factory_id_already_taken_is_drawn_again() -> None:
    drawn = iter(["aaaaaaaa", "aaaaaaaa", "", "bbbbbbbb"])
    session = Session.in_memory(cwd="/tmp", id_factory=lambda: next(drawn))
    assert session.append_message(_user("1")) == "aaaaaaaa"
    assert session.append_message(_user("2")) == "bbbbbbbb"


def test_ids_of_a_turn_that_are_taken_empty_or_repeated_are_drawn_again() -> None:
    drawn = iter(["aaaaaaaa", "aaaaaaaa", "", "bbbbbbbb", "aaaaaaaa", "cccccccc"])
    calls: list[str] = []

    def factory() -> str:
        calls.append("id")
        return next(drawn)

    session = Session.in_memory(cwd="/tmp", id_factory=factory)
    assert session.append_messages([_user("1"), _user("2")]) == ["aaaaaaaa", "bbbbbbbb"]
    assert session.append_messages([_user("3")]) == ["cccccccc"]
    assert len(calls) == 6
    assert session.append_messages([]) == []
    assert len(calls) == 6


def _v1_records(count: int) -> list[dict[str, Any]]:
    header = {k: v for k, v in HEADER.items() if k != "version"}
    old = {"type": "message", "timestamp": "2026-01-01T00:00:01.000Z"}
    return [header, *({**old, "message": _user(f"old {i}")} for i in range(count))]


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_refresh_migrates_a_rewritten_file_with_the_factory_ids_in_order(tmp_path: Path) -> None:
    path = _write_session(tmp_path / "s.jsonl", [])
    counter = iter(range(1, 1000))
    calls: list[str] = []

    def factory() -> str:
        calls.append("id")
        return f"id{next(counter):06d}"

    session = Session.open(path, id_factory=factory)
    _write_records(path, _v1_records(3))
    report = session.refresh()
    assert (report.mode, report.appended_entries) == ("full", 3)
    # The factory is called once per id the migration needs, with the session lock released.
    assert [e["id"] for e in session.entries()] == ["id000001", "id000002", "id000003"]
    assert len(calls) == 3
    # No reload, no ids: an incremental refresh does not call the factory.
    session.save_migrated()
    session.refresh()
    assert len(calls) == 3


def test_refresh_with_a_factory_that_repeats_one_id_still_gives_unique_ids(tmp_path: Path) -> None:
    path = _write_session(tmp_path / "s.jsonl", [])
    session = Session.open(path, id_factory=lambda: "same0000")
    _write_records(path, _v1_records(4))
    assert session.refresh().mode == "full"
    ids = [e["id"] for e in session.entries()]
    assert ids[0] == "same0000"
    assert len(set(ids)) == 4


def test_a_failing_factory_on_refresh_raises_and_leaves_the_session_as_it_was(
    tmp_path: Path,
) -> None:
    path = _write_session(tmp_path / "s.jsonl", [_message_line("m1", None, _user("hi"))])

    def factory() -> str:
        raise KeyError("no more ids")

    session = Session.open(path, id_factory=factory)
    _write_records(path, _v1_records(2))
    with pytest.raises(KeyError, match="no more ids"):
        session.refresh()
    assert [e["id"] for e in session.entries()] == ["m1"]


def test_callbacks_may_read_their_own_session_during_a_turn_and_a_refresh(tmp_path: Path) -> None:
    path = _write_session(tmp_path / "s.jsonl", [])
    seen: list[int] = []
    holder: dict[str, Session] = {}
    counter = iter(range(1, 1000))

    def factory() -> str:
        seen.append(len(holder["s"]))
        return f"id{next(counter):06d}"

    def clock() -> int:
        if "s" in holder:
            seen.append(len(holder["s"].entries()))
        return 1_767_225_600_000

    holder["s"] = session = Session.open(path, id_factory=factory, now_ms=clock)
    assert session.append_messages([_user("a"), _user("b")]) == ["id000001", "id000002"]
    _write_records(path, _v1_records(2))
    assert session.refresh().mode == "full"
    assert len(session) == 2
    assert seen  # the callbacks ran, and reading the session from them raised nothing


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
