"""clawctx.history.store: OpenClaw's SQLite session store opened read-only, compared with the
JSONL twin of the same records; bad input gives StoreError; nothing is written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clawctx import Session
from clawctx.errors import ClawctxError, StoreError
from clawctx.history.store import open_store, write_store

PI_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pi"
FIXTURES = sorted(PI_FIXTURES.glob("*.jsonl")) if PI_FIXTURES.is_dir() else []


def _ids() -> object:
    n = iter(range(10**9))
    return lambda: f"{next(n):08x}"


def _flat(roots: list[dict[str, object]]) -> list[tuple[object, object, int]]:
    """The tree as (entry id, label, child count) in depth-first order, without recursion."""
    out, stack = [], list(reversed(roots))
    while stack:
        node = stack.pop()
        children = node["children"]
        assert isinstance(children, list) and isinstance(node["entry"], dict)
        out.append((node["entry"]["id"], node["label"], len(children)))
        stack.extend(reversed(children))
    return out


def _same(a: Session, b: Session) -> None:
    assert a.entries() == b.entries()
    assert a.leaf_id == b.leaf_id
    assert _flat(a.tree()) == _flat(b.tree())
    assert list(a.context_messages()) == list(b.context_messages())


@pytest.mark.skipif(not FIXTURES, reason="no pi fixtures in ../shared/fixtures/pi")
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_store_session_matches_jsonl_twin(fixture: Path, tmp_path: Path) -> None:
    store = tmp_path / "openclaw-agent.sqlite"
    sid = write_store(fixture, store)
    before = (store.read_bytes(), store.stat().st_mtime_ns)
    with open_store(store) as s:
        [window] = s.sessions()
        assert window.session_id == sid
        assert window.event_count == len(
            [x for x in fixture.read_bytes().splitlines() if x.strip()]
        )
        _same(
            s.open(sid, id_factory=_ids()), Session.open(fixture, read_only=True, id_factory=_ids())
        )
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before


def _session_lines() -> list[dict[str, object]]:
    return [
        {
            "type": "session",
            "version": 3,
            "id": "w1",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/x",
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
    ]


def _jsonl(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


def test_missing_header_and_seq_gaps_and_unknown_columns(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    write_store(_jsonl(tmp_path, _session_lines()), store)
    conn = sqlite3.connect(store)
    conn.execute("DELETE FROM transcript_events WHERE seq = 0")
    conn.execute("UPDATE transcript_events SET seq = 7")
    conn.execute("ALTER TABLE session_windows ADD COLUMN future_thing TEXT")
    conn.execute("CREATE TABLE brand_new (x)")
    conn.commit()
    conn.close()
    with open_store(store) as s:
        session = s.open("w1")
        assert session.header["id"] == "w1"
        assert [e["id"] for e in session.entries()] == ["a1"]


def test_lineage_newest_first_and_legacy_layout(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    write_store(_jsonl(tmp_path, _session_lines()), store, session_key="k")
    conn = sqlite3.connect(store)
    conn.execute(
        "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason,"
        " created_at, updated_at) VALUES ('w2', 'k', 'w1', 'reset', 9999999999999, 9999999999999)"
    )
    conn.commit()
    conn.close()
    with open_store(store) as s:
        assert [w.session_id for w in s.lineage("k")] == ["w2", "w1"]
        assert s.lineage("k")[0].reason == "reset"
        assert s.lineage("nope") == []
    # Schemas 4-13 kept windows in `sessions`, with fewer columns.
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, session_key TEXT)")
    conn.execute("INSERT INTO sessions SELECT session_id, session_key FROM session_windows")
    conn.execute("DROP TABLE session_windows")
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    with open_store(store) as s:
        assert s.schema_version == 8
        windows = {w.session_id: w for w in s.sessions()}
        assert windows["w1"].model is None and windows["w1"].event_count == 2
        assert [e["id"] for e in s.open("w1").entries()] == ["a1"]


def test_bad_input_is_store_error_and_unwritten(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all, just text\n" * 10)
    with pytest.raises(StoreError, match="not a SQLite database") as info:
        open_store(junk)
    assert info.value.path == str(junk)
    assert isinstance(info.value, ClawctxError)

    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA user_version = 42")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 42"):
        open_store(other)

    store = tmp_path / "s.sqlite"
    write_store(_jsonl(tmp_path, _session_lines()), store)
    conn = sqlite3.connect(store)
    conn.execute("UPDATE transcript_events SET event_json = '{oops' WHERE seq = 1")
    conn.commit()
    conn.close()
    before = (store.read_bytes(), store.stat().st_mtime_ns)
    with open_store(store) as s, pytest.raises(StoreError, match="seq 1") as err:
        s.open("w1")
    assert err.value.session_id == "w1" and err.value.seq == 1
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before

    corrupt = tmp_path / "corrupt.sqlite"
    data = bytearray(store.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    corrupt.write_bytes(bytes(data))
    with pytest.raises(StoreError), open_store(corrupt) as s:
        s.sessions()
