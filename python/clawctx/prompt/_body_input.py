"""The input of the prompt-body pipeline (:mod:`clawctx.prompt.prompt_body`): the inbound
message's context (``InboundContext``, OpenClaw 2026.3.13 `src/auto-reply/templating.ts`,
``MsgContext``) with the parsers that build it from a mapping in either key spelling, and the
pipeline's output (``PromptBody``). Private: ``clawctx.prompt.prompt_body`` exports these names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Final, Literal, cast

from clawctx.prompt.system_events import SystemEvent

ChatType = Literal["direct", "group", "channel"]
ThinkLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "adaptive"]

_Converter = Callable[[str, object], object]


# --------------------------------------------------------------------------------------------
# Input data (templating.ts, MsgContext) and its parsers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InboundHistoryEntry:
    """One message of ``InboundHistory`` (inbound-meta.ts, "Chat history since last reply"):
    rendered as ``{"sender", "timestamp_ms", "body"}`` in the chat-history block.

    Upstream prints the entry's values as given: ``timestamp_ms=None`` leaves the key out (an
    absent ``timestamp``), while ``timestamp_is_null=True`` (what
    :meth:`InboundContext.from_mapping` sets for an explicit ``"timestamp": null``) or a
    non-finite number prints ``null``.
    """

    sender: str
    timestamp_ms: int | float | None = None
    body: str = ""
    timestamp_is_null: bool = False


@dataclass(frozen=True, slots=True)
class MediaUnderstandingOutput:
    """One ``MediaUnderstanding`` output (media-note.ts): ``kind`` such as ``audio.transcription``,
    ``image.description``, ``video.description``, for attachment ``attachment_index``."""

    kind: str
    attachment_index: int | float
    text: str | None = None


@dataclass(frozen=True, slots=True)
class MediaUnderstandingAttachment:
    """One attachment of a :class:`MediaUnderstandingDecision`; ``chosen_outcome`` is the
    outcome of the attempt the runtime chose (``"success"``, ``"skipped"``, …) or ``None``."""

    attachment_index: int | float
    chosen_outcome: str | None = None


@dataclass(frozen=True, slots=True)
class MediaUnderstandingDecision:
    """One ``MediaUnderstandingDecisions`` entry (media-note.ts): ``capability`` (``audio``,
    ``image``, ``video``), overall ``outcome`` and per-attachment results."""

    capability: str
    outcome: str
    attachments: tuple[MediaUnderstandingAttachment, ...] = ()


@dataclass(frozen=True, slots=True)
class InboundContext:
    """The template context of one inbound message (``runPreparedReply``'s ``ctx``), fields in
    snake_case.

    Build it directly or with :meth:`from_mapping` from the upstream PascalCase keys
    (``Body``, ``BodyStripped``, ``MessageSid``, ``MediaPaths``, …). Absent fields are ``None``
    (scalars) or ``()`` (lists). ``media_urls`` / ``media_types`` elements may be ``None``
    (upstream falls back to the scalar field for such an element).

    ``timestamp`` (``Timestamp``) is the message time in milliseconds since the epoch, shown as
    ``timestamp`` (``Thu 1970-01-01 00:00 UTC``, host zone) in the conversation info;
    ``message_thread_id`` (``MessageThreadId``, a forum topic or thread id, string or number) is
    shown as ``topic_id`` (JavaScript ``String(value)``). ``account_id`` (``AccountId``) is the
    channel account the message arrived on (``account_id`` of the trusted metadata).
    """

    body: str | None = None
    body_stripped: str | None = None
    command_body: str | None = None
    raw_body: str | None = None
    chat_type: str | None = None
    message_sid: str | None = None
    message_sid_full: str | None = None
    reply_to_id: str | None = None
    sender_id: str | None = None
    sender_name: str | None = None
    sender_username: str | None = None
    sender_tag: str | None = None
    sender_e164: str | None = None
    group_subject: str | None = None
    group_channel: str | None = None
    group_space: str | None = None
    conversation_label: str | None = None
    thread_label: str | None = None
    is_forum: bool | None = None
    was_mentioned: bool | None = None
    reply_to_body: str | None = None
    reply_to_sender: str | None = None
    reply_to_is_quote: bool | None = None
    forwarded_from: str | None = None
    forwarded_from_type: str | None = None
    forwarded_from_username: str | None = None
    forwarded_from_title: str | None = None
    forwarded_from_signature: str | None = None
    forwarded_from_chat_type: str | None = None
    forwarded_date: int | float | None = None
    inbound_history: tuple[InboundHistoryEntry, ...] = ()
    thread_starter_body: str | None = None
    thread_history_body: str | None = None
    untrusted_context: tuple[str, ...] = ()
    media_path: str | None = None
    media_paths: tuple[str, ...] = ()
    media_url: str | None = None
    media_urls: tuple[str | None, ...] = ()
    media_type: str | None = None
    media_types: tuple[str | None, ...] = ()
    media_understanding: tuple[MediaUnderstandingOutput, ...] = ()
    media_understanding_decisions: tuple[MediaUnderstandingDecision, ...] = ()
    transcript: str | None = None
    originating_channel: str | None = None
    originating_to: str | None = None
    provider: str | None = None
    surface: str | None = None
    account_id: str | None = None
    session_key: str | None = None
    timestamp: int | float | None = None
    message_thread_id: str | int | float | None = None

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, object]) -> InboundContext:
        """Builds a context from upstream PascalCase keys (``MessageSidFull``,
        ``SenderE164``, ``InboundHistory``, …) or the snake_case field names.

        Unknown keys are ignored; ``None`` values count as absent. Lists may be lists or
        tuples; ``InboundHistory`` items may be mappings with ``sender`` / ``timestamp`` (or
        ``timestamp_ms``) / ``body``; ``MediaUnderstanding`` items mappings with ``kind`` /
        ``attachmentIndex``; ``MediaUnderstandingDecisions`` items mappings with
        ``capability`` / ``outcome`` / ``attachments`` (each ``attachmentIndex`` /
        ``chosen.outcome``). An ``InboundHistory`` item's ``"timestamp": null`` is kept as
        ``timestamp_is_null``.

        Wrong-typed values that upstream's inbound-meta.ts ignores are accepted and dropped the
        way it does: the flags ``IsForum`` / ``WasMentioned`` / ``ReplyToIsQuote`` count only
        when they are ``True`` (upstream tests ``=== true``; ``"true"`` or ``1`` become ``None``),
        and ``ForwardedDate`` / ``Timestamp`` only when they are numbers (``typeof ===
        "number"``; ``"1700000000000"`` becomes ``None``). ``MessageThreadId`` may be a string
        or a number (a boolean becomes ``"true"`` / ``"false"``, as ``String()`` does). Any
        other value of the wrong type raises ``TypeError``.
        """
        values: dict[str, object] = {}
        for key, raw in mapping.items():
            name = _FIELD_ALIASES.get(key)
            if name is None or raw is None:
                continue
            values[name] = _FIELD_CONVERTERS[name](key, raw)
        return cls(**values)  # type: ignore[arg-type]


def _pascal_case(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _expect_str(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, got {type(value).__name__}")
    return value


def _expect_number(key: str, value: object) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{key} must be a number, got {type(value).__name__}")
    # JSON.stringify writes 5.0 as 5; keep integral floats as ints so JSON output matches.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _true_or_none(key: str, value: object) -> bool | None:
    """inbound-meta.ts tests these flags with ``=== true``: a non-boolean counts as unset."""
    return value if isinstance(value, bool) else None


def _number_or_unset(key: str, value: object) -> int | float | None:
    """inbound-meta.ts uses these only when ``typeof value === "number"``: anything else counts
    as unset."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return _expect_number(key, value)


def _to_thread_id(key: str, value: object) -> str | int | float:
    """``MessageThreadId``: a string or a number, rendered with ``String()``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"{key} must be a string or a number, got {type(value).__name__}")


def _expect_sequence(key: str, value: object) -> Sequence[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{key} must be a list, got {type(value).__name__}")
    return value


def _expect_mapping(key: str, value: object) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{key} items must be mappings, got {type(value).__name__}")
    return cast(Mapping[str, object], value)


def _opt_str(mapping: Mapping[str, object], names: tuple[str, ...], key: str) -> str | None:
    for name in names:
        value = mapping.get(name)
        if value is not None:
            return _expect_str(f"{key}.{name}", value)
    return None


def _opt_number(
    mapping: Mapping[str, object], names: tuple[str, ...], key: str
) -> int | float | None:
    for name in names:
        value = mapping.get(name)
        if value is not None:
            return _expect_number(f"{key}.{name}", value)
    return None


def _to_str_tuple(key: str, value: object) -> tuple[str, ...]:
    return tuple(_expect_str(key, item) for item in _expect_sequence(key, value))


def _to_optional_str_tuple(key: str, value: object) -> tuple[str | None, ...]:
    return tuple(
        None if item is None else _expect_str(key, item) for item in _expect_sequence(key, value)
    )


def _to_history(key: str, value: object) -> tuple[InboundHistoryEntry, ...]:
    entries: list[InboundHistoryEntry] = []
    for item in _expect_sequence(key, value):
        if isinstance(item, InboundHistoryEntry):
            entries.append(item)
            continue
        data = _expect_mapping(key, item)
        timestamp_keys = [name for name in ("timestamp", "timestamp_ms") if name in data]
        entries.append(
            InboundHistoryEntry(
                sender=_opt_str(data, ("sender",), key) or "",
                timestamp_ms=_opt_number(data, ("timestamp", "timestamp_ms"), key),
                body=_opt_str(data, ("body",), key) or "",
                timestamp_is_null=bool(timestamp_keys)
                and all(data[name] is None for name in timestamp_keys),
            )
        )
    return tuple(entries)


def _to_understanding(key: str, value: object) -> tuple[MediaUnderstandingOutput, ...]:
    outputs: list[MediaUnderstandingOutput] = []
    for item in _expect_sequence(key, value):
        if isinstance(item, MediaUnderstandingOutput):
            outputs.append(item)
            continue
        data = _expect_mapping(key, item)
        index = _opt_number(data, ("attachmentIndex", "attachment_index"), key)
        outputs.append(
            MediaUnderstandingOutput(
                kind=_opt_str(data, ("kind",), key) or "",
                attachment_index=-1 if index is None else index,
                text=_opt_str(data, ("text",), key),
            )
        )
    return tuple(outputs)


def _to_decisions(key: str, value: object) -> tuple[MediaUnderstandingDecision, ...]:
    decisions: list[MediaUnderstandingDecision] = []
    for item in _expect_sequence(key, value):
        if isinstance(item, MediaUnderstandingDecision):
            decisions.append(item)
            continue
        data = _expect_mapping(key, item)
        attachments: list[MediaUnderstandingAttachment] = []
        for raw_attachment in _expect_sequence(key, data.get("attachments") or ()):
            if isinstance(raw_attachment, MediaUnderstandingAttachment):
                attachments.append(raw_attachment)
                continue
            attachment = _expect_mapping(key, raw_attachment)
            index = _opt_number(attachment, ("attachmentIndex", "attachment_index"), key)
            chosen = attachment.get("chosen")
            chosen_outcome = (
                _opt_str(_expect_mapping(key, chosen), ("outcome",), key)
                if chosen is not None
                else _opt_str(attachment, ("chosen_outcome",), key)
            )
            attachments.append(
                MediaUnderstandingAttachment(-1 if index is None else index, chosen_outcome)
            )
        decisions.append(
            MediaUnderstandingDecision(
                capability=_opt_str(data, ("capability",), key) or "",
                outcome=_opt_str(data, ("outcome",), key) or "",
                attachments=tuple(attachments),
            )
        )
    return tuple(decisions)


_TUPLE_CONVERTERS: Final[dict[str, _Converter]] = {
    "inbound_history": _to_history,
    "untrusted_context": _to_str_tuple,
    "media_paths": _to_str_tuple,
    "media_urls": _to_optional_str_tuple,
    "media_types": _to_optional_str_tuple,
    "media_understanding": _to_understanding,
    "media_understanding_decisions": _to_decisions,
}
_BOOL_FIELDS: Final = frozenset({"is_forum", "was_mentioned", "reply_to_is_quote"})


def _converter_for(name: str) -> _Converter:
    if name in _TUPLE_CONVERTERS:
        return _TUPLE_CONVERTERS[name]
    if name in _BOOL_FIELDS:
        return _true_or_none
    if name in ("forwarded_date", "timestamp"):
        return _number_or_unset
    if name == "message_thread_id":
        return _to_thread_id
    return _expect_str


_FIELD_NAMES: Final = tuple(f.name for f in fields(InboundContext))
# Both spellings are accepted: "MessageSidFull" and "message_sid_full".
_FIELD_ALIASES: Final = {
    **{name: name for name in _FIELD_NAMES},
    **{_pascal_case(name): name for name in _FIELD_NAMES},
}
_FIELD_CONVERTERS: Final = {name: _converter_for(name) for name in _FIELD_NAMES}


@dataclass(frozen=True, slots=True)
class PromptBody:
    """What :func:`build_prompt_body` produces (``runPreparedReply``'s outputs).

    * ``prefixed_command_body``: the prompt of an immediate run (``prefixedCommandBody``);
    * ``queued_body``: the prompt used when the message steers or follows up a busy run
      (``queuedBody``);
    * ``extra_system_prompt``: trusted inbound metadata plus group context (``extraSystemPrompt``);
    * ``think_level``: the resolved think level, ``None`` = use the model default;
    * ``summary_line``: the trimmed stripped body, for queue overflow summaries (``summaryLine``);
    * ``drained_events``: the system events taken from the queue for this run;
    * ``should_run`` / ``reply_text``: ``False`` with :data:`EMPTY_BODY_REPLY` for a blank
      message without media, ``False`` with ``None`` for an unauthorized bare control
      command; ``True`` and ``None`` otherwise.
    """

    prefixed_command_body: str
    queued_body: str
    extra_system_prompt: str
    think_level: str | None
    summary_line: str
    drained_events: tuple[SystemEvent, ...]
    should_run: bool
    reply_text: str | None
