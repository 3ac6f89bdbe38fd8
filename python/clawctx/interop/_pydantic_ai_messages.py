"""pydantic-ai ``ModelMessage`` lists <-> clawctx transcripts (``pydantic-ai-slim``, lazily).

A ``ModelRequest`` is split into pi messages part by part: ``SystemPromptPart`` -> ``system``,
``UserPromptPart`` -> ``user`` (text, ``BinaryContent`` images and ``ImageUrl``),
``ToolReturnPart`` -> ``toolResult`` (an outcome other than success is the error flag; a legacy
``RetryPromptPart`` for a tool is read as a retried return), retry feedback that answers no
call -> a ``user`` message carrying the part. A ``ModelResponse`` is one assistant message
(``TextPart``, ``ThinkingPart`` with its signature, ``ToolCallPart``). Writing groups
consecutive request-side messages into one ``ModelRequest``. Part timestamps are kept (pi's
``timestamp``, in ms).

User content pi has no type for (``BinaryContent`` that is not an image, ``DocumentUrl``,
``AudioUrl``, ``VideoUrl``) and response parts (``NativeToolCallPart`` and
``NativeToolReturnPart`` of a provider's built-in tools, ``FilePart``) are carried in place as
their pydantic-ai JSON, bytes as base64 (``clawctx.interop._carried``), and validated back into
the same objects. Written as pydantic-ai, another format's base64 file or audio becomes a
``BinaryContent`` (a plain-text file its UTF-8 bytes), a PDF URL a ``DocumentUrl``; anything else
(server-tool turns of other providers, refusals, file ids) raises ``ValueError``. Other user
content (``CachePoint``, ``TextContent``) and other parts are refused on reading.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c

FORMAT = "pydantic_ai"


def claims(element: object) -> bool:
    return type(element).__module__.startswith("pydantic_ai") and type(element).__name__ in (
        "ModelRequest",
        "ModelResponse",
    )


def _ms(stamp: dt.datetime | None) -> int | None:
    return None if stamp is None else round(stamp.timestamp() * 1000)


def _stamp(ms: Any) -> dt.datetime | None:
    if not isinstance(ms, int | float):
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)


def _with_time(pi: c.JsonDict, stamp: dt.datetime | None) -> c.JsonDict:
    ms = _ms(stamp)
    if ms is not None:
        pi["timestamp"] = ms
    return pi


def _text(content: Any) -> str:
    return content if isinstance(content, str) else str(content)


def _adapters() -> tuple[Any, Any]:
    """Type adapters of user content and response parts that write bytes as base64, as
    pydantic-ai's own ``ModelMessagesTypeAdapter`` does."""
    from pydantic import ConfigDict, TypeAdapter
    from pydantic_ai import messages as m

    config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    return (
        TypeAdapter(m.UserContent, config=config),
        TypeAdapter(m.ModelResponsePart, config=config),
    )


def _dump(adapter: Any, value: Any) -> Any:
    return json.loads(adapter.dump_json(value))


def _load(adapter: Any, block: Mapping[str, Any]) -> Any:
    return adapter.validate_json(json.dumps(block))


