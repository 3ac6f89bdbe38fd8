"""Writing sessions: pi's line format, ids and clocks, locking, crash safety, concurrency."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import clawctx
from conftest import dump_line

T0 = 1767225600000  # 2026-01-01T00:00:00.000Z


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_create_and_append_write_pi_lines_byte_for_byte(
    tmp_path: Path, ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    path = tmp_path / "sessions" / "s.jsonl"
    session = clawctx.Session.create(
        path,
        cwd="/repo",
        session_id="11111111-2222-4333-8444-555555555555",
        now_ms=clock,
        id_factory=ids,
    )
    assert lines(path) == [
        '{"type":"session","version":3,"id":"11111111-2222-4333-8444-555555555555",'
        '"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/repo"}'
    ]
    user = {"role": "user", "content": [{"type": "text", "text": "héllo 😀"}], "timestamp": T0}
    assert session.append_message(user) == "00000001"
    session.append_thinking_level_change("high")
    session.append_model_change("anthropic", "claude-test")
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": 5})
    session.append_custom_message("note", "hi", True)
    session.append_label("00000001", "start")
    session.append_session_info("  My session  ")
    session.append_compaction("sum", "00000001", 1234.0, {"readFiles": [], "modifiedFiles": ["a"]})
    session.append_label("00000001")
    assert lines(path)[1:] == [
        '{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"héllo 😀"}],"timestamp":1767225600000}}',
        '{"type":"thinking_level_change","id":"00000002","parentId":"00000001",'
        '"timestamp":"2026-01-01T00:00:02.000Z","thinkingLevel":"high"}',
        '{"type":"model_change","id":"00000003","parentId":"00000002","timestamp":"2026-01-01T00:00:03.000Z",'
        '"provider":"anthropic","modelId":"claude-test"}',
        '{"type":"custom","customType":"openclaw.cache-ttl","data":{"timestamp":5},"id":"00000004",'
        '"parentId":"00000003","timestamp":"2026-01-01T00:00:04.000Z"}',
        '{"type":"custom_message","customType":"note","content":"hi","display":true,"id":"00000005",'
        '"parentId":"00000004","timestamp":"2026-01-01T00:00:05.000Z"}',
        '{"type":"label","id":"00000006","parentId":"00000005","timestamp":"2026-01-01T00:00:06.000Z",'
        '"targetId":"00000001","label":"start"}',
        '{"type":"session_info","id":"00000007","parentId":"00000006","timestamp":"2026-01-01T00:00:07.000Z",'
        '"name":"My session"}',
        '{"type":"compaction","id":"00000008","parentId":"00000007","timestamp":"2026-01-01T00:00:08.000Z",'
        '"summary":"sum","firstKeptEntryId":"00000001","tokensBefore":1234,'
        '"details":{"readFiles":[],"modifiedFiles":["a"]}}',
        '{"type":"label","id":"00000009","parentId":"00000008","timestamp":"2026-01-01T00:00:09.000Z",'
        '"targetId":"00000001"}',
    ]
    assert path.read_bytes().endswith(b"\n")
    assert session.leaf_id == "00000009"
    assert session.name == "My session"
    assert session.labels == {}

    reopened = clawctx.Session.open(path)
    assert reopened.entries() == session.entries()
    assert reopened.leaf_id == "00000009"
    assert reopened.context().messages == session.context().messages


def test_branch_with_summary_and_reset_leaf(tmp_path: Path, ids: Callable[[], str]) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", now_ms=T0, id_factory=ids)
    a = session.append_message({"role": "user", "content": "a", "timestamp": 1})
    b = session.append_message({"role": "assistant", "content": [], "timestamp": 2})
    s = session.branch_with_summary(a, "tried b", {"k": 1}, True)
    assert session.get_entry(s) == {
        "type": "branch_summary",
        "id": s,
        "parentId": a,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "fromId": a,
        "summary": "tried b",
        "details": {"k": 1},
        "fromHook": True,
    }
    assert session.leaf_id == s
    assert [c["id"] for c in session.children(a)] == [b, s]
    root_summary = session.branch_with_summary(None, "from the start")
    assert session.get_entry(root_summary)["parentId"] is None
    assert session.get_entry(root_summary)["fromId"] == "root"
    with pytest.raises(KeyError):
        session.branch_with_summary("nope", "x")
    session.reset_leaf()
    assert session.leaf_id is None
    assert len(session.context().messages) == 0
    new_root = session.append_message({"role": "user", "content": "again", "timestamp": 3})
    assert session.get_entry(new_root)["parentId"] is None
    assert len(session.tree()) == 3


def test_invalid_messages_are_refused(tmp_path: Path) -> None:
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/")
    for bad in (
        {"content": "x"},
        {"role": "", "content": "x"},
        {"role": "compactionSummary", "summary": "s"},
    ):
        with pytest.raises(ValueError):
            session.append_message(bad)
    with pytest.raises(TypeError):
        session.append_message({"role": "user", "content": object()})
    with pytest.raises(KeyError):
        session.append_label("missing", "x")
    assert len(lines(tmp_path / "s.jsonl")) == 1  # nothing was written


def test_create_refuses_to_clobber(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError):
        clawctx.Session.create(path, cwd="/")
    assert path.read_text() == "precious\n"


def test_id_factory_collisions_and_errors(tmp_path: Path) -> None:
    draws = iter(["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"])
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/", id_factory=lambda: next(draws))
    assert session.append_message({"role": "user", "content": "1", "timestamp": 1}) == "aaaaaaaa"
    assert session.append_message({"role": "user", "content": "2", "timestamp": 2}) == "bbbbbbbb"

    def broken() -> str:
        raise RuntimeError("no ids today")

    failing = clawctx.Session.create(tmp_path / "t.jsonl", cwd="/", id_factory=broken)
    with pytest.raises(RuntimeError, match="no ids today"):
        failing.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert len(lines(tmp_path / "t.jsonl")) == 1


def test_default_ids_are_8_hex_and_unique(tmp_path: Path) -> None:
    session = clawctx.Session.create(tmp_path / "s.jsonl", cwd="/")
    new = [
        session.append_message({"role": "user", "content": str(i), "timestamp": i})
        for i in range(200)
    ]
    assert len(set(new)) == 200
    assert all(len(i) == 8 and int(i, 16) >= 0 and i == i.lower() for i in new)


def test_append_after_torn_last_line_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", now_ms=T0)
    session.append_message({"role": "user", "content": "ok", "timestamp": 1})
    with path.open("ab") as f:
        f.write(b'{"type":"message","id":"torn","parentId"')  # a crash mid-write
    session.append_message({"role": "user", "content": "after", "timestamp": 2})
    raw = lines(path)
    assert raw[2] == '{"type":"message","id":"torn","parentId"'
    assert json.loads(raw[3])["message"]["content"] == "after"
    reopened = clawctx.Session.open(path)
    assert [s.line for s in reopened.skipped_lines] == [3]
    assert reopened.skipped_lines[0].action == "skipped"
    assert len(reopened) == 2


def test_read_only_sessions_never_write(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    clawctx.Session.create(path, cwd="/")
    before = path.read_bytes()
    session = clawctx.Session.open(path, read_only=True)
    with pytest.raises(ValueError, match="read-only"):
        session.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert path.read_bytes() == before
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(clawctx.SessionFormatError):
        clawctx.Session.open(empty, read_only=True)
    assert empty.read_bytes() == b""
    with pytest.raises(ValueError):
        clawctx.Session.open(path, read_only=True, rewrite_migrated=True)


def test_unsaved_migration_blocks_appends(tmp_path: Path, ids: Callable[[], str]) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text(
        dump_line(
            {"type": "session", "id": "x", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
        )
        + "\n"
        + dump_line(
            {
                "type": "message",
                "timestamp": "2025-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": "hi", "timestamp": 1},
            }
        )
        + "\n"
    )
    v1_text = path.read_text()
    session = clawctx.Session.open(path, id_factory=ids)
    with pytest.raises(clawctx.ClawctxError, match="save_migrated"):
        session.append_message({"role": "user", "content": "more", "timestamp": 2})
    session.save_migrated()
    new = session.append_message({"role": "user", "content": "more", "timestamp": 2})
    assert session.get_entry(new)["parentId"] == "00000001"
    reopened = clawctx.Session.open(path)
    assert [e["id"] for e in reopened.entries()] == ["00000001", new]

    # rewrite_migrated=True migrates on open.
    path2 = tmp_path / "v1b.jsonl"
    path2.write_text(v1_text)
    migrated = clawctx.Session.open(path2, rewrite_migrated=True)
    assert migrated.backup_path is not None and not migrated.needs_migration
    assert json.loads(lines(path2)[0])["version"] == 3


def test_save_migrated_refuses_when_file_changed(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    header = {"type": "session", "id": "x", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"}
    path.write_text(dump_line(header) + "\n")
    session = clawctx.Session.open(path)
    with path.open("a") as f:
        f.write(
            dump_line(
                {"type": "custom", "customType": "x", "timestamp": "2025-01-01T00:00:01.000Z"}
            )
            + "\n"
        )
    before = path.read_bytes()
    with pytest.raises(clawctx.ClawctxError, match="changed since it was loaded"):
        session.save_migrated()
    assert path.read_bytes() == before


LOCK_HOLDER = textwrap.dedent(
    """
    import fcntl, sys, time
    f = open(sys.argv[1], "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)


def test_lock_timeout_raises_session_lock_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", lock_timeout=0.2)
    with subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(path), "5"], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            with pytest.raises(clawctx.SessionLockError):
                session.append_message({"role": "user", "content": "x", "timestamp": 1})
            with pytest.raises(clawctx.SessionLockError):
                clawctx.repair_session_file(path, lock_timeout=0.1)
        finally:
            holder.kill()
    assert len(lines(path)) == 1
    session.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert len(lines(path)) == 2


