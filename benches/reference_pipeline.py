"""The per-request context pipeline in plain Python, the way a competent developer would write
it without clawctx: orjson per line, dict entries, the baseline rules of OpenClaw 2026.3.13 and pi-mono 0.58.3.

    read the file → orjson.loads per line → header check and index →
    buildSessionContext of the leaf (pi session-manager.ts: compaction, branch summaries,
    custom messages) → repairToolUseResultPairing (OpenClaw session-transcript-repair.ts,
    synthetic results stamped with a fixed ``now_ms``) → limitHistoryTurns (OpenClaw
    pi-embedded-runner/history.ts) → pi's estimateTokens per message (compaction/compaction.ts,
    UTF-16 lengths) → pruneContextMessages (OpenClaw context-pruning/pruner.ts, baseline,
    default cache-ttl settings) →
    orjson.dumps of the message list.

Loading follows pi (`packages/coding-agent/src/core/session-manager.ts`, ``loadEntriesFromFile``): lines that fail to parse are skipped, a file whose first record is
not a session header has no entries. Only v3 files are handled (migration of v1/v2 files is
out of scope here: the generator writes v3). The rules follow the choices clawctx made where
the spec leaves room (a ``parentId`` cycle stops the path walk; soft trim never splits a
surrogate pair), so both produce the same messages on undamaged files
(``tests/project/test_reference_pipeline.py``). On damaged files they differ on purpose: pi skips a
damaged line, clawctx salvages the records in it.

``repair_file`` is OpenClaw's session-file repair (`src/agents/session-file-repair.ts`,
``repairSessionFileIfNeeded``, generation G3) the same way: read every line,
parse it, drop what does not parse, re-serialize every entry, replace the file atomically.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson

Message = dict[str, Any]

#: Text of a synthetic tool result (OpenClaw session-transcript-repair.ts, makeMissingToolResult).
MISSING_TOOL_RESULT_TEXT = (
    "[openclaw] missing tool result in session history; inserted synthetic error result for "
    "transcript repair."
)
PAIRING_TOOL_CALL_TYPES = frozenset(("toolCall", "toolUse", "functionCall"))
IMAGE_CHARS = 4800  # pi's estimate charges an image in custom/toolResult messages this much
IMAGE_MARKER = "[image removed during context pruning]"  # what pruning leaves of an image
PRUNER_IMAGE_CHARS = 8000
PRUNER_OTHER_ROLE_CHARS = 256

#: The pipeline's parameters (the same for clawctx and the reference).
HISTORY_TURNS = 30
CONTEXT_WINDOW_TOKENS = 200_000
NOW_MS = 0


@dataclass(frozen=True)
class PruningSettings:
    """``computeEffectiveSettings({"mode": "cache-ttl"})`` (OpenClaw context-pruning/settings.ts
    defaults)."""

    keep_last_assistants: int = 3
    soft_trim_ratio: float = 0.3
    hard_clear_ratio: float = 0.5
    min_prunable_tool_chars: int = 50_000
    soft_trim_max_chars: int = 4000
    soft_trim_head_chars: int = 1500
    soft_trim_tail_chars: int = 1500
    hard_clear_enabled: bool = True
    hard_clear_placeholder: str = "[Old tool result content cleared]"
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


DEFAULT_PRUNING = PruningSettings()


@dataclass
class Stats:
    """What the pipeline did (used by the tests to check that the rules were exercised)."""

    skipped_lines: int = 0
    compaction: bool = False
    synthetic_results: int = 0
    dropped_orphans: int = 0
    dropped_duplicates: int = 0
    soft_trimmed: int = 0
    hard_cleared: int = 0
    extra: dict[str, int] = field(default_factory=dict)


# ---- loading ------------------------------------------------------------------------------


def load_entries(path: str | os.PathLike[str], stats: Stats | None = None) -> list[dict[str, Any]]:
    """Every parsable line of the file (header first), or ``[]`` without a valid header."""
    with open(path, "rb") as f:
        data = f.read()
    entries = []
    skipped = 0
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            skipped += 1
            continue
        if isinstance(entry, dict):  # a JSON value that is not an object is no entry
            entries.append(entry)
    if stats is not None:
        stats.skipped_lines = skipped
    if not entries:
        return []
    header = entries[0]
    if not (header.get("type") == "session" and isinstance(header.get("id"), str)):
        return []
    version = header.get("version", 1)
    if version != 3:
        raise ValueError(f"the reference pipeline reads v3 files only (got version {version})")
    return entries


# ---- buildSessionContext (pi session-manager.ts) ------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_to_ms(timestamp: Any) -> int | None:
    """``Date.parse`` of an ISO timestamp (``None`` where JavaScript would give NaN)."""
    if not isinstance(timestamp, str):
        return None
    try:
        parsed = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def _without_none(fields: dict[str, Any]) -> dict[str, Any]:
    # JSON.stringify leaves out undefined fields.
    return {k: v for k, v in fields.items() if v is not _MISSING}


_MISSING = object()


def _entry_message(entry: dict[str, Any]) -> Message | None:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if kind == "custom_message":
        return _without_none(
            {
                "role": "custom",
                "customType": entry.get("customType", _MISSING),
                "content": entry.get("content", _MISSING),
                "display": entry.get("display", _MISSING),
                "details": entry.get("details", _MISSING),
                "timestamp": iso_to_ms(entry.get("timestamp")),
            }
        )
    if kind == "branch_summary" and _truthy(entry.get("summary")):
        return _without_none(
            {
                "role": "branchSummary",
                "summary": entry["summary"],
                "fromId": entry.get("fromId", _MISSING),
                "timestamp": iso_to_ms(entry.get("timestamp")),
            }
        )
    return None


def _truthy(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False
    return value is not None and value is not False and value != 0 and value != ""


def build_session_context(
    entries: list[dict[str, Any]], stats: Stats | None = None
) -> tuple[list[Message], Any, Any]:
    """The leaf's context: ``(messages, thinking_level, model)``. ``entries`` include the
    header (as ``load_entries`` returns them); the leaf is the last entry in file order."""
    body = entries[1:]
    if not body:
        return [], "off", None
    by_id = {e["id"]: e for e in body if isinstance(e.get("id"), str)}
    path = []
    seen = set()
    entry: dict[str, Any] | None = body[-1]
    while entry is not None and id(entry) not in seen:
        seen.add(id(entry))
        path.append(entry)
        parent = entry.get("parentId")
        entry = by_id.get(parent) if isinstance(parent, str) and parent else None
    path.reverse()

    thinking_level: Any = "off"
    model = None
    compaction_at = None
    for i, e in enumerate(path):
        kind = e.get("type")
        if kind == "thinking_level_change":
            thinking_level = e.get("thinkingLevel")
        elif kind == "model_change":
            model = {"provider": e.get("provider"), "modelId": e.get("modelId")}
        elif kind == "message":
            m = e.get("message")
            if isinstance(m, dict) and m.get("role") == "assistant":
                model = {"provider": m.get("provider"), "modelId": m.get("model")}
        elif kind == "compaction":
            compaction_at = i

    messages: list[Message] = []
    if compaction_at is None:
        emit = path
    else:
        compaction = path[compaction_at]
        if stats is not None:
            stats.compaction = True
        messages.append(
            _without_none(
                {
                    "role": "compactionSummary",
                    "summary": compaction.get("summary", _MISSING),
                    "tokensBefore": compaction.get("tokensBefore", _MISSING),
                    "timestamp": iso_to_ms(compaction.get("timestamp")),
                }
            )
        )
        first_kept = compaction.get("firstKeptEntryId")
        before = path[:compaction_at]
        start = next(
            (
                i
                for i, e in enumerate(before)
                if first_kept is not None and e.get("id") == first_kept
            ),
            len(before),
        )
        emit = before[start:] + path[compaction_at + 1 :]
    for e in emit:
        message = _entry_message(e)
        if message is not None:
            messages.append(message)
    return messages, thinking_level, model


# ---- repairToolUseResultPairing (OpenClaw session-transcript-repair.ts) -------------------


def _tool_calls(message: Message) -> list[tuple[str, str | None]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    calls = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in PAIRING_TOOL_CALL_TYPES:
            call_id = block.get("id")
            if isinstance(call_id, str) and call_id:
                name = block.get("name")
                calls.append((call_id, name if isinstance(name, str) else None))
    return calls


def _result_id(message: Message) -> str | None:
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _js_trim(text: str) -> str:
    # String.prototype.trim: ECMAScript WhiteSpace and LineTerminator.
    return text.strip(
        " \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    )


def _normalized_tool_name(tool_name: Any, fallback: str | None) -> str | None:
    """The result's new toolName, or None when it stays as it is."""
    if isinstance(tool_name, str):
        trimmed = _js_trim(tool_name)
        if trimmed:
            return trimmed if trimmed != tool_name else None
    if fallback is not None and _js_trim(fallback):
        return _js_trim(fallback)
    return "unknown" if isinstance(tool_name, str) else None


