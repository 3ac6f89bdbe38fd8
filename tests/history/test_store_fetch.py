"""How the store's rows are fetched (issue 30, the scan target): the read connection does not
memory-map the file (a file cut short by another program would then kill the reader with
SIGBUS, where a read() gives an error) and writes nothing; a writer that shrinks the file
between two reads (a VACUUM checkpointed into it) and grows it again is read correctly; the
rows are checked batch by batch as they are fetched, and a bad row in a later batch is still
found."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import clawctx.history.store as store_module
from clawctx.errors import StoreError
from clawctx.history.scan import store_records
from clawctx.history.store import open_store, write_store
from tests.history.conftest import append_event


def _event(n: int, parent: str | None, size: int = 40) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"e{n:07d}",
        "parentId": parent,
        "timestamp": "2026-03-14T09:00:00.000Z",
        "message": {"role": "user", "content": f"message {n} " + "x" * size},
    }


def _store(tmp_path: Path, events: int, size: int = 40) -> Path:
    header = {"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/p"}
    lines = [header] + [_event(n, f"e{n - 1:07d}" if n else None, size) for n in range(events)]
    jsonl = tmp_path / "w1.jsonl"
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines))
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    return store


def _mapped(path: Path) -> bool:
    """Whether this process has ``path`` memory-mapped (Linux: /proc/self/maps)."""
    target = str(path.resolve())
    with open("/proc/self/maps") as maps:
        return any(line.rstrip("\n").endswith(" " + target) for line in maps)


def test_the_read_connection_does_not_map_the_store_and_writes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, 50)
    before = (store.read_bytes(), store.stat().st_mtime_ns)
    with open_store(store) as s:
        assert s._conn.execute("PRAGMA mmap_size").fetchone()[0] == 0
        assert s._conn.execute("PRAGMA query_only").fetchone()[0] == 1
        assert len(s.open("w1").entries()) == 50
        if sys.platform.startswith("linux"):
            assert not _mapped(store)
        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            s._conn.execute("DELETE FROM transcript_events")
    [record] = store_records(store)
    assert record.error is None and record.entries == 50
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before


def test_a_file_shrunk_and_grown_by_the_writer_between_reads(tmp_path: Path) -> None:
    store = _store(tmp_path, 400, size=3000)
    with open_store(store) as s:
        assert len(s.open("w1").entries()) == 400
        size = store.stat().st_size
        writer = sqlite3.connect(store, timeout=10.0, isolation_level=None)
        try:
            writer.execute("DELETE FROM transcript_events WHERE seq > 10")
            writer.execute("VACUUM")
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert store.stat().st_size < size // 4  # pages this reader read are gone
            assert [len(s.open("w1").entries()), s.sessions()[0].event_count] == [10, 11]
            for n in range(10, 400):
                append_event(writer, "w1", _event(n, f"e{n - 1:07d}", 5000))
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert store.stat().st_size > size  # past the length first read
        finally:
            writer.close()
        session = s.open("w1")
        assert len(session.entries()) == 400
        assert session.entries()[-1]["id"] == "e0000399"
        [record] = store_records(store)
        assert record.error is None and record.entries == 400


def test_rows_are_checked_batch_by_batch_and_a_bad_row_in_a_later_batch_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path, 10)  # rows seq 0 (header) .. 10
    monkeypatch.setattr(store_module, "_FETCH_BATCH_ROWS", 3)
    checked: list[int] = []
    real = store_module._one_line_rows

    def spy(rows: list[bytes]) -> bool:
        checked.append(len(rows))
        return real(rows)

    monkeypatch.setattr(store_module, "_one_line_rows", spy)
    with open_store(store) as s:
        assert len(s.open("w1").entries()) == 10
    # Every row checked once, as it was fetched, three at a time (no second pass).
    assert checked == [3, 3, 3, 2]

    writer = sqlite3.connect(store, timeout=10.0, isolation_level=None)
    try:
        pretty = json.dumps(_event(10, "e0000009"), indent=2)  # seq 11: the fourth batch
        append_event(writer, "w1", pretty)
        append_event(writer, "w1", _event(11, "e0000010"))
        with open_store(store) as s:
            session = s.open("w1")
            assert [e["id"] for e in session.entries()][-2:] == ["e0000010", "e0000011"]
            assert s.records("w1").count(b"\n") == 13
        append_event(writer, "w1", "  ")  # seq 13, a blank row in the fifth batch
        with open_store(store) as s, pytest.raises(StoreError) as info:
            s.open("w1")
        assert (info.value.session_id, info.value.seq) == ("w1", 13)
    finally:
        writer.close()
