"""Provider request payloads (core stage ``payload``; public home: ``clawctx.wire``)."""

from typing import Any, final

from .token_count import _Encoding, _Estimator
from .transcript import Transcript

__all__ = [
    "_CacheDiffChain",
    "_RequestPayload",
    "_build_request_payload",
    "_cache_diff",
    "_transform_messages",
]

@final
class _RequestPayload:
    """A request body built in Rust."""

    @property
    def api(self) -> str: ...
    @property
    def guard_changes(self) -> list[tuple[str, int]]:
        """What the request guard changed in the messages, as ``(kind, count)`` pairs."""

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP headers the body needs (``anthropic-beta`` for context management)."""

    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> bytes: ...

def _build_request_payload(
    request_json: str,
    messages: Transcript | str,
    *,
    simple: bool = False,
    now_ms: int = 0,
    guard: bool = True,
    compact: bool = False,
) -> _RequestPayload:
    """The request body for `request["model"]["api"]`. `request_json` is the JSON text of
    `{model, systemPrompt?, tools?, options?}`; `messages` a `Transcript` or a JSON array
    text. `compact`: the body of OpenAI's `POST /responses/compact` instead (Responses APIs
    only).
    """

def _cache_diff(
    previous: bytes | _RequestPayload,
    next: bytes | _RequestPayload,
    encoding: _Encoding = "o200k_base",
    estimator: _Estimator = "calibrated",
) -> tuple[str, int, int, str, int] | None:
    """Where `next` stops extending `previous` as a provider's prompt cache sees it (tools,
    system prompt, then messages; cache markers skipped): `None` when it extends it, else
    `(path, previous_offset, next_offset, cause, rewrite_tokens)`. Bodies are JSON bytes or
    `RequestPayload`s; the walk runs without the GIL. Raises `ValueError` for a body that is
    not a JSON object.
    """

@final
class _CacheDiffChain:
    """`_cache_diff` of each body pushed with the one pushed before it, for the requests of a
    session in turn: the previous body's layout is kept, so each push reads structurally only
    what the new body does not repeat. One chain serves one thread at a time.
    """

    def __new__(
        cls, encoding: _Encoding = "o200k_base", estimator: _Estimator = "calibrated"
    ) -> _CacheDiffChain: ...
    def push(self, body: bytes | _RequestPayload) -> tuple[str, int, int, str, int] | None:
        """Where `body` stops extending the body pushed before it (`_cache_diff`'s tuple; `None`
        when it extends it or is the first), then keeps it for the next push. Raises
        `ValueError` for a body that is not a JSON object (the chain then starts over).
        """
    def reset(self) -> None:
        """Forgets the previous body: the next push is compared with nothing."""

def _transform_messages(
    model_json: str,
    messages_json: str,
    normalizer: str = "none",
    *,
    now_ms: int = 0,
    guard: bool = True,
) -> str:
    """pi-ai's `transformMessages` over a JSON array text of messages; returns the JSON text of
    the result. `normalizer` is `none`, `anthropic` or `bedrock`.
    """
