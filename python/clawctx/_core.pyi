"""Type stubs of the native module ``clawctx._core`` (checked with ``mypy.stubtest``)."""

import os
from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import Any, ClassVar, Literal, final, overload

from typing_extensions import Self, disjoint_base

__all__ = [
    "CURRENT_SESSION_VERSION",
    "_TOOL_CALL_TYPES",
    "ClawctxError",
    "CompactionPreparation",
    "CompactionSettings",
    "ContextTokens",
    "CutPoint",
    "HeartbeatMark",
    "HeartbeatPruneReport",
    "ImageBlockRef",
    "ImportedTranscript",
    "InternalError",
    "LeafContext",
    "LineChange",
    "NotASessionFileError",
    "PairingReport",
    "PruningSettings",
    "RefreshReport",
    "RepairError",
    "RepairReport",
    "ScanStream",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLockError",
    "SessionSummary",
    "SkippedLine",
    "StripResult",
    "SummaryRequest",
    "ToolCallInputsReport",
    "Transcript",
    "TranscriptPolicy",
    "Violation",
    "_CacheDiffChain",
    "_RequestPayload",
    "_ResponseReader",
    "__version__",
    "_budget_units",
    "_build_request_payload",
    "_cache_breakpoint_issues",
    "_cache_diff",
    "_compaction_texts",
    "_panic_for_tests",
    "_parse_response",
    "_read_leaf_context_lines",
    "_response_apis",
    "_token_feature_names",
    "_token_features",
    "_token_vocabulary",
    "_transform_messages",
    "annotate_inter_session_messages",
    "build_compaction_prompt",
    "build_session_context",
    "compaction_boundary",
    "compaction_send_view",
    "convert_to_llm",
    "count_message_tokens",
    "count_tokens",
    "decode_image_base64",
    "dedupe_tool_call_ids",
    "detect_transcript_format_bytes",
    "downgrade_openai_function_call_pairs",
    "downgrade_openai_reasoning",
    "drop_delivery_mirror_messages",
    "drop_duplicate_tool_results",
    "drop_foreign_compaction_blocks",
    "drop_thinking_blocks",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_pruning_chars",
    "estimate_string_chars",
    "estimate_tokens",
    "filter_heartbeat_pairs",
    "find_cut_point",
    "find_image_blocks",
    "guard_request",
    "history_limit_for_session_key",
    "image_tokens",
    "is_tool_prunable",
    "is_valid_tool_call_id",
    "limit_history_turns",
    "mark_heartbeat_transcript",
    "message_columns",
    "normalize_usage",
    "prepare_compaction",
    "probe_base64_image",
    "provider_family",
    "prune_context",
    "prune_heartbeat_transcript",
    "read_leaf_context",
    "read_transcript_bytes",
    "read_transcript_file",
    "repair_session_bytes",
    "repair_session_file",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "replace_content_blocks",
    "request_issues",
    "resolve_transcript_policy",
    "sanitize_google_turn_ordering",
    "sanitize_message_blocks",
    "sanitize_tool_call_id",
    "sanitize_tool_call_ids",
    "sanitize_tool_call_inputs",
    "sanitize_tool_use_result_pairing",
    "scan_sessions",
    "scan_stream",
    "serialize_conversation",
    "should_compact",
    "strip_dangling_tool_calls",
    "strip_heartbeat_token",
    "strip_thought_signatures",
    "strip_tool_result_details",
    "summarize_session_bytes",
    "usage_tokens",
    "validate_anthropic_turns",
    "validate_for_provider",
    "validate_gemini_turns",
    "zero_stale_usage",
]
__version__: str
CURRENT_SESSION_VERSION: int
#: The tool-call block types (``toolCall``, ``toolUse``, ``functionCall``), defined once in the
#: Rust core (``transcript::PAIRING_TOOL_CALL_TYPES``).
_TOOL_CALL_TYPES: frozenset[str]

_JsonDict = dict[str, Any]
_Clock = int | Callable[[], int] | None
_IdFactory = Callable[[], str] | None
# String options with a fixed set of values (the binding refuses others with ValueError).
_SanitizeMode = Literal["full", "images-only"]
_ToolCallIdMode = Literal["strict", "strict9"]

class ClawctxError(Exception):
    """Base class of every clawctx error."""

class SessionFormatError(ClawctxError):
    """The file is not a usable session file."""

    path: str
    line: int
    reason: str

class NotASessionFileError(SessionFormatError):
    """The path is a FIFO, device, directory or socket, not a regular file (refused unread)."""

class SessionLockError(ClawctxError):
    """The advisory lock on a session file could not be taken in time."""

class RepairError(ClawctxError):
    """Rewriting a damaged session file failed; the original is untouched."""

class InternalError(ClawctxError):
    """A bug in clawctx: a native call panicked; the message holds the panic's text.

    ``location`` (``file:line:column``) and ``backtrace`` hold what the panic hook recorded
    (nothing is printed to stderr); ``None`` when the panic was raised on another thread.
    """

    location: str | None
    backtrace: str | None

def _panic_for_tests(message: str) -> None:
    """Panics with `message`: the only way to check from Python that a panic reaches the caller
    as `InternalError` (nothing else in the API is meant to panic).
    """

@final
class Transcript(Sequence[_JsonDict]):
    """An ordered list of agent messages owned by Rust.

    Indexing and iteration give dicts, built on request. Messages read from a session file
    keep their exact bytes: `to_json()` of an unmodified transcript reproduces them.
    """

    def __new__(
        cls, messages: Iterable[Mapping[str, Any]] | Transcript | None = None
    ) -> Transcript: ...
    @staticmethod
    def from_list(messages: Iterable[Mapping[str, Any]] | Transcript) -> Transcript:
        """A transcript from a list of message dicts. Entries that are not dicts (None, numbers,
        strings) are kept as they are, as upstream's transcript repairs keep them.
        """
    @staticmethod
    def from_json(data: bytes | str) -> Transcript:
        """A transcript from a JSON array (bytes or str); each message keeps its exact text."""
    def to_json(self) -> bytes:
        """The JSON array as bytes."""
    def to_list(self) -> list[_JsonDict]:
        """Every message as a dict."""
    def roles(self) -> list[str | None]:
        """The `role` of every message (`None` where missing), without building message dicts."""
    def top_level_values(self, key: str) -> dict[int, Any]:
        """`{index: value}` of the top-level field `key` for the messages that have it, without
        building the other messages' dicts (e.g. `top_level_values("provenance")`).
        """
    def replace_messages(self, replacements: Mapping[int, Mapping[str, Any]]) -> Transcript:
        """A transcript with the messages at the given indices replaced (negative indices count
        from the end); every other message is shared with `self`, not copied or re-parsed.
        """
    def __add__(self, other: Transcript | Iterable[Mapping[str, Any]], /) -> Transcript:
        """The concatenation of this transcript and `other` (a Transcript or a list of message
        dicts); messages are shared, not copied.
        """
    def __radd__(self, other: Iterable[Mapping[str, Any]], /) -> Transcript:
        """`list_of_messages + transcript`: a transcript with `other`'s messages first."""
    def token_counts(self, *, cjk: bool = False) -> Any:
        """Per-message token estimates (pi's chars/4, `estimateTokens`; `cjk=True` for OpenClaw's
        CJK weighting) as a numpy `int64` array, without building per-message Python objects.
        """
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int, /) -> _JsonDict: ...
    @overload
    def __getitem__(self, key: slice, /) -> Transcript: ...
    def __iter__(self) -> Iterator[_JsonDict]: ...
    def __reversed__(self) -> Iterator[_JsonDict]:
        """The messages as dicts, last first."""
    def __contains__(self, value: object, /) -> bool:
        """`value in transcript`: whether a message equals (`==`) `value`."""
    def count(self, value: object) -> int:
        """The number of messages equal (`==`) to `value`."""
    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        """The index of the first message equal (`==`) to `value`, searching `[start:stop]` (as
        `list.index`: negative bounds count from the end); `ValueError` when there is none.
        """
    def __eq__(self, value: object, /) -> bool:
        """Equal to a `Transcript` with the same messages, and to a `list` of equal messages."""

