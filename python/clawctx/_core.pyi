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
    "_RequestPayload",
    "__version__",
    "_budget_units",
    "_build_request_payload",
    "_compaction_texts",
    "_panic_for_tests",
    "_parse_response",
    "_token_feature_names",
    "_token_features",
    "_token_vocabulary",
    "_transform_messages",
    "annotate_inter_session_messages",
    "build_compaction_prompt",
    "build_session_context",
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
    """Panics with ``message`` (checks that a panic reaches Python as ``InternalError``)."""

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
    def top_level_values(self, key: str) -> dict[int, Any]: ...
    def replace_messages(self, replacements: Mapping[int, Mapping[str, Any]]) -> Transcript: ...
    def __add__(self, other: Transcript | Iterable[Mapping[str, Any]], /) -> Transcript: ...
    def __radd__(self, other: Iterable[Mapping[str, Any]], /) -> Transcript: ...
    def token_counts(self, *, cjk: bool = False) -> Any: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, key: int, /) -> _JsonDict: ...
    @overload
    def __getitem__(self, key: slice, /) -> Transcript: ...
    def __iter__(self) -> Iterator[_JsonDict]: ...
    def __reversed__(self) -> Iterator[_JsonDict]: ...
    def __contains__(self, value: object, /) -> bool: ...
    def count(self, value: object) -> int: ...
    def index(self, value: object, start: int = 0, stop: int | None = None) -> int: ...
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

@disjoint_base
class Session:
    """A pi/OpenClaw session bound to its JSONL file (subclassed by ``clawctx.Session``)."""

    def __new__(
        cls,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self: ...
    @classmethod
    def open(
        cls,
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
        lazy: bool = False,
    ) -> Self: ...
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
    ) -> Self: ...
    @classmethod
    def in_memory(
        cls,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        now_ms: _Clock = None,
        id_factory: _IdFactory = None,
    ) -> Self: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def header(self) -> _JsonDict: ...
    @property
    def cwd(self) -> Any:
        """The header's ``cwd``, else the ``cwd`` given to ``open``, else the process's
        directory (pi-mono 0.58.3 ``getCwd``)."""
    @property
    def version(self) -> int: ...
    @property
    def file_version(self) -> int: ...
    @property
    def needs_migration(self) -> bool: ...
    @property
    def session_id(self) -> str | None:
        """The header's ``id`` (the session id), or ``None`` when the header has none."""
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
    def context_messages(self, leaf_id: str | None = None) -> Transcript: ...
    @property
    def is_lazy(self) -> bool: ...
    @property
    def lazy_bytes_read(self) -> int | None: ...
    def has_entries(self) -> bool: ...
    def load_in_full(self) -> bool: ...
    def save_migrated(self) -> Path | None: ...
    def refresh(self) -> RefreshReport: ...
    def append_message(self, message: Mapping[str, Any]) -> str: ...
    def append_messages(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        turn_key: str | None = None,
        since: str | None = None,
    ) -> list[str]:
        """Appends the messages as one turn in one locked write (all or none); with
        ``turn_key``, a turn already on the branch is not written again and its ids return."""
    def find_turn(self, turn_key: str, *, since: str | None = None) -> list[str] | None:
        """The ids of the turn appended with ``turn_key`` on the leaf's branch, or ``None``."""
    def append_thinking_level_change(self, thinking_level: str) -> str:
        """Appends a ``thinking_level_change`` entry; returns its id."""
    def append_model_change(self, provider: str, model_id: str) -> str:
        """Appends a ``model_change`` entry (``provider``, ``modelId``); returns its id."""
    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int | float,
        details: Any | None = None,
        from_hook: bool | None = None,
    ) -> str:
        """Appends a ``compaction`` entry (``summary`` replaces the history before
        ``first_kept_entry_id``); returns its id."""
    def append_custom_entry(self, custom_type: str, data: Any | None = None) -> str:
        """Appends a ``custom`` entry (extension state, never in the LLM context); returns its
        id."""
    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[_JsonDict],
        display: bool,
        details: Any | None = None,
    ) -> str:
        """Appends a ``custom_message`` entry (enters the LLM context as a user message);
        returns its id."""
    def append_label(self, target_id: str, label: str | None = None) -> str: ...
    def append_session_info(self, name: str) -> str:
        """Appends a ``session_info`` entry naming the session; returns its id."""
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
class LeafContext:
    """The context of a session file's last entry, read from the end of the file."""

    @property
    def messages(self) -> Transcript: ...
    @property
    def thinking_level(self) -> Any: ...
    @property
    def model(self) -> _JsonDict | None: ...
    def context(self) -> SessionContext: ...
    @property
    def bytes_read(self) -> int: ...
    @property
    def file_size(self) -> int: ...
    @property
    def read_in_full(self) -> bool: ...

