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
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from clawctx import _compat
from clawctx._core import _parse_response as _parse
from clawctx._core import _response_apis, _ResponseReader
from clawctx.errors import ResponseParseError
from clawctx.wire.payload import _model_dict

__all__ = [
    "RESPONSE_APIS",
    "ParsedResponse",
    "ResponseParseError",
    "ResponseStream",
    "aiter_response_events",
    "aparse_response",
    "iter_response_events",
    "parse_response",
    "read_response",
]

#: The model APIs :func:`parse_response` reads replies for (the Rust reader's list).
RESPONSE_APIS: tuple[str, ...] = tuple(_response_apis())


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


def _stamp(now_ms: int | None) -> float:
    return float(int(time.time() * 1000) if now_ms is None else now_ms)


def _options_json(options: Mapping[str, Any] | None) -> str | None:
    return None if options is None else json.dumps(dict(options))


def read_response(
    model: Any,
    response: Any,
    *,
    now_ms: int | None = None,
    options: Mapping[str, Any] | None = None,
    safe: bool | None = None,
) -> ParsedResponse:
    """Like :func:`parse_response`, also returning the types of the events pi-ai pushed."""
    message, events = _read(model, response, now_ms, options, safe, event_types=True)
    return ParsedResponse(message=message, events=events or [])


def _read(
    model: Any,
    response: Any,
    now_ms: int | None,
    options: Mapping[str, Any] | None,
    safe: bool | None,
    *,
    event_types: bool,
) -> tuple[dict[str, Any], list[str] | None]:
    model_json = json.dumps(_model_dict(model))
    reply = _reply_bytes(response)
    exact = not _compat.resolve_safe(safe)
    try:
        return _parse(model_json, reply, _stamp(now_ms), _options_json(options), exact, event_types)
    except ValueError as exc:
        raise ResponseParseError(str(exc)) from None


def parse_response(
    model: Any,
    response: Any,
    *,
    now_ms: int | None = None,
    options: Mapping[str, Any] | None = None,
    safe: bool | None = None,
) -> dict[str, Any]:
    """pi's ``AssistantMessage`` for a provider reply, as pi-ai 0.58.3 builds it.

    ``model`` is a pi-ai ``Model`` mapping (its ``api`` picks the reader, its ``cost`` prices
    the usage) or a model object as :func:`clawctx.wire.build_request_payload` takes.
    ``response`` is any of: raw SSE text or bytes; an iterable of SSE lines; an iterable of
    wire events (the JSON objects of the ``data:`` lines) or SDK stream events / an SDK
    ``Stream``; a non-streaming body (a dict or an SDK object such as anthropic's
    ``Message``, read through ``model_dump()``); a finished anthropic ``MessageStream``.
    ``now_ms`` is the message's ``timestamp`` (default: now). ``options`` are the provider
    options pi-ai's stream function took where they change the message (``serviceTier`` for
    ``openai-responses`` prices the usage).

    Where pi-ai ends in an error (an error event, a refusal, an unknown stop reason, an empty
    stream) the message has ``stopReason: "error"`` and pi-ai's ``errorMessage``. Safe by
    default, a stream cut before the provider's own end (no Anthropic ``message_stop``, ...) is
    an error too, where pi-ai's SDKs return the half reply as finished; under
    :func:`clawctx.compat` (or ``safe=False``) it reads as pi-ai reads it. Raises
    :class:`ResponseParseError` for a reply that cannot be read as the model's API at all.
    """
    return _read(model, response, now_ms, options, safe, event_types=False)[0]


async def aparse_response(
    model: Any,
    response: AsyncIterable[Any],
    *,
    now_ms: int | None = None,
    options: Mapping[str, Any] | None = None,
    safe: bool | None = None,
) -> dict[str, Any]:
    """:func:`parse_response` over an async iterable (an SDK ``AsyncStream``, async lines):
    the items are collected, then read in a worker thread."""
    items = [item async for item in response]
    resolved = _compat.resolve_safe(safe)  # read here: the worker thread has no compat scope
    return await asyncio.to_thread(
        parse_response, model, items, now_ms=now_ms, options=options, safe=resolved
    )