_Messages = Transcript | Iterable[Mapping[str, Any]]

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

def convert_to_llm(messages: Transcript | Iterable[Mapping[str, Any]]) -> Transcript:
    """`convertToLlm` (pi-mono 0.58.3 `packages/coding-agent/src/core/messages.ts`):
    bashExecution, custom, branchSummary and compactionSummary messages become user messages
    with pi's exact texts; user, assistant and toolResult pass through byte for byte; unknown
    roles are dropped.
    """

def estimate_tokens(message: Mapping[str, Any], *, cjk: bool = False) -> int:
    """pi's `estimateTokens(message)` (compaction.ts): `ceil(chars / 4)` with per-role rules and
    JavaScript UTF-16 lengths; `cjk=True` weights CJK characters as OpenClaw's
    `estimateStringChars` does (later OpenClaw `src/utils/cjk-chars.ts`). Raises `ValueError`
    for a malformed message pi cannot estimate either (pi-mono 0.58.3 `compaction.ts` throws a
    TypeError there), e.g. an assistant `toolCall` block without `name` or a `text` block
    without `text`.
    """

def estimate_string_chars(text: str) -> int:
    """`estimateStringChars` (later OpenClaw `src/utils/cjk-chars.ts`, not in 2026.3.13):
    CJK-weighted length of a string.
    """

def estimate_messages_tokens(messages: _Messages) -> int:
    """OpenClaw's `estimateMessagesTokens` (`src/agents/compaction.ts`): pi's estimate after
    removing tool results' `details`.
    """

def estimate_context_tokens(messages: _Messages) -> ContextTokens:
    """`estimateContextTokens` (compaction.ts): the last usable assistant `usage` plus the
    chars/4 estimate of the messages after it.
    """

def usage_tokens(usage: Mapping[str, Any]) -> int:
    """`calculateContextTokens(usage)` (compaction.ts)."""

# ---- exact token counts and the calibrated estimator ----

_Encoding = Literal["o200k_base", "cl100k_base"]
_Estimator = Literal["exact", "calibrated"]

def count_tokens(
    text_or_messages: str | Mapping[str, Any] | _Messages,
    encoding: _Encoding = "o200k_base",
    *,
    estimator: _Estimator = "exact",
) -> int:
    """The token count of a text, of one message dict, or of a `Transcript` / list of message
    dicts (the sum over the messages; see `count_message_tokens` for what counts).

    `encoding`: `"o200k_base"` (GPT-4o, GPT-4.1, o-series) or `"cl100k_base"` (GPT-4,
    GPT-3.5). `estimator="exact"` gives tiktoken's `len(encode_ordinary(text))` (the
    vocabularies ship with clawctx; special-token strings count as plain text);
    `estimator="calibrated"` runs no byte-pair encoding: it weighs counts of the pieces the
    pre-tokenizer would cut (fitted on real pi transcripts and CJK text). On CPUs with AVX-512
    it is 22-50 times faster than exact counting on prose, code, JSON and CJK and 120-130
    times on base64; elsewhere 14-19 times on prose, code and JSON, 8 on CJK, 48 on base64.
    Exact counting itself runs 3.7-14 times as fast as tiktoken. The estimator's accuracy on
    held-out texts of 1,000-4,000 characters, against the exact o200k_base count: prose mean
    absolute error 1.9% (max 5.6%), code 1.6% (6.5%), JSON 1.8% (8.8%), CJK paragraphs 2.6%
    (6.5%), shell output 2.4% (7.1%); on texts of 200-1,000 characters 95-99% of estimates are
    within 10%. Guarantee on every kind of text (runs of newlines, spaces or punctuation, CJK,
    combining marks, emoji and ZWJ sequences, base64, hex, code, prose in any script,
    mixtures; tested from 1 character to 1 MB and on random Unicode): the estimate is 0.8-2
    times the exact count. Texts up to 1 KB are counted exactly; longer ones check the weighed
    counts against the exact count of 1 KB slices (one per 256 KB) and, where those differ by
    more than 15%, correct the estimate by the slices' error scaled to the text. Long texts
    are counted without the GIL and, from 1 MB, on all cores; time grows linearly with the
    length.
    """

def count_message_tokens(
    messages: _Messages,
    encoding: _Encoding = "o200k_base",
    *,
    estimator: _Estimator = "exact",
) -> Any:
    """The token count of each message of a `Transcript` or list of message dicts, as a numpy
    int64 array.

    What counts is the text the model reads, each string counted on its own (no per-message
    framing tokens): `content` as a string or its blocks — `text`, `thinking`, tool calls
    (`toolCall`, `toolUse`, `functionCall`: the name plus the arguments as compact JSON, like
    `JSON.stringify`), `image` — plus `command` and `output` of `bashExecution` and `summary`
    of branch and compaction summaries. Images are charged by their dimensions, read from the
    base64 header (PNG, JPEG, GIF, WebP) without decoding: 85 + 170 tokens per 512-px tile
    after fitting into 2048 x 2048 and scaling the shorter side down to 768 (`image_tokens`);
    an image whose size cannot be read costs 1,445 tokens, never its base64 length.
    """  # numpy.ndarray of int64, one count per message

def image_tokens(width: int, height: int) -> int:
    """The tokens an image of `width` * `height` pixels is charged (OpenAI's high-detail rule:
    fit into 2048 * 2048, shorter side scaled down to 768, 85 + 170 per 512-px tile).
    """

def _token_vocabulary(encoding: _Encoding) -> list[bytes]:
    """The byte sequence of every ordinary token of `encoding`, by rank (for building a tiktoken
    `Encoding` offline in the benchmarks).
    """

def _token_features(text: str, encoding: _Encoding = "o200k_base") -> list[int]:
    """The calibrated estimator's feature counts of `text` under `encoding` (for fitting its
    weights).
    """

def _token_feature_names() -> list[str]:
    """The names of the calibrated estimator's features, in `_token_features` order."""