def read_leaf_context(
    path: str | os.PathLike[str], *, chunk_bytes: int = 262144
) -> LeafContext: ...

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

# ---- exact token counts and the calibrated estimator ----

_Encoding = Literal["o200k_base", "cl100k_base"]
_Estimator = Literal["exact", "calibrated"]

def count_tokens(
    text_or_messages: str | Mapping[str, Any] | _Messages,
    encoding: _Encoding = "o200k_base",
    *,
    estimator: _Estimator = "exact",
) -> int:
    """The token count of a text, a message dict, or a transcript / list of messages.

    ``estimator="exact"`` gives tiktoken's ``len(encode_ordinary(text))``.
    ``estimator="calibrated"`` weighs counts of what the pre-tokenizer would cut, without
    byte-pair encoding (14-130 times faster than exact on long texts). Guarantee: on every kind
    of text (runs of newlines, spaces or punctuation; Chinese, Japanese, Korean; combining
    marks; emoji and ZWJ sequences; base64, hex; code; prose in any script; mixtures),
    from one character to megabytes, the estimate is 0.8-2 times the exact count (tested on
    generated texts of each kind and on random Unicode). Texts up to 1 KB are counted
    exactly; longer ones check the weighed counts against the exact count of 1 KB slices
    (one per 256 KB) and, where they differ by more than 15%, correct the estimate by the
    slices' error scaled to the whole text.
    """

def count_message_tokens(
    messages: _Messages,
    encoding: _Encoding = "o200k_base",
    *,
    estimator: _Estimator = "exact",
) -> Any: ...  # numpy.ndarray of int64, one count per message
def image_tokens(width: int, height: int) -> int: ...
def _token_vocabulary(encoding: _Encoding) -> list[bytes]: ...
def _token_features(text: str, encoding: _Encoding = "o200k_base") -> list[int]: ...
def _token_feature_names() -> list[str]: ...
def estimate_pruning_chars(message: Mapping[str, Any]) -> int: ...
def is_tool_prunable(tool_name: str, tools: Mapping[str, Any] | None = None) -> bool: ...
def message_columns(messages: _Messages) -> dict[str, Any]:
    """Per-message statistics as columns (numpy arrays; ``role`` and ``tool_name`` are lists of
    ``str | None``), one element per message, without a Python object per message: ``index``,
    ``role``, ``tool_name`` (an assistant's tool-call names joined with ","), ``text_chars``,
    ``thinking_chars``, ``estimated_tokens`` (pi's chars/4), ``tool_calls`` (int64),
    ``has_image``, ``is_error`` (bool), ``timestamp_ms`` and the recorded usage
    ``usage_input``, ``usage_output``, ``usage_cache_read``, ``usage_cache_write``,
    ``usage_total`` (float64, NaN where missing)."""

