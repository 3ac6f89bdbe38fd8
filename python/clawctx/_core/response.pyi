"""Provider responses, read as pi-ai reads them (core stage ``response``; public home:
``clawctx.wire``).
"""

from typing import Any, final

__all__ = [
    "_ResponseReader",
    "_parse_response",
    "_response_apis",
]

def _parse_response(
    model_json: str,
    reply: bytes,
    now_ms: float,
    options_json: str | None = None,
    exact: bool = False,
    event_types: bool = True,
) -> tuple[dict[str, Any], list[str] | None]:
    """`(message, event_types)` for `reply` read as pi-ai reads `model["api"]`'s stream, with
    pi-ai's provider options (`options_json`, e.g. `{"serviceTier": "flex"}`) when given;
    `exact` reads a stream cut short as pi-ai does (as whole) instead of as failed;
    `event_types=False` leaves the types out (`None`). Raises `ValueError` (wrapped as
    `ResponseParseError` by `clawctx.wire.response`) for a reply pi-ai could not even start
    reading.
    """

def _response_apis() -> list[str]:
    """The model APIs whose replies `_parse_response` reads."""

@final
class _ResponseReader:
    """pi-ai reading one reply as it arrives (`clawctx.wire.ResponseStream` wraps it): each
    `feed_*` returns the events pi-ai pushed for what was fed, `partial()` the message so far,
    `finish()` the final message and every event type. Raises `ValueError` for a reply that
    cannot be read, after which the reader is closed.
    """
    def __new__(
        cls,
        model_json: str,
        now_ms: float,
        options_json: str | None = None,
        exact: bool = False,
    ) -> _ResponseReader: ...
    def feed_event(
        self, data: str, name: str | None = None
    ) -> list[tuple[str, int | None, str | None]]:
        """One wire event (the JSON text of an SSE `data:` line) with its SSE `event:` name."""
    def feed_sse(self, chunk: bytes) -> list[tuple[str, int | None, str | None]]:
        """A chunk of SSE bytes, cut anywhere."""
    def feed_body(self, body_json: str) -> list[tuple[str, int | None, str | None]]:
        """A whole non-streaming response body (JSON text)."""
    def partial(self) -> bytes:
        """The message so far, as JSON bytes."""
    def finish(
        self,
    ) -> tuple[bytes, list[tuple[str, int | None, str | None]], list[str]]:
        """The stream ended: `(message_json, last_events, event_types)`; the reader closes."""
