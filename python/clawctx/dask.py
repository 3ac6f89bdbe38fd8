"""Sessions beyond one machine: Dask collections over session files anywhere fsspec reaches.

``pip install "clawctx[dask]"`` (``dask[dataframe]``, ``distributed``, ``fsspec``; add ``s3fs``,
``gcsfs`` or ``adlfs`` for object stores). Paths are fsspec URLs or local paths: a file, a
directory (every ``*.jsonl`` below it) or a glob (``s3://bucket/agents/**/*.jsonl``).
``storage_options`` go to the filesystem (credentials, endpoint, ...).

OpenClaw's SQLite stores (``openclaw-agent.sqlite``, found in directories beside ``*.jsonl``
files, or any SQLite file named) give one row per session window to :func:`read_sessions` and
their messages to :func:`read_messages`, ``path`` being ``URL#SESSION_ID``. A local store is
read in place, read-only (``clawctx.history.open_store``); a remote one is copied first (its
main file only: copy a live WAL database with the SQLite backup API, not object by object).
:func:`repair_sessions` never lists stores: a store is never written.

- :func:`read_sessions`: a ``dask.dataframe`` with one row per session, the columns of the
  single-process scan record (:func:`clawctx.history.scan_sessions`), ``path`` being the URL.
- :func:`read_messages`: a ``dask.dataframe`` with one row per message of each session's
  context (role, tool names, text length, estimated tokens, recorded usage, ...).
- :func:`repair_sessions`: a ``dask.bag`` of repair reports, one per session. A dry run by
  default; see the function for what ``write=True`` does to a remote object.

The listing runs on the client, once: its sizes group the files into partitions of about
``partition_bytes`` (a file is never split). A worker holds one partition's records and one
session at a time; the Rust core reads it with the GIL released.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawctx.history import (
    ClawctxError,
    Transcript,
    detect_transcript_format,
    import_transcript,
    message_columns,
    read_leaf_context,
    repair_session_bytes,
    repair_session_file,
    scan_sessions,
    summarize_session_bytes,
)
from clawctx.history.scan import store_records
from clawctx.history.store import STORE_FILE_NAME, is_store, open_store

if TYPE_CHECKING:
    import dask.bag
    import dask.dataframe

# fsspec and pandas ship no type information: their objects are typed by these names.
_FileSystem = Any
_PandasFrame = Any

__all__ = [
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "list_sessions",
    "read_messages",
    "read_sessions",
    "repair_sessions",
]

#: One partition gathers files up to this many bytes (a single larger file is its own).
DEFAULT_PARTITION_BYTES = 256 * 1024 * 1024

#: The scan record's columns and their dtypes, as ``read_sessions`` declares them up front
#: (Dask needs them before any file is read). Same names as ``SessionSummary``'s fields.
SESSION_COLUMNS: dict[str, str] = {
    "path": "string",
    "error": "string",
    "format": "string",
    "size_bytes": "int64",
    "session_id": "string",
    "cwd": "string",
    "created": "string",
    "name": "string",
    "file_version": "int64",
    "migration_needed": "bool",
    "entries": "int64",
    "messages": "int64",
    "skipped_lines": "int64",
    "damaged_lines": "int64",
    "compactions": "int64",
    "branches": "int64",
    "leaf_id": "string",
    "model": "string",
    "last_activity": "string",
    # Missing when the file has no timestamp: a float column holds NaN for it.
    "last_activity_ms": "float64",
    "context_messages": "int64",
    "estimated_tokens": "int64",
    "user_tokens": "int64",
    "assistant_tokens": "int64",
    "tool_result_tokens": "int64",
    "other_tokens": "int64",
    "context_tokens": "int64",
    "tool_calls": "int64",
    "tool_results": "int64",
    "unpaired_tool_calls": "int64",
    "unpaired_tool_results": "int64",
}

#: ``read_messages``'s columns: the session's URL, then ``message_columns``'s statistics.
MESSAGE_COLUMNS: dict[str, str] = {
    "path": "string",
    "index": "int64",
    "role": "string",
    "tool_name": "string",
    "text_chars": "int64",
    "thinking_chars": "int64",
    "estimated_tokens": "int64",
    "tool_calls": "int64",
    "has_image": "bool",
    "is_error": "bool",
    "timestamp_ms": "float64",
    "usage_input": "float64",
    "usage_output": "float64",
    "usage_cache_read": "float64",
    "usage_cache_write": "float64",
    "usage_total": "float64",
}

_MISSING_EXTRA = 'clawctx.dask needs the "dask" extra: pip install "clawctx[dask]" ({})'


def _import_fsspec() -> Any:
    try:
        import fsspec
    except ImportError as err:
        raise ImportError(_MISSING_EXTRA.format(err)) from err
    return fsspec


def _import_dask() -> tuple[Any, Any]:
    try:
        import dask.bag
        import dask.dataframe
    except ImportError as err:
        raise ImportError(_MISSING_EXTRA.format(err)) from err
    return dask.bag, dask.dataframe


@dataclass(frozen=True)
class _Listed:
    url: str
    size: int


def _url_to_fs(url: str, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    fsspec = _import_fsspec()
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    return fs, path


def _is_local(fs: _FileSystem) -> bool:
    return "file" in _protocols(fs)


def _protocols(fs: _FileSystem) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _list_one(
    url: str, storage_options: dict[str, Any] | None, stores: bool = True
) -> list[_Listed]:
    fs, path = _url_to_fs(url, storage_options)
    if any(c in path for c in "*?["):
        found = fs.glob(path, detail=True)
    elif fs.isdir(path):
        found = {
            name: info
            for name, info in fs.find(path, detail=True).items()
            if name.endswith(".jsonl") or (stores and name.rsplit("/", 1)[-1] == STORE_FILE_NAME)
        }
    else:
        # A missing file is listed anyway: its record says why it could not be read.
        try:
            found = {path: fs.info(path)}
        except FileNotFoundError:
            found = {path: {"type": "file", "size": 0}}
    return [
        _Listed(_full_url(fs, name), int(info.get("size") or 0))
        for name, info in sorted(found.items())
        if info.get("type") != "directory"
    ]


def _full_url(fs: _FileSystem, path: str) -> str:
    # Local files keep their plain path, so records compare equal to the local scan's.
    return path if _is_local(fs) else str(fs.unstrip_protocol(path))


def _listing(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    storage_options: dict[str, Any] | None,
    stores: bool = True,
) -> list[_Listed]:
    if isinstance(urlpath_or_paths, (str, os.PathLike)):
        inputs = [os.fspath(urlpath_or_paths)]
    else:
        inputs = [os.fspath(p) for p in urlpath_or_paths]
    if not inputs:
        raise ValueError("no session paths given")
    listed: list[_Listed] = []
    seen: set[str] = set()
    for url in inputs:
        for item in _list_one(url, storage_options, stores):
            if item.url not in seen:
                seen.add(item.url)
                listed.append(item)
    return listed


def list_sessions(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    storage_options: dict[str, Any] | None = None,
) -> list[str]:
    """The session URLs the other functions would read, in their order (one listing call per
    input: a directory lists every ``*.jsonl`` and ``openclaw-agent.sqlite`` below it, a glob
    its matches; :func:`repair_sessions` leaves the stores out)."""
    return [item.url for item in _listing(urlpath_or_paths, storage_options)]


def _partitions(listed: Sequence[_Listed], partition_bytes: int) -> list[list[str]]:
    if partition_bytes <= 0:
        raise ValueError("partition_bytes must be positive")
    groups: list[list[str]] = []
    current: list[str] = []
    size = 0
    for item in listed:
        if current and size + item.size > partition_bytes:
            groups.append(current)
            current, size = [], 0
        current.append(item.url)
        size += item.size
    if current:
        groups.append(current)
    return groups


def _session_meta() -> _PandasFrame:
    import pandas as pd

    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in SESSION_COLUMNS.items()})


def _frame(records: list[dict[str, Any]], columns: dict[str, str]) -> _PandasFrame:
    import pandas as pd

    frame = pd.DataFrame.from_records(records, columns=list(columns))
    return frame.astype(columns)


def _record(summary: Any, url: str) -> dict[str, Any]:
    record = {name: getattr(summary, name) for name in SESSION_COLUMNS}
    record["path"] = url
    return record


@contextlib.contextmanager
def _local_copy(url: str, storage_options: dict[str, Any] | None) -> Iterator[str]:
    """A local path holding the object's bytes: a local file itself, else a temporary copy,
    removed afterwards (the Rust scan and leaf-context reader read files)."""
    fs, path = _url_to_fs(url, storage_options)
    if _is_local(fs):
        yield path
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="clawctx-dask-") as tmp:
        local = os.path.join(tmp, "session.jsonl")
        # A missing object stays missing locally: the scan then says so.
        with contextlib.suppress(FileNotFoundError):
            fs.get_file(path, local)
        yield local


def _is_store_url(fs: _FileSystem, path: str) -> bool:
    """Whether the object is a SQLite store (by its first bytes; a missing one is not)."""
    if path.endswith(".jsonl"):
        return False
    if _is_local(fs):
        return is_store(path)
    try:
        head = fs.cat_file(path, start=0, end=16)
    except (FileNotFoundError, IsADirectoryError):
        return False
    return bool(head == b"SQLite format 3\x00")


@contextlib.contextmanager
def _local_store(url: str, storage_options: dict[str, Any] | None) -> Iterator[str]:
    """A local path of the store: a local file itself, else a temporary copy of its main file."""
    fs, path = _url_to_fs(url, storage_options)
    if _is_local(fs):
        yield path
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="clawctx-dask-") as tmp:
        local = os.path.join(tmp, STORE_FILE_NAME)
        fs.get_file(path, local)
        yield local


def _store_rows(url: str, storage_options: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One scan row per window of a store, named ``URL#SESSION_ID``."""
    with _local_store(url, storage_options) as local:
        rows = []
        for record in store_records(local):
            suffix = str(record.path)[len(str(Path(local))) :]  # "#SESSION_ID" or ""
            rows.append(_record(record, url + suffix))
        return rows


