"""OpenAI Responses ``input`` items (also the OpenAI Agents SDK's input items) <-> transcripts.

Consecutive model-side items (``reasoning``, assistant ``message``, ``function_call``) form one
pi assistant message, as pi's openai-responses provider stores them: a reasoning item becomes a
thinking block whose signature is the item's JSON (pi-mono 0.58.3
`packages/ai/src/providers/openai-responses.ts` keeps it the same way, so encrypted reasoning
replays), each output text a text block, each call a toolCall block. ``function_call_output``
becomes ``toolResult``; user, system and developer messages keep their role. The item fields
this format needs back (``id``, ``status``, ``type``) ride on the pi block or message.

``input_file`` and ``input_audio`` parts (in a message or a ``function_call_output``) and
``refusal`` parts of an assistant message have no pi type: they are carried in place
(``clawctx.interop._carried``) and written back as they were. Written as Responses, another
format's base64 file (an Anthropic PDF or text ``document``, a Chat ``file``, a Gemini
``inline_data``) becomes an ``input_file`` with a ``data:`` URL, an Anthropic PDF URL an
``input_file`` with ``file_url``, and a Chat refusal a ``refusal`` part; anything else (audio
of another format included: the SDK's input content takes text, images and files only) raises
``ValueError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c

FORMAT = "openai_responses"
_RESPONSES_APIS = ("openai-responses", "azure-openai-responses", "openai-codex-responses")
_MODEL_ITEMS = ("reasoning", "function_call", "compaction")
#: The keys a reasoning, function_call and function_call_output input item may have; an item
#: with another key is refused (``check_keys``), as `_openai_chat._KEYS` does for messages.
_ITEM_KEYS: dict[str, tuple[str, ...]] = {
    "reasoning": ("type", "id", "summary", "encrypted_content", "content", "status"),
    "function_call": ("type", "id", "call_id", "name", "arguments", "status"),
    "function_call_output": ("type", "id", "call_id", "output", "status"),
}
_INPUT_PARTS = ("input_text", "input_image", "input_file", "input_audio")
_FILE_KEYS = ("type", "file_data", "file_id", "file_url", "filename", "detail")


def _is_message(element: Mapping[str, Any]) -> bool:
    role, content = element.get("role"), element.get("content")
    if element.get("type", "message") != "message" or role not in (
        "user",
        "assistant",
        "system",
        "developer",
    ):
        return False
    if any(
        k not in ("type", "role", "content", "id", "status") and v not in (None, [], {}, "")
        for k, v in element.items()
    ):
        return False
    if isinstance(content, str):
        return True
    parts = ("output_text", "refusal") if role == "assistant" else _INPUT_PARTS
    return isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") in parts for p in content
    )


def claims(element: object) -> bool:
    if not isinstance(element, Mapping):
        return False
    kind = element.get("type")
    if kind in ("reasoning", "function_call", "function_call_output", "compaction"):
        return True
    return _is_message(element)


def _input_content(content: Any, index: int) -> Any:
    if isinstance(content, str):
        return content
    blocks: list[c.JsonDict] = []
    for part in content:
        if part.get("type") == "input_text":
            c.check_keys(part, ("type", "text"), "an input_text part", index)
            blocks.append(c.text_block(part["text"]))
        elif part.get("type") == "input_file":
            c.check_keys(
                part, (*_FILE_KEYS, "prompt_cache_breakpoint"), "an input_file part", index
            )
            if not (part.get("file_data") or part.get("file_id") or part.get("file_url")):
                raise ValueError(
                    f"element {index}: an input_file part needs file_data, file_id or file_url"
                )
            blocks.append(_carried.carry(FORMAT, dict(part)))
        elif part.get("type") == "input_audio":
            c.check_keys(part, ("type", "input_audio"), "an input_audio part", index)
            audio = part.get("input_audio")
            if not isinstance(audio, Mapping) or not audio.get("data") or not audio.get("format"):
                raise ValueError(f"element {index}: an input_audio part needs data and format")
            blocks.append(_carried.carry(FORMAT, dict(part)))
        else:
            c.check_keys(part, ("type", "image_url", "detail"), "an input_image part", index)
            if not part.get("image_url"):
                raise ValueError(f"element {index}: input_image without image_url is not supported")
            image = c.image_from_url(part["image_url"])
            if part.get("detail") is not None:
                image["detail"] = part["detail"]
            blocks.append(image)
    return blocks


def _extras(item: Mapping[str, Any], skip: Iterable[str]) -> c.JsonDict:
    skipped = set(skip)
    return {k: v for k, v in item.items() if k not in skipped}


def _check_item(item: Mapping[str, Any], kind: str, index: int) -> None:
    c.check_keys(item, _ITEM_KEYS[kind], f"a {kind} item", index)


def read(items: Sequence[Any]) -> tuple[list[c.JsonDict], list[int]]:
    out: list[c.JsonDict] = []
    origins: list[int] = []
    names: dict[str, str] = {}
    current: c.JsonDict | None = None  # the assistant message being filled
    for index, item in enumerate(items):
        if not claims(item):
            raise ValueError(
                f"{c.where(index, item)} is not a Responses input item this converter reads "
                "(expected a message, reasoning, function_call or function_call_output item)"
            )
        kind = item.get("type", "message")
        role = item.get("role")
        if kind in _MODEL_ITEMS or (kind == "message" and role == "assistant"):
            if current is None:
                current = c.assistant([])
                out.append(current)
                origins.append(index)
            else:
                origins[-1] = index
            blocks = current["content"]
            if kind == "compaction":
                # Server compaction: pi's compaction block, the item verbatim under `raw`
                # (see `clawctx.wire.parse_response`); its context is encrypted.
                blocks.append(
                    {
                        "type": "compaction",
                        "api": "openai-responses",
                        "content": None,
                        "raw": dict(item),
                    }
                )
            elif kind == "reasoning":
                _check_item(item, "reasoning", index)
                summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or ())
                blocks.append(
                    {"type": "thinking", "thinking": summary, "thinkingSignature": json.dumps(item)}
                )
            elif kind == "function_call":
                _check_item(item, "function_call", index)
                names[item["call_id"]] = item["name"]
                extra = _extras(item, ("call_id", "name", "arguments"))
                blocks.append(
                    c.tool_call(
                        item["call_id"], item["name"], item["arguments"], responsesItem=extra
                    )
                )
            else:
                c.check_keys(
                    item, ("type", "id", "role", "content", "status"), "an assistant message", index
                )
                content = item["content"]
                parts = (
                    [{"type": "output_text", "text": content}]
                    if isinstance(content, str)
                    else content
                )
                for position, part in enumerate(parts):
                    if part.get("type") == "refusal":
                        c.check_keys(part, ("type", "refusal"), "a refusal part", index)
                        if not isinstance(part.get("refusal"), str):
                            raise ValueError(f"element {index}: a refusal part needs its text")
                        carried = _carried.carry(FORMAT, dict(part))
                        if position == 0:
                            carried["responsesItem"] = _extras(item, ("content",))
                        blocks.append(carried)
                        continue
                    c.check_keys(
                        part,
                        ("type", "text", "annotations", "logprobs"),
                        "an output_text part",
                        index,
                    )
                    block = c.text_block(part["text"])
                    if part.get("annotations"):
                        block["annotations"] = part["annotations"]
                    if position == 0:
                        block["responsesItem"] = _extras(item, ("content",))
                        if isinstance(content, str):
                            block["responsesText"] = True
                    blocks.append(block)
                if not parts:
                    blocks.append(
                        {
                            **c.text_block(""),
                            "responsesItem": _extras(item, ("content",)),
                            "responsesEmpty": True,
                        }
                    )
            continue
        current = None
        if kind == "function_call_output":
            _check_item(item, "function_call_output", index)
            output = item["output"]
            result_blocks = (
                [c.text_block(output)] if isinstance(output, str) else _input_content(output, index)
            )
            result = c.tool_result(item["call_id"], names.get(item["call_id"], ""), result_blocks)
            extra = _extras(item, ("type", "call_id", "output"))
            if extra:
                result["responsesItem"] = extra
            if not isinstance(output, str):
                result["responsesParts"] = True
            out.append(result)
        else:
            c.check_keys(
                item, ("type", "role", "content", "id", "status"), f"a {role} message", index
            )
            pi: c.JsonDict = {
                "role": role,
                "content": _input_content(item["content"], index),
            }
            extra = _extras(item, ("role", "content"))
            if extra:
                pi["responsesItem"] = extra
            out.append(pi)
        origins.append(index)
    return out, origins


def _carried_input(block: Mapping[str, Any], where: str) -> Any:
    """A carried block in input content: as it was, or another format's file."""
    original = _carried.native(block, FORMAT)
    if original is not None:
        return original
    meaning = _carried.media(block)
    # Audio of another format is refused: openai 3.57's Responses input content is text, image
    # and file only (`ResponseInputContentParam`), though an input_audio part read is carried.
    if meaning is not None and meaning.kind == "file":
        part: c.JsonDict = {"type": "input_file"}
        data = meaning.base64_data()
        if data is not None:
            part["file_data"] = _carried.data_url(meaning.mime, data)
        elif meaning.url is not None:
            part["file_url"] = meaning.url
        if meaning.name:
            part["filename"] = meaning.name
        if len(part) > 1:
            return part
    raise _carried.refuse(block, "OpenAI Responses", where)