def test_append_waits_for_a_lock_and_then_writes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = clawctx.Session.create(path, cwd="/", lock_timeout=10)
    with subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(path), "0.5"], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        session.append_message({"role": "user", "content": "waited", "timestamp": 1})
    assert json.loads(lines(path)[1])["message"]["content"] == "waited"


APPENDER = textwrap.dedent(
    """
    import sys, clawctx
    session = clawctx.Session.open(sys.argv[1], fsync=False)
    name, count = sys.argv[2], int(sys.argv[3])
    payload = "x" * int(sys.argv[4])
    for i in range(count):
        session.append_message({"role": "user", "content": f"{name}-{i}-{payload}", "timestamp": i})
    """
)


def test_two_processes_appending_concurrently_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    clawctx.Session.create(path, cwd="/")
    count, size = 150, 20000  # lines far larger than a pipe buffer, so torn writes would show
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(path), name, str(count), str(size)])
        for name in ("A", "B")
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0
    raw = path.read_bytes().split(b"\n")
    assert raw[-1] == b""
    records = [json.loads(line) for line in raw[:-1]]
    assert records[0]["type"] == "session"
    contents = [r["message"]["content"] for r in records[1:]]
    assert len(contents) == 2 * count
    for name in ("A", "B"):
        mine = [c for c in contents if c.startswith(name + "-")]
        assert [int(c.split("-")[1]) for c in mine] == list(range(count))
    session = clawctx.Session.open(path)
    assert session.skipped_lines == []
    assert len(session) == 2 * count


def test_in_memory_session(ids: Callable[[], str]) -> None:
    session = clawctx.Session.in_memory(cwd="/w", session_id="sid", now_ms=T0, id_factory=ids)
    assert session.path is None
    assert session.header == {
        "type": "session",
        "version": 3,
        "id": "sid",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/w",
    }
    first = session.append_message({"role": "user", "content": "q", "timestamp": 1})
    session.append_message(
        {"role": "assistant", "content": [], "provider": "p", "model": "m", "timestamp": 2}
    )
    assert first == "00000001"
    context = session.context()
    assert context.messages.roles() == ["user", "assistant"]
    assert context.model == {"provider": "p", "modelId": "m"}
    assert session.save_migrated() is None


def test_fresh_start_is_deterministic_when_asked(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    session = clawctx.Session.open(empty, now_ms=T0, session_id="fixed-id", cwd="/work")
    assert lines(empty) == [
        '{"type":"session","version":3,"id":"fixed-id","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}'
    ]
    assert session.session_id == "fixed-id" and len(session) == 0
    # A valid file ignores them.
    again = clawctx.Session.open(empty, session_id="other", cwd="/elsewhere")
    assert again.session_id == "fixed-id"