def estimate_pruning_chars(message: Mapping[str, Any]) -> int:
    """The pruner's char estimate of one message (pruner.ts, `estimateMessageChars`)."""

def is_tool_prunable(tool_name: str, tools: Mapping[str, Any] | None = None) -> bool:
    """Whether a tool's results may be pruned under `tools = {"allow": [...], "deny": [...]}`
    (context-pruning/tools.ts: globs with `*`, case-insensitive, deny wins, empty allow allows
    all).
    """

def message_columns(messages: _Messages) -> dict[str, Any]:
    """Per-message statistics of a `Transcript` (or list of message dicts) as columns, without
    building a Python object per message: a dict of numpy arrays, one element per message.

    - `index` (int64), `role` and `tool_name` (lists of `str | None`; for an assistant the
      names of its tool calls joined with ","),
    - `text_chars`, `thinking_chars` (UTF-16 lengths), `estimated_tokens` (pi's chars/4
      estimate), `tool_calls` (an assistant's tool calls with an id): int64,
    - `has_image`, `is_error` (a tool result's `isError`, or an assistant stopped with
      "error"): bool,
    - `timestamp_ms` and the recorded usage of assistants, `usage_input`, `usage_output`,
      `usage_cache_read`, `usage_cache_write`, `usage_total`: float64, NaN where missing.
    """

def _budget_units(messages: _Messages) -> tuple[Any, Any]:
    """The units `fit_to_budget` selects from, as two numpy arrays: each unit's first message
    index (`int64`) and what it starts with (`int8`: 0 user side, 1 assistant, 2 tool result,
    3 system/developer, 4 other, 5 a user-side message of blank text, which no writer sends).
    An assistant message and the tool results right after it are one unit. No per-message
    Python objects are built.
    """

def repair_tool_call_inputs(
    messages: _Messages, *, allowed_tool_names: Sequence[str] | None = None
) -> ToolCallInputsReport:
    """`repairToolCallInputs` (session-transcript-repair.ts): drops tool-call blocks without
    input, id or a valid name (or not in `allowed_tool_names`), trims names, redacts
    `sessions_spawn` attachment content, and drops an assistant message left with no blocks.
    """

def sanitize_tool_call_inputs(
    messages: _Messages, *, allowed_tool_names: Sequence[str] | None = None
) -> Transcript:
    """`sanitizeToolCallInputs`: `repair_tool_call_inputs(...).messages`."""

def repair_tool_pairing(
    messages: _Messages,
    *,
    now_ms: _Clock = None,
    errored_assistant_result_policy: str | None = None,
    missing_tool_result_text: str | None = None,
) -> PairingReport:
    """`repairToolUseResultPairing` (session-transcript-repair.ts): moves each assistant's tool
    results right after it, in call order; drops duplicates (first wins) and orphans; inserts
    a synthetic error result for each call without one (`timestamp` from `now_ms`).
    `errored_assistant_result_policy`: `None` is OpenClaw 2026.3.13's behaviour (an errored or
    aborted turn is kept and its results are dropped as orphans); `"preserve"` and `"drop"`
    are 2026.5's options. `missing_tool_result_text` replaces the synthetic result's text.
    """

def sanitize_tool_use_result_pairing(
    messages: _Messages,
    *,
    now_ms: _Clock = None,
    errored_assistant_result_policy: str | None = None,
    missing_tool_result_text: str | None = None,
) -> Transcript:
    """`sanitizeToolUseResultPairing`: `repair_tool_pairing(...).messages`."""

def limit_history_turns(
    messages: _Messages, limit: float | None, *, keep_prelude: bool = False
) -> Transcript:
    """`limitHistoryTurns` (history.ts): keeps the last `limit` user turns (from the `limit`-th
    last user message on). `None`, 0 or a negative limit returns the input.
    `keep_prelude=True` keeps leading non-user/assistant messages (summaries) in front (as
    later OpenClaw does; 2026.3.13 drops them).
    """

def history_limit_for_session_key(
    session_key: str | None, config: Mapping[str, Any] | None
) -> Any | None:
    """`getHistoryLimitFromSessionKey` (history.ts) over OpenClaw's config dict (`{"channels":
    {...}}`); `None` when no limit applies.
    """

def prune_context(
    messages: _Messages,
    settings: PruningSettings | Mapping[str, Any],
    *,
    context_window_tokens: float | None,
) -> Transcript:
    """`pruneContextMessages` (context-pruning/pruner.ts, as in 2026.3.13): soft-trims and then
    hard-clears old tool results outside the protected regions until the context is under the
    configured ratios. Returns the input itself when nothing is pruned. The on-disk transcript
    is never touched.
    """

@final
class ToolCallInputsReport:
    """Result of `repair_tool_call_inputs`."""

    @property
    def messages(self) -> Transcript:
        """The repaired transcript."""
    @property
    def dropped_tool_calls(self) -> int:
        """Tool-call blocks dropped (no input, no id, or an invalid or disallowed name)."""
    @property
    def dropped_assistant_messages(self) -> int:
        """Assistant messages dropped because no block was left."""

@final
class PairingReport:
    """Result of `repair_tool_pairing`."""

    @property
    def messages(self) -> Transcript:
        """The repaired transcript."""
    @property
    def added(self) -> Transcript:
        """The synthetic results inserted (a `Transcript`)."""
    @property
    def dropped_duplicate_count(self) -> int:
        """Tool results dropped because an earlier result answered the same id."""
    @property
    def dropped_orphan_count(self) -> int:
        """Tool results dropped because no earlier call has their id."""
    @property
    def moved(self) -> bool:
        """Whether results were moved next to their calls."""

@final
class ContextTokens:
    """Result of `estimate_context_tokens`."""

    @property
    def tokens(self) -> int:
        """`usage_tokens + trailing_tokens`: the context's estimated size."""
    @property
    def usage_tokens(self) -> int:
        """The total tokens of the last usable assistant `usage`, or 0."""
    @property
    def trailing_tokens(self) -> int:
        """The chars/4 estimate of the messages after that assistant."""
    @property
    def last_usage_index(self) -> int | None:
        """The index of that assistant, or `None` when no usage was recorded."""