def read(messages: Sequence[Any]) -> tuple[list[c.JsonDict], list[int]]:
    from pydantic_ai import messages as m
    from pydantic_core import to_jsonable_python

    user_adapter, part_adapter = _adapters()
    carried_parts = (m.NativeToolCallPart, m.NativeToolReturnPart, m.FilePart)
    carried_content = (m.BinaryContent, m.DocumentUrl, m.AudioUrl, m.VideoUrl)

    out: list[c.JsonDict] = []
    origins: list[int] = []
    for index, message in enumerate(messages):
        if isinstance(message, m.ModelResponse):
            blocks: list[c.JsonDict] = []
            for response_part in message.parts:
                if isinstance(response_part, m.TextPart):
                    blocks.append(c.text_block(response_part.content))
                elif isinstance(response_part, m.ThinkingPart):
                    thinking = {"type": "thinking", "thinking": response_part.content}
                    if response_part.signature is not None:
                        thinking["thinkingSignature"] = response_part.signature
                    if response_part.id is not None:
                        thinking["id"] = response_part.id
                    if response_part.provider_name is not None:
                        thinking["provider"] = response_part.provider_name
                    blocks.append(thinking)
                elif isinstance(response_part, m.ToolCallPart):
                    blocks.append(
                        c.tool_call(
                            response_part.tool_call_id,
                            response_part.tool_name,
                            response_part.args or {},
                        )
                    )
                elif isinstance(response_part, carried_parts):
                    blocks.append(_carried.carry(FORMAT, _dump(part_adapter, response_part)))
                else:
                    kind = type(response_part).__name__
                    raise ValueError(f"element {index}: response part {kind} is not supported")
            pi = c.assistant(blocks, model=message.model_name, provider=message.provider_name)
            out.append(_with_time(pi, message.timestamp))
            origins.append(index)
            continue
        if not isinstance(message, m.ModelRequest):
            raise ValueError(
                f"{c.where(index, message)} is not a pydantic-ai ModelRequest or ModelResponse"
            )
        first = len(out)
        for part in message.parts:
            if isinstance(part, m.SystemPromptPart):
                pi = {"role": "system", "content": part.content}
            elif isinstance(part, m.UserPromptPart):
                if isinstance(part.content, str):
                    pi = {"role": "user", "content": part.content}
                else:
                    user: list[c.JsonDict] = []
                    for item in part.content:
                        if isinstance(item, str):
                            user.append(c.text_block(item))
                        elif isinstance(item, m.BinaryContent) and item.is_image:
                            user.append(c.image_from_bytes(item.data, item.media_type))
                        elif isinstance(item, m.ImageUrl):
                            user.append({"type": "image", "url": item.url})
                        elif isinstance(item, carried_content):
                            user.append(_carried.carry(FORMAT, _dump(user_adapter, item)))
                        else:
                            kind = type(item).__name__
                            raise ValueError(
                                f"element {index}: user content {kind} is not supported"
                            )
                    pi = {"role": "user", "content": user}
            elif isinstance(part, m.ToolReturnPart):
                pi = c.tool_result(
                    part.tool_call_id,
                    part.tool_name,
                    [
                        c.text_block(
                            part.content
                            if isinstance(part.content, str)
                            else part.model_response_str()
                        )
                    ],
                    is_error=part.outcome != "success",
                )
                if part.outcome not in ("success", "failed"):
                    pi["outcome"] = part.outcome
            elif isinstance(part, m.RetryPromptPart) and part.tool_name is not None:
                # Legacy retry of a tool call: pydantic-ai now stores it as a retried return.
                pi = c.tool_result(
                    part.tool_call_id,
                    part.tool_name,
                    [c.text_block(part.model_response())],
                    is_error=True,
                )
                pi["outcome"] = "retried"
            elif isinstance(part, m.RetryPromptPart | m.RetryFeedbackPart):
                # Feedback that answers no call (output validation): sent as a user turn; the
                # part itself rides along as JSON so writing gives it back.
                pi = {
                    "role": "user",
                    "content": part.model_response(),
                    "pydanticPart": to_jsonable_python(part),
                }
            else:
                raise ValueError(
                    f"element {index}: request part {type(part).__name__} is not supported"
                )
            out.append(_with_time(pi, getattr(part, "timestamp", None)))
            origins.append(index)
        if message.instructions is not None and len(out) > first:
            out[first]["instructions"] = message.instructions
    return out, origins