def _scan_urls(url: str, storage_options: dict[str, Any] | None) -> list[dict[str, Any]]:
    fs, path = _url_to_fs(url, storage_options)
    if _is_store_url(fs, path):
        return _store_rows(url, storage_options)
    return [_scan_url(url, storage_options)]


def _scan_url(url: str, storage_options: dict[str, Any] | None) -> dict[str, Any]:
    fs, path = _url_to_fs(url, storage_options)
    if _is_local(fs):
        [summary] = scan_sessions([path], workers=1)
        return _record(summary, url)
    # A remote object is scanned from its bytes (any of the three formats), named by its URL.
    try:
        data = fs.cat_file(path)
    except FileNotFoundError:
        [summary] = scan_sessions([url], workers=1)  # the scan's own "no such file" record
        return _record(summary, url)
    return _record(summarize_session_bytes(data, url), url)


def _scan_partition(urls: list[str], storage_options: dict[str, Any] | None) -> _PandasFrame:
    rows = [row for url in urls for row in _scan_urls(url, storage_options)]
    return _frame(rows, SESSION_COLUMNS)


def _lazy_frame(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    storage_options: dict[str, Any] | None,
    partition_bytes: int,
    partition: Callable[[list[str], dict[str, Any] | None], _PandasFrame],
    meta: Callable[[], _PandasFrame],
    label: str,
) -> dask.dataframe.DataFrame:
    """The files listed, grouped into partitions of about ``partition_bytes``, as a lazy frame
    that ``partition`` computes group by group; an empty frame of ``meta`` when none is listed."""
    _, dd = _import_dask()
    groups = _partitions(_listing(urlpath_or_paths, storage_options), partition_bytes)
    if not groups:
        empty: dask.dataframe.DataFrame = dd.from_pandas(meta(), npartitions=1)
        return empty
    frame: dask.dataframe.DataFrame = dd.from_map(
        partition,
        groups,
        storage_options=storage_options,
        meta=meta(),
        enforce_metadata=True,
        label=label,
    )
    return frame


