"""Provider request payloads: the wire format of a model call.

``build_request_payload`` turns a model, a context (system prompt, messages, tools) and the
stream options into the request body pi-ai (pi-mono 0.58.3 ``packages/ai``) would send for the
model's API; ``transform_messages`` exposes the cross-provider replay layer alone. The
conversion runs in Rust; the body comes back as a :class:`RequestPayload` (``to_dict()``,
``to_json()``). ``validate_request_body`` checks a body against the API's documented request
rules (tool-call pairing, ids, turn order, blank text) and lists what a provider would reject.

``parse_response`` reads the provider's reply back into pi's assistant message as pi-ai does
(``read_response`` also gives the types of the events pi-ai pushes on the way).

``cache_diff`` names where a request body stops extending the previous one as a provider's
prompt cache sees it (the JSON path, the byte offsets, the cause, the tokens written again).

Layer: after ``history`` (it takes a ``Transcript``), before ``prompt``.
"""

from __future__ import annotations

from clawctx.wire.cache import (
    BREAK_CAUSES,
    CacheBreak,
    CacheBreakCause,
    RequestBodyError,
    cache_diff,
)
from clawctx.wire.payload import (
    SUPPORTED_APIS,
    PayloadError,
    RequestPayload,
    build_compact_request,
    build_request_payload,
    transform_messages,
)
from clawctx.wire.response import (
    RESPONSE_APIS,
    ParsedResponse,
    ResponseParseError,
    ResponseStream,
    aiter_response_events,
    aparse_response,
    iter_response_events,
    parse_response,
    read_response,
)
from clawctx.wire.tools import ToolDefinitionError, normalize_tools
from clawctx.wire.validate import VALIDATED_APIS, BodyViolation, validate_request_body

__all__ = [
    "BREAK_CAUSES",
    "RESPONSE_APIS",
    "SUPPORTED_APIS",
    "VALIDATED_APIS",
    "BodyViolation",
    "CacheBreak",
    "CacheBreakCause",
    "ParsedResponse",
    "PayloadError",
    "RequestBodyError",
    "RequestPayload",
    "ResponseParseError",
    "ResponseStream",
    "ToolDefinitionError",
    "aiter_response_events",
    "aparse_response",
    "build_compact_request",
    "build_request_payload",
    "cache_diff",
    "iter_response_events",
    "normalize_tools",
    "parse_response",
    "read_response",
    "transform_messages",
    "validate_request_body",
]