def write(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    from pydantic import TypeAdapter
    from pydantic_ai import messages as m

    out: list[Any] = []
    parts: list[Any] = []
    instructions: str | None = None
    user_adapter, part_adapter = _adapters()

    def stamp(message: Mapping[str, Any]) -> dict[str, Any]:
        when = _stamp(message.get("timestamp"))
        return {} if when is None else {"timestamp": when}

    def flush() -> None:
        nonlocal parts, instructions
        if parts:
            out.append(m.ModelRequest(parts=parts, instructions=instructions))
        parts, instructions = [], None

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            flush()
            response_parts: list[Any] = []
            for block in c.content_blocks(message):
                kind = block.get("type")
                if kind == "text":
                    response_parts.append(m.TextPart(content=block["text"]))
                elif kind == "thinking":
                    response_parts.append(
                        m.ThinkingPart(
                            content=block.get("thinking", ""),
                            signature=block.get("thinkingSignature"),
                            id=block.get("id"),
                            provider_name=block.get("provider"),
                        )
                    )
                elif kind == "toolCall":
                    response_parts.append(
                        m.ToolCallPart(
                            tool_name=str(block.get("name")),
                            args=block.get("arguments"),
                            tool_call_id=str(block.get("id")),
                        )
                    )
                elif _carried.is_carried(block):
                    original = _carried.native(block, FORMAT)
                    if original is None:
                        raise _carried.refuse(block, "pydantic-ai", "in an assistant message")
                    response_parts.append(_load(part_adapter, original))
            out.append(
                m.ModelResponse(
                    parts=response_parts,
                    model_name=message.get("model"),
                    provider_name=message.get("provider"),
                    **stamp(message),
                )
            )
            continue
        if message.get("instructions") is not None:
            instructions = message["instructions"]
        if role in c.SYSTEM_ROLES:
            parts.append(
                m.SystemPromptPart(content=c.blocks_text(message.get("content")), **stamp(message))
            )
        elif role == "toolResult":
            outcome: Any = message.get("outcome") or (
                "failed" if message.get("isError") else "success"
            )
            parts.append(
                m.ToolReturnPart(
                    tool_name=str(message.get("toolName")),
                    content=c.blocks_text(message.get("content")),
                    tool_call_id=str(message.get("toolCallId")),
                    outcome=outcome,
                    **stamp(message),
                )
            )
        elif role in c.USER_SIDE_ROLES:
            content = message.get("content")
            if message.get("pydanticPart") is not None:
                parts.append(
                    TypeAdapter(m.ModelRequestPart).validate_python(message["pydanticPart"])
                )
                continue
            if isinstance(content, str):
                parts.append(m.UserPromptPart(content=content, **stamp(message)))
                continue
            items: list[Any] = []
            for block in c.content_blocks(message):
                if _carried.is_carried(block):
                    items.append(_user_item(block, user_adapter))
                elif block.get("type") == "text":
                    items.append(block["text"])
                elif block.get("type") == "image" and "url" in block:
                    items.append(m.ImageUrl(url=block["url"]))
                elif block.get("type") == "image":
                    items.append(
                        m.BinaryContent(
                            data=c.decode_base64(str(block.get("data", ""))),
                            media_type=str(block.get("mimeType", "")),
                        )
                    )
            parts.append(m.UserPromptPart(content=items, **stamp(message)))
    flush()
    return out


def _user_item(block: Mapping[str, Any], adapter: Any) -> Any:
    """A carried block in user content: as it was, or another format's file or audio."""
    from pydantic_ai import messages as m

    original = _carried.native(block, FORMAT)
    if original is not None:
        return _load(adapter, original)
    meaning = _carried.media(block)
    if meaning is not None and meaning.kind in ("file", "audio"):
        data = meaning.base64_data()
        if data is not None:
            return m.BinaryContent(data=c.decode_base64(data), media_type=meaning.mime)
        if meaning.url is not None and meaning.kind == "file":
            return m.DocumentUrl(url=meaning.url, media_type=meaning.mime)
    raise _carried.refuse(block, "pydantic-ai", "in a user message")


def from_pydantic_ai(messages: Sequence[Any]) -> Transcript:
    """A transcript of pydantic-ai model messages."""
    return Transcript(read(messages)[0])


def to_pydantic_ai(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> list[Any]:
    """pydantic-ai model messages of a transcript, by default valid for every provider
    (``safe``: see :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, None, safe))
