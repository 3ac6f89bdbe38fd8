"""OpenAI Chat Completions ``messages`` <-> clawctx transcripts.

One Chat message is one pi message: ``system``/``developer`` keep their role, ``user`` becomes
``user`` (text parts and ``image_url`` parts), ``assistant`` becomes ``assistant`` (its text,
then one ``toolCall`` block per ``tool_calls`` entry), ``tool`` becomes ``toolResult`` (the
tool name is the one of the call it answers). Chat cannot hold thinking blocks, images in tool
results or the error flag of a result; writing drops those.

User ``file`` parts (``file_data`` or ``file_id``) and ``input_audio`` parts, and ``refusal``
parts of an assistant message, have no pi type: they are carried in place
(``clawctx.interop._carried``) and written back as they were (an assistant message holding a
refusal is written with list content). Written as Chat, another format's base64 file (an
Anthropic PDF or text ``document``, a Responses ``input_file``, a Gemini ``inline_data``)
becomes a ``file`` part with a ``data:`` URL, its wav/mp3 audio an ``input_audio`` part and a
Responses refusal a ``refusal`` part; a carried block with no Chat form (a server-tool turn, a
URL or file-id reference of another provider, any carried block in a tool result) raises
``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c

FORMAT = "openai_chat"
_CARRIED_PARTS = ("file", "input_audio")
_ROLES = ("system", "developer", "user", "assistant", "tool")
_KEYS = {
    "system": ("role", "content", "name"),
    "developer": ("role", "content", "name"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "tool_calls", "name"),
    "tool": ("role", "content", "tool_call_id"),
}


def claims(element: object) -> bool:
    if not isinstance(element, Mapping) or "type" in element:
        return False
    role = element.get("role")
    if role not in _ROLES or any(
        k not in _KEYS[role] and v not in (None, [], {}, "") for k, v in element.items()
    ):
        return False
    content = element.get("content")
    if role == "tool":
        return "tool_call_id" in element
    if role == "assistant" and isinstance(content, list):
        return all(isinstance(p, Mapping) and p.get("type") in ("text", "refusal") for p in content)
    if isinstance(content, list):
        return all(
            isinstance(p, Mapping) and p.get("type") in ("text", "image_url", *_CARRIED_PARTS)
            for p in content
        )
    return isinstance(content, str) or (role == "assistant" and content is None)


def _user_content(content: Any, index: int) -> Any:
    if isinstance(content, str):
        return content
    blocks: list[c.JsonDict] = []
    for part in content:
        if part.get("type") == "text":
            c.check_keys(part, ("type", "text"), "a text part", index)
            blocks.append(c.text_block(part["text"]))
        elif part.get("type") == "image_url":
            c.check_keys(part, ("type", "image_url"), "an image part", index)
            image = c.image_from_url(part["image_url"]["url"])
            if part["image_url"].get("detail") is not None:
                image["detail"] = part["image_url"]["detail"]
            blocks.append(image)
        elif part.get("type") == "file":
            c.check_keys(part, ("type", "file", "prompt_cache_breakpoint"), "a file part", index)
            file = part.get("file")
            if not isinstance(file, Mapping) or not (file.get("file_data") or file.get("file_id")):
                raise ValueError(f"element {index}: a file part needs file.file_data or file_id")
            c.check_keys(file, ("file_data", "file_id", "filename"), "a file part's file", index)
            blocks.append(_carried.carry(FORMAT, dict(part)))
        elif part.get("type") == "input_audio":
            c.check_keys(
                part, ("type", "input_audio", "prompt_cache_breakpoint"), "an audio part", index
            )
            audio = part.get("input_audio")
            if not isinstance(audio, Mapping) or not audio.get("data") or not audio.get("format"):
                raise ValueError(f"element {index}: an input_audio part needs data and format")
            blocks.append(_carried.carry(FORMAT, dict(part)))
        else:
            raise ValueError(f"element {index}: content part {part.get('type')!r} is not supported")
    return blocks


def read(messages: Sequence[Any]) -> tuple[list[c.JsonDict], list[int]]:
    out: list[c.JsonDict] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") in _KEYS:
            role = message["role"]
            what = "an assistant message" if role == "assistant" else f"a {role} message"
            c.check_keys(message, _KEYS[role], what, index)
        if not claims(message):
            raise ValueError(
                f"{c.where(index, message)} is not an OpenAI Chat message "
                f"(expected a dict with role in {_ROLES})"
            )
        role = message["role"]
        if role in c.SYSTEM_ROLES:
            c.check_keys(message, ("role", "content", "name"), f"a {role} message", index)
            out.append(dict(message))
        elif role == "user":
            c.check_keys(message, ("role", "content", "name"), "a user message", index)
            pi: c.JsonDict = {"role": "user", "content": _user_content(message["content"], index)}
            if message.get("name"):
                pi["name"] = message["name"]
            out.append(pi)
        elif role == "assistant":
            c.check_keys(
                message, ("role", "content", "tool_calls", "name"), "an assistant message", index
            )
            content = message.get("content")
            blocks: list[c.JsonDict] = []
            if isinstance(content, str):
                blocks.append(c.text_block(content))
            elif isinstance(content, list):
                for part in content:
                    if part.get("type") == "refusal":
                        c.check_keys(part, ("type", "refusal"), "a refusal part", index)
                        if not isinstance(part.get("refusal"), str):
                            raise ValueError(f"element {index}: a refusal part needs its text")
                        blocks.append(_carried.carry(FORMAT, dict(part)))
                        continue
                    blocks.append(c.text_block(part["text"]))
            for call in message.get("tool_calls") or ():
                if call.get("type", "function") != "function":
                    raise ValueError(f"element {index}: tool call type {call.get('type')!r}")
                function = call["function"]
                names[call["id"]] = function["name"]
                blocks.append(c.tool_call(call["id"], function["name"], function["arguments"]))
            pi = c.assistant(blocks)
            if content is None:
                pi["textAbsent"] = True
            if message.get("name"):
                pi["name"] = message["name"]
            out.append(pi)
        else:
            c.check_keys(message, ("role", "content", "tool_call_id"), "a tool message", index)
            content = message["content"]
            text = content if isinstance(content, str) else c.blocks_text(content)
            call_id = message["tool_call_id"]
            out.append(c.tool_result(call_id, names.get(call_id, ""), [c.text_block(text)]))
    return out, list(range(len(out)))


def write(messages: Iterable[Mapping[str, Any]]) -> list[c.JsonDict]:
    out: list[c.JsonDict] = []
    for message in messages:
        role = message.get("role")
        if role in c.SYSTEM_ROLES:
            out.append({k: v for k, v in message.items() if k in ("role", "content", "name")})
        elif role == "assistant":
            blocks = c.content_blocks(message)
            texts = [b["text"] for b in blocks if b.get("type") == "text"]
            item: c.JsonDict = {"role": "assistant"}
            item["content"] = None if message.get("textAbsent") and not texts else "".join(texts)
            if any(_carried.is_carried(b) for b in blocks):
                item["content"] = _assistant_parts(blocks)
            calls = [
                {
                    "id": b.get("id"),
                    "type": "function",
                    "function": {"name": b.get("name"), "arguments": c.arguments_text(b)},
                }
                for b in blocks
                if b.get("type") == "toolCall"
            ]
            if calls:
                item["tool_calls"] = calls
            if message.get("name"):
                item["name"] = message["name"]
            out.append(item)
        elif role == "toolResult":
            for block in c.content_blocks(message):
                if _carried.is_carried(block):
                    raise _carried.refuse(block, "OpenAI Chat", "in a tool result")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.get("toolCallId"),
                    "content": c.blocks_text(message.get("content")),
                }
            )
        elif role in c.USER_SIDE_ROLES:
            content = message.get("content")
            user: c.JsonDict = {"role": "user"}
            if isinstance(content, str):
                user["content"] = content
            else:
                parts: list[c.JsonDict] = []
                for block in c.content_blocks(message):
                    if block.get("type") == "text":
                        parts.append({"type": "text", "text": block["text"]})
                    elif block.get("type") == "image":
                        image: c.JsonDict = {"url": c.image_to_url(block)}
                        if block.get("detail") is not None:
                            image["detail"] = block["detail"]
                        parts.append({"type": "image_url", "image_url": image})
                    elif _carried.is_carried(block):
                        parts.append(_user_part(block))
                user["content"] = parts
            if message.get("name"):
                user["name"] = message["name"]
            out.append(user)
    return out


def _assistant_parts(blocks: Iterable[Mapping[str, Any]]) -> list[c.JsonDict]:
    """Assistant content as parts: text, and refusals (carried, or a Responses refusal)."""
    parts: list[c.JsonDict] = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block["text"]})
        elif _carried.is_carried(block):
            original = _carried.native(block, FORMAT)
            meaning = _carried.media(block)
            if original is not None:
                parts.append(original)
            elif meaning is not None and meaning.kind == "refusal":
                parts.append({"type": "refusal", "refusal": meaning.text or ""})
            else:
                raise _carried.refuse(block, "OpenAI Chat", "in an assistant message")
    return parts


def _user_part(block: Mapping[str, Any]) -> Any:
    """A carried block in a user message: as it was, or another format's file or audio."""
    original = _carried.native(block, FORMAT)
    if original is not None:
        return original
    meaning = _carried.media(block)
    if meaning is not None and meaning.kind == "audio" and meaning.data is not None:
        audio_format = meaning.audio_format()
        if audio_format is not None:
            audio = {"data": meaning.data, "format": audio_format}
            return {"type": "input_audio", "input_audio": audio}
    if meaning is not None and meaning.kind == "file":
        data = meaning.base64_data()
        if data is not None:
            file: c.JsonDict = {"file_data": _carried.data_url(meaning.mime, data)}
            if meaning.name:
                file["filename"] = meaning.name
            return {"type": "file", "file": file}
    raise _carried.refuse(block, "OpenAI Chat", "in a user message")


def from_openai_chat(messages: Sequence[Mapping[str, Any]]) -> Transcript:
    """A transcript of OpenAI Chat Completions messages (strict: an unknown shape raises)."""
    return Transcript(read(messages)[0])


def to_openai_chat(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> list[c.JsonDict]:
    """OpenAI Chat Completions messages of a transcript, by default valid for a request to
    ``openai-completions`` (``safe``: see :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, "openai-completions", safe))
