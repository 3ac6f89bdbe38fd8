"""LangChain ``BaseMessage`` lists <-> clawctx transcripts (``langchain-core``, imported lazily).

``SystemMessage`` -> ``system``, ``HumanMessage`` -> ``user`` (text and image blocks),
``AIMessage`` -> ``assistant`` (its text and thinking blocks, then ``tool_calls``; tool-use
blocks that repeat a ``tool_calls`` entry in the content are read once, from ``tool_calls``),
``ToolMessage`` -> ``toolResult`` (``status="error"`` is the error flag). Message ids and names
are kept. Other message classes are refused.

File, audio, video and plain-text blocks (``file``, ``audio``, ``video``, ``text-plain``, also
the older ``source_type`` form), and the provider blocks LangChain keeps in a message's content
(Anthropic ``document``, ``search_result`` and server-tool blocks, ``server_tool_call`` /
``server_tool_result``, Chat ``input_audio``, ``refusal``) have no pi type: they are carried in
place (``clawctx.interop._carried``) and written back as they were. Written as LangChain,
another format's base64 file or audio becomes a standard ``file`` / ``audio`` block (a plain-text
file a ``text-plain`` block, a URL a ``file`` block with ``url``); anything else (server-tool
turns, refusals, file ids) raises ``ValueError``. Other block types are refused on reading.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c
from clawctx.interop._anthropic_messages import SERVER_TOOL_BLOCKS

FORMAT = "langchain"
_CARRIED = (
    "file",
    "audio",
    "video",
    "text-plain",
    "document",
    "search_result",
    "server_tool_call",
    "server_tool_result",
    *SERVER_TOOL_BLOCKS,
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
    "input_audio",
    "refusal",
)


def claims(element: object) -> bool:
    return any(
        k.__module__.startswith("langchain_core.messages") and k.__name__ == "BaseMessage"
        for k in type(element).__mro__
    )


def _blocks(content: Any, index: int, skip_ids: set[str]) -> list[c.JsonDict]:
    if isinstance(content, str):
        return [c.text_block(content)] if content else []
    out: list[c.JsonDict] = []
    for block in content:
        if isinstance(block, str):
            out.append(c.text_block(block))
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(c.text_block(block.get("text", "")))
        elif kind == "thinking":
            thinking = {"type": "thinking", "thinking": block.get("thinking", "")}
            if block.get("signature") is not None:
                thinking["thinkingSignature"] = block["signature"]
            out.append(thinking)
        elif kind == "image_url":
            url = block["image_url"]
            out.append(c.image_from_url(url["url"] if isinstance(url, Mapping) else url))
        elif kind == "image" and (block.get("base64") or block.get("data")):
            data = block.get("base64") or block.get("data")
            out.append({"type": "image", "data": data, "mimeType": block.get("mime_type", "")})
        elif kind == "image" and block.get("url"):
            out.append({"type": "image", "url": block["url"]})
        elif kind in ("tool_use", "tool_call") and block.get("id") in skip_ids:
            continue
        elif kind in _CARRIED:
            out.append(_carried.carry(FORMAT, _carried.jsonable(dict(block))))
        else:
            raise ValueError(f"element {index}: content block {kind!r} is not supported")
    return out


def read(messages: Sequence[Any]) -> tuple[list[c.JsonDict], list[int]]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[c.JsonDict] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        extra: c.JsonDict = {}
        if getattr(message, "id", None):
            extra["id"] = message.id
        if getattr(message, "name", None):
            extra["name"] = message.name
        if isinstance(message, SystemMessage):
            content = message.content
            pi: c.JsonDict = {
                "role": "system",
                "content": content if isinstance(content, str) else _blocks(content, index, set()),
            }
        elif isinstance(message, HumanMessage):
            content = message.content
            pi = {
                "role": "user",
                "content": content if isinstance(content, str) else _blocks(content, index, set()),
            }
        elif isinstance(message, AIMessage):
            ids = {str(call.get("id")) for call in message.tool_calls}
            blocks = _blocks(message.content, index, ids)
            for call in message.tool_calls:
                names[str(call.get("id"))] = call["name"]
                blocks.append(
                    c.tool_call(str(call.get("id")), call["name"], call.get("args") or {})
                )
            pi = c.assistant(blocks)
        elif isinstance(message, ToolMessage):
            content = message.content
            pi = c.tool_result(
                message.tool_call_id,
                names.get(message.tool_call_id, ""),
                _blocks(content, index, set())
                if not isinstance(content, str)
                else [c.text_block(content)],
                is_error=message.status == "error",
            )
        else:
            raise ValueError(
                f"{c.where(index, message)} is not a LangChain message this converter reads "
                "(expected SystemMessage, HumanMessage, AIMessage or ToolMessage)"
            )
        pi.update({f"lc_{k}": v for k, v in extra.items()})
        out.append(pi)
    return out, list(range(len(out)))


def _content(message: Mapping[str, Any]) -> Any:
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = c.content_blocks(message)
    if all(b.get("type") == "text" for b in blocks) and len(blocks) == 1:
        return blocks[0]["text"]
    out: list[Any] = []
    for b in blocks:
        if _carried.is_carried(b):
            out.append(_carried_block(b))
        elif b.get("type") == "text":
            out.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image":
            out.append({"type": "image_url", "image_url": {"url": c.image_to_url(b)}})
        elif b.get("type") == "thinking":
            thinking: c.JsonDict = {"type": "thinking", "thinking": b.get("thinking", "")}
            if b.get("thinkingSignature") is not None:
                thinking["signature"] = b["thinkingSignature"]
            out.append(thinking)
    return out if out else ""


def _carried_block(block: Mapping[str, Any]) -> Any:
    """A carried block: as it was, or another format's file or audio as a standard block."""
    original = _carried.native(block, FORMAT)
    if original is not None:
        return dict(original)
    meaning = _carried.media(block)
    if meaning is not None and meaning.kind in ("file", "audio"):
        out: c.JsonDict | None = None
        if meaning.text is not None:
            out = {"type": "text-plain", "text": meaning.text, "mime_type": "text/plain"}
        elif meaning.data is not None:
            out = {"type": meaning.kind, "base64": meaning.data, "mime_type": meaning.mime}
        elif meaning.url is not None:
            out = {"type": "file", "url": meaning.url, "mime_type": meaning.mime}
        if out is not None:
            if meaning.name:
                out["extras"] = {"filename": meaning.name}
            return out
    raise _carried.refuse(block, "LangChain")