def repair_tool_pairing(
    messages: list[Any], now_ms: int = NOW_MS, stats: Stats | None = None
) -> list[Any]:
    """Every tool call answered right after its assistant turn; returns the input list itself
    when nothing was flagged (upstream quirk of repairToolUseResultPairing)."""
    out: list[Any] = []
    seen: set[str] = set()
    changed = False
    added = orphans = duplicates = 0
    i = 0
    n = len(messages)
    while i < n:
        message = messages[i]
        role = message.get("role") if isinstance(message, dict) else None
        if role == "toolResult":
            orphans += 1
            changed = True
            i += 1
            continue
        if role != "assistant":
            out.append(message)
            i += 1
            continue
        calls = _tool_calls(message)
        if message.get("stopReason") in ("error", "aborted") or not calls:
            out.append(message)
            i += 1
            continue
        names = dict(calls)
        results: dict[str, Any] = {}
        remainder = []
        j = i + 1
        while j < n:
            nxt = messages[j]
            nxt_role = nxt.get("role") if isinstance(nxt, dict) else None
            if nxt_role == "assistant":
                break
            j += 1
            if nxt_role != "toolResult":
                remainder.append(nxt)
                continue
            result_id = _result_id(nxt)
            if result_id is None or result_id not in names:
                orphans += 1
                changed = True
                continue
            if result_id in seen:
                duplicates += 1
                changed = True
                continue
            name = _normalized_tool_name(nxt.get("toolName"), names[result_id])
            if name is not None:
                changed = True
                nxt = {**nxt, "toolName": name}
            results.setdefault(result_id, nxt)
        out.append(message)
        if results and remainder:
            changed = True
        for call_id, name in calls:
            result = results.get(call_id)
            if result is None:
                result = {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name if name is not None else "unknown",
                    "content": [{"type": "text", "text": MISSING_TOOL_RESULT_TEXT}],
                    "isError": True,
                    "timestamp": now_ms,
                }
                added += 1
                changed = True
            if call_id in seen:
                duplicates += 1
                changed = True
            else:
                seen.add(call_id)
                out.append(result)
        out.extend(remainder)
        i = j
    if stats is not None:
        stats.synthetic_results += added
        stats.dropped_orphans += orphans
        stats.dropped_duplicates += duplicates
    return out if changed else messages


