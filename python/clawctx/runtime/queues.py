"""Queue modes, follow-up queues, collect batching and inbound dedupe (OpenClaw
2026.3.13 `src/auto-reply/reply/queue/` (normalize.ts, settings.ts, enqueue.ts, drain.ts,
directive.ts), `src/utils/queue-helpers.ts` and `src/auto-reply/reply/inbound-dedupe.ts`).

A message that arrives while a session's agent is busy is *steered* into the running turn,
queued as a *follow-up* turn, *collected* with other queued messages into one turn, or
*interrupts* the running turn, depending on the session's queue mode. This module holds the
pure parts: mode/settings resolution (:func:`resolve_queue_settings`), the inline ``/queue``
directive (:func:`parse_queue_directive`), the capped and deduplicating
:class:`FollowupQueue` with its overflow summary, the collect prompt
(:func:`build_collect_prompt`), and inbound redelivery dedupe (:class:`InboundDedupe`). The
asyncio lane that drives turns with them is :class:`clawctx.runtime.lane.SessionLane`.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from clawctx._js import JS_WHITESPACE as _JS_WHITESPACE
from clawctx._js import JS_WHITESPACE_CLASS
from clawctx._js import js_trim as _js_trim

__all__ = [
    "COLLECT_TITLE_ANNOUNCES",
    "COLLECT_TITLE_MESSAGES",
    "DEFAULT_INBOUND_DEBOUNCE_MS",
    "DEFAULT_QUEUE_CAP",
    "DEFAULT_QUEUE_DEBOUNCE_MS",
    "DEFAULT_QUEUE_DROP",
    "DEFAULT_QUEUE_MODE",
    "INBOUND_DEDUPE_MAX_KEYS",
    "INBOUND_DEDUPE_TTL_MS",
    "QUEUE_SUMMARY_LINE_LIMIT",
    "RECENT_MESSAGE_IDS_MAX_KEYS",
    "RECENT_MESSAGE_IDS_TTL_MS",
    "DedupeCache",
    "EnqueueResult",
    "FollowupQueue",
    "InboundDedupe",
    "MessageRoute",
    "QueueDedupeMode",
    "QueueDirective",
    "QueueDropPolicy",
    "QueueMode",
    "QueueSettings",
    "QueuedMessage",
    "build_collect_prompt",
    "build_overflow_summary",
    "build_queue_summary_line",
    "normalize_queue_drop_policy",
    "normalize_queue_mode",
    "parse_queue_directive",
    "resolve_inbound_debounce_ms",
    "resolve_queue_settings",
]

#: queue/types.ts, QueueMode: what happens to a message that arrives while the session's agent is
#: busy.
QueueMode = Literal["steer", "followup", "collect", "steer-backlog", "interrupt"]
#: enqueue.ts, applyQueueDropPolicy: what a full queue gives up: the oldest items, the new one, or
#: the oldest with a summary.
QueueDropPolicy = Literal["old", "new", "summarize"]
#: enqueue.ts, enqueueFollowupRun: how :class:`FollowupQueue` recognises a message it already holds.
QueueDedupeMode = Literal["message-id", "prompt", "none"]
#: What :meth:`FollowupQueue.offer` did with an item.
EnqueueResult = Literal["queued", "duplicate", "dropped-new"]

#: queue/settings.ts, resolveQueueSettings: baseline (2026.3.13) default mode (**[later]** docs:
#: ``steer``).
DEFAULT_QUEUE_MODE: Final = "collect"
#: queue/state.ts, DEFAULT_QUEUE_DEBOUNCE_MS: baseline default debounce in ms (**[later]**: 500).
DEFAULT_QUEUE_DEBOUNCE_MS: Final = 1000
#: queue/state.ts, DEFAULT_QUEUE_CAP.
DEFAULT_QUEUE_CAP: Final = 20
#: queue/state.ts, DEFAULT_QUEUE_DROP.
DEFAULT_QUEUE_DROP: Final = "summarize"
#: queue-helpers.ts, buildQueueSummaryLine: overflow summary lines are elided to this many UTF-16
#: units (with ``…``).
QUEUE_SUMMARY_LINE_LIMIT: Final = 160
#: enqueue.ts, enqueueFollowupRun: how long a queued message id keeps rejecting redeliveries, and
#: how many ids are kept.
RECENT_MESSAGE_IDS_TTL_MS: Final = 5 * 60 * 1000
RECENT_MESSAGE_IDS_MAX_KEYS: Final = 10_000
#: inbound-dedupe.ts: inbound dedupe cache lifetime and size.
INBOUND_DEDUPE_TTL_MS: Final = 20 * 60 * 1000
INBOUND_DEDUPE_MAX_KEYS: Final = 5000
#: src/auto-reply/inbound-debounce.ts: inbound debounce is off unless configured.
DEFAULT_INBOUND_DEBOUNCE_MS: Final = 0

#: queue/drain.ts, scheduleFollowupDrain: collect-prompt title for queued user messages.
COLLECT_TITLE_MESSAGES: Final = "[Queued messages while agent was busy]"
#: src/agents/subagent-announce-queue.ts: collect-prompt title for queued sub-agent announces.
COLLECT_TITLE_ANNOUNCES: Final = "[Queued announce messages while agent was busy]"

_JS_S: Final = JS_WHITESPACE_CLASS
_WHITESPACE_RUN: Final = re.compile(f"{_JS_S}+")
_QUEUE_TOKEN: Final = re.compile(rf"(?:\A|{_JS_S})/queue(?={_JS_S}|:|\Z)", re.IGNORECASE)
_OPTION_SPLIT: Final = re.compile("[:=]")
# src/cli/parse-duration.ts (parseDurationMs): one number with an optional unit, or gap-free
# unit-bearing tokens (`1h30m`); JS `\d` is ASCII only.
_DURATION_SINGLE: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?")
_DURATION_TOKEN: Final = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)")
_DURATION_UNIT_MS: Final = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# JavaScript's Number(string) grammar (StringNumericLiteral), after trimming.
_JS_DECIMAL: Final = re.compile(
    r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
)
_JS_NON_DECIMAL: Final = re.compile(r"0(?:[xX]([0-9a-fA-F]+)|[oO]([0-7]+)|[bB]([01]+))")
_RESET_WORDS: Final = frozenset({"default", "reset", "clear"})

_MODE_ALIASES: Final[Mapping[str, QueueMode]] = {
    "queue": "steer",
    "queued": "steer",
    "steer": "steer",
    "steering": "steer",
    "interrupt": "interrupt",
    "interrupts": "interrupt",
    "abort": "interrupt",
    "followup": "followup",
    "follow-ups": "followup",
    "followups": "followup",
    "collect": "collect",
    "coalesce": "collect",
    "steer+backlog": "steer-backlog",
    "steer-backlog": "steer-backlog",
    "steer_backlog": "steer-backlog",
}
_DROP_ALIASES: Final[Mapping[str, QueueDropPolicy]] = {
    "old": "old",
    "oldest": "old",
    "new": "new",
    "newest": "new",
    "summarize": "summarize",
    "summary": "summarize",
}


def _collapse_whitespace(text: str) -> str:
    return _js_trim(_WHITESPACE_RUN.sub(" ", text))


def _finite_number(value: object) -> float | None:
    """``value`` when it is a finite int/float (bools excluded), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _utf16_truncate(text: str, limit: int) -> str:
    """The longest prefix of ``text`` of at most ``limit`` UTF-16 units; never splits a
    surrogate pair (``truncateUtf16Safe``)."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return text[:index]
    return text


def _js_round(value: float) -> int:
    """JavaScript ``Math.round`` of a finite number: nearest integer, halves towards +inf."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def _js_number(text: str) -> float:
    """JavaScript ``Number(text)`` for a string: trimmed, blank is 0, decimal (with exponent,
    ``Infinity``) or ``0x``/``0o``/``0b`` literals; anything else is NaN."""
    trimmed = _js_trim(text)
    if not trimmed:
        return 0.0
    if _JS_DECIMAL.fullmatch(trimmed):
        return float(trimmed)
    literal = _JS_NON_DECIMAL.fullmatch(trimmed)
    if literal is None:
        return math.nan
    digits, base = next(
        (d, b) for d, b in zip(literal.groups(), (16, 8, 2), strict=True) if d is not None
    )
    try:
        return float(int(digits, base))
    except OverflowError:
        return math.inf


