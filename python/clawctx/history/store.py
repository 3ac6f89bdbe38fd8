"""Read-only access to OpenClaw's per-agent SQLite session store (``openclaw-agent.sqlite``).

Since the 2026.7.2 betas OpenClaw keeps transcripts in one SQLite database per agent
(openclaw/openclaw#98236, ``src/state/openclaw-agent-schema.sql``): one ``transcript_events`` row
per pi v3 line (``event_json``, ordered by ``seq``) and one ``session_windows`` row per transcript
generation (``sessions`` before schema 14). :func:`open_store` opens such a file read-only (URI
``mode=ro``, ``PRAGMA query_only``, a busy timeout and retries on ``SQLITE_BUSY``), never
takes a write lock and never checkpoints, so a running Gateway is not disturbed.

Binding: Python's stdlib ``sqlite3`` reads the rows; the Rust reader takes the list of row bytes,
joins it once with the GIL released and parses it in memory, with no temporary file (see
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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from clawctx import _core
from clawctx.errors import StoreError
from clawctx.history.session import Session

__all__ = [
    "STORE_FILE_NAME",
    "SessionStore",
    "StoreSession",
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
# The read connection reads pages with read(), never through a memory map (`PRAGMA
# mmap_size` stays 0): a map would save a fifth of the fetch's CPU (benches/README.md), but a
# store file cut short by another program while mapped (a backup copied over it in place)
# would kill this process with SIGBUS where read() gives an error.
# Rows per fetchmany() batch of a window's rows: ~256 KiB of OpenClaw rows (~4 KB each), small
# enough to stay in the CPU cache while it is checked (see SessionStore._rows).
_FETCH_BATCH_ROWS = 64

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


_WINDOW_FIELDS = tuple(f.name for f in fields(StoreWindow))


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
            self._conn.execute("PRAGMA mmap_size = 0")
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
        # Two queries joined in Python: a LEFT JOIN on the aggregate (SQLite materializes it
        # and builds an automatic index) takes half as long again at 10,000 windows.
        counts = {
            row[0]: row[1:]
            for row in self._conn.execute(
                "SELECT session_id, COUNT(*), SUM(LENGTH(CAST(event_json AS BLOB)) + 1) "
                "FROM transcript_events GROUP BY session_id"
            )
        }
        none = (0, 0)
        rows = [
            row + counts.get(row[0], none)
            for row in self._conn.execute(
                f"SELECT {select} FROM {table} w "
                + ("ORDER BY w.created_at, w.session_id" if "created_at" in present else "")
            )
        ]
        # Built without the frozen dataclass's __init__ (one object.__setattr__ per field):
        # a third of the time of listing 10,000 windows otherwise.
        make = object.__new__
        windows = []
        for row in rows:
            window = make(StoreWindow)
            window.__dict__.update(zip(_WINDOW_FIELDS, row, strict=True))
            windows.append(window)
        return windows

    def sessions(self) -> list[StoreWindow]:
        """Every window of the store, oldest first (by ``created_at``)."""
        return self._retry(self._windows)

    def session_ids(self) -> list[str]:
        """The ``session_id`` of every window, in the order of :meth:`sessions`, without the
        event counts and byte totals (which read every event's text): what a scan needs
        before it reads each window's rows anyway."""
        return self._retry(self._window_ids)

    def _window_ids(self) -> list[str]:
        table = self._layout[0]
        order = "ORDER BY created_at, session_id" if "created_at" in self._columns(table) else ""
        return [row[0] for row in self._conn.execute(f"SELECT session_id FROM {table} {order}")]

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

    def records(self, session_id: str, *, check: bool = True) -> bytes:
        """The session's records in ``seq`` order as JSONL bytes (one line each), with a v3
        header synthesized from the window's row when the store holds none.

        The rows are joined as they are stored (no row is parsed in Python; only a row that
        spans lines is re-encoded on one). With ``check`` (the default) the native reader then
        reads the bytes once and a row that is not a JSON object raises :class:`StoreError`
        naming its ``seq``; pass ``check=False`` when the caller reads the bytes natively
        anyway and calls :meth:`check_records` only when that read reports damaged lines (as
        :meth:`open` and ``clawctx.scan_sessions`` do). Raises ``KeyError`` for an unknown
        session."""
        read = self._retry(lambda: self._records(session_id))
        data = read.data
        if check and _core.summarize_session_bytes(data).damaged_lines:
            self.check_records(session_id, data)
        return data

    def record_lines(self, session_id: str) -> list[bytes]:
        """The lines of :meth:`records` without their ``"\\n"`` and unchecked (one read
        transaction): the list the native readers take as it is
        (``_core.summarize_session_lines``, a :class:`StoreSession`), so that no joined copy is
        built in Python. Call :meth:`check_lines` when such a reader reports damaged lines.
        Raises ``KeyError`` for an unknown session."""
        return self._retry(lambda: self._records(session_id)).lines

    def check_records(self, session_id: str, data: bytes) -> None:
        """Raises :class:`StoreError` naming the ``seq`` of the first row of ``data`` (bytes
        :meth:`records` returned for ``session_id``) that the native reader skips or salvages:
        a row whose ``event_json`` is not a JSON object. Lines it only sanitizes (a BOM,
        invalid UTF-8, lone surrogates) or ignores (a second header) pass, as in a JSONL
        file."""
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        self.check_lines(session_id, lines)

    def check_lines(self, session_id: str, lines: list[bytes]) -> None:
        """:meth:`check_records` of the lines (without their ``"\\n"``) rather than their
        joined bytes: what ``clawctx.scan_sessions`` calls when the summary of a window's
        lines reports damaged ones."""
        skipped = _core.Session._from_lines(lines, self._name(session_id)).skipped_lines
        self._raise_damage(
            session_id, skipped, self._retry(lambda: self._first_is_header(session_id))
        )

    def _name(self, session_id: str) -> str:
        """How the window is named in a summary and in the reader's errors."""
        return f"{self.path}#{session_id}"

    def _raise_damage(
        self, session_id: str, skipped: list[_core.SkippedLine], has_header: bool
    ) -> None:
        """Raises StoreError for the first skipped or salvaged line of the session's bytes."""
        bad = next((s for s in skipped if s.action in ("skipped", "salvaged")), None)
        if bad is None:
            return
        # Line 1 is the header (stored or synthesized); row k (0-based) is line k + 1, or
        # k + 2 after a synthesized header.
        row = bad.line - (1 if has_header else 2)
        seq = self._retry(lambda: self._seq_at(session_id, row)) if row >= 0 else None
        raise self._error(
            f"event_json is not a JSON object ({bad.reason})", session_id=session_id, seq=seq
        )

    def _seq_at(self, session_id: str, row: int) -> int | None:
        found = self._conn.execute(
            "SELECT seq FROM transcript_events WHERE session_id = ? ORDER BY seq LIMIT 1 OFFSET ?",
            (session_id, row),
        ).fetchone()
        return None if found is None else int(found[0])

    def _first_is_header(self, session_id: str) -> bool:
        first = self._conn.execute(
            "SELECT CAST(event_json AS BLOB) FROM transcript_events WHERE session_id = ? "
            "ORDER BY seq LIMIT 1",
            (session_id,),
        ).fetchone()
        return first is not None and _is_header(first[0])

    def _window_row(self, session_id: str) -> None:
        table = self._layout[0]
        window = self._conn.execute(
            f"SELECT 1 FROM {table} WHERE session_id = ?", (session_id,)
        ).fetchone()
        if window is None:
            raise KeyError(f"{self.path}: no session {session_id!r}")

    def _rows(self, session_id: str, after: int | None) -> tuple[list[bytes], list[int], bool]:
        """The ``event_json`` bytes of the session's rows with ``seq > after`` (all of them
        when ``after`` is None) in ``seq`` order, ``[first seq, last seq]`` of them, and
        whether every row is already one JSONL line (:func:`_one_line_rows`)."""
        where = "session_id = ?" + ("" if after is None else " AND seq > ?")
        args: tuple[object, ...] = (session_id,) if after is None else (session_id, after)
        span = self._conn.execute(
            f"SELECT MIN(seq), MAX(seq) FROM transcript_events WHERE {where}", args
        ).fetchone()
        if span[0] is None:
            return [], [], True
        # Bytes, not str: no UTF-8 decoding in Python; the native reader judges the text.
        # The rows are read up to the MAX(seq) read above, so rows committed in between
        # (another connection; this one holds one read transaction) cannot slip in unseen.
        cursor = self._conn.execute(
            "SELECT CAST(COALESCE(event_json, '') AS BLOB) FROM transcript_events "
            f"WHERE {where} AND seq <= ? ORDER BY seq",
            (*args, span[1]),
        )
        # Fetched a batch at a time and each batch checked at once, while its bytes are still
        # in the CPU cache: checking a 100 MB window after a fetchall() reads it all back from
        # memory, a sixth of the fetch's time (benches/README.md).
        cursor.arraysize = _FETCH_BATCH_ROWS
        blobs: list[bytes] = []
        clean = True
        while batch := cursor.fetchmany():
            rows = list(map(itemgetter(0), batch))
            clean = clean and _one_line_rows(rows)
            blobs += rows
        return blobs, [int(span[0]), int(span[1])], clean

    def _lines(self, session_id: str, blobs: list[bytes], first_seq: int) -> bytes:
        """The rows as JSONL bytes (see :meth:`_one_line_each`)."""
        self._one_line_each(session_id, blobs, first_seq)
        blobs.append(b"")
        return b"\n".join(blobs)

    def _one_line_each(self, session_id: str, blobs: list[bytes], first_seq: int) -> None:
        """Makes each row one JSONL line, in place. A blank row is refused (the reader would
        drop it unseen); one holding a line break is re-encoded on one line (the only rows
        parsed in Python). A CR needs nothing: between tokens it is JSON whitespace, inside
        a string the row is not JSON and the native reader says so. Callers whose rows
        :func:`_one_line_rows` already found clean skip it."""
        if not all(blobs) or any(map(bytes.isspace, blobs)):
            index = next(i for i, b in enumerate(blobs) if not b.strip())
            seq = self._seq_at(session_id, self._row_of(session_id, first_seq) + index)
            raise self._error("event_json is empty", session_id=session_id, seq=seq)
        # One memchr per row at C speed (no Python bytecode per row).
        if any(map(bytes.__contains__, blobs, repeat(10))):
            for i, blob in enumerate(blobs):
                if b"\n" in blob:
                    blobs[i] = self._one_line(session_id, blob, first_seq, i)

    def _row_of(self, session_id: str, seq: int) -> int:
        """How many rows of the session come before ``seq``."""
        return int(
            self._conn.execute(
                "SELECT COUNT(*) FROM transcript_events WHERE session_id = ? AND seq < ?",
                (session_id, seq),
            ).fetchone()[0]
        )

    def _one_line(self, session_id: str, blob: bytes, first_seq: int, index: int) -> bytes:
        try:
            value = json.loads(blob)
        except ValueError as error:
            seq = self._seq_at(session_id, self._row_of(session_id, first_seq) + index)
            raise self._error(
                f"event_json is not JSON: {error}", session_id=session_id, seq=seq
            ) from error
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    def _records(self, session_id: str) -> _Records:
        self._window_row(session_id)
        lines, span, clean = self._rows(session_id, None)
        has_header = bool(lines) and _is_header(lines[0])
        if lines and not clean:
            self._one_line_each(session_id, lines, span[0])
        if not has_header:
            created = self._conn.execute(
                "SELECT MIN(created_at) FROM transcript_events WHERE session_id = ?",
                (session_id,),
            ).fetchone()[0]
            lines.insert(0, _header(session_id, created))
        return _Records(lines, has_header, span[1] if span else None)

    def open(
        self,
        session_id: str,
        *,
        now_ms: int | Callable[[], int] | None = None,
        id_factory: Callable[[], str] | None = None,
        lazy: bool = False,
    ) -> StoreSession:
        """The window ``session_id`` as a read-only :class:`StoreSession` (a
        :class:`clawctx.Session`), with the same entries, tree, leaf and context as the JSONL
        file of the same records. ``now_ms`` and ``id_factory`` are those of ``Session.open``.
        The rows are handed to the native reader as the list ``sqlite3`` fetched (joined once
        in Rust with the GIL released) and parsed in memory: no temporary file. ``lazy`` is
        accepted for ``Session.open``'s sake and changes nothing: every row is fetched anyway,
        so the session is held in full (``is_lazy`` is false; :meth:`read_leaf_context` is the
        store's fast read of the end). :meth:`StoreSession.refresh` reads only the rows added
        since. Raises ``KeyError`` for an unknown session and :class:`StoreError` for a row
        that is not a JSON object (found by the native reader)."""
        del lazy  # see the docstring: a store window is always read in full
        read = self._retry(lambda: self._records(session_id))
        session = StoreSession._from_lines(
            read.lines, self._name(session_id), now_ms=now_ms, id_factory=id_factory
        )
        session._attach(self.path.resolve(), session_id, read)
        self._raise_damage(session_id, session.skipped_lines, read.has_header)
        return session

    def read_leaf_context(self, session_id: str, *, chunk_bytes: int = 262144) -> _core.LeafContext:
        """The context of the window's last entry, equal to ``self.open(session_id).context()``,
        read from the newest rows back only as far as the messages need (to the latest
        compaction's or reset's first kept entry, or the root): the rows are fetched in
        descending ``seq``, about ``chunk_bytes`` first and twice as many each time after (up to
        16 MiB), and handed to the native backward reader of :func:`clawctx.read_leaf_context`
        (``thinking_level`` and ``model`` read on when asked for). Each fetch is its own short
        read transaction bounded by the window's last ``seq`` when the call began, so rows the
        Gateway appends meanwhile are not mixed in. ``bytes_read`` and ``file_size`` count the
        lines handed over. A header only a full open handles (none of OpenClaw's) falls back to
        one (``read_in_full``). Raises ``KeyError`` for an unknown session and
        :class:`StoreError` for a row read that is not a JSON object."""
        header, lower, upper = self._retry(lambda: self._leaf_bounds(session_id))
        source = _RowsBackward(self, session_id, lower, upper)
        context = _core._read_leaf_context_lines(header, source, chunk_bytes=chunk_bytes)
        if context is not None:
            return context
        data = self.records(session_id)
        # A header only a full open handles (a migration, say): read from a private file.
        with tempfile.TemporaryDirectory(prefix="clawctx-store-") as tmp:
            path = Path(tmp) / "session.jsonl"
            path.write_bytes(data)
            return _core.read_leaf_context(path, chunk_bytes=chunk_bytes)

    def _leaf_bounds(self, session_id: str) -> tuple[bytes, int | None, int | None]:
        """The header line of the window, the seq of its stored header row (``None`` when it
        has none) and its last seq (``None`` without rows)."""
        self._window_row(session_id)
        first = self._conn.execute(
            "SELECT seq, CAST(COALESCE(event_json, '') AS BLOB) FROM transcript_events "
            "WHERE session_id = ? ORDER BY seq LIMIT 1",
            (session_id,),
        ).fetchone()
        last = self._conn.execute(
            "SELECT MAX(seq) FROM transcript_events WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        if first is not None and _is_header(first[1]):
            line = self._lines(session_id, [first[1]], int(first[0]))[:-1]
            return line, int(first[0]), int(last)
        created = self._conn.execute(
            "SELECT MIN(created_at) FROM transcript_events WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        return _header(session_id, created), None, None if last is None else int(last)

    def _appended(self, session_id: str, after: int | None) -> tuple[list[bytes], int | None]:
        """The lines (without their ``"\\n"``) of the rows added to the session after ``seq``
        ``after``, and the last seq read (``after`` when there are none)."""
        blobs, span, clean = self._rows(session_id, after)
        if not blobs:
            return [], after
        if not clean:
            self._one_line_each(session_id, blobs, span[0])
        return blobs, span[1]

    def close(self) -> None:
        """Closes the read connection."""
        self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class _Records:
    """A window's rows as lines (without their "\\n"), the header first."""

    lines: list[bytes]
    has_header: bool
    last_seq: int | None

    @property
    def data(self) -> bytes:
        """The lines as JSONL bytes."""
        return b"\n".join(self.lines) + b"\n"


def _one_line_rows(rows: list[bytes]) -> bool:
    """Whether every row is one non-blank JSONL line already (none empty, all whitespace or
    holding a line break): what lets :meth:`SessionStore._one_line_each` skip them. One
    C-level test per row (a ``memchr`` for the line break), no bytecode per row."""
    return (
        all(rows)
        and not any(map(bytes.isspace, rows))
        and not any(map(bytes.__contains__, rows, repeat(10)))
    )


def _is_header(blob: bytes) -> bool:
    """Whether a row is a session header (one row parsed, never one per message)."""
    try:
        value = json.loads(blob)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("type") == "session"


class _RowsBackward:
    """Hands a window's rows to the native backward reader (``_core._read_leaf_context_lines``)
    newest first: the rows with ``lower < seq <= upper`` in descending ``seq``, each fetch
    its own read transaction."""

    def __init__(
        self, store: SessionStore, session_id: str, lower: int | None, upper: int | None
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.lower = -(2**63) if lower is None else lower
        # The next fetch reads the rows below this seq.
        self.below = None if upper is None else upper + 1
        self.seqs: list[int] = []
        self.batch = 64

    def older_lines(self, hint: int) -> bytes | None:
        """About ``hint`` bytes of the rows before those handed over, as lines in seq order."""
        if self.below is None:
            return None
        return self.store._retry(lambda: self._older(hint))

    def _older(self, hint: int) -> bytes | None:
        assert self.below is not None
        blobs: list[bytes] = []
        seqs: list[int] = []
        size = 0
        while size < hint:
            rows = self.store._conn.execute(
                "SELECT seq, CAST(COALESCE(event_json, '') AS BLOB) FROM transcript_events "
                "WHERE session_id = ? AND seq < ? AND seq > ? ORDER BY seq DESC LIMIT ?",
                (self.session_id, self.below, self.lower, self.batch),
            ).fetchall()
            if not rows:
                self.below = None
                break
            seqs.extend(map(itemgetter(0), rows))
            chunk = list(map(itemgetter(1), rows))
            blobs.extend(chunk)
            size += sum(map(len, chunk))
            self.below = seqs[-1]
            self.batch = min(self.batch * 2, 1 << 16)
        if not blobs:
            return None
        blobs.reverse()
        seqs.reverse()
        self.seqs = seqs
        return self.store._lines(self.session_id, blobs, seqs[0])

    def damaged(self, line: int, reason: str) -> None:
        """Refuses a row of the last chunk that is not a JSON object."""
        raise self.store._error(
            f"event_json is not a JSON object ({reason})",
            session_id=self.session_id,
            seq=self.seqs[line - 1],
        )


class StoreSession(Session):
    """A window of a session store opened read-only (:meth:`SessionStore.open`,
    ``Session.open(store, session_id=...)``): a :class:`clawctx.Session` whose records are
    held in memory by the native session (``path`` is ``None``; no temporary file).
    :meth:`refresh` reads only the rows the store gained since (``seq`` above the last one
    read) and hands them to the native session, which parses only them, as a JSONL session
    reads only appended bytes."""

    store_path: Path
    store_session_id: str
    _last_seq: int | None
    _has_header: bool
    _refreshing: threading.Lock

    def _attach(self, store_path: Path, session_id: str, read: _Records) -> None:
        self.store_path = store_path
        self.store_session_id = session_id
        self._last_seq = read.last_seq
        self._has_header = read.has_header
        # Fetching rows after `_last_seq` and handing them over is one step: two threads
        # refreshing at once would otherwise hand the same rows over twice.
        self._refreshing = threading.Lock()

    @property
    def last_seq(self) -> int | None:
        """The ``seq`` of the last row read (``None`` when the window had none)."""
        return self._last_seq

    def refresh(self) -> _core.RefreshReport:
        """Reads the rows added to the window since it was opened or last refreshed (``seq``
        greater than :attr:`last_seq`, in one read transaction) and hands their lines to the
        native session, which parses only them: the report of a JSONL refresh that read the
        same lines appended to the file (``mode`` ``"incremental"``, ``bytes_read`` their
        bytes; ``"unchanged"`` when there were none; ``"full"`` for a window whose header
        needed migration, as for its JSONL twin). OpenClaw never rewrites rows (a reset or
        rewind starts a new window), so rows at or below :attr:`last_seq` are not read again.
        Raises :class:`StoreError` for an unreadable store or a new row that is not a JSON
        object (the lines before it are read)."""
        with self._refreshing, open_store(self.store_path) as store:
            lines, last = store._retry(
                lambda: store._appended(self.store_session_id, self._last_seq)
            )
            before = len(self.skipped_lines)
            if lines:
                self._push_lines(lines)
                self._last_seq = last
            report = super().refresh()
            if lines:
                store._raise_damage(
                    self.store_session_id, self.skipped_lines[before:], self._has_header
                )
            return report

    def close(self) -> None:
        """Nothing to release: the records live in memory and go with the session (earlier
        versions removed a temporary file here). Kept so that code calling it still runs;
        :meth:`refresh` works after it."""


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
