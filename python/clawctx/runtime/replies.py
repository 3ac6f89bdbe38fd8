"""Silent replies and heartbeat prompts (OpenClaw 2026.3.13 `src/auto-reply/tokens.ts` and
`src/auto-reply/heartbeat.ts`).

``NO_REPLY`` is the token a model answers with when a turn needs no user-visible reply
(tokens.ts, ``SILENT_REPLY_TOKEN``); :func:`is_silent_reply_text` decides whether a whole reply is
that token, and :func:`is_silent_reply_prefix_text` keeps a streaming surface from flashing the
first letters of it. The heartbeat helpers choose the user message of a heartbeat turn
(heartbeat.ts, ``resolveHeartbeatPrompt``): the configured or
default prompt, a cron-reminder prompt, or the exec-completion prompt, and
:func:`is_heartbeat_content_effectively_empty` says when ``HEARTBEAT.md`` has nothing to act
on, so the heartbeat model call can be skipped.

Token stripping for ``HEARTBEAT_OK`` replies and transcript pruning (heartbeat.ts,
heartbeat-runner.ts) live in :mod:`clawctx.history.heartbeat`; the constants used here are imported
from there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from clawctx._js import JS_WHITESPACE as _JS_WHITESPACE
from clawctx._js import JS_WHITESPACE_CLASS
from clawctx._js import js_trim as _js_trim
from clawctx.history.heartbeat import DEFAULT_HEARTBEAT_PROMPT, HEARTBEAT_TOKEN

__all__ = [
    "CRON_EVENT_EMPTY_PROMPT",
    "CRON_EVENT_EMPTY_PROMPT_INTERNAL",
    "EXEC_EVENT_PROMPT",
    "SILENT_REPLY_TOKEN",
    "build_cron_event_prompt",
    "build_exec_event_prompt",
    "heartbeat_prompt_from_config",
    "is_heartbeat_content_effectively_empty",
    "is_silent_reply_prefix_text",
    "is_silent_reply_text",
    "resolve_heartbeat_prompt",
    "strip_silent_token",
]

#: tokens.ts, SILENT_REPLY_TOKEN: the reply a model gives when nothing should be sent.
SILENT_REPLY_TOKEN: Final = "NO_REPLY"

#: src/infra/heartbeat-events-filter.ts, buildCronEventPrompt: the cron prompt when the pending cron
#: events carry no text.
CRON_EVENT_EMPTY_PROMPT: Final = (
    "A scheduled cron event was triggered, but no event content was found. "
    f"Reply {HEARTBEAT_TOKEN}."
)
#: buildCronEventPrompt (not-delivering variant): the spec names only the reminder variant's
#: wording; this text is the one OpenClaw's baseline builds use for an empty event list.
CRON_EVENT_EMPTY_PROMPT_INTERNAL: Final = (
    "A scheduled cron event was triggered, but no event content was found. "
    f"Handle this internally and reply {HEARTBEAT_TOKEN} when nothing needs user-facing "
    "follow-up."
)
_CRON_EVENT_HEADER: Final = "A scheduled reminder has been triggered. The reminder content is:"
_CRON_EVENT_RELAY: Final = "Please relay this reminder to the user in a helpful and friendly way."
_CRON_EVENT_INTERNAL: Final = (
    "Handle this reminder internally. Do not relay it to the user unless explicitly requested."
)

#: heartbeat-events-filter.ts, buildExecEventPrompt: the start of the exec-event prompt, exactly as
#: far as the spec gives it (it ends with "…" there). :func:`build_exec_event_prompt` appends the
#: delivery instruction.
EXEC_EVENT_PROMPT: Final = (
    "An async command you ran earlier has completed. "
    "The result is shown in the system messages above."
)
# Not pinned by the spec: the continuations seen in OpenClaw transcripts of the baseline era.
_EXEC_EVENT_RELAY: Final = (
    "Please relay the command output to the user in a helpful way. If the command succeeded, "
    "share the relevant output. If it failed, explain what went wrong."
)
_EXEC_EVENT_INTERNAL: Final = (
    "Handle the result internally. Do not relay it to the user unless explicitly requested."
)

_JS_S: Final = JS_WHITESPACE_CLASS

# heartbeat.ts, isHeartbeatContentEffectivelyEmpty: lines that carry no task. `#` runs need a
# following space or the line end (`#TODO` is content); a list marker may hold only an empty or
# ticked checkbox.
_ATX_HEADER: Final = re.compile(rf"#+(?:{_JS_S}|\Z)")
_EMPTY_LIST_ITEM: Final = re.compile(rf"[-*+]{_JS_S}*(?:\[[{_JS_WHITESPACE}Xx]?\]{_JS_S}*)?\Z")
_NOT_TOKEN_CHAR: Final = re.compile(r"[^A-Z_]")


def is_silent_reply_text(
    text: str | None, token: str = SILENT_REPLY_TOKEN, *, ignore_case: bool = False
) -> bool:
    """Whether a reply is the silent token and nothing else (tokens.ts, ``isSilentReplyText``,
    baseline).

    Surrounding whitespace is allowed; anything else (``Done. NO_REPLY``) makes the reply
    substantive. The comparison is case-sensitive; ``ignore_case=True`` gives the **[later]**
    case-insensitive match.
    """
    if not text:
        return False
    pattern = rf"{_JS_S}*{re.escape(token)}{_JS_S}*\Z"
    return re.match(pattern, text, re.IGNORECASE if ignore_case else 0) is not None


def strip_silent_token(text: str, token: str = SILENT_REPLY_TOKEN) -> str:
    """Removes a trailing silent token from mixed text (tokens.ts, ``stripSilentToken``).

    The token counts when it ends the text (trailing whitespace allowed) and follows the start,
    whitespace or a run of ``*``; it is removed with that separator and the rest is trimmed.
    An empty result means the whole reply is silent.
    """
    pattern = rf"(?:\A|{_JS_S}+|\*+){re.escape(token)}{_JS_S}*\Z"
    return _js_trim(re.sub(pattern, "", text, count=1))


def is_silent_reply_prefix_text(text: str | None, token: str = SILENT_REPLY_TOKEN) -> bool:
    """Whether streamed text may be the start of the silent token (tokens.ts,
    ``isSilentReplyPrefixText``).

    True when the text without leading whitespace, upper-cased, contains ``_``, consists only of
    ``A``-``Z`` and ``_``, and starts the (upper-cased) token: ``NO_``, ``no_re``. ``NO`` alone
    is not held back, so ordinary words still stream.
    """
    if not text:
        return False
    normalized = text.lstrip(_JS_WHITESPACE).upper()
    if not normalized or "_" not in normalized:
        return False
    if _NOT_TOKEN_CHAR.search(normalized):
        return False
    return token.upper().startswith(normalized)


def resolve_heartbeat_prompt(configured: str | None) -> str:
    """The user message of a heartbeat turn (heartbeat.ts, ``resolveHeartbeatPrompt``).

    A configured prompt (``agents.defaults.heartbeat.prompt``) wins when it is not blank and is
    used trimmed; otherwise :data:`~clawctx.history.heartbeat.DEFAULT_HEARTBEAT_PROMPT`.
    """
    trimmed = _js_trim(configured) if isinstance(configured, str) else ""
    return trimmed or DEFAULT_HEARTBEAT_PROMPT


def heartbeat_prompt_from_config(config: Mapping[str, Any] | None) -> str:
    """:func:`resolve_heartbeat_prompt` for an OpenClaw config mapping (``resolveHeartbeatPrompt``
    in `src/infra/heartbeat-runner.ts`): reads
    ``agents.defaults.heartbeat.prompt``; anything missing or not a string gives the default."""
    node: Any = config
    for key in ("agents", "defaults", "heartbeat", "prompt"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return resolve_heartbeat_prompt(node if isinstance(node, str) else None)


def is_heartbeat_content_effectively_empty(content: str | None) -> bool:
    """Whether ``HEARTBEAT.md`` has nothing to act on (heartbeat.ts,
    ``isHeartbeatContentEffectivelyEmpty``, baseline).

    ``None`` (the file is missing) is *not* empty: the model still gets its heartbeat.
    Otherwise every line must be blank, an ATX header (``#`` run then whitespace or line end;
    ``#TODO`` is content) or an empty list item (``-``, ``*``, ``+``, optionally with ``[ ]``,
    ``[x]`` or ``[X]``). When this is true the runtime may skip the heartbeat model call.
    """
    if content is None:
        return False
    for line in content.split("\n"):
        trimmed = _js_trim(line)
        if not trimmed:
            continue
        if _ATX_HEADER.match(trimmed) or _EMPTY_LIST_ITEM.match(trimmed):
            continue
        return False
    return True


def build_cron_event_prompt(events: Sequence[str], *, deliver_to_user: bool = True) -> str:
    """The heartbeat user message when cron events are pending (``buildCronEventPrompt``).

    The events are joined with ``\\n`` and trimmed. With text, the reminder is quoted after a
    blank line and followed by the relay instruction (``deliver_to_user=False``: the
    handle-internally instruction). Without text, :data:`CRON_EVENT_EMPTY_PROMPT` (or
    :data:`CRON_EVENT_EMPTY_PROMPT_INTERNAL` when not delivering).
    """
    event_text = _js_trim("\n".join(events))
    if not event_text:
        return CRON_EVENT_EMPTY_PROMPT if deliver_to_user else CRON_EVENT_EMPTY_PROMPT_INTERNAL
    instruction = _CRON_EVENT_RELAY if deliver_to_user else _CRON_EVENT_INTERNAL
    return f"{_CRON_EVENT_HEADER}\n\n{event_text}\n\n{instruction}"


def build_exec_event_prompt(*, deliver_to_user: bool = True) -> str:
    """The heartbeat user message after an async exec completes (``buildExecEventPrompt``).

    :data:`EXEC_EVENT_PROMPT` plus a space and the delivery instruction. The spec pins only the
    first two sentences; the instructions (relay the output, or handle it internally) are not
    pinned by the spec and follow the wording seen in OpenClaw transcripts.
    """
    instruction = _EXEC_EVENT_RELAY if deliver_to_user else _EXEC_EVENT_INTERNAL
    return f"{EXEC_EVENT_PROMPT} {instruction}"
