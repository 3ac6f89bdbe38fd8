"""Shared pieces of the converters: pi message builders, strict field checks, JSON arguments.

The pivot of every converter is pi's message shape (pi-mono 0.58.3 `packages/ai/src/types.ts`):
``user`` (text and image blocks), ``assistant`` (text, thinking and toolCall blocks),
``toolResult`` (``toolCallId``, ``toolName``, ``isError``). Instructions that other runtimes
keep among the messages (a system or developer message) become a message of role ``system``
or ``developer``: pi has no such role, so every clawctx transcript pass carries it through
untouched and the provider validator ignores it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from clawctx import _compat, _core

JsonDict = dict[str, Any]

SYSTEM_ROLES = ("system", "developer")
# Roles that convertToLlm sends on the user side (pi-mono 0.58.3
# `packages/coding-agent/src/core/messages.ts`).
USER_SIDE_ROLES = frozenset(
    {"user", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
#: The AgentMessage roles pi's ``convertToLlm`` turns into user messages.
AGENT_ONLY_ROLES = USER_SIDE_ROLES - {"user"}
PI_ROLES = frozenset({"assistant", "toolResult", *USER_SIDE_ROLES, *SYSTEM_ROLES})

_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+);base64,(.*)$", re.DOTALL)


def where(index: int, element: object) -> str:
    return f"element {index} ({type(element).__name__})"


def check_keys(obj: Mapping[str, Any], allowed: Iterable[str], what: str, index: int) -> None:
    """Refuses a field this converter cannot carry, unless it is empty (None, [], {})."""
    allowed_set = set(allowed)
    for key, value in obj.items():
        if key not in allowed_set and value not in (None, [], {}, ""):
            raise ValueError(
                f"element {index}: {what} has field {key!r}, which this converter cannot carry"
            )


def text_block(text: str) -> JsonDict:
    return {"type": "text", "text": text}


def image_from_url(url: str) -> JsonDict:
    """A pi image block: inline data for a base64 data URL, else the URL itself."""
    match = _DATA_URL.match(url)
    if match:
        return {"type": "image", "data": match.group(2), "mimeType": match.group(1)}
    return {"type": "image", "url": url}


def image_to_url(block: Mapping[str, Any]) -> str:
    if "url" in block:
        return str(block["url"])
    return (
        f"data:{block.get('mimeType', 'application/octet-stream')};base64,{block.get('data', '')}"
    )


def image_from_bytes(data: bytes, mime_type: str) -> JsonDict:
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def decode_base64(data: str) -> bytes:
    return base64.b64decode(data)


def parse_arguments(raw: Any) -> tuple[Any, str | None]:
    """Tool-call arguments as pi keeps them (an object) and the original JSON text when
    re-serializing would not give it back (whitespace, key order, or text that is not an object:
    models do emit broken JSON, and it stays as it was)."""
    if not isinstance(raw, str):
        return raw, None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw, None
    if not isinstance(parsed, dict):
        return raw, None
    return parsed, (None if dump_arguments(parsed) == raw else raw)


def dump_arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def arguments_text(block: Mapping[str, Any]) -> str:
    """The JSON text of a toolCall block's arguments, the original text when still accurate."""
    original = block.get("argumentsText")
    arguments = block.get("arguments")
    if isinstance(original, str):
        try:
            if json.loads(original) == arguments:
                return original
        except ValueError:
            pass
    return dump_arguments(arguments if arguments is not None else {})


def tool_call(call_id: str, name: str, raw_arguments: Any, **extra: Any) -> JsonDict:
    arguments, original = parse_arguments(raw_arguments)
    block: JsonDict = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
    if original is not None:
        block["argumentsText"] = original
    block.update({k: v for k, v in extra.items() if v is not None})
    return block


def tool_result(
    call_id: str, name: str, content: list[JsonDict], *, is_error: bool = False
) -> JsonDict:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
    }


def assistant(content: list[JsonDict], **extra: Any) -> JsonDict:
    message: JsonDict = {"role": "assistant", "content": content}
    message.update({k: v for k, v in extra.items() if v is not None})
    return message


def blocks_text(content: Any) -> str:
    """The text of pi content (a string or blocks), text blocks joined without separator."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def call_names(messages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Tool-call id -> tool name over pi messages, for formats whose results carry no name."""
    names: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                names[str(block.get("id"))] = str(block.get("name", ""))
    return names


def content_blocks(message: Mapping[str, Any]) -> list[JsonDict]:
    content = message.get("content")
    if isinstance(content, str):
        return [text_block(content)]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def llm_view(
    messages: _core.Transcript | Iterable[Mapping[str, Any]],
) -> _core.Transcript | list[JsonDict]:
    """pi messages as a model sees them: bash executions, custom messages and summaries become
    user messages (pi's ``convertToLlm``); every other message stays as it is. A transcript
    without such messages is returned unchanged."""
    items = messages if isinstance(messages, _core.Transcript) else list(messages)
    if not any(m.get("role") in AGENT_ONLY_ROLES for m in items):
        return items if isinstance(items, _core.Transcript) else [dict(m) for m in items]
    out: list[JsonDict] = []
    for message in items:
        if message.get("role") in AGENT_ONLY_ROLES:
            out.extend(_core.convert_to_llm([message]).to_list())
        else:
            out.append(dict(message))
    return out


#: APIs that refuse an empty text block (Anthropic: "text content blocks must be non-empty").
_BLANK_TEXT_REFUSED = frozenset({"anthropic-messages", "bedrock-converse-stream"})


def _without_blank_text(
    messages: _core.Transcript | list[JsonDict],
) -> _core.Transcript | list[JsonDict]:
    """The messages as pi-ai's Anthropic converter sends them (anthropic.ts
    ``convertMessages``): text blocks of blank text left out, and a user or assistant message
    left with nothing (a blank string, or no block) left out. Unchanged (the same object) when
    there is none, so a valid history is written as it is."""

    def blank(block: Any) -> bool:
        return (
            isinstance(block, Mapping)
            and block.get("type") == "text"
            and not str(block.get("text") or "").strip()
        )

    def has_blank(message: Mapping[str, Any]) -> bool:
        content = message.get("content")
        if message.get("role") not in ("user", "assistant"):
            return False
        if isinstance(content, str):
            return not content.strip()
        return isinstance(content, list) and any(blank(b) for b in content)

    if not any(has_blank(m) for m in messages):
        return messages
    out: list[JsonDict] = []
    for message in messages:
        if not has_blank(message):
            out.append(dict(message))
            continue
        content = message.get("content")
        kept = [b for b in content if not blank(b)] if isinstance(content, list) else []
        if kept:
            out.append({**message, "content": kept})
    return out


def sendable(
    messages: _core.Transcript | Iterable[Mapping[str, Any]],
    model_api: str | None,
    safe: bool | None,
) -> _core.Transcript | Iterable[Mapping[str, Any]]:
    """``messages`` as a request to ``model_api`` accepts them (the request guard, clawctx's
    safe default, with ids written as stored): unchanged when valid, when ``safe=False``, or
    under :func:`clawctx.compat`. Calls of the last assistant turn left unanswered are the
    caller's turn in flight (its results or the next prompt come after) and are kept as they
    are."""
    messages = llm_view(messages)
    if not _compat.resolve_safe(safe):
        return messages
    if model_api in _BLANK_TEXT_REFUSED:
        messages = _without_blank_text(messages)
    given = messages if isinstance(messages, _core.Transcript) else _core.Transcript(messages)
    guarded, _changes = _core.guard_request(
        given, model_api=model_api, verbatim_ids=True, followed_by_user=True
    )
    return guarded