def _parse_duration_ms(raw: str, *, default_unit: str = "ms") -> int:
    """OpenClaw 2026.3.13 `src/cli/parse-duration.ts` (``parseDurationMs``): a duration in ms.

    Trimmed and lower-cased; either one number with an optional unit (``ms``, ``s``, ``m``,
    ``h``, ``d``; ``default_unit`` when absent) or unit-bearing tokens written without gaps
    (``1h30m``, ``2m500ms``), summed; rounded to an integer. Raises ValueError for anything else
    (blank, signs, spaces inside, a bare number in a composite, overflow).
    """
    trimmed = _js_trim(raw).lower()
    if not trimmed:
        raise ValueError("invalid duration (empty)")
    single = _DURATION_SINGLE.fullmatch(trimmed)
    if single is not None:
        total = float(single.group(1)) * _DURATION_UNIT_MS[single.group(2) or default_unit]
    else:
        total = 0.0
        consumed = 0
        for token in _DURATION_TOKEN.finditer(trimmed):
            if token.start() != consumed:
                raise ValueError(f"invalid duration: {raw}")
            total += float(token.group(1)) * _DURATION_UNIT_MS[token.group(2)]
            consumed = token.end()
        if consumed == 0 or consumed != len(trimmed):
            raise ValueError(f"invalid duration: {raw}")
    if not math.isfinite(total):
        raise ValueError(f"invalid duration: {raw}")
    return _js_round(total)


def _now_ms_wall() -> float:
    return time.time() * 1000


