"""Request-body validators: the structural rules each provider enforces on what is sent.

:func:`validate_request_body` reads a JSON request body (as :func:`build_request_payload`
returns it, or as pi-ai passes it to its ``onPayload`` hook) and lists every rule of the
target API that the body breaks. An empty list means the provider accepts the body's shape:
tool calls and their results pair up, ids are well-formed and unique, the first turn is the
user's, no text is blank. It does not check model names, options or sizes.

The rules are the ones the providers document or answer with a 400; each checker cites the
documented text it enforces. The validator is independent of the payload builders on purpose:
it is the oracle the builders are tested against.

Layer: ``wire`` (imports nothing from clawctx).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["VALIDATED_APIS", "BodyViolation", "validate_request_body"]


@dataclass(frozen=True)
class BodyViolation:
    """One broken request rule.

    ``path`` locates the offending item in the body (``messages[3].content[0]``,
    ``input[5]``, ``contents[2].parts[1]``); ``rule`` is a short kebab-case name
    (``duplicate-tool-use-id``, ``function-call-without-output``, ...); ``detail`` says what
    was found.
    """

    path: str
    rule: str
    detail: str


# Anthropic: "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'" (the Messages API
# error text; the same pattern is documented for `tool_use_id`). Bedrock Converse documents
# `toolUseId` as "Length Constraints: Minimum length of 1. Maximum length of 64. Pattern:
# ^[a-zA-Z0-9_-]+$" (API reference, ToolUseBlock).
_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
_BEDROCK_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# Mistral: tool call ids must be "a-z, A-Z, 0-9, with a length of 9" (the API's 400 text).
_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")

_Found = list[BodyViolation]


def _blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _messages(body: Mapping[str, Any], key: str) -> list[Any]:
    return _list(body.get(key))


def _user_assistant_turns(
    messages: list[Any], found: _Found
) -> Iterator[tuple[int, str, Mapping[str, Any], str]]:
    """``(index, where, message, role)`` of each message whose role is ``user`` or
    ``assistant`` (the only roles Anthropic and Bedrock take); any other is reported
    (``role-not-allowed``) and skipped."""
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if role not in ("user", "assistant"):
            found.append(BodyViolation(where, "role-not-allowed", f"role {role!r}"))
            continue
        yield i, where, msg, role


def _tool_use_id(
    tid: Any, pattern: re.Pattern[str], where: str, seen: set[str], found: _Found
) -> None:
    """A tool call id must match the provider's ``pattern`` and be unique in the request."""
    if not isinstance(tid, str) or not pattern.fullmatch(tid):
        found.append(BodyViolation(where, "invalid-tool-use-id", f"id {tid!r}"))
    if isinstance(tid, str):
        if tid in seen:
            found.append(BodyViolation(where, "duplicate-tool-use-id", f"id {tid!r}"))
        seen.add(tid)


# --- Anthropic Messages ----------------------------------------------------------------------


