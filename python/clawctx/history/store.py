"""Read-only access to OpenClaw's per-agent SQLite session store (``openclaw-agent.sqlite``).

Since the 2026.7.2 betas OpenClaw keeps transcripts in one SQLite database per agent
(openclaw/openclaw#98236, ``src/state/openclaw-agent-schema.sql``): one ``transcript_events`` row
per pi v3 line (``event_json``, ordered by ``seq``) and one ``session_windows`` row per transcript
generation (``sessions`` before schema 14). :func:`open_store` opens such a file read-only (URI
``mode=ro``, ``PRAGMA query_only``, a busy timeout and retries on ``SQLITE_BUSY``), never
takes a write lock and never checkpoints, so a running Gateway is not disturbed.

Binding: Python's stdlib ``sqlite3`` reads the rows; the Rust reader parses the joined lines (see
``benches/README.md``). :func:`write_store` builds a new store file from a JSONL session (for
tests, exports and migrations); it refuses to touch an existing file.

Layer: ``history`` (imports only ``clawctx._core`` and ``clawctx.errors``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from clawctx.errors import StoreError
from clawctx.history.session import Session

__all__ = [
    "STORE_FILE_NAME",
    "SessionStore",
    "StoreWindow",
    "export_jsonl",
    "is_store",
    "open_store",
    "write_store",
]

#: The file name of OpenClaw's per-agent store (``~/.openclaw/agents/<id>/agent/``): what a
#: directory walk (``clawctx scan``, the fleet report, ``clawctx.dask``) picks up beside
#: ``*.jsonl`` files.
STORE_FILE_NAME = "openclaw-agent.sqlite"

_T = TypeVar("_T")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_BUSY_TIMEOUT_S = 5.0
_BUSY_RETRIES = 5

# The window columns a record reports; a column missing from the store's schema reads as None.
_WINDOW_COLUMNS = (
    "session_id",
    "session_key",
    "previous_session_id",
    "reason",
    "created_at",
    "updated_at",
    "status",
    "channel",
    "chat_type",
    "model_provider",
    "model",
    "display_name",
    "parent_session_key",
    "spawned_by",
)


@dataclass(frozen=True)
class StoreWindow:
    """One ``session_windows`` row (one transcript generation, a ``sessionId``) with the number
    of its ``transcript_events`` rows and their bytes (``event_json`` lengths plus one newline
    each, the size of the same records as a JSONL file). Columns the store's schema lacks are
    ``None``."""

    session_id: str
    session_key: str | None
    previous_session_id: str | None
    reason: str | None
    created_at: int | None
    updated_at: int | None
    status: str | None
    channel: str | None
    chat_type: str | None
    model_provider: str | None
    model: str | None
    display_name: str | None
    parent_session_key: str | None
    spawned_by: str | None
    event_count: int
    event_bytes: int


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a SQLite database file (its first 16 bytes are SQLite's magic):
    what the commands and ``Session.open`` take as a store rather than a JSONL session. A
    missing or unreadable file is not one."""
    try:
        with open(path, "rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def _is_busy(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


class SessionStore:
    """A read-only handle on an OpenClaw session store; create it with :func:`open_store`.

    Each call opens its own read transaction, so a call sees one consistent snapshot while the
    Gateway keeps appending. Use it as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        name = str(self.path)
        with open(self.path, "rb") as f:
            magic = f.read(len(_SQLITE_MAGIC))
        if magic != _SQLITE_MAGIC:
            raise StoreError(f"{name}: not a SQLite database", path=name)
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            self._conn = sqlite3.connect(
                uri, uri=True, timeout=_BUSY_TIMEOUT_S, isolation_level=None
            )
            self._conn.execute("PRAGMA query_only = ON")
        except sqlite3.Error as error:
            raise StoreError(f"{name}: cannot open the store: {error}", path=name) from error
        self._layout = self._retry(self._detect_layout)

    # -- plumbing ---------------------------------------------------------------------------

    def _error(
        self, message: str, *, session_id: str | None = None, seq: int | None = None
    ) -> StoreError:
        where = f" (session {session_id}" + (f", seq {seq})" if seq is not None else ")")
        where = where if session_id is not None else ""
        return StoreError(
            f"{self.path}{where}: {message}", path=str(self.path), session_id=session_id, seq=seq
        )

    def _retry(self, read: Callable[[], _T]) -> _T:
        """Runs ``read`` in one read transaction, retrying when the database is busy."""
        for attempt in range(_BUSY_RETRIES):
            try:
                with self._snapshot():
                    return read()
            except sqlite3.OperationalError as error:
                if _is_busy(error) and attempt + 1 < _BUSY_RETRIES:
                    time.sleep(0.05 * (attempt + 1))
                    continue
                raise self._error(f"cannot read the store: {error}") from error
            except sqlite3.DatabaseError as error:
                raise self._error(f"corrupt or unreadable store: {error}") from error
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._conn.execute(f'PRAGMA table_info("{table}")')}

    def _detect_layout(self) -> tuple[str, int]:
        tables = {
            row[0]
            for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        if "transcript_events" in tables and "session_windows" in tables:
            return "session_windows", version
        if "transcript_events" in tables and "sessions" in tables:
            # Schemas 4-13 (2026.7.2-2026.8.x): windows were the `sessions` table.
            return "sessions", version
        raise self._error(
            f"not an OpenClaw session store this clawctx reads (schema version {version}; "
            "no transcript_events with session_windows or sessions)"
        )

    @property
    def schema_version(self) -> int:
        """``PRAGMA user_version`` of the store when it was opened."""
        return self._layout[1]

    # -- windows ----------------------------------------------------------------------------

    def _windows(self) -> list[StoreWindow]:
        table = self._layout[0]
        present = self._columns(table)
        select = ", ".join(f"w.{c}" if c in present else "NULL" for c in _WINDOW_COLUMNS)
        rows = self._conn.execute(
            f"SELECT {select}, COALESCE(e.n, 0), COALESCE(e.bytes, 0) FROM {table} w "
            "LEFT JOIN (SELECT session_id, COUNT(*) AS n, "
            "SUM(LENGTH(CAST(event_json AS BLOB)) + 1) AS bytes "
            "FROM transcript_events GROUP BY session_id) e ON e.session_id = w.session_id "
            + ("ORDER BY w.created_at, w.session_id" if "created_at" in present else "")
        ).fetchall()
        return [StoreWindow(*row) for row in rows]

    def sessions(self) -> list[StoreWindow]:
        """Every window of the store, oldest first (by ``created_at``)."""
        return self._retry(self._windows)

    def lineage(self, session_key: str) -> list[StoreWindow]:
        """The chain of windows of ``session_key``, newest first: from the newest window back
        through ``previous_session_id``. An unknown key gives ``[]``."""
        windows = [w for w in self.sessions() if w.session_key == session_key]
        if not windows:
            return []
        by_id = {w.session_id: w for w in windows}
        chain: list[StoreWindow] = []
        current: StoreWindow | None = windows[-1]
        while current is not None and current not in chain:
            chain.append(current)
            prev = current.previous_session_id
            current = by_id.get(prev) if prev is not None else None
        return chain

    # -- records ----------------------------------------------------------------------------

    def records(self, session_id: str) -> bytes:
        """The session's records in ``seq`` order as JSONL bytes (one line each), with a v3
        header synthesized from the window's row when the store holds none."""
        return self._retry(lambda: self._records(session_id))

    def _records(self, session_id: str) -> bytes:
        table = self._layout[0]
        window = self._conn.execute(
            f"SELECT * FROM {table} WHERE session_id = ?", (session_id,)
        ).fetchone()
        if window is None:
            raise KeyError(f"{self.path}: no session {session_id!r}")
        lines: list[bytes] = []
        first_type: object = None
        for seq, raw in self._conn.execute(
            "SELECT seq, event_json FROM transcript_events WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ):
            data = raw.encode() if isinstance(raw, str) else bytes(raw)
            try:
                value = json.loads(data)
            except ValueError as error:
                raise self._error(
                    f"event_json is not JSON: {error}", session_id=session_id, seq=seq
                ) from error
            if not isinstance(value, dict):
                raise self._error("event_json is not a JSON object", session_id=session_id, seq=seq)
            if not lines:
                first_type = value.get("type")
            if b"\n" in data or b"\r" in data:
                data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
            lines.append(data)
        if first_type != "session":
            created = self._conn.execute(
                "SELECT MIN(created_at) FROM transcript_events WHERE session_id = ?",
                (session_id,),
            ).fetchone()[0]
            lines.insert(0, _header(session_id, created))
        return b"\n".join(lines) + b"\n"

    def open(self, session_id: str, **options: Any) -> Session:
        """The window ``session_id`` as a read-only :class:`clawctx.Session`, with the same
        entries, tree, leaf and context as the JSONL file of the same records. ``options`` go to
        ``Session.open`` (``id_factory``, ``now_ms``, ``lazy``); the session is always read-only
        and has no file to refresh from."""
        data = self.records(session_id)
        fd, tmp = tempfile.mkstemp(prefix="clawctx-store-", suffix=".jsonl")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return Session.open(tmp, read_only=True, **options)
        finally:
            os.unlink(tmp)

    def close(self) -> None:
        """Closes the read connection."""
        self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _header(session_id: str, created_ms: int | None) -> bytes:
    when = datetime.fromtimestamp((created_ms or 0) / 1000, tz=timezone.utc)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": ""}
    return json.dumps(header, separators=(",", ":")).encode()


def open_store(path: str | os.PathLike[str]) -> SessionStore:
    """Opens an OpenClaw ``openclaw-agent.sqlite`` read-only. Raises :class:`StoreError` for a
    file that is not a SQLite session store, ``FileNotFoundError`` for a missing one."""
    return SessionStore(path)


# The subset of OpenClaw's schema (src/state/openclaw-agent-schema.sql) that transcripts use.
_SCHEMA = """
CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT, schema_version INTEGER,
  agent_id TEXT, app_version TEXT, created_at INTEGER, updated_at INTEGER) STRICT;
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL REFERENCES session_nodes(session_key) ON DELETE CASCADE,
  previous_session_id TEXT, reason TEXT, session_scope TEXT NOT NULL DEFAULT 'conversation',
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, status TEXT, chat_type TEXT,
  channel TEXT, account_id TEXT, model_provider TEXT, model TEXT, agent_harness_id TEXT,
  parent_session_key TEXT, spawned_by TEXT, display_name TEXT) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
  event_json TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE) STRICT;
"""
_SCHEMA_VERSION = 19


def write_store(
    jsonl_path: str | os.PathLike[str],
    store_path: str | os.PathLike[str],
    *,
    session_key: str = "agent:main:main",
    session_id: str | None = None,
) -> str:
    """Writes a JSONL session into a new store file in the current schema (one
    ``transcript_events`` row per non-blank line, ``seq`` from 0). Refuses an existing
    ``store_path`` (``FileExistsError``). Returns the window's ``session_id`` (the header's id
    unless given)."""
    target = Path(store_path)
    if target.exists():
        raise FileExistsError(str(target))
    lines = [ln for ln in Path(jsonl_path).read_bytes().splitlines() if ln.strip()]
    header: dict[str, Any] = json.loads(lines[0]) if lines else {}
    sid = session_id or str(header.get("id") or "session")
    now = int(time.time() * 1000)
    # Built under a temporary name beside the target and linked into place only when complete,
    # so a failure leaves no half-written store (and a file created meanwhile is not replaced).
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO schema_meta VALUES ('primary', 'agent', ?, NULL, NULL, ?, ?)",
                (_SCHEMA_VERSION, now, now),
            )
            entry = json.dumps({"sessionId": sid, "updatedAt": now})
            conn.execute(
                "INSERT INTO session_nodes VALUES (?, ?, ?, ?)", (session_key, sid, entry, now)
            )
            conn.execute(
                "INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                "VALUES (?, ?, ?, ?)",
                (sid, session_key, now, now),
            )
            conn.executemany(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?)",
                ((sid, seq, line.decode(), now) for seq, line in enumerate(lines)),
            )
            conn.execute("COMMIT")
            # WAL as OpenClaw keeps it; switching after the commit leaves no -wal sidecar
            # behind the rename (the mode is stored in the file header).
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
        os.link(tmp, target)
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)
    return sid


def export_jsonl(
    store_path: str | os.PathLike[str],
    session_id: str,
    target: str | os.PathLike[str],
    *,
    force: bool = False,
) -> int:
    """Writes the window ``session_id`` of the store as a JSONL session file at ``target``: its
    records in ``seq`` order, one line each (``clawctx convert STORE --session ID -o
    out.jsonl``). The file is written beside ``target`` and renamed into place; an existing
    ``target`` is refused (``FileExistsError``) unless ``force``. Returns the number of lines.
    Raises :class:`StoreError` for an unreadable store or an unknown session."""
    out = Path(target)
    if out.exists() and not force:
        raise FileExistsError(errno.EEXIST, "exists (use --force to replace it)", str(out))
    with open_store(store_path) as store:
        try:
            data = store.records(session_id)
        except KeyError:
            raise store._error("no such session in the store", session_id=session_id) from None
    directory = out.parent if str(out.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return data.count(b"\n")
