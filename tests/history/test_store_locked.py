"""Bad input (issue 30, item 5) not covered by test_store_open: a store locked past the busy
timeout, a session asked for that the store does not hold, and ``export_jsonl`` and
``write_store`` leaving nothing behind when they refuse. Each is a typed ``ClawctxError``
naming the file, or the ``OSError`` of the file it refuses; nothing is written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from clawctx.errors import ClawctxError, StoreError
from clawctx.history import store as store_module
from clawctx.history.store import export_jsonl, open_store, write_store


def _store(tmp_path: Path) -> Path:
    seed = tmp_path / "seed.jsonl"
    header = {"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/p"}
    seed.write_text(json.dumps(header) + "\n")
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(seed, store)
    return store


def test_a_store_locked_past_the_busy_timeout_is_a_store_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    monkeypatch.setattr(store_module, "_BUSY_TIMEOUT_S", 0.05)
    # An exclusive-mode WAL writer (as `openclaw doctor --session-sqlite compact` holds the
    # file) keeps every other connection out until it closes.
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE session_windows SET updated_at = updated_at + 1")
    try:
        with pytest.raises(StoreError) as info, open_store(store) as s:
            s.sessions()
        assert isinstance(info.value, ClawctxError)
        assert info.value.path == str(store) and "locked" in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with open_store(store) as s:  # released: readable again
        assert [w.session_id for w in s.sessions()] == ["w1"]


def test_unknown_session_and_refused_writes_leave_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    before = store.read_bytes()
    out = tmp_path / "out.jsonl"
    with pytest.raises(StoreError, match="nope") as info:
        export_jsonl(store, "nope", out)
    assert info.value.session_id == "nope" and info.value.path == str(store)
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl.*"))
    out.write_text("keep me\n")
    with pytest.raises(FileExistsError):
        export_jsonl(store, "w1", out)
    assert out.read_text() == "keep me\n"
    assert export_jsonl(store, "w1", out, force=True) == 1
    assert json.loads(out.read_text())["id"] == "w1"

    with pytest.raises(FileExistsError):
        write_store(tmp_path / "seed.jsonl", store)
    assert store.read_bytes() == before
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(ValueError):
        write_store(broken, tmp_path / "new.sqlite")
    assert sorted(p.name for p in tmp_path.iterdir() if "new" in p.name) == []
