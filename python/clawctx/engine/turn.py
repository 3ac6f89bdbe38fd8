"""Checking the messages of a turn before :meth:`~clawctx.ContextPipeline.record_turn` writes
them: every one must be a pi message (pi-mono 0.58.3 `packages/ai/src/types.ts`: ``user``,
``assistant``, ``toolResult``, and the coding agent's ``bashExecution`` / ``custom``), so that a
provider's reply in its own shape is refused instead of written to the session unchecked.

A provider reply (an SDK object such as anthropic's ``Message`` or openai's ``ChatCompletion``,
a stream, or a reply body as a dict) is not a pi message: :func:`read_turn_replies` turns each
into one with ``clawctx.parse_response(model, reply)`` (``record_turn`` does this with the
pipeline's model), and :func:`check_turn_messages` refuses one that is left, naming that
function. These two are the one place where replies are told apart from pi messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from clawctx.errors import ResponseParseError, TurnMessageError
from clawctx.interop import _common as c
from clawctx.interop import _pi_messages as pi_messages
from clawctx.wire.response import aparse_response, parse_response

__all__ = ["TurnMessageError", "check_turn_messages", "read_turn_replies"]

#: Top-level keys of provider reply bodies that a pi message never has: Anthropic's message
#: (``type: "message"``, ``stop_reason``), OpenAI Chat (``choices``, ``object``), Responses
#: (``output``), Gemini (``candidates``).
_REPLY_KEYS = frozenset({"choices", "candidates", "output", "object", "stop_reason"})

#: Provider block types (Anthropic ``tool_use``/``tool_result``, OpenAI ``function_call``...).
_PROVIDER_BLOCKS = frozenset(
    {"tool_use", "tool_result", "function_call", "output_text", "redacted_thinking"}
)

#: Roles ``record_turn`` writes as messages (the summaries are entries of their own).
_TURN_ROLES = c.PI_ROLES - {"branchSummary", "compactionSummary"}


def _reply_hint(index: int) -> str:
    return (
        f"message {index} of the turn looks like a provider reply, not a pi message: turn it "
        "into pi's assistant message with clawctx.parse_response(model, reply) first"
    )


def _looks_like_reply(message: Any) -> bool:
    if not isinstance(message, Mapping):
        return True
    if _REPLY_KEYS & message.keys() or message.get("type") == "message":
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in _PROVIDER_BLOCKS for b in content
    )


def _is_reply(message: Any) -> bool:
    """A provider reply ``parse_response`` reads: an SDK object or stream, an iterable of
    events, or a reply body (a mapping in a provider's shape). Text and bytes are not taken
    for SSE here (a stray string is refused as what it is); pass them to ``parse_response``."""
    if isinstance(message, Mapping):
        return _looks_like_reply(message)
    if isinstance(message, (str, bytes, bytearray, memoryview)):
        return False
    return any(
        hasattr(message, a) for a in ("model_dump", "__iter__", "__aiter__", "get_final_message")
    )


async def read_turn_replies(messages: Iterable[Any], model: Any) -> list[Any]:
    """The turn's messages with each provider reply read into pi's assistant message by
    ``clawctx.parse_response(model, reply)`` (an async stream by ``aparse_response``; a sync
    one is read in a worker thread); pi messages pass as they are. A reply that cannot be read
    raises :class:`TurnMessageError` naming it, before anything is written."""
    if isinstance(messages, (str, bytes, Mapping)):
        raise TurnMessageError("new_messages must be a list of pi messages")
    out: list[Any] = []
    for index, message in enumerate(messages):
        if not _is_reply(message):
            out.append(message)
            continue
        try:
            if hasattr(message, "__aiter__"):
                out.append(await aparse_response(model, message))
            else:
                out.append(await asyncio.to_thread(parse_response, model, message))
        except (ResponseParseError, TypeError) as exc:
            raise TurnMessageError(
                f"message {index} of the turn is a provider reply that cannot be read as "
                f"{getattr(model, 'api', None) or 'the model'}'s: {exc}"
            ) from exc
    return out


def check_turn_messages(messages: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The messages as a list, each checked to be a pi message; raises
    :class:`TurnMessageError` naming the first that is not (a provider reply points to
    ``clawctx.parse_response``). Values JSON cannot hold are refused when the turn is written
    (``Session.append_messages``), still before anything is."""
    if isinstance(messages, (str, bytes, Mapping)):
        raise TurnMessageError("new_messages must be a list of pi messages")
    checked: list[Mapping[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            kind = type(message).__name__
            if any(hasattr(message, a) for a in ("model_dump", "__next__", "__aiter__")):
                raise TurnMessageError(f"{_reply_hint(index)} (got a {kind})")
            raise TurnMessageError(f"message {index} of the turn is a {kind}, not a dict")
        # A reply body can pass for a pi message by its role and blocks (an Anthropic message
        # of text blocks) while its usage and stop reason are in the provider's shape.
        if _looks_like_reply(message):
            raise TurnMessageError(_reply_hint(index))
        role = message.get("role")
        if role not in _TURN_ROLES or not pi_messages.claims(message):
            if role in ("branchSummary", "compactionSummary"):
                raise TurnMessageError(
                    f"message {index} of the turn: {role} messages are synthesized from "
                    "entries; use branch_with_summary() or append_compaction()"
                )
            raise TurnMessageError(
                f"message {index} of the turn is not a pi message (role {role!r}; an assistant "
                "needs a list of text/thinking/toolCall blocks, a toolResult a toolCallId)"
            )
        checked.append(message)
    return checked
