"""Validation of produced payloads against the official SDK request types (``anthropic``,
``openai``, ``google-genai``, test dependencies), as the cases' README describes: pydantic
``TypeAdapter``s over the anthropic/openai TypedDicts, every lazily validated ``Iterable``
iterated, and keys the type does not declare reported (TypedDict validation drops them
silently); google-genai's pydantic models forbid unknown keys themselves."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# Keys pi-ai sends on purpose that the SDK types do not declare (the cases' README lists them).
ALLOWED_UNKNOWN = {
    # anthropic 2.x dropped `temperature` from MessageCreateParams; the API still takes it.
    "anthropic-messages": {"temperature"},
    "openai-completions": {
        "reasoning_content",
        "reasoning",
        "reasoning_text",
        "reasoning_details",
        "name",
        "cache_control",
        "enable_thinking",
        "chat_template_kwargs",
        "provider",
        "providerOptions",
    },
}


def _materialize(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _materialize(v) for k, v in x.items()}
    if isinstance(x, (str, bytes, int, float, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)) or hasattr(x, "__iter__"):
        return [_materialize(v) for v in x]
    return x


def _unknown_keys(orig: Any, val: Any, path: str = "$") -> list[str]:
    out: list[str] = []
    if isinstance(orig, dict) and isinstance(val, dict):
        for k, v in orig.items():
            if k not in val:
                out.append(f"{path}.{k}")
            else:
                out += _unknown_keys(v, val[k], f"{path}.{k}")
    elif isinstance(orig, list) and isinstance(val, list):
        for a, b in zip(orig, val, strict=False):
            out += _unknown_keys(a, b, f"{path}[]")
    return out


@functools.cache
def _adapters(api: str) -> tuple[Any, Any, str]:
    """``(body adapter, item adapter, items key)`` for an API."""
    from pydantic import TypeAdapter

    if api == "anthropic-messages":
        from anthropic.types import MessageParam
        from anthropic.types.message_create_params import MessageCreateParamsStreaming

        return TypeAdapter(MessageCreateParamsStreaming), TypeAdapter(MessageParam), "messages"
    if api == "openai-completions":
        from openai.types.chat import ChatCompletionMessageParam
        from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

        return (
            TypeAdapter(CompletionCreateParamsStreaming),
            TypeAdapter(ChatCompletionMessageParam),
            "messages",
        )
    from openai.types.responses import ResponseInputItemParam
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    return TypeAdapter(ResponseCreateParamsStreaming), TypeAdapter(ResponseInputItemParam), "input"


def _check(adapter: Any, obj: Any) -> list[str]:
    validated = _materialize(adapter.validate_python(obj))
    return _unknown_keys(obj, validated)


def _google_problems(api: str, payload: dict[str, Any]) -> list[str]:
    """google-genai's types are pydantic models with ``extra="forbid"``: unknown keys raise."""
    from google.genai import types as gt

    if api == "google-gemini-cli":
        request = payload["request"]
        for content in request["contents"]:
            gt.Content.model_validate(content)
        if "systemInstruction" in request:
            gt.Content.model_validate(request["systemInstruction"])
        for tool in request.get("tools", []):
            gt.Tool.model_validate(tool)
        if "generationConfig" in request:
            gt.GenerationConfig.model_validate(request["generationConfig"])
        return []
    gt._GenerateContentParameters.model_validate(payload)
    for content in payload["contents"]:
        gt.Content.model_validate(content)
    gt.GenerateContentConfig.model_validate(payload["config"])
    return []


def sdk_problems(api: str, payload: dict[str, Any]) -> list[str]:
    """Unknown keys of ``payload`` under the SDK types of ``api`` (raises
    ``pydantic.ValidationError`` when a value does not validate)."""
    if api.startswith("google-"):
        return _google_problems(api, payload)
    body, item, key = _adapters(api)
    allowed = ALLOWED_UNKNOWN.get(api, set())
    unknown = _check(body, payload)
    for part in payload.get(key, []):
        unknown += _check(item, part)
    return sorted({u for u in unknown if u.rsplit(".", 1)[-1] not in allowed})


Validator = Callable[[str, dict[str, Any]], list[str]]
