"""Never disturb the gateway (issue 30, item 4): reading a store while another process appends.

A child process writes the way OpenClaw's Gateway does (openclaw `src/state/`,
``appendTranscriptEventInTransaction``): WAL mode, a busy timeout, one ``BEGIN IMMEDIATE``
transaction per appended event, ``seq = MAX(seq) + 1`` within the session, and the window's
``updated_at`` bumped in the same transaction; now and then it opens a new window. Meanwhile
this process lists and opens sessions in a loop through ``open_store``. No read may fail,
every opened session must be a prefix of its final state (a reader sees whole transactions
only), and the database must pass ``PRAGMA integrity_check`` afterwards.
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import time
from pathlib import Path

from clawctx.history.store import open_store, write_store
from tests.history.conftest import append_event

EVENTS = 300
SECOND_WINDOW_AT = 100


def _event(n: int, parent: str | None) -> dict[str, object]:
    role = "user" if n % 2 == 0 else "assistant"
    message: dict[str, object] = {
        "role": role,
        "content": [{"type": "text", "text": f"message {n} " + "x" * (n % 50)}],
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


def _writer(path: str, first: str, started: object) -> None:
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA busy_timeout = 10000")
    started.set()  # type: ignore[attr-defined]
    session, parent = first, "e0000000"
    for n in range(1, EVENTS + 1):
        if n == SECOND_WINDOW_AT:
            # A daily reset: a new window chained to the first, with its own header row.
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO session_windows (session_id, session_key, previous_session_id, "
                "reason, created_at, updated_at) VALUES ('w2', 'agent:main:main', ?, 'reset', "
                "?, ?)",
                (first, int(time.time() * 1000) + 1, int(time.time() * 1000) + 1),
            )
            conn.execute("COMMIT")
            session, parent = "w2", None
            header = {"type": "session", "version": 3, "id": "w2", "timestamp": "t", "cwd": ""}
            append_event(conn, session, header)
        event = _event(n, parent)
        append_event(conn, session, event)
        parent = str(event["id"])
    conn.close()


def test_reading_while_the_gateway_appends(tmp_path: Path) -> None:
    first_lines = [
        {"type": "session", "version": 3, "id": "w1", "timestamp": "t", "cwd": "/p"},
        _event(0, None),
    ]
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(json.dumps(x) + "\n" for x in first_lines))
    store = tmp_path / "openclaw-agent.sqlite"
    write_store(seed, store, session_id="w1")

    context = multiprocessing.get_context("spawn")
    started = context.Event()
    child = context.Process(target=_writer, args=(str(store), "w1", started))
    child.start()
    assert started.wait(60), "the writer did not start"
    seen: dict[str, list[list[str]]] = {"w1": [], "w2": []}
    reads = 0
    try:
        while child.is_alive() or reads < 5:
            with open_store(store) as s:
                windows = {w.session_id: w for w in s.sessions()}
                for session_id in windows:
                    session = s.open(session_id)
                    seen[session_id].append([e["id"] for e in session.entries()])
            reads += 1
    finally:
        child.join(120)
    assert child.exitcode == 0, "the writer failed"
    assert reads > 5
    with open_store(store) as s:
        final = {
            w.session_id: [e["id"] for e in s.open(w.session_id).entries()] for w in s.sessions()
        }
    assert len(final["w1"]) == SECOND_WINDOW_AT  # e0 .. e99
    assert len(final["w2"]) == EVENTS - SECOND_WINDOW_AT + 1
    for session_id, views in seen.items():
        assert views, f"{session_id} was never read"
        for view in views:
            assert view == final[session_id][: len(view)], "a view is not a prefix"
    # The reads saw the session grow (they interleaved with the writes).
    assert len({len(v) for v in seen["w1"] + seen["w2"]}) > 2
    conn = sqlite3.connect(store)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
