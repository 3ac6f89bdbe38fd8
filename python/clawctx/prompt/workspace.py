"""Workspace bootstrap files and their Project Context budget (OpenClaw
2026.3.13 `src/agents/workspace.ts`, ``loadWorkspaceBootstrapFiles``, and
`src/agents/pi-embedded-helpers/bootstrap.ts`, ``buildBootstrapContextFiles``).

:func:`load_workspace_bootstrap_files` reads the fixed set of user-editable files from an agent
workspace (upstream ``loadWorkspaceBootstrapFiles``); :func:`build_bootstrap_context_files`
turns them into the :class:`~clawctx.prompt.system_prompt.ContextFile` entries of the prompt's
``# Project Context`` section under per-file and total character budgets (upstream
``buildBootstrapContextFiles``), truncating oversized files with :func:`trim_bootstrap_content`.

Character counts are JS string lengths, i.e. UTF-16 code units: a character outside the Basic
Multilingual Plane (most emoji) counts 2. Cuts never split such a character: when a budget
boundary falls inside one, the whole character is left out (upstream's ``clampToBudget`` does
the same; its head/tail slicing may split one, leaving half a pair that serialises as U+FFFD).
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from clawctx._js import JS_WHITESPACE as _JS_WHITESPACE
from clawctx.prompt._file_cache import FileCache, now_ns
from clawctx.prompt.prompt_images import _open_inside_root as open_inside_root
from clawctx.prompt.system_prompt import ContextFile

__all__ = [
    "DEFAULT_BOOTSTRAP_MAX_CHARS",
    "DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS",
    "MAX_BOOTSTRAP_FILE_BYTES",
    "MAX_BOOTSTRAP_SCAN_BYTES",
    "MEMORY_BOOTSTRAP_FILE_NAMES",
    "MIN_BOOTSTRAP_FILE_BUDGET_CHARS",
    "SUBAGENT_BOOTSTRAP_ALLOWLIST",
    "WORKSPACE_BOOTSTRAP_FILE_NAMES",
    "TrimmedBootstrapContent",
    "WorkspaceBootstrapFile",
    "build_bootstrap_context_files",
    "load_workspace_bootstrap_files",
    "trim_bootstrap_content",
    "utf16_length",
]

#: workspace.ts, loadWorkspaceBootstrapFiles: always listed (missing ones flagged), in this order.
WORKSPACE_BOOTSTRAP_FILE_NAMES: Final[tuple[str, ...]] = (
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
)
#: loadWorkspaceBootstrapFiles: listed after the others only when present, deduplicated by real
#: path.
MEMORY_BOOTSTRAP_FILE_NAMES: Final[tuple[str, ...]] = ("MEMORY.md", "memory.md")
#: workspace.ts, SUBAGENT_BOOTSTRAP_ALLOWLIST: the only files a sub-agent session gets.
SUBAGENT_BOOTSTRAP_ALLOWLIST: Final[frozenset[str]] = frozenset({"AGENTS.md", "TOOLS.md"})

#: bootstrap.ts, resolveBootstrapMaxChars: per-file budget (config
#: ``agents.defaults.bootstrapMaxChars``).
DEFAULT_BOOTSTRAP_MAX_CHARS: Final = 20_000
#: bootstrap.ts, resolveBootstrapTotalMaxChars: budget for all files together (config
#: ``agents.defaults.bootstrapTotalMaxChars``).
DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS: Final = 150_000
#: bootstrap.ts, buildBootstrapContextFiles: a file with content is only started when at least this
#: much budget remains.
MIN_BOOTSTRAP_FILE_BUDGET_CHARS: Final = 64
#: Files larger than this are never held in memory whole (see load_workspace_bootstrap_files).
MAX_BOOTSTRAP_FILE_BYTES: Final = 2 * 1024 * 1024
#: Files larger than this are not read through to count their exact length (see
#: load_workspace_bootstrap_files).
MAX_BOOTSTRAP_SCAN_BYTES: Final = 32 * 1024 * 1024

_HEAD_RATIO: Final = 0.7
_TAIL_RATIO: Final = 0.2
_READ_CHUNK_BYTES: Final = 1024 * 1024
_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


# ---------------------------------------------------------------------------------------------
# UTF-16 lengths and cuts
# ---------------------------------------------------------------------------------------------


def _astral_count(text: str) -> int:
    """How many characters of ``text`` lie beyond the BMP (two UTF-16 units each). Counted by
    encoding, in C: a regex scan cost 70 us per 10 KB, and every workspace file is measured on
    every request."""
    if text.isascii():
        return 0
    return len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)


def utf16_length(text: str) -> int:
    """The JS ``length`` of ``text``: UTF-16 code units (astral characters count 2)."""
    return len(text) + _astral_count(text)


class _Utf16View:
    """Maps UTF-16 offsets of a string to code-point indexes, never inside a surrogate pair."""

    __slots__ = ("astral", "text", "units")

    def __init__(self, text: str) -> None:
        self.text = text
        self.astral = (
            [match.start() for match in _ASTRAL.finditer(text)] if _astral_count(text) else []
        )
        self.units = len(text) + len(self.astral)

    def _offset(self, index: int) -> int:
        # UTF-16 offset of code point `index`: one extra unit per astral character before it.
        return index + bisect_left(self.astral, index)

    def head(self, units: int) -> str:
        """The longest prefix of at most ``units`` code units."""
        if units <= 0:
            return ""
        if not self.astral:
            return self.text[:units]
        low, high = 0, len(self.text)
        while low < high:  # largest index whose offset fits
            middle = (low + high + 1) // 2
            if self._offset(middle) <= units:
                low = middle
            else:
                high = middle - 1
        return self.text[:low]

    def tail(self, units: int) -> str:
        """The longest suffix of at most ``units`` code units."""
        if units <= 0:
            return ""
        if not self.astral:
            return self.text[-units:] if units < len(self.text) else self.text
        low, high = 0, len(self.text)
        while low < high:  # smallest index whose suffix fits
            middle = (low + high) // 2
            if self.units - self._offset(middle) <= units:
                high = middle
            else:
                low = middle + 1
        return self.text[low:]


def _clamp_to_budget(content: str, budget: int) -> str:
    """``clampToBudget`` (bootstrap.ts): ``""`` when no budget is left; a hard cut up to 3 units;
    else budget-1 units followed by ``…``."""
    if budget <= 0:
        return ""
    view = _Utf16View(content)
    if view.units <= budget:
        return content
    if budget <= 3:
        return view.head(budget)
    return f"{view.head(budget - 1)}…"


# ---------------------------------------------------------------------------------------------
# Loading (workspace.ts)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkspaceBootstrapFile:
    """One bootstrap file of a workspace (``loadWorkspaceBootstrapFiles``).

    ``name`` is the file name (``AGENTS.md``), ``path`` its full path; ``missing`` files have
    ``content`` None. ``content_length`` is set only for a file too large to hold whole: then
    ``content`` is its head followed directly by its tail (the middle was never kept) and
    ``content_length`` is the UTF-16 length of the whole right-trimmed text, which the
    truncation marker reports.
    """

    name: str
    path: str
    content: str | None
    missing: bool
    content_length: int | None = None


_DIR_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _open_regular_file(directory_fd: int, name: str, roots: tuple[str, str]) -> int | None:
    """An open descriptor of the regular file ``name`` in the workspace, or None when it must
    count as missing: absent, gone or replaced while opening, a symlink leaving the workspace,
    not a regular file. Opened relative to the workspace's descriptor without letting the kernel
    follow a symlink (run/images.ts hardening shared with prompt images)."""
    try:
        fd = open_inside_root(directory_fd, [name], roots)
    except (OSError, ValueError):
        return None
    if fd is None:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _pread_exactly(fd: int, size: int, offset: int) -> bytes:
    """Up to ``size`` bytes from ``offset`` (fewer only at end of file)."""
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.pread(fd, min(size, _READ_CHUNK_BYTES), offset)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _decode_head(data: bytes) -> str:
    """``data`` decoded, an incomplete sequence at its end left out."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data)