@final
class PruningSettings:
    """Effective context-pruning settings (`computeEffectiveSettings` of
    context-pruning/settings.ts).
    """

    @staticmethod
    def from_config(raw: Any) -> PruningSettings | None:
        """`computeEffectiveSettings(raw)`: `None` unless `raw` is a dict with `mode ==
        "cache-ttl"`; defaults, clamping and `ttl` parsing as OpenClaw does.
        """
    @staticmethod
    def from_dict(value: Mapping[str, Any]) -> PruningSettings:
        """Settings from the effective-settings dict (the shape `to_dict()` returns)."""
    def to_dict(self) -> _JsonDict:
        """The effective settings in OpenClaw's camelCase shape."""
    @property
    def ttl_ms(self) -> int: ...
    @property
    def keep_last_assistants(self) -> int: ...
    @property
    def soft_trim_ratio(self) -> float: ...
    @property
    def hard_clear_ratio(self) -> float: ...
    @property
    def min_prunable_tool_chars(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...

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

@final
class TranscriptPolicy:
    """What hygiene a provider needs (OpenClaw `src/agents/transcript-policy.ts`). Build one with
    `resolve_transcript_policy`, or directly with keyword arguments to override fields.
    """

    def __new__(
        cls,
        *,
        sanitize_mode: _SanitizeMode = "images-only",
        sanitize_tool_call_ids: bool = False,
        tool_call_id_mode: _ToolCallIdMode | None = None,
        repair_tool_use_result_pairing: bool = True,
        preserve_signatures: bool = False,
        sanitize_thought_signatures: Mapping[str, bool] | None = None,
        sanitize_thinking_signatures: bool = False,
        drop_thinking_blocks: bool = False,
        apply_google_turn_ordering: bool = False,
        validate_gemini_turns: bool = False,
        validate_anthropic_turns: bool = False,
        allow_synthetic_tool_results: bool = False,
    ) -> TranscriptPolicy: ...
    @property
    def sanitize_mode(self) -> _SanitizeMode:
        """How image and text blocks are sanitized: `"full"` or `"images-only"` (OpenClaw
        2026.3.13 `src/agents/transcript-policy.ts`, `sanitizeMode`).
        """
    @property
    def sanitize_tool_call_ids(self) -> bool:
        """Whether tool-call ids are rewritten to `tool_call_id_mode`."""
    @property
    def tool_call_id_mode(self) -> _ToolCallIdMode | None:
        """The id alphabet the provider accepts (`"strict"`, `"strict9"`), or `None`."""
    @property
    def repair_tool_use_result_pairing(self) -> bool:
        """Whether every tool call gets its result next to it (`repair_tool_pairing`)."""
    @property
    def preserve_signatures(self) -> bool:
        """Whether thinking-block signatures are kept as recorded."""
    @property
    def sanitize_thought_signatures(self) -> dict[str, bool] | None:
        """`{"allowBase64Only": ..., "includeCamelCase": ...}` when Gemini thought signatures are
        stripped (`strip_thought_signatures`), else `None`.
        """
    @property
    def sanitize_thinking_signatures(self) -> bool:
        """Whether thinking blocks with unusable signatures are dropped."""
    @property
    def drop_thinking_blocks(self) -> bool:
        """Whether thinking blocks are dropped from assistant messages (`drop_thinking_blocks`)."""
    @property
    def apply_google_turn_ordering(self) -> bool:
        """Whether a leading assistant turn gets a bootstrap user turn
        (`sanitize_google_turn_ordering`).
        """
    @property
    def validate_gemini_turns(self) -> bool:
        """Whether consecutive same-role turns are merged for Gemini (`validate_gemini_turns`)."""
    @property
    def validate_anthropic_turns(self) -> bool:
        """Whether turns are made valid for Anthropic (`validate_anthropic_turns`)."""
    @property
    def allow_synthetic_tool_results(self) -> bool:
        """Whether pairing repair may insert synthetic results for unanswered calls."""
    def to_dict(self) -> _JsonDict:
        """The policy in upstream's camelCase shape."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Violation:
    """One broken provider rule found by `validate_for_provider`."""

    @property
    def index(self) -> int:
        """Index of the offending message in the input transcript."""
    @property
    def rule(self) -> str:
        """Rule name: first-turn-not-user, call-without-result, result-without-call,
        duplicate-call-id, duplicate-result, invalid-call-id, result-without-id,
        function-call-first.
        """
    @property
    def detail(self) -> str: ...

def resolve_transcript_policy(
    *, provider: str | None = None, model_api: str | None = None, model_id: str | None = None
) -> TranscriptPolicy:
    """`resolveTranscriptPolicy` (OpenClaw `src/agents/transcript-policy.ts`)."""

def annotate_inter_session_messages(messages: _Messages) -> Transcript:
    """Marks inter-session user messages with `[Inter-session message] sourceSession=…` (OpenClaw
    `src/agents/pi-embedded-runner/google.ts`, `annotateInterSessionUserMessages`).
    """

def drop_delivery_mirror_messages(messages: _Messages) -> Transcript:
    """Drops delivery-mirror assistant messages (for Anthropic; later OpenClaw, not in
    2026.3.13).
    """

def sanitize_tool_call_ids(
    messages: _Messages, mode: _ToolCallIdMode = "strict", *, now_ms: _Clock = None
) -> Transcript:
    """`sanitizeToolCallIdsForCloudCodeAssist` (OpenClaw `src/agents/tool-call-id.ts`): rewrites
    tool-call ids (calls and results) to `strict` (alphanumeric, ≤ 40) or `strict9` (exactly 9
    alphanumerics), keeping them unique and paired.
    """

def dedupe_tool_call_ids(messages: _Messages, mode: _ToolCallIdMode | None = None) -> Transcript:
    """Makes tool-call ids unique across the transcript occurrence by occurrence (later repeats
    get fresh ids valid in `mode`; results follow first-in first-out), as OpenClaw 2026.5
    does.
    """

def sanitize_tool_call_id(id: str | None, mode: _ToolCallIdMode = "strict") -> str:
    """`sanitizeToolCallId` (OpenClaw `src/agents/tool-call-id.ts`) for one id."""

def is_valid_tool_call_id(id: str, mode: _ToolCallIdMode = "strict") -> bool:
    """Whether an id is valid in `mode` (OpenClaw `src/agents/tool-call-id.ts`,
    `isValidCloudCodeAssistToolId`).
    """

def strip_thought_signatures(
    messages: _Messages, *, allow_base64_only: bool = False, include_camel_case: bool = False
) -> Transcript:
    """`stripThoughtSignatures` (OpenClaw `src/agents/pi-embedded-helpers/bootstrap.ts`): strips
    thought signatures from assistant blocks (default: `thought_signature` values starting
    with `msg_`; `allow_base64_only`: every value that is not valid base64;
    `include_camel_case`: also `thoughtSignature`).
    """

def sanitize_message_blocks(
    messages: _Messages,
    *,
    sanitize_mode: _SanitizeMode = "images-only",
    preserve_signatures: bool = False,
    sanitize_thought_signatures: Mapping[str, bool] | None = None,
) -> Transcript:
    """The non-image rules of `sanitizeSessionMessagesImages` (OpenClaw
    `src/agents/pi-embedded-helpers/images.ts`): string tool-result content becomes `[]`,
    assistants lose thought signatures (and blank text in `full` mode).
    """

def drop_thinking_blocks(messages: _Messages) -> Transcript:
    """`dropThinkingBlocks` (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/thinking.ts`)."""

def strip_tool_result_details(messages: _Messages) -> Transcript:
    """`stripToolResultDetails`: removes `details` from tool results."""

def drop_duplicate_tool_results(messages: _Messages) -> Transcript:
    """Drops tool results whose id an earlier result already answered (first wins)."""

def drop_foreign_compaction_blocks(
    messages: _Messages, *, provider: str | None = None, model_api: str | None = None
) -> Transcript:
    """Drops or converts the provider `compaction` blocks another provider returned (see
    `compaction_send_view`): one with a readable summary (Anthropic's) becomes a
    `compactionSummary` message in front of its turn and the history before it is left out; an
    opaque one (a Responses item) is dropped. The target's own blocks stay where they are.
    """

def compaction_boundary(messages: _Messages) -> int | None:
    """The latest provider compaction boundary of `messages` (AgentMessages): the index of the
    last assistant message, not errored or aborted, holding a provider `compaction` block
    (stored by `parse_response`: an Anthropic compaction block, an OpenAI Responses compaction
    item) that carries context; `None` when there is none. Nothing before it needs to be sent.
    """

def compaction_send_view(
    messages: _Messages, *, provider: str | None = None, model_api: str | None = None
) -> Transcript:
    """The history a request to `provider` / `model_api` is built from, as the payload writers
    build it: it starts at the latest provider `compaction` block that target can use, sent
    first in its turn and verbatim to its own provider and API, as a `compactionSummary`
    message elsewhere when its summary is readable; every other compaction block is dropped.
    """

def zero_stale_usage(messages: _Messages) -> Transcript:
    """Zeroes assistant usage recorded before the latest compaction summary (OpenClaw
    `src/agents/pi-embedded-runner/google.ts`,
    `stripStaleAssistantUsageBeforeLatestCompaction`).
    """

def normalize_usage(messages: _Messages) -> Transcript:
    """Gives every assistant a normalized usage snapshot (OpenClaw
    `src/agents/pi-embedded-runner/google.ts`, `ensureAssistantUsageSnapshots`).
    """

def validate_gemini_turns(messages: _Messages) -> Transcript:
    """`validateGeminiTurns` (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`): merges
    consecutive assistant messages.
    """

def validate_anthropic_turns(messages: _Messages) -> Transcript:
    """`validateAnthropicTurns` (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`): strips
    dangling tool calls and merges consecutive user messages.
    """

def strip_dangling_tool_calls(messages: _Messages) -> Transcript:
    """Removes tool calls nothing answers (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`,
    `stripDanglingAnthropicToolUses`).
    """

def sanitize_google_turn_ordering(messages: _Messages, *, now_ms: _Clock = None) -> Transcript:
    """`sanitizeGoogleTurnOrdering` (OpenClaw `src/agents/pi-embedded-helpers/bootstrap.ts`):
    puts a `(session bootstrap)` user turn before a leading assistant.
    """

def downgrade_openai_reasoning(messages: _Messages) -> Transcript:
    """`downgradeOpenAIReasoningBlocks` (OpenClaw 2026.3.13
    `src/agents/pi-embedded-helpers/openai.ts`): drops reasoning-signed thinking blocks no
    output block follows.
    """

def downgrade_openai_function_call_pairs(messages: _Messages) -> Transcript:
    """`downgradeOpenAIFunctionCallReasoningPairs` (OpenClaw 2026.3.13
    `src/agents/pi-embedded-helpers/openai.ts`): `call_…|fc_…` tool-call ids without a
    preceding reasoning item keep only the call id, in the calls and their results.
    """

def validate_for_provider(
    messages: _Messages, *, provider: str | None = None, model_api: str | None = None
) -> list[Violation]:
    """Checks a transcript against the structural rules of a provider family (Anthropic, OpenAI
    Chat/Responses, Gemini), modelling replay as pi-ai sends it (errored and aborted assistant
    turns skipped, same-role messages combined into one turn). Returns the violations found;
    an empty list means the provider will accept the transcript's shape.

    Raises `ValueError` listing the known names for an unknown `model_api`, or for an unknown
    `provider` when no known `model_api` is given (any provider id is accepted with a known
    model API, so custom OpenAI-compatible providers work).
    """

def _cache_breakpoint_issues(
    messages: _Messages, *, tools_json: str | None = None, system_json: str | None = None
) -> list[Violation]:
    """Anthropic's prompt-cache breakpoint rules over a request's `tools` and `system` (JSON
    texts) and `messages`: at most 4 `cache_control` markers, and no `1h` marker after a `5m`
    one in prefix order (tools, system, messages). Rules: `too-many-cache-breakpoints`,
    `cache-ttl-order`, `invalid-cache-ttl`; `index` is the message holding the marker (0 for
    tools and system) and the detail starts with the marker's path.
    """

def provider_family(*, provider: str | None = None, model_api: str | None = None) -> str:
    """The provider family `validate_for_provider` applies: "anthropic", "openai", "gemini" or
    "other". Raises `ValueError` listing the known names for an unknown `model_api`, or for an
    unknown `provider` when no known `model_api` is given.
    """

def guard_request(
    messages: _Messages,
    *,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    followed_by_user: bool = False,
    now_ms: _Clock = None,
    verbatim_ids: bool = False,
) -> tuple[Transcript, list[tuple[str, int]]]:
    """`messages` as the provider accepts them, and what was changed as `(kind, count)` pairs
    (empty, with the input itself returned, when nothing needed changing). `provider`,
    `model_api` and `model_id` name the target (a turn of another model gets its tool-call ids
    normalised as pi-ai does); `followed_by_user` says a user message (the prompt) comes after
    these, so a last turn's unanswered calls are answered at send time. `now_ms` stamps the
    synthetic results. `verbatim_ids`: the writer sends ids as stored (no normalisation).
    """

def request_issues(
    messages: _Messages,
    *,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    followed_by_user: bool = False,
    verbatim_ids: bool = False,
) -> list[Violation]:
    """Why a request built from `messages` for the target would be rejected (the guard's check):
    an empty list when it is valid. Same target arguments as `guard_request`.
    """

@final
class ImageBlockRef:
    """An image block that `sanitizeSessionMessagesImages` sanitizes: where it is, its `data` and
    `mimeType`, and the per-result limit overrides of a tool result
    (`details.imageSanitization`).
    """

    @property
    def message_index(self) -> int: ...
    @property
    def block_index(self) -> int: ...
    @property
    def role(self) -> str:
        """`toolResult`, `user` or `assistant`."""
    @property
    def data(self) -> str:
        """The block's `data`, untrimmed."""
    @property
    def mime_type(self) -> str: ...
    @property
    def max_dimension_px(self) -> float | None:
        """`details.imageSanitization.maxDimensionPx` of a tool result, if a number."""
    @property
    def max_bytes(self) -> float | None:
        """`details.imageSanitization.maxBytes` of a tool result, if a number."""

def find_image_blocks(
    messages: _Messages,
    *,
    skip_within_limits: bool = False,
    max_dimension_px: float = 1200.0,
    max_bytes: float = 5242880.0,
    max_input_bytes: float = 67108864.0,
) -> list[ImageBlockRef]:
    """The image blocks (`type: "image"` with string `data` and `mimeType`) that
    `sanitizeSessionMessagesImages` (images.ts) hands to image sanitization: in tool results,
    user messages with array content, errored assistants and other assistants with array
    content. Messages without an image block are skipped from their cached facts; the scan
    runs without the GIL and builds Python objects for the found blocks only.

    With `skip_within_limits=True`, blocks that `resizeImageBase64IfNeeded` (tool-images.ts)
    keeps exactly as they are under the given limits (a tool result's overrides replace the
    first two) are left out: plain base64 with nothing to trim, the inferred mime type equal
    to the block's, and a PNG, GIF, JPEG or WebP header within `max_dimension_px` with a
    decoded size within `max_bytes` (and an estimated size within `max_input_bytes`).
    """

def probe_base64_image(data: str) -> tuple[int, int, int] | None:
    """`(width, height, decoded_size)` read from the header of a PNG, GIF, JPEG or WebP image
    given as plain base64 (alphabet characters, then at most two `=`), decoding only the
    header bytes; `None` for anything else.
    """

def decode_image_base64(data: str) -> bytes:
    """Decodes an image's base64 payload the way Node's `Buffer.from(data, "base64")` does
    (URL-safe characters accepted, other characters outside the alphabet skipped, decoding
    stops at the first `=`), without holding the GIL.
    """

def replace_content_blocks(
    messages: _Messages,
    replacements: Iterable[
        tuple[int, int, Mapping[str, Any]] | tuple[int, int, Mapping[str, Any], bool]
    ],
) -> Transcript:
    """A transcript with content blocks rewritten: each replacement `(message_index, block_index,
    block)` sets `content[block_index]` to `block`; `(message_index, block_index, fields,
    True)` sets those fields on the block object, keeping its other fields (`{...block,
    ...fields}`). Unchanged messages keep their exact text; edited ones are written like
    `JSON.stringify`. Returns the input `Transcript` itself when there is nothing to replace.
    Bad indices raise `ValueError`.
    """

# ---- heartbeat hygiene (OpenClaw heartbeat.ts: stripHeartbeatToken; heartbeat-runner.ts) ----

@final
class StripResult:
    """`stripHeartbeatToken`'s `{shouldSkip, text, didStrip}`. Also a 3-sequence: it unpacks as
    `should_skip, text, did_strip = result` and equals the tuple of its fields.
    """

    @property
    def should_skip(self) -> bool:
        """Deliver nothing: the reply was blank, only the token, or (heartbeat mode) the token
        with at most `max_ack_chars` of other text.
        """
    @property
    def text(self) -> str:
        """What remains to deliver (`""` when skipped)."""
    @property
    def did_strip(self) -> bool:
        """The token was found at an edge and removed."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> bool | str: ...
    def __iter__(self) -> Iterator[bool | str]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def strip_heartbeat_token(
    text: str | None,
    *,
    mode: Literal["heartbeat", "message"] = "message",
    max_ack_chars: float | str | None = None,
) -> StripResult:
    """`stripHeartbeatToken` (OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts`), exactly as
    OpenClaw does it.

    Blank text is a skip. Markup is normalized on a copy (HTML tags and `&nbsp;` become
    spaces, leading/trailing runs of `*`, `` ` ``, `~`, `_` go); without the token in either,
    the text is kept. The token is stripped repeatedly from the start, and from the end when
    at most 4 non-word UTF-16 units follow it (`"done HEARTBEAT_OK."` becomes `"done."`);
    whitespace is collapsed. The raw text's result wins when it stripped and left text (so
    `"**HEARTBEAT_OK**"` leaves `"****"` in message mode, as upstream). In `"heartbeat"` mode
    a remainder of at most `max_ack_chars` UTF-16 units is still a skip. `max_ack_chars` may
    be a numeric string (JavaScript `Number`); `None` or non-finite means 300, negative means
    0.
    """

def filter_heartbeat_pairs(
    messages: _Messages,
    *,
    heartbeat_prompt: str | None = ...,
    transcript_prompt: bool = True,
    max_ack_chars: float | str | None = None,
) -> Transcript:
    """`filterHeartbeatPairs` (later OpenClaw `src/auto-reply/heartbeat-filter.ts`, not in
    2026.3.13): removes each adjacent user heartbeat prompt + acknowledging assistant reply.
    Returns the input object itself when nothing is removed.
    """

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

# ---- compaction (pi-mono 0.58.3 compaction/compaction.ts: prepareCompaction, compact) -------

@final
class CompactionSettings:
    """pi's compaction settings (`DEFAULT_COMPACTION_SETTINGS` in pi-mono's
    `core/compaction/compaction.ts`): `enabled`, `reserve_tokens` (kept free for the answer;
    also the summary budget) and `keep_recent_tokens` (recent messages kept verbatim).
    `reserve_tokens_floor` raises `reserve_tokens` to at least that value, as OpenClaw does
    with its floor of 20000 (`CompactionSettings.DEFAULT_RESERVE_TOKENS_FLOOR`).
    """

    DEFAULT_RESERVE_TOKENS_FLOOR: ClassVar[int]
    def __new__(
        cls,
        enabled: bool = True,
        reserve_tokens: int = 16384,
        keep_recent_tokens: int = 20000,
        *,
        reserve_tokens_floor: int | None = None,
    ) -> CompactionSettings: ...
    @staticmethod
    def from_dict(value: Mapping[str, Any]) -> CompactionSettings:
        """Settings from pi's camelCase dict (`enabled`, `reserveTokens`, `keepRecentTokens`;
        missing keys take the defaults) or OpenClaw's `agents.defaults.compaction` (its
        `reserveTokensFloor` is applied; other keys are ignored).
        """
    def to_dict(self) -> _JsonDict:
        """The settings in pi's camelCase shape."""
    def with_reserve_floor(self, floor: int = 20000) -> CompactionSettings:
        """A copy with `reserve_tokens` raised to at least `floor` (OpenClaw's
        `ensurePiCompactionReserveTokens`).
        """
    @property
    def enabled(self) -> bool: ...
    @property
    def reserve_tokens(self) -> int: ...
    @property
    def keep_recent_tokens(self) -> int: ...
    @property
    def summary_max_tokens(self) -> int:
        """`max_tokens` of a history summary: `floor(0.8 * reserve_tokens)` (pi's
        `generateSummary`).
        """
    @property
    def turn_prefix_max_tokens(self) -> int:
        """`max_tokens` of a turn-prefix summary: `floor(0.5 * reserve_tokens)`."""
    def __eq__(self, value: object, /) -> bool: ...

