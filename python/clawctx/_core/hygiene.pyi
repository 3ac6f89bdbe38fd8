"""Provider hygiene: transcript policies, sanitizers, turn validation, request guards, images
and heartbeat tokens (core stage ``hygiene``).
"""

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, final

from .transcript import Transcript, _Clock, _JsonDict, _Messages

__all__ = [
    "ImageBlockRef",
    "StripResult",
    "TranscriptPolicy",
    "Violation",
    "_cache_breakpoint_issues",
    "annotate_inter_session_messages",
    "decode_image_base64",
    "dedupe_tool_call_ids",
    "downgrade_openai_function_call_pairs",
    "downgrade_openai_reasoning",
    "drop_delivery_mirror_messages",
    "drop_duplicate_tool_results",
    "drop_foreign_compaction_blocks",
    "drop_thinking_blocks",
    "filter_heartbeat_pairs",
    "find_image_blocks",
    "guard_request",
    "is_valid_tool_call_id",
    "normalize_usage",
    "probe_base64_image",
    "provider_family",
    "replace_content_blocks",
    "request_issues",
    "resolve_transcript_policy",
    "sanitize_google_turn_ordering",
    "sanitize_message_blocks",
    "sanitize_tool_call_id",
    "sanitize_tool_call_ids",
    "strip_dangling_tool_calls",
    "strip_heartbeat_token",
    "strip_thought_signatures",
    "strip_tool_result_details",
    "validate_anthropic_turns",
    "validate_for_provider",
    "validate_gemini_turns",
    "zero_stale_usage",
]

# String options with a fixed set of values (the binding refuses others with ValueError).
_SanitizeMode = Literal["full", "images-only"]

_ToolCallIdMode = Literal["strict", "strict9"]

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
    alphanumerics), keeping them unique and paired. A rewritten message keeps every byte of
    its text but the ids, except one whose ids or keys hold escapes, whose `content` appears
    twice or that has a `toolUseId`: that one is written like `JSON.stringify`.
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

# ---- heartbeat tokens (OpenClaw heartbeat.ts: stripHeartbeatToken) ----

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
