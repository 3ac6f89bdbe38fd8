"""Transcripts and the operations on their messages: token estimates, tool-call and pairing
repair, history limits and pruning (core stage ``transcript``).
"""

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, final, overload

__all__ = [
    "_TOOL_CALL_TYPES",
    "ContextTokens",
    "PairingReport",
    "PruningSettings",
    "ToolCallInputsReport",
    "Transcript",
    "_budget_units",
    "compaction_boundary",
    "compaction_send_view",
    "convert_to_llm",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_pruning_chars",
    "estimate_string_chars",
    "estimate_tokens",
    "history_limit_for_session_key",
    "is_tool_prunable",
    "limit_history_turns",
    "message_columns",
    "prune_context",
    "repair_tool_call_inputs",
    "repair_tool_pairing",
    "sanitize_tool_call_inputs",
    "sanitize_tool_use_result_pairing",
    "usage_tokens",
]

#: The tool-call block types (``toolCall``, ``toolUse``, ``functionCall``), defined once in the
#: Rust core (``transcript::PAIRING_TOOL_CALL_TYPES``).
_TOOL_CALL_TYPES: frozenset[str]

_JsonDict = dict[str, Any]

_Clock = int | Callable[[], int] | None

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
        """The synthetic results inserted, in order (a `Transcript`)."""
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