_CompactionSettingsArg = CompactionSettings | Mapping[str, Any] | None

@final
class CutPoint:
    """Where `find_cut_point` cuts (pi's `CutPointResult`)."""

    @property
    def first_kept_entry_index(self) -> int:
        """Index of the first entry kept verbatim."""
    @property
    def turn_start_index(self) -> int:
        """Index of the entry that starts the split turn, or -1 when the turn is not split."""
    @property
    def is_split_turn(self) -> bool:
        """Whether the cut lands inside a turn (the cut entry is not a user message)."""

@final
class CompactionPreparation:
    """What `prepare_compaction` found (pi's `CompactionPreparation`). Indices are positions in
    the branch path (root → leaf) it was made for.
    """

    @property
    def messages_to_summarize(self) -> Transcript:
        """The messages summarized and dropped: those after the previous compaction and before
        the kept part (or before the split turn).
        """
    @property
    def turn_prefix_messages(self) -> Transcript:
        """The start of a split turn, summarized separately (empty when the turn is not split)."""
    @property
    def settings(self) -> CompactionSettings: ...
    @property
    def first_kept_entry_index(self) -> int: ...
    @property
    def turn_start_index(self) -> int:
        """-1 when the turn is not split."""
    @property
    def is_split_turn(self) -> bool: ...
    @property
    def first_kept_entry_id(self) -> str: ...
    @property
    def previous_summary(self) -> str | None:
        """The previous compaction's summary (merged by the update prompt)."""
    @property
    def previous_compaction_index(self) -> int | None:
        """Index of the previous compaction (or OpenClaw `reset`, the latest boundary) in the
        path.
        """
    @property
    def tokens_before(self) -> int:
        """`estimateContextTokens(...).tokens` from the previous compaction (or the root) on."""
    @property
    def read_files(self) -> list[str]:
        """Files only read (sorted), from the previous compaction and the summarized tool calls."""
    @property
    def modified_files(self) -> list[str]:
        """Files written or edited (sorted)."""
    @property
    def details(self) -> dict[str, list[str]]:
        """The compaction entry's `details`: `{"readFiles": [...], "modifiedFiles": [...]}`."""
    @property
    def leaf_id(self) -> str | None:
        """Id of the leaf the preparation was made for."""
    def summary_requests(self, custom_instructions: str | None = None) -> list[SummaryRequest]:
        """The summarization calls pi makes (`compact`): one `"history"` request, or for a split
        turn a `"history"` request (only when there is history) and a `"turn_prefix"` request.
        `custom_instructions` becomes the history prompt's "Additional focus".
        """
    def compose_summary(
        self, history_summary: str | None = None, turn_prefix_summary: str | None = None
    ) -> str:
        """The final summary (as pi's `compact` composes it) from the summarizer's texts: for a
        split turn `history_summary` (or "No prior history." when `None`), the split-turn
        separator and `turn_prefix_summary`; then the `<read-files>` / `<modified-files>`
        sections.
        """

