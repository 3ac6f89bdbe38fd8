"""Blocks pi has no type for (documents, files, audio, refusals, server-tool turns), carried
through a transcript unchanged, and mapped to another format where it has a real equivalent.

A carried block is a pi content block ``{"type": "foreign", "format": <source format>,
"block": <the original block or part, as JSON>}``, in place and in order among the message's
other blocks. pi never writes that type, and clawctx's transcript passes (pairing repair,
provider validation, hygiene, pruning, turn limits, ``convert_to_llm``) keep a block type they do
not know where it is, so writing back to the source format gives the block exactly as it was.

Writing to another format goes through ``media``, the meaning of the block where other formats
have one: a file (base64 data, a text document's text, or a URL, with its MIME type and name),
an audio clip (base64 with its MIME type), or an assistant refusal. Each writer builds its own
block from that (e.g. an Anthropic base64 PDF ``document`` <-> a Chat ``file`` part <-> a
Responses ``input_file`` <-> a Gemini ``inline_data`` part of ``application/pdf``; a Chat
``input_audio`` <-> a Gemini audio ``inline_data``) or raises ``ValueError`` naming the block
and the target (``refuse``). A block with no neutral meaning (a server-tool call or result, a
search result, a Gemini ``executable_code`` part, a file id of one provider) only goes back to
its own format. Request options of an Anthropic document (``citations``, ``cache_control``) have
no equivalent elsewhere and are not written there; its ``context`` (text the model reads) is,
so a document with a context is refused rather than shortened.

Token charge (``charge_text``): a carried block counts as a text; a text document as its text
(and title), a search result as its title and texts, anything else as its compact JSON (a base64
payload included: under pi's chars/4 estimate a binary file costs about one token per 3 bytes,
well above what providers charge for most PDFs, so budgets err on the side of room).
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from clawctx.interop import _common as c

TYPE = "foreign"
# Chat and Responses name an audio clip by its format; Gemini and MIME by its type.
_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_MIMES = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


@dataclass(frozen=True)
class Media:
    """What a carried block means outside its format."""

    kind: Literal["file", "audio", "refusal"]
    mime: str = ""
    data: str | None = None  # base64
    text: str | None = None  # a text document's text, or the refusal
    url: str | None = None
    name: str | None = None  # a file name or document title

    def base64_data(self) -> str | None:
        """The payload as base64 (a text document's text encoded as UTF-8)."""
        if self.data is not None:
            return self.data
        if self.text is not None:
            return base64.b64encode(self.text.encode("utf-8")).decode("ascii")
        return None

    def document_text(self) -> str | None:
        """The text of a plain-text file (given as text, or as base64 of UTF-8)."""
        if self.text is not None:
            return self.text
        if self.data is None or self.mime != "text/plain":
            return None
        try:
            return base64.b64decode(self.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None

    def audio_format(self) -> str | None:
        return _AUDIO_MIMES.get(self.mime) if self.kind == "audio" else None


def carry(format: str, block: Any) -> c.JsonDict:
    """The pi block carrying ``block`` of ``format``."""
    return {"type": TYPE, "format": format, "block": block}


def is_carried(block: Mapping[str, Any]) -> bool:
    return block.get("type") == TYPE


def native(block: Mapping[str, Any], format: str) -> Any | None:
    """The original block when it came from ``format``, else None."""
    return block.get("block") if block.get("format") == format else None


def kind(block: Mapping[str, Any]) -> str:
    """A name for the carried block in messages: ``anthropic document``."""
    inner = block.get("block")
    name: Any = None
    if isinstance(inner, Mapping):
        name = (
            inner.get("type")
            or inner.get("part_kind")  # pydantic-ai
            or inner.get("kind")
            or next((k for k, v in inner.items() if v is not None), None)  # a Gemini part
        )
    return f"{block.get('format')} {name or 'block'}"


def refuse(block: Mapping[str, Any], target: str, where: str = "") -> ValueError:
    place = f" {where}" if where else ""
    return ValueError(
        f"a carried {kind(block)} block{place} has no {target} equivalent; it cannot be written "
        f"as {target} (write the history back to {block.get('format')}, or remove the block)"
    )


def _data_url(value: str) -> tuple[str | None, str]:
    """(MIME type, base64) of a ``data:`` URL; (None, value) for bare base64."""
    if value.startswith("data:") and ";base64," in value:
        head, _, data = value.partition(";base64,")
        return head[5:] or None, data
    return None, value


def data_url(mime: str, data: str) -> str:
    return f"data:{mime};base64,{data}"


def _file(file_data: str, name: str | None) -> Media:
    mime, data = _data_url(file_data)
    if mime is None and name:
        mime = mimetypes.guess_type(name)[0]
    mime = mime or "application/octet-stream"
    return Media("audio" if mime.startswith("audio/") else "file", mime, data=data, name=name)


def _anthropic(block: Mapping[str, Any]) -> Media | None:
    if block.get("type") != "document" or block.get("context"):
        return None
    source = block.get("source") or {}
    title = block.get("title")
    if source.get("type") == "base64":
        return Media("file", str(source.get("media_type", "")), data=source.get("data"), name=title)
    if source.get("type") == "text":
        return Media("file", "text/plain", text=source.get("data"), name=title)
    if source.get("type") == "url":
        return Media("file", "application/pdf", url=source.get("url"), name=title)
    return None


def _openai(block: Mapping[str, Any]) -> Media | None:
    kind = block.get("type")
    if kind == "refusal":
        return Media("refusal", text=block.get("refusal"))
    if kind == "input_audio":
        audio = block.get("input_audio") or {}
        mime = _AUDIO_FORMATS.get(str(audio.get("format")), "")
        return Media("audio", mime, data=audio.get("data")) if mime else None
    if kind == "file":  # Chat
        file = block.get("file") or {}
        return _file(file["file_data"], file.get("filename")) if file.get("file_data") else None
    if kind == "input_file":  # Responses
        if block.get("file_data"):
            return _file(block["file_data"], block.get("filename"))
        if block.get("file_url"):
            name = block.get("filename")
            mime = (mimetypes.guess_type(name or block["file_url"])[0]) or "application/pdf"
            return Media("file", mime, url=block["file_url"], name=name)
    return None


def _gemini(part: Mapping[str, Any]) -> Media | None:
    if set(k for k, v in part.items() if v is not None) != {"inline_data"}:
        return None
    blob = part["inline_data"]
    mime = str(blob.get("mime_type", ""))
    if set(blob) - {"mime_type", "data"}:
        return None  # a display_name: Gemini-only
    return Media("audio" if mime.startswith("audio/") else "file", mime, data=blob.get("data"))


def _langchain(block: Mapping[str, Any]) -> Media | None:
    kind = block.get("type")
    mime = str(block.get("mime_type") or "")
    data = block.get("base64") or (block.get("data") if block.get("source_type") != "url" else None)
    name = (block.get("extras") or {}).get("filename") or block.get("filename")
    if kind == "text-plain" and isinstance(block.get("text"), str):
        return Media("file", "text/plain", text=block["text"], name=name)
    if kind in ("file", "audio") and isinstance(data, str):
        media_kind: Literal["file", "audio"] = (
            "audio" if kind == "audio" or mime.startswith("audio/") else "file"
        )
        return Media(media_kind, mime or "application/octet-stream", data=data, name=name)
    if kind == "file" and isinstance(block.get("url"), str):
        return Media("file", mime or "application/pdf", url=block["url"], name=name)
    return None


def _pydantic_ai(part: Mapping[str, Any]) -> Media | None:
    kind = part.get("kind")
    mime = str(part.get("media_type") or "")
    if kind == "binary" and isinstance(part.get("data"), str):
        media_kind: Literal["file", "audio"] = "audio" if mime.startswith("audio/") else "file"
        # pydantic writes bytes as URL-safe base64; the other formats take the standard
        # alphabet. Its identifier is a content hash by default, not a name to show.
        data = base64.b64encode(base64.urlsafe_b64decode(part["data"])).decode("ascii")
        return Media(media_kind, mime, data=data)
    if kind == "document-url" and isinstance(part.get("url"), str):
        return Media("file", mime or "application/pdf", url=part["url"])
    return None


_READERS = {
    "anthropic": _anthropic,
    "openai_chat": _openai,
    "openai_responses": _openai,
    "gemini": _gemini,
    "langchain": _langchain,
    "pydantic_ai": _pydantic_ai,
}


def media(block: Mapping[str, Any]) -> Media | None:
    """The neutral meaning of a carried block, or None when only its format has one."""
    reader = _READERS.get(str(block.get("format")))
    inner = block.get("block")
    return reader(inner) if reader is not None and isinstance(inner, Mapping) else None


def charge_text(block: Mapping[str, Any]) -> str:
    """The text a carried block is charged as (see the module docstring)."""
    inner = block.get("block")
    if isinstance(inner, Mapping) and inner.get("type") == "search_result":
        texts = [str(b.get("text", "")) for b in inner.get("content") or () if isinstance(b, dict)]
        return "\n".join([str(inner.get("title", "")), *texts])
    meaning = media(block)
    if meaning is not None and meaning.kind == "refusal":
        return meaning.text or ""
    if meaning is not None and meaning.text is not None:
        return "\n".join(t for t in (meaning.name, meaning.text) if t)
    return json.dumps(inner, ensure_ascii=False, separators=(",", ":"))


def jsonable(value: Any) -> Any:
    """``value`` with bytes as base64 text (google-genai parts dumped from objects)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