def read_sessions(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    storage_options: dict[str, Any] | None = None,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
) -> dask.dataframe.DataFrame:
    """A lazy ``dask.dataframe`` of scan records, one row per session file, in listing order,
    with the columns and dtypes of :data:`SESSION_COLUMNS` (the fields of
    :class:`clawctx.history.SessionSummary`; ``path`` is the URL). Files that cannot be read
    as sessions get a row with ``error`` set, as in the single-process scan."""
    return _lazy_frame(
        urlpath_or_paths,
        storage_options,
        partition_bytes,
        _scan_partition,
        _session_meta,
        "clawctx-read-sessions",
    )


def _store_messages(url: str, storage_options: dict[str, Any] | None) -> _PandasFrame:
    """The context messages of every window of a store, each under ``URL#SESSION_ID``."""
    import pandas as pd

    frames = []
    with _local_store(url, storage_options) as local:
        try:
            with open_store(local) as store:
                for window in store.sessions():
                    named = f"{url}#{window.session_id}"
                    try:
                        session = store.open(window.session_id)
                    except ClawctxError:
                        continue  # read_sessions gives this window's row with the reason
                    messages = session.context_messages()
                    columns = message_columns(messages)
                    frames.append(pd.DataFrame({"path": [named] * len(messages), **columns}))
        except ClawctxError:
            pass  # an unreadable store: read_sessions gives its row with the reason
    if not frames:
        return _message_meta()
    return pd.concat(frames, ignore_index=True)


