"""Many session files at once: find them, summarize them in parallel, tabulate the summaries.

``iter_sessions`` yields one ``SessionSummary`` per file as the Rust scan finishes it (files are
read on ``jobs`` threads with the GIL released; memory holds the sessions being read and a few
summaries, however many files there are). ``scan_table`` collects the same records into a
``pyarrow.Table`` (the ``arrow`` extra: ``pip install "clawctx[arrow]"``). ``session_paths``
expands the arguments both take: globs, directories (walked for ``*.jsonl``) and plain paths.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from clawctx import _core
from clawctx._core import SessionSummary

if TYPE_CHECKING:
    import pyarrow

PathsOrGlobs = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

_GLOB_CHARS = frozenset("*?[")


def session_paths(paths_or_globs: PathsOrGlobs) -> list[Path]:
    """The session files named by ``paths_or_globs``, in order and without repeats.

    A string with ``*``, ``?`` or ``[`` that names no existing file is a glob (``**`` matches
    any depth), its matches sorted. A directory is walked recursively for ``*.jsonl`` files,
    sorted by path. Anything else is taken as a session file as it is, so a missing file, or a
    FIFO, device or directory named ``*.jsonl``, becomes a record with its ``error`` instead of
    silently disappearing.
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
        return sorted(p for p in path.rglob("*.jsonl") if not p.is_dir())
    return [path]


def iter_sessions(
    paths_or_globs: PathsOrGlobs,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], object] | None = None,
    ordered: bool = True,
) -> Iterator[SessionSummary]:
    """Summarizes every session file ``paths_or_globs`` names (see ``session_paths``) on
    ``jobs`` threads (default: one per core) and yields each ``SessionSummary`` when it is
    ready: in the order of ``session_paths`` when ``ordered`` (the default), else as files
    finish. A file that cannot be read as a session yields a record with ``error`` set.
    ``progress(done, total)`` is called after each record. Stopping early (``break``) stops
    the scan after the files being read.
    """
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    paths = session_paths(paths_or_globs)
    stream = _core.scan_stream(paths, workers=jobs, ordered=ordered)
    total = stream.total
    for done, record in enumerate(stream, 1):
        if progress is not None:
            progress(done, total)
        yield record


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


def records_table(records: Iterable[SessionSummary]) -> pyarrow.Table:
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


__all__ = ["iter_sessions", "records_table", "scan_table", "session_paths"]