@final
class SummaryRequest:
    """One summarization call for the caller's summarizer (pi's `generateSummary`): send `prompt`
    as a single user message with `system_prompt` and at most `max_tokens` of output (pi asks
    for reasoning effort "high" when the model supports it), and return the text of the answer
    (text blocks joined with "\\n", as pi does). `kind` is `"history"` or `"turn_prefix"`.
    """

    @property
    def kind(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def messages(self) -> Transcript:
        """The messages `prompt` serializes (a `Transcript`)."""
    @property
    def previous_summary(self) -> str | None:
        """The previous summary merged by a history request."""
    @property
    def custom_instructions(self) -> str | None:
        """The additional focus of a history request."""
    @property
    def preparation(self) -> CompactionPreparation: ...

def should_compact(
    context_tokens: float, context_window: float, settings: _CompactionSettingsArg = None
) -> bool:
    """`shouldCompact` (pi-mono compaction.ts): `settings.enabled` and `context_tokens >
    context_window - settings.reserve_tokens` (strictly greater).
    """

def find_cut_point(
    entries: Session | Iterable[Mapping[str, Any]],
    start_index: int,
    end_index: int,
    keep_recent_tokens: int,
) -> CutPoint:
    """`findCutPoint(entries, start_index, end_index, keep_recent_tokens)` (pi-mono
    compaction.ts, upstream quirks included): walking back from `end_index - 1`, sums pi's
    token estimate of `message` entries until it reaches `keep_recent_tokens`, cuts at the
    first valid cut point (never a tool result) at or after that entry (or at the first cut
    point when there is none or the budget is never reached), takes in the non-message entries
    right before it, and reports the turn start when the cut is not at a user message.

    `entries` is a list of entry dicts (header excluded) or a `Session`, whose entries are
    taken in file order (the indices of `Session.entries()`). A negative budget counts as 0.
    """

def prepare_compaction(
    session: Session | Iterable[Mapping[str, Any]], settings: _CompactionSettingsArg = None
) -> CompactionPreparation | None:
    """`prepareCompaction` (pi-mono compaction.ts) on a `Session`'s current branch (root → leaf),
    or on a list of path entry dicts. Returns `None` when there is nothing to do: the last
    entry is a compaction (or an OpenClaw `reset`), the path is empty, or the first kept entry
    has no id. A `reset` bounds the history as a compaction does, without a previous summary.
    """

def serialize_conversation(messages: _Messages) -> str:
    """`serializeConversation(convertToLlm(messages))` (pi-mono compaction/utils.ts): `[User]: `,
    `[Assistant thinking]: `, `[Assistant]: `, `[Assistant tool calls]: ` and `[Tool result]:
    ` parts joined by blank lines; tool results cut to 2000 characters. LLM messages pass the
    conversion unchanged, so both agent and LLM messages can be given.
    """

def build_compaction_prompt(
    messages_or_text: str | _Messages,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    *,
    kind: Literal["history", "turn_prefix"] = "history",
) -> str:
    """The summarization prompt (pi's `generateSummary`). `messages_or_text` is the conversation
    as messages (serialized with `serialize_conversation`) or as already serialized text.
    `kind="history"`: the conversation, the `previous_summary` if non-empty, and pi's initial
    or update instructions plus "Additional focus: " and `custom_instructions` if non-empty.
    `kind="turn_prefix"`: the conversation and the turn-prefix instructions (which take no
    previous summary or custom instructions).
    """

def _compaction_texts() -> dict[str, str]:
    """pi's exact compaction texts (compaction.ts, utils.ts) by constant name (private:
    `clawctx.compaction` exposes them as constants): `SUMMARIZATION_SYSTEM_PROMPT`,
    `SUMMARIZATION_PROMPT`, `UPDATE_SUMMARIZATION_PROMPT`, `TURN_PREFIX_SUMMARIZATION_PROMPT`,
    `NO_PRIOR_HISTORY` and `TURN_CONTEXT_SEPARATOR`.
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

def summarize_session_bytes(
    data: bytes, name: str | os.PathLike[str] | None = None
) -> SessionSummary:
    """Summarizes a session from its bytes (read from an object store or a file object), as
    `scan_sessions` does a file; `name` (default `"<bytes>"`) becomes the summary's `path`.
    """

# Foreign transcripts (public home: ``clawctx.history.foreign``).

@final
class ImportedTranscript:
    """A transcript imported from a file of any of the three formats, and the file's facts."""

    @property
    def format(self) -> Literal["pi", "claude-code", "codex"]:
        """`"pi"`, `"claude-code"` or `"codex"`."""
    @property
    def messages(self) -> Transcript:
        """The main thread as pi messages, a `Transcript`."""
    @property
    def lines(self) -> int:
        """Non-blank lines in the file."""
    @property
    def damaged_lines(self) -> int:
        """Non-blank lines that are not a JSON object (skipped), the torn last line included."""
    @property
    def torn_last_line(self) -> bool:
        """Whether the last line has no newline and is not a JSON object (a write cut short)."""
    @property
    def dropped_sidechain_lines(self) -> int:
        """Claude Code sub-agent lines (`isSidechain: true`), not part of the main thread."""
    @property
    def off_path_lines(self) -> int:
        """Claude Code main-thread lines not on the path from the leaf: abandoned branches
        (rewinds, edits) and what a compaction boundary cut off.
        """
    @property
    def compactions(self) -> int:
        """Compactions the file records (Claude `compact_boundary`/summary lines, Codex
        `compacted` lines).
        """
    @property
    def branches(self) -> int:
        """Claude Code entries with more than one child (a rewind or an edit started a branch)."""
    @property
    def model(self) -> str | None:
        """The last model that answered (Claude `message.model`, Codex `turn_context.model`)."""
    @property
    def first_timestamp(self) -> str | None:
        """The first line's timestamp, as the file writes it."""
    @property
    def last_timestamp(self) -> str | None:
        """The last line's timestamp, as the file writes it."""
    @property
    def session_id(self) -> str | None:
        """The session id the file records."""
    @property
    def cwd(self) -> str | None:
        """The working directory the file records."""
    @property
    def version(self) -> str | None:
        """The writing tool's version (Claude `version`, Codex `cli_version`)."""

def detect_transcript_format_bytes(data: bytes) -> Literal["pi", "claude-code", "codex"]:
    """The format of a transcript from its first records: `"pi"`, `"claude-code"` or `"codex"`.
    Bytes without a single complete record are Claude Code's (the only tool that leaves
    message-less files). Raises `ValueError` when no early record fits any format.
    """

def read_transcript_bytes(
    data: bytes, *, format: Literal["auto", "pi", "claude-code", "codex"] = "auto"
) -> ImportedTranscript:
    """Imports a transcript from its bytes; `format` is `"auto"` (detected), `"pi"`,
    `"claude-code"` or `"codex"`.
    """

def read_transcript_file(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> ImportedTranscript:
    """Imports the transcript file at `path` (read-only: the file is never written)."""

# Provider request payloads (public home: ``clawctx.wire``).

@final
class _RequestPayload:
    """A request body built in Rust."""

    @property
    def api(self) -> str: ...
    @property
    def guard_changes(self) -> list[tuple[str, int]]:
        """What the request guard changed in the messages, as ``(kind, count)`` pairs."""

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers the body needs (``anthropic-beta`` for context management)."""

    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> bytes: ...

def _build_request_payload(
    request_json: str,
    messages: Transcript | str,
    *,
    simple: bool = False,
    now_ms: int = 0,
    guard: bool = True,
    compact: bool = False,
) -> _RequestPayload:
    """The request body for `request["model"]["api"]`. `request_json` is the JSON text of
    `{model, systemPrompt?, tools?, options?}`; `messages` a `Transcript` or a JSON array
    text. `compact`: the body of OpenAI's `POST /responses/compact` instead (Responses APIs
    only).
    """

def _cache_diff(
    previous: bytes | _RequestPayload,
    next: bytes | _RequestPayload,
    encoding: _Encoding = "o200k_base",
    estimator: _Estimator = "calibrated",
) -> tuple[str, int, int, str, int] | None:
    """Where `next` stops extending `previous` as a provider's prompt cache sees it (tools,
    system prompt, then messages; cache markers skipped): `None` when it extends it, else
    `(path, previous_offset, next_offset, cause, rewrite_tokens)`. Bodies are JSON bytes or
    `RequestPayload`s; the walk runs without the GIL. Raises `ValueError` for a body that is
    not a JSON object.
    """

@final
class _CacheDiffChain:
    """`_cache_diff` of each body pushed with the one pushed before it, for the requests of a
    session in turn: the previous body's layout is kept, so each push reads structurally only
    what the new body does not repeat. One chain serves one thread at a time.
    """

    def __new__(
        cls, encoding: _Encoding = "o200k_base", estimator: _Estimator = "calibrated"
    ) -> _CacheDiffChain: ...
    def push(self, body: bytes | _RequestPayload) -> tuple[str, int, int, str, int] | None:
        """Where `body` stops extending the body pushed before it (`_cache_diff`'s tuple; `None`
        when it extends it or is the first), then keeps it for the next push. Raises
        `ValueError` for a body that is not a JSON object (the chain then starts over).
        """
    def reset(self) -> None:
        """Forgets the previous body: the next push is compared with nothing."""

def _parse_response(
    model_json: str,
    reply: bytes,
    now_ms: float,
    options_json: str | None = None,
    exact: bool = False,
    event_types: bool = True,
) -> tuple[dict[str, Any], list[str] | None]:
    """`(message, event_types)` for `reply` read as pi-ai reads `model["api"]`'s stream, with
    pi-ai's provider options (`options_json`, e.g. `{"serviceTier": "flex"}`) when given;
    `exact` reads a stream cut short as pi-ai does (as whole) instead of as failed;
    `event_types=False` leaves the types out (`None`). Raises `ValueError` (wrapped as
    `ResponseParseError` by `clawctx.wire.response`) for a reply pi-ai could not even start
    reading.
    """

def _response_apis() -> list[str]:
    """The model APIs whose replies `_parse_response` reads."""

@final
class _ResponseReader:
    """pi-ai reading one reply as it arrives (`clawctx.wire.ResponseStream` wraps it): each
    `feed_*` returns the events pi-ai pushed for what was fed, `partial()` the message so far,
    `finish()` the final message and every event type. Raises `ValueError` for a reply that
    cannot be read, after which the reader is closed.
    """
    def __new__(
        cls,
        model_json: str,
        now_ms: float,
        options_json: str | None = None,
        exact: bool = False,
    ) -> _ResponseReader: ...
    def feed_event(
        self, data: str, name: str | None = None
    ) -> list[tuple[str, int | None, str | None]]:
        """One wire event (the JSON text of an SSE `data:` line) with its SSE `event:` name."""
    def feed_sse(self, chunk: bytes) -> list[tuple[str, int | None, str | None]]:
        """A chunk of SSE bytes, cut anywhere."""
    def feed_body(self, body_json: str) -> list[tuple[str, int | None, str | None]]:
        """A whole non-streaming response body (JSON text)."""
    def partial(self) -> bytes:
        """The message so far, as JSON bytes."""
    def finish(
        self,
    ) -> tuple[bytes, list[tuple[str, int | None, str | None]], list[str]]:
        """The stream ended: `(message_json, last_events, event_types)`; the reader closes."""

def _transform_messages(
    model_json: str,
    messages_json: str,
    normalizer: str = "none",
    *,
    now_ms: int = 0,
    guard: bool = True,
) -> str:
    """pi-ai's `transformMessages` over a JSON array text of messages; returns the JSON text of
    the result. `normalizer` is `none`, `anthropic` or `bedrock`.
    """
