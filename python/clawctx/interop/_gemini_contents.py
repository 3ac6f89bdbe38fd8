"""Gemini ``contents`` (dicts in the google-genai field names, or ``types.Content``) <->
clawctx transcripts.

A ``model`` content becomes an assistant message: ``text`` parts text blocks, ``thought`` parts
thinking blocks, ``function_call`` parts toolCall blocks (``thought_signature`` kept on either).
A ``user`` content is split like pi stores it: each ``function_response`` a ``toolResult``
(``{"output": ...}`` / ``{"error": ...}`` responses give the text and the error flag; any other
response is kept as its JSON text), the text and ``inline_data`` parts one user message.
Gemini calls may have no id: pi needs one, so such calls get ``gemini-<content>-<part>`` ids
(marked, and left out again on writing) and responses are matched to calls by name, in order.

Other parts (``inline_data`` that is not an image, ``file_data``, ``executable_code``,
``code_execution_result``, any part of a model content that is not text, thought or call) have
no pi type: they are carried whole, in place (``clawctx.interop._carried``; bytes as base64)
and written back as they were. Written as Gemini, another format's base64 file or audio (an
Anthropic PDF or text ``document``, a Chat ``file`` or ``input_audio``, a Responses
``input_file`` or ``input_audio``) becomes an ``inline_data`` part of its MIME type in a user
content; anything else (server-tool turns, refusals, URL or file-id references, a carried block
in a tool result) raises ``ValueError``. A part that mixes a function call or response with
other fields is refused.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _carried
from clawctx.interop import _common as c

FORMAT = "gemini"
_PART_KEYS = (
    "text",
    "thought",
    "thought_signature",
    "function_call",
    "function_response",
    "inline_data",
)


def _as_dict(element: object) -> Mapping[str, Any] | None:
    if isinstance(element, Mapping):
        return element
    if type(element).__module__.startswith("google.genai") and hasattr(element, "model_dump"):
        dumped = element.model_dump(exclude_none=True)
        return dumped if isinstance(dumped, dict) else None
    return None


def claims(element: object) -> bool:
    content = _as_dict(element)
    return (
        content is not None
        and set(content) <= {"role", "parts"}
        and content.get("role", "user") in ("user", "model")
        and isinstance(content.get("parts"), list)
    )


def _signature(value: Any) -> Any:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value


def read(
    contents: Sequence[Any], system_instruction: Any = None
) -> tuple[list[c.JsonDict], list[int]]:
    out: list[c.JsonDict] = []
    origins: list[int] = []
    if system_instruction is not None:
        text = (
            system_instruction
            if isinstance(system_instruction, str)
            else "".join(
                p.get("text", "") for p in (_as_dict(system_instruction) or {}).get("parts", ())
            )
        )
        out.append({"role": "system", "content": text})
        origins.append(-1)
    open_calls: list[c.JsonDict] = []  # calls of the last model content, for id-less responses
    for index, element in enumerate(contents):
        content = _as_dict(element)
        if content is None or not claims(element):
            raise ValueError(
                f"{c.where(index, element)} is not a Gemini content "
                "(expected role user/model and a list of parts)"
            )
        parts = content["parts"]
        for part in parts:
            if not isinstance(part, Mapping):
                raise ValueError(f"element {index}: part {part!r} is not a mapping")
            keys = set(k for k, v in part.items() if v is not None)
            if keys & {"function_call", "function_response"} and keys - set(_PART_KEYS):
                raise ValueError(f"element {index}: part {part!r} is not supported")
        if content.get("role", "user") == "model":
            blocks: list[c.JsonDict] = []
            open_calls = []
            for position, part in enumerate(parts):
                signature = _signature(part.get("thought_signature"))
                if part.get("function_call") is not None:
                    call = part["function_call"]
                    call_id = call.get("id")
                    block = c.tool_call(
                        call_id or f"gemini-{index}-{position}",
                        call.get("name", ""),
                        call.get("args") or {},
                        thoughtSignature=signature,
                    )
                    if not call_id:
                        block["idGenerated"] = True
                    blocks.append(block)
                    open_calls.append(block)
                elif _foreign(part) or part.get("inline_data") is not None:
                    # pi's assistant message holds no image: a model's inline data is carried.
                    blocks.append(_carried.carry(FORMAT, _carried.jsonable(dict(part))))
                elif part.get("thought"):
                    thinking = {"type": "thinking", "thinking": part.get("text", "")}
                    if signature is not None:
                        thinking["thinkingSignature"] = signature
                    blocks.append(thinking)
                else:
                    text_part = c.text_block(part.get("text", ""))
                    if signature is not None:
                        text_part["textSignature"] = signature
                    blocks.append(text_part)
            out.append(c.assistant(blocks))
            origins.append(index)
            continue
        rest: list[c.JsonDict] = []
        for part in parts:
            if part.get("function_response") is not None:
                response = part["function_response"]
                name = response.get("name", "")
                call_id = response.get("id")
                generated = False
                if not call_id:
                    match = next((b for b in open_calls if b["name"] == name), None)
                    if match is None:
                        raise ValueError(
                            f"element {index}: function_response {name!r} has no id and answers "
                            "no call of the previous model content"
                        )
                    open_calls.remove(match)
                    call_id, generated = match["id"], True
                payload = response.get("response") or {}
                is_error = set(payload) == {"error"}
                if set(payload) <= {"output"} or is_error:
                    value = payload.get("error" if is_error else "output", "")
                    text = value if isinstance(value, str) else json.dumps(value)
                else:
                    text = json.dumps(payload)
                result = c.tool_result(call_id, name, [c.text_block(text)], is_error=is_error)
                if generated:
                    result["idGenerated"] = True
                out.append(result)
                origins.append(index)
            elif _foreign(part):
                rest.append(_carried.carry(FORMAT, _carried.jsonable(dict(part))))
            elif part.get("inline_data") is not None:
                blob = part["inline_data"]
                data = blob.get("data", "")
                if isinstance(data, bytes):
                    rest.append(c.image_from_bytes(data, blob.get("mime_type", "")))
                else:
                    rest.append(
                        {"type": "image", "data": data, "mimeType": blob.get("mime_type", "")}
                    )
            else:
                rest.append(c.text_block(part.get("text", "")))
        if rest or not parts:
            out.append({"role": "user", "content": rest})
            origins.append(index)
    return out, origins


def _foreign(part: Mapping[str, Any]) -> bool:
    """A part pi has no type for: one with other fields than text, thought and signature, or
    inline data that is not an image."""
    keys = set(k for k, v in part.items() if v is not None)
    if keys & {"function_call", "function_response"}:
        return False
    if keys - {"text", "thought", "thought_signature", "inline_data"}:
        return True
    blob = part.get("inline_data")
    if blob is None:
        return False
    return not (
        keys == {"inline_data"}
        and set(k for k, v in blob.items() if v is not None) <= {"mime_type", "data"}
        and str(blob.get("mime_type", "")).startswith("image/")
    )


def _carried_part(block: Mapping[str, Any]) -> c.JsonDict:
    """A carried block in a user content: as it was, or another format's file or audio."""
    original = _carried.native(block, FORMAT)
    if original is not None:
        return dict(original)
    meaning = _carried.media(block)
    if meaning is not None and meaning.kind in ("file", "audio"):
        data = meaning.base64_data()
        if data is not None:
            return {"inline_data": {"mime_type": meaning.mime, "data": data}}
    raise _carried.refuse(block, "Gemini", "in a user message")


