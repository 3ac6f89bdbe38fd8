"""The ``clawctx`` command line: ``assemble`` the context of a request, ``inspect`` a session,
``repair`` session files."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clawctx import _core
from clawctx.demo import demo_session_path, demo_workspace_path
from clawctx.history.session import Session

#: Block types that carry a tool call in assistant content (pi's ``toolCall`` and the
#: provider-shaped variants real OpenClaw files contain; pi-mono 0.58.3
#: `packages/coding-agent/src/core/messages.ts`).
TOOL_CALL_BLOCK_TYPES = frozenset({"toolCall", "toolUse", "functionCall"})


#: The tools ``clawctx assemble`` lists when none are given: pi's coding tools.
DEFAULT_ASSEMBLE_TOOLS: tuple[str, ...] = ("read", "write", "edit", "grep", "find", "ls", "exec")


def _tool_call_ids(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in TOOL_CALL_BLOCK_TYPES:
            block_id = block.get("id")
            if isinstance(block_id, str) and block_id:
                ids.append(block_id)
    return ids


def _tool_result_id(message: dict[str, Any]) -> str | None:
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


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


def inspect_session(path: Path, *, context_window: int = DEFAULT_CONTEXT_TOKENS) -> dict[str, Any]:
    """Everything ``clawctx inspect`` reports about one session file, as plain data.

    Opens the file read-only: inspecting never writes, migrates or repairs.
    """
    session = Session.open(path, read_only=True)
    context = session.context()
    messages = context.messages.to_list()
    calls: list[str] = []
    results: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            calls.extend(_tool_call_ids(message))
        elif role == "toolResult":
            result_id = _tool_result_id(message)
            if result_id is not None:
                results.append(result_id)
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
        "leaf_path_entries": len(session.branch_path()),
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


def _format_report(report: dict[str, Any]) -> str:
    lines = [f"session  {report['path']}"]
    header = report["header"]
    lines.append("header   " + ", ".join(f"{k}={v}" for k, v in header.items() if k != "type"))
    if report["migration_needed"]:
        version = f"{report['file_version']} (migration to v{report['version']} would apply)"
    else:
        version = f"{report['file_version']} (current)"
    lines.append(f"version  {version}")
    if report["name"]:
        lines.append(f"name     {report['name']}")
    lines.append(f"entries  {report['entries']}")
    for entry_type, count in report["entry_counts"].items():
        lines.append(f"  {entry_type:<24}{count:>7}")
    on_path = report["leaf_path_entries"]
    lines.append(f"leaf     {report['leaf_id']} ({on_path} entries on its path)")
    model = report["model"]
    model_text = f"{model.get('provider')}/{model.get('modelId')}" if model else "none"
    lines.append(f"model    {model_text}, thinking level {report['thinking_level']}")
    lines.append(f"context  {report['context_messages']} messages")
    for role, count in report["context_roles"].items():
        lines.append(f"  {role:<24}{count:>7}")
    lines.append(f"tokens   ~{report['estimated_tokens']} (chars/4 estimate)")
    for role, count in report["estimated_tokens_by_role"].items():
        lines.append(f"  {role:<24}{count:>7}")
    skipped = report["skipped_lines"]
    lines.append(f"damaged  {len(skipped)} line(s)")
    for s in skipped:
        kept = f"{s['records']} record(s) kept"
        lines.append(f"  line {s['line']}: {s['action']} ({s['reason']}), {kept}")
    orphans = report["tool_calls_without_results"]
    lines.append(f"tool calls without results on the leaf path: {len(orphans)}")
    lines.extend(f"  {c}" for c in orphans)
    stray = report["tool_results_without_calls"]
    lines.append(f"tool results without calls on the leaf path: {len(stray)}")
    lines.extend(f"  {r}" for r in stray)
    pairing = report["pairing_repair"]
    if pairing["changes_transcript"]:
        lines.append(
            "pairing repair would: "
            f"insert {len(pairing['synthetic_results_for'])} synthetic result(s), "
            f"drop {pairing['dropped_orphan_results']} orphan and "
            f"{pairing['dropped_duplicate_results']} duplicate result(s), "
            f"drop {pairing['dropped_tool_calls']} invalid tool call(s)"
            + (", and reorder results" if pairing["reordered"] else "")
        )
    else:
        lines.append("pairing repair would: change nothing")
    pruning = report["pruning_preview"]
    lines.append(
        f"pruning (default settings, {pruning['context_window_tokens']} token window): "
        f"soft-trim {pruning['soft_trimmed_results']} and clear {pruning['cleared_results']} "
        f"tool result(s), {pruning['chars_before']} -> {pruning['chars_after']} chars"
    )
    return "\n".join(lines)


def _cmd_inspect(args: argparse.Namespace) -> int:
    path = Path(args.session) if args.session else demo_session_path()
    try:
        report = inspect_session(path, context_window=args.context_window)
    except (OSError, _core.ClawctxError) as err:
        print(f"clawctx inspect: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(_format_report(report))
    return 0


def _cmd_repair(args: argparse.Namespace) -> int:
    status = 0
    for name in args.sessions:
        try:
            report = _core.repair_session_file(
                name, backup="delete" if args.delete_backup else "keep"
            )
        except (OSError, _core.ClawctxError) as err:
            print(f"{name}: failed: {err}")
            status = 1
            continue
        if report.repaired:
            backup = f"; backup {report.backup_path}" if report.backup_path else ""
            print(f"{name}: repaired: {report.summary()}{backup}")
        elif report.reason is None:
            print(f"{name}: ok: nothing to repair")
        elif report.reason == "empty session file":
            print(f"{name}: ok: empty session file")
        else:
            print(f"{name}: skipped: {report.reason}")
            status = 1
    return status


def _cmd_assemble(args: argparse.Namespace) -> int:
    # Imported here: the facade modules are not needed by the other commands.
    from clawctx.engine.pipeline import ContextPipeline, ModelSpec, PromptRequest
    from clawctx.prompt.system_prompt import SystemPromptParams

    session = Path(args.session) if args.session else demo_session_path()
    workspace = Path(args.workspace) if args.workspace else demo_workspace_path()
    params = SystemPromptParams(
        workspace_dir=str(workspace),
        tool_names=tuple(args.tools.split(",")) if args.tools else DEFAULT_ASSEMBLE_TOOLS,
        user_timezone=args.timezone,
    )
    model = ModelSpec(
        provider=args.provider,
        api=args.model_api,
        id=args.model,
        input=("text", "image") if args.image_input else ("text",),
        context_window=args.context_window,
    )
    # A preview: the session file is only read (no repair on disk, no leaf or snapshot writes).
    pipeline = ContextPipeline(
        model=model, workspace_dir=workspace, system_prompt=params, read_only=True
    )
    request = PromptRequest(text=args.prompt, session_key=args.session_key)
    try:
        prepared = pipeline.prepare(session, request)
    except (OSError, _core.ClawctxError) as err:
        print(f"clawctx assemble: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(prepared.to_dict(), indent=2, ensure_ascii=False))
        return 0
    if not prepared.should_run:
        print(f"(no model call) {prepared.reply_text}")
        return 0
    messages = prepared.messages.to_list() + [prepared.prompt_message]
    print("=== system prompt ===")
    print(prepared.system_prompt)
    print(f"\n=== messages ({len(messages)}) ===")
    for index, message in enumerate(messages):
        print(f"[{index}] {_message_preview(message)}")
    print("\n=== report ===")
    print(f"think level: {prepared.think_level or '(model default)'}")
    print(f"estimated tokens: {prepared.estimated_tokens}")
    print(f"images: {len(prepared.images)}")
    for change in prepared.changes:
        print(f"- {change.stage}: {change.detail}")
    return 0


def _message_preview(message: dict[str, Any], width: int = 100) -> str:
    role = message.get("role", "?")
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind in TOOL_CALL_BLOCK_TYPES:
                parts.append(f"<{kind} {block.get('name', '')}>")
            else:
                parts.append(f"<{kind}>")
        text = " ".join(parts)
    else:
        summary = message.get("summary")  # compactionSummary / branchSummary messages
        text = summary if isinstance(summary, str) else ""
    text = " ".join(text.split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return f"{role}: {text}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``clawctx`` command."""
    parser = argparse.ArgumentParser(prog="clawctx", description=__doc__)
    parser.add_argument("--version", action="version", version=f"clawctx {_core.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    assemble = commands.add_parser(
        "assemble",
        help="assemble the system prompt and messages of one request "
        "(the bundled demo session and workspace by default)",
    )
    assemble.add_argument("session", nargs="?", help="session .jsonl file (read only)")
    assemble.add_argument("--provider", default="anthropic", help="default: %(default)s")
    assemble.add_argument("--model-api", default="anthropic-messages", help="default: %(default)s")
    assemble.add_argument("--model", default="claude-sonnet-4-5", help="default: %(default)s")
    assemble.add_argument(
        "--prompt", default="What changed since the last release?", help="the user message"
    )
    assemble.add_argument("--workspace", help="workspace directory (AGENTS.md, SOUL.md, skills/)")
    assemble.add_argument("--session-key", help="session key (sub-agent keys get a minimal prompt)")
    assemble.add_argument("--tools", help="comma-separated tool names (default: pi's coding tools)")
    assemble.add_argument("--timezone", help="user time zone for the system prompt")
    assemble.add_argument(
        "--image-input", action="store_true", help="the model accepts images (loads prompt images)"
    )
    assemble.add_argument("--context-window", type=int, default=DEFAULT_CONTEXT_TOKENS)
    assemble.add_argument("--json", action="store_true", help="print everything as JSON")
    assemble.set_defaults(handler=_cmd_assemble)
    inspect = commands.add_parser(
        "inspect", help="summarize a session file (the bundled demo session by default)"
    )
    inspect.add_argument("session", nargs="?", help="session .jsonl file")
    inspect.add_argument("--json", action="store_true", help="print the report as JSON")
    inspect.add_argument(
        "--context-window",
        type=int,
        default=DEFAULT_CONTEXT_TOKENS,
        help="context window in tokens for the pruning preview (default: %(default)s)",
    )
    inspect.set_defaults(handler=_cmd_inspect)
    repair = commands.add_parser("repair", help="repair session files in place (with a backup)")
    repair.add_argument("sessions", nargs="+", help="session .jsonl files")
    repair.add_argument(
        "--delete-backup", action="store_true", help="delete the backup after a successful repair"
    )
    repair.set_defaults(handler=_cmd_repair)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``clawctx`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    handler = args.handler
    status: int = handler(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
