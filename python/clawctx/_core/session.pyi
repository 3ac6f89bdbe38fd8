"""Session files: open, append and branch, the leaf's context, repair, scans and heartbeat
transcripts (core stage ``session``).
"""

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, final

from typing_extensions import Self, disjoint_base

from .transcript import Transcript, _Clock, _JsonDict

__all__ = [
    "CURRENT_SESSION_VERSION",
    "HeartbeatMark",
    "HeartbeatPruneReport",
    "LeafContext",
    "LineChange",
    "RefreshReport",
    "RepairReport",
    "ScanStream",
    "Session",
    "SessionContext",
    "SessionSummary",
    "SkippedLine",
    "_read_leaf_context_lines",
    "build_session_context",
    "mark_heartbeat_transcript",
    "prune_heartbeat_transcript",
    "read_leaf_context",
    "repair_session_bytes",
    "repair_session_file",
    "scan_sessions",
    "scan_stream",
    "summarize_session_bytes",
    "summarize_session_lines",
]

CURRENT_SESSION_VERSION: int

_IdFactory = Callable[[], str] | None

@final
class SessionContext:
    """The context built for a leaf (`buildSessionContext`, pi-mono 0.58.3
    `packages/coding-agent/src/core/session-manager.ts`).
    """

    @property
    def messages(self) -> Transcript:
        """The messages on the path, as a `Transcript`."""
    @property
    def thinking_level(self) -> Any:
        """`"off"` unless a thinking_level_change on the path says otherwise."""
    @property
    def model(self) -> _JsonDict | None:
        """`{"provider": ..., "modelId": ...}` or `None`."""

@final
class SkippedLine:
    """A line the loader skipped or had to fix (`action`: skipped, salvaged, sanitized, ignored)."""

    @property
    def line(self) -> int:
        """The 1-based line number in the file."""
    @property
    def action(self) -> str:
        """`"skipped"`, `"salvaged"`, `"sanitized"` or `"ignored"`."""
    @property
    def reason(self) -> str:
        """What was wrong with the line, in words."""
    @property
    def records(self) -> int:
        """How many entries the line yielded (a salvaged line may hold several)."""

