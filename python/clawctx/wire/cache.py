"""Which bytes broke the prompt cache: :func:`cache_diff` of two consecutive request bodies.

A provider's prompt cache reuses a prefix of the previous request: for Anthropic the tools,
then the system prompt, then the messages (``platform.claude.com/docs/en/build-with-claude/
prompt-caching``); for OpenAI the tools and the serialized ``instructions`` / ``input`` /
``messages``; for Gemini the system instruction, the tools and the contents. The comparison
runs in Rust (``rust/core/src/payload/cache_diff.rs``) over the JSON bytes, without the GIL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from clawctx._core import _cache_diff, _RequestPayload
from clawctx.errors import RequestBodyError as RequestBodyError  # its name in clawctx.wire

__all__ = ["BREAK_CAUSES", "CacheBreak", "CacheBreakCause", "cache_diff"]

#: Why a request does not extend the previous one (see :class:`CacheBreak`).
CacheBreakCause = Literal[
    "model",
    "tools",
    "system_prompt",
    "history_rewritten",
    "compaction",
    "breakpoint_moved",
]

#: Every :data:`CacheBreakCause`, in the order the walk checks them.
BREAK_CAUSES: tuple[CacheBreakCause, ...] = get_args(CacheBreakCause)

_ENCODINGS = ("o200k_base", "cl100k_base")
_ESTIMATORS = ("calibrated", "exact")


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """Where and why the next request's prompt no longer extends the previous one.

    - ``path``: the JSON path of the first difference, with the next body's keys
      (``system[0].text``, ``tools[2].input_schema``, ``messages[14].content[0]``).
    - ``previous_offset`` / ``next_offset``: byte offsets of the difference in each body's JSON
      bytes (where the value at ``path`` starts, or the first differing byte inside a string or
      number; where an array or object closes when the other body has more there; the body's
      closing brace when that part is missing). For a dict, the bytes of
      ``json.dumps(body, ensure_ascii=False, separators=(",", ":"))``.
    - ``cause``: ``"model"`` (nothing is cached across models), ``"tools"``,
      ``"system_prompt"`` (``system``, ``instructions``, ``systemInstruction`` or a leading
      ``system`` / ``developer`` message), ``"history_rewritten"`` (an earlier message
      changed, was removed or inserted), ``"compaction"`` (the history now starts with pi's
      compaction summary or holds a provider ``compaction`` block or item there),
      ``"breakpoint_moved"`` (only the ``cache_control`` / ``prompt_cache_breakpoint``
      markers differ: the same prompt with its breakpoints elsewhere).
    - ``rewrite_tokens``: the tokens of the next body's cached parts from the break on, which
      the provider writes to the cache again (estimated over the JSON text, so a little above
      the provider's count of the same content).
    """

    path: str
    previous_offset: int
    next_offset: int
    cause: CacheBreakCause
    rewrite_tokens: int


def _body_bytes(body: Any, which: str) -> bytes | _RequestPayload:
    if isinstance(body, _RequestPayload):
        return body
    if isinstance(body, bytes):
        return body
    if isinstance(body, (bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        text = body
    elif isinstance(body, Mapping):
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    else:
        raise TypeError(
            f"{which} body must be a dict, JSON str or bytes, or a RequestPayload, "
            f"not {type(body).__name__}"
        )
    # A lone surrogate becomes its `\udXXX` escape, as JSON.stringify writes it.
    return text.encode("utf-8", "backslashreplace")


def cache_diff(
    previous_body: Any,
    next_body: Any,
    *,
    encoding: Literal["o200k_base", "cl100k_base"] = "o200k_base",
    estimator: Literal["calibrated", "exact"] = "calibrated",
) -> CacheBreak | None:
    """Where ``next_body`` stops extending ``previous_body`` as a provider's prompt cache sees
    it; ``None`` when it extends it (a new turn appended) or is the same prompt.

    The bodies are request bodies as sent: dicts, JSON text (``str`` or ``bytes``) or
    :class:`RequestPayload` objects from :func:`build_request_payload`. The cached parts are
    compared in the provider's order (Anthropic: ``tools``, ``system``, ``messages``; OpenAI
    Responses: ``tools``, ``instructions``, ``input``; Chat Completions and Mistral: ``tools``,
    ``messages``; Gemini: ``systemInstruction``, ``tools``, ``contents``), after a check of
    ``model``. Cache markers (``cache_control``, ``prompt_cache_breakpoint``) are skipped:
    moving a breakpoint along with the conversation is not a break, and is reported (cause
    ``"breakpoint_moved"``) only when nothing else changed. Other fields (``max_tokens``,
    ``temperature``, ``stream``) are not part of the cached prefix and are not compared.
    Strings are compared as written, whitespace between tokens is ignored.

    ``rewrite_tokens`` is counted with ``encoding`` and ``estimator`` (the calibrated
    estimator by default; ``"exact"`` runs the byte-pair encoding). Raises
    :class:`~clawctx.errors.RequestBodyError` when a body is not a JSON object.

    >>> cache_diff({"system": "a", "messages": []}, {"system": "b", "messages": []}).cause
    'system_prompt'
    """
    if encoding not in _ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}: expected one of {_ENCODINGS}")
    if estimator not in _ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}: expected one of {_ESTIMATORS}")
    previous = _body_bytes(previous_body, "previous")
    following = _body_bytes(next_body, "next")
    try:
        found = _cache_diff(previous, following, encoding, estimator)
    except ValueError as err:
        raise RequestBodyError(str(err)) from err
    return _break_from_tuple(found)


def _break_from_tuple(found: tuple[str, int, int, str, int] | None) -> CacheBreak | None:
    """A :class:`CacheBreak` from the native walk's tuple (``None`` stays ``None``)."""
    if found is None:
        return None
    path, previous_offset, next_offset, cause, tokens = found
    return CacheBreak(path, previous_offset, next_offset, cast(CacheBreakCause, cause), tokens)
