"""Python surface of the Rust payload builders (``clawctx._core.build_request_payload``)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from clawctx import _compat
from clawctx._core import Transcript, _RequestPayload
from clawctx._core import _build_request_payload as _build
from clawctx._core import _transform_messages as _transform
from clawctx.errors import PayloadError as PayloadError  # its name in clawctx.wire

#: The body :func:`build_request_payload` returns (``api``, ``headers``, ``to_dict()``,
#: ``to_json()``).
RequestPayload = _RequestPayload

#: The model APIs :func:`build_request_payload` builds bodies for.
SUPPORTED_APIS = (
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "openai-codex-responses",
    "google-generative-ai",
    "google-vertex",
    "google-gemini-cli",
    "mistral-conversations",
)

#: Every model API pi-ai 0.58.3 knows (``KnownApi``): the payload APIs and Bedrock's Converse
#: stream, whose body the AWS SDK builds.
KNOWN_APIS = (*SUPPORTED_APIS, "bedrock-converse-stream")

#: pi-ai ``Model`` fields and the attribute names a model object (such as
#: :class:`clawctx.engine.ModelSpec`) may carry them under.
_MODEL_ATTRS = (
    ("id", "id"),
    ("name", "name"),
    ("api", "api"),
    ("provider", "provider"),
    ("baseUrl", "base_url"),
    ("reasoning", "reasoning"),
    ("input", "input"),
    ("maxTokens", "max_tokens"),
    ("compat", "compat"),
    ("headers", "headers"),
    ("contextWindow", "context_window"),
)

#: ``maxTokens`` of a model object that does not say (pi-ai's simple-options cap).
DEFAULT_MAX_TOKENS = 32000


def _model_dict(model: Any) -> dict[str, Any]:
    if isinstance(model, Mapping):
        return dict(model)
    out: dict[str, Any] = {}
    for key, attr in _MODEL_ATTRS:
        value = getattr(model, attr, None)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value
    if not {"id", "api", "provider"} <= out.keys():
        raise TypeError("model must be a pi-ai Model mapping or carry id, api and provider")
    out.setdefault("name", out["id"])
    out.setdefault("baseUrl", "")
    out.setdefault("reasoning", False)
    out.setdefault("input", ["text"])
    out.setdefault("maxTokens", DEFAULT_MAX_TOKENS)
    return out


def _context_field(context: Any, *names: str) -> Any:
    for name in names:
        if isinstance(context, Mapping):
            if name in context:
                return context[name]
        elif hasattr(context, name):
            return getattr(context, name)
    return None


def _messages_arg(messages: Any) -> Transcript | str:
    if isinstance(messages, Transcript):
        return messages
    if messages is None:
        return "[]"
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError("context messages must be a Transcript or a list of message dicts")
    # ensure_ascii keeps lone surrogates as escapes, which the core strips like pi-ai.
    return json.dumps(list(messages), allow_nan=False)


def build_request_payload(
    model: Any,
    context: Any,
    options: Mapping[str, Any] | None = None,
    *,
    simple: bool = False,
    now_ms: int | None = None,
    safe: bool | None = None,
) -> RequestPayload:
    """The request body pi-ai sends for ``model["api"]``, and by default one the provider
    accepts.

    ``model`` is a pi-ai ``Model`` mapping (``id``, ``name``, ``api``, ``provider``,
    ``baseUrl``, ``reasoning``, ``input``, ``maxTokens``, optional ``compat``) or an object with
    those fields (``ModelSpec``; ``base_url``/``max_tokens`` spelled in snake case). ``context``
    is ``{system_prompt, messages, tools}`` (``systemPrompt`` also accepted); messages are a
    ``Transcript`` or a list of message dicts, AgentMessages included (``convertToLlm`` runs
    first). ``options`` are the provider's own stream options, or with ``simple=True`` pi-ai's
    ``SimpleStreamOptions`` (``reasoning`` mapped per provider). ``now_ms`` stamps synthetic
    tool results (default: now). Raises :class:`PayloadError` where pi-ai throws.

    **Safe by default**: unless ``safe=False`` or a :func:`clawctx.compat` release is in force,
    the messages first pass the request guard, which leaves valid messages as they are (the
    body is then exactly pi-ai's) and otherwise repairs them so the provider accepts the body:
    repeated tool-call ids made unique, results moved up to their call, orphaned and second
    results dropped, aborted turns left out, a synthetic result for a call without one, a user
    turn before an assistant-first history. ``RequestPayload.guard_changes`` says what changed.

    **Provider-side context management** (opt-in; without these options the body is pi-ai's
    byte for byte). ``options["contextManagement"]``:

    - anthropic-messages: ``"auto"`` (OpenClaw 2026.9's server pruning derived from the model's
      ``contextWindow``; ``{"auto": True, "toolsAllow": [...], "toolsDeny": [...]}`` fills
      ``exclude_tools`` from tool allow/deny lists), or ``{"clearToolUses": ..., "clearThinking":
      ..., "compact": ...}`` (each ``True`` for the provider's defaults or a dict of camelCase
      settings), or ``{"edits": [...]}`` passed through as given. The body gains
      ``context_management.edits`` and :attr:`RequestPayload.headers` the ``anthropic-beta``
      header it needs.
    - OpenAI Responses: ``{"compactThreshold": N}`` gives ``context_management: [{"type":
      "compaction", "compact_threshold": N}]``.

    ``options["promptCacheKey"]`` (OpenAI Responses) sets ``prompt_cache_key``. Bad values
    raise :class:`PayloadError`. See the guide, "Provider-side context management".
    """
    return _build_payload(model, context, options, simple, now_ms, safe, compact=False)


def _build_payload(
    model: Any,
    context: Any,
    options: Mapping[str, Any] | None,
    simple: bool,
    now_ms: int | None,
    safe: bool | None,
    *,
    compact: bool,
) -> RequestPayload:
    model_dict = _model_dict(model)
    request: dict[str, Any] = {"model": model_dict, "options": dict(options or {})}
    system = _context_field(context, "system_prompt", "systemPrompt")
    if system is not None:
        request["systemPrompt"] = system
    tools = _context_field(context, "tools")
    if tools is not None:
        request["tools"] = list(tools)
    messages = _messages_arg(_context_field(context, "messages"))
    clock = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        return _build(
            json.dumps(request, allow_nan=False),
            messages,
            simple=simple,
            now_ms=clock,
            guard=_compat.resolve_safe(safe),
            compact=compact,
        )
    except ValueError as e:
        raise PayloadError(str(e)) from e


def build_compact_request(
    model: Any,
    context: Any,
    options: Mapping[str, Any] | None = None,
    *,
    simple: bool = False,
    now_ms: int | None = None,
    safe: bool | None = None,
) -> RequestPayload:
    """The body of OpenAI's ``POST /responses/compact`` (``client.responses.compact(...)``) for
    an OpenAI Responses ``model``: the ``model``, ``input`` and (Codex) ``instructions`` that
    :func:`build_request_payload` would send for the same arguments, with its
    ``prompt_cache_key``, ``prompt_cache_retention`` and ``service_tier``;
    ``options["previousResponseId"]`` adds ``previous_response_id``. Fields only a generating
    request takes (``stream``, ``store``, ``tools``, ``reasoning``, ``context_management``)
    are left out. The reply's ``output`` is the new input prefix. Raises
    :class:`PayloadError` for another API or a bad option.
    """
    return _build_payload(model, context, options, simple, now_ms, safe, compact=True)


def transform_messages(
    messages: Sequence[Mapping[str, Any]],
    model: Any,
    normalizer: str = "none",
    *,
    now_ms: int | None = None,
    safe: bool | None = None,
) -> list[dict[str, Any]]:
    """pi-ai's ``transformMessages``: replays ``messages`` for ``model`` (thinking of other
    models as text, tool-call ids normalised by ``normalizer`` -- ``none``, ``anthropic`` or
    ``bedrock`` --, errored/aborted turns dropped, synthetic results for orphaned calls stamped
    ``now_ms``). Unless ``safe=False`` or a :func:`clawctx.compat` release is in force, the
    messages first pass the request guard (see :func:`build_request_payload`)."""
    clock = int(time.time() * 1000) if now_ms is None else now_ms
    model_fields = _model_dict(model)
    try:
        out = _transform(
            json.dumps(model_fields),
            json.dumps(list(messages), allow_nan=False),
            normalizer,
            now_ms=clock,
            guard=_compat.resolve_safe(safe),
        )
    except ValueError as e:
        raise PayloadError(str(e)) from e
    result: list[dict[str, Any]] = json.loads(out)
    return result
