"""Checking the messages of a turn before :meth:`~clawctx.ContextPipeline.record_turn` writes
them: every one must be a pi message (pi-mono 0.58.3 `packages/ai/src/types.ts`: ``user``,
``assistant``, ``toolResult``, and the coding agent's ``bashExecution`` / ``custom``), so that a
provider's reply in its own shape is refused instead of written to the session unchecked.

A provider reply (an SDK object such as anthropic's ``Message`` or openai's ``ChatCompletion``,
a stream, or a reply body as a dict) is not a pi message: it becomes one through
``clawctx.parse_response(model, reply)``. The refusal names that function;
:func:`check_turn_messages` is the one place where replies are told apart from pi messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from clawctx.errors import TurnMessageError
from clawctx.interop import _common as c
from clawctx.interop import _pi_messages as pi_messages

__all__ = ["TurnMessageError", "check_turn_messages"]

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