def normalize_queue_mode(raw: str | None) -> QueueMode | None:
    """A queue mode from a directive word or config value (normalize.ts, ``normalizeQueueMode``).

    Trimmed and lower-cased; ``queue``/``queued``/``steer``/``steering`` → ``steer``;
    ``interrupt``/``interrupts``/``abort`` → ``interrupt``; ``followup``/``follow-ups``/
    ``followups`` → ``followup``; ``collect``/``coalesce`` → ``collect``;
    ``steer+backlog``/``steer-backlog``/``steer_backlog`` → ``steer-backlog``; anything else →
    None (ignored).
    """
    if not isinstance(raw, str):
        return None
    return _MODE_ALIASES.get(_js_trim(raw).lower())


def normalize_queue_drop_policy(raw: str | None) -> QueueDropPolicy | None:
    """A drop policy from a directive word or config value (normalize.ts,
    ``normalizeQueueDropPolicy``): ``old``/``oldest``,
    ``new``/``newest``, ``summarize``/``summary`` (trimmed, lower-cased); else None."""
    if not isinstance(raw, str):
        return None
    return _DROP_ALIASES.get(_js_trim(raw).lower())


@dataclass(frozen=True, slots=True)
class QueueSettings:
    """A session's resolved queue behaviour (settings.ts, ``resolveQueueSettings``)."""

    mode: QueueMode
    #: Quiet time after the last enqueue before queued turns run.
    debounce_ms: int = DEFAULT_QUEUE_DEBOUNCE_MS
    #: Most items a queue holds (at least 1).
    cap: int = DEFAULT_QUEUE_CAP
    drop: QueueDropPolicy = DEFAULT_QUEUE_DROP


@dataclass(frozen=True, slots=True)
class QueueDirective:
    """An inline ``/queue`` directive (directive.ts, ``extractQueueDirective``).

    The settings it sets: ``mode``, ``debounce_ms``, ``cap``, ``drop`` (None when the
    directive did not set them, or set an unusable value) and ``reset`` (True for
    ``reset``/``default``/``clear``). How it was written: ``raw_mode`` is the last mode word
    as typed, ``raw_debounce``/``raw_cap``/``raw_drop`` the text after the option's ``:``/``=``
    (kept even when unusable, e.g. ``drop:bogus`` gives ``raw_drop="bogus"`` and ``drop=None``),
    and ``has_options`` is True when any ``debounce``/``cap``/``drop`` option was given
    (upstream's ``rawMode``, ``rawDebounce``, ``rawCap``, ``rawDrop``, ``hasOptions``).

    Equality compares the settings only, not how they were written.
    """

    mode: QueueMode | None = None
    debounce_ms: int | None = None
    cap: int | None = None
    drop: QueueDropPolicy | None = None
    reset: bool = False
    raw_mode: str | None = field(default=None, compare=False)
    raw_debounce: str | None = field(default=None, compare=False)
    raw_cap: str | None = field(default=None, compare=False)
    raw_drop: str | None = field(default=None, compare=False)
    has_options: bool = field(default=False, compare=False)


def _parse_directive_debounce(raw: str) -> int | None:
    # directive.ts, parseQueueDebounce: parseDurationMs with a default unit of ms. A blank
    # value, an invalid duration and a falsy result all leave the debounce unset, so
    # `debounce:0` does not disable it.
    if not raw:
        return None
    try:
        duration = _parse_duration_ms(_js_trim(raw), default_unit="ms")
    except ValueError:
        return None
    return duration if duration > 0 else None


def _parse_directive_cap(raw: str) -> int | None:
    # directive.ts, parseQueueCap: JavaScript Number(raw) floored; below 1 is rejected.
    if not raw:
        return None
    value = _js_number(raw)
    if not math.isfinite(value):
        return None
    cap = math.floor(value)
    return cap if cap >= 1 else None


def _take_token(text: str, start: int) -> tuple[str | None, int]:
    """``takeDirectiveToken``: skip whitespace, read up to the next whitespace, skip it."""
    i = start
    length = len(text)
    while i < length and text[i] in _JS_WHITESPACE:
        i += 1
    if i >= length:
        return None, i
    token_start = i
    while i < length and text[i] not in _JS_WHITESPACE:
        i += 1
    token = text[token_start:i]
    while i < length and text[i] in _JS_WHITESPACE:
        i += 1
    return token, i


def _skip_arg_prefix(args: str) -> int:
    """``skipDirectiveArgPrefix``: whitespace, then an optional ``:`` and more whitespace."""
    i = 0
    while i < len(args) and args[i] in _JS_WHITESPACE:
        i += 1
    if i < len(args) and args[i] == ":":
        i += 1
        while i < len(args) and args[i] in _JS_WHITESPACE:
            i += 1
    return i


def _option_value(token: str) -> str:
    # `token.split(/[:=]/)[1] ?? ""`: the text between the first and second separator.
    parts = _OPTION_SPLIT.split(token)
    return parts[1] if len(parts) > 1 else ""


