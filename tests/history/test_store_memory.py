"""A store session is parsed in memory from the fetched rows (issue 30, the full open's speed
target): no temporary file, ``refresh()`` hands the rows added since to the native session, and
every view and refresh report equals that of the JSONL twin given the same lines; the scan
summarizes the row list without a join in Python."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest

import clawctx.history.store as store_module
from clawctx import Session, _core
from clawctx.errors import StoreError
from clawctx.history.scan import store_records
from clawctx.history.store import StoreSession, open_store, write_store
from tests.history.conftest import append_event


def _event(n: int, parent: str | None) -> dict[str, Any]:
    role = "user" if n % 2 == 0 else "assistant"
    message: dict[str, Any] = {
        "role": role,
        "content": [{"type": "text", "text": f"message {n}"}],
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


def _line(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _twins(tmp_path: Path, version: int = 3, events: int = 4) -> tuple[Path, Path]:
    """A JSONL session and a store holding the same records."""
    header = {"type": "session", "version": version, "id": "w1", "timestamp": "t", "cwd": "/p"}
    lines = [header] + [_event(n, f"e{n - 1:07d}" if n else None) for n in range(events)]
    jsonl = tmp_path / "w1.jsonl"
    jsonl.write_text("".join(_line(x) + "\n" for x in lines))
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    return jsonl, store


def _append_both(jsonl: Path, store: Path, events: list[dict[str, Any] | str]) -> None:
    """The same lines appended to the JSONL file and, one transaction each, to the store by
    another connection (as OpenClaw's Gateway appends)."""
    conn = sqlite3.connect(store, timeout=10.0, isolation_level=None)
    with open(jsonl, "a") as f:
        for event in events:
            f.write(_line(event) + "\n")
            append_event(conn, "w1", event)
    conn.close()


def _views(session: Session) -> tuple[object, ...]:
    return (
        session.entries(),
        session.leaf_id,
        session.labels,
        session.header,
        [(s.line, s.action) for s in session.skipped_lines],
        list(session.context_messages()),
        session.context().thinking_level,
    )


def _report(report: _core.RefreshReport) -> tuple[object, ...]:
    return (report.mode, report.appended_entries, report.bytes_read, report.reason)


def test_open_and_refresh_create_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, store = _twins(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("a store open made a temporary file")

    for name in ("mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryDirectory"):
        monkeypatch.setattr(store_module.tempfile, name, refuse)
    session = open_store(store).open("w1")
    assert isinstance(session, StoreSession) and session.path is None
    _append_both(tmp_path / "w1.jsonl", store, [_event(4, "e0000003")])
    assert session.refresh().appended_entries == 1
    assert Session.open(store, session_id="w1").leaf_id == "e0000004"
    assert list(scratch.iterdir()) == []


def test_refresh_matches_the_jsonl_twin_report_for_report(tmp_path: Path) -> None:
    jsonl, store = _twins(tmp_path)
    twin = Session.open(jsonl, read_only=True)
    session = open_store(store).open("w1")
    assert _views(session) == _views(twin)
    assert _report(session.refresh()) == _report(twin.refresh())
    batches: list[list[dict[str, Any] | str]] = [
        [_event(4, "e0000003"), _event(5, "e0000004")],
        [
            {
                "type": "label",
                "id": "l1",
                "parentId": "e0000005",
                "timestamp": "t",
                "targetId": "e0000001",
                "label": "kept",
            }
        ],
        [
            {
                "type": "thinking_level_change",
                "id": "t1",
                "parentId": "l1",
                "timestamp": "t",
                "thinkingLevel": "high",
            },
            _event(6, "t1"),
        ],
    ]
    for batch in batches:
        _append_both(jsonl, store, batch)
        assert _report(session.refresh()) == _report(twin.refresh())
        assert _views(session) == _views(twin)
        assert _report(session.refresh()) == _report(twin.refresh())  # unchanged
    assert session.labels == {"e0000001": "kept"} and session.leaf_id == "e0000006"
    assert session.last_seq == 9


def test_a_migrated_window_reloads_in_full_as_its_jsonl_twin(tmp_path: Path) -> None:
    jsonl, store = _twins(tmp_path, version=2)
    twin = Session.open(jsonl, read_only=True)
    session = open_store(store).open("w1")
    assert _views(session) == _views(twin)
    assert session.needs_migration
    _append_both(jsonl, store, [_event(4, "e0000003")])
    report = session.refresh()
    assert report.mode == "full" and report.reason == "the session has an unsaved migration"
    assert _report(report) == _report(twin.refresh())
    assert _views(session) == _views(twin)


def test_a_damaged_row_after_open_names_its_session_and_seq(tmp_path: Path) -> None:
    jsonl, store = _twins(tmp_path)
    session = open_store(store).open("w1")
    _append_both(jsonl, store, [_event(4, "e0000003"), "{torn", _event(5, "e0000004")])
    with pytest.raises(StoreError) as info:
        session.refresh()
    assert (info.value.session_id, info.value.seq) == ("w1", 6)
    # The lines are read, the damaged one skipped as in the JSONL twin.
    twin = Session.open(jsonl, read_only=True)
    assert session.entries() == twin.entries()
    assert [s.line for s in session.skipped_lines] == [s.line for s in twin.skipped_lines]


def test_a_plain_session_takes_no_pushed_lines(tmp_path: Path) -> None:
    jsonl, _ = _twins(tmp_path)
    with pytest.raises(ValueError, match="memory"):
        Session.open(jsonl, read_only=True)._push_lines([b"{}"])
    with pytest.raises(TypeError):
        _core.Session._from_lines([b"{}", "text"], "x")  # type: ignore[list-item]


def test_summary_of_the_row_list_equals_that_of_the_joined_bytes(tmp_path: Path) -> None:
    jsonl, store = _twins(tmp_path, events=9)
    data = jsonl.read_bytes()
    lines = data.split(b"\n")[:-1]
    by_lines = _core.summarize_session_lines(lines, "n").to_dict()
    assert by_lines == _core.summarize_session_bytes(data, "n").to_dict()
    assert by_lines["entries"] == 9 and by_lines["size_bytes"] == len(data)
    [record] = store_records(store)
    assert record.error is None and record.to_dict()["entries"] == 9
    with open_store(store) as s:
        assert s.record_lines("w1") == lines


def test_session_ids_list_the_windows_in_the_order_of_sessions(tmp_path: Path) -> None:
    _, store = _twins(tmp_path)
    conn = sqlite3.connect(store, isolation_level=None)
    conn.execute(
        "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
        "VALUES ('w0', 'agent:main:main', 0, 0)"
    )
    conn.close()
    with open_store(store) as s:
        assert s.session_ids() == [w.session_id for w in s.sessions()] == ["w0", "w1"]
    assert [r.to_dict()["entries"] for r in store_records(store)] == [0, 4]