def _refusal_part(block: Mapping[str, Any]) -> c.JsonDict | None:
    """A carried block as a Responses refusal part, if it is a refusal."""
    original = _carried.native(block, FORMAT)
    if original is not None:
        return dict(original)
    meaning = _carried.media(block)
    if meaning is not None and meaning.kind == "refusal":
        return {"type": "refusal", "refusal": meaning.text or ""}
    return None


def _write_input(content: Any, where: str = "in a user message") -> Any:
    if isinstance(content, str):
        return content
    parts: list[c.JsonDict] = []
    for block in content:
        if _carried.is_carried(block):
            parts.append(_carried_input(block, where))
        elif block.get("type") == "text":
            parts.append({"type": "input_text", "text": block["text"]})
        elif block.get("type") == "image":
            part: c.JsonDict = {"type": "input_image", "image_url": c.image_to_url(block)}
            part["detail"] = block.get("detail", "auto")
            parts.append(part)
    return parts


def write(messages: Iterable[Mapping[str, Any]]) -> list[c.JsonDict]:
    out: list[c.JsonDict] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            message_item: c.JsonDict | None = None
            for block in c.content_blocks(message):
                kind = block.get("type")
                refusal = _refusal_part(block) if _carried.is_carried(block) else None
                if _carried.is_carried(block) and refusal is None:
                    raise _carried.refuse(block, "OpenAI Responses", "in an assistant message")
                if refusal is not None:
                    kind = "text"
                if kind != "text":
                    message_item = None
                if kind == "compaction":
                    # A Responses compaction item goes back verbatim; another API's block
                    # (Anthropic's) has no Responses form and is left out.
                    raw = block.get("raw")
                    if block.get("api") in _RESPONSES_APIS and isinstance(raw, Mapping):
                        out.append(dict(raw))
                elif kind == "thinking":
                    signature = block.get("thinkingSignature")
                    try:
                        item = json.loads(signature) if isinstance(signature, str) else None
                    except ValueError:
                        item = None
                    if isinstance(item, dict) and item.get("type") == "reasoning":
                        out.append(item)
                    # Thinking of another provider has no Responses form: it is not sent.
                elif kind == "toolCall":
                    call: c.JsonDict = {"type": "function_call"}
                    call.update(block.get("responsesItem") or {})
                    call.update(
                        call_id=block.get("id"),
                        name=block.get("name"),
                        arguments=c.arguments_text(block),
                    )
                    out.append(call)
                elif kind == "text":
                    extra = block.get("responsesItem")
                    if message_item is None or extra is not None:
                        message_item = (
                            dict(extra)
                            if extra is not None
                            else {"type": "message", "role": "assistant"}
                        )
                        message_item["content"] = []
                        out.append(message_item)
                        if block.get("responsesText") and refusal is None:
                            message_item["content"] = block["text"]
                            message_item = None
                            continue
                        if block.get("responsesEmpty"):
                            message_item = None
                            continue
                    if refusal is not None:
                        message_item["content"].append(refusal)
                        continue
                    part: c.JsonDict = {"type": "output_text", "text": block["text"]}
                    part["annotations"] = block.get("annotations", [])
                    message_item["content"].append(part)
        elif role == "toolResult":
            content = c.content_blocks(message)
            output: Any = (
                _write_input(content, "in a tool result")
                if message.get("responsesParts") or any(b.get("type") != "text" for b in content)
                else c.blocks_text(content)
            )
            item = {"type": "function_call_output"}
            item.update(message.get("responsesItem") or {})
            item.update(call_id=message.get("toolCallId"), output=output)
            out.append(item)
        elif role in c.SYSTEM_ROLES or role in c.USER_SIDE_ROLES:
            item = {}
            item.update(message.get("responsesItem") or {})
            item.update(role="user" if role not in c.SYSTEM_ROLES else role)
            item["content"] = _write_input(message.get("content"))
            out.append(item)
    return out


def from_openai_responses(items: Sequence[Mapping[str, Any]]) -> Transcript:
    """A transcript of OpenAI Responses input items (strict: an unknown item raises)."""
    return Transcript(read(items)[0])


def to_openai_responses(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> list[c.JsonDict]:
    """OpenAI Responses input items of a transcript, by default valid for a request to
    ``openai-responses`` (``safe``: see :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, "openai-responses", safe))