# ---- limitHistoryTurns (OpenClaw pi-embedded-runner/history.ts) ---------------------------


def limit_history_turns(messages: list[Any], limit: int | None) -> list[Any]:
    """The messages from the ``limit``-th last user message on."""
    if not limit or limit <= 0 or not messages:
        return messages
    count = 0
    last_user = None
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user":
            count += 1
            if count > limit:
                return messages[last_user:]
            last_user = i
    return messages


# ---- estimateTokens (pi compaction/compaction.ts) -----------------------------------------


def js_len(text: str) -> int:
    """JavaScript ``string.length``: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _str_len(value: Any) -> int:
    return js_len(value) if isinstance(value, str) else 0


def js_stringify(value: Any) -> str:
    """``JSON.stringify`` of tool-call arguments (compact, non-ASCII kept)."""
    return orjson.dumps(value).decode()


def _blocks(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def estimate_chars(message: Any) -> int:
    if not isinstance(message, dict):
        return 0
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        if isinstance(content, str):
            return js_len(content)
        return sum(_str_len(b.get("text")) for b in _blocks(content) if b.get("type") == "text")
    if role == "assistant":
        chars = 0
        for b in _blocks(content):
            kind = b.get("type")
            if kind == "text":
                chars += _str_len(b.get("text"))
            elif kind == "thinking":
                chars += _str_len(b.get("thinking"))
            elif kind == "toolCall":
                chars += _str_len(b.get("name"))
                if "arguments" in b:
                    chars += js_len(js_stringify(b["arguments"]))
        return chars
    if role in ("custom", "toolResult"):
        if isinstance(content, str):
            return js_len(content)
        return _text_and_image_chars(content, IMAGE_CHARS)
    if role == "bashExecution":
        return _str_len(message.get("command")) + _str_len(message.get("output"))
    if role in ("branchSummary", "compactionSummary"):
        return _str_len(message.get("summary"))
    return 0


def _text_and_image_chars(content: Any, image_chars: int) -> int:
    """The text blocks' lengths plus ``image_chars`` per image block."""
    chars = 0
    for b in _blocks(content):
        kind = b.get("type")
        if kind == "text":
            chars += _str_len(b.get("text"))
        elif kind == "image":
            chars += image_chars
    return chars


