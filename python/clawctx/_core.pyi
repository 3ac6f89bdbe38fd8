"""Type stubs of the native module ``clawctx._core`` (checked with ``mypy.stubtest``)."""

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, final, overload

__all__ = [
    "CURRENT_SESSION_VERSION",
    "ClawctxError",
    "ContextTokens",
    "LineChange",
    "PairingReport",
    "PruningSettings",
    "RepairError",
    "RepairReport",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionLockError",
    "SkippedLine",
    "ToolCallInputsReport",
    "Transcript",
    "__version__",
    "build_session_context",
    "convert_to_llm",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_pruning_chars",
    "estimate_string_chars",
    "estimate_tokens",
    "history_limit_for_session_key",
    "is_tool_prunable",
    "limit_history_turns",
    "prune_context",
    "repair_session_file",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "sanitize_tool_call_inputs",
    "sanitize_tool_use_result_pairing",
    "usage_tokens",
]
__version__: str
CURRENT_SESSION_VERSION: int

_JsonDict = dict[str, Any]
_Clock = int | Callable[[], int] | None
_IdFactory = Callable[[], str] | None

class ClawctxError(Exception):
    """Base class of every clawctx error."""

class SessionFormatError(ClawctxError):
    """The file is not a usable session file."""

    path: str
    line: int
    reason: str

class SessionLockError(ClawctxError):
    """The advisory lock on a session file could not be taken in time."""

class RepairError(ClawctxError):
    """Rewriting a damaged session file failed; the original is untouched."""

@final
class Transcript(Sequence[_JsonDict]):
    """An ordered list of agent messages owned by Rust."""

    def __new__(
        cls, messages: Iterable[Mapping[str, Any]] | Transcript | None = None
    ) -> Transcript: ...
    @staticmethod
    def from_list(messages: Iterable[Mapping[str, Any]] | Transcript) -> Transcript: ...
    @staticmethod
    def from_json(data: bytes | str) -> Transcript: ...
    def to_json(self) -> bytes: ...
    def to_list(self) -> list[_JsonDict]: ...
    def roles(self) -> list[str | None]: ...
    def token_counts(self, *, cjk: bool = False) -> Any: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int, /) -> _JsonDict: ...
    @overload
    def __getitem__(self, key: slice, /) -> Transcript: ...
    def __iter__(self) -> Iterator[_JsonDict]: ...
    def __eq__(self, value: object, /) -> bool: ...

_Messages = Transcript | Iterable[Mapping[str, Any]]

@final
class SessionContext:
    """The context built for a leaf."""

    @property
    def messages(self) -> Transcript: ...
    @property
    def thinking_level(self) -> Any: ...
    @property
    def model(self) -> _JsonDict | None: ...