#: The events whose pi-ai form carries the finished block (``content`` / ``toolCall``).
_END_FIELDS = {"text_end": "content", "thinking_end": "content", "toolcall_end": "toolCall"}


def _event_dict(
    kind: str, index: int | None, delta: str | None, content: list[Any]
) -> dict[str, Any]:
    """One event in pi-ai's ``AssistantMessageEvent`` shape (without ``partial``)."""
    event: dict[str, Any] = {"type": kind}
    if index is not None:
        event["contentIndex"] = index
    if delta is not None:
        event["delta"] = delta
    field = _END_FIELDS.get(kind)
    if field is not None and index is not None and index < len(content):
        block = content[index]
        # text_end carries the text, thinking_end the thinking, toolcall_end the whole call.
        event[field] = block if field == "toolCall" else block.get(kind.removesuffix("_end"))
    return event


class ResponseStream:
    """pi-ai reading one reply as it arrives, for streaming UIs.

    Feed the reply in the pieces it comes in — SSE bytes or text cut anywhere, wire events
    (dicts or SDK stream events), or one non-streaming body — and get back the events pi-ai
    pushes for them, as dicts in pi-ai's ``AssistantMessageEvent`` shape without ``partial``:
    ``{"type": "text_delta", "contentIndex": 0, "delta": "Hel"}``, ``text_end`` with the
    block's ``content``, ``toolcall_end`` with its ``toolCall``, and at :meth:`finish`
    ``done`` (``reason``, ``message``) or ``error`` (``reason``, ``error``). :attr:`partial` is
    the message so far. The reading runs in Rust; the message is the one
    :func:`parse_response` returns for the same reply, whatever the chunking.

    Raises :class:`ResponseParseError` for a reply that cannot be read as the model's API
    (another API's events, a ``data:`` line that is not JSON); the stream is closed after.
    """

    def __init__(
        self,
        model: Any,
        *,
        now_ms: int | None = None,
        options: Mapping[str, Any] | None = None,
        safe: bool | None = None,
    ) -> None:
        exact = not _compat.resolve_safe(safe)
        try:
            self._reader = _ResponseReader(
                json.dumps(_model_dict(model)), _stamp(now_ms), _options_json(options), exact
            )
        except ValueError as exc:
            raise ResponseParseError(str(exc)) from None
        self._result: ParsedResponse | None = None

    def _events(self, raw: list[tuple[str, int | None, str | None]]) -> list[dict[str, Any]]:
        ends = any(kind in _END_FIELDS for kind, _, _ in raw)
        content = self.partial["content"] if ends else []
        return [_event_dict(kind, index, delta, content) for kind, index, delta in raw]

    def _call(self, feed: Any, *args: Any) -> list[dict[str, Any]]:
        try:
            raw = feed(*args)
        except ValueError as exc:
            raise ResponseParseError(str(exc)) from None
        return self._events(raw)

    def feed(self, item: Any) -> list[dict[str, Any]]:
        """One piece of the reply: SSE ``bytes``/``str`` (any chunking), a wire event (a
        mapping or an SDK stream event), or a non-streaming body (a mapping that is not a
        stream event is read as a wire event; use :meth:`feed_body` for a body)."""
        if isinstance(item, (bytes, bytearray, memoryview)):
            return self._call(self._reader.feed_sse, bytes(item))
        if isinstance(item, str):
            return self._call(self._reader.feed_sse, item.encode("utf-8", "surrogatepass"))
        return self.feed_event(item)

    def feed_event(self, event: Any, *, name: str | None = None) -> list[dict[str, Any]]:
        """One wire event (the JSON object of an SSE ``data:`` line, or an SDK event object)
        with its SSE ``event:`` name when the frame had one."""
        dumped = _dump(event)
        if not isinstance(dumped, Mapping):
            kind = type(event).__name__
            raise TypeError(f"a wire event must be a mapping or SDK object, not {kind}")
        data = json.dumps(dumped, ensure_ascii=False)
        return self._call(self._reader.feed_event, data, name)

    def feed_body(self, body: Any) -> list[dict[str, Any]]:
        """A whole non-streaming response body (a mapping or an SDK object)."""
        dumped = _dump(body)
        if not isinstance(dumped, Mapping):
            kind = type(body).__name__
            raise TypeError(f"a response body must be a mapping or SDK object, not {kind}")
        return self._call(self._reader.feed_body, json.dumps(dumped, ensure_ascii=False))

    @property
    def partial(self) -> dict[str, Any]:
        """The message so far (``stopReason`` and ``usage`` as read up to now)."""
        if self._result is not None:
            return self._result.message
        try:
            message: dict[str, Any] = json.loads(self._reader.partial())
        except ValueError as exc:
            raise ResponseParseError(str(exc)) from None
        return message

    def finish(self) -> list[dict[str, Any]]:
        """The reply ended: the last events, ending in ``done`` or ``error``. The final
        message is then :attr:`message`; calling it again returns no events."""
        if self._result is not None:
            return []
        try:
            message_json, last, kinds = self._reader.finish()
        except ValueError as exc:
            raise ResponseParseError(str(exc)) from None
        message: dict[str, Any] = json.loads(message_json)
        self._result = ParsedResponse(message=message, events=list(kinds))
        events = [_event_dict(k, i, d, message["content"]) for k, i, d in last]
        for event in events:
            if event["type"] in ("done", "error"):
                event["reason"] = message["stopReason"]
                event["message" if event["type"] == "done" else "error"] = message
        return events

    @property
    def message(self) -> dict[str, Any]:
        """The final message, once :meth:`finish` was called."""
        if self._result is None:
            raise ResponseParseError("the reply has not finished: call finish() first")
        return self._result.message

    @property
    def result(self) -> ParsedResponse:
        """The final message and every event type, once :meth:`finish` was called."""
        if self._result is None:
            raise ResponseParseError("the reply has not finished: call finish() first")
        return self._result