def estimate_tokens(message: Any) -> int:
    """pi's ``estimateTokens``: ``ceil(chars / 4)``."""
    return (estimate_chars(message) + 3) // 4


# ---- pruneContextMessages (OpenClaw context-pruning/pruner.ts) ----------------------------


def pruner_chars(message: Any) -> int:
    """The pruner's own char estimate (pruner.ts, estimateMessageChars)."""
    if not isinstance(message, dict):
        return PRUNER_OTHER_ROLE_CHARS
    role = message.get("role")
    content = message.get("content")
    if role in ("user", "toolResult"):
        if isinstance(content, str):
            return js_len(content) if role == "user" else 0
        return _text_and_image_chars(content, PRUNER_IMAGE_CHARS)
    if role == "assistant":
        chars = 0
        for b in _blocks(content):
            kind = b.get("type")
            if kind == "text":
                chars += _str_len(b.get("text"))
            elif kind == "thinking":
                chars += _str_len(b.get("thinking"))
            elif kind == "toolCall":
                args = b.get("arguments")
                chars += 2 if args is None else js_len(js_stringify(args))
        return chars
    return PRUNER_OTHER_ROLE_CHARS


def _glob_match(pattern: str, name: str) -> bool:
    if pattern == "*":
        return True
    if "*" not in pattern:
        return pattern == name
    # `*` is `.*` of a JavaScript regex: any characters but line terminators.
    regex = "[^\n\r\u2028\u2029]*".join(re.escape(p) for p in pattern.split("*"))
    return re.fullmatch(regex, name) is not None


def is_prunable(tool_name: str, settings: PruningSettings) -> bool:
    name = _js_trim(tool_name).lower()
    deny = [_js_trim(p).lower() for p in settings.deny if _js_trim(p)]
    allow = [_js_trim(p).lower() for p in settings.allow if _js_trim(p)]
    if any(_glob_match(p, name) for p in deny):
        return False
    return not allow or any(_glob_match(p, name) for p in allow)