@final
class SkippedLine:
    """A line the loader skipped or had to fix."""

    @property
    def line(self) -> int: ...
    @property
    def action(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def records(self) -> int: ...

@final
class Session:
    """A pi/OpenClaw session bound to its JSONL file."""

    @staticmethod
    def open(
        path: str | os.PathLike[str],
        *,
        on_invalid_header: str = "error",
        rewrite_migrated: bool = False,
        read_only: bool = False,
        fsync: bool = True,
        lock_timeout: float = 10.0,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
        session_id: str | None = None,
        cwd: str | None = None,
    ) -> Session: ...
    @staticmethod
    def create(
        path: str | os.PathLike[str],
        *,
        cwd: str,
        session_id: str | None = None,
        parent_session: str | None = None,
        fsync: bool = True,
        lock_timeout: float = 10.0,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Session: ...
    @staticmethod
    def in_memory(
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Session: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def header(self) -> _JsonDict: ...
    @property
    def version(self) -> int: ...
    @property
    def file_version(self) -> int: ...
    @property
    def needs_migration(self) -> bool: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def leaf_id(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def labels(self) -> dict[str, Any]: ...
    @property
    def skipped_lines(self) -> list[SkippedLine]: ...
    @property
    def backup_path(self) -> Path | None: ...
    def __len__(self) -> int: ...
    def entries(self) -> list[_JsonDict]: ...
    def entry_types(self) -> list[str | None]: ...
    def latest_custom_entry(
        self, custom_types: Sequence[str], *, numeric_data_key: str | None = None
    ) -> _JsonDict | None: ...
    def get_entry(self, id: str) -> _JsonDict | None: ...
    def get_label(self, id: str) -> Any | None: ...
    def branch_path(self, leaf_id: str | None = None) -> list[_JsonDict]: ...
    def children(self, id: str) -> list[_JsonDict]: ...
    def tree(self) -> list[_JsonDict]: ...
    def context(self, leaf_id: str | None = None) -> SessionContext: ...
    def save_migrated(self) -> Path | None: ...
    def append_message(self, message: Mapping[str, Any]) -> str: ...
    def append_thinking_level_change(self, thinking_level: str) -> str: ...
    def append_model_change(self, provider: str, model_id: str) -> str: ...
    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any | None = None,
        from_hook: bool | None = None,
    ) -> str: ...
    def append_custom_entry(self, custom_type: str, data: Any | None = None) -> str: ...
    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[_JsonDict],
        display: bool,
        details: Any | None = None,
    ) -> str: ...
    def append_label(self, target_id: str, label: str | None = None) -> str: ...
    def append_session_info(self, name: str) -> str: ...
    def branch(self, entry_id: str) -> None: ...
    def reset_leaf(self) -> None: ...
    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any | None = None,
        from_hook: bool | None = None,
    ) -> str: ...

@final
class LineChange:
    """One changed line of a repaired file."""

    @property
    def line(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def reason(self) -> str: ...

@final
class RepairReport:
    """What repair_session_file did."""

    @property
    def repaired(self) -> bool: ...
    @property
    def dropped_lines(self) -> int: ...
    @property
    def rewritten_assistant_messages(self) -> int: ...
    @property
    def dropped_blank_user_messages(self) -> int: ...
    @property
    def rewritten_user_messages(self) -> int: ...
    @property
    def salvaged_records(self) -> int: ...
    @property
    def backup_path(self) -> Path | None: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def changes(self) -> list[LineChange]: ...
    @property
    def dropped_line_numbers(self) -> list[int]: ...
    @property
    def rewritten_line_numbers(self) -> list[int]: ...
    def summary(self) -> str: ...

def build_session_context(
    entries: Iterable[Mapping[str, Any]], leaf_id: str | None, leaf_given: bool
) -> SessionContext: ...
def convert_to_llm(messages: Transcript | Iterable[Mapping[str, Any]]) -> Transcript: ...
def estimate_tokens(message: Mapping[str, Any], *, cjk: bool = False) -> int: ...
def estimate_string_chars(text: str) -> int: ...
def estimate_messages_tokens(messages: _Messages) -> int: ...
def estimate_context_tokens(messages: _Messages) -> ContextTokens: ...
def usage_tokens(usage: Mapping[str, Any]) -> int: ...
def estimate_pruning_chars(message: Mapping[str, Any]) -> int: ...
def is_tool_prunable(tool_name: str, tools: Mapping[str, Any] | None = None) -> bool: ...
def repair_tool_call_inputs(
    messages: _Messages, *, allowed_tool_names: Sequence[str] | None = None
) -> ToolCallInputsReport: ...
def sanitize_tool_call_inputs(
    messages: _Messages, *, allowed_tool_names: Sequence[str] | None = None
) -> Transcript: ...
def repair_tool_pairing(
    messages: _Messages,
    *,
    now_ms: _Clock = None,
    errored_assistant_result_policy: str | None = None,
    missing_tool_result_text: str | None = None,
) -> PairingReport: ...
def sanitize_tool_use_result_pairing(
    messages: _Messages,
    *,
    now_ms: _Clock = None,
    errored_assistant_result_policy: str | None = None,
    missing_tool_result_text: str | None = None,
) -> Transcript: ...
def limit_history_turns(
    messages: _Messages, limit: float | None, *, keep_prelude: bool = False
) -> Transcript: ...
def history_limit_for_session_key(
    session_key: str | None, config: Mapping[str, Any] | None
) -> Any | None: ...
def prune_context(
    messages: _Messages,
    settings: PruningSettings | Mapping[str, Any],
    *,
    context_window_tokens: float | None,
) -> Transcript: ...

@final
class ToolCallInputsReport:
    """What repair_tool_call_inputs did."""

    @property
    def messages(self) -> Transcript: ...
    @property
    def dropped_tool_calls(self) -> int: ...
    @property
    def dropped_assistant_messages(self) -> int: ...

@final
class PairingReport:
    """What repair_tool_pairing did."""

    @property
    def messages(self) -> Transcript: ...
    @property
    def added(self) -> Transcript: ...
    @property
    def dropped_duplicate_count(self) -> int: ...
    @property
    def dropped_orphan_count(self) -> int: ...
    @property
    def moved(self) -> bool: ...

@final
class ContextTokens:
    """estimate_context_tokens result."""

    @property
    def tokens(self) -> int: ...
    @property
    def usage_tokens(self) -> int: ...
    @property
    def trailing_tokens(self) -> int: ...
    @property
    def last_usage_index(self) -> int | None: ...

@final
class PruningSettings:
    """Effective context-pruning settings."""

    @staticmethod
    def from_config(raw: Any) -> PruningSettings | None: ...
    @staticmethod
    def from_dict(value: Mapping[str, Any]) -> PruningSettings: ...
    def to_dict(self) -> _JsonDict: ...
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
    backup: str = "keep",
    lock_timeout: float = 10.0,
    now_ms: _Clock = None,
) -> RepairReport: ...