def _anthropic(body: Mapping[str, Any]) -> _Found:
    """Anthropic Messages API rules (docs.anthropic.com, "Messages" and "Tool use"):

    - "Our models are trained to operate on alternating user and assistant conversational
      turns" with roles ``user`` / ``assistant`` only; the first message must be ``user``
      (the API answers "messages: first message must use the "user" role").
    - "tool_result blocks must come FIRST in the content array" of "the user message
      immediately following" the assistant's ``tool_use``, and each ``tool_use`` needs its
      result there ("tool_use ids were found without tool_result blocks immediately after").
    - A ``tool_result`` must answer a ``tool_use`` of the previous message ("unexpected
      tool_use_id found in tool_result blocks"); ``tool_use`` ids are unique ("tool_use ids
      must be unique") and match ``^[a-zA-Z0-9_-]+$``.
    - "text content blocks must contain non-whitespace text"; "all messages must have
      non-empty content except for the optional final assistant message".
    - Server compaction (beta ``compact-2026-01-12``): a ``compaction`` block must be the first
      block of the conversation (``compaction_block_misplaced``; an assistant turn may then come
      first), and at most one holds content (``compaction_block_ambiguous``).
    """
    found: _Found = []
    messages = _messages(body, "messages")
    seen_ids: set[str] = set()
    with_content = 0
    for i, where, msg, role in _user_assistant_turns(messages, found):
        for j, block in enumerate(_list(msg.get("content"))):
            if isinstance(block, Mapping) and block.get("type") == "compaction":
                if (i, j) != (0, 0):
                    found.append(
                        BodyViolation(
                            f"{where}.content[{j}]",
                            "compaction-block-misplaced",
                            "not the first block of the conversation",
                        )
                    )
                if isinstance(block.get("content"), str):
                    with_content += 1
                    if with_content == 2:
                        found.append(
                            BodyViolation(
                                f"{where}.content[{j}]",
                                "compaction-block-ambiguous",
                                "more than one compaction block with content",
                            )
                        )
        if i == 0 and role != "user" and not _starts_with_compaction(msg):
            found.append(BodyViolation(where, "first-message-not-user", f"role {role!r}"))
        content = msg.get("content")
        last_assistant = i == len(messages) - 1 and role == "assistant"
        if isinstance(content, str):
            if content == "" and not last_assistant:
                found.append(BodyViolation(where, "empty-content", "content is empty"))
            elif content.strip() == "" and content != "":
                found.append(BodyViolation(where, "empty-text-block", "whitespace-only text"))
            continue
        blocks = _list(content)
        if not blocks and not last_assistant:
            found.append(BodyViolation(where, "empty-content", "content is empty"))
        for j, block in enumerate(blocks):
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and _blank(block.get("text")):
                found.append(
                    BodyViolation(f"{where}.content[{j}]", "empty-text-block", "blank text")
                )
            elif kind == "tool_use":
                _tool_use_id(
                    block.get("id"), _ANTHROPIC_ID, f"{where}.content[{j}]", seen_ids, found
                )
        if role == "user":
            _anthropic_results(messages, i, blocks, found)
        else:
            _anthropic_answers(messages, i, blocks, found)
    _anthropic_cache_breakpoints(body, found)
    return found


def _starts_with_compaction(msg: Mapping[str, Any]) -> bool:
    blocks = _list(msg.get("content"))
    return bool(blocks) and isinstance(blocks[0], Mapping) and blocks[0].get("type") == "compaction"


#: Anthropic's limit on cache breakpoints per request (prompt-caching docs: "You can define up
#: to 4 cache breakpoints").
_MAX_CACHE_BREAKPOINTS = 4


def _cache_markers(blocks: Any, prefix: str, out: list[tuple[str, Any]]) -> None:
    for j, block in enumerate(_list(blocks)):
        if not isinstance(block, Mapping):
            continue
        path = f"{prefix}[{j}]"
        if block.get("cache_control") is not None:
            out.append((path, block["cache_control"]))
        _cache_markers(block.get("content"), f"{path}.content", out)


def _anthropic_cache_breakpoints(body: Mapping[str, Any], found: _Found) -> None:
    """Anthropic prompt caching (docs, "Prompt caching"): at most 4 ``cache_control``
    breakpoints; with mixed TTLs, a ``1h`` breakpoint must come before any ``5m`` one (the
    default) in prefix order ``tools``, ``system``, ``messages``. The top-level automatic
    ``cache_control`` is not counted (whether it takes a slot is not confirmed here)."""
    markers: list[tuple[str, Any]] = []
    for i, tool in enumerate(_list(body.get("tools"))):
        if isinstance(tool, Mapping) and tool.get("cache_control") is not None:
            markers.append((f"tools[{i}]", tool["cache_control"]))
    _cache_markers(body.get("system"), "system", markers)
    for i, msg in enumerate(_messages(body, "messages")):
        if isinstance(msg, Mapping):
            _cache_markers(msg.get("content"), f"messages[{i}].content", markers)
    short_at: str | None = None
    for n, (path, control) in enumerate(markers):
        if n >= _MAX_CACHE_BREAKPOINTS:
            found.append(
                BodyViolation(
                    path,
                    "too-many-cache-breakpoints",
                    f"breakpoint {n + 1} of {len(markers)}; at most {_MAX_CACHE_BREAKPOINTS}",
                )
            )
        ttl = control.get("ttl") if isinstance(control, Mapping) else None
        if ttl not in (None, "5m", "1h"):
            found.append(BodyViolation(path, "invalid-cache-ttl", f"ttl {ttl!r}"))
        elif ttl == "1h" and short_at is not None:
            found.append(
                BodyViolation(
                    path, "cache-ttl-order", f"a 1h breakpoint after the 5m at {short_at}"
                )
            )
        elif ttl != "1h" and short_at is None:
            short_at = path