def _decode_tail(raw_tail: bytes) -> str:
    """``raw_tail`` decoded from its first character boundary (UTF-8 continuation bytes at its
    start skipped)."""
    skip = 0
    while skip < min(3, len(raw_tail)) and 0x80 <= raw_tail[skip] <= 0xBF:
        skip += 1
    return raw_tail[skip:].decode("utf-8", errors="replace")


def _scanned_length(fd: int, size: int) -> int:
    """The UTF-16 length of the right-trimmed text of the first ``size`` bytes, read in chunks."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    units = content_end = 0
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(_READ_CHUNK_BYTES, size - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        text = decoder.decode(chunk)
        stripped = text.rstrip(_JS_WHITESPACE)
        if stripped:
            content_end = units + utf16_length(stripped)
        units += utf16_length(text)
    text = decoder.decode(b"", final=True)
    stripped = text.rstrip(_JS_WHITESPACE)
    if stripped:
        content_end = units + utf16_length(stripped)
    return content_end


def _read_sampled(fd: int, size: int, window_bytes: int, max_scan_bytes: int) -> tuple[str, int]:
    """Head and tail text of a large file plus the UTF-16 length of its right-trimmed text.

    Reads the first and last ``window_bytes`` (``pread``). The length is exact (one more chunked
    pass) when the file is at most ``max_scan_bytes`` long, else estimated from the windows'
    UTF-16 units per byte (exact for ASCII text).
    """
    raw_head = _pread_exactly(fd, window_bytes, 0)
    raw_tail = _pread_exactly(fd, window_bytes, max(0, size - window_bytes))
    head = _decode_head(raw_head)
    tail_text = _decode_tail(raw_tail)
    tail = tail_text.rstrip(_JS_WHITESPACE)
    if size <= max_scan_bytes:
        length = _scanned_length(fd, size)
    else:
        sampled_bytes = len(raw_head) + len(raw_tail)
        sampled_units = utf16_length(head) + utf16_length(tail_text)
        estimate = round(size * sampled_units / sampled_bytes) if sampled_bytes else size
        length = max(0, estimate - (utf16_length(tail_text) - utf16_length(tail)))
    # A file ending in more than a window of whitespace keeps only its head.
    return (head + tail if tail else head.rstrip(_JS_WHITESPACE)), length


#: Bootstrap files read in this process, reused while unchanged (``_file_cache``).
_BOOTSTRAP_FILES: FileCache[WorkspaceBootstrapFile] = FileCache()


def _read_bootstrap_file(
    name: str,
    path: str,
    fd: int | None,
    max_file_bytes: int,
    max_scan_bytes: int,
) -> WorkspaceBootstrapFile:
    """Reads the open file ``fd`` (and closes it); None or a read error gives a missing file.
    A file read before and unchanged since (same device, inode, size and times) is not read
    again: the earlier result is returned."""
    if fd is None:
        return WorkspaceBootstrapFile(name=name, path=path, content=None, missing=True)
    try:
        info = os.fstat(fd)
        key = (path, max_file_bytes, max_scan_bytes)
        kept = _BOOTSTRAP_FILES.get(key, info)
        if kept is not None:
            return kept
        read_at = now_ns()
        read = _read_open_file(name, path, fd, info.st_size, max_file_bytes, max_scan_bytes)
        _BOOTSTRAP_FILES.put(key, info, read, read_at_ns=read_at)
        return read
    except OSError:
        return WorkspaceBootstrapFile(name=name, path=path, content=None, missing=True)
    finally:
        os.close(fd)


def _read_open_file(
    name: str, path: str, fd: int, size: int, max_file_bytes: int, max_scan_bytes: int
) -> WorkspaceBootstrapFile:
    """The file's content: whole up to ``max_file_bytes``, else head and tail windows."""
    if size <= max_file_bytes:
        data = _pread_exactly(fd, max_file_bytes + 1, 0)  # +1: a file that grew is seen
        if len(data) <= max_file_bytes:
            content = data.decode("utf-8", errors="replace")
            return WorkspaceBootstrapFile(name=name, path=path, content=content, missing=False)
        size = max(size, len(data))
    content, length = _read_sampled(fd, size, max_file_bytes // 2, max_scan_bytes)
    return WorkspaceBootstrapFile(
        name=name, path=path, content=content, missing=False, content_length=length
    )


def load_workspace_bootstrap_files(
    workspace_dir: str | os.PathLike[str],
    *,
    subagent: bool = False,
    max_file_bytes: int = MAX_BOOTSTRAP_FILE_BYTES,
    max_scan_bytes: int = MAX_BOOTSTRAP_SCAN_BYTES,
) -> list[WorkspaceBootstrapFile]:
    """The bootstrap files of a workspace, in prompt order (``loadWorkspaceBootstrapFiles``,
    ``filterBootstrapFilesForSession``).

    The seven files of :data:`WORKSPACE_BOOTSTRAP_FILE_NAMES` are always listed (``missing``
    when unreadable), then ``MEMORY.md`` and/or ``memory.md`` when they exist, the second
    dropped when both resolve to the same real path. ``subagent=True`` keeps only
    :data:`SUBAGENT_BOOTSTRAP_ALLOWLIST` (``filterBootstrapFilesForSession``). ``~`` in
    ``workspace_dir`` is expanded and the path made absolute. Files are decoded as UTF-8 with
    invalid bytes replaced by U+FFFD.

    Hardening beyond upstream: each file is opened relative to a descriptor of the workspace
    without letting the kernel follow a symlink; a symlink is followed by clawctx itself only
    while its target stays inside the workspace (at most 40 links). A file that is absent, a
    symlink leaving the workspace, not a regular file (a directory, FIFO, device), or that
    disappears or is replaced while it is being opened or read is treated as missing (the
    ``[MISSING]`` entry of :func:`build_bootstrap_context_files`), never an exception. The two
    memory files are deduplicated by identity (device and inode) of the opened file.

    Reading is bounded by the size ``fstat`` reports: a file of at most ``max_file_bytes``
    (default 2 MiB, over 30 times the default per-file budget) is read whole, at most
    ``max_file_bytes + 1`` bytes (one more shows a file that grew meanwhile). A larger file is
    never held whole: only its first and last ``max_file_bytes // 2`` bytes are read and kept,
    head directly followed by tail, as ``content``; ``content_length`` is the UTF-16 length of
    the whole right-trimmed text, counted exactly in one more chunked pass when the file is at
    most ``max_scan_bytes`` (default 32 MiB) long, else estimated from the windows' UTF-16
    units per byte (exact for ASCII text), so a huge (e.g. sparse) file costs
    ``max_file_bytes`` of reading, not its size. :func:`build_bootstrap_context_files` then
    truncates it as if it had been read whole, provided the per-file budget's head (70 %) and
    tail (20 %) fit in those windows (a budget up to about 349 000 characters with the default
    limit) and the file does not end in more than a window of whitespace; the marker's length
    is then exact up to ``max_scan_bytes``.

    A file read before in this process and unchanged since (the same device, inode, size,
    modification and change times) is not read again; its earlier result is returned, so the
    next request of a runtime opens and ``fstat``s the files but reads none it has read. A file
    written within two seconds before it was read is read again next time (the file system's
    timestamps may not show a second write within the same tick).
    """
    if max_file_bytes < 2:
        raise ValueError("max_file_bytes must be at least 2")
    if max_scan_bytes < 0:
        raise ValueError("max_scan_bytes must not be negative")
    directory = os.path.abspath(os.path.expanduser(os.fspath(workspace_dir)))
    names = [
        name
        for name in WORKSPACE_BOOTSTRAP_FILE_NAMES
        if not subagent or name in SUBAGENT_BOOTSTRAP_ALLOWLIST
    ]
    try:
        directory_real = os.path.realpath(directory, strict=True)
        directory_fd: int | None = os.open(directory_real, _DIR_OPEN_FLAGS)
    except (OSError, ValueError):
        directory_real, directory_fd = directory, None
    roots = (directory_real, directory)

    def opened(name: str) -> int | None:
        return None if directory_fd is None else _open_regular_file(directory_fd, name, roots)

    def read(name: str, fd: int | None) -> WorkspaceBootstrapFile:
        path = os.path.join(directory, name)
        return _read_bootstrap_file(name, path, fd, max_file_bytes, max_scan_bytes)

    try:
        files = [read(name, opened(name)) for name in names]
        seen: set[tuple[int, int]] = set()
        for name in MEMORY_BOOTSTRAP_FILE_NAMES:
            if subagent and name not in SUBAGENT_BOOTSTRAP_ALLOWLIST:
                continue
            # Listed only when present (loadWorkspaceBootstrapFiles); a dangling link is absent.
            if not os.path.exists(os.path.join(directory, name)):
                continue
            fd = opened(name)
            if fd is not None:
                try:
                    info = os.fstat(fd)
                except OSError:
                    os.close(fd)
                    fd = None
                else:
                    if (info.st_dev, info.st_ino) in seen:
                        os.close(fd)
                        continue
                    seen.add((info.st_dev, info.st_ino))
            files.append(read(name, fd))
    finally:
        if directory_fd is not None:
            os.close(directory_fd)
    return files


# ---------------------------------------------------------------------------------------------
# Budgets (pi-embedded-helpers/bootstrap.ts)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrimmedBootstrapContent:
    """Result of :func:`trim_bootstrap_content`.

    ``original_length`` is the UTF-16 length of the right-trimmed input. ``kept_head`` /
    ``kept_tail`` are the counts the marker reports; untruncated content reports
    ``kept_head == original_length`` and ``kept_tail == 0``.
    """

    content: str
    truncated: bool
    original_length: int
    kept_head: int
    kept_tail: int
    max_chars: int


def trim_bootstrap_content(
    content: str,
    file_name: str,
    max_chars: int,
    *,
    original_length: int | None = None,
) -> TrimmedBootstrapContent:
    """Head + marker + tail truncation of one bootstrap file (bootstrap.ts,
    ``trimBootstrapContent``).

    The content is right-trimmed; if it fits in ``max_chars`` it is returned as is. Otherwise
    the result is the first ``floor(max_chars * 0.7)`` and the last ``floor(max_chars * 0.2)``
    UTF-16 units around the marker::

        <head>\\n\\n[...truncated, read <FILE> for full content...]
        …(truncated <FILE>: kept <head>+<tail> chars of <length>)…\\n\\n<tail>

    ``…`` is U+2026. A tail of 0 units is empty (upstream's ``slice(-0)`` would keep the whole
    text; that only happens with ``max_chars`` below 5). ``original_length`` is for sampled
    content (see :class:`WorkspaceBootstrapFile`): the length of the full text it stands for.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    trimmed = content.rstrip(_JS_WHITESPACE)
    view = _Utf16View(trimmed)
    length = view.units if original_length is None else original_length
    if length <= max_chars:
        return TrimmedBootstrapContent(trimmed, False, length, length, 0, max_chars)
    head_chars = int(max_chars * _HEAD_RATIO)
    tail_chars = int(max_chars * _TAIL_RATIO)
    marker = "\n".join(
        (
            "",
            f"[...truncated, read {file_name} for full content...]",
            f"…(truncated {file_name}: kept {head_chars}+{tail_chars} chars of {length})…",
            "",
        )
    )
    result = "\n".join((view.head(head_chars), marker, view.tail(tail_chars)))
    return TrimmedBootstrapContent(result, True, length, head_chars, tail_chars, max_chars)


def build_bootstrap_context_files(
    files: Sequence[WorkspaceBootstrapFile],
    *,
    max_chars: int = DEFAULT_BOOTSTRAP_MAX_CHARS,
    total_max_chars: int | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[ContextFile]:
    """The Project Context entries for bootstrap files under budgets
    (``buildBootstrapContextFiles``).

    Walking the files in order with a remaining total budget (``total_max_chars``, default
    ``max(max_chars, 150 000)``, at least 1):

    * a file without a path is skipped (with a warning);
    * a missing file contributes ``[MISSING] Expected at: <path>`` clamped to the remaining
      budget (stop when nothing fits);
    * before a file with content, stop (with a warning) when less than 64 units remain;
    * otherwise the content is truncated to ``min(max_chars, remaining)``
      (``trimBootstrapContent``), clamped to the remaining budget (``clampToBudget``) and skipped
      when empty; a truncation or clamp warns ``workspace bootstrap file <name> is <length> chars
      (limit <max>); truncating in injected context``.

    Entries carry the trimmed path. The two skip warnings follow upstream's wording (not pinned
    by the spec).
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    total = max(max_chars, DEFAULT_BOOTSTRAP_TOTAL_MAX_CHARS)
    remaining = max(1, int(total if total_max_chars is None else total_max_chars))
    result: list[ContextFile] = []
    for file in files:
        if remaining <= 0:
            break
        path = (file.path or "").strip(_JS_WHITESPACE)
        if not path:
            if warn is not None:
                warn(
                    f'skipping bootstrap file "{file.name}" — missing or invalid "path" field '
                    '(hook may have used "filePath" instead)'
                )
            continue
        if file.missing:
            missing_text = _clamp_to_budget(f"[MISSING] Expected at: {path}", remaining)
            if not missing_text:
                break
            remaining = max(0, remaining - utf16_length(missing_text))
            result.append(ContextFile(path=path, content=missing_text))
            continue
        if remaining < MIN_BOOTSTRAP_FILE_BUDGET_CHARS:
            if warn is not None:
                warn(
                    f"remaining bootstrap budget is {remaining} chars "
                    f"(<{MIN_BOOTSTRAP_FILE_BUDGET_CHARS}); skipping additional bootstrap files"
                )
            break
        file_max = max(1, min(max_chars, remaining))
        trimmed = trim_bootstrap_content(
            file.content or "", file.name, file_max, original_length=file.content_length
        )
        within_budget = _clamp_to_budget(trimmed.content, remaining)
        if not within_budget:
            continue
        if (trimmed.truncated or within_budget != trimmed.content) and warn is not None:
            warn(
                f"workspace bootstrap file {file.name} is {trimmed.original_length} chars "
                f"(limit {trimmed.max_chars}); truncating in injected context"
            )
        remaining = max(0, remaining - utf16_length(within_budget))
        result.append(ContextFile(path=path, content=within_budget))
    return result
