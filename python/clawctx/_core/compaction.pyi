"""Compaction: settings, cut points, preparation, summary requests and prompts (core stage
``compaction``; pi-mono 0.58.3 ``compaction/compaction.ts``: ``prepareCompaction``, ``compact``).
"""

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal, final

from .session import Session
from .transcript import Transcript, _JsonDict, _Messages

__all__ = [
    "CompactionPreparation",
    "CompactionSettings",
    "CutPoint",
    "SummaryRequest",
    "_compaction_texts",
    "build_compaction_prompt",
    "find_cut_point",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
]

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