def parse_queue_directive(text: str) -> tuple[QueueDirective | None, str]:
    """Finds an inline ``/queue`` directive and removes it (directive.ts,
    ``extractQueueDirective``).

    ``/queue`` must stand alone (start of text or after whitespace; followed by whitespace,
    ``:`` or the end), case-insensitive, optionally followed by ``:``. Arguments are read as
    whitespace-separated tokens until the first one not understood: a mode word
    (:func:`normalize_queue_mode`), ``debounce:<dur>`` / ``debounce=<dur>`` (``500ms``, ``2s``,
    ``1m``, ``1h``, ``1d``, gap-free composites such as ``1h30m``, bare number = ms),
    ``cap:<n>``, ``drop:<policy>``, or a reset word (``reset``/``default``/``clear``, which
    ends the arguments). An option with an unusable value is consumed but leaves its field
    None (its raw text is still reported).

    Returns the directive (None when there is none) and the text with the directive span
    removed and whitespace runs collapsed to one space, trimmed. Without a directive the text
    is only trimmed.

    Upstream locates the word inside the match case-sensitively, so a directive not written
    in lower case (``/Queue``, ``/QUEUE``) is found but mis-sliced: the text before it loses
    its last character, the arguments are read from the word's tail (``e ...`` or ``ue ...``),
    which sets nothing, and ``/Queue collect`` yields the cleaned text ``/Queue collec e
    collect``. This is reproduced, except that a cut through a surrogate pair (an emoji just
    before the directive or at the very end) drops the whole character instead of leaving
    half of it.
    """
    match = _QUEUE_TOKEN.search(text)
    if match is None:
        return None, _js_trim(text)
    # `match[0].indexOf("/queue")` is -1 unless the word is written in lower case.
    start = match.start() + match.group(0).find("/queue")
    args_start = start + len("/queue")
    args = text[args_start:]
    i = _skip_arg_prefix(args)
    consumed = i
    mode: QueueMode | None = None
    debounce_ms: int | None = None
    cap: int | None = None
    drop: QueueDropPolicy | None = None
    reset = False
    raw_mode: str | None = None
    raw_debounce: str | None = None
    raw_cap: str | None = None
    raw_drop: str | None = None
    has_options = False
    while i < len(args):
        token, i = _take_token(args, i)
        if not token:
            break
        lowered = _js_trim(token).lower()
        if lowered in _RESET_WORDS:
            reset = True
            consumed = i
            break
        if lowered.startswith(("debounce:", "debounce=")):
            raw_debounce = _option_value(token)
            debounce_ms = _parse_directive_debounce(raw_debounce)
            has_options = True
        elif lowered.startswith(("cap:", "cap=")):
            raw_cap = _option_value(token)
            cap = _parse_directive_cap(raw_cap)
            has_options = True
        elif lowered.startswith(("drop:", "drop=")):
            raw_drop = _option_value(token)
            drop = normalize_queue_drop_policy(raw_drop)
            has_options = True
        else:
            token_mode = normalize_queue_mode(token)
            if token_mode is None:
                break
            mode = token_mode
            raw_mode = token
        consumed = i
    # `body.slice(0, start)`: start is -1 for a mis-cased directive at the very beginning,
    # which (as in JavaScript) cuts the last character off the text.
    cleaned = _collapse_whitespace(f"{text[:start]} {args[consumed:]}")
    directive = QueueDirective(
        mode,
        debounce_ms,
        cap,
        drop,
        reset,
        raw_mode=raw_mode,
        raw_debounce=raw_debounce,
        raw_cap=raw_cap,
        raw_drop=raw_drop,
        has_options=has_options,
    )
    return directive, cleaned