def _tool_use_ids(msg: Any) -> list[Any]:
    if not isinstance(msg, Mapping) or msg.get("role") != "assistant":
        return []
    return [
        b.get("id")
        for b in _list(msg.get("content"))
        if isinstance(b, Mapping) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def _anthropic_results(messages: list[Any], i: int, blocks: list[Any], found: _Found) -> None:
    calls = set(_tool_use_ids(messages[i - 1])) if i > 0 else set()
    answered: set[str] = set()
    other_seen = False
    for j, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            continue
        where = f"messages[{i}].content[{j}]"
        if block.get("type") != "tool_result":
            other_seen = True
            continue
        tid = block.get("tool_use_id")
        if other_seen and calls:
            found.append(BodyViolation(where, "tool-result-not-first", f"id {tid!r}"))
        if tid not in calls:
            found.append(BodyViolation(where, "tool-result-without-tool-use", f"id {tid!r}"))
        elif tid in answered:
            found.append(BodyViolation(where, "duplicate-tool-result", f"id {tid!r}"))
        if isinstance(tid, str):
            answered.add(tid)
        for k, inner in enumerate(_list(block.get("content"))):
            if (
                isinstance(inner, Mapping)
                and inner.get("type") == "text"
                and _blank(inner.get("text"))
            ):
                found.append(
                    BodyViolation(f"{where}.content[{k}]", "empty-text-block", "blank text")
                )


def _anthropic_answers(messages: list[Any], i: int, blocks: list[Any], found: _Found) -> None:
    nxt = messages[i + 1] if i + 1 < len(messages) else None
    given: set[Any] = set()
    if isinstance(nxt, Mapping) and nxt.get("role") == "user":
        given = {
            b.get("tool_use_id")
            for b in _list(nxt.get("content"))
            if isinstance(b, Mapping) and b.get("type") == "tool_result"
        }
    for j, block in enumerate(blocks):
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            tid = block.get("id")
            if tid not in given:
                found.append(
                    BodyViolation(
                        f"messages[{i}].content[{j}]", "tool-use-without-result", f"id {tid!r}"
                    )
                )


# --- OpenAI Chat Completions and Mistral -----------------------------------------------------


def _chat(
    body: Mapping[str, Any],
    *,
    calls_key: str,
    result_key: str,
    id_pattern: re.Pattern[str] | None,
) -> _Found:
    """Tool pairing of a chat-style body (``messages`` with ``role: tool`` results).

    OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages
    responding to each 'tool_call_id'" and "messages with role 'tool' must be a response to a
    preceding message with 'tool_calls'" (the Chat Completions 400 texts). Mistral answers
    "Not the same number of function calls and responses" for the same shapes.
    """
    found: _Found = []
    messages = _messages(body, "messages")
    seen: set[str] = set()
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if role == "tool":
            tid = msg.get(result_key) if isinstance(msg, Mapping) else None
            found.append(BodyViolation(f"messages[{i}]", "tool-result-without-call", f"id {tid!r}"))
            i += 1
            continue
        calls = _list(msg.get(calls_key)) if role == "assistant" else []
        if not calls:
            i += 1
            continue
        pending: dict[str, int] = {}
        for j, call in enumerate(calls):
            tid = call.get("id") if isinstance(call, Mapping) else None
            where = f"messages[{i}].{calls_key}[{j}]"
            if id_pattern is not None and (
                not isinstance(tid, str) or not id_pattern.fullmatch(tid)
            ):
                found.append(BodyViolation(where, "invalid-tool-call-id", f"id {tid!r}"))
            if isinstance(tid, str):
                if tid in seen:
                    found.append(BodyViolation(where, "duplicate-tool-call-id", f"id {tid!r}"))
                seen.add(tid)
                pending.setdefault(tid, j)
        answered: set[str] = set()
        k = i + 1
        while k < len(messages):
            res = messages[k]
            if not isinstance(res, Mapping) or res.get("role") != "tool":
                break
            tid = res.get(result_key)
            if tid not in pending:
                found.append(
                    BodyViolation(f"messages[{k}]", "tool-result-without-call", f"id {tid!r}")
                )
            elif tid in answered:
                found.append(
                    BodyViolation(f"messages[{k}]", "duplicate-tool-result", f"id {tid!r}")
                )
            if isinstance(tid, str):
                answered.add(tid)
            k += 1
        for tid, j in pending.items():
            if tid not in answered:
                found.append(
                    BodyViolation(
                        f"messages[{i}].{calls_key}[{j}]", "tool-call-without-result", f"id {tid!r}"
                    )
                )
        i = k
    return found


def _openai_chat(body: Mapping[str, Any]) -> _Found:
    return _chat(body, calls_key="tool_calls", result_key="tool_call_id", id_pattern=None)


def _mistral(body: Mapping[str, Any]) -> _Found:
    # The Mistral SDK body (pi-ai `providers/mistral.ts`) spells the keys `toolCalls` and
    # `toolCallId`; the raw HTTP API `tool_calls` / `tool_call_id`. Accept whichever is there.
    messages = _messages(body, "messages")
    camel = any(
        isinstance(m, Mapping) and ("toolCalls" in m or "toolCallId" in m) for m in messages
    )
    return _chat(
        body,
        calls_key="toolCalls" if camel else "tool_calls",
        result_key="toolCallId" if camel else "tool_call_id",
        id_pattern=_MISTRAL_ID,
    )


# --- OpenAI Responses ------------------------------------------------------------------------


def _responses(body: Mapping[str, Any]) -> _Found:
    """OpenAI Responses ``input`` items: "No tool output found for function call <call_id>"
    (a ``function_call`` without its ``function_call_output``), "No tool call found for
    function call output with call_id <id>" (an output before or without its call), and
    "Duplicate item found with id <id>" (item ids are unique in a request). A second output
    for one call, or a repeated ``call_id``, is refused the same way.

    Item ids include the ``msg_<n>`` ids pi-ai gives assistant text without a stored id
    (pi-mono 0.58.3 ``packages/ai/src/providers/openai-responses-shared.ts``,
    ``convertResponsesMessages``): two text blocks of one turn, or a stored ``msg_4`` beside a
    generated one, collide and OpenAI answers "Duplicate item found with id msg_4"
    (earendil-works/pi#5147, #5149, #5151)."""
    found: _Found = []
    items = _messages(body, "input")
    calls: dict[str, int] = {}
    outputs: Counter[str] = Counter()
    item_ids: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        where = f"input[{i}]"
        iid = item.get("id")
        if isinstance(iid, str):
            if iid in item_ids:
                found.append(BodyViolation(where, "duplicate-item-id", f"id {iid!r}"))
            item_ids.add(iid)
        kind = item.get("type")
        cid = item.get("call_id")
        if kind == "function_call":
            if not cid:
                # The API's `call_id` is a required, non-empty string.
                found.append(
                    BodyViolation(where, "empty-call-id", "a function_call without call_id")
                )
            if isinstance(cid, str) and cid in calls:
                found.append(BodyViolation(where, "duplicate-call-id", f"call_id {cid!r}"))
            elif isinstance(cid, str):
                calls[cid] = i
        elif kind == "function_call_output":
            if cid not in calls:
                found.append(BodyViolation(where, "output-without-call", f"call_id {cid!r}"))
            elif outputs[cid] >= 1:
                found.append(
                    BodyViolation(where, "duplicate-function-call-output", f"call_id {cid!r}")
                )
            if isinstance(cid, str) and cid in calls:
                # An output before its call answers nothing; the call still needs one.
                outputs[cid] += 1
    for cid, i in calls.items():
        if outputs[cid] == 0:
            found.append(
                BodyViolation(f"input[{i}]", "function-call-without-output", f"call_id {cid!r}")
            )
    return found


# --- Gemini ----------------------------------------------------------------------------------


def _parts(content: Any, key: str) -> list[tuple[int, Any]]:
    if not isinstance(content, Mapping):
        return []
    return [
        (j, p[key].get("name") if isinstance(p[key], Mapping) else None)
        for j, p in enumerate(_list(content.get("parts")))
        if isinstance(p, Mapping) and key in p
    ]


def _gemini_contents(body: Mapping[str, Any], nested: bool) -> _Found:
    """Gemini ``contents``: "Please ensure that function call turn comes immediately after a
    user turn or after a function response turn"; "Please ensure that the number of function
    response parts is equal to the number of function call parts of the function call turn"
    (the 400 texts of ``generateContent``); the first content is the user's (multi-turn
    conversations start with a ``user`` turn, "Multi-turn conversations" in the Gemini API
    docs)."""
    found: _Found = []
    request = body.get("request") if nested else body
    prefix = "request.contents" if nested else "contents"
    contents = _messages(request if isinstance(request, Mapping) else {}, "contents")
    for i, content in enumerate(contents):
        where = f"{prefix}[{i}]"
        role = content.get("role") if isinstance(content, Mapping) else None
        if i == 0 and role != "user":
            found.append(BodyViolation(where, "first-content-not-user", f"role {role!r}"))
        calls = _parts(content, "functionCall")
        responses = _parts(content, "functionResponse")
        if responses:
            prev = contents[i - 1] if i > 0 else None
            prev_calls = _parts(prev, "functionCall")
            if (
                role != "user"
                or not prev_calls
                or (isinstance(prev, Mapping) and prev.get("role") != "model")
            ):
                found.append(
                    BodyViolation(
                        f"{where}.parts[{responses[0][0]}]",
                        "function-response-without-call",
                        f"{len(responses)} functionResponse part(s) not after a functionCall turn",
                    )
                )
        if not calls or role != "model":
            continue
        prev = contents[i - 1] if i > 0 else None
        if i > 0 and not (isinstance(prev, Mapping) and prev.get("role") == "user"):
            found.append(
                BodyViolation(
                    f"{where}.parts[{calls[0][0]}]",
                    "function-call-turn-misplaced",
                    "functionCall turn not after a user or functionResponse turn",
                )
            )
        nxt = contents[i + 1] if i + 1 < len(contents) else None
        answers = (
            _parts(nxt, "functionResponse")
            if isinstance(nxt, Mapping) and nxt.get("role") == "user"
            else []
        )
        if not answers:
            found.append(
                BodyViolation(
                    f"{where}.parts[{calls[0][0]}]",
                    "function-call-without-response",
                    f"{len(calls)} functionCall part(s), next turn has no functionResponse",
                )
            )
        elif len(answers) != len(calls):
            found.append(
                BodyViolation(
                    f"{where}.parts[{calls[0][0]}]",
                    "function-response-count-mismatch",
                    f"{len(calls)} functionCall part(s), {len(answers)} functionResponse part(s)",
                )
            )
        elif Counter(n for _, n in calls) != Counter(n for _, n in answers):
            found.append(
                BodyViolation(
                    f"{where}.parts[{calls[0][0]}]",
                    "function-response-name-mismatch",
                    f"calls {[n for _, n in calls]}, responses {[n for _, n in answers]}",
                )
            )
    return found


def _gemini(body: Mapping[str, Any]) -> _Found:
    return _gemini_contents(body, nested=False)


def _gemini_cli(body: Mapping[str, Any]) -> _Found:
    # Cloud Code Assist wraps the generateContent request: {project, model, request: {...}}.
    return _gemini_contents(body, nested=True)


# --- Bedrock Converse ------------------------------------------------------------------------


def _bedrock(body: Mapping[str, Any]) -> _Found:
    """Bedrock Converse ``messages``: "A conversation must start with a user message",
    "A conversation must alternate between user and assistant roles", "The number of toolResult
    blocks at messages.N.content exceeds the number of toolUse blocks of previous turn",
    "Expected toolResult blocks at messages.N.content for the following Ids", "The text field
    in the ContentBlock object is blank" (the ValidationException texts); ``toolUseId`` matches
    ``^[a-zA-Z0-9_-]+$``, 1 to 64 characters (API reference, ToolUseBlock)."""
    found: _Found = []
    messages = _messages(body, "messages")
    seen: set[str] = set()
    prev_role: Any = None
    for i, where, msg, role in _user_assistant_turns(messages, found):
        if i == 0 and role != "user":
            found.append(BodyViolation(where, "first-message-not-user", f"role {role!r}"))
        if role == prev_role:
            found.append(BodyViolation(where, "roles-not-alternating", f"two {role} messages"))
        prev_role = role
        blocks = _list(msg.get("content"))
        if not blocks:
            found.append(BodyViolation(where, "empty-content", "content is empty"))
        prev_uses = _bedrock_ids(messages[i - 1], "toolUse") if i > 0 and role == "user" else []
        answered: set[Any] = set()
        for j, block in enumerate(blocks):
            if not isinstance(block, Mapping):
                continue
            bwhere = f"{where}.content[{j}]"
            if "text" in block and _blank(block.get("text")):
                found.append(BodyViolation(bwhere, "empty-text-block", "blank text"))
            use = block.get("toolUse")
            if isinstance(use, Mapping):
                _tool_use_id(use.get("toolUseId"), _BEDROCK_ID, bwhere, seen, found)
            result = block.get("toolResult")
            if isinstance(result, Mapping):
                tid = result.get("toolUseId")
                if tid not in prev_uses:
                    found.append(
                        BodyViolation(bwhere, "tool-result-without-tool-use", f"id {tid!r}")
                    )
                elif tid in answered:
                    found.append(BodyViolation(bwhere, "duplicate-tool-result", f"id {tid!r}"))
                answered.add(tid)
        if role == "assistant":
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            given = (
                set(_bedrock_ids(nxt, "toolResult"))
                if isinstance(nxt, Mapping) and nxt.get("role") == "user"
                else set()
            )
            for j, block in enumerate(blocks):
                use = block.get("toolUse") if isinstance(block, Mapping) else None
                if isinstance(use, Mapping) and use.get("toolUseId") not in given:
                    found.append(
                        BodyViolation(
                            f"{where}.content[{j}]",
                            "tool-use-without-result",
                            f"id {use.get('toolUseId')!r}",
                        )
                    )
    return found


def _bedrock_ids(msg: Any, key: str) -> list[Any]:
    if not isinstance(msg, Mapping):
        return []
    return [
        b[key].get("toolUseId")
        for b in _list(msg.get("content"))
        if isinstance(b, Mapping) and isinstance(b.get(key), Mapping)
    ]


_CHECKERS: dict[str, Callable[[Mapping[str, Any]], _Found]] = {
    "anthropic-messages": _anthropic,
    "openai-completions": _openai_chat,
    "openai-responses": _responses,
    "azure-openai-responses": _responses,
    "openai-codex-responses": _responses,
    "google-generative-ai": _gemini,
    "google-vertex": _gemini,
    "google-gemini-cli": _gemini_cli,
    "mistral-conversations": _mistral,
    "bedrock-converse-stream": _bedrock,
}

#: The model APIs :func:`validate_request_body` knows the rules of.
VALIDATED_APIS: tuple[str, ...] = tuple(_CHECKERS)


def validate_request_body(body: Mapping[str, Any], api: str) -> list[BodyViolation]:
    """Lists the request rules of model API ``api`` that the JSON request ``body`` breaks.

    ``body`` is the dict a provider receives (``RequestPayload.to_dict()``, or pi-ai's
    ``onPayload`` argument); ``api`` is a pi-ai API name, one of :data:`VALIDATED_APIS`. The
    checks are structural (tool-call pairing, id shape and uniqueness, turn order, blank
    text), the ones a provider answers with a 400; an empty list means none is broken.
    Raises ``ValueError`` listing the known APIs for an unknown ``api``.
    """
    checker = _CHECKERS.get(api)
    if checker is None:
        raise ValueError(f"unknown api {api!r}; known APIs: {', '.join(VALIDATED_APIS)}")
    if not isinstance(body, Mapping):
        raise TypeError(
            f"body must be a mapping (the JSON request body), not {type(body).__name__}"
        )
    return checker(body)