def _user_parts(message: Mapping[str, Any]) -> list[c.JsonDict]:
    parts: list[c.JsonDict] = []
    for block in c.content_blocks(message):
        if _carried.is_carried(block):
            parts.append(_carried_part(block))
        elif block.get("type") == "text":
            parts.append({"text": block["text"]})
        elif block.get("type") == "image" and "data" in block:
            parts.append(
                {"inline_data": {"mime_type": block.get("mimeType"), "data": block["data"]}}
            )
    return parts


def write(messages: Iterable[Mapping[str, Any]]) -> tuple[str | None, list[c.JsonDict]]:
    """``(system_instruction, contents)``; system messages are joined into the instruction."""
    system: list[str] = []
    out: list[c.JsonDict] = []
    pending: list[c.JsonDict] = []
    for message in messages:
        role = message.get("role")
        if role in c.SYSTEM_ROLES:
            system.append(c.blocks_text(message.get("content")))
        elif role == "toolResult":
            for block in c.content_blocks(message):
                if _carried.is_carried(block):
                    raise _carried.refuse(block, "Gemini", "in a tool result")
            text = c.blocks_text(message.get("content"))
            payload = {"error": text} if message.get("isError") else {"output": text}
            response: c.JsonDict = {"name": message.get("toolName"), "response": payload}
            if not message.get("idGenerated"):
                response["id"] = message.get("toolCallId")
            pending.append({"function_response": response})
        elif role in c.USER_SIDE_ROLES:
            out.append({"role": "user", "parts": pending + _user_parts(message)})
            pending = []
        elif role == "assistant":
            if pending:
                out.append({"role": "user", "parts": pending})
                pending = []
            parts: list[c.JsonDict] = []
            for block in c.content_blocks(message):
                kind = block.get("type")
                if kind == "text":
                    part: c.JsonDict = {"text": block["text"]}
                    signature = block.get("textSignature")
                elif kind == "thinking":
                    part = {"text": block.get("thinking", ""), "thought": True}
                    signature = block.get("thinkingSignature")
                elif kind == "toolCall":
                    call: c.JsonDict = {"name": block.get("name"), "args": block.get("arguments")}
                    if not block.get("idGenerated"):
                        call["id"] = block.get("id")
                    part = {"function_call": call}
                    signature = block.get("thoughtSignature")
                elif _carried.is_carried(block):
                    original = _carried.native(block, FORMAT)
                    if original is None:
                        raise _carried.refuse(block, "Gemini", "in an assistant message")
                    parts.append(dict(original))
                    continue
                else:
                    continue
                if signature is not None:
                    part["thought_signature"] = signature
                parts.append(part)
            out.append({"role": "model", "parts": parts})
    if pending:
        out.append({"role": "user", "parts": pending})
    return ("\n\n".join(system) if system else None), out


def from_gemini(contents: Sequence[Any], system_instruction: Any = None) -> Transcript:
    """A transcript of Gemini contents (dicts or ``google.genai.types.Content``)."""
    return Transcript(read(contents, system_instruction)[0])


def to_gemini(
    messages: Transcript | Iterable[Mapping[str, Any]],
    *,
    safe: bool | None = None,
) -> tuple[str | None, list[c.JsonDict]]:
    """``(system_instruction, contents)`` as google-genai dicts, by default valid for a request
    to ``google-generative-ai`` (``safe``: see :mod:`clawctx.interop`)."""
    return write(c.sendable(messages, "google-generative-ai", safe))