def _budget_units(messages: _Messages) -> tuple[Any, Any]:
    """``fit_to_budget``'s units: numpy ``int64`` first indices and ``int8`` start kinds (0 user
    side, 1 assistant, 2 tool result, 3 system/developer, 4 other)."""

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
    fix_messages: bool = False,
) -> RepairReport: ...
def repair_session_bytes(
    data: bytes, /, *, fix_messages: bool = False
) -> tuple[RepairReport, bytes | None]:
    """``repair_session_file``'s decision on a session's bytes in memory: the report and the
    repaired bytes, or ``None`` when nothing needs repair. Writes and logs nothing."""

@final
class TranscriptPolicy:
    """What hygiene a provider needs (OpenClaw `src/agents/transcript-policy.ts`,
    resolveTranscriptPolicy)."""

    def __new__(
        cls,
        *,
        sanitize_mode: str = "images-only",
        sanitize_tool_call_ids: bool = False,
        tool_call_id_mode: str | None = None,
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
    def sanitize_mode(self) -> str: ...
    @property
    def sanitize_tool_call_ids(self) -> bool: ...
    @property
    def tool_call_id_mode(self) -> str | None: ...
    @property
    def repair_tool_use_result_pairing(self) -> bool: ...
    @property
    def preserve_signatures(self) -> bool: ...
    @property
    def sanitize_thought_signatures(self) -> dict[str, bool] | None: ...
    @property
    def sanitize_thinking_signatures(self) -> bool: ...
    @property
    def drop_thinking_blocks(self) -> bool: ...
    @property
    def apply_google_turn_ordering(self) -> bool: ...
    @property
    def validate_gemini_turns(self) -> bool: ...
    @property
    def validate_anthropic_turns(self) -> bool: ...
    @property
    def allow_synthetic_tool_results(self) -> bool: ...
    def to_dict(self) -> _JsonDict: ...
    def __eq__(self, value: object, /) -> bool: ...

@final
class Violation:
    """One broken provider rule."""

    @property
    def index(self) -> int: ...
    @property
    def rule(self) -> str: ...
    @property
    def detail(self) -> str: ...

def resolve_transcript_policy(
    *, provider: str | None = None, model_api: str | None = None, model_id: str | None = None
) -> TranscriptPolicy: ...
def annotate_inter_session_messages(messages: _Messages) -> Transcript: ...
def drop_delivery_mirror_messages(messages: _Messages) -> Transcript: ...
def sanitize_tool_call_ids(
    messages: _Messages, mode: str = "strict", *, now_ms: _Clock = None
) -> Transcript: ...
def dedupe_tool_call_ids(messages: _Messages, mode: str | None = None) -> Transcript: ...
def sanitize_tool_call_id(id: str | None, mode: str = "strict") -> str: ...
def is_valid_tool_call_id(id: str, mode: str = "strict") -> bool: ...
def strip_thought_signatures(
    messages: _Messages, *, allow_base64_only: bool = False, include_camel_case: bool = False
) -> Transcript: ...
def sanitize_message_blocks(
    messages: _Messages,
    *,
    sanitize_mode: str = "images-only",
    preserve_signatures: bool = False,
    sanitize_thought_signatures: Mapping[str, bool] | None = None,
) -> Transcript: ...
def drop_thinking_blocks(messages: _Messages) -> Transcript: ...
def strip_tool_result_details(messages: _Messages) -> Transcript: ...
def drop_duplicate_tool_results(messages: _Messages) -> Transcript: ...
def zero_stale_usage(messages: _Messages) -> Transcript: ...
def normalize_usage(messages: _Messages) -> Transcript: ...
def validate_gemini_turns(messages: _Messages) -> Transcript: ...
def validate_anthropic_turns(messages: _Messages) -> Transcript: ...
def strip_dangling_tool_calls(messages: _Messages) -> Transcript: ...
def sanitize_google_turn_ordering(messages: _Messages, *, now_ms: _Clock = None) -> Transcript: ...
def downgrade_openai_reasoning(messages: _Messages) -> Transcript: ...
def downgrade_openai_function_call_pairs(messages: _Messages) -> Transcript: ...
def validate_for_provider(
    messages: _Messages, *, provider: str | None = None, model_api: str | None = None
) -> list[Violation]: ...
def provider_family(*, provider: str | None = None, model_api: str | None = None) -> str: ...
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
    """The request guard, clawctx's safe default: ``messages`` unchanged (the same Transcript)
    when a request built from them is valid for the target, else repaired into the shape every
    provider accepts (repeated ids made unique, results moved up to their call, orphaned and
    second results dropped, aborted turns left out, synthetic results for unanswered calls, a
    user turn before an assistant-first history), with what changed as ``(kind, count)``
    pairs. ``followed_by_user``: a user message (the prompt) comes after these.
    ``verbatim_ids``: the writer sends ids as stored, without pi-ai's normalisation."""

def request_issues(
    messages: _Messages,
    *,
    provider: str | None = None,
    model_api: str | None = None,
    model_id: str | None = None,
    followed_by_user: bool = False,
    verbatim_ids: bool = False,
) -> list[Violation]:
    """Why a request built from ``messages`` for the target would be rejected, as the request
    guard checks it; empty when it is valid."""

@final
class ImageBlockRef:
    """An image block that image sanitization (OpenClaw
    `src/agents/pi-embedded-helpers/images.ts`, sanitizeSessionMessagesImages) handles."""

    @property
    def message_index(self) -> int: ...
    @property
    def block_index(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def data(self) -> str: ...
    @property
    def mime_type(self) -> str: ...
    @property
    def max_dimension_px(self) -> float | None: ...
    @property
    def max_bytes(self) -> float | None: ...

def find_image_blocks(
    messages: _Messages,
    *,
    skip_within_limits: bool = False,
    max_dimension_px: float = 1200.0,
    max_bytes: float = 5242880.0,
    max_input_bytes: float = 67108864.0,
) -> list[ImageBlockRef]: ...
def probe_base64_image(data: str) -> tuple[int, int, int] | None: ...
def decode_image_base64(data: str) -> bytes: ...
def replace_content_blocks(
    messages: _Messages,
    replacements: Iterable[
        tuple[int, int, Mapping[str, Any]] | tuple[int, int, Mapping[str, Any], bool]
    ],
) -> Transcript: ...

# ---- heartbeat hygiene (OpenClaw heartbeat.ts: stripHeartbeatToken; heartbeat-runner.ts) ----

@final
class StripResult:
    """stripHeartbeatToken's result; also unpacks as (should_skip, text, did_strip)."""

    @property
    def should_skip(self) -> bool: ...
    @property
    def text(self) -> str: ...
    @property
    def did_strip(self) -> bool: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> bool | str: ...
    def __iter__(self) -> Iterator[bool | str]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def strip_heartbeat_token(
    text: str | None, *, mode: str = "message", max_ack_chars: float | str | None = None
) -> StripResult: ...
def filter_heartbeat_pairs(
    messages: _Messages,
    *,
    heartbeat_prompt: str | None = ...,
    transcript_prompt: bool = True,
    max_ack_chars: float | str | None = None,
) -> Transcript: ...

@final
class HeartbeatMark:
    """The size of a session file recorded before a heartbeat run."""

    @property
    def path(self) -> Path: ...
    @property
    def size(self) -> int: ...
    @property
    def at_line_boundary(self) -> bool: ...

@final
class HeartbeatPruneReport:
    """What prune_heartbeat_transcript did."""

    @property
    def action(self) -> str: ...
    @property
    def removed_lines(self) -> int: ...
    @property
    def removed_bytes(self) -> int: ...
    @property
    def removed_ids(self) -> list[str]: ...
    @property
    def kept_lines(self) -> int: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def pruned(self) -> bool: ...

def mark_heartbeat_transcript(
    path: str | os.PathLike[str], *, lock_timeout: float = 10.0
) -> HeartbeatMark: ...
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
) -> HeartbeatPruneReport: ...

# ---- compaction (pi-mono 0.58.3 compaction/compaction.ts: prepareCompaction, compact) -------

@final
class CompactionSettings:
    """pi's compaction settings (enabled, reserve_tokens, keep_recent_tokens)."""

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
    def from_dict(value: Mapping[str, Any]) -> CompactionSettings: ...
    def to_dict(self) -> _JsonDict: ...
    def with_reserve_floor(self, floor: int = 20000) -> CompactionSettings: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def reserve_tokens(self) -> int: ...
    @property
    def keep_recent_tokens(self) -> int: ...
    @property
    def summary_max_tokens(self) -> int: ...
    @property
    def turn_prefix_max_tokens(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...

_CompactionSettingsArg = CompactionSettings | Mapping[str, Any] | None

@final
class CutPoint:
    """Where find_cut_point cuts."""

    @property
    def first_kept_entry_index(self) -> int: ...
    @property
    def turn_start_index(self) -> int: ...
    @property
    def is_split_turn(self) -> bool: ...

@final
class CompactionPreparation:
    """What prepare_compaction found."""

    @property
    def messages_to_summarize(self) -> Transcript: ...
    @property
    def turn_prefix_messages(self) -> Transcript: ...
    @property
    def settings(self) -> CompactionSettings: ...
    @property
    def first_kept_entry_index(self) -> int: ...
    @property
    def turn_start_index(self) -> int: ...
    @property
    def is_split_turn(self) -> bool: ...
    @property
    def first_kept_entry_id(self) -> str: ...
    @property
    def previous_summary(self) -> str | None: ...
    @property
    def previous_compaction_index(self) -> int | None: ...
    @property
    def tokens_before(self) -> int: ...
    @property
    def read_files(self) -> list[str]: ...
    @property
    def modified_files(self) -> list[str]: ...
    @property
    def details(self) -> dict[str, list[str]]: ...
    @property
    def leaf_id(self) -> str | None: ...
    def summary_requests(self, custom_instructions: str | None = None) -> list[SummaryRequest]: ...
    def compose_summary(
        self, history_summary: str | None = None, turn_prefix_summary: str | None = None
    ) -> str: ...

@final
class SummaryRequest:
    """One summarization call for the caller's summarizer."""

    @property
    def kind(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def messages(self) -> Transcript: ...
    @property
    def previous_summary(self) -> str | None: ...
    @property
    def custom_instructions(self) -> str | None: ...
    @property
    def preparation(self) -> CompactionPreparation: ...

def should_compact(
    context_tokens: float, context_window: float, settings: _CompactionSettingsArg = None
) -> bool: ...
def find_cut_point(
    entries: Session | Iterable[Mapping[str, Any]],
    start_index: int,
    end_index: int,
    keep_recent_tokens: int,
) -> CutPoint: ...
def prepare_compaction(
    session: Session | Iterable[Mapping[str, Any]], settings: _CompactionSettingsArg = None
) -> CompactionPreparation | None: ...
def serialize_conversation(messages: _Messages) -> str: ...
def build_compaction_prompt(
    messages_or_text: str | _Messages,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    *,
    kind: str = "history",
) -> str: ...
def _compaction_texts() -> dict[str, str]: ...

@final
class RefreshReport:
    """What Session.refresh() did."""

    @property
    def mode(self) -> str: ...
    @property
    def appended_entries(self) -> int: ...
    @property
    def bytes_read(self) -> int: ...
    @property
    def reason(self) -> str | None: ...

@final
class SessionSummary:
    """One session file at a glance. ``error`` is ``None`` when the file is a usable session,
    otherwise why not (the other fields are then empty). Token figures are pi's chars/4
    estimate of the leaf's context; ``branches`` counts the leaves of the entry tree (1 for a
    linear session); ``unpaired_tool_calls``/``unpaired_tool_results`` are what pairing repair
    would answer with a synthetic result or drop."""

    fields: ClassVar[list[str]]
    @property
    def path(self) -> Path: ...
    @property
    def error(self) -> str | None: ...
    @property
    def format(self) -> str | None: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def created(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def file_version(self) -> int: ...
    @property
    def migration_needed(self) -> bool: ...
    @property
    def entries(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def skipped_lines(self) -> int: ...
    @property
    def damaged_lines(self) -> int: ...
    @property
    def compactions(self) -> int: ...
    @property
    def branches(self) -> int: ...
    @property
    def leaf_id(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def last_activity(self) -> str | None: ...
    @property
    def last_activity_ms(self) -> int | None: ...
    @property
    def context_messages(self) -> int: ...
    @property
    def estimated_tokens(self) -> int: ...
    @property
    def user_tokens(self) -> int: ...
    @property
    def assistant_tokens(self) -> int: ...
    @property
    def tool_result_tokens(self) -> int: ...
    @property
    def other_tokens(self) -> int: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def tool_calls(self) -> int: ...
    @property
    def tool_results(self) -> int: ...
    @property
    def unpaired_tool_calls(self) -> int: ...
    @property
    def unpaired_tool_results(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

def scan_sessions(
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> list[SessionSummary]: ...

@final
class ScanStream:
    """A scan in progress: yields each ``SessionSummary`` as it is ready."""

    @property
    def total(self) -> int: ...
    def __iter__(self) -> ScanStream: ...
    def __next__(self) -> SessionSummary: ...

def scan_stream(
    paths: Sequence[str | os.PathLike[str]],
    *,
    workers: int | None = None,
    ordered: bool = True,
) -> ScanStream:
    """Summarizes session files in parallel (GIL released) and yields each summary as it is
    ready, in input order when ``ordered``; memory holds only the files being read and a few
    summaries."""

def summarize_session_bytes(
    data: bytes, name: str | os.PathLike[str] | None = None
) -> SessionSummary:
    """Summarizes a session from its bytes (object stores, file objects); ``name`` becomes
    the summary's ``path``."""

# Foreign transcripts (public home: ``clawctx.history.foreign``).

@final
class ImportedTranscript:
    """A transcript read from a pi, Claude Code or Codex file, and the file's facts."""

    @property
    def format(self) -> Literal["pi", "claude-code", "codex"]: ...
    @property
    def messages(self) -> Transcript: ...
    @property
    def lines(self) -> int: ...
    @property
    def damaged_lines(self) -> int: ...
    @property
    def torn_last_line(self) -> bool: ...
    @property
    def dropped_sidechain_lines(self) -> int: ...
    @property
    def off_path_lines(self) -> int: ...
    @property
    def compactions(self) -> int: ...
    @property
    def branches(self) -> int: ...
    @property
    def model(self) -> str | None: ...
    @property
    def first_timestamp(self) -> str | None: ...
    @property
    def last_timestamp(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def version(self) -> str | None: ...

def detect_transcript_format_bytes(data: bytes) -> Literal["pi", "claude-code", "codex"]: ...
def read_transcript_bytes(
    data: bytes, *, format: Literal["auto", "pi", "claude-code", "codex"] = "auto"
) -> ImportedTranscript: ...
def read_transcript_file(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto", "pi", "claude-code", "codex"] = "auto",
) -> ImportedTranscript: ...

# Provider request payloads (public home: ``clawctx.wire``).

@final
class _RequestPayload:
    """A request body built in Rust."""

    @property
    def api(self) -> str: ...
    @property
    def guard_changes(self) -> list[tuple[str, int]]:
        """What the request guard changed in the messages, as ``(kind, count)`` pairs."""

    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> bytes: ...

def _build_request_payload(
    request_json: str,
    messages: Transcript | str,
    *,
    simple: bool = False,
    now_ms: int = 0,
    guard: bool = True,
) -> _RequestPayload: ...
def _parse_response(model_json: str, reply: bytes, now_ms: float) -> tuple[bytes, list[str]]: ...
def _transform_messages(
    model_json: str,
    messages_json: str,
    normalizer: str = "none",
    *,
    now_ms: int = 0,
    guard: bool = True,
) -> str: ...
