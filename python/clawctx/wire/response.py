"""Provider replies read back into pi's assistant message (``clawctx._core._parse_response``).

pi-ai 0.58.3 always streams; :func:`parse_response` reads the stream the way pi-ai's provider
code does (pi-mono ``packages/ai/src/providers/*.ts``) and returns the ``AssistantMessage``
it would have returned: blocks, thinking signatures and redaction, tool-call arguments parsed
from partial JSON, usage and cost from the model's prices, the stop-reason mapping, and
``stopReason: "error"`` with ``errorMessage`` where pi-ai ends in an error. The SSE splitting,
JSON parsing and accumulation run in Rust without the GIL; this module only turns the many
shapes a reply can come in into one text.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clawctx._core import _parse_response as _parse
from clawctx.errors import ResponseParseError
from clawctx.wire.payload import _model_dict

#: The model APIs :func:`parse_response` reads replies for.
__all__ = [
    "RESPONSE_APIS",
    "ParsedResponse",
    "ResponseParseError",
    "aparse_response",
    "parse_response",
    "read_response",
]

RESPONSE_APIS = ("anthropic-messages",)


@dataclass(frozen=True)
class ParsedResponse:
    """A reply read back: pi's ``message`` and the types of the events pi-ai pushed while
    reading it (``start``, ``text_delta``, ``toolcall_end``, …, ending in ``done`` or
    ``error``)."""

    message: dict[str, Any]
    events: list[str]


def _dump(obj: Any) -> Any:
    """An SDK object (pydantic) as its wire JSON; plain values unchanged."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        # by_alias: google-genai's models name fields in snake case and send camel case.
        return dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def _reply_bytes(response: Any) -> bytes:
    if isinstance(response, (bytes, bytearray, memoryview)):
        return bytes(response)
    if isinstance(response, str):
        try:
            return response.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ResponseParseError(f"reply text is not valid Unicode: {exc}") from None
    final = getattr(response, "get_final_message", None)
    if callable(final):
        # anthropic's MessageStream: read to the end, then its final Message.
        until_done = getattr(response, "until_done", None)
        if callable(until_done):
            until_done()
        return _reply_bytes(final())
    dumped = _dump(response)
    if isinstance(dumped, Mapping):
        return json.dumps(dumped, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if isinstance(response, Iterable):
        return _items_bytes(list(response))
    raise TypeError(
        "response must be SSE text or bytes, an iterable of lines or events, a response "
        f"body or an SDK object, not {type(response).__name__}"
    )


def _items_bytes(items: list[Any]) -> bytes:
    if not items:
        return b"[]"
    if all(isinstance(i, (str, bytes, bytearray)) for i in items):
        parts: list[bytes] = []
        for item in items:
            line = item.encode("utf-8") if isinstance(item, str) else bytes(item)
            parts.append(line if line.endswith(b"\n") else line + b"\n")
        return b"".join(parts)
    events = [_dump(i) for i in items]
    if not all(isinstance(e, Mapping) for e in events):
        raise TypeError("an iterable reply must hold only lines or only events (dicts/SDK objects)")
    return json.dumps(events, ensure_ascii=False).encode("utf-8", "surrogatepass")


def read_response(model: Any, response: Any, *, now_ms: int | None = None) -> ParsedResponse:
    """Like :func:`parse_response`, also returning the types of the events pi-ai pushed."""
    model_json = json.dumps(_model_dict(model))
    reply = _reply_bytes(response)
    stamp = float(int(time.time() * 1000) if now_ms is None else now_ms)
    try:
        message_json, events = _parse(model_json, reply, stamp)
    except ValueError as exc:
        raise ResponseParseError(str(exc)) from None
    message: dict[str, Any] = json.loads(message_json)
    return ParsedResponse(message=message, events=list(events))


def parse_response(model: Any, response: Any, *, now_ms: int | None = None) -> dict[str, Any]:
    """pi's ``AssistantMessage`` for a provider reply, as pi-ai 0.58.3 builds it.

    ``model`` is a pi-ai ``Model`` mapping (its ``api`` picks the reader, its ``cost`` prices
    the usage) or a model object as :func:`clawctx.wire.build_request_payload` takes.
    ``response`` is any of: raw SSE text or bytes; an iterable of SSE lines; an iterable of
    wire events (the JSON objects of the ``data:`` lines) or SDK stream events / an SDK
    ``Stream``; a non-streaming body (a dict or an SDK object such as anthropic's
    ``Message``, read through ``model_dump()``); a finished anthropic ``MessageStream``.
    ``now_ms`` is the message's ``timestamp`` (default: now).

    Where pi-ai ends in an error (an error event, a refusal, an unknown stop reason, an empty
    stream) the message has ``stopReason: "error"`` and pi-ai's ``errorMessage``. Raises
    :class:`ResponseParseError` for a reply that cannot be read as the model's API at all.
    """
    return read_response(model, response, now_ms=now_ms).message


async def aparse_response(
    model: Any, response: AsyncIterable[Any], *, now_ms: int | None = None
) -> dict[str, Any]:
    """:func:`parse_response` over an async iterable (an SDK ``AsyncStream``, async lines):
    the items are collected, then read in a worker thread."""
    items = [item async for item in response]
    return await asyncio.to_thread(parse_response, model, items, now_ms=now_ms)