def _utf16_head(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units (a surrogate pair on the cut is kept whole)."""
    if text.isascii():
        return text[:units]
    seen = 0
    for i, ch in enumerate(text):
        if seen >= units:
            return text[:i]
        seen += 2 if ord(ch) > 0xFFFF else 1
    return text


def _utf16_tail(text: str, units: int) -> str:
    if not units:
        return ""
    if text.isascii():
        return text[len(text) - units :]
    seen = 0
    for i in range(len(text) - 1, -1, -1):
        seen += 2 if ord(text[i]) > 0xFFFF else 1
        if seen >= units:
            return text[i:]
    return text


def soft_trimmed_text(parts: list[str], settings: PruningSettings) -> str | None:
    if not parts:
        return None
    raw_len = sum(js_len(p) for p in parts) + len(parts) - 1
    head_chars, tail_chars = settings.soft_trim_head_chars, settings.soft_trim_tail_chars
    if raw_len <= settings.soft_trim_max_chars or head_chars + tail_chars >= raw_len:
        return None
    joined = "\n".join(parts)
    head = _utf16_head(joined, head_chars)
    tail = _utf16_tail(joined, tail_chars)
    return (
        f"{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {head_chars} chars and last "
        f"{tail_chars} chars of {raw_len} chars.]"
    )


def prune_context(
    messages: list[Any],
    settings: PruningSettings = DEFAULT_PRUNING,
    context_window_tokens: float | None = CONTEXT_WINDOW_TOKENS,
    stats: Stats | None = None,
) -> list[Any]:
    """Soft-trims, then hard-clears old tool results while the context is too full; returns
    the input list when nothing changed."""
    if (
        context_window_tokens is None
        or not math.isfinite(context_window_tokens)
        or context_window_tokens <= 0
    ):
        return messages
    char_window = context_window_tokens * 4
    n = len(messages)
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if settings.keep_last_assistants <= 0:
        cutoff = n
    else:
        seen = 0
        cutoff = -1
        for i in range(n - 1, -1, -1):
            if roles[i] == "assistant":
                seen += 1
                if seen == settings.keep_last_assistants:
                    cutoff = i
                    break
        if cutoff < 0:
            return messages
    start = next((i for i, r in enumerate(roles) if r == "user"), n)
    chars = [pruner_chars(m) for m in messages]
    total = sum(chars)
    if total / char_window < settings.soft_trim_ratio:
        return messages

    changed: dict[int, Message] = {}
    prunable = []
    for i in range(start, max(cutoff, start)):
        m = messages[i]
        if roles[i] != "toolResult":
            continue
        tool_name = m.get("toolName")
        if not is_prunable(tool_name if isinstance(tool_name, str) else "", settings):
            continue
        blocks = _blocks(m.get("content"))
        prunable.append(i)
        # OpenClaw 2026.3.13 `src/agents/pi-extensions/context-pruning/pruner.ts`: an image
        # becomes a marker, and a result with images is rewritten even when it is short.
        has_images = any(b.get("type") == "image" for b in blocks)
        parts = [
            IMAGE_MARKER if b.get("type") == "image" else b["text"]
            for b in blocks
            if b.get("type") == "image"
            or (b.get("type") == "text" and isinstance(b.get("text"), str))
        ]
        text = soft_trimmed_text(parts, settings)
        if text is None and has_images:
            text = "\n".join(parts)
        if text is not None:
            trimmed = {**m, "content": [{"type": "text", "text": text}]}
            new_chars = pruner_chars(trimmed)
            total += new_chars - chars[i]
            chars[i] = new_chars
            changed[i] = trimmed
            if stats is not None:
                stats.soft_trimmed += 1

    if (
        total / char_window >= settings.hard_clear_ratio
        and settings.hard_clear_enabled
        and sum(chars[i] for i in prunable) >= settings.min_prunable_tool_chars
    ):
        for i in prunable:
            if total / char_window < settings.hard_clear_ratio:
                break
            cleared = {
                **changed.get(i, messages[i]),
                "content": [{"type": "text", "text": settings.hard_clear_placeholder}],
            }
            new_chars = pruner_chars(cleared)
            total += new_chars - chars[i]
            chars[i] = new_chars
            changed[i] = cleared
            if stats is not None:
                stats.hard_cleared += 1
    if not changed:
        return messages
    return [changed.get(i, m) for i, m in enumerate(messages)]


# ---- the whole request --------------------------------------------------------------------


@dataclass
class PipelineResult:
    json: bytes
    token_counts: list[int]
    stats: Stats


def run_pipeline(
    path: str | os.PathLike[str],
    *,
    history_turns: int | None = HISTORY_TURNS,
    context_window_tokens: float | None = CONTEXT_WINDOW_TOKENS,
    settings: PruningSettings = DEFAULT_PRUNING,
    now_ms: int = NOW_MS,
) -> PipelineResult:
    """File → serialized messages for one model request."""
    stats = Stats()
    entries = load_entries(path, stats)
    messages, _thinking_level, _model = build_session_context(entries, stats)
    messages = repair_tool_pairing(messages, now_ms, stats)
    messages = limit_history_turns(messages, history_turns)
    tokens = [estimate_tokens(m) for m in messages]
    messages = prune_context(messages, settings, context_window_tokens, stats)
    return PipelineResult(orjson.dumps(messages), tokens, stats)


def load_context(path: str | os.PathLike[str]) -> list[Message]:
    """Cold open + context: the leaf's messages as dicts."""
    return build_session_context(load_entries(path))[0]


def orjson_floor(path: str | os.PathLike[str]) -> int:
    """The floor: read the file and ``orjson.loads`` every line, nothing else."""
    with open(path, "rb") as f:
        data = f.read()
    parsed = 0
    for line in data.split(b"\n"):
        if line.strip():
            try:
                orjson.loads(line)
                parsed += 1
            except orjson.JSONDecodeError:
                pass
    return parsed


# ---- session-file repair (OpenClaw session-file-repair.ts, G3) ----------------------------

STREAM_ERROR_FALLBACK_TEXT = "[assistant turn failed before producing content]"
BLANK_USER_FALLBACK_TEXT = "(continue)"


def repair_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """OpenClaw's ``repairSessionFileIfNeeded`` (G3): parse every line, drop what does not
    parse, heal empty errored assistants and blank user messages, and if anything changed,
    write a backup and replace the file with every entry re-serialized (then delete the
    backup). Returns the report."""
    path = Path(path)
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    entries = []
    dropped = rewritten_assistant = rewritten_user = 0
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            dropped += 1
            continue
        if isinstance(entry, dict) and entry.get("type") == "message":
            message = entry.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            if not isinstance(role, str) or not _js_trim(role):
                dropped += 1
                continue
            assert isinstance(message, dict)
            content = message.get("content")
            if role == "assistant" and content == [] and message.get("stopReason") == "error":
                message["content"] = [{"type": "text", "text": STREAM_ERROR_FALLBACK_TEXT}]
                rewritten_assistant += 1
            elif role == "user":
                if isinstance(content, str) and not _js_trim(content):
                    message["content"] = BLANK_USER_FALLBACK_TEXT
                    rewritten_user += 1
                elif isinstance(content, list):
                    kept = [
                        b
                        for b in content
                        if not (
                            isinstance(b, dict)
                            and b.get("type") == "text"
                            and isinstance(b.get("text"), str)
                            and not _js_trim(b["text"])
                        )
                    ]
                    if len(kept) != len(content):
                        message["content"] = kept or [
                            {"type": "text", "text": BLANK_USER_FALLBACK_TEXT}
                        ]
                        rewritten_user += 1
        entries.append(entry)
    report = {"repaired": False, "dropped_lines": dropped}
    if not entries:
        return {**report, "reason": "empty session file"}
    header = entries[0]
    if not (
        isinstance(header, dict)
        and header.get("type") == "session"
        and isinstance(header.get("id"), str)
        and header["id"]
    ):
        return {**report, "reason": "invalid session header"}
    if not (dropped or rewritten_assistant or rewritten_user):
        return {"repaired": False, "dropped_lines": 0}
    stamp = f"{os.getpid()}-{int(datetime.now(timezone.utc).timestamp() * 1000)}"
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    backup.write_bytes(raw)
    tmp = path.with_name(f"{path.name}.repair-{stamp}.tmp")
    with open(tmp, "wb") as out:
        out.write(b"".join(orjson.dumps(e) + b"\n" for e in entries))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    backup.unlink()
    return {
        **report,
        "repaired": True,
        "rewritten_assistant_messages": rewritten_assistant,
        "rewritten_user_messages": rewritten_user,
    }
