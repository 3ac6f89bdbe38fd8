"""Strict detection of a history's shape, and the round trip through a clawctx ``Transcript``.

``read(history)`` names the shape (a ``Transcript``, pi dicts, OpenAI Chat messages, OpenAI
Responses / Agents SDK items, Anthropic messages or an Anthropic request mapping with
``messages`` and ``system``, Gemini contents, LangChain or pydantic-ai messages) and converts it;
a history that is not wholly one readable shape raises, naming the first element that breaks
it. ``Converted.restore`` turns a transcript back into the caller's shape, and ``apply`` runs
any transcript operation on a foreign history and returns the result in that shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from clawctx._core import Transcript
from clawctx.interop import _anthropic_messages as anthropic_messages
from clawctx.interop import _carried
from clawctx.interop import _common as c
from clawctx.interop import _gemini_contents as gemini_contents
from clawctx.interop import _langchain_messages as langchain_messages
from clawctx.interop import _openai_chat as openai_chat
from clawctx.interop import _openai_responses as openai_responses
from clawctx.interop import _pi_messages as pi_messages
from clawctx.interop import _pydantic_ai_messages as pydantic_ai_messages

# Ties go to the first: a message every dict format reads alike ({"role": "user",
# "content": "hi"}) means the same thing in each.
_DICT_FORMATS: tuple[ModuleType, ...] = (
    openai_chat,
    anthropic_messages,
    openai_responses,
    pi_messages,
    gemini_contents,
)
_OBJECT_FORMATS: tuple[ModuleType, ...] = (
    langchain_messages,
    pydantic_ai_messages,
    gemini_contents,
)
FORMATS = tuple(m.FORMAT for m in (*_DICT_FORMATS, langchain_messages, pydantic_ai_messages))
#: The provider request API a history in each format is sent to (whose rules the request guard
#: applies); the framework formats and pi's own go to any provider.
FORMAT_APIS: dict[str, str | None] = {
    "anthropic": "anthropic-messages",
    "openai_chat": "openai-completions",
    "openai_responses": "openai-responses",
    "gemini": "google-generative-ai",
    "langchain": None,
    "pydantic_ai": None,
    "pi": None,
}


def _llm_view(messages: Transcript | Sequence[Mapping[str, Any]]) -> list[c.JsonDict]:
    """pi messages as foreign formats see them: bash executions, custom messages and summaries
    become user messages (convertToLlm); system/developer messages stay."""
    return [dict(m) for m in c.llm_view(messages)]


def _detect(history: Sequence[Any]) -> ModuleType:
    candidates: list[ModuleType] | None = None
    for index, element in enumerate(history):
        pool = _DICT_FORMATS if isinstance(element, Mapping) else _OBJECT_FORMATS
        # Once narrowed, only the remaining candidates are asked (one or two per element).
        narrowed = [f for f in (pool if candidates is None else candidates) if f.claims(element)]
        if narrowed:
            candidates = narrowed
            continue
        own = [f for f in pool if f.claims(element)]
        if not own:
            expected = (
                "a message dict of OpenAI Chat, OpenAI Responses, Anthropic, Gemini or pi"
                if isinstance(element, Mapping)
                else "a LangChain BaseMessage, a pydantic-ai ModelMessage or a google-genai Content"
            )
            error = ValueError if isinstance(element, Mapping) else TypeError
            raise error(f"history {c.where(index, element)} is not readable: expected {expected}")
        assert candidates is not None
        raise ValueError(
            f"history {c.where(index, element)} reads as {[f.FORMAT for f in own]}, "
            f"but the elements before it as {[f.FORMAT for f in candidates]}: "
            "a history must be in one format"
        )
    return candidates[0] if candidates else pi_messages


@dataclass(frozen=True)
class Converted:
    """A history read into a transcript, and how to give a transcript back in its shape."""

    format: str
    transcript: Transcript
    origins: tuple[int, ...]  # for each transcript message, the source element it came from
    source: Any
    # Whether a message holds a carried block (`_carried`); None: not looked (a Transcript).
    carried: bool | None = None

    def restore(self, messages: Transcript | Sequence[Mapping[str, Any]]) -> Any:
        """``messages`` in the shape of ``source``."""
        if self.format == "pi":
            return (
                Transcript(messages)
                if isinstance(self.source, Transcript)
                else [dict(m) for m in messages]
            )
        view = _llm_view(messages)
        module = _MODULES[self.format]
        if self.format == "anthropic":
            system, written = module.write(view)
            if isinstance(self.source, Mapping):
                request = {k: v for k, v in self.source.items() if k not in ("system", "messages")}
                if system is not None:
                    request["system"] = system
                request["messages"] = written
                return request
            return written
        if self.format == "gemini":
            _, contents = module.write(view)
            if self.source and not isinstance(self.source[0], Mapping):
                from google.genai import types

                return [types.Content.model_validate(item) for item in contents]
            return contents
        return module.write(view)


_MODULES: dict[str, ModuleType] = {
    m.FORMAT: m for m in (*_DICT_FORMATS, langchain_messages, pydantic_ai_messages)
}


def read(history: Any) -> Converted:
    """Reads ``history`` strictly into a transcript (``TypeError``/``ValueError`` otherwise)."""
    if isinstance(history, Transcript):
        return Converted("pi", history, tuple(range(len(history))), history)
    if isinstance(history, Mapping):
        if not isinstance(history.get("messages"), list):
            raise TypeError(
                "a mapping history must be an Anthropic request with a 'messages' list "
                f"(and optional 'system'); got keys {sorted(history)}"
            )
        messages, origins = anthropic_messages.read(history["messages"], history.get("system"))
        return Converted(
            "anthropic", Transcript(messages), tuple(origins), history, _any_carried(messages)
        )
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise TypeError(
            f"a history is a Transcript, a list of messages or an Anthropic request mapping, "
            f"not {type(history).__name__}"
        )
    module = _detect(history)
    messages, origins = module.read(history)
    return Converted(
        module.FORMAT, Transcript(messages), tuple(origins), history, _any_carried(messages)
    )


def _any_carried(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        isinstance(m.get("content"), list)
        and any(isinstance(b, Mapping) and _carried.is_carried(b) for b in m["content"])
        for m in messages
    )


def apply(operation: Callable[..., Any], history: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs a transcript operation on ``history`` in any readable shape.

    A ``Transcript`` result (or the ``.messages`` of a report) comes back in the caller's
    shape; any other result (a count, a list of violations) is returned as it is.
    """
    converted = read(history)
    result = operation(converted.transcript, *args, **kwargs)
    if isinstance(result, Transcript):
        return converted.restore(result)
    if isinstance(getattr(result, "messages", None), Transcript):
        return converted.restore(result.messages)
    return result
