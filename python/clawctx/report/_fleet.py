"""The numbers of a fleet report: one scan record per session file, as arrays."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from clawctx.history.scan import iter_sessions, session_paths

#: File names a directory walk picks up: pi/OpenClaw sessions are ``*.jsonl``.
SESSION_SUFFIX = ".jsonl"


def find_session_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The session files under ``paths``: files as given, directories walked recursively for
    ``*.jsonl`` and ``openclaw-agent.sqlite`` stores as ``clawctx.history.session_paths`` walks
    them (hidden directories included), each file once, in a stable order.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # The walk of `clawctx scan` and `clawctx.dask`: every *.jsonl below, hidden
            # directories included, so the three count the same folder the same way.
            candidates = session_paths(path)
        elif path.exists():
            candidates = [path]
        else:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        for candidate in candidates:
            if candidate not in seen:
                seen.add(candidate)
                found.append(candidate)
    return found


@dataclass(frozen=True)
class FleetSession:
    """One row of a fleet table."""

    path: Path
    size_bytes: int
    entries: int
    messages: int
    estimated_tokens: int
    damaged_lines: int


@dataclass(frozen=True)
class FleetStats:
    """Everything a fleet report shows, gathered by :func:`fleet_stats`.

    The arrays hold one value per readable session, in the order of :attr:`paths`.
    """

    #: What was scanned (the arguments, for the page title).
    roots: Sequence[str]
    paths: Sequence[Path]
    sizes: npt.NDArray[np.int64]
    entries: npt.NDArray[np.int64]
    messages: npt.NDArray[np.int64]
    tokens: npt.NDArray[np.int64]
    damaged_lines: npt.NDArray[np.int64]
    #: Files that could not be read as sessions: (path, reason).
    errors: Sequence[tuple[Path, str]]
    top: int

    @property
    def sessions(self) -> int:
        return len(self.paths)

    @property
    def damaged_sessions(self) -> int:
        return int(np.count_nonzero(self.damaged_lines))

    def _row(self, i: int) -> FleetSession:
        return FleetSession(
            path=self.paths[i],
            size_bytes=int(self.sizes[i]),
            entries=int(self.entries[i]),
            messages=int(self.messages[i]),
            estimated_tokens=int(self.tokens[i]),
            damaged_lines=int(self.damaged_lines[i]),
        )

    def _largest(self, values: npt.NDArray[np.int64], *, nonzero: bool = False) -> list[int]:
        index = np.arange(len(values))
        if nonzero:
            index = index[values > 0]
        # Largest first; equal values in path order.
        order = np.lexsort((index, -values[index]))
        return [int(i) for i in index[order][: self.top]]

    def largest_by_tokens(self) -> list[FleetSession]:
        return [self._row(i) for i in self._largest(self.tokens)]

    def largest_by_size(self) -> list[FleetSession]:
        return [self._row(i) for i in self._largest(self.sizes)]

    def most_damaged(self) -> list[FleetSession]:
        return [self._row(i) for i in self._largest(self.damaged_lines, nonzero=True)]


def _reason(path: object, error: str) -> str:
    """The scan's error without the path in front (the table names the file)."""
    prefix = f"{path}: "
    return error[len(prefix) :] if error.startswith(prefix) else error


def fleet_stats(
    paths: Sequence[str | os.PathLike[str]],
    *,
    top: int = 20,
    workers: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> FleetStats:
    """Scans every session file under ``paths`` (see :func:`find_session_files`) in parallel,
    read-only, and gathers the numbers of the fleet page. Unreadable files are listed, not
    raised."""
    if top <= 0:
        raise ValueError(f"top must be positive, got {top}")
    files = find_session_files(paths)
    # iter_sessions: the Rust scan of the JSONL files plus one record per window of each
    # OpenClaw SQLite store (`STORE#SESSION_ID`).
    summaries = list(iter_sessions(files, jobs=workers, progress=progress))
    good = [s for s in summaries if s.error is None]
    errors = [
        (Path(s.path), _reason(s.path, str(s.error))) for s in summaries if s.error is not None
    ]

    def column(name: str) -> npt.NDArray[np.int64]:
        return np.fromiter((getattr(s, name) for s in good), dtype=np.int64, count=len(good))

    return FleetStats(
        roots=[str(p) for p in paths],
        paths=[Path(s.path) for s in good],
        sizes=column("size_bytes"),
        entries=column("entries"),
        messages=column("messages"),
        tokens=column("estimated_tokens"),
        damaged_lines=column("skipped_lines"),
        errors=errors,
        top=top,
    )
