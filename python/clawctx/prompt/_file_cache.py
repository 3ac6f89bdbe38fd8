"""What was read from a workspace file, reused while the file is unchanged (issue 32, item 1).

An agent runtime prepares a request per turn, and each request lists the same workspace files
and skills. A file's entry is reused when its device, inode, size, modification and change times
are those it had when it was read; otherwise (and for any file not seen before) it is read
again. The change time (``st_ctime_ns``) is set by the kernel on every write, rename or
``utime``, so restoring a modification time by hand does not hide a change.

A file changed twice within the file system's timestamp tick (a few milliseconds on Linux) can
show the same times after both writes. As git does for its index ("racy git"), an entry is only
kept when the file's times are at least :data:`RACY_WINDOW_NS` older than the moment it was read:
a file written just before it was read is read again next time.

Layer: ``clawctx.prompt`` (private).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from typing import Final, Generic, TypeVar

__all__ = ["RACY_WINDOW_NS", "FileCache"]

T = TypeVar("T")

#: Times closer than this to the read are not trusted to show the next change (2 s).
RACY_WINDOW_NS: Final = 2_000_000_000

#: What identifies a file's content without reading it.
_Identity = tuple[int, int, int, int, int]


def _identity(info: os.stat_result) -> _Identity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class FileCache(Generic[T]):
    """Values read from files, keyed by the caller (a path and the read's limits), each kept
    with the identity of the file it came from. At most ``capacity`` entries, the least
    recently used dropped first. Safe to share between threads."""

    def __init__(self, capacity: int = 512) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[object, tuple[_Identity, T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: object, info: os.stat_result) -> T | None:
        """The value kept for ``key`` if the file (``info``, from ``fstat`` of the descriptor
        about to be read) is the one it was read from, else ``None``."""
        with self._lock:
            kept = self._entries.get(key)
            if kept is None or kept[0] != _identity(info):
                return None
            self._entries.move_to_end(key)
            return kept[1]

    def put(self, key: object, info: os.stat_result, value: T, *, read_at_ns: int) -> None:
        """Keeps ``value`` for ``key``, read from the file ``info`` describes at ``read_at_ns``
        (``time.time_ns()`` taken before the read), unless the file's times are too recent to
        show a later change."""
        newest = max(info.st_mtime_ns, info.st_ctime_ns)
        if newest > read_at_ns - RACY_WINDOW_NS:
            with self._lock:
                self._entries.pop(key, None)
            return
        with self._lock:
            self._entries[key] = (_identity(info), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forgets every entry."""
        with self._lock:
            self._entries.clear()


def now_ns() -> int:
    """The wall clock in nanoseconds (file times are wall-clock times)."""
    return time.time_ns()