@disjoint_base
class Session:
    """A pi/OpenClaw session: header, entries, tree and leaf, bound to its JSONL file.

    Subclassable: `clawctx.Session` (`clawctx/history/session.py`) extends it with the parts
    that are Python compositions (`compact`), so the native module never imports the package.

    Safe to share between threads: every call takes an internal lock for its whole duration,
    so a read sees the state before or after a concurrent append, never a half-made one. The
    lock is only ever waited for with the GIL released (see `PySession::lock`): its holder may
    need the GIL (building dicts) to finish. The `now_ms` and `id_factory` callbacks are never
    called with the lock held (issue 33, N5): ids and times are drawn first, so a callback may
    take application locks or read any session, its own included.
    """

    def __new__(
        cls,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self:
        """`Session()` is `Session.in_memory()`: an empty session that lives only in memory. It
        exists so that `open`, `create` and `in_memory` can return instances of a subclass
        (see `instance_of`).
        """
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        on_invalid_header: Literal["error", "reset"] = "error",
        rewrite_migrated: bool = False,
        read_only: bool = False,
        fsync: bool = True,
        lock_timeout: float = 10.0,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
        session_id: str | None = None,
        cwd: str | None = None,
        lazy: bool = False,
    ) -> Self:
        """Opens a session file (`SessionManager.open`): damaged lines are salvaged or skipped
        (see `skipped_lines`), the header is checked, v1/v2 files are migrated to v3 in memory
        (the file is rewritten only with `rewrite_migrated=True` or `save_migrated()`).

        Raises `FileNotFoundError` for a missing file and `SessionFormatError` for a file with
        content but no valid header, unless `on_invalid_header="reset"`, which backs the file
        up and starts a fresh session in it as pi does. An empty file gets a new header,
        except with `read_only=True`, which never writes (an empty file is then a
        `SessionFormatError` and appends raise `ValueError`). `session_id` and `cwd` are used
        for a session started fresh (empty file or reset): by default a random UUID and the
        process's directory; `cwd` is also the session's `cwd` when the header has none.

        Runs without the GIL; files of 4 MB and more are read, validated and parsed on all
        cores (rayon's pool; `RAYON_NUM_THREADS=1` keeps it to one).

        `lazy=True` reads the file from its end only as far as the last entry's messages
        reach, and loads the rest when something asks for it (see `clawctx.Session` for what
        does).
        """
    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        cwd: str,
        session_id: str | None = None,
        parent_session: str | None = None,
        fsync: bool = True,
        lock_timeout: float = 10.0,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self:
        """Creates a new session file with a v3 header (written immediately). Fails with
        `FileExistsError` if the file exists and is not empty.
        """
    @classmethod
    def in_memory(
        cls,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self:
        """A session that lives only in memory (appends write nothing)."""
    @classmethod
    def _from_lines(
        cls,
        lines: list[bytes],
        name: str | os.PathLike[str],
        *,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self:
        """A read-only session parsed from `lines` (a list of `bytes`, one JSONL line each
        without its `"\\n"`) held in memory instead of read from a file, as `open(...,
        read_only=True)` parses a file of those lines: the lines are copied once into the
        buffer the entries borrow, with the GIL released. `name` labels errors; `path` is
        `None`. `refresh()` reads the lines handed over by `_push_lines` since, as a file
        session reads appended bytes (same `RefreshReport`). For OpenClaw stores
        (`clawctx.history.store.StoreSession`).
        """
    def _push_lines(self, lines: list[bytes]) -> None:
        """Hands `lines` (a list of `bytes`, one line each without its `"\\n"`) to a session made
        by `_from_lines`; the next `refresh()` reads them. `ValueError` for any other session.
        """
    @property
    def path(self) -> Path | None:
        """The file this session reads and appends to (`None` for in-memory sessions)."""
    @property
    def header(self) -> _JsonDict:
        """The header as a dict (after in-memory migration; unknown fields kept)."""
    @property
    def cwd(self) -> Any:
        """The session's working directory, as pi-mono 0.58.3 `session-manager.ts` (`getCwd`)
        gives it: the header's `cwd` unless it is missing or null, else the `cwd` given to
        `open`, else the process's working directory.
        """
    @property
    def version(self) -> int:
        """The header's version in memory (3 after migration)."""
    @property
    def file_version(self) -> int:
        """The version the file has on disk (1 when the header has none)."""
    @property
    def needs_migration(self) -> bool:
        """True when the file is an older version migrated in memory and not yet saved."""
    @property
    def session_id(self) -> str | None:
        """The header's `id` (the session id), or `None` when the header has none."""
    @property
    def leaf_id(self) -> str | None:
        """The current leaf's id (the last entry in file order after opening)."""
    @property
    def name(self) -> str | None:
        """The session name from the latest `session_info` entry with a name."""
    @property
    def labels(self) -> dict[str, Any]:
        """Resolved labels: `{target_id: label}`."""
    @property
    def skipped_lines(self) -> list[SkippedLine]:
        """Lines the loader could not take as they were."""
    @property
    def backup_path(self) -> Path | None:
        """The backup written by a reset or `save_migrated()`, if any."""
    def __len__(self) -> int: ...
    def entries(self) -> list[_JsonDict]:
        """Every entry (header excluded) as dicts, in file order."""
    def entry_types(self) -> list[str | None]:
        """The `type` of every entry in file order (no dicts built)."""
    def latest_custom_entry(
        self, custom_types: Sequence[str], *, numeric_data_key: str | None = None
    ) -> _JsonDict | None:
        """The newest `custom` entry whose `customType` is one of `custom_types` (and, with
        `numeric_data_key`, whose `data[numeric_data_key]` is a number), as a dict or `None`.
        Scans from the end without building other entries.
        """
    def get_entry(self, id: str) -> _JsonDict | None:
        """The entry with this id as a dict, or `None`."""
    def get_label(self, id: str) -> Any | None:
        """The label of an entry, or `None`."""
    def branch_path(self, leaf_id: str | None = None) -> list[_JsonDict]:
        """Entries from the root to `leaf_id` (default: the current leaf), as dicts."""
    def children(self, id: str) -> list[_JsonDict]:
        """The entries whose parent is `id`, in file order."""
    def tree(self) -> list[_JsonDict]:
        """The tree (pi's `getTree`): a list of root nodes `{"entry", "children", "label"}`,
        children sorted by timestamp. Built without recursion, so any depth works.
        """
    def context(self, leaf_id: str | None = None) -> SessionContext:
        """`buildSessionContext` for `leaf_id` (default: the current leaf; an unknown id falls
        back to the last entry, as in pi).
        """
    def context_messages(self, leaf_id: str | None = None) -> Transcript:
        """The messages of `context(leaf_id)`, without the thinking level and model: on a session
        opened with `lazy=True`, the file is read backwards only as far as the messages reach
        (a thinking level set at the start of a session would need all of it).
        """
    @property
    def is_lazy(self) -> bool:
        """Whether only the end of the file is held (opened with `lazy=True` and not loaded in
        full since).
        """
    @property
    def lazy_bytes_read(self) -> int | None:
        """Bytes read from the end of the file while lazy (`None` once loaded in full)."""
    def has_entries(self) -> bool:
        """Whether the session has any entry (`len(session) > 0`, without loading a lazy session:
        it holds at least its last entry).
        """
    def load_in_full(self) -> bool:
        """Loads a lazy session's file in full now (what any method that needs the past does by
        itself). Returns whether it was lazy.
        """
    def save_migrated(self) -> Path | None:
        """Writes the in-memory migration back to the file (atomically, after a backup). Returns
        the backup path, or `None` when the file needed no migration.
        """
    def refresh(self) -> RefreshReport:
        """Reads what was appended to the file since it was loaded: only the new bytes are read
        and parsed; the index and every message's cached token facts are kept; the leaf moves
        to the newest entry when entries arrived. A truncated, replaced or rewritten file is
        loaded again in full (`mode == "full"`, `reason` says why). Runs without the GIL.

        `now_ms` and `id_factory` are called with the session lock released: when a reloaded
        file needs migration, the ids it needs are counted under the lock, drawn after it, and
        the reload is made again with them; an exception from the factory leaves the session
        as it was.
        """
    def append_message(self, message: Mapping[str, Any]) -> str:
        """Appends a message (user, assistant, toolResult, bashExecution, custom, …)."""
    def append_messages(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        turn_key: str | None = None,
        since: str | None = None,
    ) -> list[str]:
        """Appends `messages` (pi messages: dicts with a `role`) as one turn and returns their
        new entry ids: each a child of the one before, the first a child of the leaf, the leaf
        moved to the last. All of them or none: every message is converted (a value JSON
        cannot hold, `nan` and `inf` included, raises before anything is written) and checked,
        every line built, then the lines go out in one locked write with one fsync; a failed
        write is cut back off the file and the session is unchanged.

        `turn_key` makes the turn idempotent: when a turn with that key is on the leaf's
        branch already (searched from the leaf back to the entry `since`, excluded, or to the
        root), nothing is written and its ids are returned. The key is stored on the turn's
        first entry (`"clawctxTurn": {"key", "part", "of"}`, an entry field pi ignores), so it
        is found again after a restart. Entries of a turn of two or more carry `part`/`of`: an
        open drops a turn that a crash (`kill -9` during the write) cut short.

        `now_ms` and `id_factory` are called before the session lock is taken (one id per
        message; an id found taken, empty or repeated is drawn again with the lock released).
        """
    def find_turn(self, turn_key: str, *, since: str | None = None) -> list[str] | None:
        """The ids of the turn appended with `turn_key` (see `append_messages`) when it is on the
        leaf's branch, searched from the leaf back to the entry `since` (excluded) or the
        root; otherwise `None`.
        """
    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Appends a `thinking_level_change` entry (`thinkingLevel`, e.g. "off", "low", "high");
        the context of a leaf after it reports that level.
        """
    def append_model_change(self, provider: str, model_id: str) -> str:
        """Appends a `model_change` entry (`provider`, `modelId`); the context of a leaf after it
        reports that model.
        """
    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any | None = None,
        from_hook: bool | None = None,
    ) -> str:
        """Appends a `compaction` entry: `summary` replaces the history before
        `first_kept_entry_id` in the context of every leaf below it. `tokens_before` (a
        number) is the context size it was made at; `details` (JSON-serializable) and
        `from_hook` are stored as given.
        """
    def append_custom_entry(self, custom_type: str, data: Any | None = None) -> str:
        """Appends a `custom` entry (`customType`, optional JSON-serializable `data`): extension
        state, never part of the LLM context.
        """
    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[_JsonDict],
        display: bool,
        details: Any | None = None,
    ) -> str:
        """Appends a `custom_message` entry: `content` (a str or a list of text/image blocks)
        enters the LLM context as a user message; `display` says whether a UI shows it;
        `details` (JSON-serializable) is stored as given.
        """
    def append_label(self, target_id: str, label: str | None = None) -> str:
        """Sets (or with `None`/`""` clears) the label of an existing entry."""
    def append_session_info(self, name: str) -> str:
        """Appends a `session_info` entry naming the session (`name`, see the `name` property)."""
    def branch(self, entry_id: str) -> None:
        """Moves the leaf to an existing entry; the next append branches from there."""
    def reset_leaf(self) -> None:
        """Sets the leaf to none: the next append starts a new root."""
    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any | None = None,
        from_hook: bool | None = None,
    ) -> str:
        """Moves the leaf to `branch_from_id` (`None`: before the first entry) and appends a
        `branch_summary` there (`fromId` = the id, or `"root"`).
        """

@final
class LeafContext:
    """The context of a session file's last entry, read from the end of the file as far as needed
    (see `read_leaf_context`).
    """

    @property
    def messages(self) -> Transcript:
        """The messages of the context (read when the file was opened)."""
    @property
    def thinking_level(self) -> Any:
        """The thinking level on the path (`"off"` without a change). Reads on towards the start
        of the file until the latest `thinking_level_change` on the path (possibly all of it).
        """
    @property
    def model(self) -> _JsonDict | None:
        """`{"provider": ..., "modelId": ...}` of the latest model change or assistant message on
        the path, or `None`. Reads on like `thinking_level` when needed.
        """
    def context(self) -> SessionContext:
        """The whole `SessionContext`, equal to `Session.open(path).context()`."""
    @property
    def bytes_read(self) -> int:
        """Bytes of the file read so far (all of it when `read_in_full`)."""
    @property
    def file_size(self) -> int:
        """The file's size when it was opened (later appends are not read)."""
    @property
    def read_in_full(self) -> bool:
        """Whether the file was loaded in full (a header to migrate or check) instead of read
        from its end.
        """

def _read_leaf_context_lines(
    header: bytes, source: Any, *, chunk_bytes: int = 262144
) -> LeafContext | None:
    """The backward read of `read_leaf_context` over lines handed over by `source` instead of
    read from a file (an OpenClaw store's rows read in descending `seq`,
    `SessionStore.read_leaf_context`). `header` is the session header's line; `source` has
    `older_lines(hint) -> bytes | None` (the complete lines just before those handed over, in
    file order, about `hint` bytes; `None` when none are left) and `damaged(line, reason)` (a
    line of the last chunk that is skipped or salvaged, 1-based in it; raise to stop; the
    exception is re-raised as it is). `None` when the header needs a full open. Reads without
    the GIL, taking it only to call `source`.
    """

def read_leaf_context(path: str | os.PathLike[str], *, chunk_bytes: int = 262144) -> LeafContext:
    """The context of the last entry of a session file, as `Session.open(path,
    read_only=True).context()` builds it, reading the file backwards from its end only as far
    as the messages need: back to the latest compaction's (or OpenClaw `reset`'s) first kept
    entry, or to the reset itself when it keeps nothing (the root when there is neither). On a
    long compacted session that is the last few MB of hundreds. `thinking_level` and `model`
    read on only when asked for.

    Files that need what only a full open does (migration of a v1/v2 file, a missing, invalid
    or damaged header) are opened in full (`read_in_full`); errors are those of
    `Session.open(path, read_only=True)`. Damaged lines in the part read are salvaged as a
    full open would; lines before it are not read, so they are neither salvaged nor reported
    (use `Session.open` or `repair_session_file` for that). `chunk_bytes`: the first read from
    the end (each further read doubles, up to 16 MiB). Runs without the GIL.
    """

@final
class LineChange:
    """One changed line of a repaired file (`kind`: dropped, rewritten or salvaged)."""

    @property
    def line(self) -> int:
        """The 1-based line number in the original file."""
    @property
    def kind(self) -> str:
        """`"dropped"`, `"rewritten"` or `"salvaged"`."""
    @property
    def reason(self) -> str:
        """Why the line changed, in words."""

@final
class RepairReport:
    """What `repair_session_file` did (OpenClaw's report plus the changed lines)."""

    @property
    def repaired(self) -> bool:
        """Whether the file was rewritten (OpenClaw 2026.3.13
        `src/agents/session-file-repair.ts`).
        """
    @property
    def dropped_lines(self) -> int:
        """Malformed lines dropped."""
    @property
    def rewritten_assistant_messages(self) -> int:
        """Assistant messages rewritten to a valid shape."""
    @property
    def dropped_blank_user_messages(self) -> int:
        """User messages with no content dropped."""
    @property
    def rewritten_user_messages(self) -> int:
        """User messages rewritten to a valid shape."""
    @property
    def salvaged_records(self) -> int:
        """Entries recovered from lines that held more than one record."""
    @property
    def backup_path(self) -> Path | None:
        """Where the original was copied before the rewrite, or `None`."""
    @property
    def reason(self) -> str | None:
        """Why the file was not repaired (missing, not a session, nothing to fix), or `None`."""
    @property
    def changes(self) -> list[LineChange]:
        """Every changed line, as `LineChange`s."""
    @property
    def dropped_line_numbers(self) -> list[int]:
        """Line numbers (1-based, in the original file) of lines removed entirely."""
    @property
    def rewritten_line_numbers(self) -> list[int]:
        """Line numbers of lines replaced by corrected or salvaged records."""
    def summary(self) -> str:
        """OpenClaw's log phrase, e.g. `"dropped 1 malformed line(s), rewrote 1 user
        message(s)"`.
        """

def build_session_context(
    entries: Iterable[Mapping[str, Any]], leaf_id: str | None, leaf_given: bool
) -> SessionContext:
    """`buildSessionContext` over plain entry dicts. `leaf_given=False` means "last entry";
    otherwise `leaf_id=None` means the empty context and an unknown id falls back to the last
    entry. (The Python facade turns an omitted argument into `leaf_given=False`.)
    """

def repair_session_file(
    path: str | os.PathLike[str],
    *,
    backup: Literal["keep", "delete"] = "keep",
    lock_timeout: float = 10.0,
    now_ms: _Clock = None,
    fix_messages: bool = False,
) -> RepairReport:
    """Repairs a session file in place if needed, as OpenClaw 2026.3.13
    `src/agents/session-file-repair.ts` (`repairSessionFileIfNeeded`) decides it: only when a
    non-blank line is not JSON and the first entry is a session header. The path is trimmed.
    Damaged lines are dropped, but records glued to a torn line or hidden behind NUL bytes, a
    BOM or invalid UTF-8 are recovered, and lines that need no change keep their exact bytes.
    `fix_messages=True` adds the later release's message fixes (fallback text for empty
    errored assistant turns, "(continue)" for blank user content, role-less messages dropped).
    The original is backed up (`backup="keep"`, the default, keeps the backup) and replaced
    atomically under the session lock. Like upstream, logs a warning on the `clawctx` logger
    when it repairs (`session file repaired: dropped N malformed line(s) (name)`) or skips a
    damaged file with an invalid header. Never raises for a missing, unreadable or header-less
    file: the report's `reason` says why nothing was done. Raises `RepairError` if the rewrite
    fails (the original is then untouched) and `SessionLockError` if the lock is not free in
    time.
    """

def repair_session_bytes(
    data: bytes, /, *, fix_messages: bool = False
) -> tuple[RepairReport, bytes | None]:
    """`repair_session_file`'s decision and rewrite on a session's bytes held in memory (an
    object read from a store): returns the report and the repaired bytes, or `None` when
    nothing needs repair (the report's `reason` says why when the input is empty or has no
    session header). Nothing is written anywhere and nothing is logged; `backup_path` is
    always `None`.
    """

# ---- heartbeat transcripts (OpenClaw heartbeat-runner.ts) ----

@final
class HeartbeatMark:
    """The size of a session file recorded (under its lock) before a heartbeat run."""

    @property
    def path(self) -> Path: ...
    @property
    def size(self) -> int:
        """The byte size before the run."""
    @property
    def at_line_boundary(self) -> bool:
        """Whether the size is at a line boundary (nothing is pruned otherwise)."""

@final
class HeartbeatPruneReport:
    """What `prune_heartbeat_transcript` did. `action`: `"truncated"`, `"rewritten"` or
    `"unchanged"` (then `reason` says why).
    """

    @property
    def action(self) -> str:
        """`"truncated"`, `"rewritten"` or `"unchanged"`."""
    @property
    def removed_lines(self) -> int:
        """Lines removed from the file."""
    @property
    def removed_bytes(self) -> int:
        """Bytes removed from the file."""
    @property
    def removed_ids(self) -> list[str]:
        """The ids of the entries removed."""
    @property
    def kept_lines(self) -> int:
        """Lines the file keeps."""
    @property
    def reason(self) -> str | None:
        """Why nothing was removed (when `action` is `"unchanged"`)."""
    @property
    def pruned(self) -> bool:
        """Whether lines were removed."""

def mark_heartbeat_transcript(
    path: str | os.PathLike[str], *, lock_timeout: float = 10.0
) -> HeartbeatMark:
    """Records the byte size of a session file under its exclusive lock (as OpenClaw 2026.3.13
    `src/infra/heartbeat-runner.ts` does before a heartbeat run). Raises `FileNotFoundError`
    for a missing file and `SessionLockError` on lock timeout.
    """

def prune_heartbeat_transcript(
    mark: HeartbeatMark,
    *,
    entries: Iterable[Mapping[str, Any]] | None = None,
    heartbeat_prompt: str | None = ...,
    transcript_prompt: bool = True,
    max_ack_chars: float | str | None = None,
    lock_timeout: float = 10.0,
    fsync: bool = True,
    now_ms: _Clock = None,
) -> HeartbeatPruneReport:
    """Removes the acknowledged heartbeat exchange written after `mark`, under the session lock
    (`pruneHeartbeatTranscript` of `src/infra/heartbeat-runner.ts`, safely against other
    writers). `entries`: the entries appended through the caller's session during the run
    (dicts with their `id`), which are then exactly what is removed; `None`: the exchange is
    found by content (heartbeat prompt … acknowledgement). Raises `SessionLockError` on lock
    timeout; unsafe situations leave the file untouched and report why.
    """

@final
class RefreshReport:
    """What `Session.refresh()` did (`mode`: "unchanged", "incremental" or "full")."""

    @property
    def mode(self) -> str: ...
    @property
    def appended_entries(self) -> int:
        """Entries added (after a full load: all of them)."""
    @property
    def bytes_read(self) -> int: ...
    @property
    def reason(self) -> str | None:
        """Why a full load was needed."""

@final
class SessionSummary:
    """One session file at a glance (see `scan_sessions`)."""

    fields: ClassVar[list[str]]
    @property
    def path(self) -> Path:
        """The file scanned."""
    @property
    def error(self) -> str | None:
        """`None` when the file is a usable session; otherwise why not."""
    @property
    def format(self) -> str | None:
        """`"pi"`, `"claude-code"` or `"codex"`; `None` when the file could not be read."""
    @property
    def size_bytes(self) -> int:
        """The file's size in bytes."""
    @property
    def session_id(self) -> str | None:
        """The header's session `id`."""
    @property
    def cwd(self) -> str | None:
        """The header's `cwd`."""
    @property
    def created(self) -> str | None:
        """The header's `timestamp` (when the session was created)."""
    @property
    def name(self) -> str | None:
        """The latest `session_info` name, if any."""
    @property
    def file_version(self) -> int:
        """The header's format `version` (pi-mono 0.58.3 `session-manager.ts`)."""
    @property
    def migration_needed(self) -> bool:
        """Whether `Session.open` would migrate the file to the current version."""
    @property
    def entries(self) -> int:
        """Entries in the file (the header excluded)."""
    @property
    def messages(self) -> int:
        """`message` entries in the file, on every branch."""
    @property
    def skipped_lines(self) -> int:
        """The same as `damaged_lines` (its name before the scan records grew)."""
    @property
    def damaged_lines(self) -> int:
        """Lines that are not a usable JSON entry (skipped when the session is read)."""
    @property
    def compactions(self) -> int:
        """`compaction` entries in the file."""
    @property
    def branches(self) -> int:
        """Entries with more than one child (where the tree branches)."""
    @property
    def leaf_id(self) -> str | None:
        """The id of the last entry, where the next one would be appended."""
    @property
    def model(self) -> str | None:
        """The last model on the leaf's path, as `provider/modelId`."""
    @property
    def last_activity(self) -> str | None:
        """The timestamp of the last entry."""
    @property
    def last_activity_ms(self) -> int | None:
        """`last_activity` in milliseconds since the Unix epoch, when it parses."""
    @property
    def context_messages(self) -> int:
        """Messages of the leaf's context (what the next request would send)."""
    @property
    def estimated_tokens(self) -> int:
        """pi's chars/4 estimate of the leaf context (split by role in the `*_tokens` fields)."""
    @property
    def user_tokens(self) -> int:
        """The user messages' share of `estimated_tokens`."""
    @property
    def assistant_tokens(self) -> int:
        """The assistant messages' share of `estimated_tokens`."""
    @property
    def tool_result_tokens(self) -> int:
        """The tool results' share of `estimated_tokens`."""
    @property
    def other_tokens(self) -> int:
        """Every other role's share of `estimated_tokens` (summaries, bash executions, custom
        messages).
        """
    @property
    def context_tokens(self) -> int:
        """pi's `estimateContextTokens`: the last recorded usage plus the estimate after it."""
    @property
    def tool_calls(self) -> int:
        """Tool calls (with an id) of the context's assistants."""
    @property
    def tool_results(self) -> int:
        """Tool results in the leaf's context."""
    @property
    def unpaired_tool_calls(self) -> int:
        """Calls pairing repair would answer with a synthetic result (OpenClaw 2026.3.13
        `src/agents/session-transcript-repair.ts`).
        """
    @property
    def unpaired_tool_results(self) -> int:
        """Tool results pairing repair would drop (orphans and duplicates)."""
    def to_dict(self) -> dict[str, Any]:
        """Every field as a plain dict (`path` as a string), in a fixed order."""

def scan_sessions(
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> list[SessionSummary]:
    """Opens (read-only), checks and summarizes many session files in parallel on `workers`
    threads (default: one per core) with the GIL released. Results are in input order; a file
    that cannot be read as a session gets a summary with `error` set. `progress(done, total)`
    is called on the calling thread as files finish; an exception it raises stops further
    calls and is raised once the scan is done.
    """

@final
class ScanStream:
    """A scan in progress (see `scan_stream`): an iterator of `SessionSummary`."""

    @property
    def total(self) -> int:
        """The number of files the scan reads."""
    def __iter__(self) -> ScanStream: ...
    def __next__(self) -> SessionSummary: ...

def scan_stream(
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    ordered: bool = True,
) -> ScanStream:
    """Summarizes session files on `workers` threads (default: one per core) and yields each
    `SessionSummary` as it is ready: in input order when `ordered`, else as files finish.
    Memory holds the sessions being read and a few summaries, whatever the number of files;
    waiting for the next summary releases the GIL. Dropping the iterator stops the scan after
    the files in flight.
    """

def summarize_session_lines(
    lines: list[bytes], name: str | os.PathLike[str] | None = None
) -> SessionSummary:
    """Summarizes a session from its lines (a list of `bytes`, one line each without its `"\\n"`),
    as `summarize_session_bytes` summarizes `b"\\n".join(lines) + b"\\n"` but without building
    that join in Python: the lines are copied once, into the buffer the reader parses, with
    the GIL released. `name` (default `"<bytes>"`) becomes the summary's `path`.
    """

def summarize_session_bytes(
    data: bytes, name: str | os.PathLike[str] | None = None
) -> SessionSummary:
    """Summarizes a session from its bytes (read from an object store or a file object), as
    `scan_sessions` does a file; `name` (default `"<bytes>"`) becomes the summary's `path`.
    """