def _mapping_at(config: Mapping[str, Any] | None, *path: str) -> Mapping[str, Any]:
    node: Any = config
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def resolve_queue_settings(
    *,
    channel: str | None = None,
    inline: QueueDirective | None = None,
    session_mode: str | None = None,
    session_debounce_ms: float | None = None,
    session_cap: float | None = None,
    session_drop: str | None = None,
    config: Mapping[str, Any] | None = None,
    channel_default_debounce_ms: float | None = None,
) -> QueueSettings:
    """A session's queue settings (settings.ts, ``resolveQueueSettings``, baseline).

    ``config`` is an OpenClaw config (``{"messages": {"queue": {...}}}``); ``channel`` is
    matched trimmed and lower-cased in ``byChannel`` / ``debounceMsByChannel``. Each field
    takes the first usable value:

    - mode: ``inline.mode`` → ``session_mode`` → ``byChannel[channel]`` → ``queue.mode`` →
      ``collect``;
    - debounce: ``inline.debounce_ms`` → ``session_debounce_ms`` →
      ``debounceMsByChannel[channel]`` → ``channel_default_debounce_ms`` (the channel plugin's
      default) → ``queue.debounceMs`` → 1000; at least 0;
    - cap: ``inline.cap`` → ``session_cap`` → ``queue.cap`` → 20; floored, at least 1;
    - drop: ``inline.drop`` → ``session_drop`` → ``queue.drop`` → ``summarize``.

    Mode and drop strings go through the normalizers (unknown words are skipped); numbers must
    be finite (the debounce is rounded to whole milliseconds). An inline directive with
    ``reset`` ignores the ``session_*`` values (the directive clears them upstream).
    """
    queue_config = _mapping_at(config, "messages", "queue")
    channel_key = _js_trim(channel).lower() if isinstance(channel, str) else ""
    if inline is not None and inline.reset:
        session_mode = session_drop = None
        session_debounce_ms = session_cap = None

    by_channel = _mapping_at(queue_config, "byChannel")
    mode: QueueMode = (
        (inline.mode if inline is not None else None)
        or normalize_queue_mode(session_mode)
        or (normalize_queue_mode(by_channel.get(channel_key)) if channel_key else None)
        or normalize_queue_mode(queue_config.get("mode"))
        or DEFAULT_QUEUE_MODE
    )

    debounce_by_channel = _mapping_at(queue_config, "debounceMsByChannel")
    debounce_candidates = (
        inline.debounce_ms if inline is not None else None,
        session_debounce_ms,
        debounce_by_channel.get(channel_key) if channel_key else None,
        channel_default_debounce_ms,
        queue_config.get("debounceMs"),
    )
    debounce = next(
        (v for v in map(_finite_number, debounce_candidates) if v is not None),
        DEFAULT_QUEUE_DEBOUNCE_MS,
    )

    cap_candidates = (
        inline.cap if inline is not None else None,
        session_cap,
        queue_config.get("cap"),
    )
    cap = next((v for v in map(_finite_number, cap_candidates) if v is not None), DEFAULT_QUEUE_CAP)

    drop: QueueDropPolicy = (
        (inline.drop if inline is not None else None)
        or normalize_queue_drop_policy(session_drop)
        or normalize_queue_drop_policy(queue_config.get("drop"))
        or DEFAULT_QUEUE_DROP
    )
    return QueueSettings(
        mode=mode,
        debounce_ms=max(0, math.floor(debounce + 0.5)),
        cap=max(1, math.floor(cap)),
        drop=drop,
    )


def build_queue_summary_line(text: str, limit: int = QUEUE_SUMMARY_LINE_LIMIT) -> str:
    """One overflow summary line (queue-helpers.ts, ``buildQueueSummaryLine``): whitespace runs
    collapsed to one space, trimmed, and when longer than ``limit`` UTF-16 units cut to ``limit -
    1`` units, right-trimmed, plus ``…``."""
    cleaned = _collapse_whitespace(text)
    if _utf16_len(cleaned) <= limit:
        return cleaned
    return _utf16_truncate(cleaned, max(0, limit - 1)).rstrip(_JS_WHITESPACE) + "…"


def build_overflow_summary(
    dropped: int,
    lines: Sequence[str],
    *,
    noun: str = "message",
    drop_policy: QueueDropPolicy = "summarize",
) -> str:
    """The overflow notice of a queue that dropped items (queue-helpers.ts,
    ``buildQueueSummaryPrompt``).

    ``[Queue overflow] Dropped <N> <noun>(s) due to cap.`` (singular for one), then, when there
    are summary lines, ``Summary:`` and ``- <line>`` each, joined with ``\\n``. Returns ``""``
    when nothing was dropped, or when ``drop_policy`` (the queue's drop policy, compared
    exactly as given) is not ``"summarize"``: the ``old`` and ``new`` policies drop items
    silently.
    """
    if drop_policy != "summarize" or dropped <= 0:
        return ""
    plural = "" if dropped == 1 else "s"
    out = [f"[Queue overflow] Dropped {dropped} {noun}{plural} due to cap."]
    if lines:
        out.append("Summary:")
        out.extend(f"- {line}" for line in lines)
    return "\n".join(out)


def build_collect_prompt(
    prompts: Sequence[str],
    *,
    title: str = COLLECT_TITLE_MESSAGES,
    overflow_summary: str | None = None,
) -> str:
    """One prompt for a batch of queued messages (queue-helpers.ts, ``buildCollectPrompt``).

    Blocks joined with ``\\n\\n``: the title, the overflow summary when given (non-empty), then
    for each prompt ``---\\nQueued #<i>\\n<prompt>`` (1-based, the block trimmed).
    """
    blocks = [title]
    if overflow_summary:
        blocks.append(overflow_summary)
    blocks.extend(
        _js_trim(f"---\nQueued #{index}\n{prompt}") for index, prompt in enumerate(prompts, 1)
    )
    return "\n\n".join(blocks)


@dataclass(frozen=True, slots=True)
class MessageRoute:
    """Where a message came from and where its reply goes: channel, recipient, account,
    thread (queue-helpers.ts, ``hasCrossChannelItems``;
    enqueue.ts)."""

    channel: str | None = None
    to: str | None = None
    account_id: str | None = None
    thread_id: str | int | None = None

    @property
    def is_empty(self) -> bool:
        """True when the route names nothing (no channel, recipient, account or thread)."""
        return (
            not self.channel and not self.to and not self.account_id and _no_thread(self.thread_id)
        )

    @property
    def key(self) -> str | None:
        """``channel|to|account|thread`` when channel and recipient are known, else None
        (``hasCrossChannelItems``)."""
        if not self.channel or not self.to:
            return None
        thread = "" if _no_thread(self.thread_id) else str(self.thread_id)
        return "|".join([self.channel, self.to, self.account_id or "", thread])


