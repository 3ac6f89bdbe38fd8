"""Anthropic Messages (``messages`` plus ``system``) <-> clawctx transcripts.

``system`` becomes a leading ``system`` message. A user message is split the way pi stores it:
each ``tool_result`` block becomes a ``toolResult`` message (``is_error`` kept), the other blocks
one ``user`` message after them; writing joins them back into one user message. Assistant
``text``, ``thinking`` (with its signature), ``redacted_thinking`` and ``tool_use`` blocks map
to pi's text, thinking, redacted thinking and toolCall blocks, in order. ``cache_control`` on a
block is carried.

Blocks pi has no type for are carried in place (``clawctx.interop._carried``): ``document`` and
``search_result`` blocks (also inside a ``tool_result``), ``container_upload``, and the
server-tool blocks of an assistant turn (``server_tool_use`` with its ``*_tool_result``,
``mcp_tool_use`` with ``mcp_tool_result``). A server-tool call and its result stay in the one
assistant message they came in, so ``fit_to_budget`` keeps or drops them together, and pi's
pairing repair (which pairs ``toolCall`` blocks with ``toolResult`` messages) never touches them.
Written as Anthropic, a Chat ``file`` / Responses ``input_file`` / Gemini ``inline_data`` PDF or
plain-text file becomes a ``document`` (in a user message or a tool result); other carried blocks
of other formats (audio, refusals, server tools) are refused with ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c

FORMAT = "anthropic"
# Anthropic's server-tool call and the results of its server tools (anthropic 2.14
# `ContentBlockParam`); LangChain keeps them in a message's content too.
SERVER_TOOL_BLOCKS = (
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
)
# Carried whole, in place (anthropic 2.14 `ContentBlockParam`, and the beta MCP blocks).
_CARRIED = (
    "document",
    "search_result",
    "container_upload",
    *SERVER_TOOL_BLOCKS,
    "tool_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
)
_USER_BLOCKS = ("text", "image", "tool_result", *_CARRIED)
_ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use", "compaction", *_CARRIED)


def claims(element: object) -> bool:
    if not isinstance(element, Mapping) or set(element) - {"role", "content"}:
        return False
    role, content = element.get("role"), element.get("content")
    if role not in ("user", "assistant"):
        return False
    if isinstance(content, str):
        return True
    allowed = _USER_BLOCKS if role == "user" else _ASSISTANT_BLOCKS
    return isinstance(content, list) and all(
        isinstance(b, Mapping)
        and b.get("type") in allowed
        and (b.get("type") != "image" or "source" in b)
        for b in content
    )


def _cache(block: Mapping[str, Any], pi: c.JsonDict) -> c.JsonDict:
    if block.get("cache_control") is not None:
        pi["cacheControl"] = block["cache_control"]
    return pi


def _image(block: Mapping[str, Any], index: int) -> c.JsonDict:
    c.check_keys(block, ("type", "source", "cache_control"), "an image block", index)
    source = block["source"]
    if source.get("type") == "base64":
        pi = {"type": "image", "data": source["data"], "mimeType": source["media_type"]}
    elif source.get("type") == "url":
        pi = {"type": "image", "url": source["url"]}
    else:
        raise ValueError(f"element {index}: image source {source.get('type')!r} is not supported")
    return _cache(block, pi)


def _user_blocks(blocks: Iterable[Mapping[str, Any]], index: int) -> list[c.JsonDict]:
    out: list[c.JsonDict] = []
    for block in blocks:
        if block.get("type") == "text":
            c.check_keys(block, ("type", "text", "cache_control"), "a text block", index)
            out.append(_cache(block, c.text_block(block["text"])))
        elif block.get("type") == "image":
            out.append(_image(block, index))
        elif block.get("type") in _CARRIED:
            out.append(_carried.carry(FORMAT, dict(block)))
        else:
            raise ValueError(f"element {index}: block {block.get('type')!r} is not supported here")
    return out


def read(
    messages: Sequence[Any], system: str | Sequence[Mapping[str, Any]] | None = None
) -> tuple[list[c.JsonDict], list[int]]:
    out: list[c.JsonDict] = []
    origins: list[int] = []
    if system is not None and system != "" and system != []:
        content = system if isinstance(system, str) else _user_blocks(system, -1)
        out.append({"role": "system", "content": content})
        origins.append(-1)
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        if not claims(message):
            raise ValueError(
                f"{c.where(index, message)} is not an Anthropic message (expected a dict with "
                f"role user/assistant and content a string or blocks of {_USER_BLOCKS} / "
                f"{_ASSISTANT_BLOCKS})"
            )
        content = message["content"]
        if message["role"] == "user":
            if isinstance(content, str):
                out.append({"role": "user", "content": content})
                origins.append(index)
                continue
            rest = []
            for block in content:
                if block.get("type") != "tool_result":
                    rest.append(block)
                    continue
                c.check_keys(
                    block,
                    ("type", "tool_use_id", "content", "is_error", "cache_control"),
                    "a tool_result block",
                    index,
                )
                inner = block.get("content", "")
                result_blocks = (
                    [c.text_block(inner)] if isinstance(inner, str) else _user_blocks(inner, index)
                )
                call_id = block["tool_use_id"]
                result = c.tool_result(
                    call_id,
                    names.get(call_id, ""),
                    result_blocks,
                    is_error=bool(block.get("is_error")),
                )
                out.append(_cache(block, result))
                origins.append(index)
            if rest or not content:
                out.append({"role": "user", "content": _user_blocks(rest, index)})
                origins.append(index)
            continue
        blocks: list[c.JsonDict] = []
        for block in [c.text_block(content)] if isinstance(content, str) else content:
            kind = block.get("type")
            if kind == "text":
                c.check_keys(block, ("type", "text", "cache_control"), "a text block", index)
                blocks.append(_cache(block, c.text_block(block["text"])))
            elif kind == "thinking":
                c.check_keys(block, ("type", "thinking", "signature"), "a thinking block", index)
                thinking = {"type": "thinking", "thinking": block["thinking"]}
                if block.get("signature") is not None:
                    thinking["thinkingSignature"] = block["signature"]
                blocks.append(thinking)
            elif kind == "redacted_thinking":
                c.check_keys(block, ("type", "data"), "a redacted_thinking block", index)
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": "",
                        "thinkingSignature": block["data"],
                        "redacted": True,
                    }
                )
            elif kind == "compaction":
                # Server compaction (beta): pi's compaction block, the original under `raw`
                # (see `clawctx.wire.parse_response`).
                blocks.append(
                    {
                        "type": "compaction",
                        "api": "anthropic-messages",
                        "content": block.get("content"),
                        "raw": dict(block),
                    }
                )
            elif kind in _CARRIED:
                blocks.append(_carried.carry(FORMAT, dict(block)))
            else:
                c.check_keys(
                    block,
                    ("type", "id", "name", "input", "cache_control"),
                    "a tool_use block",
                    index,
                )
                names[block["id"]] = block["name"]
                blocks.append(
                    _cache(block, c.tool_call(block["id"], block["name"], block["input"]))
                )
        out.append(c.assistant(blocks))
        origins.append(index)
    return out, origins


def _block_cache(pi: Mapping[str, Any], block: c.JsonDict) -> c.JsonDict:
    if pi.get("cacheControl") is not None:
        block["cache_control"] = pi["cacheControl"]
    return block


def _document(block: Mapping[str, Any], where: str) -> c.JsonDict:
    """A carried block of another format as a ``document``, where it is a PDF or text file."""
    meaning = _carried.media(block)
    source: c.JsonDict | None = None
    if meaning is not None and meaning.kind == "file":
        text = meaning.document_text()
        if text is not None:
            source = {"type": "text", "media_type": "text/plain", "data": text}
        elif meaning.mime == "application/pdf" and meaning.data is not None:
            source = {"type": "base64", "media_type": "application/pdf", "data": meaning.data}
        elif meaning.mime == "application/pdf" and meaning.url is not None:
            source = {"type": "url", "url": meaning.url}
    if source is None or meaning is None:
        raise _carried.refuse(block, "Anthropic", where)
    document: c.JsonDict = {"type": "document", "source": source}
    if meaning.name:
        document["title"] = meaning.name
    return document


def _write_blocks(
    blocks: Iterable[Mapping[str, Any]], where: str = "in a user message"
) -> list[c.JsonDict]:
    out: list[c.JsonDict] = []
    for block in blocks:
        if _carried.is_carried(block):
            original = _carried.native(block, FORMAT)
            out.append(original if original is not None else _document(block, where))
        elif block.get("type") == "text":
            out.append(_block_cache(block, {"type": "text", "text": block["text"]}))
        elif block.get("type") == "image":
            if "url" in block:
                source: c.JsonDict = {"type": "url", "url": block["url"]}
            else:
                source = {
                    "type": "base64",
                    "media_type": block.get("mimeType"),
                    "data": block.get("data"),
                }
            out.append(_block_cache(block, {"type": "image", "source": source}))
    return out


def write(messages: Iterable[Mapping[str, Any]]) -> tuple[Any, list[c.JsonDict]]:
    """``(system, messages)``: system messages (anywhere) are joined into ``system``."""
    system: list[Any] = []
    out: list[c.JsonDict] = []
    pending: list[c.JsonDict] = []  # tool_result blocks waiting for their user message
    for message in messages:
        role = message.get("role")
        if role in c.SYSTEM_ROLES:
            content = message.get("content")
            system.append(
                content if isinstance(content, str) else _write_blocks(c.content_blocks(message))
            )
            continue
        if role == "toolResult":
            inner = c.content_blocks(message)
            written: Any = (
                inner[0]["text"]
                if len(inner) == 1 and inner[0].get("type") == "text"
                else _write_blocks(inner, "in a tool result")
            )
            block: c.JsonDict = {
                "type": "tool_result",
                "tool_use_id": message.get("toolCallId"),
                "content": written,
            }
            if message.get("isError"):
                block["is_error"] = True
            pending.append(_block_cache(message, block))
            continue
        if role in c.USER_SIDE_ROLES:
            content = message.get("content")
            if pending and isinstance(content, list):
                out.append({"role": "user", "content": pending + _write_blocks(content)})
                pending = []
                continue
            if pending:
                out.append({"role": "user", "content": pending})
                pending = []
            out.append(
                {
                    "role": "user",
                    "content": content
                    if isinstance(content, str)
                    else _write_blocks(c.content_blocks(message)),
                }
            )
            continue
        if pending:
            out.append({"role": "user", "content": pending})
            pending = []
        if role != "assistant":
            continue
        blocks: list[c.JsonDict] = []
        for b in c.content_blocks(message):
            kind = b.get("type")
            if kind == "text":
                blocks.append(_block_cache(b, {"type": "text", "text": b["text"]}))
            elif kind == "thinking" and b.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": b.get("thinkingSignature", "")})
            elif kind == "thinking":
                thinking: c.JsonDict = {"type": "thinking", "thinking": b.get("thinking", "")}
                if b.get("thinkingSignature") is not None:
                    thinking["signature"] = b["thinkingSignature"]
                blocks.append(thinking)
            elif kind == "compaction":
                # Anthropic's own compaction block goes back verbatim; another API's (an
                # opaque Responses item) cannot be read here and is left out.
                raw = b.get("raw")
                if b.get("api") == "anthropic-messages" and isinstance(raw, Mapping):
                    blocks.append(dict(raw))
            elif _carried.is_carried(b):
                original = _carried.native(b, FORMAT)
                if original is None:
                    raise _carried.refuse(b, "Anthropic", "in an assistant message")
                blocks.append(original)
            elif kind == "toolCall":
                arguments = b.get("arguments")
                blocks.append(
                    _block_cache(
                        b,
                        {
                            "type": "tool_use",
                            "id": b.get("id"),
                            "name": b.get("name"),
                            "input": arguments if isinstance(arguments, dict) else {},
                        },
                    )
                )
        out.append({"role": "assistant", "content": blocks})
    if pending:
        out.append({"role": "user", "content": pending})
    joined: Any = None
    if len(system) == 1:
        joined = system[0]
    elif system:
        joined = "\n\n".join(c.blocks_text(s) for s in system)
    return joined, out


def from_anthropic(
    messages: Sequence[Mapping[str, Any]], system: str | Sequence[Mapping[str, Any]] | None = None
) -> Transcript:
    """A transcript of Anthropic ``messages`` (and ``system``, kept as a leading message)."""
    return Transcript(read(messages, system)[0])


def to_anthropic(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> tuple[Any, list[c.JsonDict]]:
    """``(system, messages)`` for the Anthropic Messages API (``system`` is None when absent),
    by default valid for a request to ``anthropic-messages`` (``safe``: see
    :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, "anthropic-messages", safe))
