"""Many session files at once: find them, summarize them in parallel, tabulate the summaries.

``iter_sessions`` yields one ``SessionSummary`` per file as the Rust scan finishes it (files are
read on ``jobs`` threads with the GIL released; memory holds the sessions being read and a few
summaries, however many files there are). ``scan_table`` collects the same records into a
``pyarrow.Table`` (the ``arrow`` extra: ``pip install "clawctx[arrow]"``). ``session_paths``
expands the arguments both take: globs, directories (walked for ``*.jsonl`` and OpenClaw's
``openclaw-agent.sqlite`` stores) and plain paths.

A SQLite store gives one record per session window, named ``STORE#SESSION_ID`` and summarized
from the window's records in ``seq`` order (read through ``clawctx.history.store``, read-only);
a store that cannot be read gives one :class:`UnreadableStore` record with its ``error``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from clawctx import _core
from clawctx._core import SessionSummary
from clawctx.errors import StoreError
from clawctx.history.store import STORE_FILE_NAME, is_store, open_store

if TYPE_CHECKING:
    import pyarrow

PathsOrGlobs = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

_GLOB_CHARS = frozenset("*?[")


def session_paths(paths_or_globs: PathsOrGlobs) -> list[Path]:
    """The session files named by ``paths_or_globs``, in order and without repeats.

    A string with ``*``, ``?`` or ``[`` that names no existing file is a glob (``**`` matches
    any depth), its matches sorted. A directory is walked recursively for ``*.jsonl`` files
    and ``openclaw-agent.sqlite`` stores, sorted by path. Anything else is taken as a session
    file as it is, so a missing file, or a FIFO, device or directory named ``*.jsonl``,
    becomes a record with its ``error`` instead of silently disappearing.
    """
    if isinstance(paths_or_globs, (str, os.PathLike)):
        paths_or_globs = [paths_or_globs]
    found: dict[Path, None] = {}
    for item in paths_or_globs:
        text = os.fspath(item)
        if not isinstance(text, str):
            raise TypeError(f"expected a str or os.PathLike path, not {type(item).__name__}")
        if _GLOB_CHARS.intersection(text) and not os.path.lexists(text):
            for match in sorted(glob.glob(text, recursive=True)):
                found.update(dict.fromkeys(_expand(Path(match))))
        else:
            found.update(dict.fromkeys(_expand(Path(text))))
    return list(found)


def _expand(path: Path) -> list[Path]:
    if path.suffix != ".jsonl" and path.is_dir():
        found = [*path.rglob("*.jsonl"), *path.rglob(STORE_FILE_NAME)]
        return sorted(p for p in found if not p.is_dir())
    return [path]


@dataclass(frozen=True)
class UnreadableStore:
    """The scan record of an OpenClaw SQLite store that cannot be read (corrupt, locked past
    the busy timeout, an unknown schema): ``path`` and ``error`` as a ``SessionSummary`` has
    them, every other field empty (``None`` or 0), ``format`` ``None``."""

    path: Path
    error: str

    def to_dict(self) -> dict[str, Any]:
        """The record as ``SessionSummary.to_dict`` gives one: every field, in order."""
        record = _core.summarize_session_bytes(b"", self.path).to_dict()
        record.update(path=str(self.path), error=self.error, format=None)
        record["size_bytes"] = self.path.stat().st_size if self.path.is_file() else 0
        return record

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in SessionSummary.fields:
            raise AttributeError(name)
        return self.to_dict()[name]


#: One record of a scan: a session's summary, or a store that could not be read.
ScanRecord = SessionSummary | UnreadableStore


def store_records(path: str | os.PathLike[str]) -> list[ScanRecord]:
    """One ``SessionSummary`` per window of the store at ``path`` (oldest first), each named
    ``STORE#SESSION_ID``; a store (or window) that cannot be read gives an
    :class:`UnreadableStore` record instead."""
    store_path = Path(path)
    try:
        with open_store(store_path) as store:
            records: list[ScanRecord] = []
            # The ids only: `sessions()` would read every event's text once more for its
            # byte totals before the rows are read.
            for session_id in store.session_ids():
                name = f"{store_path}#{session_id}"
                try:
                    # One native read of the row list (joined in Rust, without the GIL);
                    # the rows are checked only when it finds damage.
                    lines = store.record_lines(session_id)
                    summary = _core.summarize_session_lines(lines, name)
                    if summary.damaged_lines:
                        store.check_lines(session_id, lines)
                except StoreError as err:
                    records.append(UnreadableStore(Path(name), str(err)))
                    continue
                records.append(summary)
            return records
    except StoreError as err:
        return [UnreadableStore(store_path, str(err))]


def iter_sessions(
    paths_or_globs: PathsOrGlobs,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], object] | None = None,
    ordered: bool = True,
) -> Iterator[ScanRecord]:
    """Summarizes every session file ``paths_or_globs`` names (see ``session_paths``) on
    ``jobs`` threads (default: one per core) and yields each ``SessionSummary`` when it is
    ready: in the order of ``session_paths`` when ``ordered`` (the default), else as files
    finish. A file that cannot be read as a session yields a record with ``error`` set. An
    OpenClaw SQLite store yields one record per window (``STORE#SESSION_ID``, see
    :func:`store_records`), read on the calling thread before the JSONL files stream.
    ``progress(done, total)`` is called after each record. Stopping early (``break``) stops
    the scan after the files being read.
    """
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    paths = session_paths(paths_or_globs)
    # Stores are read here (one read transaction per call, see clawctx.history.store); the
    # JSONL files stream from the Rust scan in between, so `ordered` keeps the listing order.
    stores = {p: store_records(p) for p in paths if p.suffix != ".jsonl" and is_store(p)}
    files = [p for p in paths if p not in stores]
    stream = _core.scan_stream(files, workers=jobs, ordered=ordered)
    total = stream.total + sum(len(r) for r in stores.values())
    done = 0

    def emit(record: ScanRecord) -> ScanRecord:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)
        return record

    if ordered:
        for path in paths:
            if path in stores:
                for record in stores[path]:
                    yield emit(record)
            else:
                yield emit(next(stream))
    else:
        for summary in stream:
            yield emit(summary)
        for records in stores.values():
            for record in records:
                yield emit(record)


#: The Arrow type of each ``SessionSummary`` field (``SessionSummary.fields`` order).
_INT_FIELDS = frozenset(
    {
        "size_bytes",
        "file_version",
        "entries",
        "messages",
        "skipped_lines",
        "damaged_lines",
        "compactions",
        "branches",
        "context_messages",
        "estimated_tokens",
        "user_tokens",
        "assistant_tokens",
        "tool_result_tokens",
        "other_tokens",
        "context_tokens",
        "tool_calls",
        "tool_results",
        "unpaired_tool_calls",
        "unpaired_tool_results",
    }
)


def _require_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(
            'scan_table needs pyarrow: pip install "clawctx[arrow]" (or pip install pyarrow)'
        ) from e
    return pyarrow


def _arrow_type(pa: Any, field: str) -> Any:
    if field in _INT_FIELDS:
        return pa.int64()
    if field == "migration_needed":
        return pa.bool_()
    if field == "last_activity_ms":
        return pa.timestamp("ms", tz="UTC")
    return pa.string()


def records_table(records: Iterable[ScanRecord]) -> pyarrow.Table:
    """Scan records as a ``pyarrow.Table``: one row per record, one column per
    ``SessionSummary.fields`` entry (``path`` as a string, ``last_activity_ms`` as a UTC
    timestamp, missing values as nulls)."""
    pa = _require_pyarrow()
    names = SessionSummary.fields
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for record in records:
        for name, value in record.to_dict().items():
            columns[name].append(value)
    schema = pa.schema([pa.field(name, _arrow_type(pa, name)) for name in names])
    return pa.Table.from_pydict(columns, schema=schema)


def scan_table(
    paths_or_globs: PathsOrGlobs,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> pyarrow.Table:
    """``iter_sessions`` collected into a ``pyarrow.Table`` (see ``records_table``), in the
    order of ``session_paths``; ``table.to_pandas()`` or ``polars.from_arrow(table)`` take it
    from there. Needs the ``arrow`` extra."""
    _require_pyarrow()
    return records_table(iter_sessions(paths_or_globs, jobs=jobs, progress=progress))


__all__ = [
    "ScanRecord",
    "UnreadableStore",
    "iter_sessions",
    "records_table",
    "scan_table",
    "session_paths",
    "store_records",
]
