"""Helpers shared by the history tests (import them as ``from tests.history.conftest import
...``; the spawned writer processes of the store tests import them the same way)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


def append_event(conn: sqlite3.Connection, session_id: str, event: dict[str, Any] | str) -> int:
    """Appends one ``transcript_events`` row to an OpenClaw store the way the Gateway does
    (openclaw ``src/state/``, ``appendTranscriptEventInTransaction``): its own ``BEGIN
    IMMEDIATE`` transaction, ``seq = MAX(seq) + 1`` within the session and the window's
    ``updated_at`` bumped in the same transaction. ``event`` is a record (written as compact
    JSON) or the row's text as it is. ``conn`` is a writer connection opened with
    ``isolation_level=None``. Returns the row's ``seq``."""
    conn.execute("BEGIN IMMEDIATE")
    seq = int(
        conn.execute(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM transcript_events WHERE session_id = ?",
            (session_id,),
        ).fetchone()[0]
    )
    now = int(time.time() * 1000)
    text = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
    conn.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?)", (session_id, seq, text, now))
    conn.execute(
        "UPDATE session_windows SET updated_at = ? WHERE session_id = ?", (now, session_id)
    )
    conn.execute("COMMIT")
    return seq
