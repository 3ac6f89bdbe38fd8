"""A store session's ``refresh()`` reads only the rows added since (issue 30, item 1), and the
records are joined without parsing a row per message in Python.

The writer appends the way OpenClaw's Gateway does (openclaw ``src/state/``,
``appendTranscriptEventInTransaction``): one ``BEGIN IMMEDIATE`` transaction per event,
``seq = MAX(seq) + 1`` within the session, the window's ``updated_at`` bumped in the same
transaction; from this process's second connection, and from a second process.
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import clawctx.history.store as store_module
from clawctx import Session
from clawctx.errors import StoreError
from clawctx.history.store import StoreSession, open_store, write_store
from tests.history.conftest import append_event

PI_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pi"
FIXTURES = sorted(PI_FIXTURES.glob("*.jsonl")) if PI_FIXTURES.is_dir() else []


def _event(n: int, parent: str | None) -> dict[str, Any]:
    role = "user" if n % 2 == 0 else "assistant"
    message: dict[str, Any] = {
        "role": role,
        "content": [{"type": "text", "text": f"message {n} " + "x" * (n % 40)}],
        "timestamp": 1773478800000 + n,
    }
    if role == "assistant":
        message.update(api="anthropic-messages", provider="anthropic", model="m")
        message["stopReason"] = "stop"
    return {
        "type": "message",
        "id": f"e{n:07d}",
        "parentId": parent,
        "timestamp": "2026-03-14T09:00:00.000Z",
        "message": message,
    }


def _store(tmp_path: Path, events: int = 5) -> Path:
    lines = [{"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/p"}]
    lines += [_event(n, f"e{n - 1:07d}" if n else None) for n in range(events)]
    jsonl = tmp_path / "w1.jsonl"
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    return store


def _writer_conn(store: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(store, timeout=10.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def _same(a: Session, b: Session) -> None:
    assert a.entries() == b.entries()
    assert a.leaf_id == b.leaf_id
    assert a.labels == b.labels
    assert list(a.context_messages()) == list(b.context_messages())


def test_refresh_reads_only_rows_added_since(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with open_store(store) as s:
        session = s.open("w1")
    assert isinstance(session, StoreSession) and session.last_seq == 5
    assert session.refresh().mode == "unchanged"
    writer = _writer_conn(store)
    parent = "e0000004"
    for n in range(5, 12):
        append_event(writer, "w1", _event(n, parent))
        parent = f"e{n:07d}"
    new_bytes = writer.execute(
        "SELECT SUM(LENGTH(CAST(event_json AS BLOB)) + 1) FROM transcript_events WHERE seq > 5"
    ).fetchone()[0]
    report = session.refresh()
    assert report.mode == "incremental" and report.appended_entries == 7
    # Only the new rows' bytes were read (their lines, a newline each).
    assert report.bytes_read == new_bytes
    assert session.last_seq == 12 and session.leaf_id == "e0000011"
    with open_store(store) as s:
        _same(session, s.open("w1"))
    writer.close()


def _gateway(path: str, count: int, ready: Any, go: Any) -> None:
    conn = _writer_conn(Path(path))
    ready.set()
    go.wait(30)
    parent = "e0000004"
    for n in range(5, 5 + count):
        append_event(conn, "w1", _event(n, parent))
        parent = f"e{n:07d}"
    conn.close()


def test_refresh_while_another_process_appends(tmp_path: Path) -> None:
    store = _store(tmp_path)
    session = Session.open(store, session_id="w1")
    assert isinstance(session, StoreSession)
    ctx = multiprocessing.get_context("spawn")
    ready, go = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_gateway, args=(str(store), 200, ready, go))
    child.start()
    assert ready.wait(60)
    go.set()
    seen = 0
    while True:
        alive = child.is_alive()
        report = session.refresh()
        assert report.mode in ("unchanged", "incremental")
        seen += report.appended_entries
        # Every view is a prefix of the writer's appends, whole transactions only.
        assert len(session) == 5 + seen
        assert session.leaf_id == f"e{4 + seen:07d}"
        if not alive:
            break
    child.join(60)
    assert child.exitcode == 0
    session.refresh()
    assert session.leaf_id == "e0000204" and len(session) == 205
    with open_store(store) as s:
        _same(session, s.open("w1"))


def test_refresh_refuses_a_new_row_that_is_not_an_object(tmp_path: Path) -> None:
    store = _store(tmp_path)
    session = open_store(store).open("w1")
    writer = _writer_conn(store)
    append_event(writer, "w1", _event(5, "e0000004"))
    append_event(writer, "w1", "[1, 2]")
    with pytest.raises(StoreError, match="seq 7") as info:
        session.refresh()
    assert info.value.seq == 7 and info.value.session_id == "w1"
    writer.close()


@pytest.mark.skipif(not FIXTURES, reason="no pi fixtures in ../shared/fixtures/pi")
def test_records_are_joined_without_parsing_each_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = max(FIXTURES, key=lambda p: p.stat().st_size)
    store = tmp_path / "openclaw-agent.sqlite"
    sid = write_store(fixture, store)
    rows = len([x for x in fixture.read_bytes().splitlines() if x.strip()])
    assert rows > 10
    calls = 0
    real = json.loads

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(store_module.json, "loads", counting)
    with open_store(store) as s:
        assert s.records(sid) == b"".join(
            x + b"\n" for x in fixture.read_bytes().splitlines() if x.strip()
        )
        s.open(sid)
    # The first row (is it a header?) once per read, never once per row.
    assert calls <= 2


def test_rows_spanning_lines_blank_rows_and_non_objects(tmp_path: Path) -> None:
    store = _store(tmp_path, events=2)
    writer = _writer_conn(store)
    pretty = json.dumps(_event(2, "e0000001"), indent=2)
    append_event(writer, "w1", pretty)
    with open_store(store) as s:
        assert s.open("w1").leaf_id == "e0000002"
        assert s.records("w1").count(b"\n") == 4
    for bad, seq in (("", 4), ("  ", 4), ("42", 4), ('"text"', 4), ("{torn", 4)):
        writer.execute("DELETE FROM transcript_events WHERE seq >= 4")
        append_event(writer, "w1", bad)
        with open_store(store) as s:
            with pytest.raises(StoreError) as info:
                s.open("w1")
            assert (info.value.session_id, info.value.seq) == ("w1", seq), bad
            with pytest.raises(StoreError, match=f"seq {seq}"):
                s.records("w1")
            if not bad.strip():
                # A blank row would vanish from the lines: refused even unchecked.
                with pytest.raises(StoreError, match=f"seq {seq}"):
                    s.records("w1", check=False)
                continue
            # Unchecked, the bytes are the caller's to read (and check when damaged).
            data = s.records("w1", check=False)
            with pytest.raises(StoreError, match=f"seq {seq}"):
                s.check_records("w1", data)
    writer.close()