def write(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for message in messages:
        role = message.get("role")
        extra = {k[3:]: v for k, v in message.items() if k in ("lc_id", "lc_name")}
        if role in c.SYSTEM_ROLES:
            out.append(SystemMessage(content=_content(message), **extra))
        elif role == "assistant":
            calls: list[Any] = [
                {
                    "name": b.get("name"),
                    "args": b.get("arguments") if isinstance(b.get("arguments"), dict) else {},
                    "id": b.get("id"),
                    "type": "tool_call",
                }
                for b in c.content_blocks(message)
                if b.get("type") == "toolCall"
            ]
            rest = {
                **message,
                "content": [b for b in c.content_blocks(message) if b.get("type") != "toolCall"],
            }
            out.append(AIMessage(content=_content(rest), tool_calls=calls, **extra))
        elif role == "toolResult":
            out.append(
                ToolMessage(
                    content=_content(message),
                    tool_call_id=str(message.get("toolCallId")),
                    status="error" if message.get("isError") else "success",
                    **extra,
                )
            )
        elif role in c.USER_SIDE_ROLES:
            out.append(HumanMessage(content=_content(message), **extra))
    return out


def from_langchain(messages: Sequence[Any]) -> Transcript:
    """A transcript of LangChain messages."""
    return Transcript(read(messages)[0])


def to_langchain(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> list[Any]:
    """LangChain messages of a transcript, by default valid for every provider (``safe``: see
    :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, None, safe))