def _messages_of(url: str, storage_options: dict[str, Any] | None) -> _PandasFrame:
    import pandas as pd

    fs, path = _url_to_fs(url, storage_options)
    if _is_store_url(fs, path):
        return _store_messages(url, storage_options)

    with _local_copy(url, storage_options) as local:
        try:
            messages = read_leaf_context(local).messages
        except (ClawctxError, OSError, ValueError):
            try:
                # A Claude Code session or a Codex rollout: its main thread.
                messages = _foreign_messages(local)
            except (ClawctxError, OSError, ValueError):
                # Not a readable session: read_sessions gives its row with the reason.
                messages = Transcript()
    columns = message_columns(messages)
    frame = pd.DataFrame({"path": [url] * len(messages), **columns})
    return frame


def _foreign_messages(path: str) -> Transcript:
    """The main thread of a Claude Code session or Codex rollout; ``ValueError`` otherwise
    (a pi file the leaf reader refused stays refused)."""
    if detect_transcript_format(path) == "pi":
        raise ValueError(f"{path}: not a readable pi session")
    return import_transcript(path)


def _messages_partition(urls: list[str], storage_options: dict[str, Any] | None) -> _PandasFrame:
    import pandas as pd

    frames = [_messages_of(url, storage_options) for url in urls]
    return pd.concat(frames, ignore_index=True).astype(MESSAGE_COLUMNS)


def _message_meta() -> _PandasFrame:
    import pandas as pd

    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in MESSAGE_COLUMNS.items()})


def read_messages(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    storage_options: dict[str, Any] | None = None,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
) -> dask.dataframe.DataFrame:
    """A lazy ``dask.dataframe`` with one row per message of each session's context: the
    messages the model sees at the session's last entry (its branch, after compaction; the
    same messages ``read_sessions`` counts as ``context_messages``), in order. Columns and
    dtypes: :data:`MESSAGE_COLUMNS`, the statistics of
    :func:`clawctx.history.message_columns` after the session's ``path`` (URL); ``index`` is
    the message's position in the context. A file that cannot be read as a session has no
    rows (its ``read_sessions`` row says why)."""
    return _lazy_frame(
        urlpath_or_paths,
        storage_options,
        partition_bytes,
        _messages_partition,
        _message_meta,
        "clawctx-read-messages",
    )


# ---- repair -----------------------------------------------------------------------------------


def _stamp(info: dict[str, Any]) -> tuple[Any, ...]:
    # What tells that an object changed between our read and our write: its size and whatever
    # version marker the store reports (S3's ETag, a local mtime, ...).
    keys = (
        "ETag",
        "etag",
        "md5Hash",
        "generation",
        "mtime",
        "LastModified",
        "last_modified",
        "created",
    )
    return (info.get("size"), *(str(info.get(k)) for k in keys))


