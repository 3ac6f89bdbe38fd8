"""What ``clawctx inspect`` reports about one transcript file, as plain data (read-only).

``inspect_session`` reads a pi / OpenClaw session, ``inspect_transcript`` a Claude Code or Codex
transcript (through ``clawctx.history.foreign``), ``inspect_file`` picks between them by the
file's format. Each opens the file read-only: inspecting never writes, migrates or repairs. The
command line renders these dicts; other programs can use them as they are.

Layer: ``clawctx.history`` (imports only ``clawctx._core`` and other history modules).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.history._tool_ids import tool_ids
from clawctx.history.foreign import detect_transcript_format, read_transcript
from clawctx.history.session import Session

__all__ = [
    "DEFAULT_CONTEXT_TOKENS",
    "TOOL_CALL_BLOCK_TYPES",
    "inspect_file",
    "inspect_session",
    "inspect_transcript",
]

#: Block types that carry a tool call in assistant content (pi's ``toolCall`` and the
#: provider-shaped variants real OpenClaw files contain; pi-mono 0.58.3
#: `packages/coding-agent/src/core/messages.ts`).
TOOL_CALL_BLOCK_TYPES = _core._TOOL_CALL_TYPES

#: OpenClaw's default context window (``DEFAULT_CONTEXT_TOKENS``), used for the pruning preview.
DEFAULT_CONTEXT_TOKENS = 200_000


def _pairing_preview(messages: _core.Transcript) -> dict[str, Any]:
    """What the tool-call input and pairing repairs would do to the leaf context."""
    inputs = _core.repair_tool_call_inputs(messages)
    pairing = _core.repair_tool_pairing(inputs.messages, now_ms=0)
    return {
        "dropped_tool_calls": inputs.dropped_tool_calls,
        "dropped_assistant_messages": inputs.dropped_assistant_messages,
        "synthetic_results_for": [m["toolCallId"] for m in pairing.added],
        "dropped_orphan_results": pairing.dropped_orphan_count,
        "dropped_duplicate_results": pairing.dropped_duplicate_count,
        "reordered": pairing.messages.to_json() != inputs.messages.to_json()
        and len(pairing.messages) == len(inputs.messages)
        and not pairing.added,
        "changes_transcript": pairing.messages.to_json() != messages.to_json(),
    }


def _pruning_preview(messages: _core.Transcript, context_window: int) -> dict[str, Any]:
    """What context pruning with OpenClaw's default settings would do to the leaf context."""
    settings = _core.PruningSettings.from_config({"mode": "cache-ttl"})
    assert settings is not None
    pruned = _core.prune_context(messages, settings, context_window_tokens=context_window)
    placeholder = settings.to_dict()["hardClear"]["placeholder"]
    trimmed = cleared = 0
    if pruned is not messages:
        for before, after in zip(messages, pruned, strict=True):
            if before == after:
                continue
            text = after["content"][0]["text"]
            if text == placeholder:
                cleared += 1
            else:
                trimmed += 1
    return {
        "context_window_tokens": context_window,
        "soft_trimmed_results": trimmed,
        "cleared_results": cleared,
        "chars_before": sum(_core.estimate_pruning_chars(m) for m in messages),
        "chars_after": sum(_core.estimate_pruning_chars(m) for m in pruned),
    }