def _no_thread(thread_id: str | int | None) -> bool:
    return thread_id is None or thread_id == ""


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A message waiting for a turn (enqueue.ts, ``enqueueFollowupRun``): its prompt, inbound
    message id, origin route, optional overflow summary line (defaults to the prompt), and enqueue
    time."""

    prompt: str
    message_id: str | None = None
    channel: str | None = None
    to: str | None = None
    account_id: str | None = None
    thread_id: str | int | None = None
    summary_line: str | None = None
    enqueued_at_ms: int = 0

    @property
    def route(self) -> MessageRoute:
        """The message's origin route."""
        return MessageRoute(self.channel, self.to, self.account_id, self.thread_id)

    @property
    def routing_key(self) -> str | None:
        """``channel|to|account|thread`` (``hasCrossChannelItems``), or None when the channel or the
        recipient is unknown."""
        return self.route.key

    def _routing(self) -> tuple[object, ...]:
        return (self.channel, self.to, self.account_id, self.thread_id)


class DedupeCache:
    """A bounded recently-seen set with a TTL (OpenClaw ``createDedupeCache``; backs the
    recent-id cache of ``enqueueFollowupRun`` and the inbound dedupe of inbound-dedupe.ts).

    Keys expire ``ttl_ms`` after they were last seen (``ttl_ms <= 0``: never); beyond
    ``max_keys`` the least recently seen are forgotten (``max_keys <= 0``: nothing is kept).
    ``now_ms`` supplies the clock in milliseconds (default: wall clock).
    """

    __slots__ = ("_entries", "_now_ms", "max_keys", "ttl_ms")

    def __init__(
        self, *, ttl_ms: float, max_keys: int, now_ms: Callable[[], float] | None = None
    ) -> None:
        self.ttl_ms = max(0.0, ttl_ms)
        self.max_keys = max(0, math.floor(max_keys))
        self._now_ms = now_ms or _now_ms_wall
        self._entries: OrderedDict[str, float] = OrderedDict()

    def _fresh(self, seen_at: float | None, now: float) -> bool:
        return seen_at is not None and (self.ttl_ms <= 0 or now - seen_at < self.ttl_ms)

    def check(self, key: str | None) -> bool:
        """True when ``key`` was seen within the TTL (a duplicate). Either way ``key`` is
        recorded as seen now; empty keys are never duplicates and are not recorded."""
        if not key:
            return False
        now = self._now_ms()
        duplicate = self._fresh(self._entries.get(key), now)
        self._entries.pop(key, None)
        self._entries[key] = now
        if not duplicate:
            self._prune(now)
        return duplicate

    def peek(self, key: str | None) -> bool:
        """Like :meth:`check` but records nothing."""
        if not key:
            return False
        return self._fresh(self._entries.get(key), self._now_ms())

    def _prune(self, now: float) -> None:
        if self.ttl_ms > 0:
            cutoff = now - self.ttl_ms
            for stale in [k for k, seen_at in self._entries.items() if seen_at < cutoff]:
                del self._entries[stale]
        if self.max_keys <= 0:
            self._entries.clear()
        while len(self._entries) > self.max_keys:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forgets every key."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_CROSS: Final = object()


def _collect_key(item: QueuedMessage) -> str | object | None:
    """The collect identity of an item: None for an item with no route at all (it joins any
    batch), its routing key, or ``_CROSS`` when it has a partial route that cannot be keyed."""
    route = item.route
    if route.is_empty:
        return None
    return route.key if route.key is not None else _CROSS