def _repair_url(
    url: str,
    storage_options: dict[str, Any] | None,
    write: bool,
    fix_messages: bool,
) -> dict[str, Any]:
    fs, path = _url_to_fs(url, storage_options)
    report: dict[str, Any] = {
        "path": url,
        "size_bytes": 0,
        "repaired_size_bytes": None,
        "written": False,
        "backup": None,
    }
    try:
        before = fs.info(path)
        data = fs.cat_file(path)
    except FileNotFoundError:
        return {**report, **_report_fields(None), "reason": "missing session file"}
    report["size_bytes"] = len(data)
    result, repaired = repair_session_bytes(data, fix_messages=fix_messages)
    report.update(_report_fields(result))
    if repaired is None:
        return report
    report["repaired_size_bytes"] = len(repaired)
    if not write:
        return report
    if _is_local(fs):
        # The local repair locks the file, keeps a backup beside it and swaps the new content
        # in atomically; it decides again on the file as it is now.
        local = repair_session_file(path, fix_messages=fix_messages)
        report.update(_report_fields(local))
        report["written"] = local.repaired
        report["backup"] = None if local.backup_path is None else os.fspath(local.backup_path)
        return report
    if _stamp(fs.info(path)) != _stamp(before):
        report["reason"] = "changed while repairing: not written"
        return report
    backup = f"{path}.bak-{os.getpid()}-{int(time.time() * 1000)}"
    fs.pipe_file(backup, data)
    # The original is replaced only once its backup reads back byte for byte.
    if fs.cat_file(backup) != data:
        report["reason"] = "backup did not read back intact: not written"
        return report
    fs.pipe_file(path, repaired)
    report["written"] = True
    report["backup"] = _full_url(fs, backup)
    return report


def _report_fields(result: Any) -> dict[str, Any]:
    if result is None:
        return {
            "repaired": False,
            "dropped_lines": 0,
            "rewritten_assistant_messages": 0,
            "rewritten_user_messages": 0,
            "salvaged_records": 0,
            "reason": None,
            "summary": "",
            "changes": [],
        }
    return {
        "repaired": result.repaired,
        "dropped_lines": result.dropped_lines,
        "rewritten_assistant_messages": result.rewritten_assistant_messages,
        "rewritten_user_messages": result.rewritten_user_messages,
        "salvaged_records": result.salvaged_records,
        "reason": result.reason,
        "summary": result.summary(),
        "changes": [{"line": c.line, "kind": c.kind, "reason": c.reason} for c in result.changes],
    }


def _repair_partition(
    urls: list[str], storage_options: dict[str, Any] | None, write: bool, fix_messages: bool
) -> Iterator[dict[str, Any]]:
    for url in urls:
        yield _repair_url(url, storage_options, write, fix_messages)


def repair_sessions(
    urlpath_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    storage_options: dict[str, Any] | None = None,
    write: bool = False,
    fix_messages: bool = False,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
) -> dask.bag.Bag:
    """A lazy ``dask.bag`` of repair reports (dicts), one per session, in listing order.

    Each object is read whole and repaired in memory with the same decision as
    :func:`clawctx.history.repair_session_file` (:func:`clawctx.history.repair_session_bytes`).
    By default nothing is written: ``repaired`` says whether the session needs repair and the
    report lists every line that would change (``changes``) and the repaired size.

    With ``write=True`` a session that needs repair is written back: a local file through
    ``repair_session_file`` (session lock, backup beside it, atomic replace); a remote object
    by first writing the original bytes to ``<object>.bak-<pid>-<ms>`` and reading that backup
    back, and only then replacing the object with the repaired bytes in one put. An object whose
    size or version marker (ETag, mtime, ...) changed since it was read is left alone
    (``reason`` says so). ``written`` and ``backup`` say what was done. Object stores have no
    lock: do not run this while agents append to the same objects.
    """
    bag, _ = _import_dask()
    groups = _partitions(_listing(urlpath_or_paths, storage_options, stores=False), partition_bytes)
    reports: dask.bag.Bag = bag.from_sequence(groups, partition_size=1).map_partitions(
        lambda parts: [
            report
            for urls in parts
            for report in _repair_partition(urls, storage_options, write, fix_messages)
        ]
    )
    return reports
