"""``SessionStore.read_leaf_context`` (issue 30, item 1): the leaf's context of a store window
read from the newest rows back to the context boundary, equal to a full open of the window and
to ``read_leaf_context`` of the JSONL twin; the rows before the boundary are never fetched."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from clawctx import _core
from clawctx.errors import StoreError
from clawctx.history.store import open_store, write_store

PI_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pi"
FIXTURES = sorted(PI_FIXTURES.glob("*.jsonl")) if PI_FIXTURES.is_dir() else []


def _same(a: _core.LeafContext, b: _core.SessionContext) -> None:
    assert a.messages.to_json() == b.messages.to_json()
    full = a.context()
    assert full.messages.to_json() == b.messages.to_json()
    assert full.thinking_level == b.thinking_level
    assert full.model == b.model


@pytest.mark.skipif(not FIXTURES, reason="no pi fixtures in ../shared/fixtures/pi")
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk", [64, 262144])
def test_fixture_store_matches_full_open_and_jsonl_twin(
    fixture: Path, chunk: int, tmp_path: Path
) -> None:
    store = tmp_path / "openclaw-agent.sqlite"
    sid = write_store(fixture, store)
    with open_store(store) as s:
        leaf = s.read_leaf_context(sid, chunk_bytes=chunk)
        _same(leaf, s.open(sid).context())
        twin = _core.read_leaf_context(fixture, chunk_bytes=chunk)
        _same(leaf, twin.context())
        assert leaf.read_in_full == twin.read_in_full


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, separators=(",", ":"))


def _long_session(path: Path, boundary: dict[str, Any] | None, history: int = 3000) -> Path:
    """A header, a thinking level, ``history`` messages, then ``boundary`` (a compaction or
    reset whose parent is the last message) and two more messages."""
    lines = [
        {"type": "session", "version": 3, "id": "big", "timestamp": "t", "cwd": "/w"},
        {
            "type": "thinking_level_change",
            "id": "t0",
            "parentId": None,
            "timestamp": "t",
            "thinkingLevel": "high",
        },
    ]
    parent = "t0"
    for n in range(history):
        role = "user" if n % 2 == 0 else "assistant"
        message: dict[str, Any] = {"role": role, "content": f"old {n} " + "z" * 200}
        if role == "assistant":
            message.update(provider="anthropic", model="m-old", content=[])
        lines.append(
            {
                "type": "message",
                "id": f"m{n}",
                "parentId": parent,
                "timestamp": "t",
                "message": message,
            }
        )
        parent = f"m{n}"
    if boundary is not None:
        lines.append({**boundary, "id": "b", "parentId": parent, "timestamp": "t"})
        parent = "b"
    for n in range(2):
        lines.append(
            {
                "type": "message",
                "id": f"new{n}",
                "parentId": parent,
                "timestamp": "t",
                "message": {"role": "user", "content": f"new {n}"},
            }
        )
        parent = f"new{n}"
    path.write_text("".join(_line(x) + "\n" for x in lines))
    return path


BOUNDARIES = {
    "compaction": {
        "type": "compaction",
        "summary": "s",
        "firstKeptEntryId": "m2996",
        "tokensBefore": 9,
    },
    "reset-keeping": {"type": "reset", "reason": "new", "firstKeptEntryId": "m2998"},
    "reset": {"type": "reset", "reason": "new"},
}


@pytest.mark.parametrize("kind", list(BOUNDARIES))
def test_only_rows_after_the_boundary_are_fetched(kind: str, tmp_path: Path) -> None:
    jsonl = _long_session(tmp_path / "s.jsonl", BOUNDARIES[kind])
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    with open_store(store) as s:
        leaf = s.read_leaf_context("big", chunk_bytes=2048)
        assert not leaf.read_in_full
        assert leaf.bytes_read < 16384 < jsonl.stat().st_size
        assert leaf.messages.to_json() == s.open("big").context().messages.to_json()
        # The thinking level was set at the start: asking for it reads on to there.
        assert leaf.thinking_level == "high"
        assert leaf.bytes_read >= jsonl.stat().st_size * 0.9
        _same(leaf, s.open("big").context())
        _same(leaf, _core.read_leaf_context(jsonl).context())


def test_without_a_boundary_and_without_a_header_row(tmp_path: Path) -> None:
    jsonl = _long_session(tmp_path / "s.jsonl", None, history=50)
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    conn = sqlite3.connect(store)
    conn.execute("DELETE FROM transcript_events WHERE seq = 0")
    conn.commit()
    conn.close()
    with open_store(store) as s:
        leaf = s.read_leaf_context("big", chunk_bytes=100)
        _same(leaf, s.open("big").context())
        assert len(leaf.messages) == 52
        with pytest.raises(KeyError):
            s.read_leaf_context("nope")


def test_a_bad_row_read_is_a_store_error_one_never_read_is_not(tmp_path: Path) -> None:
    jsonl = _long_session(tmp_path / "s.jsonl", BOUNDARIES["reset"], history=200)
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(jsonl, store)
    conn = sqlite3.connect(store)
    # seq 5 is far before the reset: never fetched.
    conn.execute("UPDATE transcript_events SET event_json = '[1]' WHERE seq = 5")
    conn.commit()
    with open_store(store) as s:
        assert len(s.read_leaf_context("big", chunk_bytes=512).messages) == 2
    last = conn.execute("SELECT MAX(seq) FROM transcript_events").fetchone()[0]
    conn.execute("UPDATE transcript_events SET event_json = '{torn' WHERE seq = ?", (last - 1,))
    conn.commit()
    conn.close()
    with open_store(store) as s, pytest.raises(StoreError) as info:
        s.read_leaf_context("big", chunk_bytes=512)
    assert (info.value.session_id, info.value.seq) == ("big", last - 1)