class FollowupQueue:
    """A session's queue of messages waiting for a turn (enqueue.ts,
    drain.ts ``scheduleFollowupDrain``).

    ``settings`` gives the cap and drop policy (and the mode and debounce a drain loop reads).
    :meth:`offer`/:meth:`enqueue` reject an item whose trimmed message id is already queued with
    the same route, or was queued under this ``queue_key`` within the last 5 minutes (the
    recent-id cache; share one :class:`DedupeCache` across queues with ``recent_message_ids``);
    with ``dedupe="prompt"`` an item without an id is rejected when the same prompt with the
    same route is queued; ``dedupe="none"`` disables both. A full queue drops per policy; with
    ``summarize`` each dropped item leaves a summary line for :meth:`take_overflow_summary`
    (``noun`` is ``message``, or ``announce`` for an announce queue). ``now_ms`` is the clock.
    """

    def __init__(
        self,
        settings: QueueSettings,
        *,
        dedupe: QueueDedupeMode = "message-id",
        now_ms: Callable[[], float] | None = None,
        queue_key: str = "",
        noun: str = "message",
        recent_message_ids: DedupeCache | None = None,
    ) -> None:
        self.settings = settings
        self.dedupe: QueueDedupeMode = dedupe
        self.queue_key = queue_key
        self.noun = noun
        self._now_ms = now_ms or _now_ms_wall
        # `is None`, not `or`: an empty cache is falsy (it has __len__).
        self._recent = (
            recent_message_ids
            if recent_message_ids is not None
            else DedupeCache(
                ttl_ms=RECENT_MESSAGE_IDS_TTL_MS,
                max_keys=RECENT_MESSAGE_IDS_MAX_KEYS,
                now_ms=self._now_ms,
            )
        )
        self._items: list[QueuedMessage] = []
        self._dropped_count = 0
        self._summary_lines: list[str] = []
        #: Clock value (ms) of the last accepted-or-considered enqueue; 0 before any.
        self.last_enqueued_at_ms: float = 0.0
        #: The most recently queued item (its route serves a turn that has no item of its own).
        self.last_item: QueuedMessage | None = None

    def _recent_key(self, item: QueuedMessage) -> str | None:
        message_id = _js_trim(item.message_id) if item.message_id else ""
        if not message_id:
            return None
        thread = "" if item.thread_id is None else str(item.thread_id)
        parts = ["queue", self.queue_key, item.channel or "", item.to or "", item.account_id or ""]
        return json.dumps([*parts, thread, message_id], ensure_ascii=False, separators=(",", ":"))

    def _already_queued(self, item: QueuedMessage) -> bool:
        message_id = _js_trim(item.message_id) if item.message_id else ""
        routing = item._routing()
        if message_id:
            return any(
                queued.message_id is not None
                and _js_trim(queued.message_id) == message_id
                and queued._routing() == routing
                for queued in self._items
            )
        if self.dedupe != "prompt":
            return False
        return any(q.prompt == item.prompt and q._routing() == routing for q in self._items)

    def offer(self, item: QueuedMessage) -> EnqueueResult:
        """Adds ``item`` unless it is a duplicate or the queue is full under ``drop="new"``
        (``applyQueueDropPolicy``, ``enqueueFollowupRun``); says which."""
        recent_key = self._recent_key(item) if self.dedupe != "none" else None
        if recent_key is not None and self._recent.peek(recent_key):
            return "duplicate"
        if self.dedupe != "none" and self._already_queued(item):
            return "duplicate"
        # Upstream stamps the time before the cap check, so a rejected item still restarts
        # the debounce window.
        self.last_enqueued_at_ms = self._now_ms()
        cap = self.settings.cap
        if cap > 0 and len(self._items) >= cap:
            if self.settings.drop == "new":
                return "dropped-new"
            drop_count = len(self._items) - cap + 1
            dropped, self._items = self._items[:drop_count], self._items[drop_count:]
            if self.settings.drop == "summarize":
                for old in dropped:
                    self._dropped_count += 1
                    line = _js_trim(old.summary_line) if old.summary_line else ""
                    self._summary_lines.append(
                        build_queue_summary_line(line or _js_trim(old.prompt))
                    )
                # Only the newest `cap` lines are kept so the summary stays bounded.
                del self._summary_lines[: max(0, len(self._summary_lines) - cap)]
        self._items.append(item)
        self.last_item = item
        if recent_key is not None:
            self._recent.check(recent_key)
        return "queued"

    def enqueue(self, item: QueuedMessage) -> bool:
        """:meth:`offer`, reduced to whether the item was queued."""
        return self.offer(item) == "queued"

    def pop_next(self) -> QueuedMessage | None:
        """Removes and returns the oldest item (FIFO), or None when empty."""
        return self._items.pop(0) if self._items else None

    def drain_batch(self) -> list[QueuedMessage]:
        """Removes and returns every queued item, oldest first (a collect batch,
        ``buildCollectPrompt``)."""
        batch, self._items = self._items, []
        return batch

    @property
    def items(self) -> tuple[QueuedMessage, ...]:
        """The queued items, oldest first."""
        return tuple(self._items)

    @property
    def has_overflow(self) -> bool:
        """Whether a dropped-items summary is pending."""
        return self._dropped_count > 0

    def take_overflow_summary(self) -> str | None:
        """The pending overflow notice (:func:`build_overflow_summary` with this queue's noun),
        clearing it; None when nothing was dropped (``buildQueueSummaryPrompt``)."""
        if self._dropped_count <= 0:
            return None
        summary = build_overflow_summary(self._dropped_count, self._summary_lines, noun=self.noun)
        self._dropped_count = 0
        self._summary_lines = []
        return summary

    def can_collect(self, items: Sequence[QueuedMessage] | None = None) -> bool:
        """Whether ``items`` (default: the queue) may be batched into one turn
        (``hasCrossChannelItems``).

        False when two items have different routing keys, or an item has a partial route that
        cannot be keyed (a channel without a recipient, say). Items with no route at all fit
        any batch.
        """
        first_key: str | None = None
        for item in self._items if items is None else items:
            key = _collect_key(item)
            if key is _CROSS:
                return False
            if isinstance(key, str):
                if first_key is not None and key != first_key:
                    return False
                first_key = first_key or key
        return True

    def clear(self) -> None:
        """Drops every item and any pending overflow summary (the recent-id cache stays)."""
        self._items = []
        self._dropped_count = 0
        self._summary_lines = []

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[QueuedMessage]:
        return iter(tuple(self._items))