def _stream_items(response: Any) -> Iterable[Any]:
    if isinstance(response, (bytes, bytearray, memoryview, str)):
        return [response]
    return response  # type: ignore[no-any-return]


def iter_response_events(
    model: Any,
    response: Iterable[Any],
    *,
    now_ms: int | None = None,
    options: Mapping[str, Any] | None = None,
    safe: bool | None = None,
) -> Iterator[dict[str, Any]]:
    """pi-ai's events for a reply read as it arrives: each item of ``response`` (SSE chunks
    or lines, wire events, SDK stream events, an SDK ``Stream``) is fed to a
    :class:`ResponseStream` and its events yielded; the last is ``done`` or ``error`` with the
    final ``message`` / ``error``."""
    stream = ResponseStream(model, now_ms=now_ms, options=options, safe=safe)
    # ``str`` items are lines (as ``iter_lines()`` yields them, without their end); ``bytes``
    # items are raw chunks cut anywhere (``iter_bytes()``).
    for item in _stream_items(response):
        if isinstance(item, str) and not item.endswith("\n"):
            item += "\n"  # an iterable of lines, as a line iterator yields them
        yield from stream.feed(item)
    yield from stream.finish()


async def aiter_response_events(
    model: Any,
    response: AsyncIterable[Any],
    *,
    now_ms: int | None = None,
    options: Mapping[str, Any] | None = None,
    safe: bool | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """:func:`iter_response_events` over an async iterable (an SDK ``AsyncStream``, an
    httpx ``aiter_bytes()``/``aiter_lines()``)."""
    stream = ResponseStream(model, now_ms=now_ms, options=options, safe=safe)
    async for item in response:
        if isinstance(item, str) and not item.endswith("\n"):
            item += "\n"
        for event in stream.feed(item):
            yield event
    for event in stream.finish():
        yield event