def _context_boundary(path_entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest ``compaction`` or OpenClaw ``reset`` on the leaf path: where the leaf
    context starts (OpenClaw `docs/reference/session-management-compaction.md`: the later of
    the two wins). ``None`` when the path has neither."""
    for entry in reversed(path_entries):
        kind = entry.get("type")
        if kind in ("compaction", "reset"):
            boundary = {
                "type": kind,
                "id": entry.get("id"),
                "first_kept_entry_id": entry.get("firstKeptEntryId"),
            }
            if kind == "reset":
                boundary["reason"] = entry.get("reason")
            return boundary
    return None


def inspect_session(path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS) -> dict[str, Any]:
    """Everything ``clawctx inspect`` reports about one session file, as plain data.

    Opens the file read-only: inspecting never writes, migrates or repairs.
    """
    session = Session.open(path, read_only=True)
    context = session.context()
    leaf_path = session.branch_path()
    messages = context.messages.to_list()
    calls, results = tool_ids(messages)
    result_set, call_set = set(results), set(calls)
    types = Counter(t if t is not None else "(no type)" for t in session.entry_types())
    role_names = [r if r is not None else "(no role)" for r in context.messages.roles()]
    roles = Counter(role_names)
    tokens_by_role: Counter[str] = Counter()
    for role, tokens in zip(role_names, context.messages.token_counts().tolist(), strict=True):
        tokens_by_role[role] += int(tokens)
    return {
        "path": str(path),
        "header": session.header,
        "session_id": session.session_id,
        "name": session.name,
        "file_version": session.file_version,
        "version": session.version,
        "migration_needed": session.needs_migration,
        "entries": len(session),
        "entry_counts": dict(sorted(types.items())),
        "leaf_id": session.leaf_id,
        "leaf_path_entries": len(leaf_path),
        "context_boundary": _context_boundary(leaf_path),
        "thinking_level": context.thinking_level,
        "model": context.model,
        "context_messages": len(context.messages),
        "context_roles": dict(sorted(roles.items())),
        "labels": session.labels,
        "skipped_lines": [
            {"line": s.line, "action": s.action, "reason": s.reason, "records": s.records}
            for s in session.skipped_lines
        ],
        "tool_calls_without_results": [c for c in calls if c not in result_set],
        "tool_results_without_calls": [r for r in results if r not in call_set],
        "estimated_tokens": sum(tokens_by_role.values()),
        "estimated_tokens_by_role": dict(sorted(tokens_by_role.items())),
        "pairing_repair": _pairing_preview(context.messages),
        "pruning_preview": _pruning_preview(context.messages, context_window),
    }


def inspect_transcript(
    path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS
) -> dict[str, Any]:
    """What ``clawctx inspect`` reports about a Claude Code or Codex transcript (read-only)."""
    imported = read_transcript(path)
    messages = imported.messages
    calls, results = tool_ids(messages)
    role_names = [r if r is not None else "(no role)" for r in messages.roles()]
    tokens_by_role: Counter[str] = Counter()
    for role, tokens in zip(role_names, messages.token_counts().tolist(), strict=True):
        tokens_by_role[role] += int(tokens)
    result_set, call_set = set(results), set(calls)
    return {
        "path": str(path),
        "format": imported.format,
        "messages": len(messages),
        "context_messages": len(messages),
        "context_roles": dict(sorted(Counter(role_names).items())),
        "session_id": imported.session_id,
        "cwd": imported.cwd,
        "version": imported.version,
        "model": imported.model,
        "first_timestamp": imported.first_timestamp,
        "last_timestamp": imported.last_timestamp,
        "lines": imported.lines,
        "damaged_lines": imported.damaged_lines,
        "torn_last_line": imported.torn_last_line,
        "dropped_sidechain_lines": imported.dropped_sidechain_lines,
        "off_path_lines": imported.off_path_lines,
        "compactions": imported.compactions,
        "branches": imported.branches,
        "skipped_lines": [],
        "tool_calls_without_results": [c for c in calls if c not in result_set],
        "tool_results_without_calls": [r for r in results if r not in call_set],
        "estimated_tokens": sum(tokens_by_role.values()),
        "estimated_tokens_by_role": dict(sorted(tokens_by_role.items())),
        "pairing_repair": _pairing_preview(messages),
        "pruning_preview": _pruning_preview(messages, context_window),
    }


def inspect_file(path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS) -> dict[str, Any]:
    """``inspect_session`` for pi files, ``inspect_transcript`` for Claude Code and Codex.

    Anything not recognisable as a foreign transcript (an empty file included: there is nothing
    to inspect) goes to the session loader, which gives the precise reason it is not a session.
    """
    format_name = "pi"
    if path.is_file() and path.stat().st_size > 0:
        with contextlib.suppress(ValueError):
            format_name = detect_transcript_format(path)
    if format_name != "pi":
        return inspect_transcript(path, context_window=context_window)
    report = inspect_session(path, context_window=context_window)
    return {"format": "pi", "messages": report["context_messages"], **report}