class InboundDedupe:
    """Drops redelivered inbound messages (inbound-dedupe.ts, ``shouldSkipDuplicateInbound``).

    :meth:`build_key` derives a message's identity; :meth:`check_and_remember` says whether it
    is new and remembers it for ``ttl_ms`` (20 minutes; at most ``max_keys`` = 5000 keys).
    """

    __slots__ = ("_cache",)

    def __init__(
        self,
        *,
        ttl_ms: float = INBOUND_DEDUPE_TTL_MS,
        max_keys: int = INBOUND_DEDUPE_MAX_KEYS,
        now_ms: Callable[[], float] | None = None,
    ) -> None:
        self._cache = DedupeCache(ttl_ms=ttl_ms, max_keys=max_keys, now_ms=now_ms)

    @staticmethod
    def build_key(
        *,
        originating_channel: str | None = None,
        provider: str | None = None,
        surface: str | None = None,
        message_sid: str | None = None,
        originating_to: str | None = None,
        to: str | None = None,
        from_: str | None = None,
        session_key: str | None = None,
        account_id: str | None = None,
        thread_id: str | int | None = None,
    ) -> str | None:
        """The dedupe key of an inbound message (``buildInboundDedupeKey``), or None when it cannot
        be deduplicated.

        provider = lower-cased trimmed first non-None of ``originating_channel``, ``provider``,
        ``surface``; message id = trimmed ``message_sid``; peer = first non-None of
        ``originating_to``, ``to``, ``from_``, ``session_key``. Any of the three empty → None.
        Key = ``provider|account|session|peer|thread|message id`` with empty parts dropped.
        """
        raw_provider = next(
            (v for v in (originating_channel, provider, surface) if v is not None), ""
        )
        normalized_provider = _js_trim(raw_provider).lower()
        message_id = _js_trim(message_sid) if message_sid is not None else ""
        if not normalized_provider or not message_id:
            return None
        peer = next((v for v in (originating_to, to, from_, session_key) if v is not None), "")
        if not peer:
            return None
        parts = [
            normalized_provider,
            _js_trim(account_id) if account_id is not None else "",
            _js_trim(session_key) if session_key is not None else "",
            peer,
            "" if thread_id is None else str(thread_id),
            message_id,
        ]
        return "|".join(part for part in parts if part)

    @classmethod
    def key_from_context(cls, ctx: Mapping[str, Any]) -> str | None:
        """:meth:`build_key` for an OpenClaw message context (``OriginatingChannel``,
        ``Provider``, ``Surface``, ``MessageSid``, ``OriginatingTo``, ``To``, ``From``,
        ``SessionKey``, ``AccountId``, ``MessageThreadId``); non-string values count as
        missing (the thread id may be a number)."""

        def text(name: str) -> str | None:
            value = ctx.get(name)
            return value if isinstance(value, str) else None

        thread = ctx.get("MessageThreadId")
        return cls.build_key(
            originating_channel=text("OriginatingChannel"),
            provider=text("Provider"),
            surface=text("Surface"),
            message_sid=text("MessageSid"),
            originating_to=text("OriginatingTo"),
            to=text("To"),
            from_=text("From"),
            session_key=text("SessionKey"),
            account_id=text("AccountId"),
            thread_id=thread
            if isinstance(thread, (str, int)) and not isinstance(thread, bool)
            else None,
        )

    def check_and_remember(self, key: str | None) -> bool:
        """True when the message is new (it is remembered now); False for a redelivery seen
        within the TTL (seeing it again extends its lifetime). A None key is always new."""
        return not self._cache.check(key)

    def clear(self) -> None:
        """Forgets every remembered message."""
        self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


def resolve_inbound_debounce_ms(
    *,
    channel: str | None = None,
    override: float | None = None,
    config: Mapping[str, Any] | None = None,
) -> int:
    """How long to wait for more text from the same sender before dispatching (inbound-debounce.ts,
    ``resolveInboundDebounceMs``).

    First finite number of ``override``, ``messages.inbound.byChannel[channel]`` (channel as
    given), ``messages.inbound.debounceMs``; truncated and at least 0; default 0 (off). The
    caller applies it to text-only messages; media and control commands flush immediately.
    """
    inbound = _mapping_at(config, "messages", "inbound")
    by_channel = _mapping_at(inbound, "byChannel")
    candidates = (
        override,
        by_channel.get(channel) if channel is not None else None,
        inbound.get("debounceMs"),
    )
    for candidate in candidates:
        value = _finite_number(candidate)
        if value is not None:
            return max(0, math.trunc(value))
    return DEFAULT_INBOUND_DEBOUNCE_MS
